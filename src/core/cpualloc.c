/*
 * cpualloc.c owns the CPU allocator: the order of the Go cpuallocator
 * (anchor brief §3) over the topology model. Idle packages, idle clusters
 * (hybrid machines only), cache groups, idle cores, then single threads.
 *
 * As upstream, what can be derived once per topology is kept in a struct
 * cpualloc: the core of every CPU, the threads of every core as a short
 * list, and the cache groups (on first use). Priorities, core kinds and
 * clusters are read from the topology at each pick, so its override hooks
 * take effect at once. A pick works on word arrays on the stack and the
 * context's scratch: past the first pick it allocates only for clusters
 * (hybrid machines) and for its result. Upstream's sorts of all cores and
 * threads become passes in id order per priority key, which stop as soon
 * as the count is met.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpualloc.h"
#include "xmalloc.h"

#define WORD_BITS	64
#define NWORDS		(CPUSET_SETSIZE / WORD_BITS)

/* A fixed-size bitmap over every possible CPU id, for scratch sets. */
struct bits {
	uint64_t	 w[NWORDS];
};

struct prio_count {
	int		 n[CPU_PRIO_COUNT];
};

struct cache_group {
	int		 id;
	int		 pkg, pkgi, die, diei, node;
	int		 first;
	struct cpuset	 cpus;		/* online CPUs */
	int		 size;
	int		 nfree;
};

struct cluster_ent {
	const struct topo_cluster *cl;
	int		 pkg, pkgi, die, diei;
	int		 nfree;
};

/*
 * nw words reach the last online CPU, ncpu ids fill them. The threads of
 * core c are core_cpu[core_off[c]] up to core_cpu[core_off[c + 1] - 1];
 * die_off[p] is the first of package p's dies in a dense numbering.
 */
struct cpualloc {
	const struct topology	*t;
	int			 nw;
	int			 ncpu;
	int			*cpu_core;	/* by CPU id, -1 none */
	int			 ncores;
	int			 core_min;	/* threads per core */
	int			 core_max;
	int			*core_off;
	int			*core_cpu;
	int			 npkg;
	int			*die_off;
	int			 ndies;

	unsigned		 steps;		/* of the last pick */

	int			 groups_done;
	int			 ngroups;
	struct cache_group	*groups;

	/* Scratch of the pick under way. */
	uint64_t		*seen;		/* cores */
	int			*pk_order, *pk_tmp, *pk_colo;
	uint64_t		*pk_key;
	struct prio_count	*pk_pc;
	int			*g_idx;		/* 4 per group */
	int			*g_counts;	/* 2 * (packages + dies) */
	struct cluster_ent	*cl;		/* sized at each pick */
	int			*cl_idx;
	int			 cl_cap;
	int			*cl_counts;	/* packages + dies */
};

struct helper {
	struct cpualloc		*a;
	const struct topology	*t;
	const struct cpuset	*prio[CPU_PRIO_COUNT];
	enum cpu_prio		 prefer;
	unsigned		 flags;
	int			 cnt;
	int			 nw;
	struct bits		*from;
	struct bits		*result;
};

static void	allocate(struct helper *);

/* Without -mpopcnt the builtin is a library call per word. */
static inline int
pop(uint64_t x)
{
	if (x == 0)
		return (0);
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return ((int)((x * 0x0101010101010101ULL) >> 56));
}

static inline uint64_t
sw(const struct cpuset *s, int i)
{
	return ((uint32_t)i < s->nwords ? s->w[i] : 0);
}

static inline int
min_words(const struct cpuset *s, int nw)
{
	return ((uint32_t)nw < s->nwords ? nw : (int)s->nwords);
}

static inline int
bits_has(const uint64_t *w, int id)
{
	return ((w[id / WORD_BITS] >> (id % WORD_BITS)) & 1);
}

static inline void
bits_set(uint64_t *w, int id)
{
	w[id / WORD_BITS] |= 1ULL << (id % WORD_BITS);
}

static int
bits_next(const struct bits *b, int nw, int prev)
{
	int		 i, start = prev + 1;
	uint64_t	 w;

	i = start / WORD_BITS;
	if (i >= nw)
		return (-1);
	w = b->w[i] & (~0ULL << (start % WORD_BITS));
	for (;;) {
		if (w != 0)
			return (i * WORD_BITS + __builtin_ctzll(w));
		if (++i >= nw)
			return (-1);
		w = b->w[i];
	}
}

#define BITS_FOREACH(id, b, nw) \
	for ((id) = bits_next((b), (nw), -1); (id) >= 0; \
	    (id) = bits_next((b), (nw), (id)))

/* |s ∩ p ∩ b|; p and b may be NULL for "everything". */
static int
count3(const struct cpuset *s, const struct cpuset *p, const struct bits *b,
    int nw)
{
	int		 i, n = 0, m = min_words(s, nw);
	uint64_t	 w;

	for (i = 0; i < m; i++) {
		w = s->w[i];
		if (p != NULL)
			w &= sw(p, i);
		if (b != NULL)
			w &= b->w[i];
		n += pop(w);
	}
	return (n);
}

/* Is s (∩ p when p is not NULL) inside b? */
static int
inside(const struct cpuset *s, const struct cpuset *p, const struct bits *b,
    int nw)
{
	int		 i, m = min_words(s, nw);
	uint64_t	 w;

	for (i = 0; i < m; i++) {
		w = p ? s->w[i] & sw(p, i) : s->w[i];
		if (w & ~b->w[i])
			return (0);
	}
	return (1);
}

/* Moves the free CPUs of s (∩ p) into the result. */
static void
take_set(struct helper *h, const struct cpuset *s, const struct cpuset *p)
{
	int		 i, m = min_words(s, h->nw);
	uint64_t	 w;

	for (i = 0; i < m; i++) {
		w = (p ? s->w[i] & sw(p, i) : s->w[i]) & h->from->w[i];
		h->result->w[i] |= w;
		h->from->w[i] &= ~w;
		h->cnt -= pop(w);
	}
}

static void
take_bits(struct helper *h, const struct bits *b)
{
	int		 i;
	uint64_t	 w;

	for (i = 0; i < h->nw; i++) {
		w = b->w[i] & h->from->w[i];
		h->result->w[i] |= w;
		h->from->w[i] &= ~w;
		h->cnt -= pop(w);
	}
}

static void
count_prios(const struct helper *h, const struct cpuset *s,
    const struct bits *b, struct prio_count *pc)
{
	int	 p;

	for (p = 0; p < CPU_PRIO_COUNT; p++)
		pc->n[p] = count3(s, h->prio[p], b, h->nw);
}

/*
 * cmpCPUSet of the Go allocator on per-priority counts: > 0 prefers a.
 * With cnt > 0 a set holding cnt CPUs of the wanted priority beats one
 * that does not, and of two such sets the tighter one wins.
 */
static int
prio_cmp(const struct prio_count *a, const struct prio_count *b,
    enum cpu_prio prefer, int cnt)
{
	int	 p, na, nb;

	if (prefer == CPU_PRIO_NONE)
		return (0);
	if (cnt > 0 && (prefer == CPU_PRIO_LOW || prefer == CPU_PRIO_HIGH)) {
		na = a->n[prefer];
		nb = b->n[prefer];
		if (prefer == CPU_PRIO_HIGH && na == 0 && nb == 0) {
			na = a->n[CPU_PRIO_NORMAL];
			nb = b->n[CPU_PRIO_NORMAL];
		}
		if (na >= cnt && nb >= cnt)
			return (nb - na);
		if (na >= cnt || nb >= cnt)
			return (na - nb);
	}
	for (p = prefer; p < CPU_PRIO_COUNT; p++) {
		na = a->n[p];
		nb = b->n[p];
		if (cnt > 0 && p == (int)prefer && na >= cnt && nb >= cnt)
			return (nb - na);
		if (na != nb)
			return (na - nb);
	}
	for (p = 0; p < (int)prefer; p++)
		if (a->n[p] != b->n[p])
			return (b->n[p] - a->n[p]);
	return (0);
}

/*
 * Without a count prio_cmp is a lexicographic order on the counts, so it
 * folds into one integer: smaller is preferred.
 */
static uint64_t
prio_key(const struct prio_count *pc, enum cpu_prio prefer)
{
	uint64_t	 k = 0, n;
	int		 p;

	if (prefer == CPU_PRIO_NONE)
		return (0);
	for (p = prefer; p < CPU_PRIO_COUNT; p++) {
		n = pc->n[p] > 0xffff ? 0xffff : (uint64_t)pc->n[p];
		k = (k << 16) | (0xffff - n);
	}
	for (p = 0; p < (int)prefer; p++) {
		n = pc->n[p] > 0xffff ? 0xffff : (uint64_t)pc->n[p];
		k = (k << 16) | n;
	}
	return (k);
}

/* prio_cmp of two single CPUs as a rank: the wanted priority first, then
 * lower ones, then CPUs of no priority, then higher ones. */
static int
cpu_rank(const struct helper *h, int id)
{
	int	 p, prefer = h->prefer;

	if (prefer == CPU_PRIO_NONE)
		return (0);
	for (p = prefer; p < CPU_PRIO_COUNT; p++)
		if (cpuset_has(h->prio[p], id))
			return (p - prefer);
	for (p = prefer - 1; p >= 0; p--)
		if (cpuset_has(h->prio[p], id))
			return (CPU_PRIO_COUNT - p);
	return (CPU_PRIO_COUNT - prefer);
}

/* A stable merge sort of indexes; cmp < 0 puts a first. */
typedef int (*sort_cmp)(void *, int, int);

static void
msort(int *v, int *tmp, int n, sort_cmp cmp, void *ctx)
{
	int	 i, j, k, mid;

	if (n < 2)
		return;
	mid = n / 2;
	msort(v, tmp, mid, cmp, ctx);
	msort(v + mid, tmp, n - mid, cmp, ctx);
	for (i = 0, j = mid, k = 0; i < mid || j < n; k++) {
		if (j >= n || (i < mid && cmp(ctx, v[i], v[j]) <= 0))
			tmp[k] = v[i++];
		else
			tmp[k] = v[j++];
	}
	memcpy(v, tmp, n * sizeof *v);
}

static int
die_pos(const struct topo_package *pkg, int die)
{
	int	 i;

	for (i = 0; i < pkg->ndies; i++)
		if (pkg->dies[i].id == die)
			return (i);
	return (0);
}

/* Threads of core c free in the helper's from; *size gets all of them. */
static int
core_free(const struct helper *h, int c, int *size)
{
	const struct cpualloc	*a = h->a;
	int			 i, n = 0;

	*size = a->core_off[c + 1] - a->core_off[c];
	for (i = a->core_off[c]; i < a->core_off[c + 1]; i++)
		n += bits_has(h->from->w, a->core_cpu[i]);
	return (n);
}

static void
core_prios(const struct helper *h, int c, struct prio_count *pc)
{
	const struct cpualloc	*a = h->a;
	int			 i, p;

	memset(pc, 0, sizeof *pc);
	for (i = a->core_off[c]; i < a->core_off[c + 1]; i++)
		for (p = 0; p < CPU_PRIO_COUNT; p++)
			pc->n[p] += cpuset_has(h->prio[p], a->core_cpu[i]);
}

static void
take_core(struct helper *h, int c)
{
	const struct cpualloc	*a = h->a;
	int			 i, id;

	for (i = a->core_off[c]; i < a->core_off[c + 1]; i++) {
		id = a->core_cpu[i];
		bits_set(h->result->w, id);
		h->from->w[id / WORD_BITS] &= ~(1ULL << (id % WORD_BITS));
		h->cnt--;
	}
}

/*
 * Idle packages: all online CPUs of the wanted priority are free. Taken
 * whole while the count allows, best priority mix first.
 */
struct pkg_sort {
	const struct topology	*t;
	uint64_t		*key;
	int			*colo;
	struct prio_count	*pc;
	enum cpu_prio		 prefer;
	int			 cnt;
};

static int
pkg_id(const struct topology *t, int i)
{
	return (topology_package(t, i)->id);
}

static int
idle_pkg_cmp(void *arg, int a, int b)
{
	struct pkg_sort	*ps = arg;

	if (ps->key[a] != ps->key[b])
		return (ps->key[a] < ps->key[b] ? -1 : 1);
	return (pkg_id(ps->t, a) - pkg_id(ps->t, b));
}

static void
take_idle_packages(struct helper *h)
{
	struct cpualloc			*a = h->a;
	const struct topo_package	*pkg;
	const struct cpuset		*want = NULL;
	struct pkg_sort			 ps;
	struct prio_count		 pc;
	int				 i, n, size;

	if (h->prefer != CPU_PRIO_NONE)
		want = h->prio[h->prefer];
	for (i = n = 0; i < a->npkg; i++) {
		pkg = topology_package(h->t, i);
		if (!inside(&pkg->cpus, want, h->from, h->nw))
			continue;
		a->pk_key[i] = 0;
		if (want != NULL) {
			count_prios(h, &pkg->cpus, NULL, &pc);
			a->pk_key[i] = prio_key(&pc, h->prefer);
		}
		a->pk_order[n++] = i;
	}
	ps.t = h->t;
	ps.key = a->pk_key;
	msort(a->pk_order, a->pk_tmp, n, idle_pkg_cmp, &ps);

	for (i = 0; i < n; i++) {
		pkg = topology_package(h->t, a->pk_order[i]);
		size = count3(&pkg->cpus, want, NULL, h->nw);
		if (h->cnt >= size) {
			take_set(h, &pkg->cpus, want);
			if (h->cnt == 0)
				break;
		}
	}
}

/*
 * Idle clusters on hybrid machines: E-clusters only for low priority
 * requests, P-clusters only for the others; the tightest cluster, die or
 * package that alone fits comes first.
 */
struct cluster_sort {
	struct cluster_ent	*c;
	int			*pkgcnt, *diecnt;
	int			 cnt;
};

static int
cluster_ids(const struct cluster_ent *a, const struct cluster_ent *b)
{
	if (a->pkg != b->pkg)
		return (a->pkg - b->pkg);
	if (a->die != b->die)
		return (a->die - b->die);
	return (a->cl->id - b->cl->id);
}

/* One rule of preferTightestFit; 0 when it does not decide. */
static int
fit_cmp(int na, int nb, int cnt, const struct cluster_ent *a,
    const struct cluster_ent *b, int *r)
{
	if (na >= cnt && nb < cnt)
		*r = -1;
	else if (na < cnt && nb >= cnt)
		*r = 1;
	else if (na >= cnt && nb >= cnt)
		*r = na != nb ? na - nb : cluster_ids(a, b);
	else
		return (0);
	return (1);
}

static int
cluster_cmp(void *arg, int ia, int ib)
{
	struct cluster_sort	*cs = arg;
	struct cluster_ent	*a = &cs->c[ia], *b = &cs->c[ib];
	int			 r;

	if (fit_cmp(a->nfree, b->nfree, cs->cnt, a, b, &r))
		return (r);
	if (fit_cmp(cs->diecnt[a->diei], cs->diecnt[b->diei], cs->cnt, a, b,
	    &r))
		return (r);
	if (fit_cmp(cs->pkgcnt[a->pkgi], cs->pkgcnt[b->pkgi], cs->cnt, a, b,
	    &r))
		return (r);
	return (0);
}

static int
kind_wanted(const struct helper *h, enum core_kind kind)
{
	if (h->prefer != CPU_PRIO_LOW && kind == CORE_KIND_EFFICIENT)
		return (0);
	if (h->prefer == CPU_PRIO_LOW && kind == CORE_KIND_PERF)
		return (0);
	return (1);
}

static int
package_clusters(const struct topo_package *pkg)
{
	int	 j, n = 0;

	for (j = 0; j < pkg->ndies; j++)
		n += pkg->dies[j].nclusters;
	return (n);
}

static void
take_idle_clusters(struct helper *h)
{
	struct cpualloc			*a = h->a;
	const struct topo_package	*pkg;
	const struct topo_die		*die;
	struct cluster_ent		*e;
	struct cluster_sort		 cs;
	int				*order, *pkgcnt, *diecnt;
	int				 i, j, k, n, picked, size;

	for (i = n = 0; i < a->npkg; i++) {
		if ((k = package_clusters(topology_package(h->t, i))) > 1)
			n += k;
	}
	if (n <= 1)
		return;
	if (n > a->cl_cap) {
		a->cl = xreallocarray(a->cl, n, sizeof *a->cl);
		a->cl_idx = xreallocarray(a->cl_idx, 2 * n,
		    sizeof *a->cl_idx);
		a->cl_cap = n;
	}
	order = a->cl_idx;
	pkgcnt = a->cl_counts;
	diecnt = pkgcnt + a->npkg;
	memset(pkgcnt, 0, (a->npkg + a->ndies) * sizeof *pkgcnt);

	for (i = n = picked = 0; i < a->npkg; i++) {
		pkg = topology_package(h->t, i);
		if (package_clusters(pkg) <= 1)
			continue;
		for (j = 0; j < pkg->ndies; j++) {
			die = &pkg->dies[j];
			for (k = 0; k < die->nclusters; k++) {
				e = &a->cl[n++];
				e->cl = &die->clusters[k];
				e->pkg = pkg->id;
				e->pkgi = i;
				e->die = die->id;
				e->diei = a->die_off[i] + j;
				if (!kind_wanted(h, e->cl->kind))
					continue;
				/* Only clusters with every CPU free. */
				size = count3(&e->cl->cpus, NULL, NULL, h->nw);
				e->nfree = count3(&e->cl->cpus, NULL, h->from,
				    h->nw);
				if (e->nfree == 0 || e->nfree != size)
					continue;
				pkgcnt[i] += e->nfree;
				diecnt[e->diei] += e->nfree;
				order[picked++] = n - 1;
			}
		}
	}
	if (picked == 0)
		return;

	cs.c = a->cl;
	cs.pkgcnt = pkgcnt;
	cs.diecnt = diecnt;
	cs.cnt = h->cnt;
	msort(order, order + n, picked, cluster_cmp, &cs);

	/* One cluster fits exactly, or the best one is already too big. */
	e = &a->cl[order[0]];
	if (e->nfree == h->cnt) {
		take_set(h, &e->cl->cpus, NULL);
		return;
	}
	if (e->nfree > h->cnt)
		return;
	/* Upstream notes here that no package fits but carries on anyway. */
	for (i = 0; i < picked; i++) {
		e = &a->cl[order[i]];
		if (h->cnt < e->nfree)
			break;
		take_set(h, &e->cl->cpus, NULL);
		if (h->cnt == 0)
			break;
	}
}

/*
 * Cache groups. Upstream walks n from a CPU's cache count - 1 down to 1
 * and asks for its caches of *level* n; we keep that, so CPUs that list
 * only an L2 and an L3 never group by L3 (pitfall 21).
 */
#define MAX_CPU_CACHES	32

/* The caches of one CPU at one level, as one set (set, or a cache's). */
static const struct cpuset *
level_set(const struct topology *t, const struct topo_cpu *cpu, int first,
    int n, struct cpuset *set)
{
	int	 i;

	if (n == 1)
		return (&topology_cache(t, cpu->caches[first])->cpus);
	cpuset_zero(set);
	for (i = first; i < first + n; i++)
		cpuset_or(set, &topology_cache(t, cpu->caches[i])->cpus);
	return (set);
}

static int
union_count(const struct cpuset *a, const struct cpuset *b)
{
	uint32_t	 i, n = a->nwords;
	int		 c = 0;

	if (b != NULL && b->nwords > n)
		n = b->nwords;
	for (i = 0; i < n; i++)
		c += pop(sw(a, i) | (b ? sw(b, i) : 0));
	return (c);
}

/* a ∪ b == s, without early exits so that the common part vectorizes. */
static int
union_equal(const struct cpuset *a, const struct cpuset *b,
    const struct cpuset *s)
{
	uint32_t	 i, n, m;
	uint64_t	 diff = 0;

	m = a->nwords < s->nwords ? a->nwords : s->nwords;
	if (b != NULL && b->nwords < m)
		m = b->nwords;
	if (b == NULL) {
		for (i = 0; i < m; i++)
			diff |= a->w[i] ^ s->w[i];
	} else {
		for (i = 0; i < m; i++)
			diff |= (a->w[i] | b->w[i]) ^ s->w[i];
	}
	n = a->nwords > s->nwords ? a->nwords : s->nwords;
	if (b != NULL && b->nwords > n)
		n = b->nwords;
	for (i = m; i < n; i++)
		diff |= (sw(a, i) | (b ? sw(b, i) : 0)) ^ sw(s, i);
	return (diff == 0);
}

/* Does a CPU's cache set a (∪ b) make groups: not a core, die, package? */
static int
groups_by(const struct topology *t, const struct topo_cpu *cpu,
    const struct cpuset *a, const struct cpuset *b)
{
	const struct topo_package	*pkg;
	const struct topo_core		*core;

	/* Any order of the tests; the likeliest first. */
	core = topology_core(t, cpu->core);
	if (core != NULL && union_equal(a, b, &core->threads))
		return (0);
	if ((pkg = topology_package_by_id(t, cpu->package)) == NULL)
		return (0);
	if (union_equal(a, b, &pkg->cpus))
		return (0);
	if (union_equal(a, b, &pkg->dies[die_pos(pkg, cpu->die)].cpus))
		return (0);
	return (union_count(a, b) > 1);
}

/*
 * The grouping level. A cache set that makes no group for one of its
 * CPUs makes none for the others (they share its core, die and package),
 * so each single cache, or pair of caches at one level, is judged once.
 */
static int
cache_level(const struct topology *t)
{
	const struct cpuset	*s1, *s2;
	const struct topo_cpu	*cpu;
	struct cpuset		 tmp = CPUSET_INITIALIZER;
	int			*judged, lv[MAX_CPU_CACHES];
	int			 id, i, j, nc, c1, c2, level = -1;

	if (topology_ncaches(t) == 0)
		return (-1);
	/* judged[c]: 0 not yet, -1 alone, k + 1 paired with cache k. */
	judged = xcalloc(topology_ncaches(t), sizeof *judged);
	CPUSET_FOREACH(id, topology_online(t)) {
		cpu = topology_cpu(t, id);
		if (cpu == NULL || (nc = cpu->ncaches) < 2)
			continue;
		if (nc > MAX_CPU_CACHES)
			nc = MAX_CPU_CACHES;
		for (i = 0; i < nc; i++)
			lv[i] = topology_cache(t, cpu->caches[i])->level;
		/* Caches come by level: runs of one level, highest first. */
		for (j = nc; j > 0; j = i) {
			for (i = j - 1; i > 0 && lv[i - 1] == lv[j - 1]; i--)
				;
			if (lv[i] >= cpu->ncaches || lv[i] < 1)
				continue;
			c1 = cpu->caches[i];
			c2 = j - i == 2 ? cpu->caches[i + 1] : -1;
			s1 = &topology_cache(t, c1)->cpus;
			s2 = c2 >= 0 ? &topology_cache(t, c2)->cpus : NULL;
			if (j - i > 2) {
				s1 = level_set(t, cpu, i, j - i, &tmp);
				s2 = NULL;
			}
			if (!cpuset_has(s1, id) && (s2 == NULL ||
			    !cpuset_has(s2, id))) {
				/* Not in its own cache: judge it alone. */
				if (groups_by(t, cpu, s1, s2)) {
					level = lv[i];
					goto out;
				}
				continue;
			}
			if ((j - i == 1 && judged[c1] == -1) ||
			    (j - i == 2 && judged[c1] == c2 + 1))
				continue;
			if (groups_by(t, cpu, s1, s2)) {
				level = lv[i];
				goto out;
			}
			if (j - i == 1)
				judged[c1] = -1;
			else if (j - i == 2)
				judged[c1] = c2 + 1;
		}
	}
out:
	free(judged);
	cpuset_clear(&tmp);
	return (level);
}

static int
group_order(const struct cache_group *a, const struct cache_group *b,
    int bydie)
{
	if (a->pkg != b->pkg)
		return (a->pkg - b->pkg);
	if (bydie && a->die != b->die)
		return (a->die - b->die);
	if (a->node != b->node)
		return (a->node - b->node);
	return (a->first - b->first);
}

static int
group_order_die(void *arg, int a, int b)
{
	struct cache_group	*g = arg;

	return (group_order(&g[a], &g[b], 1));
}

static int
group_order_nodie(void *arg, int a, int b)
{
	struct cache_group	*g = arg;

	return (group_order(&g[a], &g[b], 0));
}

static void
groups_free(struct cache_group *g, int n)
{
	int	 i;

	for (i = 0; i < n; i++)
		cpuset_clear(&g[i].cpus);
	free(g);
}

/* Groups of one package at the level; a package with one group has none. */
static int
package_groups(struct cpualloc *a, int pi, int level, struct cache_group **gp,
    int n, int *cap)
{
	const struct topology		*t = a->t;
	const struct topo_package	*pkg = topology_package(t, pi);
	const struct topo_cpu		*cpu;
	const struct topo_core		*core;
	const struct cpuset		*set;
	struct cache_group		*g;
	struct cpuset			 tmp = CPUSET_INITIALIZER;
	struct cpuset			 s = CPUSET_INITIALIZER;
	struct cpuset			 assigned = CPUSET_INITIALIZER;
	int				 id, i, k, start = n, diei;

	CPUSET_FOREACH(id, &pkg->cpus) {
		if (cpuset_has(&assigned, id))
			continue;
		cpu = topology_cpu(t, id);
		for (i = 0; i < cpu->ncaches; i++)
			if (topology_cache(t, cpu->caches[i])->level == level)
				break;
		for (k = i; k < cpu->ncaches; k++)
			if (topology_cache(t, cpu->caches[k])->level != level)
				break;
		if (k == i)
			continue;
		set = level_set(t, cpu, i, k - i, &tmp);
		cpuset_copy(&s, set);
		cpuset_and(&s, topology_online(t));
		if (cpuset_count(&s) <= 1)
			continue;
		core = topology_core(t, cpu->core);
		diei = die_pos(pkg, cpu->die);
		if ((core != NULL && cpuset_equal(&s, &core->threads)) ||
		    cpuset_equal(&s, &pkg->dies[diei].cpus) ||
		    cpuset_equal(&s, &pkg->cpus))
			continue;
		if (n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*gp = xreallocarray(*gp, *cap, sizeof **gp);
		}
		g = &(*gp)[n++];
		memset(g, 0, sizeof *g);
		cpuset_init(&g->cpus);
		cpuset_copy(&g->cpus, &s);
		g->pkg = pkg->id;
		g->pkgi = pi;
		g->die = cpu->die;
		g->diei = a->die_off[pi] + diei;
		g->node = cpu->node;
		g->first = cpuset_first(&s);
		g->size = cpuset_count(&s);
		cpuset_or(&assigned, &s);
	}
	if (n - start == 1) {
		cpuset_clear(&(*gp)[start].cpus);
		n = start;
	}
	cpuset_clear(&tmp);
	cpuset_clear(&s);
	cpuset_clear(&assigned);
	return (n);
}

/* Builds the machine's cache groups, as upstream does at start. */
static void
cache_groups(struct cpualloc *a)
{
	const struct topo_cpu	*cpu;
	struct cache_group	*g = NULL;
	int			*order, i, id, n = 0, cap = 0, level;
	int			 bydie = 1, ok = 1;

	a->groups_done = 1;
	if ((level = cache_level(a->t)) < 0)
		return;
	for (i = 0; i < a->npkg; i++)
		n = package_groups(a, i, level, &g, n, &cap);
	if (n == 0) {
		free(g);
		return;
	}

	order = xreallocarray(NULL, 2 * n, sizeof *order);
	for (i = 0; i < n; i++)
		order[i] = i;
	msort(order, order + n, n, group_order_die, g);
	/* A group across packages or nodes disables grouping, one across
	 * dies only drops dies from the order. */
	for (i = 0; i < n && ok; i++) {
		CPUSET_FOREACH(id, &g[order[i]].cpus) {
			cpu = topology_cpu(a->t, id);
			if (cpu->package != g[order[i]].pkg) {
				ok = 0;
				break;
			}
			if (cpu->die != g[order[i]].die) {
				bydie = 0;
				break;
			}
			if (cpu->node != g[order[i]].node) {
				ok = 0;
				break;
			}
		}
	}
	if (ok && !bydie) {
		for (i = 0; i < n; i++)
			order[i] = i;
		msort(order, order + n, n, group_order_nodie, g);
	}
	if (!ok) {
		free(order);
		groups_free(g, n);
		return;
	}
	a->groups = xreallocarray(NULL, n, sizeof *a->groups);
	for (i = 0; i < n; i++) {
		a->groups[i] = g[order[i]];
		a->groups[i].id = i;
	}
	a->ngroups = n;
	a->g_idx = xreallocarray(NULL, 4 * n, sizeof *a->g_idx);
	a->g_counts = xcalloc(2 * (a->npkg + a->ndies), sizeof *a->g_counts);
	free(order);
	free(g);
}

struct group_sort {
	struct cache_group	*g;
	int			*prefer_pkg, *prefer_die;
	int			*usable_pkg, *usable_die;
	int			 full, part;
	const struct cache_group *idle;
};

static int
idle_group_ids(const struct cache_group *a, const struct cache_group *b)
{
	if (a->pkg != b->pkg)
		return (a->pkg - b->pkg);
	if (a->die != b->die)
		return (a->die - b->die);
	return (a->id - b->id);
}

/* One level (die or package) of upstream's idle group order. */
static int
idle_fit(int fa, int fb, int pa, int pb, int full, int part,
    const struct cache_group *a, const struct cache_group *b, int *r)
{
	*r = 0;
	if (fa >= full && fb < full && pa >= part)
		*r = -1;
	else if (fa < full && fb >= full && pb >= part)
		*r = 1;
	else if (fa >= full && fb >= full) {
		if (pa >= part && pb < part)
			*r = -1;
		else if (pa < part && pb >= part)
			*r = 1;
		else if (pa >= part && pb >= part) {
			if (fa != fb)
				*r = fa - fb;
			else if (pa != pb)
				*r = pa - pb;
			else
				*r = idle_group_ids(a, b);
		}
	}
	return (*r != 0);
}

static int
idle_group_cmp(void *arg, int ia, int ib)
{
	struct group_sort	*s = arg;
	struct cache_group	*a = &s->g[ia], *b = &s->g[ib];
	int			 r;

	if (idle_fit(s->prefer_die[a->diei], s->prefer_die[b->diei],
	    s->usable_die[a->diei], s->usable_die[b->diei], s->full, s->part,
	    a, b, &r))
		return (r);
	if (idle_fit(s->prefer_pkg[a->pkgi], s->prefer_pkg[b->pkgi],
	    s->usable_pkg[a->pkgi], s->usable_pkg[b->pkgi], s->full, s->part,
	    a, b, &r))
		return (r);
	return (a->id - b->id);
}

/*
 * Partly used groups: next to the best idle group when idle groups are
 * taken too (upstream means this but compares ids with CPU counts), else
 * in the tightest die that fits the whole count, bigger groups first.
 */
static int
usable_group_cmp(void *arg, int ia, int ib)
{
	struct group_sort		*s = arg;
	struct cache_group		*a = &s->g[ia], *b = &s->g[ib];
	const struct cache_group	*idle = s->idle;
	int				 dpa, dpb, total;

	if (s->full > 0 && idle != NULL) {
		if (a->pkg == idle->pkg && b->pkg != idle->pkg)
			return (-1);
		if (a->pkg != idle->pkg && b->pkg == idle->pkg)
			return (1);
		if (a->pkg == idle->pkg && b->pkg == idle->pkg) {
			if (a->die == idle->die && b->die != idle->die)
				return (-1);
			if (a->die != idle->die && b->die == idle->die)
				return (1);
			if (a->die == idle->die && b->die == idle->die) {
				if (a->nfree != b->nfree)
					return (b->nfree - a->nfree);
				return (a->id - b->id);
			}
		}
		return (0);
	}

	total = s->full + s->part;
	dpa = s->usable_die[a->diei];
	dpb = s->usable_die[b->diei];
	if (dpa >= total && dpb < total)
		return (-1);
	if (dpa < total && dpb >= total)
		return (1);
	if (dpa >= total && dpb >= total) {
		if (dpa != dpb)
			return (dpa - dpb);
		if (a->nfree != b->nfree)
			return (b->nfree - a->nfree);
		return (idle_group_ids(a, b));
	}
	return (0);
}

/* Takes cnt CPUs of one group with only the idle-core and thread steps. */
static int
split_group(const struct helper *h, const struct cache_group *g, int cnt,
    struct bits *took)
{
	struct helper	 sub;
	struct bits	 from, result;
	int		 i;

	sub = *h;
	sub.flags = CPUALLOC_IDLE_CORES;
	sub.cnt = cnt;
	sub.from = &from;
	sub.result = &result;
	for (i = 0; i < h->nw; i++) {
		from.w[i] = sw(&g->cpus, i) & h->from->w[i] & ~took->w[i];
		result.w[i] = 0;
	}
	allocate(&sub);
	if (sub.cnt != 0)
		return (0);
	for (i = 0; i < h->nw; i++)
		took->w[i] |= result.w[i];
	return (cnt);
}

static int
took_group(const struct helper *h, const struct cache_group *g,
    struct bits *took)
{
	int		 i, n = 0, m = min_words(&g->cpus, h->nw);
	uint64_t	 w;

	for (i = 0; i < m; i++) {
		w = g->cpus.w[i] & h->from->w[i];
		took->w[i] |= w;
		n += pop(w);
	}
	return (n);
}

static void
take_cache_groups(struct helper *h)
{
	struct cpualloc		*a = h->a;
	struct cache_group	*g, *e;
	struct group_sort	 s;
	struct bits		 took;
	const struct topo_cpu	*cpu;
	int			*prefer, *usable, *tmp, *totals;
	int			 n, i, np = 0, nu = 0, chosen, cnt, ng;
	int			 prefer_cpus = 0, usable_cpus = 0;

	if (h->cnt < 2)
		return;
	if (!a->groups_done)
		cache_groups(a);
	if ((n = a->ngroups) <= 1)
		return;
	g = a->groups;
	prefer = a->g_idx;
	usable = prefer + n;
	tmp = usable + n;
	totals = tmp + n;
	memset(a->g_counts, 0, 2 * (a->npkg + a->ndies) *
	    sizeof *a->g_counts);
	s.g = g;
	s.prefer_pkg = a->g_counts;
	s.prefer_die = s.prefer_pkg + a->npkg;
	s.usable_pkg = s.prefer_die + a->ndies;
	s.usable_die = s.usable_pkg + a->npkg;
	s.part = h->cnt % g[0].size;
	s.full = h->cnt - s.part;
	s.idle = NULL;

	for (i = 0; i < n; i++) {
		e = &g[i];
		/* Kinds are read now: topology_set_kind() may change them. */
		cpu = topology_cpu(h->t, e->first);
		if (topology_hybrid(h->t) && !kind_wanted(h, cpu->kind))
			continue;
		if ((e->nfree = count3(&e->cpus, NULL, h->from, h->nw)) == 0)
			continue;
		if (e->nfree == e->size) {
			s.prefer_pkg[e->pkgi] += e->nfree;
			s.prefer_die[e->diei] += e->nfree;
			prefer[np++] = i;
		} else {
			s.usable_pkg[e->pkgi] += e->nfree;
			s.usable_die[e->diei] += e->nfree;
			usable[nu++] = i;
		}
	}
	msort(prefer, tmp, np, idle_group_cmp, &s);
	if (np > 0)
		s.idle = &g[prefer[0]];
	msort(usable, tmp, nu, usable_group_cmp, &s);

	if (np > 0) {
		chosen = g[prefer[0]].pkg;
		prefer_cpus = s.prefer_pkg[g[prefer[0]].pkgi];
		usable_cpus = s.usable_pkg[g[prefer[0]].pkgi];
	} else if (nu > 0) {
		chosen = g[usable[0]].pkg;
		usable_cpus = s.usable_pkg[g[usable[0]].pkgi];
	} else
		return;
	if (prefer_cpus + usable_cpus < h->cnt)
		return;

	/* Whole idle groups, the last one split by cores and threads. */
	memset(took.w, 0, h->nw * sizeof took.w[0]);
	cnt = h->cnt;
	for (i = 0; i < np && cnt > 0; i++) {
		e = &g[prefer[i]];
		if (cnt >= e->nfree)
			cnt -= took_group(h, e, &took);
		else
			cnt -= split_group(h, e, cnt, &took);
	}
	if (cnt <= 0)
		goto commit;

	/* Then partly used groups of the chosen package. */
	for (i = ng = 0; i < nu; i++) {
		if (g[usable[i]].pkg != chosen)
			break;
		totals[ng] = (ng ? totals[ng - 1] : 0) + g[usable[i]].nfree;
		ng++;
	}
	for (i = 0; i < ng; i++) {
		e = &g[usable[i]];
		if (e->nfree == cnt) {
			cnt -= took_group(h, e, &took);
			goto commit;
		}
	}
	/* Upstream's "same-size groups" branch cannot trigger: left out. */
	for (i = 0; i < ng; i++)
		if (cnt <= totals[i])
			break;
	if (i == ng)
		return;
	ng = i + 1;
	for (i = 0; i < ng; i++) {
		e = &g[usable[i]];
		if (cnt < e->nfree)
			break;
		cnt -= took_group(h, e, &took);
	}
	if (cnt > 0)
		cnt -= split_group(h, &g[usable[ng - 1]], cnt, &took);
	if (cnt != 0)
		return;
commit:
	take_bits(h, &took);
}

/*
 * Idle cores: every online thread free. Upstream sorts them by priority
 * mix, then lowest thread; a pass over the free CPUs in id order meets
 * each core at its lowest free thread, and with a preference one pass per
 * distinct key keeps the order.
 */
static int
idle_cores_pass(struct helper *h, int keyed, uint64_t key, uint64_t *next)
{
	struct cpualloc		*a = h->a;
	struct prio_count	 pc;
	uint64_t		 k;
	int			 id, c, size;

	memset(a->seen, 0, ((a->ncores + WORD_BITS - 1) / WORD_BITS) *
	    sizeof *a->seen);
	BITS_FOREACH(id, h->from, h->nw) {
		if ((c = a->cpu_core[id]) < 0 || bits_has(a->seen, c))
			continue;
		bits_set(a->seen, c);
		/* A busy lower thread shows here as a missing one. */
		if (core_free(h, c, &size) != size)
			continue;
		if (keyed) {
			core_prios(h, c, &pc);
			k = prio_key(&pc, h->prefer);
			if (k != key) {
				if (k > key && k < *next)
					*next = k;
				continue;
			}
		}
		if (h->cnt >= size) {
			take_core(h, c);
			if (h->cnt < a->core_min)
				return (1);
		}
	}
	return (0);
}

/* The priority all free online CPUs share, or CPU_PRIO_NONE. */
static enum cpu_prio
uniform_prio(const struct helper *h, const struct cpuset *within)
{
	const struct cpuset	*online = topology_online(h->t);
	int			 i, p, m;
	uint64_t		 w;

	for (p = 0; p < CPU_PRIO_COUNT; p++) {
		m = min_words(online, h->nw);
		for (i = 0; i < m; i++) {
			w = h->from->w[i] & online->w[i] & ~sw(h->prio[p], i);
			if (within != NULL)
				w &= sw(within, i);
			if (w != 0)
				break;
		}
		if (i == m)
			return (p);
	}
	return (CPU_PRIO_NONE);
}

static void
take_idle_cores(struct helper *h)
{
	uint64_t	 key, next;

	if (h->cnt < h->a->core_min)
		return;
	/* Keys differ only by priority mix, or by size within one. */
	if (h->prefer == CPU_PRIO_NONE || (h->a->core_min == h->a->core_max &&
	    uniform_prio(h, NULL) != CPU_PRIO_NONE)) {
		idle_cores_pass(h, 0, 0, &next);
		return;
	}
	/* Keys are never 0: the first pass only finds the smallest. */
	key = 0;
	next = UINT64_MAX;
	idle_cores_pass(h, 1, key, &next);
	while (h->cnt > 0 && next != UINT64_MAX) {
		key = next;
		next = UINT64_MAX;
		idle_cores_pass(h, 1, key, &next);
	}
}

/*
 * Single threads. Upstream sorts every free CPU by (a) CPUs of its
 * package already taken, (b) the package's priority fit, (c) package id,
 * (d) the CPU's priority, (e) free CPUs of the package, (f) free CPUs of
 * its core, (g) id. (a)-(c) order whole packages and (e) never breaks a
 * tie within one, so packages are sorted and each is then drained by
 * buckets of (d, f) in id order, all keys taken before the first pick.
 */
#define RANKS	(CPU_PRIO_COUNT + 2)
#define FMAX	63

static int
thread_pkg_cmp(void *arg, int a, int b)
{
	struct pkg_sort	*ps = arg;
	int		 r;

	if (ps->colo[a] != ps->colo[b])
		return (ps->colo[b] - ps->colo[a]);
	if ((r = prio_cmp(&ps->pc[a], &ps->pc[b], ps->prefer, ps->cnt)) != 0)
		return (-r);
	return (pkg_id(ps->t, a) - pkg_id(ps->t, b));
}

static int
thread_bucket(const struct helper *h, int id)
{
	int	 f, size;

	f = core_free(h, h->a->cpu_core[id], &size);
	if (f > FMAX)
		f = FMAX;
	return (cpu_rank(h, id) * (FMAX + 1) + f);
}

/*
 * With one rank and one core size the order is: threads of partly busy
 * cores by fewest free, then the rest by id. The partly busy cores are
 * found from the busy CPUs, so an idle package costs a few words.
 */
static void
take_package_threads_fast(struct helper *h, const struct topo_package *pkg,
    int m)
{
	struct cpualloc	*a = h->a;
	struct bits	 half;
	uint64_t	 w;
	int		 i, k, b, c, id, f, size, nbusy = 0, nfree = 0;

	for (i = 0; i < m; i++) {
		nbusy += pop(pkg->cpus.w[i] & ~h->from->w[i]);
		nfree += pop(pkg->cpus.w[i] & h->from->w[i]);
		half.w[i] = 0;
	}
	/* From a few free CPUs of a busy package, look at them instead. */
	if (nfree < nbusy) {
		for (i = 0; i < m; i++) {
			w = pkg->cpus.w[i] & h->from->w[i];
			for (; w != 0; w &= w - 1) {
				id = i * WORD_BITS + __builtin_ctzll(w);
				if (core_free(h, a->cpu_core[id], &size) < size)
					bits_set(half.w, id);
			}
		}
		goto pick;
	}
	memset(a->seen, 0, ((a->ncores + WORD_BITS - 1) / WORD_BITS) *
	    sizeof *a->seen);
	for (i = 0; i < m; i++) {
		for (w = pkg->cpus.w[i] & ~h->from->w[i]; w != 0; w &= w - 1) {
			b = i * WORD_BITS + __builtin_ctzll(w);
			if ((c = a->cpu_core[b]) < 0 || bits_has(a->seen, c))
				continue;
			bits_set(a->seen, c);
			for (k = a->core_off[c]; k < a->core_off[c + 1]; k++)
				if (bits_has(h->from->w, a->core_cpu[k]))
					bits_set(half.w, a->core_cpu[k]);
		}
	}
pick:
	/* Picks go to the result only: from must not change mid-way. */
	for (f = 1; f < a->core_min && h->cnt > 0; f++) {
		BITS_FOREACH(id, &half, m) {
			if (core_free(h, a->cpu_core[id], &size) != f)
				continue;
			bits_set(h->result->w, id);
			if (--h->cnt == 0)
				break;
		}
	}
	for (i = 0; i < m && h->cnt > 0; i++) {
		w = pkg->cpus.w[i] & h->from->w[i] & ~half.w[i];
		for (; w != 0 && h->cnt > 0; w &= w - 1) {
			id = i * WORD_BITS + __builtin_ctzll(w);
			bits_set(h->result->w, id);
			h->cnt--;
		}
	}
	for (i = 0; i < m; i++)
		h->from->w[i] &= ~h->result->w[i];
}

static void
take_package_threads(struct helper *h, const struct topo_package *pkg)
{
	int		 hist[RANKS * (FMAX + 1)];
	struct bits	 mine;
	int		 i, m, id, b, last, need, partial;

	m = min_words(&pkg->cpus, h->nw);
	if (h->a->core_min == h->a->core_max && (h->prefer == CPU_PRIO_NONE ||
	    uniform_prio(h, &pkg->cpus) != CPU_PRIO_NONE)) {
		take_package_threads_fast(h, pkg, m);
		return;
	}
	for (i = 0; i < m; i++)
		mine.w[i] = pkg->cpus.w[i] & h->from->w[i];
	memset(hist, 0, sizeof hist);
	BITS_FOREACH(id, &mine, m)
		hist[thread_bucket(h, id)]++;
	/* Whole buckets below last, then the lowest ids of bucket last. */
	need = h->cnt;
	for (last = 0; last < RANKS * (FMAX + 1); last++) {
		if (hist[last] >= need)
			break;
		need -= hist[last];
	}
	/* Picks go to the result first: from must not change mid-pass. */
	partial = 0;
	BITS_FOREACH(id, &mine, m) {
		b = thread_bucket(h, id);
		if (b < last || (b == last && partial++ < need)) {
			bits_set(h->result->w, id);
			h->cnt--;
		}
	}
	for (i = 0; i < m; i++)
		h->from->w[i] &= ~h->result->w[i];
}

static void
take_idle_threads(struct helper *h)
{
	struct cpualloc			*a = h->a;
	const struct topo_package	*pkg;
	struct pkg_sort			 ps;
	int				 i, n;

	for (i = n = 0; i < a->npkg; i++) {
		pkg = topology_package(h->t, i);
		if (count3(&pkg->cpus, NULL, h->from, h->nw) == 0)
			continue;
		a->pk_colo[i] = count3(&pkg->cpus, NULL, h->result, h->nw);
		if (h->prefer != CPU_PRIO_NONE)
			count_prios(h, &pkg->cpus, h->from, &a->pk_pc[i]);
		a->pk_order[n++] = i;
	}
	ps.t = h->t;
	ps.colo = a->pk_colo;
	ps.pc = a->pk_pc;
	ps.prefer = h->prefer;
	ps.cnt = h->cnt;
	msort(a->pk_order, a->pk_tmp, n, thread_pkg_cmp, &ps);

	for (i = 0; i < n && h->cnt > 0; i++)
		take_package_threads(h, topology_package(h->t, a->pk_order[i]));
}

/* Runs step when CPUs are still wanted; notes it when it took some. */
static void
step(struct helper *h, unsigned bit, void (*fn)(struct helper *))
{
	int	before = h->cnt;

	if (before <= 0)
		return;
	fn(h);
	if (h->cnt < before)
		h->a->steps |= bit;
}

static void
allocate(struct helper *h)
{
	h->a->steps = 0;
	if (h->flags & CPUALLOC_IDLE_PACKAGES)
		step(h, CPUALLOC_IDLE_PACKAGES, take_idle_packages);
	if (topology_hybrid(h->t) && (h->flags & CPUALLOC_IDLE_CLUSTERS))
		step(h, CPUALLOC_IDLE_CLUSTERS, take_idle_clusters);
	if (h->flags & CPUALLOC_CACHE_GROUPS)
		step(h, CPUALLOC_CACHE_GROUPS, take_cache_groups);
	if (h->flags & CPUALLOC_IDLE_CORES)
		step(h, CPUALLOC_IDLE_CORES, take_idle_cores);
	step(h, CPUALLOC_IDLE_THREADS, take_idle_threads);
}

unsigned
cpualloc_last_steps(const struct cpualloc *a)
{
	return (a->steps);
}

const char *
cpualloc_step_name(unsigned bit)
{
	switch (bit) {
	case CPUALLOC_IDLE_PACKAGES:
		return ("idle packages");
	case CPUALLOC_IDLE_CLUSTERS:
		return ("idle clusters");
	case CPUALLOC_CACHE_GROUPS:
		return ("cache groups");
	case CPUALLOC_IDLE_CORES:
		return ("idle cores");
	case CPUALLOC_IDLE_THREADS:
		return ("single threads");
	case CPUALLOC_WHOLE_SET:
		return ("the whole set");
	}
	return ("?");
}

struct cpualloc *
cpualloc_new(const struct topology *t)
{
	struct cpualloc			*a;
	const struct topo_cpu		*cpu;
	const struct topo_package	*pkg;
	int				*fill, id, i, last, n;

	a = xcalloc(1, sizeof *a);
	a->t = t;
	last = cpuset_last(topology_online(t));
	a->nw = last >= 0 ? last / WORD_BITS + 1 : 1;
	/* Every id a pick can see, online or not. */
	a->ncpu = a->nw * WORD_BITS;
	a->cpu_core = xreallocarray(NULL, a->ncpu + 1, sizeof *a->cpu_core);
	for (i = 0; i <= a->ncpu; i++)
		a->cpu_core[i] = -1;

	/* Threads of each core, in id order, from one pass over the CPUs. */
	a->ncores = topology_ncores(t);
	a->core_off = xcalloc(a->ncores + 2, sizeof *a->core_off);
	CPUSET_FOREACH(id, topology_online(t)) {
		cpu = topology_cpu(t, id);
		if (cpu == NULL || cpu->core < 0 || cpu->core >= a->ncores)
			continue;
		a->cpu_core[id] = cpu->core;
		a->core_off[cpu->core + 1]++;
	}
	a->core_min = a->ncores > 0 ? INT32_MAX : 1;
	for (i = 0; i < a->ncores; i++) {
		n = a->core_off[i + 1];
		if (n < a->core_min)
			a->core_min = n;
		if (n > a->core_max)
			a->core_max = n;
		a->core_off[i + 1] += a->core_off[i];
	}
	n = a->core_off[a->ncores];
	a->core_cpu = xreallocarray(NULL, n + 1, sizeof *a->core_cpu);
	fill = xreallocarray(NULL, a->ncores + 1, sizeof *fill);
	memcpy(fill, a->core_off, a->ncores * sizeof *fill);
	for (id = 0; id < a->ncpu; id++)
		if (a->cpu_core[id] >= 0)
			a->core_cpu[fill[a->cpu_core[id]]++] = id;
	free(fill);

	a->npkg = topology_npackages(t);
	n = a->npkg + 1;
	a->die_off = xcalloc(n, sizeof *a->die_off);
	for (i = 0; i < a->npkg; i++) {
		pkg = topology_package(t, i);
		a->die_off[i] = a->ndies;
		a->ndies += pkg->ndies;
	}

	a->seen = xcalloc(a->ncores / WORD_BITS + 1, sizeof *a->seen);
	a->pk_order = xcalloc(n, sizeof *a->pk_order);
	a->pk_tmp = xcalloc(n, sizeof *a->pk_tmp);
	a->pk_colo = xcalloc(n, sizeof *a->pk_colo);
	a->pk_key = xcalloc(n, sizeof *a->pk_key);
	a->pk_pc = xcalloc(n, sizeof *a->pk_pc);
	a->cl_counts = xcalloc(a->npkg + a->ndies + 1, sizeof *a->cl_counts);
	return (a);
}

void
cpualloc_free(struct cpualloc *a)
{
	if (a == NULL)
		return;
	free(a->cpu_core);
	free(a->core_off);
	free(a->core_cpu);
	free(a->die_off);
	if (a->groups != NULL)
		groups_free(a->groups, a->ngroups);
	free(a->seen);
	free(a->pk_order);
	free(a->pk_tmp);
	free(a->pk_colo);
	free(a->pk_key);
	free(a->pk_pc);
	free(a->g_idx);
	free(a->g_counts);
	free(a->cl);
	free(a->cl_idx);
	free(a->cl_counts);
	free(a);
}

/* The checks that need no topology; 1 when they settled the call. */
static int
take_trivial(struct cpuset *from, int cnt, enum cpu_prio prefer,
    struct cpuset *result, char **cause, int *rc)
{
	char	*s;
	int	 have;

	*rc = 0;
	if (cnt < 0 || (unsigned)prefer > CPU_PRIO_NONE) {
		if (cause != NULL)
			xasprintf(cause, "cannot allocate %d CPUs at priority "
			    "%d", cnt, (int)prefer);
		*rc = -EINVAL;
		return (1);
	}
	have = cpuset_count(from);
	if (have < cnt) {
		if (cause != NULL) {
			s = cpuset_format(from);
			xasprintf(cause, "cpuset \"%s\" does not have %d CPUs",
			    s, cnt);
			free(s);
		}
		*rc = -ENOSPC;
		return (1);
	}
	/* Exactly all of from needs no topology, as upstream. */
	if (have == cnt) {
		cpuset_copy(result, from);
		cpuset_zero(from);
		return (1);
	}
	if (cnt == 0) {
		cpuset_zero(result);
		return (1);
	}
	return (0);
}

int
cpualloc_pick(struct cpualloc *a, struct cpuset *from, int cnt,
    enum cpu_prio prefer, unsigned flags, struct cpuset *result,
    char **cause)
{
	struct helper	 h;
	struct bits	 fromb, resb;
	char		*s;
	int		 i, id, rc;

	if (take_trivial(from, cnt, prefer, result, cause, &rc)) {
		if (rc == 0)
			a->steps = CPUALLOC_WHOLE_SET;
		return (rc);
	}

	memset(&h, 0, sizeof h);
	h.a = a;
	h.t = a->t;
	for (i = 0; i < CPU_PRIO_COUNT; i++)
		h.prio[i] = topology_prio_cpus(a->t, i);
	h.prefer = prefer;
	h.flags = flags;
	h.cnt = cnt;
	h.nw = a->nw;
	h.from = &fromb;
	h.result = &resb;
	/* CPUs past the last online one can never be picked. */
	for (i = 0; i < h.nw; i++) {
		fromb.w[i] = sw(from, i);
		resb.w[i] = 0;
	}

	allocate(&h);
	if (h.cnt != 0) {
		if (cause != NULL) {
			s = cpuset_format(from);
			xasprintf(cause, "cannot pick %d CPUs of \"%s\" (%d "
			    "short)", cnt, s, h.cnt);
			free(s);
		}
		return (-ENOSPC);
	}
	cpuset_zero(result);
	BITS_FOREACH(id, &resb, h.nw)
		cpuset_add(result, id);
	cpuset_andnot(from, result);
	return (0);
}

int
cpualloc_take(const struct topology *t, struct cpuset *from, int cnt,
    enum cpu_prio prefer, unsigned flags, struct cpuset *result,
    char **cause)
{
	struct cpualloc	*a;
	int		 rc;

	if (take_trivial(from, cnt, prefer, result, cause, &rc))
		return (rc);
	a = cpualloc_new(t);
	rc = cpualloc_pick(a, from, cnt, prefer, flags, result, cause);
	cpualloc_free(a);
	return (rc);
}
