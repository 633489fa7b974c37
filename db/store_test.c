/*
 * store_test.c - see store_test.h.
 */
#include "store_test.h"

#include "store_impl.h"

#include <stdlib.h>
#include <string.h>

enum store_status
store_test_put_raw(struct store *st, enum store_test_db which,
    const void *key, size_t klen, const void *val, size_t vlen)
{
	enum store_dbi db;

	switch (which) {
	case STORE_TEST_META:
		db = STORE_DBI_META;
		break;
	case STORE_TEST_HOSTS:
		db = STORE_DBI_HOSTS;
		break;
	case STORE_TEST_LOCKS:
		db = STORE_DBI_LOCKS;
		break;
	case STORE_TEST_SHARES:
		db = STORE_DBI_SHARES;
		break;
	default:
		return STORE_INVAL;
	}
	if (key == NULL || klen == 0 || (val == NULL && vlen > 0))
		return STORE_INVAL;
	/* store_stage() deletes on a NULL value; an empty value is a put. */
	return store_stage(st, db, key, klen, val != NULL ? val : "", vlen);
}

enum store_status
store_test_journal_entry(struct store *st, uint8_t kind)
{
	const struct store_batch *b = st->st_batch;
	uint32_t hdr[4] = { STORE_LOGREC, 0, 0, 0 };
	size_t len = STORE_LOGREC_HDR + 1, off;
	uint8_t *v;
	DB_LSN lsn;
	DBT d;
	int rc;

	if ((v = malloc(len + (b != NULL ? b->b_len : 0))) == NULL)
		return STORE_NOMEM;
	memcpy(v, hdr, STORE_LOGREC_HDR);
	v[STORE_LOGREC_HDR] = kind;
	for (off = 0; b != NULL && off < b->b_len; ) {
		const struct store_op *op =
		    (const struct store_op *)(const void *)(b->b_buf + off);

		len += store_enc_jop(v + len, op);
		off += STORE_OP_SPACE(op->op_klen, op->op_vlen);
	}
	memset(&d, 0, sizeof(d));
	d.data = v;
	d.size = (u_int32_t)len;
	rc = st->st_env->log_put(st->st_env, &lsn, &d, DB_FLUSH);
	free(v);
	store_txn_discard(st);
	return rc == 0 ? STORE_OK : store_status_of(st, rc);
}

void
store_test_hold_fold(struct store *st, bool hold)
{
	atomic_store(&st->st_khold, hold);
}

void
store_test_tail_max(struct store *st, size_t bytes)
{
	pthread_mutex_lock(&st->st_jmu);
	st->st_jtail_max = bytes;
	pthread_mutex_unlock(&st->st_jmu);
}

size_t
store_test_free_batches(struct store *st)
{
	const struct store_batch *b;
	size_t n = 0;

	pthread_mutex_lock(&st->st_cmu);
	for (b = st->st_free; b != NULL; b = b->b_next)
		n++;
	pthread_mutex_unlock(&st->st_cmu);
	return n;
}

void
store_test_log_end(struct store *st, bool synced, unsigned long *filep,
    unsigned long *offp)
{
	DB_LOG_STAT *ls;

	*filep = *offp = 0;
	if (st->st_env->log_stat(st->st_env, &ls, 0) != 0)
		return;
	*filep = synced ? ls->st_disk_file : ls->st_cur_file;
	*offp = synced ? ls->st_disk_offset : ls->st_cur_offset;
	free(ls);
}

_Static_assert(STORE_KEY_MAX <= STORE_TEST_KEY_ROOM, "key room");
_Static_assert(STORE_COMPACT_MS == STORE_TEST_COMPACT_MS, "round period");

unsigned long long
store_test_main_region_max(struct store *st)
{
	u_int32_t gb = 0, bytes = 0;

	(void)st->st_env->get_memory_max(st->st_env, &gb, &bytes);
	return ((unsigned long long)gb << 30) + bytes;
}

void
store_test_enc_lock(const struct lk_record *rc, uint8_t *key, size_t *klenp,
    uint8_t *val, size_t *vlenp)
{
	*klenp = store_enc_lock_key(key, rc);
	*vlenp = store_enc_lock_val(val, rc, key, *klenp);
}

const char *
store_test_dec_lock(const void *key, size_t klen, const void *val,
    size_t vlen, struct lk_record *rc)
{
	return store_dec_lock(key, klen, val, vlen, rc);
}

enum store_status
store_test_v1_entry(struct store *st, unsigned j, uint64_t seq)
{
	static const char *const name[2] = { "journal0.db", "journal1.db" };
	const struct store_batch *b = st->st_batch;
	uint8_t kb[8], *v;
	size_t len = 1, off;
	DB_TXN *txn = NULL;
	DB *db = NULL;
	DBT k, d;
	int rc, i;

	if (j > 1 || (v = malloc(1 + (b != NULL ? b->b_len : 0))) == NULL)
		return STORE_INVAL;
	v[0] = STORE_REC_V1;
	for (off = 0; b != NULL && off < b->b_len; ) {
		const struct store_op *op =
		    (const struct store_op *)(const void *)(b->b_buf + off);

		len += store_enc_jop(v + len, op);
		off += STORE_OP_SPACE(op->op_klen, op->op_vlen);
	}
	for (i = 0; i < 8; i++)
		kb[i] = (uint8_t)(seq >> (56 - 8 * i));
	memset(&k, 0, sizeof(k));
	memset(&d, 0, sizeof(d));
	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) == 0 &&
	    (rc = db_create(&db, st->st_env, 0)) == 0 &&
	    (rc = db->open(db, txn, name[j], NULL, DB_BTREE, DB_CREATE, 0600))
	    == 0) {
		k.data = kb;
		k.size = sizeof(kb);
		d.data = v;
		d.size = (u_int32_t)len;
		rc = db->put(db, txn, &k, &d, 0);
	}
	if (rc == 0)
		rc = store_meta_put(st, txn, "format", 1);
	if (txn != NULL)
		rc = rc == 0 ? txn->commit(txn, 0) : (txn->abort(txn), rc);
	/* A handle opened in a transaction outlives it. */
	if (db != NULL)
		(void)db->close(db, 0);
	free(v);
	store_txn_discard(st);
	return rc == 0 ? STORE_OK : store_status_of(st, rc);
}

void
store_test_lk_max(unsigned n)
{
	atomic_store(&store_lk_max, n);
}

void
store_test_fold_fail_at(struct store *st, unsigned n)
{
	atomic_store(&st->st_kfail_at, n);
}

void
store_test_upgrade_steps(struct store *st, unsigned n)
{
	pthread_mutex_lock(&st->st_cmu);
	st->st_kstep_max = n;
	pthread_cond_signal(&st->st_kcv);
	pthread_mutex_unlock(&st->st_cmu);
}

static const char *const nrec_name[2] = { "locks", "shares" };

bool
store_test_nrec(struct store *st, unsigned which, uint64_t *np)
{
	uint8_t buf[64];
	DBT k, v;
	int rc;

	*np = 0;
	if (which > 1)
		return false;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.data = (void *)(uintptr_t)nrec_name[which];
	k.size = (u_int32_t)strlen(nrec_name[which]);
	v.data = buf;
	v.ulen = sizeof(buf);
	v.flags = DB_DBT_USERMEM;
	pthread_mutex_lock(&st->st_kmu);
	rc = st->st_meta->get(st->st_meta, NULL, &k, &v, 0);
	pthread_mutex_unlock(&st->st_kmu);
	return rc == 0 && store_dec_meta(v.data, v.size, np) == NULL;
}

enum store_status
store_test_nrec_forget(struct store *st)
{
	DB_TXN *txn;
	DBT k;
	int rc, i;

	pthread_mutex_lock(&st->st_kmu);
	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) == 0) {
		for (i = 0; i < 2 && (rc == 0 || rc == DB_NOTFOUND); i++) {
			memset(&k, 0, sizeof(k));
			k.data = (void *)(uintptr_t)nrec_name[i];
			k.size = (u_int32_t)strlen(nrec_name[i]);
			rc = st->st_meta->del(st->st_meta, txn, &k, 0);
		}
		if (rc != 0 && rc != DB_NOTFOUND)
			(void)txn->abort(txn);
		else
			rc = txn->commit(txn, DB_TXN_SYNC);
	}
	if (rc == 0)
		st->st_nrec.nr_known[0] = st->st_nrec.nr_known[1] = false;
	pthread_mutex_unlock(&st->st_kmu);
	return rc == 0 ? STORE_OK : store_status_of(st, rc);
}
