/*
 * fleet.c owns the pure half of configuration from the cluster: the Go
 * agent's scope rules (node.<node> over group.<group> over default), the
 * node's group label with its deprecated fallbacks, the conversion of a
 * TopologyAwarePolicy spec into our config text, and the status patches.
 * The keys dropped from a spec are config.c's list of keys refused from a
 * file, so that the two never disagree.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "fleet.h"
#include "k8sname.h"
#include "utf8.h"
#include "xmalloc.h"

#define FLEET_NODE_PREFIX	"node."
#define FLEET_GROUP_PREFIX	"group."
#define FLEET_DEFAULT		"default"

#define FLEET_IGNORED		"a key of the Go policy topoaware does not " \
				"implement; ignored"

/* "YYYY-MM-DDTHH:MM:SSZ" and its NUL. */
#define FLEET_TIMESTAMP_LEN	21

/* The Go agent tries these, in order, when the group label is unset. */
static const char *const fleet_deprecated[] = {
	"group.config.nri",
	"resource-policy.nri.io/group",
	NULL
};

struct fleet_warnings {
	char	**list;
	size_t	  n;
};

/* Whether name is prefix followed by exactly value. */
static int
fleet_is(const char *name, const char *prefix, const char *value)
{
	size_t	len = strlen(prefix);

	return (strncmp(name, prefix, len) == 0 &&
	    strcmp(name + len, value) == 0);
}

static const char *
fleet_find(const char *prefix, const char *value, const char *const *names,
    size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && fleet_is(names[i], prefix, value))
			return (names[i]);
	return (NULL);
}

const char *
fleet_choose(const char *node, const char *group, const char *const *names,
    size_t n)
{
	const char	*name;

	if (node != NULL && *node != '\0' &&
	    (name = fleet_find(FLEET_NODE_PREFIX, node, names, n)) != NULL)
		return (name);
	if (group != NULL && *group != '\0' &&
	    (name = fleet_find(FLEET_GROUP_PREFIX, group, names, n)) != NULL)
		return (name);
	return (fleet_find("", FLEET_DEFAULT, names, n));
}

const char *const *
fleet_deprecated_labels(void)
{
	return (fleet_deprecated);
}

/* Whether "group.<value>" is a DNS subdomain, as object names must be. */
static int
fleet_group_name_ok(const char *value)
{
	char	name[FLEET_NAME_MAX + 1];
	int	n;

	n = snprintf(name, sizeof name, "%s%s", FLEET_GROUP_PREFIX, value);
	return (n > 0 && (size_t)n < sizeof name &&
	    k8s_dns_subdomain(name, FLEET_NAME_MAX));
}

/* A label's value; NULL when absent, empty or not a string. */
static const char *
fleet_label(const json_t *labels, const char *label)
{
	const char	*v;

	v = json_string_value(json_object_get(labels, label));
	return (v != NULL && *v != '\0' ? v : NULL);
}

const char *
fleet_group(const json_t *node_obj, const char *label,
    const char **deprecated, int *invalid)
{
	const json_t	*labels;
	const char	*v, *from = NULL;
	size_t		 i;

	if (deprecated != NULL)
		*deprecated = NULL;
	if (invalid != NULL)
		*invalid = 0;
	labels = json_object_get(json_object_get(node_obj, "metadata"),
	    "labels");
	if (!json_is_object(labels))
		return (NULL);
	if ((v = fleet_label(labels, label != NULL ? label :
	    FLEET_GROUP_LABEL)) == NULL) {
		for (i = 0; fleet_deprecated[i] != NULL; i++) {
			if ((v = fleet_label(labels, fleet_deprecated[i])) !=
			    NULL) {
				from = fleet_deprecated[i];
				break;
			}
		}
	}
	if (v == NULL)
		return (NULL);
	if (deprecated != NULL)
		*deprecated = from;
	if (!fleet_group_name_ok(v)) {
		if (invalid != NULL)
			*invalid = 1;
		return (NULL);
	}
	return (v);
}

static void
fleet_warn(struct fleet_warnings *w, const char *path)
{
	w->list = xreallocarray(w->list, w->n + 1, sizeof *w->list);
	xasprintf(&w->list[w->n++], "%s: %s", path, FLEET_IGNORED);
}

static int
fleet_ignored(const char *path)
{
	const char *const	*t;

	for (t = config_unsupported(); *t != NULL; t++)
		if (strcmp(*t, path) == 0)
			return (1);
	return (0);
}

/*
 * The defaults Go's CRD gives its keys that we ignore: the API server
 * writes them into every object it stores, so holding exactly one says
 * nothing an operator chose, and is ignored without a warning.
 */
static const struct {
	const char	*path;
	const char	*json;
} fleet_go_defaults[] = {
	{ "agent", "{\"nodeResourceTopology\": true}" },
	{ "controllableInterrupts", "[\"*\"]" },
	{ "instrumentation.reportPeriod", "\"30s\"" },
	{ "instrumentation.metrics", "{\"enabled\": [\"policy\", \"buildinfo\"]}" },
};

static int
fleet_go_default(const char *path, const json_t *v)
{
	json_t	*d;
	size_t	 i;
	int	 same;

	for (i = 0; i < sizeof fleet_go_defaults / sizeof fleet_go_defaults[0];
	    i++) {
		if (strcmp(fleet_go_defaults[i].path, path) != 0)
			continue;
		if ((d = json_loads(fleet_go_defaults[i].json,
		    JSON_DECODE_ANY, NULL)) == NULL)
			abort();
		same = json_equal(d, v);
		json_decref(d);
		return (same);
	}
	return (0);
}

/* Whether some ignored key lies below path, so its object is walked. */
static int
fleet_ignored_below(const char *path)
{
	const char *const	*t;
	size_t			 len = strlen(path);

	for (t = config_unsupported(); *t != NULL; t++)
		if (strncmp(*t, path, len) == 0 && (*t)[len] == '.')
			return (1);
	return (0);
}

/* A new object; running out of memory is fatal, as in xmalloc. */
static json_t *
fleet_object(void)
{
	json_t	*o;

	if ((o = json_object()) == NULL)
		abort();
	return (o);
}

/* The length of a key of an object, which may hold a NUL byte since
 * jansson 2.14 (json_object_setn; its parser refuses them). */
static size_t
fleet_key_len(const char *key)
{
#if JANSSON_VERSION_HEX >= 0x020e00
	return (json_object_iter_key_len(json_object_key_to_iter(key)));
#else
	return (strlen(key));
#endif
}

/* Sets key, a key of another object, to v, which it takes. */
static void
fleet_set_key(json_t *o, const char *key, json_t *v)
{
	int	rc;

#if JANSSON_VERSION_HEX >= 0x020e00
	rc = json_object_setn_new(o, key, fleet_key_len(key), v);
#else
	rc = json_object_set_new(o, key, v);
#endif
	if (rc != 0)
		abort();
}

/*
 * A copy of obj, whose dotted path is prefix (NULL at the top), without
 * the ignored keys of obj and of the objects below it that hold some; what
 * is kept is shared with obj, which is not changed.
 */
static json_t *
fleet_filter(json_t *obj, const char *prefix, struct fleet_warnings *w)
{
	const char	*key;
	json_t		*out, *v;
	char		*path;

	out = fleet_object();
	json_object_foreach(obj, key, v) {
		/* Not keys of Go's, and a dot would fake a path. */
		if (strchr(key, '.') != NULL || fleet_key_len(key) !=
		    strlen(key)) {
			fleet_set_key(out, key, json_incref(v));
			continue;
		}
		if (prefix != NULL)
			xasprintf(&path, "%s.%s", prefix, key);
		else
			path = xstrdup(key);
		if (fleet_ignored(path)) {
			if (!fleet_go_default(path, v))
				fleet_warn(w, path);
		}
		else if (json_is_object(v) && fleet_ignored_below(path))
			fleet_set_key(out, key, fleet_filter(v, path, w));
		else
			fleet_set_key(out, key, json_incref(v));
		free(path);
	}
	return (out);
}

void
fleet_warnings_free(char **list, size_t n)
{
	size_t	i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

int
fleet_spec_config(const json_t *spec, char **text, size_t *len,
    char ***warnings, size_t *nwarnings, char **cause)
{
	struct fleet_warnings	 w = { NULL, 0 };
	json_t			*copy;

	*text = NULL;
	*len = 0;
	*warnings = NULL;
	*nwarnings = 0;
	if (!json_is_object(spec)) {
		if (cause != NULL)
			xasprintf(cause, "spec: %s", spec == NULL ?
			    "missing" : "not an object");
		return (-EINVAL);
	}
	/* jansson takes no const object, and nothing here changes it. */
	copy = fleet_filter((json_t *)spec, NULL, &w);
	*text = json_dumps(copy, JSON_INDENT(2));
	json_decref(copy);
	if (*text == NULL)
		abort();
	*len = strlen(*text);
	*warnings = w.list;
	*nwarnings = w.n;
	return (0);
}

/* Sets key to a new reference, which must exist. */
static void
fleet_set(json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		abort();
}

/* A JSON string of text that may come from a peer (not UTF-8). */
static json_t *
fleet_string(const char *s)
{
	json_t	*v;
	char	*clean;

	if (utf8_valid(s))
		return (json_string(s));
	clean = utf8_clean(s);
	v = json_string(clean);
	free(clean);
	return (v);
}

/* {"status":{"nodes":{"<node>":entry}}}, taking entry. */
static json_t *
fleet_wrap(const char *node, json_t *entry)
{
	json_t	*patch, *status, *nodes;
	char	*clean = NULL;

	patch = fleet_object();
	status = fleet_object();
	nodes = fleet_object();
	if (!utf8_valid(node))
		node = clean = utf8_clean(node);
	fleet_set(nodes, node, entry);
	fleet_set(status, "nodes", nodes);
	fleet_set(patch, "status", status);
	free(clean);
	return (patch);
}

int
fleet_timestamp(time_t when, char *buf, size_t size)
{
	struct tm	tm;
	int		n;

	if (gmtime_r(&when, &tm) == NULL)
		return (-1);
	/* Four digits of year, or Go cannot parse it back. */
	if (tm.tm_year < -1900 || tm.tm_year > 9999 - 1900)
		return (-1);
	n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
	if (n < 0 || (size_t)n >= size)
		return (-1);
	return (0);
}

json_t *
fleet_status_patch(const char *node, int ok, json_int_t generation,
    const char *error, char *const *warnings, size_t nwarnings, time_t when)
{
	json_t	*entry, *list;
	char	 stamp[FLEET_TIMESTAMP_LEN];
	size_t	 i;

	entry = fleet_object();
	fleet_set(entry, "status", json_string(ok ? "Success" : "Failure"));
	fleet_set(entry, "generation", json_integer(generation));
	/* Success writes "" too: the merge patch clears an old error. */
	fleet_set(entry, "errors", fleet_string(error != NULL ? error : ""));
	if (fleet_timestamp(when, stamp, sizeof stamp) == 0)
		fleet_set(entry, "timestamp", json_string(stamp));
	if (nwarnings > 0) {
		if ((list = json_array()) == NULL)
			abort();
		for (i = 0; i < nwarnings; i++)
			if (json_array_append_new(list,
			    fleet_string(warnings[i])) != 0)
				abort();
		fleet_set(entry, "warnings", list);
	}
	return (fleet_wrap(node, entry));
}

json_t *
fleet_status_clear(const char *node)
{
	return (fleet_wrap(node, json_null()));
}

char *
fleet_kept_doc(const char *ns, const char *name, const char *uid,
    json_int_t generation, const char *rv, time_t applied, const char *text,
    size_t len, char *const *warnings, size_t nwarnings)
{
	json_t	*doc, *w;
	char	 when[32], *out;
	size_t	 i;

	w = json_array();
	for (i = 0; i < nwarnings; i++)
		json_array_append_new(w, fleet_string(warnings[i]));
	if (fleet_timestamp(applied, when, sizeof when) != 0)
		when[0] = '\0';
	doc = json_pack("{s:i, s:o, s:o, s:o, s:I, s:o, s:s, s:s%, s:o}",
	    "version", FLEET_KEPT_VERSION, "namespace", fleet_string(ns),
	    "name", fleet_string(name), "uid", uid != NULL ?
	    fleet_string(uid) : json_null(), "generation", generation,
	    "resourceVersion", rv != NULL ? fleet_string(rv) : json_null(),
	    "appliedAt", when, "config", text, len, "warnings", w);
	if (doc == NULL)
		abort();
	if ((out = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS)) == NULL)
		abort();
	json_decref(doc);
	return (out);
}

int
fleet_kept_parse(const char *buf, size_t buflen, char **text, size_t *len,
    json_t **meta, char **cause)
{
	json_error_t	 jerr;
	json_t		*doc, *cfg, *v;

	*text = NULL;
	*len = 0;
	*meta = NULL;
	if ((doc = json_loadb(buf, buflen, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		xasprintf(cause, "not JSON: %s (line %d)", jerr.text,
		    jerr.line);
		return (-EINVAL);
	}
	v = json_object_get(doc, "version");
	cfg = json_object_get(doc, "config");
	if (!json_is_object(doc) || !json_is_integer(v) ||
	    json_integer_value(v) != FLEET_KEPT_VERSION ||
	    !json_is_string(cfg) ||
	    !json_is_string(json_object_get(doc, "name")) ||
	    !json_is_string(json_object_get(doc, "namespace"))) {
		xasprintf(cause, "not a version %d document with a namespace, "
		    "a name and a config", FLEET_KEPT_VERSION);
		json_decref(doc);
		return (-EINVAL);
	}
	*len = json_string_length(cfg);
	*text = xmalloc(*len + 1);
	memcpy(*text, json_string_value(cfg), *len);
	(*text)[*len] = '\0';
	json_object_del(doc, "config");
	*meta = doc;
	return (0);
}
