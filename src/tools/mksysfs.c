/*
 * mksysfs.c: topoaware-mksysfs, the synthetic machine generator (SPEC
 * R-TOPO-3). It turns a compact description of a machine (packages, dies,
 * nodes, cores, threads; isolated and offline CPUs; memory, memory-only
 * nodes, hybrid cores, cpufreq) into a sys/ tree laid out like the kernel's,
 * so that discovery and the policy can be tried on machines nobody has.
 *
 * The tree is built in a temporary folder inside DIR and renamed into
 * place, so a failed run never leaves half a machine behind.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "fnv.h"
#include "xmalloc.h"

#define PROGNAME	"topoaware-mksysfs"
#define EXIT_USAGE	2

#define KB		1024ULL
#define MAX_MEM		(1ULL << 50)		/* per node */
#define MAX_KHZ		100000000ULL		/* 100 GHz */

/* Cache geometry of the generated cores, after the recorded servers. */
#define L1D_KB		32
#define L1I_KB		32
#define L2_KB		1024
#define L3_KB_PER_CORE	1408
#define E_L1I_KB	64
#define E_L2_KB		2048
#define E_CLUSTER	4	/* E-cores sharing one L2, as on Alder Lake */

/* Nodes and distances, as the recorded machines show them. */
#define DIST_LOCAL	10
#define DIST_PACKAGE	11
#define DIST_REMOTE	21
#define DIST_MEMNODE	17
#define DIST_FAR	28

enum numbering {
	NUMBERING_OFFSET,
	NUMBERING_ADJACENT
};

struct spec {
	int		 packages;
	int		 dies;
	int		 nodes;
	int		 cores;
	int		 threads;
	int		 numbering;
	int		 sparse;
	char		*isolated_text;
	char		*offline_text;
	char		*ecpus_text;
	uint64_t	 mem;		/* bytes per CPU node */
	int		 memnodes;
	uint64_t	*memsizes;	/* bytes per memory-only node: one for
					 * all, or one each */
	int		 nmemsizes;
	char		*distances_text;
	int		*dist;		/* nnodes x nnodes, or NULL */
	int		 ecores;	/* per package */
	uint64_t	 basefreq;	/* kHz, 0 none */
	uint64_t	 ebasefreq;	/* kHz of E-cores, 0 same as basefreq */
	char		*epp;
	uint32_t	 given;		/* bit per key of the table */

	struct cpuset	 isolated;
	struct cpuset	 offline;
	struct cpuset	 ecpus;		/* E-cores by CPU id, else ecores */
};

enum key_type {
	KEY_COUNT,	/* integer >= 1 */
	KEY_COUNT0,	/* integer >= 0 */
	KEY_NUMBERING,
	KEY_LIST,	/* a cpulist, which may itself hold commas */
	KEY_SIZE,
	KEY_SIZES,	/* SIZE[/SIZE...] */
	KEY_TEXT,	/* checked with the whole spec */
	KEY_FREQ,
	KEY_EPP
};

/* One table defines the keys: parser, defaults and usage follow it. */
static const struct key {
	const char	*name;
	enum key_type	 type;
	size_t		 off;
	const char	*arg;
	const char	*help;
} keys[] = {
	{ "packages", KEY_COUNT, offsetof(struct spec, packages), "N",
	  "packages (sockets), default 1" },
	{ "dies", KEY_COUNT, offsetof(struct spec, dies), "N",
	  "dies per package, default 1" },
	{ "nodes", KEY_COUNT, offsetof(struct spec, nodes), "N",
	  "NUMA nodes per die, default 1" },
	{ "cores", KEY_COUNT, offsetof(struct spec, cores), "N",
	  "cores per node, default 1" },
	{ "threads", KEY_COUNT, offsetof(struct spec, threads), "N",
	  "threads per core, default 2" },
	{ "numbering", KEY_NUMBERING, offsetof(struct spec, numbering),
	  "offset|adjacent", "ids core + thread * cores (default) "
	  "or consecutive" },
	{ "sparse", KEY_COUNT, offsetof(struct spec, sparse), "STRIDE",
	  "multiply every CPU id by STRIDE, default 1" },
	{ "isolated", KEY_LIST, offsetof(struct spec, isolated_text),
	  "CPULIST", "kernel-isolated CPUs" },
	{ "offline", KEY_LIST, offsetof(struct spec, offline_text),
	  "CPULIST", "offline CPUs (never cpu0)" },
	{ "mem", KEY_SIZE, offsetof(struct spec, mem), "SIZE",
	  "memory per CPU node, default 2G" },
	{ "memnodes", KEY_COUNT0, offsetof(struct spec, memnodes), "N",
	  "extra memory-only (CPU-less) nodes, default 0" },
	{ "memnodesize", KEY_SIZES, offsetof(struct spec, memsizes),
	  "SIZE[/SIZE...]", "memory per memory-only node, or of each "
	  "in turn; default mem" },
	{ "distances", KEY_TEXT, offsetof(struct spec, distances_text),
	  "D:D.../D:D...", "the node distance matrix, one row per node "
	  "(10 on the diagonal, 11 to 254 elsewhere); default as the "
	  "recorded machines" },
	{ "ecores", KEY_COUNT0, offsetof(struct spec, ecores), "N",
	  "efficient cores per package (hybrid), default 0" },
	{ "ecpus", KEY_LIST, offsetof(struct spec, ecpus_text), "CPULIST",
	  "efficient cores by CPU (hybrid), whole cores; the rest are "
	  "performance cores" },
	{ "basefreq", KEY_FREQ, offsetof(struct spec, basefreq), "FREQ",
	  "cpufreq base_frequency of every CPU" },
	{ "ebasefreq", KEY_FREQ, offsetof(struct spec, ebasefreq), "FREQ",
	  "base_frequency of the efficient cores" },
	{ "epp", KEY_EPP, offsetof(struct spec, epp), "PREF",
	  "energy_performance_preference of every CPU" },
};
#define NKEYS	(sizeof keys / sizeof keys[0])

static const char *epp_values[] = {
	"default", "performance", "balance_performance", "balance_power",
	"power"
};
#define NEPP	(sizeof epp_values / sizeof epp_values[0])
/* What intel_pstate offers, trailing blank included. */
#define EPP_AVAILABLE \
	"default performance balance_performance balance_power power "

struct unit {
	const char	*suffix;
	uint64_t	 mult;
};

static const struct unit size_units[] = {
	{ "", 1 },
	{ "K", KB }, { "k", KB }, { "Ki", KB }, { "KB", KB }, { "KiB", KB },
	{ "M", KB * KB }, { "Mi", KB * KB }, { "MB", KB * KB },
	{ "MiB", KB * KB },
	{ "G", KB * KB * KB }, { "Gi", KB * KB * KB }, { "GB", KB * KB * KB },
	{ "GiB", KB * KB * KB },
	{ "T", KB * KB * KB * KB }, { "Ti", KB * KB * KB * KB },
	{ "TB", KB * KB * KB * KB }, { "TiB", KB * KB * KB * KB },
	{ NULL, 0 }
};

/* Frequencies are in kHz, the unit of the cpufreq files. */
static const struct unit freq_units[] = {
	{ "", 1 }, { "k", 1 }, { "K", 1 }, { "kHz", 1 }, { "KHz", 1 },
	{ "M", 1000 }, { "MHz", 1000 }, { "G", 1000000 }, { "GHz", 1000000 },
	{ NULL, 0 }
};

/* A set of CPUs that many files list, formatted once. */
struct group {
	struct cpuset	 cpus;		/* online members */
	char		*list;
};

struct mcpu {
	int		 id;
	int		 package;
	int		 die;		/* within the package */
	int		 gdie;		/* machine-wide die index */
	int		 node;
	int		 core;		/* machine-wide core index */
	int		 core_id;	/* within the package */
	int		 l2;		/* machine-wide L2 (cluster) index */
	int		 ecore;
	int		 online;
};

struct machine {
	const struct spec *spec;
	int		 ncpus;
	int		 ncores;
	int		 ndies;
	int		 ncpunodes;
	int		 nnodes;	/* CPU nodes, then memory-only nodes */
	struct mcpu	*cpus;		/* in generation order */
	struct group	*core;
	struct group	*l2;
	struct group	*die;
	struct group	*package;
	struct group	*node;
	struct cpuset	 all;
	struct cpuset	 online;
};

/* A text the writer has put in a file already. */
struct shared {
	uint64_t	 hash;
	char		*text;
	char		*path;		/* the file to link to */
};

/* The first error sticks and later writes do nothing, as with ferror(). */
struct writer {
	char		*root;		/* .../sys */
	int		 error;
	char		*cause;
	struct shared	*tab;		/* texts written, open addressing */
	size_t		 size;		/* a power of two */
	size_t		 used;
};

static void
usage(FILE *f)
{
	size_t	i;
	char	buf[64];

	fprintf(f, "usage: %s [--force] SPEC DIR\n"
	    "Writes DIR/sys/..., a sysfs tree of the machine SPEC describes.\n"
	    "SPEC is a comma-separated list of key=value:\n", PROGNAME);
	for (i = 0; i < NKEYS; i++) {
		snprintf(buf, sizeof buf, "%s=%s", keys[i].name, keys[i].arg);
		fprintf(f, "  %-26s %s\n", buf, keys[i].help);
	}
	fprintf(f, "Example (n4c16):\n  %s \\\n"
	    "    packages=2,nodes=2,cores=2,threads=2,numbering=adjacent,mem=2G"
	    " DIR\n", PROGNAME);
}

static void
spec_init(struct spec *s)
{
	memset(s, 0, sizeof *s);
	s->packages = s->dies = s->nodes = s->cores = 1;
	s->threads = 2;
	s->numbering = NUMBERING_OFFSET;
	s->sparse = 1;
	s->mem = 2 * KB * KB * KB;
	cpuset_init(&s->isolated);
	cpuset_init(&s->offline);
	cpuset_init(&s->ecpus);
}

static void
spec_clear(struct spec *s)
{
	free(s->isolated_text);
	free(s->offline_text);
	free(s->ecpus_text);
	free(s->epp);
	free(s->memsizes);
	free(s->distances_text);
	free(s->dist);
	cpuset_clear(&s->isolated);
	cpuset_clear(&s->offline);
	cpuset_clear(&s->ecpus);
}

static int
parse_count(const char *v, int min, int *out)
{
	long	n = 0;

	if (*v == '\0')
		return (-EINVAL);
	for (; *v != '\0'; v++) {
		if (*v < '0' || *v > '9')
			return (-EINVAL);
		n = n * 10 + (*v - '0');
		if (n > CPUSET_SETSIZE)
			return (-ERANGE);
	}
	if (n < min)
		return (-EDOM);
	*out = (int)n;
	return (0);
}

/*
 * A decimal number with an optional fraction and a unit from the table;
 * the result must be a whole multiple of "whole" and at most max.
 */
static int
parse_scaled(const char *v, const struct unit *units, uint64_t whole,
    uint64_t max, uint64_t *out)
{
	uint64_t	 ip = 0, fp = 0, fdiv = 1, r;
	const char	*p = v;
	int		 digits = 0;

	while (*p >= '0' && *p <= '9') {
		if (ip > max)
			return (-ERANGE);
		ip = ip * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			/* Six places keep fp * mult within 64 bits. */
			if (fdiv >= 1000000)
				return (-EINVAL);
			fp = fp * 10 + (uint64_t)(*p++ - '0');
			fdiv *= 10;
			digits++;
		}
	}
	if (digits == 0)
		return (-EINVAL);
	for (; units->suffix != NULL; units++)
		if (strcmp(p, units->suffix) == 0)
			break;
	if (units->suffix == NULL)
		return (-EINVAL);
	if (ip > max / units->mult)
		return (-ERANGE);
	if ((fp * units->mult) % fdiv != 0)
		return (-EDOM);
	r = ip * units->mult + fp * units->mult / fdiv;
	if (r > max)
		return (-ERANGE);
	if (r % whole != 0)
		return (-EDOM);
	*out = r;
	return (0);
}

static const struct key *
key_find(const char *name, size_t len)
{
	size_t	i;

	for (i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == len &&
		    strncmp(keys[i].name, name, len) == 0)
			return (&keys[i]);
	return (NULL);
}

/* memnodesize: sizes separated by '/', each as KEY_SIZE takes it. */
static int
parse_sizes(struct spec *s, const char *v)
{
	char	*copy = xstrdup(v), *item, *next;
	int	 rc = 0;

	for (item = copy; item != NULL && rc == 0; item = next) {
		if ((next = strchr(item, '/')) != NULL)
			*next++ = '\0';
		if (s->nmemsizes >= 4096) {
			rc = -ERANGE;
			break;
		}
		s->memsizes = xreallocarray(s->memsizes,
		    (size_t)s->nmemsizes + 1, sizeof *s->memsizes);
		rc = parse_scaled(item, size_units, KB, MAX_MEM,
		    &s->memsizes[s->nmemsizes++]);
	}
	free(copy);
	return (rc);
}

/*
 * distances=: n rows separated by '/', n numbers each separated by ':',
 * 10 on the diagonal (the kernel's local distance) and 11 to 254
 * elsewhere.
 */
static int
parse_distances(struct spec *s, int n, char **cause)
{
	char	*copy, *row, *nrow, *col, *ncol, *end;
	long	 v;
	int	 r = 0, c, rc = -EINVAL;

	if (s->distances_text == NULL)
		return (0);
	/* The rows are counted before the matrix is made. */
	for (end = s->distances_text, c = 1; *end != '\0'; end++)
		c += *end == '/';
	if (c != n) {
		xasprintf(cause, "distances: %d rows, not %d (one per node)",
		    c, n);
		return (-EINVAL);
	}
	copy = xstrdup(s->distances_text);
	s->dist = xcalloc((size_t)n * (size_t)n, sizeof *s->dist);
	for (row = copy; row != NULL; row = nrow, r++) {
		if ((nrow = strchr(row, '/')) != NULL)
			*nrow++ = '\0';
		if (r >= n) {
			xasprintf(cause, "distances: more than %d rows, one "
			    "per node", n);
			goto out;
		}
		for (c = 0, col = row; col != NULL; col = ncol, c++) {
			if ((ncol = strchr(col, ':')) != NULL)
				*ncol++ = '\0';
			errno = 0;
			v = strtol(col, &end, 10);
			if (c >= n || *col == '\0' || *end != '\0' ||
			    errno != 0) {
				xasprintf(cause, "distances: row %d: %s", r,
				    c >= n ? "more numbers than nodes" :
				    "not a number");
				goto out;
			}
			if (r == c ? v != 10 : v < 11 || v > 254) {
				xasprintf(cause, "distances: row %d, column "
				    "%d: %ld is not %s", r, c, v, r == c ?
				    "10 (a node to itself)" : "11 to 254");
				goto out;
			}
			s->dist[r * n + c] = (int)v;
		}
		if (c != n) {
			xasprintf(cause, "distances: row %d has %d numbers, "
			    "not %d", r, c, n);
			goto out;
		}
	}
	if (r != n) {
		xasprintf(cause, "distances: %d rows, not %d (one per node)",
		    r, n);
		goto out;
	}
	rc = 0;
out:
	free(copy);
	return (rc);
}

static int
spec_value(struct spec *s, const struct key *k, const char *v, char **cause)
{
	void		*field = (char *)s + k->off;
	const char	*what = NULL;
	size_t		 i;
	int		 rc = 0;

	switch (k->type) {
	case KEY_COUNT:
	case KEY_COUNT0:
		rc = parse_count(v, k->type == KEY_COUNT ? 1 : 0, field);
		if (rc == -EDOM)
			what = "must be at least 1";
		else if (rc == -ERANGE)
			what = "is too large";
		else if (rc != 0)
			what = "is not a whole number";
		break;
	case KEY_NUMBERING:
		if (strcmp(v, "offset") == 0)
			*(int *)field = NUMBERING_OFFSET;
		else if (strcmp(v, "adjacent") == 0)
			*(int *)field = NUMBERING_ADJACENT;
		else {
			rc = -EINVAL;
			what = "must be offset or adjacent";
		}
		break;
	case KEY_LIST:
		*(char **)field = xstrdup(v);
		break;
	case KEY_SIZE:
		rc = parse_scaled(v, size_units, KB, MAX_MEM, field);
		if (rc == -EDOM)
			what = "is not a whole number of kB";
		else if (rc == -ERANGE)
			what = "is too large";
		else if (rc != 0)
			what = "is not a size such as 512M or 2G";
		break;
	case KEY_SIZES:
		rc = parse_sizes(s, v);
		if (rc == -EDOM)
			what = "is not a whole number of kB";
		else if (rc == -ERANGE)
			what = "is too large";
		else if (rc != 0)
			what = "is not a size such as 512M or 2G, or sizes "
			    "such as 1G/4G";
		break;
	case KEY_TEXT:
		*(char **)field = xstrdup(v);
		break;
	case KEY_FREQ:
		rc = parse_scaled(v, freq_units, 1, MAX_KHZ, field);
		if (rc == 0 && *(uint64_t *)field == 0) {
			rc = -EDOM;
			what = "must not be 0";
		} else if (rc == -EDOM)
			what = "is not a whole number of kHz";
		else if (rc == -ERANGE)
			what = "is too large";
		else if (rc != 0)
			what = "is not a frequency such as 2700M or 2.7G";
		break;
	case KEY_EPP:
		for (i = 0; i < NEPP; i++)
			if (strcmp(v, epp_values[i]) == 0)
				break;
		if (i == NEPP) {
			rc = -EINVAL;
			what = "must be default, performance, "
			    "balance_performance, balance_power or power";
		} else
			*(char **)field = xstrdup(v);
		break;
	}
	if (rc != 0)
		xasprintf(cause, "%s=%s: %s %s", k->name, v, k->name, what);
	return (rc == 0 ? 0 : -EINVAL);
}

/*
 * Splits SPEC at commas. A cpulist holds commas itself, so an item with no
 * '=' continues the cpulist before it ("isolated=4,60,mem=2G").
 */
static int
spec_parse(struct spec *s, const char *text, char **cause)
{
	const struct key	*k, *list = NULL;
	char			*copy, *item, *next, *eq, **lp, *tmp;
	int			 rc = 0;

	copy = xstrdup(text);
	for (item = copy; item != NULL && rc == 0; item = next) {
		if ((next = strchr(item, ',')) != NULL)
			*next++ = '\0';
		if (*item == '\0' && next == NULL && item == copy)
			break;		/* the empty spec: all defaults */
		if ((eq = strchr(item, '=')) == NULL) {
			if (list != NULL && *item != '\0') {
				lp = (char **)((char *)s + list->off);
				xasprintf(&tmp, "%s,%s", *lp, item);
				free(*lp);
				*lp = tmp;
				continue;
			}
			if (*item == '\0')
				xasprintf(cause, "empty item in \"%s\"", text);
			else
				xasprintf(cause, "\"%s\" is not key=value",
				    item);
			rc = -EINVAL;
			break;
		}
		list = NULL;
		if ((k = key_find(item, (size_t)(eq - item))) == NULL) {
			xasprintf(cause, "unknown key \"%.*s\"",
			    (int)(eq - item), item);
			rc = -EINVAL;
			break;
		}
		if (s->given & (1U << (k - keys))) {
			xasprintf(cause, "%s is given twice", k->name);
			rc = -EINVAL;
			break;
		}
		s->given |= 1U << (k - keys);
		if ((rc = spec_value(s, k, eq + 1, cause)) == 0 &&
		    k->type == KEY_LIST)
			list = k;
	}
	free(copy);
	return (rc);
}

static int
spec_given(const struct spec *s, const char *name)
{
	const struct key	*k = key_find(name, strlen(name));

	return ((s->given & (1U << (k - keys))) != 0);
}

static int
cpu_id(const struct spec *s, int core, int thread, int ncores)
{
	int	base;

	if (s->numbering == NUMBERING_ADJACENT)
		base = core * s->threads + thread;
	else
		base = core + thread * ncores;
	return (base * s->sparse);
}

/* Checks the spec as a whole once every key is known. */

/* A cpulist key (isolated=, offline=) into out: ids of this machine only. */
static int
spec_cpus(const char *text, const char *key, const struct cpuset *all,
    struct cpuset *out, char **cause)
{
	struct cpuset	 bad = CPUSET_INITIALIZER;
	char		*list = NULL;
	int		 rc = 0;

	if (text == NULL)
		return (0);
	if (cpuset_parse(out, text, &list) != 0) {
		xasprintf(cause, "%s: %s", key, list);
		free(list);
		return (-1);
	}
	cpuset_copy(&bad, out);
	cpuset_andnot(&bad, all);
	if (!cpuset_empty(&bad)) {
		list = cpuset_format(&bad);
		xasprintf(cause, "%s: %s not CPUs of this machine", key, list);
		free(list);
		rc = -1;
	}
	cpuset_clear(&bad);
	return (rc);
}

/* ecpus names whole cores, and leaves at least one performance core. */
static int
check_ecpus(const struct spec *s, int ncores, char **cause)
{
	int	c, t, in, first, perf = 0;

	if (s->ecpus_text == NULL)
		return (0);
	for (c = 0; c < ncores; c++) {
		first = cpuset_has(&s->ecpus, cpu_id(s, c, 0, ncores));
		perf += !first;
		for (t = 1; t < s->threads; t++) {
			in = cpuset_has(&s->ecpus, cpu_id(s, c, t, ncores));
			if (in != first) {
				xasprintf(cause, "ecpus: cpu %d and cpu %d are "
				    "threads of one core", cpu_id(s, c, 0,
				    ncores), cpu_id(s, c, t, ncores));
				return (-EINVAL);
			}
		}
	}
	if (perf == 0) {
		xasprintf(cause, "ecpus: at least one core must be a "
		    "performance core");
		return (-EINVAL);
	}
	return (0);
}

static int
spec_check(struct spec *s, char **cause)
{
	struct cpuset	 all = CPUSET_INITIALIZER;
	long long	 n, maxid;
	int		 per_pkg, ncores, c, t, rc = -EINVAL;

	n = (long long)s->packages * s->dies;
	n *= s->nodes;
	if (n > CPUSET_SETSIZE) {
		xasprintf(cause, "%lld NUMA nodes are too many", n);
		return (-EINVAL);
	}
	n *= s->cores;
	if (n * s->threads > CPUSET_SETSIZE) {
		xasprintf(cause, "%lld CPUs are more than %d", n * s->threads,
		    CPUSET_SETSIZE);
		return (-EINVAL);
	}
	ncores = (int)n;
	maxid = (n * s->threads - 1) * s->sparse;
	if (maxid > CPUSET_MAX_ID) {
		xasprintf(cause, "the machine needs CPU ids up to %lld, more "
		    "than the %d ids 0-%d", maxid, CPUSET_SETSIZE,
		    CPUSET_MAX_ID);
		return (-EINVAL);
	}
	if ((long long)s->packages * s->dies * s->nodes + s->memnodes >
	    CPUSET_SETSIZE) {
		xasprintf(cause, "memnodes=%d: too many NUMA nodes",
		    s->memnodes);
		return (-EINVAL);
	}

	per_pkg = s->dies * s->nodes * s->cores;
	if (s->ecores >= per_pkg && s->ecores > 0) {
		xasprintf(cause, "ecores=%d: a package has %d cores and at "
		    "least one must be a performance core", s->ecores, per_pkg);
		return (-EINVAL);
	}
	if (spec_given(s, "ebasefreq") && ((s->ecores == 0 &&
	    s->ecpus_text == NULL) || s->basefreq == 0)) {
		xasprintf(cause, "ebasefreq needs ecores or ecpus, and "
		    "basefreq");
		return (-EINVAL);
	}
	if (s->ecores > 0 && s->ecpus_text != NULL) {
		xasprintf(cause, "ecores and ecpus: give one of them");
		return (-EINVAL);
	}
	if (spec_given(s, "memnodesize") && s->memnodes == 0) {
		xasprintf(cause, "memnodesize needs memnodes");
		return (-EINVAL);
	}
	if (s->nmemsizes > 1 && s->nmemsizes != s->memnodes) {
		xasprintf(cause, "memnodesize: %d sizes for %d memory-only "
		    "nodes: give one, or one each", s->nmemsizes,
		    s->memnodes);
		return (-EINVAL);
	}
	if (parse_distances(s, s->packages * s->dies * s->nodes + s->memnodes,
	    cause) != 0)
		return (-EINVAL);

	for (c = 0; c < ncores; c++)
		for (t = 0; t < s->threads; t++)
			cpuset_add(&all, cpu_id(s, c, t, ncores));
	if (spec_cpus(s->isolated_text, "isolated", &all, &s->isolated,
	    cause) != 0 ||
	    spec_cpus(s->offline_text, "offline", &all, &s->offline,
	    cause) != 0)
		goto out;
	if (cpuset_has(&s->offline, 0)) {
		xasprintf(cause, "offline: cpu0 cannot go offline");
		goto out;
	}
	if (spec_cpus(s->ecpus_text, "ecpus", &all, &s->ecpus, cause) != 0 ||
	    check_ecpus(s, ncores, cause) != 0)
		goto out;
	rc = 0;
out:
	cpuset_clear(&all);
	return (rc);
}

static void
group_finish(struct group *g)
{
	g->list = cpuset_format(&g->cpus);
}

static struct group *
groups_new(int n)
{
	struct group	*g;
	int		 i;

	g = xcalloc((size_t)n, sizeof *g);
	for (i = 0; i < n; i++)
		cpuset_init(&g[i].cpus);
	return (g);
}

static void
groups_free(struct group *g, int n)
{
	int	i;

	if (g == NULL)
		return;
	for (i = 0; i < n; i++) {
		cpuset_clear(&g[i].cpus);
		free(g[i].list);
	}
	free(g);
}

static void
machine_free(struct machine *m)
{
	if (m == NULL)
		return;
	groups_free(m->core, m->ncores);
	groups_free(m->l2, m->ncores);
	groups_free(m->die, m->ndies);
	groups_free(m->package, m->spec->packages);
	groups_free(m->node, m->nnodes);
	cpuset_clear(&m->all);
	cpuset_clear(&m->online);
	free(m->cpus);
	free(m);
}

/* Lays out every CPU of a checked spec and the sets the files list. */
static struct machine *
machine_new(const struct spec *s)
{
	struct machine	*m;
	struct mcpu	*cpu;
	int		 g, t, cp, gnode, gdie, per_pkg, ecore, ecount = 0;
	int		 i, l2 = -1;

	m = xcalloc(1, sizeof *m);
	m->spec = s;
	m->ndies = s->packages * s->dies;
	m->ncpunodes = m->ndies * s->nodes;
	m->nnodes = m->ncpunodes + s->memnodes;
	m->ncores = m->ncpunodes * s->cores;
	m->ncpus = m->ncores * s->threads;
	m->cpus = xcalloc((size_t)m->ncpus, sizeof *m->cpus);
	m->core = groups_new(m->ncores);
	m->l2 = groups_new(m->ncores);
	m->die = groups_new(m->ndies);
	m->package = groups_new(s->packages);
	m->node = groups_new(m->nnodes);
	cpuset_init(&m->all);
	cpuset_init(&m->online);

	per_pkg = s->dies * s->nodes * s->cores;
	cpu = m->cpus;
	for (g = 0; g < m->ncores; g++) {
		gnode = g / s->cores;
		gdie = gnode / s->nodes;
		cp = g % per_pkg;
		if (s->ecpus_text != NULL)
			ecore = cpuset_has(&s->ecpus,
			    cpu_id(s, g, 0, m->ncores));
		else
			ecore = cp >= per_pkg - s->ecores;
		/* E-cores come last in a package, sharing an L2 by fours
		 * within a node; every other core has its own. */
		if (g % s->cores == 0)
			ecount = 0;
		if (!ecore || ecount++ % E_CLUSTER == 0)
			l2++;
		for (t = 0; t < s->threads; t++, cpu++) {
			cpu->id = cpu_id(s, g, t, m->ncores);
			cpu->package = gdie / s->dies;
			cpu->die = gdie % s->dies;
			cpu->gdie = gdie;
			cpu->node = gnode;
			cpu->core = g;
			cpu->core_id = cp;
			cpu->l2 = l2;
			cpu->ecore = ecore;
			cpu->online = !cpuset_has(&s->offline, cpu->id);
		}
	}

	for (i = 0; i < m->ncpus; i++) {
		cpu = &m->cpus[i];
		cpuset_add(&m->all, cpu->id);
		if (!cpu->online)
			continue;
		cpuset_add(&m->online, cpu->id);
		cpuset_add(&m->core[cpu->core].cpus, cpu->id);
		cpuset_add(&m->l2[cpu->l2].cpus, cpu->id);
		cpuset_add(&m->die[cpu->gdie].cpus, cpu->id);
		cpuset_add(&m->package[cpu->package].cpus, cpu->id);
		cpuset_add(&m->node[cpu->node].cpus, cpu->id);
	}
	for (i = 0; i < m->ncores; i++) {
		group_finish(&m->core[i]);
		group_finish(&m->l2[i]);
	}
	for (i = 0; i < m->ndies; i++)
		group_finish(&m->die[i]);
	for (i = 0; i < s->packages; i++)
		group_finish(&m->package[i]);
	for (i = 0; i < m->nnodes; i++)
		group_finish(&m->node[i]);
	return (m);
}

/* Package of a CPU node, -1 for a memory-only node. */
static int
node_package(const struct machine *m, int node)
{
	if (node >= m->ncpunodes)
		return (-1);
	return (node / (m->spec->dies * m->spec->nodes));
}

/* The CPU node a memory-only node hangs off: spread round robin. */
static int
memnode_home(const struct machine *m, int node)
{
	return ((node - m->ncpunodes) % m->ncpunodes);
}

static int
node_distance(const struct machine *m, int a, int b)
{
	int	tmp;

	if (m->spec->dist != NULL)
		return (m->spec->dist[a * m->nnodes + b]);
	if (a == b)
		return (DIST_LOCAL);
	if (a > b) {
		tmp = a;
		a = b;
		b = tmp;
	}
	if (b >= m->ncpunodes) {
		if (a < m->ncpunodes && memnode_home(m, b) == a)
			return (DIST_MEMNODE);
		return (DIST_FAR);
	}
	if (node_package(m, a) == node_package(m, b))
		return (DIST_PACKAGE);
	return (DIST_REMOTE);
}

static uint64_t
node_memory(const struct machine *m, int node)
{
	const struct spec	*s = m->spec;

	if (node < m->ncpunodes || s->nmemsizes == 0)
		return (s->mem);
	if (s->nmemsizes == 1)
		return (s->memsizes[0]);
	return (s->memsizes[node - m->ncpunodes]);
}

static void
w_fail(struct writer *w, const char *what, const char *path)
{
	if (w->error != 0)
		return;
	w->error = -errno;
	xasprintf(&w->cause, "%s %s: %s", what, path, strerror(errno));
}

static void
w_mkdir(struct writer *w, const char *fmt, ...)
    __attribute__((__format__(__printf__, 2, 3)));
static void
w_mkdir(struct writer *w, const char *fmt, ...)
{
	va_list	 ap;
	char	*rel, *path;

	if (w->error != 0)
		return;
	va_start(ap, fmt);
	if (vasprintf(&rel, fmt, ap) == -1) {
		va_end(ap);
		w_fail(w, "format", fmt);
		return;
	}
	va_end(ap);
	xasprintf(&path, "%s/%s", w->root, rel);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		w_fail(w, "mkdir", path);
	free(path);
	free(rel);
}

static void
w_file(struct writer *w, const char *path, const char *data, size_t len)
{
	ssize_t	n;
	int	fd;

	if ((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644)) == -1) {
		w_fail(w, "open", path);
		return;
	}
	while (len > 0) {
		if ((n = write(fd, data, len)) == -1) {
			if (errno == EINTR)
				continue;
			w_fail(w, "write", path);
			close(fd);
			return;
		}
		data += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0)
		w_fail(w, "close", path);
}

/* Writes a file under the root; the text gets the kernel's newline. */
static void
w_put(struct writer *w, const char *rel, const char *fmt, ...)
    __attribute__((__format__(__printf__, 3, 4)));
static void
w_put(struct writer *w, const char *rel, const char *fmt, ...)
{
	va_list	 ap;
	char	*text, *path;
	int	 len;

	if (w->error != 0)
		return;
	va_start(ap, fmt);
	len = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (len == -1) {
		w_fail(w, "format", rel);
		return;
	}
	xasprintf(&path, "%s/%s", w->root, rel);
	w_file(w, path, text, (size_t)len);
	free(path);
	free(text);
}

static struct shared *
w_slot(struct shared *tab, size_t size, const char *text, uint64_t h)
{
	size_t	i;

	for (i = h & (size - 1); tab[i].text != NULL; i = (i + 1) & (size - 1))
		if (tab[i].hash == h && strcmp(tab[i].text, text) == 0)
			break;
	return (&tab[i]);
}

static void
w_grow(struct writer *w)
{
	struct shared	*tab, *slot;
	size_t		 size, i;

	size = w->size == 0 ? 1024 : w->size * 2;
	tab = xcalloc(size, sizeof *tab);
	for (i = 0; i < w->size; i++) {
		if (w->tab[i].text == NULL)
			continue;
		slot = w_slot(tab, size, w->tab[i].text, w->tab[i].hash);
		*slot = w->tab[i];
	}
	free(w->tab);
	w->tab = tab;
	w->size = size;
}

/*
 * A read-only attribute. Most of them repeat ("1", "Unified", a package's
 * CPUs), so each text is written once and hard-linked after that: the
 * sparse 4096-CPU machine shrinks from 500 MB to a few, and a reader
 * cannot tell a link from a copy. Writable files must use w_put().
 */
static void
w_ro(struct writer *w, const char *rel, const char *fmt, ...)
    __attribute__((__format__(__printf__, 3, 4)));
static void
w_ro(struct writer *w, const char *rel, const char *fmt, ...)
{
	va_list		 ap;
	struct shared	*slot;
	char		*text, *path;
	uint64_t	 h;
	int		 len;

	if (w->error != 0)
		return;
	va_start(ap, fmt);
	len = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (len == -1) {
		w_fail(w, "format", rel);
		return;
	}
	xasprintf(&path, "%s/%s", w->root, rel);
	if (w->used * 2 >= w->size)
		w_grow(w);
	h = fnv1a_more(FNV1A_OFFSET, text, strlen(text));
	slot = w_slot(w->tab, w->size, text, h);
	if (slot->text != NULL) {
		if (link(slot->path, path) == 0)
			goto out;
		if (errno != EMLINK) {
			w_fail(w, "link", path);
			goto out;
		}
		/* Too many links: this copy becomes the one to link to. */
		w_file(w, path, text, (size_t)len);
		free(slot->path);
		slot->path = path;
		path = NULL;
		goto out;
	}
	w_file(w, path, text, (size_t)len);
	if (w->error != 0)
		goto out;
	slot->hash = h;
	slot->text = text;
	slot->path = path;
	w->used++;
	text = path = NULL;
out:
	free(text);
	free(path);
}

static void
w_clear(struct writer *w)
{
	size_t	i;

	for (i = 0; i < w->size; i++) {
		free(w->tab[i].text);
		free(w->tab[i].path);
	}
	free(w->tab);
	free(w->root);
	free(w->cause);
}

static void
w_set(struct writer *w, const char *rel, const struct cpuset *s)
{
	char	*list = cpuset_format(s);

	w_put(w, rel, "%s\n", list);
	free(list);
}

/* A symbolic link at rel (under the root) pointing to target. */
static void
w_link(struct writer *w, const char *target, const char *rel)
{
	char	*path;

	if (w->error != 0)
		return;
	xasprintf(&path, "%s/%s", w->root, rel);
	if (symlink(target, path) != 0)
		w_fail(w, "symlink", path);
	free(path);
}

static void
write_caches(struct writer *w, struct machine *m, const struct mcpu *cpu,
    const char *dir)
{
	static const char	*types[] = { "Data", "Instruction", "Unified",
				    "Unified" };
	int			 levels[] = { 1, 1, 2, 3 };
	int			 ids[4], i;
	unsigned		 kb[4];
	struct group		*grp[4];
	char			 rel[128];

	ids[0] = ids[1] = cpu->core;
	ids[2] = cpu->l2;
	ids[3] = cpu->gdie;
	kb[0] = L1D_KB;
	kb[1] = cpu->ecore ? E_L1I_KB : L1I_KB;
	kb[2] = cpu->ecore ? E_L2_KB : L2_KB;
	kb[3] = L3_KB_PER_CORE * (unsigned)(m->spec->nodes * m->spec->cores);
	grp[0] = grp[1] = &m->core[cpu->core];
	grp[2] = &m->l2[cpu->l2];
	grp[3] = &m->die[cpu->gdie];

	w_mkdir(w, "%s/cache", dir);
	for (i = 0; i < 4; i++) {
		w_mkdir(w, "%s/cache/index%d", dir, i);
		snprintf(rel, sizeof rel, "%s/cache/index%d/level", dir, i);
		w_ro(w, rel, "%d\n", levels[i]);
		snprintf(rel, sizeof rel, "%s/cache/index%d/type", dir, i);
		w_ro(w, rel, "%s\n", types[i]);
		snprintf(rel, sizeof rel, "%s/cache/index%d/id", dir, i);
		w_ro(w, rel, "%d\n", ids[i]);
		snprintf(rel, sizeof rel, "%s/cache/index%d/size", dir, i);
		w_ro(w, rel, "%uK\n", kb[i]);
		snprintf(rel, sizeof rel, "%s/cache/index%d/shared_cpu_list",
		    dir, i);
		w_ro(w, rel, "%s\n", grp[i]->list);
	}
}

static void
write_topology(struct writer *w, struct machine *m, const struct mcpu *cpu,
    const char *dir)
{
	static const struct {
		const char	*name;
		int		 which;	/* 0 core, 1 l2, 2 die, 3 package */
	} lists[] = {
		{ "thread_siblings_list", 0 },
		{ "core_cpus_list", 0 },
		{ "cluster_cpus_list", 1 },
		{ "die_cpus_list", 2 },
		{ "core_siblings_list", 3 },
		{ "package_cpus_list", 3 },
	};
	struct group	*grp[4];
	char		 rel[128];
	size_t		 i;

	grp[0] = &m->core[cpu->core];
	grp[1] = &m->l2[cpu->l2];
	grp[2] = &m->die[cpu->gdie];
	grp[3] = &m->package[cpu->package];

	w_mkdir(w, "%s/topology", dir);
	snprintf(rel, sizeof rel, "%s/topology/physical_package_id", dir);
	w_ro(w, rel, "%d\n", cpu->package);
	snprintf(rel, sizeof rel, "%s/topology/die_id", dir);
	w_ro(w, rel, "%d\n", cpu->die);
	/* x86 kernels give the L2 id as the cluster id. */
	snprintf(rel, sizeof rel, "%s/topology/cluster_id", dir);
	w_ro(w, rel, "%d\n", cpu->l2);
	snprintf(rel, sizeof rel, "%s/topology/core_id", dir);
	w_ro(w, rel, "%d\n", cpu->core_id);
	for (i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		snprintf(rel, sizeof rel, "%s/topology/%s", dir,
		    lists[i].name);
		w_ro(w, rel, "%s\n", grp[lists[i].which]->list);
	}
}

static void
write_cpufreq(struct writer *w, struct machine *m, const struct mcpu *cpu,
    const char *dir)
{
	const struct spec	*s = m->spec;
	char			 pol[64], rel[128], target[64];
	uint64_t		 khz;

	snprintf(pol, sizeof pol, "devices/system/cpu/cpufreq/policy%d",
	    cpu->id);
	w_mkdir(w, "%s", pol);
	snprintf(target, sizeof target, "../cpufreq/policy%d", cpu->id);
	snprintf(rel, sizeof rel, "%s/cpufreq", dir);
	w_link(w, target, rel);
	snprintf(rel, sizeof rel, "%s/affected_cpus", pol);
	w_ro(w, rel, "%d\n", cpu->id);
	snprintf(rel, sizeof rel, "%s/related_cpus", pol);
	w_ro(w, rel, "%d\n", cpu->id);
	snprintf(rel, sizeof rel, "%s/scaling_driver", pol);
	w_ro(w, rel, "intel_pstate\n");
	khz = cpu->ecore && s->ebasefreq != 0 ? s->ebasefreq : s->basefreq;
	if (khz != 0) {
		snprintf(rel, sizeof rel, "%s/base_frequency", pol);
		w_ro(w, rel, "%llu\n", (unsigned long long)khz);
	}
	if (s->epp != NULL) {
		snprintf(rel, sizeof rel,
		    "%s/energy_performance_available_preferences", pol);
		w_ro(w, rel, "%s\n", EPP_AVAILABLE);
		snprintf(rel, sizeof rel, "%s/energy_performance_preference",
		    pol);
		w_put(w, rel, "%s\n", s->epp);
	}
}

static void
write_cpus(struct writer *w, struct machine *m)
{
	const struct spec	*s = m->spec;
	struct mcpu		*cpu;
	struct cpuset		 kind = CPUSET_INITIALIZER;
	char			 dir[64], rel[96], target[64];
	int			 i, e;

	w_mkdir(w, "devices");
	w_mkdir(w, "devices/system");
	w_mkdir(w, "devices/system/cpu");
	w_set(w, "devices/system/cpu/possible", &m->all);
	w_set(w, "devices/system/cpu/present", &m->all);
	w_set(w, "devices/system/cpu/online", &m->online);
	w_set(w, "devices/system/cpu/offline", &s->offline);
	w_set(w, "devices/system/cpu/isolated", &s->isolated);
	w_put(w, "devices/system/cpu/kernel_max", "%d\n", CPUSET_MAX_ID);
	if (s->basefreq != 0 || s->epp != NULL)
		w_mkdir(w, "devices/system/cpu/cpufreq");

	for (i = 0; i < m->ncpus && w->error == 0; i++) {
		cpu = &m->cpus[i];
		snprintf(dir, sizeof dir, "devices/system/cpu/cpu%d", cpu->id);
		w_mkdir(w, "%s", dir);
		/* cpu0 cannot be unplugged, so it has no online file. */
		if (cpu->id != 0) {
			snprintf(rel, sizeof rel, "%s/online", dir);
			w_put(w, rel, "%d\n", cpu->online);
		}
		snprintf(target, sizeof target, "../../node/node%d", cpu->node);
		snprintf(rel, sizeof rel, "%s/node%d", dir, cpu->node);
		w_link(w, target, rel);
		/* The kernel drops these of an offline CPU. */
		if (cpu->online) {
			write_topology(w, m, cpu, dir);
			write_caches(w, m, cpu, dir);
		}
		if (s->basefreq != 0 || s->epp != NULL)
			write_cpufreq(w, m, cpu, dir);
	}

	if ((s->ecores == 0 && s->ecpus_text == NULL) || w->error != 0)
		return;
	for (e = 0; e < 2; e++) {
		cpuset_zero(&kind);
		for (i = 0; i < m->ncpus; i++)
			if (m->cpus[i].online && m->cpus[i].ecore == e)
				cpuset_add(&kind, m->cpus[i].id);
		w_mkdir(w, "devices/%s", e ? "cpu_atom" : "cpu_core");
		w_set(w, e ? "devices/cpu_atom/cpus" : "devices/cpu_core/cpus",
		    &kind);
	}
	cpuset_clear(&kind);
}

static void
write_nodes(struct writer *w, struct machine *m)
{
	struct cpuset	 all = CPUSET_INITIALIZER, cpu = CPUSET_INITIALIZER;
	struct cpuset	 mem = CPUSET_INITIALIZER;
	char		 dir[64], rel[96], target[64], *dist;
	size_t		 size, len;
	uint64_t	 kb;
	int		 n, o, i;

	w_mkdir(w, "devices/system/node");
	for (n = 0; n < m->nnodes; n++) {
		cpuset_add(&all, n);
		if (!cpuset_empty(&m->node[n].cpus))
			cpuset_add(&cpu, n);
		if (node_memory(m, n) != 0)
			cpuset_add(&mem, n);
	}
	w_set(w, "devices/system/node/possible", &all);
	w_set(w, "devices/system/node/online", &all);
	w_set(w, "devices/system/node/has_cpu", &cpu);
	w_set(w, "devices/system/node/has_memory", &mem);
	w_set(w, "devices/system/node/has_normal_memory", &mem);
	cpuset_clear(&all);
	cpuset_clear(&cpu);
	cpuset_clear(&mem);

	for (n = 0; n < m->nnodes && w->error == 0; n++) {
		snprintf(dir, sizeof dir, "devices/system/node/node%d", n);
		w_mkdir(w, "%s", dir);
		snprintf(rel, sizeof rel, "%s/cpulist", dir);
		w_ro(w, rel, "%s\n", m->node[n].list);

		/* Every distance has at most three digits and a
		 * separator. */
		size = (size_t)m->nnodes * 4 + 1;
		dist = xmalloc(size);
		for (o = 0, len = 0; o < m->nnodes; o++)
			len += (size_t)snprintf(dist + len, size - len, "%s%d",
			    o ? " " : "", node_distance(m, n, o));
		snprintf(rel, sizeof rel, "%s/distance", dir);
		w_ro(w, rel, "%s\n", dist);
		free(dist);

		/* The kernel's node meminfo layout, numbers in kB. */
		kb = node_memory(m, n) / KB;
		snprintf(rel, sizeof rel, "%s/meminfo", dir);
		w_ro(w, rel,
		    "Node %d MemTotal:       %8llu kB\n"
		    "Node %d MemFree:        %8llu kB\n"
		    "Node %d MemUsed:        %8llu kB\n"
		    "Node %d HugePages_Total: %5u\n"
		    "Node %d HugePages_Free:  %5u\n"
		    "Node %d HugePages_Surp:  %5u\n",
		    n, (unsigned long long)kb, n, (unsigned long long)kb,
		    n, 0ULL, n, 0U, n, 0U, n, 0U);
	}

	/* Offline CPUs keep their node links, as on a real machine. */
	for (i = 0; i < m->ncpus && w->error == 0; i++) {
		snprintf(target, sizeof target, "../../cpu/cpu%d",
		    m->cpus[i].id);
		snprintf(rel, sizeof rel, "devices/system/node/node%d/cpu%d",
		    m->cpus[i].node, m->cpus[i].id);
		w_link(w, target, rel);
	}
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return (remove(path));
}

static int
rm_tree(const char *path)
{
	return (nftw(path, rm_entry, 32, FTW_DEPTH|FTW_PHYS));
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct spec	 s;
	struct machine	*m;
	struct writer	 w;
	struct stat	 sb;
	const char	*dir;
	char		*cause = NULL, *tmp = NULL, *sys = NULL, *old = NULL;
	int		 ch, force = 0, exists, rc = 1;

	while ((ch = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			force = 1;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2) {
		usage(stderr);
		return (EXIT_USAGE);
	}

	spec_init(&s);
	if (spec_parse(&s, argv[0], &cause) != 0 ||
	    spec_check(&s, &cause) != 0) {
		fprintf(stderr, "%s: bad spec \"%s\": %s\n", PROGNAME, argv[0],
		    cause);
		free(cause);
		spec_clear(&s);
		return (EXIT_USAGE);
	}

	dir = argv[1];
	xasprintf(&sys, "%s/sys", dir);
	exists = lstat(sys, &sb) == 0;
	if (exists && !force) {
		fprintf(stderr, "%s: %s exists; use --force to replace it\n",
		    PROGNAME, sys);
		goto out;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: mkdir %s: %s\n", PROGNAME, dir,
		    strerror(errno));
		goto out;
	}
	xasprintf(&tmp, "%s/.mksysfs.XXXXXX", dir);
	if (mkdtemp(tmp) == NULL) {
		fprintf(stderr, "%s: mkdtemp %s: %s\n", PROGNAME, tmp,
		    strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}

	memset(&w, 0, sizeof w);
	xasprintf(&w.root, "%s/sys", tmp);
	if (mkdir(w.root, 0755) != 0)
		w_fail(&w, "mkdir", w.root);
	m = machine_new(&s);
	write_cpus(&w, m);
	write_nodes(&w, m);
	machine_free(m);

	if (w.error == 0 && exists) {
		xasprintf(&old, "%s/old", tmp);
		if (rename(sys, old) != 0)
			w_fail(&w, "rename", sys);
	}
	if (w.error == 0 && rename(w.root, sys) != 0) {
		w_fail(&w, "rename", w.root);
		/* Put the old tree back rather than lose both. */
		if (old != NULL)
			(void)rename(old, sys);
	}
	if (w.error != 0)
		fprintf(stderr, "%s: %s\n", PROGNAME, w.cause);
	else
		rc = 0;
	w_clear(&w);

out:
	if (tmp != NULL && rm_tree(tmp) != 0) {
		fprintf(stderr, "%s: cannot remove %s: %s\n", PROGNAME, tmp,
		    strerror(errno));
		rc = 1;
	}
	free(tmp);
	free(old);
	free(sys);
	spec_clear(&s);
	return (rc);
}
