/*
 * gate.c holds the output of every peer connection (NRI, DRA and
 * registration, admin) while a loop turn's changes are not durable. It
 * only turns the bufferevents' writing off and on: what the connections
 * queue stays in their output buffers meanwhile, in order, and is
 * written to the sockets the moment the gate opens. A connection
 * leaves the gate before its owner closes it, so the gate never turns
 * writing back on for a connection being torn down.
 */
#include "autoconf.h"

#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "gate.h"
#include "log.h"
#include "xmalloc.h"

struct member {
	struct bufferevent	*bev;
	void			(*drop)(void *);
	void			*arg;
};

struct gate {
	int		 held;
	int		 n;
	int		 cap;
	struct member	*m;
};

struct gate *
gate_new(void)
{
	return (xcalloc(1, sizeof (struct gate)));
}

void
gate_free(struct gate *g)
{
	if (g == NULL)
		return;
	free(g->m);
	free(g);
}

void
gate_join(struct gate *g, struct bufferevent *bev, void (*drop)(void *),
    void *arg)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->m = xreallocarray(g->m, (size_t)g->cap, sizeof *g->m);
	}
	g->m[g->n].bev = bev;
	g->m[g->n].drop = drop;
	g->m[g->n].arg = arg;
	g->n++;
	if (g->held)
		bufferevent_disable(bev, EV_WRITE);
}

void
gate_leave(struct gate *g, struct bufferevent *bev)
{
	int	i;

	if (g == NULL)
		return;
	for (i = 0; i < g->n; i++)
		if (g->m[i].bev == bev) {
			g->m[i] = g->m[--g->n];
			return;
		}
}

void
gate_hold(struct gate *g)
{
	int	i;

	if (g->held)
		return;
	g->held = 1;
	for (i = 0; i < g->n; i++)
		bufferevent_disable(g->m[i].bev, EV_WRITE);
}

int
gate_held(const struct gate *g)
{
	return (g->held);
}

void
gate_open(struct gate *g)
{
	struct evbuffer	*out;
	evutil_socket_t	 fd;
	int		 i;

	for (i = 0; i < g->n; i++) {
		if (g->held && bufferevent_enable(g->m[i].bev, EV_WRITE) != 0)
			log_warnx("cannot resume writing to a peer");
		/*
		 * Written at once, as far as the socket takes it: what the
		 * turn does next (its files) must not come first. The rest,
		 * and an error, are the bufferevent's on its next write. A
		 * socket bufferevent freezes its output's start against
		 * drains but its own, as it unfreezes it to write, so do we.
		 */
		out = bufferevent_get_output(g->m[i].bev);
		if (evbuffer_get_length(out) == 0 ||
		    (fd = bufferevent_getfd(g->m[i].bev)) == -1)
			continue;
		if (evbuffer_unfreeze(out, 1) == 0) {
			(void)evbuffer_write(out, fd);
			(void)evbuffer_freeze(out, 1);
		}
	}
	g->held = 0;
}

int
gate_drop(struct gate *g)
{
	struct member	*v;
	int		 i, n = 0, nv = 0;

	/* The owners' drops leave the gate: work on a copy. */
	v = xreallocarray(NULL, (size_t)(g->n > 0 ? g->n : 1), sizeof *v);
	for (i = 0; i < g->n; i++)
		if (evbuffer_get_length(bufferevent_get_output(g->m[i].bev)) >
		    0)
			v[nv++] = g->m[i];
	for (i = 0; i < nv; i++) {
		gate_leave(g, v[i].bev);
		v[i].drop(v[i].arg);
		n++;
	}
	free(v);
	gate_open(g);
	return (n);
}
