/*
 * store_compact.c - folding the journals into the record databases.
 *
 * HOW IT WORKS
 *   A commit writes one journal entry: the operations of the turns it
 *   carries, appended to the active journal (st_journal[st_jactive]) in a
 *   transaction of one put.  That keeps a commit's cost independent of how
 *   many records it changes.  The compactor thread, every
 *   STORE_COMPACT_MS or sooner when the active journal holds
 *   STORE_COMPACT_OPS operations, runs a round: it makes the other (empty)
 *   journal the active one, so commits go on undisturbed, then reads every
 *   entry of the old one in sequence order, folds them -- per key only the
 *   last operation counts, so the locks granted and released since the
 *   last round cost nothing -- and in one transaction applies the net
 *   operations to meta, hosts, locks and shares and truncates the old
 *   journal.  A crash at any point leaves either the entries or their
 *   effect, never both and never neither.
 *
 *   Invariant: outside a round, the inactive journal is empty.  At open
 *   (before any thread) both journals are folded, older entries first;
 *   loading folds whatever was committed before it reads (store_compact_all)
 *   so what it returns is everything committed.
 *
 * LOCKING
 *   st_kmu: one round at a time (the thread, a load).  st_jmu: which
 *   journal is active, and a commit into it: a commit holds it while it
 *   writes, so a round switching journals waits for that commit, and no
 *   commit ever goes to a journal being folded.  The compactor's Berkeley
 *   DB calls are not fault-injected (store_fail_after): they happen at
 *   times no test controls.
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
	size_t need = STORE_OP_SPACE(op->op_klen, op->op_vlen), cap;
	uint8_t *p;

	if (b->b_len + need > b->b_cap) {
		for (cap = b->b_cap ? b->b_cap : 65536; cap < b->b_len + need;
		    cap *= 2)
			continue;
		if ((p = realloc(b->b_buf, cap)) == NULL)
			return false;
		b->b_buf = p;
		b->b_cap = cap;
	}
	memcpy(b->b_buf + b->b_len, op, sizeof(*op));
	memcpy(b->b_buf + b->b_len + sizeof(*op), data,
	    (size_t)op->op_klen + op->op_vlen);
	b->b_len += need;
	b->b_nops++;
	return true;
}

/* Decode one journal entry's value into the fold buffer. */
static int
store_compact_entry(struct store *st, const DBT *k, const DBT *v)
{
	const uint8_t *data;
	struct store_op op;
	size_t off = 1;

	if (k->size != 8 || v->size < 1 ||
	    *(const uint8_t *)v->data != STORE_REC_V1)
		return EINVAL;
	while (off < v->size) {
		memset(&op, 0, sizeof(op));
		if (store_dec_jop(v->data, v->size, &off, &op, &data) != NULL)
			return EINVAL;
		if (!store_compact_push(st, &op, data))
			return ENOMEM;
	}
	return 0;
}

/* Read every entry of journal j (in key order) into the fold buffer. */
static int
store_compact_read(struct store *st, DB *j, DB_TXN *txn)
{
	DBC *c;
	DBT k, v;
	int rc, rc2;

	st->st_kbuf.b_len = st->st_kbuf.b_nops = 0;
	if ((rc = j->cursor(j, txn, &c, 0)) != 0)
		return rc;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.flags = v.flags = DB_DBT_REALLOC;
	while ((rc = c->get(c, &k, &v, DB_NEXT)) == 0)
		if ((rc = store_compact_entry(st, &k, &v)) != 0)
			break;
	if ((rc2 = c->close(c)) != 0 && (rc == 0 || rc == DB_NOTFOUND))
		rc = rc2;
	free(k.data);
	free(v.data);
	return rc == DB_NOTFOUND ? 0 : rc;
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

/*
 * Fold journal j into the record databases and empty it, in one
 * transaction.  A Berkeley DB (or errno) code; on failure nothing changed.
 */
int
store_compact_journal(struct store *st, int j)
{
	uint64_t puts = 0, dels = 0;
	u_int32_t count;
	DB_TXN *txn;
	int rc;

	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return rc;
	if ((rc = store_compact_read(st, st->st_journal[j], txn)) != 0)
		goto fail;
	if (st->st_kbuf.b_nops > 0) {
		st->st_kbuf.b_next = NULL;
		if (!store_fold(st, &st->st_kbuf, st->st_kbuf.b_nops,
		    &st->st_kfold)) {
			rc = ENOMEM;
			goto fail;
		}
		if ((rc = store_fold_apply(st, &st->st_kfold, txn, &puts,
		    &dels)) != 0 ||
		    (rc = st->st_journal[j]->truncate(st->st_journal[j], txn,
		    &count, 0)) != 0)
			goto fail;
	}
	if ((rc = txn->commit(txn, DB_TXN_WRITE_NOSYNC)) != 0)
		return rc;
	store_compact_shrink(st);
	pthread_mutex_lock(&st->st_cmu);
	st->st_info.si_folds++;
	st->st_info.si_fold_ops += puts + dels;
	pthread_mutex_unlock(&st->st_cmu);
	return 0;
fail:
	(void)txn->abort(txn);
	return rc;
}

/*
 * One round: switch journals, fold the old one.  0 or a code; a failure
 * is latched (st_cerr) like a failed commit: the store then refuses to go
 * on, and recovery at the next open folds what is left.
 */
int
store_compact_round(struct store *st)
{
	int old, rc;

	pthread_mutex_lock(&st->st_kmu);
	pthread_mutex_lock(&st->st_jmu);
	old = st->st_jactive;
	st->st_jactive ^= 1;
	st->st_jops = 0;
	pthread_mutex_unlock(&st->st_jmu);
	if ((rc = store_compact_journal(st, old)) != 0) {
		pthread_mutex_lock(&st->st_cmu);
		if (st->st_cerr == STORE_OK)
			st->st_cerr = rc == ENOMEM ? STORE_NOMEM :
			    store_status_of(st, rc);
		pthread_cond_broadcast(&st->st_dcv);
		pthread_mutex_unlock(&st->st_cmu);
	}
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

/* The first key (sequence number) of journal j, 0 when it is empty. */
static uint64_t
store_journal_first(struct store *st, int j)
{
	uint8_t kb[8];
	uint64_t seq = 0;
	DBC *c;
	DBT k, v;
	int i;

	if (st->st_journal[j]->cursor(st->st_journal[j], NULL, &c, 0) != 0)
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
store_compact_open(struct store *st)
{
	uint64_t f0 = store_journal_first(st, 0);
	uint64_t f1 = store_journal_first(st, 1);
	int first = f1 != 0 && (f0 == 0 || f1 < f0), rc;

	/* After a crash mid-round both may hold entries: older first. */
	if ((rc = store_compact_journal(st, first)) != 0 ||
	    (rc = store_compact_journal(st, !first)) != 0)
		return rc;
	st->st_jactive = 0;
	return 0;
}

/* ---- the thread ---- */

static void *
store_compactor(void *arg)
{
	struct store *st = arg;
	struct timespec when;
	bool due;

	pthread_mutex_lock(&st->st_cmu);
	while (!st->st_kstop) {
		clock_gettime(CLOCK_MONOTONIC, &when);
		when.tv_nsec += STORE_COMPACT_MS * 1000000L;
		if (when.tv_nsec >= 1000000000L) {
			when.tv_sec++;
			when.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&st->st_kcv, &st->st_cmu, &when);
		if (st->st_kstop || st->st_cerr != STORE_OK)
			break;
		pthread_mutex_unlock(&st->st_cmu);
		pthread_mutex_lock(&st->st_jmu);
		due = st->st_jops > 0;
		pthread_mutex_unlock(&st->st_jmu);
		if (due)
			(void)store_compact_round(st);
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

	sigfillset(&all);
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

/* A commit added n operations to the active journal (st_jmu held). */
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
