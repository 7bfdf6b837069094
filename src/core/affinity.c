/*
 * affinity.c parses the affinity annotations with libyaml's document
 * loader (from memory; no I/O). The short form is tried first, as in Go:
 * a map whose values are all lists of names. Anything else must be the
 * full form, read strictly: unknown and repeated keys are errors, as are
 * YAML aliases (one annotation must not expand into many rules).
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yamldoc.h"

#include "affinity.h"
#include "strmap.h"
#include "xmalloc.h"

struct yctx {
	yaml_document_t	 doc;
	unsigned char	*seen;		/* by node index: already read */
	size_t		 nnodes;
	char		**cause;
};

static int
fail(struct yctx *y, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((__format__(__printf__, 3, 4)));

static int
fail(struct yctx *y, const yaml_node_t *n, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (y->cause == NULL || *y->cause != NULL)
		return (-1);
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (n != NULL)
		xasprintf(y->cause, "line %zu, column %zu: %s",
		    (size_t)n->start_mark.line + 1,
		    (size_t)n->start_mark.column + 1, msg ? msg : "error");
	else
		xasprintf(y->cause, "%s", msg ? msg : "error");
	free(msg);
	return (-1);
}

/* Node idx, each read once: a second read is an alias. */
static yaml_node_t *
node(struct yctx *y, int idx, const yaml_node_t *from)
{
	yaml_node_t	*n = yaml_document_get_node(&y->doc, idx);

	if (n == NULL) {
		fail(y, from, "bad YAML node");
		return (NULL);
	}
	if (y->seen[idx - 1]) {
		fail(y, from, "YAML aliases are not supported");
		return (NULL);
	}
	y->seen[idx - 1] = 1;
	return (n);
}

static int
is_null(const yaml_node_t *n)
{
	const char	*v = (const char *)n->data.scalar.value;

	if (n->type != YAML_SCALAR_NODE)
		return (0);
	if (n->tag != NULL && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
		return (1);
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return (0);
	return (strcmp(v, "") == 0 || strcmp(v, "~") == 0 ||
	    strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	    strcmp(v, "NULL") == 0);
}

/* A string scalar (no NUL inside), else NULL. */
static const char *
text(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || is_null(n) ||
	    strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return (NULL);
	return ((const char *)n->data.scalar.value);
}

static void
seen_reset(struct yctx *y)
{
	memset(y->seen, 0, y->nnodes);
}

/* The short form. */

/* Distinct names, in order; a pod's annotation may hold thousands. */
struct names {
	int		  n;
	char		**v;
	struct strmap	 *seen;
};

static void
names_add(struct names *s, const char *name)
{
	if (s->seen == NULL)
		s->seen = strmap_new();
	else if (strmap_get(s->seen, name) != NULL)
		return;
	s->v = xreallocarray(s->v, (size_t)s->n + 1, sizeof *s->v);
	s->v[s->n] = xstrdup(name);
	strmap_put(s->seen, s->v[s->n], s->v[s->n]);
	s->n++;
}

static void
names_clear(struct names *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	strmap_free(s->seen);
	memset(s, 0, sizeof *s);
}

/*
 * 1 when root is the short form, with the names name is drawn to (both
 * ways) in *out; 0 when it is not that form; -1 on an alias.
 */
static int
short_form(struct yctx *y, const yaml_node_t *root, const char *name,
    struct names *out)
{
	yaml_node_pair_t	*pr;
	yaml_node_item_t	*it;
	yaml_node_t		*k, *v, *e;
	struct strmap		*keys;
	const char		*ks, *es;
	int			 rc = 1;

	if (is_null(root))
		return (1);
	if (root->type != YAML_MAPPING_NODE)
		return (0);
	keys = strmap_new();
	for (pr = root->data.mapping.pairs.start;
	    rc == 1 && pr < root->data.mapping.pairs.top; pr++) {
		if ((k = node(y, pr->key, root)) == NULL ||
		    (v = node(y, pr->value, root)) == NULL) {
			rc = -1;
			break;
		}
		if ((ks = text(k)) == NULL || strmap_get(keys, ks) != NULL) {
			rc = 0;
			break;
		}
		strmap_put(keys, ks, k);
		if (is_null(v))
			continue;
		if (v->type != YAML_SEQUENCE_NODE) {
			rc = 0;
			break;
		}
		for (it = v->data.sequence.items.start;
		    it < v->data.sequence.items.top; it++) {
			if ((e = node(y, *it, v)) == NULL) {
				rc = -1;
				break;
			}
			if ((es = text(e)) == NULL) {
				rc = 0;
				break;
			}
			if (strcmp(ks, name) == 0)
				names_add(out, es);
			if (strcmp(es, name) == 0)
				names_add(out, ks);
		}
	}
	strmap_free(keys);
	if (rc != 1)
		names_clear(out);
	return (rc);
}

/*
 * The values of map n by field: out[i] for names[i] (NULL when not
 * given). Any other key, or one given twice, is an error; what prefixes
 * the message when not NULL.
 */
static int
get_fields(struct yctx *y, const yaml_node_t *n, const char *what,
    const char *const *names, int nnames, yaml_node_t **out)
{
	yaml_node_pair_t	*pr;
	yaml_node_t		*k, *v;
	const char		*ks, *sep = what ? ": " : "";
	int			 i;

	for (i = 0; i < nnames; i++)
		out[i] = NULL;
	if (what == NULL)
		what = "";
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	    pr++) {
		if ((k = node(y, pr->key, n)) == NULL ||
		    (v = node(y, pr->value, n)) == NULL)
			return (-1);
		ks = text(k);
		for (i = 0; ks != NULL && i < nnames; i++)
			if (strcmp(ks, names[i]) == 0)
				break;
		if (ks == NULL || i == nnames)
			return (fail(y, k, "%s%sunknown field \"%s\"", what,
			    sep, ks ? ks : "?"));
		if (out[i] != NULL)
			return (fail(y, k, "%s%s\"%s\" given twice", what, sep,
			    ks));
		out[i] = v;
	}
	return (0);
}

/* The full form. */

static int
get_expr(struct yctx *y, const yaml_node_t *n, const char *what,
    struct expr *e)
{
	static const char *const names[] = { "key", "operator", "values" };
	yaml_node_item_t	*it;
	yaml_node_t		*f[3], *keyn, *opn, *vals, *v;
	const char		*key = "", *op = "", **values = NULL;
	char			*why = NULL;
	int			 nvalues = 0, opi, rc;

	if (n->type != YAML_MAPPING_NODE)
		return (fail(y, n, "%s: expected a map of key, operator and "
		    "values", what));
	if (get_fields(y, n, what, names, 3, f) != 0)
		return (-1);
	keyn = f[0];
	opn = f[1];
	vals = f[2];
	if (keyn != NULL && !is_null(keyn) && (key = text(keyn)) == NULL)
		return (fail(y, keyn, "%s: key: expected a string", what));
	if (opn != NULL && !is_null(opn) && (op = text(opn)) == NULL)
		return (fail(y, opn, "%s: operator: expected a string", what));
	if ((opi = expr_op_parse(op)) < 0) {
		/* A bad key is told first, as Go checks it first. */
		if (*key != '\0' && expr_init(e, key, EXPR_EXISTS, NULL, 0,
		    &why) != 0) {
			fail(y, n, "%s: %s", what, why);
			free(why);
			return (-1);
		}
		expr_clear(e);
		return (fail(y, opn ? opn : n, "%s: unknown operator \"%s\"",
		    what, op));
	}
	if (vals != NULL && !is_null(vals)) {
		if (vals->type != YAML_SEQUENCE_NODE)
			return (fail(y, vals, "%s: values: expected a list of "
			    "strings", what));
		values = xcalloc((size_t)(vals->data.sequence.items.top -
		    vals->data.sequence.items.start) + 1, sizeof *values);
		for (it = vals->data.sequence.items.start;
		    it < vals->data.sequence.items.top; it++) {
			if ((v = node(y, *it, vals)) == NULL) {
				free(values);
				return (-1);
			}
			if ((values[nvalues++] = text(v)) == NULL) {
				free(values);
				return (fail(y, v, "%s: values: expected a "
				    "string", what));
			}
		}
	}
	rc = expr_init(e, key, (enum expr_op)opi, values, nvalues, &why);
	free(values);
	if (rc != 0) {
		fail(y, n, "%s: %s", what, why);
		free(why);
		return (-1);
	}
	return (0);
}

static int
get_weight(struct yctx *y, const yaml_node_t *n, int *w)
{
	const char	*s;
	char		*end;
	long long	 v;

	*w = 0;
	if (is_null(n))
		return (0);
	if ((s = text(n)) == NULL || n->data.scalar.style !=
	    YAML_PLAIN_SCALAR_STYLE)
		return (fail(y, n, "weight: expected an integer"));
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || v < INT32_MIN ||
	    v > INT32_MAX)
		return (fail(y, n, "weight: expected an integer, not \"%s\"",
		    s));
	*w = (int)v;
	return (0);
}

static void
affinity_clear(struct affinity *a)
{
	expr_clear(&a->scope);
	expr_clear(&a->match);
}

/* One affinity of the full form; weight is the annotation's default. */
static int
get_affinity(struct yctx *y, const yaml_node_t *n, int weight,
    struct affinity *a)
{
	static const char *const names[] = { "scope", "match", "weight" };
	yaml_node_t		*f[3], *scope, *match, *wn;

	memset(a, 0, sizeof *a);
	if (n->type != YAML_MAPPING_NODE)
		return (fail(y, n, "expected a map of scope, match and "
		    "weight"));
	if (get_fields(y, n, NULL, names, 3, f) != 0)
		return (-1);
	scope = f[0];
	match = f[1];
	wn = f[2];
	if (match == NULL || is_null(match))
		return (fail(y, n, "an affinity needs a match"));
	if (wn != NULL && get_weight(y, wn, &a->weight) != 0)
		return (-1);
	/* As Go: no weight is the default; an anti-affinity's given weight
	 * changes sign; then the weight is clamped. */
	if (a->weight == 0)
		a->weight = weight;
	else if (weight < 0)
		a->weight = -a->weight;
	if (a->weight > AFFINITY_MAX_WEIGHT)
		a->weight = AFFINITY_MAX_WEIGHT;
	if (a->weight < -AFFINITY_MAX_WEIGHT)
		a->weight = -AFFINITY_MAX_WEIGHT;
	a->pod_scope = scope == NULL || is_null(scope);
	if (!a->pod_scope && get_expr(y, scope, "scope", &a->scope) != 0)
		return (-1);
	if (get_expr(y, match, "match", &a->match) != 0) {
		affinity_clear(a);
		return (-1);
	}
	return (0);
}

static void
set_add(struct affinity_set *s, const struct affinity *a)
{
	s->v = xreallocarray(s->v, (size_t)s->n + 1, sizeof *s->v);
	s->v[s->n++] = *a;
}

static int
full_form(struct yctx *y, const yaml_node_t *root, int weight,
    const char *name, struct affinity_set *out)
{
	yaml_node_pair_t	*pr;
	yaml_node_item_t	*it;
	yaml_node_t		*k, *v, *e;
	struct strmap		*keys;
	struct affinity		 a;
	const char		*ks;
	int			 rc = 0;

	if (is_null(root))
		return (0);
	if (root->type != YAML_MAPPING_NODE)
		return (fail(y, root, "expected a map of container names"));
	keys = strmap_new();
	for (pr = root->data.mapping.pairs.start;
	    rc == 0 && pr < root->data.mapping.pairs.top; pr++) {
		if ((k = node(y, pr->key, root)) == NULL ||
		    (v = node(y, pr->value, root)) == NULL) {
			rc = -1;
			break;
		}
		if ((ks = text(k)) == NULL) {
			rc = fail(y, k, "expected a container name");
			break;
		}
		if (strmap_get(keys, ks) != NULL) {
			rc = fail(y, k, "container \"%s\" given twice", ks);
			break;
		}
		strmap_put(keys, ks, k);
		if (is_null(v))
			continue;
		if (v->type != YAML_SEQUENCE_NODE) {
			rc = fail(y, v, "%s: expected a list of affinities",
			    ks);
			break;
		}
		for (it = v->data.sequence.items.start;
		    rc == 0 && it < v->data.sequence.items.top; it++) {
			if ((e = node(y, *it, v)) == NULL ||
			    get_affinity(y, e, weight, &a) != 0) {
				rc = -1;
				break;
			}
			if (strcmp(ks, name) != 0) {
				affinity_clear(&a);
				continue;
			}
			if (out->n == AFFINITY_MAX_RULES) {
				affinity_clear(&a);
				rc = fail(y, e, "more than %d affinities for "
				    "container \"%s\"", AFFINITY_MAX_RULES, ks);
				break;
			}
			set_add(out, &a);
		}
	}
	strmap_free(keys);
	return (rc);
}

int
affinity_parse(const char *textv, int anti, const char *name,
    struct affinity_set *set, char **cause)
{
	struct yctx		 y;
	struct affinity_set	 got = { 0, NULL };
	struct names		 others = { 0, NULL, NULL };
	struct affinity		 a;
	yaml_node_t		*root;
	char			*why = NULL;
	int			 weight = anti ? -1 : 1, rc, i;

	memset(&y, 0, sizeof y);
	if (name == NULL)
		name = "";
	if ((rc = yamldoc_load(textv, &y.doc, cause)) != 0)
		return (rc);
	if ((root = yaml_document_get_root_node(&y.doc)) == NULL) {
		yaml_document_delete(&y.doc);
		return (0);		/* empty: nothing said */
	}
	y.nnodes = (size_t)(y.doc.nodes.top - y.doc.nodes.start);
	y.seen = xcalloc(y.nnodes + 1, 1);
	y.cause = &why;
	y.seen[0] = 1;			/* the root */

	rc = short_form(&y, root, name, &others);
	if (rc == 1 && others.n > 0) {
		memset(&a, 0, sizeof a);
		a.pod_scope = 1;
		a.weight = weight;
		if (expr_init(&a.match, "name", EXPR_IN,
		    (const char *const *)others.v, others.n, &why) != 0)
			rc = -1;
		else
			set_add(&got, &a);
	} else if (rc == 0) {
		seen_reset(&y);
		y.seen[0] = 1;
		rc = full_form(&y, root, weight, name, &got) == 0 ? 1 : -1;
	}
	names_clear(&others);
	free(y.seen);
	yaml_document_delete(&y.doc);
	if (rc != 1 || set->n + got.n > AFFINITY_MAX_RULES) {
		if (why == NULL)
			xasprintf(&why, "more than %d affinities for container "
			    "\"%s\"", AFFINITY_MAX_RULES, name);
		*cause = why;
		affinity_set_clear(&got);
		return (-EINVAL);
	}
	for (i = 0; i < got.n; i++)
		set_add(set, &got.v[i]);
	free(got.v);
	return (0);
}

void
affinity_set_clear(struct affinity_set *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		affinity_clear(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}
