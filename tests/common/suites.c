/*
 * suites.c - the common test binary's suites (see tests/runner.h).
 */
#include "tests/runner.h"

#include <CUnit/CUnit.h>

#include "ct.h"

int
tests_register(void)
{
	/*
	 * Tests of reported, unfixed bugs are registered inactive (set
	 * NLMD_TEST_KNOWN_BUGS=1 to run them): listed, not failures.
	 */
	CU_set_fail_on_inactive(CU_FALSE);
	if (ct_register_ev() != 0 || ct_register_config() != 0 ||
	    ct_register_log() != 0 ||
	    ct_register_sdnotify() != 0 || ct_register_privdrop() != 0 ||
	    ct_register_nfsconf() != 0 || ct_register_netaddr() != 0 ||
	    ct_register_status() != 0)
		return -1;
	return 0;
}
