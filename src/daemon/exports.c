/*
 * exports.c writes the resources.sh files (R-STATE-4) through resfile.c.
 *
 * A queue holds the containers whose files may have changed this turn;
 * the flush renders each one's text and writes it only when a digest of
 * what the file holds says it changed (after a start, a file is read back
 * once to learn it, if containers/ held it then). A shared container says
 * exactly what its pool's file says, so its folder is a link to
 * pools/<pool>: when a claim or an exclusive container moves a pool's
 * shared CPUs, the pool's one file is rewritten and the links stay; a
 * shared container with memory types of its own has a file of its own.
 * A container moved only by its pool's supply is not queued at all: its
 * pool is (exports_pool_later). Failures are logged and counted, and the
 * file is tried again the next time it is queued; a container whose file
 * failed is queued again with the next pool, since it may never be queued
 * on its own again.
 */
#include "autoconf.h"

#include <dirent.h>
#ifdef TOPOAWARE_DEBUG_HOOKS
#include <signal.h>
#include <unistd.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exports.h"
#include "fnv.h"
#include "log.h"
#include "metrics.h"
#include "readfile.h"
#include "resfile.h"
#include "spares.h"
#include "strmap.h"
#include "xmalloc.h"

#define MAX_VARS	8

/* What the queue holds for an id. */
#define QUEUED_WRITE	((void *)1)
#define QUEUED_REMOVE	((void *)2)

struct exports {
	char		*dir;
	struct strmap	*queue;		/* id -> QUEUED_WRITE, QUEUED_REMOVE */
	struct strmap	*pool_queue;	/* pool name -> itself */
	struct strmap	*failing;	/* container id -> itself */
	/* Keyed by the names their struct digest holds. */
	struct strmap	*digests;	/* id -> what its file holds */
	struct strmap	*pools;		/* pool file name -> the same */
	struct strmap	*fresh;		/* pool name -> struct settled */
	/* What containers/ held at the first flush: a container not in it
	 * and without a digest has no file to read back (a Synchronize of
	 * a thousand new ones would look a thousand times). */
	struct strmap	*found;
	struct spares	*spares;	/* of containers/ (resfile.h) */
};

/* A pool's file settled in this flush, for each of its containers. */
struct settled {
	char		*file;		/* its folder's name under pools/ */
	uint64_t	 link;		/* the digest of a link to it */
	int		 rc;		/* 0 when its file is current */
	int		 known;		/* its link was found right */
};

static uint64_t
digest(const char *s, size_t len)
{
	return (fnv1a_more(FNV1A_OFFSET, s, len));
}

static void
settled_free(void *v)
{
	struct settled	*st = v;

	free(st->file);
	free(st);
}

struct exports *
exports_new(const char *state_dir)
{
	struct exports	*ex = xcalloc(1, sizeof *ex);

	ex->dir = xstrdup(state_dir);
	ex->queue = strmap_new();
	ex->pool_queue = strmap_new();
	ex->failing = strmap_new();
	ex->digests = strmap_new_borrowing();
	ex->pools = strmap_new_borrowing();
	ex->fresh = strmap_new();
	ex->spares = resfile_spares_new(state_dir);
	return (ex);
}

void
exports_free(struct exports *ex)
{
	if (ex == NULL)
		return;
	strmap_free(ex->queue);
	strmap_free(ex->pool_queue);
	strmap_free(ex->failing);
	strmap_free_all(ex->digests, free);
	strmap_free_all(ex->pools, free);
	strmap_free_all(ex->fresh, settled_free);
	strmap_free(ex->found);
	spares_free(ex->spares);
	free(ex->dir);
	free(ex);
}

/* A file's digest, with the name its map keys it by: one allocation
 * for both. */
struct digest {
	uint64_t	h;
	char		name[];
};

static void
set_digest(struct strmap *m, const char *key, uint64_t h)
{
	struct digest	*d;
	size_t		 len;

	if ((d = strmap_get(m, key)) == NULL) {
		len = strlen(key);
		d = xmalloc(sizeof *d + len + 1);
		memcpy(d->name, key, len + 1);
		strmap_put(m, d->name, d);
	}
	d->h = h;
}

/* Lists containers/ once; a folder that cannot be read holds nothing we
 * can read back either. */
static int
was_there(struct exports *ex, const char *id)
{
	struct dirent	*de;
	DIR		*d;
	char		*path;

	if (ex->found == NULL) {
		ex->found = strmap_new();
		xasprintf(&path, "%s/containers", ex->dir);
		if ((d = opendir(path)) != NULL) {
			while ((de = readdir(d)) != NULL)
				if (de->d_name[0] != '.')
					strmap_put(ex->found, de->d_name, ex);
			closedir(d);
		}
		free(path);
	}
	return (strmap_get(ex->found, id) != NULL);
}

static void
failed(struct exports *ex, struct strmap *m, const char *key, char *cause)
{
	log_warnx("%s", cause);
	metrics_inc("errors", "kind", "export");
	free(cause);
	free(strmap_del(m, key));
	if (m == ex->digests)
		strmap_put(ex->failing, key, ex);
}

/* A container's file holds what it should: h. */
static void
container_done(struct exports *ex, const char *id, uint64_t h)
{
	set_digest(ex->digests, id, h);
	if (strmap_count(ex->failing) > 0)
		(void)strmap_del(ex->failing, id);
}

/* The text of resources.sh for kv (policy_export's), *text to free. */
static int
render(const char *who, struct policy_kv *kv, int n, char **text,
    size_t *len, char **cause)
{
	struct resfile_var	vars[MAX_VARS];
	int			i;

	for (i = 0; i < n && i < MAX_VARS; i++) {
		vars[i].name = kv[i].key;
		vars[i].value = kv[i].value;
	}
	return (resfile_render(who, vars, (size_t)i, text, len, cause));
}

/*
 * Whether the file at sub/name already holds text, learned once by
 * reading it back; h is the text's digest.
 */
static int
holds(struct exports *ex, struct strmap *m, const char *sub,
    const char *name, const char *text, size_t len, uint64_t h)
{
	struct digest	*d;
	char		*path, *old = NULL, *cause = NULL;
	size_t		 oldlen;

	if ((d = strmap_get(m, name)) != NULL)
		return (d->h == h);
	if (m == ex->digests && !was_there(ex, name))
		return (0);
	xasprintf(&path, "%s/%s/%s/%s", ex->dir, sub, name, RESFILE_NAME);
	if (readfile(path, NULL, 64 * 1024, &old, &oldlen, &cause) == 0 &&
	    oldlen == len && memcmp(old, text, len) == 0)
		set_digest(m, name, h);
	free(cause);
	free(old);
	free(path);
	return ((d = strmap_get(m, name)) != NULL && d->h == h);
}

/*
 * kv as resources.sh text, written to sub/name when a digest of what the
 * file holds says it differs (a pool's file when m is the pools' digests,
 * else a container's own); 0 when the file holds it now.
 */
static int
put_text(struct exports *ex, struct strmap *m, const char *sub,
    const char *name, const char *who, struct policy_kv *kv, int n)
{
	char		*text = NULL, *cause = NULL;
	size_t		 len;
	uint64_t	 h;
	int		 rc;

	if ((rc = render(who, kv, n, &text, &len, &cause)) != 0) {
		failed(ex, m, name, cause);
		return (rc);
	}
	h = digest(text, len);
	if (!holds(ex, m, sub, name, text, len, h)) {
		if (m == ex->pools)
			rc = resfile_put_pool(ex->dir, name, text, len, &cause);
		else
			rc = resfile_put(ex->spares, ex->dir, name, text, len,
			    &cause);
		if (rc != 0)
			failed(ex, m, name, cause);
	}
	if (rc == 0 && m == ex->digests)
		container_done(ex, name, h);
	else if (rc == 0)
		set_digest(m, name, h);
	free(text);
	return (rc);
}

/*
 * The pool's own file, written when its text changed. Its text is made
 * once a flush, however many of its containers moved, and so is a
 * failure to write it.
 */
static struct settled *
export_pool(struct exports *ex, const struct policy *P, const struct pool *p)
{
	struct settled		*st;
	struct policy_kv	*kv;
	int			 n;

	if ((st = strmap_get(ex->fresh, p->name)) != NULL)
		return (st);
	st = xcalloc(1, sizeof *st);
	st->file = resfile_pool_name(p->name);
	/* What a link holds, for the digest: its pool's name, marked. */
	st->link = fnv1a_more(digest("->", 2), st->file, strlen(st->file));
	if ((st->rc = policy_export_pool(P, p, &kv, &n)) == 0) {
		st->rc = put_text(ex, ex->pools, "pools", st->file, p->name,
		    kv, n);
		policy_export_free(kv, n);
	}
	strmap_put(ex->fresh, p->name, st);
	return (st);
}

/* A shared container: the link to its pool's folder, and its file. */
static void
export_linked(struct exports *ex, const struct policy *P, const char *id,
    const struct pool *p)
{
	struct settled	*st;
	struct digest	*d;
	char		*cause = NULL;

	if ((st = export_pool(ex, P, p))->rc != 0)
		return;
	if ((d = strmap_get(ex->digests, id)) != NULL && d->h == st->link)
		return;
	if (d == NULL && was_there(ex, id) &&
	    resfile_linked(ex->dir, id, st->file)) {
		container_done(ex, id, st->link);
		return;
	}
	if (resfile_link(ex->spares, ex->dir, id, st->file, &st->known,
	    &cause) != 0) {
		failed(ex, ex->digests, id, cause);
		return;
	}
	container_done(ex, id, st->link);
}

static void
export_one(struct exports *ex, const struct policy *P, const char *id)
{
	const struct pool	*p;
	struct policy_kv	*kv;
	int			 n;

	if ((p = policy_export_shared_pool(P, id)) != NULL) {
		export_linked(ex, P, id, p);
		return;
	}
	if (policy_export(P, id, &kv, &n) != 0) {
		/* Gone from the policy: nothing of it to write again. */
		(void)strmap_del(ex->failing, id);
		return;
	}
	(void)put_text(ex, ex->digests, "containers", id, id, kv, n);
	policy_export_free(kv, n);
}

static void
export_remove(struct exports *ex, const char *id)
{
	char	*cause = NULL;

	free(strmap_del(ex->digests, id));
	(void)strmap_del(ex->failing, id);
	if (ex->found != NULL)
		(void)strmap_del(ex->found, id);
	if (resfile_remove(ex->spares, ex->dir, id, &cause) != 0) {
		log_warnx("%s", cause);
		metrics_inc("errors", "kind", "export");
		free(cause);
	}
}

static int
queued_none(const struct exports *ex)
{
	return (strmap_count(ex->queue) == 0 &&
	    strmap_count(ex->pool_queue) == 0);
}

int
exports_later(struct exports *ex, const char *id, int remove)
{
	int	first = queued_none(ex);

	strmap_put(ex->queue, id, remove ? QUEUED_REMOVE : QUEUED_WRITE);
	return (first);
}

int
exports_pool_later(struct exports *ex, const char *pool)
{
	int	first = queued_none(ex);

	strmap_put(ex->pool_queue, pool, ex);
	return (first);
}

struct flush {
	struct exports		*ex;
	const struct policy	*P;
};

/* A pool's file; a pool the policy no longer has has no containers. */
static void
flush_pool(const char *name, void *unused, void *arg)
{
	struct flush		*f = arg;
	const struct pool	*p;

	(void)unused;
	if ((p = pool_tree_find(policy_tree(f->P), name)) != NULL)
		(void)export_pool(f->ex, f->P, p);
}

/* A container whose file failed, with the pools: unless it is queued. */
static void
queue_failing(const char *id, void *unused, void *arg)
{
	struct exports	*ex = arg;

	(void)unused;
	if (strmap_get(ex->queue, id) == NULL)
		strmap_put(ex->queue, id, QUEUED_WRITE);
}

static void
flush_one(const char *id, void *what, void *arg)
{
	struct flush	*f = arg;

	if (what == QUEUED_REMOVE)
		export_remove(f->ex, id);
	else
		export_one(f->ex, f->P, id);
}

int
exports_prune(struct exports *ex, int (*keep)(const char *, void *),
    void *arg, char **cause)
{
	return (resfile_prune(ex->spares, ex->dir, keep, arg, cause));
}

#ifdef TOPOAWARE_DEBUG_HOOKS
/*
 * TOPOAWARE_DEBUG_CRASH=exports:/PATH kills the daemon as a flush with
 * something to write begins while PATH exists: a test sees what went out
 * before the files.
 */
static void
debug_crash(void)
{
	static const char	*path;
	static int		 read_env;
	const char		*v, *name = "exports:/";

	if (!read_env) {
		read_env = 1;
		if ((v = getenv("TOPOAWARE_DEBUG_CRASH")) != NULL &&
		    strncmp(v, name, strlen(name)) == 0)
			path = v + strlen(name) - 1;
	}
	if (path != NULL && access(path, F_OK) == 0)
		raise(SIGKILL);
}
#endif

void
exports_flush(struct exports *ex, const struct policy *P)
{
	struct flush	 f = { ex, P };
	struct strmap	*m, *pm;

	if (queued_none(ex))
		return;
#ifdef TOPOAWARE_DEBUG_HOOKS
	debug_crash();
#endif
	if (strmap_count(ex->pool_queue) > 0)
		strmap_each(ex->failing, queue_failing, ex);
	m = ex->queue;
	pm = ex->pool_queue;
	ex->queue = strmap_new();
	ex->pool_queue = strmap_new();
	strmap_each(m, flush_one, &f);
	strmap_each(pm, flush_pool, &f);
	strmap_free(m);
	strmap_free(pm);
	strmap_free_all(ex->fresh, settled_free);
	ex->fresh = strmap_new();
}
