// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * procfile.c - the --proc-file (and --proc-file4) writer threads, one per file.
 *
 * The collectors call procfile_notify() after each publication; every writer wakes, takes the
 * current snapshot as any reader does (snapshot_acquire), writes it to a temporary file in the
 * directory of PATH, renames that over PATH and releases the snapshot. It skips generations
 * it already wrote, and if several publications happen during one write it writes only the
 * newest next.
 *
 * The daemon usually runs as root and the directory may be one other users can write to, so
 * nothing in it is trusted (a planted symlink at a predictable temporary name would make root
 * overwrite any file):
 *   - procfile_start() walks the directory from / one component at a time with
 *     O_PATH|O_DIRECTORY|O_NOFOLLOW and refuses a directory (or an ancestor) that is not
 *     owned by root or by the daemon's user, or that someone else can write to without the
 *     sticky bit (they could rename our file away and put their own in its place). A sticky
 *     directory writable by others (/tmp) is accepted with a warning. The directory fd found
 *     that way is kept; every later operation is relative to it, so renaming or replacing
 *     the directory path afterwards redirects nothing.
 *   - each write creates an unnamed file (O_TMPFILE) in that directory and links it under a
 *     random name (linkat fails if the name exists; it never follows a symlink there); where
 *     O_TMPFILE is not supported, the random name is created with O_CREAT|O_EXCL|O_NOFOLLOW,
 *     which also refuses any existing name or symlink. Either way the file written is one this
 *     thread just created.
 *   - renameat() within the directory fd replaces PATH; rename never follows a symlink at
 *     the target, it replaces the link itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtsnap/io.h"
#include "rtsnap/log.h"
#include "rtsnap/procfile.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

/* ".<base>.<16 hex digits>.tmp" */
#define TMP_EXTRA (1 + 1 + 16 + 4)
#define TMP_TRIES 16
#define FILE_MODE 0644
#define PROC_RETRY_MIN_MS 500 /* a failed write is tried again after this, doubling */
#define PROC_RETRY_MAX_MS 8000

#define PROCFILE_MAX 2 /* writers: --proc-file and --proc-file4 */

/* One writer: its file, its thread, the chain it writes from. */
struct pfw {
	const char *path;
	char base[NAME_MAX + 1 - TMP_EXTRA];
	int dirfd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending, stop, running;    /* under lock (running: set before the thread starts) */
	struct snapshot_chain *chain;  /* what it writes; set before the thread starts */
	struct collector_stats *stats; /* where its errors count; likewise */
};

static struct pfw s_w[PROCFILE_MAX];
static int s_nw; /* writers started (main thread) */

/* ---- the directory ---- */

/* Is this directory one that only we (root or the daemon's user) control? 0, or -EPERM with
 * the reason logged. last: the directory PATH is in (sticky and writable by others: a
 * warning only). */
static int dir_check(const char *shown, const struct stat *st, int last)
{
	uid_t me = geteuid();
	int group_ok = st->st_gid == 0 || st->st_gid == getegid();
	int others_write = (st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && !group_ok);

	if (st->st_uid != 0 && st->st_uid != me) {
		log_err("--proc-file: %s is owned by uid %u, not by root or uid %u: refusing to "
			"write there",
			shown, (unsigned int)st->st_uid, (unsigned int)me);
		return -EPERM;
	}
	if (others_write && !(st->st_mode & S_ISVTX)) {
		log_err("--proc-file: %s (mode %04o) is writable by other users and not sticky: "
			"they could replace the file; refusing to write there",
			shown, (unsigned int)(st->st_mode & 07777));
		return -EPERM;
	}
	if (others_write && last)
		log_warn("--proc-file: %s (mode %04o) is writable by other users; the file "
			 "cannot be redirected, but another user can take its name first",
			 shown, (unsigned int)(st->st_mode & 07777));
	return 0;
}

/*
 * Open dir (the operator's spelling, symlinks allowed) as the directory it resolves to now,
 * checking it and every ancestor. *out: an O_PATH fd.
 */
static int dir_open(const char *dir, int *out)
{
	char *real = realpath(dir, NULL);
	char *p, *next;
	struct stat st;
	int fd, nfd, ret;

	if (!real)
		return -errno;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	p = real;
	for (;;) {
		char c;

		if (fstat(fd, &st) < 0) {
			ret = -errno;
			goto fail;
		}
		c = *p;
		*p = 0; /* real[0..p) is the directory fd refers to */
		ret = dir_check(p == real ? "/" : real, &st, c == 0 || strcmp(p + 1, "") == 0);
		*p = c;
		if (ret)
			goto fail;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		next = strchr(p, '/');
		if (next)
			*next = 0;
		nfd = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			ret = -errno;
			goto fail;
		}
		close(fd);
		fd = nfd;
		p = next ? next : p + strlen(p);
		if (next)
			*next = '/';
	}
	*out = fd;
	ret = 0;
	goto out;
fail:
	close(fd);
out:
	free(real);
	return ret;
}

/* ---- one write ---- */

static int random_name(const struct pfw *w, char *buf, size_t len)
{
	unsigned char r[8];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	snprintf(buf, len, ".%s.%02x%02x%02x%02x%02x%02x%02x%02x.tmp", w->base, r[0], r[1], r[2],
		 r[3], r[4], r[5], r[6], r[7]);
	return 0;
}

/* Link the O_TMPFILE fd under a fresh random name (written to tmp). */
static int link_tmpfile(const struct pfw *w, int fd, char *tmp, size_t len)
{
	char proc[64];
	int ret;

	for (int i = 0; i < TMP_TRIES; i++) {
		ret = random_name(w, tmp, len);
		if (ret)
			return ret;
		if (linkat(fd, "", w->dirfd, tmp, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != ENOENT && errno != EPERM)
			return -errno;
		/* no CAP_DAC_READ_SEARCH: the same link through /proc */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, w->dirfd, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Create the temporary file; its name in tmp once it has one. fd or a negative errno. */
static int create_tmp(const struct pfw *w, char *tmp, size_t len, int *named)
{
	int fd, ret;

	*named = 0;
	fd = openat(w->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, FILE_MODE);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	for (int i = 0; i < TMP_TRIES; i++) {
		ret = random_name(w, tmp, len);
		if (ret)
			return ret;
		fd = openat(w->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    FILE_MODE);
		if (fd >= 0) {
			*named = 1;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int write_file(const struct pfw *w, const struct snapshot *s)
{
	char tmp[NAME_MAX + 1];
	int fd, named, err;

	fd = create_tmp(w, tmp, sizeof(tmp), &named);
	if (fd < 0)
		return fd;
	/* the mode asked for at creation went through the umask; readers need 0644 */
	err = fchmod(fd, FILE_MODE) < 0 ? -errno : 0;
	if (!err)
		err = render_proc_write(s, fd);
	if (!err && !named) {
		err = link_tmpfile(w, fd, tmp, sizeof(tmp));
		named = !err;
	}
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(w->dirfd, tmp, w->dirfd, w->base) < 0)
		err = -errno;
	if (err && named)
		unlinkat(w->dirfd, tmp, 0);
	return err;
}

static void *writer(void *arg)
{
	uint64_t written = 0;
	int64_t retry_ms = 0; /* after a failure: the wait before the next try (0: none) */
	struct pfw *w = arg;
	struct fault *fault = stats_fault(w->stats, FAULT_PROC_FILE);

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct snapshot *s;
		int ret;

		/* a failed write is tried again after a growing wait, without a publication:
		 * a full file system is seen to be fixed when space is freed */
		if (retry_ms && !w->pending && !w->stop) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += retry_ms / 1000;
			ts.tv_nsec += (retry_ms % 1000) * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			while (!w->pending && !w->stop &&
			       pthread_cond_clockwait(&w->cond, &w->lock, CLOCK_MONOTONIC, &ts) !=
				   ETIMEDOUT)
				;
		}
		while (!retry_ms && !w->pending && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		w->pending = 0;
		pthread_mutex_unlock(&w->lock);
		s = snapshot_acquire(w->chain);
		if (s && (snapshot_generation(s) != written || retry_ms)) {
			ret = write_file(w, s);
			if (ret) {
				stats_inc(w->stats->proc_file_errors);
				if (!retry_ms)
					log_warn("cannot write %s: %s; trying again", w->path,
						 strerror(-ret));
				fault_set(fault, ret, "cannot write %s", w->path);
				retry_ms = retry_ms ? retry_ms * 2 : PROC_RETRY_MIN_MS;
				if (retry_ms > PROC_RETRY_MAX_MS)
					retry_ms = PROC_RETRY_MAX_MS;
			} else {
				if (retry_ms)
					log_info("%s written again", w->path);
				written = snapshot_generation(s);
				retry_ms = 0;
				fault_clear(fault);
			}
		}
		snapshot_release(s);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* ---- lifecycle ---- */

int procfile_start(const char *opt, const char *path, struct snapshot_chain *chain,
		   struct collector_stats *st)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct pfw *w;
	char *dir;
	int ret;

	if (s_nw == PROCFILE_MAX)
		return -E2BIG;
	w = &s_w[s_nw];
	memset(w, 0, sizeof(*w));
	w->dirfd = -1;
	w->chain = chain;
	w->stats = st;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		log_err("%s: '%s' does not name a file", opt, path);
		return -EINVAL;
	}
	if (strlen(base) + TMP_EXTRA > NAME_MAX) {
		log_err("%s: file name '%s' is too long", opt, base);
		return -ENAMETOOLONG;
	}
	memcpy(w->base, base, strlen(base) + 1);
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	ret = dir_open(dir, &w->dirfd);
	if (ret && ret != -EPERM) /* dir_check() has said why */
		log_err("%s: directory %s: %s", opt, dir, strerror(-ret));
	free(dir);
	if (ret)
		return ret;
	w->path = path;
	w->pending = 1; /* write the snapshot published before we started */
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	ret = pthread_create(&w->thread, NULL, writer, w);
	if (ret) {
		close(w->dirfd);
		w->dirfd = -1;
		return -ret;
	}
	__atomic_store_n(&w->running, 1, __ATOMIC_RELEASE);
	s_nw++;
	return 0;
}

void procfile_notify(void)
{
	for (int i = 0; i < PROCFILE_MAX; i++) {
		struct pfw *w = &s_w[i];

		if (!__atomic_load_n(&w->running, __ATOMIC_ACQUIRE))
			continue;
		pthread_mutex_lock(&w->lock);
		w->pending = 1;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
}

void procfile_stop(void)
{
	for (int i = 0; i < s_nw; i++) {
		struct pfw *w = &s_w[i];

		if (!__atomic_load_n(&w->running, __ATOMIC_ACQUIRE))
			continue;
		pthread_mutex_lock(&w->lock);
		w->stop = 1;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		__atomic_store_n(&w->running, 0, __ATOMIC_RELEASE);
		close(w->dirfd);
		w->dirfd = -1;
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
	}
	s_nw = 0;
}
