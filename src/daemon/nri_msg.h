/*
 * What nri.c needs to turn NRI messages (proto/nri.proto, protobuf-c)
 * into the policy's container descriptions, and pinnings back into
 * adjustments and updates. No I/O and no policy calls here.
 */
#ifndef TOPOAWARE_NRI_MSG_H
#define TOPOAWARE_NRI_MSG_H

#include <stddef.h>

#include "nri.pb-c.h"
#include "pbpick.h"
#include "policy.h"

/* The generated names are long; NRI(Container) is the message type. */
#define NRI(x)	Nri__Pkg__Api__V1alpha1__##x

/*
 * A container as the policy sees it. spec points into the messages it was
 * made from (they must outlive it) and into arrays owned here.
 */
struct nri_spec_arrays {
	struct policy_kv	*ann;
	struct policy_kv	*env;
	int			 nenv;
	struct policy_kv	*labels;	/* the container's */
	struct policy_kv	*pod_labels;
};
struct nri_spec {
	struct container_spec	 spec;
	struct nri_spec_arrays	 own;
};

/*
 * The fields of a SynchronizeRequest that the daemon reads: those
 * nri_spec_init, nri_msg_qos, nri_msg_cpu, nri_msg_mem_limit and
 * nri_msg_differs read of its pods and containers, and what nri.c reads
 * (the containers' ids, pods and states, the more flag). A field read of
 * a synchronized container must be here: the rest are never unpacked.
 */
extern const struct pbpick_field	nri_sync_picks[];
extern const size_t			nri_sync_npicks;
/* Whether nri_spec_init makes the same spec of each container of a as
 * of b's, each with the pod its pod_sandbox_id names (the tests hold
 * pbpick to protobuf-c by it). */
int	nri_sync_specs_same(const NRI(SynchronizeRequest) *a,
	    const NRI(SynchronizeRequest) *b);

/* pod may be NULL (the container is then described by itself). */
void		nri_spec_init(struct nri_spec *, const NRI(PodSandbox) *,
		    const NRI(Container) *);
void		nri_spec_clear(struct nri_spec *);
/* The arrays alone, for a caller that keeps many specs in an array of
 * container_spec (a Synchronize) and their arrays beside them. */
void		nri_spec_arrays_clear(struct nri_spec_arrays *);

/*
 * The pod's QoS class as the kubelet chose it, read from the cgroup parent
 * (or else the cgroups path) of the pod or the container; when none of
 * them says, it is guessed from the CPU request and limit in res.
 */
enum qos_class	nri_msg_qos(const NRI(PodSandbox) *, const NRI(Container) *,
		    const NRI(LinuxResources) *res);
/* The CPU request and limit (milli, -1 unset) the kubelet expressed as
 * shares and quota/period. */
void		nri_msg_cpu(const NRI(LinuxResources) *, enum qos_class,
		    long long *request, long long *limit);
/* The container's own resources, or NULL. */
const NRI(LinuxResources) *nri_msg_resources(const NRI(Container) *);
/* The CPU request and limit an UpdateContainer asks for: its new
 * resources, or else the container's own, read as nri_msg_cpu does. */
void		nri_msg_update_cpu(const NRI(UpdateContainerRequest) *,
		    long long *request, long long *limit);
/* The memory limit in bytes: 0 none, -1 when the resources say nothing. */
long long	nri_msg_mem_limit(const NRI(LinuxResources) *);
/* The memory limit an update gives, -1 when it gives none. */
long long	nri_msg_update_mem(const NRI(UpdateContainerRequest) *);

/* Whether the runtime's view of a container differs from a pinning. */
int		nri_msg_differs(const NRI(Container) *, const struct pinning *);

/* A list of ContainerUpdate messages built from pinnings. */
struct nriupd_cpu;
struct nri_settext;
struct nri_updates {
	size_t			  n;
	size_t			  cap;
	struct nriupd_cpu	 *u;
	/* Every set's text, shared by the updates that send it: moved
	 * shared containers of a few pools, interleaved by id, send the
	 * same few sets, so each is formatted once (a table by content). */
	struct nri_settext	 *sets;
	size_t			  nsets;
	size_t			  capsets;
};

void		nri_updates_init(struct nri_updates *);
/* Room for n updates in all, made at once. */
void		nri_updates_reserve(struct nri_updates *, size_t);
/* Adds one update; a pinning that sets nothing is skipped. The list
 * keeps its sets' texts, but its id is the pinning's: the pinnings must
 * stay as they are while the list is used (the policy's own, between two
 * events). */
void		nri_updates_add(struct nri_updates *, const struct pinning *);
void		nri_updates_clear(struct nri_updates *);
/* Update i's container id. */
const char	*nri_updates_id(const struct nri_updates *, size_t);
/* Update i as a field of a message: its bytes (nriupd_size), and writing
 * them at p as field (1 to 15; nriupd_put), which returns the end. */
size_t		 nri_updates_size(const struct nri_updates *, size_t);
uint8_t		*nri_updates_put(const struct nri_updates *, size_t,
		    int field, uint8_t *p);
/* Update i as a protobuf-c message in v's storage, valid while v and the
 * list are. */
struct nri_upd_view {
	NRI(ContainerUpdate)		 u;
	NRI(LinuxContainerUpdate)	 lu;
	NRI(LinuxResources)		 res;
	NRI(LinuxCPU)			 cpu;
	NRI(OptionalUInt64)		 shares;
};
const NRI(ContainerUpdate) *nri_updates_view(const struct nri_updates *,
		    size_t, struct nri_upd_view *);

/* A ContainerAdjustment setting what a pinning says. */
struct nri_adjust {
	NRI(ContainerAdjustment)	 adj;
	NRI(LinuxContainerAdjustment)	 lin;
	NRI(LinuxResources)		 res;
	NRI(LinuxCPU)			 cpu;
	NRI(OptionalUInt64)		 shares;
	char				*cpus;
	char				*mems;
};

/* Returns 0 when the pinning sets nothing (no adjustment to send). */
int		nri_adjust_init(struct nri_adjust *, const struct pinning *);
void		nri_adjust_clear(struct nri_adjust *);

#endif
