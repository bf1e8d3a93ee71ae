/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the module and its rdma-core provider agree on, included by both:
 * the device name, the uverbs ABI version, and how a WR carries
 * remote_srqn through the generic post_send command (ixrc.h says why).
 */
#ifndef IBVCT_IXRC_ABI_H
#define IBVCT_IXRC_ABI_H

#define IXRC_NAME_PREFIX	"ixrc"
#define IXRC_UVERBS_ABI		1

#define IXRC_SEND_XRC		(1u << 5)
#define IXRC_SEND_SRQN_SHIFT	6
#define IXRC_SEND_SRQN_MAX	((1u << 20) - 1)	/* bits 6..25 */

#endif
