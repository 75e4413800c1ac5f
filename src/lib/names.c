// SPDX-License-Identifier: GPL-2.0-or-later
/* names.c - iproute2's number-to-name tables, read the way `ip` reads them. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
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
	long refs;	  /* atomic: names_get(), names_free() */
	uint64_t hash;	  /* of every name, computed once loaded (names_hash()) */
	char *proto[256]; /* NULL: no name */
	char *scope[256];
	char *realm[256];   /* rt_realms (IPv4 RTA_FLOW) */
	char *dsfield[256]; /* rt_dsfield (IPv4 TOS) */
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
 * kind: 0 tables, 1 protocols, 2 scopes, 3 realms, 4 dsfield values. Lines are read as iproute2's fread_id_name() reads
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
		} else if (id < 256 && set_name(kind == 1   ? &n->proto[id]
						: kind == 2 ? &n->scope[id]
						: kind == 3 ? &n->realm[id]
							    : &n->dsfield[id],
						name)) {
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

static uint64_t hash_all(const struct names *n);

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
	n->refs = 1;
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
	snprintf(path, sizeof(path), "%s/rt_realms", dir); /* no .d directory for these two */
	if (!ret)
		ret = load_file(n, path, 3);
	snprintf(path, sizeof(path), "%s/rt_dsfield", dir);
	if (!ret)
		ret = load_file(n, path, 4);
	if (ret) {
		names_free(n);
		return ret;
	}
	n->hash = hash_all(n);
	*out = n;
	return 0;
}

struct names *names_get(struct names *n)
{
	if (n)
		__atomic_add_fetch(&n->refs, 1, __ATOMIC_RELAXED);
	return n;
}

void names_free(struct names *n)
{
	if (!n || __atomic_sub_fetch(&n->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (size_t i = 0; i < n->ntables; i++)
		free(n->tables[i].name);
	for (int i = 0; i < 256; i++) {
		free(n->proto[i]);
		free(n->scope[i]);
		free(n->realm[i]);
		free(n->dsfield[i]);
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

const char *names_realm(const struct names *n, uint32_t id, char buf[12])
{
	if (n && id < 256 && n->realm[id])
		return n->realm[id];
	snprintf(buf, 12, "%u", id);
	return buf;
}

const char *names_dsfield(const struct names *n, uint8_t id, char buf[12])
{
	if (n && n->dsfield[id])
		return n->dsfield[id];
	snprintf(buf, 12, "0x%02x", id);
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

static uint64_t hash_all(const struct names *n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < 256; i++) {
		h = hash_str(h, n->proto[i]);
		h = hash_str(h, n->scope[i]);
		h = hash_str(h, n->realm[i]);
		h = hash_str(h, n->dsfield[i]);
	}
	for (size_t i = 0; i < n->ntables; i++) {
		h = (h ^ n->tables[i].id) * 0x100000001b3ULL;
		h = hash_str(h, n->tables[i].name);
	}
	return h;
}

uint64_t names_hash(const struct names *n)
{
	return n ? n->hash : 0;
}

/* ---- the cache: read the files again only when one of them changed ---- */

struct names_cache {
	char *dir;
	struct names *n;      /* the cache's reference; NULL before the first load */
	uint64_t stamp;	      /* of the files n was read from */
	uint64_t gen;	      /* the watch's generation when stamp was taken */
	int watched;	      /* the watch covers dir: stamp only when its generation moves */
	int untrusted;	      /* a file or directory is a symlink: the watch may miss a change */
	unsigned long loads;  /* times the files were read */
	unsigned long stamps; /* times they were stat'ed */
};

/*
 * The process's watch on the names directories (inotify, one descriptor for every cache
 * and thread, kept for the process's life): stat'ing the files and scanning the .d
 * directories at every publication cost 30 us, a fifth of a publication's fixed cost at
 * 1 000 000 routes. A change to any watched directory or a file in it (written, replaced,
 * created, removed, its attributes changed; or the queue overflowed) moves the generation,
 * and every cache stats the files again at its next get. An event is queued by the system
 * call that makes the change, so a get that starts after it returns sees it. The watches are
 * added again whenever events arrive: a .d directory created later is then watched before
 * the stamp that follows reads it. No descriptor (inotify refused): every get stats, as
 * without the watch.
 */
#define WATCH_DIRS 8

static struct {
	pthread_mutex_t lock;
	int fd; /* -1 before the first cache, -2 when inotify is not available */
	uint64_t gen;
	char *dirs[WATCH_DIRS];
	unsigned int ndirs;
} s_watch = { PTHREAD_MUTEX_INITIALIZER, -1, 1, { NULL }, 0 };

#define WATCH_MASK                                                                     \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB | \
	 IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF)

/* Under s_watch.lock: watch dir and its .d directories (those that exist). */
static void watch_add_locked(const char *dir)
{
	static const char *const sub[] = { "", "/rt_tables.d", "/rt_protos.d" };
	char path[4096];

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, sub[i]);
		(void)inotify_add_watch(s_watch.fd, path, WATCH_MASK | IN_ONLYDIR);
	}
}

/* Register dir with the watch. 1 when changes there will move the generation, else 0. */
static int watch_dir(const char *dir)
{
	int ok = 0;

	pthread_mutex_lock(&s_watch.lock);
	if (s_watch.fd == -1) {
		s_watch.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (s_watch.fd < 0)
			s_watch.fd = -2;
	}
	if (s_watch.fd >= 0) {
		for (unsigned int i = 0; i < s_watch.ndirs && !ok; i++)
			ok = strcmp(s_watch.dirs[i], dir) == 0;
		if (!ok && s_watch.ndirs < WATCH_DIRS &&
		    inotify_add_watch(s_watch.fd, dir, WATCH_MASK | IN_ONLYDIR) >= 0) {
			s_watch.dirs[s_watch.ndirs] = strdup(dir);
			ok = s_watch.dirs[s_watch.ndirs] != NULL;
			s_watch.ndirs += ok;
		}
		if (ok)
			watch_add_locked(dir);
	}
	pthread_mutex_unlock(&s_watch.lock);
	return ok;
}

/* Read what the watch queued; the generation after it. */
static uint64_t watch_poll(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	uint64_t gen;
	int moved = 0;

	pthread_mutex_lock(&s_watch.lock);
	while (read(s_watch.fd, buf, sizeof(buf)) > 0)
		moved = 1;
	if (moved) {
		s_watch.gen++;
		for (unsigned int i = 0; i < s_watch.ndirs; i++)
			watch_add_locked(s_watch.dirs[i]);
	}
	gen = s_watch.gen;
	pthread_mutex_unlock(&s_watch.lock);
	return gen;
}

static uint64_t stamp_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL; /* FNV-1a step, a word at a time */
	return h ^ (h >> 29);
}

/* Identity and change times of path, or a fixed value when it is missing; *link set when
 * path is a symbolic link (a change to its target is not seen by the watch). */
static uint64_t stamp_path(uint64_t h, const char *path, int *link)
{
	struct stat st;

	h = hash_str(h, path);
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		*link = 1;
	if (stat(path, &st) < 0)
		return stamp_mix(h, 0x6d697373ULL);
	h = stamp_mix(h, (uint64_t)st.st_dev);
	h = stamp_mix(h, (uint64_t)st.st_ino);
	h = stamp_mix(h, (uint64_t)st.st_size);
	h = stamp_mix(h,
		      (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec);
	return stamp_mix(h, (uint64_t)st.st_ctim.tv_sec * 1000000000ULL +
				(uint64_t)st.st_ctim.tv_nsec);
}

/* A directory's *.conf files as load_dir() chooses them, and the directory itself. */
static uint64_t stamp_dir(uint64_t h, const char *dir, int *link)
{
	struct dirent **ents;
	int cnt = scandir(dir, &ents, NULL, alphasort);

	h = stamp_path(h, dir, link);
	for (int i = 0; i < cnt; i++) {
		size_t l = strlen(ents[i]->d_name);
		char path[4096];

		if (l > 5 && strcmp(ents[i]->d_name + l - 5, ".conf") == 0 &&
		    ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			h = stamp_path(h, path, link);
		}
		free(ents[i]);
	}
	if (cnt >= 0)
		free(ents);
	return h;
}

/* The files names_load() reads. *link set when one of them, or dir, is a symbolic link. */
static uint64_t names_stamp(const char *dir, int *link)
{
	static const char *const files[] = { "rt_tables", "rt_protos", "rt_scopes", "rt_realms",
					     "rt_dsfield" };
	char path[4096];
	uint64_t h = 0xcbf29ce484222325ULL;

	h = stamp_path(h, dir, link);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		h = stamp_path(h, path, link);
	}
	snprintf(path, sizeof(path), "%s/rt_tables.d", dir);
	h = stamp_dir(h, path, link);
	snprintf(path, sizeof(path), "%s/rt_protos.d", dir);
	return stamp_dir(h, path, link);
}

int names_cache_new(const char *dir, struct names_cache **out)
{
	struct names_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->dir = strdup(dir ? dir : "/etc/iproute2");
	if (!c->dir) {
		free(c);
		return -ENOMEM;
	}
	c->watched = watch_dir(c->dir);
	*out = c;
	return 0;
}

int names_cache_get(struct names_cache *c, struct names **out)
{
	uint64_t gen = c->watched ? watch_poll() : 0, stamp;
	struct names *n;
	int link = 0, ret;

	/* the generation is read before the files are: a change made while they are read
	 * moves it again, and the next get reads them again */
	if (c->n && c->watched && !c->untrusted && gen == c->gen) {
		*out = names_get(c->n);
		return 0;
	}
	stamp = names_stamp(c->dir, &link);
	c->stamps++;
	if (!c->n || stamp != c->stamp) {
		ret = names_load(c->dir, &n);
		if (ret)
			return ret;
		names_free(c->n);
		c->n = n;
		c->stamp = stamp;
		c->loads++;
	}
	c->gen = gen;
	c->untrusted = link;
	*out = names_get(c->n);
	return 0;
}

unsigned long names_cache_loads(const struct names_cache *c)
{
	return c->loads;
}

unsigned long names_cache_stamps(const struct names_cache *c)
{
	return c->stamps;
}

void names_cache_free(struct names_cache *c)
{
	if (!c)
		return;
	names_free(c->n);
	free(c->dir);
	free(c);
}
