/*
 * Helpers shared by the Criterion tests: the recorded sysfs trees that
 * t/run-test extracted, synthetic machines from topoaware-mksysfs, and
 * cpuset literals.
 */
#ifndef TOPOAWARE_TESTLIB_H
#define TOPOAWARE_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "topology.h"

/*
 * topoaware-mksysfs's spec of the Go policy's e2e machine n6: two packages
 * of one DRAM node (0, 1), an HBM node (2, 3: 1G) and a PMEM node (4, 5:
 * 4G) near each, with the suite's distances.
 */
#define TESTLIB_N6_DIST	"10:21:15:30:60:70/21:10:30:15:70:60/" \
			"15:30:10:35:62:72/30:15:35:10:72:62/" \
			"60:70:62:72:10:75/70:60:72:62:75:10"
#define TESTLIB_N6	"packages=2,cores=2,threads=2,mem=2G,memnodes=4," \
			"memnodesize=1G/1G/4G/4G,distances=" TESTLIB_N6_DIST

/* Root of a recorded machine ("server", "desktop", ...); static storage. */
const char		*testlib_sysfs(const char *machine);
/* A fresh private folder under the test's temporary folder (caller frees). */
char			*testlib_tmpdir(void);
/* Runs topoaware-mksysfs SPEC into a fresh folder; returns it (caller frees). */
char			*testlib_mksysfs(const char *spec);
/* Discovers a root, failing the test on error (caller frees). */
struct topology		*testlib_topology(const char *root);
/* Same for a recorded machine by name. */
struct topology		*testlib_machine(const char *machine);
/* A heap cpuset from the list form, failing the test on error. */
struct cpuset		*testlib_set(const char *);
/* Asserts that a set prints as the expected list form. */
void			 testlib_assert_set(const struct cpuset *, const char *);

/* dir/name (caller frees). */
char			*testlib_join(const char *dir, const char *name);
/* Files: the content of one (caller frees; *len its size, may be NULL),
 * writing one whole, whether a path exists (lstat), and a folder's names
 * sorted and joined by spaces (caller frees). Each fails the test on error. */
char			*testlib_read(const char *path, size_t *len);
void			 testlib_write(const char *path, const void *, size_t);
int			 testlib_exists(const char *path);
/* Whether this kernel takes madvise's advice on a fresh mapping; a
 * refusal must be EINVAL (an advice it does not know). */
int			 testlib_advice_taken(int advice);
/* Whether the VmFlags of the mapping that holds p (/proc/self/smaps)
 * hold flag (" hg", " nh"); *start is the mapping's start. Fails the
 * test when no mapping holds p. */
int			 testlib_mapping_flag(const void *p, uintptr_t *start,
			    const char *flag);
/* Whether this process is given transparent huge pages: a fault in
 * advised memory gets one, and small pages are collapsed into one on
 * request (MADV_COLLAPSE, Linux 6.1). */
int			 testlib_huge_collapse(void);
/*
 * A counter of this process's page faults taken in user mode: the real
 * ones, not the pages madvise(MADV_POPULATE_WRITE) fills (which getrusage
 * counts as minor faults too). -1 where perf events are not allowed (a
 * container's seccomp profile); testlib_faults reads one.
 */
int			 testlib_faults_open(void);
long			 testlib_faults(int fd);
/* This process's minor faults as getrusage counts them: filled pages
 * included. */
long			 testlib_minor_faults(void);
char			*testlib_listing(const char *dir);
void			 testlib_assert_listing(const char *dir, const char *want);

#endif
