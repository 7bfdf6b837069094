/*
 * Driving the daemon's HTTP/2 servers (h2.c) from fuzz input: a client
 * connects over the server's own unix socket, writes the bytes, closes
 * its side, and the loop runs until the server has let the connection
 * go. The server's answers are read and dropped.
 */
#ifndef TOPOAWARE_H2FUZZ_H
#define TOPOAWARE_H2FUZZ_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

/* One loop for the process, and a quiet log. */
struct event_base *h2fuzz_base(void);

/* Sends data to the server listening at path and waits as above. */
void	h2fuzz_exchange(const char *path, const uint8_t *, size_t);

/*
 * The bytes a gRPC client sends for one unary call of path with message
 * msg: the preface, SETTINGS, HEADERS (literal fields) and DATA frames
 * ending the stream. *outlen bytes, caller frees.
 */
uint8_t	*h2fuzz_call(const char *path, const uint8_t *msg, size_t len,
	    size_t *outlen);

#endif
