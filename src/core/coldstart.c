/*
 * coldstart.c: the Go policy's cold start. A container annotated with
 * cold-start.resource-policy.nri.io ("duration: 60s", at most an hour)
 * gets its memory without DRAM (PMEM, say) when it is placed, so what it
 * allocates early and never touches again lands there; once it has
 * started (the runtime's StartContainer) and the duration has passed,
 * DRAM is added to its memory (libmem's Realloc) and the runtime is told.
 * The core has no clock: the caller says when the container started and
 * what time it is now, in milliseconds of the wall clock, so a deadline
 * saved in the state means the same after a restart.
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "xmalloc.h"
#include "yamldoc.h"

#define NS_PER_MS	1000000LL
#define HOUR_NS		(3600LL * 1000 * NS_PER_MS)

/* The units of Go's time.ParseDuration, in nanoseconds. */
static const struct {
	const char	*name;
	long long	 ns;
} units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 },
	{ "\xce\xbcs", 1000 }, { "ms", NS_PER_MS }, { "s", 1000 * NS_PER_MS },
	{ "m", 60000 * NS_PER_MS }, { "h", HOUR_NS }
};

/*
 * A duration as Go's time.ParseDuration reads it: an optional sign, then
 * one or more decimal numbers each with a unit ("1h30m", "1.5s", "300ms");
 * "0" alone is zero. Values beyond an hour only need to be told apart
 * from the rest, so anything past a day is refused as out of range.
 */
int
coldstart_parse_duration(const char *s, long long *ns, char **cause)
{
	const char	*p = s, *q;
	long double	 total = 0, v, frac;
	size_t		 i, len, best;
	int		 neg = 0, any = 0, digits;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (strcmp(p, "0") == 0) {
		*ns = 0;
		return (0);
	}
	if (*p == '\0')
		goto bad;
	while (*p != '\0') {
		v = 0;
		digits = 0;
		for (; *p >= '0' && *p <= '9'; p++, digits++)
			v = v * 10 + (*p - '0');
		if (*p == '.') {
			p++;
			for (frac = 0.1L; *p >= '0' && *p <= '9'; p++,
			    frac /= 10, digits++)
				v += frac * (*p - '0');
		}
		if (digits == 0)
			goto bad;
		/* The longest unit name that matches ("ms" before "m"). */
		for (q = p; *q != '\0' && !(*q >= '0' && *q <= '9') &&
		    *q != '.'; q++)
			;
		len = (size_t)(q - p);
		best = sizeof units / sizeof units[0];
		for (i = 0; i < sizeof units / sizeof units[0]; i++)
			if (strlen(units[i].name) == len &&
			    strncmp(p, units[i].name, len) == 0)
				best = i;
		if (len == 0 || best == sizeof units / sizeof units[0]) {
			xasprintf(cause, "duration \"%s\": %s unit", s,
			    len == 0 ? "missing" : "unknown");
			return (-EINVAL);
		}
		total += v * units[best].ns;
		if (total > 24.0L * HOUR_NS) {
			xasprintf(cause, "duration \"%s\" out of range (at most "
			    "1h)", s);
			return (-ERANGE);
		}
		p = q;
		any = 1;
	}
	if (!any)
		goto bad;
	*ns = (long long)total;
	if (neg)
		*ns = -*ns;
	return (0);
bad:
	xasprintf(cause, "duration \"%s\" is not a number with a unit, such "
	    "as 30s, 5m or 1h", s);
	return (-EINVAL);
}

/*
 * The cold-start annotation's YAML: a mapping whose "duration" is the
 * time to wait (other keys are not read, as Go's unmarshal leaves them);
 * nothing, or no duration, is no cold start. 0 and *ms, or an error.
 */
int
coldstart_parse(const char *text, long long *ms, char **cause)
{
	yaml_document_t		 doc;
	yaml_node_t		*root, *k, *v;
	yaml_node_pair_t	*pr;
	long long		 ns = 0;
	char			*why = NULL;
	int			 rc = 0;

	*ms = 0;
	if ((rc = yamldoc_load(text, &doc, cause)) != 0)
		return (rc);
	if ((root = yaml_document_get_root_node(&doc)) == NULL) {
		yaml_document_delete(&doc);
		return (0);
	}
	if (root->type != YAML_MAPPING_NODE) {
		xasprintf(cause, "not a mapping such as \"duration: 60s\"");
		yaml_document_delete(&doc);
		return (-EINVAL);
	}
	for (pr = root->data.mapping.pairs.start;
	    pr < root->data.mapping.pairs.top && rc == 0; pr++) {
		k = yaml_document_get_node(&doc, pr->key);
		v = yaml_document_get_node(&doc, pr->value);
		if (k == NULL || v == NULL || k->type != YAML_SCALAR_NODE ||
		    strcmp((const char *)k->data.scalar.value,
		    "duration") != 0)
			continue;
		if (v->type != YAML_SCALAR_NODE ||
		    strlen((const char *)v->data.scalar.value) !=
		    v->data.scalar.length) {
			xasprintf(cause, "duration is not a string");
			rc = -EINVAL;
			break;
		}
		if ((rc = coldstart_parse_duration(
		    (const char *)v->data.scalar.value, &ns, &why)) != 0) {
			*cause = why;
			break;
		}
		if (ns < 0 || ns > HOUR_NS) {
			xasprintf(cause, "duration %s out of range (0 to 1h)",
			    (const char *)v->data.scalar.value);
			rc = -ERANGE;
		}
	}
	yaml_document_delete(&doc);
	if (rc == 0)
		/* Whole milliseconds, rounded up: a timer never fires early. */
		*ms = (ns + NS_PER_MS - 1) / NS_PER_MS;
	return (rc);
}

/* A done cold start's container has DRAM again (restore, re-place). */
void
coldstart_apply(const struct policy *P, struct grant *g)
{
	if (g->req.cold_ms > 0 && g->cold_done)
		g->req.mem_types |= P->mem_have & (1u << MEM_TYPE_DRAM);
}

/* What a grant made again keeps of the one it replaces. */
void
coldstart_inherit(const struct policy *P, struct grant *g,
    const struct grant *prev)
{
	if (prev == NULL || g->req.cold_ms <= 0)
		return;
	g->cold_until = prev->cold_until;
	g->cold_done = prev->cold_done;
	coldstart_apply(P, g);
}

/* The grant of container id when its start would begin a cold start. */
static struct grant *
cold_to_start(const struct policy *P, const char *id)
{
	struct grant	*g;

	if ((g = strmap_get(P->ctrs, id)) == NULL || g->req.cold_ms <= 0 ||
	    g->cold_until != 0 || g->cold_done)
		return (NULL);
	return (g);
}

int
policy_start_begins(const struct policy *P, const char *id)
{
	return (cold_to_start(P, id) != NULL);
}

int
policy_start(struct policy *P, const char *id, long long at,
    struct policy_effects *fx)
{
	struct undoctx	 u;
	struct grant	*g, *ng;

	if ((g = cold_to_start(P, id)) == NULL)
		return (0);
	undo_begin(P, fx, &u);
	ng = grant_dup(g);
	ng->cold_until = at + g->req.cold_ms;
	policy_put(P, 0, id, ng);
	fx->save = 1;
	undo_end(P, &u);
	return (0);
}

static int
key_cmp(const void *a, const void *b)
{
	return (strcmp((*(struct grant *const *)a)->key,
	    (*(struct grant *const *)b)->key));
}

int
policy_cold_due(struct policy *P, long long at, struct policy_effects *fx)
{
	struct undoctx	  u;
	struct grant	**v, *ng;
	char		 *why = NULL;
	size_t		  i, n;
	int		  done = 0;

	v = index_cold(P, &n);
	qsort(v, n, sizeof *v, key_cmp);
	undo_begin(P, fx, &u);
	for (i = 0; i < n; i++) {
		if (v[i]->cold_until > at)
			continue;
		ng = grant_dup(v[i]);
		ng->cold_done = 1;
		coldstart_apply(P, ng);
		ng->dirty = 1;
		/* Its zone widened to DRAM too (libmem's Realloc); others it
		 * moves are refreshed with it. */
		if (policy_mem_widen(P, ng->key, 1u << MEM_TYPE_DRAM,
		    &why) != 0) {
			policy_warn(fx, "container %s: cold start over, but "
			    "its memory cannot take DRAM: %s", ng->key, why);
			free(why);
			why = NULL;
		}
		policy_put(P, 0, ng->key, ng);
		done++;
	}
	free(v);
	if (done > 0) {
		policy_refresh(P, NULL, 0, fx);
		fx->save = 1;
	}
	undo_end(P, &u);
	return (done);
}

long long
policy_cold_next(const struct policy *P)
{
	struct grant	**v;
	long long	  next = 0;
	size_t		  i, n;

	v = index_cold(P, &n);
	for (i = 0; i < n; i++)
		if (next == 0 || v[i]->cold_until < next)
			next = v[i]->cold_until;
	free(v);
	return (next);
}
