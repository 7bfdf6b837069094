/*
 * prefault.c: room made in the heap, its pages filled at once, takes the
 * allocations that follow without a page fault each.
 */
#include "autoconf.h"

#include <sys/mman.h>
#include <sys/prctl.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prefault.h"
#include "testlib.h"

#define ROOM		((size_t)8 << 20)
#define PIECE		256
#define NPIECES		((6 << 20) / PIECE)

Test(prefault, the_room_takes_what_follows_without_faults)
{
	struct prefault	*pf;
	char		**v;
	long		  f0, faults;
	int		  i;

	v = calloc(NPIECES, sizeof *v);
	cr_assert_not_null(v);
	/* Its own pages touched now, not counted below. */
	memset(v, 0xff, NPIECES * sizeof *v);
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
		cr_log_info("this kernel fills no range on request: the "
		    "faults are not checked");
		prefault_done(pf);
		free(v);
		return;
	}
	cr_assert_geq(prefault_filled(pf), ROOM - 4096, "%zu bytes filled",
	    prefault_filled(pf));
	/* 6 MiB in small pieces, each written: 1,536 pages had they been
	 * new. */
	f0 = testlib_minor_faults();
	for (i = 0; i < NPIECES; i++) {
		v[i] = malloc(PIECE);
		cr_assert_not_null(v[i]);
		memset(v[i], i & 0xff, PIECE);
	}
	faults = testlib_minor_faults() - f0;
	/* 30 when the pages of the heap's old top, below the break, are
	 * left to fault. */
	cr_assert_lt(faults, 16, "%ld page faults for 6 MiB of pieces",
	    faults);
	prefault_done(pf);
	for (i = 0; i < NPIECES; i++)
		free(v[i]);
	free(v);
}

/*
 * The room itself is made without a fault a chunk: each stretch the break
 * passes is filled before malloc writes the next chunk's header in it.
 * Counted as the faults the CPU took (getrusage counts filled pages too).
 */
Test(prefault, making_the_room_takes_few_faults)
{
	struct prefault	*pf;
	long		 f0, faults;
	int		 fd;

	if ((fd = testlib_faults_open()) < 0) {
		cr_log_info("no perf events here: the faults are not counted");
		return;
	}
	f0 = testlib_faults(fd);
	pf = prefault_heap(ROOM);
	faults = testlib_faults(fd) - f0;
	cr_assert_not_null(pf);
	if (prefault_filled(pf) == 0) {
		/* The sanitizers' malloc, or a kernel before 5.14. */
		cr_log_info("nothing filled: the faults are not counted");
		prefault_done(pf);
		close(fd);
		return;
	}
	/* Small pages: each stretch filled before a chunk's header is
	 * written there, but for the top's header malloc writes as the
	 * break moves (33 times for 8 MiB, by 255 KiB); a fault a 127 KiB
	 * chunk would be 66. Huge ones: the headers are written first, at
	 * most a fault each (82 chunks for 8 MiB and the huge page to reach
	 * a boundary). */
	if (prefault_huge(pf) > 0)
		cr_assert_leq(faults, 90, "%ld page faults making 8 MiB of "
		    "room in huge pages", faults);
	else
		cr_assert_lt(faults, 48, "%ld page faults making 8 MiB of "
		    "room", faults);
	cr_log_info("%ld page faults making 8 MiB of room", faults);
	prefault_done(pf);
	close(fd);
}

static long
rss_anon_kib(void)
{
	FILE	*f = fopen("/proc/self/status", "r");
	char	 line[256];
	long	 kib = -1;

	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "RssAnon: %ld kB", &kib) == 1)
			break;
	fclose(f);
	cr_assert_geq(kib, 0, "no RssAnon");
	return (kib);
}

/*
 * The room starts at a huge page's boundary, advised for huge pages while
 * the event runs and against them after it; what the event left free is
 * given back by malloc_trim, huge pages or not.
 */
Test(prefault, the_room_is_in_huge_pages_for_the_event_only)
{
	struct prefault	*pf;
	uintptr_t	 start;
	char		*p, *pieces[4096];
	long		 rss0, rss;
	int		 i;

	malloc_trim(0);
	rss0 = rss_anon_kib();
	pf = prefault_heap(ROOM);
	cr_assert_not_null(pf);
#if defined(__SANITIZE_ADDRESS__)
	cr_assert_eq(prefault_huge(pf), 0);
	prefault_done(pf);
	return;
#endif
	if (!testlib_huge_collapse()) {
		cr_assert_eq(prefault_huge(pf), 0);
		cr_log_info("no huge pages made here: the room's are not "
		    "checked");
		prefault_done(pf);
		return;
	}
	cr_assert_geq(prefault_huge(pf), ROOM, "%zu bytes advised",
	    prefault_huge(pf));
	cr_assert_eq(prefault_huge(pf) % (2 << 20), 0);
	/* Larger than any free chunk the test had: carved from the room,
	 * in its first huge page. */
	p = malloc(200 << 10);
	cr_assert_not_null(p);
	memset(p, 0x5a, 200 << 10);
	cr_assert(testlib_mapping_flag(p, &start, " hg"),
	    "the room is not advised for huge pages");
	cr_assert_eq(start % (2 << 20), 0, "starts at %#" PRIxPTR, start);
	cr_assert_lt((uintptr_t)p - start, 2 << 20, "%#" PRIxPTR
	    " is %zu bytes into the room", (uintptr_t)p,
	    (size_t)((uintptr_t)p - start));
	/* A MiB the event keeps. */
	for (i = 0; i < 4096; i++) {
		pieces[i] = malloc(256);
		cr_assert_not_null(pieces[i]);
		memset(pieces[i], i & 0xff, 256);
	}
	prefault_done(pf);
	cr_assert(testlib_mapping_flag(p, &start, " nh"),
	    "the room is still advised for huge pages");
	cr_assert_not(testlib_mapping_flag(p, &start, " hg"));
	free(p);
	malloc_trim(0);
	rss = rss_anon_kib();
	/* The MiB kept and some slack, never the room's 8 MiB. */
	cr_assert_lt(rss - rss0, 2048, "%ld KiB more after the event",
	    rss - rss0);
	for (i = 0; i < 4096; i++) {
		cr_assert_eq((unsigned char)pieces[i][255],
		    (unsigned char)(i & 0xff));
		free(pieces[i]);
	}
}

/* Where the kernel gives this process no huge pages (as under the system
 * setting "never"), the room is made of small pages, all filled. */
Test(prefault, without_huge_pages_the_room_is_filled_small_pages)
{
	struct prefault	*pf;
	char		*p;
	long		 f0, faults, made = -1;
	int		 i, fd;

	cr_assert_eq(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
	fd = testlib_faults_open();
	f0 = fd >= 0 ? testlib_faults(fd) : 0;
	pf = prefault_heap(ROOM);
	if (fd >= 0) {
		made = testlib_faults(fd) - f0;
		close(fd);
	}
	cr_assert_not_null(pf);
	cr_assert_eq(prefault_huge(pf), 0);
#if defined(__SANITIZE_ADDRESS__)
	cr_assert_eq(prefault_filled(pf), 0);
	prefault_done(pf);
	return;
#endif
	if (!testlib_advice_taken(MADV_POPULATE_WRITE)) {
		cr_log_info("this kernel fills no range on request");
		prefault_done(pf);
		return;
	}
	cr_assert_geq(prefault_filled(pf), ROOM - 4096, "%zu bytes filled",
	    prefault_filled(pf));
	/* Told beforehand: each stretch filled before a header is written
	 * there, as when huge pages are not asked for at all (a fault each
	 * time the break moves, 33; a fault a header, 66). */
	if (made >= 0)
		cr_assert_lt(made, 48, "%ld page faults making the room",
		    made);
	/* 4 MiB written in the room: no page of it new. */
	f0 = testlib_minor_faults();
	for (i = 0; i < 16; i++) {
		p = malloc(256 << 10);
		cr_assert_not_null(p);
		memset(p, i, 256 << 10);
	}
	faults = testlib_minor_faults() - f0;
	cr_assert_lt(faults, 16, "%ld page faults for 4 MiB", faults);
	prefault_done(pf);
}

Test(prefault, little_is_not_worth_it)
{
	struct prefault	*pf = prefault_heap(PREFAULT_MIN - 1);

	cr_assert_null(pf);
	cr_assert_eq(prefault_filled(pf), 0);
	prefault_done(pf);
	prefault_done(NULL);
}
