// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rcu_flavours - the read side rtsnapd uses (read lock, dereference, take a reference, unlock,
 * later drop the reference), with liburcu-bp and with liburcu-memb plus lazy per-thread
 * registration, while one writer publishes and waits for grace periods. Build twice:
 *   cc -O2 -DFLAVOUR_BP   rcu_flavours.c -lurcu-bp   -lpthread
 *   cc -O2 -DFLAVOUR_MEMB rcu_flavours.c -lurcu-memb -lpthread
 * Prints reader operations per second, reader ns/op and writer grace periods per second.
 * Not a test. Run by bench/bench_rcu.sh.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(FLAVOUR_BP)
#include <urcu/urcu-bp.h>
#define NAME "urcu-bp"
#define rd_lock urcu_bp_read_lock
#define rd_unlock urcu_bp_read_unlock
#define sync_rcu urcu_bp_synchronize_rcu
#define reg()
#else
#include <urcu/urcu-memb.h>
#define NAME "urcu-memb (lazy registration)"
#define rd_lock urcu_memb_read_lock
#define rd_unlock urcu_memb_read_unlock
#define sync_rcu urcu_memb_synchronize_rcu
static pthread_key_t s_key;
static __thread int s_registered;
static void unreg(void *p)
{
	(void)p;
	urcu_memb_unregister_thread();
}
static void reg(void)
{
	if (!s_registered) { /* what rtsnapd would do on a libmicrohttpd thread's first request */
		urcu_memb_register_thread();
		pthread_setspecific(s_key, (void *)1);
		s_registered = 1;
	}
}
#endif
#include <urcu/pointer.h> /* rcu_xchg_pointer, rcu_dereference */

struct obj {
	long refs;
	long payload[15];
};
static struct obj *s_cur;
static volatile int s_stop;
static long s_ops[8];

static void *reader(void *arg)
{
	long id = (long)arg, n = 0;

	while (!s_stop) {
		for (int i = 0; i < 1000; i++) {
			struct obj *o;

			reg();
			rd_lock();
			o = rcu_dereference(s_cur);
			__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
			rd_unlock();
			n += o->payload[0] != 42; /* use it */
			__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL);
		}
		s_ops[id] += 1000;
	}
	return (void *)n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int readers = argc > 1 ? atoi(argv[1]) : 2;
	double secs = argc > 2 ? atof(argv[2]) : 2, t0;
	pthread_t th[8];
	long gp = 0, total = 0;

	if (readers < 1 || readers > 8)
		return 2;
#ifndef FLAVOUR_BP
	pthread_key_create(&s_key, unreg);
	reg();
#endif
	s_cur = calloc(1, sizeof(*s_cur));
	s_cur->payload[0] = 42;
	for (long i = 0; i < readers; i++)
		pthread_create(&th[i], NULL, reader, (void *)i);
	t0 = now();
	while (now() - t0 < secs) {
		/* the writer: publish a copy, wait a grace period, wait for readers' references */
		struct obj *n = calloc(1, sizeof(*n)), *old;

		n->payload[0] = 42;
		old = rcu_xchg_pointer(&s_cur, n);
		sync_rcu();
		while (__atomic_load_n(&old->refs, __ATOMIC_ACQUIRE))
			;
		free(old);
		gp++;
		usleep(1000); /* ~1000 publications/s at most, far above what rtsnapd does */
	}
	s_stop = 1;
	for (int i = 0; i < readers; i++) {
		pthread_join(th[i], NULL);
		total += s_ops[i];
	}
	printf("| %s | %d | %.1f | %.1f | %.0f |\n", NAME, readers, total / secs / 1e6,
	       secs * 1e9 * readers / total, gp / secs);
	return 0;
}
