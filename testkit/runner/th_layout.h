/* SPDX-License-Identifier: MIT */
/* The layout tables built from th_layout.def (see th_layout.c). */
#ifndef TH_LAYOUT_H
#define TH_LAYOUT_H

#include <stddef.h>

struct th_layout {
	const char *what;
	long value;
};

extern const struct th_layout th_layout_app[], th_layout_sys[];
extern const size_t th_layout_app_n, th_layout_sys_n;

#endif /* TH_LAYOUT_H */
