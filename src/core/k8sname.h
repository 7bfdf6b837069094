/*
 * The shapes of Kubernetes names, as the API server validates them: what
 * the daemon is given on its command line must name something that can
 * exist, or it would wait forever for an object that never comes.
 */
#ifndef TOPOAWARE_K8SNAME_H
#define TOPOAWARE_K8SNAME_H

#include <stddef.h>

#define K8S_LABEL_MAX		63	/* a DNS label, a label name or value */
#define K8S_SUBDOMAIN_MAX	253

/* RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63: a namespace. */
int	k8s_dns_label(const char *);
/* RFC 1123 subdomain of at most max characters: dot-separated labels (as
 * Kubernetes checks them: no limit on one label's length). */
int	k8s_dns_subdomain(const char *, size_t max);
/* A label key: [prefix/]name, the prefix a subdomain, the name at most 63
 * of [A-Za-z0-9._-] starting and ending alphanumeric. */
int	k8s_label_key(const char *);
/* A label value: empty, or a name as in a key. */
int	k8s_label_value(const char *);

#endif
