/*
 * expr.c checks, compiles and evaluates container-selecting expressions
 * with the semantics of the Go policy's resmgr expressions: Equals and In
 * take "*" for any value, NotEqual and NotIn also hold where the key is
 * not there, the Matches operators glob as Go's filepath.Match does, and
 * a joint key (":k1:k2", or ":<ksep><vsep>k1<ksep>k2") is the values of
 * its keys joined, there when any of them is.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "xmalloc.h"

static const char *const op_names[] = {
	"Equals", "NotEqual", "In", "NotIn", "Exists", "NotExist",
	"AlwaysTrue", "Matches", "MatchesNot", "MatchesAny", "MatchesNone"
};

int
expr_op_parse(const char *s)
{
	size_t	i;

	for (i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
		if (strcmp(s, op_names[i]) == 0)
			return ((int)i);
	return (-1);
}

const char *
expr_op_name(enum expr_op op)
{
	return (op_names[op]);
}

const char *
expr_qos_name(enum qos_class q)
{
	switch (q) {
	case QOS_GUARANTEED:
		return ("Guaranteed");
	case QOS_BURSTABLE:
		return ("Burstable");
	case QOS_BESTEFFORT:
		break;
	}
	return ("BestEffort");
}

/* Glob (filepath.Match). */

/* One UTF-8 character of s (n bytes left): U+FFFD, 1 byte when invalid. */
static uint32_t
rune_at(const char *s, size_t n, size_t *len)
{
	const unsigned char	*u = (const unsigned char *)s;
	uint32_t		 r;
	size_t			 k, i;

	if (u[0] < 0x80) {
		*len = 1;
		return (u[0]);
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		k = 2;
		r = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		k = 3;
		r = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		k = 4;
		r = u[0] & 0x07;
	} else
		goto bad;
	if (k > n)
		goto bad;
	for (i = 1; i < k; i++) {
		if ((u[i] & 0xc0) != 0x80)
			goto bad;
		r = (r << 6) | (u[i] & 0x3f);
	}
	if ((k == 3 && (r < 0x800 || (r >= 0xd800 && r <= 0xdfff))) ||
	    (k == 4 && (r < 0x10000 || r > 0x10ffff)))
		goto bad;
	*len = k;
	return (r);
bad:
	*len = 1;
	return (0xfffd);
}

struct str {
	const char	*p;
	size_t		 n;
};

static void
advance(struct str *s, size_t k)
{
	s->p += k;
	s->n -= k;
}

/* The pattern up to its next unbracketed star; *star when it began so. */
static void
scan_chunk(struct str *pat, int *star, struct str *chunk)
{
	size_t	i;
	int	inrange = 0;

	*star = 0;
	while (pat->n > 0 && pat->p[0] == '*') {
		advance(pat, 1);
		*star = 1;
	}
	for (i = 0; i < pat->n; i++) {
		if (pat->p[i] == '\\') {
			if (i + 1 < pat->n)
				i++;
		} else if (pat->p[i] == '[')
			inrange = 1;
		else if (pat->p[i] == ']')
			inrange = 0;
		else if (pat->p[i] == '*' && !inrange)
			break;
	}
	chunk->p = pat->p;
	chunk->n = i;
	advance(pat, i);
}

/* One character of a bracket range, escapes undone; -1 when bad. */
static int
get_esc(struct str *c, uint32_t *r)
{
	size_t	len;

	if (c->n == 0 || c->p[0] == '-' || c->p[0] == ']')
		return (-1);
	if (c->p[0] == '\\') {
		advance(c, 1);
		if (c->n == 0)
			return (-1);
	}
	*r = rune_at(c->p, c->n, &len);
	if (*r == 0xfffd && len == 1 && (unsigned char)c->p[0] >= 0x80)
		return (-1);
	advance(c, len);
	return (c->n == 0 ? -1 : 0);
}

/*
 * Matches chunk at the start of s: 1 and the rest in *rest, 0, or -1 on
 * a bad pattern. The whole chunk is read even past a mismatch so that a
 * bad pattern is always found.
 */
static int
match_chunk(struct str chunk, struct str s, struct str *rest)
{
	uint32_t	r = 0, lo, hi;
	size_t		len;
	int		failed = 0, negated, match, nrange;

	while (chunk.n > 0) {
		if (!failed && s.n == 0)
			failed = 1;
		switch (chunk.p[0]) {
		case '[':
			if (!failed) {
				r = rune_at(s.p, s.n, &len);
				advance(&s, len);
			}
			advance(&chunk, 1);
			negated = 0;
			if (chunk.n > 0 && chunk.p[0] == '^') {
				negated = 1;
				advance(&chunk, 1);
			}
			match = 0;
			nrange = 0;
			for (;;) {
				if (chunk.n > 0 && chunk.p[0] == ']' &&
				    nrange > 0) {
					advance(&chunk, 1);
					break;
				}
				if (get_esc(&chunk, &lo) != 0)
					return (-1);
				hi = lo;
				if (chunk.p[0] == '-') {
					advance(&chunk, 1);
					if (get_esc(&chunk, &hi) != 0)
						return (-1);
				}
				if (lo <= r && r <= hi)
					match = 1;
				nrange++;
			}
			if (match == negated)
				failed = 1;
			break;
		case '?':
			if (!failed) {
				if (s.p[0] == '/')
					failed = 1;
				(void)rune_at(s.p, s.n, &len);
				advance(&s, len);
			}
			advance(&chunk, 1);
			break;
		case '\\':
			advance(&chunk, 1);
			if (chunk.n == 0)
				return (-1);
			/* FALLTHROUGH */
		default:
			if (!failed) {
				if (chunk.p[0] != s.p[0])
					failed = 1;
				advance(&s, 1);
			}
			advance(&chunk, 1);
			break;
		}
	}
	if (failed)
		return (0);
	*rest = s;
	return (1);
}

int
expr_glob(const char *pattern, const char *name)
{
	struct str	pat = { pattern, strlen(pattern) };
	struct str	s = { name, strlen(name) }, chunk, t, empty = { "", 0 };
	size_t		i;
	int		star, rc;

next:
	while (pat.n > 0) {
		scan_chunk(&pat, &star, &chunk);
		if (star && chunk.n == 0)
			return (memchr(s.p, '/', s.n) == NULL);
		rc = match_chunk(chunk, s, &t);
		if (rc == 1 && (t.n == 0 || pat.n > 0)) {
			s = t;
			continue;
		}
		if (rc < 0)
			return (-1);
		if (star)
			for (i = 0; i < s.n && s.p[i] != '/'; i++) {
				struct str tail = { s.p + i + 1, s.n - i - 1 };

				rc = match_chunk(chunk, tail, &t);
				if (rc == 1) {
					if (pat.n == 0 && t.n > 0)
						continue;
					s = t;
					goto next;
				}
				if (rc < 0)
					return (-1);
			}
		/* No match: the rest of the pattern must still be good. */
		while (pat.n > 0) {
			scan_chunk(&pat, &star, &chunk);
			if (match_chunk(chunk, empty, &t) < 0)
				return (-1);
		}
		return (0);
	}
	return (s.n == 0);
}

/* Keys. */

/* A separator of a joint key: no letter, digit, '/' or '.'. */
static int
separator(char c)
{
	return (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '/' || c == '.' || c == '\0'));
}

/* The key as Go's validateKey checks it (one key of a joint one). */
static int
check_key(const char *key, char **cause)
{
	const char	*k = key, *slash;
	size_t		 n;

	while (*k == '/')
		k++;
	for (;;) {
		slash = strchr(k, '/');
		n = slash ? (size_t)(slash - k) : strlen(k);
#define IS(w)	(n == strlen(w) && strncmp(k, (w), n) == 0)
		if (IS("id") || IS("uid") || IS("name") || IS("namespace") ||
		    IS("qosclass")) {
			if (slash != NULL && slash[1] != '\0') {
				xasprintf(cause, "trailing key \"%s\" after "
				    "\"%.*s\"", slash + 1, (int)n, k);
				return (-1);
			}
			return (0);
		}
		if (IS("pod") || IS("labels") || IS("tags")) {
			if (slash == NULL || slash[1] == '\0') {
				xasprintf(cause, "missing trailing %s key after "
				    "\"%.*s\"", IS("pod") ? "pod" : "map",
				    (int)n, k);
				return (-1);
			}
			if (!IS("pod"))
				return (0);
			k = slash + 1;
			continue;
		}
#undef IS
		xasprintf(cause, "unknown key \"%.*s\"", (int)n, k);
		return (-1);
	}
}

/* Go's path.Clean, into a new string. */
static char *
clean_path(const char *p)
{
	size_t	 n = strlen(p), r = 0, w = 0, dotdot = 0;
	char	*out = xmalloc(n + 2);
	int	 rooted = p[0] == '/';

	if (rooted) {
		out[w++] = '/';
		r = dotdot = 1;
	}
	while (r < n) {
		if (p[r] == '/')
			r++;
		else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/'))
			r++;
		else if (p[r] == '.' && p[r + 1] == '.' &&
		    (r + 2 == n || p[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out[w] != '/')
					w--;
			} else if (!rooted) {
				if (w > 0)
					out[w++] = '/';
				out[w++] = '.';
				out[w++] = '.';
				dotdot = w;
			}
		} else {
			if ((rooted && w != 1) || (!rooted && w != 0))
				out[w++] = '/';
			for (; r < n && p[r] != '/'; r++)
				out[w++] = p[r];
		}
	}
	if (w == 0)
		out[w++] = '.';
	out[w] = '\0';
	return (out);
}

/* What a checked key resolves to on a container (ResolveRef). */
static void
compile_key(const char *key, struct expr_key *k)
{
	char	*c = clean_path(key), *rest;
	int	 pod = 0;

	k->attr = ATTR_NEVER;
	k->label = NULL;
	rest = c;
	if (strncmp(rest, "pod/", 4) == 0) {
		pod = 1;
		rest += 4;
	}
	if (strcmp(rest, "id") == 0)
		k->attr = pod ? ATTR_POD_ID : ATTR_ID;
	else if (strcmp(rest, "uid") == 0)
		k->attr = pod ? ATTR_POD_UID : ATTR_NEVER;
	else if (strcmp(rest, "name") == 0)
		k->attr = pod ? ATTR_POD_NAME : ATTR_NAME;
	else if (strcmp(rest, "namespace") == 0)
		k->attr = pod ? ATTR_POD_NS : ATTR_NS;
	else if (strcmp(rest, "qosclass") == 0)
		k->attr = pod ? ATTR_POD_QOS : ATTR_QOS;
	else if (strncmp(rest, "labels/", 7) == 0 && rest[7] != '\0') {
		k->attr = pod ? ATTR_POD_LABEL : ATTR_LABEL;
		k->label = xstrdup(rest + 7);
	}
	/* tags/..., a pod's tags or pod, "." and rooted keys: never. */
	free(c);
}

static int
split_keys(const char *key, struct expr *e, char **cause)
{
	const char	*p, *end;
	char		 ksep = ':', *one;
	int		 n;

	e->joint = 0;
	if (strlen(key) < 4 || key[0] != ':') {
		if (check_key(key, cause) != 0)
			return (-1);
		e->nkeys = 1;
		e->keys = xcalloc(1, sizeof *e->keys);
		compile_key(key, &e->keys[0]);
		return (0);
	}
	e->joint = 1;
	p = key + 1;
	e->vsep = ':';
	if (separator(p[0]) && separator(p[1])) {
		ksep = p[0];
		e->vsep = p[1];
		p += 2;
	}
	e->keys = xcalloc(EXPR_MAX_JOINT, sizeof *e->keys);
	for (n = 0;; n++) {
		end = strchr(p, ksep);
		if (n == EXPR_MAX_JOINT) {
			xasprintf(cause, "more than %d keys in joint key",
			    EXPR_MAX_JOINT);
			return (-1);
		}
		one = end ? xstrndup(p, (size_t)(end - p)) : xstrdup(p);
		if (check_key(one, cause) != 0) {
			free(one);
			return (-1);
		}
		compile_key(one, &e->keys[n]);
		e->nkeys = n + 1;
		free(one);
		if (end == NULL)
			break;
		p = end + 1;
	}
	return (0);
}

int
expr_init(struct expr *e, const char *key, enum expr_op op,
    const char *const *values, int nvalues, char **cause)
{
	int	i, want = -1;

	memset(e, 0, sizeof *e);
	e->op = op;
	switch (op) {
	case EXPR_EQUALS:
	case EXPR_NOTEQUAL:
	case EXPR_MATCHES:
	case EXPR_MATCHESNOT:
		want = 1;
		break;
	case EXPR_EXISTS:
	case EXPR_NOTEXIST:
	case EXPR_ALWAYSTRUE:
		want = 0;
		break;
	default:
		break;
	}
	if (want == 1 && nvalues != 1) {
		xasprintf(cause, "'%s' requires a single value",
		    op_names[op]);
		return (-1);
	}
	if (want == 0 && nvalues != 0) {
		xasprintf(cause, "'%s' does not take any values",
		    op_names[op]);
		return (-1);
	}
	if (nvalues > EXPR_MAX_VALUES) {
		xasprintf(cause, "%d values, at most %d", nvalues,
		    EXPR_MAX_VALUES);
		return (-1);
	}
	for (i = 0; i < nvalues; i++)
		if ((op == EXPR_MATCHES || op == EXPR_MATCHESNOT ||
		    op == EXPR_MATCHESANY || op == EXPR_MATCHESNONE) &&
		    expr_glob(values[i], "") < 0) {
			xasprintf(cause, "bad pattern \"%s\"", values[i]);
			return (-1);
		}
	/* AlwaysTrue looks at no key: none need be given. */
	if (!(op == EXPR_ALWAYSTRUE && key[0] == '\0') &&
	    split_keys(key, e, cause) != 0) {
		expr_clear(e);
		return (-1);
	}
	e->nvalues = nvalues;
	e->values = xcalloc((size_t)nvalues + 1, sizeof *e->values);
	for (i = 0; i < nvalues; i++)
		e->values[i] = xstrdup(values[i]);
	return (0);
}

void
expr_clear(struct expr *e)
{
	int	i;

	for (i = 0; i < e->nkeys; i++)
		free(e->keys[i].label);
	free(e->keys);
	for (i = 0; i < e->nvalues; i++)
		free(e->values[i]);
	free(e->values);
	memset(e, 0, sizeof *e);
}

/* Evaluation. */

static const char *
orempty(const char *s)
{
	return (s != NULL ? s : "");
}

#define KUBE_PREFIX	"io.kubernetes."
#define KUBE_PLEN	(sizeof KUBE_PREFIX - 1)
#define KUBE_KEY(rest)	KUBE_PREFIX rest, sizeof rest - 1

static const struct {
	const char	*key;
	size_t		 rest;		/* its length after the prefix */
	enum expr_attr	 attr;
} kube_labels[EXPR_KUBE_LABELS] = {
	{ KUBE_KEY("container.name"), ATTR_NAME },
	{ KUBE_KEY("pod.name"), ATTR_POD_NAME },
	{ KUBE_KEY("pod.namespace"), ATTR_NS },
	{ KUBE_KEY("pod.uid"), ATTR_POD_UID },
};

/* Asked of every label of every container a Synchronize copies: after
 * the prefix, the four keys differ in length, so one compare decides. */
int
expr_kube_label(const char *key)
{
	size_t	len;
	int	i;

	if (strncmp(key, KUBE_PREFIX, KUBE_PLEN) != 0)
		return (-1);
	len = strlen(key + KUBE_PLEN);
	for (i = 0; i < EXPR_KUBE_LABELS; i++)
		if (kube_labels[i].rest == len)
			return (memcmp(key + KUBE_PLEN, kube_labels[i].key +
			    KUBE_PLEN, len) == 0 ? i : -1);
	return (-1);
}

const char *
expr_kube_key(int i)
{
	return (kube_labels[i].key);
}

enum expr_attr
expr_kube_attr(int i)
{
	return (kube_labels[i].attr);
}

const char *
expr_kube_field(int i, const char *name, const char *ns, const char *pod,
    const char *pod_name, const char *pod_uid)
{
	switch (kube_labels[i].attr) {
	case ATTR_NAME:
		return (name);
	case ATTR_NS:
		return (ns);
	case ATTR_POD_NAME:
		return (pod != NULL ? pod_name : NULL);
	case ATTR_POD_UID:
		return (pod != NULL ? pod_uid : NULL);
	default:
		return (NULL);
	}
}

/* A kubelet label kept as a bit: its field's value. */
static const char *
kube_value(const struct expr_subject *s, const char *key)
{
	int	i = expr_kube_label(key);

	if (i < 0 || !(s->kube_labels & (1u << i)))
		return (NULL);
	return (expr_kube_field(i, s->name, s->ns,
	    s->has_pod ? s->pod_id : NULL, s->pod_name, s->pod_uid));
}

int
expr_key_value(const struct expr_key *k, const struct expr_subject *s,
    const char **v)
{
	*v = NULL;
	switch (k->attr) {
	case ATTR_NEVER:
		return (0);
	case ATTR_ID:
		*v = orempty(s->id);
		return (1);
	case ATTR_NAME:
		*v = orempty(s->name);
		return (1);
	case ATTR_NS:
		*v = orempty(s->ns);
		return (1);
	case ATTR_QOS:
		*v = expr_qos_name(s->qos);
		return (1);
	case ATTR_LABEL:
		if ((*v = policy_kv_get(s->labels, s->nlabels, k->label)) == NULL)
			*v = kube_value(s, k->label);
		return (*v != NULL);
	default:
		break;
	}
	if (!s->has_pod)
		return (0);
	switch (k->attr) {
	case ATTR_POD_NAME:
		*v = orempty(s->pod_name);
		return (1);
	case ATTR_POD_NS:
		*v = orempty(s->ns);
		return (1);
	case ATTR_POD_QOS:
		*v = expr_qos_name(s->qos);
		return (1);
	case ATTR_POD_LABEL:
		*v = policy_kv_get(s->pod_labels, s->npod_labels, k->label);
		return (*v != NULL);
	case ATTR_POD_ID:
		*v = orempty(s->pod_id);
		return (1);
	case ATTR_POD_UID:
		*v = orempty(s->pod_uid);
		return (1);
	default:
		return (0);
	}
}

/* The key's value (a joint key's joined into *buf, caller frees). */
static int
value_of(const struct expr *e, const struct expr_subject *s,
    const char **v, char **buf)
{
	const char	*one;
	size_t		 n = 0, len;
	int		 i, ok = 0;

	*buf = NULL;
	if (!e->joint)
		return (expr_key_value(&e->keys[0], s, v));
	for (i = 0; i < e->nkeys; i++) {
		ok |= expr_key_value(&e->keys[i], s, &one);
		n += (one ? strlen(one) : 0) + 1;
	}
	*buf = xmalloc(n + 1);
	for (i = 0, n = 0; i < e->nkeys; i++) {
		if (i > 0)
			(*buf)[n++] = e->vsep;
		(void)expr_key_value(&e->keys[i], s, &one);
		len = one ? strlen(one) : 0;
		memcpy(*buf + n, one ? one : "", len);
		n += len;
	}
	(*buf)[n] = '\0';
	*v = *buf;
	return (ok);
}

int
expr_eval(const struct expr *e, const struct expr_subject *s)
{
	const char	*v;
	char		*buf;
	int		 ok, r = 0, i;

	if (e->op == EXPR_ALWAYSTRUE)
		return (1);
	ok = value_of(e, s, &v, &buf);
	switch (e->op) {
	case EXPR_EQUALS:
		r = ok && (strcmp(v, e->values[0]) == 0 ||
		    strcmp(e->values[0], "*") == 0);
		break;
	case EXPR_NOTEQUAL:
		r = !ok || strcmp(v, e->values[0]) != 0;
		break;
	case EXPR_MATCHES:
	case EXPR_MATCHESNOT:
		r = ok && expr_glob(e->values[0], v) == 1;
		if (e->op == EXPR_MATCHESNOT)
			r = !r;
		break;
	case EXPR_IN:
	case EXPR_NOTIN:
		for (i = 0; ok && !r && i < e->nvalues; i++)
			r = strcmp(v, e->values[i]) == 0 ||
			    strcmp(e->values[i], "*") == 0;
		if (e->op == EXPR_NOTIN)
			r = !r;
		break;
	case EXPR_MATCHESANY:
	case EXPR_MATCHESNONE:
		for (i = 0; ok && !r && i < e->nvalues; i++)
			r = expr_glob(e->values[i], v) == 1;
		if (e->op == EXPR_MATCHESNONE)
			r = !r;
		break;
	case EXPR_EXISTS:
		r = ok;
		break;
	case EXPR_NOTEXIST:
		r = !ok;
		break;
	case EXPR_ALWAYSTRUE:
		r = 1;
		break;
	}
	free(buf);
	return (r);
}
