/*
 * What the policy's own files (policy.c, supply.c, request.c, claim.c,
 * state.c, nrtdoc.c) share and nobody else sees.
 */
#ifndef TOPOAWARE_POLICY_PRIV_H
#define TOPOAWARE_POLICY_PRIV_H

#include "cpualloc.h"
#include "memalloc.h"
#include "policy.h"
#include "strmap.h"

#define UNLIMITED_CPU	(-1)
#define ANNOTATION_NS	"resource-policy.nri.io"
#define DRA_ENV_PREFIX	"DRA_CPUSET_"
/* Claims' keys in the state document; no container id may start so. */
#define CLAIM_KEY_PREFIX	"claim:"
#define CLAIM_KEY_PLEN		(sizeof(CLAIM_KEY_PREFIX) - 1)

enum cpu_type {
	CPU_NORMAL = 0,
	CPU_RESERVED = 1,
	CPU_PRESERVE = 2
};

enum grant_kind {
	GRANT_CONTAINER = 0,	/* CPUs of a pool by QoS class */
	GRANT_CLAIM,		/* a DRA claim's exclusive CPUs */
	GRANT_CLAIM_PINNED	/* a container running on held claims' CPUs */
};

/*
 * What a pool's memory offers a request of some memory types (a set of
 * 1 << enum mem_type): fixed for a pool tree, so made once for each
 * pool and set of types, when scoring first asks.
 */
#define MEM_TYPE_SETS	(1u << (MEM_TYPE_HBM + 1))
struct mem_offer {
	int		made;	/* filled in (on first use) */
	struct cpuset	zone;	/* the nodes (memzone_offer) */
	int		mems;	/* how many */
	int		match;	/* they hold every wanted type */
	int		own;	/* the pool's own nodes hold them */
};

/* What is free in one pool now (anchor §1.2 freeres). */
struct supply {
	struct cpuset	 isolated;
	struct cpuset	 sharable;
	int		 granted_shared;	/* milli, this pool's own */
	int		 granted_reserved;	/* milli, this pool's own */
	int		 zero_req;		/* grants with no CPU request */
	unsigned long	 gen;			/* a new supply_stamp when a
						 * free set changes */
};

/* A container's CPU request as §2.2 decides it. */
struct request {
	enum cpu_type	 type;
	int		 full;		/* exclusive CPUs */
	int		 fraction;	/* milli-CPU shared or reserved */
	int		 limit;		/* milli, UNLIMITED_CPU */
	int		 isolate;	/* prefer isolated CPUs */
	int		 strict_isolate;/* require them */
	enum cpu_prio	 prio;
	int		 hide_ht;	/* one thread per core */
	int		 mem_preserve;	/* memory nodes left as they are */
	unsigned	 mem_types;	/* 1 << enum mem_type it wants; 0 when
					   preserved (any type, none matched) */
	int		 mem_types_bad;	/* its memory-type annotation was not
					   taken: the default types are used */
	int		 zero_req;	/* BestEffort or no CPU request */
	long long	 mem_req;	/* bytes: estimated request, 0 none */
	long long	 mem_lim;	/* bytes: limit, 0 none */
	long long	 cold_ms;	/* cold start: DRAM comes this long
					   after it starts; 0 none */
	int		 cold_bad;	/* cold start asked for but left out:
					   no memory type but DRAM */
};

/* The policy's own copy of what it keeps of a container_spec. */
struct cspec {
	char		*id;
	char		*name;
	char		*pod;
	char		*pod_uid;	/* Kubernetes UID of the pod */
	char		*pod_name;
	char		*ns;
	enum qos_class	 qos;
	long long	 request;
	long long	 limit;
	long long	 mem_limit;	/* bytes, 0 unlimited */
	int		 oom_adj;	/* when has_oom */
	int		 has_oom;
	int		 nann;
	struct policy_kv *ann;		/* our annotations only */
	int		 nenv;
	struct policy_kv *env;		/* DRA_CPUSET_* only */
	int		 nlabels;
	struct policy_kv *labels;	/* the container's, capped, but */
	unsigned	 kube_labels;	/* the kubelet's that copy a field
					   (expr_kube_label bits) */
	int		 npod_labels;
	struct policy_kv *pod_labels;	/* the pod's, capped */
	size_t		 cost;		/* cspec_cost, set when made */
	int		 trimmed;	/* metadata dropped at the budget */
};

struct explain;

struct grant {
	char		*key;		/* container id or claim UID */
	enum grant_kind	 kind;
	struct pool	*pool;		/* NULL when claim-pinned */
	enum cpu_type	 type;
	struct cpuset	 exclusive;	/* or the claim's, or the pinned CPUs */
	int		 portion;	/* milli: shared or reserved */
	int		 zero_req;
	struct request	 req;
	struct cspec	 spec;		/* containers only */
	int		 nclaims;
	char		**claims;	/* claim-pinned: the UIDs */
	/* Claims: who may be pinned to it (struct claim_meta). */
	char		*claim_ns;
	char		*claim_name;
	int		 consumers_known;
	int		 nconsumers;
	char		**consumers;	/* pod UIDs */
	int		 nwaiting;
	char		**waiting;
	int		 nresults;	/* claims: allocation results, so CDI
					   devices; 0 when not known */	/* container ids refused for want of
					   their pod among the consumers */
	struct pinning	 applied;	/* containers: what the runtime has */
	int		 fallback;	/* got less than it asked for */
	int		 dirty;		/* refresh it even when skipping */
	unsigned long	 applied_gen;	/* supply_path_gen when applied */
	unsigned long	 mark;		/* index_mark of the last walk */
	long long	 cold_until;	/* cold start: ms (wall clock) DRAM
					   comes at, 0 until it starts */
	int		 cold_done;	/* cold start over: DRAM added */
	struct explain	*why;		/* how it was placed (explain.h), NULL
					   when not known */
	unsigned	 picked_by;	/* CPUALLOC_* steps its exclusive CPUs
					   were picked by */
};

struct policy {
	const struct topology	*topo;
	struct cpualloc		*alloc;		/* prepared for topo */
	struct config		*cfg;
	struct pool_tree	*tree;
	struct supply		*sup;		/* by pool id */
	struct mem_offer	*offers;	/* by pool id, MEM_TYPE_SETS each */
	struct memalloc		*mem;		/* memory accounting, NULL when
						   the machine has none or
						   more nodes than it holds */
	long long		 mem_total;	/* bytes, every node's */
	unsigned long long	 mem_seq;	/* the last request's age */
	unsigned		 mem_have;	/* the types this machine has */
	unsigned		 mem_default;	/* a container's, unannotated */
	unsigned long		 gen_clock;	/* the last supply gen given */
	struct cpuset		 allowed;
	struct cpuset		 reserved;
	struct strmap		*ctrs;		/* id -> struct grant */
	struct strmap		*claims;	/* uid -> struct grant */
	int			 ndevs;
	struct dradev		*devs;
	struct undolog		*undo;		/* the operation's, or NULL */
	struct index		*index;		/* index.c */
	size_t			 kept;		/* the containers' spec.cost */
};

/* index.c */
void	index_init(struct policy *);
void	index_clear(struct policy *);
void	index_link(struct policy *, int, struct grant *);
void	index_unlink(struct policy *, int, struct grant *);
void	index_dirty(struct policy *, struct grant *);
int	index_ntype(const struct policy *, int, enum cpu_type);
int	index_ncontainers(const struct policy *, int);
const int *index_pod(const struct policy *, const char *);
const int *index_ns(const struct policy *, const char *);
struct grant *const *index_attr(const struct policy *, int, const char *,
	    const char *, size_t *);
unsigned long index_mark(const struct policy *);
unsigned long index_visit(const struct policy *, int);
struct grant **index_pinned(const struct policy *, const char *, size_t *);
struct grant **index_moved(struct policy *, size_t *);
void	index_clean(struct policy *);
struct grant **index_cold(const struct policy *, size_t *);

/* undo.c: every change to a policy's state goes through these. */
struct affinity_set;

struct policy_change {
	int			 claim;		/* a claim, else a container */
	const char		*key;
	const struct grant	*grant;		/* as it is now; NULL: gone */
};
struct undoctx {
	struct undolog		*outer;
	struct undolog		*own;
	int			 mark;
};
void	undo_begin(struct policy *, struct policy_effects *, struct undoctx *);
void	undo_fail(struct policy *, struct undoctx *);
void	undo_end(struct policy *, struct undoctx *);
void	undo_to(struct policy *, int);
/* Frees a log, or keeps it emptied for the next operation's (undo.c). */
void	undolog_free(struct undolog *);
void	policy_put(struct policy *, int, const char *, struct grant *);
void	undo_supply(struct policy *, int);
void	undo_applied_move(struct policy *, struct grant *, int);
void	undo_swapped(struct policy *, struct policy *);
void	undo_mem(struct policy *, struct memalloc_log *);
void	undo_mem_restored(struct policy *, const char *);
const struct policy *undo_before(const struct policy_effects *);

/* memgrant.c */
void	policy_mem_init(struct policy *);
void	policy_mem_free(struct policy *);
memmask_t policy_mem_mask(const struct policy *, const struct cpuset *);
void	policy_mem_nodes(const struct policy *, memmask_t, struct cpuset *);
memmask_t policy_mem_pool(const struct policy *, const struct pool *,
	    const struct request *);
int	policy_mem_score(const struct policy *, const struct pool *,
	    const char *, const struct request *, const struct cspec *,
	    memmask_t *);
int	policy_mem_take(struct policy *, struct grant *, const struct cpuset *,
	    int, char **);
void	policy_mem_drop(struct policy *, const char *);
int	policy_mem_zone(const struct policy *, const char *, struct cpuset *);
long long policy_mem_size(const struct policy *, const char *);
int	policy_mem_widen(struct policy *, const char *, unsigned, char **);

/* coldstart.c */
int	coldstart_parse(const char *, long long *, char **);
int	coldstart_parse_duration(const char *, long long *, char **);
void	coldstart_apply(const struct policy *, struct grant *);
void	coldstart_inherit(const struct policy *, struct grant *,
	    const struct grant *);
void	policy_claim_mems(const struct policy *, const struct grant *,
	    struct cpuset *);
int	policy_changes(const struct policy *, const struct policy_effects *,
	    struct policy_change **);
struct grant *grant_dup(const struct grant *);

/* supply.c */
void	supply_init_all(struct policy *);
void	supply_clear_all(struct policy *);
int	supply_allocatable_shared(const struct policy *, const struct pool *);
int	supply_allocatable_reserved(const struct policy *, const struct pool *);
void	supply_sliceable(const struct policy *, const struct pool *,
	    struct cpuset *);
int	supply_reserve(struct policy *, struct grant *, char **);
int	supply_allocate(struct policy *, struct pool *, const struct request *,
	    struct grant *, char **);
void	supply_release(struct policy *, struct grant *);
void	supply_shared_cpus(const struct policy *, const struct pool *,
	    struct cpuset *);
unsigned long supply_path_gen(const struct policy *, const struct pool *);
void	supply_stamp(struct policy *, int);
const struct mem_offer *policy_mem_offer(const struct policy *,
	    const struct pool *, unsigned types);
/* The types a container's memory is pinned and exported by. */
unsigned policy_mem_types(const struct policy *, const struct grant *);
void	supply_allocatable_every(const struct policy *, int *shared,
	    int *reserved);

/* request.c */
int	request_from_spec(const struct policy *, const struct cspec *,
	    struct request *, char **);
long long request_mem_from_oom(int, long long);
const char *request_annotation(const struct cspec *, const char *);
int	request_isolation(const struct policy *, const struct cspec *, int *,
	    int *);
int	cspec_copy(struct cspec *, const struct container_spec *);
void	cspec_fold_labels(struct cspec *);
/* The field of c that kubelet label k copies (expr_kube_field), or NULL. */
const char *cspec_kube_field(const struct cspec *, int k);
void	cspec_take_meta(struct cspec *, struct cspec *);
struct policy_kv *cspec_labels(const struct cspec *, int *);
int	cspec_same_meta(const struct cspec *, const struct container_spec *);
void	cspec_dup(struct cspec *, const struct cspec *);
/* What src holds goes to dst (dst's own is not freed); src is left
 * empty. */
void	cspec_move(struct cspec *dst, struct cspec *src);
void	cspec_clear(struct cspec *);
int	cspec_check(const struct container_spec *, char **);
int	request_check_id(const char *, const char *, char **);
size_t	cspec_cost(const struct cspec *);
void	cspec_trim(struct cspec *, int all);

/* policy.c */
struct grant *grant_new(const char *, enum grant_kind);
void	grant_free(struct grant *);
/* g was placed as the explanation says (taken over; the old one let go). */
void	grant_explained(struct grant *, struct explain *);
void	grant_free_all(struct strmap *);
const char *policy_pick_pool(struct policy *, const struct container_spec *,
	    const double *, char **);
int	policy_allocate_container(struct policy *, struct grant *,
	    const char *, const struct affinity_set *, struct policy_effects *,
	    char **);
void	policy_pin(const struct policy *, const struct grant *,
	    struct pinning *);
void	policy_refresh(struct policy *, const char *, int,
	    struct policy_effects *);
void	policy_warn(struct policy_effects *, const char *, ...)
	    __attribute__((__format__(__printf__, 2, 3)));
struct grant **policy_sorted(const struct strmap *, size_t *);
int	policy_build(const struct topology *, const struct config *,
	    struct policy **, char **);
void	policy_swap(struct policy *, struct policy *);
int	policy_pin_to_claims(struct policy *, struct grant *,
	    const struct grant *, struct policy_effects *);
void	grant_fallback(struct policy *, struct grant *);
int	policy_repin(struct policy *, struct grant *, struct policy_effects *,
	    char **);
int	holds_cpus(const struct grant *);
int	policy_carry_container(struct policy *, const struct grant *,
	    const struct cpuset *, struct policy_effects *, char **);
void	policy_carry_or_fall_back(struct policy *, const struct grant *,
	    const struct cpuset *, struct policy_effects *);
int	policy_carry_claims(struct policy *, const struct policy *, char **);

/* affinity_eval.c */
struct expr_subject;
void	cspec_subject(const struct cspec *, struct expr_subject *);
int	affinity_of(const struct cspec *, struct affinity_set *, char **);
void	affinity_weigh(const struct policy *, const struct cspec *,
	    const struct affinity_set *, double *);

/* claim.c */
int	claim_reinstate(struct policy *, const char *, const struct cpuset *,
	    char **);
void	claim_set_meta(struct grant *, const struct claim_meta *);
void	claim_copy_meta(struct grant *, const struct grant *);
int	claim_has_consumer(const struct grant *, const char *);
void	claim_wait(struct policy *, struct grant *, const char *);
void	claim_unwait(struct policy *, const struct grant *);


/* pinning helpers */
void	pinning_init(struct pinning *);
void	pinning_clear(struct pinning *);
void	pinning_copy(struct pinning *, const struct pinning *);
int	pinning_equal(const struct pinning *, const struct pinning *);

#endif
