/*
 * The HTTP endpoint's requests (sans I/O): which of /healthz, /readyz and
 * /metrics a request line names, whether its method is allowed, and the
 * status and plain-text body of the answer. libevent's evhttp reads the
 * bytes; this decides, from strings alone, so it can be fuzzed.
 */
#ifndef TOPOAWARE_HTTPREQ_H
#define TOPOAWARE_HTTPREQ_H

/* Longest request URI looked at; a longer one is 414. */
#define HTTPREQ_URI_MAX		1024

/* What the daemon says of itself when a request comes. */
struct httpreq_state {
	int		 live;		/* the loop turned in the watchdog period */
	int		 ready;
	const char	*not_ready;	/* why not, when !ready; may be NULL */
	int		 metrics;	/* instrumentation.prometheusExport */
};

enum httpreq_route {
	HTTPREQ_NONE = 0,	/* the answer is status and body */
	HTTPREQ_METRICS		/* 200: the caller renders the metrics */
};

struct httpreq_reply {
	int			 status;
	const char		*reason;	/* "OK", "Not Found", ... */
	enum httpreq_route	 route;
	const char		*allow;		/* the Allow header, or NULL */
	const char		*content_type;
	char			*body;		/* plain text; caller frees */
	int			 head;		/* HEAD: headers only */
};

/*
 * Answers the request of method (its name as sent, "GET") for uri (the
 * request target as sent) given st. Never fails; reply->body is always
 * set (for HTTPREQ_METRICS to "").
 */
void	httpreq_route(const char *method, const char *uri,
	    const struct httpreq_state *st, struct httpreq_reply *reply);
void	httpreq_reply_clear(struct httpreq_reply *);

#endif
