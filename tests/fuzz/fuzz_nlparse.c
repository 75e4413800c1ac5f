// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_nlparse - every parser entry point on arbitrary bytes (libFuzzer; `make fuzz`). */
#include <stdlib.h>
#include <string.h>
#include "rtsnap/nlparse.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct nlparse_route pr;
	struct nlmsghdr *h;
	struct route_link l;
	struct route_nhobj o;
	struct prefix_key k;

	if (size < sizeof(*h) || size > 65536)
		return 0;
	h = malloc(size); /* exactly size bytes, so ASan sees any overread */
	memcpy(h, data, size);
	h->nlmsg_len = (uint32_t)size; /* the collector only passes messages that fit */
	(void)!nlparse_route(h, 1000, &pr);
	(void)!nlparse_link(h, &l);
	(void)!nlparse_nexthop(h, &o);
	(void)!nlparse_prefix_key(h, &pr, &k);
	free(h);
	return 0;
}
