/*
 * bench_hostfs: what the first Synchronize's files cost this host, with
 * no daemon (run by bench_events.py under `make bench`, never by `make
 * check`).
 *
 *	bench_hostfs FOLDER SHARED OWN
 *
 * In FOLDER, which must not exist, it makes what a daemon makes for a
 * node it has never seen (R-STATE-4, exports.c and resfile.c): a
 * containers/ folder with SHARED hard links of one link to a pool's
 * folder, and OWN folders holding a resources.sh each, written as the
 * daemon writes a new one (a spare file made, written, given its mode,
 * closed and renamed into place). It prints the CPU time this took, in
 * milliseconds: nearly all of it the kernel's, since the loop does
 * nothing but the calls. That is the floor under the daemon's
 * sync_1000_cpu_ms on this file system. The files stay for the caller to
 * remove: a removal here would make the next new inodes dearer (ext4's
 * recently_deleted).
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* About what a Guaranteed container's resources.sh holds. */
static const char text[] =
    "ALL_MEMS=\"0\"\nDRAM_MEMS=\"0\"\nEXCLUSIVE_CPUS=\"12\"\n"
    "SHARED_CPUS=\"1-11,13-55,224-279\"\n";

static double
cpu_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) {
		perror("bench_hostfs: clock_gettime");
		exit(1);
	}
	return ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
}

static void
fail(const char *what, const char *path)
{
	fprintf(stderr, "bench_hostfs: %s %s: %s\n", what, path,
	    strerror(errno));
	exit(1);
}

/* One new folder with its resources.sh, as resfile.c makes it. */
static void
own(const char *dir, long i)
{
	char		live[4096], spare[4096], file[4096];
	struct stat	st;
	int		fd;

	snprintf(live, sizeof live, "%.1024s/containers/pod-o%05ld-c", dir, i);
	snprintf(spare, sizeof spare, "%.1100s/.resources.sh.spare", live);
	snprintf(file, sizeof file, "%.1100s/resources.sh", live);
	if (lstat(live, &st) == 0 || errno != ENOENT)
		fail("lstat", live);
	if (mkdir(live, 0700) != 0)
		fail("mkdir", live);
	if ((fd = open(spare, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0)
		fail("open", spare);
	if (write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1))
		fail("write", spare);
	if (fchmod(fd, 0644) != 0)
		fail("fchmod", spare);
	if (close(fd) != 0)
		fail("close", spare);
	if (rename(spare, file) != 0)
		fail("rename", spare);
}

int
main(int argc, char **argv)
{
	char	path[4096], pool[4096], link[4096];
	long	shared, owned, i;
	double	t;

	if (argc != 4 || strlen(argv[1]) > 1024 ||
	    (shared = atol(argv[2])) < 0 || (owned = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: bench_hostfs FOLDER SHARED OWN (FOLDER of 1024 "
		    "bytes at most)\n");
		return (2);
	}
	snprintf(pool, sizeof pool, "%s/pools/shared", argv[1]);
	snprintf(link, sizeof link, "%s/containers/.pool.shared", argv[1]);
	if (mkdir(argv[1], 0700) != 0)
		fail("mkdir", argv[1]);
	snprintf(path, sizeof path, "%s/pools", argv[1]);
	if (mkdir(path, 0700) != 0 || mkdir(pool, 0700) != 0)
		fail("mkdir", pool);
	snprintf(path, sizeof path, "%s/containers", argv[1]);
	if (mkdir(path, 0700) != 0)
		fail("mkdir", path);
	if (symlink("../pools/shared", link) != 0)
		fail("symlink", link);

	t = cpu_ms();
	for (i = 0; i < shared + owned; i++) {
		/* Interleaved as the containers arrive: one in ten own. */
		if (owned > 0 && i % ((shared + owned) / owned) == 0 &&
		    i / ((shared + owned) / owned) < owned) {
			own(argv[1], i);
			continue;
		}
		snprintf(path, sizeof path, "%.1024s/containers/pod-s%05ld-c",
		    argv[1], i);
		if (linkat(AT_FDCWD, link, AT_FDCWD, path, 0) != 0)
			fail("link", path);
	}
	printf("%.3f\n", cpu_ms() - t);
	return (0);
}
