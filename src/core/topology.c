/* topology.c: not written yet. */
#include "autoconf.h"
#include "topology.h"
