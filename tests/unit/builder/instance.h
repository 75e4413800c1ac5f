/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * instance.h - for the unit tests of a layer that composes snapshots: the one chain a test
 * file's snapshots are made for and published on, and the builder that composes them
 * (reading /etc/iproute2 as the daemon does). Both are made at first use. Include after
 * cmocka.h.
 */
#ifndef RTSNAP_TEST_INSTANCE_H
#define RTSNAP_TEST_INSTANCE_H

#include "rtsnap/builder.h"
#include "rtsnap/snapshot.h"

static struct snapshot_chain *s_chain;

static inline struct snapshot_chain *test_chain(void)
{
	if (!s_chain)
		assert_int_equal(snapshot_chain_new(&s_chain), 0);
	return s_chain;
}

static inline struct builder *test_builder(void)
{
	static struct builder *b;

	if (!b)
		assert_int_equal(builder_new(NULL, &b), 0);
	return b;
}

#endif
