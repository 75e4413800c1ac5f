/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log.h - the one place that writes diagnostics (stderr, one line per message). */
#ifndef RTSNAP_LOG_H
#define RTSNAP_LOG_H

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Set the threshold. Call from main before threads start. */
void log_set_level(enum log_level lvl);
/* Parse "err|warn|info|debug"; returns the level or -EINVAL. */
int log_parse_level(const char *s);
/* Any thread. */
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
