/*
 * store_load.c - loading at startup: every host, lock and share record.
 *
 * HOW IT WORKS
 *   One cursor per database walks it in key order with bulk gets
 *   (DB_MULTIPLE_KEY | DB_NEXT): each get fills a STORE_BULK_BYTES buffer
 *   with as many key/value pairs as fit, so a million records cost some
 *   sixty Berkeley DB calls instead of a million.  Records are decoded in
 *   place; the callback's pointers (handles, names) point into the buffer
 *   or into st_name and are valid only during the call.
 *
 *   Keys come in strictly increasing order (the btree's, memcmp then
 *   length); one that does not is a damaged page -- a chain of leaves
 *   looping back would otherwise be walked for ever -- and fails the
 *   load.  locks.db, the one database without page checksums (store.c,
 *   store_db_open()), relies on it.  Nor may the walk end early: a leaf
 *   whose link to the next page was damaged (0, its own page, a page
 *   further on) ends it, or passes over leaves, with every key in order
 *   and a success from Berkeley DB.  So the records of locks.db and
 *   shares.db walked must be as many as meta.db, which has checksums,
 *   counts (meta "locks", "shares": every transaction that changes them
 *   stores them, store_compact.c); the count of a store from before the
 *   counts is the walk's, stored by its first load.  st_kmu is held
 *   through both walks: no fold changes them or their counts meanwhile.
 */
#include "store_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum store_load_kind {
	LOAD_HOSTS,
	LOAD_LOCKS,
	LOAD_SHARES
};

/* One walk over one database. */
struct store_loader {
	struct store		*ld_st;
	DB			*ld_db;
	const char		*ld_name;	/* file name, for messages */
	enum store_load_kind	 ld_kind;
	store_host_cb		*ld_hcb;
	store_record_cb		*ld_rcb;
	void			*ld_arg;
	size_t			 ld_n;		/* records seen */
	uint64_t		 ld_v1;		/* of them, version 1 locks */
	uint8_t			 ld_prev[STORE_KEY_MAX]; /* the last key */
	u_int32_t		 ld_prevlen;	/* (0: none yet) */
	char			*ld_err;
	size_t			 ld_errlen;
};

/* Decode one key/value pair and hand it to the callback. */
static enum store_status
store_load_one(struct store_loader *ld, const void *k, u_int32_t klen,
    const void *v, u_int32_t vlen)
{
	struct lk_record rc;
	struct store_host h;
	const char *why;
	int r;

	if (ld->ld_kind == LOAD_HOSTS)
		why = store_dec_host(k, klen, v, vlen, &h, ld->ld_st->st_name);
	else if (ld->ld_kind == LOAD_LOCKS)
		why = store_dec_lock(k, klen, v, vlen, &rc);
	else
		why = store_dec_share(k, klen, v, vlen, &rc);
	if (why != NULL) {
		snprintf(ld->ld_err, ld->ld_errlen, "%s in %s: record %zu "
		    "(key %u bytes, value %u bytes, version byte %u): %s "
		    "-- written by a newer nlmd, or damaged: see README, "
		    "\"When the store is damaged\"", ld->ld_name,
		    ld->ld_st->st_dir, ld->ld_n, (unsigned)klen,
		    (unsigned)vlen, vlen > 0 ? *(const uint8_t *)v : 0u, why);
		return STORE_CORRUPT;
	}
	/* A version 1 lock decodes with its version byte 1 only. */
	if (ld->ld_kind == LOAD_LOCKS && *(const uint8_t *)v == STORE_REC_V1)
		ld->ld_v1++;
	r = ld->ld_kind == LOAD_HOSTS ? ld->ld_hcb(&h, ld->ld_arg) :
	    ld->ld_rcb(&rc, ld->ld_arg);
	if (r != 0) {
		snprintf(ld->ld_err, ld->ld_errlen, "%s: the caller stopped "
		    "loading at record %zu", ld->ld_name, ld->ld_n);
		return STORE_INVAL;
	}
	return STORE_OK;
}

/* Does key k come after the last one, in the btree's order? */
static bool
store_load_after(struct store_loader *ld, const void *k, u_int32_t klen)
{
	u_int32_t n = klen < ld->ld_prevlen ? klen : ld->ld_prevlen;
	int c = memcmp(ld->ld_prev, k, n);

	if (ld->ld_prevlen > 0 && (c > 0 || (c == 0 && ld->ld_prevlen >= klen)))
		return false;
	/* A key longer than any nlmd writes fails its decoding anyway. */
	ld->ld_prevlen = klen <= sizeof(ld->ld_prev) ? klen : 0;
	memcpy(ld->ld_prev, k, ld->ld_prevlen);
	return true;
}

/* Every pair of one bulk buffer. */
static enum store_status
store_load_batch(struct store_loader *ld, DBT *v)
{
	enum store_status s = STORE_OK;
	void *p, *kp, *dp;
	u_int32_t klen, dlen;

	DB_MULTIPLE_INIT(p, v);
	while (s == STORE_OK) {
		DB_MULTIPLE_KEY_NEXT(p, v, kp, klen, dp, dlen);
		if (p == NULL)
			break;
		ld->ld_n++;
		if (klen == 0 || !store_load_after(ld, kp, klen)) {
			snprintf(ld->ld_err, ld->ld_errlen, "%s in %s: record "
			    "%zu: key out of order (%u bytes) -- a damaged "
			    "page: see README, \"When the store is damaged\"",
			    ld->ld_name, ld->ld_st->st_dir, ld->ld_n,
			    (unsigned)klen);
			return STORE_CORRUPT;
		}
		s = store_load_one(ld, kp, klen, dp, dlen);
	}
	return s;
}

/* A Berkeley DB call failed while reading: say so in err. */
static enum store_status
store_load_fail(struct store_loader *ld, int rc)
{
	struct store *st = ld->ld_st;
	char dberr[STORE_DBERR_MAX];
	enum store_status s = store_status_of(st, rc);

	store_dberr(st, dberr, sizeof(dberr));
	snprintf(ld->ld_err, ld->ld_errlen, "cannot read %s in %s: %s%s%s%s",
	    ld->ld_name, st->st_dir, db_strerror(rc),
	    dberr[0] ? ": " : "", dberr, s == STORE_NOMEM ? "" :
	    " -- the file is damaged: see README, \"When the store is "
	    "damaged\"");
	return s;
}

/* Walk the cursor to the end. */
static enum store_status
store_load_walk(struct store_loader *ld, DBC *c, void *buf)
{
	struct store *st = ld->ld_st;
	enum store_status s;
	DBT k, v;
	int rc;

	for (;;) {
		memset(&k, 0, sizeof(k));
		memset(&v, 0, sizeof(v));
		v.data = buf;
		v.ulen = STORE_BULK_BYTES;
		v.flags = DB_DBT_USERMEM;
		rc = STORE_DB(st, c->get(c, &k, &v, DB_MULTIPLE_KEY | DB_NEXT));
		if (rc == DB_NOTFOUND)
			return STORE_OK;
		if (rc != 0)
			return store_load_fail(ld, rc);
		if ((s = store_load_batch(ld, &v)) != STORE_OK)
			return s;
	}
}

static enum store_status
store_load_db(struct store_loader *ld)
{
	struct store *st = ld->ld_st;
	enum store_status s;
	DBC *c;
	void *buf;
	int rc;

	if ((buf = malloc(STORE_BULK_BYTES)) == NULL) {
		snprintf(ld->ld_err, ld->ld_errlen, "%s: out of memory",
		    ld->ld_name);
		return STORE_NOMEM;
	}
	ld->ld_prevlen = 0;
	store_dberr_clear(st);
	rc = STORE_DB(st, ld->ld_db->cursor(ld->ld_db, NULL, &c, 0));
	if (rc != 0) {
		s = store_load_fail(ld, rc);
		goto out;
	}
	s = store_load_walk(ld, c, buf);
	(void)c->close(c);
out:
	free(buf);
	return s;
}

/* Common checks and set-up of a load. */
static enum store_status
store_load_init(struct store_loader *ld, struct store *st, char *err,
    size_t errlen)
{
	enum store_status s;

	memset(ld, 0, sizeof(*ld));
	ld->ld_st = st;
	ld->ld_err = err;
	ld->ld_errlen = errlen;
	if (st->st_fatal) {
		snprintf(err, errlen, "the store needs recovery");
		return STORE_FATAL;
	}
	if (store_pending(st)) {
		snprintf(err, errlen, "cannot load while a turn is pending");
		return STORE_INVAL;
	}
	/*
	 * Everything sealed is in the databases before we read them.  What
	 * failed (a commit, or the fold) is latched: its status, not "I/O".
	 */
	if ((s = store_compact_all(st)) != STORE_OK) {
		snprintf(err, errlen, "a commit or the journal's fold failed: "
		    "%s", store_last_error(st));
		return s;
	}
	return STORE_OK;
}

enum store_status
store_hosts_load(struct store *st, store_host_cb *cb, void *arg, char *err,
    size_t errlen)
{
	struct store_loader ld;
	enum store_status s;

	if ((s = store_load_init(&ld, st, err, errlen)) != STORE_OK)
		return s;
	ld.ld_db = st->st_hosts;
	ld.ld_name = "hosts.db";
	ld.ld_kind = LOAD_HOSTS;
	ld.ld_hcb = cb;
	ld.ld_arg = arg;
	return store_load_db(&ld);
}

/*
 * Walk ld's database, whose count of records is st_nrec.nr_n[i] (st_kmu
 * held): a walk that read another number of them is a damaged page.
 * *np := the records walked.
 */
static enum store_status
store_load_counted(struct store_loader *ld, int i, uint64_t *np)
{
	const struct store_nrec *nr = &ld->ld_st->st_nrec;
	enum store_status s;

	ld->ld_n = 0;
	if ((s = store_load_db(ld)) != STORE_OK)
		return s;
	*np = ld->ld_n;
	if (!nr->nr_known[i] || nr->nr_n[i] == *np)
		return STORE_OK;
	snprintf(ld->ld_err, ld->ld_errlen, "%s in %s: the walk read %llu "
	    "records, but meta.db counts %llu -- a damaged page (a leaf's "
	    "link to the next) %s: see README, \"When the store is "
	    "damaged\"", ld->ld_name, ld->ld_st->st_dir,
	    (unsigned long long)*np, (unsigned long long)nr->nr_n[i],
	    *np < nr->nr_n[i] ? "ended it early or passed over some" :
	    "led it to records that are not in the tree");
	return STORE_CORRUPT;
}

/*
 * A store from before the counts: store those the walks found (n[]), in
 * a transaction of their own (st_kmu held).  Not once a journal append
 * failed (st_lhalt): the next start counts again.
 */
static enum store_status
store_load_count(struct store_loader *ld, const uint64_t n[2])
{
	struct store *st = ld->ld_st;
	struct store_nrec nr = st->st_nrec;
	DB_TXN *txn;
	int i, rc;

	if ((nr.nr_known[0] && nr.nr_known[1]) || atomic_load(&st->st_lhalt))
		return STORE_OK;
	for (i = 0; i < 2; i++) {
		nr.nr_n[i] = n[i];
		nr.nr_known[i] = true;
	}
	/* A commit frees txn even when it fails: no abort after it. */
	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) == 0) {
		if ((rc = store_nrec_put(st, txn, &st->st_nrec, &nr)) != 0)
			(void)txn->abort(txn);
		else
			rc = txn->commit(txn, DB_TXN_WRITE_NOSYNC);
	}
	if (rc != 0) {
		snprintf(ld->ld_err, ld->ld_errlen, "cannot store the counts "
		    "of records in meta.db in %s: %s", st->st_dir,
		    db_strerror(rc));
		return store_status_of(st, rc);
	}
	st->st_nrec = nr;
	return STORE_OK;
}

enum store_status
store_records_load(struct store *st, store_record_cb *cb, void *arg,
    char *err, size_t errlen)
{
	struct store_loader ld;
	enum store_status s;
	uint64_t n[2];

	if ((s = store_load_init(&ld, st, err, errlen)) != STORE_OK)
		return s;
	ld.ld_db = st->st_locks;
	ld.ld_name = "locks.db";
	ld.ld_kind = LOAD_LOCKS;
	ld.ld_rcb = cb;
	ld.ld_arg = arg;
	pthread_mutex_lock(&st->st_kmu);
	if ((s = store_load_counted(&ld, 0, &n[0])) != STORE_OK)
		goto out;
	pthread_mutex_lock(&st->st_cmu);
	st->st_info.si_locks_v1 = ld.ld_v1;
	pthread_mutex_unlock(&st->st_cmu);
	ld.ld_db = st->st_shares;
	ld.ld_name = "shares.db";
	ld.ld_kind = LOAD_SHARES;
	if ((s = store_load_counted(&ld, 1, &n[1])) == STORE_OK)
		s = store_load_count(&ld, n);
out:
	pthread_mutex_unlock(&st->st_kmu);
	return s;
}
