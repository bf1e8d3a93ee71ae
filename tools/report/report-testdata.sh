# SPDX-License-Identifier: MIT
# Synthetic conformance runs for the report tools' tests (t72NN), sourced
# (POSIX sh). A run is a folder laid out as tools/ibvct/conformance writes it:
# tap/NAME.tap + NAME.rc, fingerprint.txt; its TAP follows the suites'
# convention (`ok N - name [ID ...]`, SKIP and TODO directives).
# Needs IBVCT_SRC.

# rt_run_mixed DIR: one of each result, a skipped program, a crashed one and
# an ID outside the catalogue.
#   t9001-mixed: XRCD-01 pass, XRCD-02 fail, XRCD-03 skip (reason "no xrc"),
#                XRCD-04 known deviation, XRCD-05 + LIFE-10 fixed,
#                XRCD-01 and XRCD-02 again (pass: XRCD-02 stays fail), a test without ID, ZZZ-99 unknown
#   t9002-skipall: 1..0 # SKIP no device
#   t9003-crash:  1..3, one pass [QPX-01], exit 139
rt_run_mixed() {
	mkdir -p "$1/tap"
	cat >"$1/tap/t9001-mixed.tap" <<'EOF'
1..8
ok 1 - xrcd_open_needs_fd_and_oflags [XRCD-01]
not ok 2 - xrcd_open_reserved_mask_refused [XRCD-02]
# expected errno 95, got 0
ok 3 - xrcd_private_o_creat [XRCD-03] # SKIP no xrc
not ok 4 - xrcd_private_no_o_creat [XRCD-04] # TODO known deviation: returns EINVAL
ok 5 - xrcd_bound_o_creat [XRCD-05 LIFE-10] # TODO was EBUSY
ok 6 - xrcd_open_needs_fd_and_oflags_again [XRCD-01 XRCD-02]
ok 7 - no_id_here
ok 8 - names_an_unknown_id [ZZZ-99]
EOF
	echo 1 >"$1/tap/t9001-mixed.rc"
	echo '1..0 # SKIP no device' >"$1/tap/t9002-skipall.tap"
	echo 0 >"$1/tap/t9002-skipall.rc"
	printf '1..3\nok 1 - qp_ex_routes_pd_only [QPX-01]\n' >"$1/tap/t9003-crash.tap"
	echo 139 >"$1/tap/t9003-crash.rc"
	printf 'target=ref\ndevice=fake0\nlibrary.path=/x/libibverbs.so.1\nattr.fw_ver=<1.0 & "beta">\n' >"$1/fingerprint.txt"
}

# rt_run_mustpass DIR: every mandatory ID of fixtures/mustpass.txt passes in
# one program, t9100-all, except as the variables say (blank-separated IDs):
#   RT_FAIL      not ok
#   RT_SKIP      ok # SKIP device has no XRC
#   RT_SKIP_NR   ok # SKIP   (no reason)
#   RT_DEV       not ok # TODO known deviation: firmware 1.2
#   RT_DROP      no test at all
# RT_RC: the program's exit status (default 0, or 1 if a test fails).
rt_run_mustpass() {
	mkdir -p "$1/tap"
	# One awk for the whole list: a fork per ID is slow on a busy machine.
	awk -v fail=" ${RT_FAIL:-} " -v skip=" ${RT_SKIP:-} " -v skipnr=" ${RT_SKIP_NR:-} " \
	    -v dev=" ${RT_DEV:-} " -v drop=" ${RT_DROP:-} " -v out="$1/tap/t9100-all.tap" '
		function has(list, id) { return index(list, " " id " ") > 0 }
		/^[A-Z]+-[0-9]+$/ {
			if (has(drop, $0)) next
			name = tolower($0); gsub(/-/, "_", name)
			line = "ok " ++n " - check_" name " [" $0 "]"
			if (has(fail, $0)) { line = "not " line; bad = 1 }
			if (has(skip, $0)) line = line " # SKIP device has no XRC"
			if (has(skipnr, $0)) line = line " # SKIP"
			if (has(dev, $0)) line = "not " line " # TODO known deviation: firmware 1.2"
			body = body line "\n"
		}
		END { printf "1..%d\n%s", n, body >out; exit bad }' "$IBVCT_SRC/fixtures/mustpass.txt"
	rt_bad=$?
	echo "${RT_RC:-$rt_bad}" >"$1/tap/t9100-all.rc"
	printf 'target=system\ndevice=mlx5_0\nattr.fw_ver=16.35.1012\nattr.xrc=yes\n' >"$1/fingerprint.txt"
}

# rt_run_configs DIR: one suite, t9301-suite, run in two configurations as
# tools/ibvct/suites-run names them (tap/NAME.CONFIG.tap), where results differ:
#                 ref-extended-current     ref-legacy-seed (exit 1)
#   XRCD-01       pass                     pass
#   XRCD-02       pass                     FAIL ("expected errno 22, got 0")
#   XRCD-03       skip ("no xrc")          pass
#   XRCD-04       pass                     known deviation ("returns EINVAL")
#   XRCD-05       pass                     (no test: not run)
rt_run_configs() {
	mkdir -p "$1/tap"
	cat >"$1/tap/t9301-suite.ref-extended-current.tap" <<'EOF2'
1..5
ok 1 - xrcd_open_needs_fd_and_oflags [XRCD-01]
ok 2 - xrcd_open_reserved_mask_refused [XRCD-02]
ok 3 - xrcd_private_o_creat [XRCD-03] # SKIP no xrc
ok 4 - xrcd_private_no_o_creat [XRCD-04]
ok 5 - xrcd_bound_o_creat [XRCD-05]
EOF2
	echo 0 >"$1/tap/t9301-suite.ref-extended-current.rc"
	cat >"$1/tap/t9301-suite.ref-legacy-seed.tap" <<'EOF2'
1..4
ok 1 - xrcd_open_needs_fd_and_oflags [XRCD-01]
not ok 2 - xrcd_open_reserved_mask_refused [XRCD-02]
# expected errno 22, got 0
ok 3 - xrcd_private_o_creat [XRCD-03]
not ok 4 - xrcd_private_no_o_creat [XRCD-04] # TODO known deviation: returns EINVAL
EOF2
	echo 1 >"$1/tap/t9301-suite.ref-legacy-seed.rc"
	printf 'target=ref\ndevice=fake0\nlibrary.path=/x/libibverbs.so.1\nkernel=6.1.0\n' >"$1/fingerprint.txt"
}

# rt_run_asserts DIR: a suite's failures as the C runner (testkit/runner/tr.c)
# writes them, each with its status line, cmocka's banner and the test's
# log under the `not ok`, one program, t9401-asserts (exit 1):
#   WR-03    a cmocka assertion, after a line the test printed
#   QPX-11   a th_fail message
#   LIFE-02  a timeout (the test's last line before it)
#   QPX-12   a log of banner lines only; the program's stderr has a line
rt_run_asserts() {
	mkdir -p "$1/tap"
	cat >"$1/tap/t9401-asserts.tap" <<'EOF2'
1..5
# target ref, device fake0 port 1, mode extended, lifetime current, XRC yes
ok 1 - xrcd_open_needs_fd_and_oflags [XRCD-01]
not ok 2 - each_send_lands_in_the_srq_remote_srqn_names [WR-03]
# each_send_lands_in_the_srq_remote_srqn_names: exit status 1
#   [==========] Running 1 test(s).
#   [ RUN      ] each_send_lands_in_the_srq_remote_srqn_names
#   opcode 2 to SRQ 3 (srqn 0x1686)
#   [  ERROR   ] --- 0 != 0x1
#   [   LINE   ] --- suites/t1000-send-wr.c:202: error: Failure!
#   [  FAILED  ] each_send_lands_in_the_srq_remote_srqn_names
#   [==========] 1 test(s) run.
#   [  PASSED  ] 0 test(s).
#   [  FAILED  ] 1 test(s), listed below:
#   [  FAILED  ] each_send_lands_in_the_srq_remote_srqn_names
#   
#    1 FAILED TEST(S)
# each_send_lands_in_the_srq_remote_srqn_names: scratch dir kept: /tmp/ibvct-suite.R4tiNz/each_send_lands_in_the_srq_remote_srqn_names
not ok 3 - post_recv_on_xrc_qps_fails_and_takes_nothing [QPX-11]
# post_recv_on_xrc_qps_fails_and_takes_nothing: exit status 1
#   [==========] Running 1 test(s).
#   [ RUN      ] post_recv_on_xrc_qps_fails_and_takes_nothing
#   RC: memory differs after the same traffic through the two APIs
# post_recv_on_xrc_qps_fails_and_takes_nothing: scratch dir kept: /tmp/ibvct-suite.M0b67t/post_recv_on_xrc_qps_fails_and_takes_nothing
# post_recv_on_xrc_qps_fails_and_takes_nothing: observed the current lifetime model
not ok 4 - owner_destroy_keeps_qp_for_other_handles [LIFE-02]
# owner_destroy_keeps_qp_for_other_handles: timeout: killed after 30 s (limit 30 s)
#   [==========] Running 1 test(s).
#   [ RUN      ] owner_destroy_keeps_qp_for_other_handles
#   waiting for the holder
# owner_destroy_keeps_qp_for_other_handles: scratch dir kept: /tmp/ibvct-suite.M0b67t/owner_destroy_keeps_qp_for_other_handles
not ok 5 - post_send_on_xrc_recv_fails_and_takes_nothing [QPX-12]
# post_send_on_xrc_recv_fails_and_takes_nothing: exit status 1
#   [==========] Running 1 test(s).
#   [ RUN      ] post_send_on_xrc_recv_fails_and_takes_nothing
# post_send_on_xrc_recv_fails_and_takes_nothing: scratch dir kept: /tmp/ibvct-suite.M0b67t/post_send_on_xrc_recv_fails_and_takes_nothing
EOF2
	echo 1 >"$1/tap/t9401-asserts.rc"
	printf '[==========] tests\nfake kernel: lost the connection to the test\n' >"$1/tap/t9401-asserts.stderr"
	printf 'target=system\ndevice=rxe0\n' >"$1/fingerprint.txt"
}
