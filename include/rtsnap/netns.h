/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netns.h - named network namespaces (/run/netns/NAME, as `ip netns` makes them): which names
 * are valid, opening sockets inside one, and following the directory as namespaces come and
 * go (inotify, no polling).
 *
 * Threads: netns_enter()/netns_leave() switch the calling thread only (setns); everything a
 * caller opens in between lives in the namespace for good. A watch belongs to one thread.
 */
#ifndef RTSNAP_NETNS_H
#define RTSNAP_NETNS_H

#include <stddef.h>

#define NETNS_DIR "/run/netns"
#define NETNS_NAME_MAX 255

/*
 * Whether name can be a namespace of dir: what `ip netns add` accepts and a directory entry
 * can be (1 to NETNS_NAME_MAX bytes, no '/', not "." or "..", no NUL). Spaces, quotes and
 * markup are valid: whoever prints a name escapes it. 1 or 0.
 */
int netns_name_valid(const char *name);

/*
 * Switch the calling thread into the namespace dir/name (dir NULL = NETNS_DIR). *saved gets
 * a handle on the thread's namespace before, for netns_leave(). 0 or a negative errno
 * (-ENOENT: no such name; -EINVAL: the name is not (yet) a namespace, e.g. `ip netns add`
 * has created the file and not mounted it yet); on error the thread has not moved.
 */
int netns_enter(const char *dir, const char *name, int *saved) __attribute__((warn_unused_result));
/*
 * A handle on the namespace dir/name (dir NULL = NETNS_DIR) in *fd, for netns_enter_fd() or
 * setns(): it stays on that namespace even if the name is deleted and made again. 0 or a
 * negative errno (-ENOENT: no such name).
 */
int netns_open(const char *dir, const char *name, int *fd) __attribute__((warn_unused_result));
/* As netns_enter(), into the namespace of the handle fd (netns_open()); fd stays open. */
int netns_enter_fd(int fd, int *saved) __attribute__((warn_unused_result));
/* Back into the namespace saved by netns_enter(), and close the handle. 0 or a negative
 * errno (the thread stays where it is then: the caller should stop using it). */
int netns_leave(int saved) __attribute__((warn_unused_result));

/* A namespace that appeared (added = 1) or went (added = 0) in the watched directory. */
typedef void (*netns_fn)(void *arg, const char *name, int added);

struct netns_watch;

/*
 * Follow dir (NULL = NETNS_DIR): fn(arg, name, 1) once for every valid name there now, then
 * netns_watch_read() reports names as they are created, renamed or deleted. The directory may
 * not exist yet (`ip netns` creates it with the first namespace): then its parent is watched
 * until it appears. *out set only on success; 0 or a negative errno.
 */
int netns_watch_new(const char *dir, netns_fn fn, void *arg, struct netns_watch **out)
    __attribute__((warn_unused_result));
/* The descriptor to poll for POLLIN. */
int netns_watch_fd(const struct netns_watch *w);
/* After POLLIN: report what changed (non-blocking). 0 or a negative errno. On an inotify
 * overflow every name is reported again as it is now (added ones, and gone ones). */
int netns_watch_read(struct netns_watch *w) __attribute__((warn_unused_result));
/* NULL is fine. */
void netns_watch_free(struct netns_watch *w);

#endif
