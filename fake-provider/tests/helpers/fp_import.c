/* SPDX-License-Identifier: MIT */
/*
 * A region shared with another process through its context's file, for
 * the fake provider's import tests (t5341, t5840, t5842; fp_test.h): what
 * the owner sends with the file over a UNIX socket, the importer's side
 * (the context, the PD and the region imported), and a WRITE between two
 * QPs of a PD with its completion status.
 */
#include <string.h>
#include <unistd.h>

#include "fp_fdpass.h"
#include "tf.h"
#include "../fp_test.h"

bool fpt_share_send(int sock, struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr,
		    struct fpt_share *s)
{
	*s = (struct fpt_share){ pd->handle, mr->handle, mr->lkey, mr->rkey,
				 (uintptr_t)mr->addr, mr->length };
	return fp_fd_send(sock, s, sizeof(*s), ctx->cmd_fd, 0) == (ssize_t)sizeof(*s);
}

int fpt_import(int sock, struct fpt_share *s, struct ibv_context **ctx, struct ibv_pd **pd,
	       struct ibv_mr **mr)
{
	unsigned n = 0;
	int fd = -1;

	if (fp_fd_recv(sock, s, sizeof(*s), &fd, 1, &n, 0, NULL) != (ssize_t)sizeof(*s) || n != 1)
		return 1;
	*ctx = ibv_import_device(fd);
	if (!*ctx)
		return 2;
	*pd = ibv_import_pd(*ctx, s->pd);
	if (!*pd || (*pd)->handle != s->pd)
		return 3;
	*mr = ibv_import_mr(*pd, s->mr);
	if (!*mr || (*mr)->lkey != s->lkey || (*mr)->rkey != s->rkey || (*mr)->length != s->length)
		return 4;
	return 0;
}

int fpt_post_write(struct ibv_qp *qp, struct ibv_cq *cq, uint64_t from, uint32_t lkey,
		   uint32_t len, uint64_t to, uint32_t rkey)
{
	struct ibv_sge sge = { from, len, lkey };
	struct ibv_send_wr w, *bad;
	struct ibv_wc wc;

	memset(&w, 0, sizeof(w));
	w.sg_list = &sge;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = to;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &w, &bad) || tf_poll(cq, &wc) != 1)
		return -1;
	return wc.status;
}

int fpt_write_status(struct ibv_context *ctx, struct ibv_pd *pd, uint64_t from, uint32_t lkey,
		     uint32_t len, uint64_t to, uint32_t rkey)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *a = cq ? tf_rc_qp(pd, cq, IBV_QPT_RC) : NULL;
	struct ibv_qp *b = cq ? tf_rc_qp(pd, cq, IBV_QPT_RC) : NULL;
	int rc = -1;

	if (a && b && !tf_pair_connect(a, b, 1, 1))
		rc = fpt_post_write(a, cq, from, lkey, len, to, rkey);
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (cq)
		ibv_destroy_cq(cq);
	return rc;
}
