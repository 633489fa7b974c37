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

int
ct_register_log(void)
{
	CU_pSuite s = CU_add_suite("log", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "rate-limited messages", test_rate_limit) == NULL)
		return -1;
	return 0;
}
