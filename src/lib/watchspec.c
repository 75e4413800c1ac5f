// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watchspec.c - watched routes as configured: the spec parser, immutable lists, and the
 * process's current list (watchspec.h).
 *
 * Who owns what: main builds a list (--watch, --watch-file; again at SIGHUP), seals it and
 * publishes it here with rcu_xchg_pointer(); the previous list's reference (the registry's)
 * is dropped after a grace period, so a reader that dereferenced it inside its read-side
 * section has taken its own reference by then. Readers (the collector thread at each
 * publication, HTTP workers) take a reference in a read-side section and put it when done:
 * the last put frees the list, on whichever thread.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>
#include <urcu-bp.h>

#include "rtsnap/names.h"
#include "rtsnap/watchspec.h"

#define NETNS_NAME_LIMIT 255 /* as netns.h's NETNS_NAME_MAX (a file name) */

struct watch_list {
	unsigned long refs; /* atomic */
	size_t n, cap;
	struct watch_spec *w;
	uint32_t *by_name; /* positions sorted by name, after seal */
};

/* As snapshot.c: TSan cannot see liburcu's barriers nor its grace period. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
static char s_grace;
#define list_xchg(v) __atomic_exchange_n(&s_current, (v), __ATOMIC_ACQ_REL)
#define list_load() __atomic_load_n(&s_current, __ATOMIC_ACQUIRE)
#define read_unlock() (__tsan_release(&s_grace), urcu_bp_read_unlock())
#define synchronize() (urcu_bp_synchronize_rcu(), __tsan_acquire(&s_grace))
#else
#define list_xchg(v) rcu_xchg_pointer(&s_current, (v))
#define list_load() rcu_dereference(s_current)
#define read_unlock() urcu_bp_read_unlock()
#define synchronize() urcu_bp_synchronize_rcu()
#endif

static struct watch_list *s_current; /* the process's list; NULL: none */
static uint64_t s_serial;	     /* atomic: lists published */

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void watch_spec_clear(struct watch_spec *w)
{
	if (!w)
		return;
	free(w->name);
	free(w->spec);
	free(w->netns);
	free(w->table_name);
	memset(w, 0, sizeof(*w));
}

/* An address of either family into w (family from the text: a ':' is IPv6). */
static int parse_addr(const char *s, struct watch_spec *w)
{
	memset(w->addr, 0, sizeof(w->addr));
	if (strchr(s, ':')) {
		w->family = AF_INET6;
		return inet_pton(AF_INET6, s, w->addr) == 1 ? 0 : -EINVAL;
	}
	w->family = AF_INET;
	return inet_pton(AF_INET, s, w->addr) == 1 ? 0 : -EINVAL;
}

/* TARGET: default, default6, default4, ADDR[/LEN], lookup:ADDR. */
static int parse_target(const char *t, struct watch_spec *w, char *err, size_t errlen)
{
	char buf[64], *slash, *end;
	unsigned long len;
	unsigned int bits;

	w->kind = WATCH_ROUTE;
	if (!strcmp(t, "default") || !strcmp(t, "default6")) {
		w->family = AF_INET6;
		w->len = 0;
		return 0;
	}
	if (!strcmp(t, "default4")) {
		w->family = AF_INET;
		w->len = 0;
		return 0;
	}
	if (!strncmp(t, "lookup:", 7)) {
		w->kind = WATCH_LOOKUP;
		if (strchr(t + 7, '/'))
			return fail(err, errlen, "lookup: takes an address, not a prefix");
		if (strlen(t + 7) >= sizeof(buf) || parse_addr(t + 7, w))
			return fail(err, errlen, "'%s' is not an IPv6 or IPv4 address", t + 7);
		w->len = w->family == AF_INET6 ? 128 : 32;
		return 0;
	}
	if (strlen(t) >= sizeof(buf))
		return fail(err, errlen, "'%.64s' is not a prefix", t);
	strcpy(buf, t);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (parse_addr(buf, w))
		return fail(err, errlen,
			    "'%s' is not a prefix (ADDR/LEN, default, default4 or lookup:ADDR)", t);
	bits = w->family == AF_INET6 ? 128 : 32;
	len = bits;
	if (slash) {
		errno = 0;
		len = strtoul(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end || errno || len > bits)
			return fail(err, errlen, "bad prefix length in '%s' (0 to %u)", t, bits);
	}
	w->len = (uint8_t)len;
	/* a route's prefix has no host bits (the kernel refuses or clears them): a watch
	 * that names some would never match, say so */
	for (unsigned int i = w->len; i < bits; i++)
		if (w->addr[i / 8] & (0x80 >> (i % 8)))
			return fail(err, errlen, "'%s' has host bits set after /%u", t, w->len);
	return 0;
}

static int valid_name_char(int c)
{
	return isalnum(c) || strchr("_.:/-@+", c);
}

int watch_spec_parse(const struct names *n, const char *text, struct watch_spec *out, char *err,
		     size_t errlen)
{
	char tbuf[12], buf[WATCH_SPEC_MAX + 1], norm[WATCH_SPEC_MAX + 1], *tok[8], *save = NULL, *p,
										   *eq;
	const char *name = NULL, *netns = "";
	size_t ntok = 0, nl = 0;
	int have_table = 0, have_netns = 0, ret;
	struct watch_spec w = { 0 };

	memset(out, 0, sizeof(*out));
	if (strlen(text) > WATCH_SPEC_MAX)
		return fail(err, errlen, "longer than %d bytes", WATCH_SPEC_MAX);
	for (p = (char *)text; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return fail(err, errlen, "control character in the spec");
	strcpy(buf, text);
	for (p = strtok_r(buf, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
		if (ntok == sizeof(tok) / sizeof(tok[0]))
			return fail(err, errlen, "too many words (TARGET[ table T][ netns N])");
		tok[ntok++] = p;
	}
	if (!ntok)
		return fail(err, errlen, "empty spec");
	/* the spec text, blanks squeezed: the default name */
	for (size_t i = 0; i < ntok; i++)
		nl += (size_t)snprintf(norm + nl, sizeof(norm) - nl, "%s%s", i ? " " : "", tok[i]);
	eq = strchr(tok[0], '=');
	if (eq) {
		*eq = '\0';
		name = tok[0];
		tok[0] = eq + 1;
		if (!*name)
			return fail(err, errlen, "empty NAME before '='");
		if (strlen(name) > WATCH_NAME_MAX)
			return fail(err, errlen, "NAME longer than %d bytes", WATCH_NAME_MAX);
		for (p = (char *)name; *p; p++)
			if (!valid_name_char((unsigned char)*p))
				return fail(err, errlen,
					    "NAME '%s': letters, digits and _.:/-@+ only", name);
		if (!*tok[0])
			return fail(err, errlen, "no TARGET after '%s='", name);
	}
	ret = parse_target(tok[0], &w, err, errlen);
	if (ret)
		return ret;
	w.table = RT_TABLE_MAIN;
	for (size_t i = 1; i < ntok; i += 2) {
		if (i + 1 >= ntok)
			return fail(err, errlen, "'%s' needs a value", tok[i]);
		if (!strcmp(tok[i], "table")) {
			if (have_table++)
				return fail(err, errlen, "table given twice");
			if (names_table_id(n, tok[i + 1], &w.table) || w.table == 0)
				return fail(err, errlen,
					    "table '%s' is not a table number (1 to 4294967295) or "
					    "a name of rt_tables",
					    tok[i + 1]);
		} else if (!strcmp(tok[i], "netns")) {
			if (have_netns++)
				return fail(err, errlen, "netns given twice");
			netns = tok[i + 1];
			if (strlen(netns) > NETNS_NAME_LIMIT || strchr(netns, '/') ||
			    !strcmp(netns, ".") || !strcmp(netns, ".."))
				return fail(err, errlen, "netns '%.64s' is not a namespace name",
					    netns);
		} else {
			return fail(err, errlen, "unknown word '%.64s' (table or netns expected)",
				    tok[i]);
		}
	}
	w.name = strdup(name ? name : norm);
	w.spec = strdup(norm);
	w.netns = strdup(netns);
	w.table_name = strdup(names_table(n, w.table, tbuf));
	if (!w.name || !w.spec || !w.netns || !w.table_name) {
		watch_spec_clear(&w);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

int watch_list_new(struct watch_list **out)
{
	struct watch_list *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->refs = 1;
	*out = l;
	return 0;
}

int watch_list_add(struct watch_list *l, const struct names *n, const char *text, char *err,
		   size_t errlen)
{
	struct watch_spec w;
	int ret;

	if (l->n == WATCH_MAX) {
		snprintf(err, errlen, "more than %d watches", WATCH_MAX);
		return -E2BIG;
	}
	ret = watch_spec_parse(n, text, &w, err, errlen);
	if (ret)
		return ret;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct watch_spec *v = realloc(l->w, cap * sizeof(*v));

		if (!v) {
			watch_spec_clear(&w);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		l->w = v;
		l->cap = cap;
	}
	l->w[l->n++] = w;
	return 0;
}

int watch_list_add_file(struct watch_list *l, const struct names *n, const char *path, char *err,
			size_t errlen)
{
	char line[WATCH_SPEC_MAX + 2], why[256];
	unsigned long lineno = 0;
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *p = line, *hash;

		lineno++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n' && !feof(f)) {
			snprintf(err, errlen, "%s:%lu: longer than %d bytes", path, lineno,
				 WATCH_SPEC_MAX);
			ret = -EINVAL;
			break;
		}
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		hash = strchr(p, '#');
		if (hash)
			*hash = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		ret = watch_list_add(l, n, p, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "%s:%lu: %s", path, lineno, why);
			break;
		}
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	return ret;
}

static const struct watch_list *s_sorting; /* qsort has no argument: the list being sealed */

static int by_name(const void *a, const void *b)
{
	return strcmp(s_sorting->w[*(const uint32_t *)a].name,
		      s_sorting->w[*(const uint32_t *)b].name);
}

int watch_list_seal(struct watch_list *l, char *err, size_t errlen)
{
	l->by_name = malloc((l->n + 1) * sizeof(*l->by_name));
	if (!l->by_name) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++)
		l->by_name[i] = (uint32_t)i;
	/* main thread only builds lists: the file-static comparison argument is not shared */
	s_sorting = l;
	qsort(l->by_name, l->n, sizeof(*l->by_name), by_name);
	s_sorting = NULL;
	for (size_t i = 1; i < l->n; i++)
		if (!strcmp(l->w[l->by_name[i]].name, l->w[l->by_name[i - 1]].name))
			return fail(err, errlen, "watch name '%.128s' given twice",
				    l->w[l->by_name[i]].name);
	return 0;
}

size_t watch_list_count(const struct watch_list *l)
{
	return l ? l->n : 0;
}

const struct watch_spec *watch_list_at(const struct watch_list *l, size_t i)
{
	return &l->w[i];
}

long watch_list_find(const struct watch_list *l, const char *name)
{
	size_t lo = 0, hi = l ? l->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->w[l->by_name[mid]].name, name);

		if (!c)
			return l->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct watch_list *watch_list_get(struct watch_list *l)
{
	if (l)
		__atomic_add_fetch(&l->refs, 1, __ATOMIC_RELAXED);
	return l;
}

void watch_list_put(struct watch_list *l)
{
	if (!l || __atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < l->n; i++)
		watch_spec_clear(&l->w[i]);
	free(l->w);
	free(l->by_name);
	free(l);
}

void watch_list_publish(struct watch_list *l)
{
	struct watch_list *old = list_xchg(l);

	__atomic_add_fetch(&s_serial, 1, __ATOMIC_RELEASE);
	if (old) {
		/* a reader between its dereference and its reference is done after this */
		synchronize();
		watch_list_put(old);
	}
}

struct watch_list *watch_list_current(void)
{
	struct watch_list *l;

	urcu_bp_read_lock();
	/* the registry holds a reference until a grace period after the swap: never 0 here */
	l = watch_list_get(list_load());
	read_unlock();
	return l;
}

uint64_t watch_list_serial(void)
{
	return __atomic_load_n(&s_serial, __ATOMIC_ACQUIRE);
}
