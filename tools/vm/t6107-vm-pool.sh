#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 600
# t6107: the guest pool (tools/vm/vm-pool.sh). Under `ibvct-vm pool`, every
# run of one kind is a job of a guest booted once: status, streams and out
# dir come back per job as from a guest of its own; two runs at once get two
# guests; a job past its limit ends without its guest, and nothing of it is
# left for the next; a guest that panics gives its job no result and the
# next run takes another (booting one when none is left); a run killed
# mid-job frees its guest; a pair
# of guests serves pairs the same way; and when the pool ends (or is
# signalled) no guest, process or dir of it is left. A pass-through QEMU
# stand-in counts the boots.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
skip_all_unless_utils ibv_rc_pingpong

# the boots of this test: a line each
boots=$tl_tmp/boots
cat >"$tl_tmp/qemu" <<EOF
#!/bin/sh
case \$* in *--version*) ;; *) echo boot >>"$boots" ;; esac
exec qemu-system-x86_64 "\$@"
EOF
chmod +x "$tl_tmp/qemu"
TMPDIR=$tl_tmp
IBVCT_VM_QEMU=$tl_tmp/qemu
# TCG, as asked: no probe boot to count (t6106 tests the choice)
IBVCT_VM_ACCEL=tcg
export TMPDIR IBVCT_VM_QEMU IBVCT_VM_ACCEL
cd "$tl_tmp" || test_bail "cannot cd to $tl_tmp"
: >"$boots"
nboots() { wc -l <"$boots"; }

# the scenario runs inside the pool; each step leaves its files in $tl_tmp
cat >"$tl_tmp/inner.sh" <<'EOF'
vm=$1 t=$2
r() { n=$1; shift; sh "$vm" run --result "$t/$n.r" "$@" >"$t/$n.out" 2>"$t/$n.err"; echo $? >"$t/$n.rc"; }
echo "$IBVCT_VM_POOL" >"$t/pooldir"
mkdir -p "$t/o" && echo "was there" >"$t/o/before"
r one --out "$t/o" -- sh -c 'echo out-one; echo err-one >&2; cat "$1/before" >"$1/seen"; exit 3' - "$t/o"
wc -l <"$t/boots" >"$t/boots.after-one"
r two -- sh -c 'echo out-two; uname -r'
wc -l <"$t/boots" >"$t/boots.after-two"
# two at once: a second guest
r par1 -- sh -c 'sleep 6; echo par1' & p1=$!
r par2 -- sh -c 'sleep 6; echo par2' & p2=$!
wait $p1 $p2
wc -l <"$t/boots" >"$t/boots.after-par"
# past its limit: the job ends, its guest stays; nothing of it is left
r limit --timeout 3 -- sh -c 'sh -c "sleep 100000; : ibvct-t6107-left" & sleep 100000; wait'
r after-limit -- sh -c 'for f in /proc/[0-9]*/cmdline; do tr "\0" " " <"$f" 2>/dev/null; echo; done | grep -c "ibvct-t6107-lef[t]"; exit 0'
wc -l <"$t/boots" >"$t/boots.after-limit"
# a run killed mid-job frees its guest and ends its job
sh "$vm" run -- sh -c 'sleep 100000; : ibvct-t6107-killed' >/dev/null 2>&1 & k=$!
i=0; while [ "$i" -lt 600 ] && ! grep -qs "ibvct-t6107-killed" "$IBVCT_VM_POOL"/k-*/s*/guest/jobs/*/cmd; do sleep 0.1; i=$((i + 1)); done
sleep 2
kill -TERM "$k"; wait "$k"; echo $? >"$t/killed.rc"
r after-kill -- sh -c 'for f in /proc/[0-9]*/cmdline; do tr "\0" " " <"$f" 2>/dev/null; echo; done | grep -c "ibvct-t6107-kille[d]"; exit 0'
wc -l <"$t/boots" >"$t/boots.after-kill"
# a panic: no result for its job, a new guest for the next run
r panic -- sh -c 'echo c >/proc/sysrq-trigger; sleep 100'
r after-panic -- true
ls -d "$IBVCT_VM_POOL"/k-*/dead-* >"$t/retired" 2>/dev/null
wc -l <"$t/boots" >"$t/boots.after-panic"
# pairs: one pair of guests for two pair runs
for n in pair1 pair2; do
	sh "$vm" pair --result "$t/$n.r" --timeout 300 \
		--server 'ibv_rc_pingpong -g $IBVCT_VM_GID -n 5' \
		--client 'ibv_rc_pingpong -g $IBVCT_VM_GID -n 5 $IBVCT_VM_PEER' >"$t/$n.out" 2>"$t/$n.err"
	echo $? >"$t/$n.rc"
done
wc -l <"$t/boots" >"$t/boots.after-pairs"
exit 7
EOF
run_cmd sh "$vm" pool -- sh "$tl_tmp/inner.sh" "$vm" "$tl_tmp"
pooldir=$(cat "$tl_tmp/pooldir" 2>/dev/null)
v() { cat "$tl_tmp/$1" 2>/dev/null; }
rv() { sed -n "s/^$2=//p" "$tl_tmp/$1.r" 2>/dev/null; }
show() { for f in "$@"; do echo "== $f"; cat "$tl_tmp/$f" 2>/dev/null; done; }

test_expect_success 'the pool runs its command and exits with its status (7)' '
	cat "$tl_err"
	rc_is 7 && [ -n "$pooldir" ]
'
test_expect_success 'a job: its status, stdout and stderr come back; its out dir held what was there and its writes land' '
	show one.rc one.out one.err one.r
	[ "$(v one.rc)" = 3 ] && grep -qx out-one "$tl_tmp/one.out" && grep -qx err-one "$tl_tmp/one.err" &&
	[ "$(v o/seen)" = "was there" ] && [ "$(rv one status)" = 3 ] && [ "$(rv one result)" = ok ]
'
test_expect_success 'the second run of the kind is a job of the same guest: one boot' '
	show two.out two.r boots.after-one boots.after-two
	[ "$(v two.rc)" = 0 ] && grep -qx out-two "$tl_tmp/two.out" &&
	[ "$(v boots.after-one)" = 1 ] && [ "$(v boots.after-two)" = 1 ] &&
	[ "$(rv one guest)" = "$(rv two guest)" ]
'
test_expect_success 'two runs at once: a second guest of the kind, both results' '
	show par1.out par2.out par1.r par2.r boots.after-par
	[ "$(v par1.rc)" = 0 ] && [ "$(v par2.rc)" = 0 ] && grep -qx par1 "$tl_tmp/par1.out" &&
	grep -qx par2 "$tl_tmp/par2.out" && [ "$(v boots.after-par)" = 2 ] &&
	[ "$(rv par1 guest)" != "$(rv par2 guest)" ]
'
test_expect_success 'a job past its limit: no result (125) with the reason; its guest stays, nothing of the job left' '
	show limit.rc limit.err limit.r after-limit.out boots.after-limit
	[ "$(v limit.rc)" = 125 ] && [ "$(rv limit result)" = no-result ] &&
	rv limit reason | grep -q "^the command was ended at its time limit" &&
	[ "$(v after-limit.rc)" = 0 ] && [ "$(v after-limit.out)" = 0 ] && [ "$(v boots.after-limit)" = 2 ]
'
test_expect_success 'a run killed mid-job (SIGTERM): 143, its job ended in the guest, the guest free for the next' '
	show killed.rc after-kill.out after-kill.r boots.after-kill
	[ "$(v killed.rc)" = 143 ] && [ "$(v after-kill.rc)" = 0 ] && [ "$(v after-kill.out)" = 0 ] &&
	[ "$(v boots.after-kill)" = 2 ]
'
test_expect_success 'a guest that panics: its job has no result with the panic; it is retired, the next run takes the other' '
	show panic.rc panic.r panic.err after-panic.r boots.after-panic retired
	[ "$(v panic.rc)" = 125 ] && rv panic reason | grep -q "kernel panicked" &&
	[ "$(v after-panic.rc)" = 0 ] && [ "$(v boots.after-panic)" = 2 ] && [ -s "$tl_tmp/retired" ] &&
	[ "$(rv after-panic guest)" != "$(rv panic guest)" ]
'
test_expect_success 'pairs: both sides of each pair run come back; two pair runs, one pair of guests' '
	show pair1.rc pair1.out pair1.r pair2.rc pair2.r boots.after-pairs
	[ "$(v pair1.rc)" = 0 ] && [ "$(v pair2.rc)" = 0 ] &&
	[ "$(rv pair1 server.status)" = 0 ] && [ "$(rv pair1 client.status)" = 0 ] &&
	grep -q "^client: .*remote address: .*GID ::ffff:10.9.0.1" "$tl_tmp/pair1.out" &&
	[ "$(v boots.after-pairs)" = 4 ] && [ "$(rv pair1 guest)" = "$(rv pair2 guest)" ]
'
# pool_left DIR: the processes of pool DIR still running: its guests, its
# serve processes, and whatever its command started (IBVCT_VM_POOL=DIR in
# their environment)
pool_left() {
	for f in /proc/[0-9]*; do
		[ "${f#/proc/}" = "$$" ] && continue
		case $(tr '\0' ' ' 2>/dev/null <"$f/cmdline") in
		*"$tl_tmp"/qemu*|*"$1"*) echo "${f#/proc/}"; continue ;;
		esac
		tr '\0' '\n' 2>/dev/null <"$f/environ" | grep -qx "IBVCT_VM_POOL=$1" && echo "${f#/proc/}"
	done
}
# nothing of the pool left: its dir, its guests, its serve processes
left=$(pool_left "$pooldir")
test_expect_success 'the pool ended: its dir and every guest and process of it are gone' '
	echo "left: $left"; ls -la "$pooldir" 2>&1
	[ -n "$pooldir" ] && [ ! -e "$pooldir" ] && [ -z "$left" ]
'

# a signal to the pool while its guests run
: >"$boots"
IBVCT_VM_SILENCE=600 sh "$vm" pool -- sh -c 'echo "$IBVCT_VM_POOL" >"$1/pool2"; sh "$2" run -- sleep 100000' - \
	"$tl_tmp" "$vm" >"$tl_tmp/sig.out" 2>&1 &
p=$!
i=0
while [ "$i" -lt 1200 ] && ! grep -qs "sleep 100000" "$(cat "$tl_tmp/pool2" 2>/dev/null)"/k-*/s*/guest/jobs/*/cmd.txt; do
	sleep 0.1
	i=$((i + 1))
done
kill -TERM "$p"
wait "$p"
sig_rc=$?
pool2=$(cat "$tl_tmp/pool2" 2>/dev/null)
left=$(pool_left "$pool2")
test_expect_success 'SIGTERM to the pool with a job running: 143, nothing of it left' '
	echo "status $sig_rc; left: $left; boots $(nboots)"; cat "$tl_tmp/sig.out"
	[ "$sig_rc" = 143 ] && [ -n "$pool2" ] && [ ! -e "$pool2" ] && [ -z "$left" ] && [ "$(nboots)" = 1 ]
'
test_done
