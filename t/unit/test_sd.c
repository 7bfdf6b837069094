/*
 * test_sd.c: the sd_notify messages of R-SYSTEMD, read back from a unix
 * datagram socket of ours named by NOTIFY_SOCKET as systemd would, and the
 * watchdog interval from WATCHDOG_USEC/WATCHDOG_PID.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sd.h"
#include "testlib.h"
#include "xmalloc.h"

/* A datagram socket standing in for systemd's; NOTIFY_SOCKET names it. */
static int
notify_socket(void)
{
	struct sockaddr_un	 addr;
	char			*dir;
	int			 s;

	dir = testlib_tmpdir();
	memset(&addr, 0, sizeof addr);
	addr.sun_family = AF_UNIX;
	cr_assert_lt((size_t)snprintf(addr.sun_path, sizeof addr.sun_path,
	    "%s/notify", dir), sizeof addr.sun_path);
	free(dir);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert(s != -1);
	cr_assert(bind(s, (struct sockaddr *)&addr, sizeof addr) == 0);
	cr_assert(setenv("NOTIFY_SOCKET", addr.sun_path, 1) == 0);
	return (s);
}

/* The next datagram, which must already be there (caller frees). */
static char *
next_message(int s)
{
	char	buf[4096];
	ssize_t	n;

	n = recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
	cr_assert_gt(n, 0, "no datagram (%s)", strerror(errno));
	buf[n] = '\0';
	return (xstrdup(buf));
}

static void
expect(int s, const char *want)
{
	char	*got;

	got = next_message(s);
	cr_assert_str_eq(got, want);
	free(got);
}

static void
expect_none(int s)
{
	char	buf[64];

	cr_assert_eq(recv(s, buf, sizeof buf, MSG_DONTWAIT), -1);
	cr_assert(errno == EAGAIN || errno == EWOULDBLOCK);
}

Test(sd, messages)
{
	int	s;

	s = notify_socket();
	cr_assert_eq(sd_ready(), 0);
	expect(s, "READY=1");
	cr_assert_eq(sd_watchdog_ping(), 0);
	expect(s, "WATCHDOG=1");
	cr_assert_eq(sd_stopping(), 0);
	expect(s, "STOPPING=1");
	cr_assert_eq(sd_status("serving %d containers", 3), 0);
	expect(s, "STATUS=serving 3 containers");
	expect_none(s);
	close(s);
}

Test(sd, status_cannot_forge_assignments)
{
	char	*got, *want, big[SD_STATUS_MAX * 2];
	int	 s;

	s = notify_socket();
	cr_assert_eq(sd_status("pod %s", "x\nREADY=1"), 0);
	got = next_message(s);
	cr_assert_null(strchr(got, '\n'), "\"%s\"", got);
	cr_assert_str_eq(got, "STATUS=pod x\\nREADY=1");
	free(got);

	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	cr_assert_eq(sd_status("%s", big), 0);
	got = next_message(s);
	xasprintf(&want, "STATUS=%.*s...", SD_STATUS_MAX, big);
	cr_assert_str_eq(got, want);
	free(want);
	free(got);
	close(s);
}

static unsigned long long
monotonic_usec(void)
{
	struct timespec	ts;

	cr_assert(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
	return ((unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
}

Test(sd, reloading_carries_monotonic_usec)
{
	unsigned long long	 before, after, usec;
	char			*got, *end;
	const char		*prefix = "RELOADING=1\nMONOTONIC_USEC=";
	int			 s;

	s = notify_socket();
	before = monotonic_usec();
	cr_assert_eq(sd_reloading(), 0);
	after = monotonic_usec();
	got = next_message(s);
	cr_assert_eq(strncmp(got, prefix, strlen(prefix)), 0, "\"%s\"", got);
	errno = 0;
	usec = strtoull(got + strlen(prefix), &end, 10);
	cr_assert(errno == 0 && *end == '\0', "\"%s\"", got);
	cr_assert(usec >= before && usec <= after,
	    "%llu outside [%llu, %llu]", usec, before, after);
	free(got);
	cr_assert_eq(sd_ready(), 0);
	expect(s, "READY=1");
	close(s);
}

Test(sd, outside_systemd_does_nothing)
{
	int	s;

	s = notify_socket();
	cr_assert(unsetenv("NOTIFY_SOCKET") == 0);
	cr_assert_eq(sd_ready(), 0);
	cr_assert_eq(sd_status("x"), 0);
	cr_assert_eq(sd_watchdog_ping(), 0);
	cr_assert_eq(sd_stopping(), 0);
	cr_assert_eq(sd_reloading(), 0);
	expect_none(s);
	close(s);
}

Test(sd, unreachable_socket_is_an_error)
{
	char	*dir, *path;

	dir = testlib_tmpdir();
	xasprintf(&path, "%s/nobody-listens", dir);
	cr_assert(setenv("NOTIFY_SOCKET", path, 1) == 0);
	cr_assert_lt(sd_ready(), 0);
	cr_assert_lt(sd_watchdog_ping(), 0);
	free(path);
	free(dir);
}

Test(sd, watchdog_interval)
{
	char	pid[32];

	cr_assert(unsetenv("WATCHDOG_USEC") == 0);
	cr_assert(unsetenv("WATCHDOG_PID") == 0);
	cr_assert_eq(sd_watchdog_usec(), 0);

	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	cr_assert(setenv("WATCHDOG_USEC", "3000000", 1) == 0);
	cr_assert(setenv("WATCHDOG_PID", pid, 1) == 0);
	cr_assert_eq(sd_watchdog_usec(), 3000000);

	/* Meant for another process (we were forked from the service). */
	snprintf(pid, sizeof pid, "%ld", (long)getpid() + 1);
	cr_assert(setenv("WATCHDOG_PID", pid, 1) == 0);
	cr_assert_eq(sd_watchdog_usec(), 0);

	cr_assert(unsetenv("WATCHDOG_PID") == 0);
	cr_assert(setenv("WATCHDOG_USEC", "soon", 1) == 0);
	cr_assert_eq(sd_watchdog_usec(), 0);
}
