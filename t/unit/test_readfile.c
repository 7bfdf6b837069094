/*
 * test_readfile.c: the one reader of whole files. A regular file (or a
 * symlink to one) comes back whole and NUL-terminated; a FIFO, a folder
 * and a device are refused by kind without blocking; a file over the bound
 * is refused whether its size says so or only its content does (procfs and
 * sysfs files claim a size they do not hold); a missing one is -ENOENT.
 * Every cause names the file as the caller called it.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readfile.h"
#include "testlib.h"

/* Reading path must fail with rc and a cause holding each of want[]. */
static void
refused(const char *path, const char *what, size_t max, int rc,
    const char *const *want)
{
	char	*buf = (char *)1, *cause = NULL;
	size_t	 len = 99;
	int	 got, i;

	got = readfile(path, what, max, &buf, &len, &cause);
	cr_assert_eq(got, rc, "%s: got %d (%s), want %d", path, got,
	    cause ? cause : "no cause", rc);
	cr_assert_null(buf);
	cr_assert_eq(len, 0);
	cr_assert_not_null(cause);
	for (i = 0; want[i] != NULL; i++)
		cr_assert_not_null(strstr(cause, want[i]),
		    "\"%s\" lacks \"%s\"", cause, want[i]);
	free(cause);
}

Test(readfile, regular_file_whole)
{
	char	*dir, *path, *buf = NULL, *cause = NULL;
	size_t	 len = 0;
	int	 rc;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "config.json");
	testlib_write(path, "{\"a\": 1}\n", 9);
	rc = readfile(path, "config", 1024, &buf, &len, &cause);
	cr_assert_eq(rc, 0, "%s", cause ? cause : "");
	cr_assert_null(cause);
	cr_assert_eq(len, 9);
	cr_assert_str_eq(buf, "{\"a\": 1}\n");
	free(buf);

	/* Exactly at the bound is within it; len may be left out. */
	rc = readfile(path, "config", 9, &buf, NULL, &cause);
	cr_assert_eq(rc, 0, "%s", cause ? cause : "");
	cr_assert_str_eq(buf, "{\"a\": 1}\n");
	free(buf);

	/* An empty file is an empty string, not an error. */
	testlib_write(path, "", 0);
	rc = readfile(path, "config", 1024, &buf, &len, &cause);
	cr_assert_eq(rc, 0, "%s", cause ? cause : "");
	cr_assert_eq(len, 0);
	cr_assert_str_eq(buf, "");
	free(buf);
	free(path);
	free(dir);
}

Test(readfile, binary_content_counted_by_len)
{
	char	*dir, *path, *buf = NULL, *cause = NULL;
	size_t	 len = 0;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "blob");
	testlib_write(path, "a\0b", 3);
	cr_assert_eq(readfile(path, NULL, 16, &buf, &len, &cause), 0);
	cr_assert_eq(len, 3);
	cr_assert(memcmp(buf, "a\0b", 4) == 0);
	free(buf);
	free(path);
	free(dir);
}

/* Without O_NONBLOCK the open would wait for a writer: the timeout. */
Test(readfile, fifo_refused_without_blocking, .timeout = 10)
{
	const char	*want[] = { "config ", "is a FIFO, not a regular file",
			    NULL, NULL };
	char		*dir, *path;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "config.json");
	cr_assert(mkfifo(path, 0600) == 0);
	want[2] = path;
	refused(path, "config", 1024, -EINVAL, want);
	free(path);
	free(dir);
}

Test(readfile, symlink_to_fifo_refused, .timeout = 10)
{
	const char	*want[] = { "is a FIFO", NULL, NULL };
	char		*dir, *fifo, *link;

	dir = testlib_tmpdir();
	fifo = testlib_join(dir, "pipe");
	link = testlib_join(dir, "config.json");
	cr_assert(mkfifo(fifo, 0600) == 0);
	cr_assert(symlink("pipe", link) == 0);
	want[1] = link;
	refused(link, "config", 1024, -EINVAL, want);
	free(link);
	free(fifo);
	free(dir);
}

Test(readfile, directory_refused)
{
	const char	*want[] = { "state file ",
			    "is a directory, not a regular file", NULL, NULL };
	char		*dir, *path;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "state.json");
	cr_assert(mkdir(path, 0700) == 0);
	want[2] = path;
	refused(path, "state file", 1024, -EISDIR, want);
	free(path);
	free(dir);
}

Test(readfile, device_refused)
{
	const char	*want[] = { "/dev/null is a character device", NULL };

	refused("/dev/null", "token", 1024, -EINVAL, want);
}

Test(readfile, too_large_refused)
{
	const char	*want[] = { "kubeconfig ", "is larger than 8 bytes",
			    NULL, NULL };
	char		*dir, *path;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "kubeconfig");
	testlib_write(path, "123456789", 9);
	want[2] = path;
	refused(path, "kubeconfig", 8, -EFBIG, want);
	free(path);
	free(dir);
}

/*
 * procfs files say their size is 0, as sysfs ones say 4096: the content
 * decides, read in growing steps, bounded all the same.
 */
Test(readfile, size_hint_is_only_a_hint)
{
	const char	*want[] = { "/proc/self/status is larger than 64 bytes",
			    NULL };
	struct stat	 st;
	char		*buf = NULL, *cause = NULL;
	size_t		 len = 0;
	int		 rc;

	cr_assert(stat("/proc/self/status", &st) == 0);
	cr_assert_eq(st.st_size, 0, "procfs now gives a size: pick another");
	rc = readfile("/proc/self/status", NULL, 1024 * 1024, &buf, &len,
	    &cause);
	cr_assert_eq(rc, 0, "%s", cause ? cause : "");
	cr_assert_gt(len, 256, "shorter than the first buffer: %zu", len);
	cr_assert_eq(strlen(buf), len);
	cr_assert(strncmp(buf, "Name:", 5) == 0, "%.40s", buf);
	cr_assert(buf[len - 1] == '\n');
	free(buf);

	refused("/proc/self/status", NULL, 64, -EFBIG, want);
}

Test(readfile, missing_file)
{
	const char	*want[] = { "config ", NULL, NULL, NULL };
	char		*dir, *path, *deep;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "absent.json");
	want[1] = path;
	want[2] = strerror(ENOENT);
	refused(path, "config", 1024, -ENOENT, want);

	/* A file standing where a folder should be. */
	testlib_write(path, "x", 1);
	deep = testlib_join(path, "config.json");
	want[1] = deep;
	want[2] = strerror(ENOTDIR);
	refused(deep, "config", 1024, -ENOTDIR, want);
	free(deep);
	free(path);
	free(dir);
}

Test(readfile, symlink_to_regular_file)
{
	char	*dir, *target, *link, *buf = NULL, *cause = NULL;
	size_t	 len = 0;
	int	 rc;

	/* A ConfigMap volume: the name is a symlink through ..data. */
	dir = testlib_tmpdir();
	target = testlib_join(dir, "..2026_01_01");
	cr_assert(mkdir(target, 0700) == 0);
	free(target);
	target = testlib_join(dir, "..2026_01_01/config.json");
	testlib_write(target, "{}", 2);
	link = testlib_join(dir, "..data");
	cr_assert(symlink("..2026_01_01", link) == 0);
	free(link);
	link = testlib_join(dir, "config.json");
	cr_assert(symlink("..data/config.json", link) == 0);
	rc = readfile(link, "config", 1024, &buf, &len, &cause);
	cr_assert_eq(rc, 0, "%s", cause ? cause : "");
	cr_assert_eq(len, 2);
	cr_assert_str_eq(buf, "{}");
	free(buf);
	free(link);
	free(target);
	free(dir);
}

Test(readfile, cause_without_a_name_starts_with_the_path)
{
	char	*dir, *path, *buf = NULL, *cause = NULL;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "cpulist");
	cr_assert(mkdir(path, 0700) == 0);
	cr_assert_eq(readfile(path, NULL, 16, &buf, NULL, &cause), -EISDIR);
	cr_assert(strncmp(cause, path, strlen(path)) == 0, "%s", cause);
	cr_assert_str_eq(cause + strlen(path),
	    " is a directory, not a regular file");
	free(cause);
	free(path);
	free(dir);
}
