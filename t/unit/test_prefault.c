/*
 * prefault.c: room made in the heap, its pages filled at once, takes the
 * allocations that follow without a page fault each.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prefault.h"

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

/* Whether this kernel fills a range on request (Linux 5.14). */
static int
kernel_fills(void)
{
	void	*m = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int	 ok;

	cr_assert_neq(m, MAP_FAILED);
	ok = madvise(m, 1 << 16, MADV_POPULATE_WRITE) == 0;
	cr_assert(ok || errno == EINVAL, "%s", strerror(errno));
	cr_assert_eq(munmap(m, 1 << 16), 0);
	return (ok);
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
	if (!kernel_fills()) {
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
