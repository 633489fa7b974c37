/*
 * store_ckp.c - the checkpoint thread.
 *
 * HOW IT WORKS
 *   The thread wakes every STORE_CKP_POLL_MS, syncs the log (see below),
 *   keeps part of the cache clean, and checkpoints the
 *   environment (dirty cache pages written and synced, a checkpoint record
 *   logged) when STORE_CKP_LOG_BYTES of log were written since the last
 *   checkpoint, or when `period' seconds passed since it and anything at
 *   all was written.  After each checkpoint it unlinks the log files that
 *   recovery no longer needs (DB_ENV->log_archive without DB_ARCH_LOG/DATA
 *   lists exactly those) and that hold no journal record not yet folded
 *   (store_compact.c: those numbered below st_jkeep).  Recovery after a crash replays the log from the
 *   last checkpoint but one, about 4 s per million records (measured:
 *   ~200 bytes of log per record), so the volume trigger is what bounds
 *   restart time under load (16 MiB of log, some 80,000 records, ~0.3 s;
 *   measured 0.3-1.5 s after a kill while writing 200,000 records/s); the
 *   period bounds it, and removes old logs, when the load is light.  An
 *   idle store is not checkpointed -- unless the last checkpoint left a
 *   log file below st_jkeep (a transaction, say the compactor's fold,
 *   was running when it was taken, or the fold moved st_jkeep since):
 *   then the next period checkpoints again, written or not, so that idle
 *   files go.  Catastrophic recovery (from an old
 *   backup plus all logs) is therefore not possible; nlmd's state is
 *   rebuilt by clients' reclaims anyway.
 *
 *   The thread uses the store's DB_ENV handle (free-threaded: DB_THREAD),
 *   as the compactor does.  It once opened a handle of its own, to share
 *   no error buffer with the event loop; but every handle maps the region
 *   files again, and the thread touches the whole cache (trickle,
 *   checkpoints), so the cache counted twice in nlmd's resident memory
 *   (80 bytes of RSS per held lock at a million).  Its calls are not
 *   fault-injected (they do not go through STORE_DB); a Berkeley DB
 *   message it causes may become the store's last one (st_dberr).  The
 *   loop never waits for it except on Berkeley DB's page latches and on
 *   the disk they share (a turn's p99 latency rises while a checkpoint
 *   writes pages).  It sleeps on a condition
 *   variable (CLOCK_MONOTONIC timed wait), so store_close() stops it at
 *   once unless a checkpoint is running, which it lets finish.  All
 *   signals are blocked in it: they are the event loop's.
 *
 * LOCKING
 *   ck_mu protects ck_stop.  ck_nckp and ck_nremoved are atomics written
 *   by the thread and read by store_info().  Everything else is set before
 *   the thread starts and read-only until it is joined.
 */
#include "store_impl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often the thread looks at the log volume. */
#define STORE_CKP_POLL_MS	250
/*
 * How often it syncs the log while the current log file is about to fill
 * (less room left in it than two polls' worth of log at the last rate).
 * Berkeley DB syncs a log file when a commit fills it, and under
 * durability log that commit is the event loop's: the less is left
 * unsynced then, the shorter the turn.  Measured (11 s of 16 clients
 * locking and unlocking, about one log file a second, three runs each,
 * 250 ms always against this; strace): the loop's syncs, one per file
 * filled, 12.9-20.1 ms in all against 2.9-3.4, the longest 3.0-3.5 ms
 * against 0.4-0.7; turns over 1 ms spent in the commit 10-13 against 3-4
 * (three other runs); the thread's syncs 103-119 against 406-427 (a sync
 * with nothing new to write is skipped by Berkeley DB: these come only
 * while a file is about to fill).  The clients' p99 did not change
 * (433-479 against 414-456 us).
 */
#define STORE_CKP_NEAR_MS	10
/* Share of the cache memp_trickle() keeps clean. */
#define STORE_CKP_CLEAN_PCT	20

struct store_ckp {
	DB_ENV		*ck_env;	/* the store's handle (not owned) */
	const _Atomic uint32_t *ck_keep; /* the store's st_jkeep */
	const _Atomic bool *ck_halt;	/* the store's st_lhalt */
	pthread_t	 ck_thread;
	bool		 ck_started;	/* ck_thread is joinable */
	pthread_mutex_t	 ck_mu;
	pthread_cond_t	 ck_cv;		/* signalled on stop */
	bool		 ck_stop;	/* under ck_mu */
	unsigned	 ck_period;	/* seconds; see HOW IT WORKS */
	_Atomic uint64_t ck_nckp;	/* checkpoints done */
	_Atomic uint64_t ck_nremoved;	/* log files removed */
	_Atomic uint64_t ck_nnear;	/* log syncs near a file's end */
};

/* The number of log file `path' (".../log.0000000012": 12), 0 if none. */
static uint32_t
store_ckp_logno(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b != NULL ? b + 1 : path;
	if (strncmp(b, "log.", 4) != 0)
		return 0;
	return (uint32_t)strtoul(b + 4, NULL, 10);
}

/*
 * Unlink the log files no checkpoint needs and that are below keep (the
 * first file with journal records not yet folded; 0: none may go);
 * *lowp := the lowest-numbered log file left (0: none).
 */
static int
store_ckp_archive(DB_ENV *env, uint32_t keep, uint64_t *nremoved,
    uint32_t *lowp)
{
	char **list = NULL, **p;
	uint32_t n;
	int rc;

	if ((rc = env->log_archive(env, &list, DB_ARCH_ABS)) != 0)
		return rc;
	for (p = list; p != NULL && *p != NULL; p++)
		if ((n = store_ckp_logno(*p)) != 0 && n < keep &&
		    unlink(*p) == 0)
			(*nremoved)++;
	/* One allocation holds the array and the strings. */
	free(list);
	list = NULL;
	if ((rc = env->log_archive(env, &list, DB_ARCH_LOG)) != 0)
		return rc;
	for (*lowp = 0, p = list; p != NULL && *p != NULL; p++)
		if ((n = store_ckp_logno(*p)) != 0 && (*lowp == 0 || n < *lowp))
			*lowp = n;
	free(list);
	return 0;
}

int
store_ckp_run(DB_ENV *env, const _Atomic uint32_t *keepp, uint64_t *nremoved,
    uint32_t *lowp)
{
	/*
	 * Read before the checkpoint: the fold that moved it is then on disk
	 * (a checkpoint flushes the log) before any file goes.
	 */
	uint32_t keep = atomic_load(keepp), low = 0;
	int rc, round;

	/*
	 * Recovery starts from the checkpoint *before* the last one (the last
	 * may have been torn by a crash), and log_archive keeps what that one
	 * needs; a checkpoint's LSN is where the oldest transaction active
	 * when it began started.  So a checkpoint taken during a long
	 * transaction, or one that took long while turns went on, would keep
	 * (and make recovery replay) everything since.  Hence a pair: the
	 * second, forced one (little is left to write) becomes the "one
	 * before the last" of the next; and a second pair when a file below
	 * keep is still needed (the files from keep on stay whatever a
	 * checkpoint does).  Measured: reopening after a
	 * committed million-record transaction took 3.9 s with single
	 * checkpoints, 0.1 s with pairs.
	 */
	for (round = 0; round < 2; round++) {
		if ((rc = env->txn_checkpoint(env, 0, 0, DB_FORCE)) != 0 ||
		    (rc = env->txn_checkpoint(env, 0, 0, DB_FORCE)) != 0 ||
		    (rc = store_ckp_archive(env, keep, nremoved, &low)) != 0)
			return rc;
		if (low == 0 || low >= keep)
			break;
	}
	if (lowp != NULL)
		*lowp = low;
	return 0;
}

/* Log bytes written since the last checkpoint (0 if unknown). */
static uint64_t
store_ckp_written(DB_ENV *env)
{
	DB_LOG_STAT *ls;
	uint64_t n;

	if (env->log_stat(env, &ls, 0) != 0)
		return 0;
	n = (uint64_t)ls->st_wc_mbytes * (1u << 20) + ls->st_wc_bytes;
	free(ls);
	return n;
}

/* Where the log ends: file number and offset in it (0/0 if unknown). */
static void
store_ckp_logpos(DB_ENV *env, uint32_t *filep, uint32_t *offp)
{
	DB_LOG_STAT *ls;

	*filep = *offp = 0;
	if (env->log_stat(env, &ls, 0) != 0)
		return;
	*filep = ls->st_cur_file;
	*offp = ls->st_cur_offset;
	free(ls);
}

static uint64_t
store_ckp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/*
 * Is a checkpoint due?  (See HOW IT WORKS.)  `again': the last one left
 * old log files needed.
 */
static bool
store_ckp_due(struct store_ckp *ck, uint64_t *lastp, bool again)
{
	uint64_t written = store_ckp_written(ck->ck_env);
	uint64_t now = store_ckp_now();

	if (written >= STORE_CKP_LOG_BYTES ||
	    ((written > 0 || again) && now - *lastp >= ck->ck_period)) {
		*lastp = now;
		return true;
	}
	return false;
}

/*
 * Sync the log every `ms' from now on: STORE_CKP_NEAR_MS while the
 * current log file is about to fill (rate: log bytes written between
 * the last two polls), STORE_CKP_POLL_MS otherwise.
 */
static unsigned
store_ckp_next(DB_ENV *env, uint32_t rate)
{
	uint32_t file, off;

	store_ckp_logpos(env, &file, &off);
	if (rate > 0 && off < STORE_LOG_FILE_BYTES &&
	    STORE_LOG_FILE_BYTES - off < 2 * (uint64_t)rate)
		return STORE_CKP_NEAR_MS;
	return STORE_CKP_POLL_MS;
}

static void *
store_ckp_main(void *arg)
{
	struct store_ckp *ck = arg;
	struct timespec when;
	uint64_t n, last = store_ckp_now();
	uint32_t file, off, pfile = 0, poff = 0, rate = 0;
	unsigned ms = STORE_CKP_POLL_MS, since = 0;
	uint32_t low = 0;
	int wrote;

	pthread_mutex_lock(&ck->ck_mu);
	while (!ck->ck_stop) {
		clock_gettime(CLOCK_MONOTONIC, &when);
		when.tv_nsec += ms * 1000000L;
		if (when.tv_nsec >= 1000000000L) {
			when.tv_sec++;
			when.tv_nsec -= 1000000000L;
		}
		while (!ck->ck_stop && pthread_cond_timedwait(&ck->ck_cv,
		    &ck->ck_mu, &when) != ETIMEDOUT)
			continue;
		if (ck->ck_stop)
			break;
		/* A journal append failed: nothing writes the log now. */
		if (atomic_load(ck->ck_halt))
			continue;
		pthread_mutex_unlock(&ck->ck_mu);
		/*
		 * Keep the log written and synced from here: a commit that
		 * fills a log file syncs it before it opens the next one, and
		 * the less is left to sync then, the shorter the event loop
		 * waits (under durability log nothing else syncs the log).
		 * Hence the short period near a file's end.
		 */
		(void)ck->ck_env->log_flush(ck->ck_env, NULL);
		if (ms == STORE_CKP_NEAR_MS)
			atomic_fetch_add(&ck->ck_nnear, 1);
		if ((since += ms) < STORE_CKP_POLL_MS) {
			ms = store_ckp_next(ck->ck_env, rate);
			pthread_mutex_lock(&ck->ck_mu);
			continue;
		}
		since = 0;
		store_ckp_logpos(ck->ck_env, &file, &off);
		rate = file == pfile && off >= poff ? off - poff : off;
		pfile = file;
		poff = off;
		/*
		 * And keep some of the cache clean: a commit that needs a
		 * page when all are dirty writes one out itself, in the loop.
		 */
		(void)ck->ck_env->memp_trickle(ck->ck_env, STORE_CKP_CLEAN_PCT,
		    &wrote);
		/*
		 * Again, written or not, while a log file below the journal's
		 * first one is left: a checkpoint may let it go.  Files from
		 * there on stay until the journal moves, whatever it does
		 * (counting them, an idle store whose last fold ended in the
		 * file before the current one checkpointed four times a
		 * period for ever).  keep is read now: it may have moved
		 * since the last checkpoint read it.
		 */
		if (store_ckp_due(ck, &last, low != 0 &&
		    low < atomic_load(ck->ck_keep))) {
			n = 0;
			if (store_ckp_run(ck->ck_env, ck->ck_keep, &n,
			    &low) == 0)
				atomic_fetch_add(&ck->ck_nckp, 1);
			atomic_fetch_add(&ck->ck_nremoved, n);
		}
		ms = store_ckp_next(ck->ck_env, rate);
		pthread_mutex_lock(&ck->ck_mu);
	}
	pthread_mutex_unlock(&ck->ck_mu);
	return NULL;
}

/* Safe on a partly constructed ck (not on a running thread). */
static void
store_ckp_free(struct store_ckp *ck)
{
	pthread_cond_destroy(&ck->ck_cv);
	pthread_mutex_destroy(&ck->ck_mu);
	free(ck);
}

/* Start the thread with every signal blocked but the faults. */
static int
store_ckp_spawn(struct store_ckp *ck)
{
	sigset_t all, old;
	int rc;

	store_thread_sigset(&all);
	if ((rc = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0)
		return rc;
	rc = pthread_create(&ck->ck_thread, NULL, store_ckp_main, ck);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		ck->ck_started = true;
	return rc;
}

/* The condition variable waits on CLOCK_MONOTONIC. */
static int
store_ckp_sync_init(struct store_ckp *ck)
{
	pthread_condattr_t ca;
	int rc;

	if ((rc = pthread_condattr_init(&ca)) != 0)
		return rc;
	if ((rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)) == 0)
		rc = pthread_cond_init(&ck->ck_cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc != 0)
		return rc;
	if ((rc = pthread_mutex_init(&ck->ck_mu, NULL)) != 0)
		pthread_cond_destroy(&ck->ck_cv);
	return rc;
}

enum store_status
store_ckp_start(struct store *st, unsigned period_sec, char *err,
    size_t errlen)
{
	struct store_ckp *ck;
	int rc;

	if ((ck = calloc(1, sizeof(*ck))) == NULL ||
	    store_ckp_sync_init(ck) != 0) {
		free(ck);
		snprintf(err, errlen, "checkpoint thread: out of resources");
		return STORE_NOMEM;
	}
	ck->ck_period = period_sec;
	atomic_init(&ck->ck_nckp, 0);
	atomic_init(&ck->ck_nremoved, 0);
	atomic_init(&ck->ck_nnear, 0);
	ck->ck_env = st->st_env;
	ck->ck_keep = &st->st_jkeep;
	ck->ck_halt = &st->st_lhalt;
	if ((rc = store_ckp_spawn(ck)) != 0) {
		snprintf(err, errlen, "cannot start the checkpoint thread: %s",
		    db_strerror(rc));
		store_ckp_free(ck);
		return store_status_of(st, rc);
	}
	st->st_ckp = ck;
	return STORE_OK;
}

void
store_ckp_stop(struct store_ckp *ck)
{
	if (ck == NULL)
		return;
	pthread_mutex_lock(&ck->ck_mu);
	ck->ck_stop = true;
	pthread_cond_signal(&ck->ck_cv);
	pthread_mutex_unlock(&ck->ck_mu);
	if (ck->ck_started)
		pthread_join(ck->ck_thread, NULL);
	store_ckp_free(ck);
}

void
store_ckp_counts(const struct store_ckp *ck, uint64_t *nckp,
    uint64_t *nremoved, uint64_t *nnear)
{
	if (ck == NULL) {
		*nckp = *nremoved = *nnear = 0;
		return;
	}
	*nckp = atomic_load(&ck->ck_nckp);
	*nremoved = atomic_load(&ck->ck_nremoved);
	*nnear = atomic_load(&ck->ck_nnear);
}
