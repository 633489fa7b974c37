/*
 * test_fault.c - store_fail_after(): every Berkeley DB call of a turn, of
 * store_epoch_begin() and of loading is made to fail in turn; the store
 * must then hold exactly what the last commit left.  So must it when a
 * turn's or a commit's buffer cannot grow (__wrap_realloc).
 */
#include "stt.h"
#include "store_test.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

static char *dir;
static struct store *st;

/*
 * realloc() of the code under test goes through this (test-store is
 * linked with -Wl,--wrap=realloc): once realloc_fail is set, the next
 * call fails, from whichever thread makes it (the committer's too).
 */
void	*__real_realloc(void *, size_t);
void	*__wrap_realloc(void *, size_t);
static atomic_bool realloc_fail;
static atomic_uint realloc_failed;

void *
__wrap_realloc(void *p, size_t size)
{
	if (atomic_exchange(&realloc_fail, false)) {
		atomic_fetch_add(&realloc_failed, 1);
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, size);
}

/*
 * calloc(1, n) of the code under test goes through this (-Wl,--wrap=
 * calloc): the calloc_at-th from when it is set fails.
 */
void	*__real_calloc(size_t, size_t);
void	*__wrap_calloc(size_t, size_t);
static atomic_uint calloc_at;

void *
__wrap_calloc(size_t n, size_t size)
{
	unsigned at = atomic_load(&calloc_at);

	while (n == 1 && at > 0 &&
	    !atomic_compare_exchange_weak(&calloc_at, &at, at - 1))
		continue;
	if (n == 1 && at == 1) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

static int
teardown(void)
{
	stt_drop(&dir, &st);
	return 0;
}

static void
fresh(void)
{
	stt_fresh(&dir, &st);
}

static void
reopen(void)
{
	store_close(st);
	st = stt_open_ok(dir, STORE_SYNC);
}

static struct store_host
host(uint64_t id, const char *name)
{
	struct store_host h;

	memset(&h, 0, sizeof(h));
	h.sh_id = id;
	h.sh_name = name;
	h.sh_addr.sa_len = 4;
	memcpy(h.sh_addr.sa_bytes, "\x0a\0\0\x01", 4);
	h.sh_state = 3;
	h.sh_epoch = 1;
	return h;
}

/* The known content every iteration starts from. */
static void
populate(void)
{
	struct lk_record r[5] = {
		stt_lock(1, 1, "o1", "f1", 0, 10, true, 1),
		stt_lock(1, 1, "o1", "f1", 20, 10, false, 2),
		stt_lock(2, -4, "o2", "f2", 0, 0, true, 3),
		stt_share(1, "o1", "f1", LK_SHARE_R, 0),
		stt_share(2, "o2", "f2", LK_SHARE_W, LK_SHARE_R),
	};
	struct store_host h1 = host(1, "one"), h2 = host(2, "two");
	size_t i;

	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(store_put_record(st, &r[i]), STORE_OK);
	CU_ASSERT_EQUAL(store_put_host(st, &h1), STORE_OK);
	CU_ASSERT_EQUAL(store_put_host(st, &h2), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 5), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 3), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
}

/* One turn of every kind of change; the first failure ends it. */
static enum store_status
turn(void)
{
	struct lk_record l4 = stt_lock(3, 0, "o3", "f3", 5, 5, true, 6);
	struct lk_record l1 = stt_lock(1, 1, "o1", "f1", 0, 10, true, 1);
	struct lk_record rem = stt_lock(1, 1, "o1", "f1", 20, 10, false, 2);
	struct lk_record add[2] = {
		stt_lock(1, 1, "o1", "f1", 20, 5, true, 7),
		stt_share(3, "o3", "f3", LK_SHARE_R, LK_SHARE_W),
	};
	struct store_host h3 = host(3, "three");
	struct lk_result res;
	enum store_status s;

	memset(&res, 0, sizeof(res));
	res.rs_removed = &rem;
	res.rs_nremoved = 1;
	res.rs_added = add;
	res.rs_nadded = 2;
	if ((s = store_put_record(st, &l4)) != STORE_OK ||
	    (s = store_del_record(st, &l1)) != STORE_OK ||
	    (s = store_apply(st, &res)) != STORE_OK ||
	    (s = store_put_host(st, &h3)) != STORE_OK ||
	    (s = store_del_host(st, 1)) != STORE_OK ||
	    (s = store_put_token(st, 9)) != STORE_OK ||
	    (s = store_put_next_host(st, 4)) != STORE_OK ||
	    (s = store_put_epoch(st, 2)) != STORE_OK)
		return s;
	return store_commit(st);
}

/* What a successful turn leaves: the same turn without faults. */
static void
expected(struct stt_snap *before, struct stt_snap *after)
{
	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	populate();
	CU_ASSERT_EQUAL(stt_snap_take(st, before), STORE_OK);
	CU_ASSERT_EQUAL(turn(), STORE_OK);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, after);
	CU_ASSERT(!stt_snap_equal(before, after));
}

/* Turn with the n-th call failing; true when no call failed. */
static bool
fault_turn(unsigned n, const struct stt_snap *s0, const struct stt_snap *s1)
{
	struct store_info si;
	struct stt_snap now;
	enum store_status s;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	populate();
	store_fail_after(st, n);
	if ((s = turn()) == STORE_OK) {
		store_close(st);
		st = NULL;
		stt_snap_dir(dir, &now);
		CU_ASSERT(stt_snap_equal(&now, s1));
		stt_snap_free(&now);
		return true;
	}
	CU_ASSERT(s == STORE_IO || s == STORE_FATAL);
	CU_ASSERT(!store_pending(st));
	/* The in-memory meta fell back to the last commit as well. */
	store_info(st, &si);
	CU_ASSERT(si.si_token == s0->ss_token && si.si_epoch == s0->ss_epoch &&
	    si.si_next_host == s0->ss_next_host);
	reopen();
	CU_ASSERT_EQUAL(stt_snap_take(st, &now), STORE_OK);
	CU_ASSERT(stt_snap_equal(&now, s0));
	if (!stt_snap_equal(&now, s0))
		fprintf(stderr, "\nfault at call %u: store changed\n", n);
	stt_snap_free(&now);
	/* And the store works on: the same turn now succeeds. */
	CU_ASSERT_EQUAL(turn(), STORE_OK);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &now);
	CU_ASSERT(stt_snap_equal(&now, s1));
	stt_snap_free(&now);
	return false;
}

static void
test_fault_turn(void)
{
	struct stt_snap s0, s1;
	unsigned n;

	expected(&s0, &s1);
	for (n = 1; n < 200; n++)
		if (fault_turn(n, &s0, &s1))
			break;
	/*
	 * A turn is one journal record: one log_put (the fold into the
	 * record databases happens later, off the turn), so the 2nd fault
	 * is never reached.
	 */
	CU_ASSERT_EQUAL(n, 2);
	stt_snap_free(&s0);
	stt_snap_free(&s1);
}

static void
test_fault_epoch(void)
{
	struct store_info si;
	uint64_t e = 0;
	char err[1024];
	unsigned n;
	enum store_status s;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_epoch_begin(st, 0, &e, err, sizeof(err)),
	    STORE_OK);
	for (n = 1; n < 20; n++) {
		reopen();
		store_fail_after(st, n);
		err[0] = '\0';
		s = store_epoch_begin(st, 0, &e, err, sizeof(err));
		if (s == STORE_OK)
			break;
		CU_ASSERT_EQUAL(s, STORE_IO);
		CU_ASSERT(err[0] != '\0');
		/*
		 * Why, and where: a full disk at the start's first commit
		 * said only "cannot store epoch 2: store operation failed;
		 * transaction aborted".
		 */
		CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(EIO)));
		CU_ASSERT_PTR_NOT_NULL(strstr(err, dir));
		if (strstr(err, strerror(EIO)) == NULL ||
		    strstr(err, dir) == NULL)
			printf("\n    %s ", err);
		store_info(st, &si);
		CU_ASSERT_EQUAL(si.si_epoch, 1);
		reopen();
		store_info(st, &si);
		CU_ASSERT_EQUAL(si.si_epoch, 1);
	}
	/* one log_put */
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(e, 2);
	store_close(st);
	st = NULL;
}

static int
count_cb(const struct lk_record *rc, void *arg)
{
	(void)rc;
	++*(size_t *)arg;
	return 0;
}

static int
count_host_cb(const struct store_host *h, void *arg)
{
	(void)h;
	++*(size_t *)arg;
	return 0;
}

static void
test_fault_load(void)
{
	enum store_status s;
	char err[256];
	size_t nrec;
	unsigned n;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	populate();
	for (n = 1; n < 20; n++) {
		nrec = 0;
		err[0] = '\0';
		store_fail_after(st, n);
		if ((s = store_records_load(st, count_cb, &nrec, err,
		    sizeof(err))) == STORE_OK)
			break;
		CU_ASSERT_EQUAL(s, STORE_IO);
		CU_ASSERT(err[0] != '\0');
	}
	/* Per database: cursor, one bulk get, the get that finds the end. */
	CU_ASSERT_EQUAL(n, 7);
	CU_ASSERT_EQUAL(nrec, 5);
	store_fail_after(st, 1);
	nrec = 0;
	CU_ASSERT_EQUAL(store_hosts_load(st, count_host_cb, &nrec, err,
	    sizeof(err)), STORE_IO);
	CU_ASSERT_EQUAL(store_hosts_load(st, count_host_cb, &nrec, err,
	    sizeof(err)), STORE_OK);
	CU_ASSERT_EQUAL(nrec, 2);
	store_close(st);
	st = NULL;
}

/*
 * No memory to grow the turn's batch while staging: STORE_NOMEM, and the
 * turn is dropped as store.h says (nothing pending; sealing then commits
 * nothing), the store holds what the last commit left.  No test had run
 * the branch (store_commit.c, the coverage build).
 */
static void
test_nomem_staging(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 10, true, 1);
	struct lk_record rc;
	struct stt_snap s;
	enum store_status ss = STORE_OK;
	uint64_t seq;
	int32_t i;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/* Until the batch must grow (its first 4 KiB full). */
	atomic_store(&realloc_failed, 0);
	atomic_store(&realloc_fail, true);
	for (i = 0; i < 1000 && ss == STORE_OK; i++) {
		rc = stt_lock(2, i, "o", "f", 0, 10, true, 2);
		ss = store_put_record(st, &rc);
	}
	atomic_store(&realloc_fail, false);
	CU_ASSERT_EQUAL(ss, STORE_NOMEM);
	CU_ASSERT_EQUAL(atomic_load(&realloc_failed), 1);
	CU_ASSERT_FALSE(store_pending(st));
	CU_ASSERT_EQUAL(store_seal(st, &seq), STORE_OK);
	CU_ASSERT_EQUAL(seq, 1);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(store_durable(st), 1);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &s);
	CU_ASSERT_EQUAL_FATAL(s.ss_nrecs, 1);
	CU_ASSERT(stt_rec_equal(&s.ss_recs[0], &a));
	stt_snap_free(&s);
}

/*
 * No memory for the journal record a commit writes (the committer's
 * buffer must grow: the turn is larger than any before): the failure is
 * latched as STORE_NOMEM, reported by store_commit(), store_committed()
 * and every later seal, and the store holds what the last commit left.
 * No test had run the branch (store_commit.c, the coverage build).
 */
static void
test_nomem_commit(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 10, true, 1);
	struct lk_record rc;
	struct stt_snap s;
	uint64_t seq;
	int32_t i;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	store_test_hold_fold(st, true);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	for (i = 0; i < 8; i++) {
		rc = stt_lock(2, i, "o", "f", 0, 10, true, 2);
		CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	}
	atomic_store(&realloc_failed, 0);
	atomic_store(&realloc_fail, true);
	CU_ASSERT_EQUAL(store_commit(st), STORE_NOMEM);
	atomic_store(&realloc_fail, false);
	CU_ASSERT_EQUAL(atomic_load(&realloc_failed), 1);
	CU_ASSERT_EQUAL(store_committed(st, &seq), STORE_NOMEM);
	CU_ASSERT_EQUAL(seq, 1);
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	CU_ASSERT_EQUAL(store_seal(st, &seq), STORE_NOMEM);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &s);
	CU_ASSERT_EQUAL_FATAL(s.ss_nrecs, 1);
	CU_ASSERT(stt_rec_equal(&s.ss_recs[0], &a));
	stt_snap_free(&s);
}

/* Descriptors this process has open. */
static int
nfds(void)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Each calloc() of store_open() failing in turn (the store's own, the
 * checkpoint thread's): STORE_NOMEM with a reason, no thread or
 * descriptor left behind (the committer and compactor started before
 * the checkpoint thread are stopped), and once memory is back the store
 * opens and holds what it held.  The checkpoint thread's was run by no
 * test (store_ckp.c, the coverage build).
 */
static void
test_nomem_open(void)
{
	struct stt_snap before, after;
	struct store_config cf;
	struct store *s2 = NULL;
	enum store_status ss = STORE_NOMEM;
	char err[512];
	bool ckp = false;
	unsigned n;
	int fds;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	populate();
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &before);
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	cf.sc_durability = STORE_SYNC;
	fds = nfds();
	for (n = 1; n < 20 && ss != STORE_OK; n++) {
		err[0] = '\0';
		atomic_store(&calloc_at, n);
		ss = store_open(&cf, &s2, err, sizeof(err));
		if (ss == STORE_OK && atomic_exchange(&calloc_at, 0) == 0) {
			/* One failed late, unseen: not what is tested. */
			store_close(s2);
			s2 = NULL;
			ss = STORE_NOMEM;
			continue;
		}
		atomic_store(&calloc_at, 0);
		if (ss == STORE_OK)
			break;
		CU_ASSERT_EQUAL(ss, STORE_NOMEM);
		CU_ASSERT_PTR_NULL(s2);
		CU_ASSERT(err[0] != '\0');
		ckp |= strstr(err, "checkpoint thread") != NULL;
		CU_ASSERT_EQUAL(nfds(), fds);
	}
	CU_ASSERT_EQUAL_FATAL(ss, STORE_OK);
	CU_ASSERT(n > 2);
	CU_ASSERT(ckp);
	store_close(s2);
	CU_ASSERT_EQUAL(nfds(), fds);
	stt_snap_dir(dir, &after);
	CU_ASSERT(stt_snap_equal(&before, &after));
	stt_snap_free(&before);
	stt_snap_free(&after);
}

int
stt_register_fault(void)
{
	CU_pSuite s = CU_add_suite("store fault injection", NULL, teardown);

	if (s == NULL ||
	    !CU_add_test(s, "every call of a turn", test_fault_turn) ||
	    !CU_add_test(s, "store_epoch_begin", test_fault_epoch) ||
	    !CU_add_test(s, "loading", test_fault_load) ||
	    !CU_add_test(s, "no memory while staging: the turn is dropped",
	    test_nomem_staging) ||
	    !CU_add_test(s, "no memory for a commit's journal record: "
	    "latched", test_nomem_commit) ||
	    !CU_add_test(s, "no memory at open: refused, nothing left "
	    "behind", test_nomem_open))
		return -1;
	return 0;
}
