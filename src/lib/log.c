// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c - one line per message on stderr, with level and monotonic-free wall time. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rtsnap/log.h"

static int s_level = LOG_LVL_INFO;
static const char *const s_names[] = { "err", "warn", "info", "debug" };

void log_set_level(enum log_level lvl)
{
	__atomic_store_n(&s_level, (int)lvl, __ATOMIC_RELAXED);
}

int log_parse_level(const char *s)
{
	for (unsigned int i = 0; i < sizeof(s_names) / sizeof(s_names[0]); i++)
		if (strcmp(s, s_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if ((int)lvl > __atomic_load_n(&s_level, __ATOMIC_RELAXED))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
		     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ rtsnapd %s: ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000, s_names[lvl]);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* one fputs per line so lines from different threads do not interleave */
	fprintf(stderr, "%s\n", line);
}
