/*
 * dra.c serves the kubelet's DRA calls. A NodePrepareResources call
 * becomes a batch: one GET of the ResourceClaim per distinct claim UID,
 * all in flight at once; as each answer arrives the claim is checked
 * (claimdoc.c), claimed through server_claim (which saves the state) and
 * its CDI spec written; when the last claim of the batch is done the
 * whole answer goes out, one entry per UID, failures as per-claim errors.
 * The loop keeps serving everyone meanwhile: a slow API server only
 * delays the claims waiting for it.
 *
 * The v1 and v1beta1 messages are the same on the wire except the
 * Device's share_id (field 5, v1 only), so both are decoded and encoded
 * with the v1 code and share_id is left empty for v1beta1.
 */
#include "autoconf.h"

#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cdi.h"
#include "claimdoc.h"
#include "clock.h"
#include "dra.h"
#include "dra_v1.pb-c.h"
#include "grpc.h"
#include "h2.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "nri.h"
#include "registration.h"
#include "server.h"
#include "slice.h"
#include "spares.h"
#include "xmalloc.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim		 PbClaim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest
    PbPrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse
    PbPrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry
    PbPrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse
    PbPrepareOne;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device		 PbDevice;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest
    PbUnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse
    PbUnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry
    PbUnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse
    PbUnprepareOne;

#define SVC_V1		"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
#define SVC_V1BETA1	"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"
#define PREPARE_REQ	\
    (&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor)
#define UNPREPARE_REQ	\
    (&k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor)
#define CLAIM_PATH	"/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s"

struct dra_batch;

struct dra_claim {
	struct dra_batch	*batch;
	char			*ns;
	char			*name;
	char			*uid;
	struct kube_request	*req;
	int			 done;
	int			 cancelled;	/* unprepared meanwhile */
	char			*error;
	struct claimdoc		*doc;
};

struct dra_batch {
	struct dra		*dra;
	TAILQ_ENTRY(dra_batch)	 entry;
	struct h2_call		*call;
	int			 v1beta1;
	struct timespec		 start;
	int			 n;
	int			 pending;
	struct dra_claim	*claims;
};
TAILQ_HEAD(dra_batches, dra_batch);

struct dra {
	struct server		*srv;
	struct kube		*kube;
	char			*driver;	/* the config's may be freed */
	struct h2_server	*h2;
	struct registration	*reg;
	char			*dir;
	char			*path;
	struct dra_batches	 batches;
	int			 inflight;
	uint64_t		 ahead_after;	/* ms: spares after a failure */
	int			 ahead_failing;
};

static double
elapsed(const struct timespec *t0)
{
	struct timespec	t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9);
}

/* Namespaces are DNS labels and claim names DNS subdomains: nothing in
 * them needs escaping in a URL path. */
static int
kube_name(const char *s, size_t max)
{
	size_t	i, n = strlen(s);

	if (n == 0 || n > max)
		return (0);
	for (i = 0; i < n; i++) {
		if ((s[i] < 'a' || s[i] > 'z') && (s[i] < '0' || s[i] > '9') &&
		    s[i] != '-' && s[i] != '.')
			return (0);
	}
	return (s[0] != '-' && s[0] != '.' && s[n - 1] != '-' &&
	    s[n - 1] != '.');
}

static void
claim_fail(struct dra_claim *c, const char *fmt, ...)
    __attribute__((__format__(__printf__, 2, 3)));

static void
claim_fail(struct dra_claim *c, const char *fmt, ...)
{
	va_list	ap;

	free(c->error);
	va_start(ap, fmt);
	if (vasprintf(&c->error, fmt, ap) < 0)
		c->error = xstrdup("out of memory");
	va_end(ap);
	claimdoc_free(c->doc);
	c->doc = NULL;
}

static void
batch_free(struct dra_batch *b)
{
	int	i;

	for (i = 0; i < b->n; i++) {
		if (b->claims[i].req != NULL)
			kube_cancel(b->claims[i].req);
		free(b->claims[i].ns);
		free(b->claims[i].name);
		free(b->claims[i].uid);
		free(b->claims[i].error);
		claimdoc_free(b->claims[i].doc);
	}
	b->dra->inflight -= b->pending;
	TAILQ_REMOVE(&b->dra->batches, b, entry);
	free(b->claims);
	free(b);
}

/* Every claim has its answer: encode them all and reply. */
static void
batch_answer(struct dra_batch *b)
{
	PbPrepareResp		  resp =
	    K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
	PbPrepareEntry		 *entries, **eptrs;
	PbPrepareOne		 *ones;
	PbDevice		 *devs, **dptrs;
	char			**names, **ids;
	struct dra_claim	 *c;
	struct claimdoc_result	 *r;
	uint8_t			 *buf;
	size_t			  len, ndev = 0;
	int			  i, j, k;

	for (i = 0; i < b->n; i++)
		if (b->claims[i].doc != NULL)
			ndev += (size_t)b->claims[i].doc->n;
	entries = xcalloc((size_t)b->n + 1, sizeof *entries);
	eptrs = xcalloc((size_t)b->n + 1, sizeof *eptrs);
	ones = xcalloc((size_t)b->n + 1, sizeof *ones);
	devs = xcalloc(ndev + 1, sizeof *devs);
	dptrs = xcalloc(ndev + 1, sizeof *dptrs);
	names = xcalloc(ndev + 1, sizeof *names);
	ids = xcalloc(ndev + 1, sizeof *ids);

	k = 0;
	for (i = 0; i < b->n; i++) {
		c = &b->claims[i];
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&entries[i]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&ones[i]);
		entries[i].key = c->uid;
		entries[i].value = &ones[i];
		eptrs[i] = &entries[i];
		metrics_inc("dra_claims", "result", c->error != NULL ?
		    "failed" : "prepared");
		if (c->error != NULL) {
			ones[i].error = c->error;
			continue;
		}
		ones[i].devices = &dptrs[k];
		for (j = 0; j < c->doc->n; j++, k++) {
			r = &c->doc->results[j];
			k8s__io__kubelet__pkg__apis__dra__v1__device__init(
			    &devs[k]);
			names[k] = r->request;
			ids[k] = cdi_device_id(b->dra->driver, c->uid,
			    (size_t)j);
			devs[k].n_request_names = 1;
			devs[k].request_names = &names[k];
			devs[k].pool_name = r->pool;
			devs[k].device_name = r->device;
			devs[k].n_cdi_device_ids = 1;
			devs[k].cdi_device_ids = &ids[k];
			if (!b->v1beta1 && r->share_id != NULL)
				devs[k].share_id = r->share_id;
			dptrs[k] = &devs[k];
			ones[i].n_devices++;
		}
	}
	resp.n_claims = (size_t)b->n;
	resp.claims = eptrs;
	len = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__get_packed_size(&resp);
	buf = xmalloc(len + 1);
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__pack(&resp, buf);
	h2_reply(b->call, buf, len);
	b->call = NULL;
	metrics_observe("dra_request", elapsed(&b->start));

	free(buf);
	for (i = 0; i < k; i++)
		free(ids[i]);
	free(ids);
	free(names);
	free(dptrs);
	free(devs);
	free(ones);
	free(eptrs);
	free(entries);
	batch_free(b);
}

/* Claims the CPUs the results ask for; the server writes the spec. */
static void
claim_prepare(struct dra_claim *c)
{
	struct dra		 *d = c->batch->dra;
	struct server		 *srv = d->srv;
	struct claim_result	  res[CLAIMDOC_MAX_RESULTS];
	struct claim_meta	  meta;
	struct policy_effects	  fx;
	char			 *cause = NULL, *list;

	claimdoc_policy_results(c->doc, res);
	claimdoc_policy_meta(c->doc, &meta);
	policy_effects_init(&fx);
	if (server_claim(srv, c->uid, res, c->doc->n, &meta, &fx,
	    &cause) != 0) {
		claim_fail(c, "%s", cause);
		free(cause);
	} else {
		list = cpuset_format(&fx.claim_cpus);
		log_info("prepared claim %s/%s (%s): CPUs %s", c->ns, c->name,
		    c->uid, list);
		free(list);
	}
	policy_effects_clear(&fx);
}

static void
claim_done(struct dra_claim *c)
{
	struct dra_batch	*b = c->batch;

	c->done = 1;
	c->req = NULL;
	b->pending--;
	b->dra->inflight--;
	if (b->pending == 0)
		batch_answer(b);
}

static void
claim_fetched(void *arg, int status, json_t *body, const char *error)
{
	struct dra_claim	*c = arg;
	struct dra		*d = c->batch->dra;
	char			*cause = NULL;

	c->req = NULL;
	if (c->cancelled)
		claim_fail(c, "unprepared while it was being prepared");
	else if (status == 404)
		claim_fail(c, "ResourceClaim %s/%s not found", c->ns, c->name);
	else if (status != 200 || body == NULL)
		claim_fail(c, "cannot read ResourceClaim %s/%s: %s", c->ns,
		    c->name, error != NULL ? error : "no answer");
	else if (claimdoc_parse(body, c->uid, d->driver,
	    d->srv->opts.node_name, &c->doc, &cause) != 0) {
		claim_fail(c, "ResourceClaim %s/%s: %s", c->ns, c->name,
		    cause);
		free(cause);
	} else
		claim_prepare(c);
	if (c->error != NULL)
		log_warnx("claim %s/%s (%s) not prepared: %s", c->ns, c->name,
		    c->uid, c->error);
	claim_done(c);
}

static int
is_v1beta1(struct h2_call *call)
{
	return (strncmp(h2_call_path(call), SVC_V1BETA1,
	    strlen(SVC_V1BETA1)) == 0);
}

/* The index of an earlier claim of the same UID, or -1. */
static int
seen_uid(PbClaim **claims, size_t n, const char *uid)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(claims[i]->uid, uid) == 0)
			return ((int)i);
	return (-1);
}

/* What both calls refuse whole; 1 when the call is answered. */
static int
refused(struct h2_call *call, int undecodable, size_t nclaims,
    const char *what)
{
	if (undecodable) {
		metrics_inc("errors", "kind", "dra_protocol");
		h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT,
		    "cannot decode %s", what);
		return (1);
	}
	if (nclaims > DRA_MAX_CLAIMS) {
		h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT,
		    "%zu claims in one call, more than %d", nclaims,
		    DRA_MAX_CLAIMS);
		return (1);
	}
	return (0);
}

static void
prepare(struct h2_call *call, const uint8_t *msg, size_t len, void *arg)
{
	struct dra		*d = arg;
	struct dra_batch	*b;
	struct dra_claim	*c;
	PbPrepareReq		*req;
	char			*path, *cause = NULL;
	size_t			 i;

	metrics_inc("dra_requests", "method", "NodePrepareResources");
	/* v1beta1 requests have v1's bytes; no string may hold a NUL. */
	if (h2_refuse_request(call, PREPARE_REQ, msg, len)) {
		metrics_inc("errors", "kind", "dra_protocol");
		return;
	}
	req = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len, msg);
	if (refused(call, req == NULL, req != NULL ? req->n_claims : 0,
	    "NodePrepareResourcesRequest"))
		goto out;
	/* Claims taken before the runtime told us what runs could land
	 * on CPUs its containers hold. */
	if (d->srv->nri == NULL || !nri_synchronized(d->srv->nri)) {
		h2_reply_error(call, GRPC_STATUS_UNAVAILABLE, "the container "
		    "runtime has not synchronized yet; try again");
		goto out;
	}
	if (d->inflight + (int)req->n_claims > DRA_MAX_INFLIGHT) {
		h2_reply_error(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
		    "%d claims are being prepared already", d->inflight);
		goto out;
	}

	b = xcalloc(1, sizeof *b);
	b->dra = d;
	b->call = call;
	b->v1beta1 = is_v1beta1(call);
	clock_gettime(CLOCK_MONOTONIC, &b->start);
	b->claims = xcalloc(req->n_claims + 1, sizeof *b->claims);
	TAILQ_INSERT_TAIL(&d->batches, b, entry);
	/* One answer per UID: a repeated one is prepared once. */
	for (i = 0; i < req->n_claims; i++) {
		if (seen_uid(req->claims, i, req->claims[i]->uid) >= 0)
			continue;
		c = &b->claims[b->n++];
		c->batch = b;
		c->ns = xstrdup(req->claims[i]->namespace_);
		c->name = xstrdup(req->claims[i]->name);
		c->uid = xstrdup(req->claims[i]->uid);
		b->pending++;
		d->inflight++;
	}
	for (i = 0; i < (size_t)b->n; i++) {
		c = &b->claims[i];
		if (cdi_check_uid(c->uid, &cause) != 0) {
			claim_fail(c, "bad claim UID: %s", cause);
			free(cause);
			cause = NULL;
			c->done = 1;
		} else if (!kube_name(c->ns, 63) || !kube_name(c->name, 253)) {
			claim_fail(c, "bad claim namespace or name %.64s/%.64s",
			    c->ns, c->name);
			c->done = 1;
		}
	}
	for (i = 0; i < (size_t)b->n; i++) {
		c = &b->claims[i];
		if (c->done) {
			b->pending--;
			d->inflight--;
			continue;
		}
		xasprintf(&path, CLAIM_PATH, c->ns, c->name);
		c->req = kube_request(d->kube, "GET", path, NULL,
		    claim_fetched, c);
		free(path);
	}
	/* Callbacks never run inside kube_request: b is still here. */
	if (b->pending == 0)
		batch_answer(b);
out:
	if (req != NULL)
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(req, NULL);
}

static void
unprepare(struct h2_call *call, const uint8_t *msg, size_t len, void *arg)
{
	struct dra		 *d = arg;
	struct server		 *srv = d->srv;
	struct dra_batch	 *b;
	struct policy_effects	  fx;
	PbUnprepareReq		 *req;
	PbUnprepareResp		  resp =
	    K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
	PbUnprepareEntry	 *entries, **eptrs;
	PbUnprepareOne		 *ones;
	char			**errors, *cause = NULL;
	const char		 *uid;
	struct timespec		  t0;
	uint8_t			 *buf;
	size_t			  i, n = 0, blen;
	int			  j;

	metrics_inc("dra_requests", "method", "NodeUnprepareResources");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (h2_refuse_request(call, UNPREPARE_REQ, msg, len)) {
		metrics_inc("errors", "kind", "dra_protocol");
		return;
	}
	req = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(NULL, len, msg);
	if (refused(call, req == NULL, req != NULL ? req->n_claims : 0,
	    "NodeUnprepareResourcesRequest"))
		goto out;
	entries = xcalloc(req->n_claims + 1, sizeof *entries);
	eptrs = xcalloc(req->n_claims + 1, sizeof *eptrs);
	ones = xcalloc(req->n_claims + 1, sizeof *ones);
	errors = xcalloc(req->n_claims + 1, sizeof *errors);
	for (i = 0; i < req->n_claims; i++) {
		uid = req->claims[i]->uid;
		if (seen_uid(req->claims, i, uid) >= 0)
			continue;
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(&entries[n]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&ones[n]);
		entries[n].key = req->claims[i]->uid;
		entries[n].value = &ones[n];
		eptrs[n] = &entries[n];
		if (cdi_check_uid(uid, &cause) != 0) {
			xasprintf(&errors[n], "bad claim UID: %s", cause);
			free(cause);
			cause = NULL;
			ones[n].error = errors[n];
			n++;
			continue;
		}
		/* A prepare still reading this claim must not take it. */
		TAILQ_FOREACH(b, &d->batches, entry) {
			for (j = 0; j < b->n; j++)
				if (!b->claims[j].done &&
				    strcmp(b->claims[j].uid, uid) == 0)
					b->claims[j].cancelled = 1;
		}
		policy_effects_init(&fx);
		if (server_release(srv, uid, &fx, &cause) != 0) {
			xasprintf(&errors[n], "cannot release: %s", cause);
			free(cause);
			cause = NULL;
		} else if (cdi_remove(srv->cdi_spares, srv->opts.cdi_dir, d->driver, uid,
		    &cause) != 0) {
			xasprintf(&errors[n], "cannot remove the CDI spec: %s",
			    cause);
			free(cause);
			cause = NULL;
		} else if (fx.save)
			log_info("unprepared claim %s/%s (%s)",
			    req->claims[i]->namespace_, req->claims[i]->name,
			    uid);
		policy_effects_clear(&fx);
		if (errors[n] != NULL) {
			log_warnx("claim %s not unprepared: %s", uid,
			    errors[n]);
			ones[n].error = errors[n];
		}
		metrics_inc("dra_claims", "result", errors[n] != NULL ?
		    "failed" : "unprepared");
		n++;
	}
	resp.n_claims = n;
	resp.claims = eptrs;
	blen = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__get_packed_size(&resp);
	buf = xmalloc(blen + 1);
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__pack(&resp, buf);
	h2_reply(call, buf, blen);
	metrics_observe("dra_request", elapsed(&t0));
	free(buf);
	for (i = 0; i < n; i++)
		free(errors[i]);
	free(errors);
	free(ones);
	free(eptrs);
	free(entries);
out:
	if (req != NULL)
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(req, NULL);
}

static void
registered(void *arg, int ok)
{
	struct dra	*d = arg;

	/* The kubelet wipes the node's slices when it starts, then
	 * registers its plugins: see that ours are there again. */
	if (ok && d->srv->slice != NULL)
		slice_check(d->srv->slice);
}

static int
mkdir_one(const char *path, char **cause)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		xasprintf(cause, "mkdir %s: %s", path, strerror(errno));
		return (-errno);
	}
	return (0);
}

/*
 * Every held claim's spec, written again at start: specs are not synced
 * when a claim is prepared (the journal is what is durable), so a crash
 * of the machine may have lost one the kubelet still counts on (it does
 * not prepare a claim again after a reboot). One of a claim saved by an
 * older version, whose result count is not known, is left as it is.
 */
static void
rewrite_specs(struct dra *d)
{
	struct server	 *srv = d->srv;
	const char	**uids;
	char		**edits, *cause = NULL;
	size_t		  i, n;
	int		  k, j;

	uids = policy_claim_uids(srv->policy, &n);
	for (i = 0; i < n; i++) {
		if ((k = policy_claim_edits(srv->policy, uids[i], &edits)) <= 0)
			continue;
		if (cdi_write(srv->cdi_spares, srv->opts.cdi_dir, d->driver, uids[i],
		    (const char *const *)edits, (size_t)k, 0, &cause) != 0) {
			log_warnx("claim %s: cannot write its CDI spec again: "
			    "%s", uids[i], cause);
			metrics_inc("errors", "kind", "cdi_write");
			free(cause);
			cause = NULL;
		}
		for (j = 0; j < k; j++)
			free(edits[j]);
		free(edits);
	}
	free(uids);
}

/*
 * Spares made ahead: a new inode costs the file system tens to hundreds
 * of microseconds (ext4 without a journal more while many were freed
 * lately: it skips those), which the answer of the claim's prepare would
 * otherwise wait for.
 */
void
dra_turn_done(struct dra *d)
{
	struct server	*srv = d->srv;
	char		*cause = NULL;
	int		 rc;

	if (srv->cdi_spares == NULL)
		return;
	if (d->ahead_failing && clock_mono_ms() < d->ahead_after)
		return;
	if ((rc = cdi_spares_ahead(srv->cdi_spares, srv->opts.cdi_dir,
	    DRA_CDI_AHEAD, &cause)) >= 0) {
		if (d->ahead_failing)
			log_info("CDI spares are made ahead again");
		d->ahead_failing = 0;
		return;
	}
	metrics_inc("errors", "kind", "cdi_spare");
	if (!d->ahead_failing)
		log_warnx("%s; specs are made the usual way, and spares tried "
		    "again every %d s", cause, DRA_CDI_AHEAD_RETRY_MS / 1000);
	d->ahead_failing = 1;
	d->ahead_after = clock_mono_ms() + DRA_CDI_AHEAD_RETRY_MS;
	free(cause);
}

/*
 * A spec whose claim is not held is left from a release whose removal
 * did not happen (a crash, a full disk): the runtime must not hand out
 * CPUs nobody holds any more, so it goes at start. So do the texts of
 * spares a crash left full (between filling a spare and renaming it into
 * place, or between keeping a removed spec and emptying it): taking the
 * spares back empties them now, not at their first use, which may be long
 * after.
 */
static void
tidy_specs(struct dra *d)
{
	struct server	*srv = d->srv;
	char		**uids = NULL, *cause = NULL;
	size_t		  i, n = 0;

	if (srv->cdi_spares != NULL)
		spares_reclaim(srv->cdi_spares);
	if (srv->journal_damaged) {
		log_warnx("the state journal is damaged: CDI specs of claims "
		    "not held are kept, as their claims may have been lost");
		return;
	}
	if (cdi_list(srv->opts.cdi_dir, d->driver, &uids, &n, &cause) != 0) {
		log_warnx("%s", cause);
		free(cause);
		return;
	}
	for (i = 0; i < n; i++) {
		if (policy_claim_cpus(srv->policy, uids[i]) != NULL) {
			free(uids[i]);
			continue;
		}
		if (cdi_remove(srv->cdi_spares, srv->opts.cdi_dir, d->driver, uids[i],
		    &cause) != 0) {
			log_warnx("%s", cause);
			free(cause);
			cause = NULL;
		} else
			log_info("removed the CDI spec of claim %s, which is "
			    "not held", uids[i]);
		free(uids[i]);
	}
	free(uids);
}

int
dra_new(struct server *srv, struct kube *kube, struct dra **out,
    char **cause)
{
	struct dra	*d;
	char		*plugins = NULL;
	int		 rc;

	d = xcalloc(1, sizeof *d);
	d->srv = srv;
	d->kube = kube;
	d->driver = xstrdup(srv->cfg->dra_driver_name);
	TAILQ_INIT(&d->batches);
	xasprintf(&plugins, "%s/plugins", srv->opts.kubelet_dir);
	xasprintf(&d->dir, "%s/%s", plugins, d->driver);
	xasprintf(&d->path, "%s/dra.sock", d->dir);
	d->h2 = h2_server_new(srv->base, "DRA");
	h2_server_set_gate(d->h2, srv->gate);
	h2_server_add(d->h2, SVC_V1 "NodePrepareResources", prepare, d);
	h2_server_add(d->h2, SVC_V1 "NodeUnprepareResources", unprepare, d);
	h2_server_add(d->h2, SVC_V1BETA1 "NodePrepareResources", prepare, d);
	h2_server_add(d->h2, SVC_V1BETA1 "NodeUnprepareResources", unprepare,
	    d);
	/* The kubelet may call as soon as the registration socket shows. */
	if ((rc = mkdir_one(srv->opts.kubelet_dir, cause)) != 0 ||
	    (rc = mkdir_one(plugins, cause)) != 0 ||
	    (rc = mkdir_one(d->dir, cause)) != 0 ||
	    (rc = h2_server_listen(d->h2, d->path, cause)) != 0)
		goto fail;
	tidy_specs(d);
	rewrite_specs(d);
	dra_turn_done(d);
	d->reg = registration_new(srv->base, srv->opts.kubelet_dir, d->driver,
	    d->path);
	registration_on_notify(d->reg, registered, d);
	if ((rc = registration_start(d->reg, cause)) != 0)
		goto fail;
	free(plugins);
	log_info("DRA driver %s serving on %s, registering at %s", d->driver,
	    d->path, registration_socket(d->reg));
	*out = d;
	return (0);
fail:
	free(plugins);
	dra_free(d);
	return (rc);
}

void
dra_free(struct dra *d)
{
	struct dra_batch	*b;

	if (d == NULL)
		return;
	while ((b = TAILQ_FIRST(&d->batches)) != NULL) {
		if (b->call != NULL)
			h2_reply_error(b->call, GRPC_STATUS_UNAVAILABLE,
			    "the DRA driver is stopping");
		batch_free(b);
	}
	/* The registration socket goes first: the kubelet stops calling. */
	registration_free(d->reg);
	h2_server_free(d->h2);
	free(d->driver);
	free(d->dir);
	free(d->path);
	free(d);
}

int
dra_registered(const struct dra *d)
{
	return (registration_registered(d->reg));
}

json_t *
dra_status(const struct dra *d)
{
	const char	*err = registration_error(d->reg);

	return (json_pack("{s:b, s:o, s:s, s:s, s:i, s:i}",
	    "registered", registration_registered(d->reg),
	    "error", err != NULL ? json_string(err) : json_null(),
	    "socket", d->path,
	    "registrationSocket", registration_socket(d->reg),
	    "inFlight", d->inflight,
	    "connections", (int)h2_server_connections(d->h2)));
}
