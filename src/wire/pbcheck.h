/*
 * What protobuf-c does not check for us, without I/O: it hands a proto3
 * string out as a C string, so one with a NUL byte inside would be cut
 * short without a word. pbcheck walks the wire bytes of a message before
 * it is unpacked and refuses a string field holding a NUL byte, in the
 * message itself or in any message nested in it (map entries included).
 */
#ifndef TOPOAWARE_PBCHECK_H
#define TOPOAWARE_PBCHECK_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* Messages nested deeper than this are refused. */
#define PBCHECK_MAX_DEPTH	32

/*
 * 0 when every string field of the message desc describes, in buf, is
 * free of NUL bytes. Otherwise, with *cause (caller frees) naming the
 * field by its path, e.g. "NodePrepareResourcesRequest.claims[1].uid has
 * a NUL byte":
 *   -EILSEQ   a string field holds a NUL byte;
 *   -ELOOP    messages are nested deeper than PBCHECK_MAX_DEPTH;
 *   -EBADMSG  the bytes are not protobuf wire format (protobuf-c refuses
 *             most such bytes too; a tag whose varint runs past 32 bits
 *             it would cut short and decode, and Go's decoder refuses).
 * Fields the descriptor does not know are skipped.
 */
int	pbcheck_strings(const ProtobufCMessageDescriptor *, const uint8_t *buf,
	    size_t len, char **cause);

/*
 * The len bytes of buf copied to out with every NUL byte of a string
 * field (as pbcheck_strings finds them) replaced by sub, for a message
 * that cannot be refused for one string: the strings that had one, or
 * -ELOOP or -EBADMSG as pbcheck_strings. A NUL in a bytes field or an
 * unknown field is left as it is.
 */
int	pbcheck_scrub(const ProtobufCMessageDescriptor *, const uint8_t *buf,
	    uint8_t *out, size_t len, uint8_t sub);

/* Wire types. */
#define PBWIRE_VARINT	0
#define PBWIRE_64BIT	1
#define PBWIRE_LEN	2
#define PBWIRE_32BIT	5

/*
 * Reads the field at *off of the len bytes at p: its number and wire
 * type, and for PBWIRE_LEN where its bytes are (*start, *n); *off moves
 * past it. -1 on bytes that are not wire format (groups included, which
 * protobuf-c refuses too).
 */
int	pbwire_next_field(const uint8_t *p, size_t len, size_t *off,
	    uint32_t *num, unsigned *type, size_t *start, size_t *n);
/* The bytes a varint of v takes (1 to 10), and writing it at p: returns
 * the end. */
size_t	 pbwire_varint_size(uint64_t v);
uint8_t	*pbwire_varint_put(uint64_t v, uint8_t *p);

#endif
