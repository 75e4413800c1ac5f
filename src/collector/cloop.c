// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cloop.c - the one collector thread: every collector of the process in one poll loop.
 *
 * The member list is kept under s_lock and copied by the thread at the start of each pass, so
 * that cloop_add() and cloop_remove() never wait for a pass to reach them: an added member is
 * run from the next pass; a removed one may still be in the pass under way, which
 * cloop_remove() waits out (s_in_pass, s_passes). One poll() over every member's descriptors
 * per pass: a pass costs a few comparisons per idle member, and an idle member costs no
 * wake-up at all (CPU at rest stays zero, however many namespaces).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rtsnap/cloop.h"
#include "rtsnap/log.h"
#include "rtsnap/netns.h"

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_cond = PTHREAD_COND_INITIALIZER;
/* under s_lock: */
static struct cloop_member **s_members;
static size_t s_n, s_cap;
static int s_changed;	     /* the list changed since the thread copied it */
static int s_in_pass;	     /* the thread is in a pass with its copy */
static unsigned long s_passes; /* passes begun */
static int s_running, s_stop;
static pthread_t s_thread;
/* set before the thread starts, closed after it is joined: */
static int s_evfd = -1;
static int s_selffd = -1; /* the daemon's own namespace, to come back to after a step */
static int s_nice;	  /* the thread's nice value */

int64_t cloop_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void cloop_wake(void)
{
	uint64_t one = 1;

	if (s_evfd >= 0 && write(s_evfd, &one, sizeof(one)) < 0) {
		/* eventfd full: a wake-up is pending anyway */
	}
}

/* Run m's step inside its namespace. A step that cannot enter it is skipped (and logged
 * once in a while); one that cannot come back stops the daemon: every later step of every
 * member would run in the wrong namespace. */
static void run_step(struct cloop_member *m)
{
	static int64_t warned_us;

	if (m->nsfd >= 0 && setns(m->nsfd, CLONE_NEWNET) < 0) {
		int64_t now = cloop_now_us();

		if (now - warned_us > 10000000) {
			warned_us = now;
			log_warn("collector: cannot enter a namespace: %s", strerror(errno));
		}
		return;
	}
	m->step(m->arg, m->pfd);
	if (m->nsfd >= 0 && setns(s_selffd, CLONE_NEWNET) < 0) {
		log_err("collector: cannot come back to the daemon's namespace: %s",
			strerror(errno));
		abort();
	}
}

static void *loop_main(void *arg)
{
	struct cloop_member **mine = NULL;
	struct pollfd *pfd = NULL;
	size_t n = 0, cap = 0;

	(void)arg;
	/* a burst of kernel changes is the kernel's work first: yield the CPU to its writers
	 * (the nice value of a thread is its own on Linux) */
	if (s_nice > getpriority(PRIO_PROCESS, (id_t)gettid()) &&
	    setpriority(PRIO_PROCESS, (id_t)gettid(), s_nice) < 0) {
		/* the packaged unit's SystemCallFilter (~@resources) refuses it: documented */
		if (errno == EPERM || errno == EACCES)
			log_debug("collector: nice %d refused by a sandbox; keeping the daemon's",
				  s_nice);
		else
			log_warn("collector: cannot set nice %d: %s", s_nice, strerror(errno));
	}
	for (;;) {
		int64_t wake = INT64_MAX, now;
		struct timespec ts;
		size_t k = 1;
		int stop;

		pthread_mutex_lock(&s_lock);
		stop = s_stop;
		if (s_changed && !stop) {
			if (s_n > cap) {
				struct cloop_member **v = realloc(mine, s_n * sizeof(*v));
				struct pollfd *p = realloc(pfd, (2 * s_n + 1) * sizeof(*p));

				if (v)
					mine = v;
				if (p)
					pfd = p;
				if (v && p)
					cap = s_n;
			}
			if (s_n <= cap) {
				memcpy(mine, s_members, s_n * sizeof(*mine));
				n = s_n;
				s_changed = 0;
			} /* else out of memory: the old copy, and again next pass */
		}
		if (!pfd) {
			pfd = malloc(sizeof(*pfd));
			if (!pfd)
				stop = 1;
		}
		s_in_pass = !stop;
		s_passes++;
		pthread_mutex_unlock(&s_lock);
		if (stop)
			break;

		pfd[0] = (struct pollfd){ .fd = s_evfd, .events = POLLIN };
		for (size_t i = 0; i < n; i++) {
			struct cloop_member *m = mine[i];

			m->pfd[0] = m->pfd[1] = (struct pollfd){ .fd = -1 };
			m->wake_us = m->prepare(m->arg, m->pfd);
			if (m->wake_us < wake)
				wake = m->wake_us;
			pfd[k++] = m->pfd[0];
			pfd[k++] = m->pfd[1];
		}
		now = cloop_now_us();
		if (wake != INT64_MAX) {
			int64_t d = wake > now ? wake - now : 0;

			ts.tv_sec = d / 1000000;
			ts.tv_nsec = d % 1000000 * 1000;
		}
		if (ppoll(pfd, k, wake == INT64_MAX ? NULL : &ts, NULL) < 0 && errno != EINTR) {
			log_err("collector: poll: %s", strerror(errno));
			ts = (struct timespec){ .tv_nsec = 10000000 };
			nanosleep(&ts, NULL);
		}
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(s_evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				log_debug("eventfd read: %s", strerror(errno));
		}
		now = cloop_now_us();
		for (size_t i = 0; i < n; i++) {
			struct cloop_member *m = mine[i];

			m->pfd[0].revents = pfd[1 + 2 * i].revents;
			m->pfd[1].revents = pfd[2 + 2 * i].revents;
			if (m->pfd[0].revents || m->pfd[1].revents || now >= m->wake_us)
				run_step(m);
		}
		pthread_mutex_lock(&s_lock);
		s_in_pass = 0;
		pthread_cond_broadcast(&s_cond);
		pthread_mutex_unlock(&s_lock);
	}
	free(mine);
	free(pfd);
	return NULL;
}

int cloop_add(struct cloop_member *m)
{
	int ret = 0;

	pthread_mutex_lock(&s_lock);
	if (s_n == s_cap) {
		size_t cap = s_cap ? s_cap * 2 : 8;
		struct cloop_member **v = realloc(s_members, cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&s_lock);
			return -ENOMEM;
		}
		s_members = v;
		s_cap = cap;
	}
	if (!s_running) {
		s_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		s_selffd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (s_evfd < 0 || s_selffd < 0) {
			ret = -errno;
		} else {
			s_stop = 0;
			s_nice = m->nice;
			ret = -pthread_create(&s_thread, NULL, loop_main, NULL);
		}
		if (ret) {
			if (s_evfd >= 0)
				close(s_evfd);
			if (s_selffd >= 0)
				close(s_selffd);
			s_evfd = s_selffd = -1;
			pthread_mutex_unlock(&s_lock);
			return ret;
		}
		s_running = 1;
	}
	s_members[s_n++] = m;
	s_changed = 1;
	pthread_mutex_unlock(&s_lock);
	cloop_wake();
	return 0;
}

void cloop_remove(struct cloop_member *m)
{
	pthread_t join;
	size_t i;

	pthread_mutex_lock(&s_lock);
	for (i = 0; i < s_n && s_members[i] != m; i++)
		;
	if (i == s_n) {
		pthread_mutex_unlock(&s_lock);
		return;
	}
	memmove(&s_members[i], &s_members[i + 1], (s_n - i - 1) * sizeof(*s_members));
	s_n--;
	s_changed = 1;
	if (s_n) {
		unsigned long p0 = s_passes;

		/* the pass under way may hold m in its copy: wake it and wait it out */
		cloop_wake();
		while (s_in_pass && s_passes == p0)
			pthread_cond_wait(&s_cond, &s_lock);
		pthread_mutex_unlock(&s_lock);
		return;
	}
	/* the last member: stop the thread */
	s_stop = 1;
	s_running = 0;
	join = s_thread;
	pthread_mutex_unlock(&s_lock);
	cloop_wake();
	pthread_join(join, NULL);
	close(s_evfd);
	close(s_selffd);
	s_evfd = s_selffd = -1;
	free(s_members);
	s_members = NULL;
	s_cap = 0;
}
