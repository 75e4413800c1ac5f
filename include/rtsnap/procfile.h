/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfile.h - keep a file equal to the current snapshot's proc text (--proc-file).
 *
 * A thread of its own writes the file, so neither publication nor readers wait for the disk.
 * Each write goes to a temporary file in the same directory that is then renamed over the
 * path, so anyone who opens the path reads one complete snapshot. Bursts of publications
 * are coalesced: the thread always writes the newest snapshot.
 */
#ifndef RTSNAP_PROCFILE_H
#define RTSNAP_PROCFILE_H

struct snapshot_chain;
struct collector_stats;

/* Main thread. Start a writer (at most two: one per instance) for path (kept, not copied) of
 * chain's current snapshot, counting failed writes in st; opt names the option in the log.
 * 0 or a negative errno. */
int procfile_start(const char *opt, const char *path, struct snapshot_chain *chain,
		   struct collector_stats *st) __attribute__((warn_unused_result));
/* A collector thread, after a publication: every writer writes its chain's newest snapshot
 * soon (one whose snapshot did not change writes nothing). Never blocks. */
void procfile_notify(void);
/* Main thread. Write nothing more; join the threads. Safe if none started. */
void procfile_stop(void);

#endif
