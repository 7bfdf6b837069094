/* config.c: not written yet. */
#include "autoconf.h"
#include "config.h"
