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
 * The fields this encoder writes, each text with its length (0: not set,
 * as proto3 leaves an empty string out). depth says which of the nested
 * messages are there: linux, its resources, their cpu.
 */
#define NRIUPD_LINUX		1
#define NRIUPD_RESOURCES	2
#define NRIUPD_CPU		3
struct nriupd_cpu {
	const char	*id;		/* container_id */
	size_t		 idlen;
	int		 depth;		/* 0, or NRIUPD_LINUX to _CPU */
	int		 has_shares;	/* cpu's shares (an OptionalUInt64) */
	uint64_t	 shares;	/* its value */
	const char	*cpus;
	size_t		 cpuslen;
	const char	*mems;
	size_t		 memslen;
	int		 ignore_failure;
};

/* The bytes of f, and writing them, as nriupd_size and nriupd_put do for
 * the message f says. */
size_t	 nriupd_cpu_size(const struct nriupd_cpu *f);
uint8_t	*nriupd_cpu_put(const struct nriupd_cpu *f, int field, uint8_t *p);

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
