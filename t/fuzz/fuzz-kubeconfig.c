/*
 * fuzz-kubeconfig: a kubeconfig file as --kubeconfig names it (YAML by
 * libyaml, then our reading of clusters, users, contexts and the
 * credentials in their file or base64 -data forms). The file lives in a
 * private folder, so relative credential paths stay inside it; inputs
 * that could name a file elsewhere (a '/' other than in "://", or a YAML
 * escape that could make one) are skipped: a token file of the host,
 * say /dev/stdin, is not ours to read.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube.h"
#include "fuzzlib.h"

static int
stays_inside(const uint8_t *data, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (data[i] == '\\')
			return (0);
		if (data[i] == '/' && !(i >= 1 && data[i - 1] == ':') &&
		    !(i >= 2 && data[i - 1] == '/' && data[i - 2] == ':'))
			return (0);
	}
	return (1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct kube_config	*cfg = NULL;
	char			 path[PATH_MAX];
	char			*token = NULL, *cause = NULL;

	if (!stays_inside(data, len))
		return (0);
	if (snprintf(path, sizeof path, "%s/kubeconfig", fuzz_dir()) >=
	    (int)sizeof path)
		abort();
	fuzz_write(path, data, len);
	if (kube_config_load(path, &cfg, &cause) != 0) {
		if (cfg != NULL || cause == NULL)
			abort();
		free(cause);
		return (0);
	}
	if (cfg->server == NULL)
		abort();
	if (kube_config_token(cfg, &token, &cause) == 0)
		free(token);
	else
		free(cause);
	kube_config_free(cfg);
	return (0);
}
