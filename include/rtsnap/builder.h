/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * builder.h - compose a publishable snapshot of a mirror.
 *
 * The mirror (mirror.h) keeps the routes and their rendered segments; the builder takes them,
 * adds the iproute2 names (read again only when their files change), seals the snapshot and
 * builds its views (compose.h). One builder per mirror, used only by the thread that owns the
 * mirror (the collector's).
 */
#ifndef RTSNAP_BUILDER_H
#define RTSNAP_BUILDER_H

struct builder;
struct mirror;
struct snapshot;
struct snapshot_chain;

/* A builder that reads the names of names_dir (NULL = /etc/iproute2). *out set only on
 * success; 0 or a negative errno. */
int builder_new(const char *names_dir, struct builder **out) __attribute__((warn_unused_result));
/* NULL is fine. */
void builder_free(struct builder *b);

/*
 * The thread that owns m. An immutable snapshot of m made for chain c (links, nexthop objects,
 * every table with its placeholder rows, names), sealed with its views, ready for
 * snapshot_publish(). Costs what changed in m since the last one (mirror_add_segments()).
 * *out set only on success; 0 or a negative errno (m unharmed).
 */
int builder_compose(struct builder *b, struct mirror *m, struct snapshot_chain *c,
		    struct snapshot **out) __attribute__((warn_unused_result));

/* How many times the names files were read (each publication checks them, reads on change). */
unsigned long builder_names_loads(const struct builder *b);

#endif
