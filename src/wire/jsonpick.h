/*
 * One string picked out of a JSON text without building its tree (sans
 * I/O): the API client reads a large answer of which the caller wants one
 * member, the resourceVersion of a NodeResourceTopology it wrote.
 */
#ifndef TOPOAWARE_JSONPICK_H
#define TOPOAWARE_JSONPICK_H

#include <stddef.h>

/* Containers nested deeper are refused, as jansson refuses them
 * (JSON_PARSER_MAX_DEPTH). */
#define JSONPICK_MAX_DEPTH	2048

/*
 * Checks that buf (len bytes) is one JSON value (RFC 8259: any value at
 * the top, UTF-8, no \u0000) and finds the member at path: keys from the
 * top object down, ending with NULL. Returns 0 with *out that member's
 * string unescaped (NULL when it is absent or not a string), or -1 with
 * *cause saying what is wrong and at which byte. A key met twice in an
 * object on the path is refused (which one would count?); elsewhere keys
 * are not compared, and numbers are checked for their form, not their
 * range.
 */
int	jsonpick(const char *buf, size_t len, const char *const *path,
	    char **out, char **cause);

#endif
