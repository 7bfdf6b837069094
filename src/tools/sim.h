/*
 * What the parts of topoaware-sim share: sim.c parses the command line
 * and shows the machine, sim_scenario.c replays a scenario of policy
 * events, sim_replay.c a node's saved history.
 */
#ifndef TOPOAWARE_SIM_H
#define TOPOAWARE_SIM_H

#include <jansson.h>

#include "config.h"
#include "policy.h"
#include "topology.h"

/* The policy a scenario or a replay drives. */
struct sim {
	const struct topology	*topo;
	struct policy		*P;
};

/* Replay the JSON lines of path ("-" for stdin) against a new policy,
 * one reply line each on stdout. Returns the exit status: 0, or 1 when
 * the scenario cannot be read, the policy cannot be built or stdout
 * cannot be written (said on stderr). */
int	sim_scenario(const struct topology *, const struct config *,
	    const char *);

/* One event, a scenario line's object (never NULL), applied to the
 * sim: the reply line (new reference), {"ok":true,...} or
 * {"ok":false,"error":...}. */
json_t	*sim_answer(struct sim *, json_t *);

/*
 * A node's history rebuilt from its state folder (sim_replay.c): the
 * oldest snapshot kept and the journal records after it, each record's
 * event replayed on topology t and the grants it changed compared with
 * those recorded. cfg is the config when the snapshot holds none. With
 * explain, the explanation of that container or claim ("claim:<uid>")
 * after each record that changed it. One JSON line per record and a
 * summary on stdout; returns 0 when every record replays as recorded,
 * 3 when some do not, 1 when the folder cannot be read.
 */
int	sim_replay(const struct topology *t, const struct config *cfg,
	    const char *dir, const char *explain);

#endif
