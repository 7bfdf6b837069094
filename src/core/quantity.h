/*
 * Kubernetes resource quantities as the CPU fields use them: "750m", "2",
 * "1.5", "2000m". Parsed into milli-CPUs; a value that is not a quantity,
 * is negative, or does not fit is refused with a cause naming it.
 */
#ifndef TOPOAWARE_QUANTITY_H
#define TOPOAWARE_QUANTITY_H

/*
 * The grammar is resource.Quantity's: [+-]digits[.digits] with an optional
 * suffix n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e<int>/E<int>. No
 * whitespace. As Quantity.MilliValue() does, a value finer than 1m is
 * rounded up ("0.0001" and "1n" are 1m); "-0" is 0. Returns 0 or -EINVAL
 * with *cause (caller frees) quoting the text.
 */
int	quantity_parse_milli(const char *, long long *, char **);

#endif
