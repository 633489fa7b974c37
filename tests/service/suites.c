/*
 * suites.c - the NLM service test binary's suites (see tests/runner.h).
 * The network namespace is made before any suite runs.
 */
#include "tests/runner.h"

#include <stdio.h>

#include "svctest.h"

int
tests_register(void)
{
	if (!ts_namespace())
		printf("test-service: no network namespace (%s): every "
		    "test that needs one is skipped\n", ts_skip_reason());
	return ts_register_turn() || ts_register_notify() ||
	    ts_register_listen() || ts_register_transport() ||
	    ts_register_requests() || ts_register_ctl() ||
	    ts_register_share() || ts_register_svcmgr();
}
