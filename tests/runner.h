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

/*
 * Called by a test that cannot run here, before it asserts anything, and
 * followed by its return: prints "SKIP: SUITE / TEST: why" and counts it.
 * CUnit still counts such a test as passed; the runner's last line,
 * "skipped at run time: N", lets tools/test.sh count it as skipped
 * instead.
 */
void	tests_skip(const char *why);

/* The monotonic clock in milliseconds (tests that time the real loop). */
unsigned long long tests_now_ms(void);

#endif
