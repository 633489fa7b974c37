/*
 * store_compact.c - folding the journal into the record databases.
 *
 * HOW IT WORKS
 *   A commit appends one journal record to Berkeley DB's log (type
 *   STORE_LOGREC, outside any transaction): the operations of the turns
 *   it carries.  That keeps a commit's cost one log write, independent of
 *   how many records it changes, and the log is written anyway.  The
 *   compactor thread, every STORE_COMPACT_MS or sooner when STORE_COMPACT_OPS
 *   operations were written, runs a round: it notes the last record
 *   written so far (st_jend), reads the log with a log cursor from the
 *   record after the last one folded (st_jfold) through that one, folds
 *   the operations -- per key only the last one counts, so the locks
 *   granted and released since the last round cost nothing -- and in one
 *   transaction applies the net operations to meta, hosts, locks and
 *   shares and stores where it stopped (meta "journal") and how many
 *   records locks and shares hold (meta "locks", "shares": the load's
 *   check that it read them all, store_load.c).  Commits go on
 *   meanwhile: they only append.
 *
 *   Reading the log back costs as much as writing it did (Berkeley DB
 *   checksums every record again) and more than the fold.  So each
 *   commit also leaves its operations, as staged, in st_jtail: the
 *   operations of every record after st_jtail_from, in log order.  A
 *   round whose records all follow st_jfold and are all in the tail takes
 *   the tail (a swap of buffers, under st_jmu with st_jend) and reads
 *   nothing; the log is read at open, and when the tail was dropped (it
 *   outgrew STORE_JTAIL_BYTES because rounds fell behind, or a commit
 *   failed).  The tail is the log's content, decoded: a crash loses
 *   nothing by losing it.  A crash at any point leaves the records
 *   after the stored position and everything up to it applied: the next
 *   open folds the rest (store_compact_open), after Berkeley DB's
 *   recovery, which passes over our records (store.c's dispatch).
 *
 *   The log files holding records not yet folded must stay: st_jkeep, the
 *   file of the last record folded (read by the checkpoint thread before
 *   its checkpoint, so that the fold it relies on is on disk by then), is
 *   the first that log removal leaves alone.
 *
 *   A format-1 store kept its journal in two databases (journal0.db and
 *   journal1.db); store.c folds them once with store_compact_v1 and
 *   removes them.
 *
 *   Lock records of version 1 (no check; store_codec.c) found by the
 *   start's load are rewritten as version 2 by this thread too
 *   (store_locks_upgrade): a walk of locks.db in key order, st_kchunk
 *   records to a transaction, each under st_kmu like a round, with a
 *   round between two.  A fold never interleaves with one, so the walk
 *   cannot put back a value older than the fold's; a journal operation
 *   not yet folded is applied after it, as it would have been without
 *   it.  What a record says is not changed, only its encoding (each put
 *   overwrites the record under the cursor: the count of records, meta
 *   "locks", stays as it is): a crash between two transactions leaves
 *   both versions, which both load, and the next start's load finds the
 *   rest.  Only the fold and this walk write the databases while the
 *   store is open (and a load storing the counts of a store from before
 *   them, store_load.c).
 *
 * LOCKING
 *   st_kmu: one round or rewrite transaction at a time (the thread, a
 *   load); st_jfold, st_nrec, st_kbuf, st_kfold and st_ukey are its.
 *   st_jmu: st_jend, st_jops and st_jtail*, which a commit sets after
 *   its append.  The compactor's Berkeley DB calls are not
 *   fault-injected (store_fail_after): they happen at times no test
 *   controls.
 */
#include "store_impl.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Append one decoded journal operation to the fold buffer (native). */
static bool
store_compact_push(struct store *st, const struct store_op *op,
    const uint8_t *data)
{
	struct store_batch *b = &st->st_kbuf;
	size_t need = STORE_OP_SPACE(op->op_klen, op->op_vlen);

	if (!store_batch_room(b, need, 65536))
		return false;
	memcpy(b->b_buf + b->b_len, op, sizeof(*op));
	memcpy(b->b_buf + b->b_len + sizeof(*op), data,
	    (size_t)op->op_klen + op->op_vlen);
	b->b_len += need;
	b->b_nops++;
	return true;
}

/*
 * After a round that needed more than the steady state does (a million
 * locks released at once), give the fold buffer and table back: kept,
 * they would hold the peak for good.  The next round allocates again.
 * The pages go back to the kernel too (malloc_trim; this thread, not the
 * event loop, pays for the walk).
 */
static void
store_compact_shrink(struct store *st)
{
	bool freed;

	st->st_kbuf.b_len = st->st_kbuf.b_nops = 0;
	freed = store_buf_trim(&st->st_kbuf.b_buf, &st->st_kbuf.b_cap);
	freed |= store_fold_trim(&st->st_kfold);
	if (freed)
		(void)malloc_trim(0);
}

/* Log files are numbered from 1: a zero LSN is "none". */
#define LSN_ZERO(l)	((l).file == 0)

/*
 * Decode one journal value (version or part, then operations) into
 * st_kbuf.  `part': accept the parts of a commit written as several
 * records (STORE_JREC_*), not only STORE_REC_V1.
 */
static int
store_compact_value(struct store *st, const uint8_t *v, size_t vlen,
    bool part)
{
	const uint8_t *data;
	struct store_op op;
	size_t off = 1;

	if (vlen < 1 || (v[0] != STORE_REC_V1 && (!part ||
	    v[0] < STORE_JREC_FIRST || v[0] > STORE_JREC_LAST)))
		return EINVAL;
	while (off < vlen) {
		memset(&op, 0, sizeof(op));
		if (store_dec_jop(v, vlen, &off, &op, &data) != NULL)
			return EINVAL;
		if (!store_compact_push(st, &op, data))
			return ENOMEM;
	}
	return 0;
}

/* st_kbuf as of the end of the last whole commit read. */
struct store_kmark {
	size_t		km_len;
	size_t		km_nops;
};

/*
 * Take one journal record into st_kbuf.  The parts of a commit written as
 * several records count once the last is read: a commit whose writing a
 * crash cut short never told anyone anything, and is dropped (a record
 * that begins a commit forgets an unfinished one before it).
 */
static int
store_compact_record(struct store *st, const uint8_t *v, size_t vlen,
    struct store_kmark *km, bool *open)
{
	int rc;

	/* Neither a version nor a part: not passed over, but refused. */
	if (vlen < 1 || (v[0] != STORE_REC_V1 &&
	    (v[0] < STORE_JREC_FIRST || v[0] > STORE_JREC_LAST)))
		return EINVAL;
	if (v[0] == STORE_REC_V1 || v[0] == STORE_JREC_FIRST) {
		st->st_kbuf.b_len = km->km_len;	/* forget an unfinished one */
		st->st_kbuf.b_nops = km->km_nops;
		*open = v[0] == STORE_JREC_FIRST;
	} else if (!*open)
		return 0;	/* the rest of one begun before the scan */
	if ((rc = store_compact_value(st, v, vlen, true)) != 0)
		return rc;
	if (v[0] == STORE_REC_V1 || v[0] == STORE_JREC_LAST) {
		*open = false;
		km->km_len = st->st_kbuf.b_len;
		km->km_nops = st->st_kbuf.b_nops;
	}
	return 0;
}

/* Is this log record one of our journal records? */
static bool
store_is_logrec(const DBT *d)
{
	uint32_t type;

	if (d->size < STORE_LOGREC_HDR + 1)
		return false;
	memcpy(&type, d->data, sizeof(type));
	return type == STORE_LOGREC;
}

/*
 * Read our records after *from (all of them when it is zero) through
 * *to (through the log's end when it is zero; *to is then set to the
 * last record's LSN) into st_kbuf; a code.
 */
static int
store_compact_scan(struct store *st, const DB_LSN *from, DB_LSN *to)
{
	struct store_kmark km = { 0, 0 };
	bool open = false;
	DB_LOGC *lc;
	DB_LSN lsn, seen = { 0, 0 };
	DBT d;
	int rc, rc2;

	st->st_kbuf.b_len = st->st_kbuf.b_nops = 0;
	if ((rc = st->st_env->log_cursor(st->st_env, &lc, 0)) != 0)
		return rc;
	memset(&d, 0, sizeof(d));
	if (LSN_ZERO(*to)) {
		if ((rc = lc->get(lc, &lsn, &d, DB_LAST)) != 0)
			goto out;
		*to = lsn;
	}
	/*
	 * The record at *from was folded already.  Gone from the log (files
	 * removed behind our back), what followed it may be gone too: not
	 * a silent loss but an error (STORE_JOURNAL_GONE).
	 */
	lsn = *from;
	if (LSN_ZERO(lsn))
		rc = lc->get(lc, &lsn, &d, DB_FIRST);
	else if ((rc = lc->get(lc, &lsn, &d, DB_SET)) == DB_NOTFOUND)
		rc = STORE_JOURNAL_GONE;
	else if (rc == 0) {
		seen = lsn;
		rc = lc->get(lc, &lsn, &d, DB_NEXT);
	}
	for (; rc == 0 && log_compare(&lsn, to) <= 0;
	    rc = lc->get(lc, &lsn, &d, DB_NEXT)) {
		seen = lsn;
		if (store_is_logrec(&d) && (rc = store_compact_record(st,
		    (const uint8_t *)d.data + STORE_LOGREC_HDR,
		    d.size - STORE_LOGREC_HDR, &km, &open)) != 0)
			break;
	}
	/*
	 * The same when a file after it was removed: a log cursor reads
	 * the log as if it ended before the missing file, short of *to (a
	 * record in the log), and what came after the gap would be taken
	 * as folded.
	 */
	if (rc == DB_NOTFOUND && log_compare(&seen, to) < 0)
		rc = STORE_JOURNAL_GONE;
out:
	if ((rc2 = lc->close(lc, 0)) != 0 && (rc == 0 || rc == DB_NOTFOUND))
		rc = rc2;
	/* What an unfinished commit at the end left is not applied. */
	st->st_kbuf.b_len = km.km_len;
	st->st_kbuf.b_nops = km.km_nops;
	return rc == DB_NOTFOUND ? 0 : rc;
}

/*
 * Fold st_kbuf and apply it in transactions of at most st_kchunk
 * operations: *txnp := a transaction begun here, holding the last part,
 * for the caller to finish (store its position, commit).  A round that
 * folds millions of records in one transaction would need more page
 * locks than the lock table has (STORE_LOCKS_MAX); failing, the round's
 * error is latched, nlmd exits, and the fold at the next open fails the
 * same way.  The parts before the last commit on their own, without the
 * folded position: a crash between them leaves some of the round's net
 * operations applied, and the next fold, from the old position, applies
 * them again -- harmless, as a net operation sets a key to its last value
 * or deletes it, and counts only what it changes.  Each transaction
 * stores the counts of records (meta "locks", "shares") it leaves; *nr
 * := those of the last, for the caller to make st_nrec once it commits.
 * A code; on failure no transaction is left open.
 */
static int
store_compact_apply(struct store *st, DB_TXN **txnp, uint64_t *puts,
    uint64_t *dels, struct store_nrec *nr)
{
	DB_ENV *env = st->st_env;
	unsigned n = 0, failat = atomic_load(&st->st_kfail_at);
	size_t at = 0;
	int rc;

	*txnp = NULL;
	*nr = st->st_nrec;
	if (st->st_kbuf.b_nops > 0) {
		st->st_kbuf.b_next = NULL;
		if (!store_fold(st, &st->st_kbuf, st->st_kbuf.b_nops,
		    &st->st_kfold))
			return ENOMEM;
	}
	for (;;) {
		if ((rc = env->txn_begin(env, NULL, txnp, 0)) != 0) {
			*txnp = NULL;
			return rc;
		}
		if (st->st_kbuf.b_nops == 0)
			return 0;
		if (++n == failat) {
			atomic_store(&st->st_kfail_at, 0);
			rc = EIO;
		} else if ((rc = store_fold_apply(st, &st->st_kfold, *txnp,
		    &at, st->st_kchunk, puts, dels, nr)) == 0)
			rc = store_nrec_put(st, *txnp, &st->st_nrec, nr);
		if (rc != 0) {
			(void)(*txnp)->abort(*txnp);
			*txnp = NULL;
			return rc;
		}
		if (at > st->st_kfold.fo_mask)
			return 0;
		if (atomic_load(&st->st_lhalt)) {
			(void)(*txnp)->abort(*txnp);
			*txnp = NULL;
			return EIO;
		}
		rc = (*txnp)->commit(*txnp, DB_TXN_WRITE_NOSYNC);
		*txnp = NULL;
		if (rc != 0)
			return rc;
		st->st_nrec = *nr;
	}
}

/* The meta value "journal": an LSN as u64 (file << 32 | offset). */
static int
store_compact_mark(struct store *st, DB_TXN *txn, const DB_LSN *lsn)
{
	return store_meta_put(st, txn, "journal",
	    (uint64_t)lsn->file << 32 | lsn->offset);
}

/*
 * Store *to as the folded position in txn and commit it; then it is
 * st_jfold, and its file the first that log removal leaves.  A code; on
 * failure nothing changed (txn is aborted or failed to commit).
 */
static int
store_compact_finish(struct store *st, DB_TXN *txn, const DB_LSN *to)
{
	int rc;

	if ((rc = store_compact_mark(st, txn, to)) != 0 ||
	    (atomic_load(&st->st_lhalt) && (rc = EIO) != 0)) {
		(void)txn->abort(txn);
		return rc;
	}
	if ((rc = txn->commit(txn, DB_TXN_WRITE_NOSYNC)) != 0)
		return rc;
	st->st_jfold = *to;
	atomic_store(&st->st_jkeep, to->file);
	return 0;
}

/*
 * Fold our records after st_jfold through *to (zero: the log's end) into
 * the record databases and store the new position, in one transaction;
 * `have': st_kbuf holds their operations already (the tail), else they
 * are read from the log.  A code; on failure nothing changed.
 */
static int
store_compact_fold(struct store *st, DB_LSN *to, bool have)
{
	struct store_nrec nr;
	uint64_t puts = 0, dels = 0;
	DB_TXN *txn;
	int rc;

	if (!have && (rc = store_compact_scan(st, &st->st_jfold, to)) != 0)
		return rc;
	if ((rc = store_compact_apply(st, &txn, &puts, &dels, &nr)) != 0)
		return rc;
	if ((rc = store_compact_finish(st, txn, to)) != 0)
		return rc;
	st->st_nrec = nr;
	store_compact_shrink(st);
	pthread_mutex_lock(&st->st_cmu);
	st->st_info.si_folds++;
	st->st_info.si_fold_ops += puts + dels;
	st->st_info.si_fold_reads += !have;
	pthread_mutex_unlock(&st->st_cmu);
	return 0;
}

/* The LSN of the last record in the log (any record); a code. */
static int
store_compact_last(struct store *st, DB_LSN *lsn)
{
	DB_LOGC *lc;
	DBT d;
	int rc, rc2;

	if ((rc = st->st_env->log_cursor(st->st_env, &lc, 0)) != 0)
		return rc;
	memset(&d, 0, sizeof(d));
	rc = lc->get(lc, lsn, &d, DB_LAST);
	if ((rc2 = lc->close(lc, 0)) != 0 && rc == 0)
		rc = rc2;
	return rc;
}

/*
 * Nothing is left to fold: move the folded position to *to, the last
 * record of the log (ours or not), in a transaction, so that the files
 * before its file may go.  A code; on failure nothing changed.
 */
static int
store_compact_move(struct store *st, const DB_LSN *to)
{
	DB_TXN *txn;
	int rc;

	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0 ||
	    (rc = store_compact_finish(st, txn, to)) != 0)
		return rc;
	pthread_mutex_lock(&st->st_cmu);
	st->st_info.si_fold_moves++;
	pthread_mutex_unlock(&st->st_cmu);
	return 0;
}

/* Latch the compactor's failure (code rc) like a failed commit's. */
static void
store_compact_latch(struct store *st, int rc)
{
	pthread_mutex_lock(&st->st_cmu);
	if (st->st_cerr == STORE_OK)
		st->st_cerr = rc == ENOMEM ? STORE_NOMEM :
		    store_status_of(st, rc);
	pthread_cond_broadcast(&st->st_dcv);
	pthread_mutex_unlock(&st->st_cmu);
	store_notify(st);	/* the loop may be idle on store_fd() */
}

/*
 * One round: fold what was written since the last.  0 or a code; a
 * failure is latched (st_cerr) like a failed commit: the store then
 * refuses to go on, and the next open folds what is left.
 *
 * A round with nothing to fold moves the folded position to the log's
 * end when that is in a later file than st_jkeep.  Otherwise, after a
 * burst (a million locks taken and released), every log file from the
 * one holding the last journal record on -- the fold's own log, hundreds
 * of MiB -- would stay while the server idles, since st_jkeep moves only
 * with journal records.  The end is read with st_jmu held and no commit
 * appending (st_jappending): a journal record not yet published in
 * st_jend could otherwise be the last record, and be taken as folded.
 * Commits that follow are after it; the tail starts there.
 */
int
store_compact_round(struct store *st)
{
	struct store_batch t;
	DB_LSN end, last;
	bool have = false, due, move = false;
	int rc = 0;

	pthread_mutex_lock(&st->st_kmu);
	if (atomic_load(&st->st_lhalt)) {
		/* A journal append failed: nothing writes the log now. */
		pthread_mutex_unlock(&st->st_kmu);
		return 0;
	}
	pthread_mutex_lock(&st->st_jmu);
	end = st->st_jend;
	st->st_jops = 0;
	due = !LSN_ZERO(end) && log_compare(&end, &st->st_jfold) > 0;
	if (due) {
		/* The tail holds every record of this round: take it. */
		if (st->st_jtail_ok &&
		    log_compare(&st->st_jtail_from, &st->st_jfold) == 0) {
			t = st->st_kbuf;
			st->st_kbuf = st->st_jtail;
			st->st_jtail = t;
			have = true;
		}
		/* From here on the tail starts after this round's last. */
		st->st_jtail.b_len = st->st_jtail.b_nops = 0;
		st->st_jtail_ok = true;
		st->st_jtail_from = end;
	} else if (!st->st_jappending && st->st_jtail_ok &&
	    st->st_jtail.b_nops == 0 && !LSN_ZERO(st->st_jfold) &&
	    store_compact_last(st, &last) == 0 &&
	    last.file > atomic_load(&st->st_jkeep)) {
		move = true;
		st->st_jtail_from = last;
	}
	pthread_mutex_unlock(&st->st_jmu);
	if (move)
		rc = store_compact_move(st, &last);
	else if (due)
		rc = store_compact_fold(st, &end, have);
	if (rc != 0)
		store_compact_latch(st, rc);
	pthread_mutex_unlock(&st->st_kmu);
	return rc;
}

enum store_status
store_compact_all(struct store *st)
{
	enum store_status s;

	if ((s = store_commit_wait(st, st->st_sealed)) != STORE_OK)
		return s;
	return store_compact_round(st) == 0 ? STORE_OK :
	    store_commit_error(st);
}

int
store_compact_open(struct store *st)
{
	DB_LSN end = { 0, 0 };
	int rc;

	if ((rc = store_compact_fold(st, &end, false)) != 0)
		return rc;
	/* Commits from now on follow the log's end: the tail starts there. */
	st->st_jtail_from = st->st_jfold;
	st->st_jtail_ok = true;
	st->st_jtail_max = STORE_JTAIL_BYTES;
	return 0;
}

/* ---- a format-1 store's journal databases ---- */

/* Read every entry of journal j (in key order) into st_kbuf; a code. */
static int
store_compact_v1_read(struct store *st, DB *j, DB_TXN *txn)
{
	DBC *c;
	DBT k, v;
	int rc, rc2;

	if ((rc = j->cursor(j, txn, &c, 0)) != 0)
		return rc;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.flags = v.flags = DB_DBT_REALLOC;
	while ((rc = c->get(c, &k, &v, DB_NEXT)) == 0)
		if ((rc = k.size != 8 ? EINVAL : store_compact_value(st,
		    v.data, v.size, false)) != 0)
			break;
	if ((rc2 = c->close(c)) != 0 && (rc == 0 || rc == DB_NOTFOUND))
		rc = rc2;
	free(k.data);
	free(v.data);
	return rc == DB_NOTFOUND ? 0 : rc;
}

/* The first key (sequence number) of journal j, 0 when it is empty. */
static uint64_t
store_compact_v1_first(DB *j, DB_TXN *txn)
{
	uint8_t kb[8];
	uint64_t seq = 0;
	DBC *c;
	DBT k, v;
	int i;

	if (j->cursor(j, txn, &c, 0) != 0)
		return 0;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.data = kb;
	k.ulen = sizeof(kb);
	k.flags = DB_DBT_USERMEM;
	v.flags = DB_DBT_PARTIAL;	/* the key is enough */
	if (c->get(c, &k, &v, DB_FIRST) == 0 && k.size == 8)
		for (i = 0; i < 8; i++)
			seq = seq << 8 | kb[i];
	(void)c->close(c);
	return seq;
}

int
store_compact_v1(struct store *st, DB *j[2])
{
	struct store_nrec nr;
	uint64_t puts = 0, dels = 0, f0, f1;
	u_int32_t count;
	DB_TXN *txn;
	int rc, first;

	st->st_kbuf.b_len = st->st_kbuf.b_nops = 0;
	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return rc;
	/* After a crash mid-round both may hold entries: older first. */
	f0 = store_compact_v1_first(j[0], txn);
	f1 = store_compact_v1_first(j[1], txn);
	first = f1 != 0 && (f0 == 0 || f1 < f0);
	if ((rc = store_compact_v1_read(st, j[first], txn)) != 0 ||
	    (rc = store_compact_v1_read(st, j[!first], txn)) != 0) {
		(void)txn->abort(txn);
		return rc;
	}
	/*
	 * Applied in parts as a round's fold; the journals are emptied with
	 * the last, and until then the next open reads them again.
	 */
	if ((rc = txn->commit(txn, 0)) != 0 ||
	    (rc = store_compact_apply(st, &txn, &puts, &dels, &nr)) != 0)
		return rc;
	if ((rc = j[0]->truncate(j[0], txn, &count, 0)) != 0 ||
	    (rc = j[1]->truncate(j[1], txn, &count, 0)) != 0) {
		(void)txn->abort(txn);
		return rc;
	}
	store_compact_shrink(st);
	if ((rc = txn->commit(txn, 0)) == 0)
		st->st_nrec = nr;
	return rc;
}

/* ---- version 1 lock records, rewritten as version 2 ---- */

/*
 * Position c on the first record after st_ukey (on the first of all when
 * there is none yet): its key into k, its value into v.  A code
 * (DB_NOTFOUND: no record after it).
 */
static int
store_upgrade_first(struct store *st, DBC *c, DBT *k, DBT *v)
{
	int rc;

	if (st->st_uklen == 0)
		return c->get(c, k, v, DB_FIRST);
	memcpy(k->data, st->st_ukey, st->st_uklen);
	k->size = st->st_uklen;
	if ((rc = c->get(c, k, v, DB_SET_RANGE)) != 0)
		return rc;
	/* The key visited last is still there: go on after it. */
	if (k->size == st->st_uklen &&
	    memcmp(k->data, st->st_ukey, st->st_uklen) == 0)
		rc = c->get(c, k, v, DB_NEXT);
	return rc;
}

/*
 * One transaction: visit up to st_kchunk records after st_ukey, replace
 * each version 1 value by its version 2 (store_lock_upgrade), commit,
 * and st_ukey := the last key visited.  *np := the records replaced,
 * *donep := no record is left after them.  A code; on failure nothing
 * of it changed, st_ukey included.
 */
static int
store_upgrade_step(struct store *st, uint64_t *np, bool *donep)
{
	uint8_t kb[STORE_KEY_MAX], last[STORE_KEY_MAX];
	uint8_t vb[STORE_VAL_MAX], nb[STORE_VAL_MAX];
	u_int32_t lastlen = 0;
	DB_TXN *txn;
	DBC *c;
	DBT k, v, nv;
	size_t i = 0;
	int rc, rc2;

	*np = 0;
	*donep = false;
	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return rc;
	if ((rc = st->st_locks->cursor(st->st_locks, txn, &c, 0)) != 0) {
		(void)txn->abort(txn);
		return rc;
	}
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	memset(&nv, 0, sizeof(nv));
	k.data = kb;
	k.ulen = sizeof(kb);
	v.data = vb;
	v.ulen = sizeof(vb);
	k.flags = v.flags = DB_DBT_USERMEM;
	nv.data = nb;
	for (rc = store_upgrade_first(st, c, &k, &v); rc == 0;
	    rc = c->get(c, &k, &v, DB_NEXT)) {
		nv.size = (u_int32_t)store_lock_upgrade(nb, kb, k.size, vb,
		    v.size);
		if (nv.size != 0 && (rc = c->put(c, &k, &nv,
		    DB_CURRENT)) != 0)
			break;
		*np += nv.size != 0;
		memcpy(last, kb, k.size);
		lastlen = k.size;
		if (++i == st->st_kchunk)
			break;
	}
	*donep = rc == DB_NOTFOUND;
	if ((rc2 = c->close(c)) != 0 && (rc == 0 || rc == DB_NOTFOUND))
		rc = rc2;
	if ((rc != 0 && rc != DB_NOTFOUND) ||
	    (atomic_load(&st->st_lhalt) && (rc = EIO) != 0)) {
		(void)txn->abort(txn);
		*np = 0;
		return rc;
	}
	/* A crash loses at most this transaction: the next start redoes it. */
	if ((rc = txn->commit(txn, DB_TXN_WRITE_NOSYNC)) != 0) {
		*np = 0;
		return rc;
	}
	if (i > 0) {
		memcpy(st->st_ukey, last, lastlen);
		st->st_uklen = lastlen;
	}
	return 0;
}

int
store_compact_upgrade(struct store *st)
{
	uint64_t n = 0;
	bool done = false, halt;
	int rc = 0;

	pthread_mutex_lock(&st->st_kmu);
	/* A journal append failed: nothing writes the log now. */
	if (!(halt = atomic_load(&st->st_lhalt)))
		rc = store_upgrade_step(st, &n, &done);
	pthread_mutex_unlock(&st->st_kmu);
	pthread_mutex_lock(&st->st_cmu);
	st->st_info.si_locks_upgraded += n;
	st->st_ksteps++;
	if (done || halt || rc != 0) {
		st->st_kupgrade = st->st_info.si_upgrading = false;
		if (done && rc == 0)
			st->st_info.si_upgrade_ms = store_now_ms() -
			    st->st_kupgrade_t0;
	}
	pthread_mutex_unlock(&st->st_cmu);
	if (rc != 0)
		store_compact_latch(st, rc);
	return rc;
}

void
store_locks_upgrade(struct store *st)
{
	pthread_mutex_lock(&st->st_cmu);
	if (st->st_info.si_locks_v1 > 0 && !st->st_kupgrade &&
	    st->st_kstarted && st->st_cerr == STORE_OK) {
		st->st_kupgrade = st->st_info.si_upgrading = true;
		st->st_kupgrade_t0 = store_now_ms();
		st->st_info.si_upgrade_ms = 0;
		st->st_uklen = 0;
		st->st_ksteps = 0;
		pthread_cond_signal(&st->st_kcv);
	}
	pthread_mutex_unlock(&st->st_cmu);
}

/* Is a rewrite under way and not held (store_test_upgrade_steps)? */
static bool
store_upgrade_due(const struct store *st)
{
	return st->st_kupgrade && (st->st_kstep_max == 0 ||
	    st->st_ksteps < st->st_kstep_max);
}

/* ---- the thread ---- */

static void *
store_compactor(void *arg)
{
	struct store *st = arg;
	struct timespec when;
	bool upgrade;

	pthread_mutex_lock(&st->st_cmu);
	while (!st->st_kstop) {
		/* A rewrite under way goes on at once, a round per step. */
		if (!store_upgrade_due(st)) {
			clock_gettime(CLOCK_MONOTONIC, &when);
			when.tv_nsec += STORE_COMPACT_MS * 1000000L;
			if (when.tv_nsec >= 1000000000L) {
				when.tv_sec++;
				when.tv_nsec -= 1000000000L;
			}
			(void)pthread_cond_timedwait(&st->st_kcv, &st->st_cmu,
			    &when);
		}
		if (st->st_kstop || st->st_cerr != STORE_OK)
			break;
		upgrade = store_upgrade_due(st);
		pthread_mutex_unlock(&st->st_cmu);
		/*
		 * Every period, written or not: an idle round may move the
		 * folded position (store_compact_round); it costs a look at
		 * the log's last record.
		 */
		if (!atomic_load(&st->st_khold))
			(void)store_compact_round(st);
		if (upgrade)
			(void)store_compact_upgrade(st);
		pthread_mutex_lock(&st->st_cmu);
	}
	pthread_mutex_unlock(&st->st_cmu);
	return NULL;
}

enum store_status
store_compactor_start(struct store *st, char *err, size_t errlen)
{
	sigset_t all, old;
	int rc;

	store_thread_sigset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&st->st_kthread, NULL, store_compactor, st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the compactor: %s",
		    strerror(rc));
		return STORE_IO;
	}
	st->st_kstarted = true;
	return STORE_OK;
}

void
store_compactor_stop(struct store *st)
{
	if (!st->st_kstarted)
		return;
	pthread_mutex_lock(&st->st_cmu);
	st->st_kstop = true;
	pthread_cond_signal(&st->st_kcv);
	pthread_mutex_unlock(&st->st_cmu);
	pthread_join(st->st_kthread, NULL);
	st->st_kstarted = false;
}

void
store_compact_tail(struct store *st, const struct store_batch *run, bool ok)
{
	struct store_batch *t = &st->st_jtail;
	const struct store_batch *b;
	size_t len = 0;

	if (!st->st_jtail_ok)
		return;
	for (b = run; b != NULL; b = b->b_next)
		len += b->b_len;
	if (!ok || t->b_len > st->st_jtail_max ||
	    len > st->st_jtail_max - t->b_len ||
	    !store_batch_room(t, len, 65536))
		goto drop;
	/* Batches hold operations padded to 8 bytes: so does the tail. */
	for (b = run; b != NULL; b = b->b_next) {
		memcpy(t->b_buf + t->b_len, b->b_buf, b->b_len);
		t->b_len += b->b_len;
		t->b_nops += b->b_nops;
	}
	return;
drop:
	/* The next round reads the log; the one after uses a tail again. */
	st->st_jtail_ok = false;
	t->b_len = t->b_nops = 0;
	(void)store_buf_trim(&t->b_buf, &t->b_cap);
}

/* A commit added n operations to the journal (st_jmu held). */
void
store_compact_noted(struct store *st, size_t n)
{
	st->st_jops += n;
	if (st->st_jops >= STORE_COMPACT_OPS && st->st_kstarted) {
		pthread_mutex_lock(&st->st_cmu);
		pthread_cond_signal(&st->st_kcv);
		pthread_mutex_unlock(&st->st_cmu);
	}
}
