/* SPDX-License-Identifier: MIT */
/*
 * One layout table (th_layout.def) as seen by the header this object is
 * compiled against. Built twice into each suite binary: TH_LAYOUT_NAME =
 * th_layout_app (the header the suites use) and th_layout_sys (always the
 * installed rdma-core header), so a test can compare them entry by entry.
 */
#include <stddef.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>	/* Linux uapi (linux-libc-dev), the same for both tables */

#include "th_layout.h"

#define TH_CAT2(a, b) a##b
#define TH_CAT(a, b) TH_CAT2(a, b)

const struct th_layout TH_LAYOUT_NAME[] = {
#define TH_SIZE(s) { "sizeof(struct " #s ")", (long)sizeof(struct s) },
#define TH_OFF(s, m) { "offsetof(struct " #s ", " #m ")", (long)offsetof(struct s, m) },
#define TH_VAL(v) { #v, (long)(v) },
#include "th_layout.def"
#undef TH_SIZE
#undef TH_OFF
#undef TH_VAL
};
const size_t TH_CAT(TH_LAYOUT_NAME, _n) = sizeof(TH_LAYOUT_NAME) / sizeof(TH_LAYOUT_NAME[0]);
