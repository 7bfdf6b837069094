/*
 * test_journal.c: the journal file's NUL room (journal.c). Appends go
 * right after the last record whatever room follows it, room is made a
 * JOURNAL_ROOM at a time, a sync that fails cuts the file back to the
 * records it had, and a stop leaves the file without room.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "jrec.h"
#include "testlib.h"
#include "xmalloc.h"

struct seqs {
	uint64_t	v[16];
	int		n;
};

static int
collect(uint64_t seq, const char *payload, size_t len, void *arg)
{
	struct seqs	*s = arg;

	(void)payload;
	(void)len;
	cr_assert_lt(s->n, 16);
	s->v[s->n++] = seq;
	return (0);
}

/* Record seq with a payload of its own. */
static char *
record(uint64_t seq, size_t *len)
{
	char	payload[64];
	int	n;

	n = snprintf(payload, sizeof payload, "{\"event\":{\"n\":%llu}}",
	    (unsigned long long)seq);
	return (jrec_encode(seq, payload, (size_t)n, len));
}

/* The journal file of dir: its size, and the seqs of its records after
 * checking that nothing but room follows them. */
static size_t
file_records(const char *path, struct seqs *s, size_t *records)
{
	size_t	 len, good;
	char	*buf = testlib_read(path, &len), *cause = NULL;

	memset(s, 0, sizeof *s);
	cr_assert_eq(jrec_scan(buf, len, collect, s, &good, &cause),
	    JREC_END, "%s", cause != NULL ? cause : "");
	*records = good;
	free(buf);
	return (len);
}

/* A journal of records 1 and 2 followed by room bytes of NUL, as a crash
 * leaves it; the path, and the records' bytes in *rlen. */
static char *
crashed_journal(const char *dir, size_t room, size_t *rlen)
{
	char	*path = testlib_join(dir, JOURNAL_NAME), *r1, *r2, *buf;
	size_t	 l1, l2;

	r1 = record(1, &l1);
	r2 = record(2, &l2);
	buf = xcalloc(1, l1 + l2 + room);
	memcpy(buf, r1, l1);
	memcpy(buf + l1, r2, l2);
	testlib_write(path, buf, l1 + l2 + room);
	*rlen = l1 + l2;
	free(buf);
	free(r1);
	free(r2);
	return (path);
}

static void
append(struct journal *j, uint64_t seq)
{
	size_t	 len;
	char	*rec = record(seq, &len), *cause = NULL;

	cr_assert_eq(journal_next(j), seq);
	cr_assert_eq(journal_append(j, rec, len, 1, &cause), 0, "%s", cause);
	free(rec);
}

Test(journal, appends_follow_the_records_not_the_room)
{
	char		*dir = testlib_tmpdir(), *path, *cause = NULL;
	struct journal	*j;
	struct seqs	 s;
	size_t		 rlen, size, records;

	path = crashed_journal(dir, 5000, &rlen);
	cr_assert_eq(journal_open(dir, 2, 100, &j, &cause), 0, "%s", cause);
	append(j, 3);
	cr_assert_eq(journal_sync(j, &cause), 0, "%s", cause);
	size = file_records(path, &s, &records);
	cr_assert_eq(s.n, 3);
	cr_assert(s.v[0] == 1 && s.v[1] == 2 && s.v[2] == 3);
	cr_assert_gt(records, rlen);
	/* Into the room there was: the file's size stayed. */
	cr_assert_eq(size, rlen + 5000, "%zu", size);
	/* A stop cuts the room off. */
	journal_free(j);
	cr_assert_eq(file_records(path, &s, &records), records);
	cr_assert_eq(s.n, 3);
	free(path);
	free(dir);
}

Test(journal, room_is_made_once_for_many_appends)
{
	char		*dir = testlib_tmpdir(), *path, *cause = NULL;
	struct journal	*j;
	struct seqs	 s;
	struct stat	 sb;
	size_t		 rlen, records, size;

	path = crashed_journal(dir, 0, &rlen);
	cr_assert_eq(journal_open(dir, 2, 100, &j, &cause), 0, "%s", cause);
	append(j, 3);
	cr_assert_eq(stat(path, &sb), 0);
	size = (size_t)sb.st_size;
	cr_assert_eq(size, JOURNAL_ROOM);
	append(j, 4);
	append(j, 5);
	cr_assert_eq(journal_sync(j, &cause), 0, "%s", cause);
	/* The next appends went into the room: the size stayed. */
	cr_assert_eq(file_records(path, &s, &records), size);
	cr_assert_eq(s.n, 5);
	journal_free(j);
	free(path);
	free(dir);
}

#ifdef TOPOAWARE_DEBUG_HOOKS
Test(journal, a_failed_sync_leaves_the_records_before_it)
{
	char		*dir = testlib_tmpdir(), *path, *cause = NULL;
	struct journal	*j;
	struct seqs	 s;
	size_t		 rlen, records;

	cr_assert_eq(setenv("TOPOAWARE_DEBUG_FAIL", "journal-sync:1", 1), 0);
	path = crashed_journal(dir, 3000, &rlen);
	cr_assert_eq(journal_open(dir, 2, 100, &j, &cause), 0, "%s", cause);
	append(j, 3);
	cr_assert_neq(journal_sync(j, &cause), 0);
	free(cause);
	cause = NULL;
	/* Cut back to records 1 and 2, room and all. */
	cr_assert_eq(file_records(path, &s, &records), rlen);
	cr_assert_eq(records, rlen);
	cr_assert_eq(s.n, 2);
	/* Seq 3 is given again, and lands right after them. */
	append(j, 3);
	cr_assert_eq(journal_sync(j, &cause), 0, "%s", cause);
	/* With room again: the cut took it, the append makes it anew. */
	cr_assert_eq(file_records(path, &s, &records) % JOURNAL_ROOM, 0);
	cr_assert_eq(s.n, 3);
	cr_assert_eq(s.v[2], 3);
	journal_free(j);
	free(path);
	free(dir);
}
#endif

/* A record appended from its payload is the one jrec_encode frames, after
 * the records there were. */
Test(journal, a_record_framed_in_place)
{
	char		*dir = testlib_tmpdir(), *path, *cause = NULL, *want;
	char		*buf;
	struct journal	*j;
	struct seqs	 s;
	size_t		 rlen, wlen, len, records;
	const char	 payload[] = "{\"event\":{\"op\":\"sync\"}}";

	path = crashed_journal(dir, 100, &rlen);
	cr_assert_eq(journal_open(dir, 2, 100, &j, &cause), 0, "%s", cause);
	cr_assert_eq(journal_append_record(j, payload, strlen(payload), 0,
	    &cause), 0, "%s", cause);
	cr_assert_eq(journal_next(j), 4);
	cr_assert_eq(journal_sync(j, &cause), 0, "%s", cause);
	(void)file_records(path, &s, &records);
	cr_assert_eq(s.n, 3);
	want = jrec_encode(3, payload, strlen(payload), &wlen);
	cr_assert_eq(records, rlen + wlen);
	buf = testlib_read(path, &len);
	cr_assert(memcmp(buf + rlen, want, wlen) == 0, "%.*s", (int)wlen,
	    buf + rlen);
	free(buf);
	free(want);
	journal_free(j);
	free(path);
	free(dir);
}

#ifdef TOPOAWARE_DEBUG_HOOKS
#define SNAP	"{\"version\":3,\"grants\":{}}"

/* A record of n bytes of payload, appended; whole or not. */
static void
append_bytes(struct journal *j, size_t n, int whole)
{
	char	*p = xmalloc(n + 1), *cause = NULL;

	memset(p, 'x', n);
	p[0] = '"';
	p[n - 1] = '"';
	cr_assert_eq(journal_append_record(j, p, n, whole, &cause), 0, "%s",
	    cause);
	free(p);
}

/* A journal in a folder of its own under dir, its snapshot 100 bytes. */
static struct journal *
journal_in(const char *dir, const char *name)
{
	struct journal	*j;
	char		*sub = testlib_join(dir, name), *cause = NULL;

	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(journal_open(sub, 0, 100, &j, &cause), 0, "%s", cause);
	free(sub);
	return (j);
}

/* Records of 100 bytes until the journal wants a snapshot: how many. */
static int
until_compacted(struct journal *j)
{
	int	n;

	for (n = 0; n < 20 && !journal_wants_snapshot(j); n++)
		append_bytes(j, 100, 0);
	return (n);
}

/* A record of the whole state is a snapshot of its own: the journal is
 * compacted when it outgrows twice it, not its snapshot; a sync that
 * fails takes it back. */
Test(journal, a_record_of_the_whole_state_counts_as_a_snapshot)
{
	char		*dir = testlib_tmpdir(), *cause = NULL;
	struct journal	*j;
	int		 n;

	cr_assert_eq(setenv("TOPOAWARE_DEBUG_JOURNAL_MIN", "1", 1), 0);
	/* The third sync of this test fails (read at the first). */
	cr_assert_eq(setenv("TOPOAWARE_DEBUG_FAIL", "journal-sync:3", 1), 0);
	/* Not whole: past twice the snapshot at once. */
	j = journal_in(dir, "a");
	append_bytes(j, 1000, 0);
	cr_assert(journal_wants_snapshot(j));
	journal_free(j);
	/* Whole: only once twice it is written after it, about 1,000 bytes
	 * more: 9 or 10 records of 100 and their headers. */
	j = journal_in(dir, "b");
	append_bytes(j, 1000, 1);
	cr_assert_eq(journal_sync(j, &cause), 0, "%s", cause);
	cr_assert(!journal_wants_snapshot(j));
	n = until_compacted(j);
	cr_assert(n >= 8 && n <= 10, "%d", n);
	/* A compaction starts over from its snapshot. */
	cr_assert_eq(journal_snapshot(j, SNAP, strlen(SNAP), &cause), 0, "%s",
	    cause);
	append_bytes(j, 1000, 0);
	cr_assert(journal_wants_snapshot(j));
	journal_free(j);
	/* Whole, then a larger whole one whose sync fails: the first counts. */
	j = journal_in(dir, "c");
	append_bytes(j, 1000, 1);
	cr_assert_eq(journal_sync(j, &cause), 0, "%s", cause);
	append_bytes(j, 5000, 1);
	cr_assert_neq(journal_sync(j, &cause), 0);
	free(cause);
	n = until_compacted(j);
	cr_assert(n >= 8 && n <= 10, "%d", n);
	journal_free(j);
	free(dir);
}
#endif
