/*
 * fuzz-admin: admin socket requests, split into lines and checked as the
 * daemon does for each connection (the first byte cuts the rest into
 * reads), their arguments decoded as base64 as a dry run's config is, and
 * the same bytes as a reply line topoawarectl decodes.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "adminproto.h"
#include "fuzzlib.h"

struct seen {
	int	lines;
};

static void
b64_check(const char *text)
{
	char	*bytes, *again;
	size_t	 len;

	if (adminproto_unb64(text, strlen(text), &bytes, &len) != 0)
		return;
	again = adminproto_b64(bytes, len);
	if (strcmp(again, text) != 0)
		abort();
	free(again);
	free(bytes);
}

static int
on_line(void *arg, const char *command, const char *const *args,
    size_t nargs, const char *error)
{
	struct seen	*s = arg;
	size_t		 i;

	if ((command == NULL) == (error == NULL))
		abort();
	if (command != NULL) {
		for (i = 0; i < nargs; i++)
			if (args[i] == NULL)
				abort();
		if (args != NULL && args[nargs] != NULL)
			abort();
		/* A config for a dry run: base64 has one text per bytes. */
		for (i = 0; i < nargs; i++)
			b64_check(args[i]);
	}
	/* A caller that stops now and then, as admin.c does when full. */
	return (++s->lines % 7 == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct adminproto	 p;
	struct seen		 s = { 0 };
	json_t			*result = NULL;
	size_t			 step, n, used, rest;
	char			*error = NULL;
	int			 rc;

	if (len == 0)
		return (0);
	step = data[0] != 0 ? data[0] : len;
	adminproto_init(&p);
	for (rest = len - 1; rest > 0; rest -= used) {
		n = rest < step ? rest : step;
		used = adminproto_feed(&p, (const char *)data + len - rest, n,
		    on_line, &s);
		if (used > n)
			abort();
	}
	adminproto_clear(&p);

	rc = adminproto_parse_reply((const char *)data, len, &result, &error);
	if (rc == 1)
		json_decref(result);
	else if (error == NULL)
		abort();
	free(error);
	return (0);
}
