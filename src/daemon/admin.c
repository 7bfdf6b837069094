/*
 * admin.c owns the admin socket (SPEC R-ADMIN): the listening unix socket
 * and its file, the peer credential check, the connections and their
 * backpressure, and the commands. adminproto.c splits and checks the
 * lines; the answers come from the server, the policy and the views.
 *
 * A connection is never freed inside one of its own callbacks: it is
 * marked dead and the reap event, activated for the purpose, frees it on
 * a later pass of the loop.
 *
 * Idle peers must not lock topoawarectl out: a request line begun and not
 * ended within ADMIN_REQUEST_TIMEOUT_MS closes its connection, and when
 * all SERVER_MAX_ADMIN_CONNS are taken the connection quiet the longest
 * makes room for the new one.
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "adminproto.h"
#include "cpumap.h"
#include "admin.h"
#include "check.h"
#include "clustercfg.h"
#include "gate.h"
#include "log.h"
#include "unixsock.h"
#include "metrics.h"
#include "server.h"
#include "view.h"
#include "xmalloc.h"

/* Requests of one connection handled before others get their turn. */
#define ADMIN_MAX_REQUESTS_PER_WAKEUP	16
/* Above this much unsent output a connection's requests wait. */
#define ADMIN_OUTPUT_HIGH		(256 * 1024)
/*
 * Unparsed input kept per connection; reading stops above it. A line
 * grows in its adminproto buffer, not here: a connection holds at most
 * ADMINPROTO_MAX_LINE (a config sent for a dry run) and this.
 */
#define ADMIN_INPUT_HIGH		(64 * 1024 + 4096)
#if ADMINPROTO_MAX_CONFIG != SERVER_CONFIG_MAX
#error "a config sent over the admin socket is as big as its file may be"
#endif
#define ADMIN_BACKLOG			16
/* After accept fails (EMFILE), listening pauses this long. */
#define ADMIN_ACCEPT_PAUSE_SEC		1
/* A request line must be whole this soon after its first byte. */
#define ADMIN_REQUEST_TIMEOUT_MS	5000
/* A peer that takes none of its answer for this long is dropped. */
#define ADMIN_WRITE_TIMEOUT_MS		10000
/* Check jobs running at once; more are refused. */
#define ADMIN_MAX_CHECKS		2

struct admin_conn {
	struct admin		*admin;
	struct bufferevent	*bev;
	struct adminproto	 proto;
	struct event		*ev_timeout;	/* a line left unfinished */
	uid_t			 uid;
	pid_t			 pid;
	uint64_t		 active;	/* ms, when bytes last came */
	int			 timing;	/* ev_timeout is armed */
	int			 finished;	/* the last line at EOF is done */
	int			 handled;	/* this wakeup */
	int			 more;		/* input waits for its turn */
	int			 paused;	/* output above the high mark */
	int			 eof;		/* the peer sent everything */
	int			 dead;
	/* A check answers later: its requests wait behind it. */
	struct check		*check;
	int			 check_over;	/* answered; free it */
	/* So does a reload of the cluster source, read from the API. */
	struct clustercfg_read	*reread;
	int			 reread_over;	/* answered: go on */
	TAILQ_ENTRY(admin_conn)	 entry;
};
TAILQ_HEAD(admin_conns, admin_conn);

struct admin {
	struct server		*srv;
	char			*path;
	dev_t			 dev;	/* the socket file we made */
	ino_t			 ino;
	struct evconnlistener	*listener;
	struct event		*ev_reap;
	struct event		*ev_work;
	struct event		*ev_resume;
	struct admin_conns	 conns;
	int			 nconns;	/* not counting the dead */
	int			 nchecks;	/* jobs not yet freed */
};

static void	conn_process(struct admin_conn *);

/* An answer is on its way later: the requests after it wait. */
static int
conn_waits(const struct admin_conn *c)
{
	return (c->check != NULL || c->reread != NULL);
}

static void
conn_kill(struct admin_conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	c->admin->nconns--;
	gate_leave(c->admin->srv->gate, c->bev);
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	evtimer_del(c->ev_timeout);
	event_active(c->admin->ev_reap, EV_TIMEOUT, 0);
}

static void
gate_drop_cb(void *arg)
{
	log_warnx("admin: closing a connection: the state could not be made "
	    "durable, its answer is withdrawn");
	conn_kill(arg);
}

static void
conn_free(struct admin_conn *c)
{
	struct admin	*a = c->admin;

	TAILQ_REMOVE(&a->conns, c, entry);
	if (!c->dead)
		a->nconns--;
	gate_leave(a->srv->gate, c->bev);
	if (c->check != NULL) {
		check_free(c->check);
		a->nchecks--;
	}
	clustercfg_read_cancel(c->reread);
	bufferevent_free(c->bev);
	event_free(c->ev_timeout);
	adminproto_clear(&c->proto);
	free(c);
}

/*
 * Says why to a peer we stop serving, with what the socket takes at once,
 * unless answers are still on their way (the line would cut into them),
 * and closes.
 */
static void
conn_drop(struct admin_conn *c, const char *why)
{
	char	*line;
	ssize_t	 n;

	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		line = adminproto_reply_error(why);
		n = send(bufferevent_getfd(c->bev), line, strlen(line),
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)n;
		free(line);
	}
	conn_kill(c);
}

/*
 * Arms the request timeout when a line begins, stops it when none is
 * unfinished. While its input waits on our side (paused, or its turn to
 * come) the peer is not late.
 */
static void
conn_watch(struct admin_conn *c)
{
	struct timeval	tv = { ADMIN_REQUEST_TIMEOUT_MS / 1000,
			    (ADMIN_REQUEST_TIMEOUT_MS % 1000) * 1000 };

	if (c->dead)
		return;
	if (c->eof || c->paused || c->more ||
	    !adminproto_partial(&c->proto)) {
		if (c->timing)
			evtimer_del(c->ev_timeout);
		c->timing = 0;
	} else if (!c->timing) {
		evtimer_add(c->ev_timeout, &tv);
		c->timing = 1;
	}
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct admin_conn	*c = arg;
	char			*why;

	c->timing = 0;
	/* conn_process arms it afresh when the input is read again. */
	if (c->dead || c->paused || c->more)
		return;
	log_info("admin: closing the connection of pid %ld: a request "
	    "unfinished for %d ms", (long)c->pid, ADMIN_REQUEST_TIMEOUT_MS);
	metrics_inc("errors", "kind", "admin_limit");
	xasprintf(&why, "request line unfinished after %d ms",
	    ADMIN_REQUEST_TIMEOUT_MS);
	conn_drop(c, why);
	free(why);
}

/* The connection to close for a newcomer: the one quiet the longest of
 * those with no answer on its way or requests waiting. */
static struct admin_conn *
conn_idlest(struct admin *a)
{
	struct admin_conn	*c, *best = NULL;

	TAILQ_FOREACH(c, &a->conns, entry) {
		if (c->dead || c->more || c->paused || conn_waits(c) ||
		    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
			continue;
		if (best == NULL || c->active < best->active)
			best = c;
	}
	return (best);
}

static void
reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct admin		*a = arg;
	struct admin_conn	*c, *next;

	for (c = TAILQ_FIRST(&a->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->dead)
			conn_free(c);
	}
}

/* Connections with input left over get their turn after the next poll. */
static void
work_cb(evutil_socket_t fd, short what, void *arg)
{
	struct admin		*a = arg;
	struct admin_conn	*c;

	TAILQ_FOREACH(c, &a->conns, entry) {
		if (c->check != NULL && c->check_over) {
			check_free(c->check);
			c->check = NULL;
			c->check_over = 0;
			a->nchecks--;
			if (!c->dead && !c->paused)
				conn_process(c);
		} else if (c->reread_over) {
			c->reread_over = 0;
			if (!c->dead && !c->paused)
				conn_process(c);
		} else if (c->more && !c->dead && !c->paused)
			conn_process(c);
	}
}

static void
schedule_work(struct admin *a)
{
	struct timeval	tv = { 0, 0 };

	evtimer_add(a->ev_work, &tv);
}

static void
conn_write(struct admin_conn *c, char *line)
{
	if (line == NULL)
		line = adminproto_reply_error("out of memory");
	if (bufferevent_write(c->bev, line, strlen(line)) != 0)
		conn_kill(c);
	free(line);
}

static char *
reply_error(const char *fmt, ...) __attribute__((__format__(__printf__, 1, 2)));

static char *
reply_error(const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *line;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	line = adminproto_reply_error(msg != NULL ? msg : "out of memory");
	free(msg);
	return (line);
}

static char *
no_args(const char *command, size_t nargs)
{
	if (nargs == 0)
		return (NULL);
	return (reply_error("%s takes no arguments", command));
}

static json_t *
claims_only(json_t *grants)
{
	json_t	*out, *g;
	size_t	 i;

	out = json_array();
	json_array_foreach(grants, i, g) {
		if (json_object_get(g, "claim") != NULL)
			json_array_append(out, g);
	}
	json_decref(grants);
	return (out);
}

static const char *const level_names[] = { "error", "warn", "info", "debug" };

static char *
cmd_log_level(const char *const *args, size_t nargs)
{
	enum log_level	 old = log_get_level();
	char		*name, *line;
	size_t		 i;

	if (nargs == 0)
		return (adminproto_reply_ok(json_pack("{s:s}", "level",
		    level_names[old])));
	if (nargs > 1)
		return (reply_error("log-level takes at most one argument"));
	for (i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
		if (strcmp(args[0], level_names[i]) == 0) {
			log_set_level((enum log_level)i);
			log_info("log level %s (was %s), set over the admin "
			    "socket", level_names[i], level_names[old]);
			return (adminproto_reply_ok(json_pack("{s:s, s:s}",
			    "level", level_names[i], "previous",
			    level_names[old])));
		}
	}
	name = log_escape(args[0], 64);
	metrics_inc("errors", "kind", "admin_request");
	line = reply_error("unknown log level \"%s\": expected "
	    "error|warn|info|debug", name);
	free(name);
	return (line);
}

/* reload --dry-run [CONFIG]: CONFIG, in base64, instead of the file. */
static char *
cmd_reload_dry(struct server *srv, const char *const *args, size_t nargs)
{
	const char	*why = NULL;
	char		*text = NULL;
	size_t		 len = 0;
	json_t		*report;

	if (strcmp(args[0], "--dry-run") != 0 || nargs > 2)
		why = "reload takes no arguments but --dry-run and a config "
		    "in base64";
	else if (nargs == 2 && adminproto_unb64(args[1], strlen(args[1]),
	    &text, &len) != 0)
		why = "reload --dry-run: the config is not in base64";
	else if (len > SERVER_CONFIG_MAX)
		why = "reload --dry-run: the config is larger than a config "
		    "file may be (SERVER_CONFIG_MAX)";
	if (why != NULL) {
		free(text);
		metrics_inc("errors", "kind", "admin_request");
		return (adminproto_reply_error(why));
	}
	report = server_reload_dry(srv, nargs == 2 ? text : NULL, len);
	free(text);
	return (adminproto_reply_ok(report));
}

#ifdef TOPOAWARE_DEBUG_HOOKS
/*
 * Blocks the whole loop for a while, as a hung handler would: the test of
 * the watchdog needs the pings to stop. Built only with
 * --enable-debug-hooks.
 */
static char *
cmd_debug_stall(const char *const *args, size_t nargs)
{
	char	*end;
	long	 secs;

	if (nargs != 1 || (secs = strtol(args[0], &end, 10)) < 1 ||
	    secs > 120 || *end != '\0')
		return (reply_error("debug-stall takes a number of seconds, "
		    "1-120"));
	log_warnx("stalling the loop for %ld s on request", secs);
	sleep((unsigned)secs);
	return (adminproto_reply_ok(json_pack("{s:I}", "stalled",
	    (json_int_t)secs)));
}
#endif

/* explain ID: why a container or claim ("claim:<uid>") holds what it
 * holds, from its last placement. */
static char *
cmd_explain(struct server *srv, const char *const *args, size_t nargs)
{
	json_t	*o;
	char	*cause = NULL, *line;

	if (nargs != 1) {
		metrics_inc("errors", "kind", "admin_request");
		return (reply_error("explain takes a container id or "
		    "claim:<uid>"));
	}
	if ((o = policy_explain(srv->policy, args[0], &cause)) == NULL) {
		line = adminproto_reply_error(cause);
		free(cause);
		return (line);
	}
	return (adminproto_reply_ok(o));
}

/* The map of the machine: what holds each CPU (cpumap.h). */
static char *
cmd_map(struct server *srv)
{
	json_t	*map;

	if ((map = cpumap_json(srv->policy)) == NULL)
		return (reply_error("out of memory building the map"));
	return (adminproto_reply_ok(map));
}

/* One request; returns the reply line. */
static char *
admin_command(struct admin *a, const char *command, const char *const *args,
    size_t nargs)
{
	struct server	*srv = a->srv;
	json_t		*pools, *grants;
	char		*cause = NULL, *line, *text, *name;

	metrics_inc("admin_requests", "command", command);
	if (strcmp(command, "log-level") == 0)
		return (cmd_log_level(args, nargs));
#ifdef TOPOAWARE_DEBUG_HOOKS
	if (strcmp(command, "debug-stall") == 0)
		return (cmd_debug_stall(args, nargs));
#endif
	if (strcmp(command, "explain") == 0)
		return (cmd_explain(srv, args, nargs));
	if (strcmp(command, "status") != 0 &&
	    strcmp(command, "topology") != 0 &&
	    strcmp(command, "pools") != 0 &&
	    strcmp(command, "grants") != 0 &&
	    strcmp(command, "claims") != 0 &&
	    strcmp(command, "map") != 0 &&
	    strcmp(command, "config") != 0 &&
	    strcmp(command, "reload") != 0 &&
	    strcmp(command, "metrics") != 0) {
		metrics_inc("errors", "kind", "admin_request");
		name = log_escape(command, 64);
		line = reply_error("unknown command \"%s\"", name);
		free(name);
		return (line);
	}
	if (strcmp(command, "reload") == 0 && nargs > 0)
		return (cmd_reload_dry(srv, args, nargs));
	if ((line = no_args(command, nargs)) != NULL) {
		metrics_inc("errors", "kind", "admin_request");
		return (line);
	}
	if (strcmp(command, "status") == 0)
		return (adminproto_reply_ok(server_status(srv)));
	if (strcmp(command, "topology") == 0)
		return (adminproto_reply_ok(view_topology(srv->topo)));
	if (strcmp(command, "pools") == 0)
		return (adminproto_reply_ok(policy_pools_json(srv->policy)));
	if (strcmp(command, "grants") == 0)
		return (adminproto_reply_ok(policy_grants_json(srv->policy)));
	if (strcmp(command, "claims") == 0)
		return (adminproto_reply_ok(claims_only(
		    policy_grants_json(srv->policy))));
	if (strcmp(command, "config") == 0)
		return (adminproto_reply_ok(config_dump(srv->cfg)));
	if (strcmp(command, "map") == 0)
		return (cmd_map(srv));
	if (strcmp(command, "metrics") == 0) {
		pools = policy_pools_json(srv->policy);
		grants = policy_grants_json(srv->policy);
		text = metrics_exposition(pools, grants);
		json_decref(pools);
		json_decref(grants);
		line = adminproto_reply_ok(json_pack("{s:s}", "text", text));
		free(text);
		return (line);
	}
	/* reload */
	if (server_reload(srv, "admin", &cause) != 0) {
		line = adminproto_reply_error(cause);
		free(cause);
		return (line);
	}
	return (adminproto_reply_ok(json_pack("{s:i, s:b}", "generation",
	    (int)srv->generation, "unchanged", srv->last_reload.unchanged)));
}

/* A check job is over: its answer goes now, the job on the next pass. */
static void
check_done(json_t *result, void *arg)
{
	struct admin_conn	*c = arg;

	c->check_over = 1;
	schedule_work(c->admin);
	if (c->dead)
		json_decref(result);
	else
		conn_write(c, adminproto_reply_ok(result));
}

/* `check` answers when its job is over: 1 when one is under way. */
static int
check_start(struct admin_conn *c, size_t nargs)
{
	struct admin	*a = c->admin;
	char		*cause = NULL;

	metrics_inc("admin_requests", "command", "check");
	if (nargs > 0) {
		metrics_inc("errors", "kind", "admin_request");
		conn_write(c, reply_error("check takes no arguments"));
		return (0);
	}
	if (a->nchecks >= ADMIN_MAX_CHECKS) {
		metrics_inc("errors", "kind", "admin_limit");
		conn_write(c, reply_error("%d checks are running already, try "
		    "again later", a->nchecks));
		return (0);
	}
	if (check_new(a->srv, check_done, c, &c->check, &cause) != 0) {
		conn_write(c, adminproto_reply_error(cause));
		free(cause);
		return (0);
	}
	a->nchecks++;
	return (1);
}

/* The cluster source read its objects again and applied them. */
static void
reread_done(void *arg, json_t *reply, const char *error)
{
	struct admin_conn	*c = arg;

	c->reread = NULL;	/* it frees itself */
	c->reread_over = 1;
	schedule_work(c->admin);
	if (c->dead)
		return;
	if (reply != NULL)
		conn_write(c, adminproto_reply_ok(json_incref(reply)));
	else
		conn_write(c, adminproto_reply_error(error));
}

/* `reload` with the cluster source answers when the API has. */
static void
reread_start(struct admin_conn *c)
{
	metrics_inc("admin_requests", "command", "reload");
	c->reread = clustercfg_reread(c->admin->srv->cluster, "admin",
	    reread_done, c);
}

/* The peer closed its end for good (not a half-close after its request):
 * a check it waits for is of no use any more. */
static int
conn_gone(struct admin_conn *c)
{
	struct pollfd	pfd = { bufferevent_getfd(c->bev), POLLOUT, 0 };

	return (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)));
}

static int
conn_request(void *arg, const char *command, const char *const *args,
    size_t nargs, const char *error)
{
	struct admin_conn	*c = arg;
	struct evbuffer		*out;

	if (error != NULL) {
		log_debug("admin: bad request from pid %ld: %s", (long)c->pid,
		    error);
		metrics_inc("errors", "kind", "admin_request");
		conn_write(c, adminproto_reply_error(error));
	} else if (strcmp(command, "check") == 0) {
		if (check_start(c, nargs))
			return (1);	/* what follows waits for its answer */
	} else if (strcmp(command, "reload") == 0 && nargs == 0 &&
	    c->admin->srv->cluster != NULL) {
		reread_start(c);
		return (1);
	} else
		conn_write(c, admin_command(c->admin, command, args, nargs));
	c->handled++;
	out = bufferevent_get_output(c->bev);
	return (c->dead || c->handled >= ADMIN_MAX_REQUESTS_PER_WAKEUP ||
	    evbuffer_get_length(out) > ADMIN_OUTPUT_HIGH);
}

/* The peer has said all it will and heard all we said: close. */
static void
conn_check_done(struct admin_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	if (c->eof && !c->more && !conn_waits(c) &&
	    evbuffer_get_length(in) == 0 && evbuffer_get_length(out) == 0)
		conn_kill(c);
}

static void
conn_process(struct admin_conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	struct evbuffer		*out = bufferevent_get_output(c->bev);
	struct evbuffer_iovec	 v;
	size_t			 used;

	c->handled = 0;
	c->more = 0;
	while (!c->dead && !conn_waits(c) && evbuffer_get_length(in) > 0) {
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		used = adminproto_feed(&c->proto, v.iov_base, v.iov_len,
		    conn_request, c);
		if (evbuffer_drain(in, used) != 0) {
			conn_kill(c);
			return;
		}
		if (evbuffer_get_length(out) > ADMIN_OUTPUT_HIGH) {
			/* Wait until the peer has read what it asked for. */
			log_debug("admin: pid %ld reads slowly, %zu bytes "
			    "unsent; pausing its requests", (long)c->pid,
			    evbuffer_get_length(out));
			c->paused = 1;
			c->more = evbuffer_get_length(in) > 0;
			bufferevent_disable(c->bev, EV_READ);
			conn_watch(c);
			return;
		}
		if (c->handled >= ADMIN_MAX_REQUESTS_PER_WAKEUP) {
			if (evbuffer_get_length(in) > 0) {
				c->more = 1;
				schedule_work(c->admin);
			}
			break;
		}
	}
	if (!c->dead && c->eof && !c->more && !c->finished &&
	    !conn_waits(c) && evbuffer_get_length(in) == 0) {
		c->finished = 1;
		adminproto_finish(&c->proto, conn_request, c);
	}
	if (!c->dead) {
		conn_watch(c);
		conn_check_done(c);
	}
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct admin_conn	*c = arg;

	c->active = clock_mono_ms();
	if (!c->dead && !c->paused && !c->more)
		conn_process(c);
}

/* The output drained completely. */
static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct admin_conn	*c = arg;

	if (c->dead)
		return;
	if (c->paused) {
		c->paused = 0;
		if (!c->eof)
			bufferevent_enable(c->bev, EV_READ);
		if (c->more)
			schedule_work(c->admin);
	}
	conn_check_done(c);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct admin_conn	*c = arg;

	if (c->dead)
		return;
	if (what & BEV_EVENT_ERROR) {
		log_debug("admin: connection of pid %ld failed: %s",
		    (long)c->pid, strerror(EVUTIL_SOCKET_ERROR()));
		conn_kill(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		log_info("admin: closing the connection of pid %ld: it read "
		    "nothing of its answer for %d ms", (long)c->pid,
		    ADMIN_WRITE_TIMEOUT_MS);
		metrics_inc("errors", "kind", "admin_limit");
		conn_kill(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* A half-closed peer still gets its answers, the one to a
		 * last line without its newline too. */
		c->eof = 1;
		bufferevent_disable(c->bev, EV_READ);
		if (((c->check != NULL && !c->check_over) ||
		    c->reread != NULL) && conn_gone(c)) {
			log_debug("admin: pid %ld went away; the answer it "
			    "waited for is cancelled", (long)c->pid);
			conn_kill(c);
			return;
		}
		if (!c->paused && !c->more)
			conn_process(c);
	}
}

/* Says why to a peer we do not serve, then hangs up. */
static void
refuse(evutil_socket_t fd, const char *why)
{
	char	*line;
	ssize_t	 n;

	line = adminproto_reply_error(why);
	n = send(fd, line, strlen(line), MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)n;
	free(line);
	evutil_closesocket(fd);
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct admin		*a = arg;
	struct admin_conn	*c, *idle;
	struct ucred		 cred;
	struct timeval		 wtv = { ADMIN_WRITE_TIMEOUT_MS / 1000,
				    (ADMIN_WRITE_TIMEOUT_MS % 1000) * 1000 };
	socklen_t		 len = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		log_warn("admin: cannot read the peer's credentials");
		metrics_inc("errors", "kind", "admin_peer");
		evutil_closesocket(fd);
		return;
	}
	if (cred.uid != 0 && cred.uid != geteuid()) {
		log_warnx("admin: refused a connection of uid %lu (pid %ld)",
		    (unsigned long)cred.uid, (long)cred.pid);
		metrics_inc("errors", "kind", "admin_peer");
		refuse(fd, "permission denied: the admin socket serves root "
		    "and the daemon's own user only");
		return;
	}
	if (a->nconns >= SERVER_MAX_ADMIN_CONNS &&
	    (idle = conn_idlest(a)) != NULL) {
		log_info("admin: %d connections; closing the one of pid %ld, "
		    "idle the longest, for pid %ld", a->nconns,
		    (long)idle->pid, (long)cred.pid);
		metrics_inc("errors", "kind", "admin_limit");
		conn_drop(idle, "closed to make room for a new connection");
	}
	if (a->nconns >= SERVER_MAX_ADMIN_CONNS) {
		log_warnx("admin: refused a connection of pid %ld: already %d "
		    "connections, all busy", (long)cred.pid, a->nconns);
		metrics_inc("errors", "kind", "admin_limit");
		refuse(fd, "too many admin connections, try again later");
		return;
	}

	c = xcalloc(1, sizeof *c);
	c->admin = a;
	c->uid = cred.uid;
	c->pid = cred.pid;
	c->active = clock_mono_ms();
	adminproto_init(&c->proto);
	c->ev_timeout = evtimer_new(a->srv->base, timeout_cb, c);
	c->bev = bufferevent_socket_new(a->srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL || c->ev_timeout == NULL) {
		log_warnx("admin: cannot set up a connection");
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			evutil_closesocket(fd);
		if (c->ev_timeout != NULL)
			event_free(c->ev_timeout);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&a->conns, c, entry);
	a->nconns++;
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, ADMIN_INPUT_HIGH);
	if (bufferevent_set_timeouts(c->bev, NULL, &wtv) != 0 ||
	    bufferevent_enable(c->bev, EV_READ | EV_WRITE) != 0) {
		log_warnx("admin: cannot watch a connection");
		conn_kill(c);
		return;
	}
	gate_join(a->srv->gate, c->bev, gate_drop_cb, c);
	log_debug("admin: connection of uid %lu pid %ld",
	    (unsigned long)cred.uid, (long)cred.pid);
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct admin	*a = arg;

	evconnlistener_enable(a->listener);
}

/* Out of descriptors: stop accepting for a moment rather than spin. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct admin	*a = arg;
	struct timeval	 tv = { ADMIN_ACCEPT_PAUSE_SEC, 0 };

	log_warnx("admin: accept failed: %s",
	    strerror(EVUTIL_SOCKET_ERROR()));
	metrics_inc("errors", "kind", "admin_limit");
	evconnlistener_disable(l);
	evtimer_add(a->ev_resume, &tv);
}

/* The folder of path, created 0700 when absent. */
static int
make_parent(const char *path, char **cause)
{
	struct stat	 sb;
	char		*copy, *dir;
	int		 rc = 0;

	copy = xstrdup(path);
	dir = dirname(copy);
	if (stat(dir, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode)) {
			xasprintf(cause, "%s: not a directory", dir);
			rc = -ENOTDIR;
		}
	} else if (errno != ENOENT) {
		rc = -errno;
		xasprintf(cause, "%s: %s", dir, strerror(errno));
	} else if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		xasprintf(cause, "cannot create %s: %s", dir, strerror(errno));
	}
	free(copy);
	return (rc);
}

/*
 * A socket file left by a daemon that died is removed; one with a daemon
 * answering, or anything that is not a socket, is left alone and refused.
 */
static int
clear_stale(const struct sockaddr_un *sun, char **cause)
{
	struct stat	sb;
	int		rc;

	if ((rc = unixsock_check_stale(sun, cause)) != 0)
		return (rc);
	if (lstat(sun->sun_path, &sb) != 0)
		return (0);
	if (unlink(sun->sun_path) != 0 && errno != ENOENT) {
		rc = -errno;
		xasprintf(cause, "cannot remove the stale %s: %s",
		    sun->sun_path, strerror(errno));
		return (rc);
	}
	log_info("removed the stale admin socket %s", sun->sun_path);
	return (0);
}

static int
listen_on(struct admin *a, char **cause)
{
	struct sockaddr_un	 sun;
	struct stat		 sb;
	mode_t			 mask;
	int			 fd, rc;

	if ((rc = unixsock_addr(&sun, a->path, cause)) != 0 ||
	    (rc = make_parent(a->path, cause)) != 0 ||
	    (rc = clear_stale(&sun, cause)) != 0)
		return (rc);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		rc = -errno;
		xasprintf(cause, "socket: %s", strerror(errno));
		return (rc);
	}
	/* Born 0600: there is no moment when others may connect. */
	mask = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
	umask(mask);
	if (rc != 0) {
		rc = -errno;
		xasprintf(cause, "bind %s: %s", a->path, strerror(errno));
		close(fd);
		return (rc);
	}
	if (stat(a->path, &sb) != 0 || listen(fd, ADMIN_BACKLOG) != 0) {
		rc = -errno;
		xasprintf(cause, "listen %s: %s", a->path, strerror(errno));
		unlink(a->path);
		close(fd);
		return (rc);
	}
	a->dev = sb.st_dev;
	a->ino = sb.st_ino;
	a->listener = evconnlistener_new(a->srv->base, accept_cb, a,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (a->listener == NULL) {
		xasprintf(cause, "cannot watch %s", a->path);
		unlink(a->path);
		close(fd);
		return (-EIO);
	}
	evconnlistener_set_error_cb(a->listener, accept_error_cb);
	return (0);
}

int
admin_new(struct server *srv, const char *path, struct admin **out,
    char **cause)
{
	struct admin	*a;

	*out = NULL;
	a = xcalloc(1, sizeof *a);
	a->srv = srv;
	a->path = xstrdup(path);
	TAILQ_INIT(&a->conns);
	a->ev_reap = event_new(srv->base, -1, 0, reap_cb, a);
	a->ev_work = evtimer_new(srv->base, work_cb, a);
	a->ev_resume = evtimer_new(srv->base, resume_cb, a);
	if (a->ev_reap == NULL || a->ev_work == NULL || a->ev_resume == NULL) {
		xasprintf(cause, "cannot create the admin socket's events");
		admin_free(a);
		return (-ENOMEM);
	}
	if (listen_on(a, cause) != 0) {
		admin_free(a);
		return (-EIO);
	}
	log_info("admin socket on %s", path);
	*out = a;
	return (0);
}

void
admin_free(struct admin *a)
{
	struct admin_conn	*c;
	struct stat		 sb;

	if (a == NULL)
		return;
	while ((c = TAILQ_FIRST(&a->conns)) != NULL)
		conn_free(c);
	if (a->listener != NULL) {
		evconnlistener_free(a->listener);
		/* Only our own file: a successor may have bound the path. */
		if (stat(a->path, &sb) == 0 && sb.st_dev == a->dev &&
		    sb.st_ino == a->ino)
			unlink(a->path);
	}
	if (a->ev_reap != NULL)
		event_free(a->ev_reap);
	if (a->ev_work != NULL)
		event_free(a->ev_work);
	if (a->ev_resume != NULL)
		event_free(a->ev_resume);
	free(a->path);
	free(a);
}
