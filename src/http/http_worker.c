// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_worker.c - one thread per worker driving one libmicrohttpd daemon (external epoll
 * mode); see http_worker.h for why.
 *
 * The loop: wait (epoll) on the daemon's own epoll fd and on the worker's eventfd, at most
 * until libmicrohttpd's next connection timeout (MHD_get_timeout); add the connections queued
 * by http_worker_add(); MHD_run() (which polls the daemon's epoll set with a zero timeout and
 * serves what is ready). The eventfd is written for a queued connection, a resumed one
 * (http_worker_wake after MHD_resume_connection, which in external mode does not wake the
 * loop itself) and the stop.
 *
 * Threads: the worker thread alone calls into its daemon (add, run, timeout), so libmicrohttpd's
 * callbacks for its connections all run on it. Other threads only queue (under lock), wake and
 * read the load (atomic). The main thread stops the thread before it stops the daemon.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rtsnap/http_worker.h"
#include "rtsnap/log.h"

struct pending {
	int fd;
	socklen_t alen;
	struct sockaddr_storage addr;
};

struct http_worker {
	struct MHD_Daemon *mhd;
	const char *name;
	pthread_t thread;
	int running;
	int efd, wakefd;
	int stop;	    /* atomic */
	unsigned int load;  /* atomic: queued + added - closed */
	int adding_started; /* worker thread: NOTIFY_STARTED seen during MHD_add_connection */
	pthread_mutex_t lock;
	struct pending *q; /* under lock */
	size_t nq, capq;
};

void http_worker_wake(struct http_worker *w)
{
	uint64_t one = 1;

	/* a full counter means a wakeup is pending anyway */
	(void)!write(w->wakefd, &one, sizeof(one));
}

unsigned int http_worker_load(const struct http_worker *w)
{
	return __atomic_load_n(&w->load, __ATOMIC_RELAXED);
}

void http_worker_closed(struct http_worker *w)
{
	w->adding_started = 1; /* a failed add that was started is counted down here */
	__atomic_sub_fetch(&w->load, 1, __ATOMIC_RELAXED);
}

int http_worker_add(struct http_worker *w, int fd, const struct sockaddr *addr, socklen_t alen)
{
	struct pending *p;

	if (alen > sizeof(p->addr)) {
		close(fd);
		return -EINVAL;
	}
	pthread_mutex_lock(&w->lock);
	if (w->nq == w->capq) {
		size_t cap = w->capq ? w->capq * 2 : 64;
		struct pending *q = realloc(w->q, cap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&w->lock);
			close(fd);
			return -ENOMEM;
		}
		w->q = q;
		w->capq = cap;
	}
	p = &w->q[w->nq++];
	p->fd = fd;
	p->alen = alen;
	memcpy(&p->addr, addr, alen);
	__atomic_add_fetch(&w->load, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&w->lock);
	http_worker_wake(w);
	return 0;
}

/* Worker thread: hand the queued connections to the daemon, in the order they came. */
static void add_queued(struct http_worker *w)
{
	struct pending *q;
	size_t n;

	pthread_mutex_lock(&w->lock);
	q = w->q;
	n = w->nq;
	w->q = NULL;
	w->nq = w->capq = 0;
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < n; i++) {
		w->adding_started = 0;
		/* in external mode the connection is started right here, on this thread */
		if (MHD_add_connection(w->mhd, q[i].fd, (struct sockaddr *)&q[i].addr, q[i].alen) !=
			MHD_YES &&
		    !w->adding_started)
			__atomic_sub_fetch(&w->load, 1, __ATOMIC_RELAXED);
	}
	free(q);
}

static void *worker_main(void *arg)
{
	struct http_worker *w = arg;
	struct epoll_event evs[4];

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		MHD_UNSIGNED_LONG_LONG to;
		int timeout = -1, n;

		if (MHD_get_timeout(w->mhd, &to) == MHD_YES)
			timeout = to > 60000 ? 60000 : (int)to;
		n = epoll_wait(w->efd, evs, 4, timeout);
		for (int i = 0; i < n; i++) {
			uint64_t v;

			if (evs[i].data.u32 == 1 && read(w->wakefd, &v, sizeof(v)) < 0 &&
			    errno != EAGAIN)
				log_debug("%s: eventfd: %s", w->name, strerror(errno));
		}
		add_queued(w);
		MHD_run(w->mhd);
	}
	return NULL;
}

int http_worker_new(struct MHD_Daemon *mhd, const char *name, struct http_worker **out)
{
	struct http_worker *w = calloc(1, sizeof(*w));
	const union MHD_DaemonInfo *di;
	struct epoll_event ev = { .events = EPOLLIN };
	int ret = -ENOMEM;

	if (!w) {
		MHD_stop_daemon(mhd);
		return -ENOMEM;
	}
	w->mhd = mhd;
	w->name = name;
	w->efd = w->wakefd = -1;
	pthread_mutex_init(&w->lock, NULL);
	di = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_EPOLL_FD);
	w->efd = epoll_create1(EPOLL_CLOEXEC);
	w->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!di || w->efd < 0 || w->wakefd < 0)
		goto fail;
	ev.data.u32 = 0;
	if (epoll_ctl(w->efd, EPOLL_CTL_ADD, di->epoll_fd, &ev) < 0)
		goto fail;
	ev.data.u32 = 1;
	if (epoll_ctl(w->efd, EPOLL_CTL_ADD, w->wakefd, &ev) < 0)
		goto fail;
	ret = pthread_create(&w->thread, NULL, worker_main, w);
	if (ret) {
		ret = -ret;
		goto fail;
	}
	w->running = 1;
	*out = w;
	return 0;
fail:
	if (ret == -ENOMEM && errno)
		ret = -errno;
	http_worker_free(w);
	return ret;
}

void http_worker_stop(struct http_worker *w)
{
	if (!w || !w->running)
		return;
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	http_worker_wake(w);
	pthread_join(w->thread, NULL);
	w->running = 0;
}

void http_worker_free(struct http_worker *w)
{
	if (!w)
		return;
	http_worker_stop(w);
	for (size_t i = 0; i < w->nq; i++)
		close(w->q[i].fd);
	free(w->q);
	if (w->mhd)
		MHD_stop_daemon(w->mhd);
	if (w->efd >= 0)
		close(w->efd);
	if (w->wakefd >= 0)
		close(w->wakefd);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
