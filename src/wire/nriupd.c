/*
 * nriupd.c encodes the ContainerUpdate entries of an UpdateContainersRequest
 * by hand: container_id (1), linux (2) with resources (1) with cpu (2)
 * holding shares (1, OptionalUInt64), cpus (6) and mems (7); and
 * ignore_failure (3). Fields go in field-number order, and proto3's
 * defaults (an empty string, a zero, false) are left out, as protobuf-c
 * does, so the bytes are its. An update that sets any other field is
 * packed by protobuf-c whole.
 */
#include "autoconf.h"

#include <string.h>

#include "nriupd.h"
#include "pbcheck.h"

#define NRI(x)	Nri__Pkg__Api__V1alpha1__##x

/* A tag: field number and wire type. */
#define TAG(n, t)	((uint8_t)((n) << 3 | (t)))

/* A length-delimited field of body bytes, whole. */
static size_t
field_size(size_t body)
{
	return (1 + pbwire_varint_size(body) + body);
}

/* Whether only the fields known here are set. */
static int
known(const NRI(ContainerUpdate) *u)
{
	const NRI(LinuxResources)	*r;
	const NRI(LinuxCPU)		*c;

	if (u->base.n_unknown_fields != 0)
		return (0);
	if (u->linux == NULL)
		return (1);
	if (u->linux->base.n_unknown_fields != 0)
		return (0);
	if ((r = u->linux->resources) == NULL)
		return (1);
	if (r->base.n_unknown_fields != 0 || r->memory != NULL ||
	    r->n_hugepage_limits != 0 || r->blockio_class != NULL ||
	    r->rdt_class != NULL || r->n_unified != 0 || r->n_devices != 0 ||
	    r->pids != NULL)
		return (0);
	if ((c = r->cpu) == NULL)
		return (1);
	return (c->base.n_unknown_fields == 0 && c->quota == NULL &&
	    c->period == NULL && c->realtime_runtime == NULL &&
	    c->realtime_period == NULL &&
	    (c->shares == NULL || c->shares->base.n_unknown_fields == 0));
}

/* The bodies of the nested messages, innermost first. */
struct sizes {
	size_t	shares, cpu, res, lin, upd;
};

static size_t
text_size(size_t len)
{
	return (len != 0 ? field_size(len) : 0);
}

static void
sizes_of(const struct nriupd_cpu *f, struct sizes *z)
{
	memset(z, 0, sizeof *z);
	if (f->depth >= NRIUPD_CPU) {
		if (f->has_shares) {
			if (f->shares != 0)
				z->shares = 1 + pbwire_varint_size(f->shares);
			z->cpu += field_size(z->shares);
		}
		z->cpu += text_size(f->cpuslen) + text_size(f->memslen);
		z->res = field_size(z->cpu);
	}
	if (f->depth >= NRIUPD_RESOURCES)
		z->lin = field_size(z->res);
	z->upd = text_size(f->idlen);
	if (f->depth >= NRIUPD_LINUX)
		z->upd += field_size(z->lin);
	if (f->ignore_failure)
		z->upd += 2;
}

static uint8_t *
text_put(int field, const char *s, size_t len, uint8_t *p)
{
	if (len == 0)
		return (p);
	*p++ = TAG(field, PBWIRE_LEN);
	p = pbwire_varint_put(len, p);
	memcpy(p, s, len);
	return (p + len);
}

size_t
nriupd_cpu_size(const struct nriupd_cpu *f)
{
	struct sizes	z;

	sizes_of(f, &z);
	return (field_size(z.upd));
}

uint8_t *
nriupd_cpu_put(const struct nriupd_cpu *f, int field, uint8_t *p)
{
	struct sizes	z;

	sizes_of(f, &z);
	*p++ = TAG(field & 15, PBWIRE_LEN);
	p = pbwire_varint_put(z.upd, p);
	p = text_put(1, f->id, f->idlen, p);
	if (f->depth >= NRIUPD_LINUX) {
		*p++ = TAG(2, PBWIRE_LEN);
		p = pbwire_varint_put(z.lin, p);
	}
	if (f->depth >= NRIUPD_RESOURCES) {
		*p++ = TAG(1, PBWIRE_LEN);
		p = pbwire_varint_put(z.res, p);
	}
	if (f->depth >= NRIUPD_CPU) {
		*p++ = TAG(2, PBWIRE_LEN);
		p = pbwire_varint_put(z.cpu, p);
		if (f->has_shares) {
			*p++ = TAG(1, PBWIRE_LEN);
			p = pbwire_varint_put(z.shares, p);
			if (f->shares != 0) {
				*p++ = TAG(1, PBWIRE_VARINT);
				p = pbwire_varint_put(f->shares, p);
			}
		}
		p = text_put(6, f->cpus, f->cpuslen, p);
		p = text_put(7, f->mems, f->memslen, p);
	}
	if (f->ignore_failure) {
		*p++ = TAG(3, PBWIRE_VARINT);
		*p++ = 1;
	}
	return (p);
}

static size_t
text_len(const char *s)
{
	return (s != NULL ? strlen(s) : 0);
}

/* u, whose fields are all known (known()), as the encoder's fields. */
static void
flatten(const NRI(ContainerUpdate) *u, struct nriupd_cpu *f)
{
	const NRI(LinuxResources)	*r;
	const NRI(LinuxCPU)		*c;

	memset(f, 0, sizeof *f);
	f->id = u->container_id;
	f->idlen = text_len(u->container_id);
	f->ignore_failure = u->ignore_failure != 0;
	if (u->linux == NULL)
		return;
	f->depth = NRIUPD_LINUX;
	if ((r = u->linux->resources) == NULL)
		return;
	f->depth = NRIUPD_RESOURCES;
	if ((c = r->cpu) == NULL)
		return;
	f->depth = NRIUPD_CPU;
	f->cpus = c->cpus;
	f->cpuslen = text_len(c->cpus);
	f->mems = c->mems;
	f->memslen = text_len(c->mems);
	if (c->shares != NULL) {
		f->has_shares = 1;
		f->shares = c->shares->value;
	}
}

size_t
nriupd_size(const NRI(ContainerUpdate) *u)
{
	struct nriupd_cpu	f;

	if (!known(u))
		return (field_size(protobuf_c_message_get_packed_size(
		    &u->base)));
	flatten(u, &f);
	return (nriupd_cpu_size(&f));
}

uint8_t *
nriupd_put(const NRI(ContainerUpdate) *u, int field, uint8_t *p)
{
	struct nriupd_cpu	f;
	size_t			n;

	if (!known(u)) {
		*p++ = TAG(field & 15, PBWIRE_LEN);
		n = protobuf_c_message_get_packed_size(&u->base);
		p = pbwire_varint_put(n, p);
		return (p + protobuf_c_message_pack(&u->base, p));
	}
	flatten(u, &f);
	return (nriupd_cpu_put(&f, field, p));
}
