/*
 * Counters and latency histograms of the daemon, rendered as Prometheus
 * text for `topoawarectl metrics`. Names are fixed here; labels are short
 * words of ours, never peer strings.
 */
#ifndef TOPOAWARE_METRICS_H
#define TOPOAWARE_METRICS_H

/* topoaware_<name>_total{<label>="<value>"} += 1; label may be NULL. */
void	metrics_inc(const char *name, const char *label, const char *value);
/* topoaware_<name>_seconds histogram. */
void	metrics_observe(const char *name, double seconds);
/* topoaware_<name> gauge = value. */
void	metrics_set(const char *name, double value);
/* The whole text exposition (caller frees). */
char	*metrics_render(void);
void	metrics_reset(void);

#endif
