/* pool.c: not written yet. */
#include "autoconf.h"
#include "pool.h"
