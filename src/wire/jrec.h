/*
 * The framing of the state journal's records (sans I/O): each record is
 *
 *	J <seq> <len> <crc>\n<payload>\n
 *
 * with seq the record's sequence number, len the payload's length in
 * bytes, crc the CRC-32C of "<seq> <len> " and the payload, as 8 lowercase
 * hex digits. The payload is whatever the writer gives (JSON text).
 * NUL bytes after the last record are room the writer made for the next
 * ones (journal.c), not part of any record.
 */
#ifndef TOPOAWARE_JREC_H
#define TOPOAWARE_JREC_H

#include <stddef.h>
#include <stdint.h>

/* A record's payload is at most this long: well above the largest the
 * daemon writes (POLICY_META_BUDGET in policy.h). */
#define JREC_MAX_PAYLOAD	(512U << 20)

/* What jrec_scan found after the last good record. */
#define JREC_END	0	/* nothing: every byte was a good record,
				   or NUL room after the last one */
#define JREC_TORN	1	/* an incomplete last record (a crash) */
#define JREC_DAMAGED	2	/* a bad record, with more after it */

/* CRC-32C (Castagnoli) of len bytes, continuing from crc (0 to start):
 * by the CPU's crc32 instruction where it has one, else as _slice8. */
uint32_t jrec_crc32c(uint32_t crc, const void *, size_t len);
/* The same by tables, on any CPU (for the tests to hold the two to one
 * answer). */
uint32_t jrec_crc32c_slice8(uint32_t crc, const void *, size_t len);

/* "J " + 20 digits + " " + 10 digits + " " + 8 hex + "\n" (and a NUL). */
#define JREC_MAX_HEADER	48

/* The framed record (caller frees) and its length. */
char	*jrec_encode(uint64_t seq, const char *payload, size_t len,
	    size_t *outlen);
/* A record's header alone, into hdr; its length. The record is the
 * header, the payload, then a newline: written as three parts, a large
 * payload is not copied. */
size_t	jrec_header(uint64_t seq, const char *payload, size_t len,
	    char hdr[JREC_MAX_HEADER]);

/* Called for each good record in order; non-zero stops the scan. */
typedef int	(*jrec_cb)(uint64_t seq, const char *payload, size_t len,
		    void *arg);

/*
 * Walks the records of buf. Returns JREC_END, JREC_TORN or JREC_DAMAGED,
 * with *good the length of the good records at its start and, unless END,
 * *cause (caller frees) saying what is wrong at that offset; or the
 * callback's non-zero value when it stopped the scan (*good then ends
 * before the record it refused).
 */
int	jrec_scan(const char *buf, size_t len, jrec_cb, void *arg,
	    size_t *good, char **cause);

#endif
