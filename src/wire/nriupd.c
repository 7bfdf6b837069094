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

static size_t
str_size(const char *s)
{
	return (s != NULL && *s != '\0' ? field_size(strlen(s)) : 0);
}

static uint8_t *
str_put(int field, const char *s, uint8_t *p)
{
	size_t	len;

	if (s == NULL || *s == '\0')
		return (p);
	len = strlen(s);
	*p++ = TAG(field, PBWIRE_LEN);
	p = pbwire_varint_put(len, p);
	memcpy(p, s, len);
	return (p + len);
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

static void
sizes_of(const NRI(ContainerUpdate) *u, struct sizes *z)
{
	const NRI(LinuxResources)	*r;
	const NRI(LinuxCPU)		*c;

	memset(z, 0, sizeof *z);
	r = u->linux != NULL ? u->linux->resources : NULL;
	c = r != NULL ? r->cpu : NULL;
	if (c != NULL) {
		if (c->shares != NULL) {
			if (c->shares->value != 0)
				z->shares = 1 +
				    pbwire_varint_size(c->shares->value);
			z->cpu += field_size(z->shares);
		}
		z->cpu += str_size(c->cpus) + str_size(c->mems);
		z->res = field_size(z->cpu);
	}
	if (r != NULL)
		z->lin = field_size(z->res);
	z->upd = str_size(u->container_id);
	if (u->linux != NULL)
		z->upd += field_size(z->lin);
	if (u->ignore_failure)
		z->upd += 2;
}

size_t
nriupd_size(const NRI(ContainerUpdate) *u)
{
	struct sizes	z;

	if (!known(u))
		return (field_size(protobuf_c_message_get_packed_size(
		    &u->base)));
	sizes_of(u, &z);
	return (field_size(z.upd));
}

uint8_t *
nriupd_put(const NRI(ContainerUpdate) *u, int field, uint8_t *p)
{
	const NRI(LinuxResources)	*r;
	const NRI(LinuxCPU)		*c;
	struct sizes			 z;
	size_t				 n;

	*p++ = TAG(field & 15, PBWIRE_LEN);
	if (!known(u)) {
		n = protobuf_c_message_get_packed_size(&u->base);
		p = pbwire_varint_put(n, p);
		return (p + protobuf_c_message_pack(&u->base, p));
	}
	sizes_of(u, &z);
	p = pbwire_varint_put(z.upd, p);
	p = str_put(1, u->container_id, p);
	if (u->linux != NULL) {
		*p++ = TAG(2, PBWIRE_LEN);
		p = pbwire_varint_put(z.lin, p);
		if ((r = u->linux->resources) != NULL) {
			*p++ = TAG(1, PBWIRE_LEN);
			p = pbwire_varint_put(z.res, p);
			if ((c = r->cpu) != NULL) {
				*p++ = TAG(2, PBWIRE_LEN);
				p = pbwire_varint_put(z.cpu, p);
				if (c->shares != NULL) {
					*p++ = TAG(1, PBWIRE_LEN);
					p = pbwire_varint_put(z.shares, p);
					if (c->shares->value != 0) {
						*p++ = TAG(1, PBWIRE_VARINT);
						p = pbwire_varint_put(
						    c->shares->value, p);
					}
				}
				p = str_put(6, c->cpus, p);
				p = str_put(7, c->mems, p);
			}
		}
	}
	if (u->ignore_failure) {
		*p++ = TAG(3, PBWIRE_VARINT);
		*p++ = 1;
	}
	return (p);
}
