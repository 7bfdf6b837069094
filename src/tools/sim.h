/*
 * What the parts of topoaware-sim share: sim.c parses the command line
 * and shows the machine, sim_scenario.c replays a scenario of policy
 * events.
 */
#ifndef TOPOAWARE_SIM_H
#define TOPOAWARE_SIM_H

#include "config.h"
#include "topology.h"

/* Replay the JSON lines of path ("-" for stdin) against a new policy,
 * one reply line each on stdout. Returns the exit status: 0, or 1 when
 * the scenario cannot be read, the policy cannot be built or stdout
 * cannot be written (said on stderr). */
int	sim_scenario(const struct topology *, const struct config *,
	    const char *);

#endif
