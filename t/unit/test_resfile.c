/*
 * test_resfile.c: the resources.sh files of R-STATE-4: a container's own
 * file (content, mode, inode recycling, removal, refusals) and the link
 * of a shared container to its pool's file, switched both ways.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "resfile.h"
#include "spares.h"
#include "testlib.h"
#include "xmalloc.h"

Test(resfile, container_file)
{
	const struct resfile_var vars[] = {
		{ "SHARED_CPUS", "1-3" },
		{ "ALL_MEMS", "0" },
		{ "EXCLUSIVE_CPUS", "4-5" },
	}, fewer[] = {
		{ "DRA_CPUS", "8-9" },
		{ "ALL_MEMS", "1" },
	};
	struct stat	 st;
	ino_t		 ino;
	char		*dir, *file, *cdir, *cause = NULL, *got;
	const char	*id = "0123456789abcdef";

	dir = testlib_tmpdir();
	cr_assert_eq(resfile_write(dir, id, vars, 3, &cause), 0,
	    "%s", cause ? cause : "");
	xasprintf(&cdir, "%s/containers/%s", dir, id);
	file = testlib_join(cdir, "resources.sh");
	got = testlib_read(file, NULL);
	cr_assert_str_eq(got, "ALL_MEMS=\"0\"\nEXCLUSIVE_CPUS=\"4-5\"\n"
	    "SHARED_CPUS=\"1-3\"\n");
	free(got);
	cr_assert(stat(file, &st) == 0);
	cr_assert_eq(st.st_mode & 07777, 0644);

	cr_assert_eq(resfile_write(dir, id, fewer, 2, &cause), 0);
	got = testlib_read(file, NULL);
	cr_assert_str_eq(got, "ALL_MEMS=\"1\"\nDRA_CPUS=\"8-9\"\n");
	free(got);
	/* The old file is kept as the spare of the next write: rewriting
	 * makes and frees no inode. */
	testlib_assert_listing(cdir, ".resources.sh.spare resources.sh");
	cr_assert(stat(file, &st) == 0);
	ino = st.st_ino;
	cr_assert_eq(resfile_write(dir, id, vars, 3, &cause), 0);
	cr_assert_eq(resfile_write(dir, id, fewer, 2, &cause), 0);
	cr_assert(stat(file, &st) == 0);
	cr_assert_eq(st.st_ino, ino, "not the inode of two writes before");
	cr_assert_eq(st.st_mode & 07777, 0644);
	got = testlib_read(file, NULL);
	cr_assert_str_eq(got, "ALL_MEMS=\"1\"\nDRA_CPUS=\"8-9\"\n");
	free(got);

	cr_assert_eq(resfile_remove(NULL, dir, id, &cause), 0);
	cr_assert(!testlib_exists(file));
	cr_assert(!testlib_exists(cdir));
	cr_assert_eq(resfile_remove(NULL, dir, id, &cause), 0,
	    "removing twice is fine");
	free(file);
	free(cdir);
	free(dir);
}

Test(resfile, refuses_unsafe_input)
{
	static const char *const ids[] = {
		"", ".", "..", "a/b", "../evil", "/evil", "x\n", "tab\there",
	};
	const struct resfile_var ok[] = { { "ALL_MEMS", "0" } };
	const struct resfile_var bad[][2] = {
		{ { "ALL_MEMS", "0\"; rm -rf /; \"" }, { "X", "1" } },
		{ { "ALL_MEMS", "$(reboot)" }, { "X", "1" } },
		{ { "ALL_MEMS", "`id`" }, { "X", "1" } },
		{ { "ALL_MEMS", "a\\" }, { "X", "1" } },
		{ { "ALL_MEMS", "0\n1" }, { "X", "1" } },
		{ { "1X", "0" }, { "X", "1" } },
		{ { "A-B", "0" }, { "X", "1" } },
		{ { "", "0" }, { "X", "1" } },
		{ { "X", "0" }, { "X", "1" } },
	};
	char	*dir, *cause = NULL;
	size_t	 i;

	dir = testlib_tmpdir();
	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		cr_assert_eq(resfile_write(dir, ids[i], ok, 1,
		    &cause), -EINVAL, "id #%zu accepted", i);
		cr_assert_not_null(strstr(cause, "not a safe file name"), "%s",
		    cause);
		free(cause);
		cause = NULL;
		cr_assert_eq(resfile_remove(NULL, dir, ids[i], &cause),
		    -EINVAL, "id #%zu accepted for removal", i);
		free(cause);
		cause = NULL;
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(resfile_write(dir, "c1", bad[i], 2,
		    &cause), -EINVAL, "variables #%zu accepted", i);
		free(cause);
		cause = NULL;
	}
	/* Nothing was written anywhere. */
	testlib_assert_listing(dir, "");
	free(dir);
}


Test(resfile, pool_names)
{
	static const char *const cases[][2] = {
		{ "NUMA node #0", "numa-node-0" },
		{ "socket #1", "socket-1" },
		{ "die #0/1", "die-0-1" },
		{ "NUMA node #2/L3 cache #5", "numa-node-2-l3-cache-5" },
		{ "root", "root" },
		{ "#", "-" },
	};
	size_t	 i;
	char	*got;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got = resfile_pool_name(cases[i][0]);
		cr_assert_str_eq(got, cases[i][1], "%s", cases[i][0]);
		free(got);
	}
}

static int
keep_c2(const char *id, void *arg)
{
	(void)arg;
	return (strcmp(id, "c2") == 0);
}

/* What a reader of containers/<id>/resources.sh finds, and whether the
 * container's folder is a link. */
static char *
reads(const char *dir, const char *id, int *is_link)
{
	struct stat	 st;
	char		*folder, *path, *got;

	xasprintf(&folder, "%s/containers/%s", dir, id);
	cr_assert_eq(lstat(folder, &st), 0, "%s", folder);
	*is_link = S_ISLNK(st.st_mode);
	path = testlib_join(folder, "resources.sh");
	got = testlib_read(path, NULL);
	free(path);
	free(folder);
	return (got);
}

/*
 * Shared containers' folders link to their pool's folder: one write of
 * the pool's file is what every one of them reads; a container that gets
 * exclusive CPUs gets a folder and file of its own in place of the link,
 * and back, each time replacing what was there at once.
 */
Test(resfile, shared_containers_link_to_their_pool)
{
	static const char	 p1[] = "ALL_MEMS=\"0\"\nSHARED_CPUS=\"1-3\"\n";
	static const char	 p2[] = "ALL_MEMS=\"0\"\nSHARED_CPUS=\"2-3\"\n";
	static const char	 own[] = "ALL_MEMS=\"0\"\nEXCLUSIVE_CPUS=\"1\"\n";
	char			*dir, *cause = NULL, *got, *pool, *cdir, *want;
	int			 link, i;

	dir = testlib_tmpdir();
	pool = resfile_pool_name("NUMA node #0");
	cr_assert_eq(resfile_put_pool(dir, pool, p1, strlen(p1), &cause), 0,
	    "%s", cause);
	for (i = 0; i < 2; i++) {
		char id[8];

		snprintf(id, sizeof id, "c%d", i);
		cr_assert(!resfile_linked(dir, id, pool));
		cr_assert_eq(resfile_link(NULL, dir, id, pool, NULL, &cause), 0,
		    "%s", cause);
		cr_assert(resfile_linked(dir, id, pool));
		got = reads(dir, id, &link);
		cr_assert(link);
		cr_assert_str_eq(got, p1);
		free(got);
	}
	/* One write moves both. */
	cr_assert_eq(resfile_put_pool(dir, pool, p2, strlen(p2), &cause), 0);
	for (i = 0; i < 2; i++) {
		got = reads(dir, i ? "c1" : "c0", &link);
		cr_assert_str_eq(got, p2);
		free(got);
	}
	/* c0 gets a folder of its own, then the link again, twice: each
	 * takes the other's place by exchange. */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(resfile_put(NULL, dir, "c0", own, strlen(own), &cause),
		    0, "%s", cause);
		got = reads(dir, "c0", &link);
		cr_assert(!link);
		cr_assert_str_eq(got, own);
		free(got);
		cr_assert(!resfile_linked(dir, "c0", pool));
		cr_assert_eq(resfile_link(NULL, dir, "c0", pool, NULL, &cause),
		    0, "%s", cause);
		got = reads(dir, "c0", &link);
		cr_assert(link);
		cr_assert_str_eq(got, p2);
		free(got);
	}
	/* Removal takes the link, never the pool's file behind it nor the
	 * pool's own link; nothing staged is left. */
	cr_assert_eq(resfile_remove(NULL, dir, "c0", &cause), 0, "%s", cause);
	cr_assert_eq(resfile_remove(NULL, dir, "c1", &cause), 0, "%s", cause);
	xasprintf(&cdir, "%s/containers", dir);
	xasprintf(&want, ".pool.%s", pool);
	testlib_assert_listing(cdir, want);
	free(want);
	free(cdir);
	xasprintf(&cdir, "%s/pools/%s/resources.sh", dir, pool);
	got = testlib_read(cdir, NULL);
	cr_assert_str_eq(got, p2);
	free(got);
	free(cdir);
	/* A stage a crash left behind goes with the next prune, the pool's
	 * file stays. */
	cr_assert_eq(resfile_link(NULL, dir, "c2", pool, NULL, &cause), 0,
	    "%s", cause);
	xasprintf(&cdir, "%s/containers/.resfile-c2.new", dir);
	cr_assert_eq(mkdir(cdir, 0700), 0);
	free(cdir);
	cr_assert_eq(resfile_prune(NULL, dir, keep_c2, NULL, &cause), 0, "%s",
	    cause);
	xasprintf(&cdir, "%s/containers", dir);
	xasprintf(&want, ".pool.%s c2", pool);
	testlib_assert_listing(cdir, want);
	free(want);
	free(cdir);
	/* Unsafe names are refused. */
	cr_assert_eq(resfile_link(NULL, dir, "..", pool, NULL, &cause), -EINVAL);
	free(cause);
	cause = NULL;
	cr_assert_eq(resfile_put_pool(dir, "a/b", p1, strlen(p1), &cause),
	    -EINVAL);
	free(cause);
	free(pool);
	free(dir);
}

static ino_t
inode_of(const char *dir, const char *name)
{
	struct stat	 st;
	char		*path;

	xasprintf(&path, "%s/containers/%s", dir, name);
	cr_assert_eq(lstat(path, &st), 0, "%s", path);
	free(path);
	return (st.st_ino);
}

static int
keep_none(const char *id, void *arg)
{
	(void)id;
	(void)arg;
	return (0);
}

/*
 * A shared container's link is a hard link of its pool's own link
 * (containers/.pool.<pool>): links make and free no inode, one pool's
 * links are one inode, another pool's another. A pool's link that is not
 * right is put right before it is linked.
 */
Test(resfile, links_are_hard_links_of_the_pools_link)
{
	static const char	 p1[] = "ALL_MEMS=\"0\"\nSHARED_CPUS=\"1-3\"\n";
	static const char	 p2[] = "ALL_MEMS=\"1\"\nSHARED_CPUS=\"4-7\"\n";
	struct stat		 st;
	char			*dir, *cause = NULL, *got, *pool, *other, *cdir;
	char			*tmpl, *want, buf[64];
	ino_t			 ino;
	ssize_t			 n;
	int			 link, i;

	dir = testlib_tmpdir();
	xasprintf(&cdir, "%s/containers", dir);
	pool = resfile_pool_name("NUMA node #0");
	other = resfile_pool_name("NUMA node #1");
	cr_assert_eq(resfile_put_pool(dir, pool, p1, strlen(p1), &cause), 0);
	cr_assert_eq(resfile_put_pool(dir, other, p2, strlen(p2), &cause), 0);
	for (i = 0; i < 3; i++) {
		char id[8];

		snprintf(id, sizeof id, "c%d", i);
		cr_assert_eq(resfile_link(NULL, dir, id, pool, NULL, &cause), 0,
		    "%s", cause);
	}
	ino = inode_of(dir, "c0");
	cr_assert_eq(inode_of(dir, "c1"), ino);
	cr_assert_eq(inode_of(dir, "c2"), ino);
	xasprintf(&tmpl, ".pool.%s", pool);
	cr_assert_eq(inode_of(dir, tmpl), ino);
	xasprintf(&want, "%s c0 c1 c2", tmpl);
	testlib_assert_listing(cdir, want);
	free(want);
	got = reads(dir, "c1", &link);
	cr_assert(link);
	cr_assert_str_eq(got, p1);
	free(got);
	/* Another pool: another inode; moving there keeps the first. */
	cr_assert_eq(resfile_link(NULL, dir, "c1", other, NULL, &cause), 0);
	cr_assert_neq(inode_of(dir, "c1"), ino);
	got = reads(dir, "c1", &link);
	cr_assert_str_eq(got, p2);
	free(got);
	cr_assert(resfile_linked(dir, "c1", other));
	cr_assert_eq(resfile_remove(NULL, dir, "c0", &cause), 0);
	cr_assert_eq(resfile_remove(NULL, dir, "c2", &cause), 0);
	cr_assert_eq(inode_of(dir, tmpl), ino);
	xasprintf(&want, "%s/%s", cdir, tmpl);
	cr_assert_eq(lstat(want, &st), 0);
	cr_assert_eq(st.st_nlink, 1);
	/* A pool's link pointing elsewhere is put right. */
	cr_assert_eq(unlink(want), 0);
	cr_assert_eq(symlink("../pools/elsewhere", want), 0);
	cr_assert_eq(resfile_link(NULL, dir, "c3", pool, NULL, &cause), 0);
	n = readlink(want, buf, sizeof buf - 1);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_assert_eq(strncmp(buf, "../pools/", 9), 0);
	cr_assert_str_eq(buf + 9, pool);
	got = reads(dir, "c3", &link);
	cr_assert_str_eq(got, p1);
	free(got);
	cr_assert_eq(inode_of(dir, "c3"), inode_of(dir, tmpl));
	/* A prune at start leaves the pools' links alone. */
	cr_assert_eq(resfile_prune(NULL, dir, keep_none, NULL, &cause), 2,
	    "%s", cause);
	xasprintf(&got, "%s .pool.%s", tmpl, other);
	testlib_assert_listing(cdir, got);
	free(got);
	free(want);
	free(tmpl);
	free(other);
	free(pool);
	free(cdir);
	free(dir);
}

/*
 * The caller's note that a pool's link was found right: set by the first
 * link, it lets the next ones link at once; a pool's link gone meanwhile
 * is made again, and one linked name already there is still replaced.
 */
Test(resfile, known_pool_link)
{
	static const char	 p1[] = "ALL_MEMS=\"0\"\nSHARED_CPUS=\"1-3\"\n";
	static const char	 own[] = "EXCLUSIVE_CPUS=\"5\"\n";
	char			*dir, *cause = NULL, *got, *pool, *tmpl;
	int			 known = 0, link;

	dir = testlib_tmpdir();
	pool = resfile_pool_name("NUMA node #0");
	cr_assert_eq(resfile_put_pool(dir, pool, p1, strlen(p1), &cause), 0);
	cr_assert_eq(resfile_link(NULL, dir, "c0", pool, &known, &cause), 0,
	    "%s", cause);
	cr_assert_eq(known, 1);
	cr_assert_eq(resfile_link(NULL, dir, "c1", pool, &known, &cause), 0,
	    "%s", cause);
	cr_assert_eq(known, 1);
	xasprintf(&tmpl, "%s/containers/.pool.%s", dir, pool);
	cr_assert_eq(inode_of(dir, "c1"), inode_of(dir, "c0"));
	/* Its link gone since: made again, and the note stands. */
	cr_assert_eq(unlink(tmpl), 0);
	cr_assert_eq(resfile_link(NULL, dir, "c2", pool, &known, &cause), 0,
	    "%s", cause);
	cr_assert_eq(known, 1);
	cr_assert(resfile_linked(dir, "c2", pool));
	got = reads(dir, "c2", &link);
	cr_assert(link);
	cr_assert_str_eq(got, p1);
	free(got);
	/* A folder of its own where the link goes: replaced. */
	cr_assert_eq(resfile_put(NULL, dir, "c1", own, strlen(own), &cause), 0,
	    "%s", cause);
	cr_assert_eq(resfile_link(NULL, dir, "c1", pool, &known, &cause), 0,
	    "%s", cause);
	got = reads(dir, "c1", &link);
	cr_assert(link);
	cr_assert_str_eq(got, p1);
	free(got);
	free(tmpl);
	free(pool);
	free(dir);
}

/*
 * With the spares, a container that goes leaves its folder aside, and
 * the next one with a file of its own is given it by a rename: the same
 * inode, the new content, never a container's old text under another's
 * name.
 */
Test(resfile, spares_recycle_folders)
{
	static const char	 p1[] = "ALL_MEMS=\"0\"\nSHARED_CPUS=\"1-3\"\n";
	static const char	 own1[] = "ALL_MEMS=\"0\"\nEXCLUSIVE_CPUS=\"1\"\n";
	static const char	 own2[] = "ALL_MEMS=\"0\"\nEXCLUSIVE_CPUS=\"2\"\n";
	struct spares		*sp;
	char			*dir, *cause = NULL, *got, *pool, *cdir, *path;
	char			*want;
	ino_t			 dir_ino;
	int			 link, i;

	dir = testlib_tmpdir();
	xasprintf(&cdir, "%s/containers", dir);
	pool = resfile_pool_name("NUMA node #0");
	cr_assert_eq(resfile_put_pool(dir, pool, p1, strlen(p1), &cause), 0);
	sp = resfile_spares_new(dir);

	cr_assert_eq(resfile_put(sp, dir, "c2", own1, strlen(own1), &cause),
	    0, "%s", cause);
	dir_ino = inode_of(dir, "c2");
	cr_assert_eq(resfile_remove(sp, dir, "c2", &cause), 0, "%s", cause);
	testlib_assert_listing(cdir, ".spare.0");
	cr_assert_eq(resfile_put(sp, dir, "c3", own2, strlen(own2), &cause),
	    0, "%s", cause);
	cr_assert_eq(inode_of(dir, "c3"), dir_ino);
	got = reads(dir, "c3", &link);
	cr_assert(!link);
	cr_assert_str_eq(got, own2);
	free(got);
	testlib_assert_listing(cdir, "c3");

	/* A linked container given a file of its own takes a spare folder
	 * in its link's place; linked again, its folder is kept. */
	cr_assert_eq(resfile_link(sp, dir, "c1", pool, NULL, &cause), 0);
	cr_assert_eq(resfile_remove(sp, dir, "c3", &cause), 0);
	cr_assert_eq(resfile_put(sp, dir, "c1", own1, strlen(own1), &cause),
	    0, "%s", cause);
	cr_assert_eq(inode_of(dir, "c1"), dir_ino);
	got = reads(dir, "c1", &link);
	cr_assert(!link);
	cr_assert_str_eq(got, own1);
	free(got);
	cr_assert_eq(spares_count(sp), 0);
	cr_assert_eq(resfile_link(sp, dir, "c1", pool, NULL, &cause), 0);
	got = reads(dir, "c1", &link);
	cr_assert(link);
	cr_assert_str_eq(got, p1);
	free(got);
	cr_assert_eq(spares_count(sp), 1);

	/* At most 128 folders are kept; the rest are removed. */
	for (i = 0; i < 130; i++) {
		char id[16];

		snprintf(id, sizeof id, "m%d", i);
		cr_assert_eq(resfile_put(sp, dir, id, own1, strlen(own1),
		    &cause), 0);
	}
	for (i = 0; i < 130; i++) {
		char id[16];

		snprintf(id, sizeof id, "m%d", i);
		cr_assert_eq(resfile_remove(sp, dir, id, &cause), 0);
	}
	cr_assert_eq(spares_count(sp), 128);

	/* A prune at start leaves the spares alone; a new run takes back
	 * the ones that fit and removes the others. */
	cr_assert_eq(resfile_prune(sp, dir, keep_none, NULL, &cause), 1,
	    "%s", cause);
	spares_free(sp);
	path = testlib_join(cdir, ".spare.900");
	testlib_write(path, "x", 1);
	free(path);
	path = testlib_join(cdir, ".spare.901");
	cr_assert_eq(symlink("../pools/x", path), 0);
	free(path);
	path = testlib_join(cdir, ".spare.x");
	testlib_write(path, "x", 1);
	sp = resfile_spares_new(dir);
	cr_assert_eq(spares_count(sp), 128);
	cr_assert(testlib_exists(path), "a name no spare has is left alone");
	free(path);
	path = testlib_join(cdir, ".spare.900");
	cr_assert(!testlib_exists(path), "a file is no spare folder");
	free(path);
	path = testlib_join(cdir, ".spare.901");
	cr_assert(!testlib_exists(path), "a link is no spare folder");
	free(path);
	/* Numbering goes on past the highest found. */
	cr_assert_eq(resfile_put(sp, dir, "n0", own1, strlen(own1), &cause),
	    0);
	cr_assert_eq(spares_count(sp), 127);
	cr_assert_eq(resfile_link(sp, dir, "n0", pool, NULL, &cause), 0);
	want = testlib_join(cdir, ".spare.902");
	cr_assert(testlib_exists(want), "%s", testlib_listing(cdir));
	free(want);

	/* A hidden name is no container's. */
	cr_assert_eq(resfile_link(sp, dir, ".spare.0", pool, NULL, &cause),
	    -EINVAL);
	free(cause);
	spares_free(sp);
	free(pool);
	free(cdir);
	free(dir);
}

/*
 * A file made new (its folder just made) has the mode 0644 whatever the
 * umask, and its data; one there after all is written over and cut, as
 * atomicfile_fill does.
 */
Test(resfile, a_new_file_made_or_filled)
{
	struct stat	 st;
	char		*dir, *path, *got, *cause = NULL;
	mode_t		 old;

	dir = testlib_tmpdir();
	path = testlib_join(dir, "f");
	old = umask(077);
	cr_assert_eq(atomicfile_new(path, "abcdef", 6, &cause), 0, "%s",
	    cause ? cause : "");
	umask(old);
	cr_assert(stat(path, &st) == 0);
	cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
	got = testlib_read(path, NULL);
	cr_assert_str_eq(got, "abcdef");
	free(got);
	cr_assert_eq(atomicfile_new(path, "xy", 2, &cause), 0, "%s",
	    cause ? cause : "");
	got = testlib_read(path, NULL);
	cr_assert_str_eq(got, "xy");
	free(got);
	cr_assert_eq(atomicfile_fill(path, "z", 1, &cause), 0);
	got = testlib_read(path, NULL);
	cr_assert_str_eq(got, "z");
	free(got);
	free(path);
	free(dir);
}

