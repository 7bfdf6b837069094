#include "autoconf.h"
#include <criterion/criterion.h>
#include "testlib.h"
