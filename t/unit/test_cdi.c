/*
 * test_cdi.c: the per-claim CDI spec files of R-DRA and R-CLAIM-8. The
 * content is read back with jansson and every field checked against the
 * CDI rules of protocols.md §6; a rewrite replaces the file by rename (a
 * reader holding the old one keeps it whole); removal, refused names and
 * edits, and failed writes (EFBIG, a file where the folder should be)
 * leave no temporary file and no partial spec.
 */
#include "autoconf.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cdi.h"
#include "spares.h"
#include "testlib.h"
#include "xmalloc.h"

#define DRIVER	"topology-aware.nri.io"
#define UID	"6f0c1e2a-0000-4c1d-9d6e-1b2c3d4e5f60"
#define FILE_OF(uid)	DRIVER "-device_" uid ".json"

static void
write_ok(const char *dir, const char *uid, const char *const *edits,
    size_t n)
{
	char	*cause = NULL;
	int	 rc;

	rc = cdi_write(NULL, dir, DRIVER, uid, edits, n, 0, &cause);
	cr_assert_eq(rc, 0, "cdi_write: %s", cause ? cause : "");
	cr_assert_null(cause);
}

/* The cause names what it should and the error's text. */
static void
assert_cause(char *cause, const char *what, int error)
{
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, what), "\"%s\" lacks \"%s\"", cause,
	    what);
	if (error != 0)
		cr_assert_not_null(strstr(cause, strerror(error)),
		    "\"%s\" lacks \"%s\"", cause, strerror(error));
	free(cause);
}

/*
 * Checks the file at path against the CDI shape (protocols.md §6.1-6.2):
 * exactly cdiVersion, kind and devices; device i exactly a name
 * claim-<uid>-<i> and containerEdits holding only env [edits[i]].
 */
static void
assert_spec(const char *path, const char *uid, const char *const *edits,
    size_t n)
{
	json_error_t	 err;
	json_t		*doc, *devs, *dev, *ce, *env;
	char		*name, *id, *want;
	size_t		 i;

	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	cr_assert_not_null(doc, "%s: %s", path, err.text);
	cr_assert(json_is_object(doc));
	cr_assert_eq(json_object_size(doc), 3);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "cdiVersion")),
	    "0.5.0");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")),
	    DRIVER "/device");
	devs = json_object_get(doc, "devices");
	cr_assert(json_is_array(devs));
	cr_assert_eq(json_array_size(devs), n);
	for (i = 0; i < n; i++) {
		dev = json_array_get(devs, i);
		cr_assert(json_is_object(dev));
		cr_assert_eq(json_object_size(dev), 2, "device %zu", i);
		xasprintf(&name, "claim-%s-%zu", uid, i);
		cr_assert_str_eq(json_string_value(json_object_get(dev,
		    "name")), name);
		ce = json_object_get(dev, "containerEdits");
		cr_assert(json_is_object(ce));
		cr_assert_eq(json_object_size(ce), 1);
		env = json_object_get(ce, "env");
		cr_assert(json_is_array(env));
		cr_assert_eq(json_array_size(env), 1);
		cr_assert_str_eq(json_string_value(json_array_get(env, 0)),
		    edits[i]);

		/* The id the kubelet passes on is kind=name. */
		id = cdi_device_id(DRIVER, uid, i);
		xasprintf(&want, "%s=%s",
		    json_string_value(json_object_get(doc, "kind")), name);
		cr_assert_str_eq(id, want);
		free(want);
		free(id);
		free(name);
	}
	json_decref(doc);
}

/* R-CLAIM-8: two results, each device carrying the whole claim's cpuset
 * (anchor §9.4: results of 2 and 3 CPUs on node 0 of the server). */
Test(cdi, content)
{
	static const char *const edits[] = {
		"DRA_CPUSET_" UID "=0,4,8,56,60",
		"DRA_CPUSET_" UID "=0,4,8,56,60",
	};
	struct stat	 st;
	char		*dir, *path, *want;

	dir = testlib_tmpdir();
	write_ok(dir, UID, edits, 2);
	path = cdi_path(dir, DRIVER, UID);
	want = testlib_join(dir, FILE_OF(UID));
	cr_assert_str_eq(path, want);
	testlib_assert_listing(dir, FILE_OF(UID));
	assert_spec(path, UID, edits, 2);
	cr_assert(stat(path, &st) == 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
	free(want);
	free(path);
	free(dir);
}

/* JSON escaping: quotes and backslashes come back verbatim. */
Test(cdi, content_is_escaped)
{
	static const char *const edits[] = { "K=a\"b\\c/d" };
	char	*dir, *path;

	dir = testlib_tmpdir();
	write_ok(dir, "Claim_1.x:y", edits, 1);
	path = cdi_path(dir, DRIVER, "Claim_1.x:y");
	assert_spec(path, "Claim_1.x:y", edits, 1);
	free(path);
	free(dir);
}

Test(cdi, device_id_and_path)
{
	char	*s;

	s = cdi_device_id("cpu.example.com", "u-1", 7);
	cr_assert_str_eq(s, "cpu.example.com/device=claim-u-1-7");
	free(s);
	s = cdi_path("/run/cdi", "cpu.example.com", "u-1");
	cr_assert_str_eq(s, "/run/cdi/cpu.example.com-device_u-1.json");
	free(s);
}

/* The folder is made 0755 whatever the umask; its parent is not made. */
Test(cdi, creates_directory)
{
	static const char *const edits[] = { "DRA_CPUSET_" UID "=1,57" };
	struct stat	 st;
	char		*top, *dir, *deep, *path, *cause = NULL;

	top = testlib_tmpdir();
	dir = testlib_join(top, "cdi");
	umask(077);
	write_ok(dir, UID, edits, 1);
	cr_assert(stat(dir, &st) == 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0755, "mode %o", st.st_mode & 07777);
	path = cdi_path(dir, DRIVER, UID);
	assert_spec(path, UID, edits, 1);
	cr_assert(stat(path, &st) == 0);
	cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);

	deep = testlib_join(top, "missing/cdi");
	cr_assert_eq(cdi_write(NULL, deep, DRIVER, UID, edits, 1, 0, &cause), -ENOENT);
	assert_cause(cause, deep, ENOENT);
	testlib_assert_listing(top, "cdi");
	free(deep);
	free(path);
	free(dir);
	free(top);
}

/*
 * A rewrite swaps the file by rename: a reader that opened the old spec
 * still reads it whole, a new reader sees the new one, and a temporary
 * file left by a crash is replaced and gone.
 */
Test(cdi, atomic_replace)
{
	static const char *const one[] = { "DRA_CPUSET_" UID "=1,57" };
	static const char *const three[] = {
		"DRA_CPUSET_" UID "=1,5,57,61",
		"DRA_CPUSET_" UID "=1,5,57,61",
		"DRA_CPUSET_" UID "=1,5,57,61",
	};
	char	*dir, *path, *tmp, *before, *held;
	ssize_t	 n;
	size_t	 len;
	int	 fd;

	dir = testlib_tmpdir();
	path = cdi_path(dir, DRIVER, UID);
	write_ok(dir, UID, one, 1);
	before = testlib_read(path, NULL);
	len = strlen(before);
	fd = open(path, O_RDONLY);
	cr_assert(fd != -1);

	xasprintf(&tmp, "%s.tmp", path);
	testlib_write(tmp, "{\"cdiVersion\":", strlen("{\"cdiVersion\":"));
	write_ok(dir, UID, three, 3);
	testlib_assert_listing(dir, FILE_OF(UID));
	assert_spec(path, UID, three, 3);

	held = xmalloc(len + 2);
	n = read(fd, held, len + 1);
	cr_assert_eq(n, (ssize_t)len);
	held[n] = '\0';
	cr_assert_str_eq(held, before);
	close(fd);
	free(held);
	free(before);
	free(tmp);
	free(path);
	free(dir);
}

Test(cdi, remove)
{
	static const char *const edits[] = { "DRA_CPUSET_" UID "=2" };
	static const char *const other[] = { "DRA_CPUSET_u2=3" };
	char	*dir, *path, *tmp, *cause = NULL, *gone;

	dir = testlib_tmpdir();
	write_ok(dir, UID, edits, 1);
	write_ok(dir, "u2", other, 1);
	path = cdi_path(dir, DRIVER, UID);
	xasprintf(&tmp, "%s.tmp", path);
	testlib_write(tmp, "partial", 7);

	cr_assert_eq(cdi_remove(NULL, dir, DRIVER, UID, &cause), 0, "%s", cause);
	cr_assert(!testlib_exists(path));
	cr_assert(!testlib_exists(tmp));
	testlib_assert_listing(dir, FILE_OF("u2"));
	/* Unprepare may come twice, or for a claim never prepared here. */
	cr_assert_eq(cdi_remove(NULL, dir, DRIVER, UID, &cause), 0, "%s", cause);
	cr_assert_eq(cdi_remove(NULL, dir, DRIVER, "never", &cause), 0, "%s", cause);
	gone = testlib_join(dir, "gone");
	cr_assert_eq(cdi_remove(NULL, gone, DRIVER, UID, &cause), 0, "%s", cause);
	cr_assert_null(cause);
	testlib_assert_listing(dir, FILE_OF("u2"));
	free(gone);
	free(tmp);
	free(path);
	free(dir);
}

Test(cdi, refuses_unsafe_uids)
{
	static const char *const bad[] = {
		"", ".", "..", "../x", "a/b", "/abs", "a..b", "a\nb", "a\tb",
		"a\x7f", "a b", "a\"b", "a\\b", "a*b", "\xc3\xa9",
	};
	static const char *const edits[] = { "K=1" };
	char	*dir, *cause = NULL, *big;
	size_t	 i;

	dir = testlib_tmpdir();
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(cdi_write(NULL, dir, DRIVER, bad[i], edits, 1, 0, &cause),
		    -EINVAL, "uid #%zu", i);
		assert_cause(cause, "claim UID", 0);
		cr_assert_eq(cdi_remove(NULL, dir, DRIVER, bad[i], &cause), -EINVAL,
		    "uid #%zu", i);
		assert_cause(cause, "claim UID", 0);
		cr_assert_eq(cdi_check_uid(bad[i], NULL), -EINVAL);
	}
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, NULL, edits, 1, 0, NULL), -EINVAL);

	big = xmalloc(CDI_UID_MAX + 2);
	memset(big, 'a', CDI_UID_MAX + 1);
	big[CDI_UID_MAX + 1] = '\0';
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, big, edits, 1, 0, NULL), -EINVAL);
	testlib_assert_listing(dir, "");
	big[CDI_UID_MAX] = '\0';
	write_ok(dir, big, edits, 1);
	cr_assert_eq(cdi_check_uid(UID, NULL), 0);
	free(big);
	free(dir);
}

/* A DNS subdomain of at most 63 characters that CDI takes as a vendor. */
Test(cdi, refuses_bad_drivers)
{
	static const char *const bad[] = {
		"", "Topology.io", "-a.io", "a-.io", "a..io", ".a.io", "a.io.",
		"a_b.io", "a/b", "a b.io", "1abc.io", "a.-b.io", "a.b-.io",
		"a\n.io",
	};
	static const char *const good[] = {
		"topology-aware.nri.io", "a", "cpu.example.com", "a1.2b.c-d",
	};
	static const char *const edits[] = { "K=1" };
	char	*dir, *cause = NULL, *s;
	size_t	 i;

	dir = testlib_tmpdir();
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(cdi_write(NULL, dir, bad[i], UID, edits, 1, 0, &cause),
		    -EINVAL, "driver #%zu", i);
		assert_cause(cause, "DNS subdomain", 0);
		cr_assert_eq(cdi_remove(NULL, dir, bad[i], UID, &cause), -EINVAL);
		assert_cause(cause, "DNS subdomain", 0);
	}
	cr_assert_eq(cdi_check_driver(NULL, NULL), -EINVAL);
	testlib_assert_listing(dir, "");
	for (i = 0; i < sizeof good / sizeof good[0]; i++)
		cr_assert_eq(cdi_check_driver(good[i], NULL), 0, "%s", good[i]);

	/* 63 characters pass, 64 do not. */
	s = xmalloc(65);
	memset(s, 'a', 64);
	s[64] = '\0';
	s[31] = '.';
	cr_assert_eq(cdi_check_driver(s, NULL), -EINVAL);
	s[63] = '\0';
	cr_assert_eq(cdi_check_driver(s, NULL), 0);
	free(s);
	free(dir);
}

/* Nothing is written for a spec CDI would refuse, and an older spec of
 * the claim stays as it was. */
Test(cdi, refuses_bad_edits)
{
	static const char *const old[] = { "DRA_CPUSET_" UID "=9" };
	static const char *const bad[] = {
		"=x", "NOEQUALS", "", "K=a\nb", "K\t=1", "K=\x1b[0m",
		"K=\xff\xfe",
	};
	const char	*edits[CDI_MAX_DEVICES + 1];
	char		*dir, *path, *before, *after, *cause = NULL;
	size_t		 i;

	dir = testlib_tmpdir();
	write_ok(dir, UID, old, 1);
	path = cdi_path(dir, DRIVER, UID);
	before = testlib_read(path, NULL);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		edits[0] = "K=1";
		edits[1] = bad[i];
		cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, edits, 2, 0, &cause),
		    -EINVAL, "edit #%zu", i);
		assert_cause(cause, UID, 0);
	}
	edits[1] = NULL;
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, edits, 2, 0, NULL), -EINVAL);
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, edits, 0, 0, &cause), -EINVAL);
	assert_cause(cause, "0 devices", 0);
	for (i = 0; i < CDI_MAX_DEVICES + 1; i++)
		edits[i] = "K=1";
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, edits, CDI_MAX_DEVICES + 1, 0,
	    NULL), -EINVAL);
	after = testlib_read(path, NULL);
	cr_assert_str_eq(after, before);
	testlib_assert_listing(dir, FILE_OF(UID));

	/* The limit itself is fine. */
	write_ok(dir, UID, edits, CDI_MAX_DEVICES);
	assert_spec(path, UID, edits, CDI_MAX_DEVICES);
	free(after);
	free(before);
	free(path);
	free(dir);
}

/* A write that fails half way (EFBIG) leaves the old spec and no
 * temporary file, and says which file and why. */
Test(cdi, failed_write_keeps_old_spec)
{
	static const char *const old[] = { "DRA_CPUSET_" UID "=1,57" };
	struct rlimit	 rl;
	const char	*edits[1];
	char		*dir, *path, *tmp, *before, *after, *blob, *cause = NULL;

	dir = testlib_tmpdir();
	write_ok(dir, UID, old, 1);
	path = cdi_path(dir, DRIVER, UID);
	before = testlib_read(path, NULL);

	blob = xmalloc(10000);
	memset(blob, '7', 9999);
	memcpy(blob, "K=", 2);
	blob[9999] = '\0';
	edits[0] = blob;
	cr_assert(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	cr_assert(getrlimit(RLIMIT_FSIZE, &rl) == 0);
	rl.rlim_cur = 4096;
	cr_assert(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, edits, 1, 0, &cause), -EFBIG);
	xasprintf(&tmp, "%s.tmp", path);
	assert_cause(cause, tmp, EFBIG);
	after = testlib_read(path, NULL);
	cr_assert_str_eq(after, before);
	testlib_assert_listing(dir, FILE_OF(UID));
	free(after);
	free(tmp);
	free(blob);
	free(before);
	free(path);
	free(dir);
}

Test(cdi, file_where_the_directory_should_be)
{
	static const char *const edits[] = { "K=1" };
	char	*dir, *file, *cause = NULL, *content;

	dir = testlib_tmpdir();
	file = testlib_join(dir, "cdi");
	testlib_write(file, "x", 1);
	cr_assert_eq(cdi_write(NULL, file, DRIVER, UID, edits, 1, 0, &cause),
	    -ENOTDIR);
	assert_cause(cause, file, ENOTDIR);
	/* No spec can be there: removing it is done (R-CLAIM-5). */
	cr_assert_eq(cdi_remove(NULL, file, DRIVER, UID, &cause), 0);
	content = testlib_read(file, NULL);
	cr_assert_str_eq(content, "x");
	testlib_assert_listing(dir, "cdi");
	free(content);
	free(file);
	free(dir);
}

/*
 * With the spares, a removed spec is emptied and kept under a hidden name
 * no CDI reader loads, and the next claim's spec is written into it and
 * renamed into place: the same inode, the whole new spec. A spare of
 * another kind under the prefix is left alone (the folder is shared).
 */
Test(cdi, spares_recycle_specs)
{
	static const char *const edits[] = { "DRA_CPUSET_" UID "=2" };
	static const char *const other[] = { "DRA_CPUSET_u2=3" };
	struct spares	*sp;
	struct stat	 st;
	char		*dir, *path, *spare, *cause = NULL, *got, *want, **uids;
	size_t		 n, len;
	ino_t		 ino;

	dir = testlib_tmpdir();
	sp = cdi_spares_new(dir);
	cr_assert_eq(cdi_write(sp, dir, DRIVER, UID, edits, 1, 0, &cause), 0);
	path = cdi_path(dir, DRIVER, UID);
	cr_assert_eq(stat(path, &st), 0);
	ino = st.st_ino;
	cr_assert_eq(cdi_remove(sp, dir, DRIVER, UID, &cause), 0, "%s", cause);
	testlib_assert_listing(dir, CDI_SPARES "0");
	spare = testlib_join(dir, CDI_SPARES "0");
	cr_assert_eq(stat(spare, &st), 0);
	cr_assert_eq(st.st_size, 0, "a kept spec is emptied");
	cr_assert_eq(cdi_list(dir, DRIVER, &uids, &n, &cause), 0);
	cr_assert_eq(n, 0, "a spare is no spec");
	free(uids);

	cr_assert_eq(cdi_write(sp, dir, DRIVER, "u2", other, 1, 0, &cause), 0,
	    "%s", cause);
	free(path);
	path = cdi_path(dir, DRIVER, "u2");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_ino, ino);
	cr_assert_eq(st.st_mode & 07777, 0644);
	got = testlib_read(path, &len);
	want = cdi_spec_text(DRIVER, "u2", other, 1);
	cr_assert_str_eq(got, want);
	free(got);
	free(want);
	testlib_assert_listing(dir, FILE_OF("u2"));

	/* A folder under the prefix is not ours to use or take. */
	spares_free(sp);
	cr_assert_eq(mkdir(spare, 0700), 0);
	sp = cdi_spares_new(dir);
	cr_assert_eq(cdi_write(sp, dir, DRIVER, UID, edits, 1, 0, &cause), 0);
	cr_assert(testlib_exists(spare));
	cr_assert_eq(spares_count(sp), 0);
	spares_free(sp);
	free(spare);
	free(path);
	free(dir);
}

/*
 * Spares made ahead: empty files of a spec's mode under the hidden names,
 * made in a folder that is not there yet, up to the number asked and no
 * further; the next spec is written into the last one, and asking again
 * makes that one alone.
 */
Test(cdi, spares_made_ahead)
{
	static const char *const edits[] = { "DRA_CPUSET_" UID "=2" };
	struct spares	*sp;
	struct stat	 st;
	char		*top, *dir, *path, *spare, *cause = NULL;
	mode_t		 was;
	int		 i;

	top = testlib_tmpdir();
	dir = testlib_join(top, "cdi");
	sp = cdi_spares_new(dir);
	/* A spec's mode whatever the umask: the runtime reads it. */
	was = umask(077);
	cr_assert_eq(cdi_spares_ahead(sp, dir, 3, &cause), 3, "%s", cause);
	umask(was);
	testlib_assert_listing(dir, CDI_SPARES "0 " CDI_SPARES "1 "
	    CDI_SPARES "2");
	for (i = 0; i < 3; i++) {
		char	name[64];

		snprintf(name, sizeof name, CDI_SPARES "%d", i);
		spare = testlib_join(dir, name);
		cr_assert_eq(lstat(spare, &st), 0);
		cr_assert(S_ISREG(st.st_mode));
		cr_assert_eq(st.st_size, 0);
		cr_assert_eq(st.st_mode & 07777, 0644, "mode %o",
		    st.st_mode & 07777);
		free(spare);
	}
	cr_assert_eq(cdi_spares_ahead(sp, dir, 3, &cause), 0, "%s", cause);
	cr_assert_eq(spares_count(sp), 3);

	spare = testlib_join(dir, CDI_SPARES "2");
	cr_assert_eq(stat(spare, &st), 0);
	cr_assert_eq(cdi_write(sp, dir, DRIVER, UID, edits, 1, 1, &cause), 0,
	    "%s", cause);
	path = cdi_path(dir, DRIVER, UID);
	assert_spec(path, UID, edits, 1);
	{
		ino_t	ino = st.st_ino;

		cr_assert_eq(stat(path, &st), 0);
		cr_assert_eq(st.st_ino, ino, "the spec is not in the spare");
		cr_assert_eq(st.st_mode & 07777, 0644);
	}
	cr_assert_eq(cdi_spares_ahead(sp, dir, 3, &cause), 1, "%s", cause);
	testlib_assert_listing(dir, CDI_SPARES "0 " CDI_SPARES "1 "
	    CDI_SPARES "3 " FILE_OF(UID));
	spares_free(sp);
	free(spare);
	free(path);
	free(dir);
	free(top);
}

/*
 * Where no spare can be made (the folder is a file) the call fails with a
 * cause that names the folder, and keeps nothing.
 */
Test(cdi, spares_ahead_that_cannot_be_made)
{
	struct spares	*sp;
	char		*top, *dir, *cause = NULL;

	top = testlib_tmpdir();
	dir = testlib_join(top, "cdi");
	testlib_write(dir, "x", 1);
	sp = cdi_spares_new(dir);
	cr_assert_lt(cdi_spares_ahead(sp, dir, 2, &cause), 0);
	cr_assert_not_null(cause);
	cr_assert(strstr(cause, dir) != NULL, "%s", cause);
	cr_assert_eq(spares_count(sp), 0);
	free(cause);
	spares_free(sp);
	free(dir);
	free(top);
}

/*
 * A spec already there with the same text is left alone (a claim
 * prepared again), unless the caller says none is expected (a claim not
 * held before): then it is written without being read first.
 */
Test(cdi, same_spec_left_alone_unless_fresh)
{
	static const char *const one[] = { "DRA_CPUSET_" UID "=1,57" };
	struct stat	 st;
	char		*dir, *path, *cause = NULL;
	ino_t		 ino;

	dir = testlib_tmpdir();
	path = cdi_path(dir, DRIVER, UID);
	write_ok(dir, UID, one, 1);
	cr_assert_eq(stat(path, &st), 0);
	ino = st.st_ino;
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, one, 1, 0, &cause), 0,
	    "%s", cause);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_ino, ino, "the same spec was written again");
	cr_assert_eq(cdi_write(NULL, dir, DRIVER, UID, one, 1, 1, &cause), 0,
	    "%s", cause);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_neq(st.st_ino, ino, "a fresh spec was not written");
	assert_spec(path, UID, one, 1);
	free(path);
	free(dir);
}

/*
 * A stop between filling a spare and renaming it leaves a spec in it: a
 * start takes it back emptied.
 */
Test(cdi, spare_found_with_a_spec_is_emptied)
{
	struct spares	*sp;
	struct stat	 st;
	char		*dir, *spare;

	dir = testlib_tmpdir();
	xasprintf(&spare, "%s/%s7", dir, CDI_SPARES);
	testlib_write(spare, "{\"cdiVersion\":", strlen("{\"cdiVersion\":"));
	sp = cdi_spares_new(dir);
	cr_assert_eq(spares_count(sp), 1);
	cr_assert_eq(stat(spare, &st), 0);
	cr_assert_eq(st.st_size, 0, "a spare kept a spec");
	spares_free(sp);
	free(spare);
	free(dir);
}
