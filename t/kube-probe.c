/*
 * kube-probe runs Kubernetes API requests through kube.c on a real event
 * loop, for t/integration/test_kube.py: every METHOD PATH pair on the
 * command line starts at once, a 10 ms timer ticks meanwhile (a loop that
 * blocked would miss its ticks), and one JSON object is printed at the end:
 * {"results":[{"status","body","error"}...],"ticks":N,"reentered":N,
 * "kube":status}; reentered counts callbacks run inside kube_request().
 *
 * usage: kube-probe [-k kubeconfig] [-t timeout_ms] [-r retries]
 *	      [-b backoff_ms] [-d body_json] [-c] [-q ms] METHOD PATH ...
 * -c cancels the first request right after starting it; -q stops the loop
 * and frees the client after ms, whatever is still pending.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "kube.h"

struct probe {
	struct event_base	*base;
	json_t			*results;
	int			 pending;
	long			 ticks;
	int			 in_request;
	int			 reentered;
};

struct slot {
	struct probe	*p;
	size_t		 idx;
};

static void
done(void *arg, int status, json_t *body, const char *error)
{
	struct slot	*s = arg;

	if (s->p->in_request)
		s->p->reentered++;
	json_array_set_new(s->p->results, s->idx, json_pack("{s:i, s:O?, s:s?}",
	    "status", status, "body", body, "error", error));
	if (--s->p->pending == 0)
		event_base_loopbreak(s->p->base);
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
	char			*cause = NULL;
	int			 ch, cancel = 0, n, i, quit_ms = 0;

	while ((ch = getopt(argc, argv, "k:t:r:b:d:cq:")) != -1) {
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
		case 'c':
			cancel = 1;
			break;
		case 'q':
			quit_ms = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0 || argc % 2 != 0)
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
		p.pending++;
		p.in_request = 1;
		r = kube_request(k, argv[2 * i], argv[2 * i + 1], body, done,
		    &slots[i]);
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
	return (0);

usage:
	fprintf(stderr, "usage: kube-probe [-k kubeconfig] [-t timeout_ms] "
	    "[-r retries] [-b backoff_ms] [-d body] [-c] [-q ms] "
	    "METHOD PATH ...\n");
	json_decref(body);
	return (2);
}
