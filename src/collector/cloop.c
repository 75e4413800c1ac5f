// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cloop.c - the one collector thread: every collector of the process in one event loop.
 *
 * The member list is kept under s_lock and copied by the thread at the start of each pass, so
 * that cloop_add() never waits for the loop: an added member runs from the next pass. A
 * removal is done by the thread itself at the start of a pass (it takes the member's
 * descriptors out of its epoll set), and cloop_remove() waits for that.
 *
 * The epoll set: each pass, each member's descriptors are compared with what is registered for
 * it, and only a change costs a call (a notification socket reopened, the wait for it held
 * back while a publication is due). A descriptor number is reused after a close, and a close
 * takes the descriptor out of the set on its own: so a registration is trusted only if the
 * member names the same opening (id) and the owner table (descriptor number -> member and
 * slot, the thread's alone) still says it is the member's. A member never waits on a
 * descriptor another member took over, and never takes out one it no longer owns.
 *
 * An idle member costs a few comparisons per pass and wakes nothing: CPU at rest stays zero
 * and the cost of a wait does not grow with the number of namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rtsnap/cloop.h"
#include "rtsnap/log.h"

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_cond = PTHREAD_COND_INITIALIZER;
/* under s_lock: */
static struct cloop_member **s_members;
static size_t s_n, s_cap;
static int s_changed;			/* the list changed since the thread copied it */
static struct cloop_member **s_removed; /* waiting for the thread to let go of them */
static size_t s_nremoved, s_removed_cap;
static int s_running, s_stop;
static pthread_t s_thread;
/* set before the thread starts, closed after it is joined: */
static int s_evfd = -1;
static int s_epfd = -1;
static int s_selffd = -1; /* the daemon's own namespace, to come back to after a step */
static int s_nice;	  /* the thread's nice value */
static int s_no_pwait2;	  /* the thread's: epoll_pwait2() is not there (ENOSYS) */

/* the thread's alone: which member and slot registered each descriptor number */
struct owner {
	struct cloop_member *m;
	int slot;
};
static struct owner *s_owner;
static size_t s_nowner;

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

static int owned(const struct cloop_member *m, int k, int fd)
{
	return fd >= 0 && (size_t)fd < s_nowner && s_owner[fd].m == m && s_owner[fd].slot == k;
}

/* Take m's slot k out of the set, if it is still m's (else a close took it out already). */
static void unregister(struct cloop_member *m, int k)
{
	int fd = m->reg_fd[k];

	if (owned(m, k, fd)) {
		/* a descriptor closed meanwhile is out already: EBADF or ENOENT */
		epoll_ctl(s_epfd, EPOLL_CTL_DEL, fd, NULL);
		s_owner[fd].m = NULL;
	}
	m->reg_fd[k] = -1;
}

/* Make the set wait for what m's slot k names now. */
static void sync_slot(struct cloop_member *m, int k)
{
	int fd = m->pfd[k].fd;
	uint32_t ev = fd >= 0 ? (uint32_t)(unsigned short)m->pfd[k].events : 0;
	struct epoll_event e = { .events = ev, .data.u64 = (uint64_t)(uintptr_t)m | (uint64_t)k };

	if (!ev) {
		unregister(m, k);
		return;
	}
	if (m->reg_fd[k] == fd && m->reg_id[k] == m->id[k] && owned(m, k, fd)) {
		if (m->reg_ev[k] != ev && epoll_ctl(s_epfd, EPOLL_CTL_MOD, fd, &e) == 0)
			m->reg_ev[k] = ev;
		return;
	}
	unregister(m, k);
	if ((size_t)fd >= s_nowner) {
		size_t n = (size_t)fd + 64;
		struct owner *v = realloc(s_owner, n * sizeof(*v));

		if (!v)
			return; /* not waited for: its deadline still steps it */
		memset(v + s_nowner, 0, (n - s_nowner) * sizeof(*v));
		s_owner = v;
		s_nowner = n;
	}
	if (epoll_ctl(s_epfd, EPOLL_CTL_ADD, fd, &e) < 0 &&
	    (errno != EEXIST || epoll_ctl(s_epfd, EPOLL_CTL_MOD, fd, &e) < 0)) {
		log_debug("collector: epoll_ctl(%d): %s", fd, strerror(errno));
		return;
	}
	s_owner[fd] = (struct owner){ m, k };
	m->reg_fd[k] = fd;
	m->reg_ev[k] = ev;
	m->reg_id[k] = m->id[k];
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
	struct epoll_event *evs = NULL;
	size_t n = 0, cap = 0;
	int nevs = 1;

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
	evs = malloc(sizeof(*evs));
	for (;;) {
		int64_t wake = INT64_MAX, now;
		struct timespec ts;
		int stop, got;

		pthread_mutex_lock(&s_lock);
		for (size_t i = 0; i < s_nremoved; i++) {
			unregister(s_removed[i], 0);
			unregister(s_removed[i], 1);
			s_removed[i]->gone = 1;
		}
		if (s_nremoved)
			pthread_cond_broadcast(&s_cond);
		s_nremoved = 0;
		stop = s_stop || !evs;
		if (s_changed && !stop) {
			if (s_n > cap) {
				struct cloop_member **v = realloc(mine, s_n * sizeof(*v));
				struct epoll_event *e = realloc(evs, (2 * s_n + 1) * sizeof(*e));

				if (v)
					mine = v;
				if (e)
					evs = e;
				if (v && e)
					cap = s_n;
			}
			if (s_n <= cap) {
				memcpy(mine, s_members, s_n * sizeof(*mine));
				n = s_n;
				nevs = (int)(2 * n + 1);
				s_changed = 0;
			} /* else out of memory: the old copy, and again next pass */
		}
		pthread_mutex_unlock(&s_lock);
		if (stop)
			break;

		for (size_t i = 0; i < n; i++) {
			struct cloop_member *m = mine[i];

			/* a member's state changes in its step only (from outside, through its
			 * own descriptor, which steps it): one not stepped waits as it did */
			if (m->fresh) {
				m->pfd[0] = m->pfd[1] = (struct pollfd){ .fd = -1 };
				m->id[0] = m->id[1] = 0;
				m->wake_us = m->prepare(m->arg, m->pfd, m->id);
				sync_slot(m, 0);
				sync_slot(m, 1);
				m->fresh = 0;
			}
			if (m->wake_us < wake)
				wake = m->wake_us;
			m->pfd[0].revents = m->pfd[1].revents = 0;
		}
		now = cloop_now_us();
		if (wake != INT64_MAX) {
			int64_t d = wake > now ? wake - now : 0;

			ts.tv_sec = d / 1000000;
			ts.tv_nsec = d % 1000000 * 1000;
		}
		got = s_no_pwait2
			  ? -1
			  : epoll_pwait2(s_epfd, evs, nevs, wake == INT64_MAX ? NULL : &ts, NULL);
		if (got < 0 && (s_no_pwait2 || errno == ENOSYS)) {
			/* before Linux 5.11, and under valgrind 3.19: milliseconds, rounded up
			 * (a deadline is never woken for early) */
			int64_t ms = -1;

			if (wake != INT64_MAX)
				ms = wake > now ? (wake - now + 999) / 1000 : 0;
			if (ms > INT32_MAX)
				ms = INT32_MAX;
			s_no_pwait2 = 1;
			got = epoll_wait(s_epfd, evs, nevs, (int)ms);
		}
		if (got < 0 && errno != EINTR) {
			log_err("collector: epoll_pwait2: %s", strerror(errno));
			ts = (struct timespec){ .tv_nsec = 10000000 };
			nanosleep(&ts, NULL);
		}
		for (int i = 0; i < got; i++) {
			uint64_t tag = evs[i].data.u64;
			struct cloop_member *m =
			    (struct cloop_member *)(uintptr_t)(tag & ~(uint64_t)1);

			if (!m) {
				uint64_t v;

				if (read(s_evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					log_debug("eventfd read: %s", strerror(errno));
				continue;
			}
			/* EPOLLIN, EPOLLERR and EPOLLHUP are POLLIN, POLLERR and POLLHUP */
			m->pfd[tag & 1].revents =
			    (short)(evs[i].events & (POLLIN | POLLERR | POLLHUP));
		}
		now = cloop_now_us();
		for (size_t i = 0; i < n; i++) {
			struct cloop_member *m = mine[i];

			if (m->pfd[0].revents || m->pfd[1].revents || now >= m->wake_us) {
				run_step(m);
				m->fresh = 1;
			}
		}
	}
	free(mine);
	free(evs);
	return NULL;
}

int cloop_add(struct cloop_member *m)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = 0 };
	int ret = 0;

	m->reg_fd[0] = m->reg_fd[1] = -1;
	m->gone = 0;
	m->fresh = 1;
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
		s_epfd = epoll_create1(EPOLL_CLOEXEC);
		s_selffd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (s_evfd < 0 || s_epfd < 0 || s_selffd < 0 ||
		    epoll_ctl(s_epfd, EPOLL_CTL_ADD, s_evfd, &e) < 0) {
			ret = -errno;
		} else {
			s_stop = 0;
			s_nice = m->nice;
			ret = -pthread_create(&s_thread, NULL, loop_main, NULL);
		}
		if (ret) {
			if (s_evfd >= 0)
				close(s_evfd);
			if (s_epfd >= 0)
				close(s_epfd);
			if (s_selffd >= 0)
				close(s_selffd);
			s_evfd = s_epfd = s_selffd = -1;
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
		if (s_nremoved == s_removed_cap) {
			size_t cap = s_removed_cap ? s_removed_cap * 2 : 8;
			struct cloop_member **v = realloc(s_removed, cap * sizeof(*v));

			while (!v) { /* the loop must let go of m before it is freed: wait */
				pthread_mutex_unlock(&s_lock);
				sleep(1);
				pthread_mutex_lock(&s_lock);
				v = realloc(s_removed, cap * sizeof(*v));
			}
			s_removed = v;
			s_removed_cap = cap;
		}
		s_removed[s_nremoved++] = m;
		/* the pass under way may hold m in its copy: wake it, and wait until the
		 * next one has taken m's descriptors out of the set */
		cloop_wake();
		while (!m->gone)
			pthread_cond_wait(&s_cond, &s_lock);
		pthread_mutex_unlock(&s_lock);
		return;
	}
	/* the last member: stop the thread (closing the set lets go of every descriptor) */
	s_stop = 1;
	s_running = 0;
	join = s_thread;
	pthread_mutex_unlock(&s_lock);
	cloop_wake();
	pthread_join(join, NULL);
	close(s_evfd);
	close(s_epfd);
	close(s_selffd);
	s_evfd = s_epfd = s_selffd = -1;
	free(s_members);
	s_members = NULL;
	s_cap = 0;
	free(s_removed);
	s_removed = NULL;
	s_removed_cap = 0;
	s_nremoved = 0;
	free(s_owner);
	s_owner = NULL;
	s_nowner = 0;
}
