/*
 * test_dump.c - `nlmd --dump-state' (cmd/dump.c) on a store made here:
 * the nlmd built beside this binary (build/<kind>/nlmd), run on it.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"

#include "stt.h"

/* build/<kind>/nlmd, from build/<kind>/tests/test-store. */
static bool
dump_nlmd(char *buf, size_t cap)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return false;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return false;
	*slash = '\0';
	snprintf(buf, cap, "%s/../nlmd", self);
	return access(buf, X_OK) == 0;
}

/*
 * Run `nlmd -c /dev/null -s dir OPT' (--dump-state, --print-config) with
 * its standard output on `out' (a descriptor); its exit status, -1 if it
 * did not exit.
 */
static int
nlmd_run(const char *prog, const char *dir, const char *opt, int out)
{
	pid_t pid;
	int st, devnull;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		devnull = open("/dev/null", O_WRONLY);
		(void)dup2(out, 1);
		(void)dup2(devnull, 2);
		setenv("NLMD_NFS_CONF", "", 1);
		execl(prog, prog, "-c", "/dev/null", "-s", dir, opt,
		    (char *)NULL);
		_exit(127);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `nlmd --dump-state' of dir into buf (cap bytes, NUL-ended): its exit. */
static int
dump_read(const char *prog, const char *dir, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t k;
	int fds[2], rc;

	CU_ASSERT_FATAL(pipe2(fds, O_CLOEXEC) == 0);
	rc = nlmd_run(prog, dir, "--dump-state", fds[1]);
	close(fds[1]);
	while (got < cap - 1 && (k = read(fds[0], buf + got,
	    cap - 1 - got)) > 0)
		got += (size_t)k;
	buf[got] = '\0';
	close(fds[0]);
	return rc;
}

/*
 * A dump whose output could not be written is no dump: `nlmd
 * --dump-state > /dev/full' (a full disk, a closed pipe) exited 0, and a
 * script saving the state took the empty file for what the store holds.
 */
static void
test_dump_output_fails(void)
{
	char prog[PATH_MAX + 16], *dir, buf[4096];
	struct store_host h;
	struct store *st;
	int full;

	if (!dump_nlmd(prog, sizeof(prog))) {
		tests_skip("no nlmd built beside the tests");
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(dir = stt_dir_new());
	st = stt_open_ok(dir, STORE_SYNC);
	memset(&h, 0, sizeof(h));
	h.sh_id = 1;
	h.sh_name = "client one";
	h.sh_state = 3;
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);

	/* Written: exit 0, the host's line there. */
	CU_ASSERT_EQUAL(dump_read(prog, dir, buf, sizeof(buf)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nhost id=1 name=client\\040one "));

	/* Not written: exit 1. */
	if ((full = open("/dev/full", O_WRONLY | O_CLOEXEC)) == -1) {
		tests_skip("no /dev/full");
	} else {
		CU_ASSERT_EQUAL(nlmd_run(prog, dir, "--dump-state", full), 1);
		close(full);
	}
	stt_dir_free(dir);
}

/*
 * A dump says what the store holds, field by field: a host monitored or
 * not, a shared and an exclusive lock (one to the end of the file), a
 * share's access and deny.  (Found by mutation: with a share's access
 * and deny swapped, every lock "exclusive", or every host "monitored=yes"
 * in cmd/dump.c, every unit test passed: the one dump test had a host
 * and no record.)
 */
static void
test_dump_records(void)
{
	char prog[PATH_MAX + 16], *dir, buf[4096];
	struct store_host h;
	struct lk_record rc;
	struct store *st;

	if (!dump_nlmd(prog, sizeof(prog))) {
		tests_skip("no nlmd built beside the tests");
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(dir = stt_dir_new());
	st = stt_open_ok(dir, STORE_SYNC);
	memset(&h, 0, sizeof(h));
	h.sh_id = 1;
	h.sh_name = "one";
	h.sh_state = 3;
	h.sh_flags = STORE_HOST_MONITORED;
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	h.sh_id = 2;
	h.sh_name = "two";
	h.sh_state = 5;
	h.sh_flags = 0;
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	rc = stt_lock(1, 7, "oh", "fh", 10, 5, false, 3);
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	rc = stt_lock(2, -2, "oh", "fh", 100, 0, true, 4);
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	rc = stt_share(2, "so", "fh", LK_SHARE_R, LK_SHARE_W);
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);

	CU_ASSERT_EQUAL(dump_read(prog, dir, buf, sizeof(buf)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nhost id=1 name=one addr=- "
	    "local=- state=3 monitored=yes "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nhost id=2 name=two addr=- "
	    "local=- state=5 monitored=no "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nlock host=1 svid=7 oh=6f68 "
	    "fh=6668 start=10 len=5 mode=shared token=3 epoch=1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nlock host=2 svid=-2 oh=6f68 "
	    "fh=6668 start=100 len=0 mode=exclusive token=4 epoch=1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nshare host=2 oh=736f fh=6668 "
	    "access=1 deny=2 epoch=1\n"));
	stt_dir_free(dir);
}

/* The same for --print-config: a configuration not written exits 1. */
static void
test_print_config_output_fails(void)
{
	char prog[PATH_MAX + 16];
	int full, null;

	if (!dump_nlmd(prog, sizeof(prog))) {
		tests_skip("no nlmd built beside the tests");
		return;
	}
	if ((full = open("/dev/full", O_WRONLY | O_CLOEXEC)) == -1 ||
	    (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		tests_skip("no /dev/full or /dev/null");
		if (full != -1)
			close(full);
		return;
	}
	CU_ASSERT_EQUAL(nlmd_run(prog, "/nonexistent", "--print-config",
	    null), 0);
	CU_ASSERT_EQUAL(nlmd_run(prog, "/nonexistent", "--print-config",
	    full), 1);
	close(full);
	close(null);
}

int
stt_register_dump(void)
{
	CU_pSuite s = CU_add_suite("nlmd --dump-state and --print-config", NULL, NULL);

	if (s == NULL ||
	    !CU_add_test(s, "a dump not written exits 1",
	    test_dump_output_fails) ||
	    !CU_add_test(s, "a dump shows each field of hosts, locks and "
	    "shares", test_dump_records) ||
	    !CU_add_test(s, "a configuration not written exits 1",
	    test_print_config_output_fails))
		return -1;
	return 0;
}
