/*
 * test_log.c - the rate limiter for messages peers can trigger: a burst
 * passes, the rest is dropped and counted, the next window says how many.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ct.h"
#include "log.h"

static unsigned long long fake_ms;

static unsigned long long
fake_clock(void)
{
	return fake_ms;
}

/* Run fn with stderr going to a file; return what was written. */
static char *
capture(void (*fn)(void))
{
	static char buf[65536];
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t n;

	CU_ASSERT_FATAL(f != NULL && saved != -1);
	fflush(stderr);
	dup2(fileno(f), 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static unsigned
count(const char *s, const char *what)
{
	unsigned n = 0;

	for (; (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

static struct log_rl rl;

static void
flood(void)
{
	int i;

	for (i = 0; i < 1000; i++)
		log_rl_warnx(&rl, "bad request %d from a peer", i);
}

static void
later(void)
{
	fake_ms += LOG_RL_WINDOW_MS;
	log_rl_warnx(&rl, "bad request %d from a peer", -1);
}

static void
test_rate_limit(void)
{
	const char *out;

	log_init("test", 1, 0);
	log_rl_set_clock(fake_clock);
	fake_ms = 1000;
	memset(&rl, 0, sizeof(rl));
	out = capture(flood);
	CU_ASSERT_EQUAL(count(out, "bad request"), LOG_RL_BURST);
	CU_ASSERT_EQUAL(count(out, "dropped"), 0);
	out = capture(later);
	CU_ASSERT_EQUAL(count(out, "990 more message(s) like \"bad request %d "
	    "from a peer...\" dropped"), 1);
	CU_ASSERT_EQUAL(count(out, "bad request -1 from a peer"), 1);
	/* The new window is clean: nothing dropped, nothing reported. */
	out = capture(later);
	CU_ASSERT_EQUAL(count(out, "dropped"), 0);
	log_rl_set_clock(NULL);
}

static struct log_rl rl2;

static void
flood2(void)
{
	int i;

	for (i = 0; i < 1000; i++)
		log_rl_warnx(&rl2, "bad request %d from a peer", i);
}

static void
later2(void)
{
	fake_ms += LOG_RL_WINDOW_MS;
	log_rl_warnx(&rl2, "bad request %d from a peer", -2);
}

static void
tick(void)
{
	log_rl_flush();
}

static void
quiet(void)
{
	fake_ms += LOG_RL_WINDOW_MS;
	log_rl_flush();
}

/*
 * A flood that stops: what it dropped is reported once its window is
 * over (the loop's periodic flush), not only at the next such message,
 * which may come days later or never.
 */
static void
test_rate_limit_flush(void)
{
	const char *out;

	log_init("test", 1, 0);
	log_rl_set_clock(fake_clock);
	fake_ms = 500000;
	/* A limiter of its own: rl may be on the flush list already. */
	(void)capture(flood2);
	/* Within the window: nothing to report yet. */
	out = capture(tick);
	CU_ASSERT_EQUAL(count(out, "dropped"), 0);
	out = capture(quiet);
	CU_ASSERT_EQUAL(count(out, "990 more message(s) like \"bad request %d "
	    "from a peer...\" dropped"), 1);
	/* Reported once: neither the next flush nor the next line repeats it. */
	out = capture(quiet);
	CU_ASSERT_EQUAL(count(out, "dropped"), 0);
	out = capture(later2);
	CU_ASSERT_EQUAL(count(out, "dropped"), 0);
	CU_ASSERT_EQUAL(count(out, "bad request -2 from a peer"), 1);
	log_rl_set_clock(NULL);
}

int
ct_register_log(void)
{
	CU_pSuite s = CU_add_suite("log", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "rate-limited messages", test_rate_limit) == NULL ||
	    CU_add_test(s, "a flood that stops is reported",
	    test_rate_limit_flush) == NULL)
		return -1;
	return 0;
}
