// SPDX-License-Identifier: GPL-2.0-or-later
/* names.c - iproute2's number-to-name tables, read the way `ip` reads them. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "rtsnap/names.h"

/* iproute2 reads these files a line at a time into 512-byte buffers (NAME_MAX_LEN) and prints
 * a name whole, however long: so do we. */
#define NAME_LINE_MAX 512

struct table_name {
	uint32_t id;
	char *name;
};

struct names {
	char *proto[256]; /* NULL: no name */
	char *scope[256];
	struct table_name *tables;
	size_t ntables;
};

static const char *const s_types[] = {
	[RTN_UNSPEC] = "none",
	[RTN_UNICAST] = "unicast",
	[RTN_LOCAL] = "local",
	[RTN_BROADCAST] = "broadcast",
	[RTN_ANYCAST] = "anycast",
	[RTN_MULTICAST] = "multicast",
	[RTN_BLACKHOLE] = "blackhole",
	[RTN_UNREACHABLE] = "unreachable",
	[RTN_PROHIBIT] = "prohibit",
	[RTN_THROW] = "throw",
	[RTN_NAT] = "nat",
	[RTN_XRESOLVE] = "xresolve",
};

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long x;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	x = strtoul(s, &end, 0);
	if (errno || *end || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/*
 * Every (id, name) line is kept, as iproute2 keeps every entry of its hash: the number is
 * printed with the newest name given to it, and every name ever given still parses.
 */
static int add_table(struct names *n, uint32_t id, const char *name)
{
	struct table_name *p;

	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	p = realloc(n->tables, (n->ntables + 1) * sizeof(*p));
	if (!p) {
		free(copy);
		return -ENOMEM;
	}
	n->tables = p;
	p[n->ntables].id = id;
	p[n->ntables].name = copy;
	n->ntables++;
	return 0;
}

/* Give number id of table (proto or scope) the name. 0 or -ENOMEM. */
static int set_name(char **slot, const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

/*
 * kind: 0 tables, 1 protocols, 2 scopes. Lines are read as iproute2's fread_id_name() reads
 * them: "0xHEX NAME" or "DECIMAL NAME" into an int, '#' lines are comments; a negative id
 * (which is what ids of 2^31 and more become) is skipped, and a line that parses as neither
 * ends the file ("Database ... is corrupted", entries read so far are kept).
 */
static int load_file(struct names *n, const char *path, int kind)
{
	char line[NAME_LINE_MAX], name[NAME_LINE_MAX];
	unsigned int hex;
	int id;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (sscanf(p, "0x%x %511s", &hex, name) == 2)
			id = (int)hex;
		else if (sscanf(p, "%d %511s", &id, name) != 2)
			break;
		if (id < 0)
			continue;
		if (kind == 0) {
			if (add_table(n, (uint32_t)id, name)) {
				fclose(f);
				return -ENOMEM;
			}
		} else if (id < 256 && set_name(kind == 1 ? &n->proto[id] : &n->scope[id], name)) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	return 0;
}

static int load_dir(struct names *n, const char *dir, int kind)
{
	struct dirent **ents;
	int cnt, ret = 0;

	cnt = scandir(dir, &ents, NULL, alphasort);
	if (cnt < 0)
		return 0;
	for (int i = 0; i < cnt; i++) {
		size_t l = strlen(ents[i]->d_name);
		char path[4096];

		if (!ret && l > 5 && strcmp(ents[i]->d_name + l - 5, ".conf") == 0 &&
		    ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			ret = load_file(n, path, kind);
		}
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int names_load(const char *dir, struct names **out)
{
	static const char *const protos[] = {
		[RTPROT_UNSPEC] = "unspec",
		[RTPROT_REDIRECT] = "redirect",
		[RTPROT_KERNEL] = "kernel",
		[RTPROT_BOOT] = "boot",
		[RTPROT_STATIC] = "static",
		[RTPROT_GATED] = "gated",
		[RTPROT_RA] = "ra",
		[RTPROT_MRT] = "mrt",
		[RTPROT_ZEBRA] = "zebra",
		[RTPROT_BIRD] = "bird",
		[RTPROT_DNROUTED] = "dnrouted",
		[RTPROT_XORP] = "xorp",
		[RTPROT_NTK] = "ntk",
		[RTPROT_DHCP] = "dhcp",
		[RTPROT_KEEPALIVED] = "keepalived",
		[RTPROT_BABEL] = "babel",
		[RTPROT_OPENR] = "openr",
		[RTPROT_BGP] = "bgp",
		[RTPROT_ISIS] = "isis",
		[RTPROT_OSPF] = "ospf",
		[RTPROT_RIP] = "rip",
		[RTPROT_EIGRP] = "eigrp",
	};
	char path[4096];
	struct names *n;
	int ret;

	if (!dir)
		dir = "/etc/iproute2";
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	ret = 0;
	for (size_t i = 0; !ret && i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i])
			ret = set_name(&n->proto[i], protos[i]);
	if (!ret)
		ret = set_name(&n->scope[RT_SCOPE_UNIVERSE], "global");
	if (!ret)
		ret = set_name(&n->scope[RT_SCOPE_NOWHERE], "nowhere");
	if (!ret)
		ret = set_name(&n->scope[RT_SCOPE_HOST], "host");
	if (!ret)
		ret = set_name(&n->scope[RT_SCOPE_LINK], "link");
	if (!ret)
		ret = set_name(&n->scope[RT_SCOPE_SITE], "site");
	if (!ret)
		ret = add_table(n, RT_TABLE_DEFAULT, "default");
	if (!ret)
		ret = add_table(n, RT_TABLE_MAIN, "main");
	if (!ret)
		ret = add_table(n, RT_TABLE_LOCAL, "local");
	snprintf(path, sizeof(path), "%s/rt_tables", dir);
	if (!ret)
		ret = load_file(n, path, 0);
	snprintf(path, sizeof(path), "%s/rt_tables.d", dir);
	if (!ret)
		ret = load_dir(n, path, 0);
	snprintf(path, sizeof(path), "%s/rt_protos", dir);
	if (!ret)
		ret = load_file(n, path, 1);
	snprintf(path, sizeof(path), "%s/rt_protos.d", dir);
	if (!ret)
		ret = load_dir(n, path, 1);
	snprintf(path, sizeof(path), "%s/rt_scopes", dir);
	if (!ret)
		ret = load_file(n, path, 2);
	if (ret) {
		names_free(n);
		return ret;
	}
	*out = n;
	return 0;
}

void names_free(struct names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->ntables; i++)
		free(n->tables[i].name);
	for (int i = 0; i < 256; i++) {
		free(n->proto[i]);
		free(n->scope[i]);
	}
	free(n->tables);
	free(n);
}

const char *names_table(const struct names *n, uint32_t id, char buf[12])
{
	for (size_t i = n ? n->ntables : 0; i-- > 0;)
		if (n->tables[i].id == id)
			return n->tables[i].name; /* the newest name for id */
	snprintf(buf, 12, "%u", id);
	return buf;
}

const char *names_protocol(const struct names *n, uint8_t id, char buf[12])
{
	if (n && n->proto[id])
		return n->proto[id];
	snprintf(buf, 12, "%u", id);
	return buf;
}

const char *names_scope(const struct names *n, uint8_t id, char buf[12])
{
	if (n && n->scope[id])
		return n->scope[id];
	snprintf(buf, 12, "%u", id);
	return buf;
}

const char *names_type(uint8_t type, char buf[12])
{
	if (type < sizeof(s_types) / sizeof(s_types[0]) && s_types[type])
		return s_types[type];
	snprintf(buf, 12, "%u", type);
	return buf;
}

int names_table_id(const struct names *n, const char *s, uint32_t *id)
{
	size_t best = SIZE_MAX;

	/* rtnl_rttable_a2n: hash buckets (id % 256) in order, newest entry first in a bucket */
	for (size_t i = 0; n && i < n->ntables; i++) {
		if (strcmp(n->tables[i].name, s))
			continue;
		if (best == SIZE_MAX || n->tables[i].id % 256 <= n->tables[best].id % 256)
			best = i;
	}
	if (best != SIZE_MAX) {
		*id = n->tables[best].id;
		return 0;
	}
	return parse_u32(s, id);
}

int names_protocol_id(const struct names *n, const char *s, uint8_t *id)
{
	uint32_t v;

	for (unsigned int i = 0; n && i < 256; i++) {
		if (n->proto[i] && strcmp(n->proto[i], s) == 0) {
			*id = (uint8_t)i;
			return 0;
		}
	}
	if (parse_u32(s, &v) || v > 255)
		return -EINVAL;
	*id = (uint8_t)v;
	return 0;
}

int names_type_id(const char *s, uint8_t *id)
{
	uint32_t v;

	for (unsigned int i = 0; i < sizeof(s_types) / sizeof(s_types[0]); i++) {
		if (s_types[i] && strcmp(s_types[i], s) == 0) {
			*id = (uint8_t)i;
			return 0;
		}
	}
	if (parse_u32(s, &v) || v > 255)
		return -EINVAL;
	*id = (uint8_t)v;
	return 0;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL; /* NULL and "" differ from a following name */
}

uint64_t names_hash(const struct names *n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!n)
		return 0;
	for (int i = 0; i < 256; i++) {
		h = hash_str(h, n->proto[i]);
		h = hash_str(h, n->scope[i]);
	}
	for (size_t i = 0; i < n->ntables; i++) {
		h = (h ^ n->tables[i].id) * 0x100000001b3ULL;
		h = hash_str(h, n->tables[i].name);
	}
	return h;
}
