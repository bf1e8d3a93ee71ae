# SPDX-License-Identifier: MIT
# ibvct in an openQA multi-machine test: this module runs on both jobs of
# the pair (PARALLEL_WITH); the parent job's SUT serves (host B), the
# child's is the client (host A), whose report is parsed as JUnit. The
# SUT has no barrier command of its own: openQA's barrier_wait (lockapi)
# runs here at the points ibvct names, ibvct-start and ibvct-done (the
# parent creates them: barrier_create("ibvct-start", 2), ...), and the
# pair keeps in step test by test over its own TCP connection. The lab's
# known issues (the waiver file of its bug references) make listed
# failures known deviations.
use Mojo::Base 'basetest';
use testapi;
use lockapi;

sub run {
	my $role = get_var('IBVCT_ROLE');	# server (parent job) or client
	my $peer = get_var('IBVCT_PEER');	# the other SUT's address
	my $out = "/tmp/ibvct-pair-$role";
	barrier_wait('ibvct-start');
	script_run("ibvct conformance --target system --peer $peer --role $role "
		. "--run-id openqa-" . get_var('TEST_ID', 0) . " "
		. "--known-issues /etc/ibvct/known-issues.txt --out $out", timeout => 3600);
	barrier_wait('ibvct-done');
	parse_extra_log('JUnit', "$out/junit.xml") if $role eq 'client';
	upload_logs("$out/summary.txt");
}

1;
