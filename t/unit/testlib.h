/*
 * Helpers shared by the Criterion tests: the recorded sysfs trees that
 * t/run-test extracted, synthetic machines from topoaware-mksysfs, and
 * cpuset literals.
 */
#ifndef TOPOAWARE_TESTLIB_H
#define TOPOAWARE_TESTLIB_H

#include <stddef.h>

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

/* dir/name (caller frees). */
char			*testlib_join(const char *dir, const char *name);
/* Files: the content of one (caller frees; *len its size, may be NULL),
 * writing one whole, whether a path exists (lstat), and a folder's names
 * sorted and joined by spaces (caller frees). Each fails the test on error. */
char			*testlib_read(const char *path, size_t *len);
void			 testlib_write(const char *path, const void *, size_t);
int			 testlib_exists(const char *path);
char			*testlib_listing(const char *dir);
void			 testlib_assert_listing(const char *dir, const char *want);

#endif
