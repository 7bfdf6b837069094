/*
 * Helpers shared by the fuzz targets: copies of the input as C strings,
 * a private scratch folder for decoders that read files, and a small
 * synthetic machine for the targets that push what they decoded on into
 * the policy. Everything here lives until the process exits.
 */
#ifndef TOPOAWARE_FUZZLIB_H
#define TOPOAWARE_FUZZLIB_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct topology;
struct config;

/* Every target's entry point; replay.c calls it too. */
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The input as a NUL-terminated string (caller frees); bytes after an
 * embedded NUL are kept but a C reader stops there. */
char	*fuzz_str(const uint8_t *, size_t);

/* A folder of our own, made on first use and removed at exit. */
const char *fuzz_dir(void);
/* Empties a folder of fuzz_dir's: its files, and what was moved aside. */
void	fuzz_tidy(const char *dir);
/* Writes len bytes to path (made or truncated); aborts on failure, as a
 * scratch file that cannot be written makes the run meaningless. */
void	fuzz_write(const char *path, const void *, size_t);

/* 2 packages, a NUMA node each, 2 cores of 2 threads per node: 8 CPUs. */
const struct topology *fuzz_topology(void);
/* The default config. */
const struct config *fuzz_config(void);

/* Reinstates a saved state (policy_restore on fuzz_topology with
 * fuzz_config) and aborts unless a refusal says why and what is reinstated
 * saves as text that reinstates again. The document stays the caller's. */
void	fuzz_restore(json_t *);

/* Splits the input at its NUL bytes: the i-th piece (no NUL), or an empty
 * one when there are fewer. */
void	fuzz_piece(const uint8_t *, size_t, int i, const uint8_t **,
	    size_t *);

#endif
