/*
 * fuzz-http: the HTTP endpoint's requests as httpreq_route sees them. The
 * first byte picks the daemon's state (live, ready, metrics on), the
 * method runs to the first space and the request target is the rest.
 * Every answer must be one of ours, with a body, and /metrics only when
 * it is on.
 */

#include <stdlib.h>
#include <string.h>

#include "httpreq.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct httpreq_state	 st;
	struct httpreq_reply	 r;
	char			*text, *uri;

	if (len == 0)
		return (0);
	memset(&st, 0, sizeof st);
	st.live = data[0] & 1;
	st.ready = (data[0] >> 1) & 1;
	st.metrics = (data[0] >> 2) & 1;
	text = fuzz_str(data + 1, len - 1);
	st.not_ready = (data[0] >> 3) & 1 ? text : NULL;
	if ((uri = strchr(text, ' ')) != NULL)
		*uri++ = '\0';
	else
		uri = text + strlen(text);
	httpreq_route(text, uri, &st, &r);
	if (r.body == NULL || r.reason == NULL || r.content_type == NULL)
		abort();
	switch (r.status) {
	case 200:
		if (r.route == HTTPREQ_METRICS && !st.metrics)
			abort();
		break;
	case 405:
		if (r.allow == NULL)
			abort();
		break;
	case 400: case 404: case 414: case 503:
		break;
	default:
		abort();
	}
	if (r.status != 405 && r.allow != NULL)
		abort();
	if (r.status == 503 && strchr(r.body, '\n') != r.body +
	    strlen(r.body) - 1)
		abort();
	httpreq_reply_clear(&r);
	free(text);
	return (0);
}
