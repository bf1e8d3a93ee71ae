/* SPDX-License-Identifier: MIT */
/*
 * The top of the engine: what a verb asks of the HCA as a whole. A daemon
 * connection joins its device's receive ring (the transport), whose
 * progress thread then serves the inbox and the retransmissions that are
 * due whenever the application calls no verb; every verb serves them first.
 */
#include "fp_engine.h"
#include "roce.h"
#include "transport.h"

static const struct fe_xport_work fe_work = {
	.retry = fe_sq_progress,
	.next_due = fe_sq_next_due,
	.recv = fe_recv,
};

int fe_join(struct fe_dev *dev, struct fk_client *fk)
{
	fe_roce_work(&fe_work);
	return fe_xport_register(fe_dev_xport_slot(dev), dev, fk, &fe_work);
}

struct fe_xport *fe_leave(struct fe_dev *dev, struct fk_client *fk)
{
	return fe_xport_unregister(fe_dev_xport_slot(dev), fk);
}

void fe_progress(void)
{
	int i, n = fe_dev_span();

	for (i = 0; i < n; i++) {
		struct fe_xport *xp = fe_dev_xport_at(i);

		if (xp) {
			fe_xport_touch(xp);
			fe_xport_drain(xp);
		}
	}
	fe_roce_progress();		/* what the wire brought, its ACK timers */
	fe_sq_progress();		/* retransmissions that are due */
}
