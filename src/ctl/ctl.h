/* What topoawarectl's printers in files of their own share. */
#ifndef TOPOAWARE_CTL_H
#define TOPOAWARE_CTL_H

#include <jansson.h>

/* explain ID: a grant's request, decision and CPUs (ctl_explain.c). */
void	print_explain(json_t *);

#endif
