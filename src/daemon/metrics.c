/*
 * metrics.c owns the daemon's counters and latency histograms and their
 * Prometheus text exposition. Every metric and every label value is named
 * in the tables below: a value that is not listed is counted as "other",
 * so nothing a peer sends can grow the label set. No I/O, no libevent.
 */
#include "autoconf.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	"dra_protocol", "dra_register", "cdi_write", "kube_api",
	"slice_publish", "nrt", "fallback", NULL
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
	"status", "topology", "pools", "grants", "claims", "config", "reload",
	"metrics", "log-level", NULL
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
	{ "nri_request", "Time to handle one request from the runtime.",
	  { 0 }, 0, 0 },
	{ "dra_request", "Time to handle one request from the kubelet.",
	  { 0 }, 0, 0 },
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
