/*
 * store_commit.c - committing sealed turns: each commit is one journal
 * record in Berkeley DB's log, written by the committer thread (durability
 * sync) or at once by the loop (log); and the folding that
 * store_compact.c uses.
 *
 * HOW IT WORKS
 *   store_seal() hands the turn's batch (its operations, already encoded)
 *   over.  Under STORE_SYNC a commit means a disk flush (~0.1-1 ms), so
 *   the batch is queued for the committer thread: it takes every batch
 *   queued (up to STORE_COMMIT_OPS operations) and appends them to the
 *   log as one record (DB_ENV->log_put with DB_FLUSH: written and
 *   synced); while it flushes, the loop decides the next turns, and they
 *   share the next flush (group commit across turns).  Under STORE_LOG
 *   the commit only writes to the OS (a few microseconds), so the loop
 *   appends the record itself (DB_LOG_WRNOSYNC, or DB_FLUSH when a host's
 *   first record asked for a flush) and the turn is durable when
 *   store_seal() returns: no thread hand-off on the reply path.  Either
 *   way a commit is one append to the log, whatever the number of records
 *   it changes, and no transaction: the record is the commit (Berkeley
 *   DB's recovery drops a torn record at the log's end).  store_compact.c
 *   folds the journal into the record databases in the background.  After
 *   a commit the sequence number of its last batch is published as
 *   committed (and, from the thread, the eventfd the loop watches is
 *   written).  What the loop releases after that is exactly what turns
 *   1..seq reported.
 *
 *   A failed append is the failure latched (st_cerr): batches behind it
 *   are dropped, seals are refused, and the loop exits at once (the
 *   in-memory state has moved on; recovery runs at the next open).  The
 *   store is then what the last successful commit left: Berkeley DB
 *   keeps the failed record in its log buffer, and a later flush of the
 *   log would write it, so from the failure on nothing writes the log
 *   (st_lhalt).  Two cases remain: a write that succeeded and a sync
 *   after it that failed (the record is in the OS's cache and may reach
 *   the disk; no log of any kind can take it back), and a flush by
 *   another thread that began in the microseconds between the failure
 *   and st_lhalt.  Such a commit, never answered, comes back at the next
 *   open: locks and shares reclaimable, which their owners do not
 *   reclaim and grace drops at its end; no client lost anything.
 *
 * LOCKING
 *   st_cmu protects the queue, st_committed, st_cerr, st_cur, st_cstop,
 *   the free list and the counters of st_info.  st_jmu: see
 *   store_compact.c.  st_jbuf belongs to whoever commits (the thread, or
 *   the loop when there is none).
 */
#include "store_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct store_batch *
store_batch_new(void)
{
	return calloc(1, sizeof(struct store_batch));
}

bool
store_batch_room(struct store_batch *b, size_t need, size_t first)
{
	size_t cap;
	uint8_t *p;

	if (b->b_len + need <= b->b_cap)
		return true;
	for (cap = b->b_cap ? b->b_cap : first; cap < b->b_len + need;
	    cap *= 2)
		continue;
	if ((p = realloc(b->b_buf, cap)) == NULL)
		return false;
	b->b_buf = p;
	b->b_cap = cap;
	return true;
}

static void
store_batch_free(struct store_batch *b)
{
	if (b != NULL) {
		free(b->b_buf);
		free(b);
	}
}

/* ---- folding operations into one net change set ---- */

struct store_slot {
	uint64_t		 sl_hash;
	const struct store_op	*sl_op;		/* NULL: empty */
};

/*
 * Keys carry client-chosen bytes (file and owner handles): a public hash
 * would let a client make one round's table a single chain.  SipHash
 * with a key the store draws at open (store_open) does not.
 */
static uint64_t
store_op_hash(const struct store_fold *fo, const struct store_op *op)
{
	return lk_siphash(fo->fo_key, op->op_dbi, op + 1, op->op_klen);
}

static bool
store_op_samekey(const struct store_op *a, const struct store_op *b)
{
	return a->op_dbi == b->op_dbi && a->op_klen == b->op_klen &&
	    memcmp(a + 1, b + 1, a->op_klen) == 0;
}

/* Make the fold table empty with room for n operations.  false: ENOMEM. */
static bool
store_fold_reset(struct store_fold *fo, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	if (cap > fo->fo_cap) {
		free(fo->fo_slot);
		if ((fo->fo_slot = calloc(cap, sizeof(*fo->fo_slot))) ==
		    NULL) {
			fo->fo_cap = 0;
			return false;
		}
		fo->fo_cap = cap;
	} else
		memset(fo->fo_slot, 0, cap * sizeof(*fo->fo_slot));
	fo->fo_mask = cap - 1;
	return true;
}

/* The last operation on a key wins (open addressing, linear probing). */
static void
store_fold_add(struct store_fold *fo, const struct store_op *op)
{
	uint64_t h = store_op_hash(fo, op);
	size_t i = (size_t)h & fo->fo_mask;

	while (fo->fo_slot[i].sl_op != NULL) {
		if (fo->fo_slot[i].sl_hash == h &&
		    store_op_samekey(fo->fo_slot[i].sl_op, op)) {
			fo->fo_slot[i].sl_op = op;
			return;
		}
		i = (i + 1) & fo->fo_mask;
	}
	fo->fo_slot[i].sl_hash = h;
	fo->fo_slot[i].sl_op = op;
}

bool
store_fold(struct store *st, const struct store_batch *run, size_t nops,
    struct store_fold *fo)
{
	const struct store_batch *b;
	size_t off;

	if (!store_fold_reset(fo, nops))
		return false;
	memcpy(fo->fo_key, st->st_fkey, sizeof(fo->fo_key));
	for (b = run; b != NULL; b = b->b_next)
		for (off = 0; off < b->b_len; ) {
			const struct store_op *op =
			    (const struct store_op *)(const void *)
			    (b->b_buf + off);

			store_fold_add(fo, op);
			off += STORE_OP_SPACE(op->op_klen, op->op_vlen);
		}
	return true;
}

void
store_fold_free(struct store_fold *fo)
{
	free(fo->fo_slot);
	fo->fo_slot = NULL;
	fo->fo_cap = 0;
}

bool
store_buf_trim(uint8_t **bufp, size_t *capp)
{
	if (*capp <= STORE_KEEP_BYTES)
		return false;
	free(*bufp);
	*bufp = NULL;
	*capp = 0;
	return true;
}

bool
store_fold_trim(struct store_fold *fo)
{
	if (fo->fo_cap * sizeof(*fo->fo_slot) <= STORE_KEEP_BYTES)
		return false;
	store_fold_free(fo);
	return true;
}

static DB *
store_dbi_db(struct store *st, unsigned dbi)
{
	switch (dbi) {
	case STORE_DBI_META:
		return st->st_meta;
	case STORE_DBI_HOSTS:
		return st->st_hosts;
	case STORE_DBI_LOCKS:
		return st->st_locks;
	default:
		return st->st_shares;
	}
}

/*
 * Apply one operation in txn.  A put or delete in locks.db or shares.db
 * counts in *nr what it adds or removes: a put first as DB_NOOVERWRITE,
 * which fails (DB_KEYEXIST, nothing written) on a key that is there, then
 * as an overwrite; a delete that finds nothing removes nothing.  Exact,
 * also when a fold cut short by a crash is applied again.
 */
static int
store_apply_op(struct store *st, DB_TXN *txn, const struct store_op *op,
    uint64_t *puts, uint64_t *dels, struct store_nrec *nr)
{
	DB *db = store_dbi_db(st, op->op_dbi);
	const uint8_t *key = (const uint8_t *)(op + 1);
	uint64_t *n = op->op_dbi == STORE_DBI_LOCKS ? &nr->nr_n[0] :
	    op->op_dbi == STORE_DBI_SHARES ? &nr->nr_n[1] : NULL;
	DBT k, v;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.data = (void *)(uintptr_t)key;
	k.size = op->op_klen;
	if (op->op_put) {
		v.data = (void *)(uintptr_t)(key + op->op_klen);
		v.size = op->op_vlen;
		(*puts)++;
		if (n == NULL)
			return db->put(db, txn, &k, &v, 0);
		if ((rc = db->put(db, txn, &k, &v, DB_NOOVERWRITE)) == 0)
			(*n)++;
		return rc == DB_KEYEXIST ? db->put(db, txn, &k, &v, 0) : rc;
	}
	(*dels)++;
	if ((rc = db->del(db, txn, &k, 0)) == 0 && n != NULL)
		(*n)--;
	/* Deleting what is not there is fine (store.h). */
	return rc == DB_NOTFOUND ? 0 : rc;
}

int
store_fold_apply(struct store *st, const struct store_fold *fo, DB_TXN *txn,
    size_t *atp, size_t max, uint64_t *puts, uint64_t *dels,
    struct store_nrec *nr)
{
	size_t i, n = 0;
	int rc;

	for (i = *atp; i <= fo->fo_mask && n < max; i++)
		if (fo->fo_slot[i].sl_op != NULL) {
			if ((rc = store_apply_op(st, txn, fo->fo_slot[i].sl_op,
			    puts, dels, nr)) != 0)
				return rc;
			n++;
		}
	*atp = i;
	return 0;
}

/* ---- one commit: one journal record ---- */

/* Make room for need bytes in st_jbuf; false: ENOMEM. */
static bool
store_jbuf_room(struct store *st, size_t need)
{
	uint8_t *p;

	if (need <= st->st_jcap)
		return true;
	if ((p = realloc(st->st_jbuf, need)) == NULL)
		return false;
	st->st_jbuf = p;
	st->st_jcap = need;
	return true;
}

/*
 * Append st_jbuf[0..len) as one journal record whose payload starts with
 * `kind' (STORE_REC_V1 or a STORE_JREC_*); a code.  DB_LOG_NOCOPY: without
 * it Berkeley DB copies every record into a buffer it allocates (so that
 * encryption, which we do not use, may work in place); it keeps no
 * reference once log_put returns.
 */
static int
store_journal_put(struct store *st, size_t len, uint8_t kind, uint32_t flags,
    DB_LSN *lsnp)
{
	uint32_t hdr[4] = { STORE_LOGREC, 0, 0, 0 };
	DBT d;

	memcpy(st->st_jbuf, hdr, STORE_LOGREC_HDR);
	st->st_jbuf[STORE_LOGREC_HDR] = kind;
	memset(&d, 0, sizeof(d));
	d.data = st->st_jbuf;
	d.size = (u_int32_t)len;
	return STORE_DB(st, st->st_env->log_put(st->st_env, lsnp, &d,
	    flags | DB_LOG_NOCOPY));
}

/*
 * Append the run to the log as one journal record (the log record header,
 * then the value a format-1 journal entry held), or as several when it
 * is larger than STORE_LOGREC_MAX: only the last is written out (and
 * flushed, if asked) by us.  Berkeley DB writes the earlier parts out
 * itself when they fill its log buffer (STORE_LOG_BUF_BYTES), so a crash
 * may leave some parts without the last: the fold drops those
 * (store_compact_record).  A code.
 */
static int
store_journal_append(struct store *st, const struct store_batch *run,
    size_t nops, bool flush)
{
	const struct store_batch *b;
	size_t len = STORE_LOGREC_HDR + 1, off, need, total = len;
	uint8_t kind = STORE_REC_V1;
	DB_LSN lsn;
	int rc = 0;

	/*
	 * Room for the whole run or the largest part, at once (encoded ops
	 * are never longer): growing op by op would copy the part again
	 * and again.
	 */
	for (b = run; b != NULL; b = b->b_next)
		total += b->b_len;
	if (!store_jbuf_room(st, total < STORE_LOGREC_ROOM ? total :
	    STORE_LOGREC_ROOM))
		return ENOMEM;
	/* Until st_jend says where it ended: see store_compact_round(). */
	pthread_mutex_lock(&st->st_jmu);
	st->st_jappending = true;
	pthread_mutex_unlock(&st->st_jmu);
	for (b = run; b != NULL && rc == 0; b = b->b_next)
		for (off = 0; off < b->b_len && rc == 0; ) {
			const struct store_op *op =
			    (const struct store_op *)(const void *)
			    (b->b_buf + off);

			need = 8 + (size_t)op->op_klen + op->op_vlen;
			if (len + need > STORE_LOGREC_MAX &&
			    len > STORE_LOGREC_HDR + 1) {
				rc = store_journal_put(st, len,
				    kind == STORE_REC_V1 ? STORE_JREC_FIRST :
				    STORE_JREC_MIDDLE, 0, &lsn);
				kind = STORE_JREC_MIDDLE;
				len = STORE_LOGREC_HDR + 1;
			}
			if (rc == 0 && !store_jbuf_room(st, len + need))
				rc = ENOMEM;
			if (rc == 0)
				len += store_enc_jop(st->st_jbuf + len, op);
			off += STORE_OP_SPACE(op->op_klen, op->op_vlen);
		}
	if (rc == 0 && !store_jbuf_room(st, len))
		rc = ENOMEM;
	if (rc == 0)
		rc = store_journal_put(st, len, kind == STORE_REC_V1 ?
		    STORE_REC_V1 : STORE_JREC_LAST,
		    flush ? DB_FLUSH : DB_LOG_WRNOSYNC, &lsn);
	if (rc != 0)
		atomic_store(&st->st_lhalt, true);
	pthread_mutex_lock(&st->st_jmu);
	st->st_jappending = false;
	if (rc == 0) {
		st->st_jend = lsn;
		store_compact_noted(st, nops);
	}
	store_compact_tail(st, run, rc == 0);
	pthread_mutex_unlock(&st->st_jmu);
	(void)store_buf_trim(&st->st_jbuf, &st->st_jcap);
	return rc;
}

/* ---- the thread ---- */

/* Take the next run of queued batches (st_cmu held); NULL when none. */
static struct store_batch *
store_take_run(struct store *st, size_t *nopsp, bool *flushp)
{
	struct store_batch *run = st->st_qhead, *b = run, *last = NULL;
	size_t n = 0;

	*flushp = false;
	while (b != NULL && (n == 0 || n + b->b_nops <= STORE_COMMIT_OPS)) {
		n += b->b_nops;
		*flushp |= b->b_flush;
		last = b;
		b = b->b_next;
	}
	if (last == NULL)
		return NULL;
	last->b_next = NULL;
	st->st_qhead = b;
	if (b == NULL)
		st->st_qtail = &st->st_qhead;
	*nopsp = n;
	return run;
}

void
store_notify(struct store *st)
{
	uint64_t one = 1;

	if (write(st->st_efd, &one, sizeof(one)) == -1 && errno != EAGAIN)
		return;	/* the counter is full: the loop will read it */
}

/*
 * Publish the outcome of a run (st_cmu held), recycle its batches, and
 * (notify) wake whoever waits on the eventfd.
 */
static void
store_run_done(struct store *st, struct store_batch *run, int rc, bool flush,
    bool notify)
{
	struct store_batch *b, *next;

	for (b = run; ; b = b->b_next) {
		if (rc == 0 && st->st_cerr == STORE_OK) {
			st->st_info.si_puts += b->b_puts;
			st->st_info.si_dels += b->b_nops - b->b_puts;
		}
		if (b->b_next == NULL)
			break;
	}
	if (rc == 0 && st->st_cerr == STORE_OK) {
		st->st_committed = b->b_seq;
		st->st_cur = b->b_meta;
		st->st_info.si_commits++;
		st->st_info.si_flushes += flush;
	} else if (st->st_cerr == STORE_OK) {
		st->st_cerr = rc == ENOMEM ? STORE_NOMEM :
		    store_status_of(st, rc);
		notify = true;
	}
	/*
	 * A few are kept for the next turns; the rest go: after a stall,
	 * when every turn sealed meanwhile had a batch of its own, the free
	 * list would otherwise hold that peak for good.
	 */
	for (b = run; b != NULL; b = next) {
		next = b->b_next;
		if (st->st_nfree >= STORE_FREE_MAX) {
			store_batch_free(b);
			continue;
		}
		b->b_len = b->b_nops = 0;
		b->b_puts = 0;
		(void)store_buf_trim(&b->b_buf, &b->b_cap);
		b->b_next = st->st_free;
		st->st_free = b;
		st->st_nfree++;
	}
	pthread_cond_broadcast(&st->st_dcv);
	if (notify)
		store_notify(st);
}

static void *
store_committer(void *arg)
{
	struct store *st = arg;
	struct store_batch *run;
	size_t nops;
	bool flush, failed;
	int rc;

	pthread_mutex_lock(&st->st_cmu);
	for (;;) {
		while (st->st_qhead == NULL && !st->st_cstop)
			pthread_cond_wait(&st->st_ccv, &st->st_cmu);
		if ((run = store_take_run(st, &nops, &flush)) == NULL)
			break;
		failed = st->st_cerr != STORE_OK;
		pthread_mutex_unlock(&st->st_cmu);
		if (failed)
			rc = EIO;	/* behind a failed commit: dropped */
		else
			rc = store_journal_append(st, run, nops, flush);
		pthread_mutex_lock(&st->st_cmu);
		store_run_done(st, run, rc, flush, true);
	}
	pthread_mutex_unlock(&st->st_cmu);
	return NULL;
}

/* ---- the loop's side ---- */

enum store_status
store_commit_start(struct store *st, char *err, size_t errlen)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	st->st_qtail = &st->st_qhead;
	if ((st->st_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return STORE_IO;
	}
	pthread_mutex_init(&st->st_cmu, NULL);
	pthread_mutex_init(&st->st_jmu, NULL);
	pthread_mutex_init(&st->st_kmu, NULL);
	pthread_cond_init(&st->st_ccv, NULL);
	pthread_cond_init(&st->st_dcv, NULL);
	/* The compactor's timed waits count on CLOCK_MONOTONIC. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->st_kcv, &ca);
	pthread_condattr_destroy(&ca);
	st->st_csync = true;
	if (st->st_durability != STORE_SYNC)
		return STORE_OK;	/* the loop commits (HOW IT WORKS) */
	/* Signals are the event loop's. */
	store_thread_sigset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&st->st_cthread, NULL, store_committer, st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the committer: %s",
		    strerror(rc));
		return STORE_IO;
	}
	st->st_cstarted = true;
	return STORE_OK;
}

void
store_commit_stop(struct store *st)
{
	struct store_batch *b;

	if (st->st_cstarted) {
		/* What was sealed was promised: the thread finishes it. */
		pthread_mutex_lock(&st->st_cmu);
		st->st_cstop = true;
		pthread_cond_signal(&st->st_ccv);
		pthread_mutex_unlock(&st->st_cmu);
		pthread_join(st->st_cthread, NULL);
		st->st_cstarted = false;
	}
	if (st->st_csync) {
		pthread_mutex_destroy(&st->st_cmu);
		pthread_mutex_destroy(&st->st_jmu);
		pthread_mutex_destroy(&st->st_kmu);
		pthread_cond_destroy(&st->st_ccv);
		pthread_cond_destroy(&st->st_dcv);
		pthread_cond_destroy(&st->st_kcv);
		st->st_csync = false;
	}
	while ((b = st->st_free) != NULL) {
		st->st_free = b->b_next;
		store_batch_free(b);
	}
	st->st_nfree = 0;
	store_batch_free(st->st_batch);
	st->st_batch = NULL;
	store_fold_free(&st->st_kfold);
	free(st->st_kbuf.b_buf);
	st->st_kbuf.b_buf = NULL;
	free(st->st_jtail.b_buf);
	st->st_jtail.b_buf = NULL;
	free(st->st_jbuf);
	st->st_jbuf = NULL;
	if (st->st_efd >= 0)
		close(st->st_efd);
	st->st_efd = -1;
}

void
store_commit_queue(struct store *st, struct store_batch *b)
{
	int rc;

	if (!st->st_cstarted) {
		/* No committer: write it now (see HOW IT WORKS). */
		b->b_next = NULL;
		rc = store_journal_append(st, b, b->b_nops, b->b_flush);
		pthread_mutex_lock(&st->st_cmu);
		store_run_done(st, b, rc, b->b_flush, false);
		st->st_batch = st->st_free;
		if (st->st_free != NULL) {
			st->st_free = st->st_free->b_next;
			st->st_nfree--;
			st->st_batch->b_next = NULL;
		}
		pthread_mutex_unlock(&st->st_cmu);
		return;
	}
	pthread_mutex_lock(&st->st_cmu);
	b->b_next = NULL;
	*st->st_qtail = b;
	st->st_qtail = &b->b_next;
	/* A recycled batch for the next turn, if one is free. */
	if (st->st_free != NULL) {
		st->st_batch = st->st_free;
		st->st_free = st->st_free->b_next;
		st->st_nfree--;
		st->st_batch->b_next = NULL;
	}
	pthread_cond_signal(&st->st_ccv);
	pthread_mutex_unlock(&st->st_cmu);
}

enum store_status
store_commit_error(struct store *st)
{
	enum store_status s;

	if (!st->st_csync)
		return STORE_OK;
	pthread_mutex_lock(&st->st_cmu);
	s = st->st_cerr;
	pthread_mutex_unlock(&st->st_cmu);
	return s;
}

enum store_status
store_commit_wait(struct store *st, uint64_t seq)
{
	enum store_status s;

	pthread_mutex_lock(&st->st_cmu);
	while (st->st_committed < seq && st->st_cerr == STORE_OK)
		pthread_cond_wait(&st->st_dcv, &st->st_cmu);
	s = st->st_committed >= seq ? STORE_OK : st->st_cerr;
	pthread_mutex_unlock(&st->st_cmu);
	return s;
}

uint64_t
store_durable(struct store *st)
{
	uint64_t seq;

	pthread_mutex_lock(&st->st_cmu);
	seq = st->st_committed;
	pthread_mutex_unlock(&st->st_cmu);
	return seq;
}

int
store_fd(const struct store *st)
{
	return st->st_efd;
}

enum store_status
store_committed(struct store *st, uint64_t *seqp)
{
	enum store_status s;
	uint64_t n;

	while (read(st->st_efd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		continue;
	pthread_mutex_lock(&st->st_cmu);
	*seqp = st->st_committed;
	s = st->st_cerr;
	pthread_mutex_unlock(&st->st_cmu);
	return s;
}

/* Counters and meta as committed (store_info). */
void
store_commit_info(const struct store *cst, struct store_info *si,
    struct store_meta *cur)
{
	struct store *st = (struct store *)(uintptr_t)cst;

	if (st->st_csync)
		pthread_mutex_lock(&st->st_cmu);
	*si = st->st_info;
	*cur = st->st_cur;
	if (st->st_csync)
		pthread_mutex_unlock(&st->st_cmu);
}
