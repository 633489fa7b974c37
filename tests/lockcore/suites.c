/*
 * suites.c - the lockcore test binary's suites (see tests/runner.h).
 */
#include "tests/runner.h"

#include "lktest.h"

int
tests_register(void)
{
	if (lt_register_rules() != 0 || lt_register_wait() != 0 ||
	    lt_register_misc() != 0 || lt_register_grace() != 0 ||
	    lt_register_model() != 0)
		return -1;
	return 0;
}
