/* SPDX-License-Identifier: MIT */
/*
 * Symbols that exist for the ABI only (the IBVERBS_1.0 variants of the
 * dual 1.0/1.1 verbs are the 1.0 layer's, in compat10.c).
 *
 * IBVERBS_PRIVATE_34: rdma-core's provider interface. ibvct loads only its
 * own providers (driver.h), so these answer EOPNOTSUPP and
 * verbs_register_driver_34 says once why the registration is ignored.
 * rdma-core's verbs_set_ops@IBVERBS_PRIVATE_34 is a no-op here; the
 * default verbs_set_ops (IBVCT_PRIVATE_1) is ibvct's, in context.c.
 */
#include <stdio.h>

#include "ri.h"

/* ------------------------------------------------------------------ */
/* IBVERBS_PRIVATE_34                                                   */

#define RI_P34_INT(name)						\
	RI_EXPORT int name(void);					\
	RI_EXPORT int name(void)					\
	{								\
		return EOPNOTSUPP;					\
	}

RI_P34_INT(ibv_cmd_advise_mr)
RI_P34_INT(ibv_cmd_alloc_dm)
RI_P34_INT(ibv_cmd_alloc_mw)
RI_P34_INT(ibv_cmd_alloc_pd)
RI_P34_INT(ibv_cmd_attach_mcast)
RI_P34_INT(ibv_cmd_close_xrcd)
RI_P34_INT(ibv_cmd_create_ah)
RI_P34_INT(ibv_cmd_create_counters)
RI_P34_INT(ibv_cmd_create_cq)
RI_P34_INT(ibv_cmd_create_cq_ex)
RI_P34_INT(ibv_cmd_create_cq_ex2)
RI_P34_INT(ibv_cmd_create_flow)
RI_P34_INT(ibv_cmd_create_flow_action_esp)
RI_P34_INT(ibv_cmd_create_qp)
RI_P34_INT(ibv_cmd_create_qp_ex)
RI_P34_INT(ibv_cmd_create_qp_ex2)
RI_P34_INT(ibv_cmd_create_rwq_ind_table)
RI_P34_INT(ibv_cmd_create_srq)
RI_P34_INT(ibv_cmd_create_srq_ex)
RI_P34_INT(ibv_cmd_create_wq)
RI_P34_INT(ibv_cmd_dealloc_mw)
RI_P34_INT(ibv_cmd_dealloc_pd)
RI_P34_INT(ibv_cmd_dereg_mr)
RI_P34_INT(ibv_cmd_destroy_ah)
RI_P34_INT(ibv_cmd_destroy_counters)
RI_P34_INT(ibv_cmd_destroy_cq)
RI_P34_INT(ibv_cmd_destroy_flow)
RI_P34_INT(ibv_cmd_destroy_flow_action)
RI_P34_INT(ibv_cmd_destroy_qp)
RI_P34_INT(ibv_cmd_destroy_rwq_ind_table)
RI_P34_INT(ibv_cmd_destroy_srq)
RI_P34_INT(ibv_cmd_destroy_wq)
RI_P34_INT(ibv_cmd_detach_mcast)
RI_P34_INT(ibv_cmd_free_dm)
RI_P34_INT(ibv_cmd_get_context)
RI_P34_INT(ibv_cmd_modify_cq)
RI_P34_INT(ibv_cmd_modify_flow_action_esp)
RI_P34_INT(ibv_cmd_modify_qp)
RI_P34_INT(ibv_cmd_modify_qp_ex)
RI_P34_INT(ibv_cmd_modify_srq)
RI_P34_INT(ibv_cmd_modify_wq)
RI_P34_INT(ibv_cmd_open_qp)
RI_P34_INT(ibv_cmd_open_xrcd)
RI_P34_INT(ibv_cmd_post_recv)
RI_P34_INT(ibv_cmd_post_send)
RI_P34_INT(ibv_cmd_post_srq_recv)
RI_P34_INT(ibv_cmd_query_context)
RI_P34_INT(ibv_cmd_query_device_any)
RI_P34_INT(ibv_cmd_query_mr)
RI_P34_INT(ibv_cmd_query_port)
RI_P34_INT(ibv_cmd_query_qp)
RI_P34_INT(ibv_cmd_query_srq)
RI_P34_INT(ibv_cmd_read_counters)
RI_P34_INT(ibv_cmd_reg_dm_mr)
RI_P34_INT(ibv_cmd_reg_dmabuf_mr)
RI_P34_INT(ibv_cmd_reg_mr)
RI_P34_INT(ibv_cmd_req_notify_cq)
RI_P34_INT(ibv_cmd_rereg_mr)
RI_P34_INT(ibv_cmd_resize_cq)
RI_P34_INT(execute_ioctl)
RI_P34_INT(verbs_init_cq)

/* poll_cq counts completions: failure is negative */
RI_EXPORT int ibv_cmd_poll_cq(void);
RI_EXPORT int ibv_cmd_poll_cq(void)
{
	errno = EOPNOTSUPP;
	return -1;
}

RI_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
					       void *link);
RI_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
					       void *link)
{
	return num_attrs;
}

RI_EXPORT void __verbs_log(void *ctx, uint32_t level, const char *fmt, ...);
RI_EXPORT void __verbs_log(void *ctx, uint32_t level, const char *fmt, ...)
{
}

RI_EXPORT void *_verbs_init_and_alloc_context(void);
RI_EXPORT void *_verbs_init_and_alloc_context(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

RI_EXPORT void *verbs_open_device(void *device, void *private_data);
RI_EXPORT void *verbs_open_device(void *device, void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

RI_EXPORT void verbs_uninit_context(void *vctx);
RI_EXPORT void verbs_uninit_context(void *vctx)
{
}

RI_EXPORT bool verbs_allow_disassociate_destroy;

RI_EXPORT void verbs_register_driver_34(const void *ops);
RI_EXPORT void verbs_register_driver_34(const void *ops)
{
	static bool said;

	if (__atomic_exchange_n(&said, true, __ATOMIC_SEQ_CST))
		return;
	fputs("libibverbs (ibvct): rdma-core providers cannot be loaded by "
	      "ibvct; registration ignored\n", stderr);
}

RI_EXPORT void ri_p34_verbs_set_ops(void *vctx, const void *ops);
RI_EXPORT void ri_p34_verbs_set_ops(void *vctx, const void *ops)
{
}
RI_SYMVER(ri_p34_verbs_set_ops, verbs_set_ops@IBVERBS_PRIVATE_34);
