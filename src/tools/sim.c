/*
 * topoaware-sim: the policy offline. It discovers a machine from a sysfs
 * tree, applies a config file and prints what topoawared would see: the
 * topology, the pool tree or the DRA devices, as JSON; or it replays a
 * scenario of policy events (sim_scenario.c).
 */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "dradev.h"
#include "pool.h"
#include "nrtdoc.h"
#include "policy.h"
#include "sim.h"
#include "slicedoc.h"
#include "sysfs.h"
#include "topology.h"
#include "view.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: topoaware-sim [--sysfs-root DIR] [--config FILE] "
	    "--show topology|pools|devices|slices|nrt\n"
	    "       topoaware-sim [--sysfs-root DIR] [--config FILE] "
	    "SCENARIO|-\n"
	    "       topoaware-sim [--sysfs-root DIR] [--config FILE] "
	    "--replay STATE-DIR [--explain ID]\n"
	    "\n"
	    "  --sysfs-root DIR  the folder that holds sys/ (default /)\n"
	    "  --config FILE     a topoawared config file (default: the "
	    "embedded defaults)\n"
	    "  --show WHAT       print the topology, the pool tree, the DRA "
	    "devices,\n"
	    "                    the ResourceSlices or the NodeResourceTopology "
	    "content as JSON\n"
	    "  --node-name NAME  the node of --show slices (default node)\n"
	    "  SCENARIO          a file of JSON lines, one policy event each "
	    "(- for stdin);\n"
	    "                    one JSON reply line each on stdout\n"
	    "  --replay DIR      rebuild a node's history from its state "
	    "folder: the oldest\n"
	    "                    snapshot kept and the journal after it, each "
	    "record's event\n"
	    "                    replayed and compared with what was recorded\n"
	    "  --explain ID      with --replay: explain container ID (or "
	    "claim:UID) after\n"
	    "                    each record that changed it\n"
	    "  -V, --version     print the version\n"
	    "  -h, --help        print this help\n");
}

static int
load_config(const char *path, struct config **out)
{
	json_t		*doc;
	json_error_t	 err;
	char		*cause = NULL;

	if (path == NULL) {
		*out = config_new();
		return (0);
	}
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (doc == NULL) {
		fprintf(stderr, "topoaware-sim: %s:%d:%d: %s\n", path, err.line,
		    err.column, err.text);
		return (-1);
	}
	if (config_from_json(doc, out, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: %s: %s\n", path, cause);
		free(cause);
		json_decref(doc);
		return (-1);
	}
	json_decref(doc);
	return (0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "show", required_argument, NULL, 's' },
		{ "node-name", required_argument, NULL, 'n' },
		{ "replay", required_argument, NULL, 'R' },
		{ "explain", required_argument, NULL, 'E' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char		*root = "/", *cfgpath = NULL, *show = NULL;
	const char		*scenario = NULL, *node = "node";
	const char		*replay = NULL, *explain = NULL;
	static const char *const shows[] = {
		"topology", "pools", "devices", "slices", "nrt", NULL
	};
	struct policy		*P = NULL;
	struct slicedoc_pool	 sp;
	int			 i;
	struct topology		*t = NULL;
	struct config		*cfg = NULL;
	struct pool_tree	*pt = NULL;
	struct cpuset		 allowed = CPUSET_INITIALIZER;
	struct cpuset		 reserved = CPUSET_INITIALIZER;
	struct dradev		*devs = NULL;
	json_t			*out = NULL;
	char			*cause = NULL;
	int			 ch, ndevs = 0, rc = 1;

	while ((ch = getopt_long(argc, argv, "Vh", opts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			root = optarg;
			break;
		case 'c':
			cfgpath = optarg;
			break;
		case 's':
			show = optarg;
			break;
		case 'n':
			node = optarg;
			break;
		case 'R':
			replay = optarg;
			break;
		case 'E':
			explain = optarg;
			break;
		case 'V':
			printf("topoaware-sim %s\n", PACKAGE_VERSION);
			return (0);
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (replay != NULL && (show != NULL || optind != argc)) {
		usage(stderr);
		return (2);
	}
	if (explain != NULL && replay == NULL) {
		fprintf(stderr, "topoaware-sim: --explain goes with --replay "
		    "(a scenario has the op \"explain\")\n");
		return (2);
	}
	if (show == NULL && replay == NULL && optind == argc - 1)
		scenario = argv[optind++];
	for (i = 0; show != NULL && shows[i] != NULL; i++)
		if (strcmp(show, shows[i]) == 0)
			break;
	if (optind != argc || (show == NULL && scenario == NULL &&
	    replay == NULL) ||
	    (show != NULL && shows[i] == NULL)) {
		usage(stderr);
		return (2);
	}

	if (sysfs_discover(root, &t, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: %s\n", cause);
		goto out;
	}
	if (show != NULL && strcmp(show, "topology") == 0) {
		out = view_topology(t);
		goto print;
	}
	if (load_config(cfgpath, &cfg) != 0)
		goto out;
	if (scenario != NULL) {
		rc = sim_scenario(t, cfg, scenario);
		goto out;
	}
	if (replay != NULL) {
		rc = sim_replay(t, cfg, replay, explain);
		goto out;
	}
	if (config_resolve_cpus(cfg, t, &allowed, &reserved, &cause) != 0 ||
	    pool_tree_new(t, &allowed, &reserved, &pt, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: %s\n", cause);
		goto out;
	}
	if (strcmp(show, "pools") == 0)
		out = view_pools(pt);
	else if (strcmp(show, "nrt") == 0) {
		if (policy_new(t, cfg, &P, &cause) != 0) {
			fprintf(stderr, "topoaware-sim: %s\n", cause);
			goto out;
		}
		out = nrtdoc_build(P);
	} else if (strcmp(show, "slices") == 0) {
		/* What topoawared would publish first, without an owner. */
		ndevs = dradev_list(pt, &devs);
		memset(&sp, 0, sizeof sp);
		sp.driver = cfg->dra_driver_name;
		sp.node = node;
		sp.generation = 1;
		sp.devs = devs;
		sp.ndevs = ndevs;
		out = json_array();
		for (i = 0; i < slicedoc_count(ndevs); i++)
			json_array_append_new(out, slicedoc_build(&sp, i));
	} else {
		ndevs = dradev_list(pt, &devs);
		out = view_devices(devs, ndevs);
	}
print:
	if (json_dumpf(out, stdout, JSON_INDENT(2)) != 0 ||
	    fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
		fprintf(stderr, "topoaware-sim: cannot write: %s\n",
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(cause);
	json_decref(out);
	dradev_free_list(devs, ndevs);
	policy_free(P);
	pool_tree_free(pt);
	config_free(cfg);
	topology_free(t);
	cpuset_clear(&allowed);
	cpuset_clear(&reserved);
	return (rc);
}
