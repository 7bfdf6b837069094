/*
 * dryrun.c owns topoawarectl's side of `reload --dry-run [FILE]`: FILE is
 * read whole, refused here when larger than the daemon takes (so the
 * operator hears why before anything is sent), sent in base64 (any bytes,
 * which the daemon's parser judges), and the report printed: the
 * containers and claims that would move, from where to where, or why the
 * reload would be refused.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adminproto.h"
#include "dryrun.h"
#include "xmalloc.h"

/* FILE whole into *buf: its length, or -1 with why printed. */
static long
read_config(const char *progname, const char *file, char **buf)
{
	FILE	*f;
	size_t	 n;
	char	*b;
	int	 err;

	*buf = NULL;
	if (strcmp(file, "-") == 0)
		f = stdin;
	else if ((f = fopen(file, "rb")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, file,
		    strerror(errno));
		return (-1);
	}
	/* One byte more than the limit tells a file that is too big. */
	b = xmalloc(ADMINPROTO_MAX_CONFIG + 1);
	n = fread(b, 1, ADMINPROTO_MAX_CONFIG + 1, f);
	err = ferror(f) ? errno : 0;
	if (f != stdin)
		fclose(f);
	if (err != 0) {
		fprintf(stderr, "%s: %s: %s\n", progname, file, strerror(err));
		free(b);
		return (-1);
	}
	if (n > ADMINPROTO_MAX_CONFIG) {
		fprintf(stderr, "%s: %s: more than %d bytes; topoawared takes "
		    "a config of at most %d bytes (1 MiB), as it reads its "
		    "config file, so nothing was sent\n", progname,
		    strcmp(file, "-") == 0 ? "standard input" : file,
		    ADMINPROTO_MAX_CONFIG, ADMINPROTO_MAX_CONFIG);
		free(b);
		return (-1);
	}
	*buf = b;
	return ((long)n);
}

char *
dryrun_request(const char *progname, const char *file)
{
	const char	*args[2] = { "--dry-run", NULL };
	char		*text, *req;
	long		 n;

	if (file == NULL)
		return (adminproto_request("reload", args, 1));
	if ((n = read_config(progname, file, &text)) < 0)
		return (NULL);
	args[1] = adminproto_b64(text, (size_t)n);
	free(text);
	req = adminproto_request("reload", args, 2);
	free((char *)args[1]);
	if (req != NULL && strlen(req) > ADMINPROTO_MAX_LINE + 1) {
		/* Cannot be with the limit above; said rather than sent. */
		fprintf(stderr, "%s: the request is longer than %d bytes\n",
		    progname, ADMINPROTO_MAX_LINE);
		free(req);
		return (NULL);
	}
	return (req);
}

static const char *
field(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	if (o == NULL || json_is_null(o))
		return ("-");
	/* CPUs or memory nodes the runtime is not told of. */
	if (json_is_null(v))
		return ("(left alone)");
	if (!json_is_string(v))
		return ("?");
	return (*json_string_value(v) == '\0' ? "-" : json_string_value(v));
}

#define NCOLS	7

/* One row of cells, the widths grown to fit. */
static void
widen(size_t *w, const char *const *row)
{
	size_t	i;

	for (i = 0; i < NCOLS; i++)
		if (strlen(row[i]) > w[i])
			w[i] = strlen(row[i]);
}

static void
put_row(const size_t *w, const char *const *row)
{
	size_t	i;

	for (i = 0; i + 1 < NCOLS; i++)
		printf("%-*s  ", (int)w[i], row[i]);
	printf("%s\n", row[NCOLS - 1]);
}

/* The moves of one kind as a table: key, from (cpus, mems, pool), to. */
static void
print_moves(json_t *moves, const char *heading, const char *key)
{
	const char	*head[NCOLS] = { heading, "FROM CPUS", "MEMS", "POOL",
			    "TO CPUS", "MEMS", "POOL" };
	const char	*row[NCOLS];
	size_t		 w[NCOLS] = { 0 }, i;
	json_t		*m, *from, *to;
	int		 pass;

	widen(w, head);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)
			put_row(w, head);
		json_array_foreach(moves, i, m) {
			from = json_object_get(m, "from");
			to = json_object_get(m, "to");
			row[0] = json_is_string(json_object_get(m, key)) ?
			    json_string_value(json_object_get(m, key)) : "?";
			row[1] = field(from, "cpus");
			row[2] = field(from, "mems");
			row[3] = field(from, "pool");
			row[4] = field(to, "cpus");
			row[5] = field(to, "mems");
			row[6] = field(to, "pool");
			if (pass == 0)
				widen(w, row);
			else
				put_row(w, row);
		}
	}
}

void
dryrun_print(json_t *r)
{
	json_t		*ctrs = json_object_get(r, "containers");
	json_t		*claims = json_object_get(r, "claims");
	json_t		*refused = json_object_get(r, "refused"), *v;
	json_int_t	 gen = json_integer_value(json_object_get(r,
			    "generation"));
	size_t		 i;

	if (json_is_string(refused)) {
		printf("would be refused: %s\n", json_string_value(refused));
		printf("configuration generation %lld stays\n",
		    (long long)gen);
		return;
	}
	if (json_is_true(json_object_get(r, "unchanged"))) {
		printf("no change: this is the config in force "
		    "(generation %lld)\n", (long long)gen);
		return;
	}
	printf("would apply: configuration generation %lld would become "
	    "%lld\n", (long long)gen, (long long)gen + 1);
	json_array_foreach(json_object_get(r, "warnings"), i, v)
		printf("warning: %s\n", json_is_string(v) ?
		    json_string_value(v) : "?");
	if (json_array_size(ctrs) == 0)
		printf("no container would move\n");
	else
		print_moves(ctrs, "CONTAINER", "id");
	/* Claims are reinstated first, with their CPUs, or it is refused. */
	if (json_array_size(claims) == 0)
		printf("no claim would move: claims keep their CPUs\n");
	else
		print_moves(claims, "CLAIM", "claim");
}

int
dryrun_status(json_t *r)
{
	return (json_is_string(json_object_get(r, "refused")) ?
	    DRYRUN_EXIT_REFUSED : 0);
}
