// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_listen.c - listen sockets: the --listen forms (HOST:PORT, [V6]:PORT, unix:/path), a
 * unix socket's mode, group and stale file, and its removal at exit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rtsnap/http.h"
#include "rtsnap/http_listen.h"
#include "rtsnap/log.h"

int http_parse_listen(const char *spec, struct sockaddr_storage *ss, unsigned int *sslen)
{
	char host[128];
	const char *colon;
	char *end;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (strncmp(spec, "unix:", 5) == 0) {
		struct sockaddr_un *su = (struct sockaddr_un *)ss;
		size_t l = strlen(spec + 5);

		if (l == 0 || l >= sizeof(su->sun_path))
			return -EINVAL;
		su->sun_family = AF_UNIX;
		memcpy(su->sun_path, spec + 5, l + 1);
		*sslen = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + l + 1);
		return 0;
	}
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec + 1, (size_t)(rb - spec - 1));
		host[rb - spec - 1] = 0;
		colon = rb + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || (size_t)(colon - spec) >= sizeof(host) || strchr(spec, ':') != colon)
			return -EINVAL;
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		return -EINVAL;
	if (spec[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (strcmp(host, "localhost") == 0)
			strcpy(host, "127.0.0.1");
		if (!host[0] || strcmp(host, "*") == 0)
			strcpy(host, "0.0.0.0");
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -EINVAL;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*s4);
	}
	return 0;
}

/*
 * An existing file at a unix listener's path: a socket nobody answers on (a previous run
 * that died) is removed; a socket that answers (another instance) or anything else is
 * refused, and never removed.
 */
static int unix_stale(const struct sockaddr_un *su, unsigned int sslen)
{
	struct stat st;
	int fd, ret;

	if (lstat(su->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_err("%s exists and is not a socket: not touching it", su->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)su, sslen) == 0 ? -EADDRINUSE : -errno;
	close(fd);
	if (ret == -EADDRINUSE) {
		log_err("%s: another process answers on this socket (a second rtsnapd?)",
			su->sun_path);
		return ret;
	}
	if (ret != -ECONNREFUSED) {
		log_err("%s: cannot tell whether the socket is in use: %s", su->sun_path,
			strerror(-ret));
		return ret;
	}
	log_info("%s: removing the stale socket of an earlier run", su->sun_path);
	return unlink(su->sun_path) < 0 ? -errno : 0;
}

int http_listen_open(const struct http_opts *o, const char *spec, struct http_unix_sock *us)
{
	struct sockaddr_storage ss;
	unsigned int sslen;
	int fd, one = 1, ret;

	ret = http_parse_listen(spec, &ss, &sslen);
	if (ret)
		return ret;
	if (ss.ss_family == AF_UNIX) {
		ret = unix_stale((struct sockaddr_un *)&ss, sslen);
		if (ret)
			return ret;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (ss.ss_family == AF_UNIX) {
		const char *path = ((struct sockaddr_un *)&ss)->sun_path;
		mode_t old;

		/* nobody may connect before the mode and group are set: create it 0600 */
		old = umask(0177);
		ret = bind(fd, (struct sockaddr *)&ss, sslen) < 0 ? -errno : 0;
		umask(old);
		if (!ret && o->unix_gid != (unsigned int)-1 &&
		    chown(path, (uid_t)-1, (gid_t)o->unix_gid) < 0)
			ret = -errno;
		if (!ret && chmod(path, o->unix_mode) < 0)
			ret = -errno;
		if (!ret && lstat(path, &us->st) < 0)
			ret = -errno;
		if (!ret && listen(fd, 1024) < 0)
			ret = -errno;
		if (ret) {
			if (ret != -EADDRINUSE)
				unlink(path);
			close(fd);
			return ret;
		}
		memcpy(us->path, path, strnlen(path, 107));
		us->path[strnlen(path, 107)] = 0;
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 1024) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

void http_listen_unlink(struct http_unix_sock *us)
{
	struct stat st;

	/* only the socket this process created: never one that replaced it */
	if (us->path[0] && lstat(us->path, &st) == 0 && st.st_dev == us->st.st_dev &&
	    st.st_ino == us->st.st_ino)
		unlink(us->path);
	us->path[0] = 0;
}
