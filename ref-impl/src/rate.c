/* SPDX-License-Identifier: MIT */
/*
 * Link rates: ibv_rate and its multiplier of 2.5 Gb/s and its Mb/s, each
 * way.
 */
#include "ri.h"

/* One table, read both ways. Only the rates that are a whole
 * multiple of 2.5 Gb/s have a multiplier (mult 0 here): the FDR/EDR/HDR
 * lane rates answer -1 and no multiplier names them, as in rdma-core
 * v44.0 libibverbs/verbs.c ibv_rate_to_mult/mult_to_ibv_rate. */

struct ri_rate { enum ibv_rate rate; int mult; int mbps; };

static const struct ri_rate ri_rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, 0, 14062 },
	{ IBV_RATE_56_GBPS, 0, 56250 },
	{ IBV_RATE_112_GBPS, 0, 112500 },
	{ IBV_RATE_168_GBPS, 0, 168750 },
	{ IBV_RATE_25_GBPS, 0, 25781 },
	{ IBV_RATE_100_GBPS, 0, 103125 },
	{ IBV_RATE_200_GBPS, 0, 206250 },
	{ IBV_RATE_300_GBPS, 0, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};
#define RI_NRATES (sizeof(ri_rates) / sizeof(ri_rates[0]))

/* The row of an ibv_rate, or NULL. */
static const struct ri_rate *ri_rate_row(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RI_NRATES; i++)
		if (ri_rates[i].rate == rate)
			return &ri_rates[i];
	return NULL;
}

RI_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct ri_rate *r = ri_rate_row(rate);

	return r && r->mult ? r->mult : -1;
}

RI_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < RI_NRATES && mult > 0; i++)
		if (ri_rates[i].mult == mult)
			return ri_rates[i].rate;
	return IBV_RATE_MAX;
}

RI_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct ri_rate *r = ri_rate_row(rate);

	return r ? r->mbps : -1;
}

RI_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < RI_NRATES; i++)
		if (ri_rates[i].mbps == mbps)
			return ri_rates[i].rate;
	return IBV_RATE_MAX;
}
