/*
 * Helpers shared by the Criterion tests: the recorded sysfs trees that
 * t/run-test extracted, synthetic machines from topoaware-mksysfs, and
 * cpuset literals.
 */
#ifndef TOPOAWARE_TESTLIB_H
#define TOPOAWARE_TESTLIB_H

#include "cpuset.h"
#include "topology.h"

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

#endif
