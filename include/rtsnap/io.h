/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io.h - writing a whole buffer to a file descriptor.
 */
#ifndef RTSNAP_IO_H
#define RTSNAP_IO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Write all len bytes of p to fd, retrying short writes and EINTR. 0 or a negative errno. */
static inline int io_write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
