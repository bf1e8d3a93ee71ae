#!/bin/sh
# SPDX-License-Identifier: MIT
# t7308: the CI templates under ci/templates/ parse as YAML (CPAN::Meta::YAML,
# a Perl core module) and do what they promise: run `make check`, the ABI
# gate and `make conformance` on Debian 12, and publish the report folder
# and its junit.xml even when a step failed; every make target they call
# exists in the Makefile.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
gh=$src/ci/templates/github-actions.yml
gl=$src/ci/templates/gitlab-ci.yml
# yq FILE PERL-EXPR: evaluates EXPR with $y = the parsed document.
yq() {
	perl -MCPAN::Meta::YAML -e '
		local $/; open(my $fh, "<", $ARGV[0]) or die "$ARGV[0]: $!\n"; my $t = <$fh>;
		my $d = CPAN::Meta::YAML->read_string($t) or die CPAN::Meta::YAML->errstr . "\n";
		our $y = $d->[0]; my $r = eval $ARGV[1]; die $@ if $@; print "$r\n";' "$1" "$2"
}

for f in "$gh" "$gl"; do
	test_expect_success "$(basename "$f") parses as YAML" '
		out=$(yq "$f" "ref(\$y)" 2>&1)
		echo "$out"
		[ "$out" = HASH ]
	'
done

runs=$(yq "$gh" 'join "\n", map { $_->{run} // () } @{ $y->{jobs}{check}{steps} }')
test_expect_success "GitHub: make check, the ABI gate, conformance, in order" '
	echo "$runs"
	case $runs in *"make check"*"make abi-check"*"make conformance"*) ;; *) false ;; esac
'
pub=$(yq "$gh" 'join " ", map { ($_->{if} // "") . ":" . ($_->{with}{path} // "") } grep { ($_->{uses} // "") =~ /upload-artifact/ } @{ $y->{jobs}{check}{steps} }')
test_expect_success "GitHub: publishes reports/ and junit.xml always" '
	echo "$pub"
	[ "$pub" = "always():reports/ always():reports/*/junit.xml" ]
'

script=$(yq "$gl" 'join "\n", @{ $y->{ibvct}{script} }')
test_expect_success "GitLab: make check, the ABI gate, conformance, failing the job at the end" '
	echo "$script"
	case $script in *"make check"*"make abi-check"*"make conformance"*"exit \$status"*) ;; *) false ;; esac
'
art=$(yq "$gl" 'join " ", $y->{ibvct}{artifacts}{when}, @{ $y->{ibvct}{artifacts}{paths} }, $y->{ibvct}{artifacts}{reports}{junit}')
test_expect_success "GitLab: keeps reports/ and feeds junit.xml always" '
	echo "$art"
	[ "$art" = "always reports/ reports/*/junit.xml" ]
'

# Targets the templates call must exist (abi-check comes with the ABI gate).
missing=
for t in $(cat "$gh" "$gl" | grep -v '^ *#' | grep -oE '(run: |- )make [a-z][a-z-]*' | sed 's/.*make //' | sort -u); do
	grep -Eq "^$t:" "$src/Makefile" || missing="$missing $t"
done
test_expect_success "every make target the templates call exists" '
	echo "missing:$missing"
	[ -z "$missing" ]
'
test_done
