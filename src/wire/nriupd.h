/*
 * The bytes of an NRI UpdateContainersRequest (proto/nri.proto), made
 * without protobuf-c's packer: it sizes every nested message again at
 * each level it packs, and a request carrying the new CPUs of a thousand
 * shared containers is five levels deep. Here each size is computed once.
 * The bytes are the ones protobuf-c would write; a field this encoder
 * does not know is packed by protobuf-c.
 */
#ifndef TOPOAWARE_NRIUPD_H
#define TOPOAWARE_NRIUPD_H

#include <stddef.h>
#include <stdint.h>

#include "nri.pb-c.h"

/*
 * The bytes u takes as a field of a message (UpdateContainersRequest's
 * update, 1, or a reply's, 2): tag, length and body. Messages merge when
 * their bytes are joined, so a reply packed by protobuf-c without its
 * updates, followed by these, is the reply with them.
 */
size_t	 nriupd_size(const Nri__Pkg__Api__V1alpha1__ContainerUpdate *u);
/* Writes them (nriupd_size bytes) at p as field (1 to 15); returns the
 * end. */
uint8_t	*nriupd_put(const Nri__Pkg__Api__V1alpha1__ContainerUpdate *u,
	    int field, uint8_t *p);

#endif
