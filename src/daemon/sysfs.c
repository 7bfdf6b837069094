/*
 * sysfs.c reads a sysfs tree (the real one under "/", or a recorded or
 * generated copy) into a topology: the CPUs under devices/system/cpu with
 * their topology, caches and cpufreq files, the hybrid core kinds under
 * devices/cpu_core and devices/cpu_atom, and the NUMA nodes under
 * devices/system/node. Missing optional files are normal; a file that is
 * there but malformed is an error whose cause names it.
 */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "readfile.h"
#include "sysfs.h"
#include "xmalloc.h"

/* No sysfs file we read is near this; a bigger one is not sysfs. */
#define SYSFS_MAX_FILE	(256 * 1024)

struct sysfs {
	const char	*root;
	struct topology	*t;
	struct cpuset	 online;
	int		 have_online;
	struct cpuset	 atom;
	int		 hybrid;
};

static int	sysfs_path(char *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));

/* Formats a path into a PATH_MAX buffer; 0 or -ENAMETOOLONG. */
static int
sysfs_path(char *buf, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		return (-ENAMETOOLONG);
	return (0);
}

static int
sysfs_toolong(const char *what, char **cause)
{
	xasprintf(cause, "%s: path too long", what);
	return (-ENAMETOOLONG);
}

/*
 * Reads a whole small file with trailing white space cut. -ENOENT
 * without a cause when it does not exist; other failures name the file.
 * readfile refuses a FIFO or a folder planted in a recorded tree.
 */
static int
sysfs_read(const char *path, char **out, char **cause)
{
	char	*buf, *why = NULL;
	size_t	 n;
	int	 rc;

	*out = NULL;
	if ((rc = readfile(path, NULL, SYSFS_MAX_FILE, &buf, &n, &why)) != 0) {
		if (rc == -ENOENT || rc == -ENOTDIR) {
			free(why);
			return (-ENOENT);
		}
		*cause = why;
		return (rc);
	}
	if (memchr(buf, '\0', n) != NULL) {
		free(buf);
		xasprintf(cause, "%s: binary content", path);
		return (-EINVAL);
	}
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	*out = buf;
	return (0);
}

/* A decimal number taking the whole text, leading blanks allowed. */
static int
sysfs_parse_long(const char *s, long long min, long long max, long long *v)
{
	char		*end;
	long long	 x;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\0')
		return (-EINVAL);
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || x < min || x > max)
		return (-EINVAL);
	*v = x;
	return (0);
}

/* Reads an integer file; -ENOENT when absent and optional. */
static int
sysfs_read_num(const char *path, long long min, long long max, long long *v,
    int optional, char **cause)
{
	char	*s;
	int	 rc;

	if ((rc = sysfs_read(path, &s, cause)) != 0) {
		if (rc == -ENOENT && !optional)
			xasprintf(cause, "%s: missing", path);
		return (rc);
	}
	if (sysfs_parse_long(s, min, max, v) != 0) {
		xasprintf(cause, "%s: \"%.32s\" is not a number in %lld-%lld",
		    path, s, min, max);
		free(s);
		return (-EINVAL);
	}
	free(s);
	return (0);
}

static int
sysfs_read_int(const char *path, int *v, int optional, char **cause)
{
	long long	x;
	int		rc;

	if ((rc = sysfs_read_num(path, -1, INT_MAX, &x, optional, cause)) != 0)
		return (rc);
	*v = (int)x;
	return (0);
}

/* Reads a list-form file; -ENOENT when absent and optional. */
static int
sysfs_read_set(const char *path, struct cpuset *set, int optional,
    char **cause)
{
	char	*s, *why = NULL;
	int	 rc;

	if ((rc = sysfs_read(path, &s, cause)) != 0) {
		if (rc == -ENOENT && !optional)
			xasprintf(cause, "%s: missing", path);
		return (rc);
	}
	if ((rc = cpuset_parse(set, s, &why)) != 0) {
		xasprintf(cause, "%s: %s", path,
		    why != NULL ? why : "bad list");
		free(why);
		free(s);
		return (rc);
	}
	free(s);
	return (0);
}

/*
 * The ids of the entries of dir named prefix followed by digits. An id
 * above 8191 is an error naming the entry; a missing dir is -ENOENT.
 */
static int
sysfs_list(const char *dir, const char *prefix, struct cpuset *ids,
    char **cause)
{
	DIR		*d;
	struct dirent	*de;
	const char	*p;
	size_t		 plen = strlen(prefix);
	long long	 id;
	int		 error;

	if ((d = opendir(dir)) == NULL) {
		error = errno;
		if (error == ENOENT || error == ENOTDIR)
			return (-ENOENT);
		xasprintf(cause, "%s: %s", dir, strerror(error));
		return (-error);
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, plen) != 0)
			continue;
		p = de->d_name + plen;
		if (*p == '\0' || strspn(p, "0123456789") != strlen(p))
			continue;
		if (sysfs_parse_long(p, 0, CPUSET_MAX_ID, &id) != 0) {
			xasprintf(cause, "%s/%s: id above %d", dir, de->d_name,
			    CPUSET_MAX_ID);
			closedir(d);
			return (-ERANGE);
		}
		cpuset_add(ids, (int)id);
	}
	closedir(d);
	return (0);
}

/* "32K", "1024K", "2M" or plain bytes. */
static int
sysfs_parse_size(const char *s, uint64_t *v)
{
	char			*end;
	unsigned long long	 x;
	uint64_t		 unit = 1;

	if (!isdigit((unsigned char)*s))
		return (-EINVAL);
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0)
		return (-EINVAL);
	switch (*end) {
	case 'K':
		unit = 1ULL << 10;
		end++;
		break;
	case 'M':
		unit = 1ULL << 20;
		end++;
		break;
	case 'G':
		unit = 1ULL << 30;
		end++;
		break;
	}
	if (*end != '\0' || x > UINT64_MAX / unit)
		return (-EINVAL);
	*v = x * unit;
	return (0);
}

static int
sysfs_cache(struct sysfs *s, const char *cpudir, int cpu, int index,
    char **cause)
{
	char		 path[PATH_MAX], *text = NULL;
	struct cpuset	 cpus = CPUSET_INITIALIZER;
	uint64_t	 size = 0;
	int		 level, id = -1, rc;
	char		 type;

#define CACHE_PATH(f) do {						\
	if (sysfs_path(path, "%s/cache/index%d/%s", cpudir, index, f))	\
		return (sysfs_toolong(cpudir, cause));			\
} while (0)

	CACHE_PATH("level");
	if ((rc = sysfs_read_int(path, &level, 0, cause)) != 0)
		return (rc);
	if (level < 1) {
		xasprintf(cause, "%s: bad cache level %d", path, level);
		return (-EINVAL);
	}
	CACHE_PATH("type");
	if ((rc = sysfs_read(path, &text, cause)) != 0) {
		if (rc == -ENOENT)
			xasprintf(cause, "%s: missing", path);
		return (rc);
	}
	if (strcmp(text, "Data") == 0)
		type = 'D';
	else if (strcmp(text, "Instruction") == 0)
		type = 'I';
	else if (strcmp(text, "Unified") == 0)
		type = 'U';
	else {
		xasprintf(cause, "%s: unknown cache type \"%.32s\"", path,
		    text);
		free(text);
		return (-EINVAL);
	}
	free(text);
	CACHE_PATH("id");
	rc = sysfs_read_int(path, &id, 1, cause);
	if (rc != 0 && rc != -ENOENT)
		return (rc);
	CACHE_PATH("size");
	if ((rc = sysfs_read(path, &text, cause)) == 0) {
		if (sysfs_parse_size(text, &size) != 0) {
			xasprintf(cause, "%s: bad size \"%.32s\"", path, text);
			free(text);
			return (-EINVAL);
		}
		free(text);
	} else if (rc != -ENOENT)
		return (rc);
	CACHE_PATH("shared_cpu_list");
	rc = sysfs_read_set(path, &cpus, 1, cause);
	if (rc == -ENOENT)
		rc = cpuset_add(&cpus, cpu);
	if (rc == 0)
		rc = topology_add_cache(s->t, cpu, level, type, id, size, &cpus,
		    cause);
	cpuset_clear(&cpus);
	return (rc);
#undef CACHE_PATH
}

static int
sysfs_caches(struct sysfs *s, const char *cpudir, int cpu, char **cause)
{
	char		 path[PATH_MAX];
	struct cpuset	 indexes = CPUSET_INITIALIZER;
	int		 index, rc;

	if (sysfs_path(path, "%s/cache", cpudir))
		return (sysfs_toolong(cpudir, cause));
	rc = sysfs_list(path, "index", &indexes, cause);
	if (rc == -ENOENT)
		rc = 0;
	CPUSET_FOREACH(index, &indexes) {
		if (rc != 0)
			break;
		rc = sysfs_cache(s, cpudir, cpu, index, cause);
	}
	cpuset_clear(&indexes);
	return (rc);
}

static int
sysfs_cpu(struct sysfs *s, const char *base, int id, char **cause)
{
	struct topo_cpu_info	 info;
	struct cpuset		 threads = CPUSET_INITIALIZER;
	char			 dir[PATH_MAX], path[PATH_MAX];
	char			*epp = NULL;
	long long		 khz;
	int			 rc, optional, on = 1;

	memset(&info, 0, sizeof info);
	info.id = id;
	if (sysfs_path(dir, "%s/cpu%d", base, id))
		return (sysfs_toolong(base, cause));

#define CPU_PATH(f) do {						\
	if (sysfs_path(path, "%s/%s", dir, f)) {			\
		rc = sysfs_toolong(dir, cause);				\
		goto out;						\
	}								\
} while (0)

	if (s->have_online)
		info.online = cpuset_has(&s->online, id);
	else {
		/* No cpu/online: the CPU's own file, absent for cpu0. */
		CPU_PATH("online");
		rc = sysfs_read_int(path, &on, 1, cause);
		if (rc != 0 && rc != -ENOENT)
			goto out;
		info.online = rc == -ENOENT || on != 0;
	}

	/* Offline CPUs may have lost their topology folder. */
	optional = !info.online;
	info.package = info.die = info.core = -1;
	CPU_PATH("topology/physical_package_id");
	/* Absent is fine only where optional; else the cause says so. */
	rc = sysfs_read_int(path, &info.package, optional, cause);
	if (rc != 0 && (rc != -ENOENT || !optional))
		goto out;
	CPU_PATH("topology/die_id");
	rc = sysfs_read_int(path, &info.die, 1, cause);
	if (rc != 0 && rc != -ENOENT)
		goto out;
	CPU_PATH("topology/core_id");
	rc = sysfs_read_int(path, &info.core, optional, cause);
	if (rc != 0 && (rc != -ENOENT || !optional))
		goto out;
	/* Some platforms say -1 for "no such level": one of them. */
	if (info.package < 0)
		info.package = info.online ? 0 : -1;
	if (info.die < 0)
		info.die = info.package >= 0 ? 0 : -1;
	info.cluster = -1;
	CPU_PATH("topology/cluster_id");
	rc = sysfs_read_int(path, &info.cluster, 1, cause);
	if (rc != 0 && rc != -ENOENT)
		goto out;
	CPU_PATH("topology/core_cpus_list");
	rc = sysfs_read_set(path, &threads, 1, cause);
	if (rc == -ENOENT) {
		CPU_PATH("topology/thread_siblings_list");
		rc = sysfs_read_set(path, &threads, 1, cause);
	}
	if (rc == 0)
		info.threads = &threads;
	else if (rc != -ENOENT)
		goto out;

	if (s->hybrid)
		info.kind = cpuset_has(&s->atom, id) ? CORE_KIND_EFFICIENT :
		    CORE_KIND_PERF;

	CPU_PATH("cpufreq/base_frequency");
	rc = sysfs_read_num(path, 0, LONG_MAX, &khz, 1, cause);
	if (rc == 0)
		info.base_khz = (unsigned long)khz;
	else if (rc != -ENOENT)
		goto out;
	CPU_PATH("cpufreq/energy_performance_preference");
	rc = sysfs_read(path, &epp, cause);
	if (rc != 0 && rc != -ENOENT)
		goto out;
	info.epp = epp;

	if ((rc = topology_add_cpu(s->t, &info, cause)) != 0)
		goto out;
	rc = sysfs_caches(s, dir, id, cause);
out:
	free(epp);
	cpuset_clear(&threads);
	return (rc);
#undef CPU_PATH
}

static int
sysfs_cpus(struct sysfs *s, char **cause)
{
	char		 base[PATH_MAX], path[PATH_MAX];
	struct cpuset	 ids = CPUSET_INITIALIZER, set = CPUSET_INITIALIZER;
	int		 id, rc;

	if (sysfs_path(base, "%s/sys/devices/system/cpu", s->root))
		return (sysfs_toolong(s->root, cause));
	if ((rc = sysfs_list(base, "cpu", &ids, cause)) != 0) {
		if (rc == -ENOENT)
			xasprintf(cause, "%s: missing", base);
		goto out;
	}
	if (cpuset_empty(&ids)) {
		xasprintf(cause, "%s: no cpuN folders", base);
		rc = -ENOENT;
		goto out;
	}

	if (sysfs_path(path, "%s/online", base)) {
		rc = sysfs_toolong(base, cause);
		goto out;
	}
	rc = sysfs_read_set(path, &s->online, 1, cause);
	if (rc == 0) {
		s->have_online = 1;
		CPUSET_FOREACH(id, &s->online) {
			if (!cpuset_has(&ids, id)) {
				xasprintf(cause, "%s: cpu %d is online but "
				    "%s/cpu%d is missing", path, id, base, id);
				rc = -ENOENT;
				goto out;
			}
		}
	} else if (rc != -ENOENT)
		goto out;

	/* Hybrid kinds: an E-core list makes every other CPU a P-core. */
	if (sysfs_path(path, "%s/sys/devices/cpu_atom/cpus", s->root)) {
		rc = sysfs_toolong(s->root, cause);
		goto out;
	}
	rc = sysfs_read_set(path, &s->atom, 1, cause);
	if (rc != 0 && rc != -ENOENT)
		goto out;
	if (sysfs_path(path, "%s/sys/devices/cpu_core/cpus", s->root)) {
		rc = sysfs_toolong(s->root, cause);
		goto out;
	}
	rc = sysfs_read_set(path, &set, 1, cause);
	if (rc != 0 && rc != -ENOENT)
		goto out;
	s->hybrid = !cpuset_empty(&s->atom);

	CPUSET_FOREACH(id, &ids) {
		if ((rc = sysfs_cpu(s, base, id, cause)) != 0)
			goto out;
	}

	if (sysfs_path(path, "%s/isolated", base)) {
		rc = sysfs_toolong(base, cause);
		goto out;
	}
	cpuset_zero(&set);
	rc = sysfs_read_set(path, &set, 1, cause);
	if (rc == 0)
		topology_set_isolated(s->t, &set);
	else if (rc == -ENOENT)
		rc = 0;
out:
	cpuset_clear(&ids);
	cpuset_clear(&set);
	return (rc);
}

/* MemTotal in bytes from a node's meminfo ("Node 0 MemTotal:  123 kB"). */
static int
sysfs_memtotal(const char *path, uint64_t *memory, char **cause)
{
	char			*text, *line, *p, *end;
	unsigned long long	 x;
	uint64_t		 unit = 1;
	int			 rc, found = 0;

	*memory = 0;
	if ((rc = sysfs_read(path, &text, cause)) != 0)
		return (rc);
	rc = -EINVAL;
	for (line = text; line != NULL && *line != '\0'; line = p) {
		if ((p = strchr(line, '\n')) != NULL)
			*p++ = '\0';
		if ((line = strstr(line, "MemTotal:")) == NULL)
			continue;
		found = 1;
		line += strlen("MemTotal:");
		while (*line == ' ' || *line == '\t')
			line++;
		if (!isdigit((unsigned char)*line))
			break;
		errno = 0;
		x = strtoull(line, &end, 10);
		if (errno != 0)
			break;
		while (*end == ' ' || *end == '\t')
			end++;
		if (strcmp(end, "kB") == 0)
			unit = 1024;
		else if (*end != '\0')
			break;
		if (x > UINT64_MAX / unit)
			break;
		*memory = x * unit;
		rc = 0;
		break;
	}
	if (rc != 0)
		xasprintf(cause, "%s: %s", path, found ?
		    "malformed MemTotal line" : "no MemTotal line");
	free(text);
	return (rc);
}

/* A distance file: one number per node, blank-separated. */
static int
sysfs_distance(const char *path, int nnodes, int **row, int *n, char **cause)
{
	char		*text, *tok, *save = NULL;
	long long	 v;
	int		 rc;

	*row = NULL;
	*n = 0;
	if ((rc = sysfs_read(path, &text, cause)) != 0)
		return (rc);
	*row = xcalloc(nnodes + 1, sizeof **row);
	for (tok = strtok_r(text, " \t\n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\n", &save)) {
		if (*n >= nnodes) {
			xasprintf(cause, "%s: more than %d distances for %d "
			    "nodes", path, nnodes, nnodes);
			rc = -EINVAL;
			break;
		}
		if (sysfs_parse_long(tok, 1, INT_MAX, &v) != 0) {
			xasprintf(cause, "%s: \"%.32s\" is not a distance",
			    path, tok);
			rc = -EINVAL;
			break;
		}
		(*row)[(*n)++] = (int)v;
	}
	if (rc == 0 && *n != nnodes) {
		xasprintf(cause, "%s: %d distances for %d nodes", path, *n,
		    nnodes);
		rc = -EINVAL;
	}
	if (rc != 0) {
		free(*row);
		*row = NULL;
		*n = 0;
	}
	free(text);
	return (rc);
}

static int
sysfs_nodes(struct sysfs *s, char **cause)
{
	char		 base[PATH_MAX], path[PATH_MAX];
	struct cpuset	 ids = CPUSET_INITIALIZER, cpus = CPUSET_INITIALIZER;
	uint64_t	 memory;
	int		*row = NULL, nrow, id, nnodes, rc;

	if (sysfs_path(base, "%s/sys/devices/system/node", s->root))
		return (sysfs_toolong(s->root, cause));
	rc = sysfs_list(base, "node", &ids, cause);
	if (rc == -ENOENT)
		rc = 0;	/* no NUMA: topology_finish() makes node 0 */
	nnodes = cpuset_count(&ids);
	CPUSET_FOREACH(id, &ids) {
		if (rc != 0)
			break;
		cpuset_zero(&cpus);
		if (sysfs_path(path, "%s/node%d/cpulist", base, id)) {
			rc = sysfs_toolong(base, cause);
			break;
		}
		if ((rc = sysfs_read_set(path, &cpus, 0, cause)) != 0)
			break;
		if (sysfs_path(path, "%s/node%d/meminfo", base, id)) {
			rc = sysfs_toolong(base, cause);
			break;
		}
		rc = sysfs_memtotal(path, &memory, cause);
		if (rc == -ENOENT)
			rc = 0;
		else if (rc != 0)
			break;
		if (sysfs_path(path, "%s/node%d/distance", base, id)) {
			rc = sysfs_toolong(base, cause);
			break;
		}
		rc = sysfs_distance(path, nnodes, &row, &nrow, cause);
		if (rc == -ENOENT)
			rc = 0;
		else if (rc != 0)
			break;
		rc = topology_add_node(s->t, id, &cpus, memory, row, nrow,
		    cause);
		free(row);
		row = NULL;
	}
	cpuset_clear(&ids);
	cpuset_clear(&cpus);
	return (rc);
}

int
sysfs_discover(const char *root, struct topology **tp, char **cause)
{
	struct sysfs	 s;
	char		*why = NULL;
	int		 rc;

	*tp = NULL;
	memset(&s, 0, sizeof s);
	s.root = (root == NULL || strcmp(root, "/") == 0) ? "" : root;
	cpuset_init(&s.online);
	cpuset_init(&s.atom);
	s.t = topology_new();

	if ((rc = sysfs_cpus(&s, cause)) != 0)
		goto fail;
	if ((rc = sysfs_nodes(&s, cause)) != 0)
		goto fail;
	if ((rc = topology_finish(s.t, &why)) != 0) {
		xasprintf(cause, "%s/sys: %s", root, why);
		free(why);
		goto fail;
	}
	cpuset_clear(&s.online);
	cpuset_clear(&s.atom);
	*tp = s.t;
	return (0);

fail:
	cpuset_clear(&s.online);
	cpuset_clear(&s.atom);
	topology_free(s.t);
	return (rc);
}
