/* Kubernetes name shapes (k8sname.h). */
#include <string.h>

#include "k8sname.h"

static int
k8s_lower_alnum(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

static int
k8s_alnum(char c)
{
	return (k8s_lower_alnum(c) || (c >= 'A' && c <= 'Z'));
}

/* The first n bytes of s are one DNS label (of any length: Kubernetes
 * limits a subdomain's length, not its labels'). */
static int
k8s_label_n(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || !k8s_lower_alnum(s[0]) ||
	    !k8s_lower_alnum(s[n - 1]))
		return (0);
	for (i = 1; i + 1 < n; i++)
		if (!k8s_lower_alnum(s[i]) && s[i] != '-')
			return (0);
	return (1);
}

int
k8s_dns_label(const char *s)
{
	return (strlen(s) <= K8S_LABEL_MAX && k8s_label_n(s, strlen(s)));
}

int
k8s_dns_subdomain(const char *s, size_t max)
{
	const char	*dot;
	size_t		 len = strlen(s);

	if (len == 0 || len > max)
		return (0);
	for (;;) {
		dot = strchr(s, '.');
		if (!k8s_label_n(s, dot != NULL ? (size_t)(dot - s) :
		    strlen(s)))
			return (0);
		if (dot == NULL)
			return (1);
		s = dot + 1;
	}
}

/* The first n bytes of s are a label name (a key's name part, a value). */
static int
k8s_name_n(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || n > K8S_LABEL_MAX || !k8s_alnum(s[0]) ||
	    !k8s_alnum(s[n - 1]))
		return (0);
	for (i = 1; i + 1 < n; i++)
		if (!k8s_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '.')
			return (0);
	return (1);
}

int
k8s_label_key(const char *s)
{
	const char	*slash = strchr(s, '/');
	char		 prefix[K8S_SUBDOMAIN_MAX + 1];
	size_t		 n;

	if (slash == NULL)
		return (k8s_name_n(s, strlen(s)));
	n = (size_t)(slash - s);
	if (n == 0 || n > K8S_SUBDOMAIN_MAX)
		return (0);
	memcpy(prefix, s, n);
	prefix[n] = '\0';
	return (k8s_dns_subdomain(prefix, K8S_SUBDOMAIN_MAX) &&
	    k8s_name_n(slash + 1, strlen(slash + 1)));
}

int
k8s_label_value(const char *s)
{
	return (*s == '\0' || k8s_name_n(s, strlen(s)));
}
