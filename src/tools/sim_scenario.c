/*
 * The scenario mode of topoaware-sim: the policy driven by JSON lines, one
 * event a line (claim, release, create, update, remove, sync, reconfigure,
 * restart, show), each answered by one compact JSON line. A bad line gets
 * {"ok":false,"error":...} and the run goes on, so that a scenario can
 * check refusals as well as grants.
 */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "dradev.h"
#include "expr.h"
#include "nrtdoc.h"
#include "policy.h"
#include "quantity.h"
#include "sim.h"
#include "view.h"
#include "xmalloc.h"

/* The line being answered. */
struct line {
	const char		*op;
	json_t			*reply;	/* {"ok":true,...}, so far */
	char			*error;	/* the first problem */
	struct policy_effects	 fx;
};

/* A container_spec and the storage it points to. */
struct spec {
	struct container_spec	 s;
	struct policy_kv	*ann;
	struct policy_kv	*env;
	struct policy_kv	*labels;
	struct policy_kv	*pod_labels;
};

static int	op_claim(struct sim *, json_t *, struct line *);
static int	op_release(struct sim *, json_t *, struct line *);
static int	op_consumers(struct sim *, json_t *, struct line *);
static int	op_create(struct sim *, json_t *, struct line *);
static int	op_update(struct sim *, json_t *, struct line *);
static int	op_remove(struct sim *, json_t *, struct line *);
static int	op_sync(struct sim *, json_t *, struct line *);
static int	op_reconfigure(struct sim *, json_t *, struct line *);
static int	op_restart(struct sim *, json_t *, struct line *);
static int	op_show(struct sim *, json_t *, struct line *);
static int	op_start(struct sim *, json_t *, struct line *);
static int	op_time(struct sim *, json_t *, struct line *);
static int	op_explain(struct sim *, json_t *, struct line *);

#define SPEC_FIELDS \
	"id", "name", "pod", "podUID", "podName", "namespace", "qos", \
	"cpuRequest", "cpuLimit", "annotations", "env", "labels", "podLabels", \
	"kubeLabels", "memRequest", "memLimit", "oomScoreAdj"

static const char *const claim_fields[] = {
	"op", "uid", "results", "namespace", "name", "consumers", NULL
};
static const char *const consumers_fields[] = {
	"op", "uid", "namespace", "name", "consumers", NULL
};
static const char *const result_fields[] = { "device", "cpu", NULL };
static const char *const uid_fields[] = { "op", "uid", NULL };
static const char *const create_fields[] = { "op", SPEC_FIELDS, NULL };
static const char *const spec_fields[] = { SPEC_FIELDS, NULL };
static const char *const update_fields[] = {
	"op", "id", "cpuRequest", "cpuLimit", "memLimit", NULL
};
static const char *const id_fields[] = { "op", "id", NULL };
static const char *const start_fields[] = { "op", "id", "at", NULL };
static const char *const time_fields[] = { "op", "at", NULL };
static const char *const sync_fields[] = { "op", "containers", NULL };
static const char *const reconfigure_fields[] = { "op", "config", NULL };
static const char *const restart_fields[] = { "op", "config", NULL };
static const char *const show_fields[] = { "op", "what", NULL };

static const struct op {
	const char		 *name;
	const char *const	 *fields;
	int			(*fn)(struct sim *, json_t *, struct line *);
	int			  updates;	/* reply lists updates */
} ops[] = {
	{ "claim", claim_fields, op_claim, 1 },
	{ "release", uid_fields, op_release, 1 },
	{ "consumers", consumers_fields, op_consumers, 1 },
	{ "create", create_fields, op_create, 1 },
	{ "update", update_fields, op_update, 1 },
	{ "remove", id_fields, op_remove, 1 },
	{ "start", start_fields, op_start, 1 },
	{ "time", time_fields, op_time, 1 },
	{ "sync", sync_fields, op_sync, 1 },
	{ "reconfigure", reconfigure_fields, op_reconfigure, 1 },
	{ "restart", restart_fields, op_restart, 0 },
	{ "show", show_fields, op_show, 0 },
	{ "explain", id_fields, op_explain, 0 },
};

static const char *qos_names[] = { "BestEffort", "Burstable", "Guaranteed" };

static int	line_error(struct line *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));

/* Record the first problem of a line; always -1. */
static int
line_error(struct line *l, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (l->error != NULL)
		return (-1);
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = xstrdup("out of memory");
	va_end(ap);
	l->error = msg;
	return (-1);
}

/* A policy refusal, passed on as the policy words it. */
static int
line_cause(struct line *l, char *cause)
{
	line_error(l, "%s", cause != NULL ? cause : "failed");
	free(cause);
	return (-1);
}

static int
allowed(const char *const *fields, const char *key)
{
	for (; *fields != NULL; fields++)
		if (strcmp(*fields, key) == 0)
			return (1);
	return (0);
}

/* Unknown fields are errors, all of them named, in document order. */
static int
check_fields(struct line *l, json_t *o, const char *where,
    const char *const *fields)
{
	const char	*key;
	json_t		*v;
	char		*names = NULL, *tmp;
	int		 n = 0;

	json_object_foreach(o, key, v) {
		if (allowed(fields, key))
			continue;
		if (names == NULL)
			xasprintf(&names, "\"%s\"", key);
		else {
			xasprintf(&tmp, "%s, \"%s\"", names, key);
			free(names);
			names = tmp;
		}
		n++;
	}
	if (n == 0)
		return (0);
	line_error(l, "%s: unknown field%s %s", where, n > 1 ? "s" : "", names);
	free(names);
	return (-1);
}

static int
get_string(struct line *l, json_t *o, const char *where, const char *key,
    int required, const char **out)
{
	json_t	*v = json_object_get(o, key);

	*out = NULL;
	if (v == NULL) {
		if (required)
			return (line_error(l, "%s: \"%s\" is missing", where,
			    key));
		return (0);
	}
	if (!json_is_string(v))
		return (line_error(l, "%s: \"%s\" must be a string", where,
		    key));
	*out = json_string_value(v);
	return (0);
}

/* A CPU amount: a quantity string, or an integer meaning CPUs; -1 absent. */
static int
get_milli(struct line *l, json_t *o, const char *where, const char *key,
    long long *out)
{
	json_t		*v = json_object_get(o, key);
	json_int_t	 n;
	char		*cause = NULL;

	*out = -1;
	if (v == NULL)
		return (0);
	if (json_is_integer(v)) {
		n = json_integer_value(v);
		if (n < 0 || n > CPUSET_SETSIZE)
			return (line_error(l, "%s: \"%s\" %" JSON_INTEGER_FORMAT
			    " is out of range", where, key, n));
		*out = 1000LL * n;
		return (0);
	}
	if (!json_is_string(v))
		return (line_error(l, "%s: \"%s\" must be a quantity string or "
		    "an integer", where, key));
	if (quantity_parse_milli(json_string_value(v), out, &cause) != 0) {
		line_error(l, "%s: \"%s\": %s", where, key, cause);
		free(cause);
		return (-1);
	}
	return (0);
}

/*
 * A memory amount: a quantity string ("512Mi", "2G") or an integer of
 * bytes; -1 when absent.
 */
static int
get_bytes(struct line *l, json_t *o, const char *where, const char *key,
    long long *out)
{
	json_t		*v = json_object_get(o, key);
	long long	 milli;
	char		*cause = NULL;

	*out = -1;
	if (v == NULL)
		return (0);
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		if (*out < 0 || *out > POLICY_MAX_MEMORY)
			return (line_error(l, "%s: \"%s\" is out of range",
			    where, key));
		return (0);
	}
	if (!json_is_string(v))
		return (line_error(l, "%s: \"%s\" must be a quantity string or "
		    "an integer of bytes", where, key));
	if (quantity_parse_milli(json_string_value(v), &milli, &cause) != 0) {
		line_error(l, "%s: \"%s\": %s", where, key, cause);
		free(cause);
		return (-1);
	}
	*out = milli / 1000 + (milli % 1000 != 0);
	return (0);
}

/*
 * The runtime's word for a container's memory: its limit, and the OOM
 * score adjustment the kubelet gives it (from which the policy reads the
 * request back). A scenario may give the request instead, which is
 * turned into that adjustment as the kubelet does for a Burstable
 * container: 1000 - 1000 * request / capacity, kept within 3 to 999.
 */
static int
get_memory(const struct sim *S, struct line *l, json_t *o, const char *where,
    struct container_spec *s)
{
	json_t		*adj = json_object_get(o, "oomScoreAdj");
	long long	 req, lim, cap = 0, a;
	int		 i;

	if (get_bytes(l, o, where, "memRequest", &req) != 0 ||
	    get_bytes(l, o, where, "memLimit", &lim) != 0)
		return (-1);
	s->mem_limit = lim > 0 ? lim : 0;
	if (adj != NULL) {
		if (req >= 0)
			return (line_error(l, "%s: give \"memRequest\" or "
			    "\"oomScoreAdj\", not both", where));
		if (!json_is_integer(adj) || json_integer_value(adj) < -1000 ||
		    json_integer_value(adj) > 1000)
			return (line_error(l, "%s: \"oomScoreAdj\" must be an "
			    "integer from -1000 to 1000", where));
		s->has_oom = 1;
		s->oom_adj = (int)json_integer_value(adj);
		return (0);
	}
	if (req < 0)
		return (0);
	if (s->qos != QOS_BURSTABLE)
		return (line_error(l, "%s: \"memRequest\" is for Burstable "
		    "containers (Guaranteed ones request their limit)", where));
	for (i = 0; i < topology_nnodes(S->topo); i++)
		cap += (long long)topology_node(S->topo, i)->memory;
	if (cap <= 0)
		return (line_error(l, "%s: \"memRequest\" on a machine "
		    "without memory", where));
	a = 1000 - (req > cap ? 1000 : (long long)((__int128)req * 1000 /
	    cap));
	s->has_oom = 1;
	s->oom_adj = (int)(a < 3 ? 3 : a > 999 ? 999 : a);
	return (0);
}

/* An object of strings into key-value pairs (copies, caller frees). */
static int
get_kv(struct line *l, json_t *o, const char *where, const char *key,
    struct policy_kv **out, int *nout)
{
	json_t		*v = json_object_get(o, key), *s;
	const char	*k;
	int		 n = 0;

	*out = NULL;
	*nout = 0;
	if (v == NULL)
		return (0);
	if (!json_is_object(v))
		return (line_error(l, "%s: \"%s\" must be an object of strings",
		    where, key));
	*out = xcalloc(json_object_size(v) + 1, sizeof **out);
	json_object_foreach(v, k, s) {
		if (!json_is_string(s))
			return (line_error(l, "%s: \"%s\": \"%s\" must be a "
			    "string", where, key, k));
		(*out)[n].key = xstrdup(k);
		(*out)[n].value = xstrdup(json_string_value(s));
		*nout = ++n;
	}
	return (0);
}

/*
 * "kubeLabels": bits of the kubelet's labels that copy a field (expr.h),
 * as the journal writes them; each becomes that label again.
 */
static int
get_kube_labels(struct line *l, json_t *o, const char *where,
    struct spec *sp)
{
	json_t		*v = json_object_get(o, "kubeLabels");
	json_int_t	 bits;
	const char	*f;
	int		 i;

	if (v == NULL)
		return (0);
	if (!json_is_integer(v) || (bits = json_integer_value(v)) < 0 ||
	    bits >= (1 << EXPR_KUBE_LABELS))
		return (line_error(l, "%s: \"kubeLabels\" must be an integer "
		    "from 0 to %d", where, (1 << EXPR_KUBE_LABELS) - 1));
	for (i = 0; i < EXPR_KUBE_LABELS; i++) {
		if (!(bits & (1 << i)))
			continue;
		f = expr_kube_field(i, sp->s.name, sp->s.namespace,
		    sp->s.pod, sp->s.pod_name, sp->s.pod_uid);
		if (f == NULL)
			return (line_error(l, "%s: \"kubeLabels\": %s copies "
			    "a field the container lacks", where,
			    expr_kube_key(i)));
		sp->labels = xreallocarray(sp->labels,
		    (size_t)sp->s.nlabels + 1, sizeof *sp->labels);
		sp->labels[sp->s.nlabels].key = xstrdup(expr_kube_key(i));
		sp->labels[sp->s.nlabels++].value = xstrdup(f);
	}
	return (0);
}

static void
kv_free(struct policy_kv *kv, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static void
spec_clear(struct spec *sp)
{
	kv_free(sp->ann, sp->s.nannotations);
	kv_free(sp->env, sp->s.nenv);
	kv_free(sp->labels, sp->s.nlabels);
	kv_free(sp->pod_labels, sp->s.npod_labels);
	memset(sp, 0, sizeof *sp);
}

/* The create fields of o (which must be an object) into sp; strings are
 * borrowed from o. */
static int
get_spec(const struct sim *S, struct line *l, json_t *o, const char *where,
    const char *const *fields, struct spec *sp)
{
	const char	*qos;
	int		 i;

	memset(sp, 0, sizeof *sp);
	if (check_fields(l, o, where, fields) != 0 ||
	    get_string(l, o, where, "id", 1, &sp->s.id) != 0 ||
	    get_string(l, o, where, "name", 0, &sp->s.name) != 0 ||
	    get_string(l, o, where, "pod", 0, &sp->s.pod) != 0 ||
	    get_string(l, o, where, "podUID", 0, &sp->s.pod_uid) != 0 ||
	    get_string(l, o, where, "podName", 0, &sp->s.pod_name) != 0 ||
	    get_string(l, o, where, "namespace", 0, &sp->s.namespace) != 0 ||
	    get_string(l, o, where, "qos", 1, &qos) != 0 ||
	    get_milli(l, o, where, "cpuRequest", &sp->s.cpu_request) != 0 ||
	    get_milli(l, o, where, "cpuLimit", &sp->s.cpu_limit) != 0 ||
	    get_kv(l, o, where, "annotations", &sp->ann,
	    &sp->s.nannotations) != 0 ||
	    get_kv(l, o, where, "env", &sp->env, &sp->s.nenv) != 0 ||
	    get_kv(l, o, where, "labels", &sp->labels, &sp->s.nlabels) != 0 ||
	    get_kv(l, o, where, "podLabels", &sp->pod_labels,
	    &sp->s.npod_labels) != 0 ||
	    get_kube_labels(l, o, where, sp) != 0)
		return (-1);
	sp->s.annotations = sp->ann;
	sp->s.env = sp->env;
	sp->s.labels = sp->labels;
	sp->s.pod_labels = sp->pod_labels;
	for (i = 0; i < 3; i++)
		if (strcmp(qos, qos_names[i]) == 0)
			break;
	if (i == 3)
		return (line_error(l, "%s: \"qos\" must be BestEffort, "
		    "Burstable or Guaranteed, not \"%s\"", where, qos));
	sp->s.qos = (enum qos_class)i;
	return (get_memory(S, l, o, where, &sp->s));
}

/* cpus and mems of a pinning; null when the runtime is not told any. */
static void
pinning_json(json_t *o, const struct pinning *p)
{
	json_object_set_new(o, "cpus", p->pin_cpus ? view_cpuset(&p->cpus) :
	    json_null());
	json_object_set_new(o, "mems", p->pin_mems ? view_cpuset(&p->mems) :
	    json_null());
}

/* The pool a created or updated container was placed in. */
static void
pool_json(json_t *o, const struct policy_effects *fx)
{
	json_object_set_new(o, "pool", fx->self_pool != NULL ?
	    json_string(fx->self_pool) : json_null());
}

static int
id_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The moved containers sorted by id: the policy names them in no order,
 * which a scenario's reply must not show. */
static json_t *
updates_json(const struct policy *P, const struct policy_effects *fx)
{
	const struct pinning	*p;
	json_t			*a = json_array(), *o;
	char			**ids;
	int			 i;

	ids = xreallocarray(NULL, (size_t)(fx->nupdates > 0 ? fx->nupdates :
	    1), sizeof *ids);
	for (i = 0; i < fx->nupdates; i++)
		ids[i] = fx->updates[i].id;
	qsort(ids, (size_t)fx->nupdates, sizeof *ids, id_cmp);
	/* Right after the operation, what the policy holds is what moved. */
	for (i = 0; i < fx->nupdates; i++) {
		o = json_pack("{s:s}", "id", ids[i]);
		if ((p = policy_pinning(P, ids[i])) != NULL)
			pinning_json(o, p);
		json_array_append_new(a, o);
	}
	free(ids);
	return (a);
}

static json_t *
strings_json(char **v, int n)
{
	json_t	*a = json_array();
	int	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return (a);
}

/*
 * A claim's namespace, name and consumers (the pod UIDs of its
 * reservedFor); without "consumers" they are not known, as for a claim
 * saved by an older version. meta->pods borrows from o; free the array.
 */
static int
get_meta(struct line *l, json_t *o, const char *where, struct claim_meta *m,
    const char ***pods)
{
	json_t	*a, *v;
	size_t	 i;

	memset(m, 0, sizeof *m);
	*pods = NULL;
	if (get_string(l, o, where, "namespace", 0, &m->ns) != 0 ||
	    get_string(l, o, where, "name", 0, &m->name) != 0)
		return (-1);
	if ((a = json_object_get(o, "consumers")) == NULL)
		return (0);
	if (!json_is_array(a))
		return (line_error(l, "%s: \"consumers\" must be an array of "
		    "pod UIDs", where));
	m->known = 1;
	*pods = xcalloc(json_array_size(a) + 1, sizeof **pods);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			free(*pods);
			*pods = NULL;
			return (line_error(l, "%s: consumers[%zu] must be a "
			    "string", where, i));
		}
		(*pods)[i] = json_string_value(v);
	}
	m->pods = *pods;
	m->npods = (int)json_array_size(a);
	return (0);
}

static int
op_consumers(struct sim *S, json_t *o, struct line *l)
{
	struct claim_meta	 meta;
	const char		*uid, **pods = NULL;
	char			*cause = NULL;
	int			 rc;

	if (get_string(l, o, "consumers", "uid", 1, &uid) != 0 ||
	    get_meta(l, o, "consumers", &meta, &pods) != 0)
		return (-1);
	rc = policy_claim_consumers(S->P, uid, &meta, &l->fx, &cause);
	free(pods);
	if (rc != 0) {
		line_cause(l, cause);
		return (-1);
	}
	json_object_set_new(l->reply, "updates", updates_json(S->P,
	    &l->fx));
	return (0);
}

static int
op_claim(struct sim *S, json_t *o, struct line *l)
{
	struct claim_meta	 meta;
	const char		**pods = NULL;
	struct claim_result	*res = NULL;
	char			(*num)[32] = NULL;
	char			 where[64];
	const char		*uid;
	json_t			*results, *r, *cpu;
	char			*cause = NULL;
	size_t			 i, n;
	int			 rc = -1;

	memset(&meta, 0, sizeof meta);
	if (get_string(l, o, "claim", "uid", 1, &uid) != 0)
		return (-1);
	if ((results = json_object_get(o, "results")) == NULL)
		return (line_error(l, "claim: \"results\" is missing"));
	if (!json_is_array(results))
		return (line_error(l, "claim: \"results\" must be an array"));
	n = json_array_size(results);
	res = xcalloc(n + 1, sizeof *res);
	num = xcalloc(n + 1, sizeof *num);
	json_array_foreach(results, i, r) {
		snprintf(where, sizeof where, "claim: results[%zu]", i);
		if (!json_is_object(r)) {
			line_error(l, "%s must be an object", where);
			goto out;
		}
		if (check_fields(l, r, where, result_fields) != 0 ||
		    get_string(l, r, where, "device", 1, &res[i].device) != 0)
			goto out;
		if ((cpu = json_object_get(r, "cpu")) == NULL)
			continue;
		if (json_is_integer(cpu)) {
			snprintf(num[i], sizeof num[i], "%" JSON_INTEGER_FORMAT,
			    json_integer_value(cpu));
			res[i].cpu = num[i];
		} else if (json_is_string(cpu))
			res[i].cpu = json_string_value(cpu);
		else {
			line_error(l, "%s: \"cpu\" must be a quantity string "
			    "or an integer", where);
			goto out;
		}
	}
	if (get_meta(l, o, "claim", &meta, &pods) != 0)
		goto out;
	if (policy_claim(S->P, uid, res, (int)n, &meta, &l->fx, &cause) != 0) {
		line_cause(l, cause);
		goto out;
	}
	json_object_set_new(l->reply, "cpus", view_cpuset(&l->fx.claim_cpus));
	json_object_set_new(l->reply, "edits", strings_json(l->fx.edits,
	    l->fx.nedits));
	rc = 0;
out:
	free(pods);
	free(res);
	free(num);
	return (rc);
}

static int
op_release(struct sim *S, json_t *o, struct line *l)
{
	const char	*uid;

	if (get_string(l, o, "release", "uid", 1, &uid) != 0)
		return (-1);
	if (policy_release(S->P, uid, &l->fx) != 0)
		return (line_error(l, "release: failed"));
	return (0);
}

static int
op_create(struct sim *S, json_t *o, struct line *l)
{
	struct spec	 sp;
	char		*cause = NULL;
	int		 rc = -1;

	if (get_spec(S, l, o, "create", create_fields, &sp) != 0)
		goto out;
	if (policy_create(S->P, &sp.s, &l->fx, &cause) != 0) {
		line_cause(l, cause);
		goto out;
	}
	pinning_json(l->reply, &l->fx.self);
	pool_json(l->reply, &l->fx);
	rc = 0;
out:
	spec_clear(&sp);
	return (rc);
}

static int
op_update(struct sim *S, json_t *o, struct line *l)
{
	const char	*id;
	long long	 req, lim, mem;
	char		*cause = NULL;

	if (get_string(l, o, "update", "id", 1, &id) != 0 ||
	    get_milli(l, o, "update", "cpuRequest", &req) != 0 ||
	    get_milli(l, o, "update", "cpuLimit", &lim) != 0 ||
	    get_bytes(l, o, "update", "memLimit", &mem) != 0)
		return (-1);
	if (policy_update(S->P, id, req, lim, mem, &l->fx, &cause) != 0)
		return (line_cause(l, cause));
	pinning_json(l->reply, &l->fx.self);
	pool_json(l->reply, &l->fx);
	return (0);
}

static int
op_remove(struct sim *S, json_t *o, struct line *l)
{
	const char	*id;

	if (get_string(l, o, "remove", "id", 1, &id) != 0)
		return (-1);
	if (policy_remove(S->P, id, &l->fx) != 0)
		return (line_error(l, "remove: failed"));
	return (0);
}

/* A time in ms of the scenario's clock: a whole number from 0. */
static int
get_at(struct line *l, json_t *o, const char *where, long long *at)
{
	json_t	*v = json_object_get(o, "at");

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (1LL << 52))
		return (line_error(l, "%s: \"at\" must be a time in ms, a "
		    "whole number from 0", where));
	*at = json_integer_value(v);
	return (0);
}

static int
op_start(struct sim *S, json_t *o, struct line *l)
{
	const char	*id;
	long long	 at;

	if (get_string(l, o, "start", "id", 1, &id) != 0 ||
	    get_at(l, o, "start", &at) != 0)
		return (-1);
	if (policy_pinning(S->P, id) == NULL)
		return (line_error(l, "start: no container %s", id));
	if (policy_start(S->P, id, at, &l->fx) != 0)
		return (line_error(l, "start: failed"));
	if ((at = policy_cold_next(S->P)) != 0)
		json_object_set_new(l->reply, "coldNext", json_integer(at));
	return (0);
}

static int
op_time(struct sim *S, json_t *o, struct line *l)
{
	long long	at;
	int		n;

	if (get_at(l, o, "time", &at) != 0)
		return (-1);
	n = policy_cold_due(S->P, at, &l->fx);
	json_object_set_new(l->reply, "coldStarts", json_integer(n));
	if ((at = policy_cold_next(S->P)) != 0)
		json_object_set_new(l->reply, "coldNext", json_integer(at));
	return (0);
}

static int
op_sync(struct sim *S, json_t *o, struct line *l)
{
	struct spec		*sps = NULL;
	struct container_spec	*specs = NULL;
	json_t			*a, *c;
	char			 where[64];
	char			*cause = NULL;
	size_t			 i, n;
	int			 rc = -1;

	if ((a = json_object_get(o, "containers")) == NULL)
		return (line_error(l, "sync: \"containers\" is missing"));
	if (!json_is_array(a))
		return (line_error(l, "sync: \"containers\" must be an array"));
	n = json_array_size(a);
	sps = xcalloc(n + 1, sizeof *sps);
	specs = xcalloc(n + 1, sizeof *specs);
	json_array_foreach(a, i, c) {
		snprintf(where, sizeof where, "sync: containers[%zu]", i);
		if (!json_is_object(c)) {
			line_error(l, "%s must be an object", where);
			goto out;
		}
		if (get_spec(S, l, c, where, spec_fields, &sps[i]) != 0)
			goto out;
		specs[i] = sps[i].s;
	}
	if (policy_sync(S->P, specs, (int)n, &l->fx, &cause) != 0) {
		line_cause(l, cause);
		goto out;
	}
	rc = 0;
out:
	/* get_spec clears nothing on failure: every entry is freed here. */
	for (i = 0; i < n; i++)
		spec_clear(&sps[i]);
	free(sps);
	free(specs);
	return (rc);
}

/* The "config" of op's line o, a topoawared.json document: *cfg, or
 * NULL when it is left out and not required. */
static int
get_config(struct line *l, json_t *o, const char *op, int required,
    struct config **cfg)
{
	json_t	*doc;
	char	*cause = NULL;

	*cfg = NULL;
	if ((doc = json_object_get(o, "config")) == NULL)
		return (required ? line_error(l, "%s: \"config\" is missing",
		    op) : 0);
	if (!json_is_object(doc))
		return (line_error(l, "%s: \"config\" must be an object",
		    op));
	if (config_from_json(doc, cfg, &cause) != 0) {
		line_error(l, "%s: config: %s", op, cause);
		free(cause);
		return (-1);
	}
	return (0);
}

static int
op_reconfigure(struct sim *S, json_t *o, struct line *l)
{
	struct config	*cfg;
	char		*cause = NULL;
	int		 rc;

	if (get_config(l, o, "reconfigure", 1, &cfg) != 0)
		return (-1);
	/* As topoawared's reload: keys that need a restart are refused. */
	if ((rc = config_check_reload(policy_config(S->P), cfg, &cause)) == 0)
		rc = policy_reconfigure(S->P, cfg, &l->fx, &cause);
	config_free(cfg);
	if (rc != 0)
		return (line_cause(l, cause));
	return (0);
}

/*
 * A restart of the daemon: the state document goes through its text form,
 * as it would through the state file, and a new policy is built from it,
 * with "config" when given (changed while the daemon was down: every key
 * applies). A saved container that config cannot place falls back, as
 * topoawared's start logs it: the reply's warnings say so.
 */
static int
op_restart(struct sim *S, json_t *o, struct line *l)
{
	struct policy	*N = NULL;
	struct config	*cfg;
	json_t		*doc;
	json_error_t	 err;
	char		*text, *cause = NULL, **warnings = NULL;
	int		 rc, i, nwarnings = 0;

	if (get_config(l, o, "restart", 0, &cfg) != 0)
		return (-1);
	doc = policy_save(S->P);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (text == NULL) {
		config_free(cfg);
		return (line_error(l, "restart: cannot write the state"));
	}
	doc = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	free(text);
	if (doc == NULL) {
		config_free(cfg);
		return (line_error(l, "restart: cannot read the state back: %s",
		    err.text));
	}
	rc = policy_restore_warn(S->topo, cfg != NULL ? cfg :
	    policy_config(S->P), doc, &N, &warnings, &nwarnings, &cause);
	json_decref(doc);
	config_free(cfg);
	if (rc != 0) {
		line_error(l, "restart: %s", cause);
		free(cause);
		return (-1);
	}
	/* Handed to the reply's warnings, as an operation's are. */
	if (nwarnings > 0) {
		l->fx.warnings = xreallocarray(l->fx.warnings,
		    (size_t)(l->fx.nwarnings + nwarnings),
		    sizeof *l->fx.warnings);
		for (i = 0; i < nwarnings; i++)
			l->fx.warnings[l->fx.nwarnings++] = warnings[i];
	}
	free(warnings);
	policy_free(S->P);
	S->P = N;
	json_object_set_new(l->reply, "containers",
	    json_integer(policy_ncontainers(N)));
	json_object_set_new(l->reply, "claims",
	    json_integer(policy_nclaims(N)));
	return (0);
}

static int
op_show(struct sim *S, json_t *o, struct line *l)
{
	struct dradev	*devs;
	const char	*what;
	json_t		*v;
	int		 n;

	if (get_string(l, o, "show", "what", 1, &what) != 0)
		return (-1);
	if (strcmp(what, "grants") == 0)
		v = policy_grants_json(S->P);
	else if (strcmp(what, "pools") == 0)
		v = policy_pools_json(S->P);
	else if (strcmp(what, "devices") == 0) {
		n = policy_devices(S->P, &devs);
		v = view_devices(devs, n);
	} else if (strcmp(what, "nrt") == 0)
		v = nrtdoc_build(S->P);
	else
		return (line_error(l, "show: \"what\" must be grants, pools, "
		    "devices or nrt, not \"%s\"", what));
	json_object_set_new(l->reply, what, v);
	return (0);
}

/* Why a container or claim ("claim:<uid>") holds what it holds. */
static int
op_explain(struct sim *S, json_t *o, struct line *l)
{
	const char	*id;
	char		*cause = NULL;
	json_t		*v;
	int		 rc;

	if (get_string(l, o, "explain", "id", 1, &id) != 0)
		return (-1);
	if ((v = policy_explain(S->P, id, &cause)) == NULL) {
		rc = line_error(l, "explain: %s", cause);
		free(cause);
		return (rc);
	}
	json_object_set_new(l->reply, "explain", v);
	return (0);
}

/* The reply to one event, doc NULL when its text was not JSON (err). */
static json_t *
answer_doc(struct sim *S, json_t *doc, const json_error_t *err)
{
	struct line	 l;
	const struct op	*op = NULL;
	json_t		*reply;
	size_t		 i;

	memset(&l, 0, sizeof l);
	policy_effects_init(&l.fx);
	l.reply = json_pack("{s:b}", "ok", 1);
	if (doc == NULL)
		line_error(&l, "not valid JSON: %s (column %d)", err->text,
		    err->column);
	else if (!json_is_object(doc))
		line_error(&l, "not a JSON object");
	else if (json_object_get(doc, "op") == NULL)
		line_error(&l, "\"op\" is missing");
	else if ((l.op = json_string_value(json_object_get(doc, "op"))) ==
	    NULL)
		line_error(&l, "\"op\" must be a string");
	else {
		for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
			if (strcmp(ops[i].name, l.op) == 0)
				op = &ops[i];
		if (op == NULL)
			line_error(&l, "unknown op \"%s\"", l.op);
		else if (check_fields(&l, doc, op->name, op->fields) == 0 &&
		    op->fn(S, doc, &l) == 0 && op->updates)
			json_object_set_new(l.reply, "updates",
			    updates_json(S->P, &l.fx));
	}
	if (l.error != NULL) {
		json_decref(l.reply);
		l.reply = json_pack("{s:b, s:s}", "ok", 0, "error", l.error);
	}
	if (l.fx.nwarnings > 0)
		json_object_set_new(l.reply, "warnings",
		    strings_json(l.fx.warnings, l.fx.nwarnings));
	if (l.fx.nrefused > 0)
		json_object_set_new(l.reply, "refused",
		    strings_json(l.fx.refused, l.fx.nrefused));
	reply = l.reply;
	free(l.error);
	policy_effects_clear(&l.fx);
	return (reply);
}

json_t *
sim_answer(struct sim *S, json_t *event)
{
	return (answer_doc(S, event, NULL));
}

/* The reply to one line of text (new reference). */
static json_t *
answer(struct sim *S, const char *text, size_t len)
{
	json_t		*doc, *reply;
	json_error_t	 err;

	doc = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
	    &err);
	reply = answer_doc(S, doc, &err);
	json_decref(doc);
	return (reply);
}

static int
blank(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return (0);
	return (1);
}

int
sim_scenario(const struct topology *t, const struct config *cfg,
    const char *path)
{
	struct sim	 S;
	FILE		*f;
	json_t		*reply;
	char		*buf = NULL, *cause = NULL;
	size_t		 size = 0;
	ssize_t		 len;
	int		 rc = 0, wr;

	if (strcmp(path, "-") == 0) {
		f = stdin;
		path = "(stdin)";
	} else if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "topoaware-sim: %s: %s\n", path,
		    strerror(errno));
		return (1);
	}
	S.topo = t;
	if (policy_new(t, cfg, &S.P, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: %s\n", cause);
		free(cause);
		if (f != stdin)
			fclose(f);
		return (1);
	}
	while ((len = getline(&buf, &size, f)) != -1) {
		if (blank(buf, (size_t)len))
			continue;
		reply = answer(&S, buf, (size_t)len);
		wr = json_dumpf(reply, stdout, JSON_COMPACT);
		json_decref(reply);
		if (wr != 0 || fputc('\n', stdout) == EOF ||
		    fflush(stdout) != 0) {
			fprintf(stderr, "topoaware-sim: cannot write: %s\n",
			    strerror(errno));
			rc = 1;
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "topoaware-sim: %s: %s\n", path,
		    strerror(errno));
		rc = 1;
	}
	free(buf);
	if (f != stdin)
		fclose(f);
	policy_free(S.P);
	return (rc);
}
