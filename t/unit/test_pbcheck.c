/*
 * test_pbcheck.c: the NUL-byte check of protobuf strings, on wire bytes
 * made by hand (protobuf-c cannot pack a string with a NUL in it): found
 * at every depth, named by its path, bytes fields left alone, unknown
 * fields skipped, bad wire format and deep nesting refused.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dra_v1.pb-c.h"
#include "nri.pb-c.h"
#include "pbcheck.h"
#include "xmalloc.h"

#define PREPARE_REQ \
	(&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor)
#define CREATE_REQ \
	(&nri__pkg__api__v1alpha1__create_container_request__descriptor)

struct buf {
	uint8_t	b[4096];
	size_t	n;
};

static void
put_varint(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		b->b[b->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->b[b->n++] = (uint8_t)v;
}

/* A length-delimited field. */
static void
put_len(struct buf *b, uint32_t num, const void *p, size_t n)
{
	cr_assert_lt(b->n + n + 16, sizeof b->b);
	put_varint(b, (uint64_t)num << 3 | 2);
	put_varint(b, n);
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void
put_buf(struct buf *b, uint32_t num, const struct buf *inner)
{
	put_len(b, num, inner->b, inner->n);
}

/* A Claim of a NodePrepareResourcesRequest; lengths count the NULs. */
static void
put_claim(struct buf *req, const char *ns, size_t nslen, const char *uid,
    size_t uidlen, const char *name, size_t namelen)
{
	struct buf	c = { .n = 0 };

	put_len(&c, 1, ns, nslen);
	put_len(&c, 2, uid, uidlen);
	put_len(&c, 3, name, namelen);
	put_buf(req, 1, &c);
}

static void
refused(const ProtobufCMessageDescriptor *d, const struct buf *b, int want,
    const char *text)
{
	char	*cause = NULL;
	int	 rc;

	rc = pbcheck_strings(d, b->b, b->n, &cause);
	cr_assert_eq(rc, want, "rc %d, want %d (%s)", rc, want,
	    cause != NULL ? cause : "no cause");
	cr_assert_not_null(cause);
	cr_assert_str_eq(cause, text);
	free(cause);
}

static void
passes(const ProtobufCMessageDescriptor *d, const struct buf *b)
{
	char	*cause = NULL;
	int	 rc;

	rc = pbcheck_strings(d, b->b, b->n, &cause);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, cause != NULL ? cause : "");
	cr_assert_null(cause);
}

Test(pbcheck, clean_request_passes_and_unpacks)
{
	struct buf	b = { .n = 0 };

	put_claim(&b, "default", 7, "u-1", 3, "claim-a", 7);
	put_claim(&b, "default", 7, "u-2", 3, "claim-b", 7);
	passes(PREPARE_REQ, &b);
	passes(PREPARE_REQ, &(struct buf){ .n = 0 });
}

Test(pbcheck, nul_in_a_repeated_message_is_named_with_its_index)
{
	struct buf	b = { .n = 0 };

	put_claim(&b, "default", 7, "u-1", 3, "claim-a", 7);
	put_claim(&b, "default", 7, "x\0tail", 6, "claim-b", 7);
	refused(PREPARE_REQ, &b, -EILSEQ,
	    "NodePrepareResourcesRequest.claims[1].uid has a NUL byte");

	b.n = 0;
	put_claim(&b, "default", 7, "u-1", 3, "a\0b", 3);
	refused(PREPARE_REQ, &b, -EILSEQ,
	    "NodePrepareResourcesRequest.claims[0].name has a NUL byte");

	b.n = 0;
	put_claim(&b, "\0", 1, "u-1", 3, "a", 1);
	refused(PREPARE_REQ, &b, -EILSEQ,
	    "NodePrepareResourcesRequest.claims[0].namespace has a NUL byte");
}

Test(pbcheck, nul_at_either_end)
{
	struct buf	b = { .n = 0 };

	put_claim(&b, "default", 7, "uid\0", 4, "n", 1);
	refused(PREPARE_REQ, &b, -EILSEQ,
	    "NodePrepareResourcesRequest.claims[0].uid has a NUL byte");
	b.n = 0;
	put_claim(&b, "default", 7, "\0uid", 4, "n", 1);
	refused(PREPARE_REQ, &b, -EILSEQ,
	    "NodePrepareResourcesRequest.claims[0].uid has a NUL byte");
}

Test(pbcheck, nri_container_id_and_map_entries)
{
	struct buf	req = { .n = 0 }, pod = { .n = 0 }, ctr = { .n = 0 };
	struct buf	entry = { .n = 0 };

	put_len(&pod, 1, "pod-1", 5);
	put_len(&ctr, 1, "ab\0cd", 5);
	put_buf(&req, 1, &pod);
	put_buf(&req, 2, &ctr);
	refused(CREATE_REQ, &req, -EILSEQ,
	    "CreateContainerRequest.container.id has a NUL byte");

	/* A map entry is a message of its own: key 1, value 2. */
	req.n = pod.n = 0;
	put_len(&entry, 1, "k", 1);
	put_len(&entry, 2, "v\0", 2);
	put_len(&pod, 1, "pod-1", 5);
	put_buf(&pod, 6, &entry);
	put_buf(&req, 1, &pod);
	refused(CREATE_REQ, &req, -EILSEQ,
	    "CreateContainerRequest.pod.annotations[0].value has a NUL byte");

	/* A repeated string: env. */
	req.n = ctr.n = 0;
	put_len(&ctr, 1, "c1", 2);
	put_len(&ctr, 8, "A=1", 3);
	put_len(&ctr, 8, "B=\0", 3);
	put_buf(&req, 2, &ctr);
	refused(CREATE_REQ, &req, -EILSEQ,
	    "CreateContainerRequest.container.env[1] has a NUL byte");
}

Test(pbcheck, other_fields_are_skipped)
{
	struct buf	req = { .n = 0 }, ctr = { .n = 0 };

	/* Varint, fixed and unknown length-delimited fields around a good
	 * id, with NULs where no string is. */
	put_len(&ctr, 1, "c1", 2);
	put_varint(&ctr, 12 << 3 | 0);		/* pid */
	put_varint(&ctr, 300);
	put_varint(&ctr, 99 << 3 | 1);		/* unknown, 64-bit */
	memset(ctr.b + ctr.n, 0, 8);
	ctr.n += 8;
	put_varint(&ctr, 98 << 3 | 5);		/* unknown, 32-bit */
	memset(ctr.b + ctr.n, 0, 4);
	ctr.n += 4;
	put_len(&ctr, 97, "\0\0", 2);		/* unknown */
	put_buf(&req, 2, &ctr);
	passes(CREATE_REQ, &req);
}

Test(pbcheck, bad_wire_format)
{
	struct buf	b = { .n = 0 }, c = { .n = 0 };

	/* A length past the end. */
	put_varint(&b, 1 << 3 | 2);
	put_varint(&b, 50);
	b.b[b.n++] = 'x';
	refused(PREPARE_REQ, &b, -EBADMSG,
	    "NodePrepareResourcesRequest is not protobuf wire format");

	/* A group, inside a claim. */
	put_varint(&c, 2 << 3 | 3);
	b.n = 0;
	put_buf(&b, 1, &c);
	refused(PREPARE_REQ, &b, -EBADMSG,
	    "NodePrepareResourcesRequest.claims[0] is not protobuf wire "
	    "format");

	/* Field number 0, a varint that never ends. */
	b.n = 0;
	put_varint(&b, 0 << 3 | 0);
	put_varint(&b, 1);
	refused(PREPARE_REQ, &b, -EBADMSG,
	    "NodePrepareResourcesRequest is not protobuf wire format");
	b.n = 0;
	memset(b.b, 0xff, 12);
	b.n = 12;
	refused(PREPARE_REQ, &b, -EBADMSG,
	    "NodePrepareResourcesRequest is not protobuf wire format");
}

/* A message that holds itself, to nest without end. */
extern const ProtobufCMessageDescriptor node_descriptor;
static const ProtobufCFieldDescriptor node_fields[] = {
	{ "name", 1, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_STRING, 0, 0,
	    NULL, NULL, 0, 0, NULL, NULL },
	{ "child", 2, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_MESSAGE, 0, 0,
	    &node_descriptor, NULL, 0, 0, NULL, NULL },
	{ "blob", 3, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_BYTES, 0, 0,
	    NULL, NULL, 0, 0, NULL, NULL },
};
static const unsigned node_by_name[] = { 2, 1, 0 };
static const ProtobufCIntRange node_ranges[] = { { 1, 0 }, { 0, 3 } };
const ProtobufCMessageDescriptor node_descriptor = {
	PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, "t.Node", "Node", "Node", "t",
	0, 3, node_fields, node_by_name, 1, node_ranges, NULL, NULL, NULL,
	NULL
};

/* depth Nodes, each holding the next; the innermost named name. */
static void
nest(struct buf *out, int depth, const char *name, size_t len)
{
	struct buf	*in;

	in = xcalloc(1, sizeof *in);
	if (depth == 0)
		put_len(out, 1, name, len);
	else {
		nest(in, depth - 1, name, len);
		put_buf(out, 2, in);
	}
	free(in);
}

Test(pbcheck, depth_is_bounded)
{
	struct buf	b = { .n = 0 };
	char		*cause = NULL;

	nest(&b, PBCHECK_MAX_DEPTH, "ok", 2);
	passes(&node_descriptor, &b);
	b.n = 0;
	nest(&b, PBCHECK_MAX_DEPTH, "n\0", 2);
	cr_assert_eq(pbcheck_strings(&node_descriptor, b.b, b.n, &cause),
	    -EILSEQ);
	cr_assert(strstr(cause, ".child.child.name has a NUL byte") != NULL,
	    "%s", cause);
	free(cause);
	cause = NULL;

	b.n = 0;
	nest(&b, PBCHECK_MAX_DEPTH + 1, "ok", 2);
	cr_assert_eq(pbcheck_strings(&node_descriptor, b.b, b.n, &cause),
	    -ELOOP);
	cr_assert(strstr(cause, "nested deeper than 32") != NULL, "%s",
	    cause);
	free(cause);
}

Test(pbcheck, bytes_may_hold_nul)
{
	struct buf	b = { .n = 0 };

	put_len(&b, 3, "\0\0\0", 3);
	put_len(&b, 1, "n", 1);
	passes(&node_descriptor, &b);
}

Test(pbcheck, cause_may_be_null)
{
	struct buf	b = { .n = 0 };

	put_claim(&b, "d", 1, "x\0", 2, "n", 1);
	cr_assert_eq(pbcheck_strings(PREPARE_REQ, b.b, b.n, NULL), -EILSEQ);
}

/*
 * pbcheck_scrub, for the message that cannot be refused (a Synchronize):
 * every NUL of every string field becomes the substitute, each string
 * counted once, and nothing else changes: not a bytes field's NULs, not
 * a length, not a field pbcheck does not know. The result then passes.
 */
Test(pbcheck, scrub_replaces_the_nul_bytes_of_strings_only)
{
	struct buf	req = { .n = 0 }, pod = { .n = 0 }, ctr = { .n = 0 };
	struct buf	entry = { .n = 0 }, b = { .n = 0 };
	uint8_t		out[sizeof req.b];
	size_t		i, diff = 0;

	put_len(&entry, 1, "k", 1);
	put_len(&entry, 2, "a\0b\0", 4);
	put_len(&pod, 1, "pod-1", 5);
	put_buf(&pod, 6, &entry);
	put_buf(&req, 1, &pod);
	put_len(&ctr, 1, "c\0", 2);
	put_len(&ctr, 8, "A=1", 3);
	put_len(&ctr, 8, "B=\0", 3);
	put_buf(&req, 2, &ctr);
	cr_assert_eq(pbcheck_scrub(CREATE_REQ, req.b, out, req.n, '?'), 3);
	for (i = 0; i < req.n; i++) {
		if (req.b[i] == out[i])
			continue;
		cr_assert_eq(req.b[i], '\0', "byte %zu changed", i);
		cr_assert_eq(out[i], '?');
		diff++;
	}
	cr_assert_eq(diff, 4);
	cr_assert_eq(pbcheck_strings(CREATE_REQ, out, req.n, NULL), 0);
	/* A clean message is copied as it is. */
	memset(out, 0, sizeof out);
	pod.n = 0;
	put_len(&pod, 1, "pod-1", 5);
	put_buf(&b, 1, &pod);
	cr_assert_eq(pbcheck_scrub(CREATE_REQ, b.b, out, b.n, '?'), 0);
	cr_assert_eq(memcmp(out, b.b, b.n), 0);
	/* A bytes field's NULs stay; bad nesting is still an error. */
	b.n = 0;
	put_len(&b, 3, "\0\0\0", 3);
	put_len(&b, 1, "n\0", 2);
	cr_assert_eq(pbcheck_scrub(&node_descriptor, b.b, out, b.n, '?'), 1);
	cr_assert_eq(memcmp(out, b.b, b.n - 1), 0);
	cr_assert_eq(out[b.n - 1], '?');
	b.n = 0;
	nest(&b, PBCHECK_MAX_DEPTH + 1, "n\0", 2);
	cr_assert_eq(pbcheck_scrub(&node_descriptor, b.b, out, b.n, '?'),
	    -ELOOP);
}
