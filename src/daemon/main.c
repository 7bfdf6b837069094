/*
 * main.c owns topoawared's command line: options, `-n`, `--version`,
 * `--help`, then hands over to the server and runs the loop.
 */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "k8sname.h"
#include "log.h"
#include "postings.h"
#include "server.h"
#include "watch.h"

static void
usage(FILE *f)
{
	fprintf(f,
"usage: topoawared [-fnvV] [--sysfs-root DIR] [--config FILE] [--state-dir DIR]\n"
"                  [--nri-socket PATH] [--nri-index N] [--admin-socket PATH]\n"
"                  [--kubelet-dir DIR] [--cdi-dir DIR] [--kubeconfig FILE]\n"
"                  [--node-name NAME] [--nri-reconnect-max MS]\n"
"                  [--config-debounce MS] [--api-timeout MS] [--api-retries N]\n"
"                  [--api-backoff MS] [--slice-resync MS] [--nrt-debounce MS]\n"
"                  [--config-source file|cluster] [--config-namespace NS]\n"
"                  [--config-group-label LABEL]\n"
"\n"
"  -f                    stay in the foreground and log to stderr\n"
"  -v                    log more (repeat for debug)\n"
"  -n                    check the config against this machine and exit\n"
"  -V, --version         print the version and exit\n"
"  --sysfs-root DIR      the folder that holds sys/ (default /)\n"
"  --config FILE         the config (default /etc/topoaware/config.json)\n"
"  --config-source SRC   file (the default: --config) or cluster (the\n"
"                        TopologyAwarePolicy objects of the API server)\n"
"  --config-namespace NS the objects' namespace (default kube-system)\n"
"  --config-group-label LABEL  the Node label naming its group\n"
"                        (default config.nri/group)\n"
"  --state-dir DIR       saved state (default /var/lib/topoaware)\n"
"  --nri-socket PATH     the runtime's NRI socket (default /var/run/nri/nri.sock)\n"
"  --nri-index N         the plugin index, 00-99 (default 90)\n"
"  --admin-socket PATH   the admin socket (default /run/topoaware/admin.sock)\n"
"  --kubelet-dir DIR     the kubelet's folder (default /var/lib/kubelet)\n"
"  --cdi-dir DIR         where CDI specs go (default /var/run/cdi)\n"
"  --kubeconfig FILE     the API server's kubeconfig (default: in-cluster)\n"
"  --node-name NAME      this node (default $NODE_NAME, else the host name\n"
"                        in lower case)\n"
"  --nri-reconnect-max MS  cap of the reconnect backoff (default 30000)\n"
"  --config-debounce MS  quiet period before a changed config is reloaded\n"
"                        (default 300)\n"
"  --api-timeout MS      API server timeout per attempt (default 5000)\n"
"  --api-retries N       API attempts after the first (default 3)\n"
"  --api-backoff MS      first delay between attempts, doubling (default 500)\n"
"  --slice-resync MS     how often the ResourceSlices are checked (default 30000)\n"
"  --nrt-debounce MS     quiet period before the NodeResourceTopology object\n"
"                        is updated after a change (default 1000)\n");
}

/* getopt values of the options that take a plain number. */
#define OPT_NUMBER	1000
/* getopt values of the cluster source's options. */
#define OPT_SOURCE	2000

static int
number(const char *s, long lo, long hi, long *out)
{
	char	*end;
	long	 v;

	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < lo || v > hi)
		return (-1);
	*out = v;
	return (0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'R' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "nri-socket", required_argument, NULL, 'N' },
		{ "nri-index", required_argument, NULL, 'I' },
		{ "admin-socket", required_argument, NULL, 'a' },
		{ "kubelet-dir", required_argument, NULL, 'k' },
		{ "cdi-dir", required_argument, NULL, 'C' },
		{ "kubeconfig", required_argument, NULL, 'K' },
		{ "node-name", required_argument, NULL, 'H' },
		{ "nri-reconnect-max", required_argument, NULL, 'B' },
		{ "config-debounce", required_argument, NULL, 'D' },
		{ "api-timeout", required_argument, NULL, OPT_NUMBER + 0 },
		{ "api-retries", required_argument, NULL, OPT_NUMBER + 1 },
		{ "api-backoff", required_argument, NULL, OPT_NUMBER + 2 },
		{ "slice-resync", required_argument, NULL, OPT_NUMBER + 3 },
		{ "nrt-debounce", required_argument, NULL, OPT_NUMBER + 4 },
		{ "config-source", required_argument, NULL, OPT_SOURCE },
		{ "config-namespace", required_argument, NULL, OPT_SOURCE + 1 },
		{ "config-group-label", required_argument, NULL,
		    OPT_SOURCE + 2 },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 host[HOST_NAME_MAX + 1];
	struct server_opts	 o;
	/* The plain numbers, in the order of OPT_NUMBER + i above. */
	const struct {
		const char	*name;
		long		 lo, hi;
		int		*out;
	} numbers[] = {
		{ "api-timeout", 10, 600000, &o.api_timeout_ms },
		{ "api-retries", 0, 100, &o.api_retries },
		{ "api-backoff", 1, 600000, &o.api_backoff_ms },
		{ "slice-resync", 10, 86400000, &o.slice_resync_ms },
		{ "nrt-debounce", 0, 600000, &o.nrt_debounce_ms },
	};
	struct server		 srv;
	uint64_t		 k[2];
	char			*cause = NULL;
	long			 v;
	int			 ch, check = 0, i, rc;

	memset(&o, 0, sizeof o);
	o.sysfs_root = "/";
	o.config_path = "/etc/topoaware/config.json";
	o.state_dir = "/var/lib/topoaware";
	o.nri_socket = "/var/run/nri/nri.sock";
	o.nri_index = 90;
	o.admin_socket = "/run/topoaware/admin.sock";
	o.kubelet_dir = "/var/lib/kubelet";
	o.cdi_dir = "/var/run/cdi";
	o.nri_backoff_max_ms = 30000;
	o.watch_debounce_ms = WATCH_DEBOUNCE_MS;
	o.node_name = getenv("NODE_NAME");
	o.api_timeout_ms = 5000;
	o.api_retries = 3;
	o.api_backoff_ms = 500;
	o.slice_resync_ms = 30000;
	o.nrt_debounce_ms = 1000;
	o.config_namespace = "kube-system";
	o.config_group_label = FLEET_GROUP_LABEL;

	while ((ch = getopt_long(argc, argv, "fnvVh", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			o.foreground = 1;
			break;
		case 'n':
			check = 1;
			break;
		case 'v':
			o.verbosity++;
			break;
		case 'V':
#ifdef TOPOAWARE_DEBUG_HOOKS
			printf("topoawared %s (debug hooks)\n",
			    PACKAGE_VERSION);
#else
			printf("topoawared %s\n", PACKAGE_VERSION);
#endif
			return (0);
		case 'h':
			usage(stdout);
			return (0);
		case 'R':
			o.sysfs_root = optarg;
			break;
		case 'c':
			o.config_path = optarg;
			break;
		case 's':
			o.state_dir = optarg;
			break;
		case 'N':
			o.nri_socket = optarg;
			break;
		case 'I':
			if (number(optarg, 0, 99, &v) != 0) {
				fprintf(stderr, "topoawared: --nri-index %s: "
				    "not a number 0-99\n", optarg);
				return (2);
			}
			o.nri_index = (int)v;
			break;
		case 'a':
			o.admin_socket = optarg;
			break;
		case 'k':
			o.kubelet_dir = optarg;
			break;
		case 'C':
			o.cdi_dir = optarg;
			break;
		case 'K':
			o.kubeconfig = optarg;
			break;
		case 'H':
			o.node_name = optarg;
			break;
		case 'B':
			if (number(optarg, 10, 3600000, &v) != 0) {
				fprintf(stderr, "topoawared: --nri-reconnect-max "
				    "%s: not a number 10-3600000\n", optarg);
				return (2);
			}
			o.nri_backoff_max_ms = (int)v;
			break;
		case 'D':
			if (number(optarg, 10, 60000, &v) != 0) {
				fprintf(stderr, "topoawared: --config-debounce "
				    "%s: not a number 10-60000\n", optarg);
				return (2);
			}
			o.watch_debounce_ms = (int)v;
			break;
		case OPT_SOURCE:
			if (strcmp(optarg, "file") == 0)
				o.config_cluster = 0;
			else if (strcmp(optarg, "cluster") == 0)
				o.config_cluster = 1;
			else {
				fprintf(stderr, "topoawared: --config-source "
				    "%s: not file or cluster\n", optarg);
				return (2);
			}
			break;
		case OPT_SOURCE + 1:
			if (!k8s_dns_label(optarg)) {
				fprintf(stderr, "topoawared: --config-namespace "
				    "%s: not a namespace name (a DNS label)\n",
				    optarg);
				return (2);
			}
			o.config_namespace = optarg;
			break;
		case OPT_SOURCE + 2:
			if (!k8s_label_key(optarg)) {
				fprintf(stderr, "topoawared: "
				    "--config-group-label %s: not a label "
				    "key\n", optarg);
				return (2);
			}
			o.config_group_label = optarg;
			break;
		default:
			if (ch >= OPT_NUMBER && ch < OPT_NUMBER +
			    (int)(sizeof numbers / sizeof numbers[0])) {
				i = ch - OPT_NUMBER;
				if (number(optarg, numbers[i].lo,
				    numbers[i].hi, &v) != 0) {
					fprintf(stderr, "topoawared: --%s %s: not "
					    "a number %ld-%ld\n", numbers[i].name,
					    optarg, numbers[i].lo, numbers[i].hi);
					return (2);
				}
				*numbers[i].out = (int)v;
				break;
			}
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return (2);
	}
	if (o.node_name == NULL || *o.node_name == '\0') {
		if (gethostname(host, sizeof host - 1) != 0)
			strcpy(host, "localhost");
		/* As the kubelet names its node from the host name. */
		for (i = 0; host[i] != '\0'; i++)
			host[i] = (char)tolower((unsigned char)host[i]);
		o.node_name = host;
	}

	if (check) {
		if (server_check_config(&o, &cause) != 0) {
			fprintf(stderr, "topoawared: %s\n", cause);
			free(cause);
			return (1);
		}
		printf("configuration OK\n");
		return (0);
	}

	log_init(o.foreground, o.verbosity);
	/* Before any policy: the index hashes pods' own labels. */
	arc4random_buf(k, sizeof k);
	if (postings_key(k[0], k[1]) != 0) {
		log_warnx("cannot key the index's hash");
		return (1);
	}
	if ((rc = server_init(&srv, &o, &cause)) != 0 ||
	    (rc = server_start(&srv, &cause)) != 0) {
		log_warnx("cannot start: %s", cause);
		free(cause);
		server_clear(&srv);
		/* Starting again would fail the same way. */
		return (rc == -ENOTRECOVERABLE ? SERVER_EXIT_CONFIG : 1);
	}
	rc = event_base_dispatch(srv.base);
	if (rc < 0)
		log_warnx("the event loop failed");
	log_info("stopped");
	server_clear(&srv);
	return (rc < 0 ? 1 : 0);
}
