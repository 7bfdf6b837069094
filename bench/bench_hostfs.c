/*
 * bench_hostfs: what the first Synchronize's files cost this host, with
 * no daemon (run by bench_events.py under `make bench`, never by `make
 * check`).
 *
 *	bench_hostfs FOLDER SHARED OWN
 *
 * In FOLDER (made if absent), a daemon's state folder, it makes what a daemon makes for a
 * node it has never seen (R-STATE-4), through the daemon's own resfile.c
 * with no spares, as at a first start: SHARED containers' folders linked
 * to one pool's folder (hard links of the pool's link) and OWN folders
 * holding a resources.sh each. It prints the CPU time this took, in
 * milliseconds: nearly all of it the kernel's, since around those calls
 * it does nothing. That is the floor under the daemon's sync_1000_cpu_ms
 * on this file system. The files stay for the caller to remove: a
 * removal here would make the next new inodes dearer (ext4's
 * recently_deleted).
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resfile.h"

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

int
main(int argc, char **argv)
{
	char	id[32], *cause = NULL;
	long	shared, owned, step, i;
	double	t;
	int	known = 0, rc;

	if (argc != 4 || (shared = atol(argv[2])) < 0 ||
	    (owned = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: bench_hostfs FOLDER SHARED OWN\n");
		return (2);
	}
	if (mkdir(argv[1], 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench_hostfs: mkdir %s: %s\n", argv[1],
		    strerror(errno));
		return (1);
	}
	step = owned > 0 ? (shared + owned) / owned : 0;
	t = cpu_ms();
	for (i = 0; i < shared + owned; i++) {
		/* Interleaved as the containers arrive: one in step own. */
		if (step > 0 && i % step == 0 && i / step < owned) {
			snprintf(id, sizeof id, "pod-o%05ld-c", i);
			rc = resfile_put(NULL, argv[1], id, text,
			    sizeof text - 1, &cause);
		} else {
			snprintf(id, sizeof id, "pod-s%05ld-c", i);
			rc = resfile_link(NULL, argv[1], id, "shared", &known,
			    &cause);
		}
		if (rc != 0) {
			fprintf(stderr, "bench_hostfs: %s\n", cause);
			return (1);
		}
	}
	printf("%.3f\n", cpu_ms() - t);
	return (0);
}
