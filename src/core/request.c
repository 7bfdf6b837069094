/*
 * request.c owns how a container's QoS class, CPU request and limit, pod
 * annotations and namespace become a CPU request (anchor §2.2), and the
 * policy's own copy of a container's description (with the pod's name and
 * the pod's and the container's labels, which affinities match).
 */
#include "autoconf.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "memzone.h"
#include "policy_priv.h"
#include "textbuf.h"
#include "utf8.h"
#include "xmalloc.h"

/*
 * What the policy keeps of a peer's strings is cleaned to UTF-8 (protobuf
 * does not check them): it goes into the JSON state document, and a
 * container is kept rather than refused (or a whole sync with it), and
 * restored after a restart exactly as it was held.
 *
 * Only entries keep() wants are kept, at most max of them and maxbytes
 * of keys and values (a pod writes what it likes into its spec): the
 * rest are counted in *dropped. A key given twice is kept once, where it
 * first appears, with its last value, which is what a JSON object of the
 * saved state can hold; the index makes that linear. Keys are compared
 * cleaned, as the saved state holds them: two that differ only in bytes
 * that are not UTF-8 are one key there, and take one place under the caps.
 */
#define KV_SCAN_MAX	16

/*
 * A copy's kubelet labels to be folded as they are copied (cspec_copy):
 * fold, the labels' bits; nocc, how many entries carry them. *folded gets
 * the bits of those kept under the caps.
 */
struct kv_fold {
	unsigned	 fold;
	int		 nocc;
	unsigned	*folded;
};

/*
 * Whether entry e, new to a copy, fits its caps: then counted in *kept
 * and *bytes, else in *dropped. The one rule for kept and folded entries.
 */
static int
kv_fits(const struct policy_kv *e, int *kept, int max, size_t *bytes,
    size_t maxbytes, int *dropped)
{
	size_t	len = strlen(e->key) + (e->value ? strlen(e->value) : 0);

	if (*kept >= max || *bytes + len > maxbytes) {
		(*dropped)++;
		return (0);
	}
	*bytes += len;
	(*kept)++;
	return (1);
}

/*
 * An entry of a label fold takes: counted under the caps where it first
 * appears, as if it were kept, and copied nowhere. 1 when it did.
 */
static int
kv_fold_take(const struct kv_fold *fo, const struct policy_kv *e, int *kept,
    int max, size_t *bytes, size_t maxbytes, int *dropped)
{
	int	k;

	if (fo == NULL || (k = expr_kube_label(e->key)) < 0 ||
	    !(fo->fold & (1u << k)))
		return (0);
	/* Given again: the one counted takes the last value, which folds. */
	if (!(*fo->folded & (1u << k)) &&
	    kv_fits(e, kept, max, bytes, maxbytes, dropped))
		*fo->folded |= 1u << k;
	return (1);
}

static void
kv_copy(struct policy_kv **out, int *nout, const struct policy_kv *in, int n,
    int (*keep)(const char *), int max, size_t maxbytes, int *dropped,
    const struct kv_fold *fo)
{
	struct strmap	*seen = NULL;
	size_t		 bytes = 0;
	void		*at;
	char		*key;
	int		 i, j, k = 0, kept = 0, room = n;

	*out = NULL;
	*nout = 0;
	if (n <= 0)
		return;
	/* Room for the entries that may be copied: none of a fold's. */
	if (fo != NULL)
		room -= fo->nocc;
	if (room > 0)
		*out = xcalloc((size_t)(room < max ? room : max) + 1,
		    sizeof **out);
	/* A few entries are compared in place; a map costs more there. */
	if (n > KV_SCAN_MAX)
		seen = strmap_new();
	for (i = 0; i < n; i++) {
		if (in[i].key == NULL || !keep(in[i].key))
			continue;
		if (kv_fold_take(fo, &in[i], &kept, max, &bytes, maxbytes,
		    dropped))
			continue;
		key = utf8_clean(in[i].key);
		at = NULL;
		if (seen != NULL)
			at = strmap_get(seen, key);
		else
			for (j = 0; j < k && at == NULL; j++)
				if (strcmp((*out)[j].key, key) == 0)
					at = (void *)(intptr_t)(j + 1);
		if (at != NULL) {
			free(key);
			free((*out)[(intptr_t)at - 1].value);
			(*out)[(intptr_t)at - 1].value = utf8_clean(in[i].value ?
			    in[i].value : "");
			continue;
		}
		if (!kv_fits(&in[i], &kept, max, &bytes, maxbytes, dropped)) {
			free(key);
			continue;
		}
		(*out)[k].key = key;
		(*out)[k].value = utf8_clean(in[i].value ? in[i].value : "");
		if (seen != NULL)
			strmap_put(seen, key, (void *)(intptr_t)(k + 1));
		k++;
	}
	strmap_free(seen);
	*nout = k;
	/* Most of a pod's annotations are not ours: keep no room for them. */
	if (k == 0) {
		free(*out);
		*out = NULL;
	} else if (k < room)
		*out = xreallocarray(*out, (size_t)k + 1, sizeof **out);
}

const char *
cspec_kube_field(const struct cspec *c, int k)
{
	return (expr_kube_field(k, c->name, c->ns, c->pod, c->pod_name,
	    c->pod_uid));
}

/*
 * The kubelet's labels of in that cspec_fold_labels would fold into c's
 * bits: a key whose last value (the one kv_copy keeps) equals the field
 * it copies. The field is clean UTF-8, so such a value is too, and its
 * cleaned copy would be the same bytes. Others (a value that is equal
 * only once cleaned) are copied and folded after.
 */
static void
kv_fold_of(const struct cspec *c, const struct policy_kv *in, int n,
    struct kv_fold *fo)
{
	const char	*last[EXPR_KUBE_LABELS] = { NULL }, *f;
	int		 occ[EXPR_KUBE_LABELS] = { 0 }, i, k;

	fo->fold = 0;
	fo->nocc = 0;
	for (i = 0; i < n; i++) {
		if (in[i].key == NULL || (k = expr_kube_label(in[i].key)) < 0)
			continue;
		last[k] = in[i].value != NULL ? in[i].value : "";
		occ[k]++;
	}
	for (k = 0; k < EXPR_KUBE_LABELS; k++) {
		if (last[k] == NULL || (f = cspec_kube_field(c, k)) == NULL ||
		    strcmp(f, last[k]) != 0)
			continue;
		fo->fold |= 1u << k;
		fo->nocc += occ[k];
	}
}

static void	kv_free(struct policy_kv *, int);

static int
keep_annotation(const char *key)
{
	return (strstr(key, ANNOTATION_NS) != NULL);
}

static int
keep_env(const char *key)
{
	return (strncmp(key, DRA_ENV_PREFIX, strlen(DRA_ENV_PREFIX)) == 0);
}

static int
keep_all(const char *key)
{
	return (1);
}

static char *
dupornull(const char *s)
{
	return (s != NULL ? utf8_clean(s) : NULL);
}

/* A name cut to POLICY_MAX_NAME bytes of state text, at a character. */
static void
cut_name(char *s)
{
	size_t	n;

	/* A byte escapes to six at most: a short name is never cut. */
	if (s == NULL || strnlen(s, POLICY_MAX_NAME / 6 + 1) <=
	    POLICY_MAX_NAME / 6)
		return;
	(void)tb_esc_len(s, POLICY_MAX_NAME, &n);
	s[n] = '\0';
}

/* The names bound what a container costs besides its metadata. */
static void
cut_names(struct cspec *c)
{
	cut_name(c->name);
	cut_name(c->pod);
	cut_name(c->pod_uid);
	cut_name(c->pod_name);
	cut_name(c->ns);
}

/* Returns how many entries past the caps were not kept. */
int
cspec_copy(struct cspec *c, const struct container_spec *s)
{
	struct kv_fold	fo;
	unsigned	folded = 0;
	int		dropped = 0;

	memset(c, 0, sizeof *c);
	c->id = xstrdup(s->id);
	c->name = dupornull(s->name);
	c->pod = dupornull(s->pod);
	c->pod_uid = dupornull(s->pod_uid);
	c->pod_name = dupornull(s->pod_name);
	c->ns = dupornull(s->namespace);
	c->qos = s->qos;
	c->request = s->cpu_request;
	c->limit = s->cpu_limit;
	c->mem_limit = s->mem_limit;
	c->oom_adj = s->oom_adj;
	c->has_oom = s->has_oom;
	/* The names as kept, which the labels fold against. */
	cut_names(c);
	kv_copy(&c->ann, &c->nann, s->annotations, s->nannotations,
	    keep_annotation, POLICY_MAX_ANNOTATIONS, POLICY_MAX_KEPT_BYTES / 2,
	    &dropped, NULL);
	kv_copy(&c->env, &c->nenv, s->env, s->nenv, keep_env,
	    POLICY_MAX_CLAIM_ENV, POLICY_MAX_KEPT_BYTES / 2, &dropped, NULL);
	/* Any label may be matched, so all are kept, within the caps; the
	 * kubelet's that copy a field become bits as they are. */
	kv_fold_of(c, s->labels, s->nlabels, &fo);
	fo.folded = &folded;
	kv_copy(&c->labels, &c->nlabels, s->labels, s->nlabels, keep_all,
	    POLICY_MAX_LABELS, POLICY_MAX_LABEL_BYTES, &dropped, &fo);
	c->kube_labels = folded;
	kv_copy(&c->pod_labels, &c->npod_labels, s->pod_labels,
	    s->npod_labels, keep_all, POLICY_MAX_LABELS,
	    POLICY_MAX_LABEL_BYTES, &dropped, NULL);
	cspec_fold_labels(c);
	c->cost = cspec_cost(c);
	return (dropped);
}

void
cspec_dup(struct cspec *c, const struct cspec *s)
{
	int	dropped = 0;

	memset(c, 0, sizeof *c);
	c->id = xstrdup(s->id);
	c->name = dupornull(s->name);
	c->pod = dupornull(s->pod);
	c->pod_uid = dupornull(s->pod_uid);
	c->pod_name = dupornull(s->pod_name);
	c->ns = dupornull(s->ns);
	c->qos = s->qos;
	c->request = s->request;
	c->limit = s->limit;
	c->mem_limit = s->mem_limit;
	c->oom_adj = s->oom_adj;
	c->has_oom = s->has_oom;
	kv_copy(&c->ann, &c->nann, s->ann, s->nann, keep_all, s->nann + 1,
	    SIZE_MAX, &dropped, NULL);
	kv_copy(&c->env, &c->nenv, s->env, s->nenv, keep_all, s->nenv + 1,
	    SIZE_MAX, &dropped, NULL);
	kv_copy(&c->labels, &c->nlabels, s->labels, s->nlabels, keep_all,
	    s->nlabels + 1, SIZE_MAX, &dropped, NULL);
	kv_copy(&c->pod_labels, &c->npod_labels, s->pod_labels,
	    s->npod_labels, keep_all, s->npod_labels + 1, SIZE_MAX, &dropped, NULL);
	c->kube_labels = s->kube_labels;
	c->cost = s->cost;
	c->trimmed = s->trimmed;
}

/* The text of n entries in the state, "key":"value" and a comma each;
 * with claims, a DRA_CPUSET_<uid> key's uid once more, as a claim-pinned
 * grant lists it. */
static size_t
kv_cost(const struct policy_kv *kv, int n, int claims)
{
	size_t	sum = 0;
	int	i;

	for (i = 0; i < n; i++) {
		sum += tb_esc_len(kv[i].key, SIZE_MAX, NULL) +
		    tb_esc_len(kv[i].value ? kv[i].value : "", SIZE_MAX,
		    NULL) + 6;
		if (claims)
			sum += tb_esc_len(kv[i].key + strlen(DRA_ENV_PREFIX),
			    SIZE_MAX, NULL) + 3;
	}
	return (sum);
}

/*
 * What a container's metadata (POLICY_META_BUDGET) takes of the state
 * text: walked once, when its cspec is made; the policy adds it up as
 * grants come and go.
 */
size_t
cspec_cost(const struct cspec *c)
{
	return (kv_cost(c->ann, c->nann, 0) + kv_cost(c->env, c->nenv, 1) +
	    kv_cost(c->labels, c->nlabels, 0) +
	    kv_cost(c->pod_labels, c->npod_labels, 0));
}

/*
 * At the budget: the labels and pod labels go (they serve only other
 * containers' affinities), and with all the annotations and variables
 * too (the container is then placed as if it had none).
 */
void
cspec_trim(struct cspec *c, int all)
{
	kv_free(c->labels, c->nlabels);
	kv_free(c->pod_labels, c->npod_labels);
	c->labels = c->pod_labels = NULL;
	c->nlabels = c->npod_labels = 0;
	if (all) {
		kv_free(c->ann, c->nann);
		kv_free(c->env, c->nenv);
		c->ann = c->env = NULL;
		c->nann = c->nenv = 0;
	}
	c->trimmed = 1;
	c->cost = cspec_cost(c);
}

/*
 * The kubelet's labels that equal the fields they copy become bits of
 * kube_labels (expr.c reads them back): a container's biggest labels,
 * kept once.
 */
void
cspec_fold_labels(struct cspec *c)
{
	const char	*f;
	int		 i, k, j = 0;

	for (i = 0; i < c->nlabels; i++) {
		k = expr_kube_label(c->labels[i].key);
		f = k < 0 ? NULL : cspec_kube_field(c, k);
		if (f != NULL && strcmp(f, c->labels[i].value) == 0) {
			c->kube_labels |= 1u << k;
			free(c->labels[i].key);
			free(c->labels[i].value);
			continue;
		}
		c->labels[j++] = c->labels[i];
	}
	c->nlabels = j;
	if (j == 0) {
		free(c->labels);
		c->labels = NULL;
	}
}

/* All its labels, folded ones too: a new array of its strings (free
 * the array only); *n their count. */
struct policy_kv *
cspec_labels(const struct cspec *c, int *n)
{
	struct policy_kv	*kv;
	int			 i, k = c->nlabels;

	kv = xcalloc((size_t)c->nlabels + EXPR_KUBE_LABELS + 1, sizeof *kv);
	if (c->nlabels > 0)
		memcpy(kv, c->labels, (size_t)c->nlabels * sizeof *kv);
	for (i = 0; i < EXPR_KUBE_LABELS; i++)
		if ((c->kube_labels & (1u << i)) && (kv[k].value =
		    (char *)cspec_kube_field(c, i)) != NULL)
			kv[k++].key = (char *)expr_kube_key(i);
	*n = k;
	return (kv);
}

/*
 * Labels folded against the fields of from, kept by c whose fields may
 * differ (a sync takes a known container's labels, not its identity):
 * each bit whose field c lacks or holds otherwise becomes its label again.
 */
static void
refold(struct cspec *c, const struct cspec *from)
{
	const char	*was, *now;
	int		 i;

	for (i = 0; i < EXPR_KUBE_LABELS; i++) {
		if (!(c->kube_labels & (1u << i)))
			continue;
		was = cspec_kube_field(from, i);
		now = cspec_kube_field(c, i);
		if (now != NULL && was != NULL && strcmp(now, was) == 0)
			continue;
		c->kube_labels &= ~(1u << i);
		if (was == NULL)
			continue;
		c->labels = xreallocarray(c->labels, (size_t)c->nlabels + 2,
		    sizeof *c->labels);
		c->labels[c->nlabels].key = xstrdup(expr_kube_key(i));
		c->labels[c->nlabels++].value = xstrdup(was);
		memset(&c->labels[c->nlabels], 0, sizeof *c->labels);
	}
}

/*
 * The pod name and labels of src, given to c in exchange for its own
 * (which src then holds, to be cleared): what a sync takes from the
 * runtime for a known container, whose identity stays as kept.
 */
void
cspec_take_meta(struct cspec *c, struct cspec *src)
{
	struct cspec	t, fresh;

	/* src's fields as they are now: its bits were folded against its
	 * pod name, which the exchange moves into c. */
	fresh = *src;
	t = *c;
	c->pod_name = src->pod_name;
	c->labels = src->labels;
	c->nlabels = src->nlabels;
	c->kube_labels = src->kube_labels;
	c->pod_labels = src->pod_labels;
	c->npod_labels = src->npod_labels;
	src->pod_name = t.pod_name;
	src->labels = t.labels;
	src->nlabels = t.nlabels;
	src->kube_labels = t.kube_labels;
	src->pod_labels = t.pod_labels;
	src->npod_labels = t.npod_labels;
	refold(c, &fresh);
	c->cost = cspec_cost(c);
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL || b == NULL ? a == b : strcmp(a, b) == 0);
}

static int
same_kv(const struct policy_kv *a, int na, const struct policy_kv *b, int nb)
{
	int	i;

	if (na != nb)
		return (0);
	for (i = 0; i < na; i++)
		if (strcmp(a[i].key, b[i].key) != 0 ||
		    strcmp(a[i].value ? a[i].value : "",
		    b[i].value ? b[i].value : "") != 0)
			return (0);
	return (1);
}

int
container_spec_same(const struct container_spec *a,
    const struct container_spec *b)
{
	return (same_str(a->id, b->id) && same_str(a->name, b->name) &&
	    same_str(a->pod, b->pod) && same_str(a->pod_uid, b->pod_uid) &&
	    same_str(a->pod_name, b->pod_name) &&
	    same_str(a->namespace, b->namespace) && a->qos == b->qos &&
	    a->cpu_request == b->cpu_request &&
	    a->cpu_limit == b->cpu_limit && a->mem_limit == b->mem_limit &&
	    a->has_oom == b->has_oom &&
	    a->oom_adj == b->oom_adj &&
	    same_kv(a->annotations, a->nannotations, b->annotations,
	    b->nannotations) &&
	    same_kv(a->env, a->nenv, b->env, b->nenv) &&
	    same_kv(a->labels, a->nlabels, b->labels, b->nlabels) &&
	    same_kv(a->pod_labels, a->npod_labels, b->pod_labels,
	    b->npod_labels));
}

/*
 * Whether s gives the container the pod name and labels c keeps, without
 * copying them (a sync asks this of every known container).
 */
int
cspec_same_meta(const struct cspec *c, const struct container_spec *s)
{
	const char	*f;
	unsigned	 folded = 0;
	int		 i, k, j = 0;

	if (!same_str(c->pod_name, s->pod_name) ||
	    !same_kv(c->pod_labels, c->npod_labels, s->pod_labels,
	    s->npod_labels))
		return (0);
	for (i = 0; i < s->nlabels; i++) {
		if (s->labels[i].key == NULL)
			continue;
		k = expr_kube_label(s->labels[i].key);
		f = k < 0 ? NULL : expr_kube_field(k, s->name,
		    s->namespace, s->pod, s->pod_name, s->pod_uid);
		if (f != NULL && s->labels[i].value != NULL &&
		    strcmp(f, s->labels[i].value) == 0) {
			folded |= 1u << k;
			continue;
		}
		if (j == c->nlabels || !same_kv(&c->labels[j], 1,
		    &s->labels[i], 1))
			return (0);
		j++;
	}
	return (j == c->nlabels && folded == c->kube_labels);
}

const char *
policy_kv_get(const struct policy_kv *kv, int n, const char *key)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return (kv[i].value);
	return (NULL);
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

void
cspec_move(struct cspec *dst, struct cspec *src)
{
	*dst = *src;
	memset(src, 0, sizeof *src);
}

void
cspec_clear(struct cspec *c)
{
	free(c->id);
	free(c->name);
	free(c->pod);
	free(c->pod_uid);
	free(c->pod_name);
	free(c->ns);
	kv_free(c->ann, c->nann);
	kv_free(c->env, c->nenv);
	kv_free(c->labels, c->nlabels);
	kv_free(c->pod_labels, c->npod_labels);
	memset(c, 0, sizeof *c);
}

/*
 * Ids come from peers: bounded, printable, no separators we use, and not
 * "." or "..", which would name folders where an id becomes a file name.
 * cause may be NULL.
 */
int
request_check_id(const char *what, const char *id, char **cause)
{
	const unsigned char	*p;
	const char		*why = NULL;

	if (id == NULL || *id == '\0')
		why = "is empty";
	else if (strlen(id) > POLICY_MAX_ID)
		why = "is too long";
	else if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		why = "is \".\" or \"..\"";
	else {
		for (p = (const unsigned char *)id; *p != '\0'; p++)
			if (*p <= ' ' || *p >= 0x7f || *p == '"' ||
			    *p == '\\') {
				why = "has a character that is not printable "
				    "ASCII";
				break;
			}
	}
	if (why == NULL)
		return (0);
	if (cause != NULL) {
		if (strcmp(why, "is too long") == 0)
			xasprintf(cause, "%s is longer than %d bytes", what,
			    POLICY_MAX_ID);
		else
			xasprintf(cause, "%s %s", what, why);
	}
	return (-EINVAL);
}

int
cspec_check(const struct container_spec *s, char **cause)
{
	int	rc;

	if ((rc = request_check_id("container id", s->id, cause)) != 0)
		return (rc);
	/* It would be read back as a claim after a restart. */
	if (strncmp(s->id, CLAIM_KEY_PREFIX, CLAIM_KEY_PLEN) == 0) {
		xasprintf(cause, "container id %s: the prefix %s is reserved",
		    s->id, CLAIM_KEY_PREFIX);
		return (-EINVAL);
	}
	if (s->qos != QOS_BESTEFFORT && s->qos != QOS_BURSTABLE &&
	    s->qos != QOS_GUARANTEED) {
		xasprintf(cause, "container %s: bad QoS class", s->id);
		return (-EINVAL);
	}
	if (s->cpu_request < -1 || s->cpu_limit < -1 ||
	    s->cpu_request > 1000LL * CPUSET_SETSIZE ||
	    s->cpu_limit > 1000LL * CPUSET_SETSIZE) {
		xasprintf(cause, "container %s: CPU request or limit out of "
		    "range", s->id);
		return (-EINVAL);
	}
	if (s->mem_limit < 0 || s->mem_limit > POLICY_MAX_MEMORY ||
	    (s->has_oom && (s->oom_adj < -1000 || s->oom_adj > 1000))) {
		xasprintf(cause, "container %s: memory limit or OOM score "
		    "adjustment out of range", s->id);
		return (-EINVAL);
	}
	if (s->nannotations < 0 || s->nenv < 0 ||
	    (s->nannotations > 0 && s->annotations == NULL) ||
	    (s->nenv > 0 && s->env == NULL)) {
		xasprintf(cause, "container %s: bad annotations or environment",
		    s->id);
		return (-EINVAL);
	}
	if (s->nlabels < 0 || s->npod_labels < 0 ||
	    (s->nlabels > 0 && s->labels == NULL) ||
	    (s->npod_labels > 0 && s->pod_labels == NULL)) {
		xasprintf(cause, "container %s: bad labels or pod labels",
		    s->id);
		return (-EINVAL);
	}
	return (0);
}

/*
 * The effective value of one of our annotations for this container: the
 * container-scoped key, then the pod-scoped one, then the plain one; *scope
 * (when not NULL) says which, as the Go policy numbers them (0 container,
 * 1 pod, 2 unscoped): the narrower the scope, the lower.
 */
static const char *
annotation_scoped(const struct cspec *c, const char *key, int *scope)
{
	const char	*found = NULL, *k;
	size_t		 klen = strlen(key), nslen = strlen(ANNOTATION_NS);
	int		 i, s, best = 3;

	/* One pass over the annotations, nothing built: this runs for
	 * every key of every container a Synchronize carries. */
	for (i = 0; i < c->nann && best > 0; i++) {
		k = c->ann[i].key;
		if (strncmp(k, key, klen) != 0 || k[klen] != '.' ||
		    strncmp(k + klen + 1, ANNOTATION_NS, nslen) != 0)
			continue;
		k += klen + 1 + nslen;
		if (*k == '\0')
			s = 2;
		else if (strcmp(k, "/pod") == 0)
			s = 1;
		else if (c->name != NULL &&
		    strncmp(k, "/container.", 11) == 0 &&
		    strcmp(k + 11, c->name) == 0)
			s = 0;
		else
			continue;
		if (s < best) {
			best = s;
			found = c->ann[i].value;
		}
	}
	if (found != NULL && scope != NULL)
		*scope = best;
	return (found);
}

const char *
request_annotation(const struct cspec *c, const char *key)
{
	return (annotation_scoped(c, key, NULL));
}

/* Go's strconv.ParseBool: 1 true, 0 false, -1 neither. */
static int
parse_bool(const char *v)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true",
	    "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false",
	    "False" };
	size_t	i;

	for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcmp(v, yes[i]) == 0)
			return (1);
		if (strcmp(v, no[i]) == 0)
			return (0);
	}
	return (-1);
}

static int
is_true(const char *v)
{
	return (v != NULL && strcmp(v, "true") == 0);
}

/* 1 true, 0 false, -1 absent or not a boolean (then the default rules). */
static int
bool_annotation(const struct cspec *c, const char *key)
{
	const char	*v = request_annotation(c, key);

	return (v != NULL ? parse_bool(v) : -1);
}

/*
 * Whether the container prefers isolated CPUs, as the Go policy decides:
 * of require-isolated-cpus and prefer-isolated-cpus, the one of the
 * narrower scope counts (require at the same scope); a value that is not
 * a boolean, or no annotation, leaves the config's preferIsolatedCPUs
 * (*annotated 0). *strict: require-isolated-cpus is the one that counts,
 * whatever its value (it matters only when isolation is preferred).
 */
int
request_isolation(const struct policy *P, const struct cspec *c,
    int *annotated, int *strict)
{
	const char	*sv, *pv, *v;
	int		 ss = 3, ps = 3, b;

	sv = annotation_scoped(c, "require-isolated-cpus", &ss);
	pv = annotation_scoped(c, "prefer-isolated-cpus", &ps);
	*strict = sv != NULL && (pv == NULL || ss <= ps);
	*annotated = 0;
	if (sv == NULL && pv == NULL)
		return (P->cfg->prefer_isolated);
	v = *strict ? sv : pv;
	if ((b = parse_bool(v)) == -1)
		return (P->cfg->prefer_isolated);
	*annotated = 1;
	return (b);
}

static int
reserved_namespace(const struct policy *P, const char *ns)
{
	size_t	i;

	if (ns == NULL)
		return (0);
	if (strcmp(ns, "kube-system") == 0)
		return (1);
	for (i = 0; i < P->cfg->nreserved_ns; i++)
		if (fnmatch(P->cfg->reserved_ns[i], ns, 0) == 0)
			return (1);
	return (0);
}

static enum cpu_prio
prio_preference(const struct policy *P, const struct cspec *c)
{
	const char	*v = request_annotation(c, "prefer-cpu-priority");

	if (v == NULL || strcmp(v, "default") == 0)
		return (P->cfg->default_prio);
	if (strcmp(v, "high") == 0)
		return (CPU_PRIO_HIGH);
	if (strcmp(v, "normal") == 0)
		return (CPU_PRIO_NORMAL);
	if (strcmp(v, "low") == 0)
		return (CPU_PRIO_LOW);
	if (strcmp(v, "none") == 0)
		return (CPU_PRIO_NONE);
	return (P->cfg->default_prio);
}

/*
 * The memory-type annotation, as Go's parseMemoryType reads it: names
 * separated by commas, in any case, "mixed" for all three; an empty value
 * says nothing. 0 with *types, or -1 for a name it does not know.
 */
static int
parse_mem_types(const char *v, unsigned *types)
{
	static const struct {
		const char	*name;
		unsigned	 types;
	} names[] = {
		{ "dram", 1u << MEM_TYPE_DRAM },
		{ "pmem", 1u << MEM_TYPE_PMEM },
		{ "hbm", 1u << MEM_TYPE_HBM },
		{ "mixed", MEM_TYPES_ALL },
	};
	const char	*p, *end;
	size_t		 i, len;

	*types = 0;
	for (p = v;; p = end + 1) {
		if ((end = strchr(p, ',')) == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		for (i = 0; i < sizeof names / sizeof names[0]; i++)
			if (strlen(names[i].name) == len &&
			    strncasecmp(p, names[i].name, len) == 0)
				break;
		if (i == sizeof names / sizeof names[0])
			return (-1);
		*types |= names[i].types;
		if (*end == '\0')
			break;
	}
	return (0);
}

/*
 * The memory types a container's memory comes from: its memory-type
 * annotation's, of those the machine has, else Go's default (every type
 * but HBM). A value that names no type, or only types the machine lacks,
 * leaves the default and mem_types_bad set (the caller warns).
 */
static void
mem_types_of(const struct policy *P, const struct cspec *c,
    struct request *r)
{
	const char	*v;
	unsigned	 types;

	r->mem_types = P->mem_default;
	if ((v = request_annotation(c, "memory-type")) == NULL || *v == '\0')
		return;
	if (parse_mem_types(v, &types) != 0)
		r->mem_types_bad = 1;
	else if ((types & P->mem_have) == 0)
		r->mem_types_bad = 2;
	else
		r->mem_types = types & P->mem_have;
}

/*
 * The smallest memory request the kubelet turns into this OOM score
 * adjustment (1000 - 1000 * request / capacity, kept within 2 to 999
 * for Burstable: 3 to 999), as the Go policy estimates it: the runtime is never
 * told the request itself. 0 when the adjustment says nothing.
 */
long long
request_mem_from_oom(int adj, long long capacity)
{
	long long	r;

	if (adj < 3 || adj > 999 || capacity <= 0)
		return (0);
	/* ceil((1000 - adj) * capacity / 1000), without overflow. */
	r = (capacity / 1000) * (1000 - adj) +
	    ((capacity % 1000) * (1000 - adj) + 999) / 1000;
	return (r);
}

/*
 * A container's memory request and limit as the Go policy takes them
 * (estimateResourceRequirements): the limit is the runtime's; Guaranteed
 * requests its limit, Burstable what its OOM score adjustment says when
 * that is below the limit, BestEffort nothing.
 */
static void
mem_amount(const struct policy *P, const struct cspec *c, struct request *r)
{
	long long	est;

	r->mem_lim = c->mem_limit;
	r->mem_req = 0;
	if (c->qos == QOS_GUARANTEED)
		r->mem_req = r->mem_lim;
	else if (c->qos == QOS_BURSTABLE && c->has_oom) {
		est = request_mem_from_oom(c->oom_adj, P->mem_total);
		if (est > 0 && (est < r->mem_lim || r->mem_lim == 0))
			r->mem_req = est;
	}
}

/*
 * The cold-start annotation (coldstart.c): its container's memory starts
 * without DRAM, which comes once it has run that long. One whose memory
 * would then have no type at all keeps DRAM and no cold start, with a
 * warning (Go would place it with no memory type). A value that is not
 * the YAML Go reads refuses the container, as Go does.
 */
static int
cold_start_of(const struct policy *P, const struct cspec *c,
    struct request *r, char **cause)
{
	const char	*v = request_annotation(c, "cold-start");
	char		*why = NULL;
	long long	 ms;

	if (v == NULL)
		return (0);
	if (coldstart_parse(v, &ms, &why) != 0) {
		if (cause != NULL)
			xasprintf(cause, "container %s: cold-start: %s", c->id,
			    why);
		free(why);
		return (-1);
	}
	if (ms == 0)
		return (0);
	if ((r->mem_types & ~(1u << MEM_TYPE_DRAM)) == 0) {
		r->cold_bad = 1;
		return (0);
	}
	r->cold_ms = ms;
	r->mem_types &= ~(1u << MEM_TYPE_DRAM);
	return (0);
}

int
request_from_spec(const struct policy *P, const struct cspec *c,
    struct request *r, char **cause)
{
	long long	 req = c->request < 0 ? 0 : c->request;
	int		 reserved, iso, strict, shared, cores, frac, annotated;

	memset(r, 0, sizeof *r);
	r->type = CPU_NORMAL;
	r->prio = P->cfg->default_prio;
	r->limit = 0;
	r->hide_ht = bool_annotation(c, "hide-hyperthreads") == 1;

	if (c->qos == QOS_BURSTABLE)
		r->limit = c->limit >= 0 ? (int)c->limit : UNLIMITED_CPU;
	else if (c->qos == QOS_GUARANTEED && c->limit >= 0)
		r->limit = (int)c->limit;

	/* Left as the runtime set them, taking nothing: exactly "true",
	 * as PreserveCpuResources and PreserveMemoryResources read it. */
	r->mem_preserve = is_true(request_annotation(c, "memory.preserve"));
	if (!r->mem_preserve) {
		mem_types_of(P, c, r);
		if (cold_start_of(P, c, r, cause) != 0)
			return (-EINVAL);
	}
	mem_amount(P, c, r);
	if (is_true(request_annotation(c, "cpu.preserve"))) {
		r->type = CPU_PRESERVE;
		r->zero_req = 1;
		return (0);
	}
	reserved = bool_annotation(c, "prefer-reserved-cpus");
	if (reserved == 1 || (reserved == -1 &&
	    reserved_namespace(P, c->ns))) {
		r->type = CPU_RESERVED;
		r->fraction = (int)req;
		return (0);
	}
	if (c->qos == QOS_BURSTABLE) {
		r->fraction = (int)req;
		r->zero_req = req == 0;
		return (0);
	}
	if (c->qos == QOS_BESTEFFORT) {
		r->zero_req = 1;
		return (0);
	}

	/* Guaranteed. */
	cores = (int)(req / 1000);
	frac = (int)(req % 1000);
	r->limit = 1000 * cores + frac;
	iso = request_isolation(P, c, &annotated, &strict);
	shared = bool_annotation(c, "prefer-shared-cpus");
	r->prio = prio_preference(P, c);

	if (cores == 0) {
		r->fraction = frac;
		r->zero_req = frac == 0;
	} else if (cores < 2) {
		if (shared == 1 || (shared == -1 && P->cfg->prefer_shared)) {
			r->fraction = 1000 * cores + frac;
			return (0);
		}
		r->full = cores;
		r->fraction = frac;
		r->isolate = iso;
	} else if (frac > 0) {
		/* Mixed only when sharing is annotated off. */
		if (shared == 0) {
			r->full = cores;
			r->fraction = frac;
			r->isolate = iso;
		} else
			r->fraction = 1000 * cores + frac;
	} else if (shared == 1 || (shared == -1 && P->cfg->prefer_shared))
		r->fraction = 1000 * cores;
	else {
		/* Isolation for several CPUs only when annotated. */
		r->full = cores;
		r->isolate = iso && annotated;
	}
	r->strict_isolate = strict && r->isolate && r->full > 0;
	if (cause != NULL)
		*cause = NULL;
	return (0);
}
