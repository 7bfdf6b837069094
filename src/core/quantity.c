/*
 * quantity.c owns the reading of Kubernetes resource quantities as CPU
 * amounts in milli-CPUs. The grammar is that of resource.Quantity: an
 * optional sign, a decimal number ("2", "1.5", ".5", "1."), and an optional
 * suffix: decimal SI (n u m k M G T P E), binary SI (Ki Mi Gi Ti Pi Ei) or
 * a decimal exponent (e3, E-2). Like Quantity.MilliValue(), a value finer
 * than 1m is rounded up to the next milli-CPU, so any positive amount is at
 * least 1m. The arithmetic is exact: the number is kept as its digits and a
 * power of ten, never as a float.
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"
#include "xmalloc.h"

/* Quoted texts in causes are cut to this many bytes. */
#define QUANTITY_QUOTE_MAX	64

/* Exponents saturate here, far beyond the length of any text in memory. */
#define QUANTITY_EXP_LIMIT	(LLONG_MAX / 4)

struct quantity_suffix {
	const char	*name;
	int		 exp10;		/* power of ten */
	int		 exp2;		/* power of two */
};

static const struct quantity_suffix quantity_suffixes[] = {
	{ "",	0,	0 },
	{ "n",	-9,	0 },
	{ "u",	-6,	0 },
	{ "m",	-3,	0 },
	{ "k",	3,	0 },
	{ "M",	6,	0 },
	{ "G",	9,	0 },
	{ "T",	12,	0 },
	{ "P",	15,	0 },
	{ "E",	18,	0 },
	{ "Ki",	0,	10 },
	{ "Mi",	0,	20 },
	{ "Gi",	0,	30 },
	{ "Ti",	0,	40 },
	{ "Pi",	0,	50 },
	{ "Ei",	0,	60 },
};

static int
quantity_fail(const char *text, const char *why, char **cause)
{
	char	*shown;
	size_t	 i, len;

	if (cause == NULL)
		return (-EINVAL);
	/* The text comes from a config file or a peer: show it tamed. */
	len = strlen(text);
	if (len > QUANTITY_QUOTE_MAX)
		len = QUANTITY_QUOTE_MAX;
	shown = xstrndup(text, len);
	for (i = 0; i < len; i++)
		if ((unsigned char)shown[i] < 0x20 || shown[i] == '"' ||
		    (unsigned char)shown[i] >= 0x7f)
			shown[i] = '?';
	xasprintf(cause, "bad CPU quantity \"%s%s\": %s", shown,
	    strlen(text) > len ? "..." : "", why);
	free(shown);
	return (-EINVAL);
}

/* Reads a decimal exponent after e/E; saturates huge ones. */
static int
quantity_exponent(const char *p, long long *exp)
{
	int		 neg = 0;
	long long	 v = 0;

	if (*p == '+' || *p == '-')
		neg = (*p++ == '-');
	if (*p == '\0')
		return (-1);
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return (-1);
		if (v <= (QUANTITY_EXP_LIMIT - 9) / 10)
			v = v * 10 + (*p - '0');
		else
			v = QUANTITY_EXP_LIMIT;
	}
	*exp = neg ? -v : v;
	return (0);
}

/*
 * Computes ceil(D * 10^e10 * 2^exp2) for the decimal digits D. Returns -1
 * when the result does not fit in 64 bits.
 */
static int
quantity_value(const char *digits, size_t ndigits, long long e10, int exp2,
    uint64_t *out)
{
	uint64_t	 mult = 1ULL << exp2, whole = 0, carry = 0, t;
	long long	 k, nwhole, first;
	int		 inexact = 0;

	/* The digits left of the point, times 10^e10 when that is positive. */
	nwhole = (long long)ndigits + (e10 < 0 ? e10 : 0);
	for (k = 0; k < nwhole; k++) {
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(digits[k] - '0'),
		    &whole))
			return (-1);
	}
	for (; e10 > 0; e10--)
		if (__builtin_mul_overflow(whole, 10, &whole))
			return (-1);
	if (__builtin_mul_overflow(whole, mult, &whole))
		return (-1);

	/*
	 * The fraction times 2^exp2, digit by digit from the right: the carry
	 * out is its integer part, a non-zero remainder means rounding up.
	 * t <= 9 * mult + carry <= 10 * 2^60 fits in 64 bits.
	 */
	if (e10 < 0) {
		first = (long long)ndigits + e10;
		for (k = (long long)ndigits - 1; k >= 0 && k >= first; k--) {
			t = (uint64_t)(digits[k] - '0') * mult + carry;
			carry = t / 10;
			if (t % 10 != 0)
				inexact = 1;
		}
		/* Zeros between the point and D, as in 0.0001Ki. */
		for (k = first; k < 0 && carry != 0; k++) {
			if (carry % 10 != 0)
				inexact = 1;
			carry /= 10;
		}
	}
	if (__builtin_add_overflow(whole, carry, &whole) ||
	    __builtin_add_overflow(whole, (uint64_t)inexact, &whole))
		return (-1);
	*out = whole;
	return (0);
}

int
quantity_parse_milli(const char *text, long long *milli, char **cause)
{
	const struct quantity_suffix	*sfx = NULL;
	const char	*p, *int_start, *frac_start, *suffix, *d, *digits_end;
	char		*digits;
	size_t		 nint, nfrac, i, ndigits, nsig;
	long long	 e10, sexp = 0;
	uint64_t	 v;
	int		 neg = 0, exp2 = 0, rc;

	p = text;
	if (*p == '+' || *p == '-')
		neg = (*p++ == '-');
	int_start = p;
	while (*p >= '0' && *p <= '9')
		p++;
	nint = (size_t)(p - int_start);
	frac_start = p;
	nfrac = 0;
	if (*p == '.') {
		frac_start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		nfrac = (size_t)(p - frac_start);
	}
	if (nint + nfrac == 0)
		return (quantity_fail(text, "expected a number such as 2, 1.5 "
		    "or 750m", cause));

	suffix = p;
	for (i = 0; i < sizeof quantity_suffixes / sizeof quantity_suffixes[0];
	    i++) {
		if (strcmp(suffix, quantity_suffixes[i].name) == 0) {
			sfx = &quantity_suffixes[i];
			break;
		}
	}
	if (sfx != NULL) {
		e10 = sfx->exp10;
		exp2 = sfx->exp2;
	} else if ((*suffix == 'e' || *suffix == 'E') &&
	    quantity_exponent(suffix + 1, &sexp) == 0) {
		e10 = sexp;
		exp2 = 0;
	} else
		return (quantity_fail(text, "bad suffix", cause));
	/* Milli-CPUs, and every fraction digit shifts the point left. */
	e10 += 3 - (long long)nfrac;

	/*
	 * Significant digits: integer and fraction digits together, without
	 * leading zeros; trailing zeros become powers of ten.
	 */
	ndigits = 0;
	nsig = 0;
	digits_end = NULL;
	for (d = int_start; d < p; d++) {
		if (*d == '.')
			continue;
		if (ndigits == 0 && *d == '0')
			continue;
		ndigits++;
		if (*d != '0') {
			nsig = ndigits;
			digits_end = d;
		}
	}
	if (nsig == 0) {
		*milli = 0;
		return (0);
	}
	if (neg)
		return (quantity_fail(text, "a CPU quantity cannot be negative",
		    cause));
	e10 += (long long)(ndigits - nsig);

	/*
	 * value = D * 10^e10 * 2^exp2. Its integer part must fit in 63 bits,
	 * so at most 19 digits of D may lie left of the decimal point.
	 */
	if ((long long)nsig + e10 > 19)
		return (quantity_fail(text, "too large", cause));

	/* Copy the significant digits. */
	digits = xmalloc(nsig + 1);
	i = 0;
	for (d = int_start; d <= digits_end; d++) {
		if (*d == '.' || (i == 0 && *d == '0'))
			continue;
		digits[i++] = *d;
	}
	digits[i] = '\0';
	rc = quantity_value(digits, i, e10, exp2, &v);
	free(digits);
	if (rc != 0 || v > (uint64_t)LLONG_MAX)
		return (quantity_fail(text, "too large", cause));
	*milli = (long long)v;
	return (0);
}
