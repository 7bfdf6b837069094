/*
 * claimdoc.c: reading the ResourceClaim the kubelet names (protocols.md
 * 4.3, 7.3) — UID check, allocation, our driver's results only, request
 * names without the subrequest, consumed CPUs, and hostile objects.
 */
#include "autoconf.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimdoc.h"
#include "xmalloc.h"

#define UID	"0d6f3c2a-1b2c-4d5e-8f90-123456789abc"
#define DRV	"topology-aware.nri.io"
#define NODE	"node-a"

static json_t *
claim(const char *results)
{
	json_t		*o;
	json_error_t	 err;
	char		*text;

	if (asprintf(&text, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\","
	    "\"uid\":\"%s\"},\"status\":{\"allocation\":{\"devices\":"
	    "{\"results\":%s}}}}", UID, results) < 0)
		cr_assert_fail("asprintf");
	o = json_loads(text, 0, &err);
	cr_assert_not_null(o, "%s: %s", text, err.text);
	free(text);
	return (o);
}

static char *
fails(json_t *o, const char *uid)
{
	struct claimdoc	*doc = NULL;
	char		*cause = NULL;

	cr_assert_neq(claimdoc_parse(o, uid, DRV, NODE, &doc, &cause), 0);
	cr_assert_null(doc);
	cr_assert_not_null(cause);
	json_decref(o);
	return (cause);
}

Test(claimdoc, keeps_our_results_in_order)
{
	struct claimdoc		*doc = NULL;
	struct claim_result	 res[CLAIMDOC_MAX_RESULTS];
	char			*cause = NULL;
	json_t			*o;

	o = claim("[{\"request\":\"cpus/big\",\"driver\":\"" DRV "\","
	    "\"pool\":\"" NODE "\",\"device\":\"cpudevnuma001\","
	    "\"shareID\":\"s-1\",\"consumedCapacity\":{\"dra.cpu/cpu\":\"2\"}},"
	    "{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
	    "\"pool\":\"" NODE "\",\"device\":\"gpu0\"},"
	    "{\"request\":\"more\",\"driver\":\"" DRV "\",\"pool\":\"" NODE "\","
	    "\"device\":\"cpudevnuma003\",\"consumedCapacity\":"
	    "{\"dra.cpu/cpu\":3}}]");
	cr_assert_eq(claimdoc_parse(o, UID, DRV, NODE, &doc, &cause), 0,
	    "%s", cause);
	cr_assert_eq(doc->n, 2);
	cr_assert_str_eq(doc->results[0].request, "cpus");
	cr_assert_str_eq(doc->results[0].device, "cpudevnuma001");
	cr_assert_str_eq(doc->results[0].pool, NODE);
	cr_assert_str_eq(doc->results[0].share_id, "s-1");
	cr_assert_str_eq(doc->results[0].cpu, "2");
	cr_assert_str_eq(doc->results[1].request, "more");
	cr_assert_null(doc->results[1].share_id);
	cr_assert_str_eq(doc->results[1].cpu, "3");
	claimdoc_policy_results(doc, res);
	cr_assert_str_eq(res[1].device, "cpudevnuma003");
	cr_assert_str_eq(res[0].cpu, "2");
	claimdoc_free(doc);
	json_decref(o);
}

Test(claimdoc, no_consumed_capacity_is_left_to_the_policy)
{
	struct claimdoc	*doc = NULL;
	char		*cause = NULL;
	json_t		*o;

	o = claim("[{\"request\":\"r\",\"driver\":\"" DRV "\",\"pool\":\""
	    NODE "\",\"device\":\"cpudevnuma000\"}]");
	cr_assert_eq(claimdoc_parse(o, UID, DRV, NODE, &doc, &cause), 0);
	cr_assert_null(doc->results[0].cpu);
	claimdoc_free(doc);
	json_decref(o);
}

Test(claimdoc, replaced_claim)
{
	char	*cause;

	cause = fails(claim("[]"), "11111111-2222-3333-4444-555555555555");
	cr_assert(strstr(cause, "UID") != NULL, "%s", cause);
	cr_assert(strstr(cause, UID) != NULL, "%s", cause);
	free(cause);
}

Test(claimdoc, not_allocated)
{
	json_t	*o;
	char	*cause;

	o = json_pack("{s:{s:s}, s:{}}", "metadata", "uid", UID, "status");
	cause = fails(o, UID);
	cr_assert(strstr(cause, "no allocation results") != NULL, "%s",
	    cause);
	free(cause);
}

Test(claimdoc, only_other_drivers)
{
	char	*cause;

	cause = fails(claim("[{\"request\":\"g\",\"driver\":\"gpu.example.com\","
	    "\"pool\":\"p\",\"device\":\"d\"}]"), UID);
	cr_assert(strstr(cause, "no allocation results") != NULL, "%s",
	    cause);
	free(cause);
}

Test(claimdoc, another_nodes_pool)
{
	char	*cause;

	cause = fails(claim("[{\"request\":\"r\",\"driver\":\"" DRV "\","
	    "\"pool\":\"node-b\",\"device\":\"cpudevnuma000\"}]"), UID);
	cr_assert(strstr(cause, "node-b") != NULL, "%s", cause);
	free(cause);
}

Test(claimdoc, hostile_objects)
{
	const char	*bad[] = {
		"[1]",
		"[{\"request\":5,\"driver\":\"" DRV "\",\"pool\":\"" NODE "\","
		    "\"device\":\"cpudevnuma000\"}]",
		"[{\"request\":\"r\",\"driver\":\"" DRV "\",\"pool\":\"" NODE
		    "\",\"device\":\"\"}]",
		"[{\"request\":\"r\",\"driver\":\"" DRV "\",\"pool\":\"" NODE
		    "\",\"device\":\"d\",\"consumedCapacity\":[]}]",
		"[{\"request\":\"r\",\"driver\":\"" DRV "\",\"pool\":\"" NODE
		    "\",\"device\":\"d\",\"shareID\":7}]",
		"{}",
	};
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		free(fails(claim(bad[i]), UID));
	free(fails(json_string("claim"), UID));
	free(fails(json_pack("{s:i}", "metadata", 1), UID));
}

Test(claimdoc, too_many_results)
{
	json_t	*o, *r;
	char	*cause;
	int	 i;

	o = claim("[]");
	r = json_object_get(json_object_get(json_object_get(json_object_get(
	    o, "status"), "allocation"), "devices"), "results");
	for (i = 0; i <= CLAIMDOC_MAX_RESULTS; i++)
		json_array_append_new(r, json_pack("{s:s, s:s, s:s, s:s}",
		    "request", "r", "driver", DRV, "pool", NODE, "device",
		    "cpudevnuma000"));
	cause = fails(o, UID);
	cr_assert(strstr(cause, "33") != NULL, "%s", cause);
	free(cause);
}

static json_t *
reserved(const char *reserved_for)
{
	json_t		*o;
	json_error_t	 err;
	char		*text;

	if (asprintf(&text, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\","
	    "\"uid\":\"%s\"},\"status\":{\"reservedFor\":%s}}", UID,
	    reserved_for) < 0)
		cr_assert_fail("asprintf");
	o = json_loads(text, 0, &err);
	cr_assert_not_null(o, "%s: %s", text, err.text);
	free(text);
	return (o);
}

/* Only pods of the core group consume CPUs; their UIDs are kept in order. */
Test(claimdoc, consumers_are_the_reserved_pods)
{
	struct claimdoc		*doc = NULL;
	struct claim_meta	 m;
	char			*cause = NULL;
	json_t			*o;

	o = reserved("[{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"pa\"},"
	    "{\"apiGroup\":\"apps\",\"resource\":\"pods\",\"name\":\"x\","
	    "\"uid\":\"px\"},{\"resource\":\"deployments\",\"name\":\"d\","
	    "\"uid\":\"pd\"},{\"apiGroup\":\"\",\"resource\":\"pods\","
	    "\"name\":\"b\",\"uid\":\"pb\"}]");
	cr_assert_eq(claimdoc_parse_consumers(o, UID, &doc, &cause), 0, "%s",
	    cause);
	claimdoc_policy_meta(doc, &m);
	cr_assert(m.known);
	cr_assert_str_eq(m.ns, "ns");
	cr_assert_str_eq(m.name, "c");
	cr_assert_eq(m.npods, 2);
	cr_assert_str_eq(m.pods[0], "pa");
	cr_assert_str_eq(m.pods[1], "pb");
	claimdoc_free(doc);
	json_decref(o);
	/* No reservedFor: nobody, and that is known. */
	o = reserved("null");
	cr_assert_eq(claimdoc_parse_consumers(o, UID, &doc, &cause), 0);
	cr_assert_eq(doc->npods, 0);
	claimdoc_free(doc);
	json_decref(o);
}

Test(claimdoc, bad_reserved_for)
{
	struct claimdoc	*doc = NULL;
	char		*cause = NULL, *list, *p;
	json_t		*o;
	int		 i;

	o = reserved("{}");
	cr_assert_neq(claimdoc_parse_consumers(o, UID, &doc, &cause), 0);
	cr_assert_not_null(strstr(cause, "reservedFor is not a list"));
	free(cause);
	json_decref(o);
	o = reserved("[{\"resource\":\"pods\",\"name\":\"a\"}]");
	cr_assert_neq(claimdoc_parse_consumers(o, UID, &doc, &cause), 0);
	cr_assert_not_null(strstr(cause, "without a UID"));
	free(cause);
	json_decref(o);
	/* More than Kubernetes allows. */
	list = p = xmalloc(300 * 40 + 8);
	*p++ = '[';
	for (i = 0; i < 257; i++)
		p += sprintf(p, "%s{\"resource\":\"pods\",\"uid\":\"u%d\"}",
		    i ? "," : "", i);
	strcpy(p, "]");
	o = reserved(list);
	free(list);
	cr_assert_neq(claimdoc_parse_consumers(o, UID, &doc, &cause), 0);
	cr_assert_not_null(strstr(cause, "257 entries"));
	cr_assert_null(doc);
	free(cause);
	json_decref(o);
	/* Another claim's answer. */
	o = reserved("[]");
	cr_assert_neq(claimdoc_parse_consumers(o, "other", &doc, &cause), 0);
	cr_assert_not_null(strstr(cause, "replaced"));
	free(cause);
	json_decref(o);
}
