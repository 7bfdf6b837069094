/*
 * pbpick.c: protobuf-c unpacks every field of a message into structures
 * of its own, four times the bytes; a Synchronize of a thousand
 * containers is some 350 KB of which the daemon reads a few dozen fields
 * a container. Here the whole message is walked once, each field checked
 * by the rules protobuf-c unpacks it by (protobuf-c.c, parse_member and
 * what it calls), and only the picked fields are made into protobuf-c's
 * own structures, so that the code reading them is the code that reads a
 * message protobuf-c unpacked.
 *
 * Where the bytes go beyond what a runtime's encoder writes, this does
 * not try to be protobuf-c: it answers PBPICK_FALLBACK and protobuf-c
 * unpacks them, accepting or refusing as it always did. So a string with
 * a NUL byte (the daemon reads it as '?' and says where), a picked
 * message given twice (protobuf-c merges the two by rules of its own), a
 * tag past 32 bits (protobuf-c cuts it short) and anything protobuf-c
 * refuses all go that way. The differential test and fuzzer hold the two
 * to the same values.
 */
#include "autoconf.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pbcheck.h"
#include "pbpick.h"
#include "xmalloc.h"

#define MAX_ID		4096	/* field numbers past this: no plan */
#define MAX_TYPES	512
#define MAX_REPEATED	16	/* picked repeated fields of one type */

/* picked[]: 0 not picked, SINGULAR, or REPEATED + the field's slot. */
#define SINGULAR	1
#define REPEATED	2

struct ptype {
	const ProtobufCMessageDescriptor	 *d;
	uint32_t				  maxid;
	const ProtobufCFieldDescriptor		**byid;		/* [maxid + 1] */
	int					 *sub;		/* its type */
	uint8_t					 *picked;
	int					  nrep;	/* picked repeated */
};

struct pbpick {
	struct ptype	*t;
	int		 n;
};

static int
type_index(struct pbpick *pk, const ProtobufCMessageDescriptor *d)
{
	int	i;

	for (i = 0; i < pk->n; i++)
		if (pk->t[i].d == d)
			return (i);
	return (-1);
}

/* The type d, added (with the types its fields hold, later) unless
 * there; -1 past the limits. */
static int
type_add(struct pbpick *pk, const ProtobufCMessageDescriptor *d)
{
	struct ptype	*t;
	unsigned	 i;
	int		 k;

	if ((k = type_index(pk, d)) >= 0)
		return (k);
	if (pk->n == MAX_TYPES)
		return (-1);
	t = &pk->t[pk->n];
	memset(t, 0, sizeof *t);
	t->d = d;
	for (i = 0; i < d->n_fields; i++) {
		if (d->fields[i].id > MAX_ID)
			return (-1);
		if (d->fields[i].id > t->maxid)
			t->maxid = d->fields[i].id;
	}
	t->byid = xcalloc((size_t)t->maxid + 1, sizeof *t->byid);
	t->sub = xcalloc((size_t)t->maxid + 1, sizeof *t->sub);
	t->picked = xcalloc((size_t)t->maxid + 1, sizeof *t->picked);
	for (i = 0; i < d->n_fields; i++) {
		t->byid[d->fields[i].id] = &d->fields[i];
		t->sub[d->fields[i].id] = -1;
	}
	return (pk->n++);
}

/* What a pick may be: what pbpick_unpack knows how to set. */
static int
pickable(const ProtobufCFieldDescriptor *fd)
{
	if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return (0);
	switch (fd->type) {
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return (1);
	case PROTOBUF_C_TYPE_ENUM:
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL:
		return (fd->label != PROTOBUF_C_LABEL_REPEATED);
	default:
		return (0);
	}
}

struct pbpick *
pbpick_new(const ProtobufCMessageDescriptor *root,
    const struct pbpick_field *picks, size_t n)
{
	struct pbpick			*pk;
	const ProtobufCFieldDescriptor	*fd;
	struct ptype			*t;
	unsigned			 f;
	size_t				 i;
	int				 k, s;

	pk = xcalloc(1, sizeof *pk);
	pk->t = xcalloc(MAX_TYPES, sizeof *pk->t);
	if (type_add(pk, root) < 0)
		goto bad;
	/* Breadth first: pk->n grows as types are found. */
	for (k = 0; k < pk->n; k++) {
		for (f = 0; f < pk->t[k].d->n_fields; f++) {
			fd = &pk->t[k].d->fields[f];
			if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
				continue;
			if ((s = type_add(pk, fd->descriptor)) < 0)
				goto bad;
			pk->t[k].sub[fd->id] = s;
		}
	}
	for (i = 0; i < n; i++) {
		if ((k = type_index(pk, picks[i].desc)) < 0)
			goto bad;
		t = &pk->t[k];
		if (picks[i].id > t->maxid ||
		    (fd = t->byid[picks[i].id]) == NULL || !pickable(fd))
			goto bad;
		if (fd->label != PROTOBUF_C_LABEL_REPEATED)
			t->picked[fd->id] = SINGULAR;
		else if (t->picked[fd->id] == 0) {
			if (t->nrep == MAX_REPEATED)
				goto bad;
			t->picked[fd->id] = (uint8_t)(REPEATED + t->nrep++);
		}
	}
	return (pk);
bad:
	pbpick_free(pk);
	return (NULL);
}

void
pbpick_free(struct pbpick *pk)
{
	int	i;

	if (pk == NULL)
		return;
	for (i = 0; i < pk->n; i++) {
		free(pk->t[i].byid);
		free(pk->t[i].sub);
		free(pk->t[i].picked);
	}
	free(pk->t);
	free(pk);
}

/* One unpacking. */
struct run {
	const struct pbpick	*pk;
	ProtobufCAllocator	*al;
	const char		*why;
};

static int
fallback(struct run *r, const char *why)
{
	if (r->why == NULL)
		r->why = why;
	return (PBPICK_FALLBACK);
}

static void *
alloc(struct run *r, size_t n)
{
	return (r->al->alloc(r->al->allocator_data, n));
}

/* A field as read: its number, wire type and bytes (for a varint its
 * own, for a length-prefixed field those after the prefix). */
struct wfield {
	uint32_t	 num;
	unsigned	 wire;
	const uint8_t	*data;
	size_t		 len;
};

/*
 * The field at *off, framed as protobuf-c frames it but for the tag,
 * which is taken only as the encoders write it: at most five bytes, at
 * most 32 bits, a number from 1 (protobuf-c cuts a longer one short).
 * -1 when the bytes are not that.
 */
static int
next_field(const uint8_t *p, size_t len, size_t *off, struct wfield *w)
{
	size_t		i = *off, n, max, hdr;
	uint64_t	key, v;
	unsigned	shift;

	if (p[i] >= 8 && p[i] < 0x80)
		key = p[i++];	/* the common tag, one byte */
	else {
		max = len - i < 5 ? len - i : 5;
		for (n = 0, shift = 0, key = 0; n < max; n++, shift += 7) {
			key |= (uint64_t)(p[i + n] & 0x7f) << shift;
			if ((p[i + n] & 0x80) == 0)
				break;
		}
		if (n == max || (p[i] & 0xf8) == 0 || key > UINT32_MAX ||
		    (key >> 3) == 0)
			return (-1);
		i += n + 1;
	}
	w->num = (uint32_t)(key >> 3);
	w->wire = (unsigned)(key & 7);
	w->data = p + i;
	switch (w->wire) {
	case PBWIRE_VARINT:
		max = len - i < 10 ? len - i : 10;
		for (n = 0; n < max; n++)
			if ((p[i + n] & 0x80) == 0)
				break;
		if (n == max)
			return (-1);
		w->len = n + 1;
		break;
	case PBWIRE_64BIT:
		if (len - i < 8)
			return (-1);
		w->len = 8;
		break;
	case PBWIRE_32BIT:
		if (len - i < 4)
			return (-1);
		w->len = 4;
		break;
	case PBWIRE_LEN:
		if (i < len && p[i] < 0x80) {
			v = p[i];	/* the common length, one byte */
			hdr = 1;
		} else {
			max = len - i < 5 ? len - i : 5;
			for (n = 0, shift = 0, v = 0; n < max;
			    n++, shift += 7) {
				v |= (uint64_t)(p[i + n] & 0x7f) << shift;
				if ((p[i + n] & 0x80) == 0)
					break;
			}
			if (n == max || v > INT_MAX)
				return (-1);
			hdr = n + 1;
		}
		if (v > len - i - hdr)
			return (-1);
		w->data = p + i + hdr;
		w->len = (size_t)v;
		i += hdr;
		break;
	default:
		return (-1);
	}
	*off = i + w->len;
	return (0);
}

/* protobuf-c's readings of a varint of len bytes. */
static uint32_t
varint32(const uint8_t *p, size_t len)
{
	uint32_t	v = p[0] & 0x7f;

	if (len > 1)
		v |= (uint32_t)(p[1] & 0x7f) << 7;
	if (len > 2)
		v |= (uint32_t)(p[2] & 0x7f) << 14;
	if (len > 3)
		v |= (uint32_t)(p[3] & 0x7f) << 21;
	if (len > 4)
		v |= (uint32_t)p[4] << 28;
	return (v);
}

static uint64_t
varint64(const uint8_t *p, size_t len)
{
	uint64_t	v = 0;
	size_t		i;

	if (len < 5)
		return (varint32(p, len));
	for (i = 0; i < len; i++)
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
	return (v);
}

static int
varint_true(const uint8_t *p, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (p[i] & 0x7f)
			return (1);
	return (0);
}

/* A packed array of a scalar type, as protobuf-c takes it. */
static int
packed_ok(ProtobufCType type, const uint8_t *p, size_t len)
{
	size_t	i, n;

	switch (type) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return (len % 4 == 0);
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return (len % 8 == 0);
	default:
		/* Varints each ending within ten bytes. */
		for (i = 0, n = 0; i < len; i++) {
			if (++n > 10)
				return (0);
			if ((p[i] & 0x80) == 0)
				n = 0;
		}
		return (n == 0);
	}
}

/* The wire type protobuf-c takes a single value of type in; -1: any. */
static int
wire_of(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return (PBWIRE_32BIT);
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return (PBWIRE_64BIT);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return (PBWIRE_LEN);
	case PROTOBUF_C_TYPE_BOOL:
		return (-1);
	default:
		return (PBWIRE_VARINT);
	}
}

static int	walk(struct run *, int, const uint8_t *, size_t, int,
		    ProtobufCMessage *);

/* A string of the message's, copied and terminated. */
static char *
string_of(struct run *r, const struct wfield *w)
{
	char	*s = alloc(r, w->len + 1);

	memcpy(s, w->data, w->len);
	s[w->len] = '\0';
	return (s);
}

/* A picked field of m set from w, as protobuf-c sets it; cap, the room
 * in its array when repeated (NULL when not). */
static int
set(struct run *r, int sub, const ProtobufCFieldDescriptor *fd,
    const struct wfield *w, int depth, ProtobufCMessage *m, size_t *cap)
{
	void			*member = (char *)m + fd->offset;
	void			**grown;
	size_t			*np;
	ProtobufCMessage	*sm;
	int			 rc;

	if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
		/* An array of pointers, twice as long when full: the arena
		 * keeps the shorter ones, a few pointers a message. */
		np = (size_t *)(void *)((char *)m + fd->quantifier_offset);
		if (*np == *cap) {
			*cap = *cap > 0 ? 2 * *cap : 4;
			grown = alloc(r, *cap * sizeof *grown);
			if (*np > 0)
				memcpy(grown, *(void **)member,
				    *np * sizeof *grown);
			*(void ***)member = grown;
		}
		if (fd->type == PROTOBUF_C_TYPE_STRING) {
			(*(char ***)member)[(*np)++] = string_of(r, w);
			return (0);
		}
		sm = alloc(r, ((const ProtobufCMessageDescriptor *)
		    fd->descriptor)->sizeof_message);
		protobuf_c_message_init(fd->descriptor, sm);
		if ((rc = walk(r, sub, w->data, w->len, depth + 1, sm)) != 0)
			return (rc);
		(*(ProtobufCMessage ***)member)[(*np)++] = sm;
		return (0);
	}
	if (fd->label == PROTOBUF_C_LABEL_OPTIONAL && fd->quantifier_offset)
		*(protobuf_c_boolean *)(void *)((char *)m +
		    fd->quantifier_offset) = 1;
	switch (fd->type) {
	case PROTOBUF_C_TYPE_STRING:
		*(char **)member = string_of(r, w);
		return (0);
	case PROTOBUF_C_TYPE_MESSAGE:
		if (*(ProtobufCMessage **)member != NULL)
			return (fallback(r, "a picked message given twice"));
		sm = alloc(r, ((const ProtobufCMessageDescriptor *)
		    fd->descriptor)->sizeof_message);
		protobuf_c_message_init(fd->descriptor, sm);
		*(ProtobufCMessage **)member = sm;
		return (walk(r, sub, w->data, w->len, depth + 1, sm));
	case PROTOBUF_C_TYPE_BOOL:
		if (w->wire != PBWIRE_VARINT)
			return (fallback(r, "a boolean not given as a varint"));
		*(protobuf_c_boolean *)member = varint_true(w->data, w->len);
		return (0);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
		*(uint64_t *)member = varint64(w->data, w->len);
		return (0);
	default:	/* enum, int32, uint32 */
		*(uint32_t *)member = varint32(w->data, w->len);
		return (0);
	}
}

/*
 * The len bytes at p, a message of type ti, checked whole; with m, its
 * picked fields set in m.
 */
static int
walk(struct run *r, int ti, const uint8_t *p, size_t len, int depth,
    ProtobufCMessage *m)
{
	const struct ptype		*t = &r->pk->t[ti];
	const ProtobufCFieldDescriptor	*fd;
	struct wfield			 w;
	size_t				 off = 0, cap[MAX_REPEATED];
	int				 rc, want, pick;

	if (depth > PBCHECK_MAX_DEPTH)
		return (fallback(r, "messages nested too deep"));
	if (m != NULL)
		memset(cap, 0, sizeof cap);
	while (off < len) {
		if (next_field(p, len, &off, &w) != 0)
			return (fallback(r, "not protobuf wire format"));
		if (w.num > t->maxid || (fd = t->byid[w.num]) == NULL)
			continue;	/* unknown: kept by protobuf-c, no more */
		pick = m != NULL && t->picked[w.num] != 0;
		if (fd->label == PROTOBUF_C_LABEL_REPEATED &&
		    w.wire == PBWIRE_LEN &&
		    wire_of(fd->type) != PBWIRE_LEN) {
			/* A packed array (never picked). */
			if (!packed_ok(fd->type, w.data, w.len))
				return (fallback(r, "a bad packed array"));
			continue;
		}
		want = wire_of(fd->type);
		if (want >= 0 && (unsigned)want != w.wire)
			return (fallback(r, "a field of the wrong wire type"));
		if (fd->type == PROTOBUF_C_TYPE_STRING &&
		    memchr(w.data, '\0', w.len) != NULL)
			return (fallback(r, "a NUL byte in a string"));
		if (pick)
			rc = set(r, t->sub[w.num], fd, &w, depth, m,
			    t->picked[w.num] >= REPEATED ?
			    &cap[t->picked[w.num] - REPEATED] : NULL);
		else if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
			rc = walk(r, t->sub[w.num], w.data, w.len, depth + 1,
			    NULL);
		else
			rc = 0;
		if (rc != 0)
			return (rc);
	}
	return (0);
}

int
pbpick_unpack(const struct pbpick *pk, const uint8_t *buf, size_t len,
    struct pbarena *a, ProtobufCMessage **msg, const char **why)
{
	struct run		 r;
	ProtobufCMessage	*m;
	int			 rc;

	r.pk = pk;
	r.al = pbarena_allocator(a);
	r.why = NULL;
	m = alloc(&r, pk->t[0].d->sizeof_message);
	protobuf_c_message_init(pk->t[0].d, m);
	if ((rc = walk(&r, 0, buf, len, 0, m)) != 0) {
		*msg = NULL;
		if (why != NULL)
			*why = r.why;
		return (rc);
	}
	*msg = m;
	if (why != NULL)
		*why = NULL;
	return (0);
}

static int	same(const struct pbpick *, int, const ProtobufCMessage *,
		    const ProtobufCMessage *);

/* One picked field's value in a and b. */
static int
same_value(const struct pbpick *pk, int sub, ProtobufCType type,
    const void *a, const void *b)
{
	switch (type) {
	case PROTOBUF_C_TYPE_STRING:
		return (strcmp(*(char *const *)a, *(char *const *)b) == 0);
	case PROTOBUF_C_TYPE_MESSAGE:
		return (same(pk, sub, *(ProtobufCMessage *const *)a,
		    *(ProtobufCMessage *const *)b));
	case PROTOBUF_C_TYPE_BOOL:
		return (*(const protobuf_c_boolean *)a ==
		    *(const protobuf_c_boolean *)b);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
		return (*(const uint64_t *)a == *(const uint64_t *)b);
	default:
		return (*(const uint32_t *)a == *(const uint32_t *)b);
	}
}

static int
same(const struct pbpick *pk, int ti, const ProtobufCMessage *a,
    const ProtobufCMessage *b)
{
	const struct ptype		*t = &pk->t[ti];
	const ProtobufCFieldDescriptor	*fd;
	const char			*pa, *pb;
	void *const			*va, *const *vb;
	size_t				 na, nb, i;
	uint32_t			 id;

	if (a == NULL || b == NULL)
		return (a == b);
	for (id = 1; id <= t->maxid; id++) {
		if (t->picked[id] == 0)
			continue;
		fd = t->byid[id];
		pa = (const char *)a + fd->offset;
		pb = (const char *)b + fd->offset;
		if (fd->label != PROTOBUF_C_LABEL_REPEATED) {
			if (!same_value(pk, t->sub[id], fd->type, pa, pb))
				return (0);
			continue;
		}
		na = *(const size_t *)(const void *)((const char *)a +
		    fd->quantifier_offset);
		nb = *(const size_t *)(const void *)((const char *)b +
		    fd->quantifier_offset);
		if (na != nb)
			return (0);
		va = *(void *const *const *)(const void *)pa;
		vb = *(void *const *const *)(const void *)pb;
		for (i = 0; i < na; i++)
			if (!same_value(pk, t->sub[id], fd->type, &va[i],
			    &vb[i]))
				return (0);
	}
	return (1);
}

int
pbpick_same(const struct pbpick *pk, const ProtobufCMessage *a,
    const ProtobufCMessage *b)
{
	return (same(pk, 0, a, b));
}
