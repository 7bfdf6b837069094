/*
 * state.c owns the saved state document (SPEC R-STATE-1): every container
 * grant keyed by container id and every claim keyed "claim:<uid>", in a
 * versioned JSON object, and the restore that rebuilds a policy from it,
 * claims first. The document is made two ways that must agree: as jansson
 * values (policy_save) and as text written straight from the grants
 * (policy_save_text), which the daemon saves before answering every event.
 * Reading and writing files is the daemon's business.
 *
 * A container's pod name and labels ("podName", "labels", "podLabels"),
 * whether its metadata was trimmed at the node's budget ("trimmed") and a
 * claim's result count ("results") came later than version 2: they are
 * written only when there are some, so that a state without them reads
 * the same, and read when present.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "policy_priv.h"
#include "textbuf.h"
#include "utf8.h"
#include "view.h"
#include "xmalloc.h"

#define STATE_VERSION	POLICY_STATE_VERSION

static const char *qos_names[] = { "BestEffort", "Burstable", "Guaranteed" };
static const char *type_names[] = { "normal", "reserved", "preserve" };

/* json_string that cleans what is not UTF-8 instead of failing. */
static json_t *
string_json(const char *s)
{
	json_t	*j;
	char	*c;

	if ((j = json_string(s)) != NULL)
		return (j);
	c = utf8_clean(s);
	j = json_string(c);
	free(c);
	return (j);
}

static json_t *
kv_json(const struct policy_kv *kv, int n)
{
	json_t	*o = json_object();
	char	*c;
	int	 i;

	for (i = 0; i < n; i++) {
		if (json_object_set_new(o, kv[i].key,
		    string_json(kv[i].value)) == 0)
			continue;
		c = utf8_clean(kv[i].key);
		json_object_set_new(o, c, string_json(kv[i].value));
		free(c);
	}
	return (o);
}

/* A container's accounted memory: its bytes and its zone's nodes. */
static json_t *
memory_json(const struct policy *P, const struct grant *g)
{
	struct cpuset	 zone = CPUSET_INITIALIZER;
	json_t		*o = NULL;

	if (policy_mem_zone(P, g->key, &zone))
		o = json_pack("{s:I, s:o}", "bytes",
		    (json_int_t)policy_mem_size(P, g->key), "nodes",
		    view_cpuset(&zone));
	cpuset_clear(&zone);
	return (o);
}

/* A container's cold start, once it has one: when DRAM comes (0 until
 * it started) and whether it came. */
static void
cold_json(json_t *o, const struct grant *g)
{
	if (g->req.cold_ms > 0)
		json_object_set_new(o, "coldStart", json_pack("{s:I, s:b}",
		    "until", (json_int_t)g->cold_until, "done", g->cold_done));
}

static json_t *
container_json(const struct policy *P, const struct grant *g)
{
	const struct cspec	*c = &g->spec;
	json_t			*o, *spec, *claims, *mem;
	int			 i;

	spec = json_pack("{s:s, s:I, s:I, s:o, s:o}",
	    "qos", qos_names[c->qos],
	    "cpuRequest", (json_int_t)c->request,
	    "cpuLimit", (json_int_t)c->limit,
	    "annotations", kv_json(c->ann, c->nann),
	    "env", kv_json(c->env, c->nenv));
	if (c->name != NULL)
		json_object_set_new(spec, "name", string_json(c->name));
	if (c->pod != NULL)
		json_object_set_new(spec, "pod", string_json(c->pod));
	if (c->ns != NULL)
		json_object_set_new(spec, "namespace", string_json(c->ns));
	if (c->pod_uid != NULL)
		json_object_set_new(spec, "podUID", string_json(c->pod_uid));
	if (c->pod_name != NULL)
		json_object_set_new(spec, "podName", string_json(c->pod_name));
	if (c->nlabels > 0)
		json_object_set_new(spec, "labels", kv_json(c->labels,
		    c->nlabels));
	if (c->kube_labels != 0)
		json_object_set_new(spec, "kubeLabels",
		    json_integer((json_int_t)c->kube_labels));
	if (c->npod_labels > 0)
		json_object_set_new(spec, "podLabels", kv_json(c->pod_labels,
		    c->npod_labels));
	if (c->trimmed)
		json_object_set_new(spec, "trimmed", json_true());
	if (c->mem_limit > 0)
		json_object_set_new(spec, "memLimit",
		    json_integer((json_int_t)c->mem_limit));
	if (c->has_oom)
		json_object_set_new(spec, "oomScoreAdj",
		    json_integer(c->oom_adj));
	mem = memory_json(P, g);

	if (g->kind == GRANT_CLAIM_PINNED) {
		claims = json_array();
		for (i = 0; i < g->nclaims; i++)
			json_array_append_new(claims,
			    string_json(g->claims[i]));
		o = json_pack("{s:s, s:o, s:o}", "kind", "claim-pinned",
		    "claims", claims, "container", spec);
		if (mem != NULL)
			json_object_set_new(o, "memory", mem);
		cold_json(o, g);
		return (o);
	}
	o = json_pack("{s:s, s:s, s:s, s:o, s:i, s:b, s:b, s:o}",
	    "kind", "container", "pool", g->pool->name,
	    "type", type_names[g->type],
	    "exclusive", view_cpuset(&g->exclusive),
	    "portion", g->portion, "zeroRequest", g->zero_req,
	    "fallback", g->fallback, "container", spec);
	if (mem != NULL)
		json_object_set_new(o, "memory", mem);
	cold_json(o, g);
	return (o);
}

static json_t *
claim_json(const struct grant *g)
{
	json_t	*o, *a;
	int	 i;

	o = json_pack("{s:s, s:o, s:s}", "kind", "claim", "cpus",
	    view_cpuset(&g->exclusive), "pool", g->pool->name);
	if (g->claim_ns != NULL)
		json_object_set_new(o, "namespace", string_json(g->claim_ns));
	if (g->claim_name != NULL)
		json_object_set_new(o, "name", string_json(g->claim_name));
	if (g->nresults > 0)
		json_object_set_new(o, "results", json_integer(g->nresults));
	if (g->consumers_known) {
		a = json_array();
		for (i = 0; i < g->nconsumers; i++)
			json_array_append_new(a, string_json(g->consumers[i]));
		json_object_set_new(o, "consumers", a);
	}
	return (o);
}

json_t *
policy_save(const struct policy *P)
{
	struct grant	**v;
	json_t		 *grants;
	char		 *key;
	size_t		  i, n;

	grants = json_object();
	v = policy_sorted(P->ctrs, &n);
	for (i = 0; i < n; i++)
		json_object_set_new(grants, v[i]->key, container_json(P,
		    v[i]));
	free(v);
	v = policy_sorted(P->claims, &n);
	for (i = 0; i < n; i++) {
		xasprintf(&key, "%s%s", CLAIM_KEY_PREFIX, v[i]->key);
		json_object_set_new(grants, key, claim_json(v[i]));
		free(key);
	}
	free(v);
	return (json_pack("{s:i, s:o}", "version", STATE_VERSION, "grants",
	    grants));
}

/*
 * The same document as text, written into one growing buffer. It matches
 * json_dumps(policy_save(P), JSON_COMPACT) byte for byte, key order and
 * escapes included.
 */

static void
tb_spec(struct textbuf *b, const struct cspec *c)
{
	tb_lit(b, "{\"qos\":");
	tb_str(b, qos_names[c->qos]);
	tb_lit(b, ",\"cpuRequest\":");
	tb_int(b, c->request);
	tb_lit(b, ",\"cpuLimit\":");
	tb_int(b, c->limit);
	tb_lit(b, ",\"annotations\":");
	tb_kv(b, c->ann, c->nann);
	tb_lit(b, ",\"env\":");
	tb_kv(b, c->env, c->nenv);
	if (c->name != NULL) {
		tb_lit(b, ",\"name\":");
		tb_str(b, c->name);
	}
	if (c->pod != NULL) {
		tb_lit(b, ",\"pod\":");
		tb_str(b, c->pod);
	}
	if (c->ns != NULL) {
		tb_lit(b, ",\"namespace\":");
		tb_str(b, c->ns);
	}
	if (c->pod_uid != NULL) {
		tb_lit(b, ",\"podUID\":");
		tb_str(b, c->pod_uid);
	}
	if (c->pod_name != NULL) {
		tb_lit(b, ",\"podName\":");
		tb_str(b, c->pod_name);
	}
	if (c->nlabels > 0) {
		tb_lit(b, ",\"labels\":");
		tb_kv(b, c->labels, c->nlabels);
	}
	if (c->kube_labels != 0) {
		tb_lit(b, ",\"kubeLabels\":");
		tb_int(b, (long long)c->kube_labels);
	}
	if (c->npod_labels > 0) {
		tb_lit(b, ",\"podLabels\":");
		tb_kv(b, c->pod_labels, c->npod_labels);
	}
	if (c->trimmed)
		tb_lit(b, ",\"trimmed\":true");
	if (c->mem_limit > 0) {
		tb_lit(b, ",\"memLimit\":");
		tb_int(b, c->mem_limit);
	}
	if (c->has_oom) {
		tb_lit(b, ",\"oomScoreAdj\":");
		tb_int(b, c->oom_adj);
	}
	tb_lit(b, "}");
}

static void
tb_container(struct textbuf *b, const struct policy *P,
    const struct grant *g)
{
	struct cpuset	zone = CPUSET_INITIALIZER;
	int		i;

	if (g->kind == GRANT_CLAIM_PINNED) {
		tb_lit(b, "{\"kind\":\"claim-pinned\",\"claims\":[");
		for (i = 0; i < g->nclaims; i++) {
			if (i > 0)
				tb_lit(b, ",");
			tb_str(b, g->claims[i]);
		}
		tb_lit(b, "],\"container\":");
	} else {
		tb_lit(b, "{\"kind\":\"container\",\"pool\":");
		tb_str(b, g->pool->name);
		tb_lit(b, ",\"type\":");
		tb_str(b, type_names[g->type]);
		tb_lit(b, ",\"exclusive\":");
		tb_cpuset(b, &g->exclusive);
		tb_lit(b, ",\"portion\":");
		tb_int(b, g->portion);
		if (g->zero_req)
			tb_lit(b, ",\"zeroRequest\":true");
		else
			tb_lit(b, ",\"zeroRequest\":false");
		if (g->fallback)
			tb_lit(b, ",\"fallback\":true");
		else
			tb_lit(b, ",\"fallback\":false");
		tb_lit(b, ",\"container\":");
	}
	tb_spec(b, &g->spec);
	if (policy_mem_zone(P, g->key, &zone)) {
		tb_lit(b, ",\"memory\":{\"bytes\":");
		tb_int(b, policy_mem_size(P, g->key));
		tb_lit(b, ",\"nodes\":");
		tb_cpuset(b, &zone);
		tb_lit(b, "}");
	}
	cpuset_clear(&zone);
	if (g->req.cold_ms > 0) {
		tb_lit(b, ",\"coldStart\":{\"until\":");
		tb_int(b, g->cold_until);
		if (g->cold_done)
			tb_lit(b, ",\"done\":true}");
		else
			tb_lit(b, ",\"done\":false}");
	}
	tb_lit(b, "}");
}

static void
tb_claim_meta(struct textbuf *b, const struct grant *g)
{
	int	i;

	if (g->claim_ns != NULL) {
		tb_lit(b, ",\"namespace\":");
		tb_str(b, g->claim_ns);
	}
	if (g->claim_name != NULL) {
		tb_lit(b, ",\"name\":");
		tb_str(b, g->claim_name);
	}
	if (g->nresults > 0) {
		tb_lit(b, ",\"results\":");
		tb_int(b, g->nresults);
	}
	if (!g->consumers_known)
		return;
	tb_lit(b, ",\"consumers\":[");
	for (i = 0; i < g->nconsumers; i++) {
		if (i > 0)
			tb_lit(b, ",");
		tb_str(b, g->consumers[i]);
	}
	tb_lit(b, "]");
}

static void
tb_claim(struct textbuf *b, const struct grant *g)
{
	tb_lit(b, "{\"kind\":\"claim\",\"cpus\":");
	tb_cpuset(b, &g->exclusive);
	tb_lit(b, ",\"pool\":");
	tb_str(b, g->pool->name);
	tb_claim_meta(b, g);
	tb_lit(b, "}");
}

/* The grant's key in the state document. */
static void
tb_key(struct textbuf *b, int claim, const char *key)
{
	if (claim) {
		tb_lit(b, "\"" CLAIM_KEY_PREFIX);
		tb_esc(b, key);
		tb_lit(b, "\"");
	} else
		tb_str(b, key);
}

/* Every grant, containers then claims, each sorted by key. */
static void
tb_grants(struct textbuf *b, const struct policy *P)
{
	struct grant	**v;
	size_t		  i, n;
	int		  first = 1;

	tb_lit(b, "{");
	v = policy_sorted(P->ctrs, &n);
	for (i = 0; i < n; i++) {
		if (!first)
			tb_lit(b, ",");
		first = 0;
		tb_key(b, 0, v[i]->key);
		tb_lit(b, ":");
		tb_container(b, P, v[i]);
	}
	free(v);
	v = policy_sorted(P->claims, &n);
	for (i = 0; i < n; i++) {
		if (!first)
			tb_lit(b, ",");
		first = 0;
		tb_key(b, 1, v[i]->key);
		tb_lit(b, ":");
		tb_claim(b, v[i]);
	}
	free(v);
	tb_lit(b, "}");
}

char *
policy_save_text(const struct policy *P, size_t *len)
{
	return (policy_snapshot_text(P, 0, NULL, len));
}

char *
policy_snapshot_text(const struct policy *P, unsigned long long seq,
    const char *config, size_t *len)
{
	struct textbuf	b;

	/* About what a container takes, so that few saves grow it. */
	tb_init(&b, 256 * (strmap_count(P->ctrs) + strmap_count(P->claims) +
	    1) + (config != NULL ? strlen(config) : 0));
	tb_lit(&b, "{\"version\":");
	tb_int(&b, STATE_VERSION);
	if (seq > 0) {
		tb_lit(&b, ",\"seq\":");
		tb_int(&b, (long long)seq);
	}
	if (config != NULL) {
		tb_lit(&b, ",\"config\":");
		tb_add(&b, config, strlen(config));
	}
	tb_lit(&b, ",\"grants\":");
	tb_grants(&b, P);
	tb_lit(&b, "}\n");
	return (tb_finish(&b, len));
}

/*
 * The journal record of the operation whose effects are fx: the event as
 * given (JSON text) and the grants it changed as they are now ("set"), or
 * gone ("del"); when it replaced the whole state, all of them ("grants").
 */
char *
policy_record_text(const struct policy *P, const struct policy_effects *fx,
    char *event, size_t *len)
{
	struct policy_change	*ch;
	struct textbuf		 b;
	size_t			 more;
	int			 i, n, first, any;

	n = policy_changes(P, fx, &ch);
	more = 512 + (n < 0 ?
	    256 * (strmap_count(P->ctrs) + strmap_count(P->claims)) :
	    512 * (size_t)n);
	if (event != NULL) {
		/* Written after the event, in its buffer: no copy of it. */
		tb_adopt(&b, event);
		tb_reserve(&b, more);
		tb_prepend(&b, "{\"event\":", sizeof "{\"event\":" - 1);
	} else {
		tb_init(&b, more);
		tb_lit(&b, "{\"event\":null");
	}
	if (n < 0) {
		tb_lit(&b, ",\"grants\":");
		tb_grants(&b, P);
	} else {
		tb_lit(&b, ",\"set\":{");
		for (i = 0, first = 1; i < n; i++) {
			if (ch[i].grant == NULL)
				continue;
			if (!first)
				tb_lit(&b, ",");
			first = 0;
			tb_key(&b, ch[i].claim, ch[i].key);
			tb_lit(&b, ":");
			if (ch[i].claim)
				tb_claim(&b, ch[i].grant);
			else
				tb_container(&b, P, ch[i].grant);
		}
		tb_lit(&b, "},\"del\":[");
		for (i = 0, any = 0; i < n; i++) {
			if (ch[i].grant != NULL)
				continue;
			if (any++)
				tb_lit(&b, ",");
			tb_key(&b, ch[i].claim, ch[i].key);
		}
		tb_lit(&b, "]");
	}
	tb_lit(&b, "}");
	free(ch);
	return (tb_finish(&b, len));
}

/*
 * A record applied to a state document (its "grants"), as at start after
 * the snapshot. The grants are checked when the document is restored.
 */
int
policy_record_apply(json_t *doc, json_t *rec, char **cause)
{
	json_t		*grants, *set, *del, *all, *v;
	const char	*key;
	size_t		 i;

	grants = json_object_get(doc, "grants");
	if (!json_is_object(rec) || !json_is_object(grants)) {
		xasprintf(cause, "a journal record is not an object");
		return (-EINVAL);
	}
	if ((all = json_object_get(rec, "grants")) != NULL) {
		if (!json_is_object(all)) {
			xasprintf(cause, "a journal record's grants is not an "
			    "object");
			return (-EINVAL);
		}
		json_object_set(doc, "grants", all);
		return (0);
	}
	set = json_object_get(rec, "set");
	del = json_object_get(rec, "del");
	if (!json_is_object(set) || !json_is_array(del)) {
		xasprintf(cause, "a journal record has no set and del");
		return (-EINVAL);
	}
	json_object_foreach(set, key, v)
		if (json_object_set(grants, key, v) != 0) {
			xasprintf(cause, "a journal record's grant cannot be "
			    "set");
			return (-EINVAL);
		}
	json_array_foreach(del, i, v) {
		if (!json_is_string(v)) {
			xasprintf(cause, "a journal record deletes a key that "
			    "is not a string");
			return (-EINVAL);
		}
		json_object_del(grants, json_string_value(v));
	}
	return (0);
}

/* Reading: every field checked, every error naming the grant. */

static int
bad(char **cause, const char *key, const char *what)
{
	xasprintf(cause, "grant \"%s\": %s", key, what);
	return (-EINVAL);
}

/* At most max entries are read back: a state written before the caps
 * were kept may hold more. With prefix, only keys starting with it, as
 * cspec_copy keeps them: the claim code reads the UID past the prefix. */
static int
parse_kv(json_t *o, struct policy_kv **out, int *n, int max,
    const char *prefix)
{
	const char	*k;
	json_t		*v;
	int		 i = 0;

	*n = 0;
	*out = NULL;
	if (o == NULL)
		return (0);
	if (!json_is_object(o))
		return (-1);
	*out = xcalloc(json_object_size(o) + 1, sizeof **out);
	json_object_foreach(o, k, v) {
		if (!json_is_string(v))
			return (-1);
		if (i >= max || (prefix != NULL &&
		    strncmp(k, prefix, strlen(prefix)) != 0))
			continue;
		(*out)[i].key = xstrdup(k);
		(*out)[i].value = xstrdup(json_string_value(v));
		*n = ++i;
	}
	return (0);
}

/*
 * The kubelet's labels a state gives as bits (version 3) that c can hold:
 * copies of fields it has, and not labels that "labels" gives otherwise.
 * Another bit (a state edited by hand) is dropped, not the state: the
 * label is the container's metadata, read by affinities only.
 */
static unsigned
bits_kept(const struct cspec *c, unsigned bits)
{
	int	i, k;

	for (i = 0; i < EXPR_KUBE_LABELS; i++)
		if (cspec_kube_field(c, i) == NULL)
			bits &= ~(1u << i);
	for (k = 0; k < c->nlabels; k++)
		if ((i = expr_kube_label(c->labels[k].key)) >= 0)
			bits &= ~(1u << i);
	return (bits);
}

static int
parse_spec(const char *key, json_t *o, struct cspec *c, char **cause)
{
	const char	*qos = NULL, *name = NULL, *pod = NULL, *ns = NULL;
	const char	*pod_uid = NULL, *pod_name = NULL;
	json_t		*ann = NULL, *env = NULL, *labels = NULL;
	json_t		*pod_labels = NULL, *mlim = NULL, *oom = NULL;
	json_t		*kube = NULL;
	json_int_t	 req = -1, lim = -1;
	json_error_t	 err;
	unsigned	 bits = 0;
	int		 i, trimmed = 0;

	memset(c, 0, sizeof *c);
	if (!json_is_object(o) || json_unpack_ex(o, &err, JSON_STRICT,
	    "{s:s, s:I, s:I, s?o, s?o, s?s, s?s, s?s, s?s, s?s, s?o, s?o, s?o, "
	    "s?b, s?o, s?o}",
	    "qos", &qos, "cpuRequest", &req, "cpuLimit", &lim,
	    "annotations", &ann, "env", &env, "name", &name, "pod", &pod,
	    "namespace", &ns, "podUID", &pod_uid, "podName", &pod_name,
	    "labels", &labels, "kubeLabels", &kube, "podLabels", &pod_labels,
	    "trimmed", &trimmed, "memLimit", &mlim, "oomScoreAdj", &oom) != 0)
		return (bad(cause, key, "container: malformed"));
	if (kube != NULL) {
		if (!json_is_integer(kube) || json_integer_value(kube) <= 0 ||
		    json_integer_value(kube) >= 1 << EXPR_KUBE_LABELS)
			return (bad(cause, key, "container: kubeLabels is not "
			    "a set of the kubelet's labels"));
		bits = (unsigned)json_integer_value(kube);
	}
	if ((mlim != NULL && (!json_is_integer(mlim) ||
	    json_integer_value(mlim) <= 0 ||
	    json_integer_value(mlim) > POLICY_MAX_MEMORY)) ||
	    (oom != NULL && (!json_is_integer(oom) ||
	    json_integer_value(oom) < -1000 || json_integer_value(oom) > 1000)))
		return (bad(cause, key, "container: memLimit or oomScoreAdj "
		    "out of range"));
	if (mlim != NULL)
		c->mem_limit = json_integer_value(mlim);
	if (oom != NULL) {
		c->has_oom = 1;
		c->oom_adj = (int)json_integer_value(oom);
	}
	c->id = xstrdup(key);
	c->name = name ? xstrdup(name) : NULL;
	c->pod = pod ? xstrdup(pod) : NULL;
	c->ns = ns ? xstrdup(ns) : NULL;
	c->pod_uid = pod_uid ? xstrdup(pod_uid) : NULL;
	c->pod_name = pod_name ? xstrdup(pod_name) : NULL;
	c->request = req;
	c->limit = lim;
	for (i = 0; i < 3; i++)
		if (strcmp(qos, qos_names[i]) == 0)
			c->qos = (enum qos_class)i;
	if (i == 3 && strcmp(qos, qos_names[c->qos]) != 0)
		return (bad(cause, key, "container: bad qos"));
	if (req < -1 || lim < -1 || req > 1000LL * CPUSET_SETSIZE ||
	    lim > 1000LL * CPUSET_SETSIZE)
		return (bad(cause, key, "container: CPU request out of range"));
	if (parse_kv(ann, &c->ann, &c->nann, POLICY_MAX_ANNOTATIONS,
	    NULL) != 0 || parse_kv(env, &c->env, &c->nenv,
	    POLICY_MAX_CLAIM_ENV, DRA_ENV_PREFIX) != 0)
		return (bad(cause, key, "container: annotations and env must "
		    "be objects of strings"));
	if (parse_kv(labels, &c->labels, &c->nlabels, POLICY_MAX_LABELS,
	    NULL) != 0 || parse_kv(pod_labels, &c->pod_labels,
	    &c->npod_labels, POLICY_MAX_LABELS, NULL) != 0)
		return (bad(cause, key, "container: labels and podLabels must "
		    "be objects of strings"));
	cspec_fold_labels(c);
	c->kube_labels |= bits_kept(c, bits);
	/* Held whole, even past the budget: it was acknowledged. */
	c->trimmed = trimmed;
	c->cost = cspec_cost(c);
	return (0);
}

static int
parse_cpus(const char *key, const char *text, struct cpuset *s, char **cause)
{
	char	*why = NULL;
	int	 rc;

	if ((rc = cpuset_parse(s, text, &why)) != 0) {
		xasprintf(cause, "grant \"%s\": %s", key, why);
		free(why);
	}
	return (rc);
}

/* A container's saved memory: {"bytes": N, "nodes": "0,4"}. The bytes
 * are what its spec asks, computed again; the nodes are its zone. */
static int
parse_memory(const char *key, json_t *o, struct cpuset *zone, char **cause)
{
	const char	*nodes = NULL;
	json_int_t	 bytes = 0;
	json_error_t	 err;

	if (json_unpack_ex(o, &err, JSON_STRICT, "{s:I, s:s}", "bytes",
	    &bytes, "nodes", &nodes) != 0 || bytes < 0)
		return (bad(cause, key, "malformed memory"));
	return (parse_cpus(key, nodes, zone, cause));
}

/* A container's saved cold start: {"until": ms, "done": bool}. */
static int
parse_cold(const char *key, json_t *o, struct grant *g, char **cause)
{
	json_int_t	 until = 0;
	json_error_t	 err;
	int		 done = 0;

	if (json_unpack_ex(o, &err, JSON_STRICT, "{s:I, s:b}", "until",
	    &until, "done", &done) != 0 || until < 0)
		return (bad(cause, key, "malformed coldStart"));
	g->cold_until = until;
	g->cold_done = done;
	return (0);
}

/*
 * One container entry into a grant of N: the same CPUs in the same pool
 * when still free, else allocated anew; one the config in force cannot
 * place falls back (policy_carry_or_fall_back), rather than refuse the
 * whole state and the claims in it with it. A malformed entry is
 * refused.
 */
static int
restore_container(struct policy *N, const char *key, json_t *o,
    struct policy_effects *fx, char **cause)
{
	const char	*kind = NULL, *pool = NULL, *type = NULL, *excl = NULL;
	json_t		*spec = NULL, *claims = NULL, *mem = NULL, *cold = NULL;
	json_error_t	 err;
	struct grant	*g;
	struct cpuset	 zone = CPUSET_INITIALIZER;
	int		 portion = 0, zero = 0, fallback = 0, i, rc;
	size_t		 j;

	if (json_unpack_ex(o, &err, 0, "{s:s}", "kind", &kind) != 0)
		return (bad(cause, key, "no kind"));
	g = grant_new(key, GRANT_CONTAINER);
	if (strcmp(kind, "claim-pinned") == 0) {
		if (json_unpack_ex(o, &err, JSON_STRICT,
		    "{s:s, s:o, s:o, s?o, s?o}", "kind", &kind, "claims",
		    &claims, "container", &spec, "memory", &mem, "coldStart",
		    &cold) != 0 ||
		    !json_is_array(claims)) {
			rc = bad(cause, key, "malformed claim-pinned grant");
			goto out;
		}
		if (json_array_size(claims) > POLICY_MAX_CLAIMS) {
			rc = bad(cause, key, "too many claims");
			goto out;
		}
		g->claims = xcalloc(json_array_size(claims) + 1,
		    sizeof *g->claims);
		for (j = 0; j < json_array_size(claims); j++) {
			if (!json_is_string(json_array_get(claims, j))) {
				rc = bad(cause, key, "claims must be strings");
				goto out;
			}
			/* Pinned before: pinned again without asking. */
			g->claims[g->nclaims++] = xstrdup(json_string_value(
			    json_array_get(claims, j)));
		}
	} else if (strcmp(kind, "container") == 0) {
		if (json_unpack_ex(o, &err, JSON_STRICT,
		    "{s:s, s:s, s:s, s:s, s:i, s:b, s:b, s:o, s?o, s?o}", "kind",
		    &kind, "pool", &pool, "type", &type, "exclusive", &excl,
		    "portion", &portion, "zeroRequest", &zero,
		    "fallback", &fallback, "container", &spec,
		    "memory", &mem, "coldStart", &cold) != 0) {
			rc = bad(cause, key, "malformed container grant");
			goto out;
		}
	} else {
		rc = bad(cause, key, "unknown kind");
		goto out;
	}
	if ((rc = parse_spec(key, spec, &g->spec, cause)) != 0)
		goto out;
	if ((rc = request_from_spec(N, &g->spec, &g->req, cause)) != 0)
		goto out;
	if (mem != NULL && (rc = parse_memory(key, mem, &zone, cause)) != 0)
		goto out;
	if (cold != NULL && (rc = parse_cold(key, cold, g, cause)) != 0)
		goto out;
	coldstart_apply(N, g);
	if (strcmp(kind, "claim-pinned") == 0) {
		/* Pinned again from its environment against the held claims
		 * it was pinned to. */
		g->kind = GRANT_CLAIM_PINNED;
		policy_carry_or_fall_back(N, g, mem ? &zone : NULL, fx);
		goto out;
	}
	for (i = 0; i < 3; i++)
		if (strcmp(type, type_names[i]) == 0)
			break;
	if (i == 3 || portion < 0 || portion > 1000 * CPUSET_SETSIZE) {
		rc = bad(cause, key, "bad type or portion");
		goto out;
	}
	if ((rc = parse_cpus(key, excl, &g->exclusive, cause)) != 0)
		goto out;
	if (fallback) {
		grant_fallback(N, g);
		policy_put(N, 0, g->key, g);
		cpuset_clear(&zone);
		return (0);
	}
	g->type = (enum cpu_type)i;
	g->portion = portion;
	g->zero_req = zero;
	g->pool = pool_tree_find(N->tree, pool);
	policy_carry_or_fall_back(N, g, mem ? &zone : NULL, fx);
out:
	cpuset_clear(&zone);
	grant_free(g);
	return (rc);
}

/* Whether a saved container grant holds exclusive CPUs of its own. */
static int
saved_cpus(json_t *o)
{
	json_t	*x = json_object_get(o, "exclusive");

	return (json_is_string(x) && *json_string_value(x) != '\0' &&
	    !json_is_true(json_object_get(o, "fallback")));
}

/* One "claim:<uid>" entry, with its consumers when they were saved. */
static int
restore_claim(struct policy *N, const char *key, json_t *o,
    struct cpuset *cpus, char **cause)
{
	const char		*kind, *set, *pool, *ns = NULL, *name = NULL;
	const char		*uid = key + CLAIM_KEY_PLEN;
	const char		**pods = NULL;
	struct claim_meta	 m;
	struct grant		*g;
	json_t			*consumers = NULL;
	json_error_t		 err;
	json_int_t		 results = 0;
	char			*why = NULL;
	size_t			 i;
	int			 rc;

	if ((rc = claim_check_uid(uid, &why)) != 0) {
		xasprintf(cause, "grant \"%.80s\": %s", key, why);
		free(why);
		return (rc);
	}
	if (json_unpack_ex(o, &err, JSON_STRICT,
	    "{s:s, s:s, s:s, s?s, s?s, s?I, s?o}", "kind", &kind, "cpus", &set,
	    "pool", &pool, "namespace", &ns, "name", &name,
	    "results", &results, "consumers", &consumers) != 0 ||
	    strcmp(kind, "claim") != 0)
		return (bad(cause, key, "malformed claim"));
	if (results < 0 || results > POLICY_MAX_RESULTS)
		return (bad(cause, key, "results out of range (0 to 128)"));
	if (consumers != NULL && (!json_is_array(consumers) ||
	    json_array_size(consumers) > POLICY_MAX_CONSUMERS))
		return (bad(cause, key, "consumers must be a list of at most "
		    "256 pod UIDs"));
	if ((rc = parse_cpus(key, set, cpus, cause)) != 0)
		return (rc);
	if (cpuset_empty(cpus))
		return (bad(cause, key, "a claim without CPUs"));
	memset(&m, 0, sizeof m);
	m.ns = ns;
	m.name = name;
	if (consumers != NULL) {
		m.known = 1;
		pods = xcalloc(json_array_size(consumers) + 1, sizeof *pods);
		for (i = 0; i < json_array_size(consumers); i++) {
			pods[i] = json_string_value(json_array_get(consumers,
			    i));
			if (pods[i] == NULL || request_check_id("", pods[i],
			    NULL) != 0) {
				free(pods);
				return (bad(cause, key, "a consumer is not a "
				    "pod UID"));
			}
		}
		m.pods = pods;
		m.npods = (int)i;
	}
	if ((rc = claim_reinstate(N, uid, cpus, cause)) == 0) {
		g = strmap_get(N->claims, uid);
		claim_set_meta(g, &m);
		g->nresults = (int)results;
	}
	free(pods);
	return (rc);
}

int
policy_restore(const struct topology *t, const struct config *cfg,
    json_t *doc, struct policy **out, char **cause)
{
	return (policy_restore_warn(t, cfg, doc, out, NULL, NULL, cause));
}

int
policy_restore_warn(const struct topology *t, const struct config *cfg,
    json_t *doc, struct policy **out, char ***warnings, int *nwarnings,
    char **cause)
{
	struct policy		*N = NULL;
	struct policy_effects	 fx;
	struct cpuset		 cpus = CPUSET_INITIALIZER;
	json_t			*grants = NULL, *config = NULL, *o;
	json_error_t		 err;
	const char		*key;
	json_int_t		 version = 0, seq = 0;
	int			 rc, pass;

	*out = NULL;
	policy_effects_init(&fx);
	if (!json_is_object(doc)) {
		xasprintf(cause, "not a state document: not a JSON object");
		return (-EINVAL);
	}
	o = json_object_get(doc, "version");
	if (!json_is_integer(o)) {
		xasprintf(cause, "not a state document: \"version\" is %s",
		    o == NULL ? "missing" : "not an integer");
		return (-EINVAL);
	}
	version = json_integer_value(o);
	if (version > STATE_VERSION)
		goto newer;
	if (version < 1) {
		xasprintf(cause, "bad state document version %lld",
		    (long long)version);
		return (-EINVAL);
	}
	if (json_unpack_ex(doc, &err, JSON_STRICT, "{s:I, s?I, s?o, s:o}",
	    "version", &version, "seq", &seq, "config", &config, "grants",
	    &grants) != 0) {
		xasprintf(cause, "not a state document: %s", err.text);
		return (-EINVAL);
	}
	if (!json_is_object(grants)) {
		xasprintf(cause, "state document version %lld: \"grants\" is "
		    "%s, not an object", (long long)version,
		    json_is_array(grants) ? "an array" : "not an object");
		return (-EINVAL);
	}
	if ((rc = policy_build(t, cfg, &N, cause)) != 0)
		return (rc);

	/* Claims first: their CPUs cannot move. */
	json_object_foreach(grants, key, o) {
		if (strncmp(key, CLAIM_KEY_PREFIX, CLAIM_KEY_PLEN) != 0)
			continue;
		if ((rc = restore_claim(N, key, o, &cpus, cause)) != 0)
			goto fail;
	}
	/* Then containers: those with exclusive CPUs first, as the shared
	 * portions were granted in what those left. */
	for (pass = 0; pass < 2; pass++)
		json_object_foreach(grants, key, o) {
			if (strncmp(key, CLAIM_KEY_PREFIX, CLAIM_KEY_PLEN) == 0 ||
			    saved_cpus(o) != (pass == 0))
				continue;
			if ((rc = request_check_id("container id", key,
			    cause)) != 0)
				goto fail;
			if (!json_is_object(o)) {
				rc = bad(cause, key, "not an object");
				goto fail;
			}
			if (strmap_count(N->ctrs) >= POLICY_MAX_CONTAINERS) {
				rc = bad(cause, key, "too many containers");
				goto fail;
			}
			if ((rc = restore_container(N, key, o, &fx,
			    cause)) != 0)
				goto fail;
		}
	/*
	 * The runtime kept what we told it before the restart, which is what
	 * the restored grants yield: take that as applied, so the next
	 * operation reports only the containers it really moves.
	 */
	policy_refresh(N, NULL, 1, NULL);
	cpuset_clear(&cpus);
	if (warnings != NULL) {
		*warnings = fx.warnings;
		*nwarnings = fx.nwarnings;
		fx.warnings = NULL;
		fx.nwarnings = 0;
	}
	policy_effects_clear(&fx);
	*out = N;
	return (0);
newer:
	xasprintf(cause, "state version %lld is newer than this topoawared "
	    "understands (%d)", (long long)json_integer_value(
	    json_object_get(doc, "version")), STATE_VERSION);
	return (-EPROTO);
fail:
	cpuset_clear(&cpus);
	policy_effects_clear(&fx);
	policy_free(N);
	return (rc);
}
