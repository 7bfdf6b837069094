/*
 * topoawarectl explain: the daemon's explanation of one grant as text.
 * Every field is looked up defensively: a missing one prints as "?".
 */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"

static const char *
s_of(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return (json_is_string(v) ? json_string_value(v) : "?");
}

static long long
i_of(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return (json_is_integer(v) ? (long long)json_integer_value(v) : 0);
}

static int
b_of(json_t *o, const char *key)
{
	return (json_is_true(json_object_get(o, key)));
}

static void
print_strings(const char *sep, json_t *a)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(a, i, v)
		printf("%s%s", i > 0 ? sep : "", json_is_string(v) ?
		    json_string_value(v) : "?");
}

/* Bytes, 1024-based, as the other commands print memory. */
static void
print_bytes(long long b)
{
	static const char	units[] = "kMGT";
	double			x = (double)b;
	int			u = -1;

	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		printf("%lld", b);
	else
		printf("%.1f%c", x, units[u]);
}

static void
print_request(json_t *r)
{
	json_t		*m = json_object_get(r, "memory"), *ann, *v;
	const char	*k;

	printf("request:   %s, ", s_of(r, "qos"));
	if (strcmp(s_of(r, "type"), "normal") != 0)
		printf("%s CPUs, ", s_of(r, "type"));
	printf("%lld exclusive CPU%s + %lldm shared", i_of(r, "exclusiveCPUs"),
	    i_of(r, "exclusiveCPUs") == 1 ? "" : "s", i_of(r, "sharedMilli"));
	if (json_is_integer(json_object_get(r, "limitMilli")))
		printf(" (limit %lldm)", i_of(r, "limitMilli"));
	if (strcmp(s_of(r, "priority"), "none") != 0)
		printf(", priority %s", s_of(r, "priority"));
	if (b_of(r, "isolate"))
		printf(", %sisolated CPUs", b_of(r, "strictIsolate") ?
		    "only " : "prefers ");
	if (b_of(r, "hideHyperthreads"))
		printf(", one thread per core");
	printf("\nmemory:    ");
	if (b_of(m, "preserve"))
		printf("nodes left as they are");
	else {
		print_bytes(i_of(m, "request"));
		printf(" requested, limit ");
		if (i_of(m, "limit") > 0)
			print_bytes(i_of(m, "limit"));
		else
			printf("none");
		printf(", types ");
		print_strings(",", json_object_get(m, "types"));
	}
	if (i_of(r, "coldStartMs") > 0)
		printf(", cold start %lld ms", i_of(r, "coldStartMs"));
	printf("\n");
	ann = json_object_get(r, "annotations");
	json_object_foreach(ann, k, v)
		printf("annotation %s: %s\n", k, json_is_string(v) ?
		    json_string_value(v) : "?");
	if (b_of(r, "trimmed"))
		printf("note:      its metadata was trimmed at the node's "
		    "budget: placed as if without it\n");
}

/* The candidates, their components in the order the scorer compares. */
static void
print_candidates(json_t *a)
{
	json_t	*c, *cap, *mem, *pr;
	size_t	 i;

	printf("  %-26s %6s %7s %6s %8s %4s %5s %7s %6s %6s %6s %5s %5s  %s\n",
	    "POOL", "ISOL", "SHARED", "RESV", "AFFINITY", "MEMN", "MTYPE",
	    "BURST", "PRIO-H", "PRIO-N", "PRIO-L", "DEPTH", "COLOC",
	    "OUTCOME");
	json_array_foreach(a, i, c) {
		cap = json_object_get(c, "capacity");
		mem = json_object_get(c, "memory");
		pr = json_object_get(c, "priority");
		printf("  %-26s %6lld %7lld %6lld %8.2f %4lld %5s %7lld "
		    "%6lld %6lld %6lld %5lld %5lld  %s\n",
		    s_of(c, "pool"), i_of(cap, "isolated"), i_of(cap, "shared"),
		    i_of(cap, "reserved"),
		    json_number_value(json_object_get(c, "affinity")),
		    i_of(mem, "nodes"), b_of(mem, "typesOffered") ? "yes" :
		    "no", i_of(c, "burstMilli"), i_of(pr, "high"),
		    i_of(pr, "normal"), i_of(pr, "low"), i_of(c, "depth"),
		    i_of(c, "colocated"), s_of(c, "outcome"));
	}
}

static void
print_decision(json_t *d, int depth)
{
	const char	*how = s_of(d, "how");
	json_t		*om;

	if (strcmp(how, "scored") == 0) {
		printf("%sby score: %s, decided by \"%s\"\n",
		    depth ? "  first placed " : "decision:  ", s_of(d, "pool"),
		    s_of(d, "rule"));
		print_candidates(json_object_get(d, "candidates"));
		if ((om = json_object_get(d, "omitted")) != NULL)
			printf("  (%lld more pools, each lost on \"%s\" or an "
			    "earlier rule)\n", i_of(om, "pools"),
			    s_of(om, "lostOnOrBefore"));
	} else if (strcmp(how, "kept") == 0) {
		printf("decision:  kept %s, its pool before (on update, reload "
		    "or restart), which could still take it\n",
		    s_of(d, "pool"));
		if (json_is_object(json_object_get(d, "first")))
			print_decision(json_object_get(d, "first"), 1);
		else
			printf("  what placed it there first was decided before "
			    "the daemon's last start\n");
	} else if (strcmp(how, "root") == 0)
		printf("decision:  %s: reserved or preserved CPUs come from the "
		    "root pool\n", s_of(d, "pool"));
	else if (strcmp(how, "claims") == 0)
		printf("decision:  pinned to its claims' CPUs\n");
	else if (strcmp(how, "fallback") == 0)
		printf("decision:  already running and what it asks for did not "
		    "fit: it shares %s's CPUs\n", s_of(d, "pool"));
	else
		printf("decision:  %s\n", json_is_string(json_object_get(d,
		    "note")) ? s_of(d, "note") : how);
}

static void
print_picked(json_t *steps)
{
	if (json_array_size(steps) == 0)
		return;
	printf(", picked by ");
	print_strings(", then ", steps);
}

static void
print_container(json_t *r)
{
	json_t	*a = json_object_get(r, "allocation");
	json_t	*p = json_object_get(r, "pinned");

	printf("container: %s (pod %s/%s, container %s)\n", s_of(r, "id"),
	    s_of(r, "namespace"), s_of(r, "pod"), s_of(r, "container"));
	print_request(json_object_get(r, "request"));
	print_decision(json_object_get(r, "decision"), 0);
	printf("cpus:      pool %s", s_of(a, "pool"));
	if (strcmp(s_of(a, "exclusive"), "") != 0)
		printf(", exclusive %s", s_of(a, "exclusive"));
	print_picked(json_object_get(a, "pickedBy"));
	if (i_of(a, "sharedMilli") > 0)
		printf(", %lldm of the shared CPUs", i_of(a, "sharedMilli"));
	if (b_of(a, "fallback"))
		printf(" (fallback)");
	printf("\n");
	if (json_object_get(r, "claims") != NULL) {
		printf("claims:    ");
		print_strings(" ", json_object_get(r, "claims"));
		printf("\n");
	}
	printf("pinned:    cpus %s, mems %s\n",
	    json_is_string(json_object_get(p, "cpus")) ? s_of(p, "cpus") :
	    "(left alone)", json_is_string(json_object_get(p, "mems")) ?
	    s_of(p, "mems") : "(left alone)");
}

static void
print_claim(json_t *r)
{
	json_t	*c = json_object_get(r, "consumers");

	printf("claim:     %s (%s/%s)\n", s_of(r, "uid"),
	    s_of(r, "namespace"), s_of(r, "name"));
	printf("decision:  %s\n", s_of(json_object_get(r, "decision"),
	    "note"));
	printf("cpus:      %s of %s", s_of(r, "cpus"), s_of(r, "pool"));
	print_picked(json_object_get(r, "pickedBy"));
	printf(", %lld allocation result%s\n", i_of(r, "results"),
	    i_of(r, "results") == 1 ? "" : "s");
	printf("consumers: ");
	if (json_is_array(c))
		print_strings(" ", c);
	else
		printf("not known yet");
	printf("\n");
	if (json_array_size(json_object_get(r, "waiting")) > 0) {
		printf("waiting:   ");
		print_strings(" ", json_object_get(r, "waiting"));
		printf("\n");
	}
}

void
print_explain(json_t *r)
{
	if (strcmp(s_of(r, "kind"), "claim") == 0)
		print_claim(r);
	else
		print_container(r);
}
