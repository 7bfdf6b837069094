#include "autoconf.h"

/*
 * Tells the kubelet who we are: GetInfo names the driver, the DRA socket
 * and the DRA API versions we serve, newest first because the kubelet
 * takes the first one it knows; NotifyRegistrationStatus is kept for the
 * status command.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grpc.h"
#include "h2.h"
#include "log.h"
#include "pluginregistration.pb-c.h"
#include "registration.h"
#include "xmalloc.h"

#define REG_SERVICE	"/pluginregistration.Registration/"

struct registration {
	struct h2_server	*srv;
	char			*dir;
	char			*path;
	char			*driver;
	char			*endpoint;
	int			 registered;
	char			*error;
	void			(*notify_cb)(void *, int);
	void			*notify_arg;
};

static void
get_info(struct h2_call *call, const uint8_t *req, size_t len, void *arg)
{
	struct registration		*r = arg;
	Pluginregistration__InfoRequest	*in;
	Pluginregistration__PluginInfo	 info =
	    PLUGINREGISTRATION__PLUGIN_INFO__INIT;
	char				*versions[] = {
		(char *)"v1.DRAPlugin", (char *)"v1beta1.DRAPlugin"
	};
	uint8_t				*buf;
	size_t				 n;

	if (h2_refuse_request(call,
	    &pluginregistration__info_request__descriptor, req, len))
		return;
	in = pluginregistration__info_request__unpack(NULL, len, req);
	if (in == NULL) {
		h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT,
		    "cannot decode InfoRequest");
		return;
	}
	pluginregistration__info_request__free_unpacked(in, NULL);
	info.type = (char *)REGISTRATION_TYPE;
	info.name = r->driver;
	info.endpoint = r->endpoint;
	info.n_supported_versions = 2;
	info.supported_versions = versions;
	n = pluginregistration__plugin_info__get_packed_size(&info);
	buf = xmalloc(n + 1);
	pluginregistration__plugin_info__pack(&info, buf);
	h2_reply(call, buf, n);
	free(buf);
}

static void
notify_status(struct h2_call *call, const uint8_t *req, size_t len,
    void *arg)
{
	struct registration			*r = arg;
	Pluginregistration__RegistrationStatus	*st;

	if (h2_refuse_request(call,
	    &pluginregistration__registration_status__descriptor, req, len))
		return;
	st = pluginregistration__registration_status__unpack(NULL, len, req);
	if (st == NULL) {
		h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT,
		    "cannot decode RegistrationStatus");
		return;
	}
	free(r->error);
	r->error = NULL;
	r->registered = st->plugin_registered != 0;
	if (st->error != NULL && *st->error != '\0')
		r->error = xstrdup(st->error);
	if (r->registered)
		log_info("the kubelet registered DRA driver %s", r->driver);
	else
		log_warnx("the kubelet refused DRA driver %s: %s", r->driver,
		    r->error != NULL ? r->error : "(no reason given)");
	pluginregistration__registration_status__free_unpacked(st, NULL);
	/* RegistrationStatusResponse is empty: zero bytes. */
	h2_reply(call, NULL, 0);
	if (r->notify_cb != NULL)
		r->notify_cb(r->notify_arg, r->registered);
}

struct registration *
registration_new(struct event_base *base, const char *kubelet_dir,
    const char *driver, const char *endpoint)
{
	struct registration	*r;

	r = xcalloc(1, sizeof *r);
	r->srv = h2_server_new(base, "registration");
	xasprintf(&r->dir, "%s/plugins_registry", kubelet_dir);
	xasprintf(&r->path, "%s/%s-reg.sock", r->dir, driver);
	r->driver = xstrdup(driver);
	r->endpoint = xstrdup(endpoint);
	h2_server_add(r->srv, REG_SERVICE "GetInfo", get_info, r);
	h2_server_add(r->srv, REG_SERVICE "NotifyRegistrationStatus",
	    notify_status, r);
	return (r);
}

void
registration_free(struct registration *r)
{
	if (r == NULL)
		return;
	h2_server_free(r->srv);
	free(r->dir);
	free(r->path);
	free(r->driver);
	free(r->endpoint);
	free(r->error);
	free(r);
}

int
registration_start(struct registration *r, char **cause)
{
	int	rc;

	/* The kubelet makes it; we only fill the gap before it has. */
	if (mkdir(r->dir, 0750) != 0 && errno != EEXIST) {
		rc = -errno;
		xasprintf(cause, "mkdir %s: %s", r->dir, strerror(errno));
		return (rc);
	}
	return (h2_server_listen(r->srv, r->path, cause));
}

const char *
registration_socket(const struct registration *r)
{
	return (r->path);
}

int
registration_registered(const struct registration *r)
{
	return (r->registered);
}

const char *
registration_error(const struct registration *r)
{
	return (r->error);
}

void
registration_on_notify(struct registration *r, void (*cb)(void *, int),
    void *arg)
{
	r->notify_cb = cb;
	r->notify_arg = arg;
}
