/*
 * kube-probe runs Kubernetes API requests through kube.c on a real event
 * loop, for t/integration/test_kube.py: every METHOD PATH pair on the
 * command line starts at once, a 10 ms timer ticks meanwhile (a loop that
 * blocked would miss its ticks), and one JSON object is printed at the end:
 * {"results":[{"status","body","error"}...],"ticks":N,"reentered":N,
 * "kube":status}; reentered counts callbacks run inside kube_request().
 *
 * usage: kube-probe [-k kubeconfig] [-t timeout_ms] [-r retries]
 *	      [-b backoff_ms] [-d body_json] [-p KEY/KEY...] [-c] [-q ms] [-s]
 *	      METHOD PATH ...
 * -c cancels the first request right after starting it; -q stops the loop
 * and frees the client after ms, whatever is still pending; -s starts
 * each request when the one before has answered (the body then goes
 * with every method but GET and DELETE). -p makes each request with
 * kube_request_pick for the string at that path of keys (split at '/'):
 * its result is {"status","value","error"} (not with -s).
 *
 *	  kube-probe [options] [-n events] [-w watches] [-F] watch PATH [QUERY]
 * lists then watches PATH (-w of them at once) and prints one JSON line
 * per callback: {"watch","event","name" or "names","resourceVersion"
 * (the object's, or the list's), "status" (kube_watch_status after it),
 * "error","reentered"}. It stops after -n callbacks in all, on SIGINT or
 * SIGTERM, or on "quit" read from standard input; at the end it prints
 * {"end":true,"watches":[status...],"kube":status} and frees the client
 * with the watches still open. Lines read meanwhile from standard input:
 * "get PATH" makes an ordinary request, printed {"get","status","error"};
 * "status" prints {"watches":[...],"kube":...}; "free I" frees watch I.
 * -F frees each watch from inside its own callback when -n is reached.
 */
#include "autoconf.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "kube.h"

#define PROBE_MAX_WATCHES	64

struct probe {
	struct event_base	*base;
	json_t			*results;
	/* -s: the requests left to start, one by one. */
	struct kube		*kube;
	char			**next;
	int			 nnext;
	json_t			*body;
	struct slot		*slots;
	int			 started;
	int			 pending;
	long			 ticks;
	int			 in_request;
	int			 reentered;
};

struct slot {
	struct probe	*p;
	size_t		 idx;
};

/* Watch mode. */
struct wprobe {
	struct event_base	*base;
	struct kube		*kube;
	struct kube_watch	*w[PROBE_MAX_WATCHES];
	int			 idx[PROBE_MAX_WATCHES];
	int			 nwatch;
	long			 limit;
	long			 seen;
	int			 free_in_cb;
	int			 in_new;
	int			 reentered;
	char			 line[8192];
	size_t			 linelen;
};

static struct wprobe	wp;

static void	start_next(struct probe *);

static void
done(void *arg, int status, json_t *body, const char *error)
{
	struct slot	*s = arg;

	if (s->p->in_request)
		s->p->reentered++;
	json_array_set_new(s->p->results, s->idx, json_pack("{s:i, s:O?, s:s?}",
	    "status", status, "body", body, "error", error));
	if (s->p->started < s->p->nnext)
		start_next(s->p);
	if (--s->p->pending == 0)
		event_base_loopbreak(s->p->base);
}

static void
picked(void *arg, int status, const char *value, const char *error)
{
	struct slot	*s = arg;

	if (s->p->in_request)
		s->p->reentered++;
	json_array_set_new(s->p->results, s->idx, json_pack("{s:i, s:s?, s:s?}",
	    "status", status, "value", value, "error", error));
	if (--s->p->pending == 0)
		event_base_loopbreak(s->p->base);
}

/* -p: KEY/KEY... as a NULL-ended list (the keys point into path). */
static const char **
pick_path(char *path)
{
	const char	**out;
	char		 *k;
	size_t		  n = 0;

	if ((out = calloc(strlen(path) + 2, sizeof *out)) == NULL)
		return (NULL);
	while ((k = strsep(&path, "/")) != NULL)
		out[n++] = k;
	out[n] = NULL;
	return (out);
}

/* -s: the next request, its body unless it is a GET or a DELETE. */
static void
start_next(struct probe *p)
{
	int		 i = p->started++;
	const char	*m = p->next[2 * i];

	p->pending++;
	(void)kube_request(p->kube, m, p->next[2 * i + 1],
	    strcmp(m, "GET") == 0 || strcmp(m, "DELETE") == 0 ? NULL :
	    p->body, done, &p->slots[i]);
}

static void
emit(json_t *j)
{
	json_dumpf(j, stdout, JSON_COMPACT);
	putchar('\n');
	fflush(stdout);
	json_decref(j);
}

static json_t *
wstatuses(void)
{
	json_t	*a = json_array();
	int	 i;

	for (i = 0; i < wp.nwatch; i++) {
		json_array_append_new(a, wp.w[i] != NULL ?
		    kube_watch_status(wp.w[i]) : json_null());
	}
	return (a);
}

static void
wcb(void *arg, enum kube_watch_event ev, json_t *obj, const char *error)
{
	int	*idx = arg, i;
	json_t	*out, *names, *item, *st;
	size_t	 n;

	if (wp.in_new)
		wp.reentered++;
	out = json_pack("{s:i, s:s, s:s?, s:i}", "watch", *idx,
	    "event", kube_watch_event_name(ev), "error", error,
	    "reentered", wp.reentered);
	st = kube_watch_status(wp.w[*idx]);
	if (ev == KUBE_WATCH_LIST) {
		names = json_array();
		json_array_foreach(obj, n, item) {
			json_array_append(names, json_object_get(
			    json_object_get(item, "metadata"), "name"));
		}
		json_object_set_new(out, "names", names);
		json_object_set(out, "resourceVersion",
		    json_object_get(st, "resourceVersion"));
	} else if (obj != NULL) {
		json_object_set(out, "name", json_object_get(
		    json_object_get(obj, "metadata"), "name"));
		json_object_set(out, "resourceVersion", json_object_get(
		    json_object_get(obj, "metadata"), "resourceVersion"));
		json_object_set(out, "object", obj);
	}
	json_object_set_new(out, "status", st);
	emit(out);
	if (wp.limit > 0 && ++wp.seen == wp.limit) {
		if (wp.free_in_cb) {
			/* Its own first (inside its callback), then the rest. */
			kube_watch_free(wp.w[*idx]);
			wp.w[*idx] = NULL;
			for (i = 0; i < wp.nwatch; i++) {
				kube_watch_free(wp.w[i]);
				wp.w[i] = NULL;
			}
		}
		/* A moment on the loop: what was freed late goes then. */
		event_base_loopexit(wp.base, &(struct timeval){ 0, 50000 });
	}
}

static void
wget_done(void *arg, int status, json_t *body, const char *error)
{
	char	*path = arg;

	emit(json_pack("{s:s, s:i, s:s?}", "get", path, "status", status,
	    "error", error));
	free(path);
}

static void
wcommand(char *line)
{
	int	i;

	if (strncmp(line, "get ", 4) == 0) {
		kube_request(wp.kube, "GET", line + 4, NULL, wget_done,
		    strdup(line + 4));
	} else if (strcmp(line, "status") == 0) {
		emit(json_pack("{s:o, s:o}", "watches", wstatuses(),
		    "kube", kube_status(wp.kube)));
	} else if (strncmp(line, "free ", 5) == 0) {
		i = atoi(line + 5);
		if (i >= 0 && i < wp.nwatch) {
			kube_watch_free(wp.w[i]);
			wp.w[i] = NULL;
		}
		emit(json_pack("{s:i}", "freed", i));
	} else if (strcmp(line, "quit") == 0)
		event_base_loopbreak(wp.base);
}

static void
wstdin(evutil_socket_t fd, short events, void *arg)
{
	ssize_t	 n;
	char	*nl;

	n = read(fd, wp.line + wp.linelen, sizeof wp.line - 1 - wp.linelen);
	if (n <= 0) {
		event_del(arg);
		return;
	}
	wp.linelen += (size_t)n;
	wp.line[wp.linelen] = '\0';
	while ((nl = strchr(wp.line, '\n')) != NULL) {
		*nl = '\0';
		wcommand(wp.line);
		wp.linelen -= (size_t)(nl + 1 - wp.line);
		memmove(wp.line, nl + 1, wp.linelen + 1);
	}
	if (wp.linelen == sizeof wp.line - 1)
		wp.linelen = 0;
}

static void
wsignal(evutil_socket_t fd, short events, void *arg)
{
	event_base_loopbreak(wp.base);
}

static int
watch_main(const struct kube_opts *opts, int nwatch, const char *path,
    const char *query)
{
	struct event	*in, *sigint, *sigterm;
	char		*cause = NULL;
	int		 i;

	if ((wp.base = event_base_new()) == NULL)
		return (1);
	if (kube_new(wp.base, opts, &wp.kube, &cause) != 0) {
		fprintf(stderr, "kube-probe: %s\n", cause);
		free(cause);
		event_base_free(wp.base);
		return (1);
	}
	wp.nwatch = nwatch;
	for (i = 0; i < nwatch; i++) {
		wp.idx[i] = i;
		wp.in_new = 1;
		wp.w[i] = kube_watch_new(wp.kube, path, query, wcb, &wp.idx[i]);
		wp.in_new = 0;
		if (wp.w[i] == NULL) {
			fprintf(stderr, "kube-probe: bad path %s\n", path);
			return (1);
		}
	}
	in = event_new(wp.base, 0, EV_READ | EV_PERSIST, wstdin,
	    event_self_cbarg());
	sigint = evsignal_new(wp.base, SIGINT, wsignal, NULL);
	sigterm = evsignal_new(wp.base, SIGTERM, wsignal, NULL);
	if (in == NULL || sigint == NULL || sigterm == NULL)
		return (1);
	event_add(in, NULL);
	event_add(sigint, NULL);
	event_add(sigterm, NULL);
	event_base_dispatch(wp.base);
	emit(json_pack("{s:b, s:o, s:o}", "end", 1, "watches", wstatuses(),
	    "kube", kube_status(wp.kube)));
	/* The watches left go with the client. */
	kube_free(wp.kube);
	event_free(in);
	event_free(sigint);
	event_free(sigterm);
	event_base_free(wp.base);
	return (0);
}

static void
quit(evutil_socket_t fd, short events, void *arg)
{
	struct probe	*p = arg;

	event_base_loopbreak(p->base);
}

static void
tick(evutil_socket_t fd, short events, void *arg)
{
	struct probe	*p = arg;

	p->ticks++;
}

int
main(int argc, char **argv)
{
	struct kube_opts	 opts = { NULL, 5000, 0, 100 };
	struct probe		 p;
	struct kube		*k;
	struct kube_request	*r;
	struct slot		*slots;
	struct event		*ev, *qev = NULL;
	struct timeval		 tv = { 0, 10000 }, qtv;
	json_t			*body = NULL, *out;
	json_error_t		 jerr;
	const char		**pick = NULL;
	char			*cause = NULL, *text;
	int			 ch, cancel = 0, n, i, quit_ms = 0, nwatch = 1;
	int			 seq = 0;

	while ((ch = getopt(argc, argv, "k:t:r:b:d:p:cq:n:w:Fs")) != -1) {
		switch (ch) {
		case 'k':
			opts.kubeconfig = optarg;
			break;
		case 't':
			opts.timeout_ms = atoi(optarg);
			break;
		case 'r':
			opts.retries = atoi(optarg);
			break;
		case 'b':
			opts.backoff_ms = atoi(optarg);
			break;
		case 'd':
			if ((body = json_loads(optarg, 0, &jerr)) == NULL) {
				fprintf(stderr, "kube-probe: -d: %s\n",
				    jerr.text);
				return (2);
			}
			break;
		case 'p':
			free(pick);
			if ((pick = pick_path(optarg)) == NULL)
				return (1);
			break;
		case 'c':
			cancel = 1;
			break;
		case 'q':
			quit_ms = atoi(optarg);
			break;
		case 'n':
			wp.limit = atol(optarg);
			break;
		case 'w':
			nwatch = atoi(optarg);
			if (nwatch < 1 || nwatch > PROBE_MAX_WATCHES)
				goto usage;
			break;
		case 'F':
			wp.free_in_cb = 1;
			break;
		case 's':
			seq = 1;
			break;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc >= 2 && argc <= 3 && strcmp(argv[0], "watch") == 0) {
		json_decref(body);
		return (watch_main(&opts, nwatch, argv[1],
		    argc == 3 ? argv[2] : NULL));
	}
	if (argc == 0 || argc % 2 != 0 || (seq && pick != NULL))
		goto usage;
	n = argc / 2;

	memset(&p, 0, sizeof p);
	if ((p.base = event_base_new()) == NULL)
		return (1);
	if (kube_new(p.base, &opts, &k, &cause) != 0) {
		fprintf(stderr, "kube-probe: %s\n", cause);
		free(cause);
		json_decref(body);
		event_base_free(p.base);
		return (1);
	}
	p.results = json_array();
	slots = calloc((size_t)n, sizeof *slots);
	if (slots == NULL)
		return (1);
	for (i = 0; i < n; i++) {
		json_array_append_new(p.results, json_null());
		slots[i].p = &p;
		slots[i].idx = (size_t)i;
	}
	if (seq) {
		p.kube = k;
		p.next = argv;
		p.nnext = n;
		p.body = body;
		p.slots = slots;
		start_next(&p);
		n = 0;
	}
	for (i = 0; i < n; i++) {
		p.pending++;
		p.in_request = 1;
		if (pick != NULL) {
			text = body != NULL ? json_dumps(body, JSON_COMPACT) :
			    NULL;
			r = kube_request_pick(k, argv[2 * i], argv[2 * i + 1],
			    text, pick, picked, &slots[i]);
		} else
			r = kube_request(k, argv[2 * i], argv[2 * i + 1], body,
			    done, &slots[i]);
		p.in_request = 0;
		if (i == 0 && cancel && r != NULL) {
			kube_cancel(r);
			p.pending--;
			json_array_set_new(p.results, 0,
			    json_string("cancelled"));
		}
	}
	ev = event_new(p.base, -1, EV_PERSIST, tick, &p);
	event_add(ev, &tv);
	if (quit_ms > 0) {
		qev = evtimer_new(p.base, quit, &p);
		qtv.tv_sec = quit_ms / 1000;
		qtv.tv_usec = (quit_ms % 1000) * 1000;
		evtimer_add(qev, &qtv);
	}
	if (p.pending > 0)
		event_base_dispatch(p.base);
	out = json_pack("{s:o, s:i, s:i, s:o}", "results", p.results,
	    "ticks", (int)p.ticks, "reentered", p.reentered,
	    "kube", kube_status(k));
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	json_decref(body);
	/* Requests still pending are dropped without their callbacks. */
	kube_free(k);
	if (qev != NULL)
		event_free(qev);
	event_free(ev);
	event_base_free(p.base);
	free(slots);
	free(pick);
	return (0);

usage:
	fprintf(stderr, "usage: kube-probe [-k kubeconfig] [-t timeout_ms] "
	    "[-r retries] [-b backoff_ms] [-d body] [-p KEY/KEY...] [-c] "
	    "[-q ms] [-s] METHOD PATH ...\n"
	    "       kube-probe [options] [-n events] [-w watches] [-F] "
	    "watch PATH [QUERY]\n");
	json_decref(body);
	free(pick);
	return (2);
}
