/*
 * fuzz-watchev: a watch stream fed to watchev in the pieces the input's
 * NUL bytes cut it into (as curl hands them over), and again whole. Both
 * must agree on the events and the error: framing may never depend on
 * where the pieces end. An error must say why, and stay.
 */

#include <stdlib.h>
#include <string.h>

#include "watchev.h"
#include "fuzzlib.h"

struct tally {
	size_t	n;
	size_t	hash;
};

static int
count(void *arg, enum watchev_type t, json_t *obj)
{
	struct tally	*s = arg;
	json_t		*rv;

	rv = json_object_get(json_object_get(obj, "metadata"),
	    "resourceVersion");
	if (t == WATCHEV_ERROR || !json_is_string(rv))
		abort();
	s->n++;
	s->hash = s->hash * 31 + (size_t)t + json_string_length(rv);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct watchev	*whole, *cut;
	struct tally	 a = { 0, 0 }, b = { 0, 0 };
	const uint8_t	*p = data, *nul;
	size_t		 left = len;
	int		 rc_whole, rc_cut = 0;
	uint8_t		*joined;
	size_t		 jlen = 0, n;

	/* The pieces, without their NUL separators, make the stream. */
	joined = malloc(len + 1);
	if (joined == NULL)
		abort();
	cut = watchev_new(count, &b);
	while (left > 0) {
		nul = memchr(p, '\0', left);
		n = nul != NULL ? (size_t)(nul - p) : left;
		memcpy(joined + jlen, p, n);
		jlen += n;
		if (rc_cut == 0)
			rc_cut = watchev_feed(cut, p, n);
		else if (watchev_feed(cut, p, n) != -1)
			abort();
		p += n;
		left -= n;
		if (nul != NULL) {
			p++;
			left--;
		}
	}
	whole = watchev_new(count, &a);
	rc_whole = watchev_feed(whole, joined, jlen);
	if (rc_whole != rc_cut || a.n != b.n || a.hash != b.hash ||
	    watchev_error(whole) != watchev_error(cut) ||
	    watchev_idle(whole) != watchev_idle(cut))
		abort();
	if (rc_whole != 0) {
		if (watchev_cause(whole) == NULL ||
		    watchev_error(whole) == WATCHEV_OK ||
		    watchev_feed(whole, "{}", 2) != -1)
			abort();
		if (watchev_error(whole) == WATCHEV_ESTATUS &&
		    watchev_status_code(whole) != watchev_status_code(cut))
			abort();
	} else if (watchev_cause(whole) != NULL)
		abort();
	watchev_free(whole);
	watchev_free(cut);
	free(joined);
	return (0);
}
