/*
 * prefault.c: room made in the heap, its pages filled at once, takes the
 * allocations that follow without a page fault each.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdlib.h>
#include <string.h>

#include "prefault.h"
#include "testlib.h"

#define ROOM		((size_t)8 << 20)
#define PIECE		256
#define NPIECES		((6 << 20) / PIECE)

static long
minor_faults(void)
{
	struct rusage	ru;

	cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return (ru.ru_minflt);
}

Test(prefault, the_room_takes_what_follows_without_faults)
{
	struct prefault	*pf;
	char		**v;
	long		  f0, faults;
	int		  i;

	v = calloc(NPIECES, sizeof *v);
	cr_assert_not_null(v);
	pf = prefault_heap(ROOM);
	cr_assert_not_null(pf);
#if defined(__SANITIZE_ADDRESS__)
	/* The sanitizer's malloc keeps no heap at the break. */
	cr_assert_eq(prefault_filled(pf), 0);
	prefault_done(pf);
	free(v);
	return;
#endif
	/* A kernel before 5.14 fills no range on request. */
	if (!testlib_advice_taken(MADV_POPULATE_WRITE)) {
		cr_assert_eq(prefault_filled(pf), 0);
		cr_log_warn("this kernel fills no range on request: the "
		    "faults are not checked");
		prefault_done(pf);
		free(v);
		return;
	}
	cr_assert_geq(prefault_filled(pf), ROOM - 4096, "%zu bytes filled",
	    prefault_filled(pf));
	/* 6 MiB in small pieces, each written: 1,536 pages had they been
	 * new. */
	f0 = minor_faults();
	for (i = 0; i < NPIECES; i++) {
		v[i] = malloc(PIECE);
		cr_assert_not_null(v[i]);
		memset(v[i], i & 0xff, PIECE);
	}
	faults = minor_faults() - f0;
	cr_assert_lt(faults, 64, "%ld page faults for 6 MiB of pieces",
	    faults);
	prefault_done(pf);
	for (i = 0; i < NPIECES; i++)
		free(v[i]);
	free(v);
}

Test(prefault, little_is_not_worth_it)
{
	struct prefault	*pf = prefault_heap(PREFAULT_MIN - 1);

	cr_assert_null(pf);
	cr_assert_eq(prefault_filled(pf), 0);
	prefault_done(pf);
	prefault_done(NULL);
}
