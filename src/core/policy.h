/*
 * The policy: one state machine, no I/O, that every endpoint drives
 * (SPEC R-POOL, R-CLAIM, R-CONF-3, R-STATE). It holds a grant per container
 * and per claim over the pool tree of one topology and configuration.
 *
 * Every operation is a transaction: it either succeeds and commits whole,
 * or fails with a cause and leaves the state exactly as it was. What the
 * caller must do afterwards is returned in struct policy_effects: the
 * pinning of the container asked about, the other containers whose
 * pinning changed (only those, in no order), whether the state must be
 * saved, a claim's CPUs and CDI edits, and warnings to log.
 */
#ifndef TOPOAWARE_POLICY_H
#define TOPOAWARE_POLICY_H

#include <jansson.h>

#include "config.h"
#include "cpuset.h"
#include "dradev.h"
#include "pool.h"
#include "strpool.h"
#include "topology.h"

/* Named limits (documented in topoawared(8)). */
#define POLICY_MAX_CONTAINERS	8192
#define POLICY_MAX_CLAIMS	4096
#define POLICY_MAX_RESULTS	128	/* allocation results of one claim */
#define POLICY_MAX_ID		256	/* bytes of a container id or claim UID */
#define POLICY_MAX_CONSUMERS	256	/* pods reserving one claim, as Kubernetes */
/*
 * What is kept of one container's metadata: its pod's annotations of ours
 * and its DRA_CPUSET_* variables. Entries past a cap are ignored with one
 * warning; the container is still placed. Other entries are not counted.
 */
#define POLICY_MAX_ANNOTATIONS	128
#define POLICY_MAX_CLAIM_ENV	32
#define POLICY_MAX_KEPT_BYTES	(64 * 1024)	/* keys and values */
#define POLICY_MAX_MEMORY	(1LL << 60)	/* bytes, a memory limit */
/*
 * What affinity expressions can match: the pod's and the container's
 * labels, each set capped like the annotations (entries past a cap are
 * ignored with the same warning).
 */
#define POLICY_MAX_LABELS	64		/* of the pod, of the container */
#define POLICY_MAX_LABEL_BYTES	(16 * 1024)	/* each set, keys and values */
/* Containers of one claim waiting for its consumers to be read again. */
#define POLICY_MAX_WAITING	64
/*
 * Each of a container's names (its own, its pod's id, name, UID and
 * namespace) is kept up to this many bytes of state text, escaped (a
 * Kubernetes name is at most 253 plain bytes: never cut).
 */
#define POLICY_MAX_NAME		256
/*
 * The node's budget of kept metadata: the annotations, DRA_CPUSET_*
 * variables (with the claims they name), labels and pod labels of every
 * container held, in bytes of state text (escaped, as written). A
 * container whose metadata would pass it keeps no labels; a create whose
 * annotations and variables still do not fit is refused, a container
 * already running (Synchronize) keeps none of them. What a restart or a
 * reload carries is kept whole, even past the budget.
 *
 * Why 4 MiB: the state text is bounded by what the budget leaves out, at
 * worst escaping (every byte a control character, 6 bytes of text):
 *
 *   8192 containers, each at most 2.8 KiB besides its metadata: a
 *	256-byte id, 5 names and 4 kubelet labels copying them at
 *	POLICY_MAX_NAME, numbers, pool and CPUs                    22 MiB
 *   4096 claims, each at most 34 KiB: 256 consumers of 128-byte UIDs,
 *	namespace, name, CPUs                                    134 MiB
 *   the config (SERVER_CONFIG_MAX, its JSON text as read)          1 MiB
 *   kept metadata                                                 4 MiB
 *
 * about 160 MiB, which t/unit/test_budget.c builds and measures; state.json
 * is read up to STATEFILE_MAX_SIZE (512 MiB), a journal record up to
 * JREC_MAX_PAYLOAD (512 MiB: a Synchronize's holds every grant and its
 * event, whose metadata is bounded by the budget too) and the journal up
 * to 1 GiB. A pod's own choices (annotations, variables, image labels)
 * reach only the last line, which is also what a Synchronize writes and
 * syncs twice (record and snapshot): at 16 MiB that took 2.4 s on a slow
 * test machine, past the runtime's 2 s; at 4 MiB, 0.6 s. 4 MiB is 8192
 * containers with 512 bytes each, or 2,000 with 2 KiB.
 */
#define POLICY_META_BUDGET	(4 * 1024 * 1024)

enum qos_class {
	QOS_BESTEFFORT = 0,
	QOS_BURSTABLE,
	QOS_GUARANTEED
};

struct policy;
struct undolog;

struct policy_kv {
	char	*key;
	char	*value;
};

/* The value of key among n pairs, or NULL. */
const char *policy_kv_get(const struct policy_kv *, int, const char *);

/* What the runtime says of a container. The policy copies what it keeps. */
struct container_spec {
	const char		*id;
	const char		*name;		/* container name, may be NULL */
	const char		*pod;		/* pod id, may be NULL */
	const char		*pod_uid;	/* the pod's Kubernetes UID, or NULL */
	const char		*pod_name;	/* the pod's name, may be NULL */
	const char		*namespace;	/* may be NULL */
	enum qos_class		 qos;
	long long		 cpu_request;	/* milli, -1 unset */
	long long		 cpu_limit;	/* milli, -1 unset */
	long long		 mem_limit;	/* bytes, 0 unlimited */
	int			 oom_adj;	/* oom_score_adj, when has_oom */
	int			 has_oom;
	const struct policy_kv	*annotations;	/* pod annotations */
	int			 nannotations;
	const struct policy_kv	*env;		/* environment */
	int			 nenv;
	const struct policy_kv	*labels;	/* the container's labels */
	int			 nlabels;
	const struct policy_kv	*pod_labels;	/* the pod's labels */
	int			 npod_labels;
};

/* Whether a and b say the same of their container, field by field (the
 * tests hold two decoders of one message to it). */
int	container_spec_same(const struct container_spec *a,
	    const struct container_spec *b);

/* One allocation result of a claim for our driver. */
struct claim_result {
	const char	*device;	/* cpudevnuma%03d */
	const char	*cpu;		/* consumed dra.cpu/cpu, NULL if none */
};

/*
 * Who a claim belongs to, as the API server says (its ResourceClaim's
 * metadata and status.reservedFor): only containers of these pods are
 * pinned to its CPUs. known is 0 when that was never read.
 */
struct claim_meta {
	const char		*ns;		/* may be NULL */
	const char		*name;		/* may be NULL */
	const char *const	*pods;		/* pod UIDs */
	int			 npods;
	int			 known;
};

/* A container's pinning: what the runtime is told to apply. */
struct pinning {
	char		*id;
	int		 pin_cpus;	/* cpus is to be written */
	struct cpuset	 cpus;
	int		 pin_mems;	/* mems is to be written */
	struct cpuset	 mems;
	int		 shares;	/* cpu.shares, 0 untouched */
};

/* Another container whose pinning an operation moved. */
struct policy_update {
	char		*id;
	/* Only its pool's shared CPUs moved, and its resources.sh is its
	 * pool's file (policy_export_shared_pool): that file, named in the
	 * effects' pools, says the change, and its own folder is as it was. */
	int		 pool_file;
};

struct cspec;

struct policy_effects {
	struct pinning	 self;		/* create/update: the container's own */
	char		*self_pool;	/* and its pool's name, or "claims" */
	int		 nupdates;	/* their pinnings: policy_pinning() */
	struct policy_update *updates;	/* other containers, in no order */
	struct strpool	 ids;		/* the updates' ids */
	int		 npools;
	char		**pools;	/* pools of the pool_file updates */
	int		 save;		/* the state changed: save it */
	struct cpuset	 claim_cpus;	/* claim: the whole claim's CPUs */
	int		 nedits;
	char		**edits;	/* claim: one env "K=V" per result */
	int		 nwarnings;
	char		**warnings;	/* for the log */
	/* A container named a held claim its pod is not known to consume:
	 * not pinned to it. refused says who (one line each, for a
	 * rate-limited log); verify lists the claims (distinct) whose
	 * consumers the daemon should read again. */
	int		 nrefused;
	char		**refused;
	int		 nverify;
	char		**verify;
	/* sync: for each spec it was given, by index, the copy it made of a
	 * container it had not known and kept whole, NULL for the others;
	 * the copies are its grants', valid until the policy changes. The
	 * event is written from them (event_sync). */
	const struct cspec **read;
	/* What the operation changed (undo.c): kept until the effects are
	 * cleared, which keeps the change, or policy_undo puts it back. */
	struct undolog	*undo;
};

void	policy_effects_init(struct policy_effects *);
/* Keeps what the operation did and frees the effects. */
void	policy_effects_clear(struct policy_effects *);
/*
 * Puts back everything the operation of fx changed in the policy, which
 * must be the last one made: the saved state text and every container's
 * pinning are as before it. What fx told (updates, edits) is not undone.
 */
void	policy_undo(struct policy *, struct policy_effects *);

struct policy;

/* A policy with no grants. Fails on a config the machine cannot take. */
int	policy_new(const struct topology *, const struct config *,
	    struct policy **, char **);
void	policy_free(struct policy *);

int	policy_create(struct policy *, const struct container_spec *,
	    struct policy_effects *, char **);
/*
 * Cold start (coldstart.c), in ms of the wall clock: a container started
 * at at; the cold starts over by at end (DRAM is added to their memory,
 * their updates in fx; returns how many); the earliest end pending, 0
 * when none is.
 */
int	policy_start(struct policy *, const char *id, long long at,
	    struct policy_effects *);
/* Whether policy_start of id would begin anything (a Synchronize asks it
 * of every running container, nearly all without a cold start). */
int	policy_start_begins(const struct policy *, const char *id);
int	policy_cold_due(struct policy *, long long at, struct policy_effects *);
long long policy_cold_next(const struct policy *);
/* mem_limit: bytes, 0 unlimited, -1 as it was. */
int	policy_update(struct policy *, const char *id, long long request,
	    long long limit, long long mem_limit, struct policy_effects *,
	    char **);
int	policy_remove(struct policy *, const char *id, struct policy_effects *);
int	policy_claim(struct policy *, const char *uid,
	    const struct claim_result *, int, const struct claim_meta *,
	    struct policy_effects *, char **);
/*
 * What the API server now says of a held claim's consumers: replaces them,
 * and containers of those pods that name the claim and were waiting for it
 * are pinned to it (their updates in fx). Containers already pinned stay.
 */
int	policy_claim_consumers(struct policy *, const char *uid,
	    const struct claim_meta *, struct policy_effects *, char **);
/* The held claims a create of this container would not pin it to for
 * want of its pod among their known consumers (caller frees each and the
 * array). Returns how many. */
int	policy_claims_unverified(const struct policy *,
	    const struct container_spec *, char ***);
/* The one rule for claim UIDs, from the kubelet or the saved state: 1 to
 * 128 letters, digits, '-', '_', '.' and ':', not ".", no "..". */
int	claim_check_uid(const char *, char **);
/* Held claims whose consumers were never read (saved by an older
 * version). Same ownership. */
int	policy_claims_unknown(const struct policy *, char ***);
/* A held claim's namespace and name (NULL when not known); -ENOENT when
 * the claim is not held. */
int	policy_claim_ref(const struct policy *, const char *uid,
	    const char **ns, const char **name);
int	policy_release(struct policy *, const char *uid,
	    struct policy_effects *);
/* The full list of live containers: gone ones are released, known ones
 * kept, new ones allocated. */
int	policy_sync(struct policy *, const struct container_spec *, int,
	    struct policy_effects *, char **);
/* A new configuration: refused whole when a claim cannot keep its CPUs. */
int	policy_reconfigure(struct policy *, const struct config *,
	    struct policy_effects *, char **);

/*
 * What the operation of fx moved, fx being the last one made and one that
 * replaced the whole state (reconfigure, sync), while it can still be
 * committed or undone: {"containers":[{"id","from","to"}],"claims":
 * [{"claim","from","to"}]}, where from and to are where the grant is
 * before and after, as policy_grants_json shows it without its key (null:
 * not held), in its order; grants that stay put are left out. NULL when
 * the operation replaced nothing. Caller owns the result.
 */
json_t	*policy_moves(const struct policy *, const struct policy_effects *);

/* The saved state's version. 2: claims say who consumes them, containers
 * their pod's UID. 3: the kubelet's labels that copy a container's fields
 * (its name, pod name, namespace and pod UID) are bits ("kubeLabels"),
 * not strings in "labels". 1 and 2 are still read: a version 1 state's
 * claims have their consumers read again from the API. */
#define POLICY_STATE_VERSION	3

/* The state document of R-STATE-1 (new reference) and back. Restore
 * builds a new policy; a bad document is refused with the reason. */
json_t	*policy_save(const struct policy *);
/* The same document as compact JSON text ending in a newline, written
 * without building it as values (the daemon saves it on every event).
 * Caller frees; *len, if not NULL, gets its length. */
char	*policy_save_text(const struct policy *, size_t *len);
int	policy_restore(const struct topology *, const struct config *,
	    json_t *, struct policy **, char **);
/* The same, with the warnings of the restore (a container the config
 * cannot place, which falls back) handed out when warnings is not NULL:
 * an array of *nwarnings strings, each and it for the caller to free. */
int	policy_restore_warn(const struct topology *, const struct config *,
	    json_t *, struct policy **, char ***warnings, int *nwarnings,
	    char **);
/*
 * The state document as a snapshot of the journal: its sequence number
 * (0: none) and the config in force (JSON text, NULL: none), which
 * policy_restore reads past. Caller frees.
 */
char	*policy_snapshot_text(const struct policy *, unsigned long long seq,
	    const char *config, size_t *len);
/*
 * The journal record of the operation whose effects are fx, which must be
 * the last one made: {"event":E,"set":{...},"del":[...]} with the grants
 * it changed (as in the state document), or {"event":E,"grants":{...}}
 * when it replaced the whole state. event is JSON text (malloc'd, taken:
 * the record is written in its buffer) or NULL.
 */
char	*policy_record_text(const struct policy *,
	    const struct policy_effects *, char *event, size_t *len);
/* Whether the operation whose effects are fx replaced the whole state (a
 * sync, a reconfiguration): its record then holds every grant. */
int	policy_effects_whole(const struct policy_effects *);
/* Applies a record to a state document, as at start. */
int	policy_record_apply(json_t *doc, json_t *rec, char **cause);

/* Read access for views, the admin socket and the simulator. */
const struct config	*policy_config(const struct policy *);
const struct pool_tree	*policy_tree(const struct policy *);
int	policy_devices(const struct policy *, struct dradev **);
int	policy_ncontainers(const struct policy *);
/* Bytes of state text the containers' kept metadata takes (held whole
 * after a restart even when past POLICY_META_BUDGET). */
size_t	policy_kept_bytes(const struct policy *);
int	policy_nclaims(const struct policy *);
/* [{"id"|"claim","cpus","mems","pool"}] sorted, containers then claims. */
json_t	*policy_grants_json(const struct policy *);
/* Pools with their free supply. */
json_t	*policy_pools_json(const struct policy *);
/*
 * Why a container (its id) or a claim ("claim:<uid>") holds what it
 * holds (explain_view.c): its request, how its pool was decided, how its
 * CPUs were picked. NULL with *cause when it is not held.
 */
json_t	*policy_explain(const struct policy *, const char *, char **);
/* A claim's CPUs, or NULL when it is not held. */
const struct cpuset *policy_claim_cpus(const struct policy *, const char *);
/* The UIDs of the claims held, sorted; an array to free, not its strings. */
const char **policy_claim_uids(const struct policy *, size_t *);
/*
 * The CDI edits of a held claim as its prepare gave them, into *edits
 * (the caller frees each and the array): their count; 0 when it is not
 * known (a claim saved by an older version), -1 when not held.
 */
int	policy_claim_edits(const struct policy *, const char *, char ***);
/* A container's current pinning, or NULL. */
const struct pinning *policy_pinning(const struct policy *, const char *);
/*
 * What a container's resources.sh says (R-STATE-4, anchor §7): SHARED_CPUS,
 * EXCLUSIVE_CPUS, ISOLATED_CPUS when not empty, ALL_MEMS always, DRA_CPUS
 * for a container pinned to claims; sorted by name. Values are list-form
 * strings (caller frees with policy_export_free). -ENOENT when unknown.
 */
int	policy_export(const struct policy *, const char *, struct policy_kv **,
	    int *);
void	policy_export_free(struct policy_kv *, int);
/*
 * The pool whose shared export a container's is, word for word (a shared
 * container: no exclusive CPUs, no claim), or NULL. Every such container
 * of a pool says what policy_export_pool says of the pool, so one file can
 * serve them all.
 */
const struct pool *policy_export_shared_pool(const struct policy *,
	    const char *);
int	policy_export_pool(const struct policy *, const struct pool *,
	    struct policy_kv **, int *);

#endif
