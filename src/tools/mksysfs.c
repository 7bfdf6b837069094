#include "autoconf.h"
#include <stdio.h>
int
main(void)
{
	fprintf(stderr, "not written yet\n");
	return (1);
}
