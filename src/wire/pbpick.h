/*
 * A message unpacked for the few fields its reader takes (pbpick.c): the
 * bytes checked whole, as protobuf-c checks them, and only the picked
 * fields made into protobuf-c's structures; every other field keeps its
 * default. Where the bytes are not the plain ones a runtime sends, it
 * says so and the caller unpacks them with protobuf-c, whose word is the
 * last: what is accepted here, protobuf-c accepts, into the same values.
 */
#ifndef TOPOAWARE_PBPICK_H
#define TOPOAWARE_PBPICK_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "pbarena.h"

/* A field to unpack: its message type and number. Strings, enums,
 * 32- and 64-bit integers, booleans and messages, singular or (strings
 * and messages) repeated; maps are repeated entry messages. */
struct pbpick_field {
	const ProtobufCMessageDescriptor	*desc;
	uint32_t				 id;
};

struct pbpick;

/*
 * The plan for messages of type root: every type reachable from it, its
 * fields by number. NULL when a pick is of a kind not listed above, a
 * oneof member, not a field of its type, or when a type numbers its
 * fields past 4,096.
 */
struct pbpick	*pbpick_new(const ProtobufCMessageDescriptor *root,
		    const struct pbpick_field *, size_t n);
void		 pbpick_free(struct pbpick *);

/* pbpick_unpack's answer when protobuf-c must unpack the bytes. */
#define PBPICK_FALLBACK	1

/*
 * 0: *msg is the message of the len bytes at buf, allocated in a, with
 * the picked fields set as protobuf-c sets them and the others at their
 * defaults, and every field, picked or not, checked as protobuf-c checks
 * it (wire types, lengths, packed arrays, nested messages). Otherwise
 * PBPICK_FALLBACK and *why (static text) the first reason: bytes that
 * are not wire format or that protobuf-c refuses, a NUL byte in any
 * string field, a picked singular message given twice (protobuf-c merges
 * the two), messages nested deeper than PBCHECK_MAX_DEPTH. Whatever a
 * fallback allocated stays in a until it is freed.
 */
int		 pbpick_unpack(const struct pbpick *, const uint8_t *buf,
		    size_t len, struct pbarena *a, ProtobufCMessage **msg,
		    const char **why);

/* Whether a and b, messages of the plan's root type, hold the same
 * values in every picked field (for the tests and the fuzzer). */
int		 pbpick_same(const struct pbpick *, const ProtobufCMessage *a,
		    const ProtobufCMessage *b);

#endif
