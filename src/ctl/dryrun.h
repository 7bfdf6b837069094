/*
 * `topoawarectl reload --dry-run [FILE]`: the request carrying FILE's
 * bytes, and the report printed as a table of what would move.
 */
#ifndef TOPOAWARE_DRYRUN_H
#define TOPOAWARE_DRYRUN_H

#include <jansson.h>

/* Exit status when the reload would be refused (0: it would not). */
#define DRYRUN_EXIT_REFUSED	3

/*
 * The request line for file (NULL: the daemon's own config; "-": standard
 * input), with its newline (caller frees), or NULL when file cannot be
 * read or is larger than the daemon takes, with why printed.
 */
char	*dryrun_request(const char *progname, const char *file);
/* Prints a report as text. */
void	dryrun_print(json_t *);
/* The exit status a report calls for. */
int	dryrun_status(json_t *);

#endif
