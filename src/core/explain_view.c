/*
 * policy_explain: a grant as topoawarectl explain shows it — the request
 * as the policy read it, how its place was decided (explain.c's record)
 * and how its CPUs were picked.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "cpualloc.h"
#include "expr.h"
#include "explain.h"
#include "policy_priv.h"
#include "view.h"
#include "xmalloc.h"

#define CLAIM_PREFIX	"claim:"

static const char *
type_name(enum cpu_type t)
{
	switch (t) {
	case CPU_NORMAL:
		return ("normal");
	case CPU_RESERVED:
		return ("reserved");
	case CPU_PRESERVE:
		return ("preserve");
	}
	return ("?");
}

static json_t *
mem_types_json(unsigned types)
{
	static const char *const names[] = { "dram", "pmem", "hbm" };
	json_t		*a = json_array();
	unsigned	 i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (types & (1u << i))
			json_array_append_new(a, json_string(names[i]));
	return (a);
}

/* The CPUALLOC_* steps as names, in the order the allocator tries them. */
static json_t *
steps_json(unsigned steps)
{
	json_t		*a = json_array();
	unsigned	 bit;

	for (bit = 1; bit <= CPUALLOC_WHOLE_SET; bit <<= 1)
		if (steps & bit)
			json_array_append_new(a,
			    json_string(cpualloc_step_name(bit)));
	return (a);
}

static json_t *
request_json(const struct grant *g)
{
	const struct request	*r = &g->req;
	json_t			*o, *ann;
	int			 i;

	ann = json_object();
	for (i = 0; i < g->spec.nann; i++)
		json_object_set_new(ann, g->spec.ann[i].key,
		    json_string(g->spec.ann[i].value));
	o = json_pack("{s:s, s:s, s:i, s:i, s:o, s:b, s:b, s:s, s:b, "
	    "s:{s:I, s:I, s:o, s:b}, s:I, s:o}",
	    "qos", expr_qos_name(g->spec.qos),
	    "type", type_name(r->type),
	    "exclusiveCPUs", r->full,
	    "sharedMilli", r->fraction,
	    "limitMilli", r->limit == UNLIMITED_CPU ? json_null() :
	    json_integer(r->limit),
	    "isolate", r->isolate,
	    "strictIsolate", r->strict_isolate,
	    "priority", config_prio_name(r->prio),
	    "hideHyperthreads", r->hide_ht,
	    "memory", "request", (json_int_t)r->mem_req,
	    "limit", (json_int_t)r->mem_lim, "types",
	    mem_types_json(r->mem_types), "preserve", r->mem_preserve,
	    "coldStartMs", (json_int_t)r->cold_ms,
	    "annotations", ann);
	if (g->spec.trimmed)
		json_object_set_new(o, "trimmed", json_true());
	return (o);
}

/* What the runtime was told, or null where it is left alone. */
static json_t *
pinned_json(const struct grant *g)
{
	return (json_pack("{s:o, s:o}",
	    "cpus", g->applied.pin_cpus ? view_cpuset(&g->applied.cpus) :
	    json_null(),
	    "mems", g->applied.pin_mems ? view_cpuset(&g->applied.mems) :
	    json_null()));
}

static json_t *
decision_json(const struct grant *g)
{
	if (g->why != NULL)
		return (explain_json(g->why));
	return (json_pack("{s:s, s:s}", "how", "unknown", "note",
	    "placed before the daemon's last start: placements are kept "
	    "across restarts, their reasons are not"));
}

static json_t *
container_json(const struct policy *P, const struct grant *g)
{
	json_t	*o;

	(void)P;
	o = json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:o, s:o}",
	    "kind", "container", "id", g->key,
	    "namespace", g->spec.ns, "pod", g->spec.pod_name,
	    "container", g->spec.name,
	    "request", request_json(g),
	    "decision", decision_json(g));
	json_object_set_new(o, "allocation", json_pack("{s:s, s:o, s:i, "
	    "s:o, s:b}",
	    "pool", g->pool != NULL ? g->pool->name : "claims",
	    "exclusive", view_cpuset(&g->exclusive),
	    "sharedMilli", g->portion,
	    "pickedBy", steps_json(g->picked_by),
	    "fallback", g->fallback));
	if (g->nclaims > 0) {
		json_t	*a = json_array();
		int	 i;

		for (i = 0; i < g->nclaims; i++)
			json_array_append_new(a, json_string(g->claims[i]));
		json_object_set_new(o, "claims", a);
	}
	json_object_set_new(o, "pinned", pinned_json(g));
	return (o);
}

static json_t *
strv_json(char **v, int n)
{
	json_t	*a = json_array();
	int	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return (a);
}

static json_t *
claim_json(const struct grant *g)
{
	json_t	*o;

	o = json_pack("{s:s, s:s, s:s?, s:s?, s:o, s:s, s:o, s:i}",
	    "kind", "claim", "uid", g->key,
	    "namespace", g->claim_ns, "name", g->claim_name,
	    "cpus", view_cpuset(&g->exclusive),
	    "pool", g->pool != NULL ? g->pool->name : "",
	    "pickedBy", steps_json(g->picked_by),
	    "results", g->nresults);
	json_object_set_new(o, "decision", json_pack("{s:s, s:s}", "how",
	    "claim", "note", g->picked_by != 0 ? "the Kubernetes scheduler "
	    "chose its devices (NUMA nodes); the allocator picked its CPUs "
	    "on them" : "the Kubernetes scheduler chose its devices (NUMA "
	    "nodes); its CPUs were picked before the daemon's last start"));
	json_object_set_new(o, "consumers", g->consumers_known ?
	    strv_json(g->consumers, g->nconsumers) : json_null());
	json_object_set_new(o, "waiting", strv_json(g->waiting, g->nwaiting));
	return (o);
}

json_t *
policy_explain(const struct policy *P, const char *what, char **cause)
{
	const struct grant	*g;
	size_t			 n = strlen(CLAIM_PREFIX);

	if (strncmp(what, CLAIM_PREFIX, n) == 0) {
		if ((g = strmap_get(P->claims, what + n)) != NULL)
			return (claim_json(g));
		xasprintf(cause, "no claim with UID \"%s\" is held", what + n);
		return (NULL);
	}
	if ((g = strmap_get(P->ctrs, what)) != NULL)
		return (container_json(P, g));
	xasprintf(cause, "no container \"%s\" is held (a claim is "
	    "claim:<uid>)", what);
	return (NULL);
}
