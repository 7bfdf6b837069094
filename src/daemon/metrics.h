/*
 * Counters and latency histograms of the daemon and the gauges of the
 * policy, rendered as Prometheus text for `topoawarectl metrics` and the
 * HTTP endpoint's /metrics. Names are fixed here; labels are short words
 * of ours or pool names, never peer strings.
 */
#ifndef TOPOAWARE_METRICS_H
#define TOPOAWARE_METRICS_H

#include <jansson.h>

/* topoaware_<name>_total{<label>="<value>"} += 1; label may be NULL. */
void	metrics_inc(const char *name, const char *label, const char *value);
/* topoaware_<name>_seconds histogram. */
void	metrics_observe(const char *name, double seconds);
/* topoaware_<name> gauge = value. */
void	metrics_set(const char *name, double value);
/* The counters, histograms and gauges above as text (caller frees). */
char	*metrics_render(void);
/*
 * The gauges of the policy (caller frees): per pool from pools (what
 * policy_pools_json gives, with its "memory" of each type when present)
 * and grants (policy_grants_json), under the Go topology-aware policy's
 * names where it has one, and the build info. Labels name pools and
 * memory types only, never a container or a claim.
 */
char	*metrics_render_policy(const json_t *pools, const json_t *grants);
/* metrics_render() then metrics_render_policy(): what is served. */
char	*metrics_exposition(const json_t *pools, const json_t *grants);
void	metrics_reset(void);

#endif
