/*
 * test_statefile.c: the state directory of R-STATE. A document comes back
 * as written; a crash (a stray temporary file) leaves the old state
 * readable; corrupt, truncated, empty, oversized and unknown-version files
 * are moved aside to state.json.bad-<unixtime> without ever replacing an
 * earlier one (R-STATE-3); a failed write leaves the old file (R-STATE-1);
 * the directory's kind, mode and owner are checked; resources.sh follows
 * R-STATE-4. A document given as text (the policy's own writer) makes the
 * same file as one given as values.
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
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "statefile.h"
#include "testlib.h"
#include "xmalloc.h"

/* A saved-state document as R-STATE-1 describes it. */
static json_t *
state_doc(const char *id, const char *cpus)
{
	json_t	*doc;

	doc = json_pack("{s:i, s:{s:{s:s}}}", "version", STATEFILE_VERSION, "grants", id,
	    "cpus", cpus);
	cr_assert_not_null(doc);
	return (doc);
}

static void
write_ok(const char *dir, json_t *doc)
{
	char	*cause = NULL;
	int	 rc;

	rc = statefile_write(dir, doc, &cause);
	cr_assert_eq(rc, 0, "write: %s", cause ? cause : "");
}

static void
assert_reads(const char *dir, json_t *want)
{
	json_t	*doc = NULL;
	char	*cause = NULL, *a, *b;
	int	 rc;

	rc = statefile_read(dir, &doc, &cause);
	cr_assert_eq(rc, 0, "read: %s", cause ? cause : "");
	cr_assert_not_null(doc);
	a = json_dumps(doc, JSON_SORT_KEYS);
	b = json_dumps(want, JSON_SORT_KEYS);
	cr_assert(json_equal(doc, want), "read %s, want %s", a, b);
	free(a);
	free(b);
	json_decref(doc);
}

Test(statefile, round_trip)
{
	struct stat	 st;
	json_t		*a, *b, *doc = NULL;
	char		*dir, *path, *cause = NULL;

	dir = testlib_tmpdir();
	cr_assert_eq(statefile_read(dir, &doc, &cause), 0, "no file, no error");
	cr_assert_null(doc);
	cr_assert_null(cause);

	a = state_doc("c1", "0-3");
	b = state_doc("claim:uid-1", "4-5");
	write_ok(dir, a);
	assert_reads(dir, a);
	write_ok(dir, b);
	assert_reads(dir, b);
	testlib_assert_listing(dir, "state.json");

	path = testlib_join(dir, "state.json");
	cr_assert(stat(path, &st) == 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	json_decref(a);
	json_decref(b);
	free(path);
	free(dir);
}

Test(statefile, write_refuses_unversioned_document)
{
	json_t	*doc;
	char	*dir, *cause = NULL;

	dir = testlib_tmpdir();
	doc = json_pack("{s:{}}", "grants");
	cr_assert_eq(statefile_write(dir, doc, &cause), -EINVAL);
	cr_assert_not_null(cause);
	testlib_assert_listing(dir, "");
	json_decref(doc);
	free(cause);
	free(dir);
}

/* A crash between creating the temporary file and the rename. */
Test(statefile, crash_leaves_old_state)
{
	static const char	 partial[] = "{\"version\":3,\"grants\":{\"c";
	json_t			*a, *b;
	char			*dir, *tmp;

	dir = testlib_tmpdir();
	a = state_doc("c1", "0-3");
	b = state_doc("c2", "6");
	write_ok(dir, a);
	tmp = testlib_join(dir, STATEFILE_TMP);
	testlib_write(tmp, partial, sizeof partial - 1);

	assert_reads(dir, a);
	testlib_assert_listing(dir, "state.json state.json.tmp");
	write_ok(dir, b);
	assert_reads(dir, b);
	testlib_assert_listing(dir, "state.json");
	json_decref(a);
	json_decref(b);
	free(tmp);
	free(dir);
}

/*
 * Reads a bad state file: -EBADMSG, a cause holding what and where, the
 * content kept under state.json.bad-<unixtime>[-N], and a fresh start.
 * Returns the name it went to (caller frees).
 */
static char *
read_bad(const char *dir, const char *what, const char *content,
    size_t len)
{
	json_t		*doc = NULL;
	char		*cause = NULL, *bad, *p, *kept, *name, *end;
	const char	*prefix = "state.json.bad-";
	long long	 t;
	size_t		 keptlen;
	time_t		 before, after;

	before = time(NULL);
	cr_assert_eq(statefile_read(dir, &doc, &cause), -EBADMSG);
	after = time(NULL);
	cr_assert_null(doc);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, what), "cause \"%s\" lacks \"%s\"",
	    cause, what);
	cr_assert_not_null(strstr(cause, dir), "cause \"%s\" lacks the path",
	    cause);

	/* The cause names the new place: a bad-<t>[-N] in the same dir. */
	p = strstr(cause, "moved aside to ");
	cr_assert_not_null(p, "%s", cause);
	bad = xstrdup(p + strlen("moved aside to "));
	cr_assert_eq(strncmp(bad, dir, strlen(dir)), 0, "%s", bad);
	name = bad + strlen(dir) + 1;
	cr_assert_eq(strncmp(name, prefix, strlen(prefix)), 0, "%s", name);
	t = strtoll(name + strlen(prefix), &end, 10);
	cr_assert(*end == '\0' || (*end == '-' && end[1] >= '1' &&
	    end[1] <= '9'), "%s", name);
	cr_assert(t >= (long long)before && t <= (long long)after, "%s", name);

	kept = testlib_read(bad, &keptlen);
	cr_assert_eq(keptlen, len);
	cr_assert(memcmp(kept, content, len) == 0);
	p = testlib_join(dir, "state.json");
	cr_assert(!testlib_exists(p), "state.json is still there");
	cr_assert_eq(statefile_read(dir, &doc, &cause), 0);
	cr_assert_null(doc);
	name = xstrdup(name);
	free(p);
	free(kept);
	free(bad);
	free(cause);
	return (name);
}

static void
bad_content(const char *what, const char *content, size_t len)
{
	char	*dir, *path, *name;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "state.json");
	testlib_write(path, content, len);
	name = read_bad(dir, what, content, len);
	free(name);
	free(path);
	free(dir);
}

#define BAD(what, s)	bad_content(what, s, sizeof s - 1)

Test(statefile, corrupt_moved_aside)
{
	BAD("not valid JSON", "this is not JSON\n");
	BAD("not valid JSON", "{\"version\":1,}");
	BAD("not valid JSON", "{\"version\":1}\n{\"version\":1}\n");
	BAD("not valid JSON", "{\"version\":1,\"version\":1}");
	BAD("not valid JSON", "{\"version\":1}\0garbage");
	BAD("not valid JSON", "{\"version\":1,\"grants\":\"\xff\xfe\"}");
	BAD("not a JSON object", "[1]");
	BAD("no \"version\"", "{\"grants\":{}}");
	BAD("not an integer", "{\"version\":\"1\",\"grants\":{}}");
	BAD("unknown version 0", "{\"version\":0,\"grants\":{}}");
	BAD("is empty", "");
}

Test(statefile, binary_garbage_moved_aside)
{
	char	bytes[256];
	int	i;

	for (i = 0; i < 256; i++)
		bytes[i] = (char)(255 - i);
	bad_content("not valid JSON", bytes, sizeof bytes);
}

Test(statefile, truncated_moved_aside)
{
	json_t	*doc;
	char	*dir, *path, *full;
	size_t	 len;

	dir = testlib_tmpdir();
	doc = state_doc("c1", "0-3");
	write_ok(dir, doc);
	path = testlib_join(dir, "state.json");
	full = testlib_read(path, &len);
	cr_assert_gt(len, 10);
	cr_assert(truncate(path, (off_t)(len / 2)) == 0);
	free(read_bad(dir, "truncated", full, len / 2));
	json_decref(doc);
	free(full);
	free(path);
	free(dir);
}

Test(statefile, newer_version_moved_aside)
{
	BAD("version 4, newer", "{\"version\":4,\"grants\":{}}");
}

Test(statefile, oversized_moved_aside)
{
	char	*dir, *path, *cause = NULL;
	json_t	*doc = NULL;
	int	 fd;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "state.json");
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	cr_assert(fd != -1);
	/* Sparse: costs no disk. */
	cr_assert(ftruncate(fd, (off_t)STATEFILE_MAX_SIZE + 1) == 0);
	close(fd);
	cr_assert_eq(statefile_read(dir, &doc, &cause), -EBADMSG);
	cr_assert_null(doc);
	cr_assert_not_null(strstr(cause, "larger than"), "%s", cause);
	cr_assert(!testlib_exists(path));
	free(cause);
	free(path);
	free(dir);
}

Test(statefile, not_a_regular_file_moved_aside)
{
	char	*dir, *path, *cause = NULL;
	json_t	*doc = NULL;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "state.json");
	cr_assert(mkfifo(path, 0600) == 0);
	cr_assert_eq(statefile_read(dir, &doc, &cause), -EBADMSG);
	cr_assert_not_null(strstr(cause, "not a regular file"), "%s", cause);
	cr_assert(!testlib_exists(path));
	free(cause);
	free(path);
	free(dir);
}

/* An earlier bad file is never replaced: the next name gets -N. */
Test(statefile, bad_names_never_collide)
{
	char		*dir, *path, *name, *prev, *content, *got, *end;
	time_t		 now;
	long long	 t;
	int		 i, k;

	dir = testlib_tmpdir();
	now = time(NULL);
	for (k = -1; k <= 120; k++) {
		xasprintf(&name, "%s/state.json.bad-%lld", dir,
		    (long long)now + k);
		xasprintf(&content, "earlier %d", k);
		testlib_write(name, content, strlen(content));
		free(content);
		free(name);
	}
	path = testlib_join(dir, "state.json");
	prev = NULL;
	for (i = 0; i < 3; i++) {
		xasprintf(&content, "corrupt %d", i);
		testlib_write(path, content, strlen(content));
		name = read_bad(dir, "not valid JSON", content,
		    strlen(content));
		t = strtoll(name + strlen("state.json.bad-"), &end, 10);
		if (t <= (long long)now + 120)
			cr_assert(*end == '-', "%s would replace an earlier "
			    "file", name);
		if (prev != NULL)
			cr_assert_str_neq(name, prev);
		free(prev);
		prev = name;
		free(content);
	}
	for (k = -1; k <= 120; k++) {
		xasprintf(&name, "%s/state.json.bad-%lld", dir,
		    (long long)now + k);
		xasprintf(&content, "earlier %d", k);
		got = testlib_read(name, NULL);
		cr_assert_str_eq(got, content);
		free(got);
		free(content);
		free(name);
	}
	free(prev);
	free(path);
	free(dir);
}

/* R-STATE-1: a failed write (here EFBIG) leaves the old state. */
Test(statefile, failed_write_keeps_old_state)
{
	struct rlimit	 rl;
	json_t		*a, *big;
	char		*dir, *cause = NULL, *blob, *want;

	dir = testlib_tmpdir();
	a = state_doc("c1", "0-3");
	write_ok(dir, a);

	blob = xmalloc(10000);
	memset(blob, '7', 9999);
	blob[9999] = '\0';
	big = state_doc("c2", blob);
	cr_assert(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	cr_assert(getrlimit(RLIMIT_FSIZE, &rl) == 0);
	rl.rlim_cur = 4096;
	cr_assert(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	cr_assert_eq(statefile_write(dir, big, &cause), -EFBIG);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, strerror(EFBIG)), "%s", cause);
	want = testlib_join(dir, STATEFILE_TMP);
	cr_assert_not_null(strstr(cause, want), "%s", cause);
	assert_reads(dir, a);
	testlib_assert_listing(dir, "state.json");
	json_decref(a);
	json_decref(big);
	free(want);
	free(blob);
	free(cause);
	free(dir);
}

Test(statefile, file_where_the_directory_should_be)
{
	json_t	*doc, *got = NULL;
	char	*dir, *file, *cause = NULL, *content;

	dir = testlib_tmpdir();
	file = testlib_join(dir, "var-lib-topoaware");
	testlib_write(file, "x", 1);
	doc = state_doc("c1", "0-3");

	cr_assert_eq(statefile_write(file, doc, &cause), -ENOTDIR);
	cr_assert_not_null(strstr(cause, file), "%s", cause);
	cr_assert_not_null(strstr(cause, strerror(ENOTDIR)), "%s", cause);
	free(cause);
	cause = NULL;

	cr_assert_eq(statefile_read(file, &got, &cause), -ENOTDIR);
	cr_assert_null(got);
	cr_assert_not_null(strstr(cause, file), "%s", cause);
	free(cause);
	cause = NULL;

	cr_assert_eq(statefile_check_dir(file, &cause), -ENOTDIR);
	cr_assert_not_null(strstr(cause, "not a directory"), "%s", cause);
	free(cause);

	content = testlib_read(file, NULL);
	cr_assert_str_eq(content, "x");
	testlib_assert_listing(dir, "var-lib-topoaware");
	free(content);
	json_decref(doc);
	free(file);
	free(dir);
}

Test(statefile, write_into_missing_directory)
{
	json_t	*doc;
	char	*dir, *missing, *cause = NULL;

	dir = testlib_tmpdir();
	missing = testlib_join(dir, "absent");
	doc = state_doc("c1", "0-3");
	cr_assert_eq(statefile_write(missing, doc, &cause), -ENOENT);
	cr_assert_not_null(strstr(cause, missing), "%s", cause);
	free(cause);
	json_decref(doc);
	free(missing);
	free(dir);
}

static void
check_dir_refused(const char *dir, const char *what)
{
	char	*cause = NULL;

	cr_assert_eq(statefile_check_dir(dir, &cause), -EPERM, "%s accepted",
	    what);
	cr_assert_not_null(strstr(cause, dir), "%s", cause);
	cr_assert_not_null(strstr(cause, what), "\"%s\" lacks \"%s\"", cause,
	    what);
	free(cause);
}

Test(statefile, directory_checks)
{
	struct stat	 st;
	char		*dir, *state, *cause = NULL, *deep;

	dir = testlib_tmpdir();
	state = testlib_join(dir, "state");
	cr_assert_eq(statefile_check_dir(state, &cause), 0, "%s",
	    cause ? cause : "");
	cr_assert(stat(state, &st) == 0 && S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0700);
	cr_assert_eq(statefile_check_dir(state, &cause), 0);

	cr_assert(chmod(state, 0755) == 0);
	cr_assert_eq(statefile_check_dir(state, &cause), 0,
	    "readable by others is fine");
	cr_assert(chmod(state, 0777) == 0);
	check_dir_refused(state, "0777");
	cr_assert(chmod(state, 0770) == 0);
	check_dir_refused(state, "0770");
	cr_assert(chmod(state, 0702) == 0);
	check_dir_refused(state, "0702");

	cr_assert(chmod(state, 0700) == 0);
	cr_assert(chown(state, 1234, 1234) == 0);
	check_dir_refused(state, "uid 1234");

	deep = testlib_join(dir, "no/such/parent");
	cr_assert_eq(statefile_check_dir(deep, &cause), -ENOENT);
	cr_assert_not_null(strstr(cause, deep), "%s", cause);
	free(cause);
	free(deep);
	free(state);
	free(dir);
}

/*
 * statefile_write_text: the text as given plus one newline, the same file
 * statefile_write makes of the same document, the same refusals and
 * errors, and the old file kept when it fails.
 */
Test(statefile, write_text_is_the_same_file)
{
	static const char	 text[] = "{\"version\":3,\"grants\":{\"c1\":"
	    "{\"cpus\":\"0-3\",\"n\":\"\\u001F\\\"\xc3\xa9\"}}}";
	json_t			*doc;
	char			*dir, *other, *path, *cause = NULL, *a, *b;
	size_t			 alen, blen;

	dir = testlib_tmpdir();
	other = testlib_tmpdir();
	cr_assert_eq(statefile_write_text(dir, text, strlen(text), &cause), 0,
	    "%s", cause);
	path = testlib_join(dir, "state.json");
	a = testlib_read(path, &alen);
	cr_assert_eq(alen, strlen(text) + 1);
	cr_assert_eq(memcmp(a, text, strlen(text)), 0);
	cr_assert_eq(a[alen - 1], '\n');
	doc = json_loads(text, 0, NULL);
	cr_assert_not_null(doc);
	assert_reads(dir, doc);
	testlib_assert_listing(dir, "state.json");

	/* statefile_write of the parsed text writes the same bytes. */
	write_ok(other, doc);
	free(path);
	path = testlib_join(other, "state.json");
	b = testlib_read(path, &blen);
	cr_assert_eq(alen, blen);
	cr_assert_eq(memcmp(a, b, alen), 0, "%s / %s", a, b);
	free(a);

	/* A text that has its newline gets no second one. */
	cr_assert_eq(statefile_write_text(dir, b, blen, &cause), 0, "%s",
	    cause);
	free(path);
	path = testlib_join(dir, "state.json");
	a = testlib_read(path, &alen);
	cr_assert_eq(alen, blen);
	cr_assert_eq(memcmp(a, b, alen), 0);
	json_decref(doc);
	free(a);
	free(b);
	free(path);
	free(other);
	free(dir);
}

static void
write_text_refused(const char *dir, const char *text, json_t *old)
{
	char	*cause = NULL;

	cr_assert_eq(statefile_write_text(dir, text, text ? strlen(text) : 0,
	    &cause), -EINVAL, "%s written", text);
	cr_assert_not_null(strstr(cause, "version"), "%s", cause);
	assert_reads(dir, old);
	testlib_assert_listing(dir, "state.json");
	free(cause);
}

Test(statefile, write_text_refuses_unversioned_text)
{
	json_t	*a;
	char	*dir;

	dir = testlib_tmpdir();
	a = state_doc("c1", "0-3");
	write_ok(dir, a);
	write_text_refused(dir, "{\"grants\":{},\"version\":3}", a);
	write_text_refused(dir, "{\"version\":10,\"grants\":{}}", a);
	write_text_refused(dir, "{\"version\":1,\"grants\":{}}", a);
	write_text_refused(dir, "{\"version\":2,\"grants\":{}}", a);
	write_text_refused(dir, "{\"version\":3", a);
	write_text_refused(dir, "", a);
	write_text_refused(dir, NULL, a);
	json_decref(a);
	free(dir);
}

Test(statefile, write_text_errors)
{
	struct rlimit	 rl;
	json_t		*a;
	char		*dir, *file, *missing, *cause = NULL, *big, *want;
	size_t		 n;

	dir = testlib_tmpdir();
	file = testlib_join(dir, "plain");
	testlib_write(file, "x", 1);
	cr_assert_eq(statefile_write_text(file, "{\"version\":3}", 13,
	    &cause), -ENOTDIR);
	cr_assert_not_null(strstr(cause, file), "%s", cause);
	free(cause);
	cause = NULL;
	missing = testlib_join(dir, "absent");
	cr_assert_eq(statefile_write_text(missing, "{\"version\":3}", 13,
	    &cause), -ENOENT);
	cr_assert_not_null(strstr(cause, missing), "%s", cause);
	free(cause);
	cause = NULL;

	/* A write that fails half way leaves the old file and no other. */
	free(dir);
	dir = testlib_tmpdir();
	a = state_doc("c1", "0-3");
	write_ok(dir, a);
	n = 10000;
	big = xmalloc(n + 1);
	memset(big, ' ', n);
	memcpy(big, "{\"version\":3}", 13);
	big[n] = '\0';
	cr_assert(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	cr_assert(getrlimit(RLIMIT_FSIZE, &rl) == 0);
	rl.rlim_cur = 4096;
	cr_assert(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	cr_assert_eq(statefile_write_text(dir, big, n, &cause), -EFBIG);
	want = testlib_join(dir, STATEFILE_TMP);
	cr_assert_not_null(strstr(cause, want), "%s", cause);
	assert_reads(dir, a);
	testlib_assert_listing(dir, "state.json");
	json_decref(a);
	free(want);
	free(big);
	free(cause);
	free(missing);
	free(file);
	free(dir);
}

/* The daemon's path: a policy's text to the file and back to a policy. */
Test(statefile, policy_text_through_the_file)
{
	struct container_spec	 s;
	struct policy_kv	 ann[1];
	struct policy_effects	 fx;
	struct topology		*t = testlib_machine("server");
	struct config		*cfg;
	struct policy		*P, *R;
	json_t			*doc = NULL, *ref;
	char			*dir, *cause = NULL, *text, *again;
	size_t			 len;

	dir = testlib_tmpdir();
	cr_assert_eq(config_parse("{}", 2, &cfg, &cause), 0, "%s", cause);
	cr_assert_eq(policy_new(t, cfg, &P, &cause), 0, "%s", cause);
	policy_effects_init(&fx);
	memset(&s, 0, sizeof s);
	s.id = "c1";
	s.name = "n\"\\\x01\xff";
	s.qos = QOS_GUARANTEED;
	s.cpu_request = s.cpu_limit = 2000;
	ann[0].key = (char *)"x.resource-policy.nri.io";
	ann[0].value = (char *)"\t\xc3\xa9";
	s.annotations = ann;
	s.nannotations = 1;
	cr_assert_eq(policy_create(P, &s, &fx, &cause), 0, "%s", cause);
	text = policy_save_text(P, &len);
	cr_assert_eq(statefile_write_text(dir, text, len, &cause), 0, "%s",
	    cause);
	cr_assert_eq(statefile_read(dir, &doc, &cause), 0, "%s", cause);
	ref = policy_save(P);
	cr_assert(json_equal(doc, ref));
	cr_assert_eq(policy_restore(t, cfg, doc, &R, &cause), 0, "%s", cause);
	again = policy_save_text(R, NULL);
	cr_assert_str_eq(again, text);
	free(again);
	free(text);
	json_decref(ref);
	json_decref(doc);
	policy_free(R);
	policy_effects_clear(&fx);
	policy_free(P);
	config_free(cfg);
	topology_free(t);
	free(dir);
}
