/*
 * The configuration: one schema table (config.c) defines every key of
 * SPEC R-CONF-1 with its type, default, range, reloadability and help.
 * Parsing, validation, defaults, the dump, `topoawared -n` and
 * topoawared.json(5) all follow that table.
 */
#ifndef TOPOAWARE_CONFIG_H
#define TOPOAWARE_CONFIG_H

#include <jansson.h>

#include "cpuset.h"
#include "topology.h"

enum unlimited_burstable {
	UB_SYSTEM = 0,
	UB_PACKAGE,
	UB_DIE,
	UB_NUMA,
	UB_L3CACHE
};

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG
};

struct config {
	char		*reserved_cpu;		/* reservedResources.cpu, raw */
	char		*available_cpu;		/* availableResources.cpu, raw or NULL */
	int		 pin_cpu;
	int		 pin_memory;
	int		 prefer_isolated;
	int		 prefer_shared;
	char		**reserved_ns;		/* reservedPoolNamespaces globs */
	size_t		 nreserved_ns;
	enum cpu_prio	 default_prio;		/* defaultCPUPriority */
	int		 colocate_pods;
	int		 colocate_namespaces;
	enum unlimited_burstable unlimited_burstable;
	int		 dra_enabled;
	char		*dra_driver_name;
	int		 nrt_enabled;
	int		 nrt_refresh_seconds;
	enum log_level	 log_level;
	char		*http_endpoint;		/* instrumentation.httpEndpoint */
	int		 prometheus_export;
};

/* How a key may change: live on reload, or only with a restart. */
enum config_reload {
	CONFIG_RELOADABLE = 0,
	CONFIG_RESTART
};

enum config_type {
	CONFIG_BOOL,
	CONFIG_INT,
	CONFIG_STRING,
	CONFIG_ENUM,
	CONFIG_STRING_LIST,
	CONFIG_CPU_RESOURCE,
	CONFIG_OBJECT
};

/*
 * One row of the schema table, exported for the man page and the dump.
 * Rows come in document order, an object's row before its keys. A
 * CONFIG_OBJECT row only groups keys: its default is "{}" and its reload
 * mode is that of its keys.
 */
struct config_key {
	const char		*path;		/* dotted, e.g. "dra.driverName" */
	enum config_type	 type;
	const char		*defval;	/* default as JSON text, NULL none */
	long			 min, max;	/* CONFIG_INT range */
	const char *const	*choices;	/* CONFIG_ENUM, NULL-terminated */
	enum config_reload	 reload;
	const char		*help;
	/* Accepted values in words, for types without min/max or choices. */
	const char		*syntax;
	/* Where the value lives in struct config; for CONFIG_STRING_LIST
	 * count_off is where its size_t count lives. */
	size_t			 off, count_off;
	/* Extra check of a string value (or of each list item): 0, or -1
	 * with *why (caller frees) saying what is wrong, without the path. */
	int			(*check)(const char *, char **why);
};

const struct config_key	*config_schema(size_t *);
/* "boolean", "integer", "string", "list of strings", "object". */
/* A CPU priority as the config writes it: "high", "normal", "low", "none". */
const char		*config_prio_name(enum cpu_prio);
const char		*config_type_name(enum config_type);
/* A row's accepted values in words: "1..86400", "high|normal|low|none",
 * "true|false" or its syntax text (caller frees). */
char			*config_key_range(const struct config_key *);
/* TopologyAwarePolicy keys refused as "<key>: not supported", dotted,
 * NULL-terminated; fleet_spec_config drops the same keys with a warning. */
const char *const	*config_unsupported(void);

/*
 * An instrumentation.httpEndpoint value, "[host]:port": host empty (every
 * address), an IPv4 literal or a bracketed IPv6 literal; port 1..65535.
 * 0 with the host (without brackets, "" for any) in host, which holds
 * CONFIG_ENDPOINT_HOST_MAX bytes, and the port; or -1 with *why (caller
 * frees).
 */
#define CONFIG_ENDPOINT_HOST_MAX	64	/* with the NUL */
int		 config_endpoint_parse(const char *, char *host,
		     unsigned *port, char **why);

/* The embedded defaults. Never fails. */
struct config	*config_new(void);
void		 config_free(struct config *);
struct config	*config_dup(const struct config *);

/* Parse and validate a JSON document; absent keys keep their defaults.
 * 0, or -EINVAL with *cause naming the dotted path of the first bad key,
 * or the line and column of a JSON syntax error (caller frees). */
int		 config_parse(const char *, size_t, struct config **, char **);
int		 config_from_json(json_t *, struct config **, char **);

/* Every key with its effective value, nested as in the file (new
 * reference); availableResources.cpu is "" for all online CPUs. Parsing
 * the dump gives an equal config. */
json_t		*config_dump(const struct config *);

/* 0 when b can replace a on reload; else -EINVAL with *cause naming the
 * first changed key that needs a restart. */
int		 config_check_reload(const struct config *, const struct config *,
		     char **);

/*
 * Resolve availableResources.cpu and reservedResources.cpu against the
 * machine (anchor §5.1): allowed = available ∩ online; reserved from a
 * cpuset, an exclude-cpuset (allowed minus the list) or a quantity
 * rounded up to whole CPUs and picked by the CPU allocator from
 * allowed − isolated at normal priority with every allocator flag.
 * Fails when allowed is empty, reserved is empty, not ⊆ allowed, holds an
 * isolated CPU while not being a single CPU, or asks for more CPUs than
 * allowed − isolated holds. allowed and reserved are initialized sets of
 * the caller, overwritten on success and left empty on failure; *cause
 * names the dotted path and the CPUs at fault.
 */
int		 config_resolve_cpus(const struct config *,
		     const struct topology *, struct cpuset *allowed,
		     struct cpuset *reserved, char **);

#endif
