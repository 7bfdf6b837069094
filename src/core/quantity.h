/*
 * Kubernetes resource quantities as the CPU fields use them: "750m", "2",
 * "1.5", "2000m". Parsed into milli-CPUs; a value that is not a quantity,
 * is negative, or does not fit is refused with a cause naming it.
 */
#ifndef TOPOAWARE_QUANTITY_H
#define TOPOAWARE_QUANTITY_H

int	quantity_parse_milli(const char *, long long *, char **);

#endif
