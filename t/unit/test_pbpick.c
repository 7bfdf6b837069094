/*
 * pbpick.c: a Synchronize unpacked for the fields the daemon reads gives
 * the values protobuf-c gives, checked whole as protobuf-c checks it; and
 * what it does not take (NUL bytes, a picked message twice, what
 * protobuf-c refuses or cuts short) it leaves to protobuf-c.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nri_msg.h"
#include "pbarena.h"
#include "pbcheck.h"
#include "pbpick.h"
#include "xmalloc.h"

#define D(x)		nri__pkg__api__v1alpha1__##x##__descriptor
#define SYNC		(&D(synchronize_request))

static struct pbpick *
plan(void)
{
	struct pbpick	*pk = pbpick_new(SYNC, nri_sync_picks,
			    nri_sync_npicks);

	cr_assert_not_null(pk, "the daemon's picks make no plan");
	return (pk);
}

static uint8_t *
pack(const ProtobufCMessage *m, size_t *len)
{
	uint8_t	*buf;

	*len = protobuf_c_message_get_packed_size(m);
	buf = xmalloc(*len + 1);
	cr_assert_eq(protobuf_c_message_pack(m, buf), *len);
	return (buf);
}

/* Bytes appended: a field's tag, and for PBWIRE_LEN its length. */
static uint8_t *
put_tag(uint8_t *p, uint32_t num, unsigned wire)
{
	return (pbwire_varint_put((uint64_t)num << 3 | wire, p));
}

/*
 * The len bytes at buf unpacked both ways: when pbpick takes them,
 * protobuf-c takes them too, into the same picked values and specs.
 * 0 when pbpick took them; *why its reason otherwise.
 */
static int
agree(const struct pbpick *pk, const uint8_t *buf, size_t len,
    const char **why)
{
	struct pbarena		*a = pbarena_new(4 * len + 256);
	ProtobufCMessage	*fast, *full;
	int			 rc;

	rc = pbpick_unpack(pk, buf, len, a, &fast, why);
	if (rc == 0) {
		full = protobuf_c_message_unpack(SYNC, NULL, len, buf);
		cr_assert_not_null(full, "pbpick took %zu bytes protobuf-c "
		    "refuses", len);
		cr_assert(pbpick_same(pk, fast, full), "the picked values "
		    "differ from protobuf-c's");
		cr_assert(nri_sync_specs_same((void *)fast, (void *)full),
		    "the container specs differ");
		protobuf_c_message_free_unpacked(full, NULL);
	} else
		cr_assert_eq(rc, PBPICK_FALLBACK);
	pbarena_free(a);
	return (rc);
}

/* protobuf-c's word on the bytes: 1 when it unpacks them. */
static int
protobuf_c_takes(const uint8_t *buf, size_t len)
{
	ProtobufCMessage	*m = protobuf_c_message_unpack(SYNC, NULL, len,
				    buf);

	protobuf_c_message_free_unpacked(m, NULL);
	return (m != NULL);
}

/* Random messages, in an arena freed at once. */
struct gen {
	struct pbarena	*a;
	int		 pods;
};

static void *
g_alloc(struct gen *g, size_t n)
{
	ProtobufCAllocator	*al = pbarena_allocator(g->a);
	void			*p = al->alloc(al->allocator_data, n);

	memset(p, 0, n);
	return (p);
}

static long
rnd(long n)
{
	return (lrand48() % n);
}

static char *
g_str(struct gen *g)
{
	static const char *const bits[] = {
		"a", "b", "-", ".", "/", "=", "0", "7", "\xc3\xa9", "kubepods",
		"burstable", "besteffort", "io.kubernetes.pod.name", "x"
	};
	char	*s = g_alloc(g, 64);
	int	 n = (int)rnd(5), i;

	for (i = 0; i < n; i++)
		strcat(s, bits[rnd(sizeof bits / sizeof bits[0])]);
	return (s);
}

/* A map's entries: n of them, keys sometimes alike. */
#define G_MAP(g, entry_type, init, out, nout) do {			\
	size_t	i_;							\
									\
	(nout) = (size_t)rnd(4);					\
	(out) = g_alloc((g), ((nout) + 1) * sizeof *(out));		\
	for (i_ = 0; i_ < (nout); i_++) {				\
		entry_type	e_ = init;				\
									\
		(out)[i_] = g_alloc((g), sizeof *(out)[i_]);		\
		*(out)[i_] = e_;					\
		(out)[i_]->key = rnd(3) == 0 ? (char *)"k" : g_str(g);	\
		(out)[i_]->value = g_str(g);				\
	}								\
} while (0)

static NRI(OptionalInt64) *
g_i64(struct gen *g)
{
	static const int64_t	v[] = { 0, 1, -1, 50000, 100000, -100000,
				    INT64_MAX, INT64_MIN, 1LL << 40 };
	NRI(OptionalInt64)	 init = NRI__PKG__API__V1ALPHA1__OPTIONAL_INT64__INIT;
	NRI(OptionalInt64)	*o;

	if (rnd(2))
		return (NULL);
	o = g_alloc(g, sizeof *o);
	*o = init;
	o->value = v[rnd(sizeof v / sizeof v[0])];
	return (o);
}

static NRI(OptionalUInt64) *
g_u64(struct gen *g)
{
	static const uint64_t	v[] = { 0, 2, 3, 1024, 1536, 2048, 100000,
				    UINT64_MAX, 1ULL << 40 };
	NRI(OptionalUInt64)	 init =
				    NRI__PKG__API__V1ALPHA1__OPTIONAL_UINT64__INIT;
	NRI(OptionalUInt64)	*o;

	if (rnd(2))
		return (NULL);
	o = g_alloc(g, sizeof *o);
	*o = init;
	o->value = v[rnd(sizeof v / sizeof v[0])];
	return (o);
}

static NRI(LinuxResources) *
g_res(struct gen *g)
{
	NRI(LinuxResources)	 ri = NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__INIT;
	NRI(LinuxCPU)		 ci = NRI__PKG__API__V1ALPHA1__LINUX_CPU__INIT;
	NRI(LinuxMemory)	 mi = NRI__PKG__API__V1ALPHA1__LINUX_MEMORY__INIT;
	NRI(LinuxResources)	*r;

	if (rnd(4) == 0)
		return (NULL);
	r = g_alloc(g, sizeof *r);
	*r = ri;
	if (rnd(4) != 0) {
		r->cpu = g_alloc(g, sizeof *r->cpu);
		*r->cpu = ci;
		r->cpu->shares = g_u64(g);
		r->cpu->quota = g_i64(g);
		r->cpu->period = g_u64(g);
		r->cpu->realtime_runtime = g_i64(g);	/* not picked */
		r->cpu->cpus = rnd(2) ? (char *)"0-3,8" : g_str(g);
		r->cpu->mems = rnd(2) ? (char *)"0" : g_str(g);
	}
	if (rnd(2)) {
		r->memory = g_alloc(g, sizeof *r->memory);
		*r->memory = mi;
		r->memory->limit = g_i64(g);
		r->memory->swap = g_i64(g);		/* not picked */
	}
	/* Not picked: */
	if (rnd(2))
		G_MAP(g, NRI(LinuxResources__UnifiedEntry),
		    NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__UNIFIED_ENTRY__INIT,
		    r->unified, r->n_unified);
	return (r);
}

static NRI(PodSandbox) *
g_pod(struct gen *g, int k)
{
	static const char *const parents[] = {
		"", "/kubepods/burstable", "kubepods-besteffort.slice",
		"/kubepods", "/elsewhere"
	};
	NRI(PodSandbox)		 pi = NRI__PKG__API__V1ALPHA1__POD_SANDBOX__INIT;
	NRI(LinuxPodSandbox)	 li =
				    NRI__PKG__API__V1ALPHA1__LINUX_POD_SANDBOX__INIT;
	NRI(PodSandbox)		*p = g_alloc(g, sizeof *p);

	*p = pi;
	p->id = g_alloc(g, 16);
	snprintf(p->id, 16, "pod%d", k);
	p->name = g_str(g);
	p->uid = g_str(g);
	p->namespace_ = g_str(g);
	p->runtime_handler = g_str(g);			/* not picked */
	p->pid = (uint32_t)rnd(100000);			/* not picked */
	G_MAP(g, NRI(PodSandbox__LabelsEntry),
	    NRI__PKG__API__V1ALPHA1__POD_SANDBOX__LABELS_ENTRY__INIT,
	    p->labels, p->n_labels);
	G_MAP(g, NRI(PodSandbox__AnnotationsEntry),
	    NRI__PKG__API__V1ALPHA1__POD_SANDBOX__ANNOTATIONS_ENTRY__INIT,
	    p->annotations, p->n_annotations);
	if (rnd(4) != 0) {
		p->linux = g_alloc(g, sizeof *p->linux);
		*p->linux = li;
		p->linux->cgroup_parent =
		    (char *)parents[rnd(sizeof parents / sizeof parents[0])];
		p->linux->cgroups_path = rnd(2) ? (char *)"" : g_str(g);
		p->linux->resources = g_res(g);		/* not picked */
	}
	return (p);
}

static NRI(Container) *
g_container(struct gen *g, int k)
{
	static const char *const env[] = {
		"A=1", "B", "=x", "", "C=", "DRA_CPUSET_u=0-3"
	};
	NRI(Container)		 ci = NRI__PKG__API__V1ALPHA1__CONTAINER__INIT;
	NRI(LinuxContainer)	 li =
				    NRI__PKG__API__V1ALPHA1__LINUX_CONTAINER__INIT;
	NRI(OptionalInt)	 oi = NRI__PKG__API__V1ALPHA1__OPTIONAL_INT__INIT;
	NRI(Mount)		 mi = NRI__PKG__API__V1ALPHA1__MOUNT__INIT;
	NRI(User)		 ui = NRI__PKG__API__V1ALPHA1__USER__INIT;
	NRI(Container)		*c = g_alloc(g, sizeof *c);
	size_t			 i;

	*c = ci;
	c->id = g_alloc(g, 16);
	snprintf(c->id, 16, rnd(8) ? "c%d" : "", k);
	c->pod_sandbox_id = g_alloc(g, 16);
	snprintf(c->pod_sandbox_id, 16, "pod%d", (int)rnd(g->pods + 1));
	c->name = g_str(g);
	c->state = (NRI(ContainerState))rnd(6);
	G_MAP(g, NRI(Container__LabelsEntry),
	    NRI__PKG__API__V1ALPHA1__CONTAINER__LABELS_ENTRY__INIT,
	    c->labels, c->n_labels);
	G_MAP(g, NRI(Container__AnnotationsEntry),		/* not picked */
	    NRI__PKG__API__V1ALPHA1__CONTAINER__ANNOTATIONS_ENTRY__INIT,
	    c->annotations, c->n_annotations);
	c->n_env = (size_t)rnd(4);
	c->env = g_alloc(g, (c->n_env + 1) * sizeof *c->env);
	for (i = 0; i < c->n_env; i++)
		c->env[i] = (char *)env[rnd(sizeof env / sizeof env[0])];
	c->n_args = (size_t)rnd(3);				/* not picked */
	c->args = g_alloc(g, (c->n_args + 1) * sizeof *c->args);
	for (i = 0; i < c->n_args; i++)
		c->args[i] = g_str(g);
	c->n_mounts = (size_t)rnd(3);				/* not picked */
	c->mounts = g_alloc(g, (c->n_mounts + 1) * sizeof *c->mounts);
	for (i = 0; i < c->n_mounts; i++) {
		c->mounts[i] = g_alloc(g, sizeof *c->mounts[i]);
		*c->mounts[i] = mi;
		c->mounts[i]->destination = g_str(g);
		c->mounts[i]->source = g_str(g);
	}
	if (rnd(2)) {						/* not picked */
		c->user = g_alloc(g, sizeof *c->user);
		*c->user = ui;
		c->user->n_additional_gids = (size_t)rnd(4);
		c->user->additional_gids = g_alloc(g, 4 * sizeof(uint32_t));
		for (i = 0; i < c->user->n_additional_gids; i++)
			c->user->additional_gids[i] = (uint32_t)rnd(70000);
	}
	c->pid = (uint32_t)rnd(100000);				/* not picked */
	c->exit_code = (int32_t)rnd(3) - 1;			/* not picked */
	if (rnd(5) != 0) {
		c->linux = g_alloc(g, sizeof *c->linux);
		*c->linux = li;
		c->linux->resources = g_res(g);
		c->linux->cgroups_path = rnd(2) ? (char *)"" :
		    (char *)"/kubepods/besteffort/podx/c";
		if (rnd(2)) {
			c->linux->oom_score_adj = g_alloc(g,
			    sizeof *c->linux->oom_score_adj);
			*c->linux->oom_score_adj = oi;
			c->linux->oom_score_adj->value = rnd(2600) - 1300;
		}
	}
	return (c);
}

static uint8_t *
g_sync(struct gen *g, size_t *len)
{
	NRI(SynchronizeRequest)	 r = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	size_t			 i;

	g->pods = (int)rnd(4);
	r.n_pods = (size_t)g->pods;
	r.pods = g_alloc(g, (r.n_pods + 1) * sizeof *r.pods);
	for (i = 0; i < r.n_pods; i++)
		r.pods[i] = g_pod(g, (int)i);
	r.n_containers = (size_t)rnd(5);
	r.containers = g_alloc(g, (r.n_containers + 1) * sizeof *r.containers);
	for (i = 0; i < r.n_containers; i++)
		r.containers[i] = g_container(g, (int)i);
	r.more = rnd(2);
	return (pack(&r.base, len));
}

Test(pbpick, the_plan)
{
	struct pbpick_field	bad[] = {
		{ &D(container), 1 },
		{ &D(container), 99 },		/* no such field */
	};
	struct pbpick_field	gids = { &D(user), 3 };	/* repeated uint32 */
	struct pbpick_field	other = { &D(create_container_request), 1 };
	struct pbpick		*pk;

	pbpick_free(plan());
	cr_assert_null(pbpick_new(SYNC, bad, 2));
	cr_assert_null(pbpick_new(SYNC, &gids, 1));
	/* A type a Synchronize does not hold. */
	cr_assert_null(pbpick_new(SYNC, &other, 1));
	pk = pbpick_new(SYNC, bad, 1);
	cr_assert_not_null(pk);
	pbpick_free(pk);
}

/* A Synchronize as a runtime writes it, every field set. */
Test(pbpick, random_synchronizes_agree_with_protobuf_c)
{
	struct pbpick	*pk = plan();
	struct gen	 g;
	uint8_t		*buf;
	const char	*why;
	size_t		 len;
	int		 i;

	srand48(1);
	for (i = 0; i < 400; i++) {
		g.a = pbarena_new(4096);
		buf = g_sync(&g, &len);
		cr_assert_eq(agree(pk, buf, len, &why), 0,
		    "message %d left to protobuf-c: %s", i, why);
		free(buf);
		pbarena_free(g.a);
	}
	pbpick_free(pk);
}

/* The same messages, bytes changed: whatever pbpick takes, protobuf-c
 * takes into the same values. */
Test(pbpick, damaged_synchronizes_agree_with_protobuf_c)
{
	struct pbpick	*pk = plan();
	struct gen	 g;
	uint8_t		*buf, *bad;
	const char	*why;
	size_t		 len, n, at, k;
	int		 i, j, taken = 0, left = 0;

	srand48(2);
	for (i = 0; i < 300; i++) {
		g.a = pbarena_new(4096);
		buf = g_sync(&g, &len);
		bad = xmalloc(2 * len + 16);
		for (j = 0; j < 25; j++) {
			memcpy(bad, buf, len);
			n = len;
			at = len > 0 ? (size_t)rnd((long)len) : 0;
			switch (rnd(4)) {
			case 0:		/* a byte changed */
				if (n > 0)
					bad[at] = (uint8_t)rnd(256);
				break;
			case 1:		/* cut short */
				n = at;
				break;
			case 2:		/* a stretch given twice */
				k = (size_t)rnd((long)(len - at) + 1);
				memmove(bad + at + k, bad + at, len - at);
				n = len + k;
				break;
			default:	/* a byte put in */
				memmove(bad + at + 1, bad + at, len - at);
				bad[at] = (uint8_t)rnd(256);
				n = len + 1;
				break;
			}
			if (agree(pk, bad, n, &why) == 0)
				taken++;
			else
				left++;
		}
		free(bad);
		free(buf);
		pbarena_free(g.a);
	}
	cr_log_info("%d taken, %d left to protobuf-c", taken, left);
	/* Both ways are tried. */
	cr_assert_gt(taken, 500, "%d taken", taken);
	cr_assert_gt(left, 500, "%d left to protobuf-c", left);
	pbpick_free(pk);
}

/* A small message by hand, for the cases below: a container with an
 * id, a state and a linux part holding its cpus. */
static size_t
container_bytes(uint8_t *out, const char *id, int state)
{
	uint8_t	*p = out, cpu[32], res[40], lin[48], *q;
	size_t	 n;

	q = put_tag(cpu, 6, PBWIRE_LEN);	/* LinuxCPU.cpus */
	*q++ = 3;
	memcpy(q, "0-3", 3);
	q += 3;
	n = (size_t)(q - cpu);
	q = put_tag(res, 2, PBWIRE_LEN);	/* LinuxResources.cpu */
	*q++ = (uint8_t)n;
	memcpy(q, cpu, n);
	q += n;
	n = (size_t)(q - res);
	q = put_tag(lin, 3, PBWIRE_LEN);	/* LinuxContainer.resources */
	*q++ = (uint8_t)n;
	memcpy(q, res, n);
	q += n;
	n = (size_t)(q - lin);
	p = put_tag(p, 1, PBWIRE_LEN);		/* Container.id */
	*p++ = (uint8_t)strlen(id);
	memcpy(p, id, strlen(id));
	p += strlen(id);
	p = put_tag(p, 4, PBWIRE_VARINT);	/* Container.state */
	*p++ = (uint8_t)state;
	p = put_tag(p, 11, PBWIRE_LEN);		/* Container.linux */
	*p++ = (uint8_t)n;
	memcpy(p, lin, n);
	p += n;
	return ((size_t)(p - out));
}

/* SynchronizeRequest.containers holding the n bytes of ct. */
static size_t
sync_bytes(uint8_t *out, const uint8_t *ct, size_t n)
{
	uint8_t	*p = put_tag(out, 2, PBWIRE_LEN);

	p = pbwire_varint_put(n, p);
	memcpy(p, ct, n);
	return ((size_t)(p + n - out));
}

static const NRI(Container) *
only_container(const struct pbpick *pk, const uint8_t *buf, size_t len,
    struct pbarena *a)
{
	ProtobufCMessage	*m;
	const char		*why;
	NRI(SynchronizeRequest)	*r;

	cr_assert_eq(pbpick_unpack(pk, buf, len, a, &m, &why), 0, "%s", why);
	r = (void *)m;
	cr_assert_eq(r->n_containers, 1);
	return (r->containers[0]);
}

Test(pbpick, picked_values_and_nothing_else)
{
	struct pbpick		*pk = plan();
	struct pbarena		*a = pbarena_new(1024);
	uint8_t			 ct[256], buf[512], *p;
	const NRI(Container)	*c;
	size_t			 n, len;

	n = container_bytes(ct, "abc", 2);
	/* Not picked: args (7), pid (12), an unknown field (99). */
	p = put_tag(ct + n, 7, PBWIRE_LEN);
	*p++ = 1;
	*p++ = 'x';
	p = put_tag(p, 12, PBWIRE_VARINT);
	*p++ = 42;
	p = put_tag(p, 99, PBWIRE_64BIT);
	memset(p, 1, 8);
	p += 8;
	len = sync_bytes(buf, ct, (size_t)(p - ct));
	c = only_container(pk, buf, len, a);
	cr_assert_str_eq(c->id, "abc");
	cr_assert_eq(c->state, 2);
	cr_assert_str_eq(c->linux->resources->cpu->cpus, "0-3");
	cr_assert_str_eq(c->linux->resources->cpu->mems, "");
	cr_assert_null(c->linux->resources->memory);
	cr_assert_eq(c->n_args, 0);
	cr_assert_eq(c->pid, 0);
	cr_assert_eq(agree(pk, buf, len, NULL), 0);
	pbarena_free(a);
	pbpick_free(pk);
}

/* A scalar or a string given twice: the last one, as protobuf-c. */
Test(pbpick, the_last_value_wins)
{
	struct pbpick		*pk = plan();
	struct pbarena		*a = pbarena_new(1024);
	uint8_t			 ct[256], buf[512], *p;
	const NRI(Container)	*c;
	size_t			 n, len;

	n = container_bytes(ct, "first", 1);
	p = put_tag(ct + n, 1, PBWIRE_LEN);
	*p++ = 4;
	memcpy(p, "last", 4);
	p += 4;
	p = put_tag(p, 4, PBWIRE_VARINT);
	*p++ = 3;
	len = sync_bytes(buf, ct, (size_t)(p - ct));
	c = only_container(pk, buf, len, a);
	cr_assert_str_eq(c->id, "last");
	cr_assert_eq(c->state, 3);
	cr_assert_eq(agree(pk, buf, len, NULL), 0);
	pbarena_free(a);
	pbpick_free(pk);
}

/* What pbpick leaves to protobuf-c, and protobuf-c's own word on it. */
Test(pbpick, left_to_protobuf_c)
{
	static const struct {
		const char	*what;
		const char	*why;
		int		 protobuf_c_takes;
	} want[] = {
		{ "a NUL byte in a string not picked", "NUL", 1 },
		{ "a picked message given twice", "twice", 1 },
		{ "a picked string as a varint", "wire type", 0 },
		{ "a string not picked as a 32-bit field", "wire type", 0 },
		{ "a tag past 32 bits", "wire format", 1 },
		{ "a group", "wire format", 0 },
		{ "a length past the end", "wire format", 0 },
		{ "a bad packed array not picked", "packed", 0 },
	};
	struct pbpick	*pk = plan();
	uint8_t		 ct[256], buf[512], *p;
	const char	*why;
	size_t		 n, len, i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		n = container_bytes(ct, "abc", 2);
		p = ct + n;
		switch (i) {
		case 0:		/* Container.args */
			p = put_tag(p, 7, PBWIRE_LEN);
			*p++ = 3;
			memcpy(p, "a\0b", 3);
			p += 3;
			break;
		case 1:		/* Container.linux again */
			p = put_tag(p, 11, PBWIRE_LEN);
			*p++ = 0;
			break;
		case 2:		/* Container.name */
			p = put_tag(p, 3, PBWIRE_VARINT);
			*p++ = 1;
			break;
		case 3:		/* Container.status_reason */
			p = put_tag(p, 18, PBWIRE_32BIT);
			memset(p, 0, 4);
			p += 4;
			break;
		case 4:		/* field 1 (id), its tag in five bytes */
			memcpy(p, "\x8a\x80\x80\x80\x10", 5);
			p += 5;
			*p++ = 1;
			*p++ = 'z';
			break;
		case 5:
			p = put_tag(p, 50, 3);
			break;
		case 6:		/* Container.name, 100 bytes long */
			p = put_tag(p, 3, PBWIRE_LEN);
			*p++ = 100;
			break;
		case 7:		/* User.additional_gids, a varint unended */
			p = put_tag(p, 21, PBWIRE_LEN);
			*p++ = 3;
			p = put_tag(p, 3, PBWIRE_LEN);
			*p++ = 1;
			*p++ = 0x80;
			break;
		}
		len = sync_bytes(buf, ct, (size_t)(p - ct));
		cr_assert_eq(agree(pk, buf, len, &why), PBPICK_FALLBACK,
		    "%s: taken", want[i].what);
		cr_assert_not_null(strstr(why, want[i].why), "%s: %s",
		    want[i].what, why);
		cr_assert_eq(protobuf_c_takes(buf, len),
		    want[i].protobuf_c_takes, "%s: protobuf-c's word",
		    want[i].what);
	}
	pbpick_free(pk);
}

/* The comparison the tests lean on sees a picked field, and only that. */
Test(pbpick, same_sees_picked_fields_only)
{
	struct pbpick		*pk = plan();
	NRI(SynchronizeRequest)	 a = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	NRI(SynchronizeRequest)	 b = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	NRI(Container)		 ca = NRI__PKG__API__V1ALPHA1__CONTAINER__INIT;
	NRI(Container)		 cb = NRI__PKG__API__V1ALPHA1__CONTAINER__INIT;
	NRI(Container)		*va[] = { &ca }, *vb[] = { &cb };
	char			*env_a[] = { (char *)"A=1" };
	char			*env_b[] = { (char *)"A=2" };

	a.containers = va;
	b.containers = vb;
	a.n_containers = b.n_containers = 1;
	ca.id = cb.id = (char *)"x";
	cr_assert(pbpick_same(pk, &a.base, &b.base));
	cb.pid = 7;			/* not picked */
	cr_assert(pbpick_same(pk, &a.base, &b.base));
	ca.env = env_a;
	cb.env = env_b;
	ca.n_env = cb.n_env = 1;
	cr_assert_not(pbpick_same(pk, &a.base, &b.base));
	cb.env = env_a;
	cr_assert(pbpick_same(pk, &a.base, &b.base));
	cb.state = 2;
	cr_assert_not(pbpick_same(pk, &a.base, &b.base));
	cb.state = ca.state;
	b.more = 1;
	cr_assert_not(pbpick_same(pk, &a.base, &b.base));
	pbpick_free(pk);
}
