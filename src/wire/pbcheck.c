#include "autoconf.h"

/*
 * pbcheck.c walks protobuf wire bytes with a message descriptor as its
 * map: tags, varints and length-delimited fields, down into nested
 * messages, looking at the bytes of every string field. It decodes
 * nothing and allocates only for the text of an error. The rule is the
 * same for every message on every socket, so a new field is covered the
 * day it is added to a .proto file.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbcheck.h"
#include "xmalloc.h"

/* Reads a varint at *off; -1 when it runs past len or past 10 bytes. */
static int
get_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	unsigned	shift = 0;
	size_t		i;

	*v = 0;
	for (i = *off; i < len && shift < 64; i++, shift += 7) {
		*v |= (uint64_t)(p[i] & 0x7f) << shift;
		if ((p[i] & 0x80) == 0) {
			*off = i + 1;
			return (0);
		}
	}
	return (-1);
}

int
pbwire_next_field(const uint8_t *p, size_t len, size_t *off, uint32_t *num,
    unsigned *type, size_t *start, size_t *n)
{
	uint64_t	key, v;

	if (get_varint(p, len, off, &key) != 0 || key > UINT32_MAX ||
	    (key >> 3) == 0)
		return (-1);
	*num = (uint32_t)(key >> 3);
	*type = (unsigned)(key & 7);
	switch (*type) {
	case PBWIRE_VARINT:
		return (get_varint(p, len, off, &v));
	case PBWIRE_64BIT:
		if (len - *off < 8)
			return (-1);
		*off += 8;
		return (0);
	case PBWIRE_32BIT:
		if (len - *off < 4)
			return (-1);
		*off += 4;
		return (0);
	case PBWIRE_LEN:
		if (get_varint(p, len, off, &v) != 0 || v > len - *off)
			return (-1);
		*start = *off;
		*n = (size_t)v;
		*off += *n;
		return (0);
	default:
		/* Groups (3, 4) and 6, 7: protobuf-c refuses them too. */
		return (-1);
	}
}

/* The field's name, with its index among the earlier ones of its number
 * when it is repeated. */
static char *
field_label(const ProtobufCFieldDescriptor *fd, const uint8_t *p, size_t at)
{
	size_t		off = 0, start, n, i = 0;
	uint32_t	num;
	unsigned	type;
	char		*s;

	if (fd->label != PROTOBUF_C_LABEL_REPEATED)
		return (xstrdup(fd->name));
	while (off < at && pbwire_next_field(p, at, &off, &num, &type, &start,
	    &n) == 0) {
		if (num == fd->id)
			i++;
	}
	xasprintf(&s, "%s[%zu]", fd->name, i);
	return (s);
}

/*
 * *where: the path below d of the field at fault (caller frees), NULL
 * when the fault is in d's own bytes rather than one of its fields.
 * With w (the same bytes, writable), a string's NUL bytes are replaced
 * there by sub and counted in *scrubbed instead of refused.
 */
static int
walk(const ProtobufCMessageDescriptor *d, const uint8_t *p, uint8_t *w,
    size_t len, int depth, char **where, uint8_t sub, int *scrubbed)
{
	const ProtobufCFieldDescriptor	*fd;
	size_t				 off = 0, at, start = 0, n = 0, i;
	uint32_t			 num;
	unsigned			 type;
	char				*label, *below = NULL;
	int				 rc;

	if (depth > PBCHECK_MAX_DEPTH) {
		*where = NULL;
		return (-ELOOP);
	}
	while (off < len) {
		at = off;
		if (pbwire_next_field(p, len, &off, &num, &type, &start,
		    &n) != 0) {
			*where = NULL;
			return (-EBADMSG);
		}
		if (type != PBWIRE_LEN ||
		    (fd = protobuf_c_message_descriptor_get_field(d,
		    num)) == NULL)
			continue;
		rc = 0;
		if (fd->type == PROTOBUF_C_TYPE_STRING) {
			if (memchr(p + start, '\0', n) == NULL)
				continue;
			if (w == NULL)
				rc = -EILSEQ;
			else {
				for (i = start; i < start + n; i++)
					if (w[i] == '\0')
						w[i] = sub;
				(*scrubbed)++;
			}
		} else if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
			rc = walk(fd->descriptor, p + start, w != NULL ?
			    w + start : NULL, n, depth + 1, &below, sub,
			    scrubbed);
		if (rc == 0)
			continue;
		label = field_label(fd, p, at);
		if (below != NULL) {
			xasprintf(where, "%s.%s", label, below);
			free(label);
			free(below);
		} else
			*where = label;
		return (rc);
	}
	return (0);
}

int
pbcheck_strings(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
    size_t len, char **cause)
{
	char	*where = NULL;
	int	 rc;

	if ((rc = walk(d, buf, NULL, len, 0, &where, 0, NULL)) == 0)
		return (0);
	if (cause != NULL) {
		switch (rc) {
		case -EILSEQ:
			xasprintf(cause, "%s.%s has a NUL byte",
			    d->short_name, where);
			break;
		case -ELOOP:
			xasprintf(cause, "%s%s%s: messages nested deeper than "
			    "%d", d->short_name, where != NULL ? "." : "",
			    where != NULL ? where : "", PBCHECK_MAX_DEPTH);
			break;
		default:
			xasprintf(cause, "%s%s%s is not protobuf wire format",
			    d->short_name, where != NULL ? "." : "",
			    where != NULL ? where : "");
			break;
		}
	}
	free(where);
	return (rc);
}

int
pbcheck_scrub(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
    uint8_t *out, size_t len, uint8_t sub)
{
	char	*where = NULL;
	int	 rc, scrubbed = 0;

	memcpy(out, buf, len);
	rc = walk(d, buf, out, len, 0, &where, sub, &scrubbed);
	free(where);
	return (rc != 0 ? rc : scrubbed);
}

size_t
pbwire_varint_size(uint64_t v)
{
	size_t	n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return (n);
}

uint8_t *
pbwire_varint_put(uint64_t v, uint8_t *p)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return (p);
}
