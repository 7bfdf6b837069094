/*
 * testlib.c: the helpers of testlib.h. Paths come from the environment
 * that t/run-test and the Makefile set; nothing here reads the host's /sys.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>

#include "sysfs.h"
#include "testlib.h"
#include "xmalloc.h"

static const char *
env(const char *name)
{
	const char	*v = getenv(name);

	cr_assert(v != NULL && *v != '\0', "%s is not set: run the tests "
	    "through make check", name);
	return (v);
}

const char *
testlib_sysfs(const char *machine)
{
	static char	path[PATH_MAX];
	struct stat	sb;

	snprintf(path, sizeof path, "%s/%s", env("TOPOAWARE_SYSFS"), machine);
	cr_assert(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode),
	    "no recorded machine %s", path);
	return (path);
}

char *
testlib_tmpdir(void)
{
	char	*dir;

	xasprintf(&dir, "%s/dir.XXXXXX", env("TOPOAWARE_TMP"));
	cr_assert(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
	return (dir);
}

char *
testlib_mksysfs(const char *spec)
{
	char	*dir, *cmd;
	int	 rc;

	dir = testlib_tmpdir();
	xasprintf(&cmd, "'%s/topoaware-mksysfs' '%s' '%s'",
	    env("TOPOAWARE_BUILDDIR"), spec, dir);
	rc = system(cmd);
	cr_assert(rc == 0, "%s failed (%d)", cmd, rc);
	free(cmd);
	return (dir);
}

struct topology *
testlib_topology(const char *root)
{
	struct topology	*t = NULL;
	char		*cause = NULL;
	int		 rc;

	rc = sysfs_discover(root, &t, &cause);
	cr_assert(rc == 0, "discovery of %s failed: %s", root,
	    cause ? cause : "?");
	cr_assert(t != NULL);
	return (t);
}

struct topology *
testlib_machine(const char *machine)
{
	return (testlib_topology(testlib_sysfs(machine)));
}

struct cpuset *
testlib_set(const char *text)
{
	struct cpuset	*s = cpuset_new();
	char		*cause = NULL;

	cr_assert(cpuset_parse(s, text, &cause) == 0, "bad literal %s: %s",
	    text, cause ? cause : "?");
	return (s);
}

void
testlib_assert_set(const struct cpuset *s, const char *want)
{
	char	*got = cpuset_format(s);

	cr_assert_str_eq(got, want, "cpuset is \"%s\", expected \"%s\"", got,
	    want);
	free(got);
}

char *
testlib_read(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf;
	long	 n;

	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert(fseek(f, 0, SEEK_END) == 0);
	n = ftell(f);
	rewind(f);
	buf = xmalloc((size_t)n + 1);
	cr_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len != NULL)
		*len = (size_t)n;
	return (buf);
}

void
testlib_write(const char *path, const void *data, size_t len)
{
	FILE	*f;

	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	cr_assert(fwrite(data, 1, len, f) == len);
	cr_assert(fclose(f) == 0);
}

char *
testlib_join(const char *dir, const char *name)
{
	char	*p;

	xasprintf(&p, "%s/%s", dir, name);
	return (p);
}

int
testlib_exists(const char *path)
{
	struct stat	st;

	return (lstat(path, &st) == 0);
}

int
testlib_advice_taken(int advice)
{
	void	*m = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int	 ok;

	cr_assert_neq(m, MAP_FAILED);
	ok = madvise(m, 2 << 20, advice) == 0;
	cr_assert(ok || errno == EINVAL, "%s", strerror(errno));
	cr_assert_eq(munmap(m, 2 << 20), 0);
	return (ok);
}

/*
 * The line of /proc/self/smaps that starts with field ("VmFlags:",
 * "AnonHugePages:") in the entry of the mapping that holds p, into line
 * (size bytes); *start is the mapping's start. Fails the test when no
 * mapping holds p or it has no such field.
 */
static void
smaps_line(const void *p, const char *field, uintptr_t *start, char *line,
    size_t size)
{
	FILE		*f = fopen("/proc/self/smaps", "r");
	uintptr_t	 lo, hi;
	int		 in = 0, found = 0;

	cr_assert_not_null(f);
	while (fgets(line, (int)size, f) != NULL) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			if (in)
				*start = lo;
		} else if (in && strncmp(line, field, strlen(field)) == 0) {
			found = 1;
			break;
		}
	}
	fclose(f);
	cr_assert(found, "no mapping holds %p with %s", p, field);
}

int
testlib_mapping_flag(const void *p, uintptr_t *start, const char *flag)
{
	char	line[512];

	smaps_line(p, "VmFlags:", start, line, sizeof line);
	return (strstr(line + 8, flag) != NULL);
}

/* The kB of the smaps field of the mapping that holds p. */
static long
smaps_kib(const void *p, const char *field)
{
	char		line[512];
	uintptr_t	start;

	smaps_line(p, field, &start, line, sizeof line);
	return (atol(line + strlen(field)));
}

int
testlib_huge_collapse(void)
{
	size_t	 huge = (size_t)2 << 20;
	char	*m, *a, *b;
	int	 ok;

	/* Two whole huge pages in it, a and b. */
	m = mmap(NULL, 3 * huge, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	a = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
	b = a + huge;
	/* A fault in advised memory is given a huge page... */
	ok = madvise(a, huge, MADV_HUGEPAGE) == 0;
	if (ok) {
		a[0] = 1;
		ok = smaps_kib(a, "AnonHugePages:") >= 2048;
	}
	/* ...and small pages are collapsed into one on request. */
	if (ok) {
		cr_assert_eq(madvise(b, huge, MADV_NOHUGEPAGE), 0);
		b[0] = 1;
		cr_assert_eq(madvise(b, huge, MADV_HUGEPAGE), 0);
		ok = madvise(b, huge, 25 /* MADV_COLLAPSE */) == 0 &&
		    smaps_kib(b, "AnonHugePages:") >= 2048;
	}
	cr_assert_eq(munmap(m, 3 * huge), 0);
	return (ok);
}

int
testlib_faults_open(void)
{
	struct perf_event_attr	a;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.exclude_kernel = 1;	/* all perf_event_paranoid 2 allows */
	a.exclude_hv = 1;
	return ((int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}

long
testlib_faults(int fd)
{
	long long	n;

	cr_assert_eq(read(fd, &n, sizeof n), (ssize_t)sizeof n);
	return ((long)n);
}

long
testlib_minor_faults(void)
{
	struct rusage	ru;

	cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return (ru.ru_minflt);
}

char *
testlib_listing(const char *dir)
{
	struct dirent	**names;
	char		 *out = xstrdup(""), *next;
	int		  n, i;

	n = scandir(dir, &names, NULL, alphasort);
	cr_assert(n >= 0, "%s", dir);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") != 0 &&
		    strcmp(names[i]->d_name, "..") != 0) {
			xasprintf(&next, "%s%s%s", out, *out ? " " : "",
			    names[i]->d_name);
			free(out);
			out = next;
		}
		free(names[i]);
	}
	free(names);
	return (out);
}

void
testlib_assert_listing(const char *dir, const char *want)
{
	char	*got;

	got = testlib_listing(dir);
	cr_assert_str_eq(got, want, "%s holds \"%s\"", dir, got);
	free(got);
}
