/*
 * The daemon's only logger, after the OpenBSD log.c facade: log_warn
 * (with strerror(errno)), log_warnx, log_info, log_debug, fatal and fatalx.
 * In the foreground (-f, tests) lines go to stderr with a timestamp and a
 * level prefix; otherwise each message goes to the journal with PRIORITY,
 * CODE_FILE/CODE_LINE/CODE_FUNC of the caller and MESSAGE as structured
 * fields, falling back to stderr when the journal socket is absent.
 *
 * Every message passes through log_escape's rules, so a string a peer sent
 * cannot break a line or smuggle terminal controls into the log. None of
 * these functions changes errno.
 */
#ifndef TOPOAWARE_LOG_H
#define TOPOAWARE_LOG_H

#include <stddef.h>

#include "config.h"		/* enum log_level */

/* A message longer than this (after formatting, before escaping) is cut
 * and marked with "...". */
#define LOG_MESSAGE_MAX	4096

/*
 * Chooses the backend and the starting level: verbosity 0 is
 * LOG_LEVEL_INFO, each step up or down moves one level (clamped). Before
 * log_init the logger writes to stderr at LOG_LEVEL_INFO.
 */
void	log_init(int foreground, int verbosity);
/* Changes the level at run time (config reload, `topoawarectl log-level`). */
void	log_set_level(enum log_level);
enum log_level log_get_level(void);

/*
 * A copy of at most max bytes of s (max 0: all of it) with every byte
 * outside printable ASCII, and the backslash, written as a C escape (\n,
 * \t, \\, \x1b); "..." is appended when s was cut. NULL gives "(null)".
 * The caller frees the result.
 */
char	*log_escape(const char *s, size_t max);

/* Behind the macros below; call those instead. */
void	log_at(enum log_level, int, const char *, int, const char *,
	    const char *, ...) __attribute__((__format__(__printf__, 6, 7)));
void	fatal_at(int, const char *, int, const char *, const char *, ...)
	    __attribute__((__format__(__printf__, 5, 6)))
	    __attribute__((__noreturn__));

#define log_warn(...)							\
	log_at(LOG_LEVEL_WARN, 1, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_warnx(...)							\
	log_at(LOG_LEVEL_WARN, 0, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_info(...)							\
	log_at(LOG_LEVEL_INFO, 0, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_debug(...)							\
	log_at(LOG_LEVEL_DEBUG, 0, __FILE__, __LINE__, __func__, __VA_ARGS__)
/* Both log at any level and exit(1); fatal appends strerror(errno). */
#define fatal(...)							\
	fatal_at(1, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define fatalx(...)							\
	fatal_at(0, __FILE__, __LINE__, __func__, __VA_ARGS__)

#endif
