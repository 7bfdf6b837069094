/*
 * topoawarectl owns the admin client (SPEC R-ADMIN): one request on the
 * daemon's admin socket, the reply printed as readable text or, with
 * --json, as the result's JSON. Plain blocking I/O bounded by one
 * deadline for connecting, sending and reading the reply.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "adminproto.h"
#include "ctl.h"
#include "cpuset.h"
#include "dryrun.h"
#include "xmalloc.h"

#define CTL_DEFAULT_SOCKET	"/run/topoaware/admin.sock"
#define CTL_DEFAULT_TIMEOUT	10.0
/* A reply longer than this is refused rather than read on. */
#define CTL_MAX_REPLY		(256 * 1024 * 1024)

/* Exit statuses (topoawarectl(8)); 1 is a daemon that cannot be reached
 * or answered an error. */
#define EXIT_USAGE		2
#define EXIT_VIOLATIONS		3	/* check found some */

struct command {
	const char	*name;
	int		 max_args;
	void		(*print)(json_t *);
};

static const char	*progname = "topoawarectl";

static void	print_status(json_t *);
static void	print_topology(json_t *);
static void	print_pools(json_t *);
static void	print_grants(json_t *);
static void	print_claims(json_t *);
static void	print_config(json_t *);
static void	print_reload(json_t *);
static void	print_metrics(json_t *);
static void	print_log_level(json_t *);
static void	print_map(json_t *);

/* --color: when the map is painted with ANSI escapes. */
enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };
static int		 color_mode = COLOR_AUTO;
static void	print_check(json_t *);

static const struct command commands[] = {
	{ "status", 0, print_status },
	{ "topology", 0, print_topology },
	{ "pools", 0, print_pools },
	{ "grants", 0, print_grants },
	{ "claims", 0, print_claims },
	{ "config", 0, print_config },
	{ "reload", 0, print_reload },
	{ "metrics", 0, print_metrics },
	{ "log-level", 1, print_log_level },
	{ "explain", 1, print_explain },
	{ "map", 0, print_map },
	{ "check", 0, print_check },
};

static void
usage(FILE *f)
{
	fprintf(f,
"usage: topoawarectl [--socket PATH] [--json] [--timeout SECONDS] COMMAND [ARG]\n"
"       topoawarectl [options] reload --dry-run [FILE]\n"
"\n"
"commands:\n"
"  status             the daemon's health: version, uptime, configuration,\n"
"                     last reload, NRI and DRA connections, grants, last error\n"
"  topology           the machine: packages, NUMA nodes, cores\n"
"  pools              the pool tree with each pool's free CPUs\n"
"  grants             CPUs granted to containers and claims\n"
"  claims             CPUs held by DRA resource claims\n"
"  config             the configuration in force, every key\n"
"  reload             reload the configuration file\n"
"  reload --dry-run [FILE]\n"
"                     what reloading FILE (- for standard input; default:\n"
"                     the daemon's config file) would move, or why it would\n"
"                     be refused (exit status 3); nothing is applied\n"
"  metrics            counters and histograms in Prometheus text format\n"
"  log-level [LEVEL]  show or set the log level (error, warn, info, debug)\n"
"  explain ID         why a container (its id) or a claim (claim:UID) holds\n"
"                     what it holds: its request, every pool weighed with\n"
"                     the rule that decided, how its CPUs were picked\n"
"  map                the machine as a grid: what holds each CPU\n"
"  check              the live invariants; exits 3 when one is broken\n"
"\n"
"options:\n"
"  -s, --socket PATH, --admin-socket PATH\n"
"                     the admin socket (default " CTL_DEFAULT_SOCKET ")\n"
"  -j, --json         print the result as JSON\n"
"      --color[=WHEN] colour the map: auto (on a terminal), always, never\n"
"  -t, --timeout SECONDS\n"
"                     give up connecting or waiting after this long (default 10)\n"
"  -V, --version      print the version and exit\n"
"  -h, --help         print this help and exit\n");
}

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* Waits for fd to become ready before the deadline: 1, 0 timed out, -1. */
static int
wait_fd(int fd, short events, double deadline)
{
	struct pollfd	pfd;
	double		left;
	int		rc;

	for (;;) {
		left = deadline - now();
		if (left <= 0)
			return (0);
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		rc = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (rc > 0)
			return (1);
		if (rc == 0)
			continue;
		if (errno != EINTR)
			return (-1);
	}
}

static int
connect_socket(const char *path, double deadline)
{
	struct sockaddr_un	sun;
	struct timeval		tv;
	double			left;
	int			fd, err, flags;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "%s: %s: path too long for a unix socket\n",
		    progname, path);
		return (-1);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		fprintf(stderr, "%s: socket: %s\n", progname, strerror(errno));
		return (-1);
	}
	/*
	 * A unix connect waits only when the daemon's backlog is full, and
	 * then for at most the send timeout; it does not go on in the
	 * background, so it is made blocking with that timeout.
	 */
	left = deadline - now();
	tv.tv_sec = (time_t)left;
	tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) * 1e6) + 1;
	if (tv.tv_usec > 999999)
		tv.tv_usec = 999999;
	err = 0;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
		err = errno;
	else {
		while (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
			if ((err = errno) != EINTR)
				break;
			err = 0;
		}
	}
	if (err == EAGAIN || err == EINPROGRESS) {
		fprintf(stderr, "%s: %s: no answer from topoawared (timed out "
		    "connecting)\n", progname, path);
		close(fd);
		return (-1);
	}
	if (err == 0 && ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1))
		err = errno;
	if (err == 0)
		return (fd);
	close(fd);
	switch (err) {
	case ENOENT:
		fprintf(stderr, "%s: %s: no such socket; is topoawared "
		    "running, and is this its --admin-socket?\n", progname,
		    path);
		break;
	case ECONNREFUSED:
		fprintf(stderr, "%s: %s: connection refused; topoawared is "
		    "not running (the socket is left over)\n", progname, path);
		break;
	case EACCES:
	case EPERM:
		fprintf(stderr, "%s: %s: permission denied; the admin socket "
		    "is for root and the daemon's user\n", progname, path);
		break;
	default:
		fprintf(stderr, "%s: %s: %s\n", progname, path, strerror(err));
		break;
	}
	return (-1);
}

static int
send_all(int fd, const char *buf, size_t len, double deadline)
{
	ssize_t	n;
	int	rc;

	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if ((rc = wait_fd(fd, POLLOUT, deadline)) <= 0)
				return (rc == 0 ? -ETIMEDOUT : -errno);
			continue;
		}
		return (-errno);
	}
	return (0);
}

/*
 * One line of reply into *out (caller frees). Returns its length, or -1
 * with the reason printed.
 */
static ssize_t
read_reply(int fd, const char *path, double deadline, double timeout,
    char **out)
{
	char	*buf = NULL, *nl;
	size_t	 len = 0, size = 0;
	ssize_t	 n;
	int	 rc;

	*out = NULL;
	for (;;) {
		if (size - len < 65536) {
			size = size == 0 ? 65536 : size * 2;
			buf = xreallocarray(buf, size, 1);
		}
		n = recv(fd, buf + len, size - len - 1, 0);
		if (n > 0) {
			nl = memchr(buf + len, '\n', (size_t)n);
			len += (size_t)n;
			if (nl != NULL) {
				len = (size_t)(nl - buf) + 1;
				break;
			}
			if (len > CTL_MAX_REPLY) {
				fprintf(stderr, "%s: the reply is longer than "
				    "%d bytes\n", progname, CTL_MAX_REPLY);
				free(buf);
				return (-1);
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			rc = wait_fd(fd, POLLIN, deadline);
			if (rc == 0) {
				fprintf(stderr, "%s: %s: no reply within "
				    "%g seconds\n", progname, path, timeout);
				free(buf);
				return (-1);
			}
			if (rc > 0)
				continue;
		}
		if (n == 0 && len > 0)
			fprintf(stderr, "%s: %s: the reply was cut short\n",
			    progname, path);
		else if (n == 0 || errno == ECONNRESET)
			fprintf(stderr, "%s: %s: topoawared closed the "
			    "connection without a reply\n", progname, path);
		else
			fprintf(stderr, "%s: %s: %s\n", progname, path,
			    strerror(errno));
		free(buf);
		return (-1);
	}
	buf[len] = '\0';
	*out = buf;
	return ((ssize_t)len);
}

/* Text helpers: a missing field prints as "?", never crashes. */

static const char *
str(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	/* A grant's CPUs or memory nodes the runtime is not told of. */
	if (json_is_null(v))
		return ("(left alone)");
	return (json_is_string(v) ? json_string_value(v) : "?");
}

static char *
scalar(json_t *v)
{
	char	*s;

	if (v == NULL)
		return (xstrdup("?"));
	if (json_is_string(v))
		return (xstrdup(json_string_value(v)));
	if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return (xstrdup("?"));
	return (s);
}

static void
field(const char *name, const char *fmt, ...)
    __attribute__((__format__(__printf__, 2, 3)));

static void
field(const char *name, const char *fmt, ...)
{
	va_list	ap;

	printf("%-19s ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void
duration(char *buf, size_t size, long long s)
{
	if (s < 0)
		snprintf(buf, size, "?");
	else if (s >= 86400)
		snprintf(buf, size, "%lldd %lldh %lldm", s / 86400,
		    s % 86400 / 3600, s % 3600 / 60);
	else if (s >= 3600)
		snprintf(buf, size, "%lldh %lldm %llds", s / 3600,
		    s % 3600 / 60, s % 60);
	else if (s >= 60)
		snprintf(buf, size, "%lldm %llds", s / 60, s % 60);
	else
		snprintf(buf, size, "%llds", s);
}

/* The status lines of the parts that talk to the API server. */
static void
print_slices(json_t *sl)
{
	json_t	*err = json_object_get(sl, "lastError");
	char	*gen, *ndev;

	if (sl == NULL)
		return;
	gen = scalar(json_object_get(sl, "generation"));
	ndev = scalar(json_object_get(sl, "devices"));
	if (json_is_true(json_object_get(sl, "published")))
		field("ResourceSlices", "published (generation %s, %s "
		    "devices)%s%s", gen, ndev, json_is_string(err) ?
		    "; last error: " : "", json_is_string(err) ?
		    json_string_value(err) : "");
	else
		field("ResourceSlices", "not published%s%s",
		    json_is_string(err) ? ": " : "", json_is_string(err) ?
		    json_string_value(err) : "");
	free(gen);
	free(ndev);
}

static void
print_nrt(json_t *n)
{
	json_t	*err = json_object_get(n, "lastError");

	if (n == NULL)
		return;
	if (!json_is_true(json_object_get(n, "enabled")))
		field("NRT object", "off%s%s", json_is_string(err) ?
		    ": " : "", json_is_string(err) ? json_string_value(err) :
		    "");
	else if (json_is_true(json_object_get(n, "published")))
		field("NRT object", "published%s%s",
		    json_is_string(err) ? "; last error: " : "",
		    json_is_string(err) ? json_string_value(err) : "");
	else
		field("NRT object", "not published yet%s%s",
		    json_is_string(err) ? ": " : "", json_is_string(err) ?
		    json_string_value(err) : "");
}

static void
print_api(json_t *a)
{
	json_t	*err = json_object_get(a, "lastError");
	char	*req, *fail;

	if (a == NULL)
		return;
	req = scalar(json_object_get(a, "requests"));
	fail = scalar(json_object_get(a, "failures"));
	field("API server", "%s: %s requests, %s failed%s%s", str(a, "server"),
	    req, fail, json_is_string(err) ? "; last error: " : "",
	    json_is_string(err) ? json_string_value(err) : "");
	free(req);
	free(fail);
}

/* Where the config in force came from (the file or the cluster). */
static void
print_config_source(json_t *c)
{
	json_t	*v;
	char	*gen;
	size_t	 i;

	if (!json_is_object(c))
		return;
	if (strcmp(str(c, "source"), "cluster") != 0) {
		field("config source", "file %s%s, since %s", str(c, "path"),
		    json_is_true(json_object_get(c, "defaults")) ?
		    " (absent: the defaults)" : "", str(c, "since"));
		return;
	}
	gen = scalar(json_object_get(c, "generation"));
	if (json_is_string(json_object_get(c, "object")))
		field("config source", "cluster: TopologyAwarePolicy %s/%s "
		    "generation %s, %s since %s", str(c, "namespace"),
		    str(c, "object"), gen, strcmp(str(c, "from"), "kept") == 0 ?
		    "kept from before the start" : "from the API server",
		    str(c, "since"));
	else
		field("config source", "cluster (namespace %s): built-in "
		    "defaults since %s, no object applied yet",
		    str(c, "namespace"), str(c, "since"));
	free(gen);
	field("config group", "%s (label %s)", json_is_string(
	    json_object_get(c, "group")) ? str(c, "group") : "none",
	    str(c, "groupLabel"));
	if (json_is_true(json_object_get(c, "noObject")))
		field("config object", "none applies to node %s now; the "
		    "config in force stays", str(c, "node"));
	if (json_is_object(v = json_object_get(c, "refused"))) {
		gen = scalar(json_object_get(v, "generation"));
		field("config refused", "%s generation %s: %s",
		    str(v, "object"), gen, str(v, "error"));
		free(gen);
	}
	json_array_foreach(json_object_get(c, "warnings"), i, v)
		field("config warning", "%s", json_is_string(v) ?
		    json_string_value(v) : "?");
	if (json_is_string(json_object_get(c, "keptError")))
		field("config kept", "not saved: %s", str(c, "keptError"));
	v = json_object_get(c, "statusPatches");
	if (json_is_string(json_object_get(v, "lastError")))
		field("config status", "%s", str(v, "lastError"));
}

static void
print_status(json_t *r)
{
	json_t		*lr, *nri, *dra, *v;
	char		 up[64], *s;

	v = json_object_get(r, "uptimeSeconds");
	duration(up, sizeof up, json_is_integer(v) ? json_integer_value(v) :
	    -1);
	field("version", "%s", str(r, "version"));
	field("uptime", "%s", up);
	s = scalar(json_object_get(r, "configGeneration"));
	field("config generation", "%s", s);
	free(s);
	print_config_source(json_object_get(r, "config"));

	lr = json_object_get(r, "lastReload");
	s = scalar(json_object_get(lr, "generation"));
	if (json_is_true(json_object_get(lr, "ok")))
		field("last reload", "ok (generation %s)", s);
	else
		field("last reload", "refused: %s (generation %s stays in "
		    "force)", str(lr, "error"), s);
	free(s);

	nri = json_object_get(r, "nri");
	field("NRI", "%s", json_is_true(json_object_get(nri, "connected")) ?
	    "connected" : "not connected");
	dra = json_object_get(r, "dra");
	v = json_object_get(dra, "error");
	if (json_is_true(json_object_get(dra, "registered")))
		field("DRA", "registered");
	else if (json_is_string(v))
		field("DRA", "not registered: %s", json_string_value(v));
	else
		field("DRA", "not registered");
	print_slices(json_object_get(dra, "slices"));
	print_nrt(json_object_get(r, "nrt"));
	print_api(json_object_get(dra, "api"));

	s = scalar(json_object_get(r, "containers"));
	field("containers", "%s", s);
	free(s);
	s = scalar(json_object_get(r, "claims"));
	field("claims", "%s", s);
	free(s);
	if (json_is_object(v = json_object_get(r, "journal")))
		field("state journal", "%lld bytes, %lld records since the "
		    "snapshot, change %lld%s%s",
		    (long long)json_integer_value(json_object_get(v, "bytes")),
		    (long long)json_integer_value(json_object_get(v,
		    "records")),
		    (long long)json_integer_value(json_object_get(v, "seq")),
		    json_is_true(json_object_get(v, "unsaved")) ?
		    "; a change is not saved yet" : "",
		    json_is_true(json_object_get(v, "damaged")) ?
		    "; DAMAGED at start, see the log" : "");
	v = json_object_get(r, "lastError");
	field("last error", "%s", json_is_string(v) ? json_string_value(v) :
	    "none");
}

/* A table: column widths from the widest cell, the last column free. */
struct table {
	size_t	  ncols;
	size_t	  nrows;
	char	**cells;	/* nrows * ncols, row 0 the heading */
};

static void
table_init(struct table *t, size_t ncols)
{
	t->ncols = ncols;
	t->nrows = 0;
	t->cells = NULL;
}

/* Takes ncols strings it frees later. */
static void
table_row(struct table *t, char **row)
{
	size_t	i;

	t->cells = xreallocarray(t->cells, (t->nrows + 1) * t->ncols,
	    sizeof *t->cells);
	for (i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = row[i];
	t->nrows++;
}

static void
table_print(struct table *t)
{
	size_t	*w, r, i, n;

	w = xcalloc(t->ncols, sizeof *w);
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			n = strlen(t->cells[r * t->ncols + i]);
			if (n > w[i])
				w[i] = n;
		}
	}
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			if (i + 1 == t->ncols)
				printf("%s\n", t->cells[r * t->ncols + i]);
			else
				printf("%-*s  ", (int)w[i],
				    t->cells[r * t->ncols + i]);
		}
	}
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
}

static void
print_topology(json_t *r)
{
	struct table	 t;
	json_t		*a, *o;
	char		*row[4], *s;
	size_t		 i;

	field("online CPUs", "%s", str(r, "online"));
	field("isolated CPUs", "%s", *str(r, "isolated") == '\0' ? "none" :
	    str(r, "isolated"));
	s = scalar(json_object_get(r, "cores"));
	field("cores", "%s", s);
	free(s);
	s = scalar(json_object_get(r, "threadsPerCore"));
	field("threads per core", "%s", s);
	free(s);

	printf("\n");
	table_init(&t, 2);
	row[0] = xstrdup("PACKAGE");
	row[1] = xstrdup("CPUS");
	table_row(&t, row);
	a = json_object_get(r, "packages");
	json_array_foreach(a, i, o) {
		row[0] = scalar(json_object_get(o, "id"));
		row[1] = xstrdup(str(o, "cpus"));
		table_row(&t, row);
	}
	table_print(&t);

	printf("\n");
	table_init(&t, 4);
	row[0] = xstrdup("NODE");
	row[1] = xstrdup("MEMORY");
	row[2] = xstrdup("DISTANCES");
	row[3] = xstrdup("CPUS");
	table_row(&t, row);
	a = json_object_get(r, "nodes");
	json_array_foreach(a, i, o) {
		row[0] = scalar(json_object_get(o, "id"));
		row[1] = scalar(json_object_get(o, "memory"));
		row[2] = scalar(json_object_get(o, "distances"));
		row[3] = xstrdup(str(o, "cpus"));
		table_row(&t, row);
	}
	table_print(&t);
}

/* The union of two list-form cpusets, in list form (caller frees). */
static char *
cpus_union(const char *a, const char *b)
{
	struct cpuset	 x = CPUSET_INITIALIZER, y = CPUSET_INITIALIZER;
	char		*why = NULL, *s;

	if (cpuset_parse(&x, a, &why) != 0 || cpuset_parse(&y, b, &why) != 0) {
		free(why);
		cpuset_clear(&x);
		cpuset_clear(&y);
		return (xstrdup("?"));
	}
	cpuset_or(&x, &y);
	s = cpuset_format(&x);
	cpuset_clear(&x);
	cpuset_clear(&y);
	return (s);
}

static char *
or_dash(const char *s)
{
	return (xstrdup(*s == '\0' ? "-" : s));
}

/* Bytes as the Go policy prints memory: 1024-based k, M, G, T. */
static char *
human_bytes(json_t *v)
{
	static const char	 units[] = "kMGT";
	double			 x;
	int			 u = -1;
	char			*s;

	if (!json_is_integer(v))
		return (xstrdup("?"));
	x = (double)json_integer_value(v);
	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		xasprintf(&s, "%.0f", x);
	else if (x == (double)(long long)x)
		xasprintf(&s, "%.0f%c", x, units[u]);
	else
		xasprintf(&s, "%.1f%c", x, units[u]);
	return (s);
}

/* A pool's memory by type: "dram 1.5G/2G pmem 4G/4G" (free/total), or
 * "-" when memory is not accounted. */
static char *
pool_memory(json_t *o)
{
	static const char *const types[] = { "dram", "pmem", "hbm" };
	json_t	*m = json_object_get(o, "memory"), *t;
	char	*s = xstrdup(""), *f, *c, *n;
	size_t	 i;

	for (i = 0; json_is_object(m) && i < 3; i++) {
		if ((t = json_object_get(m, types[i])) == NULL)
			continue;
		f = human_bytes(json_object_get(t, "free"));
		c = human_bytes(json_object_get(t, "total"));
		xasprintf(&n, "%s%s%s %s/%s", s, *s ? " " : "", types[i], f, c);
		free(s);
		free(f);
		free(c);
		s = n;
	}
	n = or_dash(s);
	free(s);
	return (n);
}

static void
print_pools(json_t *r)
{
	struct table	 t;
	json_t		*o;
	char		*row[5], *free_cpus;
	size_t		 i;

	table_init(&t, 5);
	row[0] = xstrdup("ID");
	row[1] = xstrdup("NAME");
	row[2] = xstrdup("CPUS");
	row[3] = xstrdup("FREE");
	row[4] = xstrdup("MEMORY FREE/TOTAL");
	table_row(&t, row);
	json_array_foreach(r, i, o) {
		row[0] = scalar(json_object_get(o, "id"));
		row[1] = xstrdup(str(o, "name"));
		row[2] = or_dash(str(o, "cpus"));
		free_cpus = cpus_union(str(o, "freeSharable"),
		    str(o, "freeIsolated"));
		row[3] = or_dash(free_cpus);
		free(free_cpus);
		row[4] = pool_memory(o);
		table_row(&t, row);
	}
	table_print(&t);
}

static void
print_grants(json_t *r)
{
	struct table	 t;
	json_t		*o, *m;
	char		*row[5];
	size_t		 i;

	if (json_array_size(r) == 0) {
		printf("no grants\n");
		return;
	}
	table_init(&t, 5);
	row[0] = xstrdup("ID");
	row[1] = xstrdup("CPUS");
	row[2] = xstrdup("MEMS");
	row[3] = xstrdup("MEMORY");
	row[4] = xstrdup("POOL");
	table_row(&t, row);
	json_array_foreach(r, i, o) {
		if (json_is_string(json_object_get(o, "claim")))
			xasprintf(&row[0], "claim:%s", str(o, "claim"));
		else
			row[0] = xstrdup(str(o, "id"));
		row[1] = or_dash(str(o, "cpus"));
		row[2] = or_dash(str(o, "mems"));
		/* Its accounted bytes; claims and unaccounted ones: "-". */
		if ((m = json_object_get(o, "memory")) != NULL)
			row[3] = human_bytes(json_object_get(m, "bytes"));
		else
			row[3] = xstrdup("-");
		row[4] = xstrdup(str(o, "pool"));
		table_row(&t, row);
	}
	table_print(&t);
}

static void
print_claims(json_t *r)
{
	struct table	 t;
	json_t		*o;
	char		*row[3];
	size_t		 i;

	if (json_array_size(r) == 0) {
		printf("no claims\n");
		return;
	}
	table_init(&t, 3);
	row[0] = xstrdup("CLAIM");
	row[1] = xstrdup("CPUS");
	row[2] = xstrdup("POOL");
	table_row(&t, row);
	json_array_foreach(r, i, o) {
		row[0] = xstrdup(str(o, "claim"));
		row[1] = or_dash(str(o, "cpus"));
		row[2] = xstrdup(str(o, "pool"));
		table_row(&t, row);
	}
	table_print(&t);
}

/* Nested keys as dotted paths, as topoawared.json(5) names them. */
static void
config_rows(struct table *t, json_t *o, const char *prefix)
{
	const char	*key;
	json_t		*v;
	char		*path, *row[2];

	json_object_foreach(o, key, v) {
		if (*prefix != '\0')
			xasprintf(&path, "%s.%s", prefix, key);
		else
			path = xstrdup(key);
		if (json_is_object(v)) {
			config_rows(t, v, path);
			free(path);
			continue;
		}
		row[0] = path;
		if (json_is_string(v))
			row[1] = json_dumps(v, JSON_ENCODE_ANY);
		else
			row[1] = scalar(v);
		if (row[1] == NULL)
			row[1] = xstrdup("?");
		table_row(t, row);
	}
}

static void
print_config(json_t *r)
{
	struct table	t;

	table_init(&t, 2);
	config_rows(&t, r, "");
	table_print(&t);
}

static void
print_reload(json_t *r)
{
	char	*s = scalar(json_object_get(r, "generation"));

	if (json_is_true(json_object_get(r, "unchanged")))
		printf("unchanged: configuration generation %s stays\n", s);
	else
		printf("reloaded: configuration generation %s\n", s);
	free(s);
}

static void
print_metrics(json_t *r)
{
	fputs(str(r, "text"), stdout);
}

static void
print_log_level(json_t *r)
{
	if (json_is_string(json_object_get(r, "previous")))
		printf("log level %s (was %s)\n", str(r, "level"),
		    str(r, "previous"));
	else
		printf("log level %s\n", str(r, "level"));
}

/*
 * The map: each CPU a cell of its number and a letter for what holds it,
 * the threads of a core side by side in brackets, the cores of a NUMA
 * node in rows no wider than MAP_WIDTH, then one row per holder.
 */
#define MAP_WIDTH	80
#define MAP_INDENT	4

struct map_kind {
	const char	*name;
	char		 letter;
	const char	*color;		/* SGR parameters */
};

/* In the order the holders are listed; a claim first (MAP_CLAIM). */
static const struct map_kind map_kinds[] = {
	{ "claim", 'C', "1;35" },
	{ "exclusive", 'X', "1;31" },
	{ "isolated", 'I', "36" },
	{ "reserved", 'R', "33" },
	{ "shared", 'S', "32" },
	{ "free", 'F', "" },
	{ "unmanaged", 'U', "2" },
	{ "offline", 'O', "2" },
};
#define MAP_NKINDS	(sizeof map_kinds / sizeof map_kinds[0])
#define MAP_CLAIM	0

struct map_cpu {
	int		 cpu, package, die, node, core, thread;
	int		 kind;		/* index in map_kinds, or MAP_NKINDS */
	const char	*holder;	/* claim UID or container id */
	const char	*pool;
	int		 containers;	/* -1 when not given */
};

static int	map_color;

/* Escapes only on a terminal that takes them, unless told (no-color.org). */
static int
map_use_color(void)
{
	const char	*term = getenv("TERM"), *no = getenv("NO_COLOR");

	if (color_mode != COLOR_AUTO)
		return (color_mode == COLOR_ALWAYS);
	if (no != NULL && *no != '\0')
		return (0);
	if (term == NULL || strcmp(term, "dumb") == 0)
		return (0);
	return (isatty(STDOUT_FILENO));
}

static int
map_int(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return (json_is_integer(v) ? (int)json_integer_value(v) : -1);
}

static const char *
map_str(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return (json_is_string(v) ? json_string_value(v) : NULL);
}

static void
map_read(json_t *o, struct map_cpu *c)
{
	const char	*kind = map_str(o, "kind");
	size_t		 k;

	c->cpu = map_int(o, "cpu");
	c->package = map_int(o, "package");
	c->die = map_int(o, "die");
	c->node = map_int(o, "node");
	c->core = map_int(o, "core");
	c->thread = map_int(o, "thread");
	c->kind = (int)MAP_NKINDS;
	for (k = 0; kind != NULL && k < MAP_NKINDS; k++)
		if (strcmp(kind, map_kinds[k].name) == 0)
			c->kind = (int)k;
	c->holder = map_str(o, "claim");
	if (c->holder == NULL)
		c->holder = map_str(o, "container");
	c->pool = map_str(o, "pool");
	c->containers = map_int(o, "containers");
}

/* The grid's order: package, node, die, core, thread. */
static int
map_cmp(const void *a, const void *b)
{
	const struct map_cpu	*x = a, *y = b;

	if (x->package != y->package)
		return (x->package < y->package ? -1 : 1);
	if (x->node != y->node)
		return (x->node < y->node ? -1 : 1);
	if (x->die != y->die)
		return (x->die < y->die ? -1 : 1);
	if (x->core != y->core)
		return (x->core < y->core ? -1 : 1);
	if (x->thread != y->thread)
		return (x->thread < y->thread ? -1 : 1);
	return (x->cpu < y->cpu ? -1 : x->cpu > y->cpu);
}

static int
same_core(const struct map_cpu *x, const struct map_cpu *y)
{
	return (x->package == y->package && x->node == y->node &&
	    x->die == y->die && x->core == y->core);
}

static void
map_paint(const char *color, const char *fmt, ...)
    __attribute__((__format__(__printf__, 2, 3)));

/* Text, in colour when the map is coloured and the kind has one. */
static void
map_paint(const char *color, const char *fmt, ...)
{
	va_list	ap;

	if (map_color && *color != '\0')
		printf("\033[%sm", color);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (map_color && *color != '\0')
		printf("\033[0m");
}

static void
map_cell(const struct map_cpu *c, int width)
{
	if (c->kind == (int)MAP_NKINDS)
		printf("%*d?", width, c->cpu);
	else
		map_paint(map_kinds[c->kind].color, "%*d%c", width, c->cpu,
		    map_kinds[c->kind].letter);
}

/*
 * The cores of cpus[0..n), sorted, wrapped into rows, each core in
 * brackets; tpc threads per core at most (a core with fewer is padded so
 * the columns line up).
 */
static void
map_cores(const struct map_cpu *cpus, size_t n, int width, int tpc)
{
	size_t	i, j;
	int	corew, per_row, col = 0, t;

	corew = tpc * (width + 2) + 1;
	per_row = (MAP_WIDTH - MAP_INDENT + 1) / (corew + 1);
	if (per_row < 1)
		per_row = 1;
	for (i = 0; i < n; i = j) {
		printf("%*s[", col == 0 ? MAP_INDENT : 1, "");
		for (j = i, t = 0; j < n && same_core(&cpus[i], &cpus[j]);
		    j++, t++) {
			if (t > 0)
				printf(" ");
			map_cell(&cpus[j], width);
		}
		printf("%*s]", (tpc - t) * (width + 2), "");
		if (++col == per_row || j == n) {
			printf("\n");
			col = 0;
		}
	}
}

/* The online CPUs, one block per package and node. */
static void
map_grid(struct map_cpu *cpus, size_t n, int width)
{
	size_t	i, j, k;
	int	tpc = 1, t;

	qsort(cpus, n, sizeof *cpus, map_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i, t = 0; j < n && same_core(&cpus[i], &cpus[j]); j++)
			t++;
		if (t > tpc)
			tpc = t;
	}
	for (i = 0; i < n; i = j) {
		printf("package %d\n", cpus[i].package);
		for (j = i; j < n && cpus[j].package == cpus[i].package; j = k) {
			for (k = j; k < n && cpus[k].package == cpus[j].package
			    && cpus[k].node == cpus[j].node; k++)
				;
			printf("  node %d\n", cpus[j].node);
			map_cores(cpus + j, k - j, width, tpc);
		}
	}
}

/* Offline CPUs have no place in a node: one row of them. */
static void
map_offline(const struct map_cpu *cpus, size_t n, int width)
{
	size_t	i;
	int	col = 0, per_row = (MAP_WIDTH - MAP_INDENT + 1) / (width + 2);

	if (n == 0)
		return;
	printf("offline\n");
	for (i = 0; i < n; i++) {
		printf(col == 0 ? "%*s" : " ", col == 0 ? MAP_INDENT : 0, "");
		map_cell(&cpus[i], width);
		if (++col == per_row || i + 1 == n) {
			printf("\n");
			col = 0;
		}
	}
}

/* The letters of the kinds on this map. */
static void
map_legend(const struct map_cpu *cpus, size_t n)
{
	size_t	i, k;
	int	first = 1;

	printf("\n");
	for (k = 0; k < MAP_NKINDS; k++) {
		for (i = 0; i < n && cpus[i].kind != (int)k; i++)
			;
		if (i == n)
			continue;
		if (!first)
			printf("  ");
		first = 0;
		map_paint(map_kinds[k].color, "%c", map_kinds[k].letter);
		printf(" %s", map_kinds[k].name);
	}
	printf("\n");
}

static int
same_holder(const struct map_cpu *x, const struct map_cpu *y)
{
	return (x->kind == y->kind && x->containers == y->containers &&
	    (x->holder == NULL) == (y->holder == NULL) &&
	    (x->holder == NULL || strcmp(x->holder, y->holder) == 0) &&
	    (x->pool == NULL) == (y->pool == NULL) &&
	    (x->pool == NULL || strcmp(x->pool, y->pool) == 0));
}

/* One row per holder (kind, claim or container, pool, count): its CPUs. */
static void
map_holders(const struct map_cpu *cpus, size_t n)
{
	struct table	 t;
	struct cpuset	 set = CPUSET_INITIALIZER;
	char		*row[5], *done;
	size_t		 i, j, k;

	done = xcalloc(n > 0 ? n : 1, 1);
	table_init(&t, 5);
	row[0] = xstrdup("HELD AS");
	row[1] = xstrdup("CPUS");
	row[2] = xstrdup("POOL");
	row[3] = xstrdup("CONTAINERS");
	row[4] = xstrdup("BY");
	table_row(&t, row);
	for (k = 0; k <= MAP_NKINDS; k++) {
		for (i = 0; i < n; i++) {
			if (done[i] || cpus[i].kind != (int)k)
				continue;
			cpuset_zero(&set);
			for (j = i; j < n; j++) {
				if (done[j] || !same_holder(&cpus[i], &cpus[j]))
					continue;
				done[j] = 1;
				/* print_map() kept only ids a set can hold. */
				(void)cpuset_add(&set, cpus[j].cpu);
			}
			row[0] = xstrdup(k < MAP_NKINDS ? map_kinds[k].name :
			    "?");
			row[1] = cpuset_format(&set);
			row[2] = xstrdup(cpus[i].pool ? cpus[i].pool : "-");
			if (cpus[i].containers >= 0)
				xasprintf(&row[3], "%d", cpus[i].containers);
			else
				row[3] = xstrdup("-");
			if (cpus[i].holder == NULL)
				row[4] = xstrdup("-");
			else if (k == MAP_CLAIM)
				xasprintf(&row[4], "claim:%s", cpus[i].holder);
			else
				row[4] = xstrdup(cpus[i].holder);
			table_row(&t, row);
		}
	}
	printf("\n");
	table_print(&t);
	cpuset_clear(&set);
	free(done);
}

static void
print_map(json_t *r)
{
	json_t		*a = json_object_get(r, "cpus"), *o;
	struct map_cpu	*all, *off;
	size_t		 i, n = 0, noff = 0;
	int		 width = 1, max = 0;

	map_color = map_use_color();
	all = xcalloc(json_array_size(a) + 1, sizeof *all);
	off = xcalloc(json_array_size(a) + 1, sizeof *off);
	json_array_foreach(a, i, o) {
		map_read(o, &all[n]);
		if (all[n].cpu < 0 || all[n].cpu > CPUSET_MAX_ID)
			continue;
		if (all[n].cpu > max)
			max = all[n].cpu;
		/* Without a core there is no place in the grid. */
		if (all[n].node < 0 || all[n].core < 0)
			off[noff++] = all[n];
		else
			n++;
	}
	for (; max >= 10; max /= 10)
		width++;
	map_grid(all, n, width);
	map_offline(off, noff, width);
	memcpy(all + n, off, noff * sizeof *off);
	map_legend(all, n + noff);
	map_holders(all, n + noff);
	free(all);
	free(off);
}

/* "ok: N claims, N grants, state matches", or each violation. */
static void
print_check(json_t *r)
{
	json_t	*checked = json_object_get(r, "checked"), *v;
	char	*claims, *grants;
	size_t	 i;

	if (json_is_true(json_object_get(r, "ok"))) {
		claims = scalar(json_object_get(checked, "claims"));
		grants = scalar(json_object_get(checked, "grants"));
		printf("ok: %s claims, %s grants, state %s\n", claims, grants,
		    str(checked, "state"));
		free(claims);
		free(grants);
		return;
	}
	json_array_foreach(json_object_get(r, "violations"), i, v)
		printf("%s: %s: %s\n", str(v, "kind"), str(v, "what"),
		    str(v, "detail"));
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "admin-socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "color", optional_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 }
	};
	const struct command	*cmd = NULL;
	const char		*path = CTL_DEFAULT_SOCKET;
	double			 timeout = CTL_DEFAULT_TIMEOUT, deadline;
	json_t			*result = NULL;
	char			*req, *line = NULL, *error = NULL, *end, *s;
	ssize_t			 n;
	size_t			 i, nargs;
	int			 ch, json = 0, fd, rc, dry = 0;

	while ((ch = getopt_long(argc, argv, "s:jt:Vh", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'C':
			if (optarg == NULL || strcmp(optarg, "always") == 0)
				color_mode = COLOR_ALWAYS;
			else if (strcmp(optarg, "never") == 0)
				color_mode = COLOR_NEVER;
			else if (strcmp(optarg, "auto") == 0)
				color_mode = COLOR_AUTO;
			else {
				fprintf(stderr, "%s: --color %s: not auto, "
				    "always or never\n", progname, optarg);
				return (EXIT_USAGE);
			}
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(timeout > 0 && timeout <= 86400)) {
				fprintf(stderr, "%s: --timeout %s: not a number "
				    "of seconds above 0\n", progname, optarg);
				return (EXIT_USAGE);
			}
			break;
		case 'V':
			printf("topoawarectl %s\n", PACKAGE_VERSION);
			return (0);
		case 'h':
			usage(stdout);
			return (0);
		case 'n':
			dry = 1;
			break;
		default:
			usage(stderr);
			return (EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return (EXIT_USAGE);
	}
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[0], commands[i].name) == 0)
			cmd = &commands[i];
	}
	if (cmd == NULL) {
		fprintf(stderr, "%s: unknown command \"%s\" (try --help)\n",
		    progname, argv[0]);
		return (EXIT_USAGE);
	}
	nargs = (size_t)argc - 1;
	if (strcmp(cmd->name, "explain") == 0 && nargs != 1) {
		fprintf(stderr, "%s: explain takes a container id or "
		    "claim:UID\n", progname);
		return (EXIT_USAGE);
	}
	if (dry && strcmp(cmd->name, "reload") != 0) {
		fprintf(stderr, "%s: --dry-run goes with reload only\n",
		    progname);
		return (EXIT_USAGE);
	}
	if (dry && nargs > 1) {
		fprintf(stderr, "%s: reload --dry-run takes at most one FILE\n",
		    progname);
		return (EXIT_USAGE);
	}
	if (!dry && nargs > (size_t)cmd->max_args) {
		fprintf(stderr, "%s: %s takes %s\n", progname, cmd->name,
		    cmd->max_args == 0 ? "no arguments" : "at most one argument");
		return (EXIT_USAGE);
	}

	signal(SIGPIPE, SIG_IGN);
	deadline = now() + timeout;
	if (dry && (req = dryrun_request(progname, nargs ? argv[1] :
	    NULL)) == NULL)
		return (1);
	if (!dry && (req = adminproto_request(cmd->name,
	    (const char *const *)argv + 1, nargs)) == NULL) {
		fprintf(stderr, "%s: cannot encode the request (arguments must "
		    "be UTF-8)\n", progname);
		return (EXIT_USAGE);
	}
	if ((fd = connect_socket(path, deadline)) == -1) {
		free(req);
		return (1);
	}
	/* A daemon that refuses us writes why before it hangs up: read on. */
	rc = send_all(fd, req, strlen(req), deadline);
	free(req);
	if (rc == -ETIMEDOUT) {
		fprintf(stderr, "%s: %s: timed out sending the request\n",
		    progname, path);
		close(fd);
		return (1);
	}
	n = read_reply(fd, path, deadline, timeout, &line);
	close(fd);
	if (n < 0)
		return (1);

	rc = adminproto_parse_reply(line, (size_t)n, &result, &error);
	free(line);
	if (rc < 0) {
		fprintf(stderr, "%s: bad reply from topoawared: %s\n",
		    progname, error);
		free(error);
		return (1);
	}
	if (rc == 0) {
		fprintf(stderr, "%s: %s\n", progname, error);
		free(error);
		return (1);
	}
	if (json) {
		s = json_dumps(result, JSON_INDENT(2) | JSON_ENCODE_ANY);
		if (s != NULL)
			printf("%s\n", s);
		free(s);
	} else if (dry)
		dryrun_print(result);
	else
		cmd->print(result);
	rc = dry ? dryrun_status(result) : 0;
	if (strcmp(cmd->name, "check") == 0 &&
	    !json_is_true(json_object_get(result, "ok")))
		rc = EXIT_VIOLATIONS;
	json_decref(result);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: writing the output: %s\n", progname,
		    strerror(errno));
		return (1);
	}
	return (rc);
}
