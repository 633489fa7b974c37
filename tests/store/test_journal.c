/*
 * test_journal.c - the journal in Berkeley DB's log: log files holding
 * turns not yet folded are kept, whatever the checkpoints say; a store of
 * format 1 (journal databases) is folded and migrated at open.
 */
#include "stt.h"

#include "store_test.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#define HELD_TURNS	50

static char *dir;
static struct store *st;

static int
teardown(void)
{
	stt_drop(&dir, &st);
	return 0;
}

/*
 * The child: with the fold held, HELD_TURNS turns that leave a record
 * each, then ~64 MiB of log in turns that leave none, then checkpoints
 * (every second) until two more were taken; then death.  Exit codes name
 * what went wrong first.
 */
static void
held_child(void)
{
	struct store_info si;
	struct lk_record rc;
	struct store *cst;
	uint64_t t;

	if (stt_open(dir, STORE_LOG, 1, &cst) != STORE_OK)
		_exit(2);
	store_test_hold_fold(cst, true);
	for (t = 1; t <= HELD_TURNS; t++) {
		rc = stt_lock(t, 1, "owner", "file", 0, 0, true, t);
		if (store_put_record(cst, &rc) != STORE_OK ||
		    store_commit(cst) != STORE_OK)
			_exit(3);
	}
	if (!stt_churn(cst, HELD_TURNS + 1))
		_exit(4);
	switch (stt_ckp_wait(cst, HELD_TURNS + 2, 2)) {
	case -1:
		_exit(3);
	case -2:
		_exit(5);
	}
	store_info(cst, &si);
	/* Nothing folded, so no log file may have gone. */
	if (si.si_logs_removed != 0 || stt_nlogs(dir) < 4)
		_exit(6);
	raise(SIGKILL);
	_exit(7);
}

static void
test_unfolded_kept(void)
{
	struct stt_snap ss;
	size_t i;

	stt_fresh(&dir, &st);
	stt_run_killed(held_child);
	/* Every turn comes back from the log... */
	st = stt_open_ok(dir, STORE_LOG);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, HELD_TURNS);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT(ss.ss_recs[i].rc_host == i + 1 &&
		    ss.ss_recs[i].rc_token == i + 1);
	stt_snap_free(&ss);
	store_close(st);
	st = NULL;
	/* ... and once folded, the files go (at the latest at a close). */
	CU_ASSERT(stt_nlogs(dir) <= 2);
}

/*
 * BIG_LOCKS locks of ~2 KiB each (the largest handles) staged in one turn:
 * ~24 MiB, more than a log file holds, so the commit is written in parts.
 */
#define BIG_LOCKS	12000

static bool
stage_big(struct store *cst, uint64_t host)
{
	static char fh[LK_FH_MAX + 1], oh[LK_OH_MAX + 1];
	struct lk_record rc;
	unsigned i;

	memset(fh, 'f', LK_FH_MAX);
	memset(oh, 'o', LK_OH_MAX);
	for (i = 0; i < BIG_LOCKS; i++) {
		rc = stt_lock(host, (int32_t)i, oh, fh, 0, 0, true, i + 1);
		if (store_put_record(cst, &rc) != STORE_OK)
			return false;
	}
	return true;
}

/*
 * The child: one small turn committed, then a big one; with failat,
 * the big one's failat-th part fails (the parts before it are in the log,
 * some on disk), else it commits.  Then death without a close.
 */
static unsigned failat;		/* big_child()'s */

static void
big_child(void)
{
	struct lk_record one = stt_lock(1, 1, "o", "f", 0, 0, true, 1);
	struct store *cst;

	if (stt_open(dir, STORE_LOG, 0, &cst) != STORE_OK)
		_exit(2);
	store_test_hold_fold(cst, true);
	if (store_put_record(cst, &one) != STORE_OK ||
	    store_commit(cst) != STORE_OK)
		_exit(3);
	if (!stage_big(cst, 2))
		_exit(4);
	if (failat != 0)
		store_fail_after(cst, failat);
	if ((store_commit(cst) == STORE_OK) != (failat == 0))
		_exit(5);
	raise(SIGKILL);
	_exit(6);
}

static void
big_turn(unsigned fail, size_t expect)
{
	struct stt_snap ss;
	size_t i;

	stt_fresh(&dir, &st);
	failat = fail;
	stt_run_killed(big_child);
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, expect);
	for (i = 1; i < ss.ss_nrecs; i++)
		CU_ASSERT(ss.ss_recs[i].rc_host == 2 &&
		    ss.ss_recs[i].rc_token ==
		    (uint64_t)ss.ss_recs[i].rc_svid + 1);
	stt_snap_free(&ss);
}

static void
test_big_turn(void)
{
	/* Written in parts, whole after a kill -9... */
	big_turn(0, 1 + BIG_LOCKS);
	/*
	 * ... and a turn whose writing failed at its 20th part (some 19 MiB
	 * written, more than the log buffer holds) is not there at all.
	 */
	big_turn(20, 1);
}

/*
 * A fold larger than one transaction may lock: a round (or the fold at
 * open) that applies more records than the lock table has page locks
 * for failed, the failure latched and nlmd gone -- and every open after
 * that failed the same way at its own fold, so nlmd could not start
 * again.  A store with 1,000 page locks and BIG_LOCKS records of ~2 KiB
 * (some 1,500 leaf pages) stands for a server whose hosts held millions
 * of locks and went away in one turn (grace's end, a reboot, FREE_ALL).
 */
static void
test_big_fold(void)
{
	struct stt_snap ss;
	struct store_info si;
	size_t i;

	stt_fresh(&dir, &st);
	store_test_lk_max(1000);
	st = stt_open_ok(dir, STORE_LOG);
	CU_ASSERT_FATAL(stage_big(st, 2));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/* The load folds what was committed first. */
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, BIG_LOCKS);
	stt_nrec_check(st, &ss);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT_EQUAL_FATAL(store_del_record(st, &ss.ss_recs[i]),
		    STORE_OK);
	stt_snap_free(&ss);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_nrec_check(st, &ss);
	stt_snap_free(&ss);
	store_info(st, &si);
	CU_ASSERT(si.si_fold_ops >= 2 * BIG_LOCKS);
	store_close(st);
	st = NULL;
	/* Whatever was left to fold at close, the next open folds too. */
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_snap_free(&ss);
	store_test_lk_max(0);
}

/*
 * The child: BIG_LOCKS records committed and folded; then all of them
 * deleted in one turn and one more put, and the fold of that turn
 * failing at its second transaction (the first applied, the folded
 * position not moved): as a crash in the middle of a fold.  Then death.
 */
static void
fold_cut_child(void)
{
	struct lk_record one = stt_lock(3, 1, "o", "f", 0, 0, true, 1);
	struct stt_snap ss;
	struct store *cst;
	size_t i;

	store_test_lk_max(1000);
	if (stt_open(dir, STORE_LOG, 0, &cst) != STORE_OK)
		_exit(2);
	if (!stage_big(cst, 2) || store_commit(cst) != STORE_OK ||
	    stt_snap_take(cst, &ss) != STORE_OK || ss.ss_nrecs != BIG_LOCKS)
		_exit(3);
	/* The load's fold, not the compactor's, takes the next turn. */
	store_test_hold_fold(cst, true);
	for (i = 0; i < ss.ss_nrecs; i++)
		if (store_del_record(cst, &ss.ss_recs[i]) != STORE_OK)
			_exit(4);
	if (store_put_record(cst, &one) != STORE_OK ||
	    store_commit(cst) != STORE_OK)
		_exit(5);
	store_test_fold_fail_at(cst, 2);
	stt_snap_free(&ss);
	/* The load's fold fails. */
	if (stt_snap_take(cst, &ss) == STORE_OK)
		_exit(6);
	raise(SIGKILL);
	_exit(7);
}

/*
 * The compactor's fold fails: the loop, idle on store_fd(), is woken and
 * learns it from store_committed(), as after a failed commit.  It used
 * to hear of it only at its next turn, whatever woke that.
 */
static void
test_fold_fail_wakes(void)
{
	struct lk_record one = stt_lock(3, 1, "o", "f", 0, 0, true, 1);
	struct pollfd pfd;
	uint64_t seq;
	int n;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_LOG);
	store_test_fold_fail_at(st, 1);
	CU_ASSERT_EQUAL(store_put_record(st, &one), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	(void)store_committed(st, &seq);	/* drain the commit's wake-up */
	pfd.fd = store_fd(st);
	pfd.events = POLLIN;
	n = poll(&pfd, 1, 10 * STORE_TEST_COMPACT_MS);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_NOT_EQUAL(store_committed(st, &seq), STORE_OK);
	store_close(st);
	st = NULL;
}

/* A fold cut between its transactions: the next open completes it. */
static void
test_big_fold_cut(void)
{
	struct lk_record one = stt_lock(3, 1, "o", "f", 0, 0, true, 1);
	struct stt_snap ss;

	stt_fresh(&dir, &st);
	stt_run_killed(fold_cut_child);
	store_test_lk_max(1000);
	stt_snap_dir(dir, &ss);
	store_test_lk_max(0);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 1);
	if (ss.ss_nrecs == 1)
		CU_ASSERT(stt_rec_equal(&ss.ss_recs[0], &one));
	stt_snap_free(&ss);
}

/*
 * durability none drops what an earlier run stored, at open: in one
 * transaction that truncated locks.db, which locks every page -- more
 * than the lock table has for a big store, and then nlmd could not start
 * under none at all.
 */
static void
test_big_none(void)
{
	struct stt_snap ss;

	stt_fresh(&dir, &st);
	store_test_lk_max(1000);
	st = stt_open_ok(dir, STORE_LOG);
	CU_ASSERT_FATAL(stage_big(st, 2));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);
	st = stt_open_ok(dir, STORE_NONE);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_nrec_check(st, &ss);
	stt_snap_free(&ss);
	store_close(st);
	st = stt_open_ok(dir, STORE_LOG);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_snap_free(&ss);
	store_close(st);
	st = NULL;
	store_test_lk_max(0);
}

static bool
exists(const char *name)
{
	char path[4096];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) == 0;
}

static void
test_format1(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct lk_record b = stt_lock(1, 1, "o", "b", 0, 0, true, 2);
	struct lk_record c = stt_lock(2, 1, "o", "c", 0, 0, true, 3);
	struct stt_snap ss, ss2;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_SYNC);
	/*
	 * journal1.db holds the older entry (sequence 5), journal0.db the
	 * newer (9), as after a crash in the middle of a format-1 round: A
	 * is put, then deleted, so folding journal0.db first would keep it.
	 */
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &c), STORE_OK);
	CU_ASSERT_EQUAL(store_test_v1_entry(st, 1, 5), STORE_OK);
	CU_ASSERT_EQUAL(store_del_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &b), STORE_OK);
	CU_ASSERT_EQUAL(store_test_v1_entry(st, 0, 9), STORE_OK);
	store_close(st);
	st = NULL;
	CU_ASSERT(exists("journal0.db") && exists("journal1.db"));
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 2);
	if (ss.ss_nrecs == 2) {
		CU_ASSERT(stt_rec_equal(&ss.ss_recs[0], &b));
		CU_ASSERT(stt_rec_equal(&ss.ss_recs[1], &c));
	}
	CU_ASSERT(!exists("journal0.db") && !exists("journal1.db"));
	/* Migrated once: the next open finds the same. */
	stt_snap_dir(dir, &ss2);
	CU_ASSERT(stt_snap_equal(&ss, &ss2));
	stt_snap_free(&ss);
	stt_snap_free(&ss2);
}

/*
 * Load st (which folds what was committed) and check that it holds nl
 * locks and ns shares, and that meta.db counts as many.
 */
static void
counts_are(size_t nl, size_t ns)
{
	struct stt_snap ss;
	size_t i, n = 0;

	CU_ASSERT_EQUAL_FATAL(stt_snap_take(st, &ss), STORE_OK);
	for (i = 0; i < ss.ss_nrecs; i++)
		n += ss.ss_recs[i].rc_kind == LK_REC_LOCK;
	CU_ASSERT_EQUAL(n, nl);
	CU_ASSERT_EQUAL(ss.ss_nrecs - n, ns);
	stt_nrec_check(st, &ss);
	stt_snap_free(&ss);
}

/* Put (or delete) the lock on file-<i> with token t. */
static void
lock_op(int i, uint64_t t, bool put)
{
	struct lk_record rc;
	char fh[32];

	snprintf(fh, sizeof(fh), "file-%d", i);
	rc = stt_lock(1, 1, "o", fh, 0, 0, true, t);
	CU_ASSERT_EQUAL_FATAL(put ? store_put_record(st, &rc) :
	    store_del_record(st, &rc), STORE_OK);
}

/* Put (or delete) the share on file-<i> with access a. */
static void
share_op(int i, uint8_t a, bool put)
{
	struct lk_record rc;
	char fh[32];

	snprintf(fh, sizeof(fh), "file-%d", i);
	rc = stt_share(1, "o", fh, a, 0);
	CU_ASSERT_EQUAL_FATAL(put ? store_put_record(st, &rc) :
	    store_del_record(st, &rc), STORE_OK);
}

/*
 * meta.db's counts of the records of locks.db and shares.db (meta
 * "locks", "shares"; the load's check that it read them all) follow
 * every fold: new keys, overwrites (a put of a key that is there),
 * deletes, deletes of what is not there, a put and a delete of one key
 * in one round, and a reopen.
 */
static void
test_counts(void)
{
	struct stt_snap ss;
	int i;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_LOG);
	counts_are(0, 0);
	for (i = 0; i < 100; i++)
		lock_op(i, 1, true);
	for (i = 0; i < 5; i++)
		share_op(i, 1, true);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	counts_are(100, 5);
	/* 50 overwritten, 10 new; the shares overwritten. */
	for (i = 0; i < 60; i++)
		lock_op(i < 50 ? i : i + 50, 2, true);
	for (i = 0; i < 5; i++)
		share_op(i, 3, true);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	counts_are(110, 5);
	/* 30 deleted, 5 deletes of nothing; a share deleted. */
	for (i = 0; i < 35; i++)
		lock_op(i < 30 ? i : i + 1000, 2, false);
	share_op(0, 3, false);
	share_op(99, 3, false);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	counts_are(80, 4);
	/* One round: a new key put and deleted, one there deleted and put. */
	store_test_hold_fold(st, true);
	lock_op(2000, 1, true);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	lock_op(2000, 1, false);
	lock_op(50, 3, false);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	lock_op(50, 4, true);
	lock_op(2001, 1, true);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_test_hold_fold(st, false);
	counts_are(81, 4);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 85);
	stt_snap_free(&ss);
}

/*
 * A fold applied in several transactions goes on from the slot of its
 * table where the last one stopped, whichever slot that is.  (Found by
 * mutation: with the table's end taken as reached one slot early, a
 * transaction that stopped before the last slot ended the fold, and the
 * operation in the last slot was never applied -- the lock lost, the
 * folded position moved past it.)  The slots follow a hash keyed at open,
 * so every round is a new draw: CHUNK_OPS + 1 new locks fill half the
 * table, and the first transaction stops just before its last slot, with
 * that slot taken, about one round in four.
 */
#define CHUNK_OPS	63	/* operations per transaction of a fold */
#define CHUNK_ROUNDS	64

static void
test_fold_chunk_end(void)
{
	struct stt_snap ss;
	size_t want, got;
	int r, i;

	stt_fresh(&dir, &st);
	/* A fold's transaction applies lk_max / STORE_LOCKS_PER_OP (16). */
	store_test_lk_max(16 * CHUNK_OPS);
	st = stt_open_ok(dir, STORE_LOG);
	for (r = 0; r < CHUNK_ROUNDS; r++) {
		for (i = 0; i <= CHUNK_OPS; i++)
			lock_op(r * (CHUNK_OPS + 1) + i, 1, true);
		CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
		/* The load folds the round's turn. */
		CU_ASSERT_EQUAL_FATAL(stt_snap_take(st, &ss), STORE_OK);
		want = (size_t)(r + 1) * (CHUNK_OPS + 1);
		got = ss.ss_nrecs;
		CU_ASSERT_EQUAL(got, want);
		stt_nrec_check(st, &ss);
		stt_snap_free(&ss);
		if (got != want) {
			fprintf(stderr, "\nround %d: %zu locks, not %zu\n", r,
			    got, want);
			break;
		}
	}
	store_close(st);
	st = NULL;
	store_test_lk_max(0);
}

/* Log files removed behind nlmd's back: refused, not silently lost. */
static void
test_log_removed(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct store *bad = NULL;
	struct store_config cf;
	char err[512] = "", path[4096];
	unsigned long n;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_LOG);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
	for (n = 1; n < 100; n++) {
		snprintf(path, sizeof(path), "%s/log.%010lu", dir, n);
		(void)unlink(path);
	}
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	CU_ASSERT_EQUAL(store_open(&cf, &bad, err, sizeof(err)),
	    STORE_CORRUPT);
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "removed outside nlmd"));
	if (bad != NULL)
		store_close(bad);
	else if (strstr(err, "removed outside nlmd") == NULL)
		fprintf(stderr, "\nstore_open: %s\n", err);
}

/*
 * The child: with the fold held, HELD_TURNS turns of a lock each, ~64 MiB
 * of turns that leave nothing, HELD_TURNS more of a lock each; then, as
 * held_child(), checkpoints until two more were taken (so that Berkeley
 * DB's recovery needs only the last log file), and death.
 */
static void
gap_child(void)
{
	struct lk_record rc;
	struct store *cst;
	uint64_t t;

	if (stt_open(dir, STORE_LOG, 1, &cst) != STORE_OK)
		_exit(2);
	store_test_hold_fold(cst, true);
	for (t = 1; t <= 2 * HELD_TURNS; t++) {
		rc = stt_lock(t, 1, "owner", "file", 0, 0, true, t);
		if (store_put_record(cst, &rc) != STORE_OK ||
		    store_commit(cst) != STORE_OK)
			_exit(3);
		if (t == HELD_TURNS && !stt_churn(cst, 2 * HELD_TURNS + 1))
			_exit(4);
	}
	switch (stt_ckp_wait(cst, 2 * HELD_TURNS + 2, 2)) {
	case -1:
		_exit(5);
	case -2:
		_exit(6);
	}
	raise(SIGKILL);
	_exit(7);
}

/*
 * A log file removed behind nlmd's back after the folded position, the
 * position's own file still there: the log then reads as if it ended
 * before the gap, and the fold at open took what came after the gap as
 * folded -- its locks gone without a word.  Now refused too.
 */
static void
test_log_gap(void)
{
	struct store *bad = NULL;
	struct store_config cf;
	struct stt_snap ss;
	enum store_status s;
	char err[512] = "", path[4096];

	stt_fresh(&dir, &st);
	stt_run_killed(gap_child);
	CU_ASSERT_FATAL(stt_nlogs(dir) >= 4);
	snprintf(path, sizeof(path), "%s/log.%010lu", dir, 2ul);
	CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	s = store_open(&cf, &bad, err, sizeof(err));
	if (s == STORE_OK) {
		/* Whatever opens must hold every turn. */
		CU_ASSERT_EQUAL(stt_snap_take(bad, &ss), STORE_OK);
		CU_ASSERT_EQUAL(ss.ss_nrecs, 2 * HELD_TURNS);
		stt_snap_free(&ss);
		store_close(bad);
		return;
	}
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT_EQUAL(s, STORE_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "removed outside nlmd"));
	if (strstr(err, "removed outside nlmd") == NULL)
		fprintf(stderr, "\nstore_open: %s\n", err);
}

/*
 * Log files removed while the store is open, the journal not yet folded
 * from them: the next round fails, and says why.  It said "BDB0092
 * Unknown error: -29001" (our own code for it, which Berkeley DB does not
 * know), an I/O error in nlmd's last words.
 */
static void
test_log_removed_running(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct pollfd pfd;
	char path[4096];
	const char *why;
	uint64_t seq;
	unsigned long n;
	enum store_status s;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_LOG);
	store_test_hold_fold(st, true);
	store_test_tail_max(st, 8);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_FATAL(stt_churn(st, 9));
	for (n = 1; n < 3; n++) {
		snprintf(path, sizeof(path), "%s/log.%010lu", dir, n);
		CU_ASSERT_EQUAL(unlink(path), 0);
	}
	(void)store_committed(st, &seq);
	store_test_hold_fold(st, false);
	pfd.fd = store_fd(st);
	pfd.events = POLLIN;
	CU_ASSERT_EQUAL(poll(&pfd, 1, 10 * STORE_TEST_COMPACT_MS), 1);
	s = store_committed(st, &seq);
	/* Damaged, as the next open says: not an I/O error to retry. */
	CU_ASSERT_EQUAL(s, STORE_CORRUPT);
	why = store_last_error(st);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "log files were removed outside "
	    "nlmd"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, dir));
	CU_ASSERT_PTR_NULL(strstr(why, "Unknown error"));
	if (strstr(why, "removed outside nlmd") == NULL)
		fprintf(stderr, "\nstatus %d: %s\n", s, why);
	store_close(st);
	st = NULL;
}

/*
 * A journal record whose entry begins with a byte that is neither a
 * version nor a part (a newer nlmd's, or a bug's) was passed over by the
 * fold when no commit in parts was open -- its changes dropped without a
 * word, while the same record after a first part failed the fold.  It
 * must fail the fold (and the open) either way.
 */
static void
test_unknown_entry(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 10, true, 1);
	struct lk_record b = stt_lock(2, 1, "o", "f", 20, 10, true, 2);
	static const uint8_t bad[] = { 0, 5, 9, 0xff };
	struct stt_snap ss;
	char *copy;
	size_t i;

	stt_fresh(&dir, &st);
	/* A version-1 entry written so is folded at the next open. */
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_test_journal_entry(st, 1), STORE_OK);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL_FATAL(ss.ss_nrecs, 1);
	CU_ASSERT(stt_rec_equal(&ss.ss_recs[0], &a));
	stt_snap_free(&ss);
	for (i = 0; i < sizeof(bad); i++) {
		copy = stt_dir_new();
		CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
		st = stt_open_ok(copy, STORE_SYNC);
		CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
		CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
		CU_ASSERT_EQUAL(store_put_record(st, &b), STORE_OK);
		CU_ASSERT_EQUAL(store_test_journal_entry(st, bad[i]),
		    STORE_OK);
		store_close(st);
		st = NULL;
		CU_ASSERT_NOT_EQUAL(stt_open(copy, STORE_SYNC, 0, &st),
		    STORE_OK);
		CU_ASSERT_PTR_NULL(st);
		if (st != NULL) {
			store_close(st);
			st = NULL;
		}
		stt_dir_free(copy);
	}
}

/*
 * The parts of a commit written as several records count only whole,
 * first to last: a first part followed by a record that begins another
 * commit (a crash cut its writing short), middle and last parts with no
 * first before them (also right after a whole commit in parts), and a
 * first part at the log's end are not applied; the whole commits around
 * them are.  Only the last of these was tested (test_big_turn).
 */
static void
test_parts_whole(void)
{
	static const struct {
		uint8_t	 kind;
		bool	 whole;
	} seq[] = {
		{ 2, false },	/* a first part, then ... */
		{ 1, true },	/* ... a commit in one record */
		{ 3, false },	/* a middle part with no first */
		{ 4, false },	/* a last part with no first */
		{ 2, true },	/* a commit in two parts */
		{ 4, true },
		{ 3, false },	/* a middle and a last part after a */
		{ 4, false },	/* whole commit */
		{ 2, false }	/* a first part at the end */
	};
	struct lk_record rc[sizeof(seq) / sizeof(seq[0])];
	struct stt_snap ss;
	size_t i, j, n = 0;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_SYNC);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		rc[i] = stt_lock(i + 1, 1, "o", "f", 0, 0, true, i + 1);
		CU_ASSERT_EQUAL(store_put_record(st, &rc[i]), STORE_OK);
		CU_ASSERT_EQUAL(store_test_journal_entry(st, seq[i].kind),
		    STORE_OK);
	}
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		for (n = 0, j = 0; j < ss.ss_nrecs; j++)
			n += stt_rec_equal(&ss.ss_recs[j], &rc[i]);
		CU_ASSERT_EQUAL(n, seq[i].whole);
		if (n != seq[i].whole)
			fprintf(stderr, "\nrecord %zu (part %u): loaded %zu "
			    "times\n", i, seq[i].kind, n);
	}
	CU_ASSERT_EQUAL(ss.ss_nrecs, 3);
	stt_snap_free(&ss);
}

int
stt_register_journal(void)
{
	CU_pSuite s = CU_add_suite("store journal", NULL, teardown);

	if (s == NULL ||
	    !CU_add_test(s, "unfolded log files are kept",
	    test_unfolded_kept) ||
	    !CU_add_test(s, "a format-1 store is migrated", test_format1) ||
	    !CU_add_test(s, "meta.db counts the records through folds",
	    test_counts) ||
	    !CU_add_test(s, "a turn larger than a log file", test_big_turn) ||
	    !CU_add_test(s, "a fold larger than a transaction may lock",
	    test_big_fold) ||
	    !CU_add_test(s, "a fold's transactions end at any slot",
	    test_fold_chunk_end) ||
	    !CU_add_test(s, "a fold cut between its transactions",
	    test_big_fold_cut) ||
	    !CU_add_test(s, "a switch to none from a big store",
	    test_big_none) ||
	    !CU_add_test(s, "log files removed outside nlmd",
	    test_log_removed) ||
	    !CU_add_test(s, "a log file removed after the folded position",
	    test_log_gap) ||
	    !CU_add_test(s, "log files removed while it runs",
	    test_log_removed_running) ||
	    !CU_add_test(s, "a failed fold wakes the loop",
	    test_fold_fail_wakes) ||
	    !CU_add_test(s, "a journal record of an unknown version",
	    test_unknown_entry) ||
	    !CU_add_test(s, "the parts of a commit count only whole",
	    test_parts_whole))
		return -1;
	return 0;
}
