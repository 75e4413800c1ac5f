// SPDX-License-Identifier: GPL-2.0-or-later
/* costfit.c - a fixed and a per-unit cost, fitted by decayed least squares (costfit.h). */
#include "rtsnap/costfit.h"

#define MIN_VARIANCE 0.25 /* units^2: less cannot tell a slope from noise */

void costfit_init(struct costfit *f)
{
	*f = (struct costfit){ 0 };
}

void costfit_add(struct costfit *f, double units, double cost)
{
	const double keep = 1.0 - 1.0 / COSTFIT_SPAN;
	double mx, my, var;

	f->w = f->w * keep + 1.0;
	f->sx = f->sx * keep + units;
	f->sy = f->sy * keep + cost;
	f->sxx = f->sxx * keep + units * units;
	f->sxy = f->sxy * keep + units * cost;
	mx = f->sx / f->w;
	my = f->sy / f->w;
	var = f->sxx / f->w - mx * mx;
	if (var >= MIN_VARIANCE) {
		f->slope = (f->sxy / f->w - mx * my) / var;
		if (f->slope < 0)
			f->slope = 0; /* work never makes a publication cheaper */
	}
}

double costfit_fixed(const struct costfit *f)
{
	double mx, my, fixed;

	if (f->w <= 0)
		return 0;
	mx = f->sx / f->w;
	my = f->sy / f->w;
	fixed = my - f->slope * mx;
	if (fixed < 0)
		fixed = 0;
	if (fixed > my)
		fixed = my;
	return fixed;
}
