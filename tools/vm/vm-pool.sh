# SPDX-License-Identifier: MIT
# The guest pool of tools/vm/ibvct-vm (sourced by it): guests booted once and
# shared by every run of the same kind, one job at a time each, so that a
# make check boots each kind of guest once (or twice, to run two tests'
# guest parts side by side on 2 cores) instead of once per test.
#
#   ibvct-vm pool [--max N] -- COMMAND [ARG]...
#       runs COMMAND with IBVCT_VM_POOL set to a pool dir; every
#       `ibvct-vm run` and `pair` under it (not --no-pool) runs its command
#       as a job of a pool guest of its kind, booted on first use; at the
#       end (or on SIGINT/SIGTERM/SIGHUP) every guest is stopped and the
#       dir removed. Exit status: COMMAND's.
#   ibvct-vm serve --slot DIR [--pair] [GUEST OPTIONS]   (the pool's own)
#       boots the guest (two, --pair) of one slot and serves its jobs
#
# Owns: the pool dir's layout and who may touch what in it:
#   POOL/manager.pid   the pool's manager, parent of every pool guest (so a
#                      test's reaper, which ends what a test started, never
#                      ends a guest other tests share)
#   POOL/spawn/ID.req  a request to start `serve` (a run that found no
#                      guest of its kind free), taken by the manager
#   POOL/k-KEY/sN/     slot N of kind KEY (KEY: a checksum of the options
#                      that make a guest: kernel, modules, vCPUs, memory,
#                      QEMU, one guest or a pair); made by the run that
#                      asked for it; its serve writes info and ready (the
#                      guest serves) or dead (one line: why it ended)
#   POOL/k-KEY/sN/claim/  the run that uses the slot (mkdir: atomic): pid,
#                      and job (the job it runs); a claim whose pid is gone
#                      is taken back, its job killed
#   POOL/k-KEY/sN/NAME/jobs/J/  a job (guest-init runs it): conf, cmd,
#                      cmd.txt, out/, submit; back: stdout, stderr, ready,
#                      rc or fault; kill asks the guest to end it
# A job's limit is its run's --timeout, on the stretched clock of
# build/bin/ibvct-reap; the wait for a free guest and its boot are the
# boot's allowance. A guest that dies (a panic, silent, its limit
# IBVCT_VM_POOL_LIMIT, 7200 s) gives its job no result, and the next run
# of its kind boots another.

# ---- the pool --------------------------------------------------------------------
cmd_pool() {
	parse_opts "$@"
	shift $(($# - rest_n))
	[ $# -gt 0 ] || { usage >&2; die "pool: no command"; }
	# in the build tree when there is one: a test under testkit/sh/test-exec's
	# litter check has a /tmp of its own, and must still see the pool
	pool_parent=${TMPDIR:-/tmp}
	[ -n "${IBVCT_BUILD:-}" ] && [ -d "$IBVCT_BUILD" ] && [ -w "$IBVCT_BUILD" ] && pool_parent=$IBVCT_BUILD
	pool=$(mktemp -d "$pool_parent/ibvct-vm-pool.XXXXXX") || die "cannot make a pool dir in $pool_parent"
	mkdir -p "$pool/spawn"
	echo "$pool_max" >"$pool/max"
	pool_manager &
	pool_mgr=$!
	echo "$pool_mgr" >"$pool/manager.pid"
	trap 'pool_end; exit 129' HUP
	trap 'pool_end; exit 130' INT
	trap 'pool_end; exit 143' TERM
	# in the background, so that a signal to this runner is handled at once
	# (a trap waits for a foreground command to end); under ibvct-reap, so
	# that a signal ends every process of it, whatever its group
	pool_reap=${IBVCT_BUILD:-$here/../../build}/bin/ibvct-reap
	if [ -x "$pool_reap" ]; then
		IBVCT_VM_POOL=$pool "$pool_reap" -t 0 -n "ibvct-vm pool" -- "$@" &
	else
		IBVCT_VM_POOL=$pool "$@" &
	fi
	pool_cmd=$!
	wait "$pool_cmd"
	pool_rc=$?
	pool_cmd=
	pool_end
	exit "$pool_rc"
}

# pool_end: every guest stops (its jobs are done), the manager goes, the
# dir goes
pool_end() {
	trap '' HUP INT TERM
	nap_end
	if [ -n "${pool_cmd:-}" ]; then
		kill -TERM "$pool_cmd" 2>/dev/null
		wait "$pool_cmd" 2>/dev/null
	fi
	: >"$pool/stop"
	wait "$pool_mgr" 2>/dev/null
	rm -rf "$pool"
}

# pool_manager: starts the serve of each request; at POOL/stop asks every
# guest to stop, gives them 20 s, then ends what is left
pool_manager() {
	trap '' INT HUP
	pm_pids=
	while [ ! -e "$pool/stop" ]; do
		for pm_r in "$pool"/spawn/*.req; do
			[ -e "$pm_r" ] || continue
			mv "$pm_r" "$pm_r.run" 2>/dev/null || continue
			sh "$pm_r.run" >"$pm_r.log" 2>&1 </dev/null &
			pm_pids="$pm_pids $!"
		done
		nap 0.1
	done
	for pm_c in "$pool"/k-*/s*/*/conf; do
		[ -e "$pm_c" ] && : >"${pm_c%/conf}/stop"
	done
	pm_i=0
	while [ "$pm_i" -lt 200 ]; do
		pm_left=
		for pm_p in $pm_pids; do
			kill -0 "$pm_p" 2>/dev/null && pm_left="$pm_left $pm_p"
		done
		[ -n "$pm_left" ] || break
		pm_i=$((pm_i + 1))
		nap 0.1
	done
	# shellcheck disable=SC2086 # pids
	[ -z "$pm_left" ] || kill -TERM $pm_left 2>/dev/null
	for pm_p in $pm_pids; do
		wait "$pm_p" 2>/dev/null
	done
}

# pool_active: a pool to run in (IBVCT_VM_POOL, its manager alive, no --no-pool)
# (a root of IBVCT_VM_ROOT, a user's rdma-core tree, is never a pool's)
pool_active() {
	[ "$no_pool" = 0 ] && [ -n "${IBVCT_VM_POOL:-}" ] && [ -z "${IBVCT_VM_ROOT:-}" ] &&
		[ -f "$IBVCT_VM_POOL/manager.pid" ] && kill -0 "$(cat "$IBVCT_VM_POOL/manager.pid")" 2>/dev/null || return 1
	# a guest with a module of the host's (xrc-vm: ixrc.ko) serves its run
	# alone: one such guest, given a second job after a run of the suites,
	# stopped with its vCPU spinning and its interrupts held off (clocksource
	# readouts 4.5 s apart, then nothing), in 4 of 6 tries; a guest of its
	# own per run never did
	[ -z "$insmods" ] || return 1
	# a guest made of files in this run's own /tmp (a mount namespace of its
	# own: testkit/sh/test-exec) boots here: the pool's manager, in the host's
	# namespace, would look for them in vain
	case $guest_opts in
	*"'/tmp/"*|*" /tmp/"*)
		pool=$IBVCT_VM_POOL
		pool_tmp
		[ -z "$tmp_real" ] || return 1 ;;
	esac
}

# The caller's environment that shapes a guest: a pool's guest is booted
# with the asking run's, and only runs with the same share it
POOL_ENV='IBVCT_VM_ACCEL IBVCT_TIMEOUT_MULT IBVCT_VM_SLOW IBVCT_VM_SILENCE IBVCT_VM_SHARE IBVCT_VM_KVM_DEV IBVCT_VM_ACCEL_CACHE IBVCT_BUILD IBVCT_SRC'
pool_env() {
	for pe_v in $POOL_ENV; do
		eval "pe_set=\${$pe_v+x}"
		[ -n "$pe_set" ] || continue
		eval "pe_val=\$$pe_v"
		printf '%s=%s\n' "$pe_v" "$(q "$pe_val")"
	done
}

# ---- a slot's guest: serve -------------------------------------------------------
cmd_serve() {
	parse_opts "$@"
	[ -n "$slot" ] && [ -d "$slot" ] || die "serve: --slot DIR"
	work=$slot
	# the guest serves until the pool stops it, within this limit
	tmo=${IBVCT_VM_POOL_LIMIT:-7200}
	serving=1
	# a guest that cannot be set up: the slot is dead, with the reason
	fail() { warn "$*"; serve_dead "$*"; exit 0; }
	die() { warn "$*"; serve_dead "$*"; exit 0; }
	guest_prepare
	cwd=/
	trap 'serve_signal' HUP INT TERM
	if [ "$serve_pair" = 1 ]; then names="server client"; else names=guest; fi
	while :; do
		serve_boot
		[ -n "$serve_why" ] || break
		if serve_accel_failed; then
			accel_fallback "$serve_why"
		elif [ -z "$serve_failed" ] || ! boot_failed "$serve_failed" || ! boot_retry "$serve_why"; then
			serve_dead "$serve_why"
			guests_stop
			exit 0
		fi
	done
	{
		echo "accel=$accel"
		echo "accel_why=$accel_why"
		echo "accel_fell=${accel_fell:-}"
		echo "guest_mult=$guest_mult"
		echo "kdir=$kdir"
		echo "limit=$limit"
		echo "rel_info=$rel_info"
		echo "relroot=$relroot"
		date +%s | sed 's/^/ready_at=/'
	} >"$slot/info"
	: >"$slot/ready"
	# the first guest to end ends the other: a pair serves as one
	while :; do
		for n in $names; do
			eval "sv_pid=\$g_pid_$n"
			kill -0 "$sv_pid" 2>/dev/null || break 2
		done
		nap 0.5
	done
	serve_why=
	for n in $names; do
		eval "kill -TERM \$g_pid_$n" 2>/dev/null
		guest_wait "$n"
		[ -e "$slot/$n/stop" ] && [ -z "$(cat "$slot/$n/fault" 2>/dev/null)" ] && continue
		[ -n "$serve_why" ] || serve_why="$n: ${g_why:-its guest ended}"
	done
	serve_dead "${serve_why:-stopped}"
}

# serve_boot: the slot's guests until each serves (serve_why empty) or one
# ends first (serve_why: what ended it; serve_failed: its name)
serve_boot() {
	serve_why= serve_failed=
	if [ "$serve_pair" = 1 ]; then
		sb_port=$(free_port) || { serve_why="no free TCP port on 127.0.0.1"; return 0; }
		echo "" | guest_setup server 10.9.0.1 10.9.0.2
		echo "" | guest_setup client 10.9.0.2 10.9.0.1
		guest_start server "-netdev socket,id=n0,listen=127.0.0.1:$sb_port" 52:54:00:49:42:01
		sb_i=0
		until listening "$sb_port"; do
			sb_i=$((sb_i + 1))
			if [ "$sb_i" -gt 100 ] || ! kill -0 "$g_pid_server" 2>/dev/null; then
				guest_wait server
				serve_why=${g_why:-"the server's QEMU does not listen on 127.0.0.1:$sb_port"} serve_failed=server
				return 0
			fi
			nap 0.1
		done
		guest_start client "-netdev socket,id=n0,connect=127.0.0.1:$sb_port" 52:54:00:49:42:02
	else
		echo "" | guest_setup guest 10.9.0.1 ""
		guest_start guest "-netdev user,id=n0,restrict=on" 52:54:00:49:42:01
	fi
	for n in $names; do
		eval "sb_pid=\$g_pid_$n"
		while [ ! -e "$slot/$n/serving" ]; do
			if ! kill -0 "$sb_pid" 2>/dev/null; then
				guest_wait "$n"
				serve_why=$g_why serve_failed=$n
				guests_stop
				return 0
			fi
			nap 0.1
		done
	done
}

serve_accel_failed() {
	[ -n "$serve_failed" ] && accel_failed "$serve_failed"
}

# serve_dead WHY: the slot serves no more
serve_dead() {
	echo "$1" >"$slot/dead.tmp" && mv "$slot/dead.tmp" "$slot/dead"
	rm -f "$slot/ready"
}

serve_signal() {
	trap '' HUP INT TERM
	nap_end
	guests_stop
	serve_dead "the pool was stopped"
	exit 0
}

# ---- a run as a pool's job -------------------------------------------------------
# pool_claim PAIR: a slot of this run's kind, claimed (slot); booted first
# when none is free and fewer than the pool's max exist. Fails with pc_why.
pool_claim() {
	pool=$IBVCT_VM_POOL
	pc_key=$({ printf '%s\n' "$guest_opts" "pair=$1"; pool_env; } | cksum | cut -d' ' -f1)
	pc_kind=$pool/k-$pc_key
	mkdir -p "$pc_kind" || { pc_why="cannot write $pc_kind"; return 1; }
	pc_max=$(cat "$pool/max" 2>/dev/null || echo 2)
	pc_start=$(date +%s)
	# the wait for a free guest, and its boot, have the boot's allowance
	run_mult
	pc_limit=$(((${boot:-120} + tmo) * mult))
	while :; do
		for s in "$pc_kind"/s*; do
			[ -d "$s" ] || continue
			if [ -e "$s/dead" ]; then
				mv "$s" "$pc_kind/dead-${s##*/}-$$" 2>/dev/null
				continue
			fi
			if [ -e "$s/ready" ] && mkdir "$s/claim" 2>/dev/null; then
				echo "$$" >"$s/claim/pid"
				slot=$s
				return 0
			fi
			pool_stale "$s"
		done
		pc_n=1
		while [ "$pc_n" -le "$pc_max" ]; do
			s=$pc_kind/s$pc_n
			if mkdir "$s" 2>/dev/null; then
				mkdir "$s/claim" && echo "$$" >"$s/claim/pid"
				pc_slot=$s
				if ! pool_boot "$s" "$1"; then
					rm -rf "$s/claim"
					return 1
				fi
				slot=$s
				return 0
			fi
			pc_n=$((pc_n + 1))
		done
		if [ $(($(date +%s) - pc_start)) -gt "$pc_limit" ]; then
			pc_why="no guest of the pool was free in ${pc_limit} s"
			return 1
		fi
		nap 0.2
	done
}

# pool_boot SLOT PAIR: asks the manager for the slot's serve; waits until it
# serves or is dead
pool_boot() {
	pb_req=$pool/spawn/$$-$(date +%s%N)
	{
		pool_env | sed 's/^/export /'
		printf 'exec sh %s serve --slot %s' "$(q "$self")" "$(q "$1")"
		[ "$2" = 1 ] && printf ' --pair'
		printf ' %s\n' "$guest_opts"
	} >"$pb_req.tmp" && mv "$pb_req.tmp" "$pb_req.req" ||
		{ pc_why="cannot write $pb_req.req"; return 1; }
	say "booting a pool guest (${1#"$pool"/})"
	while [ ! -e "$1/ready" ]; do
		if [ -e "$1/dead" ]; then
			pc_why="the pool's guest did not come up: $(cat "$1/dead")"
			return 1
		fi
		if ! pool_active; then
			pc_why="the pool was stopped"
			return 1
		fi
		if [ $(($(date +%s) - pc_start)) -gt "$pc_limit" ]; then
			pc_why="the pool's guest did not come up in ${pc_limit} s (it goes on booting for the next run)"
			return 1
		fi
		nap 0.2
	done
}

# pool_stale SLOT: a claim whose run is gone is taken back (its job ended)
pool_stale() {
	[ -d "$1/claim" ] || return 0
	ps_pid=$(cat "$1/claim/pid" 2>/dev/null) || return 0
	[ -n "$ps_pid" ] || return 0
	kill -0 "$ps_pid" 2>/dev/null && return 0
	mv "$1/claim" "$1/claim.stale.$$" 2>/dev/null || return 0
	ps_job=$(cat "$1/claim.stale.$$/job" 2>/dev/null)
	for ps_j in $ps_job; do
		[ -d "$ps_j" ] || continue
		: >"$ps_j/kill"
		ps_i=0
		while [ ! -e "$ps_j/rc" ] && [ ! -e "$ps_j/fault" ] && [ "$ps_i" -lt 100 ]; do
			ps_i=$((ps_i + 1))
			nap 0.1
		done
	done
	rm -rf "$1/claim.stale.$$"
}

# pool_console: for a run that got no guest, --console gets what the guest
# it waited for wrote so far (or says there was none)
pool_console() {
	[ -n "$console" ] || return 0
	if [ -n "${pc_slot:-}" ] && cat "$pc_slot"/*/console >"$console" 2>/dev/null; then
		return 0
	fi
	echo "ibvct-vm: no guest console: $pc_why" >"$console"
}

# pool_release: the slot is free again (a dead one is left as it is)
pool_release() {
	[ -n "${slot:-}" ] || return 0
	rm -rf "$slot/claim"
	slot=
}

# job_submit WORDS NAME ADDR PEER [READY_PORT [WAIT_GO]]: the run's command
# (WORDS, quoted for sh) as a job of the slot's guest NAME; its dir in jd_NAME
job_submit() {
	js_words=$1
	shift
	js_j=j$$-$(date +%s%N)
	js_d=$slot/$1/jobs/$js_j
	mkdir -p "$js_d" || return 1
	{
		[ -n "$out" ] && echo "OUT=$(q "$out")"
		[ -n "${4:-}" ] && echo "READY_PORT=$4"
		[ -n "${5:-}" ] && echo "WAIT_GO=$5"
		[ -n "$tmp_real" ] && echo "TMPBIND=$(q "$tmp_real")"
	} >"$js_d/conf"
	if [ -n "$out" ]; then
		# the job sees what the out dir holds, and its writes come back
		mkdir -p "$js_d/out" && cp -a "$out/." "$js_d/out/" || return 1
	fi
	printf '%s\n' "$js_words" | cmd_file "$1" "$2" "$3" /run/ibvct-vm "$js_j" >"$js_d/cmd"
	cp "$work/cmd.txt" "$js_d/cmd.txt" 2>/dev/null
	echo "$js_d" >>"$slot/claim/job"
	: >"$js_d/submit"
	eval "jd_$1=\$js_d"
}

# pool_tmp: tmp_real, the host's path of this run's /tmp when a mount
# namespace put another dir there (testkit/sh/test-exec gives each test a /tmp of
# its own), empty when it is the host's: the guest then binds that dir on
# its /tmp for the job, so that the job sees the files of the run. Found by
# the mount that holds /tmp here (its device and the path within it) and
# where the pool's manager, in the host's namespace, has that device.
pool_tmp() {
	tmp_real=$(awk -v here=/proc/self/mountinfo '
		FILENAME == here && ($5 == "/tmp" || ($5 == "/" && dev == "")) { dev = $3; root = $4; mp = $5 }
		FILENAME != here && $3 == dev && index(root "/", ($4 == "/" ? "" : $4) "/") == 1 &&
			length($4) >= best { best = length($4); real = $5 ($4 == "/" ? root : substr(root, length($4) + 1)) }
		END {
			if (mp == "/") real = real (real ~ /\/$/ ? "" : "/") "tmp"
			sub(/\/\/+/, "/", real)
			if (real != "" && real != "/tmp") print real
		}' /proc/self/mountinfo "/proc/$(cat "$pool/manager.pid")/mountinfo" 2>/dev/null)
}

# job_finish DIR: its out dir copied over; g_rc (the status) or g_why
job_finish() {
	g_rc= g_why=
	if [ -n "$out" ] && [ -d "$1/out" ]; then
		cp -a "$1/out/." "$out/" 2>/dev/null
	fi
	if [ -s "$1/rc" ]; then
		g_rc=$(cat "$1/rc")
	elif [ -s "$1/fault" ]; then
		g_why="the guest failed: $(head -n 1 "$1/fault")"
	fi
}

# pool_info: the slot's guest's facts, as a run that booted it has them
pool_info() {
	accel=$(sed -n 's/^accel=//p' "$slot/info")
	accel_why=$(sed -n 's/^accel_why=//p' "$slot/info")
	accel_fell=$(sed -n 's/^accel_fell=//p' "$slot/info")
	guest_mult=$(sed -n 's/^guest_mult=//p' "$slot/info")
	kdir=$(sed -n 's/^kdir=//p' "$slot/info")
	rel_info=$(sed -n 's/^rel_info=//p' "$slot/info")
	relroot=$(sed -n 's/^relroot=//p' "$slot/info")
	# a job's limit: its own time, not the guest's
	limit=$((tmo * mult))
}

# job_timer: the job's time limit on the stretched clock; timer_pid ends
# (status 124) when it has run out
job_timer() {
	reap=${IBVCT_BUILD:-$here/../../build}/bin/ibvct-reap
	if [ -x "$reap" ]; then
		"$reap" -t "$((tmo * mult))" -g 0 -n guest-job -- sleep 2147483647 2>/dev/null &
	else
		timeout "$((tmo * mult))" sleep 2147483647 &
	fi
	timer_pid=$!
}

timer_stop() {
	kill -TERM "$timer_pid" 2>/dev/null
	wait "$timer_pid" 2>/dev/null
}

# pool_job_wait NAME...: until each job of these guests has its status, or
# the time limit, or the guest's end; a single guest's job has its stderr
# forwarded as it comes (a pair's come at the end, each line named).
# Sets pj_why (empty: each ended) for all.
pool_job_wait() {
	pj_why=
	while :; do
		pj_done=1
		for n in "$@"; do
			eval "pj_d=\$jd_$n"
			[ "$n" = guest ] && fwd "$pj_d/stderr" fwd_guest
			[ -e "$pj_d/rc" ] || [ -e "$pj_d/fault" ] || pj_done=0
		done
		[ "$pj_done" = 1 ] && break
		if [ -e "$slot/dead" ]; then
			pj_why="the pool's guest ended: $(cat "$slot/dead")"
			break
		fi
		if [ ! -d "$slot" ]; then
			pj_why="the pool was stopped"
			break
		fi
		if ! kill -0 "$timer_pid" 2>/dev/null; then
			pj_why="the command was ended at its time limit (${tmo} s$( [ "$mult" = 1 ] || echo " times $mult"))"
			break
		fi
		pair_go
		nap 0.2
	done
	[ -n "$pj_why" ] || return 0
	# the guest ends what is left of the jobs
	for n in "$@"; do
		eval "pj_d=\$jd_$n"
		[ -e "$pj_d/rc" ] || : >"$pj_d/kill"
	done
	pj_i=0
	while [ "$pj_i" -lt 100 ] && [ ! -e "$slot/dead" ]; do
		pj_left=0
		for n in "$@"; do
			eval "pj_d=\$jd_$n"
			[ -e "$pj_d/rc" ] || [ -e "$pj_d/fault" ] || pj_left=1
		done
		[ "$pj_left" = 1 ] || break
		pj_i=$((pj_i + 1))
		nap 0.1
	done
}

pair_go() { :; }

# fwd FILE VAR: what FILE got since VAR's offset, to stderr (live)
fwd() {
	eval "fw_off=\${$2:-0}"
	fw_size=$(stat -c %s "$1" 2>/dev/null) || return 0
	[ "$fw_size" -gt "$fw_off" ] || return 0
	tail -c +"$((fw_off + 1))" "$1" | head -c "$((fw_size - fw_off))" >&2
	eval "$2=\$fw_size"
}

# pool_signal: an interrupted run ends its jobs and frees its guest
pool_signal() {
	trap '' HUP INT TERM
	nap_end
	for n in guest server client; do
		eval "ps_d=\${jd_$n:-}"
		[ -n "$ps_d" ] && [ ! -e "$ps_d/rc" ] && : >"$ps_d/kill"
	done
	[ -n "${timer_pid:-}" ] && timer_stop
	pool_release
	[ -n "${work:-}" ] && rm -rf "$work"
	exit $((128 + $1))
}

# pool_run ARGS-QUOTED TEXT: cmd_run's command as a job of a pool guest
pool_run() {
	run_mult
	run_env
	work=$(mktemp -d "${TMPDIR:-/tmp}/ibvct-vm.XXXXXX") || fail "cannot make a scratch dir"
	echo "$2" >"$work/cmd.txt"
	trap 'pool_signal 1' HUP
	trap 'pool_signal 2' INT
	trap 'pool_signal 15' TERM
	fail_rc=$NORESULT
	if ! pool_claim 0; then
		noresult=1
		warn "no result: $pc_why"
		accel=unknown accel_why= kdir= limit=${pc_limit:-0}
		pool_console
		write_result result=no-result "reason=$pc_why" "seconds=0"
		finish
		exit $NORESULT
	fi
	pool_info
	pool_tmp
	pr_start=$(date +%s)
	job_submit "$1" guest 10.9.0.1 "" || fail "cannot submit a job to $slot"
	job_timer
	fwd_guest=0
	pool_job_wait guest
	timer_stop
	job_finish "$jd_guest"
	fwd "$jd_guest/stderr" fwd_guest
	g_secs=$(($(date +%s) - pr_start))
	[ -n "$pj_why" ] && g_rc= g_why=$pj_why
	[ -n "$console" ] && cp "$slot/guest/console" "$console"
	[ -s "$jd_guest/stdout" ] && cat "$jd_guest/stdout"
	pr_guest="pool ${slot#"$pool"/}"
	pr_slot=$slot
	pool_release
	if [ -z "$g_rc" ]; then
		noresult=1
		warn "no result: $g_why"
		# the guest's console, which goes with the pool, for a look: beside
		# the result file when no --console asked for it
		if [ -z "$console" ] && [ -n "$result" ] &&
			{ cat "$pr_slot/guest/console" && echo "---- QEMU's log" && cat "$pr_slot/guest/qemu.log"; } >"$result.console" 2>/dev/null; then
			console=$result.console
		fi
		write_result result=no-result "reason=$g_why" "guest=$pr_guest" "seconds=$g_secs" "console=$console"
		finish
		exit $NORESULT
	fi
	say "exit $g_rc after $g_secs s ($accel, $pr_guest)"
	write_result result=ok "status=$g_rc" "guest=$pr_guest" "seconds=$g_secs" "console=${console:-}"
	finish
	exit "$g_rc"
}

# pool_pair: cmd_pair's two commands as jobs of a pool's pair of guests
pool_pair() {
	run_mult
	run_env
	work=$(mktemp -d "${TMPDIR:-/tmp}/ibvct-vm.XXXXXX") || fail "cannot make a scratch dir"
	trap 'pool_signal 1' HUP
	trap 'pool_signal 2' INT
	trap 'pool_signal 15' TERM
	fail_rc=$NORESULT
	if ! pool_claim 1; then
		noresult=1
		warn "no result: $pc_why"
		accel=unknown accel_why= kdir= limit=${pc_limit:-0}
		pool_console
		write_result result=no-result "reason=$pc_why" "seconds=0"
		finish
		exit $NORESULT
	fi
	pool_info
	pool_tmp
	pr_start=$(date +%s)
	echo "$server" >"$work/cmd.txt"
	job_submit " 'sh' '-c' $(q "$server")" server 10.9.0.1 10.9.0.2 "$ready_port" ||
		fail "cannot submit a job to $slot"
	echo "$client" >"$work/cmd.txt"
	job_submit " 'sh' '-c' $(q "$client")" client 10.9.0.2 10.9.0.1 "" "$((tmo * mult))" ||
		fail "cannot submit a job to $slot"
	# the client's command starts when the server's listens, or has ended
	pair_go() {
		[ -e "$jd_client/go" ] && return 0
		{ [ -e "$jd_server/ready" ] || [ -e "$jd_server/rc" ] || [ -e "$jd_server/fault" ]; } &&
			: >"$jd_client/go"
	}
	job_timer
	fwd_server=0 fwd_client=0
	pool_job_wait server client
	timer_stop
	g_secs=$(($(date +%s) - pr_start))
	job_finish "$jd_server"
	s_rc=$g_rc s_why=$g_why
	job_finish "$jd_client"
	c_rc=$g_rc c_why=$g_why
	if [ -n "$pj_why" ]; then
		[ -n "$s_rc" ] || s_why=$pj_why
		[ -n "$c_rc" ] || c_why=$pj_why
	fi
	for n in server client; do
		eval "pp_d=\$jd_$n"
		[ -s "$pp_d/stdout" ] && sed "s/^/$n: /" "$pp_d/stdout"
		[ -s "$pp_d/stderr" ] && sed "s/^/$n: /" "$pp_d/stderr" >&2
	done
	pr_guest="pool ${slot#"$pool"/}"
	pool_release
	if [ -z "$s_rc" ] || [ -z "$c_rc" ]; then
		noresult=1
		[ -n "$s_rc" ] || warn "no result: server: $s_why"
		[ -n "$c_rc" ] || warn "no result: client: $c_why"
		write_result result=no-result "server.status=$s_rc" "client.status=$c_rc" \
			"reason=${s_why:+server: $s_why}${s_why:+${c_why:+; }}${c_why:+client: $c_why}" \
			"guest=$pr_guest" "seconds=$g_secs"
		finish
		exit $NORESULT
	fi
	say "pair: server exit $s_rc, client exit $c_rc after $g_secs s ($accel, $pr_guest)"
	write_result result=ok "server.status=$s_rc" "client.status=$c_rc" "guest=$pr_guest" "seconds=$g_secs"
	finish
	[ "$s_rc" = 0 ] && [ "$c_rc" = 0 ]
	exit $?
}
