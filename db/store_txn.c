/*
 * store_txn.c - the turn's transaction: staging, commit, abort, and fault
 * injection (see store.h, HOW IT WORKS).
 *
 * INVARIANTS
 *   st_txn != NULL exactly when something was staged since the last commit
 *   or abort.  st_new is st_cur plus what st_txn staged in meta.db; every
 *   path that ends st_txn without committing it resets st_new to st_cur
 *   (store_txn_discard), so the in-memory meta never runs ahead of what a
 *   reopen would find.
 */
#include "store_impl.h"

#include <errno.h>
#include <string.h>

bool
store_fault(struct store *st)
{
	if (st->st_fail == 0)
		return false;
	return --st->st_fail == 0;
}

void
store_fail_after(struct store *st, unsigned n)
{
	st->st_fail = n;
}

void
store_txn_discard(struct store *st)
{
	int rc;

	if (st->st_txn != NULL) {
		/* A failed abort means the environment needs recovery. */
		if ((rc = st->st_txn->abort(st->st_txn)) != 0)
			(void)store_status_of(st, rc);
		st->st_txn = NULL;
	}
	st->st_new = st->st_cur;
	st->st_turn_puts = 0;
	st->st_turn_dels = 0;
	st->st_flush = false;
}

/* A staging call failed with rc: abort the turn, map the code. */
static enum store_status
store_fail(struct store *st, int rc)
{
	enum store_status s = store_status_of(st, rc);

	store_txn_discard(st);
	return s;
}

enum store_status
store_txn_get(struct store *st, DB_TXN **txnp)
{
	int rc;

	if (st->st_fatal)
		return STORE_FATAL;
	if (st->st_txn == NULL) {
		rc = STORE_DB(st, st->st_env->txn_begin(st->st_env, NULL,
		    &st->st_txn, 0));
		if (rc != 0) {
			st->st_txn = NULL;
			return store_fail(st, rc);
		}
	}
	*txnp = st->st_txn;
	return STORE_OK;
}

enum store_status
store_stage(struct store *st, DB *db, const void *key, size_t klen,
    const void *val, size_t vlen)
{
	DBT k, v;
	DB_TXN *txn = NULL;
	enum store_status s;
	int rc;

	if ((s = store_txn_get(st, &txn)) != STORE_OK)
		return s;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.data = (void *)(uintptr_t)key;
	k.size = (u_int32_t)klen;
	if (val != NULL) {
		v.data = (void *)(uintptr_t)val;
		v.size = (u_int32_t)vlen;
		rc = STORE_DB(st, db->put(db, txn, &k, &v, 0));
		st->st_turn_puts++;
	} else {
		rc = STORE_DB(st, db->del(db, txn, &k, 0));
		/* Deleting what is not there is fine (store.h). */
		if (rc == DB_NOTFOUND)
			rc = 0;
		st->st_turn_dels++;
	}
	return rc == 0 ? STORE_OK : store_fail(st, rc);
}

/* Stage a put or delete of one valid record. */
static enum store_status
store_stage_record(struct store *st, const struct lk_record *rc, bool put)
{
	size_t klen, vlen = 0;
	DB *db;

	if (rc->rc_kind == LK_REC_LOCK) {
		db = st->st_locks;
		klen = store_enc_lock_key(st->st_key, rc);
		if (put)
			vlen = store_enc_lock_val(st->st_val, rc);
	} else {
		db = st->st_shares;
		klen = store_enc_share_key(st->st_key, rc);
		if (put)
			vlen = store_enc_share_val(st->st_val, rc);
	}
	return store_stage(st, db, st->st_key, klen, put ? st->st_val : NULL,
	    vlen);
}

enum store_status
store_put_record(struct store *st, const struct lk_record *rc)
{
	if (!store_record_ok(rc))
		return STORE_INVAL;
	if (st->st_durability == STORE_NONE)
		return st->st_fatal ? STORE_FATAL : STORE_OK;
	return store_stage_record(st, rc, true);
}

enum store_status
store_del_record(struct store *st, const struct lk_record *rc)
{
	if (!store_record_ok(rc))
		return STORE_INVAL;
	if (st->st_durability == STORE_NONE)
		return st->st_fatal ? STORE_FATAL : STORE_OK;
	return store_stage_record(st, rc, false);
}

enum store_status
store_apply(struct store *st, const struct lk_result *res)
{
	enum store_status s = STORE_OK;
	size_t i;

	/* Check everything first: STORE_INVAL must leave nothing staged. */
	for (i = 0; i < res->rs_nremoved; i++)
		if (!store_record_ok(&res->rs_removed[i]))
			return STORE_INVAL;
	for (i = 0; i < res->rs_nadded; i++)
		if (!store_record_ok(&res->rs_added[i]))
			return STORE_INVAL;
	if (st->st_durability == STORE_NONE)
		return st->st_fatal ? STORE_FATAL : STORE_OK;
	/* Removals first: a reclaim may remove and add the same key. */
	for (i = 0; s == STORE_OK && i < res->rs_nremoved; i++)
		s = store_stage_record(st, &res->rs_removed[i], false);
	for (i = 0; s == STORE_OK && i < res->rs_nadded; i++)
		s = store_stage_record(st, &res->rs_added[i], true);
	return s;
}

enum store_status
store_put_host(struct store *st, const struct store_host *h)
{
	size_t klen, vlen;

	if (!store_host_ok(h))
		return STORE_INVAL;
	klen = store_enc_u64key(st->st_key, h->sh_id);
	vlen = store_enc_host_val(st->st_val, h);
	return store_stage(st, st->st_hosts, st->st_key, klen, st->st_val,
	    vlen);
}

enum store_status
store_del_host(struct store *st, uint64_t id)
{
	size_t klen;

	if (id == 0)
		return STORE_INVAL;
	klen = store_enc_u64key(st->st_key, id);
	return store_stage(st, st->st_hosts, st->st_key, klen, NULL, 0);
}

/* Stage meta value `name' := v when v raises *cur; else nothing. */
static enum store_status
store_put_meta(struct store *st, const char *name, uint64_t *cur,
    uint64_t v)
{
	enum store_status s;
	size_t vlen;

	if (st->st_fatal)
		return STORE_FATAL;
	if (v <= *cur)
		return STORE_OK;
	vlen = store_enc_meta(st->st_val, v);
	s = store_stage(st, st->st_meta, name, strlen(name), st->st_val, vlen);
	/* On failure store_stage() already reset st_new to st_cur. */
	if (s == STORE_OK)
		*cur = v;
	return s;
}

enum store_status
store_put_token(struct store *st, uint64_t token)
{
	if (st->st_durability == STORE_NONE)
		return st->st_fatal ? STORE_FATAL : STORE_OK;
	return store_put_meta(st, "token", &st->st_new.sm_token, token);
}

enum store_status
store_put_next_host(struct store *st, uint64_t next)
{
	return store_put_meta(st, "nexthost", &st->st_new.sm_next_host, next);
}

enum store_status
store_put_epoch(struct store *st, uint64_t epoch)
{
	return store_put_meta(st, "epoch", &st->st_new.sm_epoch, epoch);
}

void
store_require_flush(struct store *st)
{
	st->st_flush = true;
}

bool
store_pending(const struct store *st)
{
	return st->st_txn != NULL;
}

/* Commit or abort st_txn: the fault point counts as a failed commit. */
static int
store_txn_end(struct store *st, bool flush)
{
	DB_TXN *txn = st->st_txn;

	st->st_txn = NULL;
	if (store_fault(st)) {
		/* A failed commit aborts; so does an injected one. */
		(void)txn->abort(txn);
		return EIO;
	}
	return txn->commit(txn, flush ? DB_TXN_SYNC : DB_TXN_WRITE_NOSYNC);
}

enum store_status
store_commit(struct store *st)
{
	bool flush;
	int rc;

	if (st->st_fatal) {
		store_txn_discard(st);
		return STORE_FATAL;
	}
	if (st->st_txn == NULL) {
		st->st_flush = false;
		return STORE_OK;
	}
	flush = st->st_durability == STORE_SYNC || st->st_flush;
	/* The handle is gone after commit, whatever it returned. */
	if ((rc = store_txn_end(st, flush)) != 0)
		return store_fail(st, rc);
	st->st_cur = st->st_new;
	st->st_info.si_commits++;
	if (flush)
		st->st_info.si_flushes++;
	st->st_info.si_puts += st->st_turn_puts;
	st->st_info.si_dels += st->st_turn_dels;
	st->st_turn_puts = 0;
	st->st_turn_dels = 0;
	st->st_flush = false;
	return STORE_OK;
}

void
store_abort(struct store *st)
{
	store_txn_discard(st);
}
