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

/* Main thread. Start the writer for path (kept, not copied). 0 or a negative errno. */
int procfile_start(const char *path) __attribute__((warn_unused_result));
/* Collector thread, after a publication: write the newest snapshot soon. Never blocks. */
void procfile_notify(void);
/* Main thread. Write nothing more; join the thread. Safe if never started. */
void procfile_stop(void);

#endif
