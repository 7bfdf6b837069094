/*
 * The state on disk as a snapshot and a journal (SPEC R-STATE-1): the
 * snapshot <state-dir>/state.json holds every grant as of its sequence
 * number "seq"; <state-dir>/journal holds one record (jrec.h) per change
 * acknowledged since, made durable (one fdatasync for the changes of a
 * loop turn) before anyone is told.
 * When the journal outgrows twice the snapshot a new snapshot is written and
 * the old pair kept one generation back (state.json.prev, journal.prev).
 * Plain blocking file I/O on the state folder; no libevent.
 */
#ifndef TOPOAWARE_JOURNAL_H
#define TOPOAWARE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JOURNAL_NAME		"journal"
#define JOURNAL_PREV		"journal.prev"
#define JOURNAL_BAD		"journal.bad-"
#define JOURNAL_SNAPSHOT_PREV	"state.json.prev"
/* A journal is read whole; a larger one is damage. It holds about a
 * snapshot's worth before it is compacted (POLICY_META_BUDGET). */
#define JOURNAL_MAX_SIZE	(1024U << 20)
/* A journal is compacted once it is larger than its snapshot and this. */
#define JOURNAL_COMPACT_MIN	(256 * 1024)
/* The NUL room kept after the records is made this much at a time. */
#define JOURNAL_ROOM		(256 * 1024)

struct journal;

/* What start found on disk. */
struct journal_start {
	json_t		*doc;		/* the state document, or NULL */
	uint64_t	 seq;		/* the last change it holds */
	int		 records;	/* records applied after the snapshot */
	int		 torn;		/* an unfinished last record dropped */
	int		 damaged;	/* records lost to damage */
	char		*damage;	/* what and where, when damaged */
};

/*
 * Reads the snapshot (statefile_read: a bad one is moved aside) and the
 * records after its seq, from journal.prev then journal, in order. A torn
 * last record is dropped and cut off the file; a damaged journal is read
 * up to the damage and moved aside to journal.bad-<unixtime>. Returns 0
 * with *st filled (st->doc NULL: nothing saved), or an error the daemon
 * cannot start with (EIO, EACCES).
 */
int	journal_load(const char *dir, struct journal_start *st, char **cause);

/*
 * A saved state rebuilt from its snapshot and the journal records after
 * it, as a start does and `topoawarectl check` after it: the jrec_scan
 * callback journal_replay_record applies the record numbered expect to
 * doc, skips those the snapshot holds, and stops the scan
 * (JOURNAL_REPLAY_STOP, none of jrec_scan's own values) at a gap or a
 * record it cannot apply, error saying why (caller frees).
 */
struct journal_replay {
	json_t		*doc;
	uint64_t	 expect;	/* the next seq to apply */
	int		 applied;
	char		*error;		/* why a record was refused */
};
#define JOURNAL_REPLAY_STOP	16
int	journal_replay_record(uint64_t seq, const char *payload, size_t len,
	    void *arg);
void	journal_start_clear(struct journal_start *);

/* The journal of dir for appending after seq; snapsize: the snapshot's
 * bytes (for compaction). */
int	journal_open(const char *dir, uint64_t seq, size_t snapsize,
	    struct journal **, char **cause);
void	journal_free(struct journal *);

/* The next sequence number, for the record to be written. */
uint64_t journal_next(const struct journal *);
/*
 * Appends len bytes of framed records, written but not yet durable. On
 * failure nothing of them stays in the file (it is cut back) and the
 * sequence numbers are not used.
 */
int	journal_append(struct journal *, const char *data, size_t len,
	    int nrecords, char **cause);
/* The same for one record of payload, framed here (jrec.h) with the
 * next sequence number; the payload is written where it is, not copied.
 * whole: the record holds the whole state (journal_wants_snapshot). */
int	journal_append_record(struct journal *, const char *payload,
	    size_t len, int whole, char **cause);
/*
 * Makes every record appended since the last sync durable: one fdatasync
 * for all the changes of a loop turn. On failure they are all cut off the
 * file and their sequence numbers given back, as never written.
 */
int	journal_sync(struct journal *, char **cause);
/*
 * A number that moves whenever the files may have changed (an append, a
 * cut, a snapshot): a reader that reads them over several loop turns
 * knows whether it read one state.
 */
uint64_t journal_changes(const struct journal *);
/* Records since the snapshot. */
int	journal_records(const struct journal *);
/* Whether the journal has outgrown twice the last whole state written:
 * its snapshot, or a later record of the whole state. */
int	journal_wants_snapshot(const struct journal *);
/*
 * Writes the snapshot text (which must hold every change so far, seq
 * journal_next() - 1) as state.json, keeping the old pair as .prev, and
 * starts an empty journal. On failure the old pair is still whole.
 */
int	journal_snapshot(struct journal *, const char *text, size_t len,
	    char **cause);
/* {"bytes","records","seq","compactions"} for status. */
json_t	*journal_status(const struct journal *);

#endif
