/*
 * test_log.c: the log facade (DESIGN house style 5): peer strings cannot
 * break a line, levels filter, log_warn names errno and no call changes
 * errno, fatal(x) exit 1. Output is captured by pointing stderr at a file.
 */
#include "autoconf.h"

#include <sys/wait.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "testlib.h"
#include "xmalloc.h"

static char	*capture_path;
static int	 capture_saved = -1;

static void
capture_start(void)
{
	char	*dir;
	int	 fd;

	dir = testlib_tmpdir();
	xasprintf(&capture_path, "%s/stderr", dir);
	free(dir);
	fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd != -1);
	capture_saved = dup(STDERR_FILENO);
	cr_assert(capture_saved != -1);
	cr_assert(dup2(fd, STDERR_FILENO) != -1);
	close(fd);
}

static char *
slurp(const char *path)
{
	FILE	*f;
	char	*buf;
	long	 n;

	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert(fseek(f, 0, SEEK_END) == 0);
	n = ftell(f);
	rewind(f);
	buf = xmalloc((size_t)n + 1);
	cr_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return (buf);
}

/* Restores stderr and returns what was written meanwhile (caller frees). */
static char *
capture_end(void)
{
	char	*out;

	cr_assert(dup2(capture_saved, STDERR_FILENO) != -1);
	close(capture_saved);
	capture_saved = -1;
	out = slurp(capture_path);
	free(capture_path);
	capture_path = NULL;
	return (out);
}

static size_t
count_lines(const char *s)
{
	size_t	n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return (n);
}

static void
escaped(const char *in, size_t max, const char *want)
{
	char	*out;

	out = log_escape(in, max);
	cr_assert_str_eq(out, want);
	free(out);
}

Test(log, escape)
{
	escaped("plain text", 0, "plain text");
	escaped("two\nlines", 0, "two\\nlines");
	escaped("cr\rtab\t", 0, "cr\\rtab\\t");
	escaped("\x1b[31mred", 0, "\\x1b[31mred");
	escaped("back\\slash", 0, "back\\\\slash");
	escaped("del\x7f", 0, "del\\x7f");
	escaped("caf\xc3\xa9", 0, "caf\\xc3\\xa9");
	escaped("\x01", 0, "\\x01");
	escaped(NULL, 0, "(null)");
	escaped("", 0, "");
	escaped("abcdef", 3, "abc...");
	escaped("abc", 3, "abc");
	escaped("a\nbcdef", 2, "a\\n...");
}

Test(log, lines_have_time_and_level)
{
	regex_t	 re;
	char	*out, *line, *save = NULL;
	int	 n = 0;

	cr_assert(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:"
	    "[0-9]{2}\\.[0-9]{3} (info|warn|debug): ", REG_EXTENDED) == 0);
	log_init(1, 1);
	capture_start();
	log_info("an info %d", 1);
	log_warnx("a warning %s", "x");
	log_debug("a debug line");
	out = capture_end();
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), n++)
		cr_assert(regexec(&re, line, 0, NULL, 0) == 0, "\"%s\"", line);
	cr_assert_eq(n, 3);
	regfree(&re);
	free(out);
}

Test(log, level_filtering)
{
	char	*out;

	log_init(1, 0);
	cr_assert_eq(log_get_level(), LOG_LEVEL_INFO);
	capture_start();
	log_debug("hidden-debug");
	log_info("shown-info");
	log_warnx("shown-warn");
	out = capture_end();
	cr_assert_null(strstr(out, "hidden-debug"));
	cr_assert_not_null(strstr(out, "info: shown-info\n"), "%s", out);
	cr_assert_not_null(strstr(out, "warn: shown-warn\n"), "%s", out);
	cr_assert_eq(count_lines(out), 2);
	free(out);

	log_set_level(LOG_LEVEL_WARN);
	capture_start();
	log_info("hidden-info");
	log_warnx("still-warn");
	out = capture_end();
	cr_assert_null(strstr(out, "hidden-info"));
	cr_assert_not_null(strstr(out, "still-warn"));
	free(out);

	log_set_level(LOG_LEVEL_DEBUG);
	capture_start();
	log_debug("now-debug");
	out = capture_end();
	cr_assert_not_null(strstr(out, "debug: now-debug\n"), "%s", out);
	free(out);

	/* Verbosity counts from info, clamped at both ends. */
	log_init(1, 1);
	cr_assert_eq(log_get_level(), LOG_LEVEL_DEBUG);
	log_init(1, 7);
	cr_assert_eq(log_get_level(), LOG_LEVEL_DEBUG);
	log_init(1, -1);
	cr_assert_eq(log_get_level(), LOG_LEVEL_WARN);
	log_init(1, -9);
	cr_assert_eq(log_get_level(), LOG_LEVEL_ERROR);
	capture_start();
	log_warnx("hidden-warn");
	out = capture_end();
	cr_assert_str_eq(out, "");
	free(out);
}

Test(log, peer_text_cannot_forge_lines)
{
	char	*out;

	log_init(1, 0);
	capture_start();
	log_warnx("pod %s refused", "evil\n2024-01-01 00:00:00.000 info: "
	    "forged\x1b[2J");
	out = capture_end();
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert_not_null(strstr(out, "evil\\n2024-01-01 00:00:00.000 info: "
	    "forged\\x1b[2J refused\n"), "%s", out);
	free(out);
}

Test(log, warn_appends_errno_and_errno_survives)
{
	char	*out, *want;

	log_init(1, 0);
	capture_start();
	errno = ENOENT;
	log_warn("open %s", "/nowhere");
	cr_assert_eq(errno, ENOENT);
	log_info("info");
	cr_assert_eq(errno, ENOENT);
	log_debug("filtered");
	cr_assert_eq(errno, ENOENT);
	errno = EACCES;
	log_warnx("no errno text");
	cr_assert_eq(errno, EACCES);
	out = capture_end();
	xasprintf(&want, "warn: open /nowhere: %s\n", strerror(ENOENT));
	cr_assert_not_null(strstr(out, want), "%s", out);
	cr_assert_null(strstr(out, strerror(EACCES)));
	cr_assert_not_null(strstr(out, "warn: no errno text\n"));
	free(want);
	free(out);
}

Test(log, long_message_is_cut)
{
	char	*big, *out;

	big = xmalloc(LOG_MESSAGE_MAX * 2);
	memset(big, 'z', LOG_MESSAGE_MAX * 2 - 1);
	big[LOG_MESSAGE_MAX * 2 - 1] = '\0';
	log_init(1, 0);
	capture_start();
	log_info("%s", big);
	out = capture_end();
	cr_assert_eq(count_lines(out), 1);
	cr_assert_not_null(strstr(out, "zzz...\n"));
	cr_assert_lt(strlen(out), (size_t)LOG_MESSAGE_MAX + 64);
	free(out);
	free(big);
}

/* Runs fatal or fatalx in a child; returns its stderr (caller frees). */
static char *
run_fatal(int with_errno, int *status)
{
	char	*dir, *path, *out;
	pid_t	 pid;
	int	 fd;

	dir = testlib_tmpdir();
	xasprintf(&path, "%s/stderr", dir);
	pid = fork();
	cr_assert(pid != -1);
	if (pid == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd == -1 || dup2(fd, STDERR_FILENO) == -1)
			_exit(99);
		/* Fatal messages pass whatever the level. */
		log_init(1, -9);
		errno = EACCES;
		if (with_errno)
			fatal("cannot bind %s", "sock");
		fatalx("impossible state %d", 7);
	}
	cr_assert(waitpid(pid, status, 0) == pid);
	out = slurp(path);
	free(path);
	free(dir);
	return (out);
}

Test(log, fatal_exits_1)
{
	char	*out, *want;
	int	 status;

	out = run_fatal(0, &status);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 1);
	cr_assert_not_null(strstr(out, "fatal: impossible state 7\n"), "%s",
	    out);
	free(out);

	out = run_fatal(1, &status);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 1);
	xasprintf(&want, "fatal: cannot bind sock: %s\n", strerror(EACCES));
	cr_assert_not_null(strstr(out, want), "%s", out);
	free(want);
	free(out);
}

Test(log, no_journal_falls_back_to_stderr)
{
	char	*out;

	if (access("/run/systemd/journal/socket", F_OK) == 0)
		cr_skip_test("a journal is listening on this machine");
	log_init(0, 0);
	capture_start();
	log_warnx("journal-less %s", "line");
	out = capture_end();
	cr_assert_not_null(strstr(out, "warn: journal-less line\n"), "%s",
	    out);
	free(out);
}
