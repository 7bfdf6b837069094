/*
 * bench_policy: how fast the policy state machine is on big machines
 * (SPEC R-PERF-1), run by `make bench` and never by `make check`. For each
 * machine given as NAME=SYSFSROOT it places a realistic mix of containers,
 * then times claim + release, container create + remove, and restoring a
 * saved state of 1000 containers and 200 claims. Each figure is one
 * `name{machine="NAME"} value unit` line on stdout.
 *
 * Every measured loop runs a fixed number of iterations, chosen by a short
 * calibration run so that the measurement takes about half a second; the
 * clock is read only before and after it.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "config.h"
#include "policy.h"
#include "sysfs.h"
#include "topology.h"
#include "xmalloc.h"

#define PLACED		500	/* containers placed before timing */
#define RESTORE_CTRS	1000
#define RESTORE_CLAIMS	200
#define TARGET_S	0.5	/* how long a measurement runs */
#define CALIBRATE_S	0.05

struct machine {
	const char		*name;
	struct topology		*topo;
	struct config		*cfg;
};

/* What a timed loop works on. */
struct bench {
	struct machine	*m;
	struct policy	*P;
	json_t		*state;		/* restore: the saved document */
	long		 next;		/* running index */
};

static void __attribute__((__noreturn__, __format__(__printf__, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "bench_policy: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double
now(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		die("clock_gettime: %s", strerror(errno));
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/*
 * The i-th container of a node's workload, as a cluster runs them: a few
 * kube-system agents on the reserved CPUs, one in ten Guaranteed with
 * whole CPUs (exclusive), a third BestEffort, the rest Burstable with a
 * small request, half of them without a limit. Two containers a pod.
 */
struct mixed {
	char			id[32];
	char			pod[32];
	char			ns[32];
	struct container_spec	s;
};

static void
mix(long i, const char *prefix, struct mixed *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->id, sizeof c->id, "%s%06ld", prefix, i);
	snprintf(c->pod, sizeof c->pod, "pod-%s%05ld", prefix, i / 2);
	snprintf(c->ns, sizeof c->ns, "team-%ld", i % 7);
	c->s.id = c->id;
	c->s.name = "app";
	c->s.pod = c->pod;
	c->s.namespace = c->ns;
	c->s.cpu_request = c->s.cpu_limit = -1;
	if (i % 50 == 1) {
		snprintf(c->ns, sizeof c->ns, "kube-system");
		c->s.qos = QOS_BURSTABLE;
		c->s.cpu_request = 20;
	} else if (i % 10 == 0) {
		c->s.qos = QOS_GUARANTEED;
		c->s.cpu_request = c->s.cpu_limit = i % 40 == 0 ? 2000 : 1000;
	} else if (i % 3 == 0)
		c->s.qos = QOS_BESTEFFORT;
	else {
		c->s.qos = QOS_BURSTABLE;
		c->s.cpu_request = 100;
		c->s.cpu_limit = i % 2 ? -1 : 1000;
	}
}

static int
create_mixed(struct policy *P, long i, const char *prefix, char **cause)
{
	struct policy_effects	fx;
	struct mixed		c;
	int			rc;

	mix(i, prefix, &c);
	policy_effects_init(&fx);
	rc = policy_create(P, &c.s, &fx, cause);
	policy_effects_clear(&fx);
	return (rc);
}

static int
claim_one(struct policy *P, const char *uid, int node, const char *cpus,
    char **cause)
{
	struct policy_effects	fx;
	struct claim_result	r;
	char			dev[32];
	int			rc;

	snprintf(dev, sizeof dev, "cpudevnuma%03d", node);
	r.device = dev;
	r.cpu = cpus;
	policy_effects_init(&fx);
	rc = policy_claim(P, uid, &r, 1, NULL, &fx, cause);
	policy_effects_clear(&fx);
	return (rc);
}

/* The node of the i-th device, for claims spread over the machine. */
static int
device_node(struct policy *P, long i)
{
	struct dradev	*devs;
	int		 n;

	n = policy_devices(P, &devs);
	return (devs[i % n].node);
}

/* A policy on m with n mixed containers placed; 0 or -1 with *cause. */
static int
placed(struct machine *m, int n, struct policy **out, char **cause)
{
	struct policy	*P;
	char		*why = NULL;
	long		 i;

	if (policy_new(m->topo, m->cfg, &P, cause) != 0)
		return (-1);
	for (i = 0; i < n; i++)
		if (create_mixed(P, i, "ctr-", &why) != 0) {
			xasprintf(cause, "container %ld of %d: %s", i, n, why);
			free(why);
			policy_free(P);
			return (-1);
		}
	*out = P;
	return (0);
}

static void
claim_iter(struct bench *b)
{
	struct policy_effects	 fx;
	struct dradev		*devs;
	char			 uid[32];
	char			*cause = NULL;
	long			 k, n = policy_devices(b->P, &devs);

	snprintf(uid, sizeof uid, "claim-%ld", b->next);
	/* The next node with room: shared containers fill some of them. */
	for (k = 0; k < n; k++) {
		free(cause);
		cause = NULL;
		if (claim_one(b->P, uid, device_node(b->P, b->next + k), "2",
		    &cause) == 0)
			break;
	}
	if (k == n)
		die("%s: claim %s: %s", b->m->name, uid, cause);
	policy_effects_init(&fx);
	if (policy_release(b->P, uid, &fx) != 0)
		die("%s: release %s failed", b->m->name, uid);
	policy_effects_clear(&fx);
	b->next++;
}

static void
container_iter(struct bench *b)
{
	struct policy_effects	 fx;
	struct mixed		 c;
	char			*cause = NULL;

	/* The same mix as the placed ones, under other ids. */
	mix(b->next, "new-", &c);
	policy_effects_init(&fx);
	if (policy_create(b->P, &c.s, &fx, &cause) != 0)
		die("%s: create %s: %s", b->m->name, c.id, cause);
	policy_effects_clear(&fx);
	if (policy_remove(b->P, c.id, &fx) != 0)
		die("%s: remove %s failed", b->m->name, c.id);
	policy_effects_clear(&fx);
	b->next++;
}

static void
restore_iter(struct bench *b)
{
	struct policy	*N;
	char		*cause = NULL;

	if (policy_restore(b->m->topo, b->m->cfg, b->state, &N, &cause) != 0)
		die("%s: restore: %s", b->m->name, cause);
	policy_free(N);
	b->next++;
}

/* Seconds for n iterations of fn. */
static double
timed(void (*fn)(struct bench *), struct bench *b, long n)
{
	double	t0;
	long	i;

	t0 = now();
	for (i = 0; i < n; i++)
		fn(b);
	return (now() - t0);
}

/* The fixed iteration count that makes fn run for about TARGET_S. */
static long
calibrate(void (*fn)(struct bench *), struct bench *b)
{
	double	t;
	long	n = 1, want;

	for (;;) {
		t = timed(fn, b, n);
		if (t >= CALIBRATE_S || n >= (1L << 24))
			break;
		n *= 2;
	}
	want = (long)((double)n * TARGET_S / (t > 0 ? t : 1e-9));
	return (want < 1 ? 1 : want);
}

static void
report(const char *metric, const char *machine, double value,
    const char *unit)
{
	printf("%s{machine=\"%s\"} %.*f %s\n", metric, machine,
	    value >= 100 ? 0 : 3, value, unit);
	fflush(stdout);
}

static void
bench_claims(struct machine *m)
{
	struct bench	 b = { m, NULL, NULL, 0 };
	char		*cause = NULL;
	double		 t;
	long		 n;

	if (placed(m, PLACED, &b.P, &cause) != 0)
		die("%s: placing %d containers: %s", m->name, PLACED, cause);
	n = calibrate(claim_iter, &b);
	t = timed(claim_iter, &b, n);
	report("claim_alloc_release_per_s", m->name, (double)n / t, "ops/s");
	policy_free(b.P);
}

static void
bench_containers(struct machine *m)
{
	struct bench	 b = { m, NULL, NULL, 0 };
	char		*cause = NULL;
	double		 t;
	long		 n;

	if (placed(m, PLACED, &b.P, &cause) != 0)
		die("%s: placing %d containers: %s", m->name, PLACED, cause);
	n = calibrate(container_iter, &b);
	t = timed(container_iter, &b, n);
	report("container_create_remove_per_s", m->name, (double)n / t,
	    "ops/s");
	policy_free(b.P);
}

static void
bench_restore(struct machine *m)
{
	struct bench	 b = { m, NULL, NULL, 0 };
	struct policy	*P;
	char		 uid[32];
	char		*cause = NULL;
	double		 t;
	long		 i, n;

	/* The claims first, as a node's claims are prepared before most of
	 * its pods start; the containers fill in around them. */
	if (policy_new(m->topo, m->cfg, &P, &cause) != 0)
		die("%s: %s", m->name, cause);
	for (i = 0; i < RESTORE_CLAIMS; i++) {
		snprintf(uid, sizeof uid, "claim-%04ld", i);
		if (claim_one(P, uid, device_node(P, i), "1", &cause) != 0) {
			/* The recorded server has 112 CPUs: 200 do not fit. */
			fprintf(stderr, "bench_policy: %s: "
			    "restore_%dc_%dclaims_ms skipped: only %ld of %d "
			    "one-CPU claims fit (%s)\n", m->name, RESTORE_CTRS,
			    RESTORE_CLAIMS, i, RESTORE_CLAIMS, cause);
			free(cause);
			policy_free(P);
			return;
		}
	}
	for (i = 0; i < RESTORE_CTRS; i++)
		if (create_mixed(P, i, "ctr-", &cause) != 0)
			die("%s: container %ld of %d: %s", m->name, i,
			    RESTORE_CTRS, cause);
	b.state = policy_save(P);
	policy_free(P);
	n = calibrate(restore_iter, &b);
	t = timed(restore_iter, &b, n);
	report("restore_1000c_200claims_ms", m->name, t * 1000 / (double)n,
	    "ms");
	json_decref(b.state);
}

int
main(int argc, char **argv)
{
	struct machine	 m;
	char		*cause = NULL, *eq;
	int		 i;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_policy NAME=SYSFSROOT ...\n");
		return (2);
	}
	for (i = 1; i < argc; i++) {
		if ((eq = strchr(argv[i], '=')) == NULL || eq == argv[i]) {
			fprintf(stderr, "usage: bench_policy NAME=SYSFSROOT "
			    "...\n");
			return (2);
		}
		*eq = '\0';
		memset(&m, 0, sizeof m);
		m.name = argv[i];
		if (sysfs_discover(eq + 1, &m.topo, &cause) != 0)
			die("%s: %s", m.name, cause);
		m.cfg = config_new();
		bench_claims(&m);
		bench_containers(&m);
		bench_restore(&m);
		config_free(m.cfg);
		topology_free(m.topo);
	}
	return (0);
}
