/*
 * test_exports.c: the resources.sh exports of a policy's containers as
 * the server queues them after a turn. A claim moves shared containers by
 * their pool's supply alone: their pool's file is rewritten, their links
 * stay, and they are not queued one by one; a container whose link could
 * not be made is made again with the next pool, though nothing queues it
 * on its own. On the recorded server with CPUs 3 and 11 reserved.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exports.h"
#include "fnv.h"
#include "policylib.h"
#include "resfile.h"
#include "testlib.h"
#include "xmalloc.h"

ENV_SERVER_SUITE()

TestSuite(exports, .init = env_setup, .fini = env_teardown);

/* What the server queues of an operation's effects (log_effects). */
static void
queue_effects(struct exports *ex)
{
	int	i;

	if (e.fx.self.id != NULL)
		(void)exports_later(ex, e.fx.self.id, 0);
	for (i = 0; i < e.fx.nupdates; i++)
		if (!e.fx.updates[i].pool_file)
			(void)exports_later(ex, e.fx.updates[i].id, 0);
	for (i = 0; i < e.fx.npools; i++)
		(void)exports_pool_later(ex, e.fx.pools[i]);
	env_reset(&e);
}

/* The SHARED_CPUS line of id's resources.sh, or NULL without a file. */
static char *
shared_line(const char *dir, const char *id)
{
	char	*path, *text, *line, *end, *out = NULL;

	xasprintf(&path, "%s/containers/%s/%s", dir, id, RESFILE_NAME);
	if (access(path, F_OK) != 0) {
		free(path);
		return (NULL);
	}
	text = testlib_read(path, NULL);
	if ((line = strstr(text, "SHARED_CPUS=")) != NULL) {
		if ((end = strchr(line, '\n')) != NULL)
			*end = '\0';
		out = xstrdup(line);
	}
	free(text);
	free(path);
	return (out);
}

/* What id's file should say of its shared CPUs, from its pinning. */
static char *
want_line(const char *id)
{
	char	*cpus, *out;

	cpus = env_cpus_of(&e, id);
	xasprintf(&out, "SHARED_CPUS=\"%s\"", cpus);
	free(cpus);
	return (out);
}

static void
assert_current(const char *dir, const char *id)
{
	char	*got = shared_line(dir, id), *want = want_line(id);

	cr_assert_not_null(got, "%s has no file", id);
	cr_assert_str_eq(got, want, "%s", id);
	free(got);
	free(want);
}

static ino_t
inode_of(const char *dir, const char *id)
{
	struct stat	 st;
	char		*path;

	xasprintf(&path, "%s/containers/%s", dir, id);
	cr_assert_eq(lstat(path, &st), 0, "%s", path);
	free(path);
	return (st.st_ino);
}

Test(exports, a_pool_moves_its_linked_containers)
{
	struct exports	*ex;
	char		*dir, *before, *after;
	ino_t		 link;
	int		 i;

	dir = testlib_tmpdir();
	ex = exports_new(dir);
	cr_assert_eq(env_create(&e, "be1", "BE", -1, -1, NULL, NULL, NULL), 0);
	queue_effects(ex);
	cr_assert_eq(env_create(&e, "be2", "BE", -1, -1, NULL, NULL, NULL), 0);
	queue_effects(ex);
	exports_flush(ex, e.P);
	assert_current(dir, "be1");
	assert_current(dir, "be2");
	before = shared_line(dir, "be1");
	link = inode_of(dir, "be1");

	cr_assert_eq(env_claim(&e, "c1", "cpudevnuma000=2"), 0, "%s",
	    e.cause);
	/* They moved by their pool alone: not queued one by one. */
	cr_assert_not_null(env_update(&e, "be1"));
	for (i = 0; i < e.fx.nupdates; i++)
		cr_assert(e.fx.updates[i].pool_file, "%s",
		    e.fx.updates[i].id);
	queue_effects(ex);
	exports_flush(ex, e.P);
	assert_current(dir, "be1");
	assert_current(dir, "be2");
	after = shared_line(dir, "be1");
	cr_assert_str_neq(after, before);
	cr_assert_eq(inode_of(dir, "be1"), link, "the link stayed");
	free(before);
	free(after);
	exports_free(ex);
	free(dir);
}

Test(exports, a_failed_link_is_made_with_the_next_pool)
{
	struct exports	*ex;
	const struct pool *p;
	const char	*node;
	char		*dir, *cdir, *aside, *res;
	FILE		*f;

	dir = testlib_tmpdir();
	ex = exports_new(dir);
	cr_assert_eq(env_create(&e, "be1", "BE", -1, -1, NULL, NULL, NULL), 0);
	queue_effects(ex);
	exports_flush(ex, e.P);
	assert_current(dir, "be1");

	/* containers/ is a file: be2's link cannot be made. */
	xasprintf(&cdir, "%s/containers", dir);
	xasprintf(&aside, "%s/aside", dir);
	cr_assert_eq(rename(cdir, aside), 0);
	cr_assert_not_null(f = fopen(cdir, "w"));
	fclose(f);
	cr_assert_eq(env_create(&e, "be2", "BE", -1, -1, NULL, NULL, NULL), 0);
	queue_effects(ex);
	exports_flush(ex, e.P);
	cr_assert_null(shared_line(dir, "be2"));
	cr_assert_eq(unlink(cdir), 0);
	cr_assert_eq(rename(aside, cdir), 0);

	/* Nothing queues be2 itself again: a claim on its node moves it by
	 * its pool, and the pool brings it along. */
	p = policy_export_shared_pool(e.P, "be2");
	cr_assert(p != NULL && (node = strchr(p->name, '#')) != NULL);
	xasprintf(&res, "cpudevnuma%03d=2", atoi(node + 1));
	cr_assert_eq(env_claim(&e, "c1", res), 0, "%s", e.cause);
	free(res);
	cr_assert_not_null(env_update(&e, "be2"));
	cr_assert_gt(e.fx.npools, 0);
	queue_effects(ex);
	exports_flush(ex, e.P);
	assert_current(dir, "be2");
	/* The release moves it back, by its pool again. */
	cr_assert_eq(env_release(&e, "c1"), 0);
	queue_effects(ex);
	exports_flush(ex, e.P);
	assert_current(dir, "be2");
	assert_current(dir, "be1");
	free(cdir);
	free(aside);
	exports_free(ex);
	free(dir);
}

/* The digest that decides whether a file is written again is FNV-1a,
 * as published (its reference test vectors): a change that keeps the
 * text's length must change it too. */
Test(exports, the_digest_is_fnv1a)
{
	cr_assert_eq(fnv1a_more(FNV1A_OFFSET, "", 0), 0xcbf29ce484222325ULL);
	cr_assert_eq(fnv1a_more(FNV1A_OFFSET, "a", 1), 0xaf63dc4c8601ec8cULL);
	cr_assert_eq(fnv1a_more(FNV1A_OFFSET, "foobar", 6),
	    0x85944171f73967e8ULL);
	/* In parts, as a pool link's digest is made. */
	cr_assert_eq(fnv1a_more(fnv1a_more(FNV1A_OFFSET, "foo", 3), "bar", 3),
	    0x85944171f73967e8ULL);
}
