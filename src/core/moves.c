/*
 * moves.c owns what an operation that replaced the whole state (a
 * reconfiguration, a sync) moved, grant by grant, from where to where:
 * what a dry run of a reload reports before the change is undone. It
 * compares the state the operation swapped out, kept in its undo log,
 * with the state now, as policy_grants_json shows both.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "xmalloc.h"

/* A grants entry's key: "claim:<uid>" for a claim, else the id. */
static char *
entry_key(json_t *o)
{
	const char	*uid = json_string_value(json_object_get(o, "claim"));
	const char	*id = json_string_value(json_object_get(o, "id"));
	char		*key;

	if (uid != NULL)
		xasprintf(&key, "claim:%s", uid);
	else
		key = xstrdup(id != NULL ? id : "");
	return (key);
}

/* Where a grants entry is: the entry without its key; null for none. */
static json_t *
place(json_t *o)
{
	json_t	*p;

	if (o == NULL)
		return (json_null());
	p = json_deep_copy(o);
	json_object_del(p, "id");
	json_object_del(p, "claim");
	return (p);
}

/* Adds {key, from, to} to the containers' or the claims' list. */
static void
add_move(json_t *out, json_t *any, json_t *from, json_t *to)
{
	json_t		*m, *uid = json_object_get(any, "claim");

	if (uid != NULL)
		m = json_pack("{s:O, s:o, s:o}", "claim", uid, "from",
		    place(from), "to", place(to));
	else
		m = json_pack("{s:O, s:o, s:o}", "id", json_object_get(any,
		    "id"), "from", place(from), "to", place(to));
	json_array_append_new(json_object_get(out, uid != NULL ? "claims" :
	    "containers"), m);
}

json_t *
policy_moves(const struct policy *P, const struct policy_effects *fx)
{
	const struct policy	*B;
	json_t			*before, *after, *seen, *out, *o, *old;
	char			*key;
	size_t			 i;

	if ((B = undo_before(fx)) == NULL)
		return (NULL);
	before = policy_grants_json(B);
	after = policy_grants_json(P);
	seen = json_object();
	json_array_foreach(before, i, o) {
		key = entry_key(o);
		json_object_set(seen, key, o);
		free(key);
	}
	out = json_pack("{s:[], s:[]}", "containers", "claims");
	json_array_foreach(after, i, o) {
		key = entry_key(o);
		old = json_object_get(seen, key);
		if (old == NULL || !json_equal(old, o))
			add_move(out, o, old, o);
		json_object_del(seen, key);
		free(key);
	}
	/* What the new state does not hold, in the old order. */
	json_array_foreach(before, i, o) {
		key = entry_key(o);
		if (json_object_get(seen, key) != NULL)
			add_move(out, o, o, NULL);
		free(key);
	}
	json_decref(seen);
	json_decref(before);
	json_decref(after);
	return (out);
}
