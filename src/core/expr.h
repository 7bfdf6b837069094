/*
 * Expressions that select containers, as the Go policy's affinity
 * scopes and matches write them: a key (id, name, namespace, qosclass,
 * labels/<k>, tags/<k>, pod/<key>, or a joint key of several), an
 * operator and values. Keys are checked and compiled when parsed, so an
 * evaluation only compares strings.
 */
#ifndef TOPOAWARE_EXPR_H
#define TOPOAWARE_EXPR_H

#include "policy.h"

/* Bounds on what one expression may hold. */
#define EXPR_MAX_VALUES		128
#define EXPR_MAX_JOINT		16	/* keys in a joint key */

enum expr_op {
	EXPR_EQUALS = 0,
	EXPR_NOTEQUAL,
	EXPR_IN,
	EXPR_NOTIN,
	EXPR_EXISTS,
	EXPR_NOTEXIST,
	EXPR_ALWAYSTRUE,
	EXPR_MATCHES,
	EXPR_MATCHESNOT,
	EXPR_MATCHESANY,
	EXPR_MATCHESNONE
};

/* What a (single) key resolves to on a container. */
enum expr_attr {
	ATTR_NEVER = 0,		/* resolves on no container (tags, uid) */
	ATTR_ID,
	ATTR_NAME,
	ATTR_NS,
	ATTR_QOS,
	ATTR_LABEL,		/* the container's label .label */
	ATTR_POD_NAME,		/* the rest: only when it has a pod */
	ATTR_POD_NS,
	ATTR_POD_QOS,
	ATTR_POD_LABEL,
	ATTR_POD_ID,
	ATTR_POD_UID
};

struct expr_key {
	enum expr_attr	 attr;
	char		*label;		/* the label's key, for *_LABEL */
};

struct expr {
	enum expr_op	 op;
	int		 nkeys;		/* 0 with ALWAYSTRUE and no key */
	struct expr_key	*keys;
	int		 joint;		/* a joint key: values joined by vsep */
	char		 vsep;
	int		 nvalues;
	char		**values;
};

/*
 * The labels the kubelet gives every container, each a copy of a field:
 * io.kubernetes.container.name (the name), .pod.name, .pod.namespace and
 * .pod.uid. A container keeps one as a bit of kube_labels, not as a
 * label, when it equals its field (most of a container's label bytes).
 */
#define EXPR_KUBE_LABELS	4
int	expr_kube_label(const char *);		/* its index, or -1 */
const char *expr_kube_key(int);
enum expr_attr expr_kube_attr(int);		/* the field it copies */
/* That field of a container, or NULL when it has none (a pod's fields
 * need the pod). */
const char *expr_kube_field(int, const char *name, const char *ns,
	    const char *pod, const char *pod_name, const char *pod_uid);

/* What expressions look at: one container and its pod. */
struct expr_subject {
	const char		*id;
	const char		*name;
	const char		*ns;
	enum qos_class		 qos;
	const struct policy_kv	*labels;
	int			 nlabels;
	unsigned		 kube_labels;	/* bits by expr_kube_label */
	int			 has_pod;
	const char		*pod_id;
	const char		*pod_uid;
	const char		*pod_name;
	const struct policy_kv	*pod_labels;
	int			 npod_labels;
};

/* The operator named so (Equals, NotEqual, ...), or -1. */
int	expr_op_parse(const char *);
const char *expr_op_name(enum expr_op);
/*
 * Compiles key with op and values (copied) into e, checked as the Go
 * policy checks them; a pattern that cannot match is refused too.
 * On failure e is empty and *cause says why (no position).
 */
int	expr_init(struct expr *, const char *key, enum expr_op,
	    const char *const *values, int nvalues, char **cause);
void	expr_clear(struct expr *);
int	expr_eval(const struct expr *, const struct expr_subject *);
/* What one key resolves to on s: 1 and *value, or 0 (not there). */
int	expr_key_value(const struct expr_key *, const struct expr_subject *,
	    const char **value);
const char *expr_qos_name(enum qos_class);
/* Go's filepath.Match on Linux: 1 match, 0 none, -1 bad pattern. */
int	expr_glob(const char *pattern, const char *s);

#endif
