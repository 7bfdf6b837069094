/*
 * test_metrics.c: the daemon's counters and histograms (R-ADMIN `metrics`):
 * counts land on their label, values outside the fixed list go to "other"
 * (the label set never grows), histogram buckets are cumulative with the
 * 50us..5s bounds, and the text follows the Prometheus exposition format.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "xmalloc.h"

static void
setup(void)
{
	metrics_reset();
}

TestSuite(metrics, .init = setup);

/* The value of the sample line "name{labels} value", or -1 when absent. */
static long long
sample(const char *text, const char *series)
{
	const char	*p = text;
	size_t		 n = strlen(series);
	long long	 v;

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ') {
			if (sscanf(p + n + 1, "%lld", &v) == 1)
				return (v);
			return (-2);
		}
		p += n;
	}
	return (-1);
}

static long long
render_sample(const char *series)
{
	char		*text = metrics_render();
	long long	 v = sample(text, series);

	free(text);
	return (v);
}

Test(metrics, counters_start_at_zero_on_every_listed_label)
{
	cr_assert_eq(render_sample(
	    "topoaware_allocations_total{kind=\"container\"}"), 0);
	cr_assert_eq(render_sample(
	    "topoaware_allocations_total{kind=\"claim\"}"), 0);
	cr_assert_eq(render_sample(
	    "topoaware_reloads_total{result=\"refused\"}"), 0);
	cr_assert_eq(render_sample(
	    "topoaware_admin_requests_total{command=\"log-level\"}"), 0);
	cr_assert_eq(render_sample(
	    "topoaware_errors_total{kind=\"other\"}"), 0);
}

Test(metrics, counts_go_to_their_label)
{
	metrics_inc("allocations", "kind", "claim");
	metrics_inc("allocations", "kind", "claim");
	metrics_inc("allocations", "kind", "container");
	metrics_inc("releases", "kind", "claim");
	metrics_inc("refusals", "op", "create");
	metrics_inc("reloads", "result", "ok");
	metrics_inc("reloads", "result", "refused");
	metrics_inc("reloads", "result", "refused");
	metrics_inc("admin_requests", "command", "status");
	metrics_inc("errors", "kind", "state_write");

	cr_assert_eq(render_sample(
	    "topoaware_allocations_total{kind=\"claim\"}"), 2);
	cr_assert_eq(render_sample(
	    "topoaware_allocations_total{kind=\"container\"}"), 1);
	cr_assert_eq(render_sample(
	    "topoaware_releases_total{kind=\"claim\"}"), 1);
	cr_assert_eq(render_sample(
	    "topoaware_releases_total{kind=\"container\"}"), 0);
	cr_assert_eq(render_sample("topoaware_refusals_total{op=\"create\"}"),
	    1);
	cr_assert_eq(render_sample("topoaware_reloads_total{result=\"ok\"}"),
	    1);
	cr_assert_eq(render_sample(
	    "topoaware_reloads_total{result=\"refused\"}"), 2);
	cr_assert_eq(render_sample(
	    "topoaware_admin_requests_total{command=\"status\"}"), 1);
	cr_assert_eq(render_sample(
	    "topoaware_errors_total{kind=\"state_write\"}"), 1);
}

Test(metrics, nri_event_names_match_in_either_spelling)
{
	metrics_inc("nri_events", "event", "CreateContainer");
	metrics_inc("nri_events", "event", "create_container");
	metrics_inc("nri_events", "event", "Synchronize");
	cr_assert_eq(render_sample(
	    "topoaware_nri_events_total{event=\"create_container\"}"), 2);
	cr_assert_eq(render_sample(
	    "topoaware_nri_events_total{event=\"synchronize\"}"), 1);
	cr_assert_eq(render_sample(
	    "topoaware_nri_events_total{event=\"other\"}"), 0);
}

Test(metrics, unknown_label_values_go_to_other_and_add_no_series)
{
	char	*before, *after, *hostile;
	int	 i;

	before = metrics_render();
	metrics_inc("admin_requests", "command", "no-such-command");
	metrics_inc("admin_requests", "command", "status\"} 99\nfake 1");
	metrics_inc("admin_requests", "command", NULL);
	metrics_inc("admin_requests", "wrong-label", "status");
	hostile = xmalloc(100000);
	memset(hostile, 'x', 99999);
	hostile[99999] = '\0';
	for (i = 0; i < 1000; i++)
		metrics_inc("errors", "kind", hostile);
	free(hostile);
	after = metrics_render();

	cr_assert_eq(sample(after,
	    "topoaware_admin_requests_total{command=\"other\"}"), 4);
	cr_assert_eq(sample(after,
	    "topoaware_admin_requests_total{command=\"status\"}"), 0);
	cr_assert_eq(sample(after, "topoaware_errors_total{kind=\"other\"}"),
	    1000);
	cr_assert_null(strstr(after, "fake"));
	cr_assert_null(strstr(after, "no-such-command"));
	/* Same series, only the numbers changed. */
	cr_assert_eq(strlen(after), strlen(before) + 3,
	    "the exposition grew by more than the digits of 4 and 1000");
	free(before);
	free(after);
}

Test(metrics, counters_without_a_label)
{
	metrics_inc("nri_connects", NULL, NULL);
	metrics_inc("nri_connects", NULL, NULL);
	metrics_inc("nri_disconnects", NULL, NULL);
	cr_assert_eq(render_sample("topoaware_nri_connects_total"), 2);
	cr_assert_eq(render_sample("topoaware_nri_disconnects_total"), 1);
	cr_assert_eq(render_sample("topoaware_nri_syncs_total"), 0);
}

Test(metrics, unknown_metric_names_are_ignored)
{
	char	*before, *after;

	before = metrics_render();
	metrics_inc("no_such_metric", "kind", "claim");
	metrics_observe("no_such_histogram", 0.1);
	after = metrics_render();
	cr_assert_str_eq(before, after);
	cr_assert_null(strstr(after, "no_such"));
	free(before);
	free(after);
}

Test(metrics, histogram_buckets_are_cumulative)
{
	char	*text;

	/* Each on a bound is counted in that bucket (le is "<="). */
	metrics_observe("nri_request", 0.00004);	/* <= 50us */
	metrics_observe("nri_request", 0.00005);	/* <= 50us */
	metrics_observe("nri_request", 0.0003);		/* <= 500us */
	metrics_observe("nri_request", 0.002);		/* <= 2.5ms */
	metrics_observe("nri_request", 1);		/* <= 1s */
	metrics_observe("nri_request", 7);		/* +Inf only */
	metrics_observe("dra_request", 0.02);

	text = metrics_render();
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"5e-05\"}"), 2);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"0.0001\"}"), 2);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"0.00025\"}"), 2);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"0.0005\"}"), 3);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"0.001\"}"), 3);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"0.0025\"}"), 4);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"0.5\"}"), 4);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"1\"}"), 5);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"5\"}"), 5);
	cr_assert_eq(sample(text,
	    "topoaware_nri_request_seconds_bucket{le=\"+Inf\"}"), 6);
	cr_assert_eq(sample(text, "topoaware_nri_request_seconds_count"), 6);
	cr_assert_eq(sample(text, "topoaware_dra_request_seconds_count"), 1);
	cr_assert_eq(sample(text,
	    "topoaware_dra_request_seconds_bucket{le=\"0.01\"}"), 0);
	cr_assert_eq(sample(text,
	    "topoaware_dra_request_seconds_bucket{le=\"0.025\"}"), 1);
	cr_assert_not_null(strstr(text,
	    "\ntopoaware_nri_request_seconds_sum 8.00239\n"), "%s", text);
	free(text);
}

Test(metrics, histogram_ignores_nan_and_clamps_negative)
{
	char	*text;

	metrics_observe("dra_request", NAN);
	metrics_observe("dra_request", -1);
	text = metrics_render();
	cr_assert_eq(sample(text, "topoaware_dra_request_seconds_count"), 1);
	cr_assert_eq(sample(text,
	    "topoaware_dra_request_seconds_bucket{le=\"5e-05\"}"), 1);
	cr_assert_not_null(strstr(text,
	    "\ntopoaware_dra_request_seconds_sum 0\n"));
	free(text);
}

Test(metrics, reset_zeroes_everything)
{
	metrics_inc("allocations", "kind", "claim");
	metrics_observe("nri_request", 0.1);
	metrics_reset();
	cr_assert_eq(render_sample(
	    "topoaware_allocations_total{kind=\"claim\"}"), 0);
	cr_assert_eq(render_sample("topoaware_nri_request_seconds_count"), 0);
}

/*
 * Every line is a # HELP or # TYPE comment or a sample; each metric family
 * has HELP then TYPE before its samples, and the families named by the
 * brief are all there with the right types.
 */
Test(metrics, exposition_text_format)
{
	static const char *const families[][2] = {
		{ "topoaware_allocations_total", "counter" },
		{ "topoaware_releases_total", "counter" },
		{ "topoaware_refusals_total", "counter" },
		{ "topoaware_errors_total", "counter" },
		{ "topoaware_nri_events_total", "counter" },
		{ "topoaware_reloads_total", "counter" },
		{ "topoaware_admin_requests_total", "counter" },
		{ "topoaware_nri_request_seconds", "histogram" },
		{ "topoaware_dra_request_seconds", "histogram" },
		{ "topoaware_journal_sync_seconds", "histogram" },
		{ "topoaware_journal_bytes", "gauge" },
	};
	regex_t		 help, type, smp;
	char		*text, *line, *save, *want, family[128] = "";
	size_t		 i;
	int		 saw_help = 0, saw_type = 0, nsamples = 0;

	cr_assert_eq(regcomp(&help, "^# HELP (topoaware_[a-z_]+) [^ ].*$",
	    REG_EXTENDED), 0);
	cr_assert_eq(regcomp(&type, "^# TYPE (topoaware_[a-z_]+) "
	    "(counter|histogram|gauge)$", REG_EXTENDED), 0);
	cr_assert_eq(regcomp(&smp, "^topoaware_[a-z_]+"
	    "(\\{[a-z_]+=\"[^\"\\\\\n]*\"\\})? [0-9][0-9.e+-]*$",
	    REG_EXTENDED), 0);

	metrics_observe("nri_request", 0.001);
	text = metrics_render();
	cr_assert_gt(strlen(text), 0);
	cr_assert_eq(text[strlen(text) - 1], '\n');
	for (i = 0; i < sizeof families / sizeof families[0]; i++) {
		xasprintf(&want, "\n# TYPE %s %s\n", families[i][0],
		    families[i][1]);
		cr_assert(strstr(text, want) != NULL || strncmp(text, want + 1,
		    strlen(want + 1)) == 0, "missing %s", want + 1);
		free(want);
	}
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (regexec(&help, line, 0, NULL, 0) == 0) {
			sscanf(line, "# HELP %127s", family);
			saw_help = 1;
			saw_type = 0;
		} else if (regexec(&type, line, 0, NULL, 0) == 0) {
			cr_assert(saw_help, "TYPE before HELP: %s", line);
			cr_assert_eq(strncmp(line + 7, family, strlen(family)),
			    0, "TYPE of another family: %s", line);
			saw_type = 1;
		} else {
			cr_assert_eq(regexec(&smp, line, 0, NULL, 0), 0,
			    "not a sample line: \"%s\"", line);
			cr_assert(saw_type, "sample before TYPE: %s", line);
			cr_assert_eq(strncmp(line, family, strlen(family)), 0,
			    "sample %s outside its family %s", line, family);
			nsamples++;
		}
	}
	/* 7 counters with their labels + "other", 2 x (16 + 1 + 2) for
	 * histograms: comfortably more than 50 samples. */
	cr_assert_gt(nsamples, 50);
	regfree(&help);
	regfree(&type);
	regfree(&smp);
	free(text);
}

Test(metrics, gauges_are_set_not_counted)
{
	char	*text;

	metrics_reset();
	metrics_set("journal_bytes", 1234);
	metrics_set("journal_bytes", 99);
	metrics_set("no_such_gauge", 5);
	text = metrics_render();
	cr_assert_not_null(strstr(text, "\ntopoaware_journal_bytes 99\n"),
	    "%s", text);
	cr_assert_null(strstr(text, "no_such_gauge"));
	free(text);
	metrics_reset();
	text = metrics_render();
	cr_assert_not_null(strstr(text, "\ntopoaware_journal_bytes 0\n"));
	free(text);
}
