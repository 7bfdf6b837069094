/*
 * The map of the machine for `topoawarectl map`: every CPU the topology
 * knows, where it sits and what holds it now.
 */
#ifndef TOPOAWARE_CPUMAP_H
#define TOPOAWARE_CPUMAP_H

#include <jansson.h>

#include "policy.h"

/*
 * {"cpus": [{"cpu", "package", "die", "node", "core", "thread", "kind",
 * ...}]} ascending by CPU id; a new reference. "core" is the sysfs
 * core_id and "thread" the CPU's place among its core's online threads
 * (node, core and thread are null for an offline CPU). "kind" is one of
 *   claim      a DRA claim's: "claim" (its UID), "pool", "containers"
 *              (those pinned to it)
 *   exclusive  a container's own: "container", "pool", "isolated"
 *   isolated   an isolated CPU nobody holds
 *   reserved   kept for kube-system and reserved containers: "containers"
 *   shared     a pool's shared CPU in use: "pool" (the deepest pool it is
 *              shared from), "containers" (every container running on it,
 *              from that pool and the pools above it)
 *   free       a shared CPU no container runs on: "pool"
 *   unmanaged  online but outside the CPUs the config lets the policy use
 *   offline
 * Built in one pass over the claims and containers, then one over the
 * pools; no container is looked at per CPU.
 */
json_t	*cpumap_json(const struct policy *);

#endif
