/*
 * pbarena.c: protobuf-c decodes into an arena what it decodes with its
 * own allocator, and the arena hands out aligned, separate memory in few
 * blocks; a large one's first block in huge pages.
 */
#include "autoconf.h"

#include <sys/mman.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nri.pb-c.h"
#include "pbarena.h"
#include "testlib.h"
#include "ttrpc.h"
#include "xmalloc.h"

#define NRI(x)		Nri__Pkg__Api__V1alpha1__##x
#define NCTRS		300

/* A Synchronize of NCTRS containers and their pods, packed. */
static uint8_t *
sync_bytes(size_t *len)
{
	NRI(SynchronizeRequest)	 req =
	    NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	NRI(PodSandbox)		*pods[NCTRS];
	NRI(Container)		*ctrs[NCTRS];
	NRI(Container__LabelsEntry) *labs[NCTRS][2];
	NRI(LinuxContainer)	 lin[NCTRS];
	NRI(LinuxResources)	 res[NCTRS];
	NRI(LinuxCPU)		 cpu[NCTRS];
	NRI(OptionalUInt64)	 shares[NCTRS];
	char			 *env[NCTRS][1];
	uint8_t			*buf;
	int			 i, k;

	for (i = 0; i < NCTRS; i++) {
		pods[i] = xcalloc(1, sizeof **pods);
		nri__pkg__api__v1alpha1__pod_sandbox__init(pods[i]);
		xasprintf(&pods[i]->id, "pod-%d", i);
		xasprintf(&pods[i]->name, "web-%d", i);
		pods[i]->namespace_ = (char *)"team";
		ctrs[i] = xcalloc(1, sizeof **ctrs);
		nri__pkg__api__v1alpha1__container__init(ctrs[i]);
		xasprintf(&ctrs[i]->id, "ctr-%d", i);
		ctrs[i]->pod_sandbox_id = pods[i]->id;
		ctrs[i]->name = (char *)"c";
		ctrs[i]->state = i % 3;
		for (k = 0; k < 2; k++) {
			labs[i][k] = xcalloc(1, sizeof ***labs);
			nri__pkg__api__v1alpha1__container__labels_entry__init(
			    labs[i][k]);
			labs[i][k]->key = (char *)(k ? "b" : "a");
			xasprintf(&labs[i][k]->value, "v%d-%d", i, k);
		}
		ctrs[i]->n_labels = i % 3;	/* 0, 1 or 2 */
		ctrs[i]->labels = labs[i];
		xasprintf(&env[i][0], "N=%d", i);
		ctrs[i]->n_env = 1;
		ctrs[i]->env = env[i];
		nri__pkg__api__v1alpha1__linux_container__init(&lin[i]);
		nri__pkg__api__v1alpha1__linux_resources__init(&res[i]);
		nri__pkg__api__v1alpha1__linux_cpu__init(&cpu[i]);
		nri__pkg__api__v1alpha1__optional_uint64__init(&shares[i]);
		shares[i].value = 2 + (uint64_t)i;
		cpu[i].shares = &shares[i];
		cpu[i].cpus = (char *)"0-3";
		res[i].cpu = &cpu[i];
		lin[i].resources = &res[i];
		ctrs[i]->linux = &lin[i];
	}
	req.n_pods = NCTRS;
	req.pods = pods;
	req.n_containers = NCTRS;
	req.containers = ctrs;
	*len = protobuf_c_message_get_packed_size(&req.base);
	buf = xmalloc(*len);
	cr_assert_eq(protobuf_c_message_pack(&req.base, buf), *len);
	for (i = 0; i < NCTRS; i++) {
		for (k = 0; k < 2; k++) {
			free(labs[i][k]->value);
			free(labs[i][k]);
		}
		free(env[i][0]);
		free(pods[i]->id);
		free(pods[i]->name);
		free(pods[i]);
		free(ctrs[i]->id);
		free(ctrs[i]);
	}
	return (buf);
}

static uint8_t *
repack(const ProtobufCMessage *m, size_t *len)
{
	uint8_t	*buf;

	*len = protobuf_c_message_get_packed_size(m);
	buf = xmalloc(*len + 1);
	cr_assert_eq(protobuf_c_message_pack(m, buf), *len);
	return (buf);
}

Test(pbarena, a_message_decoded_in_an_arena_is_protobuf_cs)
{
	ProtobufCBinaryData	 b;
	ProtobufCMessage	*mine, *theirs;
	NRI(SynchronizeRequest)	*s;
	struct pbarena		*a;
	uint8_t			*wire, *x, *y;
	size_t			 len, xl, yl;
	char			*cause = NULL;

	wire = sync_bytes(&len);
	b.data = wire;
	b.len = len;
	cr_assert_eq(ttrpc_payload_unpack(
	    &nri__pkg__api__v1alpha1__synchronize_request__descriptor, &b,
	    &mine, &a, &cause), 0, "%s", cause);
	cr_assert_not_null(a);
	cr_assert_eq(ttrpc_payload_unpack(
	    &nri__pkg__api__v1alpha1__synchronize_request__descriptor, &b,
	    &theirs, NULL, &cause), 0, "%s", cause);
	x = repack(mine, &xl);
	y = repack(theirs, &yl);
	cr_assert_eq(xl, len);
	cr_assert_eq(yl, len);
	cr_assert_eq(memcmp(x, wire, len), 0);
	cr_assert_eq(memcmp(y, wire, len), 0);
	s = (NRI(SynchronizeRequest) *)mine;
	cr_assert_eq(s->n_containers, NCTRS);
	cr_assert_str_eq(s->containers[NCTRS - 1]->labels[1]->value,
	    "v299-1");
	cr_assert_str_eq(s->containers[7]->env[0], "N=7");
	cr_assert_eq(s->containers[9]->linux->resources->cpu->shares->value,
	    11);
	/* Twelve times its wire size here (short strings, big structs),
	 * in blocks of the most a block holds, each but the last about
	 * full. */
	cr_assert_leq(pbarena_blocks(a),
	    (int)(pbarena_used(a) / PBARENA_BLOCK_MAX) + 1,
	    "%d blocks for %zu bytes of %zu", pbarena_blocks(a),
	    pbarena_used(a), len);
	cr_assert_geq(pbarena_size(a), pbarena_used(a));
	cr_assert_lt(pbarena_size(a) - pbarena_used(a), PBARENA_BLOCK_MAX);
	cr_assert_leq(pbarena_used(a), pbarena_size(a));
	pbarena_free(a);
	protobuf_c_message_free_unpacked(theirs, NULL);
	free(x);
	free(y);
	free(wire);
}

Test(pbarena, memory_is_aligned_separate_and_in_few_blocks)
{
	struct pbarena		*a = pbarena_new(0);
	ProtobufCAllocator	*pa = pbarena_allocator(a);
	unsigned char		*p[600];
	size_t			 sz[600], total = 0;
	size_t			 i, j;

	for (i = 0; i < 600; i++) {
		/* Odd sizes, one far over any block so far, one empty. */
		sz[i] = i == 300 ? 70000 : i == 5 ? 0 : (i * 37) % 300 + 1;
		p[i] = pa->alloc(pa->allocator_data, sz[i]);
		cr_assert_not_null(p[i]);
		cr_assert_eq((uintptr_t)p[i] % 8, 0, "allocation %zu", i);
		memset(p[i], (int)(i & 0xff), sz[i]);
		total += sz[i];
	}
	for (i = 0; i < 600; i++)
		for (j = 0; j < sz[i]; j++)
			cr_assert_eq(p[i][j], (unsigned char)(i & 0xff),
			    "allocation %zu overwritten at %zu", i, j);
	/* free gives nothing back: the arena does, at once. */
	pa->free(pa->allocator_data, p[3]);
	cr_assert_eq(p[4][0], 4);
	cr_assert_geq(pbarena_used(a), total);
	cr_assert_lt(pbarena_used(a), total + 8 * 600);
	/* Blocks double from 1 KiB to the most, and the large one has its
	 * own: some 160 KB in a dozen, not one each. */
	cr_assert_leq(pbarena_blocks(a), 12, "%d blocks",
	    pbarena_blocks(a));
	pbarena_free(a);
	pbarena_free(NULL);
}

Test(pbarena, a_large_arena_starts_in_huge_pages)
{
	struct pbarena		*a = pbarena_new_large(PBARENA_MAPPED_MIN);
	ProtobufCAllocator	*pa = pbarena_allocator(a);
	unsigned char		*first, *p;
	uintptr_t		 start;
	size_t			 got = 0, room;

	cr_assert(pbarena_mapped(a));
	cr_assert_eq(pbarena_blocks(a), 1);
	room = pbarena_size(a);
	cr_assert_geq(room, PBARENA_MAPPED_MIN);
	/* The block fills to its last byte, every byte its own. */
	first = pa->alloc(pa->allocator_data, 4096);
	memset(first, 0xa5, 4096);
	got = 4096;
	while (room - got >= 4096) {
		p = pa->alloc(pa->allocator_data, 4096);
		cr_assert_not_null(p);
		memset(p, 0x5a, 4096);
		got += 4096;
	}
	cr_assert_eq(pbarena_blocks(a), 1, "%d blocks for %zu of %zu bytes",
	    pbarena_blocks(a), got, room);
	cr_assert_eq(first[0], 0xa5);
	cr_assert_eq(first[4095], 0xa5);
	if (testlib_advice_taken(MADV_HUGEPAGE)) {
		/* Advised, from a huge page's boundary. */
		cr_assert(testlib_mapping_flag(first, &start, " hg"),
		    "the block is not advised for huge pages");
		cr_assert_eq(start % (2 << 20), 0, "starts at %#" PRIxPTR,
		    start);
	} else
		cr_log_info("this kernel takes no huge page advice: the "
		    "block's advice is not checked");
	/* Past it, blocks from the heap as for any arena. */
	p = pa->alloc(pa->allocator_data, 8192);
	memset(p, 1, 8192);
	cr_assert_eq(pbarena_blocks(a), 2);
	pbarena_free(a);

	/* Not below its least size, and never unless asked. */
	a = pbarena_new_large(PBARENA_MAPPED_MIN - 1);
	cr_assert_not(pbarena_mapped(a));
	cr_assert_leq(pbarena_size(a), PBARENA_BLOCK_MAX);
	pbarena_free(a);
	a = pbarena_new(4 * PBARENA_MAPPED_MIN);
	cr_assert_not(pbarena_mapped(a));
	cr_assert_leq(pbarena_size(a), PBARENA_BLOCK_MAX);
	pbarena_free(a);
}

Test(pbarena, a_large_message_asked_for_decodes_into_huge_pages)
{
	NRI(SynchronizeRequest)	 req =
	    NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	NRI(Container)		 c = NRI__PKG__API__V1ALPHA1__CONTAINER__INIT;
	NRI(Container__LabelsEntry) l =
	    NRI__PKG__API__V1ALPHA1__CONTAINER__LABELS_ENTRY__INIT;
	NRI(Container__LabelsEntry) *lp = &l;
	NRI(Container)		*cp = &c;
	NRI(SynchronizeRequest)	*s;
	ProtobufCBinaryData	 b;
	ProtobufCMessage	*m;
	struct pbarena		*a;
	uint8_t			*wire, *again;
	size_t			 len, n, vlen = 300000;
	char			*value, *cause = NULL;

	/* Unpacked, some four times its size: past PBARENA_MAPPED_MIN. */
	value = xmalloc(vlen + 1);
	memset(value, 'v', vlen);
	value[vlen] = '\0';
	c.id = (char *)"ctr-big";
	c.pod_sandbox_id = (char *)"pod-big";
	l.key = (char *)"big";
	l.value = value;
	c.n_labels = 1;
	c.labels = &lp;
	req.n_containers = 1;
	req.containers = &cp;
	len = protobuf_c_message_get_packed_size(&req.base);
	wire = xmalloc(len);
	cr_assert_eq(protobuf_c_message_pack(&req.base, wire), len);
	b.data = wire;
	b.len = len;
	/* As any message's, unless asked. */
	cr_assert_eq(ttrpc_payload_unpack(
	    &nri__pkg__api__v1alpha1__synchronize_request__descriptor, &b,
	    &m, &a, &cause), 0, "%s", cause);
	cr_assert_not(pbarena_mapped(a));
	pbarena_free(a);
	cr_assert_eq(ttrpc_payload_unpack_large(
	    &nri__pkg__api__v1alpha1__synchronize_request__descriptor, &b,
	    &m, &a, &cause), 0, "%s", cause);
	cr_assert(pbarena_mapped(a), "a %zu-byte payload", len);
	s = (NRI(SynchronizeRequest) *)m;
	cr_assert_eq(s->n_containers, 1);
	cr_assert_str_eq(s->containers[0]->id, "ctr-big");
	cr_assert_str_eq(s->containers[0]->labels[0]->value, value);
	again = repack(m, &n);
	cr_assert_eq(n, len);
	cr_assert_eq(memcmp(again, wire, len), 0);
	free(again);
	pbarena_free(a);
	free(wire);
	free(value);
}
