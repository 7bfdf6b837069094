/*
 * test_affinity.c: affinity expressions (expr.c) against the Go policy's
 * expression tests (TestResolveRefAndKeyValue, TestSimpleOperators,
 * TestValidation) and filepath.Match's table, the annotation parser
 * (affinity.c), Go's TestAffinities table of pre-computed affinities on
 * the server machine, and affinities through the policy: the short and
 * full forms, implicit affinities dropped for explicit ones, refusal of a
 * bad annotation, and the index bounding what is looked at.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "policy_priv.h"
#include "postings.h"
#include "policylib.h"
#include "testlib.h"
#include "utf8.h"
#include "xmalloc.h"

/* Expressions. */

static const struct policy_kv pod_labels[] = {
	{ "l1", "plone" }, { "l2", "pltwo" }, { "l5", "plfive" },
	{ "io.test/label1", "io.test/value1" },
};
static const struct policy_kv ctr_labels[] = {
	{ "l1", "clone" }, { "l2", "cltwo" }, { "l3", "clthree" },
};

/* Go's subject C1 of pod P1; a container's namespace and QoS class are
 * its pod's here (in Go's tests they differ). */
static void
subject(struct expr_subject *s)
{
	memset(s, 0, sizeof *s);
	s->id = "cid1";
	s->name = "C1";
	s->ns = "ns";
	s->qos = QOS_BURSTABLE;
	s->labels = (struct policy_kv *)ctr_labels;
	s->nlabels = 3;
	s->has_pod = 1;
	s->pod_id = "pid1";
	s->pod_uid = "puid1";
	s->pod_name = "P1";
	s->pod_labels = (struct policy_kv *)pod_labels;
	s->npod_labels = 4;
}

static int
eval(const char *key, enum expr_op op, const char *v1, const char *v2)
{
	struct expr_subject	 s;
	struct expr		 e;
	const char		*vals[2] = { v1, v2 };
	char			*cause = NULL;
	int			 r;

	subject(&s);
	cr_assert_eq(expr_init(&e, key, op, vals, v2 ? 2 : v1 ? 1 : 0,
	    &cause), 0, "%s: %s", key, cause);
	r = expr_eval(&e, &s);
	expr_clear(&e);
	return (r);
}

Test(expr, resolve_ref_and_key_value)
{
	static const struct {
		const char	*key;
		const char	*value;	/* NULL: not there */
	} t[] = {
		{ "name", "C1" }, { "namespace", "ns" },
		{ "qosclass", "Burstable" }, { "id", "cid1" },
		{ "labels/l1", "clone" }, { "labels/l2", "cltwo" },
		{ "labels/l3", "clthree" }, { "labels/l4", NULL },
		{ "tags/t1", NULL }, { "uid", NULL },
		{ "pod/labels/l1", "plone" }, { "pod/labels/l2", "pltwo" },
		{ "pod/labels/l3", NULL }, { "pod/labels/l4", NULL },
		{ "pod/labels/l5", "plfive" },
		{ "pod/labels/io.test/label1", "io.test/value1" },
		{ "pod/labels/io.test/l", NULL },
		{ "pod/name", "P1" }, { "pod/namespace", "ns" },
		{ "pod/qosclass", "Burstable" }, { "pod/id", "pid1" },
		{ "pod/uid", "puid1" }, { "pod/tags/t1", NULL },
		{ "pod/pod/name", NULL },
		/* Go cleans the path before resolving it. */
		{ "labels//l1", "clone" }, { "labels/x/../l2", "cltwo" },
		{ "name/", "C1" },
	};
	struct expr_subject	 s;
	struct expr		 e;
	const char		*v;
	char			*cause = NULL;
	size_t			 i;
	int			 ok;

	subject(&s);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		cr_assert_eq(expr_init(&e, t[i].key, EXPR_EXISTS, NULL, 0,
		    &cause), 0, "%s: %s", t[i].key, cause);
		cr_assert_eq(e.nkeys, 1);
		ok = expr_key_value(&e.keys[0], &s, &v);
		cr_assert_eq(ok, t[i].value != NULL, "%s", t[i].key);
		if (ok)
			cr_assert_str_eq(v, t[i].value, "%s", t[i].key);
		cr_assert_eq(expr_eval(&e, &s), ok, "%s", t[i].key);
		expr_clear(&e);
	}
	/* Without a pod, no pod key is there. */
	s.has_pod = 0;
	cr_assert_eq(expr_init(&e, "pod/name", EXPR_EXISTS, NULL, 0, &cause),
	    0);
	cr_assert_not(expr_eval(&e, &s));
	expr_clear(&e);
}

Test(expr, joint_keys)
{
	/* ":,-" : keys split at ',', values joined by '-'. */
	cr_assert(eval(":,-pod/qosclass,pod/namespace,pod/name,name",
	    EXPR_EQUALS, "Burstable-ns-P1-C1", NULL));
	/* The short form splits at ':' and joins with ':'. */
	cr_assert(eval(":pod/name:name", EXPR_EQUALS, "P1:C1", NULL));
	cr_assert(eval(":pod/name:labels/nope", EXPR_EQUALS, "P1:", NULL));
	/* There when any key is; not when none is. */
	cr_assert(eval(":labels/l4:labels/l1", EXPR_EXISTS, NULL, NULL));
	cr_assert_not(eval(":labels/l4:tags/x", EXPR_EXISTS, NULL, NULL));
	cr_assert(eval(":,:pod/qosclass,pod/namespace,pod/name,qosclass,name",
	    EXPR_MATCHES, "Burstable:*:*:*:*", NULL));
	cr_assert_not(eval(":,:pod/qosclass,pod/name",
	    EXPR_MATCHES, "Guaranteed:*", NULL));
}

/* TestSimpleOperators: Equals, NotEqual, In, NotIn on every key. */
Test(expr, simple_operators)
{
	static const struct {
		const char	*key;
		const char	*value;		/* its value, or one it lacks */
		int		 has;		/* 1: value is its value */
	} t[] = {
		{ "name", "C1", 1 }, { "pod/name", "P1", 1 },
		{ "namespace", "ns", 1 }, { "pod/namespace", "ns", 1 },
		{ "qosclass", "Burstable", 1 },
		{ "pod/qosclass", "Burstable", 1 },
		{ "labels/l1", "clone", 1 }, { "labels/l2", "cltwo", 1 },
		{ "labels/l3", "clthree", 1 }, { "labels/l4", "clfour", 0 },
		{ "tags/t1", "ctone", 0 },
		{ "pod/labels/l1", "plone", 1 }, { "pod/labels/l2", "pltwo", 1 },
		{ "pod/labels/l3", "plthree", 0 },
		{ "pod/labels/l5", "plfive", 1 },
	};
	size_t	i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		cr_assert_eq(eval(t[i].key, EXPR_EQUALS, t[i].value, NULL),
		    t[i].has, "%s Equals", t[i].key);
		cr_assert_eq(eval(t[i].key, EXPR_NOTEQUAL, t[i].value, NULL),
		    !t[i].has, "%s NotEqual", t[i].key);
		cr_assert_eq(eval(t[i].key, EXPR_IN, "foo", t[i].value),
		    t[i].has, "%s In", t[i].key);
		cr_assert_eq(eval(t[i].key, EXPR_NOTIN, "foo", NULL), 1,
		    "%s NotIn foo", t[i].key);
		cr_assert_eq(eval(t[i].key, EXPR_NOTIN, t[i].value, NULL),
		    !t[i].has, "%s NotIn", t[i].key);
		/* "*" is any value of Equals and In, where there is one. */
		cr_assert_eq(eval(t[i].key, EXPR_EQUALS, "*", NULL), t[i].has,
		    "%s Equals *", t[i].key);
		cr_assert_eq(eval(t[i].key, EXPR_IN, "x", "*"), t[i].has,
		    "%s In *", t[i].key);
		cr_assert_eq(eval(t[i].key, EXPR_NOTEQUAL, "*", NULL), 1,
		    "%s NotEqual * is literal", t[i].key);
	}
	cr_assert(eval("labels/l1", EXPR_MATCHES, "cl*", NULL));
	cr_assert_not(eval("labels/l1", EXPR_MATCHESNOT, "cl*", NULL));
	cr_assert(eval("labels/l1", EXPR_MATCHESANY, "x*", "?lon?"));
	cr_assert_not(eval("labels/l1", EXPR_MATCHESNONE, "x*", "?lon?"));
	cr_assert(eval("labels/l4", EXPR_MATCHESNONE, "*", NULL));
	cr_assert_not(eval("labels/l4", EXPR_MATCHESANY, "*", NULL));
	cr_assert(eval("labels/l4", EXPR_NOTEXIST, NULL, NULL));
	cr_assert(eval("name", EXPR_ALWAYSTRUE, NULL, NULL));
}

/* TestValidation, and a bad glob pattern. */
Test(expr, validation)
{
	static const struct {
		const char	*key;
		enum expr_op	 op;
		int		 nvalues;
		int		 ok;
	} t[] = {
		{ "id", EXPR_EQUALS, 1, 1 }, { "uid", EXPR_EQUALS, 1, 1 },
		{ "name", EXPR_EQUALS, 1, 1 }, { "namespace", EXPR_EQUALS, 1, 1 },
		{ "qosclass", EXPR_EQUALS, 1, 1 },
		{ "labels/io.kubernetes.application", EXPR_EQUALS, 1, 1 },
		{ "pod/name", EXPR_EQUALS, 1, 1 },
		{ "pod", EXPR_EQUALS, 1, 0 }, { "pod/foo", EXPR_EQUALS, 1, 0 },
		{ "name/foo", EXPR_EQUALS, 1, 0 }, { "name", EXPR_EQUALS, 0, 0 },
		{ "name", EXPR_NOTEQUAL, 2, 0 }, { "name", EXPR_MATCHES, 0, 0 },
		{ "name", EXPR_MATCHESNOT, 2, 0 },
		{ "name", EXPR_ALWAYSTRUE, 1, 0 },
		{ "labels", EXPR_EXISTS, 0, 0 }, { "tags/", EXPR_EXISTS, 0, 0 },
		{ "foo", EXPR_EXISTS, 0, 0 }, { "", EXPR_EXISTS, 0, 0 },
		{ "", EXPR_ALWAYSTRUE, 0, 1 }, { "name", EXPR_IN, 0, 1 },
		{ "name", EXPR_EXISTS, 1, 0 }, { ":name:", EXPR_EXISTS, 0, 0 },
		{ ":name:pod/uid", EXPR_EXISTS, 0, 1 },
	};
	static const char *const vals[] = { "a", "b" };
	struct expr	 e;
	char		*cause = NULL;
	size_t		 i;
	int		 rc;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		rc = expr_init(&e, t[i].key, t[i].op, vals, t[i].nvalues,
		    &cause);
		cr_assert_eq(rc == 0, t[i].ok, "\"%s\" %s: %s", t[i].key,
		    expr_op_name(t[i].op), cause ? cause : "accepted");
		if (rc == 0)
			expr_clear(&e);
		free(cause);
		cause = NULL;
	}
	{
		const char *bad[] = { "a[" };

		cr_assert_neq(expr_init(&e, "name", EXPR_MATCHES, bad, 1,
		    &cause), 0);
		cr_assert(strstr(cause, "bad pattern") != NULL, "%s", cause);
		free(cause);
	}
}

/* filepath.Match's own test table (Unix). */
Test(expr, glob)
{
	static const struct {
		const char	*pattern, *s;
		int		 want;	/* 1, 0, -1 bad pattern */
	} t[] = {
		{ "abc", "abc", 1 }, { "*", "abc", 1 }, { "*c", "abc", 1 },
		{ "a*", "a", 1 }, { "a*", "abc", 1 }, { "a*", "ab/c", 0 },
		{ "a*/b", "abc/b", 1 }, { "a*/b", "a/c/b", 0 },
		{ "a*b*c*d*e*/f", "axbxcxdxe/f", 1 },
		{ "a*b*c*d*e*/f", "axbxcxdxexxx/f", 1 },
		{ "a*b*c*d*e*/f", "axbxcxdxe/xxx/f", 0 },
		{ "a*b*c*d*e*/f", "axbxcxdxexxx/fff", 0 },
		{ "a*b?c*x", "abxbbxdbxebxczzx", 1 },
		{ "a*b?c*x", "abxbbxdbxebxczzy", 0 },
		{ "ab[c]", "abc", 1 }, { "ab[b-d]", "abc", 1 },
		{ "ab[e-g]", "abc", 0 }, { "ab[^c]", "abc", 0 },
		{ "ab[^b-d]", "abc", 0 }, { "ab[^e-g]", "abc", 1 },
		{ "a\\*b", "a*b", 1 }, { "a\\*b", "ab", 0 },
		{ "a?b", "a\xe2\x98\xba" "b", 1 },
		{ "a[^a]b", "a\xe2\x98\xba" "b", 1 },
		{ "a???b", "a\xe2\x98\xba" "b", 0 },
		{ "a[^a][^a][^a]b", "a\xe2\x98\xba" "b", 0 },
		{ "[a-\xce\xb6]*", "\xce\xb1", 1 }, { "*[a-\xce\xb6]", "A", 0 },
		{ "a?b", "a/b", 0 }, { "a*b", "a/b", 0 },
		{ "[\\]a]", "]", 1 }, { "[\\-]", "-", 1 }, { "[x\\-]", "x", 1 },
		{ "[x\\-]", "-", 1 }, { "[x\\-]", "z", 0 }, { "[\\-x]", "x", 1 },
		{ "[\\-x]", "-", 1 }, { "[\\-x]", "a", 0 },
		{ "[]a]", "]", -1 }, { "[-]", "-", -1 }, { "[x-]", "x", -1 },
		{ "[x-]", "-", -1 }, { "[x-]", "z", -1 }, { "[-x]", "x", -1 },
		{ "[-x]", "-", -1 }, { "[-x]", "a", -1 }, { "\\", "a", -1 },
		{ "[a-b-c]", "a", -1 }, { "[", "a", -1 }, { "[^", "a", -1 },
		{ "[^bc", "a", -1 }, { "a[", "a", -1 }, { "a[", "ab", -1 },
		{ "a[", "x", -1 }, { "a/b[", "x", -1 }, { "*x", "xxx", 1 },
	};
	size_t	i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		cr_assert_eq(expr_glob(t[i].pattern, t[i].s), t[i].want,
		    "Match(%s, %s)", t[i].pattern, t[i].s);
}

/* The list under hash h holds each of the nv pointers &want[x] want[x] times. */
static void
check_list(const struct postings *p, int step, uint64_t h, const int *want,
    int nv)
{
	void *const	*v;
	size_t		 n, i, total = 0;
	int		 x, cnt[400];

	cr_assert_leq(nv, 400);
	v = postings_get(p, h, &n);
	memset(cnt, 0, sizeof cnt);
	for (i = 0; i < n; i++) {
		cr_assert((const int *)v[i] >= want &&
		    (const int *)v[i] < want + nv, "step %d: hash %#" PRIx64
		    " holds another's pointer", step, h);
		cnt[(const int *)v[i] - want]++;
	}
	for (x = 0; x < nv; x++) {
		cr_assert_eq(cnt[x], want[x], "step %d hash %#" PRIx64
		    " value %d", step, h, x);
		total += (size_t)want[x];
	}
	cr_assert_eq(n, total);
}

/*
 * The index's hash lists against a plain model: adds and deletes of a few
 * pointers under hashes that crowd the same home slots (multiples of the
 * table's sizes) and wrap around its end, through growth; every list as
 * the model says after each step. The sanitizer build sees any slot freed
 * twice at the end.
 */
Test(postings, against_a_model)
{
	enum { NH = 200, NV = 2, STEPS = 20000 };
	static int		 model[NH][NV];
	static const uint64_t	 base[4] = { 0, 63, 64 * 7, 1ULL << 40 };
	struct postings		*p = postings_new();
	uint64_t		 h;
	unsigned		 seed = 7;
	int			 step, k, x;

	for (step = 0; step < STEPS; step++) {
		seed = seed * 1103515245u + 12345u;
		k = (int)((seed >> 8) % NH);
		x = (int)((seed >> 20) % NV);
		h = base[k % 4] + 64 * (uint64_t)k;
		/* Lists stay short, so slots empty and runs shift often. */
		if (model[k][x] == 0 || (model[k][x] < 2 && (seed >> 28) % 2)) {
			postings_add(p, h ? h : 1, (void *)&model[k][x]);
			model[k][x]++;
		} else {
			postings_del(p, h ? h : 1, (void *)&model[k][x]);
			if (model[k][x] > 0)
				model[k][x]--;
		}
		if (step % 97 != 0 && step != STEPS - 1)
			continue;
		for (k = 0; k < NH; k++) {
			h = base[k % 4] + 64 * (uint64_t)k;
			check_list(p, step, h ? h : 1, model[k], NV);
		}
	}
	postings_free(p);
}

/*
 * Long lists, which keep the positions of their pointers (a value every
 * container shares), against the same model: lists grow past the length
 * that starts the positions and to hundreds, hold pointers twice (two
 * keys with one hash), shrink to nothing and grow again; every list as
 * the model says after each step, and a delete of a pointer not there
 * changes nothing.
 */
Test(postings, long_lists_against_a_model)
{
	enum { NH = 3, NV = 400, STEPS = 60000 };
	static int		 model[NH][NV];
	static const uint64_t	 hs[NH] = { 5, 5 + 64, 1ULL << 40 };
	struct postings		*p = postings_new();
	unsigned		 seed = 11, grow;
	size_t			 total = 0, most = 0;
	int			 step, k, x;

	for (step = 0; step < STEPS; step++) {
		seed = seed * 1103515245u + 12345u;
		k = (int)((seed >> 8) % NH);
		x = (int)((seed >> 12) % NV);
		/* Phases: mostly adds, then mostly deletes, in turn. */
		grow = (unsigned)(step / 7500) % 2 == 0 ? 3 : 1;
		if ((seed >> 24) % 4 < grow && model[k][x] < 3) {
			postings_add(p, hs[k], (void *)&model[k][x]);
			model[k][x]++;
			total++;
		} else {
			postings_del(p, hs[k], (void *)&model[k][x]);
			if (model[k][x] > 0) {
				model[k][x]--;
				total--;
			}
		}
		if (total > most)
			most = total;
		if (step % 97 != 0 && step != STEPS - 1)
			continue;
		for (k = 0; k < NH; k++)
			check_list(p, step, hs[k], model[k], NV);
	}
	/* The phases did what they are for. */
	cr_assert_gt(most, 3 * 300);
	postings_free(p);
}

/* SipHash-2-4 against the published vectors (key 00..0f). */
Test(postings, siphash_vectors)
{
	static const uint64_t	k[2] = { 0x0706050403020100ULL,
				    0x0f0e0d0c0b0a0908ULL };
	unsigned char		m[15];
	size_t			i;

	for (i = 0; i < sizeof m; i++)
		m[i] = (unsigned char)i;
	cr_assert_eq(postings_siphash(k, m, 0, 2, 4), 0x726fdb47dd0e0e31ULL);
	cr_assert_eq(postings_siphash(k, m, 15, 2, 4), 0xa129ca6149be45e5ULL);
}

/*
 * A tenant who knows the key can choose label values that share a home
 * slot; under another key the same values spread. Values crafted for the
 * zero key (the one a build without a secret has) all share their low 10
 * bits there, and about one in 1,024 of them does under the key set
 * after; a key can no longer be set once postings exist.
 */
Test(postings, keyed_against_crafted_labels)
{
	enum { N = 300 };
	static char	 vals[N][24];
	struct postings	*p;
	unsigned long	 x;
	int		 n = 0, same = 0, i;

	cr_assert_eq(postings_key(0, 0), 0);
	for (x = 0; n < N; x++) {
		snprintf(vals[n], sizeof vals[n], "v%lu", x);
		if ((postings_hash(7, "app", vals[n]) & 0x3ff) == 0)
			n++;
	}
	cr_assert_eq(postings_key(0x5eed5eed12345678ULL, 0x0123456789abcdefULL),
	    0);
	for (i = 0; i < N; i++)
		if ((postings_hash(7, "app", vals[i]) & 0x3ff) == 0)
			same++;
	cr_assert_leq(same, 8, "%d of %d crafted values share a home", same,
	    N);
	p = postings_new();
	cr_assert_eq(postings_key(0, 0), -1);
	postings_free(p);
	cr_assert_eq(postings_key(0, 0), 0);
}

/* The annotation parser. */

static void
parse_ok(const char *text, int anti, const char *name,
    struct affinity_set *s)
{
	char	*cause = NULL;

	memset(s, 0, sizeof *s);
	cr_assert_eq(affinity_parse(text, anti, name, s, &cause), 0,
	    "%s: %s", text, cause);
}

/* Adds to what s has. */
static void
parse_more(const char *text, int anti, const char *name,
    struct affinity_set *s)
{
	char	*cause = NULL;

	cr_assert_eq(affinity_parse(text, anti, name, s, &cause), 0,
	    "%s: %s", text, cause);
}

static void
parse_bad(const char *text, const char *want)
{
	struct affinity_set	 s = { 0, NULL };
	char			*cause = NULL;

	cr_assert_neq(affinity_parse(text, 0, "a", &s, &cause), 0, "%s",
	    text);
	cr_assert_not_null(cause);
	cr_assert(strstr(cause, want) != NULL, "%s: \"%s\" lacks \"%s\"",
	    text, cause, want);
	cr_assert_eq(s.n, 0);
	free(cause);
}

static int
str_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The names a short-form affinity matches, sorted, comma-joined. */
static char *
names_of(const struct affinity *a)
{
	char	**v, *out = xstrdup(""), *tmp;
	int	  i, n = a->match.nvalues;

	cr_assert_eq(a->match.op, EXPR_IN);
	cr_assert_eq(a->match.keys[0].attr, ATTR_NAME);
	v = xcalloc((size_t)n + 1, sizeof *v);
	memcpy(v, a->match.values, (size_t)n * sizeof *v);
	qsort(v, (size_t)n, sizeof *v, str_cmp);
	for (i = 0; i < n; i++) {
		xasprintf(&tmp, "%s%s%s", out, i ? "," : "", v[i]);
		free(out);
		out = tmp;
	}
	free(v);
	return (out);
}

Test(parse, short_form_is_symmetric)
{
	/* Go's documented example. */
	static const char aff[] = "container3: [ container1 ]\n";
	static const char anti[] = "container3: [ container2 ]\n"
	    "container4: [ container2, container3 ]\n";
	static const struct {
		const char	*name;
		const char	*aff;	/* NULL: none */
		const char	*anti;
	} t[] = {
		{ "container1", "container3", NULL },
		{ "container2", NULL, "container3,container4" },
		{ "container3", "container1", "container2,container4" },
		{ "container4", NULL, "container2,container3" },
		{ "other", NULL, NULL },
	};
	struct affinity_set	 s;
	char			*n;
	size_t			 i;
	int			 k;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		memset(&s, 0, sizeof s);
		parse_more(aff, 0, t[i].name, &s);
		parse_more(anti, 1, t[i].name, &s);
		k = 0;
		if (t[i].aff != NULL) {
			cr_assert(s.v[k].pod_scope);
			cr_assert_eq(s.v[k].weight, 1);
			n = names_of(&s.v[k]);
			cr_assert_str_eq(n, t[i].aff, "%s", t[i].name);
			free(n);
			k++;
		}
		if (t[i].anti != NULL) {
			cr_assert_eq(s.v[k].weight, -1);
			n = names_of(&s.v[k]);
			cr_assert_str_eq(n, t[i].anti, "%s", t[i].name);
			free(n);
			k++;
		}
		cr_assert_eq(s.n, k, "%s: %d", t[i].name, s.n);
		affinity_set_clear(&s);
	}
}

Test(parse, full_form_weights)
{
	static const char peter[] =
	    "peter:\n"
	    "- match:\n"
	    "    key: name\n"
	    "    operator: Equals\n"
	    "    values:\n"
	    "    - sheep\n"
	    "  weight: 5\n"
	    "- scope: {key: namespace, operator: Equals, values: [farm]}\n"
	    "  match: {key: labels/kind, operator: In, values: [dog, cat]}\n"
	    "- match: {key: name, operator: Exists}\n"
	    "  weight: 5000\n"
	    "- match: {key: name, operator: Exists}\n"
	    "  weight: -7\n"
	    "wolf: []\n";
	struct affinity_set	s;

	parse_ok(peter, 0, "peter", &s);
	cr_assert_eq(s.n, 4);
	cr_assert(s.v[0].pod_scope);
	cr_assert_eq(s.v[0].weight, 5);
	cr_assert_eq(s.v[0].match.op, EXPR_EQUALS);
	cr_assert_not(s.v[1].pod_scope);
	cr_assert_eq(s.v[1].scope.keys[0].attr, ATTR_NS);
	cr_assert_eq(s.v[1].match.keys[0].attr, ATTR_LABEL);
	cr_assert_str_eq(s.v[1].match.keys[0].label, "kind");
	cr_assert_eq(s.v[1].weight, 1);		/* the default */
	cr_assert_eq(s.v[2].weight, 1000);	/* clamped */
	cr_assert_eq(s.v[3].weight, -7);
	affinity_set_clear(&s);
	/* In the anti-affinity annotation every given weight changes sign
	 * (so a negative one pulls, as in Go); no weight is -1. */
	parse_ok(peter, 1, "peter", &s);
	cr_assert_eq(s.v[0].weight, -5);
	cr_assert_eq(s.v[1].weight, -1);
	cr_assert_eq(s.v[2].weight, -1000);
	cr_assert_eq(s.v[3].weight, 7);
	affinity_set_clear(&s);
	parse_ok(peter, 0, "wolf", &s);
	cr_assert_eq(s.n, 0);
	parse_ok("", 0, "a", &s);
	cr_assert_eq(s.n, 0);
	parse_ok("a:\n", 0, "a", &s);
	cr_assert_eq(s.n, 0);
	/* AlwaysTrue needs no key. */
	parse_ok("a: [{match: {operator: AlwaysTrue}}]", 0, "a", &s);
	cr_assert_eq(s.n, 1);
	affinity_set_clear(&s);
}

Test(parse, errors_say_where)
{
	parse_bad("a: [b", "line 2, column 1: did not find expected");
	parse_bad("a: b", "line 1, column 4: a: expected a list of affinities");
	parse_bad("- a", "line 1, column 1: expected a map of container names");
	parse_bad("a:\n- match: {key: name, operator: Equals, values: [x]}\n"
	    "  wieght: 2\n", "line 3, column 3: unknown field \"wieght\"");
	parse_bad("a:\n- match: {key: name, operator: Equal, values: [x]}\n",
	    "line 2, column 32: match: unknown operator \"Equal\"");
	parse_bad("a:\n- match: {key: nmae, operator: Exists}\n",
	    "line 2, column 10: match: unknown key \"nmae\"");
	parse_bad("a:\n- scope: {key: pod, operator: Exists}\n"
	    "  match: {key: name, operator: Exists}\n",
	    "line 2, column 10: scope: missing trailing pod key");
	parse_bad("a:\n- weight: 3\n", "line 2, column 3: an affinity needs "
	    "a match");
	parse_bad("a:\n- match: {key: name, operator: Exists}\n  weight: x\n",
	    "line 3, column 11: weight: expected an integer");
	parse_bad("a:\n- match: {key: name, operator: Exists}\n"
	    "  weight: 3000000000\n", "weight: expected an integer");
	parse_bad("a:\n- match: {key: name, operator: Equals}\n",
	    "requires a single value");
	parse_bad("a:\n- match: {key: name, operator: Matches, values: [\"[\"]}"
	    "\n", "bad pattern");
	parse_bad("a: []\na: []\n", "line 2, column 1: container \"a\" given "
	    "twice");
	parse_bad("a:\n- match: {key: name, key: id, operator: Exists}\n",
	    "\"key\" given twice");
	parse_bad("x: &m [ {match: {key: name, operator: Exists}} ]\na: *m\n",
	    "aliases are not supported");
	parse_bad("a:\n- match: {key: name, operator: Exists, values: [[1]]}\n",
	    "values: expected a string");
}

Test(parse, bounded)
{
	struct affinity_set	 s = { 0, NULL };
	char			*text = xstrdup("a:\n"), *tmp, *cause = NULL;
	int			 i;

	for (i = 0; i <= AFFINITY_MAX_RULES; i++) {
		xasprintf(&tmp, "%s- match: {key: name, operator: Exists}\n",
		    text);
		free(text);
		text = tmp;
	}
	cr_assert_neq(affinity_parse(text, 0, "a", &s, &cause), 0);
	cr_assert(strstr(cause, "more than 32 affinities") != NULL, "%s",
	    cause);
	free(cause);
	free(text);
}

/* Go's TestAffinities: pre-computed affinities by pool on "server". */

static struct env	e;

static void
server(void)
{
	env_open(&e, testlib_machine("server"),
	    "{\"preferIsolatedCPUs\":false}");
}

static void
close_env(void)
{
	env_close(&e);
}

TestSuite(go_affinities, .init = server, .fini = close_env);

static int
pool_id(const char *name)
{
	const struct pool_tree	*t = policy_tree(e.P);
	int			 i;

	for (i = 0; i < pool_tree_count(t); i++)
		if (strcmp(pool_tree_get(t, i)->name, name) == 0)
			return (i);
	cr_assert_fail("no pool %s", name);
	return (-1);
}

Test(go_affinities, table)
{
	static const struct {
		const char	*name;
		int		 reserved;
		const char	*pools[3];
		int		 weights[3];
		const char	*want;
	} t[] = {
		{ "no affinities", 0, { NULL }, { 0 }, "NUMA node #2" },
		{ "reserved - no affinities", 1, { NULL }, { 0 },
		  "NUMA node #0" },
		{ "affinity to NUMA node #1", 0, { "NUMA node #1" }, { 1 },
		  "NUMA node #1" },
		{ "affinity to socket #1", 0, { "socket #1" }, { 1 },
		  "socket #1" },
		{ "equal affinities to NUMA node #1, socket #1", 0,
		  { "socket #1", "NUMA node #1" }, { 1, 1 }, "NUMA node #1" },
		{ "equal affinities to NUMA node #1, NUMA node #3", 0,
		  { "NUMA node #1", "NUMA node #3" }, { 1, 1 }, "socket #1" },
		{ "double affinity to NUMA node #1 vs. #3", 0,
		  { "NUMA node #1", "NUMA node #3" }, { 2, 1 }, "socket #1" },
		{ "triple affinity to NUMA node #1 vs. #3", 0,
		  { "NUMA node #1", "NUMA node #3" }, { 3, 1 },
		  "NUMA node #1" },
		{ "double affinity to NUMA node #0,#3 vs. socket #1", 0,
		  { "NUMA node #0", "NUMA node #3", "socket #1" }, { 2, 2, 1 },
		  "root" },
		{ "equal affinity to NUMA node #0,#3 vs. socket #1", 0,
		  { "NUMA node #0", "NUMA node #3", "socket #1" }, { 1, 1, 1 },
		  "root" },
		{ "half the affinity to NUMA node #0,#3 vs. socket #1", 0,
		  { "NUMA node #0", "NUMA node #3", "socket #1" }, { 1, 1, 2 },
		  "socket #1" },
	};
	struct container_spec	 s;
	double			 extra[64];
	const char		*got;
	size_t			 i;
	int			 k;

	cr_assert_leq(pool_tree_count(policy_tree(e.P)), 64);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		memset(extra, 0, sizeof extra);
		for (k = 0; k < 3 && t[i].pools[k] != NULL; k++)
			extra[pool_id(t[i].pools[k])] = t[i].weights[k];
		memset(&s, 0, sizeof s);
		s.id = "x";
		s.name = "x";
		s.pod = "p";
		s.qos = QOS_GUARANTEED;
		s.cpu_request = 3000;
		s.cpu_limit = 3000;
		if (t[i].reserved)
			s.namespace = "kube-system";
		got = policy_pick_pool(e.P, &s, extra, &e.cause);
		cr_assert_not_null(got, "%s: %s", t[i].name, e.cause);
		if (!t[i].reserved)
			cr_assert_str_eq(got, t[i].want, "%s", t[i].name);
	}
}

/* Through the policy. */

struct ctr {
	const char	*id;
	const char	*name;
	const char	*pod;
	const char	*affinity;
	const char	*anti;
	const char	*label;		/* "k=v" of the pod, or NULL */
	long long	 cpu;		/* milli: Guaranteed; 0: BestEffort */
};

static int
create(const struct ctr *c)
{
	struct container_spec	 s;
	struct policy_kv	 ann[2], lab[1];
	char			*k = NULL;
	int			 n = 0, rc;

	memset(&s, 0, sizeof s);
	s.id = c->id;
	s.name = c->name;
	s.pod = c->pod;
	s.pod_uid = c->pod;
	s.pod_name = c->pod;
	s.namespace = "default";
	s.qos = c->cpu ? QOS_GUARANTEED : QOS_BESTEFFORT;
	s.cpu_request = c->cpu ? c->cpu : -1;
	s.cpu_limit = c->cpu ? c->cpu : -1;
	if (c->affinity != NULL) {
		ann[n].key = (char *)AFFINITY_KEY;
		ann[n++].value = (char *)c->affinity;
	}
	if (c->anti != NULL) {
		ann[n].key = (char *)ANTI_AFFINITY_KEY;
		ann[n++].value = (char *)c->anti;
	}
	s.annotations = ann;
	s.nannotations = n;
	if (c->label != NULL) {
		k = xstrdup(c->label);
		*strchr(k, '=') = '\0';
		lab[0].key = k;
		lab[0].value = k + strlen(k) + 1;
		s.pod_labels = lab;
		s.npod_labels = 1;
	}
	env_reset(&e);
	rc = policy_create(e.P, &s, &e.fx, &e.cause);
	free(k);
	return (rc);
}

/* The NUMA node a container's CPUs are on (-1: more than one). */
static int
node_of(const char *id)
{
	const struct pinning	*p = policy_pinning(e.P, id);
	const struct topology	*t = e.topo;
	int			 n = -1, c;

	cr_assert_not_null(p, "%s", id);
	for (c = 0; c < CPUSET_SETSIZE; c++) {
		if (!cpuset_has(&p->cpus, c))
			continue;
		if (n >= 0 && topology_cpu(t, c)->node != n)
			return (-1);
		n = topology_cpu(t, c)->node;
	}
	return (n);
}

TestSuite(placed, .init = server, .fini = close_env);

Test(placed, short_form_pulls_and_pushes)
{
	static const char aff[] = "a: [b]";
	static const char anti[] = "c: [a]";
	struct ctr	b = { "b", "b", "p", aff, anti, NULL, 2000 };
	struct ctr	a = { "a", "a", "p", aff, anti, NULL, 2000 };
	struct ctr	c = { "c", "c", "p", aff, anti, NULL, 2000 };
	struct ctr	plain = { "q", "a", "q", NULL, NULL, NULL, 2000 };
	int		nb, na;

	/* b is placed first (drawn to a, which is not there yet). */
	cr_assert_eq(create(&b), 0, "%s", e.cause);
	nb = node_of("b");
	cr_assert_geq(nb, 0);
	/* A container without affinities would go elsewhere... */
	cr_assert_eq(create(&plain), 0, "%s", e.cause);
	cr_assert_neq(node_of("q"), nb, "the test needs q elsewhere");
	cr_assert_eq(env_remove(&e, "q"), 0);
	/* ...a goes to b's node, c away from a's socket. */
	cr_assert_eq(create(&a), 0, "%s", e.cause);
	na = node_of("a");
	cr_assert_eq(na, nb);
	cr_assert_eq(create(&c), 0, "%s", e.cause);
	/* Only a's own node is pushed: -1 there, diluted above it. */
	cr_assert_geq(node_of("c"), 0);
	cr_assert_neq(node_of("c"), na);
}

Test(placed, full_form_across_pods_by_label)
{
	static const char aff[] = "web:\n"
	    "- scope: {key: namespace, operator: Equals, values: [default]}\n"
	    "  match: {key: pod/labels/app, operator: In, values: [db]}\n"
	    "  weight: 5\n";
	struct ctr	db1 = { "db1", "db", "dbpod", NULL, NULL, "app=db", 2000 };
	struct ctr	other = { "o1", "x", "opod", NULL, NULL, "app=no", 0 };
	struct ctr	web = { "w1", "web", "webpod", aff, NULL, NULL, 2000 };
	struct ctr	plain = { "q", "web", "qpod", NULL, NULL, NULL, 2000 };
	int		ndb;

	cr_assert_eq(create(&db1), 0, "%s", e.cause);
	cr_assert_eq(create(&other), 0, "%s", e.cause);
	ndb = node_of("db1");
	cr_assert_eq(create(&plain), 0, "%s", e.cause);
	cr_assert_neq(node_of("q"), ndb, "the test needs q elsewhere");
	cr_assert_eq(env_remove(&e, "q"), 0);
	cr_assert_eq(create(&web), 0, "%s", e.cause);
	cr_assert_eq(node_of("w1"), ndb);
}

Test(placed, bad_annotation_is_refused_whole)
{
	struct ctr	bad = { "z", "a", "p", "a:\n- match: {key: bad}\n", NULL,
	    NULL, 1000 };
	int		n = policy_ncontainers(e.P);

	cr_assert_neq(create(&bad), 0);
	cr_assert(strstr(e.cause, "container z: annotation "
	    "resource-policy.nri.io/affinity: line 2, column 10: match: "
	    "unknown key \"bad\"") != NULL, "%s", e.cause);
	cr_assert_eq(policy_ncontainers(e.P), n);
	cr_assert_null(policy_pinning(e.P, "z"));
}

/* As in Go, explicit affinities replace the implicit ones. */
Test(implicit, dropped_for_explicit)
{
	struct container_spec	 s;
	struct policy_kv	 ann[1];
	const char		*with, *without;
	struct ctr		 first = { "p-a", "a", "p", NULL, NULL, NULL,
	    2000 };

	env_open(&e, testlib_machine("server"),
	    "{\"preferIsolatedCPUs\":false,\"colocatePods\":true}");
	cr_assert_eq(create(&first), 0, "%s", e.cause);
	memset(&s, 0, sizeof s);
	s.id = "p-b";
	s.name = "b";
	s.pod = "p";
	s.namespace = "default";
	s.qos = QOS_GUARANTEED;
	s.cpu_request = 2000;
	s.cpu_limit = 2000;
	with = policy_pick_pool(e.P, &s, NULL, &e.cause);
	cr_assert_not_null(with);
	s.pod = "other";
	without = policy_pick_pool(e.P, &s, NULL, &e.cause);
	cr_assert_str_neq(with, without, "the test needs pulls to show");
	/* The same pod, with an affinity that matches nothing. */
	s.pod = "p";
	ann[0].key = (char *)AFFINITY_KEY;
	ann[0].value = (char *)"b: [nobody]";
	s.annotations = ann;
	s.nannotations = 1;
	cr_assert_str_eq(policy_pick_pool(e.P, &s, NULL, &e.cause), without);
	env_close(&e);
}

/* The index: a pod-scoped affinity looks at its pod only. */
Test(placed, looks_at_what_may_match)
{
	char		id[32], pod[32];
	struct ctr	c = { id, "x", pod, NULL, NULL, "app=web", 0 };
	struct ctr	a = { "pa", "a", "p", "a: [b]", NULL, NULL, 0 };
	struct ctr	b = { "pb", "b", "p", "a: [b]", NULL, NULL, 0 };
	struct ctr	g = { "g", "g", "gp", "g:\n- scope: {operator: "
	    "AlwaysTrue}\n  match: {key: pod/labels/app, operator: Equals, "
	    "values: [db]}\n", NULL, NULL, 0 };
	struct ctr	db = { "db", "db", "dbp", NULL, NULL, "app=db", 0 };
	unsigned long	before;
	int		i;

	for (i = 0; i < 300; i++) {
		snprintf(id, sizeof id, "c%d", i);
		snprintf(pod, sizeof pod, "p%d", i);
		cr_assert_eq(create(&c), 0, "%s", e.cause);
	}
	cr_assert_eq(create(&b), 0, "%s", e.cause);
	before = index_visit(e.P, 0);
	cr_assert_eq(create(&a), 0, "%s", e.cause);
	cr_assert_eq(index_visit(e.P, 0) - before, 1, "looked at %lu",
	    index_visit(e.P, 0) - before);
	cr_assert_eq(create(&db), 0, "%s", e.cause);
	before = index_visit(e.P, 0);
	cr_assert_eq(create(&g), 0, "%s", e.cause);
	cr_assert_eq(index_visit(e.P, 0) - before, 1);
}

/*
 * The index against the plain walk: on containers of mixed names, pods,
 * namespaces, QoS classes and labels, every affinity below weighs each
 * pool exactly as evaluating it on every container does, for a new
 * container and for one already held.
 */
static const char *const exprs[] = {
	"{key: name, operator: Equals, values: [a]}",
	"{key: name, operator: In, values: [a, c, \"*\"]}",
	"{key: name, operator: NotEqual, values: [b]}",
	"{key: namespace, operator: NotIn, values: [n1, n2]}",
	"{key: qosclass, operator: Equals, values: [Guaranteed]}",
	"{key: pod/qosclass, operator: NotEqual, values: [BestEffort]}",
	"{key: labels/app, operator: Exists}",
	"{key: labels/app, operator: NotExist}",
	"{key: pod/labels/tier, operator: In, values: [front, \"*\"]}",
	"{key: pod/labels/tier, operator: MatchesAny, values: [\"f*\", b?ck]}",
	"{key: pod/labels/tier, operator: MatchesNone, values: [\"f*\"]}",
	"{key: labels/app, operator: Matches, values: [\"w[a-e]b\"]}",
	"{key: labels/app, operator: MatchesNot, values: [web]}",
	"{key: pod/name, operator: Equals, values: [p3]}",
	"{key: pod/uid, operator: In, values: [u1, u2]}",
	"{key: pod/id, operator: NotIn, values: [p1]}",
	"{key: id, operator: In, values: [c1, c7, nope]}",
	"{key: \":pod/name:name\", operator: Equals, values: [\"p2:b\"]}",
	"{key: \":,-labels/app,pod/labels/tier\", operator: NotEqual, "
	    "values: [web-front]}",
	"{key: tags/x, operator: NotExist}",
	"{key: uid, operator: Exists}",
	"{operator: AlwaysTrue}",
	"{key: labels/io.kubernetes.pod.name, operator: Equals, values: [p3]}",
	"{key: labels/io.kubernetes.container.name, operator: In, "
	    "values: [a, zz]}",
	"{key: labels/io.kubernetes.pod.namespace, operator: NotEqual, "
	    "values: [n1]}",
	"{key: labels/io.kubernetes.pod.namespace, operator: In, "
	    "values: [other, n2]}",
	"{key: labels/io.kubernetes.pod.uid, operator: Exists}",
};

static void
brute(const struct policy *P, const struct cspec *self,
    const struct affinity_set *set, double *aff)
{
	struct expr_subject	 s;
	struct grant		**v;
	size_t			 i, n;
	int			 k;

	v = (struct grant **)strmap_values(P->ctrs, &n);
	for (k = 0; k < set->n; k++)
		for (i = 0; i < n; i++) {
			const struct affinity *a = &set->v[k];
			const struct cspec *c = &v[i]->spec;

			if (v[i]->pool == NULL || strcmp(c->id, self->id) == 0)
				continue;
			cspec_subject(c, &s);
			if (a->pod_scope ? (c->pod != NULL && self->pod != NULL &&
			    strcmp(c->pod, self->pod) == 0) :
			    expr_eval(&a->scope, &s))
				if (expr_eval(&a->match, &s))
					aff[v[i]->pool->id] += a->weight;
		}
	free(v);
}

static void
compare(const struct cspec *self, const char *yaml)
{
	struct affinity_set	 set = { 0, NULL };
	double			 got[64] = { 0 }, want[64] = { 0 };
	char			*cause = NULL;
	int			 i;

	cr_assert_eq(affinity_parse(yaml, 0, self->name, &set, &cause), 0,
	    "%s: %s", yaml, cause);
	cr_assert_gt(set.n, 0);
	affinity_weigh(e.P, self, &set, got);
	brute(e.P, self, &set, want);
	for (i = 0; i < pool_tree_count(policy_tree(e.P)); i++)
		cr_assert_eq(got[i], want[i], "%s (self %s): pool %d: %g, "
		    "walking all gives %g", yaml, self->id, i, got[i], want[i]);
	affinity_set_clear(&set);
}

Test(placed, index_weighs_as_walking_all)
{
	static const char *const names[] = { "a", "b", "c" };
	static const char *const nss[] = { "n1", "n2", "n3" };
	static const char *const apps[] = { "web", "wdb", NULL };
	static const char *const tiers[] = { "front", "back", "fx", NULL };
	struct container_spec	 s;
	struct policy_kv	 lab[4], plab[1];
	char			 id[16], pod[16], uid[16], *yaml;
	const struct grant	*held;
	struct cspec		 fresh;
	size_t			 i, j, k;
	unsigned long		 before;

	cr_assert_leq(pool_tree_count(policy_tree(e.P)), 64);
	for (i = 0; i < 60; i++) {
		memset(&s, 0, sizeof s);
		snprintf(id, sizeof id, "c%zu", i);
		snprintf(pod, sizeof pod, "p%zu", i % 7);
		snprintf(uid, sizeof uid, "u%zu", i % 7);
		s.id = id;
		s.name = names[i % 3];
		s.pod = i % 11 == 5 ? NULL : pod;
		s.pod_uid = uid;
		s.pod_name = pod;
		s.namespace = nss[(i / 7) % 3];
		s.qos = (enum qos_class)(i % 3);
		s.cpu_request = s.qos == QOS_GUARANTEED ? 1000 :
		    s.qos == QOS_BURSTABLE ? 100 : -1;
		s.cpu_limit = s.qos == QOS_GUARANTEED ? 1000 : -1;
		s.labels = lab;
		if (apps[i % 3] != NULL) {
			lab[s.nlabels].key = (char *)"app";
			lab[s.nlabels++].value = (char *)apps[i % 3];
		}
		/* The kubelet's labels: mostly copies of their fields (kept
		 * as bits), some not (kept as labels). */
		if (i % 4 != 3) {
			lab[s.nlabels].key =
			    (char *)"io.kubernetes.container.name";
			lab[s.nlabels++].value = (char *)s.name;
			lab[s.nlabels].key = (char *)"io.kubernetes.pod.name";
			lab[s.nlabels++].value = pod;
			lab[s.nlabels].key =
			    (char *)"io.kubernetes.pod.namespace";
			lab[s.nlabels++].value = i % 4 == 2 ? (char *)"other" :
			    (char *)s.namespace;
		}
		if (tiers[(i / 7) % 4] != NULL) {
			plab[0].key = (char *)"tier";
			plab[0].value = (char *)tiers[(i / 7) % 4];
			s.pod_labels = plab;
			s.npod_labels = 1;
		}
		env_reset(&e);
		cr_assert_eq(policy_create(e.P, &s, &e.fx, &e.cause), 0, "%s",
		    e.cause);
	}
	held = strmap_get(e.P->ctrs, "c9");
	cr_assert_not_null(held);
	memset(&fresh, 0, sizeof fresh);
	fresh.id = (char *)"new";
	fresh.name = (char *)"a";
	fresh.pod = (char *)"p3";
	for (i = 0; i < sizeof exprs / sizeof exprs[0]; i++)
		for (j = 0; j < sizeof exprs / sizeof exprs[0]; j += 3)
			for (k = 0; k < 2; k++) {
				xasprintf(&yaml, "%s:\n- scope: %s\n  match: %s\n"
				    "  weight: %d\n", k ? "a" : held->spec.name,
				    exprs[j], exprs[i], (int)(i % 5) - 2 ?: 3);
				compare(k ? &fresh : &held->spec, yaml);
				free(yaml);
			}
	/* And the short form, pod-scoped. */
	compare(&held->spec, "a: [b, c]\nb: [c]\n");
	compare(&fresh, "a: [b, c]\n");
	/* A negation beside AlwaysTrue is counted, not walked. */
	before = index_visit(e.P, 0);
	compare(&fresh, "a:\n- scope: {operator: AlwaysTrue}\n"
	    "  match: {key: labels/app, operator: NotIn, values: [web]}\n");
	cr_assert_leq(index_visit(e.P, 0) - before, 20);
}

/* A sync takes a known container's labels and pod name from the runtime
 * (labels change in Kubernetes), and the index follows. */
Test(placed, sync_takes_new_labels)
{
	struct container_spec	 s;
	struct policy_kv	 plab[1] = { { (char *)"app", (char *)"x" } };
	const struct grant	*g;
	double			 aff[64] = { 0 };
	struct affinity_set	 set = { 0, NULL };
	struct cspec		 self;
	struct ctr		 other = { "o", "o", "op", NULL, NULL, NULL, 0 };

	memset(&s, 0, sizeof s);
	s.id = "c";
	s.name = "c";
	s.pod = "p";
	s.pod_name = "old";
	s.namespace = "default";
	s.qos = QOS_BESTEFFORT;
	s.cpu_request = s.cpu_limit = -1;
	s.pod_labels = plab;
	s.npod_labels = 1;
	env_reset(&e);
	cr_assert_eq(policy_create(e.P, &s, &e.fx, &e.cause), 0, "%s", e.cause);
	cr_assert_eq(create(&other), 0, "%s", e.cause);
	plab[0].value = (char *)"db";
	s.pod_name = "new";
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, &s, 1, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	g = strmap_get(e.P->ctrs, "c");
	cr_assert_not_null(g);
	cr_assert_str_eq(g->spec.pod_name, "new");
	cr_assert_eq(g->spec.npod_labels, 1);
	cr_assert_str_eq(g->spec.pod_labels[0].value, "db");
	cr_assert_null(strmap_get(e.P->ctrs, "o"));
	cr_assert_eq(affinity_parse("w:\n- scope: {operator: AlwaysTrue}\n"
	    "  match: {key: pod/labels/app, operator: Equals, values: [db]}\n",
	    0, "w", &set, &e.cause), 0);
	memset(&self, 0, sizeof self);
	self.id = (char *)"w";
	self.name = (char *)"w";
	affinity_weigh(e.P, &self, &set, aff);
	cr_assert_eq(aff[g->pool->id], 1);
	affinity_set_clear(&set);
}

/* Names cut at POLICY_MAX_NAME bytes of state text, at the edge: a
 * control byte takes six there, a quote two, a letter one. */
Test(expr, names_cut_at_their_text)
{
	static const struct {
		char	c;
		int	width;
	} kinds[] = { { '\001', 6 }, { '"', 2 }, { 'a', 1 } };
	struct container_spec	 s;
	struct cspec		 c;
	char			 name[POLICY_MAX_NAME + 8];
	size_t			 k;
	int			 n, want;

	memset(&s, 0, sizeof s);
	s.id = "x";
	for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (n = POLICY_MAX_NAME / kinds[k].width - 3;
		    n <= POLICY_MAX_NAME / kinds[k].width + 3 &&
		    n < (int)sizeof name; n++) {
			memset(name, kinds[k].c, (size_t)n);
			name[n] = '\0';
			s.name = name;
			s.namespace = name;
			cspec_copy(&c, &s);
			want = n < POLICY_MAX_NAME / kinds[k].width ? n :
			    POLICY_MAX_NAME / kinds[k].width;
			cr_assert_eq((int)strlen(c.name), want, "%d of %d",
			    n, kinds[k].c);
			cr_assert_str_eq(c.name, c.ns);
			cspec_clear(&c);
		}
}

/* The kubelet's label keys and only they, whatever else shares their
 * prefix or their length. */
Test(expr, kube_labels_by_key)
{
	static const char *const not[] = { "io.kubernetes.", "io.kubernetes",
	    "io.kubernetes.pod.nam", "io.kubernetes.pod.namex",
	    "io.kubernetes.pod.uix", "io.kubernetes.pod.namespacE",
	    "io.kubernetex.pod.uid", "io.kubernetes.podxuid",
	    "io.kubernetes.container.namf", "io.kubernetes.pod.name ",
	    "", "app" };
	char	key[64];
	size_t	i, j, len;
	int	k;

	cr_assert_str_eq(expr_kube_key(0), "io.kubernetes.container.name");
	cr_assert_str_eq(expr_kube_key(1), "io.kubernetes.pod.name");
	cr_assert_str_eq(expr_kube_key(2), "io.kubernetes.pod.namespace");
	cr_assert_str_eq(expr_kube_key(3), "io.kubernetes.pod.uid");
	for (k = 0; k < EXPR_KUBE_LABELS; k++) {
		cr_assert_eq(expr_kube_label(expr_kube_key(k)), k);
		/* Any one byte after the prefix changed: not a kubelet's. */
		len = strlen(expr_kube_key(k));
		for (i = 14; i < len; i++) {
			memcpy(key, expr_kube_key(k), len + 1);
			key[i] ^= 0x20;
			cr_assert_eq(expr_kube_label(key), -1, "%s", key);
		}
	}
	for (j = 0; j < sizeof not / sizeof not[0]; j++)
		cr_assert_eq(expr_kube_label(not[j]), -1, "%s", not[j]);
}

/* What a sync compares without copying: folded kubelet labels too. */
Test(expr, same_meta_sees_folded_labels)
{
	struct policy_kv	 lab[3] = {
		{ (char *)"io.kubernetes.pod.uid", (char *)"u1" },
		{ (char *)"app", (char *)"web" },
		{ (char *)"io.kubernetes.container.name", (char *)"c" },
	};
	struct container_spec	 s;
	struct cspec		 c;

	memset(&s, 0, sizeof s);
	s.id = "x";
	s.name = "c";
	s.pod = "p";
	s.pod_uid = "u1";
	s.labels = lab;
	s.nlabels = 3;
	cspec_copy(&c, &s);
	cr_assert_eq(c.nlabels, 1);
	cr_assert_eq(c.kube_labels, (1u << 0) | (1u << 3));
	cr_assert(cspec_same_meta(&c, &s));
	lab[1].value = (char *)"db";
	cr_assert_not(cspec_same_meta(&c, &s));
	lab[1].value = (char *)"web";
	lab[0].value = (char *)"u2";		/* no longer its field */
	cr_assert_not(cspec_same_meta(&c, &s));
	lab[0].value = (char *)"u1";
	s.nlabels = 2;				/* one gone */
	cr_assert_not(cspec_same_meta(&c, &s));
	cspec_clear(&c);
}

/*
 * The labels a copy keeps, as cspec_copy promises them, written plainly:
 * each key once (cleaned), where it first appears, with its last value;
 * at most POLICY_MAX_LABELS of them and POLICY_MAX_LABEL_BYTES of raw
 * keys and values; then the kubelet's labels equal to the fields they
 * copy taken out as bits. *dropped counts the entries past the caps.
 */
static int
model_labels(const struct container_spec *s, const char *const *field,
    char **key, char **val, unsigned *bits, int *dropped)
{
	size_t	 bytes = 0, len;
	char	*ck;
	int	 i, j, n = 0, m = 0, k;

	*bits = 0;
	*dropped = 0;
	for (i = 0; i < s->nlabels; i++) {
		if (s->labels[i].key == NULL)
			continue;
		ck = utf8_clean(s->labels[i].key);
		for (j = 0; j < n && strcmp(key[j], ck) != 0; j++)
			;
		if (j < n) {
			free(ck);
			free(val[j]);
			val[j] = utf8_clean(s->labels[i].value ?
			    s->labels[i].value : "");
			continue;
		}
		len = strlen(s->labels[i].key) + (s->labels[i].value ?
		    strlen(s->labels[i].value) : 0);
		if (n >= POLICY_MAX_LABELS || bytes + len >
		    POLICY_MAX_LABEL_BYTES) {
			free(ck);
			(*dropped)++;
			continue;
		}
		bytes += len;
		key[n] = ck;
		val[n++] = utf8_clean(s->labels[i].value ? s->labels[i].value :
		    "");
	}
	for (i = 0; i < n; i++) {
		k = expr_kube_label(key[i]);
		if (k >= 0 && field[k] != NULL && strcmp(field[k], val[i]) == 0) {
			*bits |= 1u << k;
			free(key[i]);
			free(val[i]);
			continue;
		}
		key[m] = key[i];
		val[m++] = val[i];
	}
	return (m);
}

/* Whether kubelet label k's last value in s is v: it would fold, kept. */
static int
labels_last_is(const struct container_spec *s, int k, const char *v)
{
	const char	*last = NULL;
	int		 i;

	for (i = 0; i < s->nlabels; i++)
		if (s->labels[i].key != NULL &&
		    strcmp(s->labels[i].key, expr_kube_key(k)) == 0)
			last = s->labels[i].value ? s->labels[i].value : "";
	return (last != NULL && v != NULL && strcmp(last, v) == 0);
}

/*
 * The kubelet's labels become bits as they are copied, which must keep
 * what copying all and folding after kept: random label lists of kubelet
 * keys given once or twice, equal to their fields or not (or only once
 * cleaned), among others, up to and past both caps, where a kubelet
 * label that would fold is lost.
 */
Test(expr, copy_folds_as_copying_all_then_folding)
{
	static const char *const vals[] = { "c", "p", "ns", "u1", "other",
	    "\xff", "c\xff", "", NULL };
	static const char *const others[] = { "app", "tier", "\xfe" "app",
	    "io.kubernetes.other" };
	const char		*field[EXPR_KUBE_LABELS];
	struct policy_kv	 lab[POLICY_MAX_LABELS + 24];
	struct container_spec	 s;
	struct cspec		 c;
	char			*key[POLICY_MAX_LABELS + 24];
	char			*val[POLICY_MAX_LABELS + 24];
	char			 name[POLICY_MAX_LABELS + 24][32];
	char			*big = xmalloc(POLICY_MAX_LABEL_BYTES / 3);
	unsigned		 bits, seen = 0;
	int			 round, i, n, m, k, dropped, got, partial = 0;
	int			 late = 0, capped = 0, lost = 0, many;

	memset(big, 'v', POLICY_MAX_LABEL_BYTES / 3 - 1);
	big[POLICY_MAX_LABEL_BYTES / 3 - 1] = '\0';
	memset(&s, 0, sizeof s);
	s.id = "x";
	s.pod = "p";
	s.pod_name = "p";
	s.namespace = "ns";
	s.pod_uid = "u1";
	srand48(7);
	for (round = 0; round < 3000; round++) {
		/* A name that is not UTF-8: kept cleaned, and equal to a
		 * label's value only once that is cleaned too. */
		s.name = round % 2 ? "c\xff" : "c";
		for (k = 0; k < EXPR_KUBE_LABELS; k++)
			field[k] = expr_kube_field(k, round % 2 ?
			    "c\xef\xbf\xbd" : "c", "ns", "p", "p", "u1");
		/* One round in ten of many keys, most given once: past the
		 * count cap, where a kubelet label may come too late. */
		many = round % 10 == 0;
		n = many ? POLICY_MAX_LABELS - 8 + (int)(lrand48() % 32) :
		    (int)(lrand48() % 12);
		for (i = 0; i < n; i++) {
			switch (lrand48() % (many && i < POLICY_MAX_LABELS -
			    4 ? 32 : 4)) {
			case 0:
			case 1:
				lab[i].key = (char *)expr_kube_key(
				    (int)(lrand48() % EXPR_KUBE_LABELS));
				break;
			case 2:
				lab[i].key = (char *)others[lrand48() % 4];
				break;
			default:
				snprintf(name[i], sizeof name[i], "l%ld",
				    many ? (long)i : lrand48() % 200);
				lab[i].key = name[i];
			}
			if (lrand48() % 50 == 0)
				lab[i].key = NULL;
			lab[i].value = (char *)vals[lrand48() % 9];
			if (round % 7 == 0 && lrand48() % 8 == 0)
				lab[i].value = big;
		}
		s.labels = lab;
		s.nlabels = n;
		m = model_labels(&s, field, key, val, &bits, &dropped);
		got = cspec_copy(&c, &s);
		cr_assert_eq(got, dropped, "round %d: %d dropped, model %d",
		    round, got, dropped);
		cr_assert_eq(c.kube_labels, bits, "round %d: bits %u, model %u",
		    round, c.kube_labels, bits);
		cr_assert_eq(c.nlabels, m, "round %d: %d labels, model %d",
		    round, c.nlabels, m);
		for (i = 0; i < m; i++) {
			cr_assert_str_eq(c.labels[i].key, key[i], "round %d",
			    round);
			cr_assert_str_eq(c.labels[i].value, val[i], "round %d",
			    round);
			free(key[i]);
			free(val[i]);
		}
		seen |= bits;
		partial += dropped > 0 && bits != 0;
		late += round % 2 && (bits & 1u << expr_kube_label(
		    "io.kubernetes.container.name"));
		capped += many && dropped > 0 && bits != 0;
		for (k = 0; k < EXPR_KUBE_LABELS; k++)
			lost += many && !(bits & 1u << k) &&
			    labels_last_is(&s, k, field[k]);
		cspec_clear(&c);
	}
	/* The rounds reached every bit, and the caps with bits kept. */
	cr_assert_eq(seen, (1u << EXPR_KUBE_LABELS) - 1);
	cr_assert_gt(partial, 0);
	cr_assert_gt(late, 0);
	cr_assert_gt(capped, 0);
	cr_assert_gt(lost, 0);
	free(big);
}

/*
 * A sync gives a known container the runtime's labels, folded against the
 * runtime's fields; where the grant keeps another field (no pod UID, as
 * an older state had), the label is kept as a label.
 */
Test(placed, sync_refolds_against_the_kept_fields)
{
	struct policy_kv	 lab[2] = {
		{ (char *)"io.kubernetes.pod.uid", (char *)"u9" },
		{ (char *)"io.kubernetes.container.name", (char *)"c" },
	};
	struct container_spec	 s;
	const struct grant	*g;
	struct policy_kv	*all;
	char			*text;
	size_t			 len;
	int			 n;

	memset(&s, 0, sizeof s);
	s.id = "c";
	s.name = "c";
	s.pod = "p";
	s.namespace = "default";
	s.qos = QOS_BESTEFFORT;
	s.cpu_request = s.cpu_limit = -1;
	env_reset(&e);
	cr_assert_eq(policy_create(e.P, &s, &e.fx, &e.cause), 0, "%s", e.cause);
	s.pod_uid = "u9";
	s.labels = lab;
	s.nlabels = 2;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, &s, 1, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	g = strmap_get(e.P->ctrs, "c");
	cr_assert_not_null(g);
	cr_assert_null(g->spec.pod_uid);
	cr_assert_eq(g->spec.kube_labels,
	    1u << expr_kube_label("io.kubernetes.container.name"));
	cr_assert_eq(g->spec.nlabels, 1);
	cr_assert_str_eq(g->spec.labels[0].key, "io.kubernetes.pod.uid");
	cr_assert_str_eq(g->spec.labels[0].value, "u9");
	all = cspec_labels(&g->spec, &n);
	cr_assert_eq(n, 2);
	free(all);
	text = policy_snapshot_text(e.P, 0, NULL, &len);
	cr_assert_not_null(text);
	cr_assert(strstr(text, "\"io.kubernetes.pod.uid\":\"u9\"") != NULL,
	    "%s", text);
	free(text);
	/* A pod name the grant learns with the sync (an older state had
	 * none): its label folds against the name it now keeps. */
	s.pod_name = "web-0";
	lab[1].key = (char *)"io.kubernetes.pod.name";
	lab[1].value = (char *)"web-0";
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, &s, 1, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	g = strmap_get(e.P->ctrs, "c");
	cr_assert_str_eq(g->spec.pod_name, "web-0");
	all = cspec_labels(&g->spec, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(policy_kv_get(all, n, "io.kubernetes.pod.name"),
	    "web-0");
	free(all);
}
