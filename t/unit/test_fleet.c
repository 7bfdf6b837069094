/*
 * test_fleet.c: configuration from the cluster. The Go agent's scope rules
 * as a table, the node's group from its labels (the deprecated ones and
 * values that make no object name), a TopologyAwarePolicy spec turned into
 * our config text (keys dropped with a warning, ours and unknown ones passed
 * to config_parse untouched, objects as the API server returns them once
 * Go's CRD defaults are applied), and the status patches byte for byte.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fleet.h"
#include "xmalloc.h"

#define IGNORED	": a key of the Go policy topoaware does not implement; ignored"

/* 2026-12-02T10:00:00Z */
#define WHEN	((time_t)1796205600)

/* The canonical text of a value, taking it. */
static char *
dump(json_t *v)
{
	char	*s;

	cr_assert_not_null(v);
	s = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
	cr_assert_not_null(s);
	json_decref(v);
	return (s);
}

static void
assert_json(json_t *v, const char *want)
{
	char	*got = dump(v);

	cr_assert_str_eq(got, want);
	free(got);
}

static json_t *
load(const char *text)
{
	json_error_t	 err;
	json_t		*v;

	v = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	cr_assert_not_null(v, "%s: %s", text, err.text);
	return (v);
}

/* The scope rules. */

#define MAXNAMES	6

struct scope_case {
	const char	*what;
	const char	*node;
	const char	*group;
	const char	*names[MAXNAMES];	/* NULL ends them */
	const char	*want;			/* NULL: none */
};

static const struct scope_case scope_cases[] = {
	{ "node wins over group and default", "n1", "g",
	  { "default", "group.g", "node.n1" }, "node.n1" },
	{ "node wins without a group", "n1", NULL,
	  { "default", "node.n1" }, "node.n1" },
	{ "group over default", "n1", "g",
	  { "default", "group.g", "node.n2" }, "group.g" },
	{ "group without default", "n1", "g",
	  { "group.g" }, "group.g" },
	{ "no group label: default", "n1", NULL,
	  { "group.g", "default", "node.n2" }, "default" },
	{ "empty group is no group", "n1", "",
	  { "group.", "default" }, "default" },
	{ "group object missing: default", "n1", "h",
	  { "group.g", "default" }, "default" },
	{ "none", "n1", "g",
	  { "group.h", "node.n2" }, NULL },
	{ "no objects at all", "n1", "g",
	  { NULL }, NULL },
	{ "a node named like a group is not in it", "g", NULL,
	  { "group.g", "default" }, "default" },
	{ "a group named like a node does not make it", "n2", "n1",
	  { "node.n1", "default" }, "default" },
	{ "a node named group.g", "group.g", "g",
	  { "group.g", "node.group.g", "default" }, "node.group.g" },
	{ "prefixes are whole", "n1", "g",
	  { "node.n1x", "node.n", "nodes.n1", "xnode.n1", "group.gg" }, NULL },
	{ "default is exact", "n1", NULL,
	  { "defaults", "default.n1", "Default" }, NULL },
	{ "no node name", NULL, "g",
	  { "node.", "group.g" }, "group.g" },
};

Test(fleet, scope_table)
{
	const struct scope_case	*c;
	const char		*got;
	size_t			 i, j, n;

	for (i = 0; i < sizeof scope_cases / sizeof scope_cases[0]; i++) {
		c = &scope_cases[i];
		for (n = 0; n < MAXNAMES && c->names[n] != NULL; n++)
			;
		got = fleet_choose(c->node, c->group, c->names, n);
		if (c->want == NULL) {
			cr_assert_null(got, "%s: got %s", c->what, got);
			continue;
		}
		cr_assert_not_null(got, "%s: none", c->what);
		cr_assert_str_eq(got, c->want, "%s", c->what);
		/* A pointer into names, not a copy. */
		for (j = 0; j < n && c->names[j] != got; j++)
			;
		cr_assert_lt(j, n, "%s: not a pointer into names", c->what);
	}
}

Test(fleet, scope_order_of_names_does_not_matter)
{
	const char	*a[] = { "node.n1", "group.g", "default" };
	const char	*b[] = { "default", "group.g", "node.n1" };

	cr_assert_eq(fleet_choose("n1", "g", a, 3), a[0]);
	cr_assert_eq(fleet_choose("n1", "g", b, 3), b[2]);
	cr_assert_eq(fleet_choose("n9", "g", a, 3), a[1]);
	cr_assert_eq(fleet_choose("n9", "h", b, 3), b[0]);
	cr_assert_null(fleet_choose("n1", "g", a, 0));
}

/* Group labels. */

static json_t *
node_with(const char *labels)
{
	json_t	*o;
	char	*text;

	xasprintf(&text, "{\"kind\": \"Node\", \"metadata\": {\"name\": "
	    "\"n1\", \"labels\": %s}}", labels);
	o = load(text);
	free(text);
	return (o);
}

/* The group of a node with these labels; want NULL for none. */
static void
group_is(const char *labels, const char *label, const char *want,
    const char *want_deprecated, int want_invalid)
{
	json_t		*o = node_with(labels);
	const char	*got, *dep = "unset";
	int		 invalid = -1;

	got = fleet_group(o, label, &dep, &invalid);
	if (want == NULL)
		cr_assert_null(got, "%s: got %s", labels, got);
	else {
		cr_assert_not_null(got, "%s: none", labels);
		cr_assert_str_eq(got, want, "%s", labels);
	}
	if (want_deprecated == NULL)
		cr_assert_null(dep, "%s: deprecated %s", labels, dep);
	else {
		cr_assert_not_null(dep, "%s: no deprecated label", labels);
		cr_assert_str_eq(dep, want_deprecated, "%s", labels);
	}
	cr_assert_eq(invalid, want_invalid, "%s: invalid %d", labels, invalid);
	json_decref(o);
}

Test(fleet, group_label)
{
	group_is("{\"config.nri/group\": \"gpu-nodes\"}", FLEET_GROUP_LABEL,
	    "gpu-nodes", NULL, 0);
	group_is("{\"config.nri/group\": \"gpu-nodes\"}", NULL,
	    "gpu-nodes", NULL, 0);
	group_is("{\"kubernetes.io/os\": \"linux\"}", NULL, NULL, NULL, 0);
	group_is("{}", NULL, NULL, NULL, 0);
	group_is("{\"config.nri/group\": \"\"}", NULL, NULL, NULL, 0);
	/* A label value is a string; anything else is no group. */
	group_is("{\"config.nri/group\": 7}", NULL, NULL, NULL, 0);
	/* Another label replaces the default one, which is then unused. */
	group_is("{\"config.nri/group\": \"a\", \"example.com/pool\": \"b\"}",
	    "example.com/pool", "b", NULL, 0);
	group_is("{\"config.nri/group\": \"a\"}", "example.com/pool",
	    NULL, NULL, 0);
}

Test(fleet, group_label_deprecated)
{
	const char *const	*dep = fleet_deprecated_labels();

	cr_assert_str_eq(dep[0], "group.config.nri");
	cr_assert_str_eq(dep[1], "resource-policy.nri.io/group");
	cr_assert_null(dep[2]);

	group_is("{\"group.config.nri\": \"old\"}", NULL, "old",
	    "group.config.nri", 0);
	group_is("{\"resource-policy.nri.io/group\": \"older\"}", NULL,
	    "older", "resource-policy.nri.io/group", 0);
	/* In the Go agent's order. */
	group_is("{\"resource-policy.nri.io/group\": \"older\", "
	    "\"group.config.nri\": \"old\"}", NULL, "old",
	    "group.config.nri", 0);
	/* Only when the label itself is absent or empty. */
	group_is("{\"group.config.nri\": \"old\", \"config.nri/group\": "
	    "\"new\"}", NULL, "new", NULL, 0);
	group_is("{\"group.config.nri\": \"old\", \"config.nri/group\": "
	    "\"\"}", NULL, "old", "group.config.nri", 0);
	group_is("{\"group.config.nri\": \"\", "
	    "\"resource-policy.nri.io/group\": \"older\"}", NULL, "older",
	    "resource-policy.nri.io/group", 0);
	/* With another label too. */
	group_is("{\"group.config.nri\": \"old\"}", "example.com/pool", "old",
	    "group.config.nri", 0);
}

Test(fleet, group_label_invalid)
{
	static const char *const bad[] = {
		"Group-A", "group_a", "-a", "a-", "a..b", "a.-b", "a-.b",
		".a", "a.", "a b", "a/b", "\\u00fcber",
	};
	static const char *const good[] = {
		"a", "0", "a-b", "a.b", "gpu-nodes.zone-1", "a--b",
	};
	char	*labels, *v;
	size_t	 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		xasprintf(&labels, "{\"config.nri/group\": \"%s\"}", bad[i]);
		group_is(labels, NULL, NULL, NULL, 1);
		free(labels);
		/* From a deprecated label, which is still named. */
		xasprintf(&labels, "{\"group.config.nri\": \"%s\"}", bad[i]);
		group_is(labels, NULL, NULL, "group.config.nri", 1);
		free(labels);
	}
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		xasprintf(&labels, "{\"config.nri/group\": \"%s\"}", good[i]);
		group_is(labels, NULL, good[i], NULL, 0);
		free(labels);
	}

	/* "group." and the value make at most FLEET_NAME_MAX characters. */
	v = xmalloc(FLEET_NAME_MAX);
	memset(v, 'a', FLEET_NAME_MAX - 6);
	v[FLEET_NAME_MAX - 6] = '\0';
	xasprintf(&labels, "{\"config.nri/group\": \"%s\"}", v);
	group_is(labels, NULL, v, NULL, 0);
	free(labels);
	v[FLEET_NAME_MAX - 6] = 'a';
	v[FLEET_NAME_MAX - 5] = '\0';
	xasprintf(&labels, "{\"config.nri/group\": \"%s\"}", v);
	group_is(labels, NULL, NULL, NULL, 1);
	free(labels);
	free(v);
}

Test(fleet, group_of_odd_objects)
{
	json_t		*o;
	const char	*dep = "unset";
	int		 invalid = -1;

	cr_assert_null(fleet_group(NULL, NULL, &dep, &invalid));
	cr_assert_null(dep);
	cr_assert_eq(invalid, 0);
	o = load("{\"metadata\": {\"name\": \"n1\"}}");
	cr_assert_null(fleet_group(o, NULL, NULL, NULL));
	json_decref(o);
	o = load("{\"metadata\": {\"labels\": [\"config.nri/group\"]}}");
	cr_assert_null(fleet_group(o, NULL, NULL, NULL));
	json_decref(o);
	o = load("[]");
	cr_assert_null(fleet_group(o, NULL, NULL, NULL));
	json_decref(o);
	/* Optional outputs. */
	o = node_with("{\"group.config.nri\": \"Bad\"}");
	cr_assert_null(fleet_group(o, NULL, NULL, NULL));
	json_decref(o);
}

/* Specs. */

struct converted {
	char		*text;
	size_t		 len;
	char		**warnings;
	size_t		 nwarnings;
};

static void
convert(const char *spec, struct converted *c)
{
	json_t	*v = load(spec);
	char	*before, *cause = NULL;

	before = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);
	cr_assert_not_null(before);
	cr_assert_eq(fleet_spec_config(v, &c->text, &c->len, &c->warnings,
	    &c->nwarnings, &cause), 0, "%s: %s", spec, cause);
	cr_assert_null(cause);
	cr_assert_not_null(c->text);
	cr_assert_eq(c->len, strlen(c->text));
	/* The object given is left as it was. */
	assert_json(v, before);
	free(before);
}

static void
converted_free(struct converted *c)
{
	free(c->text);
	fleet_warnings_free(c->warnings, c->nwarnings);
}

/* The warnings name these keys, in this order; NULL ends them. */
static void
assert_warnings(const struct converted *c, const char *const *keys)
{
	char	*want;
	size_t	 i;

	for (i = 0; keys[i] != NULL; i++) {
		cr_assert_lt(i, c->nwarnings, "no warning for %s", keys[i]);
		xasprintf(&want, "%s%s", keys[i], IGNORED);
		cr_assert_str_eq(c->warnings[i], want);
		free(want);
	}
	cr_assert_eq(c->nwarnings, i, "%zu warnings, want %zu", c->nwarnings,
	    i);
}

/* The converted text loads with config_parse. */
static struct config *
parse_text(const struct converted *c)
{
	struct config	*cfg = NULL;
	char		*cause = NULL;

	cr_assert_eq(config_parse(c->text, c->len, &cfg, &cause), 0,
	    "%s refused: %s", c->text, cause);
	cr_assert_not_null(cfg);
	return (cfg);
}

/* The converted text is refused, with a cause that starts with want. */
static void
refused(const struct converted *c, const char *want)
{
	struct config	*cfg = NULL;
	char		*cause = NULL;

	cr_assert_eq(config_parse(c->text, c->len, &cfg, &cause), -EINVAL,
	    "%s accepted", c->text);
	cr_assert_null(cfg);
	cr_assert_not_null(cause);
	cr_assert_eq(strncmp(cause, want, strlen(want)), 0,
	    "cause \"%s\" does not start with \"%s\"", cause, want);
	free(cause);
}

/* The converted text is this document (compared as sorted JSON). */
static void
text_is(const struct converted *c, const char *want)
{
	json_t	*w = load(want);
	char	*ws = dump(w);

	assert_json(load(c->text), ws);
	free(ws);
}

/*
 * An object as the API server returns it with nothing set but the required
 * reservedResources: Go's CRD fills in its defaults, and the keys come back
 * sorted.
 */
Test(fleet, spec_with_crd_defaults_loads)
{
	/* Go's defaults of keys we ignore say nothing: no warning. */
	static const char *const want[] = { NULL };
	struct converted	 c;
	struct config		*cfg;

	convert("{\"agent\": {\"nodeResourceTopology\": true}, "
	    "\"controllableInterrupts\": [\"*\"], "
	    "\"defaultCPUPriority\": \"none\", \"pinCPU\": true, "
	    "\"pinMemory\": true, \"preferIsolatedCPUs\": true, "
	    "\"reservedResources\": {\"cpu\": \"750m\"}, "
	    "\"unlimitedBurstable\": \"package\"}", &c);
	assert_warnings(&c, want);
	cfg = parse_text(&c);
	cr_assert_eq(cfg->pin_cpu, 1);
	cr_assert_eq(cfg->pin_memory, 1);
	cr_assert_eq(cfg->prefer_isolated, 1);
	cr_assert_eq(cfg->default_prio, CPU_PRIO_NONE);
	cr_assert_eq(cfg->unlimited_burstable, UB_PACKAGE);
	cr_assert_str_eq(cfg->reserved_cpu, "750m");
	config_free(cfg);
	converted_free(&c);
}

/* With instrumentation and log given, their defaults come too. */
Test(fleet, spec_with_nested_crd_defaults_loads)
{
	static const char *const want[] = { "log.source", NULL };
	struct converted	 c;
	struct config		*cfg;

	convert("{\"agent\": {\"nodeResourceTopology\": true}, "
	    "\"controllableInterrupts\": [\"*\"], "
	    "\"defaultCPUPriority\": \"none\", "
	    "\"instrumentation\": {\"httpEndpoint\": \":8891\", "
	    "\"metrics\": {\"enabled\": [\"policy\", \"buildinfo\"]}, "
	    "\"prometheusExport\": true, \"reportPeriod\": \"30s\"}, "
	    "\"log\": {\"source\": false}, "
	    "\"pinCPU\": true, \"pinMemory\": true, "
	    "\"preferIsolatedCPUs\": true, "
	    "\"reservedResources\": {\"cpu\": \"cpuset:0-1\"}, "
	    "\"unlimitedBurstable\": \"package\"}", &c);
	assert_warnings(&c, want);
	cfg = parse_text(&c);
	cr_assert_str_eq(cfg->http_endpoint, ":8891");
	cr_assert_eq(cfg->prometheus_export, 1);
	cr_assert_str_eq(cfg->reserved_cpu, "cpuset:0-1");
	config_free(cfg);
	converted_free(&c);
}

/* Every key of Go's sample TopologyAwarePolicy, our values. */
Test(fleet, spec_with_keys_of_go_sample_loads)
{
	static const char *const want[] = {
		"log.source", "log.klog", "instrumentation.reportPeriod",
		"instrumentation.samplingRatePerMillion", NULL
	};
	struct converted	 c;
	struct config		*cfg;

	convert("{\"pinCPU\": false, \"pinMemory\": false, "
	    "\"preferIsolatedCPUs\": false, \"preferSharedCPUs\": true, "
	    "\"colocatePods\": true, \"colocateNamespaces\": true, "
	    "\"reservedPoolNamespaces\": [\"monitoring\", \"batch-*\"], "
	    "\"reservedResources\": {\"cpu\": \"1500m\"}, "
	    "\"log\": {\"source\": true, \"klog\": {\"skip_headers\": true}}, "
	    "\"instrumentation\": {\"reportPeriod\": \"15s\", "
	    "\"samplingRatePerMillion\": 500}}", &c);
	assert_warnings(&c, want);
	text_is(&c, "{\"pinCPU\": false, \"pinMemory\": false, "
	    "\"preferIsolatedCPUs\": false, \"preferSharedCPUs\": true, "
	    "\"colocatePods\": true, \"colocateNamespaces\": true, "
	    "\"reservedPoolNamespaces\": [\"monitoring\", \"batch-*\"], "
	    "\"reservedResources\": {\"cpu\": \"1500m\"}, \"log\": {}, "
	    "\"instrumentation\": {}}");
	cfg = parse_text(&c);
	cr_assert_eq(cfg->pin_cpu, 0);
	cr_assert_eq(cfg->pin_memory, 0);
	cr_assert_eq(cfg->prefer_isolated, 0);
	cr_assert_eq(cfg->prefer_shared, 1);
	cr_assert_eq(cfg->colocate_pods, 1);
	cr_assert_eq(cfg->colocate_namespaces, 1);
	cr_assert_eq(cfg->nreserved_ns, 2);
	cr_assert_str_eq(cfg->reserved_ns[0], "monitoring");
	cr_assert_str_eq(cfg->reserved_ns[1], "batch-*");
	cr_assert_str_eq(cfg->reserved_cpu, "1500m");
	cr_assert_eq(cfg->log_level, LOG_LEVEL_INFO);
	config_free(cfg);
	converted_free(&c);
}

/*
 * Every key Go's TopologyAwarePolicy spec carries, each set, loads: the
 * ones we lack are all in the table (a key missing there would be refused
 * as unknown).
 */
Test(fleet, every_go_key_loads)
{
	static const char *const want[] = {
		"schedulingClasses", "namespaceSchedulingClasses",
		"podQoSSchedulingClasses", "cpuClasses", "sharedPoolCPUClass",
		"reservedPoolCPUClass", "defaultExclusiveCPUClass",
		"controllableInterrupts", "reservedResources.memory",
		"availableResources.memory", "control", "log.debug",
		"log.source", "log.klog",
		"instrumentation.samplingRatePerMillion",
		"instrumentation.tracingCollector",
		"instrumentation.metricsExporter",
		"instrumentation.reportPeriod",
		"instrumentation.logExporter",
		"instrumentation.logExportPeriod",
		"instrumentation.metrics", "agent", NULL
	};
	struct converted	 c;
	struct config		*cfg;

	convert("{\"pinCPU\": true, \"pinMemory\": true, "
	    "\"preferIsolatedCPUs\": true, \"preferSharedCPUs\": false, "
	    "\"colocatePods\": false, \"colocateNamespaces\": false, "
	    "\"reservedPoolNamespaces\": [], "
	    "\"defaultCPUPriority\": \"high\", "
	    "\"unlimitedBurstable\": \"numa\", "
	    "\"schedulingClasses\": [{\"name\": \"rt\", "
	    "\"policy\": \"fifo\"}], "
	    "\"namespaceSchedulingClasses\": {\"a\": \"rt\"}, "
	    "\"podQoSSchedulingClasses\": {\"guaranteed\": \"rt\"}, "
	    "\"cpuClasses\": [{\"name\": \"fast\"}], "
	    "\"sharedPoolCPUClass\": \"fast\", "
	    "\"reservedPoolCPUClass\": \"fast\", "
	    "\"defaultExclusiveCPUClass\": \"fast\", "
	    "\"controllableInterrupts\": [\"eth*\"], "
	    "\"reservedResources\": {\"cpu\": \"1\", \"memory\": \"1G\"}, "
	    "\"availableResources\": {\"cpu\": \"cpuset:0-7\", "
	    "\"memory\": \"8G\"}, "
	    "\"control\": {\"cpu\": {}, \"rdt\": {\"enable\": false}, "
	    "\"blockio\": {}}, "
	    "\"log\": {\"debug\": [\"*\"], \"source\": true, "
	    "\"klog\": {\"v\": 3}}, "
	    "\"instrumentation\": {\"samplingRatePerMillion\": 10, "
	    "\"tracingCollector\": \"otlp-http\", "
	    "\"metricsExporter\": \"prometheus\", \"reportPeriod\": \"1m\", "
	    "\"logExporter\": \"otlp-grpc\", \"logExportPeriod\": \"5s\", "
	    "\"httpEndpoint\": \"127.0.0.1:8891\", \"prometheusExport\": true, "
	    "\"metrics\": {\"enabled\": [\"*\"], \"polled\": []}}, "
	    "\"agent\": {\"nodeResourceTopology\": false, "
	    "\"podResourceAPI\": true}}", &c);
	assert_warnings(&c, want);
	cfg = parse_text(&c);
	cr_assert_str_eq(cfg->available_cpu, "cpuset:0-7");
	cr_assert_str_eq(cfg->reserved_cpu, "1");
	cr_assert_eq(cfg->default_prio, CPU_PRIO_HIGH);
	cr_assert_eq(cfg->unlimited_burstable, UB_NUMA);
	cr_assert_str_eq(cfg->http_endpoint, "127.0.0.1:8891");
	config_free(cfg);
	converted_free(&c);
}

/* config.c's one table: each of its keys is dropped, alone, where it is. */
Test(fleet, every_table_key_dropped)
{
	const char *const	*t = config_unsupported();
	struct converted	 c;
	const char		*want[2];
	char			*spec, *parent, *dot;
	struct config		*cfg;

	for (; *t != NULL; t++) {
		if ((dot = strchr(*t, '.')) == NULL)
			xasprintf(&spec, "{\"%s\": {\"x\": 1}}", *t);
		else {
			parent = xstrndup(*t, (size_t)(dot - *t));
			xasprintf(&spec, "{\"%s\": {\"%s\": 1}}", parent,
			    dot + 1);
			free(parent);
		}
		convert(spec, &c);
		want[0] = *t;
		want[1] = NULL;
		assert_warnings(&c, want);
		cfg = parse_text(&c);
		config_free(cfg);
		converted_free(&c);
		free(spec);
	}
}

Test(fleet, warning_text)
{
	struct converted	c;

	convert("{\"agent\": {}, \"log\": {\"klog\": {}}}", &c);
	cr_assert_eq(c.nwarnings, 2);
	cr_assert_str_eq(c.warnings[0], "agent: a key of the Go policy "
	    "topoaware does not implement; ignored");
	cr_assert_str_eq(c.warnings[1], "log.klog: a key of the Go policy "
	    "topoaware does not implement; ignored");
	converted_free(&c);
}

/* Our keys, including those Go lacks, pass as they are. */
Test(fleet, our_keys_untouched)
{
	static const char *const none[] = { NULL };
	static const char *const doc = "{\"reservedResources\": "
	    "{\"cpu\": \"exclude-cpuset:2-63\"}, "
	    "\"availableResources\": {\"cpu\": \"cpuset:0-63\"}, "
	    "\"pinCPU\": true, \"pinMemory\": false, "
	    "\"preferIsolatedCPUs\": false, \"preferSharedCPUs\": true, "
	    "\"reservedPoolNamespaces\": [\"mon*\"], "
	    "\"defaultCPUPriority\": \"low\", \"colocatePods\": true, "
	    "\"colocateNamespaces\": true, \"unlimitedBurstable\": \"die\", "
	    "\"dra\": {\"enabled\": false, "
	    "\"driverName\": \"cpu.example.com\"}, "
	    "\"nodeResourceTopology\": {\"enabled\": false, "
	    "\"refreshSeconds\": 30}, "
	    "\"log\": {\"level\": \"debug\"}, "
	    "\"instrumentation\": {\"httpEndpoint\": \"[::1]:9000\", "
	    "\"prometheusExport\": true}}";
	struct converted	 c;
	struct config		*cfg;

	convert(doc, &c);
	assert_warnings(&c, none);
	text_is(&c, doc);
	cfg = parse_text(&c);
	cr_assert_eq(cfg->dra_enabled, 0);
	cr_assert_str_eq(cfg->dra_driver_name, "cpu.example.com");
	cr_assert_eq(cfg->nrt_enabled, 0);
	cr_assert_eq(cfg->nrt_refresh_seconds, 30);
	cr_assert_eq(cfg->log_level, LOG_LEVEL_DEBUG);
	cr_assert_eq(cfg->default_prio, CPU_PRIO_LOW);
	cr_assert_eq(cfg->unlimited_burstable, UB_DIE);
	config_free(cfg);
	converted_free(&c);
}

/* Partial objects: the ignored keys go, our keys beside them stay. */
Test(fleet, nested_partial_objects)
{
	static const char *const want[] = {
		"log.source", "instrumentation.reportPeriod",
		"reservedResources.memory", NULL
	};
	struct converted	 c;
	struct config		*cfg;

	convert("{\"log\": {\"source\": true, \"level\": \"warn\"}, "
	    "\"instrumentation\": {\"reportPeriod\": \"60s\", "
	    "\"httpEndpoint\": \":8891\", \"prometheusExport\": true}, "
	    "\"reservedResources\": {\"memory\": \"2G\", \"cpu\": \"2\"}}", &c);
	assert_warnings(&c, want);
	text_is(&c, "{\"log\": {\"level\": \"warn\"}, "
	    "\"instrumentation\": {\"httpEndpoint\": \":8891\", "
	    "\"prometheusExport\": true}, \"reservedResources\": "
	    "{\"cpu\": \"2\"}}");
	cfg = parse_text(&c);
	cr_assert_eq(cfg->log_level, LOG_LEVEL_WARN);
	cr_assert_str_eq(cfg->http_endpoint, ":8891");
	cr_assert_eq(cfg->prometheus_export, 1);
	cr_assert_str_eq(cfg->reserved_cpu, "2");
	config_free(cfg);
	converted_free(&c);
}

/* A whole object is one key: nothing below it is named. */
Test(fleet, whole_objects_one_warning)
{
	static const char *const want[] = { "control", "agent", NULL };
	struct converted	c;

	convert("{\"control\": {\"rdt\": {\"enable\": true, \"options\": "
	    "{\"l3\": {\"optional\": true}}}, \"cpu\": {}}, "
	    "\"agent\": {\"nodeResourceTopology\": true, "
	    "\"podResourceAPI\": false}}", &c);
	assert_warnings(&c, want);
	text_is(&c, "{}");
	converted_free(&c);
}

/* What we do not know is passed on for config_parse to refuse. */
Test(fleet, unknown_keys_refused_by_config_parse)
{
	static const char *const none[] = { NULL };
	static const char *const source[] = { "log.source", NULL };
	static const char *const agent[] = { "agent", NULL };
	struct converted	 c;

	convert("{\"pinCPU\": true, \"bogus\": 1}", &c);
	assert_warnings(&c, none);
	refused(&c, "bogus: unknown key");
	converted_free(&c);

	convert("{\"log\": {\"source\": true, \"colour\": \"red\"}}", &c);
	assert_warnings(&c, source);
	refused(&c, "log.colour: unknown key");
	converted_free(&c);

	convert("{\"agent\": {}, \"dra\": {\"socket\": \"x\"}}", &c);
	assert_warnings(&c, agent);
	refused(&c, "dra.socket: unknown key");
	converted_free(&c);

	/* A domain of Go's constraints that is neither ours nor ignored. */
	convert("{\"reservedResources\": {\"cpu\": \"1\", "
	    "\"hugepages-2Mi\": \"1G\"}}", &c);
	assert_warnings(&c, none);
	refused(&c, "reservedResources.hugepages-2Mi: unknown key");
	converted_free(&c);

	/* A dotted key is no path: not dropped, and refused. */
	convert("{\"log.source\": true}", &c);
	assert_warnings(&c, none);
	refused(&c, "log.source: not supported");
	converted_free(&c);
}

/* Bad values of our keys are not mended either. */
Test(fleet, bad_values_refused_by_config_parse)
{
	static const char *const none[] = { NULL };
	static const char *const klog[] = { "log.klog", NULL };
	struct converted	 c;

	convert("{\"pinCPU\": \"yes\"}", &c);
	assert_warnings(&c, none);
	refused(&c, "pinCPU: expected true or false");
	converted_free(&c);

	convert("{\"unlimitedBurstable\": \"core\"}", &c);
	refused(&c, "unlimitedBurstable: \"core\" is not one of");
	converted_free(&c);

	/* An object Go knows holding something else is no object to walk. */
	convert("{\"log\": \"loud\"}", &c);
	assert_warnings(&c, none);
	refused(&c, "log: expected an object");
	converted_free(&c);

	convert("{\"log\": {\"klog\": {}, \"level\": \"trace\"}}", &c);
	assert_warnings(&c, klog);
	refused(&c, "log.level: \"trace\" is not one of");
	converted_free(&c);
}

#if JANSSON_VERSION_HEX >= 0x020e00
/* A key holding a NUL byte is not the key before it: passed on, refused. */
Test(fleet, key_with_nul_refused)
{
	static const char *const agent[] = { "agent", NULL };
	struct converted	 c;
	json_t			*v;
	char			*cause = NULL;

	v = json_object();
	cr_assert_not_null(v);
	cr_assert_eq(json_object_setn_new(v, "agent\0x", 7, json_object()), 0);
	cr_assert_eq(json_object_set_new(v, "agent", json_object()), 0);
	cr_assert_eq(json_object_setn_new(v, "log\0x", 5,
	    json_pack("{s:b}", "source", 1)), 0);
	cr_assert_eq(fleet_spec_config(v, &c.text, &c.len, &c.warnings,
	    &c.nwarnings, &cause), 0);
	assert_warnings(&c, agent);
	cr_assert_not_null(strstr(c.text, "agent\\u0000x"), "%s", c.text);
	cr_assert_not_null(strstr(c.text, "log\\u0000x"), "%s", c.text);
	refused(&c, "line ");
	converted_free(&c);
	json_decref(v);
}
#endif

Test(fleet, empty_spec)
{
	static const char *const none[] = { NULL };
	struct converted	 c;
	struct config		*cfg;

	convert("{}", &c);
	assert_warnings(&c, none);
	cr_assert_null(c.warnings);
	text_is(&c, "{}");
	cfg = parse_text(&c);
	config_free(cfg);
	converted_free(&c);
}

Test(fleet, spec_not_an_object)
{
	static const char *const docs[] = { "[]", "\"x\"", "null", "1" };
	json_t		*v;
	char		*text = (char *)1, **w = (char **)1, *cause = NULL;
	size_t		 len = 1, n = 1, i;

	cr_assert_eq(fleet_spec_config(NULL, &text, &len, &w, &n, &cause),
	    -EINVAL);
	cr_assert_str_eq(cause, "spec: missing");
	cr_assert_null(text);
	cr_assert_null(w);
	cr_assert_eq(len, 0);
	cr_assert_eq(n, 0);
	free(cause);
	for (i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		v = json_loads(docs[i], JSON_DECODE_ANY, NULL);
		cr_assert_not_null(v);
		cause = NULL;
		cr_assert_eq(fleet_spec_config(v, &text, &len, &w, &n,
		    &cause), -EINVAL, "%s", docs[i]);
		cr_assert_str_eq(cause, "spec: not an object");
		cr_assert_null(text);
		free(cause);
		json_decref(v);
	}
	/* No cause wanted. */
	cr_assert_eq(fleet_spec_config(NULL, &text, &len, &w, &n, NULL),
	    -EINVAL);
	fleet_warnings_free(NULL, 0);
}

/* Status patches, byte for byte. */

Test(fleet, status_success)
{
	assert_json(fleet_status_patch("node-a", 1, 3, NULL, NULL, 0, WHEN),
	    "{\"status\":{\"nodes\":{\"node-a\":{\"errors\":\"\","
	    "\"generation\":3,\"status\":\"Success\","
	    "\"timestamp\":\"2026-12-02T10:00:00Z\"}}}}");
	/* An empty error is the same. */
	assert_json(fleet_status_patch("node-a", 1, 3, "", NULL, 0, WHEN),
	    "{\"status\":{\"nodes\":{\"node-a\":{\"errors\":\"\","
	    "\"generation\":3,\"status\":\"Success\","
	    "\"timestamp\":\"2026-12-02T10:00:00Z\"}}}}");
}

Test(fleet, status_success_with_warnings)
{
	char	*w[] = {
		"agent" IGNORED,
		"log.source" IGNORED,
	};

	assert_json(fleet_status_patch("node-a", 1, 9007199254740993LL, NULL,
	    w, 2, WHEN),
	    "{\"status\":{\"nodes\":{\"node-a\":{\"errors\":\"\","
	    "\"generation\":9007199254740993,\"status\":\"Success\","
	    "\"timestamp\":\"2026-12-02T10:00:00Z\",\"warnings\":["
	    "\"agent: a key of the Go policy topoaware does not implement; "
	    "ignored\",\"log.source: a key of the Go policy topoaware does not "
	    "implement; ignored\"]}}}}");
}

Test(fleet, status_failure)
{
	char	*w[] = { "agent" IGNORED };

	assert_json(fleet_status_patch("n1", 0, 1,
	    "pinCPU: expected true or false, got a string", NULL, 0, WHEN),
	    "{\"status\":{\"nodes\":{\"n1\":{\"errors\":\"pinCPU: expected "
	    "true or false, got a string\",\"generation\":1,"
	    "\"status\":\"Failure\","
	    "\"timestamp\":\"2026-12-02T10:00:00Z\"}}}}");
	assert_json(fleet_status_patch("n1", 0, 2, "bogus: unknown key \"q\"",
	    w, 1, WHEN),
	    "{\"status\":{\"nodes\":{\"n1\":{\"errors\":\"bogus: unknown key "
	    "\\\"q\\\"\",\"generation\":2,\"status\":\"Failure\","
	    "\"timestamp\":\"2026-12-02T10:00:00Z\",\"warnings\":[\"agent: "
	    "a key of the Go policy topoaware does not implement; "
	    "ignored\"]}}}}");
}

Test(fleet, status_text_not_utf8_cleaned)
{
	char	*w[] = { "bad \xff warning" };

	assert_json(fleet_status_patch("n\xc3", 0, 1, "bad \xfe", w, 1, WHEN),
	    "{\"status\":{\"nodes\":{\"n\xef\xbf\xbd\":{\"errors\":\"bad "
	    "\xef\xbf\xbd\",\"generation\":1,\"status\":\"Failure\","
	    "\"timestamp\":\"2026-12-02T10:00:00Z\",\"warnings\":[\"bad "
	    "\xef\xbf\xbd warning\"]}}}}");
}

Test(fleet, status_timestamps)
{
	static const struct {
		time_t		 when;
		const char	*want;	/* NULL: none */
	} cases[] = {
		{ 0, "1970-01-01T00:00:00Z" },
		{ -1, "1969-12-31T23:59:59Z" },
		{ 1709251199, "2024-02-29T23:59:59Z" },
		{ 253402300799LL, "9999-12-31T23:59:59Z" },
		{ 253402300800LL, NULL },
		/* Year 1: Go reads four digits. */
		{ -62135596800LL, "0001-01-01T00:00:00Z" },
	};
	json_t		*p, *ts;
	size_t		 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		p = fleet_status_patch("n1", 1, 1, NULL, NULL, 0,
		    cases[i].when);
		ts = json_object_get(json_object_get(json_object_get(
		    json_object_get(p, "status"), "nodes"), "n1"), "timestamp");
		if (cases[i].want == NULL)
			cr_assert_null(ts, "%lld", (long long)cases[i].when);
		else
			cr_assert_str_eq(json_string_value(ts), cases[i].want);
		json_decref(p);
	}
}

Test(fleet, status_clear)
{
	assert_json(fleet_status_clear("node-a"),
	    "{\"status\":{\"nodes\":{\"node-a\":null}}}");
	assert_json(fleet_status_clear("group.g"),
	    "{\"status\":{\"nodes\":{\"group.g\":null}}}");
}

/*
 * The values Go's CRD writes into every object for keys we ignore are
 * dropped silently; any other value of the same keys is warned about.
 */
Test(fleet, go_crd_defaults_are_silent)
{
	static const char *const none[] = { NULL };
	static const char *const all[] = {
		"agent", "controllableInterrupts", "instrumentation.metrics",
		"instrumentation.reportPeriod", NULL
	};
	struct converted	 c;

	convert("{\"agent\": {\"nodeResourceTopology\": true}, "
	    "\"controllableInterrupts\": [\"*\"], \"instrumentation\": "
	    "{\"metrics\": {\"enabled\": [\"policy\", \"buildinfo\"]}, "
	    "\"reportPeriod\": \"30s\"}}", &c);
	assert_warnings(&c, none);
	text_is(&c, "{\"instrumentation\": {}}");
	converted_free(&c);

	convert("{\"agent\": {\"nodeResourceTopology\": false}, "
	    "\"controllableInterrupts\": [\"eth*\"], \"instrumentation\": "
	    "{\"metrics\": {\"enabled\": [\"policy\"]}, "
	    "\"reportPeriod\": \"30m\"}}", &c);
	assert_warnings(&c, all);
	converted_free(&c);
}

/* The kept config: written, read back to the same bytes and identity. */
Test(fleet, kept_round_trip)
{
	char		*w[] = { "log.source" IGNORED };
	const char	*cfg = "{\"reservedResources\": {\"cpu\": \"cpuset:3\"}}";
	char		*doc, *text = NULL, *cause = NULL;
	size_t		 len = 0;
	json_t		*meta = NULL;

	doc = fleet_kept_doc("kube-system", "node.n1", "u-1", 4, "17",
	    1796205600, cfg, strlen(cfg), w, 1);
	cr_assert_eq(fleet_kept_parse(doc, strlen(doc), &text, &len, &meta,
	    &cause), 0, "%s", cause);
	cr_assert_eq(len, strlen(cfg));
	cr_assert_str_eq(text, cfg);
	cr_assert_str_eq(json_string_value(json_object_get(meta, "name")),
	    "node.n1");
	cr_assert_str_eq(json_string_value(json_object_get(meta, "uid")),
	    "u-1");
	cr_assert_eq(json_integer_value(json_object_get(meta, "generation")),
	    4);
	cr_assert_str_eq(json_string_value(json_object_get(meta,
	    "appliedAt")), "2026-12-02T10:00:00Z");
	cr_assert_null(json_object_get(meta, "config"));
	json_decref(meta);
	free(text);
	free(doc);
}

/* A damaged or foreign document is refused, and gives nothing. */
Test(fleet, kept_damaged)
{
	static const char *const bad[] = {
		"", "{", "[]", "{\"version\": 1}",
		"{\"version\": 2, \"namespace\": \"n\", \"name\": \"d\", "
		    "\"config\": \"{}\"}",
		"{\"version\": 1, \"namespace\": \"n\", \"name\": \"d\", "
		    "\"config\": {}}",
		"{\"version\": 1, \"namespace\": \"n\", \"config\": \"{}\"}",
		"{\"version\": 1, \"version\": 1, \"namespace\": \"n\", "
		    "\"name\": \"d\", \"config\": \"{}\"}",
	};
	char	*text, *cause;
	size_t	 i, len;
	json_t	*meta;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cause = NULL;
		cr_expect_eq(fleet_kept_parse(bad[i], strlen(bad[i]), &text,
		    &len, &meta, &cause), -EINVAL, "%s", bad[i]);
		cr_expect_null(text);
		cr_expect_null(meta);
		cr_expect_not_null(cause);
		free(cause);
	}
}
