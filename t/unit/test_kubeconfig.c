/*
 * test_kubeconfig.c: finding the API server and credentials (R-KUBE). The
 * kubelet's own kubeconfig form (file paths, relative to the kubeconfig's
 * folder), the inline base64 -data form, current-context choosing among
 * several, tokens and token files, the in-cluster service account, and
 * every broken input named in its error.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube.h"
#include "testlib.h"
#include "xmalloc.h"

static char *
write_file(const char *dir, const char *name, const char *text)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert(f != NULL, "%s", path);
	cr_assert(fputs(text, f) >= 0);
	cr_assert(fclose(f) == 0);
	return (path);
}

static struct kube_config *
load_ok(const char *path)
{
	struct kube_config	*cfg = NULL;
	char			*cause = NULL;
	int			 rc;

	rc = kube_config_load(path, &cfg, &cause);
	cr_assert(rc == 0, "%s: %s", path ? path : "in-cluster",
	    cause ? cause : "?");
	cr_assert(cfg != NULL);
	return (cfg);
}

/* Loading fails; the error names want (a file, a context). */
static void
load_fails(const char *path, const char *want)
{
	struct kube_config	*cfg = NULL;
	char			*cause = NULL;
	int			 rc;

	rc = kube_config_load(path, &cfg, &cause);
	cr_assert(rc < 0, "%s loaded", path ? path : "in-cluster");
	cr_assert(cfg == NULL);
	cr_assert(cause != NULL);
	cr_assert(strstr(cause, want) != NULL, "\"%s\" lacks \"%s\"", cause,
	    want);
	free(cause);
}

/* The shape kubeadm writes for the kubelet (/etc/kubernetes/kubelet.conf). */
static const char kubelet_conf[] =
    "apiVersion: v1\n"
    "clusters:\n"
    "- cluster:\n"
    "    certificate-authority: pki/ca.crt\n"
    "    server: https://192.0.2.10:6443\n"
    "  name: kubernetes\n"
    "contexts:\n"
    "- context:\n"
    "    cluster: kubernetes\n"
    "    user: system:node:node-a\n"
    "  name: system:node:node-a@kubernetes\n"
    "current-context: system:node:node-a@kubernetes\n"
    "kind: Config\n"
    "preferences: {}\n"
    "users:\n"
    "- name: system:node:node-a\n"
    "  user:\n"
    "    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"
    "    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n";

Test(kubeconfig, kubelet_file_form)
{
	struct kube_config	*cfg;
	char			*dir, *path, *ca;

	dir = testlib_tmpdir();
	path = write_file(dir, "kubelet.conf", kubelet_conf);
	cfg = load_ok(path);
	cr_assert_str_eq(cfg->server, "https://192.0.2.10:6443");
	/* Relative to the kubeconfig's folder, as kubectl resolves it. */
	xasprintf(&ca, "%s/pki/ca.crt", dir);
	cr_assert_str_eq(cfg->ca_file, ca);
	cr_assert_null(cfg->ca_data);
	cr_assert_str_eq(cfg->cert_file,
	    "/var/lib/kubelet/pki/kubelet-client-current.pem");
	cr_assert_str_eq(cfg->key_file, cfg->cert_file);
	cr_assert_eq(cfg->insecure, 0);
	cr_assert_null(cfg->token);
	cr_assert_null(cfg->token_file);
	kube_config_free(cfg);
	free(ca);
	free(path);
	free(dir);
}

Test(kubeconfig, data_form_decoded)
{
	struct kube_config	*cfg;
	char			*dir, *path;

	dir = testlib_tmpdir();
	/* base64 of "ca-bytes", "cert-bytes\n" and "key", the last folded. */
	path = write_file(dir, "config",
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster:\n"
	    "    server: https://[2001:db8::1]:6443/\n"
	    "    certificate-authority-data: Y2EtYnl0ZXM=\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate-data: Y2VydC1ieXRlcwo=\n"
	    "    client-key-data: >-\n"
	    "      a2\n"
	    "      V5\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context: {cluster: c, user: u}\n"
	    "current-context: x\n");
	cfg = load_ok(path);
	cr_assert_str_eq(cfg->server, "https://[2001:db8::1]:6443");
	cr_assert_eq(cfg->ca_len, 8);
	cr_assert(memcmp(cfg->ca_data, "ca-bytes", 8) == 0);
	cr_assert_eq(cfg->cert_len, 11);
	cr_assert(memcmp(cfg->cert_data, "cert-bytes\n", 11) == 0);
	cr_assert_eq(cfg->key_len, 3);
	cr_assert(memcmp(cfg->key_data, "key", 3) == 0);
	cr_assert_null(cfg->ca_file);
	cr_assert_null(cfg->cert_file);
	cr_assert_null(cfg->key_file);
	kube_config_free(cfg);
	free(path);
	free(dir);
}

Test(kubeconfig, current_context_chooses)
{
	struct kube_config	*cfg;
	char			*dir, *path, *tok = NULL, *cause = NULL;

	dir = testlib_tmpdir();
	path = write_file(dir, "config",
	    "clusters:\n"
	    "- name: one\n"
	    "  cluster: {server: 'http://127.0.0.1:1'}\n"
	    "- name: two\n"
	    "  cluster:\n"
	    "    server: http://127.0.0.1:2\n"
	    "    insecure-skip-tls-verify: true\n"
	    "users:\n"
	    "- name: a\n"
	    "  user: {token: token-a}\n"
	    "- name: b\n"
	    "  user: {token: token-b}\n"
	    "contexts:\n"
	    "- name: first\n"
	    "  context: {cluster: one, user: a}\n"
	    "- name: second\n"
	    "  context: {cluster: two, user: b}\n"
	    "current-context: second\n");
	cfg = load_ok(path);
	cr_assert_str_eq(cfg->server, "http://127.0.0.1:2");
	cr_assert_eq(cfg->insecure, 1);
	cr_assert(kube_config_token(cfg, &tok, &cause) == 0);
	cr_assert_str_eq(tok, "token-b");
	free(tok);
	kube_config_free(cfg);
	free(path);
	free(dir);
}

Test(kubeconfig, token_file_reread)
{
	struct kube_config	*cfg;
	char			*dir, *path, *tpath, *tok = NULL, *cause = NULL;

	dir = testlib_tmpdir();
	tpath = write_file(dir, "token", "first-token\n");
	path = write_file(dir, "config",
	    "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
	    "users: [{name: u, user: {tokenFile: token}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
	    "current-context: x\n");
	cfg = load_ok(path);
	cr_assert_str_eq(cfg->token_file, tpath);
	cr_assert(kube_config_token(cfg, &tok, &cause) == 0);
	cr_assert_str_eq(tok, "first-token");
	free(tok);
	/* A rotated token is picked up by the next request. */
	free(write_file(dir, "token", "second-token"));
	cr_assert(kube_config_token(cfg, &tok, &cause) == 0);
	cr_assert_str_eq(tok, "second-token");
	free(tok);
	cr_assert(unlink(tpath) == 0);
	cr_assert(kube_config_token(cfg, &tok, &cause) == -ENOENT);
	cr_assert_null(tok);
	cr_assert(strstr(cause, tpath) != NULL, "%s", cause);
	free(cause);
	kube_config_free(cfg);
	free(tpath);
	free(path);
	free(dir);
}

Test(kubeconfig, broken_inputs_named)
{
	char	*dir, *path;

	dir = testlib_tmpdir();
	xasprintf(&path, "%s/absent", dir);
	load_fails(path, path);
	free(path);

	path = write_file(dir, "bad-yaml", "clusters: [unclosed\n");
	load_fails(path, path);
	free(path);

	path = write_file(dir, "no-context", "clusters: []\n");
	load_fails(path, "current-context");
	free(path);

	path = write_file(dir, "missing-context", "current-context: gone\n"
	    "contexts: [{name: other, context: {cluster: c}}]\n");
	load_fails(path, "\"gone\"");
	free(path);

	path = write_file(dir, "missing-cluster", "current-context: x\n"
	    "contexts: [{name: x, context: {cluster: nowhere}}]\n");
	load_fails(path, "\"nowhere\"");
	free(path);

	path = write_file(dir, "missing-user", "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: 'https://192.0.2.1'}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: nobody}}]\n");
	load_fails(path, "\"nobody\"");
	free(path);

	path = write_file(dir, "no-server", "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: 'ftp://192.0.2.1'}}]\n"
	    "contexts: [{name: x, context: {cluster: c}}]\n");
	load_fails(path, "server");
	free(path);

	path = write_file(dir, "bad-base64", "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: 'https://192.0.2.1',"
	    " certificate-authority-data: 'not*base64'}}]\n"
	    "contexts: [{name: x, context: {cluster: c}}]\n");
	load_fails(path, "certificate-authority-data");
	free(path);

	path = write_file(dir, "missing-token-file", "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: 'https://192.0.2.1'}}]\n"
	    "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n");
	load_fails(path, "/nonexistent/token");
	free(path);

	path = write_file(dir, "cert-no-key", "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: 'https://192.0.2.1'}}]\n"
	    "users: [{name: u, user: {client-certificate: c.pem}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n");
	load_fails(path, "key");
	free(path);
	free(dir);
}

Test(kubeconfig, in_cluster)
{
	struct kube_config	*cfg;
	char			*dir, *ca, *tok = NULL, *cause = NULL;

	dir = testlib_tmpdir();
	free(write_file(dir, "token", "sa-token\n"));
	free(write_file(dir, "ca.crt", "not checked here\n"));
	cr_assert(setenv("TOPOAWARE_SA_DIR", dir, 1) == 0);
	cr_assert(setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1) == 0);
	cr_assert(setenv("KUBERNETES_SERVICE_PORT", "443", 1) == 0);
	cfg = load_ok(NULL);
	cr_assert_str_eq(cfg->server, "https://10.96.0.1:443");
	xasprintf(&ca, "%s/ca.crt", dir);
	cr_assert_str_eq(cfg->ca_file, ca);
	cr_assert(kube_config_token(cfg, &tok, &cause) == 0);
	cr_assert_str_eq(tok, "sa-token");
	free(tok);
	kube_config_free(cfg);

	cr_assert(setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1) == 0);
	cfg = load_ok(NULL);
	cr_assert_str_eq(cfg->server, "https://[fd00::1]:443");
	kube_config_free(cfg);

	free(ca);
	xasprintf(&ca, "%s/token", dir);
	cr_assert(unlink(ca) == 0);
	load_fails(NULL, ca);

	cr_assert(unsetenv("KUBERNETES_SERVICE_HOST") == 0);
	load_fails(NULL, "KUBERNETES_SERVICE_HOST");
	free(ca);
	free(dir);
}

Test(kubeconfig, free_null)
{
	kube_config_free(NULL);
}
