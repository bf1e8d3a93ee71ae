/* SPDX-License-Identifier: MIT */
/*
 * The protocol's message table (fk_msgs.def) as data: each type's name,
 * sizes and needs, for the daemon's checks and dispatch, its log and the
 * client. The formats themselves are in proto.h.
 */
#include <stddef.h>
#include <stdio.h>

#include "fp_script.h"
#include "proto.h"

static const struct fk_msg_info fk_msgs[FK_MSG__COUNT] = {
#define FK_MSG(NAME, name, req, rep, needs) \
	[FK_MSG_##NAME] = { #name, sizeof(struct req), sizeof(struct rep), (needs) },
#include "fk_msgs.def"
#undef FK_MSG
};

/* Every request fits the daemon's receive buffer. */
#define FK_MSG(NAME, name, req, rep, needs) \
	_Static_assert(sizeof(struct req) <= FK_REQ_MAX, #name ": request larger than FK_REQ_MAX");
#include "fk_msgs.def"
#undef FK_MSG

const struct fk_msg_info *fk_msg_info(uint32_t type)
{
	if (type == FK_MSG__NONE || type >= FK_MSG__COUNT)
		return NULL;
	return &fk_msgs[type];
}

const char *fk_msg_name(uint32_t type)
{
	const struct fk_msg_info *m = fk_msg_info(type);

	if (type == FK_MSG_EVENT)
		return "event";
	return m ? m->name : "unknown";
}

/* ---- quirks (script/fp_quirks.def) ---------------------------------------------- */
#define FP_QUIRK(id, name, where, bit, what) \
	_Static_assert((bit) >= 0 && (bit) < 32 && (FK_QW_##where != FK_QW_PLUGIN || (bit) == 0), \
		       name ": its BIT is not a bit of its word (0 for PLUGIN)");
#include "fp_quirks.def"
#undef FP_QUIRK

static const struct fk_quirk_row {
	const char *name;
	int fp_q;			/* enum fp_quirk */
	uint32_t where;			/* enum fk_quirk_where */
	uint32_t bit;			/* FK_Q_<ID> */
} fk_quirk_rows[] = {
#define FP_QUIRK(id, name, where, bit, what) { name, FP_Q_##id, FK_QW_##where, FK_Q_##id },
#include "fp_quirks.def"
#undef FP_QUIRK
};
#define FK_NQUIRKS (sizeof(fk_quirk_rows) / sizeof(fk_quirk_rows[0]))

uint32_t fk_quirk_flags(uint32_t type)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < FK_NQUIRKS; i++)
		if (type != FK_QW_PLUGIN && fk_quirk_rows[i].where == type)
			m |= fk_quirk_rows[i].bit;
	return m;
}

uint32_t fk_quirk_bits(const struct fp_script *s, uint32_t type)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < FK_NQUIRKS; i++)
		if (type != FK_QW_PLUGIN && fk_quirk_rows[i].where == type &&
		    s->quirk[fk_quirk_rows[i].fp_q])
			m |= fk_quirk_rows[i].bit;
	return m;
}

int fk_quirk_table_check(char *why, size_t len)
{
	size_t i, j;

	for (i = 0; i < FK_NQUIRKS; i++)
		for (j = i + 1; j < FK_NQUIRKS; j++)
			if (fk_quirk_rows[i].where != FK_QW_PLUGIN &&
			    fk_quirk_rows[i].where == fk_quirk_rows[j].where &&
			    fk_quirk_rows[i].bit == fk_quirk_rows[j].bit) {
				snprintf(why, len, "quirks %s and %s share bit %#x of %s",
					 fk_quirk_rows[i].name, fk_quirk_rows[j].name,
					 fk_quirk_rows[i].bit, fk_msg_name(fk_quirk_rows[i].where));
				return -1;
			}
	return 0;
}
