/*
 * config.c owns the configuration document (SPEC R-CONF-1): the schema
 * table below is the only list of keys, and the defaults, the parser, the
 * dump, the copy, the reload check and topoawared.json(5) all follow it.
 * It also resolves the two CPU keys against a machine. No I/O here: the
 * daemon reads the file and hands over its bytes.
 */
#include "autoconf.h"

#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cpualloc.h"
#include "quantity.h"
#include "xmalloc.h"

/* Bad values and keys are echoed in causes cut to this many bytes. */
#define CONFIG_QUOTE_MAX	64

/* Kubernetes' DriverNameMaxLength: longer names fail in ResourceSlices. */
#define CONFIG_DRIVER_NAME_MAX	63

#define CONFIG_PREFIX_CPUSET	"cpuset:"
#define CONFIG_PREFIX_EXCLUDE	"exclude-cpuset:"

/* Enum-typed fields are stored through int pointers. */
_Static_assert(sizeof(enum cpu_prio) == sizeof(int), "enum size");
_Static_assert(sizeof(enum unlimited_burstable) == sizeof(int), "enum size");
_Static_assert(sizeof(enum log_level) == sizeof(int), "enum size");

static int	config_check_reserved_cpu(const char *, char **);
static int	config_check_available_cpu(const char *, char **);
static int	config_check_glob(const char *, char **);
static int	config_check_driver_name(const char *, char **);
static int	config_check_endpoint(const char *, char **);

/* In the order of enum cpu_prio, unlimited_burstable and log_level. */
static const char *const config_prio_names[] = {
	"high", "normal", "low", "none", NULL
};
static const char *const config_ub_names[] = {
	"system", "package", "die", "numa", "l3cache", NULL
};
static const char *const config_log_names[] = {
	"error", "warn", "info", "debug", NULL
};

#define OFF(f)	offsetof(struct config, f)

static const struct config_key config_keys[] = {
	{ "reservedResources", CONFIG_OBJECT, "{}", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Resources set aside for kube-system and the reservedPoolNamespaces.",
	  "an object with the key cpu", 0, 0, NULL },
	{ "reservedResources.cpu", CONFIG_CPU_RESOURCE, "\"750m\"", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "The CPUs of the reserved pool: cpuset:<list> names them, "
	  "exclude-cpuset:<list> takes every available CPU but those, and an "
	  "amount such as 750m or 2 is rounded up to whole CPUs that the CPU "
	  "allocator picks among the available CPUs that are not isolated. "
	  "Reserved CPUs must be online and available; an isolated CPU may "
	  "only be reserved alone. Empty means the default.",
	  "cpuset:<list>, exclude-cpuset:<list> or a CPU quantity",
	  OFF(reserved_cpu), 0, config_check_reserved_cpu },
	{ "availableResources", CONFIG_OBJECT, "{}", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Bounds what the daemon may hand out.",
	  "an object with the key cpu", 0, 0, NULL },
	{ "availableResources.cpu", CONFIG_CPU_RESOURCE, "\"\"", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "The CPUs the daemon manages, always limited to online CPUs. Empty "
	  "means all online CPUs. A quantity is refused here.",
	  "cpuset:<list> or exclude-cpuset:<list>",
	  OFF(available_cpu), 0, config_check_available_cpu },
	{ "pinCPU", CONFIG_BOOL, "true", 0, 0, NULL, CONFIG_RELOADABLE,
	  "Set the cpuset and CPU shares of containers.",
	  NULL, OFF(pin_cpu), 0, NULL },
	{ "pinMemory", CONFIG_BOOL, "true", 0, 0, NULL, CONFIG_RELOADABLE,
	  "Set the memory nodes of containers to what their pool offers "
	  "their memory types (the memory-type annotation's, else every "
	  "type but HBM): the pool's nodes of those types and the nearest "
	  "nodes of a type it lacks.",
	  NULL, OFF(pin_memory), 0, NULL },
	{ "preferIsolatedCPUs", CONFIG_BOOL, "true", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Give kernel-isolated CPUs to Guaranteed containers asking for at "
	  "least 1 and less than 2 CPUs.",
	  NULL, OFF(prefer_isolated), 0, NULL },
	{ "preferSharedCPUs", CONFIG_BOOL, "false", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Run Guaranteed containers on shared CPUs unless annotated to get "
	  "exclusive ones.",
	  NULL, OFF(prefer_shared), 0, NULL },
	{ "reservedPoolNamespaces", CONFIG_STRING_LIST, "[]", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Namespaces whose containers run on the reserved CPUs like those of "
	  "kube-system. Globs: * any run, ? one character, [a-z] or [^a-z] a "
	  "class.",
	  "list of namespace globs (lowercase letters, digits, -, *, ?, [])",
	  OFF(reserved_ns), OFF(nreserved_ns), config_check_glob },
	{ "defaultCPUPriority", CONFIG_ENUM, "\"none\"", 0, 0,
	  config_prio_names, CONFIG_RELOADABLE,
	  "The CPU priority preferred for exclusive CPUs of containers that "
	  "are not annotated otherwise; none means no preference.",
	  NULL, OFF(default_prio), 0, NULL },
	{ "colocatePods", CONFIG_BOOL, "false", 0, 0, NULL, CONFIG_RELOADABLE,
	  "Try to place the containers of a pod in the same pool.",
	  NULL, OFF(colocate_pods), 0, NULL },
	{ "colocateNamespaces", CONFIG_BOOL, "false", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Try to place the containers of a namespace in the same pool.",
	  NULL, OFF(colocate_namespaces), 0, NULL },
	{ "unlimitedBurstable", CONFIG_ENUM, "\"package\"", 0, 0,
	  config_ub_names, CONFIG_RELOADABLE,
	  "The topology level of the pool for Burstable containers without a "
	  "CPU limit; a level the machine lacks falls back to the nearest "
	  "existing one.",
	  NULL, OFF(unlimited_burstable), 0, NULL },
	{ "dra", CONFIG_OBJECT, "{}", 0, 0, NULL, CONFIG_RESTART,
	  "The kubelet DRA plugin handing out CPUs as resource claims.",
	  "an object with the keys enabled and driverName", 0, 0, NULL },
	{ "dra.enabled", CONFIG_BOOL, "true", 0, 0, NULL, CONFIG_RESTART,
	  "Register with the kubelet as a DRA driver and publish the "
	  "ResourceSlice of the node.",
	  NULL, OFF(dra_enabled), 0, NULL },
	{ "dra.driverName", CONFIG_STRING, "\"topology-aware.nri.io\"", 0, 0,
	  NULL, CONFIG_RESTART,
	  "The DRA driver name of DeviceClasses and ResourceSlices; it also "
	  "names the kubelet plugin sockets.",
	  "a DNS subdomain of at most 63 characters, starting with a letter",
	  OFF(dra_driver_name), 0, config_check_driver_name },
	{ "nodeResourceTopology", CONFIG_OBJECT, "{}", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "The NodeResourceTopology object of the node.",
	  "an object with the keys enabled and refreshSeconds", 0, 0, NULL },
	{ "nodeResourceTopology.enabled", CONFIG_BOOL, "true", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Publish and keep current the NodeResourceTopology object.",
	  NULL, OFF(nrt_enabled), 0, NULL },
	{ "nodeResourceTopology.refreshSeconds", CONFIG_INT, "60", 1, 86400,
	  NULL, CONFIG_RELOADABLE,
	  "Seconds between periodic refreshes of the NodeResourceTopology "
	  "object, each of which reads it back and puts right what others "
	  "changed; changes are published sooner, without reading it first.",
	  NULL, OFF(nrt_refresh_seconds), 0, NULL },
	{ "log", CONFIG_OBJECT, "{}", 0, 0, NULL, CONFIG_RELOADABLE,
	  "Logging.",
	  "an object with the key level", 0, 0, NULL },
	{ "log.level", CONFIG_ENUM, "\"info\"", 0, 0, config_log_names,
	  CONFIG_RELOADABLE,
	  "The least severe messages logged.",
	  NULL, OFF(log_level), 0, NULL },
	{ "instrumentation", CONFIG_OBJECT, "{}", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "The HTTP endpoint for health checks and Prometheus metrics.",
	  "an object with the keys httpEndpoint and prometheusExport",
	  0, 0, NULL },
	{ "instrumentation.httpEndpoint", CONFIG_STRING, "\"\"", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "The address the HTTP endpoint listens on, such as :8891 (every "
	  "address) or 127.0.0.1:8891; it serves /healthz and /readyz, and "
	  "/metrics with prometheusExport. Empty means no endpoint. A reload "
	  "that changes it listens on the new address first and is refused "
	  "whole when it cannot.",
	  "empty, or [host]:port with an IPv4 or a bracketed IPv6 literal "
	  "host (none for every address) and a port 1..65535",
	  OFF(http_endpoint), 0, config_check_endpoint },
	{ "instrumentation.prometheusExport", CONFIG_BOOL, "false", 0, 0, NULL,
	  CONFIG_RELOADABLE,
	  "Serve the metrics in the Prometheus text format at /metrics of "
	  "the HTTP endpoint.",
	  NULL, OFF(prometheus_export), 0, NULL },
};

#define CONFIG_NKEYS	(sizeof config_keys / sizeof config_keys[0])

/*
 * TopologyAwarePolicy keys we refuse by name rather than as unknown: the
 * policy's scheduling, CPU class and IRQ features, the common parts of the
 * custom resource we replace by our own keys, and memory constraints.
 * Every key of Go's spec is here or in config_keys: from a file these are
 * refused, from the cluster fleet_spec_config drops them with a warning,
 * since there Go's CRD defaults write some into every object.
 */
static const char *const config_unsupported_keys[] = {
	"schedulingClasses",
	"namespaceSchedulingClasses",
	"podQoSSchedulingClasses",
	"cpuClasses",
	"sharedPoolCPUClass",
	"reservedPoolCPUClass",
	"defaultExclusiveCPUClass",
	"controllableInterrupts",
	"control",
	"instrumentation.samplingRatePerMillion",
	"instrumentation.tracingCollector",
	"instrumentation.metricsExporter",
	"instrumentation.reportPeriod",
	"instrumentation.logExporter",
	"instrumentation.logExportPeriod",
	"instrumentation.metrics",
	"agent",
	"reservedResources.memory",
	"availableResources.memory",
	"log.debug",
	"log.source",
	"log.klog",
	NULL
};

#define CONFIG_VAL(cfg, key, type) \
	((type *)(void *)((char *)(cfg) + (key)->off))
#define CONFIG_CVAL(cfg, key, type) \
	((type const *)(const void *)((const char *)(cfg) + (key)->off))
#define CONFIG_COUNT(cfg, key) \
	((size_t *)(void *)((char *)(cfg) + (key)->count_off))
#define CONFIG_CCOUNT(cfg, key) \
	((const size_t *)(const void *)((const char *)(cfg) + (key)->count_off))

const struct config_key *
config_schema(size_t *n)
{
	*n = CONFIG_NKEYS;
	return (config_keys);
}

const char *const *
config_unsupported(void)
{
	return (config_unsupported_keys);
}

const char *
config_prio_name(enum cpu_prio p)
{
	return ((unsigned)p <= CPU_PRIO_NONE ? config_prio_names[p] : "none");
}

const char *
config_type_name(enum config_type type)
{
	switch (type) {
	case CONFIG_BOOL:
		return ("boolean");
	case CONFIG_INT:
		return ("integer");
	case CONFIG_STRING:
	case CONFIG_ENUM:
	case CONFIG_CPU_RESOURCE:
		return ("string");
	case CONFIG_STRING_LIST:
		return ("list of strings");
	case CONFIG_OBJECT:
		return ("object");
	}
	return ("?");
}

char *
config_key_range(const struct config_key *key)
{
	char	*s, *t;
	size_t	 i;

	switch (key->type) {
	case CONFIG_BOOL:
		return (xstrdup("true|false"));
	case CONFIG_INT:
		xasprintf(&s, "%ld..%ld", key->min, key->max);
		return (s);
	case CONFIG_ENUM:
		s = xstrdup(key->choices[0]);
		for (i = 1; key->choices[i] != NULL; i++) {
			xasprintf(&t, "%s|%s", s, key->choices[i]);
			free(s);
			s = t;
		}
		return (s);
	default:
		return (xstrdup(key->syntax != NULL ? key->syntax : ""));
	}
}

/* A copy of untrusted text fit for a cause: printable, cut, quoted. */
static char *
config_quote(const char *text)
{
	char	*s;
	size_t	 i, len;

	len = strlen(text);
	xasprintf(&s, "\"%.*s%s\"", CONFIG_QUOTE_MAX, text,
	    len > CONFIG_QUOTE_MAX ? "..." : "");
	for (i = 1; s[i + 1] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ||
		    s[i] == '"' || s[i] == '\\')
			s[i] = '?';
	return (s);
}

/* The dotted path of a key of the document, made printable. */
static char *
config_path(const char *prefix, const char *key)
{
	char	*path, *k;
	size_t	 i;

	k = xstrndup(key, CONFIG_QUOTE_MAX);
	for (i = 0; k[i] != '\0'; i++)
		if ((unsigned char)k[i] < 0x20 || (unsigned char)k[i] >= 0x7f)
			k[i] = '?';
	if (prefix == NULL)
		return (k);
	xasprintf(&path, "%s.%s", prefix, k);
	free(k);
	return (path);
}

static const char *
config_json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return ("an object");
	case JSON_ARRAY:
		return ("a list");
	case JSON_STRING:
		return ("a string");
	case JSON_INTEGER:
		return ("an integer");
	case JSON_REAL:
		return ("a real number");
	case JSON_TRUE:
	case JSON_FALSE:
		return ("a boolean");
	case JSON_NULL:
		return ("null");
	}
	return ("?");
}

static const struct config_key *
config_find(const char *path)
{
	size_t	i;

	for (i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(config_keys[i].path, path) == 0)
			return (&config_keys[i]);
	return (NULL);
}

static int
config_is_unsupported(const char *path)
{
	size_t	i;

	for (i = 0; config_unsupported_keys[i] != NULL; i++)
		if (strcmp(config_unsupported_keys[i], path) == 0)
			return (1);
	return (0);
}

/* The text after a prefix, or NULL when s does not start with it. */
static const char *
config_after(const char *s, const char *prefix)
{
	size_t	len = strlen(prefix);

	return (strncmp(s, prefix, len) == 0 ? s + len : NULL);
}

/*
 * The syntax of the CPU keys: a cpuset:/exclude-cpuset: list or, where
 * allowed, a quantity. What they mean needs the machine (see
 * config_resolve_cpus); what can be refused without it is refused here.
 */
static int
config_check_cpu(const char *s, int reserved, char **why)
{
	struct cpuset	 set = CPUSET_INITIALIZER;
	const char	*list;
	long long	 milli;
	char		*cause = NULL, *q = NULL, *fixed, *p;
	int		 rc = 0;

	/*
	 * cpuset_parse allows blanks around the list (sysfs ends its files
	 * with a newline); the Go policy's parser allows none anywhere, so
	 * a config it would refuse is refused here too, with the fix.
	 */
	if (((list = config_after(s, CONFIG_PREFIX_EXCLUDE)) != NULL ||
	    (list = config_after(s, CONFIG_PREFIX_CPUSET)) != NULL) &&
	    strpbrk(list, " \t\n\r\f\v") != NULL) {
		fixed = xstrdup(s);
		for (p = fixed, list = s; *list != '\0'; list++)
			if (!isspace((unsigned char)*list))
				*p++ = *list;
		*p = '\0';
		q = config_quote(s);
		p = config_quote(fixed);
		xasprintf(why, "%s: blanks are not allowed in a CPU list; "
		    "write %s", q, p);
		free(p);
		free(fixed);
		free(q);
		return (-1);
	}
	if ((list = config_after(s, CONFIG_PREFIX_EXCLUDE)) != NULL) {
		if (cpuset_parse(&set, list, why) != 0)
			rc = -1;
	} else if ((list = config_after(s, CONFIG_PREFIX_CPUSET)) != NULL) {
		if (cpuset_parse(&set, list, why) != 0)
			rc = -1;
		else if (cpuset_empty(&set)) {
			q = config_quote(s);
			xasprintf(why, "%s %s", q, reserved ?
			    "reserves no CPU" : "leaves no CPU available");
			rc = -1;
		}
	} else if (!reserved) {
		q = config_quote(s);
		xasprintf(why, "%s: expected cpuset:<list> or "
		    "exclude-cpuset:<list>%s", q,
		    quantity_parse_milli(s, &milli, NULL) == 0 ?
		    " (a quantity cannot bound the available CPUs)" : "");
		rc = -1;
	} else if (quantity_parse_milli(s, &milli, &cause) != 0) {
		xasprintf(why, "expected cpuset:<list>, exclude-cpuset:<list> "
		    "or a CPU quantity: %s", cause);
		rc = -1;
	} else if (milli == 0) {
		q = config_quote(s);
		xasprintf(why, "%s reserves no CPU", q);
		rc = -1;
	}
	cpuset_clear(&set);
	free(cause);
	free(q);
	return (rc);
}

static int
config_check_reserved_cpu(const char *s, char **why)
{
	return (config_check_cpu(s, 1, why));
}

static int
config_check_available_cpu(const char *s, char **why)
{
	return (config_check_cpu(s, 0, why));
}

/* A character of a DNS label: lowercase letter, digit or hyphen. */
static int
config_label_char(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
}

/* A letter or digit, what a DNS label starts and ends with. */
static int
config_alnum(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

/*
 * A namespace glob as filepath.Match reads it, limited to what can match a
 * namespace name (a DNS label): anything else is a typo that would silently
 * match nothing. A class is [...] or [^...] (also [!...]) of letters,
 * digits and ranges such as a-z.
 */
static int
config_check_glob(const char *s, char **why)
{
	const char	*p = s;
	char		*q;

	if (*s == '\0')
		goto bad;
	while (*p != '\0') {
		if (config_label_char(*p) || *p == '*' || *p == '?') {
			p++;
			continue;
		}
		if (*p++ != '[')
			goto bad;
		if (*p == '^' || *p == '!')
			p++;
		if (!config_alnum(*p))
			goto bad;
		while (config_alnum(*p)) {
			if (p[1] == '-' && config_alnum(p[2]) && p[2] >= p[0])
				p += 3;
			else
				p++;
		}
		if (*p++ != ']')
			goto bad;
	}
	return (0);
bad:
	q = config_quote(s);
	xasprintf(why, "%s is not a namespace glob (lowercase letters, digits, "
	    "-, * and ?, classes like [a-z] or [^0-9])", q);
	free(q);
	return (-1);
}

/* RFC 1123 subdomain, within Kubernetes' limit for driver names. */
static int
config_check_driver_name(const char *s, char **why)
{
	const char	*p, *label;
	char		*q;
	size_t		 len = strlen(s);

	/* CDI needs its kind's vendor part to start with a letter. */
	if (len == 0 || len > CONFIG_DRIVER_NAME_MAX || *s < 'a' || *s > 'z')
		goto bad;
	label = s;
	for (p = s;; p++) {
		if (*p == '.' || *p == '\0') {
			if (p == label || p[-1] == '-' || *label == '-')
				goto bad;
			if (*p == '\0')
				return (0);
			label = p + 1;
			continue;
		}
		if (!config_label_char(*p))
			goto bad;
	}
bad:
	q = config_quote(s);
	xasprintf(why, "%s is not a DNS subdomain of at most %d characters "
	    "starting with a letter (lowercase letters, digits, - and ., "
	    "labels starting and ending with a letter or digit)", q,
	    CONFIG_DRIVER_NAME_MAX);
	free(q);
	return (-1);
}

int
config_endpoint_parse(const char *s, char *host, unsigned *port, char **why)
{
	unsigned char	 addr[16];
	const char	*orig = s, *colon, *p;
	char		*q;
	size_t		 hlen;
	unsigned long	 n;
	int		 v6 = 0;

	host[0] = '\0';
	if (*s == '[') {
		if ((p = strchr(s, ']')) == NULL || p[1] != ':')
			goto bad;
		s++;
		hlen = (size_t)(p - s);
		colon = p + 1;
		v6 = 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			goto bad;
		hlen = (size_t)(colon - s);
	}
	if (hlen >= CONFIG_ENDPOINT_HOST_MAX || (v6 && hlen == 0))
		goto bad;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (hlen > 0 && inet_pton(v6 ? AF_INET6 : AF_INET, host, addr) != 1)
		goto bad;
	/* Digits only: strtoul would take a sign or spaces. */
	for (p = colon + 1; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p))
			goto bad;
	if (colon[1] == '\0' || strlen(colon + 1) > 5)
		goto bad;
	n = strtoul(colon + 1, NULL, 10);
	if (n < 1 || n > 65535)
		goto bad;
	*port = (unsigned)n;
	return (0);
bad:
	host[0] = '\0';
	if (why != NULL) {
		q = config_quote(orig);
		xasprintf(why, "%s is not [host]:port with an IPv4 or a "
		    "bracketed IPv6 literal host (none for every address) and "
		    "a port 1..65535", q);
		free(q);
	}
	return (-1);
}

static int
config_check_endpoint(const char *s, char **why)
{
	char		host[CONFIG_ENDPOINT_HOST_MAX];
	unsigned	port;

	if (*s == '\0')
		return (0);
	return (config_endpoint_parse(s, host, &port, why));
}

/* The default of a string row, without its JSON quotes. */
static char *
config_default_string(const struct config_key *key)
{
	json_t	*v;
	char	*s;

	if ((v = json_loads(key->defval, JSON_DECODE_ANY, NULL)) == NULL ||
	    !json_is_string(v))
		abort();
	s = xstrdup(json_string_value(v));
	json_decref(v);
	return (s);
}

static void
config_free_value(struct config *cfg, const struct config_key *key)
{
	char	***list;
	size_t	 *n, i;

	switch (key->type) {
	case CONFIG_STRING:
	case CONFIG_CPU_RESOURCE:
		free(*CONFIG_VAL(cfg, key, char *));
		*CONFIG_VAL(cfg, key, char *) = NULL;
		break;
	case CONFIG_STRING_LIST:
		list = CONFIG_VAL(cfg, key, char **);
		n = CONFIG_COUNT(cfg, key);
		for (i = 0; i < *n; i++)
			free((*list)[i]);
		free(*list);
		*list = NULL;
		*n = 0;
		break;
	default:
		break;
	}
}

static int __attribute__((__format__(__printf__, 3, 4)))
config_fail(char **cause, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	int	 n;

	if (cause == NULL)
		return (-EINVAL);
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	msg = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	xasprintf(cause, "%s: %s", path, msg);
	free(msg);
	return (-EINVAL);
}

static int
config_set_list(struct config *cfg, const struct config_key *key,
    const char *path, json_t *v, char **cause)
{
	char	**list, *why = NULL, *itempath;
	size_t	  i, n;
	json_t	 *item;

	if (!json_is_array(v))
		return (config_fail(cause, path, "expected a list of strings, "
		    "got %s", config_json_kind(v)));
	n = json_array_size(v);
	list = n ? xcalloc(n, sizeof *list) : NULL;
	json_array_foreach(v, i, item) {
		if (!json_is_string(item) || (key->check != NULL &&
		    key->check(json_string_value(item), &why) != 0)) {
			xasprintf(&itempath, "%s[%zu]", path, i);
			if (why != NULL)
				(void)config_fail(cause, itempath, "%s", why);
			else
				(void)config_fail(cause, itempath, "expected a "
				    "string, got %s", config_json_kind(item));
			free(itempath);
			free(why);
			while (i > 0)
				free(list[--i]);
			free(list);
			return (-EINVAL);
		}
		list[i] = xstrdup(json_string_value(item));
	}
	config_free_value(cfg, key);
	*CONFIG_VAL(cfg, key, char **) = list;
	*CONFIG_COUNT(cfg, key) = n;
	return (0);
}

/* Sets one leaf key from a JSON value; on error nothing changes. */
static int
config_set(struct config *cfg, const struct config_key *key, const char *path,
    json_t *v, char **cause)
{
	const char	*s;
	char		*why = NULL, *q, *range;
	json_int_t	 i;
	size_t		 c;
	int		 rc;

	switch (key->type) {
	case CONFIG_BOOL:
		if (!json_is_boolean(v))
			return (config_fail(cause, path, "expected true or "
			    "false, got %s", config_json_kind(v)));
		*CONFIG_VAL(cfg, key, int) = json_is_true(v);
		return (0);
	case CONFIG_INT:
		range = config_key_range(key);
		rc = 0;
		if (!json_is_integer(v))
			rc = config_fail(cause, path, "expected an integer %s, "
			    "got %s", range, config_json_kind(v));
		else if ((i = json_integer_value(v)) < key->min || i > key->max)
			rc = config_fail(cause, path, "%lld is out of range, "
			    "expected an integer %s", (long long)i, range);
		else
			*CONFIG_VAL(cfg, key, int) = (int)i;
		free(range);
		return (rc);
	case CONFIG_ENUM:
		if (!json_is_string(v))
			return (config_fail(cause, path, "expected a string, "
			    "got %s", config_json_kind(v)));
		s = json_string_value(v);
		for (c = 0; key->choices[c] != NULL; c++) {
			if (strcmp(s, key->choices[c]) == 0) {
				*CONFIG_VAL(cfg, key, int) = (int)c;
				return (0);
			}
		}
		q = config_quote(s);
		range = config_key_range(key);
		rc = config_fail(cause, path, "%s is not one of %s", q, range);
		free(range);
		free(q);
		return (rc);
	case CONFIG_STRING:
	case CONFIG_CPU_RESOURCE:
		if (!json_is_string(v))
			return (config_fail(cause, path, "expected a string, "
			    "got %s", config_json_kind(v)));
		s = json_string_value(v);
		if (key->type == CONFIG_CPU_RESOURCE && *s == '\0') {
			/* Empty is the default, as if the key were absent. */
			config_free_value(cfg, key);
			q = config_default_string(key);
			if (*q == '\0') {
				free(q);
				q = NULL;
			}
			*CONFIG_VAL(cfg, key, char *) = q;
			return (0);
		}
		if (key->check != NULL && key->check(s, &why) != 0) {
			rc = config_fail(cause, path, "%s", why);
			free(why);
			return (rc);
		}
		config_free_value(cfg, key);
		*CONFIG_VAL(cfg, key, char *) = xstrdup(s);
		return (0);
	case CONFIG_STRING_LIST:
		return (config_set_list(cfg, key, path, v, cause));
	case CONFIG_OBJECT:
		break;
	}
	abort();
}

static int
config_apply(struct config *cfg, json_t *obj, const char *prefix,
    char **cause)
{
	const struct config_key	*key;
	const char		*name;
	json_t			*v;
	char			*path;
	int			 rc = 0;

	json_object_foreach(obj, name, v) {
		path = config_path(prefix, name);
		/* A key that is not plain printable text matches nothing. */
		if (strlen(name) > CONFIG_QUOTE_MAX ||
		    strcmp(path + (prefix ? strlen(prefix) + 1 : 0), name) != 0)
			key = NULL;
		else
			key = config_find(path);
		if (key == NULL) {
			if (config_is_unsupported(path))
				rc = config_fail(cause, path, "%s",
				    "not supported");
			else
				rc = config_fail(cause, path, "%s",
				    "unknown key");
		} else if (key->type == CONFIG_OBJECT) {
			if (!json_is_object(v))
				rc = config_fail(cause, path, "expected an "
				    "object, got %s", config_json_kind(v));
			else
				rc = config_apply(cfg, v, path, cause);
		} else
			rc = config_set(cfg, key, path, v, cause);
		free(path);
		if (rc != 0)
			return (rc);
	}
	return (0);
}

struct config *
config_new(void)
{
	struct config	*cfg;
	json_t		*v;
	size_t		 i;

	cfg = xcalloc(1, sizeof *cfg);
	for (i = 0; i < CONFIG_NKEYS; i++) {
		if (config_keys[i].type == CONFIG_OBJECT)
			continue;
		/* The table is constant: a bad default is a bug here. */
		v = json_loads(config_keys[i].defval, JSON_DECODE_ANY, NULL);
		if (v == NULL || config_set(cfg, &config_keys[i],
		    config_keys[i].path, v, NULL) != 0)
			abort();
		json_decref(v);
	}
	return (cfg);
}

void
config_free(struct config *cfg)
{
	size_t	i;

	if (cfg == NULL)
		return;
	for (i = 0; i < CONFIG_NKEYS; i++)
		config_free_value(cfg, &config_keys[i]);
	free(cfg);
}

struct config *
config_dup(const struct config *cfg)
{
	const struct config_key	*key;
	struct config		*dup;
	char			**list, **src;
	size_t			 i, j, n;

	dup = xmalloc(sizeof *dup);
	memcpy(dup, cfg, sizeof *dup);
	for (i = 0; i < CONFIG_NKEYS; i++) {
		key = &config_keys[i];
		switch (key->type) {
		case CONFIG_STRING:
		case CONFIG_CPU_RESOURCE:
			if (*CONFIG_CVAL(cfg, key, char *) != NULL)
				*CONFIG_VAL(dup, key, char *) =
				    xstrdup(*CONFIG_CVAL(cfg, key, char *));
			break;
		case CONFIG_STRING_LIST:
			n = *CONFIG_CCOUNT(cfg, key);
			src = *CONFIG_CVAL(cfg, key, char **);
			list = n ? xcalloc(n, sizeof *list) : NULL;
			for (j = 0; j < n; j++)
				list[j] = xstrdup(src[j]);
			*CONFIG_VAL(dup, key, char **) = list;
			break;
		default:
			break;
		}
	}
	return (dup);
}

int
config_from_json(json_t *doc, struct config **out, char **cause)
{
	struct config	*cfg;
	int		 rc;

	*out = NULL;
	if (!json_is_object(doc)) {
		if (cause != NULL)
			xasprintf(cause, "the configuration must be a JSON "
			    "object, not %s", config_json_kind(doc));
		return (-EINVAL);
	}
	cfg = config_new();
	if ((rc = config_apply(cfg, doc, NULL, cause)) != 0) {
		config_free(cfg);
		return (rc);
	}
	*out = cfg;
	return (0);
}

int
config_parse(const char *buf, size_t len, struct config **out, char **cause)
{
	json_error_t	 err;
	json_t		*doc;
	int		 rc;

	*out = NULL;
	doc = json_loadb(buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
	    &err);
	if (doc == NULL) {
		if (cause != NULL)
			xasprintf(cause, "line %d, column %d: %s", err.line,
			    err.column, err.text);
		return (-EINVAL);
	}
	rc = config_from_json(doc, out, cause);
	json_decref(doc);
	return (rc);
}

/* The value of a leaf key as JSON (new reference). */
static json_t *
config_value(const struct config *cfg, const struct config_key *key)
{
	const char	*s;
	json_t		*a;
	char *const	*list;
	size_t		 i, n;

	switch (key->type) {
	case CONFIG_BOOL:
		return (json_boolean(*CONFIG_CVAL(cfg, key, int)));
	case CONFIG_INT:
		return (json_integer(*CONFIG_CVAL(cfg, key, int)));
	case CONFIG_ENUM:
		return (json_string(key->choices[*CONFIG_CVAL(cfg, key, int)]));
	case CONFIG_STRING:
	case CONFIG_CPU_RESOURCE:
		s = *CONFIG_CVAL(cfg, key, char *);
		return (json_string(s != NULL ? s : ""));
	case CONFIG_STRING_LIST:
		a = json_array();
		list = *CONFIG_CVAL(cfg, key, char **);
		n = *CONFIG_CCOUNT(cfg, key);
		for (i = 0; i < n; i++)
			json_array_append_new(a, json_string(list[i]));
		return (a);
	case CONFIG_OBJECT:
		break;
	}
	return (json_object());
}

json_t *
config_dump(const struct config *cfg)
{
	const struct config_key	*key;
	json_t			*root, *parent;
	const char		*name, *dot;
	char			*ppath;
	size_t			 i;

	root = json_object();
	for (i = 0; i < CONFIG_NKEYS; i++) {
		key = &config_keys[i];
		/* Objects precede their keys, and nest one level at most. */
		parent = root;
		name = key->path;
		if ((dot = strrchr(key->path, '.')) != NULL) {
			ppath = xstrndup(key->path,
			    (size_t)(dot - key->path));
			parent = json_object_get(root, ppath);
			free(ppath);
			name = dot + 1;
		}
		if (parent == NULL)
			abort();
		json_object_set_new(parent, name, config_value(cfg, key));
	}
	return (root);
}

int
config_check_reload(const struct config *a, const struct config *b,
    char **cause)
{
	const struct config_key	*key;
	json_t			*va, *vb;
	size_t			 i;
	int			 same;

	for (i = 0; i < CONFIG_NKEYS; i++) {
		key = &config_keys[i];
		if (key->reload != CONFIG_RESTART || key->type == CONFIG_OBJECT)
			continue;
		va = config_value(a, key);
		vb = config_value(b, key);
		same = json_equal(va, vb);
		json_decref(va);
		json_decref(vb);
		if (!same) {
			if (cause != NULL)
				xasprintf(cause, "%s: changing it needs a "
				    "restart", key->path);
			return (-EINVAL);
		}
	}
	return (0);
}

static int
config_resolve_fail(struct cpuset *allowed, struct cpuset *reserved,
    char **cause, char *msg)
{
	cpuset_zero(allowed);
	cpuset_zero(reserved);
	if (cause != NULL)
		*cause = msg;
	else
		free(msg);
	return (-EINVAL);
}

/* Parses the list after a cpuset: or exclude-cpuset: prefix. */
static int
config_resolve_list(const char *path, const char *list, struct cpuset *set,
    char **msg)
{
	char	*why = NULL;

	if (cpuset_parse(set, list, &why) == 0)
		return (0);
	xasprintf(msg, "%s: %s", path, why);
	free(why);
	return (-1);
}

int
config_resolve_cpus(const struct config *cfg, const struct topology *topo,
    struct cpuset *allowed, struct cpuset *reserved, char **cause)
{
	struct cpuset	 set = CPUSET_INITIALIZER, from = CPUSET_INITIALIZER;
	const char	*av = cfg->available_cpu, *rv = cfg->reserved_cpu;
	const char	*list;
	char		*msg = NULL, *s1 = NULL, *s2 = NULL, *why = NULL;
	char		*q = NULL;
	long long	 milli, ncpus;

	cpuset_zero(allowed);
	cpuset_zero(reserved);

	/* availableResources.cpu: absent is every online CPU. */
	if (av == NULL)
		cpuset_copy(allowed, topology_online(topo));
	else if ((list = config_after(av, CONFIG_PREFIX_EXCLUDE)) != NULL) {
		if (config_resolve_list("availableResources.cpu", list, &set,
		    &msg) != 0)
			goto fail;
		cpuset_copy(allowed, topology_online(topo));
		cpuset_andnot(allowed, &set);
	} else if ((list = config_after(av, CONFIG_PREFIX_CPUSET)) != NULL) {
		if (config_resolve_list("availableResources.cpu", list, allowed,
		    &msg) != 0)
			goto fail;
	} else {
		q = config_quote(av);
		xasprintf(&msg, "availableResources.cpu: %s is not "
		    "cpuset:<list> or exclude-cpuset:<list>", q);
		goto fail;
	}
	cpuset_and(allowed, topology_online(topo));
	if (cpuset_empty(allowed)) {
		s1 = cpuset_format(topology_online(topo));
		q = config_quote(av);
		xasprintf(&msg, "availableResources.cpu: %s leaves no "
		    "online CPU (online: %s)", q, s1);
		goto fail;
	}

	/* reservedResources.cpu. */
	if (rv == NULL)
		abort();
	if ((list = config_after(rv, CONFIG_PREFIX_EXCLUDE)) != NULL) {
		if (config_resolve_list("reservedResources.cpu", list, &set,
		    &msg) != 0)
			goto fail;
		cpuset_copy(reserved, allowed);
		cpuset_andnot(reserved, &set);
	} else if ((list = config_after(rv, CONFIG_PREFIX_CPUSET)) != NULL) {
		if (config_resolve_list("reservedResources.cpu", list, reserved,
		    &msg) != 0)
			goto fail;
	} else {
		if (quantity_parse_milli(rv, &milli, &why) != 0) {
			xasprintf(&msg, "reservedResources.cpu: %s", why);
			goto fail;
		}
		/* Whole CPUs, and the count never overflows on the way. */
		ncpus = milli / 1000 + (milli % 1000 != 0);
		cpuset_copy(&from, allowed);
		cpuset_andnot(&from, topology_isolated(topo));
		if (ncpus > cpuset_count(&from)) {
			s1 = cpuset_format(&from);
			q = config_quote(rv);
			xasprintf(&msg, "reservedResources.cpu: %s needs %lld "
			    "CPUs, only %d available CPUs are not isolated "
			    "(%s)", q, ncpus, cpuset_count(&from), s1);
			goto fail;
		}
		if (cpualloc_take(topo, &from, (int)ncpus, CPU_PRIO_NORMAL,
		    CPUALLOC_ALL, reserved, &why) != 0) {
			xasprintf(&msg, "reservedResources.cpu: cannot pick "
			    "%lld CPUs: %s", ncpus, why);
			goto fail;
		}
	}
	if (cpuset_empty(reserved)) {
		q = config_quote(rv);
		xasprintf(&msg, "reservedResources.cpu: %s reserves no CPU", q);
		goto fail;
	}
	if (!cpuset_subset(reserved, allowed)) {
		cpuset_copy(&set, reserved);
		cpuset_andnot(&set, allowed);
		s1 = cpuset_format(&set);
		s2 = cpuset_format(allowed);
		xasprintf(&msg, "reservedResources.cpu: CPUs %s are not among "
		    "the online available CPUs %s", s1, s2);
		goto fail;
	}
	/* An isolated CPU may be reserved only alone (anchor §5.1). */
	if (cpuset_intersects(reserved, topology_isolated(topo)) &&
	    cpuset_count(reserved) > 1) {
		cpuset_copy(&set, reserved);
		cpuset_and(&set, topology_isolated(topo));
		s1 = cpuset_format(&set);
		s2 = cpuset_format(reserved);
		xasprintf(&msg, "reservedResources.cpu: isolated CPUs %s may "
		    "only be reserved as the sole reserved CPU, not within %s",
		    s1, s2);
		goto fail;
	}
	cpuset_clear(&set);
	cpuset_clear(&from);
	return (0);

fail:
	free(q);
	free(s1);
	free(s2);
	free(why);
	cpuset_clear(&set);
	cpuset_clear(&from);
	return (config_resolve_fail(allowed, reserved, cause, msg));
}
