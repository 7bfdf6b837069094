/*
 * journal.c keeps the state on disk as a snapshot and a journal of the
 * changes since (journal.h). An append writes every record of a commit at
 * once and syncs once; if that fails, the file is cut back so that no
 * record of a change that was not acknowledged is left to be replayed.
 * A new snapshot is written in an order that leaves, at every step, a
 * snapshot and the journals that lead from it to the last change:
 *
 *	1. state.json is kept as state.json.prev (a hard link),
 *	2. journal, unless empty, becomes journal.prev,
 *	3. the new state.json is written atomically (temporary file, fsync,
 *	   rename, fsync of the folder),
 *	4. an empty journal is started.
 *
 * A start reads state.json, then journal.prev and journal, and applies
 * the records after the snapshot's seq in order: a crash anywhere in that
 * sequence loses nothing.
 *
 * The journal keeps NUL room after its records (make_room), so that an
 * append does not change the file's size and its fdatasync writes the
 * record's blocks alone, not the inode too (nor, on a file system with a
 * journal of its own, a commit of that). Readers take the NUL bytes after
 * the last record for what they are (jrec.h); a stop cuts them off.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomicfile.h"
#include "journal.h"
#include "jrec.h"
#include "log.h"
#include "metrics.h"
#include "policy.h"
#include "readfile.h"
#include "statefile.h"
#include "xmalloc.h"

struct journal {
	char		*dir;
	char		*path;
	int		 fd;
	size_t		 size;		/* bytes of its records */
	size_t		 alloc;		/* bytes in the file: the records,
					   then NUL room */
	size_t		 snapsize;	/* bytes of its snapshot */
	size_t		 wholesize;	/* of the last record of the whole
					   state since, 0 when none */
	uint64_t	 seq;		/* the last record written */
	int		 records;	/* records since the snapshot */
	size_t		 compact_min;	/* JOURNAL_COMPACT_MIN */
	unsigned long	 compactions;
	/* Records written since the last sync, and where it left off. */
	int		 unsynced;
	size_t		 synced_size;
	uint64_t	 synced_seq;
	int		 synced_records;
	size_t		 synced_whole;
	uint64_t	 changes;	/* journal_changes */
};

#ifdef TOPOAWARE_DEBUG_HOOKS
/*
 * TOPOAWARE_DEBUG_CRASH=journal-append:N kills the daemon in the middle of
 * its Nth append (half the bytes written, none synced);
 * compact:N after step 2 of its Nth snapshot (the journal moved, the new
 * snapshot not yet there). The first snapshot is the one at start.
 */
static int
debug_crash(const char *point)
{
	static long	 left[2] = { -1, -1 };
	static int	 read_env;
	const char	*v, *names[2] = { "journal-append:", "compact:" };
	char		*end;
	int		 i;

	if (!read_env) {
		read_env = 1;
		if ((v = getenv("TOPOAWARE_DEBUG_CRASH")) != NULL)
			for (i = 0; i < 2; i++)
				if (strncmp(v, names[i], strlen(names[i])) == 0) {
					left[i] = strtol(v + strlen(names[i]),
					    &end, 10);
					if (*end != '\0' || left[i] < 1)
						left[i] = -1;
				}
	}
	i = strcmp(point, "compact") == 0;
	if (left[i] < 0 || --left[i] > 0)
		return (0);
	return (1);
}

/*
 * TOPOAWARE_DEBUG_FAIL=journal-sync:N fails the Nth sync (EIO);
 * journal-sync:/PATH fails every sync while PATH exists.
 */
static int
debug_fail_sync(void)
{
	static long	 left = -1;
	static int	 read_env;
	static char	*path;
	const char	*v, *name = "journal-sync:";
	char		*end;

	if (!read_env) {
		read_env = 1;
		if ((v = getenv("TOPOAWARE_DEBUG_FAIL")) != NULL &&
		    strncmp(v, name, strlen(name)) == 0) {
			v += strlen(name);
			if (*v == '/')
				path = xstrdup(v);
			else {
				left = strtol(v, &end, 10);
				if (*end != '\0' || left < 1)
					left = -1;
			}
		}
	}
	if (path != NULL)
		return (access(path, F_OK) == 0);
	return (left > 0 && --left == 0);
}
#else
static int
debug_crash(const char *point)
{
	(void)point;
	return (0);
}

static int
debug_fail_sync(void)
{
	return (0);
}
#endif

static char *
path_of(const char *dir, const char *name)
{
	char	*p;

	xasprintf(&p, "%s/%s", dir, name);
	return (p);
}

int
journal_replay_record(uint64_t seq, const char *payload, size_t len,
    void *arg)
{
	struct journal_replay	*ld = arg;
	json_t			*rec;
	json_error_t		 err;
	char			*why = NULL;

	if (seq < ld->expect)
		return (0);	/* already in the snapshot */
	if (seq > ld->expect) {
		xasprintf(&ld->error, "record %" PRIu64 " follows %" PRIu64,
		    seq, ld->expect - 1);
		return (JOURNAL_REPLAY_STOP);
	}
	if ((rec = json_loadb(payload, len, 0, &err)) == NULL) {
		xasprintf(&ld->error, "record %" PRIu64 " is not JSON: %s",
		    seq, err.text);
		return (JOURNAL_REPLAY_STOP);
	}
	if (policy_record_apply(ld->doc, rec, &why) != 0) {
		xasprintf(&ld->error, "record %" PRIu64 ": %s", seq, why);
		free(why);
		json_decref(rec);
		return (JOURNAL_REPLAY_STOP);
	}
	json_decref(rec);
	ld->expect++;
	ld->applied++;
	return (0);
}

/* Renames a damaged journal to journal.bad-<unixtime>[-N]; where it
 * went, or NULL (said in the log). */
static char *
move_aside(const char *dir, const char *name)
{
	char	*to = NULL, *why = NULL;

	if (statefile_move_aside_file(dir, name, JOURNAL_BAD, &to,
	    &why) != 0) {
		log_warnx("cannot move the damaged journal aside: %s", why);
		free(why);
		return (NULL);
	}
	return (to);
}

/*
 * One journal file into ld. 0 when all of it was read (a torn tail cut
 * off the current journal); 1 when it is damaged (moved aside); -errno
 * when it cannot be read.
 */
static int
load_file(const char *dir, const char *name, int current,
    struct journal_replay *ld, struct journal_start *st, char **cause)
{
	char	*path = path_of(dir, name), *buf = NULL, *why = NULL, *to;
	size_t	 len, good;
	int	 rc, fd = -1;

	rc = readfile(path, "state journal", JOURNAL_MAX_SIZE, &buf, &len,
	    &why);
	if (rc == -ENOENT) {
		free(why);
		free(path);
		return (0);
	}
	if (rc == -EFBIG) {
		/* Too big to be ours: damage, not a reason not to start. */
		st->damaged = 1;
		xasprintf(&st->damage, "%s", why);
		free(why);
		to = move_aside(dir, name);
		free(to);
		free(path);
		return (1);
	}
	if (rc != 0) {
		*cause = why;
		free(path);
		return (rc);
	}
	rc = jrec_scan(buf, len, journal_replay_record, ld, &good, &why);
	if (rc == JREC_TORN) {
		st->torn = 1;
		log_warnx("%s: %s; it was never acknowledged and is dropped",
		    path, why);
		free(why);
		why = NULL;
		if (current && ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1 ||
		    ftruncate(fd, (off_t)good) == -1 || fsync(fd) == -1))
			log_warn("cannot cut %s back to %zu bytes", path, good);
		if (fd != -1)
			close(fd);
		rc = JREC_END;
	}
	if (rc != JREC_END) {
		st->damaged = 1;
		to = move_aside(dir, name);
		xasprintf(&st->damage, "%s is damaged at byte %zu (%s); the "
		    "records before it were applied, the rest are lost; it "
		    "was moved to %s", path, good, ld->error != NULL ?
		    ld->error : why != NULL ? why : "?", to != NULL ? to :
		    "(nowhere: it could not be moved)");
		free(to);
		rc = 1;
	}
	free(why);
	free(ld->error);
	ld->error = NULL;
	free(buf);
	free(path);
	return (rc);
}

int
journal_load(const char *dir, struct journal_start *st, char **cause)
{
	struct journal_replay	 ld;
	json_t		*v;
	char		*why = NULL, *to, *cur;
	int		 rc;

	memset(st, 0, sizeof *st);
	memset(&ld, 0, sizeof ld);
	rc = statefile_read(dir, &ld.doc, &why);
	if (rc == -EBADMSG) {
		log_warnx("%s", why);
		free(why);
		why = NULL;
	} else if (rc != 0) {
		*cause = why;
		return (rc);
	}
	v = ld.doc != NULL ? json_object_get(ld.doc, "seq") : NULL;
	ld.expect = (json_is_integer(v) && json_integer_value(v) > 0 ?
	    (uint64_t)json_integer_value(v) : 0) + 1;
	if (ld.doc == NULL)
		ld.doc = json_pack("{s:i, s:{}}", "version", STATEFILE_VERSION,
		    "grants");
	if ((rc = load_file(dir, JOURNAL_PREV, 0, &ld, st, cause)) < 0)
		goto fail;
	if (rc == 0 && (rc = load_file(dir, JOURNAL_NAME, 1, &ld, st,
	    cause)) < 0)
		goto fail;
	cur = path_of(dir, JOURNAL_NAME);
	if (rc == 1 && access(cur, F_OK) == 0) {
		/* Its records come after the damage: they cannot apply. */
		to = move_aside(dir, JOURNAL_NAME);
		free(to);
	}
	free(cur);
	st->seq = ld.expect - 1;
	st->records = ld.applied;
	st->doc = ld.doc;
	return (0);
fail:
	json_decref(ld.doc);
	return (rc);
}

void
journal_start_clear(struct journal_start *st)
{
	json_decref(st->doc);
	free(st->damage);
	memset(st, 0, sizeof *st);
}

/*
 * Where the records of a file of size bytes end: after its last byte that
 * is not NUL room. -1 (errno) when it cannot be read.
 */
static off_t
records_end(int fd, off_t size)
{
	char	buf[8192];
	off_t	at = size;
	size_t	want, i;
	ssize_t	n;

	while (at > 0) {
		want = at < (off_t)sizeof buf ? (size_t)at : sizeof buf;
		n = pread(fd, buf, want, at - (off_t)want);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if ((size_t)n != want) {
			errno = EIO;	/* it shrank under us */
			return (-1);
		}
		for (i = want; i > 0; i--)
			if (buf[i - 1] != '\0')
				return (at - (off_t)want + (off_t)i);
		at -= (off_t)want;
	}
	return (0);
}

static int
open_journal(struct journal *j, int truncate, char **cause)
{
	struct stat	sb;
	off_t		end;
	int		fd;

	fd = open(j->path, O_RDWR | O_CREAT | O_CLOEXEC |
	    (truncate ? O_TRUNC : 0), 0600);
	if (fd == -1)
		return (atomicfile_syserr(cause, "open", j->path));
	if (fstat(fd, &sb) == -1) {
		close(fd);
		return (atomicfile_syserr(cause, "fstat", j->path));
	}
	if ((end = records_end(fd, sb.st_size)) == -1) {
		close(fd);
		return (atomicfile_syserr(cause, "read", j->path));
	}
	if (j->fd != -1)
		close(j->fd);
	j->fd = fd;
	j->size = (size_t)end;
	j->alloc = (size_t)sb.st_size;
	metrics_set("journal_bytes", (double)j->size);
	return (0);
}

/*
 * NUL room after the records, up to the next multiple of JOURNAL_ROOM past
 * end, made when an append reaches past the room there was. It is only
 * room: what cannot be written is simply not there.
 */
static void
make_room(struct journal *j, size_t end)
{
	static const char	zero[16384];
	size_t			at = end, to, want;
	ssize_t			n;

	if (end <= j->alloc)
		return;
	to = (end / JOURNAL_ROOM + 1) * JOURNAL_ROOM;
	while (at < to) {
		want = to - at < sizeof zero ? to - at : sizeof zero;
		n = pwrite(j->fd, zero, want, (off_t)at);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		at += (size_t)n;
	}
	j->alloc = at;
}

/* A journal that is left (at a stop, or as journal.prev) is left without
 * its room: the file an older binary expects. */
static void
close_journal(struct journal *j)
{
	if (j->alloc > j->size && ftruncate(j->fd, (off_t)j->size) == -1)
		log_warn("cannot cut %s back to %zu bytes", j->path, j->size);
	close(j->fd);
	j->fd = -1;
}

/* The file cut back to its first to bytes: records undone, and their room
 * with them. */
static void
cut_back(struct journal *j, size_t to)
{
	if (ftruncate(j->fd, (off_t)to) == -1)
		log_warn("cannot cut %s back to %zu bytes", j->path, to);
	j->alloc = to;
}

int
journal_open(const char *dir, uint64_t seq, size_t snapsize,
    struct journal **out, char **cause)
{
	struct journal	*j;
	int		 rc;

	j = xcalloc(1, sizeof *j);
	j->dir = xstrdup(dir);
	j->path = path_of(dir, JOURNAL_NAME);
	j->fd = -1;
	j->seq = seq;
	j->snapsize = snapsize;
	j->compact_min = JOURNAL_COMPACT_MIN;
#ifdef TOPOAWARE_DEBUG_HOOKS
	/* Tests compact small journals, to crash in the middle of it. */
	if (getenv("TOPOAWARE_DEBUG_JOURNAL_MIN") != NULL)
		j->compact_min = (size_t)strtoul(
		    getenv("TOPOAWARE_DEBUG_JOURNAL_MIN"), NULL, 10);
#endif
	if ((rc = open_journal(j, 0, cause)) != 0) {
		journal_free(j);
		return (rc);
	}
	*out = j;
	return (0);
}

void
journal_free(struct journal *j)
{
	if (j == NULL)
		return;
	if (j->fd != -1)
		close_journal(j);
	free(j->dir);
	free(j->path);
	free(j);
}

uint64_t
journal_next(const struct journal *j)
{
	return (j->seq + 1);
}

static double
since(const struct timespec *t0)
{
	struct timespec	t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9);
}

/* The debug hook's crash in the middle of an append: the first half of
 * its bytes written, none synced. */
static void
crash_half_way(struct journal *j, const struct iovec *iov, int niov,
    size_t len)
{
	size_t	at = 0, half = len / 2, k;
	int	i;

	for (i = 0; i < niov && at < half; i++) {
		k = iov[i].iov_len < half - at ? iov[i].iov_len : half - at;
		if (pwrite(j->fd, iov[i].iov_base, k, (off_t)(j->size + at)) < 0)
			log_warn("debug crash");
		at += k;
	}
	raise(SIGKILL);
}

/* Appends the len bytes of iov (niov parts, which it may change) holding
 * nrecords whole records. */
static int
append_parts(struct journal *j, struct iovec *iov, int niov, size_t len,
    int nrecords, char **cause)
{
	size_t		 done = 0, k;
	ssize_t		 n;
	int		 rc;

	/* A snapshot that could not start its journal: try again. */
	if (j->fd == -1 && (rc = open_journal(j, 0, cause)) != 0)
		return (rc);
	if (debug_crash("append"))
		crash_half_way(j, iov, niov, len);
	while (done < len) {
		n = pwritev(j->fd, iov, niov, (off_t)(j->size + done));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			rc = atomicfile_syserr(cause, "write", j->path);
			goto fail;
		}
		done += (size_t)n;
		/* A short write: on from where it stopped. */
		while (n > 0 && niov > 0) {
			k = (size_t)n < iov->iov_len ? (size_t)n : iov->iov_len;
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= k;
			n -= (ssize_t)k;
			if (iov->iov_len == 0) {
				iov++;
				niov--;
			}
		}
	}
	make_room(j, j->size + len);
	if (!j->unsynced) {
		j->unsynced = 1;
		j->synced_size = j->size;
		j->synced_seq = j->seq;
		j->synced_records = j->records;
		j->synced_whole = j->wholesize;
	}
	j->changes++;
	j->size += len;
	j->seq += (uint64_t)nrecords;
	j->records += nrecords;
	metrics_set("journal_bytes", (double)j->size);
	metrics_set("journal_pending_records", (double)j->records);
	while (nrecords-- > 0)
		metrics_inc("journal_records", NULL, NULL);
	return (0);
fail:
	j->changes++;
	/* Nothing of an unacknowledged change may stay to be replayed. */
	if (done > 0)
		cut_back(j, j->size);
	metrics_inc("errors", "kind", "state_write");
	return (rc);
}

int
journal_append(struct journal *j, const char *data, size_t len,
    int nrecords, char **cause)
{
	struct iovec	iov = { (void *)(uintptr_t)data, len };

	return (append_parts(j, &iov, 1, len, nrecords, cause));
}

int
journal_append_record(struct journal *j, const char *payload, size_t len,
    int whole, char **cause)
{
	char		hdr[JREC_MAX_HEADER], nl = '\n';
	struct iovec	iov[3];
	size_t		hlen;
	int		rc;

	hlen = jrec_header(journal_next(j), payload, len, hdr);
	iov[0].iov_base = hdr;
	iov[0].iov_len = hlen;
	iov[1].iov_base = (void *)(uintptr_t)payload;
	iov[1].iov_len = len;
	iov[2].iov_base = &nl;
	iov[2].iov_len = 1;
	if ((rc = append_parts(j, iov, 3, hlen + len + 1, 1, cause)) == 0 &&
	    whole)
		j->wholesize = hlen + len + 1;
	return (rc);
}

int
journal_sync(struct journal *j, char **cause)
{
	struct timespec	 t0;
	int		 rc;

	if (!j->unsynced)
		return (0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (debug_fail_sync()) {
		errno = EIO;
		rc = atomicfile_syserr(cause, "fdatasync", j->path);
	} else if (fdatasync(j->fd) == -1)
		rc = atomicfile_syserr(cause, "fdatasync", j->path);
	else {
		j->unsynced = 0;
		metrics_observe("journal_sync", since(&t0));
		return (0);
	}
	j->changes++;
	/* None of them was acknowledged: none may be replayed. */
	cut_back(j, j->synced_size);
	j->size = j->synced_size;
	j->seq = j->synced_seq;
	j->records = j->synced_records;
	j->wholesize = j->synced_whole;
	j->unsynced = 0;
	metrics_set("journal_bytes", (double)j->size);
	metrics_set("journal_pending_records", (double)j->records);
	metrics_inc("errors", "kind", "state_write");
	return (rc);
}

uint64_t
journal_changes(const struct journal *j)
{
	return (j->changes);
}

int
journal_records(const struct journal *j)
{
	return (j->records);
}

/*
 * Twice the snapshot: each snapshot written is paid for by at least as
 * many bytes of records, so compaction writes at most half as much again
 * as the records do, and a start replays at most twice the snapshot.
 * A record of the whole state (a Synchronize, a reconfiguration) is a
 * snapshot of its own for this: a start needs nothing before it, and
 * compacting right after it would write the whole state twice in one
 * turn (a node's first Synchronize did, from an empty snapshot).
 */
int
journal_wants_snapshot(const struct journal *j)
{
	size_t	whole = j->wholesize > j->snapsize ? j->wholesize :
		    j->snapsize;

	return (j->size > j->compact_min && j->size / 2 > whole);
}

int
journal_snapshot(struct journal *j, const char *text, size_t len,
    char **cause)
{
	char	*snap = path_of(j->dir, STATEFILE_NAME);
	char	*prev = path_of(j->dir, JOURNAL_SNAPSHOT_PREV);
	char	*jprev = path_of(j->dir, JOURNAL_PREV);
	int	 rc = 0, moved = 0;

	j->changes++;
	/* 1. The old snapshot stays as the previous generation. */
	if (unlink(prev) == -1 && errno != ENOENT)
		log_warn("unlink %s", prev);
	if (link(snap, prev) == -1 && errno != ENOENT)
		log_warn("link %s to %s", snap, prev);
	/*
	 * 2. So does the journal that leads from it. An empty one leads
	 * nowhere, and journal.prev may still hold what state.json does
	 * not (a crash between steps 2 and 3): it stays.
	 */
	if (j->size > 0) {
		if (rename(j->path, jprev) == 0)
			moved = 1;
		else if (errno != ENOENT) {
			rc = atomicfile_syserr(cause, "rename", j->path);
			goto out;
		}
	}
	if (debug_crash("compact"))
		raise(SIGKILL);
	/* 3. The new snapshot. */
	if ((rc = statefile_write_text(j->dir, text, len, cause)) != 0) {
		/* The journal goes back: it still leads from state.json. */
		if (moved && rename(jprev, j->path) == -1)
			log_warn("rename %s back to %s", jprev, j->path);
		goto out;
	}
	/* 4. An empty journal; never the old one's inode again. */
	close_journal(j);
	j->size = 0;
	if ((rc = open_journal(j, 1, cause)) != 0 ||
	    (rc = atomicfile_sync_dir(j->dir, cause)) != 0)
		goto out;
	j->snapsize = len;
	j->wholesize = 0;
	j->records = 0;
	j->unsynced = 0;	/* all of it is in the snapshot */
	j->compactions++;
	metrics_inc("journal_compactions", NULL, NULL);
	metrics_set("journal_pending_records", 0);
out:
	free(snap);
	free(prev);
	free(jprev);
	return (rc);
}

json_t *
journal_status(const struct journal *j)
{
	return (json_pack("{s:I, s:i, s:I, s:I, s:I}",
	    "bytes", (json_int_t)j->size, "records", j->records,
	    "seq", (json_int_t)j->seq,
	    "snapshotBytes", (json_int_t)j->snapsize,
	    "compactions", (json_int_t)j->compactions));
}
