/*
 * runner.c - the one main() shared by every CUnit test binary.
 *
 * Each test directory provides tests_register(), which adds its suites to
 * the registry.  The exit status is non-zero when anything failed, so make
 * and CI see failures.  NLMD_TEST_SEED and NLMD_TEST_LONG are read by the
 * randomized tests themselves (see tests/runner.h).
 */
#include "tests/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <CUnit/Basic.h>

int
main(int argc, char **argv)
{
	unsigned int failed;

	(void)argc;
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "%s: cannot initialise CUnit\n", argv[0]);
		return 2;
	}
	if (tests_register() != 0) {
		fprintf(stderr, "%s: cannot register suites\n", argv[0]);
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed == 0 ? 0 : 1;
}

unsigned long long
tests_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 +
	    (unsigned long long)ts.tv_nsec / 1000000;
}
