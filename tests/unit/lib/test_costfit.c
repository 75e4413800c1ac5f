// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_costfit - the fixed part of a cost fitted online: found under noise, kept when the cost
 * per unit changes, moved little by one outlier, and the whole cost while units never vary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rtsnap/costfit.h"

static uint64_t s_rng = 88172645463325252ull;

/* xorshift64: a reproducible sequence */
static uint64_t rnd(void)
{
	s_rng ^= s_rng << 13;
	s_rng ^= s_rng >> 7;
	s_rng ^= s_rng << 17;
	return s_rng;
}

/* uniform in [lo, hi) */
static double uni(double lo, double hi)
{
	return lo + (hi - lo) * (double)(rnd() >> 11) / (double)(1ull << 53);
}

/* units as a publication under churn builds them: 1 to 10 segments */
static double units(void)
{
	return (double)(1 + rnd() % 10);
}

/* fixed + slope * x, each part off by up to 30 % either way */
static void feed(struct costfit *f, int n, double fixed, double slope)
{
	for (int i = 0; i < n; i++) {
		double x = units();

		costfit_add(f, x, fixed * uni(0.7, 1.3) + slope * x * uni(0.7, 1.3));
	}
}

static void test_empty(void **state)
{
	struct costfit f;

	(void)state;
	costfit_init(&f);
	assert_true(costfit_fixed(&f) == 0);
}

static void test_noise(void **state)
{
	struct costfit f;
	double fx;

	(void)state;
	costfit_init(&f);
	feed(&f, 2000, 100, 8);
	fx = costfit_fixed(&f);
	assert_true(fx > 75 && fx < 125);
}

/* the cost per unit doubles (a full dump beside): the fixed part stays, where the mean cost
 * (what pacing on the whole cost waits on) grows by half */
static void test_slope_change(void **state)
{
	struct costfit f;
	double fx;

	(void)state;
	costfit_init(&f);
	feed(&f, 1000, 100, 8);
	feed(&f, 1000, 100, 16);
	fx = costfit_fixed(&f);
	assert_true(fx > 75 && fx < 125);
	assert_true(f.sy / f.w > 1.5 * fx);
}

static void test_outlier(void **state)
{
	struct costfit f;
	double before, after;

	(void)state;
	costfit_init(&f);
	feed(&f, 1000, 100, 8);
	before = costfit_fixed(&f);
	costfit_add(&f, 3, 1500); /* one publication ten times its usual cost */
	after = costfit_fixed(&f);
	assert_true(after > before);
	assert_true(after < before * 1.5); /* pacing on the last cost alone: 10 times */
}

/* units that never vary tell no slope: all of the cost counts as fixed */
static void test_constant_units(void **state)
{
	struct costfit f;
	double fx;

	(void)state;
	costfit_init(&f);
	for (int i = 0; i < 500; i++)
		costfit_add(&f, 3, 100 + 3 * 8 * uni(0.9, 1.1));
	fx = costfit_fixed(&f);
	assert_true(fx > 120 && fx < 128);
}

/* all of the cost per unit: the fixed part is near 0, never below */
static void test_no_fixed(void **state)
{
	struct costfit f;
	double fx;

	(void)state;
	costfit_init(&f);
	for (int i = 0; i < 500; i++) {
		double x = units();

		costfit_add(&f, x, 8 * x);
	}
	fx = costfit_fixed(&f);
	assert_true(fx >= 0 && fx < 1);
}

/* a start-up build (thousands of units) among small ones is fitted, not taken as fixed */
static void test_first_build(void **state)
{
	struct costfit f;
	double fx;

	(void)state;
	costfit_init(&f);
	costfit_add(&f, 15000, 100 + 15000 * 13);
	feed(&f, 50, 100, 13);
	fx = costfit_fixed(&f);
	assert_true(fx > 50 && fx < 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),	       cmocka_unit_test(test_noise),
		cmocka_unit_test(test_slope_change),   cmocka_unit_test(test_outlier),
		cmocka_unit_test(test_constant_units), cmocka_unit_test(test_no_fixed),
		cmocka_unit_test(test_first_build),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
