#!/bin/sh
# SPDX-License-Identifier: MIT
# t0023: the release row PRIVATE_ABI_34 (ref-impl/include/infiniband/
# ibvct-release.def) at the provider loader. rdma-core 56 added
# ibv_cmd_create_cq_ex2 and ibv_wr_opcode_str to the node
# IBVERBS_PRIVATE_34 without a new node name, so a provider built against
# 56 (Debian 13's libmlx5.so.1 imports ibv_cmd_create_cq_ex2) names a node
# rdma-core 44's libibverbs has and fails to load there at once. The
# reference (56's node) loads such a provider when it plays 56 and refuses
# it with the loader's words when it plays 44; a provider that needs only
# what 44's node has loads under either. On a host whose installed mlx5
# provider imports the new symbol (Debian 13), that file itself loads on
# the reference playing 56.
# shellcheck disable=SC2016 # the check bodies are single-quoted on purpose
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
LIBDIR=${IBVCT_LIBDIR:-${IBVCT_BUILD:-build}/lib}
CC=${CC:-cc}
tmp=$tl_tmp

[ -r "$LIBDIR/libibverbs.so.1" ] || skip_all "no built libibverbs.so.1 in $LIBDIR"
command -v "$CC" >/dev/null 2>&1 || skip_all "no C compiler ($CC)"
mkdir -p "$tmp/empty"

# provider NAME SYMBOL: a provider that takes SYMBOL's address (so needs it
# at load) and, when loaded, writes "loaded" to $T0023_MARK.
provider() {
	cat >"$tmp/$1.c" <<EOF
#include <stdio.h>
#include <stdlib.h>
extern char $2[];
void *t0023_keep = $2;
__attribute__((constructor)) static void t0023_mark(void)
{
	const char *m = getenv("T0023_MARK");
	FILE *f = m ? fopen(m, "w") : NULL;

	if (f) {
		fputs("loaded\n", f);
		fclose(f);
	}
}
EOF
	$CC -shared -fPIC -o "$tmp/lib$1.so" "$tmp/$1.c" -L"$LIBDIR" -libverbs 2>"$tmp/$1.cc.err"
}

cat >"$tmp/list.c" <<'EOF'
#include <stdio.h>
#include <infiniband/verbs.h>
int main(void)
{
	int n = -1;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	printf("devices %d\n", n);
	return 0;
}
EOF
if ! $CC -o "$tmp/list" "$tmp/list.c" -I"$src/ref-impl/include" -L"$LIBDIR" -libverbs \
	2>"$tmp/list.cc.err"; then
	test_expect_success "a program listing devices builds" 'cat "$tmp/list.cc.err" | diag; false'
	test_done
fi

# load REL PROVIDER: the listing program on the reference playing REL with
# only PROVIDER to load; "loaded" in $tmp/mark when its constructor ran.
load() {
	rm -f "$tmp/mark"
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} LD_LIBRARY_PATH="$LIBDIR" \
		IBVCT_RDMA_CORE="$1" IBVCT_DRIVER_DIR="$tmp/empty" RDMAV_DRIVERS="$2" \
		T0023_MARK="$tmp/mark" "$tmp/list" >"$tmp/out" 2>"$tmp/err"
}
loaded() { [ -s "$tmp/mark" ]; }
warned() { grep -q "couldn.t load driver" "$tmp/err"; }
refused() { ! loaded && grep -q "couldn't load driver.*$1.*IBVERBS_PRIVATE_34" "$tmp/err"; }
show() { { echo "stdout:"; cat "$tmp/out"; echo "stderr:"; cat "$tmp/err"; } | diag; }

# Which node each symbol carries in our library (the premise).
if ! provider p56 ibv_cmd_create_cq_ex2 || ! provider p44 ibv_cmd_create_cq_ex ||
   ! provider p56b ibv_wr_opcode_str; then
	test_expect_success "the test providers build" 'cat "$tmp"/*.cc.err | diag; false'
	test_done
fi
test_expect_success "the providers need IBVERBS_PRIVATE_34 (readelf -V)" '
	for p in p56 p44 p56b; do
		readelf -V "$tmp/lib$p.so" | grep -q "Name: IBVERBS_PRIVATE_34" || { readelf -V "$tmp/lib$p.so" | diag; exit 1; }
	done'

test_expect_success "playing 56: a provider needing ibv_cmd_create_cq_ex2@IBVERBS_PRIVATE_34 loads" '
	load 56 "$tmp/libp56.so"; loaded || { show; false; }'
test_expect_success "playing 56: one needing ibv_wr_opcode_str@IBVERBS_PRIVATE_34 loads" '
	load 56 "$tmp/libp56b.so"; loaded || { show; false; }'
test_expect_success "playing 44: the first is refused, by the missing symbol and its node" '
	load 44 "$tmp/libp56.so"; refused ibv_cmd_create_cq_ex2 || { show; false; }'
test_expect_success "playing 44: the second is refused too" '
	load 44 "$tmp/libp56b.so"; refused ibv_wr_opcode_str || { show; false; }'
test_expect_success "playing 44: a provider needing only what 44 has there (ibv_cmd_create_cq_ex) loads" '
	load 44 "$tmp/libp44.so"; loaded && ! warned || { show; false; }'
test_expect_success "playing 56: so does it" '
	load 56 "$tmp/libp44.so"; loaded || { show; false; }'

# The installed mlx5 provider, when it is one built against 56.
mlx5=
for f in /usr/lib/*/libibverbs/libmlx5-rdmav*.so; do
	[ -r "$f" ] && mlx5=$f && break
done
if [ -n "$mlx5" ] && readelf --dyn-syms -W "$mlx5" 2>/dev/null |
	grep -q 'ibv_cmd_create_cq_ex2@IBVERBS_PRIVATE_34'; then
	test_expect_success "the installed $mlx5 (rdma-core >= 56) loads on the reference playing 56" '
		load 56 "$mlx5"; ! warned || { show; false; }'
	test_expect_success "and is refused playing 44, as rdma-core 44 refuses it" '
		load 44 "$mlx5"; refused ibv_cmd_create_cq_ex2 || { show; false; }'
else
	test_skip "the installed mlx5 provider loads on the reference playing 56" \
		"no installed libmlx5 importing ibv_cmd_create_cq_ex2@IBVERBS_PRIVATE_34 (rdma-core < 56)"
fi
test_done
