/*
 * sd.c owns the daemon's side of the sd_notify protocol. Every message is a
 * fixed text except the status line, which comes from the caller and may
 * hold peer text: it is escaped so that a newline cannot start a second,
 * forged assignment such as READY=1 in the same datagram.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "sd.h"
#include "xmalloc.h"

/* sd_notify answers >0 sent, 0 not under systemd, <0 failed. */
static int
sd_send(const char *msg)
{
	int	rc;

	if ((rc = sd_notify(0, msg)) < 0)
		return (rc);
	return (0);
}

int
sd_ready(void)
{
	return (sd_send("READY=1"));
}

int
sd_status(const char *fmt, ...)
{
	/* One byte over the limit so that log_escape sees the cut. */
	char	 raw[SD_STATUS_MAX + 2], *esc, *msg;
	va_list	 ap;
	int	 rc;

	va_start(ap, fmt);
	rc = vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return (-EINVAL);
	esc = log_escape(raw, SD_STATUS_MAX);
	xasprintf(&msg, "STATUS=%s", esc);
	rc = sd_send(msg);
	free(msg);
	free(esc);
	return (rc);
}

uint64_t
sd_watchdog_usec(void)
{
	uint64_t	usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0)
		return (0);
	return (usec);
}

int
sd_watchdog_ping(void)
{
	return (sd_send("WATCHDOG=1"));
}

int
sd_stopping(void)
{
	return (sd_send("STOPPING=1"));
}

int
sd_reloading(void)
{
	struct timespec	ts;
	char		msg[64];

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return (-errno);
	snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
	return (sd_send(msg));
}
