/*
 * test_durable.c - what survives a killed process, checkpoints and log
 * removal, a prompt close, and one very large transaction.
 */
#include "stt.h"

#include "store_test.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#define KILL_TURNS	200

static char *dir;
static struct store *st;

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

/* The child: KILL_TURNS committed turns, one staged, then death. */
static void
child(enum store_durability d, bool sigkill)
{
	struct store *cst;
	struct lk_record rc;
	uint64_t t;

	if (stt_open(dir, d, 0, &cst) != STORE_OK)
		_exit(2);
	for (t = 1; t <= KILL_TURNS + 1; t++) {
		rc = stt_lock(t, 1, "owner", "file", t, 1, true, t);
		if (store_put_record(cst, &rc) != STORE_OK ||
		    store_put_token(cst, t) != STORE_OK)
			_exit(3);
		if (t <= KILL_TURNS && store_commit(cst) != STORE_OK)
			_exit(4);
	}
	if (sigkill)
		raise(SIGKILL);
	_exit(0);
}

static void
killed(enum store_durability d, bool sigkill)
{
	struct stt_snap ss;
	pid_t pid;
	size_t i;
	int status;
	bool died;

	fresh();
	if ((pid = fork()) == 0)
		child(d, sigkill);
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	died = sigkill ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL :
	    WIFEXITED(status) && WEXITSTATUS(status) == 0;
	CU_ASSERT(died);
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, KILL_TURNS);
	CU_ASSERT_EQUAL(ss.ss_token, KILL_TURNS);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT(ss.ss_recs[i].rc_host == i + 1 &&
		    ss.ss_recs[i].rc_token == i + 1);
	stt_snap_free(&ss);
}

static void
test_kill_sync(void)
{
	killed(STORE_SYNC, true);
	killed(STORE_SYNC, false);
}

static void
test_kill_log(void)
{
	killed(STORE_LOG, true);
	killed(STORE_LOG, false);
}

/*
 * Highest (or, `lowest', lowest) log file number in dir (log.0000000001
 * ...), 0 if none.
 */
static unsigned long
log_bound(const char *d, bool lowest)
{
	struct dirent *de;
	unsigned long n, b = 0;
	DIR *dp;

	if ((dp = opendir(d)) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL)
		if (strncmp(de->d_name, "log.", 4) == 0 &&
		    (n = strtoul(de->d_name + 4, NULL, 10)) != 0 &&
		    (b == 0 || (lowest ? n < b : n > b)))
			b = n;
	closedir(dp);
	return b;
}

static unsigned long
last_log(const char *d)
{
	return log_bound(d, false);
}

static unsigned long
first_log(const char *d)
{
	return log_bound(d, true);
}

/*
 * Wait (up to 30 s: a loaded machine delays the checkpoint thread) for a
 * checkpoint that removed log files.  The count is what is waited for,
 * not the directory: the thread adds the files it unlinked to the count
 * once its checkpoint is over, so the files may be seen gone a moment
 * before they are counted.
 */
static bool
wait_removal(struct store *cst)
{
	struct store_info si;
	double t0 = stt_now();

	do {
		usleep(100000);
		store_info(cst, &si);
	} while ((stt_nlogs(dir) > 2 || si.si_checkpoints < 1 ||
	    si.si_logs_removed < 2) && stt_now() - t0 < 30);
	if (si.si_checkpoints >= 1 && si.si_logs_removed >= 2)
		return true;
	fprintf(stderr, "\nafter %.1f s: %zu log files, last %lu, %llu "
	    "checkpoints, %llu removed\n", stt_now() - t0, stt_nlogs(dir),
	    last_log(dir), (unsigned long long)si.si_checkpoints,
	    (unsigned long long)si.si_logs_removed);
	return false;
}

/* Records host 1..n of turn `base', one turn each (committed). */
static bool
put_turns(struct store *cst, uint64_t base, uint64_t n)
{
	struct lk_record rc;
	uint64_t i;

	for (i = 1; i <= n; i++) {
		rc = stt_lock(base + i, 1, "owner", "file", 0, 0, true, i);
		if (store_put_record(cst, &rc) != STORE_OK ||
		    store_commit(cst) != STORE_OK)
			return false;
	}
	return true;
}

/* Committed turns, a checkpoint that removed logs, more turns, kill. */
static void
ckp_child(void)
{
	struct store *cst;
	struct lk_record rc = stt_lock(999, 1, "o", "f", 0, 0, true, 1);

	if (stt_open(dir, STORE_LOG, 1, &cst) != STORE_OK)
		_exit(2);
	if (!stt_churn(cst, 1) || !put_turns(cst, 0, 50))
		_exit(3);
	if (!wait_removal(cst))
		_exit(4);
	if (!put_turns(cst, 50, 50) || store_put_record(cst, &rc) != STORE_OK)
		_exit(5);
	raise(SIGKILL);
	_exit(6);
}

static void
test_kill_after_ckp(void)
{
	struct stt_snap ss;
	size_t i;

	fresh();
	stt_run_killed(ckp_child);
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 100);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT_EQUAL(ss.ss_recs[i].rc_host, i + 1);
	stt_snap_free(&ss);
}

static void
test_checkpoint(void)
{
	struct store_info si;
	struct stt_snap ss;
	uint64_t n;

	fresh();
	CU_ASSERT_FATAL(stt_open(dir, STORE_LOG, 1, &st) == STORE_OK);
	CU_ASSERT_FATAL(stt_churn(st, 1));
	CU_ASSERT(last_log(dir) >= 4);
	/*
	 * Within a few periods a checkpoint removes the old files.  The
	 * compactor may still be folding what the churn left (more log,
	 * another file) when the first removal is seen: the bound must hold
	 * once it settles, which the next checkpoints bring about.
	 */
	CU_ASSERT(wait_removal(st));
	{
		double t0 = stt_now();

		while (stt_nlogs(dir) > 3 && stt_now() - t0 < 30)
			usleep(100000);
	}
	CU_ASSERT(stt_nlogs(dir) <= 3);
	if (stt_nlogs(dir) > 3)
		fprintf(stderr, "\n%zu log files left, last %lu\n",
		    stt_nlogs(dir), last_log(dir));
	/*
	 * An idle store is not checkpointed again and again.  (A load folds
	 * the journal first, so the compactor has nothing left to write;
	 * the checkpoint after that fold comes within the next period.)
	 */
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	stt_snap_free(&ss);
	usleep(2500000);
	store_info(st, &si);
	n = si.si_checkpoints;
	usleep(2500000);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_checkpoints, n);
	store_close(st);
	st = NULL;
}

/*
 * The volume of log written triggers a checkpoint too, whatever the
 * period: it is what bounds recovery's replay (and the log files kept)
 * under load, when the period is long (30 s by default, and nlmd's
 * configuration may set more).  Here the period is an hour: the ~64 MiB
 * of a churn must bring a checkpoint within a few polls.  (Which files
 * it may remove depends on how far the fold had come by then; those it
 * leaves go at the next, by volume again or at the period's end.)
 */
static void
test_checkpoint_volume(void)
{
	struct store_info si;
	double t0;

	fresh();
	CU_ASSERT_FATAL(stt_open(dir, STORE_LOG, 3600, &st) == STORE_OK);
	CU_ASSERT_FATAL(stt_churn(st, 1));
	t0 = stt_now();
	do {
		usleep(100000);
		store_info(st, &si);
	} while (si.si_checkpoints < 1 && stt_now() - t0 < 30);
	CU_ASSERT(si.si_checkpoints >= 1);
	printf("\n    64 MiB of log, a period of an hour: %llu checkpoints, "
	    "%llu log files removed, %zu left ",
	    (unsigned long long)si.si_checkpoints,
	    (unsigned long long)si.si_logs_removed, stt_nlogs(dir));
	store_close(st);
	st = NULL;
}

/*
 * A fold whose own log records cross into later log files: once idle,
 * the files from the one of the last folded journal record on must go
 * too.  They stayed while the server idled (st_jkeep moved only with
 * journal records: after a million locks taken and released, 17 files,
 * 272 MiB, for as long as nothing new came); now the compactor moves the
 * folded position to the log's end when nothing is left to fold.  And
 * then the store must not checkpoint again and again while nothing is
 * written (the checkpoint thread once took "more than the current log
 * file left" for a checkpoint that needs another round, and
 * checkpointed four times every period, for ever: syncs for nothing,
 * and a log that grew a little each time).  Unfolded turns are held
 * over a few log files, then folded all at once (more log than is left
 * in the journal's last file); the store idles; then one more turn.
 */
static void
test_idle_after_fold(void)
{
	struct store_info si;
	uint64_t base = 0, n, folds, reads;
	unsigned long jfile;
	size_t nlogs;
	double t0;

	fresh();
	CU_ASSERT_FATAL(stt_open(dir, STORE_LOG, 1, &st) == STORE_OK);
	store_test_hold_fold(st, true);
	while (last_log(dir) < 3 && base < 1000000) {
		CU_ASSERT_FATAL(put_turns(st, base, 1000));
		base += 1000;
	}
	jfile = last_log(dir);
	store_test_hold_fold(st, false);
	/* The fold, then checkpoints until only the pinned file is left. */
	t0 = stt_now();
	do {
		usleep(500000);
		store_info(st, &si);
	} while (si.si_fold_ops < base && stt_now() - t0 < 30);
	CU_ASSERT_EQUAL(si.si_fold_ops, base);
	/* The files up to the fold's last go (checkpoints every 1 s). */
	t0 = stt_now();
	while (first_log(dir) < last_log(dir) && stt_now() - t0 < 30)
		usleep(200000);
	usleep(3000000);
	store_info(st, &si);
	n = si.si_checkpoints;
	nlogs = stt_nlogs(dir);
	usleep(3000000);
	store_info(st, &si);
	printf("\n    %llu turns folded at once (the journal ended in log "
	    "file %lu, the fold in %lu); idle: log files %lu-%lu, %llu "
	    "position moves; 3 s more: %llu checkpoints ",
	    (unsigned long long)base, jfile, last_log(dir), first_log(dir),
	    last_log(dir), (unsigned long long)si.si_fold_moves,
	    (unsigned long long)(si.si_checkpoints - n));
	CU_ASSERT(last_log(dir) > jfile);
	CU_ASSERT_EQUAL(first_log(dir), last_log(dir));
	CU_ASSERT(si.si_fold_moves >= 1);
	CU_ASSERT_EQUAL(si.si_checkpoints, n);
	CU_ASSERT_EQUAL(stt_nlogs(dir), nlogs);
	/*
	 * The tail starts where the position moved: the round after the
	 * move folds a new turn from it, reading no log.  (Found by
	 * mutation: with the tail left starting at the journal's last
	 * record, the first round after every move read the log back.)
	 */
	folds = si.si_folds;
	reads = si.si_fold_reads;
	CU_ASSERT_FATAL(put_turns(st, base, 1));
	t0 = stt_now();
	do {
		usleep(100000);
		store_info(st, &si);
	} while (si.si_folds == folds && stt_now() - t0 < 10);
	CU_ASSERT(si.si_folds > folds);
	CU_ASSERT_EQUAL(si.si_fold_reads, reads);
	store_close(st);
	st = NULL;
}

/*
 * The position moved while idle is where the next open reads on: turns
 * held over a few log files, folded at once, the store idle until the
 * files before the last have gone; then 50 more turns, and SIGKILL.
 * Every turn must come back (the child leaves how many it made in
 * <dir>.turns).
 */
static void
move_child(void)
{
	struct store *cst;
	uint64_t base = 0;
	double t0;
	char path[4096];
	FILE *f;

	if (stt_open(dir, STORE_LOG, 1, &cst) != STORE_OK)
		_exit(2);
	store_test_hold_fold(cst, true);
	while (last_log(dir) < 3 && base < 1000000) {
		if (!put_turns(cst, base, 1000))
			_exit(3);
		base += 1000;
	}
	store_test_hold_fold(cst, false);
	t0 = stt_now();
	while ((first_log(dir) < last_log(dir) || last_log(dir) <= 3) &&
	    stt_now() - t0 < 30)
		usleep(100000);
	if (first_log(dir) != last_log(dir))
		_exit(4);
	if (!put_turns(cst, base, 50))
		_exit(5);
	snprintf(path, sizeof(path), "%s.turns", dir);
	if ((f = fopen(path, "w")) == NULL)
		_exit(6);
	fprintf(f, "%llu\n", (unsigned long long)(base + 50));
	fclose(f);
	raise(SIGKILL);
	_exit(7);
}

static void
test_kill_after_move(void)
{
	struct stt_snap ss;
	unsigned long long turns = 0;
	char path[4096];
	FILE *f;
	size_t i;

	fresh();
	stt_run_killed(move_child);
	snprintf(path, sizeof(path), "%s.turns", dir);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%llu", &turns) != 1)
			turns = 0;
		fclose(f);
		unlink(path);
	}
	CU_ASSERT_FATAL(turns > 50);
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, turns);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT_EQUAL(ss.ss_recs[i].rc_host, i + 1);
	stt_snap_free(&ss);
}

/*
 * The compactor looks at the log's end while a commit is appending: the
 * commit's record is in the log, its st_jend not yet set.  When that
 * record is the first of a new log file, a round with nothing to fold
 * would move the folded position to it (a file after the last fold's)
 * and take it as folded: never applied, the turn lost at the next open.
 * (store_compact_round() reads the end only while no commit appends:
 * without that, this test loses all 64 locks.)
 *
 * With the compactor held, turns that leave nothing fill log file F to
 * within 64 KiB of its end and are folded (a load); then one turn of 64
 * locks, some 130 KiB, which goes into file F+1, with a flush.  Under
 * durability log the loop (this thread) writes and syncs it: its sync of
 * F+1, the record written and not yet published, lets the compactor go
 * and waits 1.5 s, three of its rounds, before the sync goes on.
 */
/* A log file's size (store_impl.h's STORE_LOG_FILE_BYTES). */
#define LOG_FILE_BYTES	(16ul << 20)
#define RACE_ROOM	(64ul << 10)
#define RACE_LOCKS	64

static pthread_t race_main;
static char race_log[32];		/* the log file whose sync stalls */
static atomic_bool race_armed, race_stalled;

static void
race_hook(int fd)
{
	char path[64], target[4096];
	const char *base;
	ssize_t n;

	if (!atomic_load(&race_armed) ||
	    !pthread_equal(pthread_self(), race_main))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((n = readlink(path, target, sizeof(target) - 1)) <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	if (strcmp(base != NULL ? base + 1 : target, race_log) != 0)
		return;
	atomic_store(&race_armed, false);
	store_test_hold_fold(st, false);
	usleep(1500000);
	atomic_store(&race_stalled, true);
}

/* One turn: n locks of host `host' (~2 KiB each) put, and with del deleted. */
static void
race_turn(uint64_t host, unsigned n, bool del)
{
	static char fh[LK_FH_MAX + 1], oh[LK_OH_MAX + 1];
	struct lk_record rc;
	unsigned i;

	memset(fh, 'f', LK_FH_MAX);
	memset(oh, 'o', LK_OH_MAX);
	for (i = 0; i < n; i++) {
		rc = stt_lock(host, (int32_t)i, oh, fh, 0, 0, true, i + 1);
		CU_ASSERT_EQUAL_FATAL(store_put_record(st, &rc), STORE_OK);
		if (del)
			CU_ASSERT_EQUAL_FATAL(store_del_record(st, &rc),
			    STORE_OK);
	}
}

static void
test_move_vs_append(void)
{
	unsigned long file, off, file0;
	struct stt_snap ss;
	size_t i;

	fresh();
	CU_ASSERT_FATAL(stt_open(dir, STORE_LOG, 0, &st) == STORE_OK);
	store_test_hold_fold(st, true);
	store_test_log_end(st, false, &file0, &off);
	CU_ASSERT_FATAL(file0 > 0);
	for (;;) {
		store_test_log_end(st, false, &file, &off);
		CU_ASSERT_FATAL(file == file0);
		if (LOG_FILE_BYTES - off <= RACE_ROOM)
			break;
		race_turn(9, LOG_FILE_BYTES - off > 4 * RACE_ROOM ? 16 : 1,
		    true);
		CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	}
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_snap_free(&ss);
	store_test_log_end(st, false, &file, &off);
	CU_ASSERT_FATAL(file == file0);
	snprintf(race_log, sizeof(race_log), "log.%010lu", file0 + 1);
	race_main = pthread_self();
	atomic_store(&race_stalled, false);
	atomic_store(&race_armed, true);
	atomic_store(&stt_sync_hook, race_hook);
	race_turn(10, RACE_LOCKS, false);
	store_require_flush(st);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	atomic_store(&stt_sync_hook, NULL);
	atomic_store(&race_armed, false);
	store_test_log_end(st, false, &file, &off);
	/* The turn began file F+1, and its sync was held. */
	CU_ASSERT_EQUAL(file, file0 + 1);
	CU_ASSERT(atomic_load(&race_stalled));
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, RACE_LOCKS);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT_EQUAL(ss.ss_recs[i].rc_host, 10);
	stt_snap_free(&ss);
}

static void
test_close_prompt(void)
{
	double t0;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	usleep(200000);
	t0 = stt_now();
	store_close(st);
	st = NULL;
	CU_ASSERT(stt_now() - t0 < 1.0);
}

/* One transaction of n puts, then one of n deletes. */
static void
test_big_txn(void)
{
	size_t i, n = stt_long() ? 1000000 : 100000;
	struct lk_record rc;
	struct stt_snap ss;
	char fh[32];
	double t0, t1, t2;

	fresh();
	st = stt_open_ok(dir, STORE_LOG);
	t0 = stt_now();
	for (i = 0; i < n; i++) {
		snprintf(fh, sizeof(fh), "file-%zu", i / 4);
		rc = stt_lock(i % 1000 + 1, (int32_t)(i / 1000), "owner", fh,
		    i % 4 * 100, 100, true, i + 1);
		CU_ASSERT_EQUAL_FATAL(store_put_record(st, &rc), STORE_OK);
	}
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	t1 = stt_now();
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, n);
	stt_snap_free(&ss);
	st = stt_open_ok(dir, STORE_LOG);
	t2 = stt_now();
	for (i = 0; i < n; i++) {
		snprintf(fh, sizeof(fh), "file-%zu", i / 4);
		rc = stt_lock(i % 1000 + 1, (int32_t)(i / 1000), "owner", fh,
		    i % 4 * 100, 100, true, i + 1);
		CU_ASSERT_EQUAL_FATAL(store_del_record(st, &rc), STORE_OK);
	}
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	printf("\n  [%zu puts in one txn %.2f s, %zu deletes %.2f s] ", n,
	    t1 - t0, n, stt_now() - t2);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_snap_free(&ss);
}

/* Does log file n of dir exist?  (Berkeley DB creates them full size.) */
static bool
log_exists(unsigned long n)
{
	char path[4096];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/log.%010lu", dir, n);
	return stat(path, &sb) == 0;
}

/* A turn of one small record (committed), then 10 ms of nothing. */
static void
small_turn(unsigned i)
{
	struct lk_record rc = stt_lock(7, (int32_t)i, "o", "f", 0, 0, true,
	    i + 1);

	CU_ASSERT_EQUAL_FATAL(store_put_record(st, &rc), STORE_OK);
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	usleep(10000);
}

/*
 * `turns' turns (0: until log file `upto' exists) of 16 records of about
 * 2 KiB each: some 33 KiB of log a turn.
 */
static void
big_turns(unsigned turns, unsigned long upto)
{
	static char fh[LK_FH_MAX + 1], oh[LK_OH_MAX + 1];
	struct lk_record rc;
	unsigned t, i;

	memset(fh, 'f', LK_FH_MAX);
	memset(oh, 'o', LK_OH_MAX);
	for (t = 0; turns > 0 ? t < turns : !log_exists(upto) && t < 10000;
	    t++) {
		for (i = 0; i < 16; i++) {
			rc = stt_lock(8, (int32_t)i, oh, fh, 0, 0, true, t);
			CU_ASSERT_EQUAL_FATAL(t % 2 == 0 ?
			    store_put_record(st, &rc) :
			    store_del_record(st, &rc), STORE_OK);
		}
		CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	}
}

/*
 * The checkpoint thread syncs the log every 10 ms while the current log
 * file is about to fill (store_ckp.c), and only then: never while a
 * store writes little; soon after 13 of the first file's 16 MiB came at
 * once; and no more once the next file is begun and the writing slow.
 */
static void
test_near_end(void)
{
	struct store_info si;
	uint64_t n0;
	unsigned i = 0;
	double t0;

	fresh();
	st = stt_open_ok(dir, STORE_LOG);
	for (t0 = stt_now(); stt_now() - t0 < 0.6; )
		small_turn(i++);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_log_syncs_near, 0);

	big_turns(390, 0);		/* some 12.6 of the 16 MiB */
	CU_ASSERT_FATAL(log_exists(1) && !log_exists(2));
	t0 = stt_now();
	do {
		small_turn(i++);
		store_info(st, &si);
	} while (si.si_log_syncs_near == 0 && stt_now() - t0 < 10);
	CU_ASSERT(si.si_log_syncs_near > 0);

	big_turns(0, 2);
	CU_ASSERT_FATAL(log_exists(2));
	/* Steady within two polls (0.5 s); a loaded machine may delay. */
	t0 = stt_now();
	do {
		store_info(st, &si);
		n0 = si.si_log_syncs_near;
		for (double t1 = stt_now(); stt_now() - t1 < 0.6; )
			small_turn(i++);
		store_info(st, &si);
	} while (si.si_log_syncs_near != n0 && stt_now() - t0 < 10);
	CU_ASSERT_EQUAL(si.si_log_syncs_near, n0);
	printf("\n  [%llu syncs near the end] ",
	    (unsigned long long)si.si_log_syncs_near);
	store_close(st);
	st = NULL;
}

/* A lock of host 1 put, committed and folded, then death: no checkpoint. */
static void
lost_child(void)
{
	struct lk_record b = stt_lock(1, 1, "o", "b", 0, 0, true, 2);
	struct store *cst;
	struct stt_snap ss;

	if (stt_open(dir, STORE_SYNC, 0, &cst) != STORE_OK)
		_exit(2);
	if (store_put_record(cst, &b) != STORE_OK ||
	    store_commit(cst) != STORE_OK)
		_exit(3);
	/*
	 * A load folds the journal: the lock is in locks.db's pages, in the
	 * cache, and the folded position moves past it in meta.db.  The
	 * fold's transaction reaches the log file with the next flushed
	 * commit: only recovery then puts the lock in locks.db.
	 */
	if (stt_snap_take(cst, &ss) != STORE_OK)
		_exit(4);
	stt_snap_free(&ss);
	if (store_put_token(cst, 5) != STORE_OK ||
	    store_commit(cst) != STORE_OK)
		_exit(5);
	raise(SIGKILL);
	_exit(6);
}

/*
 * locks.db gone after a crash: refused, and before recovery runs (which
 * would pass over the file's changes in the log, and after another
 * checkpoint never redo them).  Put back, the store recovers whole,
 * with the lock folded into locks.db after the last checkpoint.  (Before
 * the check the open succeeded with locks.db empty, and the file put
 * back afterwards had lost that lock.)
 */
static void
test_kill_db_lost(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct store *bad = NULL;
	struct store_config cf;
	struct stt_snap ss;
	char err[512] = "", path[PATH_MAX], aside[PATH_MAX];
	enum store_status s;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
	stt_run_killed(lost_child);
	snprintf(path, sizeof(path), "%s/locks.db", dir);
	snprintf(aside, sizeof(aside), "%s/aside", dir);
	CU_ASSERT_EQUAL_FATAL(rename(path, aside), 0);
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	s = store_open(&cf, &bad, err, sizeof(err));
	if (s == STORE_OK) {
		store_close(bad);
		bad = NULL;
	}
	CU_ASSERT_EQUAL(s, STORE_CORRUPT);
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "locks.db"));
	if (s != STORE_CORRUPT)
		fprintf(stderr, "\nstore_open: %s: %s\n", store_strerror(s),
		    err);
	/* Not created anew (if it was, out of the way with it). */
	CU_ASSERT(access(path, F_OK) == -1);
	if (access(path, F_OK) == 0)
		CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	CU_ASSERT_EQUAL_FATAL(rename(aside, path), 0);
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 2);
	if (ss.ss_nrecs != 2)
		printf("\n  put back: %zu locks ", ss.ss_nrecs);
	stt_snap_free(&ss);
}

/* The child's sync hook: death in the middle of the next sync. */
static void
die_hook(int fd)
{
	(void)fd;
	raise(SIGKILL);
}

/*
 * Lock a committed; then death in the middle of the flush of lock b's
 * commit, while the thread that syncs holds Berkeley DB's log mutexes.
 */
static void
midsync_child(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct lk_record b = stt_lock(2, 1, "o", "b", 0, 0, true, 2);
	struct store *cst;

	if (stt_open(dir, STORE_SYNC, 0, &cst) != STORE_OK)
		_exit(2);
	if (store_put_record(cst, &a) != STORE_OK ||
	    store_commit(cst) != STORE_OK)
		_exit(3);
	atomic_store(&stt_sync_hook, die_hook);
	if (store_put_record(cst, &b) != STORE_OK)
		_exit(4);
	(void)store_commit(cst);
	_exit(5);
}

/*
 * The reopen, in a process of its own that an open waiting for ever
 * cannot take the test binary with it: exit 0 if the store opens and
 * loads within 30 s.
 */
static void
midsync_reopen(void)
{
	struct store *cst;
	struct stt_snap ss;

	alarm(30);
	if (stt_open(dir, STORE_SYNC, 0, &cst) != STORE_OK)
		_exit(2);
	if (stt_snap_take(cst, &ss) != STORE_OK)
		_exit(3);
	_exit(0);
}

/*
 * A process killed in the middle of a commit's flush leaves Berkeley
 * DB's region files with its mutexes held (the log's, the thread's
 * transaction's locks).  The next open must not join them as they are
 * (DB_RECOVER rebuilds them): it would wait for ever for the dead
 * holder.  Reopened, the store holds lock a, and lock b or not (its
 * record reached the OS, its sync did not end).
 */
static void
test_kill_midsync(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "a", 0, 0, true, 1);
	struct stt_snap ss;
	pid_t pid;
	int status;

	fresh();
	stt_run_killed(midsync_child);
	if ((pid = fork()) == 0)
		midsync_reopen();
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (WIFSIGNALED(status))
		printf("\n    the reopen died of signal %d (SIGALRM: it "
		    "waited 30 s) ", WTERMSIG(status));
	else if (WEXITSTATUS(status) != 0)
		printf("\n    the reopen exited %d ", WEXITSTATUS(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return;
	stt_snap_dir(dir, &ss);
	CU_ASSERT(ss.ss_nrecs == 1 || ss.ss_nrecs == 2);
	CU_ASSERT(ss.ss_nrecs >= 1 && stt_rec_equal(&ss.ss_recs[0], &a));
	stt_snap_free(&ss);
}

int
stt_register_durable(void)
{
	CU_pSuite s = CU_add_suite("store durability", NULL, teardown);

	if (s == NULL ||
	    !CU_add_test(s, "killed process, STORE_SYNC", test_kill_sync) ||
	    !CU_add_test(s, "killed process, STORE_LOG", test_kill_log) ||
	    !CU_add_test(s, "checkpoints remove logs", test_checkpoint) ||
	    !CU_add_test(s, "checkpoints by log volume, whatever the period",
	    test_checkpoint_volume) ||
	    !CU_add_test(s, "killed after a checkpoint", test_kill_after_ckp) ||
	    !CU_add_test(s, "killed, then locks.db lost", test_kill_db_lost) ||
	    !CU_add_test(s, "killed in the middle of a flush",
	    test_kill_midsync) ||
	    !CU_add_test(s, "idle after a fold across a log file's end",
	    test_idle_after_fold) ||
	    !CU_add_test(s, "killed after the folded position moved while "
	    "idle", test_kill_after_move) ||
	    !CU_add_test(s, "a commit appending when the compactor looks at "
	    "the log's end", test_move_vs_append) ||
	    !CU_add_test(s, "close is prompt", test_close_prompt) ||
	    !CU_add_test(s, "one large transaction", test_big_txn) ||
	    !CU_add_test(s, "the log synced often near a file's end",
	    test_near_end))
		return -1;
	return 0;
}
