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

/* One row of the schema table, exported for the man page and the dump. */
struct config_key {
	const char		*path;		/* dotted, e.g. "dra.driverName" */
	enum config_type	 type;
	const char		*defval;	/* default as JSON text, NULL none */
	long			 min, max;	/* CONFIG_INT range */
	const char *const	*choices;	/* CONFIG_ENUM, NULL-terminated */
	enum config_reload	 reload;
	const char		*help;
};

const struct config_key	*config_schema(size_t *);

/* The embedded defaults. Never fails. */
struct config	*config_new(void);
void		 config_free(struct config *);
struct config	*config_dup(const struct config *);

/* Parse and validate a JSON document. 0, or -EINVAL with *cause naming the
 * dotted path of the first bad key (caller frees). */
int		 config_parse(const char *, size_t, struct config **, char **);
int		 config_from_json(json_t *, struct config **, char **);

/* Every key with its effective value (new reference). */
json_t		*config_dump(const struct config *);

/* 0 when b can replace a on reload; else -EINVAL with *cause naming the
 * first changed key that needs a restart. */
int		 config_check_reload(const struct config *, const struct config *,
		     char **);

/*
 * Resolve availableResources.cpu and reservedResources.cpu against the
 * machine (anchor §5.1): allowed = available ∩ online; reserved from a
 * cpuset, an exclude-cpuset or a quantity rounded up to whole CPUs and
 * picked by the CPU allocator from allowed − isolated at normal priority.
 * Fails when reserved is empty, not ⊆ allowed, or holds an isolated CPU
 * while not being a single CPU.
 */
int		 config_resolve_cpus(const struct config *,
		     const struct topology *, struct cpuset *allowed,
		     struct cpuset *reserved, char **);

#endif
