/*
 * jrec.c frames and reads the state journal's records (jrec.h). A record
 * is checked whole before its payload is handed on: its header, its
 * length against what the buffer holds, its CRC and its final newline.
 * The first bad record ends the scan; whether it is the torn tail of an
 * append that never finished or damage with good records after it
 * decides what the daemon does with the rest.
 */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jrec.h"
#include "xmalloc.h"


/*
 * CRC-32C by slicing eight bytes at a time (tables t[0..7]) where the CPU
 * has no instruction for it; a reload or a Synchronize frames a record of
 * the whole state, hundreds of kilobytes.
 */
static uint32_t	crc_table[8][256];
static int	crc_ready;

static void
crc_init(void)
{
	uint32_t	c;
	int		i, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^
			    crc_table[0][crc_table[k - 1][i] & 0xff];
	crc_ready = 1;
}

uint32_t
jrec_crc32c_slice8(uint32_t crc, const void *data, size_t len)
{
	const unsigned char	*p = data;
	uint32_t		 lo, hi;

	if (!crc_ready)
		crc_init();
	crc = ~crc;
	for (; len >= 8; len -= 8, p += 8) {
		/* Byte by byte into words: no alignment or endianness. */
		lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
		    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 |
		    (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		    crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		    crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
	while (len-- > 0)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return (~crc);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * SSE 4.2's crc32 instruction computes CRC-32C itself, eight bytes an
 * instruction: a fifth of the tables' cost over a record of the whole
 * state. x86-64 is little-endian, so a word loaded from p holds its bytes
 * in the order the CRC takes them.
 */
#define CRC_INSN	1

__attribute__((target("sse4.2"))) static uint32_t
crc_insn(uint32_t crc, const unsigned char *p, size_t len)
{
	unsigned long long	c = ~crc, w;
	uint32_t		c32;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, sizeof w);
		c = __builtin_ia32_crc32di(c, w);
	}
	c32 = (uint32_t)c;
	while (len-- > 0)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return (~c32);
}
#endif

uint32_t
jrec_crc32c(uint32_t crc, const void *data, size_t len)
{
#ifdef CRC_INSN
	static int	insn = -1;

	if (insn < 0)
		insn = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (insn)
		return (crc_insn(crc, data, len));
#endif
	return (jrec_crc32c_slice8(crc, data, len));
}

static uint32_t
record_crc(uint64_t seq, const char *payload, size_t len)
{
	char	prefix[JREC_MAX_HEADER];
	int	n;

	n = snprintf(prefix, sizeof prefix, "%" PRIu64 " %zu ", seq, len);
	return (jrec_crc32c(jrec_crc32c(0, prefix, (size_t)n), payload, len));
}

size_t
jrec_header(uint64_t seq, const char *payload, size_t len,
    char hdr[JREC_MAX_HEADER])
{
	int	n;

	n = snprintf(hdr, JREC_MAX_HEADER, "J %" PRIu64 " %zu %08" PRIx32 "\n",
	    seq, len, record_crc(seq, payload, len));
	return ((size_t)n);
}

char *
jrec_encode(uint64_t seq, const char *payload, size_t len, size_t *outlen)
{
	char	*out;
	size_t	 n;

	out = xmalloc(JREC_MAX_HEADER + len + 2);
	n = jrec_header(seq, payload, len, out);
	memcpy(out + n, payload, len);
	out[n + len] = '\n';
	out[n + len + 1] = '\0';
	*outlen = n + len + 1;
	return (out);
}

/* A decimal number of at most max digits ending at sep; 0 or -1. */
static int
number(const char **pp, const char *end, char sep, uint64_t *v)
{
	const char	*p = *pp;
	int		 digits = 0;

	*v = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		if (*v > (UINT64_MAX - 9) / 10 || ++digits > 20)
			return (-1);
		*v = *v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (digits == 0 || p >= end || *p != sep)
		return (-1);
	*pp = p + 1;
	return (0);
}

/*
 * One record at buf: 1 with its parts when good, 0 when the buffer ends
 * before it does, -1 when it is bad (*why says how).
 */
static int
parse_one(const char *buf, size_t len, uint64_t *seq, const char **payload,
    size_t *plen, size_t *total, const char **why)
{
	const char	*p = buf, *end = buf + len, *nl;
	uint64_t	 n, crc;
	int		 i;

	nl = memchr(buf, '\n', len < JREC_MAX_HEADER ? len : JREC_MAX_HEADER);
	if (nl == NULL) {
		*why = "an incomplete record header";
		return (len < JREC_MAX_HEADER ? 0 : -1);
	}
	if (len < 2 || p[0] != 'J' || p[1] != ' ') {
		*why = "not a record header";
		return (-1);
	}
	p += 2;
	if (number(&p, nl, ' ', seq) != 0 || number(&p, nl, ' ', &n) != 0) {
		*why = "a bad record header";
		return (-1);
	}
	if (n > JREC_MAX_PAYLOAD) {
		*why = "a record longer than the limit";
		return (-1);
	}
	crc = 0;
	for (i = 0; i < 8; i++, p++) {
		if (p >= nl || !((*p >= '0' && *p <= '9') ||
		    (*p >= 'a' && *p <= 'f'))) {
			*why = "a bad record checksum field";
			return (-1);
		}
		crc = crc * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	}
	if (p != nl) {
		*why = "a bad record header";
		return (-1);
	}
	p = nl + 1;
	if ((size_t)(end - p) < n + 1) {
		*why = "a record cut short";
		return (0);
	}
	if (p[n] != '\n' || record_crc(*seq, p, (size_t)n) != crc) {
		*why = "a record whose checksum does not match";
		return (-1);
	}
	*payload = p;
	*plen = (size_t)n;
	*total = (size_t)(p + n + 1 - buf);
	return (1);
}

/* Whether a good record starts anywhere after off. */
static int
good_after(const char *buf, size_t len, size_t off)
{
	const char	*p, *payload, *why;
	uint64_t	 seq;
	size_t		 plen, total;

	for (p = buf + off + 1; p < buf + len; p++) {
		p = memchr(p, 'J', (size_t)(buf + len - p));
		if (p == NULL)
			return (0);
		if (p[-1] == '\n' && parse_one(p, (size_t)(buf + len - p), &seq,
		    &payload, &plen, &total, &why) == 1)
			return (1);
	}
	return (0);
}

/* Whether len bytes at p are all NUL: the journal's room after its last
 * record, never a record's (a record is text ending in a newline). */
static int
zeros(const char *p, size_t len)
{
	return (len > 0 && p[0] == '\0' && memcmp(p, p + 1, len - 1) == 0);
}

int
jrec_scan(const char *buf, size_t len, jrec_cb cb, void *arg, size_t *good,
    char **cause)
{
	const char	*payload, *why = NULL;
	uint64_t	 seq;
	size_t		 off = 0, plen, total;
	int		 r, rc;

	*good = 0;
	if (cause != NULL)
		*cause = NULL;
	while (off < len) {
		r = parse_one(buf + off, len - off, &seq, &payload, &plen,
		    &total, &why);
		if (r != 1)
			break;
		if (cb != NULL && (rc = cb(seq, payload, plen, arg)) != 0)
			return (rc);
		off += total;
		*good = off;
	}
	if (off == len || zeros(buf + off, len - off))
		return (JREC_END);
	r = good_after(buf, len, off) ? JREC_DAMAGED : JREC_TORN;
	if (cause != NULL)
		xasprintf(cause, "%s at byte %zu%s", why, off,
		    r == JREC_TORN ? ", the last one" : "");
	return (r);
}
