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

/*
 * A dump gives the store's high-water marks each on its own line, and
 * of a host the address it calls from, every server address it used
 * (comma-separated; a link-local one with its interface), the epoch it
 * was stored in and since when an SM_NOTIFY is owed to it; an empty
 * owner handle is "-", a field that is never blank; a lock is one line,
 * no share.  (Found by mutation: the token and next host id swapped, a
 * host's epoch and notify-since swapped, an IPv4 address shown as none,
 * a comma before the first local address, a link-local one without its
 * interface, an empty handle left blank, or a lock printed as a share
 * too, passed every unit test: the hosts dumped had no address, and only
 * the start of their line was checked.)
 */
static void
test_dump_host_fields(void)
{
	static const uint8_t a[] = { 10, 0, 0, 1 }, l1[] = { 192, 0, 2, 1 },
	    l2[] = { 192, 0, 2, 2 }, ll[16] = { 0xfe, 0x80, [15] = 1 };
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
	h.sh_id = 3;
	h.sh_name = "one";
	h.sh_state = 7;
	h.sh_addr.sa_len = 4;
	memcpy(h.sh_addr.sa_bytes, a, sizeof(a));
	h.sh_local[0].sa_len = 4;
	memcpy(h.sh_local[0].sa_bytes, l1, sizeof(l1));
	h.sh_local[1].sa_len = 4;
	memcpy(h.sh_local[1].sa_bytes, l2, sizeof(l2));
	/* A link-local one, with an interface index no interface has. */
	h.sh_local[2].sa_len = 16;
	memcpy(h.sh_local[2].sa_bytes, ll, sizeof(ll));
	h.sh_local[2].sa_scope = 999999;
	h.sh_nlocal = 3;
	h.sh_epoch = 5;
	h.sh_notify_since = 1700000000;
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	rc = stt_lock(3, 9, "", "fh", 0, 1, true, 41);
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	CU_ASSERT_EQUAL(store_put_epoch(st, 6), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 42), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 4), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);

	CU_ASSERT_EQUAL(dump_read(prog, dir, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(strncmp(buf, "epoch 6\ntoken-high-water 42\n"
	    "next-host-id 4\n", 43), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nhost id=3 name=one "
	    "addr=10.0.0.1 local=192.0.2.1,192.0.2.2,fe80::1%999999 state=7 "
	    "monitored=no epoch=5 notify-since=1700000000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nlock host=3 svid=9 oh=- "
	    "fh=6668 start=0 len=1 mode=exclusive token=41 epoch=1\n"));
	/* The lock once, as a lock: no share made of it. */
	CU_ASSERT_PTR_NULL(strstr(buf, "\nshare "));
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
	    !CU_add_test(s, "a dump shows a host's addresses, epoch and "
	    "notify time, and the marks", test_dump_host_fields) ||
	    !CU_add_test(s, "a configuration not written exits 1",
	    test_print_config_output_fails))
		return -1;
	return 0;
}
