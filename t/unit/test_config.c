/*
 * test_config.c: the configuration of SPEC R-CONF-1: the schema table and
 * the embedded defaults, every key's good values, bad input refused naming
 * the dotted path, TopologyAwarePolicy keys we do not implement, the dump
 * round trip, the reload check, topoawared.json(5) against the table, and
 * the CPU keys resolved on the recorded server (anchor §5.1, §10).
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cpuset.h"
#include "testlib.h"
#include "topology.h"
#include "xmalloc.h"

static struct config *
parse_ok(const char *doc)
{
	struct config	*cfg = NULL;
	char		*cause = NULL;
	int		 rc;

	rc = config_parse(doc, strlen(doc), &cfg, &cause);
	cr_assert_eq(rc, 0, "%s refused: %s", doc, cause ? cause : "?");
	cr_assert_not_null(cfg);
	cr_assert_null(cause);
	return (cfg);
}

/* Refused, and the cause holds every one of the NULL-terminated texts. */
static void
parse_bad(const char *doc, const char *want)
{
	struct config	*cfg = (struct config *)1;
	char		*cause = NULL;
	int		 rc;

	rc = config_parse(doc, strlen(doc), &cfg, &cause);
	cr_assert_eq(rc, -EINVAL, "%s accepted", doc);
	cr_assert_null(cfg, "a refused document yields no config");
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, want), "%s: cause \"%s\" does not "
	    "say \"%s\"", doc, cause, want);
	free(cause);
}

static void
parse_bad_prefix(const char *doc, const char *prefix)
{
	struct config	*cfg = NULL;
	char		*cause = NULL;

	cr_assert_eq(config_parse(doc, strlen(doc), &cfg, &cause), -EINVAL,
	    "%s accepted", doc);
	cr_assert_not_null(cause);
	cr_assert_eq(strncmp(cause, prefix, strlen(prefix)), 0, "%s: cause "
	    "\"%s\" does not start with \"%s\"", doc, cause, prefix);
	free(cause);
}

static const struct config_key *
schema_key(const char *path)
{
	const struct config_key	*keys;
	size_t			 n, i;

	keys = config_schema(&n);
	for (i = 0; i < n; i++)
		if (strcmp(keys[i].path, path) == 0)
			return (&keys[i]);
	return (NULL);
}

/* R-CONF-1 keys, their types and their embedded defaults. */
static const struct {
	const char		*path;
	enum config_type	 type;
	const char		*defval;
} spec_keys[] = {
	{ "reservedResources.cpu", CONFIG_CPU_RESOURCE, "\"750m\"" },
	{ "availableResources.cpu", CONFIG_CPU_RESOURCE, "\"\"" },
	{ "pinCPU", CONFIG_BOOL, "true" },
	{ "pinMemory", CONFIG_BOOL, "true" },
	{ "preferIsolatedCPUs", CONFIG_BOOL, "true" },
	{ "preferSharedCPUs", CONFIG_BOOL, "false" },
	{ "reservedPoolNamespaces", CONFIG_STRING_LIST, "[]" },
	{ "defaultCPUPriority", CONFIG_ENUM, "\"none\"" },
	{ "colocatePods", CONFIG_BOOL, "false" },
	{ "colocateNamespaces", CONFIG_BOOL, "false" },
	{ "unlimitedBurstable", CONFIG_ENUM, "\"package\"" },
	{ "dra.enabled", CONFIG_BOOL, "true" },
	{ "dra.driverName", CONFIG_STRING, "\"topology-aware.nri.io\"" },
	{ "nodeResourceTopology.enabled", CONFIG_BOOL, "true" },
	{ "nodeResourceTopology.refreshSeconds", CONFIG_INT, "60" },
	{ "log.level", CONFIG_ENUM, "\"info\"" },
	{ "instrumentation.httpEndpoint", CONFIG_STRING, "\"\"" },
	{ "instrumentation.prometheusExport", CONFIG_BOOL, "false" },
};
#define NSPEC_KEYS	(sizeof spec_keys / sizeof spec_keys[0])

Test(config, schema_holds_every_spec_key)
{
	const struct config_key	*keys, *k, *parent;
	size_t			 n, i, j, leaves = 0;
	char			*ppath;
	const char		*dot;

	for (i = 0; i < NSPEC_KEYS; i++) {
		k = schema_key(spec_keys[i].path);
		cr_assert_not_null(k, "%s missing", spec_keys[i].path);
		cr_assert_eq(k->type, spec_keys[i].type, "%s type", k->path);
		cr_assert_str_eq(k->defval, spec_keys[i].defval, "%s default",
		    k->path);
		cr_assert_not_null(k->help);
		cr_assert_gt(strlen(k->help), 10, "%s has help", k->path);
		/* dra.* needs a restart, everything else reloads. */
		cr_assert_eq(k->reload, strncmp(k->path, "dra.", 4) == 0 ?
		    CONFIG_RESTART : CONFIG_RELOADABLE, "%s reload", k->path);
	}
	keys = config_schema(&n);
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			cr_assert_str_neq(keys[i].path, keys[j].path);
		if ((dot = strrchr(keys[i].path, '.')) != NULL) {
			ppath = xstrndup(keys[i].path,
			    (size_t)(dot - keys[i].path));
			parent = schema_key(ppath);
			cr_assert_not_null(parent, "no object row %s", ppath);
			cr_assert_eq(parent->type, CONFIG_OBJECT);
			cr_assert_lt(parent, &keys[i], "%s after its key",
			    ppath);
			free(ppath);
		}
		if (keys[i].type != CONFIG_OBJECT)
			leaves++;
	}
	cr_assert_eq(leaves, NSPEC_KEYS, "the schema has %zu keys, R-CONF-1 "
	    "%zu", leaves, NSPEC_KEYS);
	k = schema_key("nodeResourceTopology.refreshSeconds");
	cr_assert_eq(k->min, 1);
	cr_assert_eq(k->max, 86400);
}

Test(config, embedded_defaults)
{
	struct config	*cfg = config_new();

	cr_assert_str_eq(cfg->reserved_cpu, "750m");
	cr_assert_null(cfg->available_cpu, "all online CPUs by default");
	cr_assert_eq(cfg->pin_cpu, 1);
	cr_assert_eq(cfg->pin_memory, 1);
	cr_assert_eq(cfg->prefer_isolated, 1);
	cr_assert_eq(cfg->prefer_shared, 0);
	cr_assert_eq(cfg->nreserved_ns, 0);
	cr_assert_eq(cfg->default_prio, CPU_PRIO_NONE);
	cr_assert_eq(cfg->colocate_pods, 0);
	cr_assert_eq(cfg->colocate_namespaces, 0);
	cr_assert_eq(cfg->unlimited_burstable, UB_PACKAGE);
	cr_assert_eq(cfg->dra_enabled, 1);
	cr_assert_str_eq(cfg->dra_driver_name, "topology-aware.nri.io");
	cr_assert_eq(cfg->nrt_enabled, 1);
	cr_assert_eq(cfg->nrt_refresh_seconds, 60);
	cr_assert_eq(cfg->log_level, LOG_LEVEL_INFO);
	config_free(cfg);
	config_free(NULL);
}

Test(config, empty_document_is_the_defaults)
{
	struct config	*a, *b;
	json_t		*da, *db;

	a = config_new();
	b = parse_ok("{}");
	da = config_dump(a);
	db = config_dump(b);
	cr_assert(json_equal(da, db));
	json_decref(da);
	json_decref(db);
	config_free(a);
	config_free(b);

	b = parse_ok("{\"reservedResources\": {}, \"availableResources\": {},"
	    " \"dra\": {}, \"nodeResourceTopology\": {}, \"log\": {}}");
	cr_assert_str_eq(b->reserved_cpu, "750m");
	config_free(b);
}

Test(config, every_key_good_values)
{
	struct config	*cfg;

	cfg = parse_ok("{\"reservedResources\": {\"cpu\": \"cpuset:3,11\"},"
	    " \"availableResources\": {\"cpu\": \"exclude-cpuset:100-111\"},"
	    " \"pinCPU\": false, \"pinMemory\": false,"
	    " \"preferIsolatedCPUs\": false, \"preferSharedCPUs\": true,"
	    " \"reservedPoolNamespaces\": [\"monitoring\", \"team-*\","
	    "  \"ns-[a-c]?\", \"[^x]*\", \"[!y]z\"],"
	    " \"defaultCPUPriority\": \"high\", \"colocatePods\": true,"
	    " \"colocateNamespaces\": true, \"unlimitedBurstable\": \"numa\","
	    " \"dra\": {\"enabled\": false,"
	    "  \"driverName\": \"cpu.example.com\"},"
	    " \"nodeResourceTopology\": {\"enabled\": false,"
	    "  \"refreshSeconds\": 86400},"
	    " \"log\": {\"level\": \"debug\"}}");
	cr_assert_str_eq(cfg->reserved_cpu, "cpuset:3,11");
	cr_assert_str_eq(cfg->available_cpu, "exclude-cpuset:100-111");
	cr_assert_eq(cfg->pin_cpu, 0);
	cr_assert_eq(cfg->pin_memory, 0);
	cr_assert_eq(cfg->prefer_isolated, 0);
	cr_assert_eq(cfg->prefer_shared, 1);
	cr_assert_eq(cfg->nreserved_ns, 5);
	cr_assert_str_eq(cfg->reserved_ns[0], "monitoring");
	cr_assert_str_eq(cfg->reserved_ns[1], "team-*");
	cr_assert_str_eq(cfg->reserved_ns[2], "ns-[a-c]?");
	cr_assert_str_eq(cfg->reserved_ns[3], "[^x]*");
	cr_assert_str_eq(cfg->reserved_ns[4], "[!y]z");
	cr_assert_eq(cfg->default_prio, CPU_PRIO_HIGH);
	cr_assert_eq(cfg->colocate_pods, 1);
	cr_assert_eq(cfg->colocate_namespaces, 1);
	cr_assert_eq(cfg->unlimited_burstable, UB_NUMA);
	cr_assert_eq(cfg->dra_enabled, 0);
	cr_assert_str_eq(cfg->dra_driver_name, "cpu.example.com");
	cr_assert_eq(cfg->nrt_enabled, 0);
	cr_assert_eq(cfg->nrt_refresh_seconds, 86400);
	cr_assert_eq(cfg->log_level, LOG_LEVEL_DEBUG);
	config_free(cfg);
}

static void
one_string(const char *key, const char *sub, const char *value)
{
	char	*doc;

	if (sub != NULL)
		xasprintf(&doc, "{\"%s\": {\"%s\": \"%s\"}}", key, sub, value);
	else
		xasprintf(&doc, "{\"%s\": \"%s\"}", key, value);
	config_free(parse_ok(doc));
	free(doc);
}

Test(config, enums_take_every_choice)
{
	static const char *const prios[] = { "high", "normal", "low", "none" };
	static const char *const ubs[] = { "system", "package", "die", "numa",
	    "l3cache" };
	static const char *const levels[] = { "error", "warn", "info",
	    "debug" };
	struct config	*cfg;
	char		*doc;
	size_t		 i;

	for (i = 0; i < 4; i++) {
		xasprintf(&doc, "{\"defaultCPUPriority\": \"%s\", "
		    "\"log\": {\"level\": \"%s\"}}", prios[i], levels[i]);
		cfg = parse_ok(doc);
		cr_assert_eq((int)cfg->default_prio, (int)(CPU_PRIO_HIGH + i));
		cr_assert_eq((int)cfg->log_level, (int)(LOG_LEVEL_ERROR + i));
		config_free(cfg);
		free(doc);
	}
	for (i = 0; i < 5; i++) {
		xasprintf(&doc, "{\"unlimitedBurstable\": \"%s\"}", ubs[i]);
		cfg = parse_ok(doc);
		cr_assert_eq((int)cfg->unlimited_burstable,
		    (int)(UB_SYSTEM + i));
		config_free(cfg);
		free(doc);
	}
}

Test(config, cpu_resources_good)
{
	struct config	*cfg;

	one_string("reservedResources", "cpu", "cpuset:0");
	one_string("reservedResources", "cpu", "cpuset:0-3,8");
	one_string("reservedResources", "cpu", "exclude-cpuset:0-3");
	one_string("reservedResources", "cpu", "exclude-cpuset:");
	one_string("reservedResources", "cpu", "2");
	one_string("reservedResources", "cpu", "1.5");
	one_string("reservedResources", "cpu", "2000m");
	one_string("reservedResources", "cpu", "1m");
	one_string("availableResources", "cpu", "cpuset:0-63");
	one_string("availableResources", "cpu", "exclude-cpuset:0-1");
	one_string("availableResources", "cpu", "exclude-cpuset:");

	/* Empty keeps the defaults: 750m and all online CPUs. */
	cfg = parse_ok("{\"reservedResources\": {\"cpu\": \"\"},"
	    " \"availableResources\": {\"cpu\": \"\"}}");
	cr_assert_str_eq(cfg->reserved_cpu, "750m");
	cr_assert_null(cfg->available_cpu);
	config_free(cfg);
}

Test(config, driver_names_good)
{
	char	name[64];

	one_string("dra", "driverName", "a");
	one_string("dra", "driverName", "x1-2.y");
	one_string("dra", "driverName", "a0.example.com");
	one_string("dra", "driverName", "dra.cpu");
	memset(name, 'a', 63);
	name[63] = '\0';
	name[20] = '.';
	one_string("dra", "driverName", name);
}

Test(config, namespaces_and_ints_good)
{
	struct config	*cfg;

	cfg = parse_ok("{\"reservedPoolNamespaces\": []}");
	cr_assert_eq(cfg->nreserved_ns, 0);
	config_free(cfg);
	cfg = parse_ok("{\"reservedPoolNamespaces\": [\"*\", \"?\", "
	    "\"kube-system\", \"a[0-9]\", \"[a-cx]-[!0-9ab]*\"]}");
	cr_assert_eq(cfg->nreserved_ns, 5);
	config_free(cfg);
	cfg = parse_ok("{\"nodeResourceTopology\": {\"refreshSeconds\": 1}}");
	cr_assert_eq(cfg->nrt_refresh_seconds, 1);
	config_free(cfg);
}

Test(config, unknown_keys_named)
{
	parse_bad("{\"nodeResourceTopology\": {\"refreshSecs\": 60}}",
	    "nodeResourceTopology.refreshSecs: unknown key");
	parse_bad("{\"pinCpu\": true}", "pinCpu: unknown key");
	parse_bad("{\"dra\": {\"driver\": \"x\"}}", "dra.driver: unknown key");
	parse_bad("{\"log\": {\"Level\": \"info\"}}", "log.Level: unknown key");
	parse_bad("{\"reservedResources\": {\"cpus\": \"1\"}}",
	    "reservedResources.cpus: unknown key");
	parse_bad("{\"apiVersion\": \"config.nri/v1alpha1\"}",
	    "apiVersion: unknown key");
	parse_bad("{\"\": 1}", ": unknown key");
	/* Keys are echoed tamed. */
	parse_bad("{\"a\\u0001b\": 1}", "a?b: unknown key");
	parse_bad("{\"pinCPU\": true, \"zzz\": {\"pinCPU\": true}}",
	    "zzz: unknown key");
}

/* instrumentation: httpEndpoint and prometheusExport are ours, the Go
 * policy's other instrumentation keys (tracing among them) are refused. */
Test(config, instrumentation_keys)
{
	static const char *const good[] = {
		":8891", "127.0.0.1:8891", "[::1]:8891", "[::]:1",
		"0.0.0.0:65535",
	};
	static const char *const bad[] = {
		"8891", ":0", ":65536", ":", "localhost:8891", "[::1]8891",
		"[]:80", "::1:8891", "1.2.3:80", ": 80", ":+80", ":080000",
		"[::1:80", "127.0.0.1:80x",
	};
	static const char *const refused[] = {
		"samplingRatePerMillion", "tracingCollector", "reportPeriod",
		"metricsExporter", "logExporter", "logExportPeriod", "metrics",
	};
	struct config	*cfg;
	char		*doc, *want, host[CONFIG_ENDPOINT_HOST_MAX];
	unsigned	 port;
	size_t		 i;

	cfg = config_new();
	cr_assert_str_eq(cfg->http_endpoint, "");
	cr_assert_eq(cfg->prometheus_export, 0);
	config_free(cfg);
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		xasprintf(&doc, "{\"instrumentation\": {\"httpEndpoint\": "
		    "\"%s\", \"prometheusExport\": true}}", good[i]);
		cfg = parse_ok(doc);
		cr_assert_str_eq(cfg->http_endpoint, good[i]);
		cr_assert_eq(cfg->prometheus_export, 1);
		config_free(cfg);
		free(doc);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		xasprintf(&doc, "{\"instrumentation\": {\"httpEndpoint\": "
		    "\"%s\"}}", bad[i]);
		parse_bad_prefix(doc, "instrumentation.httpEndpoint: \"");
		free(doc);
	}
	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		xasprintf(&doc, "{\"instrumentation\": {\"%s\": 1}}",
		    refused[i]);
		xasprintf(&want, "instrumentation.%s: not supported",
		    refused[i]);
		parse_bad_prefix(doc, want);
		free(doc);
		free(want);
	}
	parse_bad_prefix("{\"instrumentation\": []}",
	    "instrumentation: expected an object");
	cr_assert_eq(config_endpoint_parse("[::1]:8891", host, &port, NULL), 0);
	cr_assert_str_eq(host, "::1");
	cr_assert_eq(port, 8891);
	cr_assert_eq(config_endpoint_parse(":80", host, &port, NULL), 0);
	cr_assert_str_eq(host, "");
	cr_assert_eq(port, 80);
}

Test(config, unsupported_keys_named)
{
	static const char *const top[] = {
		"schedulingClasses", "namespaceSchedulingClasses",
		"podQoSSchedulingClasses", "cpuClasses", "sharedPoolCPUClass",
		"reservedPoolCPUClass", "defaultExclusiveCPUClass",
		"controllableInterrupts", "control", "agent",
	};
	const char *const	*list;
	char			*doc, *want;
	size_t			 i, n;

	for (i = 0; i < sizeof top / sizeof top[0]; i++) {
		xasprintf(&doc, "{\"%s\": []}", top[i]);
		xasprintf(&want, "%s: not supported", top[i]);
		parse_bad_prefix(doc, want);
		free(doc);
		free(want);
	}
	parse_bad_prefix("{\"reservedResources\": {\"memory\": \"1G\"}}",
	    "reservedResources.memory: not supported");
	parse_bad_prefix("{\"log\": {\"debug\": [\"*\"]}}",
	    "log.debug: not supported");

	/* The exported list is what the parser refuses, nothing less. */
	list = config_unsupported();
	for (n = 0; list[n] != NULL; n++) {
		cr_assert_null(schema_key(list[n]), "%s both", list[n]);
		if (strchr(list[n], '.') != NULL)
			continue;
		xasprintf(&doc, "{\"%s\": 1}", list[n]);
		xasprintf(&want, "%s: not supported", list[n]);
		parse_bad_prefix(doc, want);
		free(doc);
		free(want);
	}
	cr_assert_geq(n, sizeof top / sizeof top[0]);
}

Test(config, wrong_types_named)
{
	parse_bad("{\"pinCPU\": \"yes\"}",
	    "pinCPU: expected true or false, got a string");
	parse_bad("{\"pinMemory\": 1}", "pinMemory: expected true or false");
	parse_bad("{\"preferIsolatedCPUs\": null}",
	    "preferIsolatedCPUs: expected true or false, got null");
	parse_bad("{\"preferSharedCPUs\": []}", "preferSharedCPUs: expected");
	parse_bad("{\"colocatePods\": {}}", "colocatePods: expected");
	parse_bad("{\"colocateNamespaces\": 0}",
	    "colocateNamespaces: expected");
	parse_bad("{\"reservedPoolNamespaces\": \"kube-*\"}",
	    "reservedPoolNamespaces: expected a list of strings, got a string");
	parse_bad("{\"reservedPoolNamespaces\": [\"a\", 1]}",
	    "reservedPoolNamespaces[1]: expected a string, got an integer");
	parse_bad("{\"defaultCPUPriority\": 1}",
	    "defaultCPUPriority: expected a string, got an integer");
	parse_bad("{\"unlimitedBurstable\": true}",
	    "unlimitedBurstable: expected a string, got a boolean");
	parse_bad("{\"dra\": \"yes\"}",
	    "dra: expected an object, got a string");
	parse_bad("{\"dra\": {\"enabled\": \"true\"}}",
	    "dra.enabled: expected true or false, got a string");
	parse_bad("{\"dra\": {\"driverName\": 7}}",
	    "dra.driverName: expected a string, got an integer");
	parse_bad("{\"nodeResourceTopology\": []}",
	    "nodeResourceTopology: expected an object, got a list");
	parse_bad("{\"nodeResourceTopology\": {\"enabled\": 1}}",
	    "nodeResourceTopology.enabled: expected true or false");
	parse_bad("{\"nodeResourceTopology\": {\"refreshSeconds\": \"60\"}}",
	    "nodeResourceTopology.refreshSeconds: expected an integer "
	    "1..86400, got a string");
	parse_bad("{\"nodeResourceTopology\": {\"refreshSeconds\": 60.5}}",
	    "nodeResourceTopology.refreshSeconds: expected an integer "
	    "1..86400, got a real number");
	parse_bad("{\"log\": 3}", "log: expected an object, got an integer");
	parse_bad("{\"log\": {\"level\": null}}", "log.level: expected a "
	    "string, got null");
	parse_bad("{\"reservedResources\": \"750m\"}",
	    "reservedResources: expected an object, got a string");
	parse_bad("{\"reservedResources\": {\"cpu\": 2}}",
	    "reservedResources.cpu: expected a string, got an integer");
	parse_bad("{\"availableResources\": {\"cpu\": [0, 1]}}",
	    "availableResources.cpu: expected a string, got a list");
}

Test(config, bad_values_named)
{
	char	*doc, name[65];

	parse_bad("{\"nodeResourceTopology\": {\"refreshSeconds\": 0}}",
	    "nodeResourceTopology.refreshSeconds: 0 is out of range, expected "
	    "an integer 1..86400");
	parse_bad("{\"nodeResourceTopology\": {\"refreshSeconds\": 86401}}",
	    "nodeResourceTopology.refreshSeconds: 86401 is out of range");
	parse_bad("{\"nodeResourceTopology\": {\"refreshSeconds\": -1}}",
	    "nodeResourceTopology.refreshSeconds: -1 is out of range");
	parse_bad("{\"nodeResourceTopology\": {\"refreshSeconds\": "
	    "4294967356}}", "nodeResourceTopology.refreshSeconds: 4294967356");
	parse_bad("{\"defaultCPUPriority\": \"High\"}",
	    "defaultCPUPriority: \"High\" is not one of high|normal|low|none");
	parse_bad("{\"defaultCPUPriority\": \"\"}",
	    "defaultCPUPriority: \"\" is not one of");
	parse_bad("{\"unlimitedBurstable\": \"core\"}",
	    "unlimitedBurstable: \"core\" is not one of "
	    "system|package|die|numa|l3cache");
	parse_bad("{\"log\": {\"level\": \"trace\"}}",
	    "log.level: \"trace\" is not one of error|warn|info|debug");
	parse_bad("{\"log\": {\"level\": \"in\\nfo\"}}",
	    "log.level: \"in?fo\" is not one of");

	parse_bad("{\"reservedPoolNamespaces\": [\"ok\", \"Bad\"]}",
	    "reservedPoolNamespaces[1]: \"Bad\" is not a namespace glob");
	parse_bad("{\"reservedPoolNamespaces\": [\"\"]}",
	    "reservedPoolNamespaces[0]: \"\" is not a namespace glob");
	parse_bad("{\"reservedPoolNamespaces\": [\"[abc\"]}",
	    "reservedPoolNamespaces[0]: \"[abc\" is not");
	parse_bad("{\"reservedPoolNamespaces\": [\"[]\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"a/b\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"a b\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"kube.system\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"[a\"]}",
	    "reservedPoolNamespaces[0]: \"[a\" is not");
	parse_bad("{\"reservedPoolNamespaces\": [\"[^]\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"[-a]\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"[z-a]\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"x[a-]\"]}",
	    "reservedPoolNamespaces[0]");
	parse_bad("{\"reservedPoolNamespaces\": [\"a\\\\*\"]}",
	    "reservedPoolNamespaces[0]");

	parse_bad("{\"dra\": {\"driverName\": \"\"}}",
	    "dra.driverName: \"\" is not a DNS subdomain");
	parse_bad("{\"dra\": {\"driverName\": \"Topology.io\"}}",
	    "dra.driverName: \"Topology.io\" is not a DNS subdomain");
	parse_bad("{\"dra\": {\"driverName\": \"-a.io\"}}", "dra.driverName:");
	parse_bad("{\"dra\": {\"driverName\": \"a-.io\"}}", "dra.driverName:");
	parse_bad("{\"dra\": {\"driverName\": \"a.-b\"}}", "dra.driverName:");
	parse_bad("{\"dra\": {\"driverName\": \"a..b\"}}", "dra.driverName:");
	parse_bad("{\"dra\": {\"driverName\": \"a.\"}}", "dra.driverName:");
	parse_bad("{\"dra\": {\"driverName\": \".a\"}}", "dra.driverName:");
	parse_bad("{\"dra\": {\"driverName\": \"a_b.io\"}}", "dra.driverName:");
	/* CDI vendors start with a letter. */
	parse_bad("{\"dra\": {\"driverName\": \"0.example.com\"}}",
	    "dra.driverName: \"0.example.com\" is not a DNS subdomain");
	parse_bad("{\"dra\": {\"driverName\": \"a/b\"}}", "dra.driverName:");
	memset(name, 'a', 64);
	name[64] = '\0';
	name[20] = '.';
	xasprintf(&doc, "{\"dra\": {\"driverName\": \"%s\"}}", name);
	parse_bad(doc, "at most 63 characters");
	free(doc);
}

Test(config, bad_cpu_resources_named)
{
	parse_bad("{\"reservedResources\": {\"cpu\": \"two\"}}",
	    "reservedResources.cpu: expected cpuset:<list>, "
	    "exclude-cpuset:<list> or a CPU quantity: bad CPU quantity "
	    "\"two\"");
	parse_bad("{\"reservedResources\": {\"cpu\": \"-1\"}}",
	    "reservedResources.cpu: ");
	parse_bad("{\"reservedResources\": {\"cpu\": \"-1\"}}", "negative");
	parse_bad("{\"reservedResources\": {\"cpu\": \"0\"}}",
	    "reservedResources.cpu: \"0\" reserves no CPU");
	parse_bad("{\"reservedResources\": {\"cpu\": \"0m\"}}",
	    "reservedResources.cpu: \"0m\" reserves no CPU");
	parse_bad("{\"reservedResources\": {\"cpu\": \"cpuset:\"}}",
	    "reservedResources.cpu: \"cpuset:\" reserves no CPU");
	parse_bad("{\"reservedResources\": {\"cpu\": \"cpuset:1-\"}}",
	    "reservedResources.cpu: bad cpuset \"1-\"");
	parse_bad("{\"reservedResources\": {\"cpu\": \"cpuset:9000\"}}",
	    "reservedResources.cpu: ");
	parse_bad("{\"reservedResources\": {\"cpu\": \"exclude-cpuset:a\"}}",
	    "reservedResources.cpu: bad cpuset \"a\"");
	parse_bad("{\"reservedResources\": {\"cpu\": \"cpus:0\"}}",
	    "reservedResources.cpu: ");
	parse_bad("{\"reservedResources\": {\"cpu\": "
	    "\"99999999999999999999999\"}}", "too large");

	parse_bad("{\"availableResources\": {\"cpu\": \"4\"}}",
	    "availableResources.cpu: \"4\": expected cpuset:<list> or "
	    "exclude-cpuset:<list> (a quantity cannot bound");
	parse_bad("{\"availableResources\": {\"cpu\": \"750m\"}}",
	    "availableResources.cpu: \"750m\"");
	parse_bad("{\"availableResources\": {\"cpu\": \"all\"}}",
	    "availableResources.cpu: \"all\": expected cpuset:<list> or "
	    "exclude-cpuset:<list>");
	parse_bad("{\"availableResources\": {\"cpu\": \"cpuset:\"}}",
	    "availableResources.cpu: \"cpuset:\" leaves no CPU");
	parse_bad("{\"availableResources\": {\"cpu\": \"cpuset:x\"}}",
	    "availableResources.cpu: bad cpuset \"x\"");
	parse_bad("{\"availableResources\": {\"cpu\": \"exclude-cpuset:3-1\"}}",
	    "availableResources.cpu: bad cpuset \"3-1\"");
}

Test(config, bad_documents)
{
	parse_bad("[]", "the configuration must be a JSON object, not a list");
	parse_bad("42", "must be a JSON object");
	parse_bad("\"x\"", "must be a JSON object");
	parse_bad("null", "must be a JSON object");
	/* jansson's own errors carry the line and the column. */
	parse_bad("{\n  \"pinCPU\": tru\n}", "line 2, column ");
	parse_bad("{\n\n\n  \"pinCPU\": true,\n}", "line 5, column ");
	parse_bad("", "line 1, column 0");
	parse_bad("{", "line 1");
	parse_bad("{} {}", "line 1, column ");
	parse_bad("{\"pinCPU\": true, \"pinCPU\": false}", "duplicate");
	parse_bad("{\"dra\": {\"driverName\": \"a\\u0000b\"}}", "line 1");
}

Test(config, from_json)
{
	struct config	*cfg = NULL;
	json_t		*doc;
	char		*cause = NULL;

	doc = json_pack("{s:b, s:{s:i}}", "pinCPU", 0, "nodeResourceTopology",
	    "refreshSeconds", 5);
	cr_assert_eq(config_from_json(doc, &cfg, &cause), 0, "%s", cause);
	cr_assert_eq(cfg->pin_cpu, 0);
	cr_assert_eq(cfg->nrt_refresh_seconds, 5);
	config_free(cfg);
	json_decref(doc);

	doc = json_array();
	cr_assert_eq(config_from_json(doc, &cfg, &cause), -EINVAL);
	cr_assert_null(cfg);
	cr_assert_not_null(strstr(cause, "must be a JSON object"));
	free(cause);
	json_decref(doc);
}

/* dump → text → parse gives an equal dump, and the dump holds every key. */
static void
round_trip(const struct config *cfg)
{
	const struct config_key	*keys;
	struct config		*again;
	json_t			*d1, *d2, *v;
	char			*text, *path, *p, *dot;
	size_t			 n, i;

	d1 = config_dump(cfg);
	keys = config_schema(&n);
	for (i = 0; i < n; i++) {
		path = xstrdup(keys[i].path);
		v = d1;
		for (p = path; v != NULL && p != NULL; p = dot) {
			if ((dot = strchr(p, '.')) != NULL)
				*dot++ = '\0';
			v = json_object_get(v, p);
		}
		cr_assert_not_null(v, "dump lacks %s", keys[i].path);
		cr_assert_eq(json_is_object(v), keys[i].type == CONFIG_OBJECT,
		    "%s", keys[i].path);
		free(path);
	}
	text = json_dumps(d1, JSON_INDENT(2));
	again = parse_ok(text);
	d2 = config_dump(again);
	cr_assert(json_equal(d1, d2), "dump of %s differs", text);
	free(text);
	json_decref(d1);
	json_decref(d2);
	config_free(again);
}

Test(config, dump_round_trip)
{
	struct config	*cfg;
	json_t		*d;

	cfg = config_new();
	round_trip(cfg);
	d = config_dump(cfg);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d,
	    "reservedResources"), "cpu")), "750m");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d,
	    "availableResources"), "cpu")), "");
	cr_assert(json_is_true(json_object_get(d, "pinCPU")));
	cr_assert_str_eq(json_string_value(json_object_get(d,
	    "unlimitedBurstable")), "package");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(d,
	    "nodeResourceTopology"), "refreshSeconds")), 60);
	json_decref(d);
	config_free(cfg);

	cfg = parse_ok("{\"reservedResources\": {\"cpu\": \"cpuset:3,11\"},"
	    " \"availableResources\": {\"cpu\": \"exclude-cpuset:100-111\"},"
	    " \"pinCPU\": false, \"reservedPoolNamespaces\": [\"a*\", \"b\"],"
	    " \"defaultCPUPriority\": \"low\", \"unlimitedBurstable\": \"die\","
	    " \"dra\": {\"enabled\": false, \"driverName\": \"x.y\"},"
	    " \"nodeResourceTopology\": {\"refreshSeconds\": 7},"
	    " \"log\": {\"level\": \"warn\"}}");
	round_trip(cfg);
	d = config_dump(cfg);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d,
	    "dra"), "driverName")), "x.y");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(d,
	    "reservedPoolNamespaces"), 1)), "b");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d,
	    "log"), "level")), "warn");
	json_decref(d);
	config_free(cfg);
}

Test(config, dup_is_deep)
{
	struct config	*a, *b;
	json_t		*da, *db;

	a = parse_ok("{\"reservedPoolNamespaces\": [\"a*\", \"b\"],"
	    " \"availableResources\": {\"cpu\": \"cpuset:0-7\"}}");
	b = config_dup(a);
	da = config_dump(a);
	db = config_dump(b);
	cr_assert(json_equal(da, db));
	cr_assert_neq(a->reserved_ns, b->reserved_ns);
	cr_assert_neq(a->reserved_ns[0], b->reserved_ns[0]);
	cr_assert_neq(a->dra_driver_name, b->dra_driver_name);
	cr_assert_neq(a->available_cpu, b->available_cpu);
	config_free(a);
	/* b survives a. */
	json_decref(db);
	db = config_dump(b);
	cr_assert(json_equal(da, db));
	json_decref(da);
	json_decref(db);
	config_free(b);
}

static void
reload(const char *olddoc, const char *newdoc, const char *want)
{
	struct config	*a, *b;
	char		*cause = NULL;
	int		 rc;

	a = parse_ok(olddoc);
	b = parse_ok(newdoc);
	rc = config_check_reload(a, b, &cause);
	if (want == NULL)
		cr_assert_eq(rc, 0, "%s -> %s refused: %s", olddoc, newdoc,
		    cause);
	else {
		cr_assert_eq(rc, -EINVAL, "%s -> %s accepted", olddoc, newdoc);
		cr_assert_str_eq(cause, want);
		free(cause);
	}
	config_free(a);
	config_free(b);
}

Test(config, check_reload)
{
	reload("{}", "{}", NULL);
	reload("{}", "{\"pinCPU\": false, \"reservedResources\": {\"cpu\": "
	    "\"2\"}, \"log\": {\"level\": \"debug\"}, \"nodeResourceTopology\":"
	    " {\"enabled\": false, \"refreshSeconds\": 5}, "
	    "\"reservedPoolNamespaces\": [\"x\"]}", NULL);
	reload("{}", "{\"dra\": {\"driverName\": \"other.io\"}}",
	    "dra.driverName: changing it needs a restart");
	reload("{}", "{\"dra\": {\"enabled\": false}}",
	    "dra.enabled: changing it needs a restart");
	/* Saying the default out loud is no change. */
	reload("{}", "{\"dra\": {\"enabled\": true, \"driverName\": "
	    "\"topology-aware.nri.io\"}}", NULL);
}

/*
 * topoawared.json(5) documents every key of the table as ".TP", ".B path",
 * then Type, Default, Range and Reload lines and the help text.
 */
Test(config, man_page_matches_schema)
{
	const struct config_key	*keys;
	const char		*src;
	char			*path, *text, *want, *entry, *range, *p, *q;
	char			*end;
	FILE			*f;
	long			 len;
	size_t			 n, i, elen;

	src = getenv("TOPOAWARE_SRCDIR");
	cr_assert_not_null(src, "run through make check");
	xasprintf(&path, "%s/man/topoawared.json.5", src);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	text = xcalloc(1, (size_t)len + 1);
	cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	free(path);

	keys = config_schema(&n);
	for (i = 0; i < n; i++) {
		xasprintf(&want, ".TP\n.B %s\n", keys[i].path);
		p = strstr(text, want);
		cr_assert_not_null(p, "no entry for %s", keys[i].path);
		p += strlen(want);
		cr_assert_null(strstr(p, want), "two entries for %s",
		    keys[i].path);
		free(want);
		/* The entry ends at the next entry or section. */
		end = p + strlen(p);
		if ((q = strstr(p, "\n.TP\n")) != NULL && q < end)
			end = q;
		if ((q = strstr(p, "\n.SH")) != NULL && q < end)
			end = q;
		elen = (size_t)(end - p) + 1;
		entry = xstrndup(p, elen);

		range = config_key_range(&keys[i]);
		xasprintf(&want, "Type: %s\n.br\nDefault: %s\n.br\n"
		    "Range: %s\n.br\nReload: %s\n.br\n%s\n",
		    config_type_name(keys[i].type), keys[i].defval, range,
		    keys[i].reload == CONFIG_RESTART ? "restart" : "reloadable",
		    keys[i].help);
		cr_assert_str_eq(entry, want, "entry of %s", keys[i].path);
		free(want);
		free(range);
		free(entry);
	}
	free(text);
}

/* Resolving against the recorded server (anchor §10): 112 CPUs, even ones
 * in package 0, siblings n and n+56, isolated 4-7,60-63. */

struct resolved {
	struct cpuset	 allowed;
	struct cpuset	 reserved;
	char		*cause;
	int		 rc;
};

static struct topology	*server;

static void
server_setup(void)
{
	server = testlib_machine("server");
}

static void
server_teardown(void)
{
	topology_free(server);
}

static void
resolve(const char *doc, struct resolved *r)
{
	struct config	*cfg = parse_ok(doc);

	cpuset_init(&r->allowed);
	cpuset_init(&r->reserved);
	r->cause = NULL;
	r->rc = config_resolve_cpus(cfg, server, &r->allowed, &r->reserved,
	    &r->cause);
	config_free(cfg);
}

static void
resolved_clear(struct resolved *r)
{
	cpuset_clear(&r->allowed);
	cpuset_clear(&r->reserved);
	free(r->cause);
}

static void
resolve_ok(const char *doc, const char *allowed, const char *reserved)
{
	struct resolved	r;

	resolve(doc, &r);
	cr_assert_eq(r.rc, 0, "%s: %s", doc, r.cause ? r.cause : "?");
	if (allowed != NULL)
		testlib_assert_set(&r.allowed, allowed);
	testlib_assert_set(&r.reserved, reserved);
	resolved_clear(&r);
}

static void
resolve_bad(const char *doc, const char *want)
{
	struct resolved	r;

	resolve(doc, &r);
	cr_assert_eq(r.rc, -EINVAL, "%s resolved", doc);
	cr_assert_not_null(r.cause);
	cr_assert_not_null(strstr(r.cause, want), "%s: cause \"%s\" does not "
	    "say \"%s\"", doc, r.cause, want);
	cr_assert(cpuset_empty(&r.allowed) && cpuset_empty(&r.reserved),
	    "a failed resolve leaves the sets empty");
	resolved_clear(&r);
}

TestSuite(resolve, .init = server_setup, .fini = server_teardown);

Test(resolve, server_facts)
{
	testlib_assert_set(topology_online(server), "0-111");
	testlib_assert_set(topology_isolated(server), "4-7,60-63");
}

Test(resolve, cpusets)
{
	resolve_ok("{\"reservedResources\": {\"cpu\": \"cpuset:3,11\"}}",
	    "0-111", "3,11");
	resolve_ok("{\"availableResources\": {\"cpu\": \"cpuset:0-3,8-11\"},"
	    " \"reservedResources\": {\"cpu\": \"exclude-cpuset:0-3,9-11\"}}",
	    "0-3,8-11", "8");
	resolve_ok("{\"availableResources\": {\"cpu\": "
	    "\"exclude-cpuset:100-111\"}, \"reservedResources\": {\"cpu\": "
	    "\"cpuset:99\"}}", "0-99", "99");
	/* Offline or absent CPUs drop out of the available set. */
	resolve_ok("{\"availableResources\": {\"cpu\": \"cpuset:100-200\"},"
	    " \"reservedResources\": {\"cpu\": \"cpuset:100\"}}", "100-111",
	    "100");
}

/* Anchor §3.7 derived vector: reserving 750m on the server picks CPU 0. */
Test(resolve, quantity_750m_picks_cpu_0)
{
	resolve_ok("{}", "0-111", "0");
	resolve_ok("{\"reservedResources\": {\"cpu\": \"750m\"}}", "0-111",
	    "0");
	resolve_ok("{\"reservedResources\": {\"cpu\": \"1m\"}}", NULL, "0");
}

/* Two CPUs from an idle machine are the two threads of one core
 * (R-ALLOC-1); on the server the lowest core is 0 with its sibling 56. */
Test(resolve, quantity_2_is_one_core)
{
	const struct topo_cpu	*cpu;
	const struct topo_core	*core;
	struct resolved		 r;

	resolve("{\"reservedResources\": {\"cpu\": \"2\"}}", &r);
	cr_assert_eq(r.rc, 0, "%s", r.cause ? r.cause : "?");
	cr_assert_eq(cpuset_count(&r.reserved), 2);
	cpu = topology_cpu(server, cpuset_first(&r.reserved));
	cr_assert_not_null(cpu);
	core = topology_core(server, cpu->core);
	cr_assert(cpuset_equal(&core->threads, &r.reserved),
	    "two threads of one core");
	testlib_assert_set(&r.reserved, "0,56");
	resolved_clear(&r);

	/* 1.5 CPUs round up to a whole core too. */
	resolve_ok("{\"reservedResources\": {\"cpu\": \"1.5\"}}", NULL, "0,56");
}

Test(resolve, quantity_avoids_isolated)
{
	struct resolved	r;

	/* 112 online less 8 isolated: 104 CPUs can be reserved by amount. */
	resolve("{\"reservedResources\": {\"cpu\": \"104\"}}", &r);
	cr_assert_eq(r.rc, 0, "%s", r.cause ? r.cause : "?");
	cr_assert_eq(cpuset_count(&r.reserved), 104);
	cr_assert_not(cpuset_intersects(&r.reserved,
	    topology_isolated(server)));
	resolved_clear(&r);

	resolve_bad("{\"reservedResources\": {\"cpu\": \"105\"}}",
	    "reservedResources.cpu: \"105\" needs 105 CPUs, only 104 "
	    "available CPUs are not isolated");
	resolve_bad("{\"reservedResources\": {\"cpu\": \"104001m\"}}",
	    "needs 105 CPUs");
	resolve_bad("{\"availableResources\": {\"cpu\": \"cpuset:4-7,8\"},"
	    " \"reservedResources\": {\"cpu\": \"2\"}}",
	    "needs 2 CPUs, only 1 available CPUs are not isolated (8)");
	resolve_bad("{\"reservedResources\": {\"cpu\": "
	    "\"9223372036854775807m\"}}", "reservedResources.cpu: ");
}

Test(resolve, reserved_outside_available)
{
	resolve_bad("{\"availableResources\": {\"cpu\": \"cpuset:0-3\"},"
	    " \"reservedResources\": {\"cpu\": \"cpuset:3,11\"}}",
	    "reservedResources.cpu: CPUs 11 are not among the online available "
	    "CPUs 0-3");
	resolve_bad("{\"reservedResources\": {\"cpu\": \"cpuset:110-120\"}}",
	    "CPUs 112-120 are not among");
	resolve_bad("{\"availableResources\": {\"cpu\": \"cpuset:0-3\"},"
	    " \"reservedResources\": {\"cpu\": \"exclude-cpuset:0-3\"}}",
	    "reservedResources.cpu: \"exclude-cpuset:0-3\" reserves no CPU");
}

Test(resolve, isolated_only_alone)
{
	resolve_ok("{\"reservedResources\": {\"cpu\": \"cpuset:4\"}}",
	    "0-111", "4");
	resolve_bad("{\"reservedResources\": {\"cpu\": \"cpuset:4,5,0\"}}",
	    "reservedResources.cpu: isolated CPUs 4-5 may only be reserved as "
	    "the sole reserved CPU, not within 0,4-5");
	resolve_bad("{\"reservedResources\": {\"cpu\": \"cpuset:0,60\"}}",
	    "isolated CPUs 60 ");
	resolve_bad("{\"reservedResources\": {\"cpu\": "
	    "\"exclude-cpuset:8-111\"}}", "isolated CPUs 4-7");
}

Test(resolve, available_leaving_nothing)
{
	resolve_bad("{\"availableResources\": {\"cpu\": \"cpuset:200-210\"}}",
	    "availableResources.cpu: \"cpuset:200-210\" leaves no online CPU "
	    "(online: 0-111)");
	resolve_bad("{\"availableResources\": {\"cpu\": "
	    "\"exclude-cpuset:0-111\"}}", "availableResources.cpu: ");
}
