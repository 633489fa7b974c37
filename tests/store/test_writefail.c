/*
 * test_writefail.c - a commit whose write to the log fails (EIO, ENOSPC)
 * must not come back at the next open.  Berkeley DB copies a record into
 * its log buffer before it writes it, and a failed write leaves it there:
 * the next flush of the log -- the checkpoint thread's, every 250 ms --
 * wrote it after all, and the next open folded a commit that nlmd had
 * reported failed (and never answered).  (store_fail_after() cannot show
 * this: it skips the call it fails, so nothing reaches the buffer.)
 *
 * This file interposes write() and pwrite() (Berkeley DB writes its log
 * with the first) for the whole test binary, as
 * test_syncfail.c does fsync(): Berkeley DB's calls resolve to it.  It
 * passes through to the C library's unless a test arms log_wfail; then
 * every write to a file named log.* fails with EIO.
 */
#include "stt.h"

#include "store_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

static atomic_bool log_wfail;
static atomic_uint log_wfailed;	/* writes failed while armed */
static atomic_int log_werrno = EIO; /* the errno they fail with */

/* Is fd a Berkeley DB log file (log.NNNNNNNNNN)? */
static bool
is_log_fd(int fd)
{
	char link[64], path[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0)
		return false;
	path[n] = '\0';
	base = strrchr(path, '/');
	return base != NULL && strncmp(base + 1, "log.", 4) == 0;
}

ssize_t
pwrite(int fd, const void *buf, size_t len, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (atomic_load(&log_wfail) && is_log_fd(fd)) {
		atomic_fetch_add(&log_wfailed, 1);
		errno = atomic_load(&log_werrno);
		return -1;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "pwrite");
	return real(fd, buf, len, off);
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);

	if (atomic_load(&log_wfail) && is_log_fd(fd)) {
		atomic_fetch_add(&log_wfailed, 1);
		errno = atomic_load(&log_werrno);
		return -1;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "write");
	return real(fd, buf, len);
}

static char *dir;
static struct store *st;

static int
teardown(void)
{
	atomic_store(&log_wfail, false);
	atomic_store(&log_werrno, EIO);
	stt_drop(&dir, &st);
	return 0;
}

/*
 * The child: lock "a" committed; lock "b" staged, its commit's write
 * failing; the disk well again (ENOSPC cleared, say) while the process
 * lives on for four of the checkpoint thread's periods, as nlmd does
 * until its loop sees the failure and exits; then killed, or (close)
 * the store closed first.  Exit status 2-5: a step went otherwise (see
 * below).
 */
static void
child(enum store_durability d, bool close)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct lk_record b = stt_lock(1, 1, "o", "b", 0, 0, true, 2);
	struct store *cst;

	if (stt_open(dir, d, 0, &cst) != STORE_OK)
		_exit(2);
	if (store_put_record(cst, &a) != STORE_OK ||
	    store_commit(cst) != STORE_OK)
		_exit(3);
	atomic_store(&log_wfail, true);
	if (store_put_record(cst, &b) != STORE_OK ||
	    store_commit(cst) == STORE_OK)
		_exit(4);
	atomic_store(&log_wfail, false);
	if (atomic_load(&log_wfailed) == 0)
		_exit(5);
	usleep(1000 * 1000);
	if (close)
		store_close(cst);
	raise(SIGKILL);
	_exit(6);
}

static void
failed_write(enum store_durability d, bool close)
{
	struct stt_snap ss;
	pid_t pid;
	int status;

	stt_fresh(&dir, &st);
	if ((pid = fork()) == 0)
		child(d, close);
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	if (WIFEXITED(status))
		printf("\n    child exited %d ", WEXITSTATUS(status));
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 1);
	if (ss.ss_nrecs != 1)
		printf("\n    %zu records after the restart, not 1 ",
		    ss.ss_nrecs);
	else
		CU_ASSERT(ss.ss_recs[0].rc_token == 1);
	stt_snap_free(&ss);
}

static void
test_write_log(void)
{
	failed_write(STORE_LOG, false);
}

static void
test_write_sync(void)
{
	failed_write(STORE_SYNC, false);
}

/* The store closed after the failure: no last checkpoint, no flush. */
static void
test_write_close(void)
{
	failed_write(STORE_LOG, true);
}

/*
 * A store that cannot write its log at open (the file system full, or
 * read-only): the open fails, and its message says so and what to do --
 * not that a file of the store is damaged (Berkeley DB's recovery
 * panics on the failed write, DB_RUNRECOVERY, which the message took for
 * damage: an operator would restore a copy, or start empty, losing
 * every lock, where freeing space was all it took).  The space given
 * back, the store opens with what it held.
 */
static void
open_failing(int eno, const char *want)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct store_config cf;
	struct stt_snap ss;
	struct store *st2 = NULL;
	enum store_status s;
	char err[2048];

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL_FATAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	atomic_store(&log_werrno, eno);
	atomic_store(&log_wfailed, 0);
	atomic_store(&log_wfail, true);
	err[0] = '\0';
	s = store_open(&cf, &st2, err, sizeof(err));
	atomic_store(&log_wfail, false);
	atomic_store(&log_werrno, EIO);
	CU_ASSERT(atomic_load(&log_wfailed) > 0);
	CU_ASSERT_NOT_EQUAL(s, STORE_OK);
	CU_ASSERT_PTR_NULL(st2);
	if (s == STORE_OK) {
		store_close(st2);
		return;
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(eno)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, dir));
	CU_ASSERT_PTR_NULL(strstr(err, "a file of the store is damaged"));
	if (strstr(err, want) == NULL ||
	    strstr(err, "a file of the store is damaged") != NULL)
		printf("\n    %s ", err);
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 1);
	stt_snap_free(&ss);
}

static void
test_open_full(void)
{
	open_failing(ENOSPC, "is full");
}

static void
test_open_rofs(void)
{
	open_failing(EROFS, "read-only");
}

static void
test_open_denied(void)
{
	open_failing(EACCES, "may not write");
}

int
stt_register_writefail(void)
{
	CU_pSuite s = CU_add_suite("store log writes failing", NULL,
	    teardown);

	if (s == NULL ||
	    !CU_add_test(s, "written to the OS (log): a failed commit never comes "
	    "back", test_write_log) ||
	    !CU_add_test(s, "flushed (sync): a failed commit never comes "
	    "back", test_write_sync) ||
	    !CU_add_test(s, "a failed commit, then the store closed: it "
	    "never comes back", test_write_close) ||
	    !CU_add_test(s, "open, the file system full: says so, not that "
	    "the store is damaged", test_open_full) ||
	    !CU_add_test(s, "open, the file system read-only: says so",
	    test_open_rofs) ||
	    !CU_add_test(s, "open, permission denied: says so",
	    test_open_denied))
		return -1;
	return 0;
}
