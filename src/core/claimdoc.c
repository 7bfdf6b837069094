/*
 * claimdoc.c reads the ResourceClaim the kubelet asks us to prepare. The
 * object comes from the API server but was written by users and the
 * scheduler, so every field is checked for type and size before use; a
 * bad claim is a per-claim error, never a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimdoc.h"
#include "xmalloc.h"

/* Longer names than these are not Kubernetes names. */
#define NAME_MAX_LEN	253
#define SHARE_MAX_LEN	64

static const char *
member_string(json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);

	return (json_is_string(v) ? json_string_value(v) : NULL);
}

static int
sane(const char *s, size_t max)
{
	return (s != NULL && *s != '\0' && strlen(s) <= max);
}

/* A quantity as text: the API writes strings, a number is accepted. */
static char *
quantity_text(json_t *v)
{
	char	*s;

	if (json_is_string(v))
		return (xstrdup(json_string_value(v)));
	if (json_is_integer(v)) {
		xasprintf(&s, "%lld", (long long)json_integer_value(v));
		return (s);
	}
	if (json_is_real(v)) {
		xasprintf(&s, "%g", json_real_value(v));
		return (s);
	}
	return (NULL);
}

static int
parse_result(json_t *r, int i, const char *pool, struct claimdoc_result *out,
    char **cause)
{
	const char	*request, *rpool, *device, *share;
	const char	*slash;
	json_t		*cap, *cpu;

	request = member_string(r, "request");
	rpool = member_string(r, "pool");
	device = member_string(r, "device");
	share = member_string(r, "shareID");
	if (!sane(request, NAME_MAX_LEN) || !sane(rpool, NAME_MAX_LEN) ||
	    !sane(device, NAME_MAX_LEN)) {
		xasprintf(cause, "result %d: request, pool and device must be "
		    "names", i);
		return (-EINVAL);
	}
	if (strcmp(rpool, pool) != 0) {
		xasprintf(cause, "result %d: pool %.64s is not this node's "
		    "pool %s", i, rpool, pool);
		return (-EINVAL);
	}
	if (json_object_get(r, "shareID") != NULL && !json_is_null(
	    json_object_get(r, "shareID")) && !sane(share, SHARE_MAX_LEN)) {
		xasprintf(cause, "result %d: shareID is not a UID", i);
		return (-EINVAL);
	}
	cpu = NULL;
	if ((cap = json_object_get(r, "consumedCapacity")) != NULL &&
	    !json_is_null(cap)) {
		if (!json_is_object(cap)) {
			xasprintf(cause, "result %d: consumedCapacity is not "
			    "an object", i);
			return (-EINVAL);
		}
		cpu = json_object_get(cap, CLAIMDOC_CPU_CAPACITY);
	}
	/* A claim's request "main/sub" reaches the kubelet as "main". */
	slash = strchr(request, '/');
	out->request = slash != NULL ?
	    xstrndup(request, (size_t)(slash - request)) : xstrdup(request);
	out->pool = xstrdup(rpool);
	out->device = xstrdup(device);
	out->share_id = share != NULL && *share != '\0' ? xstrdup(share) :
	    NULL;
	out->cpu = cpu != NULL ? quantity_text(cpu) : NULL;
	return (0);
}

int
claimdoc_parse(json_t *obj, const char *uid, const char *driver,
    const char *pool, struct claimdoc **out, char **cause)
{
	struct claimdoc	*doc;
	const char	*d;
	json_t		*alloc, *results, *r;
	size_t		 i;
	int		 rc;

	*out = NULL;
	if ((rc = claimdoc_parse_consumers(obj, uid, &doc, cause)) != 0)
		return (rc);
	alloc = json_object_get(json_object_get(obj, "status"), "allocation");
	if (!json_is_object(alloc)) {
		xasprintf(cause, "no allocation results: the claim is not "
		    "allocated");
		claimdoc_free(doc);
		return (-EINVAL);
	}
	results = json_object_get(json_object_get(alloc, "devices"),
	    "results");
	if (results != NULL && !json_is_array(results)) {
		xasprintf(cause, "status.allocation.devices.results is not a "
		    "list");
		claimdoc_free(doc);
		return (-EINVAL);
	}
	if (json_array_size(results) > CLAIMDOC_MAX_RESULTS) {
		xasprintf(cause, "%zu allocation results, more than the %d "
		    "Kubernetes allows", json_array_size(results),
		    CLAIMDOC_MAX_RESULTS);
		claimdoc_free(doc);
		return (-EINVAL);
	}
	doc->results = xcalloc(CLAIMDOC_MAX_RESULTS, sizeof *doc->results);
	json_array_foreach(results, i, r) {
		if (!json_is_object(r)) {
			xasprintf(cause, "result %zu is not an object", i);
			claimdoc_free(doc);
			return (-EINVAL);
		}
		if ((d = member_string(r, "driver")) == NULL ||
		    strcmp(d, driver) != 0)
			continue;
		if ((rc = parse_result(r, (int)i, pool,
		    &doc->results[doc->n], cause)) != 0) {
			claimdoc_free(doc);
			return (rc);
		}
		doc->n++;
	}
	if (doc->n == 0) {
		xasprintf(cause, "no allocation results for driver %s",
		    driver);
		claimdoc_free(doc);
		return (-EINVAL);
	}
	*out = doc;
	return (0);
}

/* UIDs are at most this long: they only ever are compared. */
#define UID_MAX_LEN	128

int
claimdoc_parse_consumers(json_t *obj, const char *uid, struct claimdoc **out,
    char **cause)
{
	struct claimdoc	*doc;
	const char	*have, *ns, *name, *res, *group, *puid;
	json_t		*meta, *rf, *e;
	size_t		 i;

	*out = NULL;
	if (!json_is_object(obj)) {
		xasprintf(cause, "the ResourceClaim is not a JSON object");
		return (-EINVAL);
	}
	meta = json_object_get(obj, "metadata");
	have = member_string(meta, "uid");
	if (have == NULL || strcmp(have, uid) != 0) {
		xasprintf(cause, "the ResourceClaim has UID %.64s, not %s: it "
		    "was replaced", have != NULL ? have : "(none)", uid);
		return (-EINVAL);
	}
	ns = member_string(meta, "namespace");
	name = member_string(meta, "name");
	rf = json_object_get(json_object_get(obj, "status"), "reservedFor");
	if (rf != NULL && !json_is_null(rf) && !json_is_array(rf)) {
		xasprintf(cause, "status.reservedFor is not a list");
		return (-EINVAL);
	}
	if (json_array_size(rf) > POLICY_MAX_CONSUMERS) {
		xasprintf(cause, "status.reservedFor has %zu entries, more "
		    "than the %d Kubernetes allows", json_array_size(rf),
		    POLICY_MAX_CONSUMERS);
		return (-EINVAL);
	}
	doc = xcalloc(1, sizeof *doc);
	doc->ns = sane(ns, NAME_MAX_LEN) ? xstrdup(ns) : NULL;
	doc->name = sane(name, NAME_MAX_LEN) ? xstrdup(name) : NULL;
	doc->pods = xcalloc(json_array_size(rf) + 1, sizeof *doc->pods);
	json_array_foreach(rf, i, e) {
		res = member_string(e, "resource");
		group = member_string(e, "apiGroup");
		puid = member_string(e, "uid");
		/* Only pods consume CPUs; other consumers are not ours. */
		if (res == NULL || strcmp(res, "pods") != 0 ||
		    (group != NULL && *group != '\0'))
			continue;
		if (!sane(puid, UID_MAX_LEN)) {
			xasprintf(cause, "status.reservedFor[%zu]: a pod "
			    "without a UID", i);
			claimdoc_free(doc);
			return (-EINVAL);
		}
		doc->pods[doc->npods++] = xstrdup(puid);
	}
	*out = doc;
	return (0);
}

void
claimdoc_policy_meta(const struct claimdoc *doc, struct claim_meta *m)
{
	memset(m, 0, sizeof *m);
	m->ns = doc->ns;
	m->name = doc->name;
	m->pods = (const char *const *)doc->pods;
	m->npods = doc->npods;
	m->known = 1;
}

void
claimdoc_free(struct claimdoc *doc)
{
	int	i;

	if (doc == NULL)
		return;
	for (i = 0; i < doc->npods; i++)
		free(doc->pods[i]);
	free(doc->pods);
	free(doc->ns);
	free(doc->name);
	for (i = 0; i < doc->n; i++) {
		free(doc->results[i].request);
		free(doc->results[i].pool);
		free(doc->results[i].device);
		free(doc->results[i].share_id);
		free(doc->results[i].cpu);
	}
	free(doc->results);
	free(doc);
}

void
claimdoc_policy_results(const struct claimdoc *doc, struct claim_result *res)
{
	int	i;

	for (i = 0; i < doc->n; i++) {
		res[i].device = doc->results[i].device;
		res[i].cpu = doc->results[i].cpu;
	}
}
