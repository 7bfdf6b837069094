/*
 * nri_msg.c owns the conversions between NRI messages and the policy's
 * types: a pod and container become a container_spec (namespace, pod
 * name, QoS class, CPU request and limit, annotations, environment, the
 * pod's and the container's labels), and a pinning becomes the cpuset,
 * mems and shares fields of a ContainerAdjustment or ContainerUpdate. The
 * kubelet's arithmetic between CPUs and cgroup values is undone here the
 * way the Go policy does it.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "nri_msg.h"
#include "nriupd.h"
#include "xmalloc.h"

#define MIN_SHARES	2		/* what the kubelet gives BestEffort */
#define SHARES_PER_CPU	1024
/* Past this a value is nonsense; clamping it avoids overflow. */
#define MAX_MILLI	(1000LL * CPUSET_SETSIZE)

#define PICK(type, id)	{ &nri__pkg__api__v1alpha1__##type##__descriptor, id }

const struct pbpick_field nri_sync_picks[] = {
	PICK(synchronize_request, 1),		/* pods */
	PICK(synchronize_request, 2),		/* containers */
	PICK(synchronize_request, 3),		/* more */
	PICK(pod_sandbox, 1),			/* id */
	PICK(pod_sandbox, 2),			/* name */
	PICK(pod_sandbox, 3),			/* uid */
	PICK(pod_sandbox, 4),			/* namespace */
	PICK(pod_sandbox, 5),			/* labels */
	PICK(pod_sandbox, 6),			/* annotations */
	PICK(pod_sandbox, 8),			/* linux */
	PICK(pod_sandbox__labels_entry, 1),
	PICK(pod_sandbox__labels_entry, 2),
	PICK(pod_sandbox__annotations_entry, 1),
	PICK(pod_sandbox__annotations_entry, 2),
	PICK(linux_pod_sandbox, 3),		/* cgroup_parent */
	PICK(linux_pod_sandbox, 4),		/* cgroups_path */
	PICK(container, 1),			/* id */
	PICK(container, 2),			/* pod_sandbox_id */
	PICK(container, 3),			/* name */
	PICK(container, 4),			/* state */
	PICK(container, 5),			/* labels */
	PICK(container, 8),			/* env */
	PICK(container, 11),			/* linux */
	PICK(container__labels_entry, 1),
	PICK(container__labels_entry, 2),
	PICK(linux_container, 3),		/* resources */
	PICK(linux_container, 4),		/* oom_score_adj */
	PICK(linux_container, 5),		/* cgroups_path */
	PICK(linux_resources, 1),		/* memory */
	PICK(linux_resources, 2),		/* cpu */
	PICK(linux_memory, 1),			/* limit */
	PICK(linux_cpu, 1),			/* shares */
	PICK(linux_cpu, 2),			/* quota */
	PICK(linux_cpu, 3),			/* period */
	PICK(linux_cpu, 6),			/* cpus */
	PICK(linux_cpu, 7),			/* mems */
	PICK(optional_int64, 1),
	PICK(optional_uint64, 1),
	PICK(optional_int, 1),
};
const size_t nri_sync_npicks = sizeof nri_sync_picks / sizeof nri_sync_picks[0];

/* The pod of r named id, the last one listed (nri.c's bsearch may take
 * any of several: the two messages compared list the same pods). */
static const NRI(PodSandbox) *
sync_pod(const NRI(SynchronizeRequest) *r, const char *id)
{
	const NRI(PodSandbox)	*found = NULL;
	size_t			 i;

	for (i = 0; i < r->n_pods; i++)
		if (r->pods[i] != NULL && strcmp(r->pods[i]->id, id) == 0)
			found = r->pods[i];
	return (found);
}

int
nri_sync_specs_same(const NRI(SynchronizeRequest) *a,
    const NRI(SynchronizeRequest) *b)
{
	struct nri_spec	sa, sb;
	size_t		i;
	int		same = a->n_containers == b->n_containers;

	for (i = 0; same && i < a->n_containers; i++) {
		nri_spec_init(&sa, sync_pod(a, a->containers[i]->pod_sandbox_id),
		    a->containers[i]);
		nri_spec_init(&sb, sync_pod(b, b->containers[i]->pod_sandbox_id),
		    b->containers[i]);
		same = container_spec_same(&sa.spec, &sb.spec);
		nri_spec_clear(&sa);
		nri_spec_clear(&sb);
	}
	return (same);
}

static const char *
nonempty(const char *s)
{
	return (s != NULL && *s != '\0' ? s : NULL);
}

/*
 * The entries of a protobuf map as key-value pairs pointing into them,
 * in out (allocated, NULL when the map is empty) and their count in nout;
 * an entry without a key is left out. A macro: protobuf-c gives each map
 * an entry type of its own, all with the same key and value.
 */
#define MAP_KV(out, nout, entries, n) do {				\
	size_t	i_;							\
	int	k_ = 0;							\
									\
	(out) = (n) > 0 ? xcalloc((n), sizeof *(out)) : NULL;		\
	for (i_ = 0; i_ < (n); i_++) {					\
		if ((entries)[i_] == NULL || (entries)[i_]->key == NULL) \
			continue;					\
		(out)[k_].key = (entries)[i_]->key;			\
		(out)[k_].value = (entries)[i_]->value;			\
		k_++;							\
	}								\
	(nout) = k_;							\
} while (0)

void
nri_spec_init(struct nri_spec *ns, const NRI(PodSandbox) *pod,
    const NRI(Container) *c)
{
	struct container_spec	*s = &ns->spec;
	const char		*eq;
	size_t			 i;
	int			 k;

	memset(ns, 0, sizeof *ns);
	s->id = c->id;
	s->name = nonempty(c->name);
	s->pod = nonempty(c->pod_sandbox_id);
	if (pod != NULL) {
		if (s->pod == NULL)
			s->pod = nonempty(pod->id);
		s->namespace = nonempty(pod->namespace_);
		/* The runtime's word for the pod's identity: what a claim's
		 * consumers are checked against. */
		if (s->pod != NULL && pod->id != NULL &&
		    strcmp(s->pod, pod->id) == 0)
			s->pod_uid = nonempty(pod->uid);
		/* What affinities match, as the Go policy takes them. */
		s->pod_name = nonempty(pod->name);
		MAP_KV(ns->own.pod_labels, s->npod_labels, pod->labels,
		    pod->n_labels);
		s->pod_labels = ns->own.pod_labels;
	}
	MAP_KV(ns->own.labels, s->nlabels, c->labels, c->n_labels);
	s->labels = ns->own.labels;
	s->qos = nri_msg_qos(pod, c, nri_msg_resources(c));
	nri_msg_cpu(nri_msg_resources(c), s->qos, &s->cpu_request,
	    &s->cpu_limit);
	s->mem_limit = nri_msg_mem_limit(nri_msg_resources(c));
	if (s->mem_limit < 0)
		s->mem_limit = 0;
	/* What the kubelet's OOM score adjustment says of the memory
	 * request (the runtime is never told the request itself). */
	if (c->linux != NULL && c->linux->oom_score_adj != NULL &&
	    c->linux->oom_score_adj->value >= -1000 &&
	    c->linux->oom_score_adj->value <= 1000) {
		s->has_oom = 1;
		s->oom_adj = (int)c->linux->oom_score_adj->value;
	}

	/* The Go policy reads its annotations from the pod. */
	if (pod != NULL) {
		MAP_KV(ns->own.ann, s->nannotations, pod->annotations,
		    pod->n_annotations);
		s->annotations = ns->own.ann;
	}
	if (c->n_env > 0) {
		ns->own.env = xcalloc(c->n_env, sizeof *ns->own.env);
		for (i = 0, k = 0; i < c->n_env; i++) {
			if (c->env[i] == NULL || *c->env[i] == '\0')
				continue;
			if ((eq = strchr(c->env[i], '=')) == NULL) {
				ns->own.env[k].key = xstrdup(c->env[i]);
				ns->own.env[k].value = (char *)"";
			} else {
				ns->own.env[k].key = xstrndup(c->env[i],
				    (size_t)(eq - c->env[i]));
				ns->own.env[k].value = (char *)eq + 1;
			}
			k++;
		}
		ns->own.nenv = k;
		s->env = ns->own.env;
		s->nenv = k;
	}
}

void
nri_spec_arrays_clear(struct nri_spec_arrays *a)
{
	int	i;

	for (i = 0; i < a->nenv; i++)
		free(a->env[i].key);
	free(a->env);
	free(a->ann);
	free(a->labels);
	free(a->pod_labels);
	memset(a, 0, sizeof *a);
}

void
nri_spec_clear(struct nri_spec *ns)
{
	nri_spec_arrays_clear(&ns->own);
	memset(ns, 0, sizeof *ns);
}

const NRI(LinuxResources) *
nri_msg_resources(const NRI(Container) *c)
{
	if (c == NULL || c->linux == NULL)
		return (NULL);
	return (c->linux->resources);
}

void
nri_msg_update_cpu(const NRI(UpdateContainerRequest) *req,
    long long *request, long long *limit)
{
	const NRI(LinuxResources)	*res;

	res = req->linux_resources != NULL ? req->linux_resources :
	    nri_msg_resources(req->container);
	nri_msg_cpu(res, nri_msg_qos(req->pod, req->container, res), request,
	    limit);
}

/*
 * The memory limit in bytes: 0 for none (unset, or a value the kernel
 * reads as unlimited), -1 when the resources do not say.
 */
long long
nri_msg_mem_limit(const NRI(LinuxResources) *res)
{
	long long	v;

	if (res == NULL || res->memory == NULL || res->memory->limit == NULL)
		return (-1);
	v = (long long)res->memory->limit->value;
	return (v <= 0 || v > POLICY_MAX_MEMORY ? 0 : v);
}

long long
nri_msg_update_mem(const NRI(UpdateContainerRequest) *req)
{
	if (req->linux_resources != NULL)
		return (nri_msg_mem_limit(req->linux_resources));
	return (-1);
}

/* The kubelet names the QoS class in the pod's cgroup. */
static int
qos_of_cgroup(const char *path, int any, enum qos_class *q)
{
	if (path == NULL || *path == '\0')
		return (0);
	if (strstr(path, "besteffort") != NULL)
		*q = QOS_BESTEFFORT;
	else if (strstr(path, "burstable") != NULL)
		*q = QOS_BURSTABLE;
	else if (any || strstr(path, "kubepods") != NULL)
		*q = QOS_GUARANTEED;
	else
		return (0);
	return (1);
}

enum qos_class
nri_msg_qos(const NRI(PodSandbox) *pod, const NRI(Container) *c,
    const NRI(LinuxResources) *res)
{
	enum qos_class	q;
	long long	req, lim;

	/* The cgroup parent is the kubelet's own word (as in the Go
	 * policy); a cgroups path only counts when it is a kubepods one. */
	if (pod != NULL && pod->linux != NULL) {
		if (qos_of_cgroup(pod->linux->cgroup_parent, 1, &q) ||
		    qos_of_cgroup(pod->linux->cgroups_path, 0, &q))
			return (q);
	}
	if (c != NULL && c->linux != NULL &&
	    qos_of_cgroup(c->linux->cgroups_path, 0, &q))
		return (q);

	nri_msg_cpu(res, QOS_BURSTABLE, &req, &lim);
	if (req <= 0 && lim <= 0)
		return (QOS_BESTEFFORT);
	if (lim > 0 && lim == req)
		return (QOS_GUARANTEED);
	return (QOS_BURSTABLE);
}

void
nri_msg_cpu(const NRI(LinuxResources) *res, enum qos_class qos,
    long long *request, long long *limit)
{
	const NRI(LinuxCPU)	*cpu;
	unsigned long long	 shares, period;
	long long		 quota;

	*request = *limit = -1;
	if (res == NULL || (cpu = res->cpu) == NULL)
		return;
	if (cpu->shares != NULL) {
		shares = cpu->shares->value;
		if (shares > (unsigned long long)MAX_MILLI)
			shares = (unsigned long long)MAX_MILLI;
		if (shares <= MIN_SHARES)
			*request = 0;
		else
			*request = ((long long)shares * 1000 +
			    SHARES_PER_CPU / 2) / SHARES_PER_CPU;
	}
	if (qos == QOS_GUARANTEED) {
		*limit = *request;
		return;
	}
	if (cpu->quota != NULL && cpu->period != NULL &&
	    cpu->quota->value > 0 && cpu->period->value > 0) {
		quota = cpu->quota->value;
		period = cpu->period->value;
		if (period > (unsigned long long)MAX_MILLI * 1000)
			period = (unsigned long long)MAX_MILLI * 1000;
		if (quota / (long long)period >= MAX_MILLI / 1000)
			*limit = MAX_MILLI;
		else
			*limit = (quota * 1000 + (long long)period / 2) /
			    (long long)period;
		if (*limit > MAX_MILLI)
			*limit = MAX_MILLI;
	}
}

static int
set_differs(const char *have, const struct cpuset *want)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	char		*cause = NULL;
	int		 differs;

	if (have == NULL || *have == '\0')
		return (1);
	if (cpuset_parse(&s, have, &cause) != 0) {
		free(cause);
		cpuset_clear(&s);
		return (1);
	}
	differs = !cpuset_equal(&s, want);
	cpuset_clear(&s);
	return (differs);
}

int
nri_msg_differs(const NRI(Container) *c, const struct pinning *p)
{
	const NRI(LinuxResources)	*res = nri_msg_resources(c);
	const NRI(LinuxCPU)		*cpu = res != NULL ? res->cpu : NULL;

	if (p->pin_cpus &&
	    set_differs(cpu != NULL ? cpu->cpus : NULL, &p->cpus))
		return (1);
	if (p->pin_mems &&
	    set_differs(cpu != NULL ? cpu->mems : NULL, &p->mems))
		return (1);
	return (0);
}

/* One set the list formatted, in its table (open addressing). */
struct nri_settext {
	uint64_t	 hash;
	struct cpuset	 set;
	char		*text;		/* NULL: a free slot */
	size_t		 len;
};

static struct nri_settext *
set_slot(struct nri_settext *v, size_t cap, uint64_t h,
    const struct cpuset *s)
{
	size_t	i;

	for (i = h & (cap - 1); v[i].text != NULL; i = (i + 1) & (cap - 1))
		if (v[i].hash == h && cpuset_equal(&v[i].set, s))
			break;
	return (&v[i]);
}

/* Twice the room, the sets moved to their new slots. */
static void
sets_grow(struct nri_updates *us)
{
	struct nri_settext	*v, *e;
	size_t			 cap, i;

	cap = us->capsets ? 2 * us->capsets : 16;
	v = xcalloc(cap, sizeof *v);
	for (i = 0; i < us->capsets; i++)
		if (us->sets[i].text != NULL) {
			e = set_slot(v, cap, us->sets[i].hash,
			    &us->sets[i].set);
			*e = us->sets[i];
		}
	free(us->sets);
	us->sets = v;
	us->capsets = cap;
}

/*
 * A set as text, shared: each set is formatted once however many updates
 * of the list send it (the shared containers of a machine's pools, moved
 * together, send a few dozen sets of kilobytes each).
 */
static const char *
set_text(struct nri_updates *us, const struct cpuset *s, size_t *len)
{
	struct nri_settext	*e;
	uint64_t		 h;

	if (2 * (us->nsets + 1) > us->capsets)
		sets_grow(us);
	h = cpuset_hash(s);
	e = set_slot(us->sets, us->capsets, h, s);
	if (e->text == NULL) {
		e->hash = h;
		cpuset_init(&e->set);
		cpuset_copy(&e->set, s);
		e->text = cpuset_format(s);
		e->len = strlen(e->text);
		us->nsets++;
	}
	*len = e->len;
	return (e->text);
}

/*
 * What a pinning has the runtime set: its sets and its shares (0: none);
 * 0 when nothing. An empty set would mean "leave alone": never sent.
 */
static int
pin_parts(const struct pinning *p, const struct cpuset **cpus,
    const struct cpuset **mems, uint64_t *shares)
{
	*cpus = p->pin_cpus && !cpuset_empty(&p->cpus) ? &p->cpus : NULL;
	*mems = p->pin_mems && !cpuset_empty(&p->mems) ? &p->mems : NULL;
	*shares = p->shares > 0 ? (uint64_t)p->shares : 0;
	return (*cpus != NULL || *mems != NULL || *shares != 0);
}

/* The cpu part of LinuxResources: the sets' texts (NULL: not set) and
 * the shares (0: not set). */
static void
fill_res(NRI(LinuxResources) *res, NRI(LinuxCPU) *cpu,
    NRI(OptionalUInt64) *sh, const char *cpus, const char *mems,
    uint64_t shares)
{
	NRI(LinuxResources)	res0 =
	    NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__INIT;
	NRI(LinuxCPU)		cpu0 = NRI__PKG__API__V1ALPHA1__LINUX_CPU__INIT;
	NRI(OptionalUInt64)	sh0 =
	    NRI__PKG__API__V1ALPHA1__OPTIONAL_UINT64__INIT;

	*res = res0;
	*cpu = cpu0;
	*sh = sh0;
	/* protobuf-c wants mutable pointers; it only reads them. */
	cpu->cpus = (char *)cpus;
	cpu->mems = (char *)mems;
	if (shares > 0) {
		sh->value = shares;
		cpu->shares = sh;
	}
	res->cpu = cpu;
}

/*
 * The cpu part of LinuxResources that a pinning sets, its sets' text in
 * *cpus and *mems for the caller to free; 0 if nothing.
 */
static int
fill_cpu(const struct pinning *p, NRI(LinuxResources) *res,
    NRI(LinuxCPU) *cpu, NRI(OptionalUInt64) *shares, char **cpus,
    char **mems)
{
	const struct cpuset	*c, *m;
	uint64_t		 sh;

	*cpus = *mems = NULL;
	if (!pin_parts(p, &c, &m, &sh))
		return (0);
	if (c != NULL)
		*cpus = cpuset_format(c);
	if (m != NULL)
		*mems = cpuset_format(m);
	fill_res(res, cpu, shares, *cpus, *mems, sh);
	return (1);
}

/*
 * An update as the list keeps it is what the encoder writes
 * (struct nriupd_cpu): its id, the cpu message's shares and set texts, with
 * their lengths. A list of a thousand updates is 72 KB; the protobuf-c
 * message (five nested structs, some 400 bytes) is only made for a view.
 */

void
nri_updates_init(struct nri_updates *us)
{
	memset(us, 0, sizeof *us);
}

void
nri_updates_reserve(struct nri_updates *us, size_t n)
{
	if (n <= us->cap)
		return;
	us->cap = n;
	us->u = xreallocarray(us->u, us->cap, sizeof *us->u);
}

void
nri_updates_add(struct nri_updates *us, const struct pinning *p)
{
	const struct cpuset	*c, *mm;
	struct nriupd_cpu	*m;
	uint64_t		 sh;

	if (p->id == NULL || !pin_parts(p, &c, &mm, &sh))
		return;
	if (us->n == us->cap)
		nri_updates_reserve(us, us->cap ? 2 * us->cap : 16);
	m = &us->u[us->n++];
	memset(m, 0, sizeof *m);
	m->id = p->id;
	m->idlen = strlen(p->id);
	m->depth = NRIUPD_CPU;
	if (c != NULL)
		m->cpus = set_text(us, c, &m->cpuslen);
	if (mm != NULL)
		m->mems = set_text(us, mm, &m->memslen);
	m->has_shares = sh > 0;
	m->shares = sh;
}

const NRI(ContainerUpdate) *
nri_updates_view(const struct nri_updates *us, size_t i,
    struct nri_upd_view *v)
{
	NRI(ContainerUpdate)		u0 =
	    NRI__PKG__API__V1ALPHA1__CONTAINER_UPDATE__INIT;
	NRI(LinuxContainerUpdate)	lu0 =
	    NRI__PKG__API__V1ALPHA1__LINUX_CONTAINER_UPDATE__INIT;
	const struct nriupd_cpu		*m = &us->u[i];

	v->u = u0;
	v->lu = lu0;
	v->u.container_id = (char *)m->id;
	v->u.linux = &v->lu;
	v->lu.resources = &v->res;
	fill_res(&v->res, &v->cpu, &v->shares, m->cpus, m->mems, m->shares);
	return (&v->u);
}

const char *
nri_updates_id(const struct nri_updates *us, size_t i)
{
	return (us->u[i].id);
}

size_t
nri_updates_size(const struct nri_updates *us, size_t i)
{
	return (nriupd_cpu_size(&us->u[i]));
}

uint8_t *
nri_updates_put(const struct nri_updates *us, size_t i, int field,
    uint8_t *p)
{
	return (nriupd_cpu_put(&us->u[i], field, p));
}

void
nri_updates_clear(struct nri_updates *us)
{
	size_t	i;

	free(us->u);
	for (i = 0; i < us->capsets; i++)
		if (us->sets[i].text != NULL) {
			free(us->sets[i].text);
			cpuset_clear(&us->sets[i].set);
		}
	free(us->sets);
	memset(us, 0, sizeof *us);
}

int
nri_adjust_init(struct nri_adjust *a, const struct pinning *p)
{
	NRI(ContainerAdjustment)	adj0 =
	    NRI__PKG__API__V1ALPHA1__CONTAINER_ADJUSTMENT__INIT;
	NRI(LinuxContainerAdjustment)	lin0 =
	    NRI__PKG__API__V1ALPHA1__LINUX_CONTAINER_ADJUSTMENT__INIT;

	a->adj = adj0;
	a->lin = lin0;
	if (!fill_cpu(p, &a->res, &a->cpu, &a->shares, &a->cpus, &a->mems))
		return (0);
	a->adj.linux = &a->lin;
	a->lin.resources = &a->res;
	return (1);
}

void
nri_adjust_clear(struct nri_adjust *a)
{
	free(a->cpus);
	free(a->mems);
	a->cpus = a->mems = NULL;
}
