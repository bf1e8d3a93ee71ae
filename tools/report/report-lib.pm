# SPDX-License-Identifier: MIT
# Shared by the report tools of tools/report/ (report-*, compare-runs,
# verify-bundle, certify): reads a run directory's TAP into per-test and per-requirement
# results, and the requirement catalogue, must-pass list and waivers.
# Loaded with `require`; Perl core modules and TAP::Parser only.
#
# TAP convention (team brief): a test names its requirement IDs in brackets
# at the end of its description, `ok 7 - xrcd_open_excl [XRCD-07]`, several
# separated by blanks. Directives map to statuses:
#   ok                      pass
#   not ok                  fail
#   ok # SKIP reason        skip (not supported; the reason is kept)
#   not ok # TODO reason    deviation (a known deviation, fixtures/expect/)
#   ok # TODO reason        fixed (a known deviation that now passes)
#   not ok # SKIP reason    fail (cmocka 1.1.5's form; prove fails it too)
# A requirement takes the worst status of the tests naming it (order below);
# one no test names is "notrun". parse_run does this over the whole run and
# over each configuration (tap/NAME.CONFIG.tap, split_config).
package IBVCT::Report;
use strict;
use warnings;
use TAP::Parser;
use Cwd ();

our @STATUS_ORDER = qw(fail deviation fixed pass skip notrun);
our %RANK;
@RANK{@STATUS_ORDER} = reverse 0 .. $#STATUS_ORDER;
our %LABEL = (
	pass => 'pass', fail => 'FAIL', skip => 'not supported (skip)',
	deviation => 'known deviation', fixed => 'fixed', notrun => 'not run',
	waived => 'waived',
);
our $ID_RE = qr/[A-Z]+-[0-9]+/;

sub slurp {
	my ($path) = @_;
	open(my $fh, '<', $path) or return undef;
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# Requirement catalogue: [ [ID, title, layer, source], ... ] in file order.
# layer and source (where the real stack enforces the rule) are undef in
# catalogues written before they were added (older bundles).
sub read_requirements {
	my ($path) = @_;
	my $text = slurp($path);
	defined $text or die "cannot read $path: $!\n";
	my @reqs;
	for (split /\n/, $text) {
		next if /^\s*(#|$)/;
		my ($id, $title, $layer, $source, @more) = split /\t/, $_;
		die "$path: bad line: $_\n"
			unless $id =~ /^$ID_RE$/ && defined $title && $title ne "" && !@more
			&& (!defined $layer || defined $source);
		push @reqs, [ $id, $title, $layer, $source ];
	}
	return \@reqs;
}

# Must-pass list: (version, [IDs]).
sub read_mustpass {
	my ($path) = @_;
	my $text = slurp($path);
	defined $text or die "cannot read $path: $!\n";
	my ($version, @ids);
	for (split /\n/, $text) {
		next if /^\s*(#|$)/;
		if (/^version:\s*(\S+)/) { $version = $1; next }
		next if /^[a-z]+:/;
		s/\s+$//;
		die "$path: bad line: $_\n" unless /^$ID_RE$/;
		push @ids, $_;
	}
	die "$path: no version line\n" unless defined $version;
	return ($version, \@ids);
}

# Waivers: "ID reason..." per line; a waiver without a reason is refused.
sub read_waivers {
	my ($path) = @_;
	my %w;
	my $text = slurp($path);
	return (\%w, []) unless defined $text;
	my @bad;
	for (split /\n/, $text) {
		next if /^\s*(#|$)/;
		if (/^($ID_RE)\s+(\S.*?)\s*$/) { $w{$1} = $2 }
		else { push @bad, "waiver without ID or reason: $_" }
	}
	return (\%w, \@bad);
}

# The TAP files of a run: DIR/tap/*.tap (tools/ibvct/conformance) and DIR/*.tap
# (a suite runner writing one <suite>.tap per program); name => path.
sub tap_files {
	my ($dir) = @_;
	my %f;
	my @l = (glob("$dir/*.tap"), glob("$dir/tap/*.tap"));
	for my $p (@l) {
		(my $name = $p) =~ s{.*/}{};
		$name =~ s/\.tap$//;
		$f{$name} = $p;
	}
	return \%f;
}

# One program's TAP: its tests, plan and what is wrong with it, if anything.
sub parse_program {
	my ($name, $path) = @_;
	my $text = slurp($path);
	# (TAP::Parser cannot read an empty string: a program that printed
	# nothing, or never ran, is a stream with no plan)
	$text = "\n" unless defined $text && $text ne '';
	(my $base = $path) =~ s/\.tap$//;
	my $rc = slurp("$base.rc");
	$rc =~ s/\s+//g if defined $rc;
	my $p = TAP::Parser->new({ tap => $text });
	my (@tests, %seen, $plans);
	$plans = 0;
	while (my $r = $p->next) {
		if ($r->is_plan) { $plans++; next }
		if ($r->is_comment && @tests) {
			my $d = $tests[-1]{diag};
			push @$d, $r->comment if @$d < 100;
			next;
		}
		next unless $r->is_test;
		my $desc = $r->description // '';
		$desc =~ s/^\s*-\s*//;
		my @ids;
		if ($desc =~ s/\s*\[((?:$ID_RE)(?:\s+$ID_RE)*)\]\s*$//) {
			@ids = split ' ', $1;
		}
		$desc = "test " . $r->number if $desc eq '';
		my $key = $desc;
		$key .= " #" . $seen{$desc} if $seen{$desc}++;
		my ($status, $reason) = ('pass', '');
		if ($r->has_skip) {
			($status, $reason) = $r->is_actual_ok
				? ('skip', $r->explanation // '')
				: ('fail', 'not ok # SKIP (counts as a failure in TAP)');
		} elsif ($r->has_todo) {
			$status = $r->is_actual_ok ? 'fixed' : 'deviation';
			$reason = $r->explanation // '';
		} elsif (!$r->is_actual_ok) {
			$status = 'fail';
		}
		push @tests, { num => $r->number, name => $desc, key => $key, ids => \@ids,
			status => $status, reason => $reason, diag => [] };
	}
	my @problems;
	push @problems, "exit $rc" if defined $rc && $rc ne '' && $rc ne '0';
	my $failed = grep { $_->{status} eq 'fail' } @tests;
	push @problems, "no plan" if $plans == 0;
	push @problems, "$plans plans" if $plans > 1;
	my $planned = $p->tests_planned;
	push @problems, sprintf("planned %d, ran %d", $planned, scalar @tests)
		if $plans == 1 && defined $planned && $planned != @tests;
	push @problems, map { "TAP: $_" } grep { !/plan/i } $p->parse_errors;
	my %n = map { $_ => 0 } @STATUS_ORDER;
	$n{ $_->{status} }++ for @tests;
	my $skip_all = $p->skip_all;
	$skip_all = undef if defined $skip_all && $plans != 1;
	return {
		name => $name, tap => $path, rc => $rc, tests => \@tests,
		planned => $planned, skip_all => $skip_all, problems => \@problems,
		counts => \%n,
		ok => (!@problems && !$n{fail}) ? 1 : 0,
		stderr => (-e "$base.stderr" ? "$base.stderr" : undef),
		# What is wrong beyond failed tests: a plan problem, TAP errors, a
		# crash or timeout (exit >= 124), or an error exit with no failed test.
		broken => [ grep { !(/^exit (\d+)$/ && $1 < 124 && $failed) } @problems ],
	};
}

# Why a plain failure (a `not ok` without directive) failed: the check's own
# message, from the `# ` lines under it. The C runner (testkit/runner/tr.c)
# writes "NAME: exit status N" (or "NAME: timeout: killed after N s",
# "NAME: killed by signal ..."), then the test's log: cmocka's banner
# ("[==========] Running 1 test(s).", "[ RUN      ] NAME", ...), what the
# test printed, and either cmocka's assertion ("[  ERROR   ] --- 0 != 0x1",
# "[   LINE   ] --- FILE:LINE: error: Failure!") or a th_fail message, the
# last line it wrote; then "NAME: scratch dir kept: ..." and its notes. The
# reason is the assertion with its FILE:LINE (after the line the test
# printed just before it, its context), or that last line; a timeout or a
# signal says so first. The runner's status line alone, or else the
# program's stderr (STDERR, a path), only when the log says nothing. A
# shell test's (testkit/sh/test-lib.sh) check prints what matters first: its first
# two lines. Never a banner line.
our $CMOCKA_BANNER = qr/^\[\s*(?:=+|RUN|OK|FAILED|PASSED|SKIPPED)\s*\]|^\d+ FAILED TEST\(S\)$/;
sub failure_reason {
	my ($t, $stderr) = @_;
	my (@said, $status, $err, $loc);
	for my $d (@{ $t->{diag} }) {
		my $l = $d =~ s/^\s+|\s+$//gr;
		next if $l eq '' || $l =~ $CMOCKA_BANNER || $l =~ /^\.\.\. \(more in /;
		if ($l =~ /^\Q$t->{name}\E: (.*)$/) {
			# the runner's: its status first, then scratch dir and notes
			$status //= $1;
			next;
		}
		if ($l =~ /^\[\s*ERROR\s*\] --- (.*)$/) { $err //= $1; next }
		if ($l =~ /^\[\s*LINE\s*\] --- (.*?)(?:: error: Failure!)?$/) { $loc //= $1; next }
		next if $l =~ /^\[\s*[A-Z]+\s*\]/;
		push @said, $l unless defined $err;
	}
	return join(' ', @said[0 .. ($#said < 1 ? $#said : 1)]) unless defined $status;
	my $msg = defined $err
		? (@said ? "$said[-1]: " : '') . $err . (defined $loc ? " ($loc)" : '')
		: (@said ? $said[-1] : '');
	return $msg ne '' ? "$status: $msg" : $status if $status !~ /^exit status /;
	return $msg if $msg ne '';
	if (defined $stderr && defined(my $e = slurp($stderr))) {
		my @l = grep { /\S/ && !/$CMOCKA_BANNER/ } map { s/^\s+|\s+$//gr } split /\n/, $e;
		return "$status; stderr: $l[-1]" if @l;
	}
	return $status;
}

# A program's configuration: tools/ibvct/suites-run names each run of a suite
# NAME.CONFIG (t2100-xrc-create.ref-extended-current, .system-on-ref, ...),
# one CONFIG per provider mode, lifetime model, driver profile or target; a
# program run once (tap/NAME.tap: the unit, interop and hand-collected ones)
# has the configuration "" (DEFAULT_CONFIG_LABEL on the page).
our $DEFAULT_CONFIG_LABEL = 'default';
sub split_config {
	my ($pn) = @_;
	return $pn =~ /^([^.]+)\.(.+)$/ ? ($1, $2) : ($pn, '');
}

# aggregate \%KNOWN, TESTS...: per requirement ID the worst status of the
# tests naming it, those tests and the reasons of the ones that gave the
# status; and the tests naming IDs outside KNOWN.
sub aggregate {
	my ($known, @tests) = @_;
	my (%req, %unknown);
	for my $id (keys %$known) {
		$req{$id} = { status => 'notrun', tests => [], reasons => [] };
	}
	for my $t (@tests) {
		for my $id (@{ $t->{ids} }) {
			if (!$known->{$id}) { push @{ $unknown{$id} }, $t; next }
			my $r = $req{$id};
			push @{ $r->{tests} }, $t;
			if ($r->{status} eq 'notrun' || $RANK{ $t->{status} } > $RANK{ $r->{status} }) {
				$r->{status} = $t->{status};
			}
		}
	}
	for my $r (values %req) {
		my %u;
		$r->{reasons} = [ grep { $_ ne '' && !$u{$_}++ }
			map { $_->{reason} } grep { $_->{status} eq $r->{status} } @{ $r->{tests} } ];
	}
	return (\%req, \%unknown);
}

# A whole run: programs by name plus the requirement aggregation, over the
# whole run (req: a requirement takes the worst status of all its tests)
# and per configuration (configs: the configurations in sorted order, ""
# last; cfg{CONFIG}{req}, cfg{CONFIG}{programs}: the names of its programs).
#   $reqs: from read_requirements (may be empty: all IDs are then "unknown")
sub parse_run {
	my ($dir, $reqs) = @_;
	my $files = tap_files($dir);
	my %prog = map { $_ => parse_program($_, $files->{$_}) } keys %$files;
	my %known = map { $_->[0] => 1 } @{ $reqs || [] };
	my (@all, %by_cfg);
	for my $pn (sort keys %prog) {
		my ($base, $cfg) = split_config($pn);
		@{ $prog{$pn} }{qw(base config)} = ($base, $cfg);
		push @{ $by_cfg{$cfg}{programs} }, $pn;
		for my $t (@{ $prog{$pn}{tests} }) {
			$t->{program} = $pn;
			$t->{config} = $cfg;
			push @all, $t;
			push @{ $by_cfg{$cfg}{tests} }, $t;
		}
	}
	my ($req, $unknown) = aggregate(\%known, @all);
	my @configs = sort { ($a eq '') <=> ($b eq '') || $a cmp $b } keys %by_cfg;
	my %cfg;
	for my $c (@configs) {
		my ($r) = aggregate(\%known, @{ $by_cfg{$c}{tests} || [] });
		$cfg{$c} = { req => $r, programs => $by_cfg{$c}{programs} };
	}
	return { dir => $dir, programs => \%prog, req => $req, unknown => $unknown,
		configs => \@configs, cfg => \%cfg };
}

# Per-ID status counts over the catalogue (for summaries): over the whole
# run, or over one configuration of it when CONFIG is given.
sub count_status {
	my ($run, $ids, $config) = @_;
	my $req = defined $config ? $run->{cfg}{$config}{req} : $run->{req};
	my %n = map { $_ => 0 } @STATUS_ORDER;
	$n{ $req->{$_}{status} }++ for @$ids;
	return \%n;
}

# A requirement's status as the page shows it: with a waiver (waivers.txt),
# a failure, deviation or missing result is "waived". (status, reasons).
sub waived_status {
	my ($q, $waiver) = @_;
	my @why = @{ $q->{reasons} };
	return ($q->{status}, \@why) unless defined $waiver && $q->{status} =~ /^(fail|deviation|notrun)$/;
	return ('waived', [ @why, "waiver: $waiver" ]);
}

# A run's state (DIR/run.txt, key=value lines written by `ibvct
# conformance`): state=running while it runs, complete when its report is
# whole, interrupted when a signal ended it; min_ran, the verdict's
# threshold (below). A folder without run.txt (TAP collected by hand, older
# runs) is taken as complete. {} when there is none.
sub read_run_state {
	my ($dir) = @_;
	my (undef, $kv) = read_kv("$dir/run.txt");
	return $kv;
}

# unfinished DIR: why DIR is not a finished run (its run.txt says it is
# still running or was interrupted), or undef. compare-runs, certify and
# verify-bundle refuse such a folder: it holds part of a run.
sub unfinished {
	my ($dir) = @_;
	return undef unless -e "$dir/run.txt";
	my $st = read_run_state($dir);
	my $state = $st->{state} // '';
	return undef if $state eq 'complete';
	return 'the run was interrupted' . ($st->{signal} ? " (SIG$st->{signal})" : '')
		. ' before its report was whole' if $state eq 'interrupted';
	return 'the run has not finished (state ' . ($state eq '' ? 'unknown' : $state)
		. ($st->{pid} ? ", pid $st->{pid}" : '') . '): it is still running, or it was killed';
}

# min_ran SPEC, MANDATORY: how many mandatory requirements must have run for
# a run to be a result: SPEC is a count ("5") or a share of the mandatory
# list ("50%"); default 1.
sub min_ran {
	my ($spec, $nmand) = @_;
	$spec = 1 unless defined $spec && $spec =~ /^\d+%?$/;
	return $spec =~ /^(\d+)%$/ ? int(($1 * $nmand + 99) / 100) : $spec + 0;
}

# Why a test has its result: the directive's reason, else (a plain failure)
# the check's own message (failure_reason).
sub reason_of {
	my ($run, $t) = @_;
	return $t->{reason} if $t->{reason} ne '';
	return failure_reason($t, $run->{programs}{ $t->{program} }{stderr});
}

# The hint under a NO RESULT whose cause is the device.
sub device_hint {
	my ($src) = @_;
	my $root = Cwd::abs_path($src) // $src;
	my $setup = -f "$root/Makefile" ? "tools/vm/rxe-setup" : "$root/tools/vm/rxe-setup";
	return "no RDMA device: is ib_uverbs loaded, and the device's driver? "
		. "sh $setup makes a soft-RoCE device, or run the guest target: ibvct conformance --target rxe-vm";
}
our $DEVICE_CAUSE = qr/ibv_get_device_list|no RDMA device|no such device|no active port|device not found/i;

# The run's verdict, which the page, summary.txt, junit.xml and the exit
# status of `ibvct conformance` (report-verdict) all take from here, so that
# they agree:
#   NO RESULT  the run says it has none (no-result.txt: one cause a line, a
#              line "hint: ..." the hint; a guest that gave none, a named
#              device that is not there), it was interrupted (run.txt), or
#              fewer mandatory requirements ran (pass, fail, known
#              deviation, fixed; a skip did not run) than its min_ran
#              (run.txt, default 1): nothing, or too little, was tested;
#   FAIL       else a requirement or a program failed (a crash, an exit
#              status, a plan problem): what ran is a result;
#   PASS       otherwise.
# Returns { word (PASS, FAIL, NO RESULT), causes [lines], given (1: the
# causes are the run's own, no-result.txt or an interruption, and its TAP
# is what came before), hint, counts (the one-line tally), nprogs,
# bad_progs [names], ran, need, nmand, mand (counts) }.
sub run_verdict {
	my ($dir, $run, $mp_ids, $src) = @_;
	my @progs = sort keys %{ $run->{programs} };
	my @bad = grep { !$run->{programs}{$_}{ok} } @progs;
	my $mand = count_status($run, $mp_ids);
	my $ran = 0;
	$ran += $mand->{$_} for qw(pass fail deviation fixed);
	my $state = read_run_state($dir);
	my $need = min_ran($state->{min_ran}, scalar @$mp_ids);
	my (@causes, $hint, $word);
	my $nr = slurp("$dir/no-result.txt") // '';
	for (grep { /\S/ } split /\n/, $nr) {
		if (/^hint:\s*(.*)$/) { $hint = $1 } else { push @causes, $_ }
	}
	if (($state->{state} // '') eq 'interrupted') {
		unshift @causes, 'the run was interrupted' . ($state->{signal} ? " (SIG$state->{signal})" : '')
			. ': what is here is part of it';
	}
	my $given = @causes ? 1 : 0;
	if (@causes) {
		$word = 'NO RESULT';
	} elsif (run_failed($run, \@bad)) {
		$word = 'FAIL';
	} elsif ($ran < $need) {
		$word = 'NO RESULT';
		# the reason the programs gave for not running: the commonest
		my %why;
		for my $p (map { $run->{programs}{$_} } @progs) {
			if (defined $p->{skip_all}) { $why{ $p->{skip_all} || 'no reason given' }++; next }
			$why{ $_->{reason} || 'no reason given' }++ for grep { $_->{status} eq 'skip' } @{ $p->{tests} };
		}
		my ($top) = sort { $why{$b} <=> $why{$a} || $a cmp $b } keys %why;
		push @causes, sprintf('%d of %d mandatory requirements ran, %d needed%s', $ran, scalar @$mp_ids,
			$need, !@progs ? ': no test program ran' : defined $top ? "; the tests were skipped: $top" : '');
		$hint //= device_hint($src) if defined $top && $top =~ $DEVICE_CAUSE;
	} else {
		$word = 'PASS';
	}
	$hint //= device_hint($src) if grep { $_ =~ $DEVICE_CAUSE } @causes;
	my $counts = sprintf('%d program%s, %d failed; mandatory %d: %s', scalar @progs, @progs == 1 ? '' : 's',
		scalar @bad, scalar @$mp_ids,
		join(', ', map { "$mand->{$_} $LABEL{$_}" } grep { $mand->{$_} } @STATUS_ORDER) || 'none');
	return { word => $word, causes => \@causes, given => $given, hint => $hint, counts => $counts,
		nprogs => scalar @progs, bad_progs => \@bad, ran => $ran, need => $need,
		nmand => scalar @$mp_ids, mand => $mand };
}
# A failed requirement or a program that did not end cleanly.
sub run_failed {
	my ($run, $bad) = @_;
	return @$bad || grep { $_->{status} eq "fail" } values %{ $run->{req} };
}

# by_reason RUN, STATUS, IDS: the requirements of IDS with STATUS, grouped
# by why they have it: [ [reason, [IDs]], ... ], the reason shared by the
# most requirements first. A requirement whose tests give several reasons
# is under each.
sub by_reason {
	my ($run, $status, $ids) = @_;
	my (%ids, %first, $n);
	for my $id (@$ids) {
		my $q = $run->{req}{$id};
		next unless $q->{status} eq $status;
		my %seen;
		for my $t (grep { $_->{status} eq $status } @{ $q->{tests} }) {
			my $why = reason_of($run, $t);
			$why = '(no reason given)' if $why eq '';
			next if $seen{$why}++;
			$first{$why} //= $n++;
			push @{ $ids{$why} }, $id;
		}
	}
	return [ map { [ $_, $ids{$_} ] }
		sort { @{ $ids{$b} } <=> @{ $ids{$a} } || $first{$a} <=> $first{$b} } keys %ids ];
}

# key=value lines (fingerprint.txt); later keys win; order kept.
sub read_kv {
	my ($path) = @_;
	my (@order, %kv);
	my $text = slurp($path);
	return ([], {}) unless defined $text;
	for (split /\n/, $text) {
		next unless /^([A-Za-z0-9_.\-]+)=(.*)$/;
		push @order, $1 unless exists $kv{$1};
		$kv{$1} = $2;
	}
	return (\@order, \%kv);
}

# Machine-readable results (results.tsv): one line per program, test and
# requirement; tabs inside fields become blanks.
sub write_results_tsv {
	my ($run, $reqs, $mandatory, $path) = @_;
	my $clean = sub { my $s = shift // ''; $s =~ s/[\t\n]+/ /g; $s };
	open(my $fh, '>', $path) or die "cannot write $path: $!\n";
	print $fh "# ibvct results: program NAME VERDICT PROBLEMS | test PROGRAM NAME STATUS IDS REASON | req ID STATUS MANDATORY REASONS\n";
	for my $pn (sort keys %{ $run->{programs} }) {
		my $p = $run->{programs}{$pn};
		print $fh join("\t", 'program', $pn, $p->{ok} ? 'ok' : 'FAIL',
			$clean->(join('; ', @{ $p->{problems} }))), "\n";
	}
	for my $pn (sort keys %{ $run->{programs} }) {
		for my $t (@{ $run->{programs}{$pn}{tests} }) {
			print $fh join("\t", 'test', $pn, $clean->($t->{key}), $t->{status},
				join(' ', @{ $t->{ids} }), $clean->($t->{reason})), "\n";
		}
	}
	for my $r (@$reqs) {
		my $q = $run->{req}{ $r->[0] };
		print $fh join("\t", 'req', $r->[0], $q->{status},
			$mandatory->{ $r->[0] } ? 'mandatory' : 'optional',
			$clean->(join('; ', @{ $q->{reasons} }))), "\n";
	}
	close $fh or die "cannot write $path: $!\n";
}

# A run given as a directory or as a certification bundle (.tar.gz):
# returns the directory holding the run (a bundle is unpacked under $tmp).
sub open_run {
	my ($what, $tmp) = @_;
	return $what if -d $what;
	die "$what: neither a directory nor a .tar.gz bundle\n" unless -f $what && $what =~ /\.t(ar\.)?gz$/;
	my @names = `tar -tzf '$what' 2>/dev/null`;
	die "$what: not a readable tar.gz\n" if $? || !@names;
	chomp @names;
	for (@names) {
		die "$what: unsafe member name: $_\n" if m{^/} || m{(^|/)\.\.(/|$)};
	}
	system('tar', '-xzf', $what, '-C', $tmp, '--no-same-owner', '--no-same-permissions') == 0
		or die "$what: cannot unpack\n";
	my @top = grep { -d $_ } glob("$tmp/*");
	die "$what: a bundle holds exactly one top directory\n" unless @top == 1;
	return $top[0];
}

sub html_escape {
	my $s = shift // '';
	$s =~ s/&/&amp;/g;
	$s =~ s/</&lt;/g;
	$s =~ s/>/&gt;/g;
	$s =~ s/"/&quot;/g;
	# Control characters are not allowed in XML 1.0; TAP may carry them.
	$s =~ s/[\x00-\x08\x0b\x0c\x0e-\x1f]/?/g;
	return $s;
}

# What a run ran on, in one line, from its fingerprint (read_kv's hash):
# the Debian release, the kernel (a guest's, for the guest targets) and the
# rdma-core (the distribution's libibverbs1; on the reference target the
# library under test is ref-impl, so that is said). Every report's first
# line (summary.txt, index.html) is this.
sub ran_on {
	my ($fp) = @_;
	my $os = $fp->{os} // 'unknown system';
	$os =~ s/^Debian GNU\/Linux /Debian /;
	my $kernel = $fp->{'guest.kernel.release'} // $fp->{kernel} // 'unknown';
	my $rdma = $fp->{'rdma-core.package'} // 'unknown';
	# a user's tree built and run as the system rdma-core (--rdma-core)
	$rdma = "$fp->{'rdma-core.tree.version'} (the tree $fp->{'rdma-core.tree'})"
		if defined $fp->{'rdma-core.tree'};
	my $target = $fp->{target} // '';
	my $lib = $target eq 'ref' ? ' (the library under test: ref-impl)' : '';
	return "$os, kernel $kernel, rdma-core $rdma$lib";
}

1;
