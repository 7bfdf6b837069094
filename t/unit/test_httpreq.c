/*
 * test_httpreq.c: the HTTP endpoint's answers (httpreq.c): the three
 * paths with the query ignored and nothing decoded, GET and HEAD only
 * (405 with Allow), /metrics only with prometheusExport, /healthz by the
 * loop's heartbeat, /readyz with its reason on one tamed line.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "httpreq.h"

static struct httpreq_state	all_good = { 1, 1, NULL, 1 };

static int
status(const char *method, const char *uri, const struct httpreq_state *st)
{
	struct httpreq_reply	r;
	int			s;

	httpreq_route(method, uri, st, &r);
	cr_assert_not_null(r.body);
	s = r.status;
	httpreq_reply_clear(&r);
	return (s);
}

Test(httpreq, paths)
{
	cr_assert_eq(status("GET", "/healthz", &all_good), 200);
	cr_assert_eq(status("GET", "/readyz", &all_good), 200);
	cr_assert_eq(status("GET", "/metrics", &all_good), 200);
	cr_assert_eq(status("GET", "/metrics?x=1", &all_good), 200);
	cr_assert_eq(status("GET", "/healthz#f", &all_good), 200);
	cr_assert_eq(status("GET", "/", &all_good), 404);
	cr_assert_eq(status("GET", "/metrics/", &all_good), 404);
	cr_assert_eq(status("GET", "/%6detrics", &all_good), 404);
	cr_assert_eq(status("GET", "/healthzz", &all_good), 404);
	cr_assert_eq(status("GET", "/health", &all_good), 404);
	cr_assert_eq(status("GET", "http://h/metrics", &all_good), 400);
	cr_assert_eq(status("GET", "", &all_good), 400);
	cr_assert_eq(status(NULL, "/healthz", &all_good), 400);
}

Test(httpreq, long_target)
{
	char	uri[HTTPREQ_URI_MAX + 2];

	memset(uri, 'a', sizeof uri - 1);
	uri[0] = '/';
	uri[sizeof uri - 1] = '\0';
	cr_assert_eq(status("GET", uri, &all_good), 414);
	uri[HTTPREQ_URI_MAX] = '\0';
	cr_assert_eq(status("GET", uri, &all_good), 404);
}

Test(httpreq, methods)
{
	static const char *const others[] = {
		"POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH",
		"CONNECT", "get", "",
	};
	struct httpreq_reply	r;
	size_t			i;

	for (i = 0; i < sizeof others / sizeof others[0]; i++) {
		httpreq_route(others[i], "/healthz", &all_good, &r);
		cr_assert_eq(r.status, 405, "%s", others[i]);
		cr_assert_str_eq(r.allow, "GET, HEAD");
		httpreq_reply_clear(&r);
	}
	httpreq_route("HEAD", "/readyz", &all_good, &r);
	cr_assert_eq(r.status, 200);
	cr_assert(r.head);
	cr_assert_null(r.allow);
	cr_assert_str_eq(r.body, "ok\n");
	httpreq_reply_clear(&r);
	httpreq_route("GET", "/readyz", &all_good, &r);
	cr_assert_not(r.head);
	httpreq_reply_clear(&r);
}

Test(httpreq, metrics_only_when_exported)
{
	struct httpreq_state	st = all_good;
	struct httpreq_reply	r;

	httpreq_route("GET", "/metrics", &st, &r);
	cr_assert_eq(r.route, HTTPREQ_METRICS);
	cr_assert_str_eq(r.content_type,
	    "text/plain; version=0.0.4; charset=utf-8");
	httpreq_reply_clear(&r);
	st.metrics = 0;
	httpreq_route("GET", "/metrics", &st, &r);
	cr_assert_eq(r.status, 404);
	cr_assert_eq(r.route, HTTPREQ_NONE);
	httpreq_reply_clear(&r);
	/* Not there at all: no 405 that would say it is. */
	cr_assert_eq(status("POST", "/metrics", &st), 404);
}

Test(httpreq, health_and_readiness)
{
	struct httpreq_state	st = all_good;
	struct httpreq_reply	r;

	st.live = 0;
	cr_assert_eq(status("GET", "/healthz", &st), 503);
	/* Liveness and readiness are apart. */
	cr_assert_eq(status("GET", "/readyz", &st), 200);
	st = all_good;
	st.ready = 0;
	st.not_ready = "NRI: not synchronized\nwith \"x\"\x01";
	cr_assert_eq(status("GET", "/healthz", &st), 200);
	httpreq_route("GET", "/readyz", &st, &r);
	cr_assert_eq(r.status, 503);
	cr_assert_str_eq(r.body, "NRI: not synchronized?with \"x\"?\n");
	httpreq_reply_clear(&r);
	st.not_ready = NULL;
	httpreq_route("GET", "/readyz", &st, &r);
	cr_assert_str_eq(r.body, "not ready\n");
	httpreq_reply_clear(&r);
}
