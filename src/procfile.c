// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * procfile.c - the --proc-file writer thread.
 *
 * The collector calls procfile_notify() after each publication; the writer wakes, takes the
 * current snapshot as any reader does (snapshot_acquire), writes it to PATH.tmp.PID, renames
 * that over PATH and releases the snapshot. It skips generations it already wrote, and if
 * several publications happen during one write it writes only the newest next.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rtsnap/log.h"
#include "rtsnap/procfile.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

static const char *s_path;
static pthread_t s_thread;
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_cond = PTHREAD_COND_INITIALIZER;
static int s_pending, s_stop, s_running;

static int write_file(const struct snapshot *s)
{
	char tmp[4096];
	size_t off = 0;
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", s_path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (off < s->proc_len) {
		ssize_t n = write(fd, s->proc_text + off, s->proc_len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			close(fd);
			unlink(tmp);
			return err;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp, s_path) < 0) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	return 0;
}

static void *writer(void *arg)
{
	uint64_t written = 0;

	(void)arg;
	pthread_mutex_lock(&s_lock);
	for (;;) {
		struct snapshot *s;
		int ret;

		while (!s_pending && !s_stop)
			pthread_cond_wait(&s_cond, &s_lock);
		if (s_stop)
			break;
		s_pending = 0;
		pthread_mutex_unlock(&s_lock);
		s = snapshot_acquire();
		if (s && s->generation != written) {
			ret = write_file(s);
			if (ret) {
				stats_inc(g_stats.proc_file_errors);
				log_warn("cannot write %s: %s", s_path, strerror(-ret));
			} else {
				written = s->generation;
			}
		}
		snapshot_release(s);
		pthread_mutex_lock(&s_lock);
	}
	pthread_mutex_unlock(&s_lock);
	return NULL;
}

int procfile_start(const char *path)
{
	int ret;

	s_path = path;
	s_pending = 1; /* write the snapshot published before we started */
	ret = pthread_create(&s_thread, NULL, writer, NULL);
	if (ret)
		return -ret;
	s_running = 1;
	return 0;
}

void procfile_notify(void)
{
	if (!s_running)
		return;
	pthread_mutex_lock(&s_lock);
	s_pending = 1;
	pthread_cond_signal(&s_cond);
	pthread_mutex_unlock(&s_lock);
}

void procfile_stop(void)
{
	if (!s_running)
		return;
	pthread_mutex_lock(&s_lock);
	s_stop = 1;
	pthread_cond_signal(&s_cond);
	pthread_mutex_unlock(&s_lock);
	pthread_join(s_thread, NULL);
	s_running = 0;
}
