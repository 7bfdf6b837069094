/*
 * watch.c owns the config file's watcher: an inotify descriptor on the
 * file's folder (an editor's or a config manager's rename over the file
 * replaces its inode, which a watch on the file itself would lose), the
 * events filtered to the file's name, and a quiet-period timer so that a
 * burst of writes is one reload. The reload itself is server_reload's.
 */
#include "autoconf.h"

#include <sys/inotify.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "server.h"
#include "watch.h"
#include "xmalloc.h"

/*
 * A ConfigMap mounted in a pod: the file is a symlink through ..data,
 * which the kubelet swaps by renaming a new symlink over it; the file's
 * own name sees no event.
 */
#define WATCH_K8S_DATA	"..data"

/* What changes the file's content or its presence under its name. */
#define WATCH_MASK	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | \
			    IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR)

struct watch {
	struct server	*srv;
	int		 fd;
	int		 wd;
	char		*dir;
	char		*name;
	struct timeval	 quiet;
	struct event	*ev;
	struct event	*timer;
};

static void
watch_fire(evutil_socket_t fd, short what, void *arg)
{
	struct watch	*w = arg;
	char		*cause = NULL;

	/* server_reload has every rule (a removed file, bytes already
	 * loaded) and logs and records a refusal itself. */
	if (server_reload(w->srv, "file change", &cause) != 0)
		free(cause);
}

static void
watch_arm(struct watch *w)
{
	/* Adding a pending timer again moves its deadline: a quiet period. */
	if (evtimer_add(w->timer, &w->quiet) != 0)
		log_warnx("cannot arm the config watch timer");
}

static void
watch_read(evutil_socket_t fd, short what, void *arg)
{
	struct watch			*w = arg;
	char				 buf[8 * (sizeof(struct inotify_event) +
					    NAME_MAX + 1)]
					    __attribute__((__aligned__(
					    __alignof__(struct inotify_event))));
	const struct inotify_event	*ev;
	ssize_t				 n;
	size_t				 off;
	int				 changed = 0, gone = 0;

	for (;;) {
		n = read(w->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			log_warn("config watch on %s: read", w->dir);
			break;
		}
		for (off = 0; off + sizeof *ev <= (size_t)n;
		    off += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (off + sizeof *ev + ev->len > (size_t)n)
				break;
			if (ev->mask & IN_Q_OVERFLOW) {
				/* Events were lost: look at the file again. */
				log_warnx("config watch on %s overflowed",
				    w->dir);
				changed = 1;
				continue;
			}
			if (ev->mask & IN_IGNORED) {
				gone = 1;
				continue;
			}
			if (ev->wd != w->wd || ev->len == 0 ||
			    (strcmp(ev->name, w->name) != 0 &&
			    strcmp(ev->name, WATCH_K8S_DATA) != 0))
				continue;
			log_debug("config file %s: event 0x%x", w->name,
			    (unsigned)ev->mask);
			changed = 1;
		}
	}
	if (gone) {
		/* The folder was removed or unmounted; the kernel let go. */
		log_warnx("config folder %s is gone; its changes are no "
		    "longer watched (SIGHUP still reloads)", w->dir);
		event_del(w->ev);
	}
	if (changed)
		watch_arm(w);
}

int
watch_new(struct server *srv, int debounce_ms, struct watch **out,
    char **cause)
{
	struct watch	*w;
	const char	*path = srv->opts.config_path, *slash;
	int		 rc;

	*out = NULL;
	if (debounce_ms <= 0)
		debounce_ms = WATCH_DEBOUNCE_MS;
	w = xcalloc(1, sizeof *w);
	w->srv = srv;
	w->fd = -1;
	w->quiet.tv_sec = debounce_ms / 1000;
	w->quiet.tv_usec = (suseconds_t)(debounce_ms % 1000) * 1000;
	if ((slash = strrchr(path, '/')) == NULL) {
		w->dir = xstrdup(".");
		w->name = xstrdup(path);
	} else {
		w->dir = slash == path ? xstrdup("/") :
		    xstrndup(path, (size_t)(slash - path));
		w->name = xstrdup(slash + 1);
	}
	if (*w->name == '\0') {
		xasprintf(cause, "config path %s names a folder", path);
		rc = -EINVAL;
		goto fail;
	}
	if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		rc = -errno;
		xasprintf(cause, "inotify: %s", strerror(errno));
		goto fail;
	}
	if ((w->wd = inotify_add_watch(w->fd, w->dir, WATCH_MASK)) < 0) {
		rc = -errno;
		xasprintf(cause, "cannot watch %s: %s", w->dir,
		    strerror(errno));
		goto fail;
	}
	w->ev = event_new(srv->base, w->fd, EV_READ | EV_PERSIST, watch_read,
	    w);
	w->timer = evtimer_new(srv->base, watch_fire, w);
	if (w->ev == NULL || w->timer == NULL || event_add(w->ev, NULL) != 0) {
		xasprintf(cause, "cannot add the config watch to the loop");
		rc = -ENOMEM;
		goto fail;
	}
	log_debug("watching %s in %s", w->name, w->dir);
	*out = w;
	return (0);

fail:
	watch_free(w);
	return (rc);
}

void
watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->timer != NULL)
		event_free(w->timer);
	if (w->fd >= 0)
		close(w->fd);
	free(w->dir);
	free(w->name);
	free(w);
}
