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

/*
 * topoawarectl(8) names every family the metrics text has: a counter
 * topoaware_NAME_total and a histogram topoaware_NAME_seconds by NAME, a
 * gauge by its whole name, each in bold (.B or .BR).
 */
Test(metrics, every_family_is_in_the_man_page)
{
	const char	*src = getenv("TOPOAWARE_SRCDIR");
	char		*text, *line, *save, *page, *path, *want, name[128];
	char		 kind[16];
	size_t		 n, len;
	FILE		*f;
	int		 families = 0;

	cr_assert(src != NULL, "TOPOAWARE_SRCDIR is not set");
	xasprintf(&path, "%s/man/topoawarectl.8", src);
	cr_assert_not_null(f = fopen(path, "r"), "%s", path);
	page = xmalloc(1 << 20);
	n = fread(page, 1, (1 << 20) - 1, f);
	page[n] = '\0';
	fclose(f);
	text = metrics_render();
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "# TYPE topoaware_%127s %15s", name, kind) !=
		    2)
			continue;
		len = strlen(name);
		if (strcmp(kind, "counter") == 0 && len > 6)
			name[len - 6] = '\0';		/* _total */
		else if (strcmp(kind, "histogram") == 0 && len > 8)
			name[len - 8] = '\0';		/* _seconds */
		else if (strcmp(kind, "gauge") == 0) {
			memmove(name + 10, name, len + 1);
			memcpy(name, "topoaware_", 10);
		}
		xasprintf(&want, "\n.B %s", name);
		if (strstr(page, want) == NULL) {
			free(want);
			xasprintf(&want, "\n.BR %s ", name);
		}
		cr_assert(strstr(page, want) != NULL, "topoawarectl(8) does "
		    "not name the %s %s", kind, name);
		free(want);
		families++;
	}
	cr_assert_gt(families, 20);
	free(text);
	free(page);
	free(path);
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

/* Two pools as policy_pools_json gives them, with the memory key the
 * memory accounting adds only when asked to. */
static json_t *
pools_doc(int memory)
{
	json_t	*pools;

	pools = json_loads("[{\"name\": \"NUMA node #0\", \"cpus\": \"0-3\", "
	    "\"isolated\": \"3\", \"sharable\": \"1-2\", \"reserved\": \"0\", "
	    "\"mems\": \"0\", \"freeIsolated\": \"\", \"freeSharable\": \"2\", "
	    "\"allocatableShared\": 1500, \"grantedShared\": 500, "
	    "\"grantedReserved\": 250}, "
	    "{\"name\": \"root \\\"x\\\\y\\nz\", \"cpus\": \"0-7\", "
	    "\"isolated\": \"3\", \"sharable\": \"1-2,4-7\", \"reserved\": \"0\", "
	    "\"mems\": \"0-1\", \"freeIsolated\": \"\", \"freeSharable\": "
	    "\"2,4-7\", \"allocatableShared\": 5000, \"grantedShared\": 0, "
	    "\"grantedReserved\": 0}]", 0, NULL);
	cr_assert_not_null(pools);
	if (memory) {
		json_object_set_new(json_array_get(pools, 0), "memory",
		    json_pack("{s:{s:I, s:I}, s:{s:I, s:I}}",
		    "dram", "total", (json_int_t)4096, "free", (json_int_t)1024,
		    "pmem", "total", (json_int_t)8192, "free", (json_int_t)8192));
		json_object_set_new(json_array_get(pools, 1), "memory",
		    json_pack("{s:{s:I, s:I}}", "dram", "total",
		    (json_int_t)8192, "free", (json_int_t)5120));
	}
	return (pools);
}

/* A container with exclusive CPU 3, one on shared CPUs, a claim of CPU 1. */
static json_t *
grants_doc(void)
{
	json_t	*g = json_loads("[{\"id\": \"c1\", \"cpus\": \"3\", "
	    "\"mems\": \"0\", \"pool\": \"NUMA node #0\"}, "
	    "{\"id\": \"c2\", \"cpus\": \"2\", \"mems\": \"0\", "
	    "\"pool\": \"NUMA node #0\"}, "
	    "{\"claim\": \"u1\", \"cpus\": \"1\", \"mems\": \"\", "
	    "\"pool\": \"NUMA node #0\"}]", 0, NULL);

	cr_assert_not_null(g);
	return (g);
}

static double
fsample(const char *text, const char *series)
{
	const char	*p = text;
	size_t		 n = strlen(series);
	double		 v;

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ' &&
		    sscanf(p + n + 1, "%lf", &v) == 1)
			return (v);
		p += n;
	}
	return (-1);
}

#define Z	"nri_policy_topologyaware_zone_"
#define N0	"{zone=\"NUMA node #0\""
/* The second pool's name, escaped. */
#define R	"{zone=\"root \\\"x\\\\y\\nz\""

Test(metrics, policy_gauges)
{
	json_t	*pools = pools_doc(0), *grants = grants_doc();
	char	*text = metrics_render_policy(pools, grants);

	cr_assert_eq(fsample(text, Z "cpu_capacity_cores" N0 ",cpus=\"0-3\","
	    "mems=\"0\"}"), 4, "%s", text);
	cr_assert_eq(fsample(text, Z "cpu_capacity_cores" R ",cpus=\"0-7\","
	    "mems=\"0-1\"}"), 8, "%s", text);
	/* Free sharable and reserved: Go's shared pool. */
	cr_assert_eq(fsample(text, Z "cpu_shared_capacity_cores" N0 "}"), 2);
	cr_assert_eq(fsample(text, Z "cpu_shared_assigned_cores" N0 "}"),
	    0.75);
	cr_assert_eq(fsample(text, Z "cpu_shared_available_cores" N0 "}"),
	    1.5);
	cr_assert_eq(fsample(text, Z "container_count" N0 "}"), 2);
	cr_assert_eq(fsample(text, Z "container_count" R "}"), 0);
	cr_assert_eq(fsample(text, "topoaware_pool_reserved_cpus" N0 "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_isolated_cpus" N0 "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_exclusive_cpus" N0 "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_claimed_cpus" N0 "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_claimed_cpus" R "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_free_cpus" N0 "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_free_cpus" R "}"), 5);
	cr_assert_eq(fsample(text, "topoaware_pool_exclusive_cpus" R "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_pool_claims" N0 "}"), 1);
	cr_assert_eq(fsample(text, "topoaware_containers"), 2);
	cr_assert_eq(fsample(text, "topoaware_claims"), 1);
	cr_assert_eq(fsample(text, "topoaware_build_info{version=\""
	    PACKAGE_VERSION "\"}"), 1);
	/* No memory key, no memory gauges at all. */
	cr_assert_null(strstr(text, "_mem_"), "%s", text);
	cr_assert_null(strstr(text, "memory"), "%s", text);
	/* Never a container or claim as a label. */
	cr_assert_null(strstr(text, "c1"));
	cr_assert_null(strstr(text, "u1"));
	free(text);
	json_decref(pools);
	json_decref(grants);
}

Test(metrics, memory_gauges_when_present)
{
	json_t	*pools = pools_doc(1), *grants = grants_doc();
	char	*text = metrics_render_policy(pools, grants);

	cr_assert_eq(fsample(text, Z "mem_capacity_bytes" N0 ",mems=\"0\"}"),
	    12288, "%s", text);
	cr_assert_eq(fsample(text, Z "mem_available_bytes" N0 ",mems=\"0\"}"),
	    9216);
	cr_assert_eq(fsample(text, Z "mem_assigned_bytes" N0 ",mems=\"0\"}"),
	    3072);
	cr_assert_eq(fsample(text, Z "mem_capacity_bytes" R ",mems=\"0-1\"}"),
	    8192);
	cr_assert_eq(fsample(text, "topoaware_pool_memory_total_bytes" N0
	    ",type=\"dram\"}"), 4096);
	cr_assert_eq(fsample(text, "topoaware_pool_memory_free_bytes" N0
	    ",type=\"pmem\"}"), 8192);
	cr_assert_eq(fsample(text, "topoaware_pool_memory_free_bytes" R
	    ",type=\"dram\"}"), 5120);
	/* Types a pool lacks are absent, not 0. */
	cr_assert_null(strstr(text, R ",type=\"pmem\""));
	cr_assert_null(strstr(text, "type=\"hbm\""));
	free(text);
	json_decref(pools);
	json_decref(grants);
}

/* Every family's samples follow its one HELP and TYPE, as the format
 * wants, and every line is a comment or a sample. */
Test(metrics, exposition_well_formed)
{
	json_t		*pools = pools_doc(1), *grants = grants_doc();
	char		*text = metrics_exposition(pools, grants), *line, *save;
	char		 family[128] = "", name[128];
	regex_t		 re;
	size_t		 n;

	cr_assert_eq(regcomp(&re, "^[a-zA-Z_:][a-zA-Z0-9_:]*"
	    "(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\",?)*\\})? "
	    "[-+0-9.eInfa]+$", REG_EXTENDED | REG_NOSUB), 0);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "# TYPE %127s", name) == 1) {
			cr_assert_str_neq(name, family, "%s twice", name);
			snprintf(family, sizeof family, "%s", name);
			continue;
		}
		if (line[0] == '#')
			continue;
		cr_assert_eq(regexec(&re, line, 0, NULL, 0), 0, "%s", line);
		n = strlen(family);
		cr_assert(strncmp(line, family, n) == 0, "%s not in %s", line,
		    family);
	}
	regfree(&re);
	free(text);
	json_decref(pools);
	json_decref(grants);
}
