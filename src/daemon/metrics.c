/*
 * metrics.c owns the daemon's counters and latency histograms and their
 * Prometheus text exposition, and the gauges of the policy made from its
 * pools and grants documents. Every metric and every label value is named
 * in the tables below: a value that is not listed is counted as "other",
 * so nothing a peer sends can grow the label set; the gauges' labels are
 * pool names and memory types, as many as the machine has pools. No I/O,
 * no libevent.
 */
#include "autoconf.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "metrics.h"
#include "xmalloc.h"

#define METRICS_MAX_VALUES	32	/* label values of one counter */

/* A counter without a label (label NULL) keeps its count in counts[0]. */
struct counter {
	const char		*name;
	const char		*help;
	const char		*label;
	const char *const	*values;	/* NULL-terminated; "other" follows */
	uint64_t		 counts[METRICS_MAX_VALUES + 1];
};

static const char *const kinds[] = { "container", "claim", NULL };
static const char *const ops[] = {
	"create", "update", "remove", "sync", "claim", "release", NULL
};
static const char *const error_kinds[] = {
	"state_write", "state_read", "export", "config",
	"admin_request", "admin_peer", "admin_limit",
	"nri_connect", "nri_protocol", "nri_update", "nri_timeout",
	"dra_protocol", "dra_register", "cdi_write", "cdi_spare", "kube_api",
	"slice_publish", "nrt", "fallback", "http_limit", NULL
};
static const char *const nri_events[] = {
	"connect", "disconnect", "configure", "synchronize", "shutdown",
	"run_pod_sandbox", "update_pod_sandbox", "post_update_pod_sandbox",
	"stop_pod_sandbox", "remove_pod_sandbox",
	"create_container", "post_create_container", "start_container",
	"post_start_container", "update_container", "post_update_container",
	"stop_container", "remove_container", "validate_container_adjustment",
	"state_change", "unimplemented", NULL
};
static const char *const results[] = { "ok", "refused", "unchanged", NULL };
static const char *const dra_methods[] = {
	"NodePrepareResources", "NodeUnprepareResources", NULL
};
static const char *const claim_results[] = {
	"prepared", "unprepared", "failed", NULL
};
static const char *const commands[] = {
	"check",
	"status", "topology", "pools", "grants", "claims", "config", "reload",
	"metrics", "log-level", "explain", "map", NULL
};

static const char *const http_codes[] = {
	"200", "404", "405", "503", NULL
};

static const char *const check_results[] = {
	"ok", "gone", "failed", NULL
};

static struct counter counters[] = {
	{ "allocations", "CPU grants made, by what holds them.", "kind",
	  kinds, { 0 } },
	{ "releases", "CPU grants given back, by what held them.", "kind",
	  kinds, { 0 } },
	{ "refusals", "Policy operations refused, by operation.", "op",
	  ops, { 0 } },
	{ "errors", "Errors, by kind.", "kind", error_kinds, { 0 } },
	{ "nri_events", "Events received from the runtime over NRI.", "event",
	  nri_events, { 0 } },
	{ "reloads", "Configuration reloads, by result.", "result",
	  results, { 0 } },
	{ "dra_requests", "Calls from the kubelet's DRA client, by method.",
	  "method", dra_methods, { 0 } },
	{ "dra_claims", "Claims answered to the kubelet, by result.",
	  "result", claim_results, { 0 } },
	{ "admin_requests", "Admin socket requests, by command.", "command",
	  commands, { 0 } },
	{ "nri_connects", "Connections made to the runtime's NRI socket.",
	  NULL, NULL, { 0 } },
	{ "nri_disconnects", "Connections to the runtime lost or closed.",
	  NULL, NULL, { 0 } },
	{ "nri_syncs", "Synchronize exchanges completed with the runtime.",
	  NULL, NULL, { 0 } },
	{ "nri_syncs_unpacked_whole", "Synchronize messages unpacked whole "
	  "by protobuf-c, not for the fields read (a NUL byte in a string, "
	  "bytes beyond what runtimes write).", NULL, NULL, { 0 } },
	{ "nri_update_failures", "Container updates the runtime did not "
	  "apply.", NULL, NULL, { 0 } },
	{ "cold_starts", "Cold starts over: DRAM added to a container's "
	  "memory.", NULL, NULL, { 0 } },
	{ "claim_pins_refused", "Containers not pinned to a claim they named "
	  "because their pod is not among its consumers.", NULL, NULL,
	  { 0 } },
	{ "claim_reads", "ResourceClaims read again to learn their "
	  "consumers, by result.", "result", check_results, { 0 } },
	{ "journal_records", "Records appended to the state journal.", NULL,
	  NULL, { 0 } },
	{ "journal_compactions", "Snapshots written to compact the state "
	  "journal.", NULL, NULL, { 0 } },
	{ "http_requests", "Requests answered by the HTTP endpoint, by "
	  "status code.", "code", http_codes, { 0 } },
};
#define NCOUNTERS	(sizeof counters / sizeof counters[0])

/* Upper bounds in seconds, 50us to 5s; +Inf is implicit. */
static const double bounds[] = {
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
	0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5
};
#define NBOUNDS		(sizeof bounds / sizeof bounds[0])

struct histogram {
	const char	*name;
	const char	*help;
	uint64_t	 buckets[NBOUNDS];	/* not cumulative */
	uint64_t	 count;
	double		 sum;
};

static struct histogram histograms[] = {
	{ "nri_request", "Time from a request of the runtime to its answer, "
	  "before the journal sync the answer waits for.",
	  { 0 }, 0, 0 },
	{ "dra_request", "Time from a request of the kubelet to its answer, "
	  "before the journal sync the answer waits for.",
	  { 0 }, 0, 0 },
	{ "api_request", "Time of one request to the API server (each "
	  "attempt), from its start to its answer or failure.", { 0 }, 0, 0 },
	{ "journal_sync", "Time to sync the state journal once for the "
	  "changes of one loop turn (group commit).", { 0 }, 0, 0 },
};
#define NHISTOGRAMS	(sizeof histograms / sizeof histograms[0])

struct gauge {
	const char	*name;
	const char	*help;
	double		 value;
};

static struct gauge gauges[] = {
	{ "journal_bytes", "Bytes in the state journal since its snapshot.",
	  0 },
	{ "journal_pending_records", "Records in the state journal since its "
	  "snapshot.", 0 },
};
#define NGAUGES		(sizeof gauges / sizeof gauges[0])

void
metrics_set(const char *name, double value)
{
	size_t	i;

	for (i = 0; i < NGAUGES; i++)
		if (strcmp(gauges[i].name, name) == 0)
			gauges[i].value = value;
}

/* Callers spell events as CreateContainer or create_container alike. */
static int
same_word(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_' || *a == '-')
			a++;
		while (*b == '_' || *b == '-')
			b++;
		if (*a == '\0' || *b == '\0')
			return (*a == *b);
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return (0);
		a++;
		b++;
	}
}

static size_t
value_index(const struct counter *c, const char *label, const char *value)
{
	size_t	i;

	if (c->label == NULL)
		return (0);
	if (label == NULL || value == NULL || strcmp(label, c->label) != 0)
		return (METRICS_MAX_VALUES);
	for (i = 0; c->values[i] != NULL; i++) {
		if (same_word(c->values[i], value))
			return (i);
	}
	return (METRICS_MAX_VALUES);
}

void
metrics_inc(const char *name, const char *label, const char *value)
{
	size_t	i;

	for (i = 0; i < NCOUNTERS; i++) {
		if (strcmp(counters[i].name, name) == 0) {
			counters[i].counts[value_index(&counters[i], label,
			    value)]++;
			return;
		}
	}
}

void
metrics_observe(const char *name, double seconds)
{
	struct histogram	*h = NULL;
	size_t			 i;

	for (i = 0; i < NHISTOGRAMS; i++) {
		if (strcmp(histograms[i].name, name) == 0)
			h = &histograms[i];
	}
	if (h == NULL || isnan(seconds))
		return;
	if (seconds < 0)
		seconds = 0;
	for (i = 0; i < NBOUNDS; i++) {
		if (seconds <= bounds[i]) {
			h->buckets[i]++;
			break;
		}
	}
	h->count++;
	h->sum += seconds;
}

void
metrics_reset(void)
{
	size_t	i;

	for (i = 0; i < NCOUNTERS; i++)
		memset(counters[i].counts, 0, sizeof counters[i].counts);
	for (i = 0; i < NHISTOGRAMS; i++) {
		memset(histograms[i].buckets, 0, sizeof histograms[i].buckets);
		histograms[i].count = 0;
		histograms[i].sum = 0;
	}
	for (i = 0; i < NGAUGES; i++)
		gauges[i].value = 0;
}

struct text {
	char	*buf;
	size_t	 len;
	size_t	 size;
};

static void __attribute__((__format__(__printf__, 2, 3)))
text_add(struct text *t, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < t->size - t->len)
			break;
		t->size = t->size * 2 + (size_t)n;
		t->buf = xreallocarray(t->buf, t->size, 1);
	}
	t->len += (size_t)n;
}

char *
metrics_render(void)
{
	const struct counter	*c;
	const struct histogram	*h;
	struct text		 t;
	uint64_t		 cum;
	size_t			 i, j;

	t.size = 8192;
	t.len = 0;
	t.buf = xmalloc(t.size);
	t.buf[0] = '\0';
	for (i = 0; i < NCOUNTERS; i++) {
		c = &counters[i];
		text_add(&t, "# HELP topoaware_%s_total %s\n", c->name,
		    c->help);
		text_add(&t, "# TYPE topoaware_%s_total counter\n", c->name);
		if (c->label == NULL) {
			text_add(&t, "topoaware_%s_total %llu\n", c->name,
			    (unsigned long long)c->counts[0]);
			continue;
		}
		for (j = 0; c->values[j] != NULL; j++)
			text_add(&t, "topoaware_%s_total{%s=\"%s\"} %llu\n",
			    c->name, c->label, c->values[j],
			    (unsigned long long)c->counts[j]);
		text_add(&t, "topoaware_%s_total{%s=\"other\"} %llu\n",
		    c->name, c->label,
		    (unsigned long long)c->counts[METRICS_MAX_VALUES]);
	}
	for (i = 0; i < NHISTOGRAMS; i++) {
		h = &histograms[i];
		text_add(&t, "# HELP topoaware_%s_seconds %s\n", h->name,
		    h->help);
		text_add(&t, "# TYPE topoaware_%s_seconds histogram\n",
		    h->name);
		cum = 0;
		for (j = 0; j < NBOUNDS; j++) {
			cum += h->buckets[j];
			text_add(&t, "topoaware_%s_seconds_bucket{le=\"%g\"} "
			    "%llu\n", h->name, bounds[j],
			    (unsigned long long)cum);
		}
		text_add(&t, "topoaware_%s_seconds_bucket{le=\"+Inf\"} %llu\n",
		    h->name, (unsigned long long)h->count);
		text_add(&t, "topoaware_%s_seconds_sum %.9g\n", h->name,
		    h->sum);
		text_add(&t, "topoaware_%s_seconds_count %llu\n", h->name,
		    (unsigned long long)h->count);
	}
	for (i = 0; i < NGAUGES; i++) {
		text_add(&t, "# HELP topoaware_%s %s\n", gauges[i].name,
		    gauges[i].help);
		text_add(&t, "# TYPE topoaware_%s gauge\n", gauges[i].name);
		text_add(&t, "topoaware_%s %.17g\n", gauges[i].name,
		    gauges[i].value);
	}
	return (t.buf);
}

/* A label value as the exposition format quotes it. */
static void
text_label(struct text *t, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			text_add(t, "\\\\");
		else if (*s == '"')
			text_add(t, "\\\"");
		else if (*s == '\n')
			text_add(t, "\\n");
		else
			text_add(t, "%c", *s);
	}
}

static void
text_family(struct text *t, const char *name, const char *help)
{
	text_add(t, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* What one pool holds, in CPUs, from its pools document entry. */
struct pool_gauges {
	const char	*name;
	const char	*mems;
	const json_t	*memory;	/* {"dram": {"total","free"}, ...} */
	char		*cpus;		/* its CPUs, list form */
	int		 capacity, reserved, isolated, shared, exclusive;
	int		 claimed, free;
	double		 shared_assigned, shared_available;	/* CPUs */
	int		 containers, claims;
};

/* The CPU list of a key of o added to set; a bad or absent one is none. */
static void
cpus_of(const json_t *o, const char *key, struct cpuset *set)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	const char	*text;

	text = json_string_value(json_object_get(o, key));
	if (text != NULL && cpuset_parse(&s, text, NULL) == 0)
		cpuset_or(set, &s);
	cpuset_clear(&s);
}

static double
number_of(const json_t *o, const char *key)
{
	return (json_number_value(json_object_get(o, key)));
}

static void
pool_gauges(const json_t *pool, const json_t *grants, struct pool_gauges *g)
{
	struct cpuset	 all = CPUSET_INITIALIZER, set = CPUSET_INITIALIZER;
	struct cpuset	 grantable = CPUSET_INITIALIZER;
	struct cpuset	 freecpus = CPUSET_INITIALIZER;
	struct cpuset	 claimed = CPUSET_INITIALIZER;
	const json_t	*gr;
	const char	*pool_name;
	size_t		 i;

	memset(g, 0, sizeof *g);
	g->name = json_string_value(json_object_get(pool, "name"));
	if (g->name == NULL)
		g->name = "";
	g->mems = json_string_value(json_object_get(pool, "mems"));
	if (g->mems == NULL)
		g->mems = "";
	g->memory = json_object_get(pool, "memory");
	cpus_of(pool, "isolated", &grantable);
	cpus_of(pool, "sharable", &grantable);
	cpuset_copy(&all, &grantable);
	cpus_of(pool, "reserved", &all);
	g->cpus = cpuset_format(&all);
	g->capacity = cpuset_count(&all);
	cpus_of(pool, "reserved", &set);
	g->reserved = cpuset_count(&set);
	cpuset_zero(&set);
	cpus_of(pool, "isolated", &set);
	g->isolated = cpuset_count(&set);
	/* The shared pool as Go's zone.cpu.shared.capacity has it: the free
	 * sharable CPUs and the reserved ones. */
	cpuset_zero(&set);
	cpus_of(pool, "freeSharable", &set);
	cpus_of(pool, "reserved", &set);
	g->shared = cpuset_count(&set);
	cpus_of(pool, "freeIsolated", &freecpus);
	cpus_of(pool, "freeSharable", &freecpus);
	g->free = cpuset_count(&freecpus);
	g->shared_assigned = (number_of(pool, "grantedShared") +
	    number_of(pool, "grantedReserved")) / 1000.0;
	g->shared_available = number_of(pool, "allocatableShared") / 1000.0;
	json_array_foreach(grants, i, gr) {
		pool_name = json_string_value(json_object_get(gr, "pool"));
		if (json_object_get(gr, "claim") != NULL) {
			/* A claim's CPUs are out of every pool holding them. */
			cpus_of(gr, "cpus", &claimed);
			if (pool_name != NULL && strcmp(pool_name, g->name) == 0)
				g->claims++;
		} else if (pool_name != NULL && strcmp(pool_name, g->name) == 0)
			g->containers++;
	}
	cpuset_and(&claimed, &grantable);
	cpuset_andnot(&claimed, &freecpus);
	g->claimed = cpuset_count(&claimed);
	cpuset_andnot(&grantable, &freecpus);
	g->exclusive = cpuset_count(&grantable) - g->claimed;
	cpuset_clear(&all);
	cpuset_clear(&set);
	cpuset_clear(&grantable);
	cpuset_clear(&freecpus);
	cpuset_clear(&claimed);
}

/* Prefix of the Go policy's gauges (namespace nri, group policy,
 * subsystem topologyaware; the unit is the suffix). */
#define GO_ZONE		"nri_policy_topologyaware_zone_"

static const struct {
	const char	*name;
	const char	*help;
	size_t		 off;
} cpu_gauges[] = {
	{ GO_ZONE "cpu_shared_capacity_cores", "Capacity of shared CPU pool "
	  "of a topology zone.", offsetof(struct pool_gauges, shared) },
	{ GO_ZONE "container_count", "Number of containers assigned to a "
	  "topology zone.", offsetof(struct pool_gauges, containers) },
	{ "topoaware_pool_reserved_cpus", "Reserved CPUs of a pool.",
	  offsetof(struct pool_gauges, reserved) },
	{ "topoaware_pool_isolated_cpus", "Kernel-isolated CPUs of a pool.",
	  offsetof(struct pool_gauges, isolated) },
	{ "topoaware_pool_exclusive_cpus", "CPUs of a pool held exclusively "
	  "by containers.", offsetof(struct pool_gauges, exclusive) },
	{ "topoaware_pool_claimed_cpus", "CPUs of a pool held by DRA claims.",
	  offsetof(struct pool_gauges, claimed) },
	{ "topoaware_pool_free_cpus", "CPUs of a pool neither reserved nor "
	  "held exclusively by a container or a claim.",
	  offsetof(struct pool_gauges, free) },
	{ "topoaware_pool_claims", "DRA claims held in a pool.",
	  offsetof(struct pool_gauges, claims) },
};

/* Memory types in the order of the policy's memory key. */
static const char *const mem_types[] = { "dram", "pmem", "hbm", NULL };

/* A pool's memory of one kind ("total", "free"), summed over types or of
 * one type; -1 when the pool says nothing of it. */
static double
mem_bytes(const struct pool_gauges *g, const char *type, const char *kind)
{
	const json_t	*v;
	double		 sum = -1;
	size_t		 i;

	for (i = 0; mem_types[i] != NULL; i++) {
		if (type != NULL && strcmp(type, mem_types[i]) != 0)
			continue;
		v = json_object_get(json_object_get(g->memory, mem_types[i]),
		    kind);
		if (!json_is_number(v))
			continue;
		sum = (sum < 0 ? 0 : sum) + json_number_value(v);
	}
	return (sum);
}

static void
text_zone(struct text *t, const char *name, const struct pool_gauges *g)
{
	text_add(t, "%s{zone=\"", name);
	text_label(t, g->name);
	text_add(t, "\"");
}

static void
render_memory(struct text *t, const struct pool_gauges *g, size_t n)
{
	static const struct {
		const char	*name;
		const char	*help;
		const char	*kind;	/* free, total or their difference */
	} zone[] = {
		{ GO_ZONE "mem_capacity_bytes", "Memory capacity of a topology "
		  "zone.", "total" },
		{ GO_ZONE "mem_assigned_bytes", "Amount of assigned memory of a "
		  "topology zone.", NULL },
		{ GO_ZONE "mem_available_bytes", "Amount of available memory of "
		  "a topology zone.", "free" },
	}, typed[] = {
		{ "topoaware_pool_memory_total_bytes", "Memory of a pool, by "
		  "memory type.", "total" },
		{ "topoaware_pool_memory_free_bytes", "Memory of a pool not "
		  "granted, by memory type.", "free" },
	};
	double	 v, f;
	size_t	 i, j, k;
	int	 any = 0;

	for (i = 0; i < n; i++)
		if (mem_bytes(&g[i], NULL, "total") >= 0)
			any = 1;
	if (!any)
		return;
	for (k = 0; k < sizeof zone / sizeof zone[0]; k++) {
		text_family(t, zone[k].name, zone[k].help);
		for (i = 0; i < n; i++) {
			v = mem_bytes(&g[i], NULL, zone[k].kind != NULL ?
			    zone[k].kind : "total");
			f = mem_bytes(&g[i], NULL, "free");
			if (v < 0 || (zone[k].kind == NULL && f < 0))
				continue;
			if (zone[k].kind == NULL)
				v -= f;
			text_zone(t, zone[k].name, &g[i]);
			text_add(t, ",mems=\"");
			text_label(t, g[i].mems);
			text_add(t, "\"} %.17g\n", v);
		}
	}
	for (k = 0; k < sizeof typed / sizeof typed[0]; k++) {
		text_family(t, typed[k].name, typed[k].help);
		for (i = 0; i < n; i++) {
			for (j = 0; mem_types[j] != NULL; j++) {
				v = mem_bytes(&g[i], mem_types[j],
				    typed[k].kind);
				if (v < 0)
					continue;
				text_zone(t, typed[k].name, &g[i]);
				text_add(t, ",type=\"%s\"} %.17g\n",
				    mem_types[j], v);
			}
		}
	}
}

char *
metrics_render_policy(const json_t *pools, const json_t *grants)
{
	struct pool_gauges	*g;
	struct text		 t;
	const json_t		*o;
	size_t			 n, i, k;
	int			 containers = 0, claims = 0;

	t.size = 8192;
	t.len = 0;
	t.buf = xmalloc(t.size);
	t.buf[0] = '\0';
	n = json_array_size(pools);
	g = xcalloc(n + 1, sizeof *g);
	for (i = 0; i < n; i++)
		pool_gauges(json_array_get(pools, i), grants, &g[i]);

	text_family(&t, GO_ZONE "cpu_capacity_cores", "A topology zone of "
	    "CPUs.");
	for (i = 0; i < n; i++) {
		text_zone(&t, GO_ZONE "cpu_capacity_cores", &g[i]);
		text_add(&t, ",cpus=\"%s\",mems=\"", g[i].cpus);
		text_label(&t, g[i].mems);
		text_add(&t, "\"} %d\n", g[i].capacity);
	}
	text_family(&t, GO_ZONE "cpu_shared_assigned_cores", "Assigned amount "
	    "of shared CPU pool of a topology zone.");
	for (i = 0; i < n; i++) {
		text_zone(&t, GO_ZONE "cpu_shared_assigned_cores", &g[i]);
		text_add(&t, "} %.17g\n", g[i].shared_assigned);
	}
	text_family(&t, GO_ZONE "cpu_shared_available_cores", "Available "
	    "amount of shared CPU pool of a topology zone.");
	for (i = 0; i < n; i++) {
		text_zone(&t, GO_ZONE "cpu_shared_available_cores", &g[i]);
		text_add(&t, "} %.17g\n", g[i].shared_available);
	}
	for (k = 0; k < sizeof cpu_gauges / sizeof cpu_gauges[0]; k++) {
		text_family(&t, cpu_gauges[k].name, cpu_gauges[k].help);
		for (i = 0; i < n; i++) {
			text_zone(&t, cpu_gauges[k].name, &g[i]);
			text_add(&t, "} %d\n", *(const int *)(const void *)
			    ((const char *)&g[i] + cpu_gauges[k].off));
		}
	}
	render_memory(&t, g, n);

	json_array_foreach(grants, i, o) {
		if (json_object_get(o, "claim") != NULL)
			claims++;
		else
			containers++;
	}
	text_family(&t, "topoaware_containers", "Containers held.");
	text_add(&t, "topoaware_containers %d\n", containers);
	text_family(&t, "topoaware_claims", "DRA claims held.");
	text_add(&t, "topoaware_claims %d\n", claims);
	text_family(&t, "topoaware_build_info", "The version of topoawared; "
	    "always 1.");
	text_add(&t, "topoaware_build_info{version=\"");
	text_label(&t, PACKAGE_VERSION);
	text_add(&t, "\"} 1\n");

	for (i = 0; i < n; i++)
		free(g[i].cpus);
	free(g);
	return (t.buf);
}

char *
metrics_exposition(const json_t *pools, const json_t *grants)
{
	char	*a, *b, *s;

	a = metrics_render();
	b = metrics_render_policy(pools, grants);
	xasprintf(&s, "%s%s", a, b);
	free(a);
	free(b);
	return (s);
}
