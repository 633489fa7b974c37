/*
 * test_svcmgr.c - what nlmd tells systemd (cmd/svcmgr.c) over the NLM
 * service in grace: the datagrams at a NOTIFY_SOCKET of the test's own
 * (an abstract name), read as systemd would.
 *
 * nlmd calls svcmgr_stopping() when its loop ends, then drains the last
 * turns (nlm_drain()): the before-sleep hook, and with it svcmgr_turn(),
 * still runs, and the grace period may end meanwhile.  svcmgr_turn() is
 * called here after each ts_pump(), as that hook calls it after the
 * service's end of turn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"

#include "cmd/svcmgr.h"
#include "lockcore.h"
#include "nlm.h"
#include "store.h"
#include "svctest.h"
#include "tests/fakes/fakes.h"

/* The manager's socket (-1: none), and its name for NOTIFY_SOCKET. */
static int sv_fd = -1;
static char sv_name[64];

/*
 * A NOTIFY_SOCKET to listen at, set in the environment with WATCHDOG_USEC
 * `wd_us' (0: none); then the service started over one lock of an earlier
 * epoch: in grace, with 1 lock to reclaim.
 */
static void
sv_begin(uint64_t wd_us)
{
	struct sockaddr_un a;
	struct store_host sh;
	struct lk_record rc;
	char v[32];
	socklen_t len;

	sv_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(sv_fd != -1);
	snprintf(sv_name, sizeof(sv_name), "@nlmd-test-svcmgr-%d",
	    (int)getpid());
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	memcpy(a.sun_path + 1, sv_name + 1, strlen(sv_name) - 1);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(sv_name));
	CU_ASSERT_FATAL(bind(sv_fd, (struct sockaddr *)&a, len) == 0);
	CU_ASSERT_FATAL(setenv("NOTIFY_SOCKET", sv_name, 1) == 0);
	(void)unsetenv("WATCHDOG_PID");
	if (wd_us > 0) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)wd_us);
		CU_ASSERT_FATAL(setenv("WATCHDOG_USEC", v, 1) == 0);
	} else
		(void)unsetenv("WATCHDOG_USEC");

	fake_store_reset();
	memset(&sh, 0, sizeof(sh));
	sh.sh_id = 1;
	sh.sh_name = "hostR";
	sh.sh_addr.sa_len = 4;
	sh.sh_addr.sa_bytes[0] = 127;
	sh.sh_addr.sa_bytes[3] = 1;
	sh.sh_flags = STORE_HOST_MONITORED;
	sh.sh_state = 1;
	memset(&rc, 0, sizeof(rc));
	rc.rc_kind = LK_REC_LOCK;
	rc.rc_host = 1;
	rc.rc_svid = 1;
	rc.rc_oh = "ownR";
	rc.rc_ohlen = 4;
	rc.rc_fh = "fr";
	rc.rc_fhlen = 2;
	rc.rc_len = 10;
	rc.rc_excl = 1;
	rc.rc_token = 1;
	rc.rc_epoch = 1;
	CU_ASSERT(store_put_host(fake_store(), &sh) == STORE_OK);
	CU_ASSERT(store_put_record(fake_store(), &rc) == STORE_OK);
	CU_ASSERT(store_commit(fake_store()) == STORE_OK);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT(nlm_get_grace()->g_active);
}

/* After each test, a fatal assertion's included: the socket, the env. */
static void
sv_teardown(void)
{
	if (sv_fd != -1)
		close(sv_fd);
	sv_fd = -1;
	(void)unsetenv("NOTIFY_SOCKET");
	(void)unsetenv("WATCHDOG_USEC");
}

/* The next message at the manager's socket into buf; -1: none waits. */
static ssize_t
sv_recv(char *buf, size_t cap)
{
	ssize_t n = recv(sv_fd, buf, cap - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* A turn of the loop (and the answers to its look-ups), then the hook's. */
static void
sv_pump(struct svcmgr *m)
{
	ts_pump();
	svcmgr_turn(m);
}

/*
 * Stopping in grace (SIGTERM before every client reclaimed): STOPPING=1
 * with STATUS=stopping, and then nothing more -- no STATUS when the
 * grace period ends in the turns that drain the last commits, no grace
 * progress a second later, no WATCHDOG=1 ping.  A manager shows the last
 * STATUS it got: "serving" after "stopping" would tell the operator the
 * daemon serves while it exits.  No test failed when svcmgr_turn() went
 * on after svcmgr_stopping() (no unit test linked cmd/svcmgr.c; mutation
 * testing, 2026-12-07).
 */
static void
test_stopping_quiet(void)
{
	struct svcmgr *m;
	char buf[512], want[128];
	int i, n = 0;

	if (ts_skip())
		return;
	sv_begin(2000000);			/* ping every 1 s */
	m = svcmgr_new(ts_loop());
	CU_ASSERT_PTR_NOT_NULL(m);
	svcmgr_ready(m);
	CU_ASSERT(sv_recv(buf, sizeof(buf)) > 0);
	snprintf(want, sizeof(want), "READY=1\nSTATUS=grace: 1 locks, 0 "
	    "shares to reclaim, 90 s left, epoch %llu",
	    (unsigned long long)nlm_get_epoch());
	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT(sv_recv(buf, sizeof(buf)) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "WATCHDOG=1");
	/* While it serves, grace progress and pings come every second. */
	ts_advance(1000);
	sv_pump(m);
	while (sv_recv(buf, sizeof(buf)) > 0)
		n++;
	CU_ASSERT_EQUAL(n, 2);
	svcmgr_stopping(m);
	CU_ASSERT(sv_recv(buf, sizeof(buf)) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "STOPPING=1\nSTATUS=stopping");
	/* The drain's turns; grace ends at its deadline meanwhile. */
	for (i = 0; i < 5; i++) {
		ts_advance(20 * 1000);
		sv_pump(m);
	}
	CU_ASSERT(!nlm_get_grace()->g_active);
	for (n = 0; sv_recv(buf, sizeof(buf)) > 0; n++)
		printf("\n    after STOPPING: \"%s\" ", buf);
	CU_ASSERT_EQUAL(n, 0);
	svcmgr_free(m);
	ts_stop();
}

/*
 * Grace ending while serving: "STATUS=serving, epoch E" once, and no
 * STATUS at the turns after it (svcmgr_turn() sends only when the last
 * one was about grace).
 */
static void
test_grace_end_status(void)
{
	struct svcmgr *m;
	char buf[512], want[64];
	int i, serving = 0, after = 0;

	if (ts_skip())
		return;
	sv_begin(0);
	m = svcmgr_new(ts_loop());
	CU_ASSERT_PTR_NOT_NULL(m);
	svcmgr_ready(m);
	CU_ASSERT(sv_recv(buf, sizeof(buf)) > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "STATUS=grace: 1 locks"));
	ts_advance(91 * 1000);
	sv_pump(m);
	CU_ASSERT(!nlm_get_grace()->g_active);
	snprintf(want, sizeof(want), "STATUS=serving, epoch %llu",
	    (unsigned long long)nlm_get_epoch());
	while (sv_recv(buf, sizeof(buf)) > 0)
		serving += strcmp(buf, want) == 0;
	CU_ASSERT_EQUAL(serving, 1);
	for (i = 0; i < 5; i++) {
		ts_advance(1000);
		sv_pump(m);
	}
	while (sv_recv(buf, sizeof(buf)) > 0)
		after++;
	CU_ASSERT_EQUAL(after, 0);
	svcmgr_free(m);
	ts_stop();
}

int
ts_register_svcmgr(void)
{
	CU_pSuite s = CU_add_suite_with_setup_and_teardown("service manager: "
	    "what systemd is told", NULL, NULL, NULL, sv_teardown);

	if (s == NULL ||
	    CU_add_test(s, "stopping in grace: nothing after STOPPING=1",
	    test_stopping_quiet) == NULL ||
	    CU_add_test(s, "grace ends: STATUS=serving once",
	    test_grace_end_status) == NULL)
		return -1;
	return 0;
}
