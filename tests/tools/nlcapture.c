// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlcapture - record the raw netlink replies rtsnapd's collector asks for, for replay by
 * the unit tests: DIR/links.nl (RTM_GETLINK), DIR/routes.nl (RTM_GETROUTE, AF_INET6),
 * DIR/prefix.nl (RTM_GETROUTE with RTM_F_PREFIX). Each file is the concatenated messages of
 * one dump, NLMSG_DONE included. Usage: nlcapture DIR
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static int dump(int fd, uint16_t type, const void *body, size_t blen, const char *path)
{
	struct {
		struct nlmsghdr h;
		char b[64];
	} req = { 0 };
	static char buf[1 << 16];
	FILE *f = fopen(path, "w");
	int done = 0;

	if (!f)
		return -errno;
	req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(blen);
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = 1;
	memcpy(NLMSG_DATA(&req.h), body, blen);
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0) {
		fclose(f);
		return -errno;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		size_t left;

		if (n < 0) {
			fclose(f);
			return -errno;
		}
		left = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			fwrite(h, 1, NLMSG_ALIGN(h->nlmsg_len), f);
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = 1;
		}
	}
	return fclose(f) ? -errno : 0;
}

int main(int argc, char **argv)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct rtmsg rtm = { .rtm_family = AF_INET6 };
	struct rtmsg pfx = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
	char path[4096];
	int fd, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: nlcapture DIR\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/links.nl", argv[1]);
	ret = dump(fd, RTM_GETLINK, &ifi, sizeof(ifi), path);
	snprintf(path, sizeof(path), "%s/routes.nl", argv[1]);
	if (!ret)
		ret = dump(fd, RTM_GETROUTE, &rtm, sizeof(rtm), path);
	snprintf(path, sizeof(path), "%s/prefix.nl", argv[1]);
	if (!ret)
		ret = dump(fd, RTM_GETROUTE, &pfx, sizeof(pfx), path);
	close(fd);
	if (ret) {
		fprintf(stderr, "nlcapture: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
