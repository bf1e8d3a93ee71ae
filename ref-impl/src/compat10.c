/* SPDX-License-Identifier: MIT */
/*
 * The IBVERBS_1.0 ABI: the @IBVERBS_1.0 variants of the dual 1.0/1.1
 * verbs, for binaries linked against libibverbs 1.0. As in rdma-core
 * (compat-1_0.c), every 1.0 object is a wrapper of its own with the 1.0
 * layout and a real_* pointer to the 1.1 object it stands for (COMPAT-12);
 * each 1.0 verb unwraps, calls the 1.1 verb and wraps what comes back, and
 * frees a wrapper only once the 1.1 destroy succeeded. The 1.1 CQ, QP and
 * SRQ get their *_context pointing at the wrapper, so that events can be
 * handed to the 1.0 caller naming its own objects (COMPAT-13). Only the
 * data-path slots of the 1.0 context's ops are filled, as 1.0 headers
 * inline only those (COMPAT-14); the 1.0 ABI has no XRC (COMPAT-15).
 *
 * Where rdma-core leaves a wrapper field uninitialised (handles, the QP
 * state, the context's fds) it is filled here from the 1.1 object; a 1.0
 * QP without an SRQ queries as srq NULL (rdma-core dereferences it).
 */
#include <alloca.h>
#include <stdlib.h>
#include <string.h>

#include "ri.h"

/* ------------------------------------------------------------------ */
/* The 1.0 layouts (ABI: a 1.0 binary compiled them in).               */

struct ibv_context_1_0;

struct ibv_device_1_0 {
	void *obsolete_sysfs_dev;
	void *obsolete_sysfs_ibdev;
	struct ibv_device *real_device;		/* was the driver pointer */
	struct _ibv_device_ops _ops;
};

struct ibv_pd_1_0 {
	struct ibv_context_1_0 *context;
	uint32_t handle;
	struct ibv_pd *real_pd;
};

struct ibv_mr_1_0 {
	struct ibv_context_1_0 *context;
	struct ibv_pd_1_0 *pd;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	struct ibv_mr *real_mr;
};

struct ibv_srq_1_0 {
	struct ibv_context_1_0 *context;
	void *srq_context;
	struct ibv_pd_1_0 *pd;
	uint32_t handle;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_srq *real_srq;
};

struct ibv_cq_1_0 {
	struct ibv_context_1_0 *context;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed;
	uint32_t async_events_completed;
	struct ibv_cq *real_cq;
};

struct ibv_qp_1_0 {
	struct ibv_context_1_0 *context;
	void *qp_context;
	struct ibv_pd_1_0 *pd;
	struct ibv_cq_1_0 *send_cq;
	struct ibv_cq_1_0 *recv_cq;
	struct ibv_srq_1_0 *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_qp *real_qp;
};

struct ibv_ah_1_0 {
	struct ibv_context_1_0 *context;
	struct ibv_pd_1_0 *pd;
	uint32_t handle;
	struct ibv_ah *real_ah;
};

struct ibv_qp_init_attr_1_0 {
	void *qp_context;
	struct ibv_cq_1_0 *send_cq;
	struct ibv_cq_1_0 *recv_cq;
	struct ibv_srq_1_0 *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};

/* 1.0 work requests: the chain pointer comes first. */
struct ibv_send_wr_1_0 {
	struct ibv_send_wr_1_0 *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	int send_flags;
	__be32 imm_data;
	/* the 1.1 union, the same layout; ud.ah holds a struct ibv_ah_1_0 * */
	__typeof__(((struct ibv_send_wr *)0)->wr) wr;
};

struct ibv_recv_wr_1_0 {
	struct ibv_recv_wr_1_0 *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
};

/* Every slot a 1.0 header had; only the data path is ever filled. */
struct ibv_context_ops_1_0 {
	void *query_device, *query_port, *alloc_pd, *dealloc_pd, *reg_mr,
	     *dereg_mr, *create_cq;
	int (*poll_cq)(struct ibv_cq_1_0 *cq, int n, struct ibv_wc *wc);
	int (*req_notify_cq)(struct ibv_cq_1_0 *cq, int solicited_only);
	void *cq_event, *resize_cq, *destroy_cq, *create_srq, *modify_srq,
	     *query_srq, *destroy_srq;
	int (*post_srq_recv)(struct ibv_srq_1_0 *srq, struct ibv_recv_wr_1_0 *wr,
			     struct ibv_recv_wr_1_0 **bad);
	void *create_qp, *query_qp, *modify_qp, *destroy_qp;
	int (*post_send)(struct ibv_qp_1_0 *qp, struct ibv_send_wr_1_0 *wr,
			 struct ibv_send_wr_1_0 **bad);
	int (*post_recv)(struct ibv_qp_1_0 *qp, struct ibv_recv_wr_1_0 *wr,
			 struct ibv_recv_wr_1_0 **bad);
	void *create_ah, *destroy_ah, *attach_mcast, *detach_mcast;
};

struct ibv_context_1_0 {
	struct ibv_device_1_0 *device;
	struct ibv_context_ops_1_0 ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	struct ibv_context *real_context;	/* was abi_compat */
};

/* Layout facts of the 1.0 ABI (rdma-core v44.0 compat-1_0.c:44-226). */
_Static_assert(sizeof(struct ibv_context_ops_1_0) == 27 * sizeof(void *),
	       "1.0 context ops: 27 slots");

/* ------------------------------------------------------------------ */
/* The 1.0 entry points: reached only as name@IBVERBS_1.0 (RI_SYMVER),  */
/* so no header declares them.                                          */

struct ibv_device_1_0 **ri_v10_get_device_list(int *num);
void ri_v10_free_device_list(struct ibv_device_1_0 **list);
const char *ri_v10_get_device_name(struct ibv_device_1_0 *device);
__be64 ri_v10_get_device_guid(struct ibv_device_1_0 *device);
struct ibv_context_1_0 *ri_v10_open_device(struct ibv_device_1_0 *device);
int ri_v10_close_device(struct ibv_context_1_0 *context);
int ri_v10_get_async_event(struct ibv_context_1_0 *context,
			   struct ibv_async_event *event);
void ri_v10_ack_async_event(struct ibv_async_event *event);
int ri_v10_query_device(struct ibv_context_1_0 *context,
			struct ibv_device_attr *attr);
int ri_v10_query_port(struct ibv_context_1_0 *context, uint8_t port_num,
		      struct ibv_port_attr *attr);
int ri_v10_query_gid(struct ibv_context_1_0 *context, uint8_t port_num,
		     int index, union ibv_gid *gid);
int ri_v10_query_pkey(struct ibv_context_1_0 *context, uint8_t port_num,
		      int index, __be16 *pkey);
struct ibv_pd_1_0 *ri_v10_alloc_pd(struct ibv_context_1_0 *context);
int ri_v10_dealloc_pd(struct ibv_pd_1_0 *pd);
struct ibv_mr_1_0 *ri_v10_reg_mr(struct ibv_pd_1_0 *pd, void *addr,
				 size_t length, int access);
int ri_v10_dereg_mr(struct ibv_mr_1_0 *mr);
struct ibv_ah_1_0 *ri_v10_create_ah(struct ibv_pd_1_0 *pd,
				    struct ibv_ah_attr *attr);
int ri_v10_destroy_ah(struct ibv_ah_1_0 *ah);
struct ibv_cq_1_0 *ri_v10_create_cq(struct ibv_context_1_0 *context, int cqe,
				    void *cq_context,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
int ri_v10_resize_cq(struct ibv_cq_1_0 *cq, int cqe);
int ri_v10_destroy_cq(struct ibv_cq_1_0 *cq);
int ri_v10_get_cq_event(struct ibv_comp_channel *channel,
			struct ibv_cq_1_0 **cq, void **cq_context);
void ri_v10_ack_cq_events(struct ibv_cq_1_0 *cq, unsigned int nevents);
struct ibv_srq_1_0 *ri_v10_create_srq(struct ibv_pd_1_0 *pd,
				      struct ibv_srq_init_attr *attr);
int ri_v10_modify_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr,
		      int mask);
int ri_v10_query_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr);
int ri_v10_destroy_srq(struct ibv_srq_1_0 *srq);
struct ibv_qp_1_0 *ri_v10_create_qp(struct ibv_pd_1_0 *pd,
				    struct ibv_qp_init_attr_1_0 *attr);
int ri_v10_query_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask,
		    struct ibv_qp_init_attr_1_0 *init);
int ri_v10_modify_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr,
		     int mask);
int ri_v10_destroy_qp(struct ibv_qp_1_0 *qp);
int ri_v10_attach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid,
			uint16_t lid);
int ri_v10_detach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid,
			uint16_t lid);

/* ------------------------------------------------------------------ */
/* Data path (the only ops a 1.0 context fills).                        */

static int ri_v10_poll_cq(struct ibv_cq_1_0 *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq->real_cq, n, wc);
}

static int ri_v10_req_notify_cq(struct ibv_cq_1_0 *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq->real_cq, solicited_only);
}

/* The 1.1 copy of a 1.0 receive chain. */
static struct ibv_recv_wr *ri_v10_recv_copy(struct ibv_recv_wr *copy,
					    const struct ibv_recv_wr_1_0 *wr)
{
	const struct ibv_recv_wr_1_0 *w;
	size_t i;

	for (w = wr, i = 0; w; w = w->next, i++) {
		copy[i].wr_id = w->wr_id;
		copy[i].sg_list = w->sg_list;
		copy[i].num_sge = w->num_sge;
		copy[i].next = w->next ? &copy[i + 1] : NULL;
	}
	return copy;
}

/* Posts a 1.0 receive chain as its 1.1 copy, maps bad back. */
static int ri_v10_post_recv_chain(void *real_obj, bool srq,
				  struct ibv_recv_wr_1_0 *wr,
				  struct ibv_recv_wr_1_0 **bad)
{
	struct ibv_recv_wr *copy, *rbad = NULL;
	struct ibv_recv_wr_1_0 *w;
	size_t n = 0, pos;
	int ret = ENOMEM;

	for (w = wr; w; w = w->next)
		n++;
	copy = RI_WR_COPY_ALLOC(n, sizeof(*copy));
	if (copy) {
		struct ibv_recv_wr *c = n ? ri_v10_recv_copy(copy, wr) : NULL;

		ret = srq ? ibv_post_srq_recv(real_obj, c, &rbad)
			  : ibv_post_recv(real_obj, c, &rbad);
	}
	pos = ri__wr_copy_end(copy, sizeof(*copy), n, rbad);
	if (ret)
		for (*bad = wr; pos; pos--)
			*bad = (*bad)->next;
	return ret;
}

static int ri_v10_post_recv(struct ibv_qp_1_0 *qp, struct ibv_recv_wr_1_0 *wr,
			    struct ibv_recv_wr_1_0 **bad)
{
	return ri_v10_post_recv_chain(qp->real_qp, false, wr, bad);
}

static int ri_v10_post_srq_recv(struct ibv_srq_1_0 *srq,
				struct ibv_recv_wr_1_0 *wr,
				struct ibv_recv_wr_1_0 **bad)
{
	return ri_v10_post_recv_chain(srq->real_srq, true, wr, bad);
}

/* The 1.1 copy of a 1.0 send chain: only what a 1.0 WR has; the 1.1-only
 * members (qp_type, bind_mw, tso) are zero, where rdma-core leaves them
 * unset (WR-07). A UD WR names the 1.1 AH of its 1.0 one. */
static struct ibv_send_wr *ri_v10_send_copy(struct ibv_send_wr *copy,
					    const struct ibv_send_wr_1_0 *wr,
					    bool ud)
{
	const struct ibv_send_wr_1_0 *w;
	size_t i;

	for (w = wr, i = 0; w; w = w->next, i++) {
		struct ibv_send_wr *c = &copy[i];

		memset(c, 0, sizeof(*c));
		c->wr_id = w->wr_id;
		c->next = w->next ? &copy[i + 1] : NULL;
		c->sg_list = w->sg_list;
		c->num_sge = w->num_sge;
		c->opcode = w->opcode;
		c->send_flags = (unsigned int)w->send_flags;
		c->imm_data = w->imm_data;
		c->wr = w->wr;
		if (ud && w->wr.ud.ah)
			c->wr.ud.ah = ((struct ibv_ah_1_0 *)(void *)w->wr.ud.ah)->real_ah;
	}
	return copy;
}

static int ri_v10_post_send(struct ibv_qp_1_0 *qp, struct ibv_send_wr_1_0 *wr,
			    struct ibv_send_wr_1_0 **bad)
{
	struct ibv_send_wr *copy, *rbad = NULL;
	struct ibv_send_wr_1_0 *w;
	size_t n = 0, pos;
	int ret = ENOMEM;

	for (w = wr; w; w = w->next)
		n++;
	copy = RI_WR_COPY_ALLOC(n, sizeof(*copy));
	if (copy) {
		bool ud = qp->qp_type == IBV_QPT_UD;

		ret = ibv_post_send(qp->real_qp,
				    n ? ri_v10_send_copy(copy, wr, ud) : NULL, &rbad);
	}
	pos = ri__wr_copy_end(copy, sizeof(*copy), n, rbad);
	if (ret)
		for (*bad = wr; pos; pos--)
			*bad = (*bad)->next;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Wrappers: every 1.0 create verb makes one around its 1.1 object, and */
/* every 1.0 destroy verb frees it once that object is gone.            */

/* A zeroed wrapper for a 1.0 object, or NULL with errno: EINVAL when the
 * caller's arguments are unusable, ENOMEM. */
static void *ri_v10_wrap_new(bool invalid, size_t size)
{
	void *w;

	if (invalid) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, size);
	if (!w)
		errno = ENOMEM;
	return w;
}

/*
 * The start of a 1.0 create verb: w becomes a new wrapper whose real
 * member holds the 1.1 object that create returns, or NULL with errno
 * (EINVAL when invalid, ENOMEM, or the 1.1 verb's), leaving nothing
 * allocated. create is evaluated only once the wrapper exists, so it may
 * use the arguments that invalid has vouched for. A macro, so that the
 * assignment to w->real is type-checked for each object.
 */
#define RI_V10_WRAP(w, invalid, real, create)				\
	do {								\
		(w) = ri_v10_wrap_new((invalid), sizeof(*(w)));		\
		if ((w) && !((w)->real = (create))) {			\
			free(w);					\
			(w) = NULL;					\
		}							\
	} while (0)

/* The end of a 1.0 destroy verb, ret what the 1.1 one returned: the
 * wrapper goes only with its 1.1 object; on an error both stay usable. */
static int ri_v10_unwrap(void *w, int ret)
{
	if (!ret)
		free(w);
	return ret;
}

/*
 * The 1.0 destroy verb ibv_VERB@IBVERBS_1.0 (ri_v10_VERB): EINVAL for no
 * wrapper, else the 1.1 ibv_VERB on its real member, the wrapper freed
 * once that succeeded. Every 1.0 destroy verb is this one.
 */
#define RI_V10_DESTROY(verb, type, real)				\
	RI_EXPORT int ri_v10_##verb(struct type *w)			\
	{								\
		return w ? ri_v10_unwrap(w, ibv_##verb(w->real)) : EINVAL; \
	}								\
	RI_SYMVER(ri_v10_##verb, ibv_##verb@IBVERBS_1.0)

/* ------------------------------------------------------------------ */
/* Devices and contexts                                                 */

/* The list the caller sees starts one slot in: slot 0 keeps the 1.1 list. */
RI_EXPORT struct ibv_device_1_0 **ri_v10_get_device_list(int *num)
{
	struct ibv_device_1_0 **slots;
	struct ibv_device **real;
	int n = 0, i;

	real = ibv_get_device_list(&n);
	if (!real)
		goto err;
	slots = calloc((size_t)n + 2, sizeof(*slots));
	if (!slots)
		goto err_free_real;
	slots[0] = (struct ibv_device_1_0 *)(void *)real;
	for (i = 0; i < n; i++) {
		slots[i + 1] = calloc(1, sizeof(**slots));
		if (!slots[i + 1])
			goto err_free_slots;
		slots[i + 1]->real_device = real[i];
	}
	if (num)
		*num = n;
	return slots + 1;

err_free_slots:
	for (i = 1; i <= n; i++)
		free(slots[i]);
	free(slots);
err_free_real:
	ibv_free_device_list(real);
	errno = ENOMEM;
err:
	if (num)
		*num = 0;
	return NULL;
}
RI_SYMVER(ri_v10_get_device_list, ibv_get_device_list@IBVERBS_1.0);

RI_EXPORT void ri_v10_free_device_list(struct ibv_device_1_0 **list)
{
	struct ibv_device_1_0 **d;

	if (!list)
		return;
	for (d = list; *d; d++)
		free(*d);
	ibv_free_device_list((struct ibv_device **)(void *)list[-1]);
	free(list - 1);
}
RI_SYMVER(ri_v10_free_device_list, ibv_free_device_list@IBVERBS_1.0);

RI_EXPORT const char *ri_v10_get_device_name(struct ibv_device_1_0 *device)
{
	return ibv_get_device_name(device ? device->real_device : NULL);
}
RI_SYMVER(ri_v10_get_device_name, ibv_get_device_name@IBVERBS_1.0);

RI_EXPORT __be64 ri_v10_get_device_guid(struct ibv_device_1_0 *device)
{
	return ibv_get_device_guid(device ? device->real_device : NULL);
}
RI_SYMVER(ri_v10_get_device_guid, ibv_get_device_guid@IBVERBS_1.0);

RI_EXPORT struct ibv_context_1_0 *ri_v10_open_device(struct ibv_device_1_0 *device)
{
	struct ibv_context_1_0 *ctx;

	RI_V10_WRAP(ctx, !device, real_context,
		    ibv_open_device(device->real_device));
	if (!ctx)
		return NULL;
	ctx->device = device;
	ctx->cmd_fd = ctx->real_context->cmd_fd;
	ctx->async_fd = ctx->real_context->async_fd;
	ctx->num_comp_vectors = ctx->real_context->num_comp_vectors;
	ctx->ops.poll_cq = ri_v10_poll_cq;
	ctx->ops.req_notify_cq = ri_v10_req_notify_cq;
	ctx->ops.post_send = ri_v10_post_send;
	ctx->ops.post_recv = ri_v10_post_recv;
	ctx->ops.post_srq_recv = ri_v10_post_srq_recv;
	return ctx;
}
RI_SYMVER(ri_v10_open_device, ibv_open_device@IBVERBS_1.0);

RI_V10_DESTROY(close_device, ibv_context_1_0, real_context);

/* The 1.1 object's context pointer names its wrapper (COMPAT-13). */
RI_EXPORT int ri_v10_get_async_event(struct ibv_context_1_0 *context,
				     struct ibv_async_event *event)
{
	int ret;

	if (!context || !event) {
		errno = EINVAL;
		return EINVAL;
	}
	ret = ibv_get_async_event(context->real_context, event);
	if (ret)
		return ret;
	switch (ri__event_elem(event->event_type)) {
	case RI_ELEM_CQ:
		event->element.cq = event->element.cq->cq_context;
		break;
	case RI_ELEM_QP:
		event->element.qp = event->element.qp->qp_context;
		break;
	case RI_ELEM_SRQ:
		event->element.srq = event->element.srq->srq_context;
		break;
	default:	/* no object: port, device; WQs have no 1.0 wrapper */
		break;
	}
	return 0;
}
RI_SYMVER(ri_v10_get_async_event, ibv_get_async_event@IBVERBS_1.0);

/* The caller's event is left as it was; the 1.1 ack gets the real object. */
RI_EXPORT void ri_v10_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_async_event real;

	if (!event)
		return;
	real = *event;
	switch (ri__event_elem(event->event_type)) {
	case RI_ELEM_CQ:
		real.element.cq = ((struct ibv_cq_1_0 *)(void *)event->element.cq)->real_cq;
		break;
	case RI_ELEM_QP:
		real.element.qp = ((struct ibv_qp_1_0 *)(void *)event->element.qp)->real_qp;
		break;
	case RI_ELEM_SRQ:
		real.element.srq = ((struct ibv_srq_1_0 *)(void *)event->element.srq)->real_srq;
		break;
	default:	/* no object: port, device; WQs have no 1.0 wrapper */
		break;
	}
	ibv_ack_async_event(&real);
}
RI_SYMVER(ri_v10_ack_async_event, ibv_ack_async_event@IBVERBS_1.0);

RI_EXPORT int ri_v10_query_device(struct ibv_context_1_0 *context,
				  struct ibv_device_attr *attr)
{
	return ibv_query_device(context ? context->real_context : NULL, attr);
}
RI_SYMVER(ri_v10_query_device, ibv_query_device@IBVERBS_1.0);

/* A 1.0 ibv_port_attr ends with phys_state: nothing past it is written. */
#define RI_PORT_ATTR_1_0_SIZE offsetof(struct ibv_port_attr, link_layer)

RI_EXPORT int ri_v10_query_port(struct ibv_context_1_0 *context,
				uint8_t port_num, struct ibv_port_attr *attr)
{
	struct ibv_port_attr full;
	int ret;

	if (!context || !attr)
		return EINVAL;
	memset(&full, 0, sizeof(full));
	ret = ibv_query_port(context->real_context, port_num, &full);
	if (!ret)
		memcpy(attr, &full, RI_PORT_ATTR_1_0_SIZE);
	return ret;
}
RI_SYMVER(ri_v10_query_port, ibv_query_port@IBVERBS_1.0);

RI_EXPORT int ri_v10_query_gid(struct ibv_context_1_0 *context,
			       uint8_t port_num, int index, union ibv_gid *gid)
{
	return ibv_query_gid(context ? context->real_context : NULL, port_num,
			     index, gid);
}
RI_SYMVER(ri_v10_query_gid, ibv_query_gid@IBVERBS_1.0);

RI_EXPORT int ri_v10_query_pkey(struct ibv_context_1_0 *context,
				uint8_t port_num, int index, __be16 *pkey)
{
	return ibv_query_pkey(context ? context->real_context : NULL, port_num,
			      index, pkey);
}
RI_SYMVER(ri_v10_query_pkey, ibv_query_pkey@IBVERBS_1.0);

/* ------------------------------------------------------------------ */
/* PD, MR, AH                                                           */

RI_EXPORT struct ibv_pd_1_0 *ri_v10_alloc_pd(struct ibv_context_1_0 *context)
{
	struct ibv_pd_1_0 *pd;

	RI_V10_WRAP(pd, !context, real_pd, ibv_alloc_pd(context->real_context));
	if (!pd)
		return NULL;
	pd->context = context;
	pd->handle = pd->real_pd->handle;
	return pd;
}
RI_SYMVER(ri_v10_alloc_pd, ibv_alloc_pd@IBVERBS_1.0);

RI_V10_DESTROY(dealloc_pd, ibv_pd_1_0, real_pd);

RI_EXPORT struct ibv_mr_1_0 *ri_v10_reg_mr(struct ibv_pd_1_0 *pd, void *addr,
					   size_t length, int access)
{
	struct ibv_mr_1_0 *mr;

	RI_V10_WRAP(mr, !pd, real_mr,
		    ibv_reg_mr(pd->real_pd, addr, length, access));
	if (!mr)
		return NULL;
	mr->context = pd->context;
	mr->pd = pd;
	mr->handle = mr->real_mr->handle;
	mr->lkey = mr->real_mr->lkey;
	mr->rkey = mr->real_mr->rkey;
	return mr;
}
RI_SYMVER(ri_v10_reg_mr, ibv_reg_mr@IBVERBS_1.0);

RI_V10_DESTROY(dereg_mr, ibv_mr_1_0, real_mr);

RI_EXPORT struct ibv_ah_1_0 *ri_v10_create_ah(struct ibv_pd_1_0 *pd,
					      struct ibv_ah_attr *attr)
{
	struct ibv_ah_1_0 *ah;

	RI_V10_WRAP(ah, !pd, real_ah, ibv_create_ah(pd->real_pd, attr));
	if (!ah)
		return NULL;
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = ah->real_ah->handle;
	return ah;
}
RI_SYMVER(ri_v10_create_ah, ibv_create_ah@IBVERBS_1.0);

RI_V10_DESTROY(destroy_ah, ibv_ah_1_0, real_ah);

/* ------------------------------------------------------------------ */
/* CQ and completion events                                             */

RI_EXPORT struct ibv_cq_1_0 *ri_v10_create_cq(struct ibv_context_1_0 *context,
					      int cqe, void *cq_context,
					      struct ibv_comp_channel *channel,
					      int comp_vector)
{
	struct ibv_cq_1_0 *cq;

	RI_V10_WRAP(cq, !context, real_cq,
		    ibv_create_cq(context->real_context, cqe, cq_context,
				  channel, comp_vector));
	if (!cq)
		return NULL;
	cq->context = context;
	cq->cq_context = cq_context;
	cq->handle = cq->real_cq->handle;
	cq->cqe = cq->real_cq->cqe;
	cq->real_cq->cq_context = cq;		/* back-pointer (COMPAT-13) */
	return cq;
}
RI_SYMVER(ri_v10_create_cq, ibv_create_cq@IBVERBS_1.0);

RI_EXPORT int ri_v10_resize_cq(struct ibv_cq_1_0 *cq, int cqe)
{
	int ret;

	if (!cq)
		return EINVAL;
	ret = ibv_resize_cq(cq->real_cq, cqe);
	if (!ret)
		cq->cqe = cq->real_cq->cqe;
	return ret;
}
RI_SYMVER(ri_v10_resize_cq, ibv_resize_cq@IBVERBS_1.0);

RI_V10_DESTROY(destroy_cq, ibv_cq_1_0, real_cq);

/* The 1.1 event names the 1.1 CQ, whose cq_context is the wrapper. */
RI_EXPORT int ri_v10_get_cq_event(struct ibv_comp_channel *channel,
				  struct ibv_cq_1_0 **cq, void **cq_context)
{
	struct ibv_cq *real;
	void *wrapper;
	int ret;

	if (!cq || !cq_context) {
		errno = EINVAL;
		return EINVAL;
	}
	ret = ibv_get_cq_event(channel, &real, &wrapper);
	if (ret)
		return ret;
	*cq = wrapper;
	*cq_context = (*cq)->cq_context;
	return 0;
}
RI_SYMVER(ri_v10_get_cq_event, ibv_get_cq_event@IBVERBS_1.0);

RI_EXPORT void ri_v10_ack_cq_events(struct ibv_cq_1_0 *cq, unsigned int nevents)
{
	if (cq)
		ibv_ack_cq_events(cq->real_cq, nevents);
}
RI_SYMVER(ri_v10_ack_cq_events, ibv_ack_cq_events@IBVERBS_1.0);

/* ------------------------------------------------------------------ */
/* SRQ                                                                  */

RI_EXPORT struct ibv_srq_1_0 *ri_v10_create_srq(struct ibv_pd_1_0 *pd,
						struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_1_0 *srq;

	RI_V10_WRAP(srq, !pd || !attr, real_srq, ibv_create_srq(pd->real_pd, attr));
	if (!srq)
		return NULL;
	srq->context = pd->context;
	srq->srq_context = attr->srq_context;
	srq->pd = pd;
	srq->handle = srq->real_srq->handle;
	srq->real_srq->srq_context = srq;	/* back-pointer (COMPAT-13) */
	return srq;
}
RI_SYMVER(ri_v10_create_srq, ibv_create_srq@IBVERBS_1.0);

RI_EXPORT int ri_v10_modify_srq(struct ibv_srq_1_0 *srq,
				struct ibv_srq_attr *attr, int mask)
{
	return ibv_modify_srq(srq ? srq->real_srq : NULL, attr, mask);
}
RI_SYMVER(ri_v10_modify_srq, ibv_modify_srq@IBVERBS_1.0);

RI_EXPORT int ri_v10_query_srq(struct ibv_srq_1_0 *srq,
			       struct ibv_srq_attr *attr)
{
	return ibv_query_srq(srq ? srq->real_srq : NULL, attr);
}
RI_SYMVER(ri_v10_query_srq, ibv_query_srq@IBVERBS_1.0);

RI_V10_DESTROY(destroy_srq, ibv_srq_1_0, real_srq);

/* ------------------------------------------------------------------ */
/* QP                                                                   */

/* The 1.1 request for a 1.0 one: the same, naming the 1.1 objects. */
static struct ibv_qp_init_attr *
ri_v10_qp_init_attr(struct ibv_qp_init_attr *a,
		    const struct ibv_qp_init_attr_1_0 *attr)
{
	memset(a, 0, sizeof(*a));
	a->qp_context = attr->qp_context;
	a->send_cq = attr->send_cq->real_cq;
	a->recv_cq = attr->recv_cq->real_cq;
	a->srq = attr->srq ? attr->srq->real_srq : NULL;
	a->cap = attr->cap;
	a->qp_type = attr->qp_type;
	a->sq_sig_all = attr->sq_sig_all;
	return a;
}

RI_EXPORT struct ibv_qp_1_0 *ri_v10_create_qp(struct ibv_pd_1_0 *pd,
					      struct ibv_qp_init_attr_1_0 *attr)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp_1_0 *qp;

	RI_V10_WRAP(qp, !pd || !attr || !attr->send_cq || !attr->recv_cq,
		    real_qp,
		    ibv_create_qp(pd->real_pd, ri_v10_qp_init_attr(&a, attr)));
	if (!qp)
		return NULL;
	attr->cap = a.cap;			/* the sizes the provider gave */
	qp->context = pd->context;
	qp->qp_context = attr->qp_context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->handle = qp->real_qp->handle;
	qp->qp_num = qp->real_qp->qp_num;
	qp->state = qp->real_qp->state;
	qp->qp_type = attr->qp_type;
	qp->real_qp->qp_context = qp;		/* back-pointer (COMPAT-13) */
	return qp;
}
RI_SYMVER(ri_v10_create_qp, ibv_create_qp@IBVERBS_1.0);

/* The caller's objects, never the 1.1 ones: each 1.1 object names its
 * wrapper through its context pointer. */
RI_EXPORT int ri_v10_query_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr,
			      int mask, struct ibv_qp_init_attr_1_0 *init)
{
	struct ibv_qp_init_attr real;
	int ret;

	if (!qp || !init)
		return EINVAL;
	ret = ibv_query_qp(qp->real_qp, attr, mask, &real);
	if (ret)
		return ret;
	qp->state = qp->real_qp->state;
	init->qp_context = qp->qp_context;
	init->send_cq = real.send_cq ? real.send_cq->cq_context : NULL;
	init->recv_cq = real.recv_cq ? real.recv_cq->cq_context : NULL;
	init->srq = real.srq ? real.srq->srq_context : NULL;
	init->cap = real.cap;
	init->qp_type = real.qp_type;
	init->sq_sig_all = real.sq_sig_all;
	return 0;
}
RI_SYMVER(ri_v10_query_qp, ibv_query_qp@IBVERBS_1.0);

RI_EXPORT int ri_v10_modify_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr,
			       int mask)
{
	int ret;

	if (!qp)
		return EINVAL;
	ret = ibv_modify_qp(qp->real_qp, attr, mask);
	if (!ret)
		qp->state = qp->real_qp->state;
	return ret;
}
RI_SYMVER(ri_v10_modify_qp, ibv_modify_qp@IBVERBS_1.0);

RI_V10_DESTROY(destroy_qp, ibv_qp_1_0, real_qp);

RI_EXPORT int ri_v10_attach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid,
				  uint16_t lid)
{
	return ibv_attach_mcast(qp ? qp->real_qp : NULL, gid, lid);
}
RI_SYMVER(ri_v10_attach_mcast, ibv_attach_mcast@IBVERBS_1.0);

RI_EXPORT int ri_v10_detach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid,
				  uint16_t lid)
{
	return ibv_detach_mcast(qp ? qp->real_qp : NULL, gid, lid);
}
RI_SYMVER(ri_v10_detach_mcast, ibv_detach_mcast@IBVERBS_1.0);
