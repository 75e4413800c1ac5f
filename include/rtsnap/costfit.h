/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * costfit.h - the fixed part of a cost that also grows with the work done, fitted online.
 *
 * A publication costs a fixed part (walking the groups, the grace period, the change stream's
 * walk, waking) and a part in proportion to the segments it builds. Only the fixed part is
 * saved by gathering more changes into one publication, so that is what the collector paces
 * on (collector.c, publish()). costfit fits cost = fixed + slope * units by least squares over
 * the recent observations (each weighing 1 - 1/COSTFIT_SPAN of the one after it), so that a
 * costlier unit (caches shared with a full dump, say) raises the slope, not the fixed part,
 * and one expensive publication moves the estimate by a fraction only.
 *
 * One writer: a costfit belongs to the thread that feeds it.
 */
#ifndef RTSNAP_COSTFIT_H
#define RTSNAP_COSTFIT_H

#define COSTFIT_SPAN 128

struct costfit {
	double w, sx, sy, sxx, sxy; /* decayed weight and sums of x, y, x^2, x*y */
	double slope;		    /* the last slope fitted (0 until units varied) */
};

/* An empty fit. */
void costfit_init(struct costfit *f);

/* Record one observation: units of work (>= 0) that cost cost (>= 0). */
void costfit_add(struct costfit *f, double units, double cost);

/*
 * The fixed part: the fitted intercept, between 0 and the mean cost. While the units have not
 * varied enough to tell a slope (their variance under a quarter of a unit), the slope last
 * fitted is kept (0 at first: then the whole mean cost counts as fixed, the cautious side).
 * 0 before any observation.
 */
double costfit_fixed(const struct costfit *f);

#endif
