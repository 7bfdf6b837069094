/*
 * test_nri_msg.c: the UpdateContainers message nri_msg.c builds from
 * pinnings. Moved containers of many pools, interleaved by id, share the
 * text of their sets; each must still carry its own. And the bytes
 * nriupd.c writes for updates are the bytes protobuf-c writes.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "nri_msg.h"
#include "nriupd.h"
#include "xmalloc.h"

#define NSETS	24	/* sets, interleaved: more than fit a small cache */
#define NCTRS	(5 * NSETS)

/* Set k: CPUs 2k and 2k+1, and the node k % 4 as memory. */
static void
pinning_of(int i, struct pinning *p)
{
	int	k = (i * 7) % NSETS;	/* interleaved, revisited */

	memset(p, 0, sizeof *p);
	cpuset_init(&p->cpus);
	cpuset_init(&p->mems);
	xasprintf(&p->id, "c%03d", i);
	p->pin_cpus = p->pin_mems = 1;
	cr_assert_eq(cpuset_add_range(&p->cpus, 2 * k, 2 * k + 1), 0);
	cr_assert_eq(cpuset_add(&p->mems, k % 4), 0);
	p->shares = 2 + i;
}

static void
pinning_done(struct pinning *p)
{
	free(p->id);
	cpuset_clear(&p->cpus);
	cpuset_clear(&p->mems);
}

Test(nri_msg, each_update_carries_its_own_sets)
{
	NRI(UpdateContainersRequest)	 req =
	    NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINERS_REQUEST__INIT;
	NRI(UpdateContainersRequest)	*back;
	NRI(ContainerUpdate)		*v[NCTRS];
	struct nri_upd_view		 views[NCTRS];
	struct nri_updates		 us;
	struct pinning			 p[NCTRS];
	uint8_t				*buf;
	size_t				 len, i;
	char				 want[64];
	int				 k;

	nri_updates_init(&us);
	for (i = 0; i < NCTRS; i++) {
		pinning_of((int)i, &p[i]);
		nri_updates_add(&us, &p[i]);
		/* The list keeps its sets' texts; the id is the pinning's. */
		cpuset_clear(&p[i].cpus);
		cpuset_clear(&p[i].mems);
	}
	cr_assert_eq(us.n, NCTRS);
	/* Each set formatted once: NSETS of CPUs, 4 of memory nodes. */
	cr_assert_eq(us.nsets, NSETS + 4, "%zu sets", us.nsets);
	for (i = 0; i < NCTRS; i++)
		v[i] = (NRI(ContainerUpdate) *)nri_updates_view(&us, i,
		    &views[i]);
	req.n_update = us.n;
	req.update = v;
	len = protobuf_c_message_get_packed_size(&req.base);
	buf = xmalloc(len);
	cr_assert_eq(protobuf_c_message_pack(&req.base, buf), len);
	nri_updates_clear(&us);
	for (i = 0; i < NCTRS; i++)
		pinning_done(&p[i]);

	back = nri__pkg__api__v1alpha1__update_containers_request__unpack(
	    NULL, len, buf);
	cr_assert_not_null(back);
	cr_assert_eq(back->n_update, NCTRS);
	for (i = 0; i < NCTRS; i++) {
		NRI(ContainerUpdate)	*u = back->update[i];
		NRI(LinuxCPU)		*cpu;

		k = ((int)i * 7) % NSETS;
		snprintf(want, sizeof want, "c%03zu", i);
		cr_assert_str_eq(u->container_id, want);
		cr_assert_not_null(u->linux);
		cr_assert_not_null(u->linux->resources);
		cpu = u->linux->resources->cpu;
		cr_assert_not_null(cpu);
		snprintf(want, sizeof want, "%d-%d", 2 * k, 2 * k + 1);
		cr_assert_str_eq(cpu->cpus, want, "update %zu", i);
		snprintf(want, sizeof want, "%d", k % 4);
		cr_assert_str_eq(cpu->mems, want, "update %zu", i);
		cr_assert_not_null(cpu->shares);
		cr_assert_eq(cpu->shares->value, (uint64_t)(2 + i));
	}
	nri__pkg__api__v1alpha1__update_containers_request__free_unpacked(back,
	    NULL);
	free(buf);
}

/* An adjustment owns its text: it outlives no shared list. */
Test(nri_msg, adjustment_owns_its_sets)
{
	struct nri_adjust	a;
	struct pinning		p;

	pinning_of(3, &p);
	cr_assert_eq(nri_adjust_init(&a, &p), 1);
	pinning_done(&p);
	cr_assert_str_eq(a.res.cpu->cpus, "42-43");
	cr_assert_str_eq(a.res.cpu->mems, "1");
	nri_adjust_clear(&a);
}

/* The request as protobuf-c packs it, and as nriupd.c does: the same. */
static void
assert_same_bytes(NRI(ContainerUpdate) **v, size_t n)
{
	NRI(UpdateContainersRequest)	 req =
	    NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINERS_REQUEST__INIT;
	uint8_t				*want, *got, *p;
	size_t				 wlen, glen = 0, i;

	req.n_update = n;
	req.update = v;
	wlen = protobuf_c_message_get_packed_size(&req.base);
	want = xmalloc(wlen + 1);
	cr_assert_eq(protobuf_c_message_pack(&req.base, want), wlen);
	for (i = 0; i < n; i++)
		glen += nriupd_size(v[i]);
	cr_assert_eq(glen, wlen, "sized %zu bytes, protobuf-c packs %zu",
	    glen, wlen);
	got = xmalloc(glen + 1);
	p = got;
	for (i = 0; i < n; i++)
		p = nriupd_put(v[i], 1, p);
	cr_assert_eq((size_t)(p - got), glen);
	cr_assert_eq(memcmp(got, want, wlen), 0, "the bytes differ");
	free(got);
	free(want);
}

Test(nri_msg, hand_packed_updates_are_protobuf_c_bytes)
{
	NRI(OptionalInt64)	 quota =
	    NRI__PKG__API__V1ALPHA1__OPTIONAL_INT64__INIT;
	NRI(OptionalUInt64)	 zero =
	    NRI__PKG__API__V1ALPHA1__OPTIONAL_UINT64__INIT;
	NRI(ContainerUpdate)	 bare =
	    NRI__PKG__API__V1ALPHA1__CONTAINER_UPDATE__INIT;
	struct nri_upd_view	 views[NCTRS], part[2];
	NRI(ContainerUpdate)	*v[NCTRS + 3];
	struct nri_updates	 us;
	struct pinning		 p[NCTRS];
	uint8_t			*want, *got, *q;
	char			 big[8192];
	size_t			 i, n, len;

	nri_updates_init(&us);
	for (i = 0; i < NCTRS; i++) {
		pinning_of((int)i, &p[i]);
		/* Some without CPUs, without memory, without shares. */
		p[i].pin_cpus = i % 5 != 1;
		p[i].pin_mems = i % 7 != 2;
		if (i % 3 == 0)
			p[i].shares = 0;
		/* A long set: lengths over 127 take two length bytes. */
		if (i == 9)
			cr_assert_eq(cpuset_add_range(&p[i].cpus, 100, 4000),
			    0);
		nri_updates_add(&us, &p[i]);
	}
	/* One sets nothing (51: no CPUs, no memory, no shares). */
	cr_assert_eq(us.n, NCTRS - 1);
	n = us.n;
	for (i = 0; i < n; i++)
		v[i] = (NRI(ContainerUpdate) *)nri_updates_view(&us, i,
		    &views[i]);
	assert_same_bytes(v, n);

	/* The list packs the bytes of its views, as field 2 too. */
	for (i = 0, len = 0; i < n; i++) {
		cr_assert_eq(nri_updates_size(&us, i), nriupd_size(v[i]));
		len += nri_updates_size(&us, i);
	}
	want = xmalloc(len);
	got = xmalloc(len);
	for (i = 0, q = want; i < n; i++)
		q = nriupd_put(v[i], 2, q);
	for (i = 0, q = got; i < n; i++)
		q = nri_updates_put(&us, i, 2, q);
	cr_assert_eq((size_t)(q - got), len);
	cr_assert_eq(memcmp(got, want, len), 0);
	free(want);
	free(got);

	/* Fields the encoder leaves to protobuf-c, and proto3 defaults. */
	v[0]->ignore_failure = 1;
	quota.value = 50000;
	v[3]->linux->resources->cpu->quota = &quota;
	v[4]->linux->resources->cpu->shares = &zero;
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	v[6]->container_id = big;
	bare.container_id = (char *)"";
	v[n++] = &bare;
	/* The nested messages present down to linux, and to resources. */
	v[n] = (NRI(ContainerUpdate) *)nri_updates_view(&us, 0, &part[0]);
	v[n++]->linux->resources = NULL;
	v[n] = (NRI(ContainerUpdate) *)nri_updates_view(&us, 1, &part[1]);
	v[n++]->linux->resources->cpu = NULL;
	assert_same_bytes(v, n);
	nri_updates_clear(&us);
	for (i = 0; i < NCTRS; i++)
		pinning_done(&p[i]);
}

/* A set held in more words is the same set: formatted once. */
Test(nri_msg, a_set_is_one_whatever_its_words)
{
	struct nri_updates	 us;
	struct nri_upd_view	 a, b;
	struct pinning		 p[2];

	nri_updates_init(&us);
	pinning_of(0, &p[0]);
	nri_updates_add(&us, &p[0]);
	pinning_of(0, &p[1]);
	cr_assert_eq(cpuset_add(&p[1].cpus, 4000), 0);
	cpuset_del(&p[1].cpus, 4000);
	nri_updates_add(&us, &p[1]);
	cr_assert_eq(us.n, 2);
	cr_assert_eq(us.nsets, 2, "%zu sets", us.nsets);
	cr_assert_eq(nri_updates_view(&us, 0, &a)->linux->resources->cpu->cpus,
	    nri_updates_view(&us, 1, &b)->linux->resources->cpu->cpus);
	cr_assert_eq(nri_updates_size(&us, 0), nri_updates_size(&us, 1));
	nri_updates_clear(&us);
	pinning_done(&p[0]);
	pinning_done(&p[1]);
}

