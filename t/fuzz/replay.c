/*
 * replay: runs inputs through a fuzz target's LLVMFuzzerTestOneInput
 * without libFuzzer, so that `make check` in any build (gcc included)
 * replays every seed and every saved finding. Usage:
 *   replay-NAME [--tap=FILE] [FILE|DIR ...]
 * Without operands it reads $TOPOAWARE_SRCDIR/t/fuzz/corpus/NAME, NAME
 * taken from the program's own name. One TAP line per input; a crash is
 * the sanitizer's or the signal's to report, and fails the test.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzlib.h"

static FILE	*tap;
static int	 ntests;

static int
name_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

static int
replay_file(const char *path)
{
	FILE		*f;
	uint8_t		*buf = NULL, *nbuf;
	size_t		 len = 0, size = 0, n;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(tap, "not ok %d - %s: %s\n", ++ntests, path,
		    strerror(errno));
		return (-1);
	}
	do {
		if (len == size) {
			size = size == 0 ? 4096 : size * 2;
			if ((nbuf = realloc(buf, size)) == NULL) {
				fclose(f);
				free(buf);
				fprintf(tap, "not ok %d - %s: out of memory\n",
				    ++ntests, path);
				return (-1);
			}
			buf = nbuf;
		}
		n = fread(buf + len, 1, size - len, f);
		len += n;
	} while (n != 0);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		fprintf(tap, "not ok %d - %s: read error\n", ++ntests, path);
		return (-1);
	}
	fclose(f);
	/* The harness sees exactly len bytes: a copy of that size lets
	 * ASan catch a read past the end. */
	if ((nbuf = malloc(len != 0 ? len : 1)) == NULL)
		abort();
	memcpy(nbuf, buf, len);
	free(buf);
	fflush(tap);
	LLVMFuzzerTestOneInput(nbuf, len);
	free(nbuf);
	fprintf(tap, "ok %d - %s\n", ++ntests, path);
	fflush(tap);
	return (0);
}

static int
replay(const char *path)
{
	struct stat	 sb;
	DIR		*d;
	struct dirent	*de;
	char		**names = NULL, **nn, sub[PATH_MAX];
	size_t		 n = 0, i;
	int		 rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(tap, "not ok %d - %s: %s\n", ++ntests, path,
		    strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(sb.st_mode))
		return (replay_file(path));
	if ((d = opendir(path)) == NULL) {
		fprintf(tap, "not ok %d - %s: %s\n", ++ntests, path,
		    strerror(errno));
		return (-1);
	}
	/* Sorted, so that a run reads the same way every time. */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((nn = realloc(names, (n + 1) * sizeof *names)) == NULL ||
		    (nn[n] = strdup(de->d_name)) == NULL)
			abort();
		names = nn;
		n++;
	}
	closedir(d);
	if (n != 0)
		qsort(names, n, sizeof *names, name_cmp);
	for (i = 0; i < n; i++) {
		if (snprintf(sub, sizeof sub, "%s/%s", path, names[i]) >=
		    (int)sizeof sub) {
			fprintf(tap, "not ok %d - %s: name too long\n",
			    ++ntests, names[i]);
			rc = -1;
		} else if (replay(sub) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return (rc);
}

int
main(int argc, char **argv)
{
	const char	*name, *srcdir;
	char		 dir[PATH_MAX];
	int		 i, rc = 0, nfiles = 0;

	tap = stdout;
	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--tap=", 6) == 0) {
			if ((tap = fopen(argv[i] + 6, "w")) == NULL) {
				perror(argv[i] + 6);
				return (99);
			}
		}
	}
	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--tap=", 6) == 0)
			continue;
		nfiles++;
		if (replay(argv[i]) != 0)
			rc = 1;
	}
	if (nfiles == 0) {
		if ((name = strrchr(argv[0], '/')) != NULL)
			name++;
		else
			name = argv[0];
		if (strncmp(name, "replay-", 7) == 0)
			name += 7;
		if ((srcdir = getenv("TOPOAWARE_SRCDIR")) == NULL)
			srcdir = ".";
		if (snprintf(dir, sizeof dir, "%s/t/fuzz/corpus/%s", srcdir,
		    name) >= (int)sizeof dir) {
			fprintf(tap, "Bail out! corpus path too long\n");
			return (99);
		}
		if (replay(dir) != 0)
			rc = 1;
	}
	if (ntests == 0)
		fprintf(tap, "not ok 1 - no inputs\n");
	fprintf(tap, "1..%d\n", ntests != 0 ? ntests : 1);
	if (tap != stdout)
		fclose(tap);
	return (ntests == 0 ? 1 : rc);
}
