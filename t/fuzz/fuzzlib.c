/*
 * fuzzlib.c: what several fuzz targets need around their decoder (see
 * fuzzlib.h). A failure here is a broken harness, not a finding: abort.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "cpuset.h"
#include "policy.h"
#include "topology.h"
#include "fuzzlib.h"

static char		*fuzz_tmp;
static struct topology	*fuzz_topo;
static struct config	*fuzz_cfg;

char *
fuzz_str(const uint8_t *data, size_t len)
{
	char	*s;

	if ((s = malloc(len + 1)) == NULL)
		abort();
	if (len != 0)
		memcpy(s, data, len);
	s[len] = '\0';
	return (s);
}

/* Removes a tree made by the targets: plain files and folders only. */
static void
fuzz_rmtree(const char *path)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 sb;
	char		 sub[PATH_MAX];

	if (lstat(path, &sb) != 0)
		return;
	if (!S_ISDIR(sb.st_mode)) {
		unlink(path);
		return;
	}
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (snprintf(sub, sizeof sub, "%s/%s", path,
			    de->d_name) < (int)sizeof sub)
				fuzz_rmtree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

static void
fuzz_cleanup(void)
{
	if (fuzz_tmp != NULL)
		fuzz_rmtree(fuzz_tmp);
}

const char *
fuzz_dir(void)
{
	const char	*base;
	char		 tmpl[PATH_MAX];

	if (fuzz_tmp != NULL)
		return (fuzz_tmp);
	/* t/run-test's private folder, removed however the test ends. */
	if ((base = getenv("TOPOAWARE_TMP")) == NULL || *base == '\0')
		base = getenv("TMPDIR");
	if (base == NULL || *base == '\0')
		base = "/tmp";
	if (snprintf(tmpl, sizeof tmpl, "%s/topoaware-fuzz.XXXXXX", base) >=
	    (int)sizeof tmpl || mkdtemp(tmpl) == NULL) {
		perror("fuzz: mkdtemp");
		abort();
	}
	if ((fuzz_tmp = strdup(tmpl)) == NULL)
		abort();
	atexit(fuzz_cleanup);
	return (fuzz_tmp);
}

void
fuzz_write(const char *path, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		perror(path);
		abort();
	}
	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			perror(path);
			abort();
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0) {
		perror(path);
		abort();
	}
}

const struct topology *
fuzz_topology(void)
{
	struct topo_cpu_info	 info;
	struct cpuset		 threads = CPUSET_INITIALIZER;
	struct cpuset		 node = CPUSET_INITIALIZER;
	char			*cause = NULL;
	int			 p, c, k, id;

	if (fuzz_topo != NULL)
		return (fuzz_topo);
	fuzz_topo = topology_new();
	for (p = 0; p < 2; p++) {
		cpuset_zero(&node);
		for (c = 0; c < 2; c++) {
			cpuset_zero(&threads);
			for (k = 0; k < 2; k++)
				cpuset_add(&threads, p * 4 + c * 2 + k);
			for (k = 0; k < 2; k++) {
				id = p * 4 + c * 2 + k;
				memset(&info, 0, sizeof info);
				info.id = id;
				info.online = 1;
				info.package = p;
				info.cluster = -1;
				info.core = c;
				info.threads = &threads;
				if (topology_add_cpu(fuzz_topo, &info,
				    &cause) != 0)
					goto fail;
				cpuset_add(&node, id);
			}
		}
		if (topology_add_node(fuzz_topo, p, &node, 1ULL << 30, NULL, 0,
		    &cause) != 0)
			goto fail;
	}
	if (topology_finish(fuzz_topo, &cause) != 0)
		goto fail;
	cpuset_clear(&threads);
	cpuset_clear(&node);
	return (fuzz_topo);
fail:
	fprintf(stderr, "fuzz: synthetic machine: %s\n",
	    cause != NULL ? cause : "?");
	abort();
}

const struct config *
fuzz_config(void)
{
	if (fuzz_cfg == NULL)
		fuzz_cfg = config_new();
	return (fuzz_cfg);
}

void
fuzz_piece(const uint8_t *data, size_t len, int i, const uint8_t **p,
    size_t *plen)
{
	const uint8_t	*end = data + len, *nul;

	for (;;) {
		nul = memchr(data, '\0', (size_t)(end - data));
		if (i == 0) {
			*p = data;
			*plen = (nul != NULL ? nul : end) - data;
			return;
		}
		if (nul == NULL) {
			*p = end;
			*plen = 0;
			return;
		}
		data = nul + 1;
		i--;
	}
}

/* Empties the folder: the files, and what was moved aside. */
void
fuzz_tidy(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX];

	if ((d = opendir(dir)) == NULL)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >=
		    (int)sizeof path || unlink(path) != 0)
			abort();
	}
	closedir(d);
}


/*
 * Reinstates doc as a start does: a refusal must say why and yield nothing;
 * what is reinstated must save as text that reinstates again, or the next
 * start would fail on what this one wrote.
 */
void
fuzz_restore(json_t *doc)
{
	struct policy	*P = NULL, *Q = NULL;
	json_error_t	 err;
	json_t		*again;
	char		*text, *cause = NULL;

	if (policy_restore(fuzz_topology(), fuzz_config(), doc, &P,
	    &cause) != 0) {
		if (P != NULL || cause == NULL)
			abort();
		free(cause);
		return;
	}
	text = policy_save_text(P, NULL);
	if ((again = json_loads(text, 0, &err)) == NULL) {
		fprintf(stderr, "saved state is not JSON: %s\n", err.text);
		abort();
	}
	if (policy_restore(fuzz_topology(), fuzz_config(), again, &Q,
	    &cause) != 0) {
		fprintf(stderr, "saved state does not restore: %s\n%s\n",
		    cause, text);
		abort();
	}
	json_decref(again);
	free(text);
	policy_free(Q);
	policy_free(P);
}
