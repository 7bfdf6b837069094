/* cpualloc.c: not written yet. */
#include "autoconf.h"
#include "cpualloc.h"
