/*
 * runner.h - contract between tests/runner.c and each test directory.
 */
#ifndef NLMD_TESTS_RUNNER_H
#define NLMD_TESTS_RUNNER_H

/*
 * Add this binary's suites to the CUnit registry.  Defined once per test
 * directory (tests/<module>/suites.c).  Returns 0 on success.
 */
int	tests_register(void);

/* The monotonic clock in milliseconds (tests that time the real loop). */
unsigned long long tests_now_ms(void);

#endif
