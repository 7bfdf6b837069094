/*
 * fuzz-affinity: a pod's affinity annotation (YAML, as a pod's author
 * writes it) parsed for two container names, every affinity it gives
 * evaluated against a container, and its values tried as glob patterns.
 */

#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "fuzzlib.h"

static const struct policy_kv labels[] = {
	{ "app", "db" }, { "io.kubernetes.container.name", "a" },
};

static void
try_set(const struct affinity_set *s, const struct expr_subject *sub)
{
	int	i, k, r;

	for (i = 0; i < s->n; i++) {
		const struct affinity *a = &s->v[i];

		if (a->weight == 0 || a->weight > AFFINITY_MAX_WEIGHT ||
		    a->weight < -AFFINITY_MAX_WEIGHT)
			abort();
		if (!a->pod_scope)
			(void)expr_eval(&a->scope, sub);
		r = expr_eval(&a->match, sub);
		if (r != 0 && r != 1)
			abort();
		for (k = 0; k < a->match.nvalues; k++)
			(void)expr_glob(a->match.values[k], "a/b\xe2\x98\xba");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const char *const names[] = { "a", "" };
	struct affinity_set	 s;
	struct expr_subject	 sub;
	char			*text, *cause = NULL;
	size_t			 i;
	int			 anti;

	text = fuzz_str(data, len);
	memset(&sub, 0, sizeof sub);
	sub.id = "c1";
	sub.name = "a";
	sub.ns = "default";
	sub.labels = labels;
	sub.nlabels = 2;
	sub.has_pod = 1;
	sub.pod_id = "p1";
	sub.pod_name = "pod";
	sub.pod_labels = labels;
	sub.npod_labels = 1;
	for (i = 0; i < 2; i++)
		for (anti = 0; anti < 2; anti++) {
			memset(&s, 0, sizeof s);
			if (affinity_parse(text, anti, names[i], &s,
			    &cause) != 0) {
				/* Refused: a cause, and nothing kept. */
				if (cause == NULL || s.n != 0)
					abort();
				free(cause);
				cause = NULL;
				continue;
			}
			try_set(&s, &sub);
			affinity_set_clear(&s);
		}
	free(text);
	return (0);
}
