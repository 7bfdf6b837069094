/*
 * cdi-write: cdi.c from the command line, for t/integration/
 * test_cdi_schema.py, which checks what it writes with an independent
 * JSON schema validator.
 *
 *	cdi-write DIR DRIVER UID EDIT...	write the claim's spec, print
 *						its path and device ids
 *	cdi-write -r DIR DRIVER UID		remove it
 *
 * Exits 0, or 1 with the cause on stderr.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi.h"

int
main(int argc, char **argv)
{
	char	*cause = NULL, *s;
	int	 rc, i;

	if (argc == 5 && strcmp(argv[1], "-r") == 0)
		rc = cdi_remove(NULL, argv[2], argv[3], argv[4], &cause);
	else if (argc >= 4) {
		rc = cdi_write(NULL, argv[1], argv[2], argv[3],
		    (const char *const *)argv + 4, (size_t)(argc - 4), 0,
		    &cause);
		if (rc == 0) {
			s = cdi_path(argv[1], argv[2], argv[3]);
			printf("%s\n", s);
			free(s);
			for (i = 0; i < argc - 4; i++) {
				s = cdi_device_id(argv[2], argv[3], (size_t)i);
				printf("%s\n", s);
				free(s);
			}
		}
	} else {
		fprintf(stderr, "usage: cdi-write DIR DRIVER UID EDIT...\n"
		    "       cdi-write -r DIR DRIVER UID\n");
		return (2);
	}
	if (rc != 0) {
		fprintf(stderr, "cdi-write: %s\n", cause);
		free(cause);
		return (1);
	}
	if (fflush(stdout) != 0)
		return (1);
	return (0);
}
