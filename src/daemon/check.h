/*
 * A check job of `topoawarectl check`: the policy's live invariants
 * (invariants.h) at once, then, one file per loop turn, every held claim's
 * CDI spec against the bytes the daemon would write for it now, and the
 * saved state (state.json and the journal records after it, as a start
 * would read them) against the state in memory.
 */
#ifndef TOPOAWARE_CHECK_H
#define TOPOAWARE_CHECK_H

#include <jansson.h>

struct server;
struct check;

/*
 * Called once, from the loop, when the job is over, with its result
 * {"ok","checked","violations"} (the callee owns the reference). The
 * callee must not free the job inside the callback.
 */
typedef void	(*check_done_cb)(json_t *result, void *arg);

int	check_new(struct server *, check_done_cb, void *, struct check **,
	    char **);
/* Cancels a job still running; NULL is a no-op. */
void	check_free(struct check *);

#endif
