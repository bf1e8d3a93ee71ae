#!/bin/sh
# SPDX-License-Identifier: MIT
# t6040: ibvct-bench (`make bench`, tools/bench/ibvct-bench.c), run
# with tiny counts: every row of the report (the raw baselines, the fake
# HCA's figures, the machine's load) is in the table with a number, in
# order; the TSV has the same rows and values, the timestamped file and
# latest.tsv are the same; each ratio is value / baseline and each goal row
# has a verdict, the one-sided goals (write-then-spin, a blocked target) with
# the baselines of the same run. A script's mode line is replaced (a
# legacy script still measures XRC in extended mode). A setup that fails is
# an error with its reason, never a figure, and the exit status says so: a
# script without XRC (the XRC rows), a bad script (every fake-HCA row), a bad
# option. No wall-clock assertion: the figures are whatever this machine
# gives now.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
setup_ibvct_run

BENCH=$IBVCT_BUILD/bin/ibvct-bench
SCRIPTS=$src/fixtures/scripts
# The bench's scratch dirs land here, so that one left behind is seen.
TMPDIR=$tl_tmp
export TMPDIR
rows="raw_rtt_p50 raw_rtt_p99 raw_oneway_p50 raw_oneway_p99 raw_stream_rate raw_memcpy_bw
rc_send_rate rdma_write_rate xrc_send_rate rc_rtt_p50 rc_rtt_p99 xrc_rtt_p50 xrc_rtt_p99
rdma_write_lat_p50 rdma_write_lat_p99 rdma_read_lat_p50 rdma_read_lat_p99
atomic_fadd_lat_p50 atomic_fadd_lat_p99 write_spin_oneway_p50 write_spin_oneway_p99
write_blocked_rate read_blocked_p50 read_blocked_p99 fadd_blocked_p50 fadd_blocked_p99
mixed_rate mixed_send_lat_p50 mixed_send_lat_p99 loopback_rate legacy_loopback_rate
rc_send_64k_bw nproc loadavg_before loadavg_after bench_cpu bench_wall"
xrc_rows="xrc_send_rate xrc_rtt_p50 xrc_rtt_p99"

# bench NAME ARGS...: a tiny run, TSV into $tl_tmp/NAME; output in $tl_out/$tl_err.
bench() {
	tl_tsv=$tl_tmp/$1
	shift
	run_cmd "$BENCH" --iters 20 --seconds 0.1 --out "$tl_tsv" "$@"
}

# The report's table as "key value unit ratio baseline" lines, and the TSV's.
table() { awk '/^figure /{t = 1; next} t && NF == 0 {exit} t {print $1, $2, $3, $4, $5}' "$tl_out"; }
tsv() { awk -F '\t' 'NR > 1 {print $1, $2, $3, $4, $5}' "$tl_tsv/latest.tsv"; }
num='^-?[0-9]+(\.[0-9]+)?$'

keys_in_order() { [ "$(table | awk '{print $1}')" = "$(echo $rows | tr ' ' '\n')" ]; }
# all_numbers [EXCEPT...]: every row but those has a number; those say "error"
all_numbers() {
	table | awk -v num="$num" -v except=" $* " '
		index(except, " " $1 " ") { if ($2 != "error") bad = 1; next }
		$2 !~ num { bad = 1 }
		END { exit bad }'
}
tsv_errors_say() {	# tsv_errors_say REGEX ROW...: those rows are errors naming REGEX
	re=$1
	shift
	for r in "$@"; do
		awk -F '\t' -v r="$r" -v re="$re" '$1 == r && $2 == "error" && $7 == "error" &&
			$10 ~ ("^not measured: .*" re) {found = 1} END {exit !found}' \
			"$tl_tsv/latest.tsv" || return 1
		grep -Eq "^ibvct-bench: $r: not measured: .*$re" "$tl_err" || return 1
	done
}

# 1-10: a tiny run with the built-in script
bench default
test_expect_success "a tiny run exits 0" 'rc_is 0'
test_expect_success "every row of the report is in the table, in order" 'keys_in_order'
test_expect_success "every row has a number" 'all_numbers'
same_rows() { [ -s "$tl_tsv/latest.tsv" ] && [ "$(tsv)" = "$(table)" ]; }
test_expect_success "the TSV has the same rows and values as the table" 'same_rows'
stamped() {
	set -- $(ls "$tl_tsv")
	[ $# = 2 ] && [ "$2" = latest.tsv ] &&
		echo "$1" | grep -Eq '^[0-9]{8}T[0-9]{6}Z\.tsv$' && cmp -s "$tl_tsv/$1" "$tl_tsv/$2" &&
		[ "$(head -n 1 "$tl_tsv/$1")" = "$(printf 'figure\tvalue\tunit\tratio\tbaseline\tgoal\tverdict\tsamples\twhat\tnote')" ]
}
test_expect_success "the timestamped TSV and latest.tsv are the same file, with its header" 'stamped'
# value / baseline, within the rounding of the three printed numbers
ratios_right() {
	table | awk '
		function half(s, d) { d = index(s, "."); return d ? 0.5 * 10 ^ -(length(s) - d) : 0.5 }
		{v[$1] = $2; r[$1] = $4; b[$1] = $5; k[++n] = $1}
		END {
			for (i = 1; i <= n; i++) {
				x = k[i]
				y = v[b[x]]
				if (b[x] == "-" || y + 0 <= 0) { if (r[x] != "-") exit 1; seen += b[x] != "-"; continue }
				lo = (v[x] - half(v[x])) / (y + half(y)) - 0.0005
				hi = y - half(y) > 0 ? (v[x] + half(v[x])) / (y - half(y)) + 0.0005 : 1e300
				if (r[x] == "-" || r[x] + 0 < lo - 1e-9 || r[x] + 0 > hi + 1e-9)
					exit 1
				seen++
			}
			exit !(seen == 27)
		}'
}
test_expect_success "each ratio is the value over its baseline's" 'ratios_right'
verdicts_right() {
	awk -F '\t' 'NR > 1 {
			if ($6 == "-" && $7 != "-") bad = 1
			if ($6 != "-" && $7 != "met" && $7 != "missed") bad = 1
			if ($6 != "-") goals++
		}
		END { exit bad || goals != 15 }' "$tl_tsv/latest.tsv"
}
test_expect_success "every goal row is met or missed, every other row has no verdict" 'verdicts_right'
# The one-sided goals (issue 28), each on its row with its baseline of the
# same run: both numbers, and the verdict that their ratio gives (unless the
# ratio is within rounding of the bound).
one_sided_goals() {
	awk -F '\t' -v num="$num" '
		NR > 1 { v[$1] = $2; b[$1] = $5; g[$1] = $6; d[$1] = $7 }
		function row(r, base, k, le) {
			if (b[r] != base || v[r] !~ num || v[base] !~ num || v[base] + 0 <= 0)
				return 0
			if (g[r] != (le ? "<= " : ">= ") k " x " base)
				return 0
			q = v[r] / v[base]
			if (q > 0.99 * k && q < 1.01 * k)
				return d[r] == "met" || d[r] == "missed"
			return d[r] == ((le ? q <= k : q >= k) ? "met" : "missed")
		}
		END {
			exit !(row("write_spin_oneway_p50", "raw_oneway_p50", 2, 1) &&
			       row("write_blocked_rate", "rc_send_rate", 1, 0) &&
			       row("read_blocked_p50", "raw_rtt_p50", 3, 1) &&
			       row("fadd_blocked_p50", "raw_rtt_p50", 3, 1))
		}' "$tl_tsv/latest.tsv"
}
test_expect_success "the one-sided goals are on their rows with their baselines and verdicts" \
	'one_sided_goals'
load_told() {
	out_has "^machine: [0-9]+ CPUs online, loadavg [0-9.]+ " &&
		out_has "^machine: loadavg before [0-9.]+ .*, after [0-9.]+ .*; the bench's processes used [0-9.]+ s of CPU in [0-9.]+ s" &&
		[ "$(table | awk '$1 == "nproc" {print $2}')" = "$(getconf _NPROCESSORS_ONLN)" ]
}
test_expect_success "the machine's load is reported: CPUs, loadavg before and after, CPU vs wall" 'load_told'
test_expect_success "the scratch dirs are removed" '! ls -d "$tl_tmp"/ibvct-bench.* 2>/dev/null'

# 11-13: no XRC on the device: the XRC rows are errors with the reason
bench noxrc --script "$SCRIPTS/no-xrc.fps"
test_expect_success "a script without XRC exits 1" 'rc_is 1'
test_expect_success "without XRC the XRC rows are errors naming the failed verb, in table, TSV and stderr" \
	'tsv_errors_say "ibv_open_xrcd: " $xrc_rows'
test_expect_success "without XRC every other row is still a number" 'all_numbers $xrc_rows'

# 14-15: a bad script: refused with its file:line; only the raw rows remain
bench bad --script "$SCRIPTS/bad/bad-number.fps"
test_expect_success "a bad script exits 1" 'rc_is 1'
fake_rows=$(echo $rows | tr ' ' '\n' | grep -v -e '^raw_' -e '^nproc$' -e '^loadavg_' -e '^bench_' | tr '\n' ' ')
bad_rows() { tsv_errors_say "bad-number.fps:3: max_qp: bad number" $fake_rows && all_numbers $fake_rows; }
test_expect_success "a bad script makes every fake-HCA row an error with file:line, the raw rows stay numbers" \
	'bad_rows'

# 16-18: a script in legacy mode, traced, in two rounds: its mode line is
# replaced, so the extended figures (XRC too) are measured, and only the
# legacy looper runs legacy (each context'"'"'s open is traced with its mode
# and pid)
printf 'mode legacy\ntrace %s\ndevice fake0\n\tcap xrc\n\tport 1 state active\n' \
	"$tl_tmp/trace" >"$tl_tmp/legacy.fps"
bench legacy --rounds 2 --script "$tl_tmp/legacy.fps"
test_expect_success "a script in legacy mode exits 0" 'rc_is 0'
test_expect_success "its mode line is replaced: every row, XRC ones too, has a number" 'all_numbers'
pids_in_mode() {
	awk -v m="mode=$1)" 'index($0, " open_device(") && index($0, m) {print $1}' "$tl_tmp/trace" |
		sort -u | wc -l
}
modes_right() {
	# RC, one-sided and XRC: two processes each, a round; the extended
	# looper; the legacy one
	[ "$(pids_in_mode extended)" = 13 ] && [ "$(pids_in_mode legacy)" = 1 ] &&
		grep -qx "round 2 of 2" "$tl_out" && ! grep -q "round 3" "$tl_out"
}
test_expect_success "13 processes opened the device in extended mode (two rounds), one in legacy mode" 'modes_right'

# 19: a bad option
bench badarg --iters lots
test_expect_success "a bad option exits 2 with the usage" 'rc_is 2 && grep -q "^usage: ibvct-bench" "$tl_err"'

# 20: no round at all is a bad option too
bench norounds --rounds 0
test_expect_success "--rounds 0 exits 2 with the usage" 'rc_is 2 && grep -q "^usage: ibvct-bench" "$tl_err"'
test_done
