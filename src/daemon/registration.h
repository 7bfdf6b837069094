/*
 * The kubelet plugin registration service (pluginregistration v1) for the
 * DRA driver: a gRPC server on <kubelet-dir>/plugins_registry/<driver>-reg.sock
 * answering GetInfo with the DRA endpoint and recording what the kubelet
 * says in NotifyRegistrationStatus. Start the DRA server first: the
 * kubelet may call it as soon as this socket appears.
 */
#ifndef TOPOAWARE_REGISTRATION_H
#define TOPOAWARE_REGISTRATION_H

#include <event2/event.h>

#define REGISTRATION_TYPE	"DRAPlugin"

struct registration;

struct registration *registration_new(struct event_base *,
	    const char *kubelet_dir, const char *driver, const char *endpoint);
void	registration_free(struct registration *);
/* Creates plugins_registry when missing and listens. */
int	registration_start(struct registration *, char **);
const char *registration_socket(const struct registration *);
/* What the kubelet last said: 1 registered, 0 not (yet); the error text
 * of a refusal, or NULL. */
int	registration_registered(const struct registration *);
const char *registration_error(const struct registration *);
/* Called after each NotifyRegistrationStatus, with what it said. */
void	registration_on_notify(struct registration *,
	    void (*)(void *, int registered), void *);

#endif
