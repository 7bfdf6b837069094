/*
 * kubeconfig.c owns finding the API server and our credentials (SPEC
 * R-KUBE): a kubeconfig file read with libyaml (current-context, its
 * cluster and user, in both the file-path form the kubelet writes and the
 * inline base64 -data form), or the in-cluster service account.
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "kube.h"
#include "readfile.h"
#include "xmalloc.h"

#define KUBE_SA_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"
/* Tokens and kubeconfigs are small; anything bigger is a wrong file. */
#define KUBE_MAX_FILE		(1024 * 1024)

void
kube_config_free(struct kube_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->server);
	free(cfg->ca_file);
	free(cfg->ca_data);
	free(cfg->cert_file);
	free(cfg->cert_data);
	free(cfg->key_file);
	free(cfg->key_data);
	free(cfg->token);
	free(cfg->token_file);
	free(cfg);
}

int
kube_config_file(const char *path, const char *what, char **data,
    size_t *len, char **cause)
{
	return (readfile(path, what, KUBE_MAX_FILE, data, len, cause));
}

static int
b64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return (c - 'A');
	if (c >= 'a' && c <= 'z')
		return (c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (c - '0' + 52);
	if (c == '+')
		return (62);
	if (c == '/')
		return (63);
	return (-1);
}

/* Standard base64; blanks and line breaks are skipped as YAML folds them. */
static int
b64_decode(const char *in, char **out, size_t *outlen)
{
	char		*buf;
	size_t		 len = 0, i;
	unsigned int	 acc = 0;
	int		 bits = 0, v, pad = 0;

	buf = xmalloc(strlen(in) / 4 * 3 + 4);
	for (i = 0; in[i] != '\0'; i++) {
		if (in[i] == ' ' || in[i] == '\n' || in[i] == '\r' ||
		    in[i] == '\t')
			continue;
		if (in[i] == '=') {
			pad++;
			continue;
		}
		if (pad != 0 || (v = b64_value((unsigned char)in[i])) < 0) {
			free(buf);
			return (-EINVAL);
		}
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (pad > 2 || bits >= 6 || len == 0) {
		free(buf);
		return (-EINVAL);
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return (0);
}

static yaml_node_t *
map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t	*p;
	yaml_node_t		*k;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return (NULL);
	for (p = map->data.mapping.pairs.start;
	    p < map->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(doc, p->key);
		if (k != NULL && k->type == YAML_SCALAR_NODE &&
		    strcmp((char *)k->data.scalar.value, key) == 0)
			return (yaml_document_get_node(doc, p->value));
	}
	return (NULL);
}

/* The scalar at key, NULL when absent; *bad when present but no scalar. */
static const char *
map_str(yaml_document_t *doc, yaml_node_t *map, const char *key, int *bad)
{
	yaml_node_t	*v;

	if ((v = map_get(doc, map, key)) == NULL)
		return (NULL);
	if (v->type != YAML_SCALAR_NODE) {
		*bad = 1;
		return (NULL);
	}
	return ((const char *)v->data.scalar.value);
}

/* The entry of a list like clusters: whose name is name, its sub map. */
static yaml_node_t *
named_entry(yaml_document_t *doc, yaml_node_t *root, const char *list,
    const char *sub, const char *name)
{
	yaml_node_t	*seq, *item;
	yaml_node_item_t *it;
	const char	*n;
	int		 bad = 0;

	seq = map_get(doc, root, list);
	if (seq == NULL || seq->type != YAML_SEQUENCE_NODE)
		return (NULL);
	for (it = seq->data.sequence.items.start;
	    it < seq->data.sequence.items.top; it++) {
		item = yaml_document_get_node(doc, *it);
		n = map_str(doc, item, "name", &bad);
		if (n != NULL && strcmp(n, name) == 0)
			return (map_get(doc, item, sub));
	}
	return (NULL);
}

static char *
resolve_path(const char *dir, const char *file)
{
	char	*out;

	if (file[0] == '/' || dir == NULL)
		return (xstrdup(file));
	xasprintf(&out, "%s/%s", dir, file);
	return (out);
}

/* One credential in its file or -data form; the data form wins. */
static int
credential(yaml_document_t *doc, yaml_node_t *map, const char *key,
    const char *dir, const char *where, char **file, char **data,
    size_t *len, char **cause)
{
	char		 datakey[64];
	const char	*v;
	int		 bad = 0;

	snprintf(datakey, sizeof datakey, "%s-data", key);
	if ((v = map_str(doc, map, datakey, &bad)) != NULL && *v != '\0') {
		if (b64_decode(v, data, len) != 0) {
			xasprintf(cause, "%s: %s is not valid base64", where,
			    datakey);
			return (-EINVAL);
		}
		return (0);
	}
	if ((v = map_str(doc, map, key, &bad)) != NULL && *v != '\0')
		*file = resolve_path(dir, v);
	if (bad) {
		xasprintf(cause, "%s: %s is not a string", where, key);
		return (-EINVAL);
	}
	return (0);
}

static int
is_true(const char *v)
{
	return (v != NULL && (strcmp(v, "true") == 0 ||
	    strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0));
}

static int
parse_document(yaml_document_t *doc, const char *path, const char *dir,
    struct kube_config *cfg, char **cause)
{
	yaml_node_t	*root, *ctx, *cluster, *user;
	const char	*cur, *cname, *uname, *v;
	int		 bad = 0, error;

	root = yaml_document_get_root_node(doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		xasprintf(cause, "%s: not a kubeconfig (no mapping)", path);
		return (-EINVAL);
	}
	cur = map_str(doc, root, "current-context", &bad);
	if (cur == NULL || *cur == '\0') {
		xasprintf(cause, "%s: no current-context", path);
		return (-EINVAL);
	}
	if ((ctx = named_entry(doc, root, "contexts", "context", cur)) ==
	    NULL) {
		xasprintf(cause, "%s: context \"%s\" not found", path, cur);
		return (-EINVAL);
	}
	cname = map_str(doc, ctx, "cluster", &bad);
	uname = map_str(doc, ctx, "user", &bad);
	if (cname == NULL) {
		xasprintf(cause, "%s: context \"%s\" names no cluster", path,
		    cur);
		return (-EINVAL);
	}
	if ((cluster = named_entry(doc, root, "clusters", "cluster",
	    cname)) == NULL) {
		xasprintf(cause, "%s: cluster \"%s\" not found", path, cname);
		return (-EINVAL);
	}
	v = map_str(doc, cluster, "server", &bad);
	if (v == NULL || (strncmp(v, "https://", 8) != 0 &&
	    strncmp(v, "http://", 7) != 0)) {
		xasprintf(cause, "%s: cluster \"%s\" has no http(s) server",
		    path, cname);
		return (-EINVAL);
	}
	cfg->server = xstrdup(v);
	/* A trailing slash would double the one every path starts with. */
	while (strlen(cfg->server) > 8 &&
	    cfg->server[strlen(cfg->server) - 1] == '/')
		cfg->server[strlen(cfg->server) - 1] = '\0';
	cfg->insecure = is_true(map_str(doc, cluster,
	    "insecure-skip-tls-verify", &bad));
	if ((error = credential(doc, cluster, "certificate-authority", dir,
	    path, &cfg->ca_file, &cfg->ca_data, &cfg->ca_len, cause)) != 0)
		return (error);

	if (uname == NULL)
		return (0);
	if ((user = named_entry(doc, root, "users", "user", uname)) == NULL) {
		xasprintf(cause, "%s: user \"%s\" not found", path, uname);
		return (-EINVAL);
	}
	if ((error = credential(doc, user, "client-certificate", dir, path,
	    &cfg->cert_file, &cfg->cert_data, &cfg->cert_len, cause)) != 0)
		return (error);
	if ((error = credential(doc, user, "client-key", dir, path,
	    &cfg->key_file, &cfg->key_data, &cfg->key_len, cause)) != 0)
		return (error);
	if ((v = map_str(doc, user, "token", &bad)) != NULL && *v != '\0')
		cfg->token = xstrdup(v);
	if ((v = map_str(doc, user, "tokenFile", &bad)) != NULL && *v != '\0')
		cfg->token_file = resolve_path(dir, v);
	if (map_get(doc, user, "exec") != NULL &&
	    cfg->token == NULL && cfg->token_file == NULL &&
	    cfg->cert_file == NULL && cfg->cert_data == NULL) {
		xasprintf(cause, "%s: user \"%s\": exec credential plugins "
		    "are not supported", path, uname);
		return (-ENOTSUP);
	}
	if ((cfg->cert_file != NULL || cfg->cert_data != NULL) !=
	    (cfg->key_file != NULL || cfg->key_data != NULL)) {
		xasprintf(cause, "%s: user \"%s\" has a client certificate "
		    "without key or a key without certificate", path, uname);
		return (-EINVAL);
	}
	return (0);
}

static int
load_file(const char *path, struct kube_config *cfg, char **cause)
{
	yaml_parser_t	 parser;
	yaml_document_t	 doc;
	char		*text, *dir, *slash;
	size_t		 len;
	int		 error;

	if ((error = readfile(path, "kubeconfig", KUBE_MAX_FILE, &text, &len,
	    cause)) != 0)
		return (error);
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		xasprintf(cause, "%s: cannot start the YAML parser", path);
		return (-ENOMEM);
	}
	yaml_parser_set_input_string(&parser, (unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		xasprintf(cause, "%s: line %zu: %s", path,
		    parser.problem_mark.line + 1,
		    parser.problem != NULL ? parser.problem : "bad YAML");
		yaml_parser_delete(&parser);
		free(text);
		return (-EINVAL);
	}
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	} else {
		free(dir);
		dir = NULL;
	}
	error = parse_document(&doc, path, dir, cfg, cause);
	free(dir);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	return (error);
}

static int
load_in_cluster(struct kube_config *cfg, char **cause)
{
	const char	*host, *port, *dir;
	char		*token;
	int		 error;

	host = getenv("KUBERNETES_SERVICE_HOST");
	port = getenv("KUBERNETES_SERVICE_PORT");
	if (host == NULL || *host == '\0' || port == NULL || *port == '\0') {
		xasprintf(cause, "not in a cluster (KUBERNETES_SERVICE_HOST "
		    "and KUBERNETES_SERVICE_PORT unset): give a kubeconfig");
		return (-ENOENT);
	}
	if (strchr(host, ':') != NULL)
		xasprintf(&cfg->server, "https://[%s]:%s", host, port);
	else
		xasprintf(&cfg->server, "https://%s:%s", host, port);
	if ((dir = getenv("TOPOAWARE_SA_DIR")) == NULL || *dir == '\0')
		dir = KUBE_SA_DIR;
	xasprintf(&cfg->ca_file, "%s/ca.crt", dir);
	xasprintf(&cfg->token_file, "%s/token", dir);
	/* Fail now on a missing token rather than on the first request. */
	if ((error = readfile(cfg->token_file, "service account token",
	    KUBE_MAX_FILE, &token, NULL, cause)) != 0)
		return (error);
	explicit_bzero(token, strlen(token));
	free(token);
	return (0);
}

int
kube_config_load(const char *path, struct kube_config **out, char **cause)
{
	struct kube_config	*cfg;
	char			*token;
	int			 error;

	*out = NULL;
	cfg = xcalloc(1, sizeof *cfg);
	if (path != NULL)
		error = load_file(path, cfg, cause);
	else
		error = load_in_cluster(cfg, cause);
	if (error == 0 && path != NULL && cfg->token_file != NULL) {
		if ((error = kube_config_token(cfg, &token, cause)) == 0)
			free(token);
	}
	if (error != 0) {
		kube_config_free(cfg);
		return (error);
	}
	*out = cfg;
	return (0);
}

int
kube_config_token(const struct kube_config *cfg, char **token, char **cause)
{
	char	*text, *end;
	int	 error;

	*token = NULL;
	if (cfg->token_file == NULL) {
		if (cfg->token != NULL)
			*token = xstrdup(cfg->token);
		return (0);
	}
	/* Projected tokens are rotated on disk, so read it every time. */
	if ((error = readfile(cfg->token_file, "token file", KUBE_MAX_FILE,
	    &text, NULL, cause)) != 0)
		return (error);
	end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	if (*text == '\0') {
		free(text);
		xasprintf(cause, "%s: empty token", cfg->token_file);
		return (-EINVAL);
	}
	*token = text;
	return (0);
}
