/*
 * test_syncfail.c - the disk refusing to sync at any point of store_open()
 * (fdatasync/fsync failing with EIO, as on a failing disk): the open is
 * then a clean error, or it succeeds; it never uses a Berkeley DB handle
 * that a failed call freed.  (store_fail_after() cannot show this: it
 * skips the call it fails, so the handle is never freed.)
 *
 * This file interposes fdatasync() and fsync() for the whole test binary:
 * Berkeley DB's calls resolve to them.  They pass through to the C
 * library's until a test arms sync_failat; a test of another file may
 * watch them through stt_sync_hook (stt.h).
 */
#include "stt.h"

#include "store_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

/* Calls counted while armed; from the sync_failat-th on they fail (0 off). */
static atomic_uint sync_calls;
static atomic_uint sync_failat;

static bool
sync_fails(void)
{
	unsigned at = atomic_load(&sync_failat);

	return at != 0 && atomic_fetch_add(&sync_calls, 1) + 1 >= at;
}

void (*_Atomic stt_sync_hook)(int);

/* EIO when it is this call's turn to fail, else the libc function. */
static int
sync_call(int (**real)(int), const char *name, int fd)
{
	void (*hook)(int) = atomic_load(&stt_sync_hook);

	if (hook != NULL)
		hook(fd);
	if (sync_fails()) {
		errno = EIO;
		return -1;
	}
	if (*real == NULL)
		*(void **)real = dlsym(RTLD_NEXT, name);
	return (*real)(fd);
}

int
fdatasync(int fd)
{
	static int (*real)(int);

	return sync_call(&real, "fdatasync", fd);
}

int
fsync(int fd)
{
	static int (*real)(int);

	return sync_call(&real, "fsync", fd);
}

static char *dir;
static struct store *st;

static int
teardown(void)
{
	atomic_store(&sync_failat, 0);
	stt_drop(&dir, &st);
	return 0;
}

/* A format-1 store holding one lock (see test_journal.c). */
static void
make_format1(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);

	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_test_v1_entry(st, 0, 1), STORE_OK);
	store_close(st);
	st = NULL;
}

/*
 * Open a fresh store (format1: a format-1 one, migrated by the open) with
 * the n-th sync and every later one failing, for n = 1, 2, ... until an
 * open needs fewer syncs than n.  Each open must succeed or fail with an
 * I/O error and a reason; then, syncs working again, the store opens.
 */
static void
open_failing_syncs(bool format1)
{
	struct store_config cf;
	enum store_status s;
	char err[512];
	unsigned n, calls;

	memset(&cf, 0, sizeof(cf));
	cf.sc_durability = STORE_SYNC;
	for (n = 1; n < 200; n++) {
		stt_fresh(&dir, &st);
		if (format1)
			make_format1();
		cf.sc_dir = dir;
		err[0] = '\0';
		atomic_store(&sync_calls, 0);
		atomic_store(&sync_failat, n);
		s = store_open(&cf, &st, err, sizeof(err));
		atomic_store(&sync_failat, 0);
		calls = atomic_load(&sync_calls);
		CU_ASSERT(s == STORE_OK || s == STORE_IO || s == STORE_FATAL);
		CU_ASSERT(s == STORE_OK || err[0] != '\0');
		store_close(st);
		st = NULL;
		/* Syncs work again: recovery makes it a store. */
		CU_ASSERT_EQUAL(stt_open(dir, STORE_SYNC, 0, &st), STORE_OK);
		store_close(st);
		st = NULL;
		if (calls < n)
			break;
	}
	CU_ASSERT(n > 1 && n < 200);
}

static void
test_open_new(void)
{
	open_failing_syncs(false);
}

static void
test_open_format1(void)
{
	open_failing_syncs(true);
}

int
stt_register_syncfail(void)
{
	CU_pSuite s = CU_add_suite("store syncs failing", NULL, teardown);

	if (s == NULL ||
	    !CU_add_test(s, "at every sync of opening a new store",
	    test_open_new) ||
	    !CU_add_test(s, "at every sync of migrating a format-1 store",
	    test_open_format1))
		return -1;
	return 0;
}
