/*
 * The systemd service protocol (SPEC R-SYSTEMD): readiness, status lines,
 * the watchdog, stop and reload notices. Each is a thin wrapper of
 * libsystemd's sd_notify and does nothing when the daemon does not run
 * under systemd (NOTIFY_SOCKET unset), so the daemon calls them
 * unconditionally. They return 0, or a negative errno when the message
 * could not be sent.
 */
#ifndef TOPOAWARE_SD_H
#define TOPOAWARE_SD_H

#include <stdint.h>

/* The longest status line sent; longer ones are cut. */
#define SD_STATUS_MAX	512

/* READY=1: after every listener is up, and again when a reload ends. */
int		sd_ready(void);
/* STATUS=...: one line for `systemctl status`; newlines are escaped. */
int		sd_status(const char *, ...)
		    __attribute__((__format__(__printf__, 1, 2)));
/* The watchdog interval systemd expects pings within, 0 without one. */
uint64_t	sd_watchdog_usec(void);
/* WATCHDOG=1, sent from a loop timer at half of sd_watchdog_usec(). */
int		sd_watchdog_ping(void);
/* STOPPING=1: a graceful stop has begun. */
int		sd_stopping(void);
/*
 * RELOADING=1 with MONOTONIC_USEC as systemd 253 and later want for
 * Type=notify-reload (older versions ignore the extra field). Follow it
 * with sd_ready() when the reload is done, whether it succeeded or not.
 */
int		sd_reloading(void);

#endif
