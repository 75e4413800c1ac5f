// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * netns.c - named network namespaces: valid names, entering one, following /run/netns.
 *
 * The watch keeps the set of names it has reported, sorted, so that it reports each change
 * once and can tell what went when it has to read the directory again (an inotify queue
 * overflow, the directory itself deleted or created).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "rtsnap/netns.h"

int netns_name_valid(const char *name)
{
	size_t len = name ? strnlen(name, NETNS_NAME_MAX + 1) : 0;

	return len && len <= NETNS_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

int netns_open(const char *dir, const char *name, int *out)
{
	char path[PATH_MAX];
	int fd;

	if (!netns_name_valid(name))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir ? dir : NETNS_DIR, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

int netns_enter_fd(int fd, int *saved)
{
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	if (self < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET) < 0) {
		int ret = -errno; /* EINVAL: not a namespace (not mounted yet, or a stray file) */

		close(self);
		return ret;
	}
	*saved = self;
	return 0;
}

int netns_enter(const char *dir, const char *name, int *saved)
{
	int fd, ret = netns_open(dir, name, &fd);

	if (ret)
		return ret;
	ret = netns_enter_fd(fd, saved);
	close(fd);
	return ret;
}

int netns_leave(int saved)
{
	int ret = setns(saved, CLONE_NEWNET) < 0 ? -errno : 0;

	close(saved);
	return ret;
}

/* ---- the watch ---- */

struct netns_watch {
	char *dir, *parent, *base; /* base: dir's last component, in parent */
	int fd;			   /* inotify */
	int wd_dir, wd_parent;	   /* -1: not watched */
	netns_fn fn;
	void *arg;
	char **names; /* reported present, sorted */
	size_t n, cap;
};

static long find(const struct netns_watch *w, const char *name)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(w->names[mid], name);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

static int add_name(struct netns_watch *w, const char *name)
{
	long i = find(w, name);
	size_t at;
	char *copy;

	if (i >= 0 || !netns_name_valid(name))
		return 0;
	at = (size_t)(-i - 1);
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		char **v = realloc(w->names, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->names = v;
		w->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	memmove(&w->names[at + 1], &w->names[at], (w->n - at) * sizeof(*w->names));
	w->names[at] = copy;
	w->n++;
	w->fn(w->arg, name, 1);
	return 0;
}

static void del_name(struct netns_watch *w, const char *name)
{
	long i = find(w, name);

	if (i < 0)
		return;
	w->fn(w->arg, name, 0);
	free(w->names[i]);
	memmove(&w->names[i], &w->names[i + 1], (w->n - (size_t)i - 1) * sizeof(*w->names));
	w->n--;
}

/* Read the directory again: report what appeared and what went since the set was made. */
static int rescan(struct netns_watch *w)
{
	struct dirent **ents = NULL;
	int cnt = w->wd_dir >= 0 ? scandir(w->dir, &ents, NULL, alphasort) : 0;
	int ret = 0;

	if (cnt < 0)
		cnt = 0; /* gone meanwhile: everything went */
	/* gone: in the set, not in the directory (O(names^2), only when the directory must be
	 * read again) */
	for (size_t i = w->n; i-- > 0;) {
		int there = 0;

		for (int k = 0; k < cnt && !there; k++)
			there = !strcmp(ents[k]->d_name, w->names[i]);
		if (!there)
			del_name(w, w->names[i]);
	}
	for (int k = 0; k < cnt; k++) {
		if (!ret && ents[k]->d_type != DT_DIR)
			ret = add_name(w, ents[k]->d_name);
		free(ents[k]);
	}
	free(ents);
	return ret;
}

/* Watch dir if it exists (else its parent, for its creation); then rescan. */
static int arm(struct netns_watch *w)
{
	w->wd_dir = inotify_add_watch(w->fd, w->dir,
				      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
					  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
	if (w->wd_dir < 0 && errno != ENOENT && errno != ENOTDIR)
		return -errno;
	if (w->wd_parent < 0) {
		w->wd_parent =
		    inotify_add_watch(w->fd, w->parent, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
		if (w->wd_parent < 0 && w->wd_dir < 0)
			return -errno; /* neither the directory nor its parent can be watched */
	}
	return rescan(w);
}

int netns_watch_new(const char *dir, netns_fn fn, void *arg, struct netns_watch **out)
{
	struct netns_watch *w = calloc(1, sizeof(*w));
	char *slash;
	int ret;

	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->wd_dir = w->wd_parent = -1;
	w->fn = fn;
	w->arg = arg;
	w->dir = strdup(dir ? dir : NETNS_DIR);
	w->parent = w->dir ? strdup(w->dir) : NULL;
	if (!w->dir || !w->parent) {
		netns_watch_free(w);
		return -ENOMEM;
	}
	slash = strrchr(w->parent, '/');
	if (!slash || slash == w->parent) {
		netns_watch_free(w);
		return -EINVAL; /* an absolute path below / */
	}
	*slash = 0;
	w->base = w->dir + (slash - w->parent) + 1;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ret = w->fd < 0 ? -errno : arm(w);
	if (ret) {
		netns_watch_free(w);
		return ret;
	}
	*out = w;
	return 0;
}

int netns_watch_fd(const struct netns_watch *w)
{
	return w->fd;
}

int netns_watch_read(struct netns_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int again = 0, ret = 0;

	for (;;) {
		ssize_t len = read(w->fd, buf, sizeof(buf));

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				ret = -errno;
			break;
		}
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				again = 1;
			} else if (ev->wd == w->wd_parent && ev->len &&
				   !strcmp(ev->name, w->base)) {
				again = 1; /* the directory appeared: watch it */
			} else if (ev->wd == w->wd_dir) {
				if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
					w->wd_dir = -1;
					again = 1;
				} else if (ev->len && (ev->mask & IN_ISDIR)) {
					/* not a namespace */
				} else if (ev->len && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
					if (!ret)
						ret = add_name(w, ev->name);
				} else if (ev->len && (ev->mask & (IN_DELETE | IN_MOVED_FROM))) {
					del_name(w, ev->name);
				}
			}
		}
	}
	if (again && !ret) {
		if (w->wd_dir >= 0) {
			inotify_rm_watch(w->fd, w->wd_dir);
			w->wd_dir = -1;
		}
		ret = arm(w);
	}
	return ret;
}

void netns_watch_free(struct netns_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->n; i++)
		free(w->names[i]);
	free(w->names);
	free(w->dir);
	free(w->parent);
	free(w);
}
