/*
 * The config file's watcher (R-CONF-2): inotify on the file's folder, so a
 * write in place and a write-to-temp-and-rename both count, debounced, then
 * the one reload path, whose rules decide (a removed file is refused, the
 * config in force stays until a file is back).
 */
#ifndef TOPOAWARE_WATCH_H
#define TOPOAWARE_WATCH_H

#define WATCH_DEBOUNCE_MS	300	/* the default quiet period */

struct server;
struct watch;

/*
 * Watches srv->opts.config_path on srv->base; after debounce_ms without a
 * further change it calls server_reload(srv, "file change", ...). Fails
 * with -ENOENT when the folder does not exist, or another negative errno;
 * the caller owns *out and frees it with watch_free.
 */
int	watch_new(struct server *srv, int debounce_ms, struct watch **out,
	    char **cause);
void	watch_free(struct watch *);

#endif
