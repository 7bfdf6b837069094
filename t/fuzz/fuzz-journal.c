/*
 * fuzz-journal: the saved state as a start finds it, a snapshot and its
 * journal (journal.c, records framed by jrec.c): both files are written
 * into a folder and journal_load reads them, applying each record; what
 * it yields is reinstated by policy_restore, and must save as text that
 * reinstates again. The input is a 2-byte length (big-endian; its top bit
 * names the journal journal.prev instead), that many bytes of state.json
 * (none: no file), and the journal (none: no file). The journal's bytes
 * also go through jrec_scan alone, and framed as one record's payload
 * must come back whole.
 */

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "journal.h"
#include "jrec.h"
#include "log.h"
#include "statefile.h"
#include "fuzzlib.h"

struct seen {
	const char	*payload;
	size_t		 len;
	int		 n;
};

static int
count(uint64_t seq, const char *payload, size_t len, void *arg)
{
	struct seen	*s = arg;

	(void)seq;
	if (len != 0 && payload == NULL)
		abort();
	s->payload = payload;
	s->len = len;
	s->n++;
	return (0);
}

static void
round_trip(const uint8_t *data, size_t len)
{
	struct seen	 s = { NULL, 0, 0 };
	char		*rec, *cause = NULL;
	size_t		 reclen, good;

	(void)jrec_scan((const char *)data, len, count, &s, &good, &cause);
	if (good > len)
		abort();
	free(cause);
	cause = NULL;
	s.n = 0;
	rec = jrec_encode(7, (const char *)data, len, &reclen);
	if (jrec_scan(rec, reclen, count, &s, &good, &cause) != JREC_END ||
	    s.n != 1 || good != reclen || s.len != len ||
	    (len != 0 && memcmp(s.payload, data, len) != 0)) {
		fprintf(stderr, "a framed record does not scan back: %s\n",
		    cause != NULL ? cause : "different payload");
		abort();
	}
	free(rec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static int		 quiet;
	struct journal_start	 st;
	const char		*dir = fuzz_dir();
	char			 path[PATH_MAX];
	char			*cause = NULL;
	size_t			 slen;
	int			 prev;

	if (len < 2)
		return (0);
	if (!quiet) {
		log_init(1, -2);
		quiet = 1;
	}
	prev = (data[0] & 0x80) != 0;
	slen = (size_t)(data[0] & 0x7f) << 8 | data[1];
	data += 2;
	len -= 2;
	if (slen > len)
		slen = len;
	if (slen != 0) {
		if (snprintf(path, sizeof path, "%s/%s", dir,
		    STATEFILE_NAME) >= (int)sizeof path)
			abort();
		fuzz_write(path, data, slen);
	}
	if (len > slen) {
		if (snprintf(path, sizeof path, "%s/%s", dir, prev ?
		    JOURNAL_PREV : JOURNAL_NAME) >= (int)sizeof path)
			abort();
		fuzz_write(path, data + slen, len - slen);
	}
	round_trip(data + slen, len - slen);

	if (journal_load(dir, &st, &cause) != 0) {
		if (cause == NULL)
			abort();
		free(cause);
	} else {
		if (st.damaged && st.damage == NULL)
			abort();
		if (st.doc != NULL)
			fuzz_restore(st.doc);
		journal_start_clear(&st);
	}
	fuzz_tidy(dir);
	return (0);
}
