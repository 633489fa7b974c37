/*
 * store_txn.c - staging a turn, sealing it for the committer, waiting for
 * commits, and fault injection (see store.h, HOW IT WORKS).
 *
 * Staging never calls Berkeley DB: every put or delete is appended,
 * encoded as it will be stored, to the turn's batch (st_batch), an
 * in-memory list of operations (struct store_op).  store_seal() hands the
 * batch to the committer (store_commit.c), which appends it to Berkeley
 * DB's log as a journal record; the event loop learns of commits through
 * store_fd() / store_committed() (or store_durable()).
 *
 * INVARIANTS
 *   st_batch holds exactly what was staged since the last seal or abort;
 *   st_new is the meta of everything sealed plus st_batch (high-water
 *   marks only rise); an abort resets st_new to the meta of what was
 *   sealed (st_sealed_meta).
 */
#include "store_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool
store_fault(struct store *st)
{
	unsigned n = atomic_load(&st->st_fail);

	while (n != 0)
		if (atomic_compare_exchange_weak(&st->st_fail, &n, n - 1))
			return n == 1;
	return false;
}

void
store_fail_after(struct store *st, unsigned n)
{
	atomic_store(&st->st_fail, n);
}

/* Forget what the turn staged (nothing was sealed of it). */
void
store_txn_discard(struct store *st)
{
	if (st->st_batch != NULL) {
		st->st_batch->b_len = 0;
		st->st_batch->b_nops = 0;
		st->st_batch->b_puts = 0;
		st->st_batch->b_flush = false;
	}
	st->st_new = st->st_sealed_meta;
	st->st_flush = false;
}

/* The turn's batch, with room for `need' more bytes.  NULL: no memory. */
static struct store_batch *
store_turn_batch(struct store *st, size_t need)
{
	struct store_batch *b = st->st_batch;

	if (b == NULL && (b = st->st_batch = store_batch_new()) == NULL)
		return NULL;
	return store_batch_room(b, need, 4096) ? b : NULL;
}

enum store_status
store_stage(struct store *st, enum store_dbi dbi, const void *key,
    size_t klen, const void *val, size_t vlen)
{
	struct store_batch *b;
	struct store_op op;

	if (st->st_fatal)
		return STORE_FATAL;
	if ((b = store_turn_batch(st, STORE_OP_SPACE(klen, vlen))) == NULL) {
		/* As a failed transaction would: the turn is gone. */
		store_txn_discard(st);
		return STORE_NOMEM;
	}
	memset(&op, 0, sizeof(op));
	op.op_dbi = (uint8_t)dbi;
	op.op_put = val != NULL;
	op.op_klen = (uint16_t)klen;
	op.op_vlen = (uint32_t)vlen;
	memcpy(b->b_buf + b->b_len, &op, sizeof(op));
	memcpy(b->b_buf + b->b_len + sizeof(op), key, klen);
	if (vlen > 0)
		memcpy(b->b_buf + b->b_len + sizeof(op) + klen, val, vlen);
	b->b_len += STORE_OP_SPACE(klen, vlen);
	b->b_nops++;
	b->b_puts += val != NULL;
	return STORE_OK;
}

/* Stage a put or delete of one valid record. */
static enum store_status
store_stage_record(struct store *st, const struct lk_record *rc, bool put)
{
	enum store_dbi dbi;
	size_t klen, vlen = 0;

	if (rc->rc_kind == LK_REC_LOCK) {
		dbi = STORE_DBI_LOCKS;
		klen = store_enc_lock_key(st->st_key, rc);
		if (put)
			vlen = store_enc_lock_val(st->st_val, rc, st->st_key,
			    klen);
	} else {
		dbi = STORE_DBI_SHARES;
		klen = store_enc_share_key(st->st_key, rc);
		if (put)
			vlen = store_enc_share_val(st->st_val, rc);
	}
	return store_stage(st, dbi, st->st_key, klen, put ? st->st_val : NULL,
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
	return store_stage(st, STORE_DBI_HOSTS, st->st_key, klen, st->st_val,
	    vlen);
}

enum store_status
store_del_host(struct store *st, uint64_t id)
{
	size_t klen;

	if (id == 0)
		return STORE_INVAL;
	klen = store_enc_u64key(st->st_key, id);
	return store_stage(st, STORE_DBI_HOSTS, st->st_key, klen, NULL, 0);
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
	s = store_stage(st, STORE_DBI_META, name, strlen(name), st->st_val,
	    vlen);
	/* On failure store_stage() already reset st_new. */
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
	return st->st_batch != NULL && st->st_batch->b_nops > 0;
}

enum store_status
store_seal(struct store *st, uint64_t *seqp)
{
	struct store_batch *b = st->st_batch;
	enum store_status s;

	if ((s = store_commit_error(st)) != STORE_OK) {
		store_txn_discard(st);
		return s;
	}
	if (b == NULL || b->b_nops == 0) {
		st->st_flush = false;
		*seqp = st->st_sealed;
		return STORE_OK;
	}
	b->b_flush = st->st_durability == STORE_SYNC || st->st_flush;
	b->b_meta = st->st_new;
	b->b_seq = ++st->st_sealed;
	st->st_sealed_meta = st->st_new;
	st->st_batch = NULL;
	st->st_flush = false;
	store_commit_queue(st, b);
	/*
	 * Not b->b_seq: once queued, b is the committer's, which may have
	 * committed it and freed it already.
	 */
	*seqp = st->st_sealed;
	return STORE_OK;
}

uint64_t
store_sealed(const struct store *st)
{
	return st->st_sealed;
}

enum store_status
store_commit(struct store *st)
{
	enum store_status s;
	uint64_t seq;

	if ((s = store_seal(st, &seq)) != STORE_OK)
		return s;
	return store_commit_wait(st, seq);
}

void
store_abort(struct store *st)
{
	store_txn_discard(st);
}
