/* quantity.c: not written yet. */
#include "autoconf.h"
#include "quantity.h"
