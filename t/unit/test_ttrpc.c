/*
 * test_ttrpc.c: the ttrpc frame codec and envelopes against the byte
 * layouts of protocols.md 1 and 2.2, the server's answers to odd frames
 * (9.2), the NRI field numbers of 2.6 in the generated code, and a
 * deterministic fuzz loop.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nri.pb-c.h"
#include "pbarena.h"
#include "testlib.h"
#include "ttrpc.h"
#include "xmalloc.h"

#define NRI(x)		Nri__Pkg__Api__V1alpha1__##x
#define NRI_INIT(X)	NRI__PKG__API__V1ALPHA1__##X##__INIT
#define NRI_DESC(x)	nri__pkg__api__v1alpha1__##x##__descriptor

#define MIB4		4194304U

/* Frames a reader delivered, each copied. */
struct seen {
	struct ttrpc_frame	*f;
	uint8_t			**data;
	size_t			 n;
	int			 stop_at;	/* return -ECANCELED at this one */
};

static int
collect(const struct ttrpc_frame *f, void *arg)
{
	struct seen	*s = arg;

	s->f = xreallocarray(s->f, s->n + 1, sizeof *s->f);
	s->data = xreallocarray(s->data, s->n + 1, sizeof *s->data);
	s->f[s->n] = *f;
	s->data[s->n] = NULL;
	if (f->data != NULL) {
		s->data[s->n] = xmalloc(f->len);
		memcpy(s->data[s->n], f->data, f->len);
	}
	cr_assert(f->data != NULL || f->len == 0 || f->oversize,
	    "frame of %zu bytes delivered without data", f->len);
	s->n++;
	if (s->stop_at != 0 && (int)s->n == s->stop_at)
		return (-ECANCELED);
	return (0);
}

static void
seen_clear(struct seen *s)
{
	size_t	i;

	for (i = 0; i < s->n; i++)
		free(s->data[i]);
	free(s->data);
	free(s->f);
	memset(s, 0, sizeof *s);
}

/* Everything in buf, fed at once, as a frame list. */
static void
read_all(const uint8_t *buf, size_t len, struct seen *s)
{
	struct ttrpc_reader	*r;
	char			*cause = NULL;

	r = ttrpc_reader_new(collect, s);
	cr_assert_eq(ttrpc_reader_feed(r, buf, len, &cause), 0, "%s", cause);
	cr_assert_eq(ttrpc_reader_pending(r), 0);
	ttrpc_reader_free(r);
}

/* The single frame in buf; s must be cleared by the caller. */
static const struct ttrpc_frame *
read_one(const uint8_t *buf, size_t len, struct seen *s)
{
	read_all(buf, len, s);
	cr_assert_eq(s->n, 1, "%zu frames", s->n);
	s->f[0].data = s->data[0];
	return (&s->f[0]);
}

/* A base-128 varint at p (protobuf encoding), its size in *n. */
static uint64_t
varint(const uint8_t *p, size_t *n)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < 10; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0)
			break;
	}
	*n = i + 1;
	return (v);
}

Test(ttrpc, header_layout)
{
	static const uint8_t	want[] = { 0, 0, 0, 0x3f, 0, 0, 0, 1, 1, 0 };
	static const uint8_t	in[] = { 0, 0, 1, 0, 0, 0, 0, 5, 2, 0x81 };
	uint8_t			hdr[TTRPC_HEADER_SIZE];
	struct ttrpc_frame	f;

	/* 2.2: data 63, stream 1, Request, unary. */
	ttrpc_header_pack(hdr, 63, 1, TTRPC_REQUEST, 0);
	cr_assert_arr_eq(hdr, want, sizeof want);

	ttrpc_header_unpack(in, &f);
	cr_assert_eq(f.len, 256);
	cr_assert_eq(f.stream, 5);
	cr_assert_eq(f.type, TTRPC_RESPONSE);
	cr_assert_eq(f.flags, 0x81);
	cr_assert_null(f.data);
	cr_assert_eq(f.oversize, 0);
}

/* The plugin's first call, byte for byte as protocols.md 2.2 shows it. */
Test(ttrpc, register_plugin_request_bytes)
{
	static const uint8_t	 hdr[] = { 0, 0, 0, 0x3f, 0, 0, 0, 1, 1, 0 };
	static const char	 svc[] = "nri.pkg.api.v1alpha1.Runtime";
	static const char	 meth[] = "RegisterPlugin";
	static const uint8_t	 payload[] = { 0x1a, 0x09, 0x0a, 0x03, 'c', 'p',
	    'u', 0x12, 0x02, '9', '0' };
	NRI(RegisterPluginRequest) req = NRI_INIT(REGISTER_PLUGIN_REQUEST);
	uint8_t			*out, *d;
	size_t			 len, n;

	req.plugin_name = "cpu";
	req.plugin_idx = "90";
	cr_assert_eq(ttrpc_request_pack(1, svc, meth, &req.base, 5000000000LL,
	    &out, &len), 0);
	cr_assert_eq(len, 73, "the 73-byte trunk payload of 2.2");
	cr_assert_arr_eq(out, hdr, sizeof hdr);

	d = out + TTRPC_HEADER_SIZE;
	cr_assert_eq(d[0], 0x0a);
	cr_assert_eq(d[1], 0x1c);
	cr_assert_arr_eq(d + 2, svc, 28);
	d += 30;
	cr_assert_eq(d[0], 0x12);
	cr_assert_eq(d[1], 0x0e);
	cr_assert_arr_eq(d + 2, meth, 14);
	d += 16;
	cr_assert_arr_eq(d, payload, sizeof payload);
	d += sizeof payload;
	cr_assert_eq(d[0], 0x20, "field 4 timeout_nano, varint");
	cr_assert_eq(varint(d + 1, &n), 5000000000ULL);
	cr_assert_eq(n, 5);
	cr_assert_eq(d + 1 + n, out + len);
	free(out);
}

/* RegisterPlugin returns Empty: the reply is a header with length 0. */
Test(ttrpc, empty_reply_is_bare_header)
{
	static const uint8_t	 want[] = { 0, 0, 0, 0, 0, 0, 0, 1, 2, 0 };
	NRI(Empty)		 empty = NRI_INIT(EMPTY);
	uint8_t			*out;
	size_t			 len;

	cr_assert_eq(ttrpc_response_pack(1, &empty.base, &out, &len), 0);
	cr_assert_eq(len, sizeof want);
	cr_assert_arr_eq(out, want, sizeof want);
	free(out);

	cr_assert_eq(ttrpc_response_pack(1, NULL, &out, &len), 0);
	cr_assert_eq(len, sizeof want);
	cr_assert_arr_eq(out, want, sizeof want);
	free(out);
}

/* A CreateContainer request as the runtime sends it, and our answer. */
Test(ttrpc, create_container_round_trip)
{
	NRI(PodSandbox)			pod = NRI_INIT(POD_SANDBOX);
	NRI(PodSandbox__LabelsEntry)	lab = NRI_INIT(POD_SANDBOX__LABELS_ENTRY);
	NRI(PodSandbox__LabelsEntry)	*labs[1] = { &lab };
	NRI(Container)			ctr = NRI_INIT(CONTAINER);
	NRI(LinuxContainer)		lc = NRI_INIT(LINUX_CONTAINER);
	NRI(LinuxResources)		res = NRI_INIT(LINUX_RESOURCES);
	NRI(LinuxCPU)			cpu = NRI_INIT(LINUX_CPU);
	NRI(LinuxMemory)		mem = NRI_INIT(LINUX_MEMORY);
	NRI(OptionalInt64)		limit = NRI_INIT(OPTIONAL_INT64);
	NRI(CreateContainerRequest)	req = NRI_INIT(CREATE_CONTAINER_REQUEST);
	NRI(CreateContainerRequest)	*got;
	struct pbarena			*arena;
	char				*env[] = { "A=B", "CDI=1" };
	struct seen			 s = { 0 };
	const struct ttrpc_frame	*f;
	struct ttrpc_streams		 streams;
	Ttrpc__Request			*treq;
	ProtobufCMessage		*m;
	uint8_t				*out;
	size_t				 len;
	int				 code;
	char				*cause = NULL;

	lab.key = "app";
	lab.value = "db";
	pod.id = "pod-1";
	pod.name = "db-0";
	pod.uid = "0b6e3c2a-0000-4000-8000-000000000001";
	pod.namespace_ = "default";
	pod.n_labels = 1;
	pod.labels = labs;
	cpu.cpus = "0-3";
	cpu.mems = "0";
	limit.value = 0;
	mem.limit = &limit;
	res.cpu = &cpu;
	res.memory = &mem;
	lc.resources = &res;
	ctr.id = "ctr-1";
	ctr.pod_sandbox_id = "pod-1";
	ctr.name = "db";
	ctr.state = NRI__PKG__API__V1ALPHA1__CONTAINER_STATE__CONTAINER_CREATED;
	ctr.n_env = 2;
	ctr.env = env;
	ctr.linux = &lc;
	req.pod = &pod;
	req.container = &ctr;

	cr_assert_eq(ttrpc_request_pack(3, "nri.pkg.api.v1alpha1.Plugin",
	    "CreateContainer", &req.base, 2000000000LL, &out, &len), 0);
	f = read_one(out, len, &s);
	free(out);
	cr_assert_eq(f->stream, 3);
	cr_assert_eq(f->type, TTRPC_REQUEST);
	cr_assert_eq(f->flags, 0);
	ttrpc_streams_init(&streams);
	cr_assert_eq(ttrpc_server_check(&streams, f, &code, NULL),
	    TTRPC_HANDLE);

	cr_assert_eq(ttrpc_request_unpack(f, &treq, &cause), 0, "%s", cause);
	cr_assert_str_eq(treq->service, "nri.pkg.api.v1alpha1.Plugin");
	cr_assert_str_eq(treq->method, "CreateContainer");
	cr_assert_eq(treq->timeout_nano, 2000000000LL);
	cr_assert_eq(treq->n_metadata, 0);
	/* In an arena, as the daemon decodes a request. */
	cr_assert_eq(ttrpc_payload_unpack(&NRI_DESC(create_container_request),
	    &treq->payload, &m, &arena, &cause), 0, "%s", cause);
	cr_assert_not_null(arena);
	got = (NRI(CreateContainerRequest) *)m;
	cr_assert_str_eq(got->pod->uid, pod.uid);
	cr_assert_str_eq(got->pod->namespace_, "default");
	cr_assert_eq(got->pod->n_labels, 1);
	cr_assert_str_eq(got->pod->labels[0]->key, "app");
	cr_assert_str_eq(got->pod->labels[0]->value, "db");
	cr_assert_str_eq(got->container->id, "ctr-1");
	cr_assert_eq(got->container->n_env, 2);
	cr_assert_str_eq(got->container->env[1], "CDI=1");
	cr_assert_eq(got->container->state, 1);
	cr_assert_str_eq(got->container->linux->resources->cpu->cpus, "0-3");
	cr_assert_str_eq(got->container->linux->resources->cpu->mems, "0");
	/* 2.6: a wrapper holding 0 is not an absent one. */
	cr_assert_not_null(got->container->linux->resources->memory->limit);
	cr_assert_eq(got->container->linux->resources->memory->limit->value,
	    0);
	cr_assert_null(got->container->linux->resources->cpu->shares);
	cr_assert_null(got->container->linux->resources->memory->swap);
	pbarena_free(arena);
	ttrpc_request_free(treq);
	seen_clear(&s);
}

/*
 * The cpuset a plugin sets at creation travels at adjust(1).linux(6).
 * resources(2).cpu(2).cpus(6) (2.6): each level a length-delimited field,
 * tag (number << 3 | 2).
 */
Test(ttrpc, create_container_reply_field_path)
{
	static const uint8_t		 want[] = { 0x0a, 11, 0x32, 9, 0x12, 7,
	    0x12, 5, 0x32, 3, '4', '-', '7' };
	NRI(CreateContainerResponse)	 resp =
	    NRI_INIT(CREATE_CONTAINER_RESPONSE);
	NRI(ContainerAdjustment)	 adj = NRI_INIT(CONTAINER_ADJUSTMENT);
	NRI(LinuxContainerAdjustment)	 ladj =
	    NRI_INIT(LINUX_CONTAINER_ADJUSTMENT);
	NRI(LinuxResources)		 res = NRI_INIT(LINUX_RESOURCES);
	NRI(LinuxCPU)			 cpu = NRI_INIT(LINUX_CPU);
	NRI(ContainerUpdate)		 upd = NRI_INIT(CONTAINER_UPDATE);
	NRI(ContainerUpdate)		*upds[1] = { &upd };
	NRI(LinuxContainerUpdate)	 lupd = NRI_INIT(LINUX_CONTAINER_UPDATE);
	NRI(LinuxResources)		 ures = NRI_INIT(LINUX_RESOURCES);
	NRI(LinuxCPU)			 ucpu = NRI_INIT(LINUX_CPU);
	NRI(CreateContainerResponse)	*got;
	struct seen			 s = { 0 };
	const struct ttrpc_frame	*f;
	Ttrpc__Response			*tresp;
	ProtobufCMessage		*m;
	uint8_t				*out;
	size_t				 len;
	char				*cause = NULL;

	cpu.cpus = "4-7";
	res.cpu = &cpu;
	ladj.resources = &res;
	adj.linux = &ladj;
	resp.adjust = &adj;
	cr_assert_eq(protobuf_c_message_get_packed_size(&resp.base),
	    sizeof want);
	out = xmalloc(sizeof want);
	protobuf_c_message_pack(&resp.base, out);
	cr_assert_arr_eq(out, want, sizeof want);
	free(out);

	/* And with an update of another container, through the envelope. */
	ucpu.cpus = "8-11";
	ures.cpu = &ucpu;
	lupd.resources = &ures;
	upd.container_id = "ctr-2";
	upd.linux = &lupd;
	resp.n_update = 1;
	resp.update = upds;
	cr_assert_eq(ttrpc_response_pack(3, &resp.base, &out, &len), 0);
	f = read_one(out, len, &s);
	free(out);
	cr_assert_eq(f->type, TTRPC_RESPONSE);
	cr_assert_eq(f->stream, 3);
	cr_assert_eq(ttrpc_response_unpack(f, &tresp, &cause), 0, "%s", cause);
	cr_assert_null(tresp->status, "an OK response carries no status");
	cr_assert_eq(ttrpc_response_code(tresp), TTRPC_OK);
	cr_assert_eq(ttrpc_payload_unpack(&NRI_DESC(create_container_response),
	    &tresp->payload, &m, NULL, &cause), 0, "%s", cause);
	got = (NRI(CreateContainerResponse) *)m;
	cr_assert_str_eq(got->adjust->linux->resources->cpu->cpus, "4-7");
	cr_assert_str_eq(got->adjust->linux->resources->cpu->mems, "");
	cr_assert_eq(got->n_update, 1);
	cr_assert_str_eq(got->update[0]->container_id, "ctr-2");
	cr_assert_str_eq(got->update[0]->linux->resources->cpu->cpus, "8-11");
	cr_assert_eq(got->update[0]->ignore_failure, 0);
	protobuf_c_message_free_unpacked(m, NULL);
	ttrpc__response__free_unpacked(tresp, NULL);
	seen_clear(&s);
}

/* An error reply: Response{status{code, message}} and no payload. */
Test(ttrpc, error_response)
{
	static const char		 msg[] = "method Foo not implemented";
	struct seen			 s = { 0 };
	const struct ttrpc_frame	*f;
	Ttrpc__Response			*tresp;
	uint8_t				*out, *d;
	size_t				 len;
	char				*cause = NULL;

	cr_assert_eq(ttrpc_error_pack(7, TTRPC_UNIMPLEMENTED, msg, &out, &len),
	    0);
	/* status(1) { code(1) = 12, message(2) } */
	d = out + TTRPC_HEADER_SIZE;
	cr_assert_eq(len, TTRPC_HEADER_SIZE + 2 + 2 + 2 + strlen(msg));
	cr_assert_eq(d[0], 0x0a);
	cr_assert_eq(d[1], 2 + 2 + strlen(msg));
	cr_assert_eq(d[2], 0x08);
	cr_assert_eq(d[3], 12);
	cr_assert_eq(d[4], 0x12);
	cr_assert_eq(d[5], strlen(msg));
	cr_assert_arr_eq(d + 6, msg, strlen(msg));

	f = read_one(out, len, &s);
	free(out);
	cr_assert_eq(ttrpc_response_unpack(f, &tresp, &cause), 0, "%s", cause);
	cr_assert_eq(ttrpc_response_code(tresp), TTRPC_UNIMPLEMENTED);
	cr_assert_str_eq(tresp->status->message, msg);
	cr_assert_eq(tresp->payload.len, 0);
	ttrpc__response__free_unpacked(tresp, NULL);
	seen_clear(&s);

	cr_assert_str_eq(ttrpc_code_name(12), "UNIMPLEMENTED");
	cr_assert_str_eq(ttrpc_code_name(8), "RESOURCE_EXHAUSTED");
	cr_assert_str_eq(ttrpc_code_name(16), "UNAUTHENTICATED");
	cr_assert_str_eq(ttrpc_code_name(17), "code 17");
}

/* A few frames of every kind, back to back, with their expected list. */
struct sample {
	uint8_t			*buf;
	size_t			 len;
	struct ttrpc_frame	 f[8];
	const uint8_t		*data[8];
	size_t			 n;
};

static void
sample_add(struct sample *sm, uint32_t stream, uint8_t type, uint8_t flags,
    size_t len, uint8_t fill)
{
	uint8_t	*p;
	size_t	 i;

	sm->buf = xreallocarray(sm->buf, sm->len + TTRPC_HEADER_SIZE + len, 1);
	p = sm->buf + sm->len;
	ttrpc_header_pack(p, len, stream, type, flags);
	for (i = 0; i < len; i++)
		p[TTRPC_HEADER_SIZE + i] = fill + i * 7;
	sm->f[sm->n].stream = stream;
	sm->f[sm->n].type = type;
	sm->f[sm->n].flags = flags;
	sm->f[sm->n].len = len;
	/* An offset until sample_done(): buf still moves. */
	sm->data[sm->n] = (const uint8_t *)(uintptr_t)(sm->len +
	    TTRPC_HEADER_SIZE);
	sm->len += TTRPC_HEADER_SIZE + len;
	sm->n++;
}

static void
sample_done(struct sample *sm)
{
	size_t	i;

	for (i = 0; i < sm->n; i++)
		sm->data[i] = sm->buf + (uintptr_t)sm->data[i];
}

static void
sample_check(const struct sample *sm, const struct seen *s, const char *how)
{
	size_t	i;

	cr_assert_eq(s->n, sm->n, "%s: %zu frames, not %zu", how, s->n, sm->n);
	for (i = 0; i < sm->n; i++) {
		cr_assert_eq(s->f[i].stream, sm->f[i].stream, "%s", how);
		cr_assert_eq(s->f[i].type, sm->f[i].type, "%s", how);
		cr_assert_eq(s->f[i].flags, sm->f[i].flags, "%s", how);
		cr_assert_eq(s->f[i].len, sm->f[i].len, "%s", how);
		cr_assert_eq(s->f[i].oversize, 0, "%s", how);
		if (sm->f[i].len != 0)
			cr_assert_arr_eq(s->data[i], sm->data[i], sm->f[i].len,
			    "%s: frame %zu data", how, i);
	}
}

static void
sample_small(struct sample *sm)
{
	memset(sm, 0, sizeof *sm);
	sample_add(sm, 1, TTRPC_REQUEST, 0, 300, 1);
	sample_add(sm, 1, TTRPC_RESPONSE, 0, 0, 0);
	sample_add(sm, 3, 0x09, 0xff, 3, 2);
	sample_add(sm, 5, TTRPC_REQUEST, 0, 0, 0);
	sample_add(sm, 7, TTRPC_DATA, TTRPC_FLAG_REMOTE_CLOSED, 1, 3);
	sample_add(sm, 9, TTRPC_REQUEST, TTRPC_FLAG_REMOTE_OPEN, 2000, 4);
	sample_done(sm);
}

Test(ttrpc, split_at_every_boundary)
{
	struct sample		 sm;
	struct seen		 s = { 0 };
	struct ttrpc_reader	*r;
	size_t			 i;
	char			 how[64];

	sample_small(&sm);
	for (i = 0; i <= sm.len; i++) {
		r = ttrpc_reader_new(collect, &s);
		cr_assert_eq(ttrpc_reader_feed(r, sm.buf, i, NULL), 0);
		cr_assert_eq(ttrpc_reader_feed(r, sm.buf + i, sm.len - i, NULL),
		    0);
		cr_assert_eq(ttrpc_reader_pending(r), 0);
		snprintf(how, sizeof how, "split at %zu", i);
		sample_check(&sm, &s, how);
		ttrpc_reader_free(r);
		seen_clear(&s);
	}
	free(sm.buf);
}

Test(ttrpc, byte_at_a_time)
{
	struct sample		 sm;
	struct seen		 s = { 0 };
	struct ttrpc_reader	*r;
	size_t			 i;

	memset(&sm, 0, sizeof sm);
	sample_add(&sm, 1, TTRPC_REQUEST, 0, 100, 1);
	/* Bigger than the buffer a reader keeps between frames. */
	sample_add(&sm, 3, TTRPC_REQUEST, 0, 70000, 2);
	sample_add(&sm, 5, TTRPC_REQUEST, 0, 0, 0);
	sample_add(&sm, 7, TTRPC_REQUEST, 0, 5, 3);
	sample_done(&sm);
	r = ttrpc_reader_new(collect, &s);
	for (i = 0; i < sm.len; i++) {
		cr_assert_eq(ttrpc_reader_feed(r, sm.buf + i, 1, NULL), 0);
		if (i == 5)
			cr_assert_eq(ttrpc_reader_pending(r), 6);
	}
	sample_check(&sm, &s, "byte at a time");
	ttrpc_reader_free(r);
	seen_clear(&s);
	free(sm.buf);
}

/* AddressSanitizer reads a byte of shadow for every 8 it copies: 3 MiB
 * copied read 96 pages of it, each a fault of its own. */
#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_PAGES	96
#else
#define SHADOW_PAGES	0
#endif

/* The frame delivered, compared where it is: a copy would fault. */
struct large {
	const struct sample	*sm;
	int			 delivered, same;
};

static int
compare_large(const struct ttrpc_frame *f, void *arg)
{
	struct large	*l = arg;

	l->delivered++;
	l->same = f->len == l->sm->f[0].len && f->data != NULL &&
	    memcmp(f->data, l->sm->data[0], f->len) == 0;
	return (0);
}

/*
 * A frame of megabytes arriving in pieces (a Synchronize): the pages of
 * its buffer are filled ahead of the bytes, not faulted one by one, and
 * no further than 256 KiB ahead of what arrived, whatever length the
 * peer's header claims.
 */
Test(ttrpc, large_frame_pages_filled_ahead)
{
	struct sample		 sm;
	struct large		 l = { &sm, 0, 0 };
	struct ttrpc_reader	*r;
	size_t			 off, n;
	long			 m0, filled, f0, faults;
	int			 fd, fills;

	memset(&sm, 0, sizeof sm);
	sample_add(&sm, 1, TTRPC_REQUEST, 0, 3U << 20, 4);
	sample_done(&sm);
	r = ttrpc_reader_new(compare_large, &l);
	fills = testlib_advice_taken(MADV_POPULATE_WRITE);
	fd = testlib_faults_open();
	/* The header and a byte: 256 KiB of pages filled (getrusage counts
	 * them), not the 3 MiB claimed (768 pages). The sanitizers' malloc
	 * takes some of its own. */
	m0 = testlib_minor_faults();
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf, TTRPC_HEADER_SIZE + 1,
	    NULL), 0);
	filled = testlib_minor_faults() - m0;
	if (!fills)
		cr_log_info("this kernel fills no range on request: the "
		    "pages are not checked");
	else
		cr_assert(filled >= 48 && filled < 256, "%ld pages filled "
		    "for a byte", filled);
	f0 = fd >= 0 ? testlib_faults(fd) : 0;
	for (off = TTRPC_HEADER_SIZE + 1; off < sm.len; off += n) {
		n = sm.len - off < 16384 ? sm.len - off : 16384;
		cr_assert_eq(ttrpc_reader_feed(r, sm.buf + off, n, NULL), 0);
	}
	if (fd >= 0) {
		faults = testlib_faults(fd) - f0;
		if (fills)
			cr_assert_lt(faults, 32 + SHADOW_PAGES, "%ld page "
			    "faults for 3 MiB arriving", faults);
		close(fd);
	} else
		cr_log_info("no perf events here: the faults are not counted");
	cr_assert_eq(l.delivered, 1);
	cr_assert(l.same, "the frame's bytes differ");
	ttrpc_reader_free(r);
	free(sm.buf);
}

Test(ttrpc, truncated_frames)
{
	struct sample		 sm;
	struct seen		 s = { 0 };
	struct ttrpc_reader	*r;

	sample_small(&sm);
	/* Half a header. */
	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf, 5, NULL), 0);
	cr_assert_eq(s.n, 0);
	cr_assert_eq(ttrpc_reader_pending(r), 5);
	ttrpc_reader_free(r);

	/* A header and part of its 300 bytes of data. */
	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf, 10 + 299, NULL), 0);
	cr_assert_eq(s.n, 0, "no frame before its last byte");
	cr_assert_eq(ttrpc_reader_pending(r), 309);
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf + 309, 1, NULL), 0);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(ttrpc_reader_pending(r), 0);
	ttrpc_reader_free(r);
	seen_clear(&s);

	/* Everything but the last byte. */
	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf, sm.len - 1, NULL), 0);
	cr_assert_eq(s.n, sm.n - 1);
	cr_assert_eq(ttrpc_reader_pending(r), 10 + 2000 - 1);
	ttrpc_reader_free(r);
	seen_clear(&s);
	ttrpc_reader_free(NULL);
	free(sm.buf);
}

/*
 * Over 4 MiB of data: skipped as it comes, then reported so the server
 * can answer ResourceExhausted as upstream does; the next frame is intact.
 * Exactly 4 MiB is a normal frame.
 */
Test(ttrpc, oversized_length)
{
	struct seen		 s = { 0 };
	struct ttrpc_reader	*r;
	struct ttrpc_streams	 streams;
	uint8_t			*big, hdr[TTRPC_HEADER_SIZE];
	size_t			 off, n;
	int			 code;
	char			*why = NULL, *cause = NULL;
	Ttrpc__Request		*req;

	big = xcalloc(1, MIB4 + 1);
	r = ttrpc_reader_new(collect, &s);
	ttrpc_header_pack(hdr, MIB4 + 1, 5, TTRPC_REQUEST, 0);
	cr_assert_eq(ttrpc_reader_feed(r, hdr, sizeof hdr, NULL), 0);
	for (off = 0; off < MIB4 + 1; off += n) {
		n = MIB4 + 1 - off < 65536 ? MIB4 + 1 - off : 65536;
		cr_assert_eq(s.n, 0);
		cr_assert_eq(ttrpc_reader_pending(r), TTRPC_HEADER_SIZE + off);
		cr_assert_eq(ttrpc_reader_feed(r, big + off, n, NULL), 0);
	}
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.f[0].oversize, 1);
	cr_assert_eq(s.f[0].len, MIB4 + 1);
	cr_assert_eq(s.f[0].stream, 5);
	cr_assert_null(s.f[0].data);
	cr_assert_eq(ttrpc_reader_pending(r), 0);

	ttrpc_streams_init(&streams);
	cr_assert_eq(ttrpc_server_check(&streams, &s.f[0], &code, &why),
	    TTRPC_REJECT);
	cr_assert_eq(code, TTRPC_RESOURCE_EXHAUSTED);
	cr_assert_not_null(strstr(why, "4194304"), "%s", why);
	free(why);
	cr_assert_eq(ttrpc_request_unpack(&s.f[0], &req, &cause), -EMSGSIZE);
	cr_assert_not_null(cause);
	free(cause);

	/* The limit itself, then a small frame: both whole. */
	ttrpc_header_pack(hdr, MIB4, 7, TTRPC_REQUEST, 0);
	cr_assert_eq(ttrpc_reader_feed(r, hdr, sizeof hdr, NULL), 0);
	cr_assert_eq(ttrpc_reader_feed(r, big, MIB4, NULL), 0);
	ttrpc_header_pack(hdr, 0, 9, TTRPC_REQUEST, 0);
	cr_assert_eq(ttrpc_reader_feed(r, hdr, sizeof hdr, NULL), 0);
	cr_assert_eq(s.n, 3);
	cr_assert_eq(s.f[1].oversize, 0);
	cr_assert_eq(s.f[1].len, MIB4);
	cr_assert_eq(s.f[1].stream, 7);
	cr_assert_eq(s.f[2].len, 0);
	cr_assert_eq(s.f[2].stream, 9);
	ttrpc_reader_free(r);
	seen_clear(&s);
	free(big);
}

/* A length no peer can mean (reserved byte set) fails the stream. */
Test(ttrpc, garbage)
{
	static const char	 http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	static const uint8_t	 reserved[] = { 1, 0, 0, 0, 0, 0, 0, 1, 1, 0 };
	static const uint8_t	 under[] = { 0, 0xff, 0xff, 0xff, 0, 0, 0, 1,
	    1, 0 };
	struct seen		 s = { 0 };
	struct ttrpc_reader	*r;
	char			*cause = NULL;

	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, http, sizeof http - 1, &cause),
	    -EPROTO);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, "garbage"), "%s", cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(ttrpc_reader_feed(r, under, sizeof under, &cause), -EPROTO,
	    "a failed reader stays failed");
	free(cause);
	cr_assert_eq(ttrpc_reader_feed(r, under, sizeof under, NULL), -EPROTO);
	cr_assert_eq(s.n, 0);
	ttrpc_reader_free(r);

	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, reserved, sizeof reserved, NULL),
	    -EPROTO);
	ttrpc_reader_free(r);

	/* 16 MiB - 1 is still a length: oversize, skipped, not garbage. */
	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, under, sizeof under, NULL), 0);
	cr_assert_eq(ttrpc_reader_pending(r), TTRPC_HEADER_SIZE);
	ttrpc_reader_free(r);
	cr_assert_eq(s.n, 0);
}

/*
 * Unknown types and flags reach the caller as they came; the server
 * answers the way the Go server does (server.go): even ids and Data are
 * InvalidArgument, request ids must grow, Responses and unknown types
 * are dropped, request flags do not matter.
 */
Test(ttrpc, unknown_types_and_flags)
{
	struct sample		 sm;
	struct seen		 s = { 0 };
	struct ttrpc_streams	 st;
	struct ttrpc_frame	 f;
	Ttrpc__Request		*req;
	Ttrpc__Response		*resp;
	int			 code;
	char			*why, *cause;

	memset(&sm, 0, sizeof sm);
	sample_add(&sm, 1, 0x00, 0x00, 1, 1);
	sample_add(&sm, 3, 0x04, 0xff, 2, 2);
	sample_add(&sm, 5, 0xff, 0x80, 0, 0);
	sample_done(&sm);
	read_all(sm.buf, sm.len, &s);
	sample_check(&sm, &s, "unknown types");
	seen_clear(&s);
	free(sm.buf);

	ttrpc_streams_init(&st);
	memset(&f, 0, sizeof f);
#define CHECK(stream_, type_, flags_, want, wcode) do {			\
	f.stream = (stream_);						\
	f.type = (type_);						\
	f.flags = (flags_);						\
	why = NULL;							\
	code = -1;							\
	cr_assert_eq(ttrpc_server_check(&st, &f, &code, &why), (want),	\
	    "stream %u type %u", f.stream, f.type);			\
	if ((want) == TTRPC_REJECT) {					\
		cr_assert_eq(code, (wcode));				\
		cr_assert_not_null(why);				\
	} else								\
		cr_assert_null(why);					\
	free(why);							\
} while (0)
	CHECK(1, 0x04, 0, TTRPC_IGNORE, 0);
	CHECK(1, 0xff, 0xff, TTRPC_IGNORE, 0);
	CHECK(1, TTRPC_RESPONSE, 0, TTRPC_IGNORE, 0);
	CHECK(2, 0x04, 0, TTRPC_REJECT, TTRPC_INVALID_ARGUMENT);
	CHECK(2, TTRPC_REQUEST, 0, TTRPC_REJECT, TTRPC_INVALID_ARGUMENT);
	CHECK(3, TTRPC_DATA, 0, TTRPC_REJECT, TTRPC_INVALID_ARGUMENT);
	CHECK(3, TTRPC_DATA, TTRPC_FLAG_NO_DATA, TTRPC_REJECT,
	    TTRPC_INVALID_ARGUMENT);
	CHECK(11, TTRPC_REQUEST, TTRPC_FLAG_REMOTE_OPEN, TTRPC_HANDLE, 0);
	CHECK(9, TTRPC_REQUEST, 0, TTRPC_REJECT, TTRPC_INVALID_ARGUMENT);
	CHECK(11, TTRPC_REQUEST, 0, TTRPC_REJECT, TTRPC_INVALID_ARGUMENT);
	CHECK(13, TTRPC_REQUEST, 0xff, TTRPC_HANDLE, 0);
	CHECK(0xffffffff, TTRPC_REQUEST, 0, TTRPC_HANDLE, 0);
	CHECK(0xffffffff, TTRPC_REQUEST, 0, TTRPC_REJECT,
	    TTRPC_INVALID_ARGUMENT);
#undef CHECK

	/* The envelope decoders want their own type. */
	f.stream = 1;
	f.type = TTRPC_DATA;
	f.data = NULL;
	f.len = 0;
	cause = NULL;
	cr_assert_eq(ttrpc_response_unpack(&f, &resp, &cause), -EPROTO);
	cr_assert_not_null(cause);
	free(cause);
	f.type = TTRPC_RESPONSE;
	cr_assert_eq(ttrpc_request_unpack(&f, &req, NULL), -EPROTO);
	/* An empty Request decodes: every field at its default. */
	f.type = TTRPC_REQUEST;
	cr_assert_eq(ttrpc_request_unpack(&f, &req, NULL), 0);
	cr_assert_str_eq(req->service, "");
	cr_assert_eq(req->payload.len, 0);
	ttrpc_request_free(req);
}

Test(ttrpc, stream_ids)
{
	struct ttrpc_streams	st;
	uint32_t		id;

	ttrpc_streams_init(&st);
	cr_assert_eq(ttrpc_streams_next(&st, &id), 0);
	cr_assert_eq(id, 1);
	cr_assert_eq(ttrpc_streams_next(&st, &id), 0);
	cr_assert_eq(id, 3);
	cr_assert_eq(ttrpc_streams_next(&st, &id), 0);
	cr_assert_eq(id, 5);

	st.next = 0xfffffffd;
	cr_assert_eq(ttrpc_streams_next(&st, &id), 0);
	cr_assert_eq(id, 0xfffffffd);
	cr_assert_eq(ttrpc_streams_next(&st, &id), 0);
	cr_assert_eq(id, 0xffffffff);
	id = 42;
	cr_assert_eq(ttrpc_streams_next(&st, &id), -EOVERFLOW);
	cr_assert_eq(ttrpc_streams_next(&st, &id), -EOVERFLOW);
	cr_assert_eq(id, 42, "no id handed out past the last");
}

Test(ttrpc, bad_payloads)
{
	/* Field 1, length-delimited, 5 bytes announced, 1 present. */
	static const uint8_t		 cut[] = { 0x0a, 0x05, 0x01 };
	struct ttrpc_frame		 f;
	Ttrpc__Request			*req;
	ProtobufCMessage		*m;
	ProtobufCBinaryData		 b;
	struct pbarena			*arena;
	uint8_t				*out;
	size_t				 len;
	char				*cause = NULL;
	struct seen			 s = { 0 };
	const struct ttrpc_frame	*g;

	memset(&f, 0, sizeof f);
	f.stream = 1;
	f.type = TTRPC_REQUEST;
	f.data = cut;
	f.len = sizeof cut;
	cr_assert_eq(ttrpc_request_unpack(&f, &req, &cause), -EBADMSG);
	cr_assert_not_null(cause);
	free(cause);
	cause = NULL;

	/* A good envelope around a payload that is not the message. */
	b.data = (uint8_t *)cut;
	b.len = sizeof cut;
	cr_assert_eq(ttrpc_payload_unpack(&NRI_DESC(create_container_request),
	    &b, &m, NULL, &cause), -EBADMSG);
	cr_assert_not_null(strstr(cause,
	    "nri.pkg.api.v1alpha1.CreateContainerRequest"), "%s", cause);
	free(cause);
	/* With an arena: none left to free. */
	arena = (struct pbarena *)&b;
	cr_assert_eq(ttrpc_payload_unpack(&NRI_DESC(create_container_request),
	    &b, &m, &arena, &cause), -EBADMSG);
	cr_assert_null(arena);
	free(cause);

	/* The framed form of the same, through the reader. */
	cr_assert_eq(ttrpc_frame_pack(3, TTRPC_REQUEST, 0, cut, sizeof cut,
	    &out, &len), 0);
	cr_assert_eq(len, TTRPC_HEADER_SIZE + sizeof cut);
	g = read_one(out, len, &s);
	free(out);
	cr_assert_eq(ttrpc_request_unpack(g, &req, NULL), -EBADMSG);
	seen_clear(&s);
}

/*
 * The 4 MiB limit counts the envelope. A response whose ConfigureRequest
 * payload has a config string of S bytes is 1 + 4 + (1 + 4 + S) bytes of
 * data (tags and 4-byte varint lengths between 2^21 and 2^28), so
 * S = 4194294 is exactly the limit and one more is too many.
 */
Test(ttrpc, oversized_pack)
{
	NRI(ConfigureRequest)	 c = NRI_INIT(CONFIGURE_REQUEST);
	char			*big;
	uint8_t			*out;
	size_t			 len;

	big = xmalloc(MIB4 + 2);
	memset(big, 'x', MIB4 + 1);
	big[4194294] = '\0';
	c.config = big;
	cr_assert_eq(ttrpc_response_pack(1, &c.base, &out, &len), 0);
	cr_assert_eq(len, TTRPC_HEADER_SIZE + MIB4);
	free(out);
	big[4194294] = 'x';
	big[4194295] = '\0';
	cr_assert_eq(ttrpc_response_pack(1, &c.base, &out, &len), -EMSGSIZE);
	cr_assert_eq(ttrpc_request_pack(1, "s", "m", &c.base, 0, &out, &len),
	    -EMSGSIZE);
	big[MIB4 + 1] = '\0';
	cr_assert_eq(ttrpc_request_pack(1, "s", "m", &c.base, 0, &out, &len),
	    -EMSGSIZE, "a payload over the limit by itself");
	cr_assert_eq(ttrpc_frame_pack(1, TTRPC_DATA, 0, big, MIB4 + 1, &out,
	    &len), -EMSGSIZE);
	cr_assert_eq(ttrpc_frame_pack(1, TTRPC_DATA, 0, big, MIB4, &out, &len),
	    0);
	cr_assert_eq(len, TTRPC_HEADER_SIZE + MIB4);
	free(out);
	free(big);
}

Test(ttrpc, callback_stops_reader)
{
	struct sample		 sm;
	struct seen		 s = { 0 };
	struct ttrpc_reader	*r;
	char			*cause = NULL;

	sample_small(&sm);
	s.stop_at = 2;
	r = ttrpc_reader_new(collect, &s);
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf, sm.len, NULL), -ECANCELED);
	cr_assert_eq(s.n, 2, "nothing after the frame that stopped it");
	cr_assert_eq(ttrpc_reader_feed(r, sm.buf, sm.len, &cause), -ECANCELED);
	cr_assert_not_null(cause);
	free(cause);
	cr_assert_eq(s.n, 2);
	ttrpc_reader_free(r);
	seen_clear(&s);
	free(sm.buf);
}

/* The generated code has the field numbers of protocols.md 2.5 and 2.6. */
static int
field(const ProtobufCMessageDescriptor *d, const char *name)
{
	const ProtobufCFieldDescriptor	*f;

	f = protobuf_c_message_descriptor_get_field_by_name(d, name);
	cr_assert_not_null(f, "%s has no field %s", d->name, name);
	return (f->id);
}

Test(proto, nri_field_numbers)
{
	cr_assert_eq(field(&NRI_DESC(configure_response), "events"), 2);
	cr_assert_null(protobuf_c_message_descriptor_get_field(
	    &NRI_DESC(configure_response), 1));
	cr_assert_eq(field(&NRI_DESC(register_plugin_request), "plugin_name"),
	    1);
	cr_assert_eq(field(&NRI_DESC(register_plugin_request), "plugin_idx"),
	    2);
	cr_assert_eq(field(&NRI_DESC(synchronize_request), "more"), 3);
	cr_assert_eq(field(&NRI_DESC(synchronize_response), "more"), 2);
	cr_assert_eq(field(&NRI_DESC(state_change_event), "container"), 3);
	cr_assert_eq(field(&NRI_DESC(update_container_request),
	    "linux_resources"), 3);
	cr_assert_eq(field(&NRI_DESC(update_pod_sandbox_request),
	    "overhead_linux_resources"), 2);
	cr_assert_eq(field(&NRI_DESC(container), "env"), 8);
	cr_assert_eq(field(&NRI_DESC(container), "linux"), 11);
	cr_assert_eq(field(&NRI_DESC(container), "CDI_devices"), 20);
	cr_assert_eq(field(&NRI_DESC(pod_sandbox), "linux"), 8);
	cr_assert_eq(field(&NRI_DESC(linux_container), "resources"), 3);
	cr_assert_eq(field(&NRI_DESC(linux_resources), "memory"), 1);
	cr_assert_eq(field(&NRI_DESC(linux_resources), "cpu"), 2);
	cr_assert_eq(field(&NRI_DESC(linux_resources), "unified"), 6);
	cr_assert_eq(field(&NRI_DESC(linux_cpu), "shares"), 1);
	cr_assert_eq(field(&NRI_DESC(linux_cpu), "cpus"), 6);
	cr_assert_eq(field(&NRI_DESC(linux_cpu), "mems"), 7);
	cr_assert_eq(field(&NRI_DESC(linux_memory), "limit"), 1);
	cr_assert_eq(field(&NRI_DESC(linux_memory), "use_hierarchy"), 8);
	cr_assert_null(protobuf_c_message_descriptor_get_field(
	    &NRI_DESC(container_adjustment), 1));
	cr_assert_eq(field(&NRI_DESC(container_adjustment), "linux"), 6);
	cr_assert_eq(field(&NRI_DESC(linux_container_adjustment),
	    "resources"), 2);
	cr_assert_eq(field(&NRI_DESC(linux_container_adjustment),
	    "memory_policy"), 12);
	cr_assert_eq(field(&NRI_DESC(container_update), "linux"), 2);
	cr_assert_eq(field(&NRI_DESC(container_update), "ignore_failure"), 3);
	cr_assert_eq(field(&NRI_DESC(linux_container_update), "resources"), 1);
	cr_assert_eq(field(&NRI_DESC(create_container_response), "adjust"), 1);
	cr_assert_eq(field(&NRI_DESC(create_container_response), "evict"), 3);
	cr_assert_eq(field(&NRI_DESC(optional_int64), "value"), 1);

	/* The wrappers are messages (2.6), not scalars with presence. */
	cr_assert_eq(protobuf_c_message_descriptor_get_field_by_name(
	    &NRI_DESC(linux_cpu), "quota")->type, PROTOBUF_C_TYPE_MESSAGE);

	/* Mask bit 1 << (event - 1) (2.5). */
	cr_assert_eq(NRI__PKG__API__V1ALPHA1__EVENT__CREATE_CONTAINER, 4);
	cr_assert_eq(NRI__PKG__API__V1ALPHA1__EVENT__REMOVE_CONTAINER, 11);
	cr_assert_eq(NRI__PKG__API__V1ALPHA1__EVENT__UPDATE_POD_SANDBOX, 12);
	cr_assert_eq(NRI__PKG__API__V1ALPHA1__EVENT__LAST, 15);
	cr_assert_eq((1 << (NRI__PKG__API__V1ALPHA1__EVENT__REMOVE_CONTAINER -
	    1)) * 2 - 1, 0x7ff);
}

Test(proto, services)
{
	static const char	*plugin[] = { "Configure", "Synchronize",
	    "Shutdown", "CreateContainer", "UpdateContainer", "StopContainer",
	    "StateChange", "UpdatePodSandbox", "RunPodSandbox",
	    "StopPodSandbox", "RemovePodSandbox", "PostCreateContainer",
	    "StartContainer", "PostStartContainer", "PostUpdateContainer",
	    "RemoveContainer" };
	const ProtobufCServiceDescriptor *d;
	const ProtobufCMethodDescriptor	*m;
	size_t				 i;

	d = &nri__pkg__api__v1alpha1__plugin__descriptor;
	cr_assert_str_eq(d->name, "nri.pkg.api.v1alpha1.Plugin");
	for (i = 0; i < sizeof plugin / sizeof plugin[0]; i++) {
		m = protobuf_c_service_descriptor_get_method_by_name(d,
		    plugin[i]);
		cr_assert_not_null(m, "Plugin has no %s", plugin[i]);
	}
	m = protobuf_c_service_descriptor_get_method_by_name(d, "StateChange");
	cr_assert_eq(m->input, &NRI_DESC(state_change_event));
	cr_assert_eq(m->output, &NRI_DESC(empty));

	d = &nri__pkg__api__v1alpha1__runtime__descriptor;
	cr_assert_str_eq(d->name, "nri.pkg.api.v1alpha1.Runtime");
	m = protobuf_c_service_descriptor_get_method_by_name(d,
	    "RegisterPlugin");
	cr_assert_not_null(m);
	cr_assert_eq(m->output, &NRI_DESC(empty));
	m = protobuf_c_service_descriptor_get_method_by_name(d,
	    "UpdateContainers");
	cr_assert_not_null(m);
	cr_assert_eq(m->input, &NRI_DESC(update_containers_request));

	cr_assert_eq(field(&ttrpc__request__descriptor, "timeout_nano"), 4);
	cr_assert_eq(field(&ttrpc__request__descriptor, "metadata"), 5);
	cr_assert_eq(field(&ttrpc__response__descriptor, "status"), 1);
	cr_assert_eq(field(&ttrpc__response__descriptor, "payload"), 2);
	cr_assert_eq(field(&ttrpc__status__descriptor, "details"), 3);
}

/*
 * Fuzz: streams of valid frames, some carrying real NRI requests, with
 * bytes flipped, cut short and fed in random pieces. The reader and the
 * decoders must never crash or leak (the sanitizer build checks), every
 * result must be one the API names, and an unmutated stream must read
 * back whole however it is cut.
 */
static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (*x);
}

struct fuzz {
	struct ttrpc_streams	 st;
	size_t			 frames;
};

static int
fuzz_frame(const struct ttrpc_frame *f, void *arg)
{
	static const ProtobufCMessageDescriptor	*descs[] = {
	    &NRI_DESC(create_container_request),
	    &NRI_DESC(synchronize_request),
	    &NRI_DESC(state_change_event),
	    &NRI_DESC(update_container_request),
	    &NRI_DESC(configure_request)
	};
	struct fuzz		*fz = arg;
	struct pbarena		*arena;
	Ttrpc__Request		*req;
	Ttrpc__Response		*resp;
	ProtobufCMessage	*m;
	size_t			 i;
	int			 code, rc;
	char			*why = NULL, *cause = NULL;

	fz->frames++;
	if (ttrpc_server_check(&fz->st, f, &code, &why) == TTRPC_REJECT) {
		cr_assert(code == TTRPC_INVALID_ARGUMENT ||
		    code == TTRPC_RESOURCE_EXHAUSTED);
		free(why);
	}
	rc = ttrpc_request_unpack(f, &req, &cause);
	cr_assert(rc == 0 || rc == -EPROTO || rc == -EMSGSIZE ||
	    rc == -EBADMSG, "request_unpack %d", rc);
	free(cause);
	cause = NULL;
	if (rc == 0) {
		for (i = 0; i < sizeof descs / sizeof descs[0]; i++) {
			if (ttrpc_payload_unpack(descs[i], &req->payload, &m,
			    &arena, &cause) == 0)
				pbarena_free(arena);
			free(cause);
			cause = NULL;
		}
		ttrpc_request_free(req);
	}
	rc = ttrpc_response_unpack(f, &resp, NULL);
	cr_assert(rc == 0 || rc == -EPROTO || rc == -EMSGSIZE ||
	    rc == -EBADMSG);
	if (rc == 0) {
		(void)ttrpc_response_code(resp);
		ttrpc__response__free_unpacked(resp, NULL);
	}
	return (0);
}

/* Append one plausible frame to buf. */
static void
fuzz_add(uint64_t *x, uint8_t **buf, size_t *len)
{
	NRI(PodSandbox)			pod = NRI_INIT(POD_SANDBOX);
	NRI(Container)			ctr = NRI_INIT(CONTAINER);
	NRI(LinuxContainer)		lc = NRI_INIT(LINUX_CONTAINER);
	NRI(LinuxResources)		res = NRI_INIT(LINUX_RESOURCES);
	NRI(LinuxCPU)			cpu = NRI_INIT(LINUX_CPU);
	NRI(CreateContainerRequest)	req = NRI_INIT(CREATE_CONTAINER_REQUEST);
	uint8_t				*out = NULL, junk[64];
	size_t				 n = 0, i;
	uint32_t			 stream = rnd(x) % 64;
	int				 rc = 0;

	pod.id = "p";
	ctr.id = "c";
	cpu.cpus = "0-3";
	res.cpu = &cpu;
	lc.resources = &res;
	ctr.linux = &lc;
	req.pod = &pod;
	req.container = &ctr;
	for (i = 0; i < sizeof junk; i++)
		junk[i] = rnd(x);
	switch (rnd(x) % 5) {
	case 0:
		rc = ttrpc_request_pack(stream, "nri.pkg.api.v1alpha1.Plugin",
		    "CreateContainer", &req.base, rnd(x), &out, &n);
		break;
	case 1:
		rc = ttrpc_response_pack(stream, &req.base, &out, &n);
		break;
	case 2:
		rc = ttrpc_error_pack(stream, rnd(x) % 20, "no", &out, &n);
		break;
	case 3:
		rc = ttrpc_frame_pack(stream, rnd(x) % 5, rnd(x),
		    junk, rnd(x) % sizeof junk, &out, &n);
		break;
	default:
		rc = ttrpc_request_pack(stream, "s", "m", NULL, 0, &out, &n);
		break;
	}
	cr_assert_eq(rc, 0);
	*buf = xreallocarray(*buf, *len + n, 1);
	memcpy(*buf + *len, out, n);
	*len += n;
	free(out);
}

Test(ttrpc, fuzz)
{
	uint64_t		 x = 0x9e3779b97f4a7c15ULL;
	struct fuzz		 fz;
	struct ttrpc_reader	*r;
	uint8_t			*buf;
	size_t			 len, off, n, k, frames, i, mutations;
	size_t			 total = 0;
	int			 rc, it;
	char			*cause;

	for (it = 0; it < 4000; it++) {
		buf = NULL;
		len = 0;
		frames = 1 + rnd(&x) % 6;
		for (i = 0; i < frames; i++)
			fuzz_add(&x, &buf, &len);
		mutations = it % 4 == 0 ? 0 : 1 + rnd(&x) % 4;
		for (i = 0; i < mutations; i++)
			buf[rnd(&x) % len] ^= 1 << (rnd(&x) % 8);
		if (mutations != 0 && rnd(&x) % 2)
			len -= rnd(&x) % len;

		memset(&fz, 0, sizeof fz);
		ttrpc_streams_init(&fz.st);
		r = ttrpc_reader_new(fuzz_frame, &fz);
		rc = 0;
		for (off = 0; off < len && rc == 0; off += n) {
			n = 1 + rnd(&x) % 97;
			if (n > len - off)
				n = len - off;
			cause = NULL;
			rc = ttrpc_reader_feed(r, buf + off, n, &cause);
			cr_assert(rc == 0 || rc == -EPROTO, "feed %d", rc);
			cr_assert((rc == 0) == (cause == NULL));
			free(cause);
		}
		if (mutations == 0) {
			cr_assert_eq(rc, 0);
			cr_assert_eq(fz.frames, frames);
			cr_assert_eq(ttrpc_reader_pending(r), 0);
		}
		k = ttrpc_reader_pending(r);
		cr_assert(k <= len);
		total += fz.frames;
		ttrpc_reader_free(r);
		free(buf);
	}
	/* The unmutated quarter alone delivers 1000 streams, none empty. */
	cr_assert_geq(total, 1000);
}

/*
 * A Request's payload is read where it is in the frame, not copied, and
 * the envelope reads as protobuf-c reads it whatever the fields' order:
 * the last payload counts, the fields around it are all there, and a
 * field cut short after the payload still refuses the whole.
 */
static void
request_as_protobuf_c(const uint8_t *buf, size_t len, int want_payload)
{
	struct ttrpc_frame	 f;
	Ttrpc__Request		*ours, *theirs;
	char			*cause = NULL;
	size_t			 i;

	memset(&f, 0, sizeof f);
	f.stream = 1;
	f.type = TTRPC_REQUEST;
	f.data = buf;
	f.len = len;
	theirs = ttrpc__request__unpack(NULL, len, buf);
	cr_assert_not_null(theirs);
	cr_assert_eq(ttrpc_request_unpack(&f, &ours, &cause), 0, "%s", cause);
	cr_assert_str_eq(ours->service, theirs->service);
	cr_assert_str_eq(ours->method, theirs->method);
	cr_assert_eq(ours->timeout_nano, theirs->timeout_nano);
	cr_assert_eq(ours->n_metadata, theirs->n_metadata);
	for (i = 0; i < ours->n_metadata; i++) {
		cr_assert_str_eq(ours->metadata[i]->key,
		    theirs->metadata[i]->key);
		cr_assert_str_eq(ours->metadata[i]->value,
		    theirs->metadata[i]->value);
	}
	cr_assert_eq(ours->payload.len, theirs->payload.len);
	if (want_payload) {
		cr_assert(ours->payload.data >= buf &&
		    ours->payload.data + ours->payload.len <= buf + len,
		    "the payload is read in the frame");
		cr_assert_eq(memcmp(ours->payload.data, theirs->payload.data,
		    ours->payload.len), 0);
	} else
		cr_assert_eq(ours->payload.len, 0);
	ttrpc_request_free(ours);
	ttrpc__request__free_unpacked(theirs, NULL);
}

Test(ttrpc, request_payload_in_place)
{
	/* service "s", method "m", payload "PAY", timeout 7, metadata
	 * {k: v}, in the usual order. */
	static const uint8_t in_order[] = {
		0x0a, 1, 's', 0x12, 1, 'm', 0x1a, 3, 'P', 'A', 'Y',
		0x20, 7, 0x2a, 6, 0x0a, 1, 'k', 0x12, 1, 'v' };
	/* The payload first, metadata before the method. */
	static const uint8_t payload_first[] = {
		0x1a, 3, 'P', 'A', 'Y', 0x2a, 6, 0x0a, 1, 'k', 0x12, 1, 'v',
		0x12, 1, 'm', 0x0a, 1, 's' };
	/* Two payloads: the second counts. */
	static const uint8_t twice[] = {
		0x1a, 2, 'A', 'B', 0x0a, 1, 's', 0x1a, 3, 'X', 'Y', 'Z',
		0x12, 1, 'm' };
	/* No payload; an unknown field 9 kept out of the way. */
	static const uint8_t none[] = {
		0x0a, 1, 's', 0x48, 5, 0x12, 1, 'm' };
	/* The method cut short after the payload. */
	static const uint8_t cut[] = {
		0x0a, 1, 's', 0x1a, 1, 'P', 0x12, 4, 'm' };
	/* A payload sent as a varint: protobuf-c refuses the type. */
	static const uint8_t wrong_type[] = { 0x0a, 1, 's', 0x18, 1 };
	struct ttrpc_frame	 f;
	Ttrpc__Request		*req;
	char			*cause = NULL;

	request_as_protobuf_c(in_order, sizeof in_order, 1);
	request_as_protobuf_c(payload_first, sizeof payload_first, 1);
	request_as_protobuf_c(twice, sizeof twice, 1);
	request_as_protobuf_c(none, sizeof none, 0);

	memset(&f, 0, sizeof f);
	f.stream = 5;
	f.type = TTRPC_REQUEST;
	f.data = twice;
	f.len = sizeof twice;
	cr_assert_eq(ttrpc_request_unpack(&f, &req, NULL), 0);
	cr_assert_eq(req->payload.len, 3);
	cr_assert_eq(req->payload.data, twice + 9);
	ttrpc_request_free(req);

	f.data = cut;
	f.len = sizeof cut;
	cr_assert_eq(ttrpc_request_unpack(&f, &req, &cause), -EBADMSG);
	cr_assert_not_null(strstr(cause, "stream 5"), "%s", cause);
	free(cause);
	f.data = wrong_type;
	f.len = sizeof wrong_type;
	cr_assert_eq(ttrpc__request__unpack(NULL, f.len, f.data), NULL);
	cr_assert_eq(ttrpc_request_unpack(&f, &req, NULL), -EBADMSG);
}

/* A frame of header and envelope as protobuf-c packs env whole. */
static void
assert_frame_is(const uint8_t *got, size_t glen, uint32_t stream,
    uint8_t type, const ProtobufCMessage *env)
{
	size_t	 n = protobuf_c_message_get_packed_size(env);
	uint8_t	*want = xmalloc(TTRPC_HEADER_SIZE + n + 1);

	ttrpc_header_pack(want, (uint32_t)n, stream, type, 0);
	cr_assert_eq(protobuf_c_message_pack(env, want + TTRPC_HEADER_SIZE),
	    n);
	cr_assert_eq(glen, TTRPC_HEADER_SIZE + n, "%zu bytes, not %zu", glen,
	    TTRPC_HEADER_SIZE + n);
	cr_assert_eq(memcmp(got, want, glen), 0, "the bytes differ");
	free(want);
}

/*
 * A frame whose payload is written in place, after the fact, is the
 * frame protobuf-c packs with the payload given: payloads whose length
 * takes one, two and three varint bytes, an empty one (left out), and
 * the fields around it.
 */
Test(ttrpc, payload_written_in_its_frame)
{
	static const size_t	 lens[] = { 0, 1, 127, 128, 16383, 16384,
	    300000 };
	static const int64_t	 timeouts[] = { 0, 1, -1, 2000000000LL };
	Ttrpc__Request		 req = TTRPC__REQUEST__INIT;
	Ttrpc__Response		 resp = TTRPC__RESPONSE__INIT;
	uint8_t			*payload, *f, *at;
	size_t			 i, k, flen;

	payload = xmalloc(300000);
	for (i = 0; i < 300000; i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		cr_assert_eq(ttrpc_response_frame(9, lens[i], &f, &flen, &at),
		    0);
		memcpy(at, payload, lens[i]);
		resp.payload.data = payload;
		resp.payload.len = lens[i];
		assert_frame_is(f, flen, 9, TTRPC_RESPONSE, &resp.base);
		free(f);
		for (k = 0; k < sizeof timeouts / sizeof timeouts[0]; k++) {
			req.service = (char *)(k == 2 ? "" :
			    "nri.pkg.api.v1alpha1.Runtime");
			req.method = (char *)"UpdateContainers";
			req.timeout_nano = timeouts[k];
			req.payload.data = payload;
			req.payload.len = lens[i];
			cr_assert_eq(ttrpc_request_frame(0x7fffffff,
			    req.service, req.method, lens[i], timeouts[k], &f,
			    &flen, &at), 0);
			memcpy(at, payload, lens[i]);
			assert_frame_is(f, flen, 0x7fffffff, TTRPC_REQUEST,
			    &req.base);
			free(f);
		}
	}
	cr_assert_eq(ttrpc_response_frame(1, TTRPC_MAX_DATA + 1, &f, &flen,
	    &at), -EMSGSIZE);
	free(payload);
}
