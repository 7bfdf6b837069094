#include "autoconf.h"

/*
 * h2-probe: the daemon's gRPC plumbing alone, for test_grpc.py. Usage:
 *   h2-probe KUBELET_DIR SOCKET
 * serves the registration service (driver "probe.example.com", endpoint
 * SOCKET) at KUBELET_DIR/plugins_registry and, on SOCKET, test methods:
 *   /probe.Test/Echo    answers the request bytes at once;
 *   /probe.Test/Later   answers them after 200 ms through the reply handle;
 *   /probe.Test/Status  answers "registered=N error=TEXT connections=N";
 *   /probe.Test/Fail    fails with INVALID_ARGUMENT and the request as text.
 * Prints "ready" when both listen; SIGTERM frees everything and exits 0,
 * so a sanitizer build reports any leak.
 */

#include <sys/queue.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "grpc.h"
#include "h2.h"
#include "log.h"
#include "registration.h"
#include "xmalloc.h"

struct later {
	struct h2_call		*call;
	uint8_t			*data;
	size_t			 len;
	struct event		*ev;
	LIST_ENTRY(later)	 entry;
};

struct probe {
	struct event_base	*base;
	struct h2_server	*srv;
	struct registration	*reg;
	LIST_HEAD(, later)	 laters;	/* answers still owed */
};

static void
echo(struct h2_call *call, const uint8_t *req, size_t len, void *arg)
{
	(void)arg;
	h2_reply(call, req, len);
}

static void
later_fire(evutil_socket_t fd, short what, void *arg)
{
	struct later	*l = arg;

	(void)fd;
	(void)what;
	h2_reply(l->call, l->data, l->len);
	LIST_REMOVE(l, entry);
	event_free(l->ev);
	free(l->data);
	free(l);
}

static void
later(struct h2_call *call, const uint8_t *req, size_t len, void *arg)
{
	struct probe	*p = arg;
	struct later	*l;
	struct timeval	 tv = { 0, 200000 };

	l = xcalloc(1, sizeof *l);
	l->call = call;
	l->len = len;
	l->data = xmalloc(len + 1);
	if (len != 0)
		memcpy(l->data, req, len);
	l->ev = evtimer_new(p->base, later_fire, l);
	if (l->ev == NULL)
		fatalx("evtimer_new");
	evtimer_add(l->ev, &tv);
	LIST_INSERT_HEAD(&p->laters, l, entry);
}

static void
status(struct h2_call *call, const uint8_t *req, size_t len, void *arg)
{
	struct probe	*p = arg;
	const char	*err;
	char		*s;

	(void)req;
	(void)len;
	err = registration_error(p->reg);
	xasprintf(&s, "registered=%d error=%s connections=%u",
	    registration_registered(p->reg), err != NULL ? err : "",
	    h2_server_connections(p->srv));
	h2_reply(call, s, strlen(s));
	free(s);
}

static void
fail(struct h2_call *call, const uint8_t *req, size_t len, void *arg)
{
	(void)arg;
	h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT, "%.*s", (int)len,
	    (const char *)req);
}

static void
on_term(evutil_socket_t fd, short what, void *arg)
{
	struct probe	*p = arg;

	(void)fd;
	(void)what;
	event_base_loopexit(p->base, NULL);
}

int
main(int argc, char **argv)
{
	struct probe	 p;
	struct event	*ev;
	struct later	*l;
	char		*cause = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: h2-probe kubelet-dir socket\n");
		return (2);
	}
	log_init(1, 1);
	signal(SIGPIPE, SIG_IGN);
	memset(&p, 0, sizeof p);
	LIST_INIT(&p.laters);
	if ((p.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	p.srv = h2_server_new(p.base, "probe");
	h2_server_add(p.srv, "/probe.Test/Echo", echo, &p);
	h2_server_add(p.srv, "/probe.Test/Later", later, &p);
	h2_server_add(p.srv, "/probe.Test/Status", status, &p);
	h2_server_add(p.srv, "/probe.Test/Fail", fail, &p);
	p.reg = registration_new(p.base, argv[1], "probe.example.com",
	    argv[2]);
	if (h2_server_listen(p.srv, argv[2], &cause) != 0 ||
	    registration_start(p.reg, &cause) != 0)
		fatalx("%s", cause);
	if ((ev = evsignal_new(p.base, SIGTERM, on_term, &p)) == NULL ||
	    evsignal_add(ev, NULL) != 0)
		fatalx("evsignal");
	printf("ready\n");
	fflush(stdout);
	event_base_dispatch(p.base);
	event_free(ev);
	registration_free(p.reg);
	h2_server_free(p.srv);
	/* The handles outlive their server: answering them only frees them. */
	while ((l = LIST_FIRST(&p.laters)) != NULL)
		later_fire(-1, 0, l);
	event_base_free(p.base);
	return (0);
}
