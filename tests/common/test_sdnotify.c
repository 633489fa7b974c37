/*
 * test_sdnotify.c - common/sdnotify.c: no NOTIFY_SOCKET means no manager
 * (NULL, every call a no-op); a path and an abstract name both receive
 * the exact datagrams sent; malformed addresses are refused with a
 * reason; a full queue on the manager's side is given up on quickly,
 * and waited for while the retries last;
 * $WATCHDOG_USEC / $WATCHDOG_PID as sd_watchdog_enabled(3) reads them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ct.h"
#include "sdnotify.h"

static char sn_dir[64];

static int
sn_suite_init(void)
{
	snprintf(sn_dir, sizeof(sn_dir), "/tmp/nlmd-sn.XXXXXX");
	return mkdtemp(sn_dir) == NULL ? -1 : 0;
}

static int
sn_suite_clean(void)
{
	char cmd[128];

	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sn_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A bound receiver at `name' ("/path" or "@abstract"); returns its fd. */
static int
receiver(const char *name)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(name) + (name[0] == '/' ? 1 : 0));
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sun, len) == -1) {
		perror("receiver");
		return -1;
	}
	return fd;
}

/* The next datagram on `fd' equals `want'. */
static int
got(int fd, const char *want)
{
	char buf[2048];
	ssize_t r = recv(fd, buf, sizeof(buf) - 1, 0);

	if (r < 0)
		return 0;
	buf[r] = '\0';
	if (strcmp(buf, want) != 0) {
		fprintf(stderr, "\ngot '%s', want '%s'\n", buf, want);
		return 0;
	}
	return 1;
}

static void
test_no_manager(void)
{
	struct sdnotify *n = (struct sdnotify *)1;
	char err[128] = "";

	unsetenv("NOTIFY_SOCKET");
	CU_ASSERT_EQUAL(sdnotify_open(&n, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NULL(n);
	setenv("NOTIFY_SOCKET", "", 1);
	n = (struct sdnotify *)1;
	CU_ASSERT_EQUAL(sdnotify_open(&n, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NULL(n);
	CU_ASSERT_EQUAL(sdnotify_send(NULL, "READY=1"), 0);
	CU_ASSERT_EQUAL(sdnotify_sendf(NULL, "STATUS=%d", 1), 0);
	sdnotify_free(NULL);
}

static void
test_path(void)
{
	struct sdnotify *n;
	char path[128], err[128] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/notify", sn_dir);
	CU_ASSERT_FATAL((fd = receiver(path)) != -1);
	setenv("NOTIFY_SOCKET", path, 1);
	CU_ASSERT_EQUAL_FATAL(sdnotify_open(&n, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL(sdnotify_send(n, "READY=1\nSTATUS=serving"), 0);
	CU_ASSERT(got(fd, "READY=1\nSTATUS=serving"));
	CU_ASSERT_EQUAL(sdnotify_sendf(n, "STATUS=grace: %d locks", 7), 0);
	CU_ASSERT(got(fd, "STATUS=grace: 7 locks"));
	sdnotify_free(n);
	close(fd);
}

static void
test_abstract(void)
{
	struct sdnotify *n;
	char name[64], err[128] = "";
	int fd;

	snprintf(name, sizeof(name), "@nlmd-test-%ld", (long)getpid());
	CU_ASSERT_FATAL((fd = receiver(name)) != -1);
	setenv("NOTIFY_SOCKET", name, 1);
	CU_ASSERT_EQUAL_FATAL(sdnotify_open(&n, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(sdnotify_send(n, "STOPPING=1"), 0);
	CU_ASSERT(got(fd, "STOPPING=1"));
	sdnotify_free(n);
	close(fd);
}

static void
test_bad_address(void)
{
	struct sdnotify *n;
	char err[256], big[200];

	setenv("NOTIFY_SOCKET", "relative/path", 1);
	err[0] = '\0';
	CU_ASSERT_EQUAL(sdnotify_open(&n, err, sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NULL(n);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "relative/path"));
	setenv("NOTIFY_SOCKET", "@", 1);
	CU_ASSERT_EQUAL(sdnotify_open(&n, err, sizeof(err)), CM_INVALID);
	memset(big, 'x', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	setenv("NOTIFY_SOCKET", big, 1);
	CU_ASSERT_EQUAL(sdnotify_open(&n, err, sizeof(err)), CM_INVALID);
	/* Nobody listening: open works, the send fails with errno. */
	setenv("NOTIFY_SOCKET", "/nonexistent/notify", 1);
	CU_ASSERT_EQUAL_FATAL(sdnotify_open(&n, err, sizeof(err)), 0);
	errno = 0;
	CU_ASSERT_EQUAL(sdnotify_send(n, "READY=1"), CM_NOTFOUND);
	CU_ASSERT_EQUAL(errno, ENOENT);
	sdnotify_free(n);
}

/* A manager that never reads: the send gives up in well under a second. */
static void
test_full_queue(void)
{
	struct sdnotify *n;
	struct timespec t0, t1;
	char path[128], err[128] = "";
	int fd, i, rc = 0;
	long ms;

	snprintf(path, sizeof(path), "%s/full", sn_dir);
	CU_ASSERT_FATAL((fd = receiver(path)) != -1);
	setenv("NOTIFY_SOCKET", path, 1);
	CU_ASSERT_EQUAL_FATAL(sdnotify_open(&n, err, sizeof(err)), 0);
	for (i = 0; i < 10000 && rc == 0; i++)
		rc = sdnotify_send(n, "WATCHDOG=1");
	CU_ASSERT_EQUAL(rc, CM_BUSY);
	CU_ASSERT_EQUAL(errno, EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(sdnotify_send(n, "WATCHDOG=1"), CM_BUSY);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CU_ASSERT(ms < 500);
	sdnotify_free(n);
	close(fd);
}

/*
 * A manager that reads again within the retries (NOTIFY_TRIES of
 * NOTIFY_WAIT_MS): the message is sent, not given up on at the first
 * EAGAIN (READY=1 lost so would have the manager stop nlmd at its start
 * timeout).  A child drains the full queue 10 ms on.
 */
static void
test_queue_drained(void)
{
	struct timespec ms10 = { 0, 10 * 1000000L };
	struct sdnotify *n;
	char path[128], err[128] = "", buf[64];
	int fd, i, rc = 0, status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/drained", sn_dir);
	CU_ASSERT_FATAL((fd = receiver(path)) != -1);
	setenv("NOTIFY_SOCKET", path, 1);
	CU_ASSERT_EQUAL_FATAL(sdnotify_open(&n, err, sizeof(err)), 0);
	for (i = 0; i < 10000 && rc == 0; i++)
		rc = sdnotify_send(n, "WATCHDOG=1");
	CU_ASSERT_EQUAL(rc, CM_BUSY);
	CU_ASSERT_FATAL((pid = fork()) != -1);
	if (pid == 0) {
		(void)nanosleep(&ms10, NULL);
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			continue;
		_exit(0);
	}
	CU_ASSERT_EQUAL(sdnotify_send(n, "READY=1"), CM_OK);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	sdnotify_free(n);
	close(fd);
}

static void
test_watchdog(void)
{
	char pid[32];

	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 30000000);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 30000000);
	/* Meant for another process. */
	snprintf(pid, sizeof(pid), "%ld", (long)getpid() + 1);
	setenv("WATCHDOG_PID", pid, 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "0", 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "-5", 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "12s", 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "", 1);
	CU_ASSERT_EQUAL(sdnotify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
}

int
ct_register_sdnotify(void)
{
	CU_pSuite s;

	s = CU_add_suite("sdnotify", sn_suite_init, sn_suite_clean);
	if (s == NULL ||
	    CU_add_test(s, "no NOTIFY_SOCKET: no manager, no-ops",
	    test_no_manager) == NULL ||
	    CU_add_test(s, "a path receives the datagrams",
	    test_path) == NULL ||
	    CU_add_test(s, "an abstract name receives the datagrams",
	    test_abstract) == NULL ||
	    CU_add_test(s, "malformed addresses, nobody listening",
	    test_bad_address) == NULL ||
	    CU_add_test(s, "a manager that never reads: quick give-up",
	    test_full_queue) == NULL ||
	    CU_add_test(s, "a manager that reads within the retries: sent",
	    test_queue_drained) == NULL ||
	    CU_add_test(s, "WATCHDOG_USEC and WATCHDOG_PID",
	    test_watchdog) == NULL)
		return -1;
	return 0;
}
