/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cloop.h - the one collector thread of the process: it runs every collector (one per family
 * and namespace followed) in one event loop, each a member that says what to wait for and
 * does its work when that arrives.
 *
 * A pass: every member stepped since (or new) says in prepare() what it waits for: up to two
 * descriptors and a deadline (its state changes in its step only, so the others wait as they
 * did); the thread waits for the first of them all (epoll: the cost of a wait does not grow
 * with the number of idle members); then every member with a descriptor ready or its deadline
 * past gets its step(). A member's calls run on the loop's thread only, one at a time, so its state needs no
 * lock as long as no other thread touches it (collector.c: one writer per instance). A member
 * of another namespace runs its step() inside it (setns around the call): what it opens there
 * lives there. Fairness is the members' own: a step does a bounded amount of work (a drain
 * has a budget) and the others run in the same pass.
 */
#ifndef RTSNAP_CLOOP_H
#define RTSNAP_CLOOP_H

#include <poll.h>
#include <stdint.h>

struct cloop_member {
	void *arg;
	/*
	 * Fill pfd[0..2) (fd -1 or events 0: nothing to wait for there) and id[0..2) (which
	 * opening of the descriptor it is: a number that changes whenever the descriptor was
	 * closed and opened again, even under the same number), and return the deadline in
	 * CLOCK_MONOTONIC microseconds (INT64_MAX: none). Runs in the daemon's own namespace: it
	 * must not open anything.
	 */
	int64_t (*prepare)(void *arg, struct pollfd pfd[2], uint64_t id[2]);
	/* A descriptor of pfd is ready (revents set) or the deadline is past. */
	void (*step)(void *arg, struct pollfd pfd[2]);
	int nsfd; /* the namespace its step() runs in (setns); -1: the daemon's own */
	int nice; /* the thread's nice value, taken from the first member */
	/* the loop's: */
	struct pollfd pfd[2];
	uint64_t id[2];
	int reg_fd[2];	    /* registered in the epoll set (-1: nothing) */
	uint32_t reg_ev[2]; /* with these events */
	uint64_t reg_id[2]; /* for this opening */
	int64_t wake_us;
	int fresh; /* stepped (or new) since its last prepare() */
	int gone;  /* removed: set by the loop's thread, under its lock */
};

/*
 * Any thread but the loop's. Run m from the next pass on; the first member starts the thread.
 * m stays the caller's and must live until cloop_remove(). 0 or a negative errno.
 */
int cloop_add(struct cloop_member *m) __attribute__((warn_unused_result));

/* Any thread but the loop's. Returns once the loop no longer runs m and has let go of its
 * descriptors (the last member stops and joins the thread). Not added: nothing happens. */
void cloop_remove(struct cloop_member *m);

/* Any thread: start a pass now (a member's state changed from outside, e.g. a flag set). */
void cloop_wake(void);

/* CLOCK_MONOTONIC in microseconds, the clock of the deadlines. */
int64_t cloop_now_us(void);

#endif
