/*
 * Fleet configuration from the API server, as the Go agent reads it:
 * which TopologyAwarePolicy object configures this node (node.<node>, else
 * group.<group>, else default), the node's group from its labels, an
 * object's spec turned into the text of our config file, and the merge
 * patches of this node's entry in an object's status. No I/O: the daemon
 * watches the objects and sends the patches.
 */
#ifndef TOPOAWARE_FLEET_H
#define TOPOAWARE_FLEET_H

#include <stddef.h>
#include <time.h>

#include <jansson.h>

/* The Go agent's default group label. */
#define FLEET_GROUP_LABEL	"config.nri/group"

/* Kubernetes' limit on an object name (a DNS subdomain). */
#define FLEET_NAME_MAX		253

/*
 * The object name that configures node: "node.<node>" if among names, else
 * "group.<group>" if group is non-NULL and among names, else "default" if
 * among names; NULL when none. Returns a pointer into names.
 */
const char	*fleet_choose(const char *node, const char *group,
		    const char *const *names, size_t n);

/*
 * The group of a Node object (its metadata.labels): the value of label
 * (FLEET_GROUP_LABEL when NULL), else, when that is absent or empty, of
 * the Go agent's deprecated labels in its order (then *deprecated names
 * that label, else it is NULL); NULL when none or empty. A value that
 * cannot make a valid object name "group.<value>" gives NULL and *invalid
 * set (else cleared). Returns a pointer into node_obj; deprecated and
 * invalid may be NULL.
 */
const char	*fleet_group(const json_t *node_obj, const char *label,
		    const char **deprecated, int *invalid);

/* The Go agent's deprecated group labels, NULL-terminated. */
const char *const *fleet_deprecated_labels(void);

/*
 * A TopologyAwarePolicy's spec turned into the text of our JSON config
 * file (*text, *len; caller frees): keys the Go policy knows and topoaware
 * does not implement (config_unsupported) are removed, each named in a
 * warning "<dotted key>: ..." in the order found; everything else is passed
 * through untouched, so config_parse still refuses unknown keys and bad
 * values. 0, or -EINVAL and *cause (caller frees) when spec is not an
 * object. Free the warnings with fleet_warnings_free.
 */
int		 fleet_spec_config(const json_t *spec, char **text, size_t *len,
		     char ***warnings, size_t *nwarnings, char **cause);
void		 fleet_warnings_free(char **, size_t);

/*
 * The merge patch of this node's entry on an object's status, as the Go
 * agent writes it (new reference):
 * {"status":{"nodes":{"<node>":{"status":"Success"|"Failure",
 *  "generation":G,"errors":"<error or empty>","timestamp":"<RFC 3339 UTC>",
 *  "warnings":[...]}}}}. warnings are ours, omitted when none; the
 * timestamp is omitted when when is not within the years 0000..9999.
 * Text that is not UTF-8 is cleaned (utf8_clean).
 */
json_t		*fleet_status_patch(const char *node, int ok,
		     json_int_t generation, const char *error,
		     char *const *warnings, size_t nwarnings, time_t when);

/*
 * The config kept from the cluster for the next start (the daemon's
 * <state-dir>/cluster-config.json): the config bytes in force and the
 * object they came from. fleet_kept_doc gives the document's text (caller
 * frees); fleet_kept_parse reads it back: *text (len bytes, NUL-ended)
 * and *meta, the document without its config. 0, or -EINVAL and why.
 */
#define FLEET_KEPT_VERSION	1
char		*fleet_kept_doc(const char *ns, const char *name,
		     const char *uid, json_int_t generation, const char *rv,
		     time_t applied, const char *text, size_t len,
		     char *const *warnings, size_t nwarnings);
int		 fleet_kept_parse(const char *buf, size_t buflen, char **text,
		     size_t *len, json_t **meta, char **cause);

/* RFC 3339 in UTC, as metav1.Time marshals it ("2026-12-02T10:00:00Z");
 * -1 when when is not within the years 0000..9999. */
int		 fleet_timestamp(time_t when, char *buf, size_t size);

/* The merge patch that removes this node's entry (new reference):
 * {"status":{"nodes":{"<node>":null}}}. */
json_t		*fleet_status_clear(const char *node);

#endif
