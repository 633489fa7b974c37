/*
 * runner.c - the one main() shared by every CUnit test binary.
 *
 * Each test directory provides tests_register(), which adds its suites to
 * the registry.  The exit status is non-zero when anything failed, so make
 * and CI see failures.  NLMD_TEST_SEED and NLMD_TEST_LONG are read by the
 * randomized tests themselves (see tests/runner.h).  NLMD_TEST_SUITE, when
 * set, runs only the suites whose names contain it, and NLMD_TEST_CASE
 * only their tests whose names contain it (to repeat one test while
 * chasing a rare failure); a selection that matches nothing is an error.
 * NLMD_TEST_TIMES, when set, runs the (selected) tests one by one and
 * prints each one's wall-clock time ("time: 1.23 s suite / test"), to
 * find where a binary's minute goes (CUnit's own "Elapsed time" is CPU
 * time).
 * NLMD_TEST_SKIP="why: name; name ..." marks the tests whose names
 * contain one of the names inactive (CUnit counts them as such) and says
 * so, with the reason, for each; a name that matches no test is an error,
 * so a renamed test is not silently run again.
 * NLMD_TEST_TIMEOUT is the watchdog's limit in seconds (default 300, none
 * with NLMD_TEST_LONG; 0 turns it off): a test still running that long
 * after it started ends the binary with "FAIL: TIMEOUT ..." naming it and
 * exit status 3, so that a test that loops or waits forever fails in
 * minutes and says which, rather than at CI's time limit.  The longest
 * tests take about 40 s (the store's, under TSan).
 */
#include "tests/runner.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

/*
 * Apply NLMD_TEST_SKIP (see above): 0, or -1 with the reason printed.
 */
static int
skip_tests(const char *prog, const char *spec)
{
	char *buf, *why, *names, *name, *save = NULL;
	CU_pSuite s;
	CU_pTest t;
	int rc = 0, hit;

	if ((buf = strdup(spec)) == NULL)
		return -1;
	if ((names = strchr(buf, ':')) == NULL) {
		fprintf(stderr, "%s: NLMD_TEST_SKIP: no \"why:\" before the "
		    "names\n", prog);
		free(buf);
		return -1;
	}
	*names++ = '\0';
	why = buf;
	/* Said below, test by test: not failures. */
	CU_set_fail_on_inactive(CU_FALSE);
	for (name = strtok_r(names, ";", &save); name != NULL;
	    name = strtok_r(NULL, ";", &save)) {
		while (*name == ' ')
			name++;
		if (*name == '\0')
			continue;
		hit = 0;
		for (s = CU_get_registry()->pSuite; s != NULL; s = s->pNext)
			for (t = s->pTest; t != NULL; t = t->pNext)
				if (strstr(t->pName, name) != NULL) {
					CU_set_test_active(t, CU_FALSE);
					printf("SKIP: %s / %s: %s\n", s->pName,
					    t->pName, why);
					hit++;
				}
		if (hit == 0) {
			fprintf(stderr, "%s: NLMD_TEST_SKIP: no test named "
			    "'%s'\n", prog, name);
			rc = -1;
		}
	}
	free(buf);
	return rc;
}

/*
 * The watchdog (NLMD_TEST_TIMEOUT above): every test's function is
 * replaced by wd_run(), which arms a timer, calls it and disarms the
 * timer.  A fatal assertion leaves the test by longjmp, past the disarm;
 * the next test arms the timer anew and main() disarms it at the end.
 * Not alarm(): the store's damage tests give their children one of their
 * own.  The timer's signal reaches the main thread (the store's threads
 * block every signal), whose handler writes a message made before the
 * timer was armed and _exit()s; stdout is line-buffered so that no more
 * than a line of the report before it is lost.
 */
struct wd_test {
	CU_pTest	 wt_test;
	CU_TestFunc	 wt_func;
};
static struct wd_test *wd_tests;
static size_t wd_count;
static unsigned int wd_secs;
static timer_t wd_timer;
static char wd_msg[512];
static size_t wd_len;

static void
wd_fire(int sig)
{
	(void)sig;
	(void)write(STDERR_FILENO, wd_msg, wd_len);
	_exit(3);
}

static void
wd_arm(unsigned int secs)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = secs;
	(void)timer_settime(wd_timer, 0, &its, NULL);
}

static void
wd_run(void)
{
	CU_pSuite s = CU_get_current_suite();
	CU_pTest t = CU_get_current_test();
	CU_TestFunc f = NULL;
	size_t i;
	int n;

	for (i = 0; i < wd_count; i++)
		if (wd_tests[i].wt_test == t)
			f = wd_tests[i].wt_func;
	if (f == NULL) {
		CU_FAIL_FATAL("the watchdog lost this test's function");
		return;
	}
	wd_arm(0);
	n = snprintf(wd_msg, sizeof(wd_msg), "\nFAIL: TIMEOUT %s / %s: still "
	    "running %u s after it started (NLMD_TEST_TIMEOUT); the binary "
	    "stops here\n", s != NULL ? s->pName : "?",
	    t != NULL ? t->pName : "?", wd_secs);
	wd_len = n < 0 ? 0 : (size_t)n < sizeof(wd_msg) ? (size_t)n :
	    sizeof(wd_msg) - 1;
	wd_arm(wd_secs);
	f();
	wd_arm(0);
}

/*
 * Read NLMD_TEST_TIMEOUT and put the watchdog in front of every test:
 * 0, or -1 with the reason printed.
 */
static int
wd_setup(const char *prog)
{
	const char *v = getenv("NLMD_TEST_TIMEOUT"), *lng;
	struct sigevent sev;
	struct sigaction sa;
	CU_pSuite s;
	CU_pTest t;
	char *end;
	unsigned long secs;
	size_t n = 0;

	lng = getenv("NLMD_TEST_LONG");
	secs = lng != NULL && *lng != '\0' && strcmp(lng, "0") != 0 ? 0 : 300;
	if (v != NULL && *v != '\0') {
		secs = strtoul(v, &end, 10);
		if (*end != '\0' || secs > 86400) {
			fprintf(stderr, "%s: NLMD_TEST_TIMEOUT '%s': not a "
			    "number of seconds up to 86400\n", prog, v);
			return -1;
		}
	}
	if (secs == 0)
		return 0;
	for (s = CU_get_registry()->pSuite; s != NULL; s = s->pNext)
		for (t = s->pTest; t != NULL; t = t->pNext)
			n++;
	if ((wd_tests = calloc(n == 0 ? 1 : n, sizeof(*wd_tests))) == NULL) {
		fprintf(stderr, "%s: watchdog: out of memory\n", prog);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wd_fire;
	sigemptyset(&sa.sa_mask);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 1;
	if (sigaction(SIGRTMIN + 1, &sa, NULL) == -1 ||
	    timer_create(CLOCK_MONOTONIC, &sev, &wd_timer) == -1) {
		fprintf(stderr, "%s: watchdog: %s\n", prog, strerror(errno));
		return -1;
	}
	for (s = CU_get_registry()->pSuite; s != NULL; s = s->pNext)
		for (t = s->pTest; t != NULL; t = t->pNext) {
			wd_tests[wd_count].wt_test = t;
			wd_tests[wd_count++].wt_func = t->pTestFunc;
			t->pTestFunc = wd_run;
		}
	wd_secs = (unsigned int)secs;
	setvbuf(stdout, NULL, _IOLBF, 0);
	return 0;
}

/* Tests that called tests_skip() (counted by CUnit as passed). */
static unsigned int skipped;

void
tests_skip(const char *why)
{
	CU_pSuite s = CU_get_current_suite();
	CU_pTest t = CU_get_current_test();

	printf("\nSKIP: %s / %s: %s\n", s != NULL ? s->pName : "?",
	    t != NULL ? t->pName : "?", why);
	skipped++;
}

/* What the last run counted as failed (each run clears the one before). */
static unsigned int
run_failures(void)
{
	return CU_get_number_of_failures() + CU_get_number_of_suites_failed();
}

int
main(int argc, char **argv)
{
	unsigned int failed = 0, ran = 0;
	const char *suite, *tcase, *skip, *times;
	unsigned long long t0;
	CU_pSuite s;
	CU_pTest t;

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
	if (wd_setup(argv[0]) != 0) {
		CU_cleanup_registry();
		return 2;
	}
	skip = getenv("NLMD_TEST_SKIP");
	if (skip != NULL && *skip != '\0' && skip_tests(argv[0], skip) != 0) {
		CU_cleanup_registry();
		return 2;
	}
	suite = getenv("NLMD_TEST_SUITE");
	tcase = getenv("NLMD_TEST_CASE");
	times = getenv("NLMD_TEST_TIMES");
	if (times != NULL && *times != '\0' && tcase == NULL)
		tcase = "";
	if ((suite != NULL && *suite != '\0') || tcase != NULL) {
		for (s = CU_get_registry()->pSuite; s != NULL; s = s->pNext) {
			if (suite != NULL && strstr(s->pName, suite) == NULL)
				continue;
			if (tcase == NULL) {
				CU_basic_run_suite(s);
				failed += run_failures();
				ran++;
				continue;
			}
			for (t = s->pTest; t != NULL; t = t->pNext)
				if (strstr(t->pName, tcase) != NULL) {
					t0 = tests_now_ms();
					CU_basic_run_test(s, t);
					failed += run_failures();
					ran++;
					if (times != NULL && *times != '\0')
						fprintf(stderr, "time: %.2f s %s / "
						    "%s\n", (double)(tests_now_ms() -
						    t0) / 1000, s->pName, t->pName);
				}
		}
		if (ran == 0) {
			fprintf(stderr, "%s: no test matches NLMD_TEST_SUITE "
			    "'%s' and NLMD_TEST_CASE '%s'\n", argv[0],
			    suite != NULL ? suite : "",
			    tcase != NULL ? tcase : "");
			CU_cleanup_registry();
			return 2;
		}
	} else {
		CU_basic_run_tests();
		failed = run_failures();
	}
	if (wd_secs != 0)
		wd_arm(0);
	CU_cleanup_registry();
	free(wd_tests);
	/* Read by tools/test.sh: these are not passes. */
	if (skipped > 0)
		printf("skipped at run time: %u\n", skipped);
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
