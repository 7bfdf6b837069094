/*
 * log.c owns the log facade of log.h: the current level, the choice between
 * stderr and the journal, and the escaping every message goes through.
 * Messages are formatted into bounded stack buffers so that logging never
 * allocates and works while the heap is in trouble.
 */
#include "autoconf.h"

#include <sys/uio.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"
#include "xmalloc.h"

/* An escaped byte takes at most four ("\xNN"); then "..." and errno text. */
#define LOG_ESCAPED_MAX	(LOG_MESSAGE_MAX * 4 + 256)

static void	log_vlog(enum log_level, int, const char *, int,
		    const char *, const char *, va_list)
		    __attribute__((__format__(__printf__, 6, 0)));

/* libsystemd drops messages silently when journald is not there. */
#define LOG_JOURNAL_SOCKET	"/run/systemd/journal/socket"

static int		log_journal_ok;
static enum log_level	log_level = LOG_LEVEL_INFO;

static const struct {
	const char	*prefix;
	int		 priority;
} log_levels[] = {
	[LOG_LEVEL_ERROR] = { "fatal", LOG_CRIT },
	[LOG_LEVEL_WARN] = { "warn", LOG_WARNING },
	[LOG_LEVEL_INFO] = { "info", LOG_INFO },
	[LOG_LEVEL_DEBUG] = { "debug", LOG_DEBUG },
};

void
log_init(int foreground, int verbosity)
{
	int	level;

	tzset();
	log_journal_ok = !foreground && access(LOG_JOURNAL_SOCKET, W_OK) == 0;
	level = (int)LOG_LEVEL_INFO + verbosity;
	if (level < (int)LOG_LEVEL_ERROR)
		level = LOG_LEVEL_ERROR;
	if (level > (int)LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	log_level = (enum log_level)level;
}

void
log_set_level(enum log_level level)
{
	if (level <= LOG_LEVEL_DEBUG)
		log_level = level;
}

enum log_level
log_get_level(void)
{
	return (log_level);
}

/* Escapes len bytes of src into dst, which holds at least 4 * len + 1. */
static size_t
log_vis(char *dst, const char *src, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 c;
	size_t			 i, n = 0;

	for (i = 0; i < len; i++) {
		c = (unsigned char)src[i];
		if (c == '\\' || c == '\n' || c == '\r' || c == '\t') {
			dst[n++] = '\\';
			dst[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' :
			    c == '\t' ? 't' : '\\';
		} else if (c < 0x20 || c > 0x7e) {
			dst[n++] = '\\';
			dst[n++] = 'x';
			dst[n++] = hex[c >> 4];
			dst[n++] = hex[c & 0xf];
		} else
			dst[n++] = (char)c;
	}
	dst[n] = '\0';
	return (n);
}

char *
log_escape(const char *s, size_t max)
{
	char	*out;
	size_t	 len, n;
	int	 cut = 0;

	if (s == NULL)
		return (xstrdup("(null)"));
	len = strlen(s);
	if (max != 0 && len > max) {
		len = max;
		cut = 1;
	}
	out = xreallocarray(NULL, len + 1, 4);
	n = log_vis(out, s, len);
	if (cut)
		memcpy(out + n, "...", sizeof "...");
	return (out);
}

/* Writes all of buf to stderr, giving up quietly: there is nowhere to
 * report a failure to log. */
static void
log_write_stderr(const char *buf, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(STDERR_FILENO, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void
log_stderr(enum log_level level, const char *msg)
{
	char		 line[LOG_ESCAPED_MAX + 64], stamp[32] = "?";
	struct timespec	 ts;
	struct tm	 tm;
	int		 n;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		memset(&ts, 0, sizeof ts);
	else if (localtime_r(&ts.tv_sec, &tm) != NULL)
		strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
	n = snprintf(line, sizeof line, "%s.%03ld %s: %s\n", stamp,
	    (long)(ts.tv_nsec / 1000000), log_levels[level].prefix, msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = sizeof line - 1;
	log_write_stderr(line, (size_t)n);
}

static int
log_journal(enum log_level level, int saved_errno, const char *file,
    int lineno, const char *func, const char *msg)
{
	char		 prio[32], cfile[256], cline[32], cfunc[128];
	char		 ident[128], err[32];
	char		 message[LOG_ESCAPED_MAX + sizeof "MESSAGE="];
	struct iovec	 iov[7];
	int		 n = 0;

#define LOG_IOV(buf, ...) do {						\
	snprintf(buf, sizeof buf, __VA_ARGS__);				\
	iov[n].iov_base = buf;						\
	iov[n++].iov_len = strlen(buf);					\
} while (0)
	LOG_IOV(message, "MESSAGE=%s", msg);
	LOG_IOV(prio, "PRIORITY=%d", log_levels[level].priority);
	LOG_IOV(cfile, "CODE_FILE=%s", file);
	LOG_IOV(cline, "CODE_LINE=%d", lineno);
	LOG_IOV(cfunc, "CODE_FUNC=%s", func);
	LOG_IOV(ident, "SYSLOG_IDENTIFIER=%s", program_invocation_short_name);
	if (saved_errno != 0)
		LOG_IOV(err, "ERRNO=%d", saved_errno);
#undef LOG_IOV
	return (sd_journal_sendv(iov, n));
}

/* Formats, escapes and emits one message; errno is the caller's. */
static void
log_vlog(enum log_level level, int with_errno, const char *file, int lineno,
    const char *func, const char *fmt, va_list ap)
{
	char	raw[LOG_MESSAGE_MAX], msg[LOG_ESCAPED_MAX];
	int	saved_errno = errno, n;
	size_t	len;

	/* A format that fails to expand is still worth showing. */
	if ((n = vsnprintf(raw, sizeof raw, fmt, ap)) < 0)
		n = snprintf(raw, sizeof raw, "%s", fmt);
	len = n < 0 ? 0 : (size_t)n;
	if (len >= sizeof raw)
		len = sizeof raw - 1;
	len = log_vis(msg, raw, len);
	if (n >= (int)sizeof raw) {
		memcpy(msg + len, "...", sizeof "...");
		len += 3;
	}
	if (with_errno)
		snprintf(msg + len, sizeof msg - len, ": %s",
		    strerror(saved_errno));

	if (!log_journal_ok ||
	    log_journal(level, with_errno ? saved_errno : 0, file, lineno,
	    func, msg) < 0)
		log_stderr(level, msg);
	errno = saved_errno;
}

void
log_at(enum log_level level, int with_errno, const char *file, int lineno,
    const char *func, const char *fmt, ...)
{
	va_list	ap;
	int	saved_errno = errno;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	log_vlog(level, with_errno, file, lineno, func, fmt, ap);
	va_end(ap);
	errno = saved_errno;
}

void
fatal_at(int with_errno, const char *file, int lineno, const char *func,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vlog(LOG_LEVEL_ERROR, with_errno, file, lineno, func, fmt, ap);
	va_end(ap);
	exit(1);
}
