/*
 * test_quantity.c: CPU quantities (R-CONF-1 reservedResources.cpu) as
 * Kubernetes resource.Quantity reads them, in milli-CPUs, with finer
 * fractions rounded up as Quantity.MilliValue() does, and garbage,
 * negatives and overflow refused naming the text.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"
#include "testlib.h"

static void
good(const char *in, long long want)
{
	long long	 m = -42;
	char		*cause = NULL;

	cr_assert_eq(quantity_parse_milli(in, &m, &cause), 0, "\"%s\": %s",
	    in, cause ? cause : "");
	cr_assert_null(cause);
	cr_assert_eq(m, want, "\"%s\" is %lldm, not %lldm", in, m, want);
}

static void
bad(const char *in, const char *named)
{
	long long	 m = -42;
	char		*cause = NULL;

	cr_assert_eq(quantity_parse_milli(in, &m, &cause), -EINVAL,
	    "\"%s\" accepted as %lldm", in, m);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, named), "cause \"%s\" does not "
	    "name \"%s\"", cause, named);
	cr_assert_eq(m, -42, "a refused quantity leaves the result alone");
	free(cause);
}

Test(quantity, milli_and_whole)
{
	good("750m", 750);
	good("2", 2000);
	good("2000m", 2000);
	good("1m", 1);
	good("0", 0);
	good("0m", 0);
	good("000", 0);
	good("007", 7000);
	good("+3", 3000);
	good("-0", 0);
	good("112", 112000);
}

Test(quantity, decimals)
{
	good("1.5", 1500);
	good("0.25", 250);
	good(".5", 500);
	good("1.", 1000);
	good("0.750", 750);
	good("2.000", 2000);
	good("1.5m", 2);	/* 1.5m rounds up */
	good("0.001", 1);
}

Test(quantity, decimal_si_suffixes)
{
	good("1k", 1000000);
	good("2M", 2000000000LL);
	good("1G", 1000000000000LL);
	good("1T", 1000000000000000LL);
	good("1P", 1000000000000000000LL);
	good("0.001k", 1000);
	good("1.5k", 1500000);
	good("500000u", 500);
	good("750000000n", 750);
	good("1000000n", 1);
	good("0.000000000000000001E", 1000);
}

Test(quantity, binary_si_suffixes)
{
	good("1Ki", 1024000);
	good("0.5Ki", 512000);
	good("1Mi", 1048576000LL);
	good("1Gi", 1073741824000LL);
	good("0.001Ki", 1024);		/* 1.024 CPUs exactly */
	good("0.0001Ki", 103);		/* 102.4m rounds up */
	good("0.00001Ki", 11);		/* 10.24m rounds up */
	good("0.15Ki", 153600);
}

Test(quantity, decimal_exponents)
{
	good("1e3", 1000000);
	good("1E3", 1000000);
	good("2e0", 2000);
	good("1e-3", 1);
	good("1e+2", 100000);
	good("15e-1", 1500);
	good("1e-999999999999", 1);	/* any positive amount is >= 1m */
	good("0e999999999999", 0);
}

/* Kubernetes rounds every fraction finer than 1m up: so do we. */
Test(quantity, finer_than_milli_rounds_up)
{
	good("0.0001", 1);
	good("1n", 1);
	good("1u", 1);
	good("0.7501", 751);
	good("750.000001m", 751);
	good("750.000000m", 750);
	good("0.30000000000000004", 301);
	good("2.0000000000000000000000000000000000000000000000000000000000000"
	    "00000000000000000001", 2001);
	good("0.00000000000000000000000000000000000000000000000000000000000001",
	    1);
}

Test(quantity, limits)
{
	good("9223372036854775807m", LLONG_MAX);
	good("9223372036854775.807", LLONG_MAX);
	bad("9223372036854775808m", "too large");
	bad("9223372036854775.8071", "too large");
	bad("9223372036854776", "too large");
	bad("10E", "too large");
	bad("99999999999999999999999999", "too large");
	bad("1e999999999999", "too large");
	bad("9Ei", "too large");
	good("8Pi", 9007199254740992000LL);
}

Test(quantity, negatives_refused)
{
	bad("-1", "negative");
	bad("-750m", "negative");
	bad("-0.0001", "negative");
	bad("-1e-9", "\"-1e-9\"");
}

Test(quantity, garbage_refused)
{
	bad("", "\"\"");
	bad("m", "\"m\"");
	bad(".", "\".\"");
	bad("+", "\"+\"");
	bad("-", "\"-\"");
	bad("abc", "\"abc\"");
	bad("1 ", "\"1 \"");
	bad(" 1", "\" 1\"");
	bad("1K", "bad suffix");
	bad("1mm", "bad suffix");
	bad("1ki", "bad suffix");
	bad("1.2.3", "\"1.2.3\"");
	bad("0x10", "\"0x10\"");
	bad("1e", "\"1e\"");
	bad("1e+", "\"1e+\"");
	bad("1e1.5", "\"1e1.5\"");
	bad("1,5", "\"1,5\"");
	bad("cpuset:0-3", "\"cpuset:0-3\"");
	bad("1\n", "\"1?\"");	/* control characters are not echoed */
}

/* The exponent is exact however long the digits are: no early clamping. */
Test(quantity, long_mantissa_and_exponent)
{
	char	*buf;
	size_t	 nzeros = 150000;

	buf = malloc(nzeros + 32);
	cr_assert_not_null(buf);
	buf[0] = '1';
	memset(buf + 1, '0', nzeros);
	snprintf(buf + 1 + nzeros, 31, "e-%zu", nzeros);
	good(buf, 1000);		/* 10^150000 * 10^-150000 CPUs */
	snprintf(buf + 1 + nzeros, 31, "e-%zu", nzeros + 3);
	good(buf, 1);			/* exactly 1m */
	snprintf(buf + 1 + nzeros, 31, "e-%zu", nzeros + 4);
	good(buf, 1);			/* 0.1m rounds up */
	snprintf(buf + 1 + nzeros, 31, "e-%zu", nzeros - 17);
	bad(buf, "too large");		/* 10^17 CPUs */
	free(buf);
}

Test(quantity, long_text_is_cut)
{
	char	 buf[300];
	char	*cause = NULL;
	long long m;

	memset(buf, 'x', sizeof buf - 1);
	buf[sizeof buf - 1] = '\0';
	cr_assert_eq(quantity_parse_milli(buf, &m, &cause), -EINVAL);
	cr_assert_not_null(cause);
	cr_assert_lt(strlen(cause), 150, "cause is %zu bytes", strlen(cause));
	cr_assert_not_null(strstr(cause, "xxx...\""));
	free(cause);
}

Test(quantity, cause_is_optional)
{
	long long	m;

	cr_assert_eq(quantity_parse_milli("x", &m, NULL), -EINVAL);
}
