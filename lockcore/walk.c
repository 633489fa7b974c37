/*
 * walk.c - enumeration for the status dump, and the invariant checker the
 * tests run after every step.
 */
#include "lockcore.h"

#include <stdlib.h>
#include <string.h>

#include "lk_impl.h"

#define LK_FOREACH_OBJ(h, ob, i)					\
	for ((i) = 0; (i) <= (h)->h_mask; (i)++)			\
		for ((ob) = (h)->h_tab[(i)]; (ob) != NULL; (ob) = (ob)->ob_next)

int
lk_file_foreach(const struct lk_table *t, lk_file_cb cb, void *arg)
{
	struct lk_file_info fi;
	const struct lk_file *f;
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_files, ob, i) {
		if (ob->ob_refs == 0)
			continue;
		f = (const struct lk_file *)ob;
		fi.fi_fh = f->fi_fh;
		fi.fi_fhlen = f->fi_fhlen;
		fi.fi_locks = f->fi_nlocks;
		fi.fi_waiters = f->fi_nwaiters + f->fi_npending;
		fi.fi_shares = f->fi_nshares;
		if ((rc = cb(&fi, arg)) != 0)
			return rc;
	}
	return 0;
}

static void
lk_host_info_fill(const struct lk_host *ho, struct lk_host_info *hi)
{
	hi->hi_host = ho->ho_id;
	hi->hi_owners = ho->ho_nowners;
	hi->hi_locks = ho->ho_nlocks;
	hi->hi_waiters = ho->ho_nwaiters;
	hi->hi_shares = ho->ho_nshares;
	hi->hi_pending = ho->ho_npending;
	hi->hi_rlocks = ho->ho_nrlocks;
	hi->hi_rshares = ho->ho_nrshares;
}

int
lk_host_foreach(const struct lk_table *t, lk_host_cb cb, void *arg)
{
	struct lk_host_info hi;
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_hosts, ob, i) {
		if (ob->ob_refs == 0)
			continue;
		lk_host_info_fill((const struct lk_host *)ob, &hi);
		if ((rc = cb(&hi, arg)) != 0)
			return rc;
	}
	return 0;
}

bool
lk_host_info(const struct lk_table *t, uint64_t host,
    struct lk_host_info *hi)
{
	const struct lk_host *ho = lk_host_find(t, host);

	if (ho == NULL || ho->ho_ob.ob_refs == 0) {
		memset(hi, 0, sizeof(*hi));
		hi->hi_host = host;
		return false;
	}
	lk_host_info_fill(ho, hi);
	return true;
}

int
lk_owner_foreach(const struct lk_table *t, lk_owner_cb cb, void *arg)
{
	struct lk_owner_info oi;
	const struct lk_owner *o;
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_owners, ob, i) {
		if (ob->ob_refs == 0)
			continue;
		o = (const struct lk_owner *)ob;
		oi.oi_host = o->ow_host->ho_id;
		oi.oi_oh = o->ow_oh;
		oi.oi_ohlen = o->ow_ohlen;
		oi.oi_svid = o->ow_svid;
		oi.oi_share = o->ow_share;
		oi.oi_locks = o->ow_nlocks;
		oi.oi_waiters = o->ow_nwaiters + o->ow_npending;
		oi.oi_shares = o->ow_nshares;
		oi.oi_rlocks = o->ow_recl == NULL ? 0 : o->ow_recl->re_nlocks;
		oi.oi_rshares = o->ow_recl == NULL ? 0 : o->ow_recl->re_nshares;
		if ((rc = cb(&oi, arg)) != 0)
			return rc;
	}
	return 0;
}

/*
 * Locks of a file in start order: the live tree is walked, and the
 * reclaimable locks (a second tree, only in grace) are merged in with an
 * iterator (w_next) as the walk passes their start.
 */
struct lk_walk {
	lk_record_cb	 w_cb;
	void		*w_arg;
	struct lk_bnode	*w_rroot;	/* the file's reclaimable locks */
	struct lk_lock	*w_next;	/* next of them to report */
};

static int
lk_walk_emit(struct lk_walk *w, const struct lk_lock *l)
{
	struct lk_record rc;

	lk_record_lock(&rc, l);
	return w->w_cb(&rc, w->w_arg);
}

/* Report the reclaimable locks that start before `before' (or all). */
static int
lk_walk_rlocks(struct lk_walk *w, uint64_t before, bool all)
{
	int rc;

	while (w->w_next != NULL && (all || w->w_next->lo_start < before)) {
		if ((rc = lk_walk_emit(w, w->w_next)) != 0)
			return rc;
		w->w_next = lk_tree_next(w->w_rroot, w->w_next);
	}
	return 0;
}

static int
lk_walk_lock_cb(struct lk_lock *l, void *arg)
{
	struct lk_walk *w = arg;
	int rc;

	if ((rc = lk_walk_rlocks(w, l->lo_start, false)) != 0)
		return rc;
	return lk_walk_emit(w, l);
}

/* One file's locks, live and reclaimable, in start order. */
static int
lk_walk_file_locks(const struct lk_file *f, lk_record_cb cb, void *arg)
{
	struct lk_walk w = { cb, arg, NULL, NULL };
	int rc;

	w.w_rroot = f->fi_recl == NULL ? NULL : f->fi_recl->re_root;
	w.w_next = lk_tree_first(w.w_rroot);
	if ((rc = lk_tree_walk(f->fi_root, lk_walk_lock_cb, &w)) != 0)
		return rc;
	return lk_walk_rlocks(&w, 0, true);
}

int
lk_lock_foreach(const struct lk_table *t, lk_record_cb cb, void *arg)
{
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_files, ob, i)
		if ((rc = lk_walk_file_locks((struct lk_file *)ob, cb,
		    arg)) != 0)
			return rc;
	return 0;
}

int
lk_owner_locks(const struct lk_table *t, uint64_t host, int32_t svid,
    const void *oh, size_t ohlen, lk_record_cb cb, void *arg)
{
	const struct lk_owner *o;
	const struct lk_lock *l;
	struct lk_record rc;
	int r;

	/* lk_owner_find() only looks; it takes the table non-const. */
	if (ohlen > LK_OH_MAX || (o = lk_owner_find((struct lk_table *)
	    (uintptr_t)t, host, svid, false, oh, ohlen)) == NULL)
		return 0;
	for (l = o->ow_locks; l != NULL; l = l->lo_onext) {
		lk_record_lock(&rc, l);
		if ((r = cb(&rc, arg)) != 0)
			return r;
	}
	for (l = o->ow_recl != NULL ? o->ow_recl->re_locks : NULL; l != NULL;
	    l = l->lo_onext) {
		lk_record_lock(&rc, l);
		if ((r = cb(&rc, arg)) != 0)
			return r;
	}
	return 0;
}

static int
lk_walk_shares(const struct lk_share *s, lk_record_cb cb, void *arg)
{
	struct lk_record rc;
	int r;

	for (; s != NULL; s = s->sh_fnext) {
		lk_record_share(&rc, s);
		if ((r = cb(&rc, arg)) != 0)
			return r;
	}
	return 0;
}

int
lk_share_foreach(const struct lk_table *t, lk_record_cb cb, void *arg)
{
	const struct lk_file *f;
	struct lk_obj *ob;
	size_t i;
	int r;

	LK_FOREACH_OBJ(&t->t_files, ob, i) {
		f = (const struct lk_file *)ob;
		if ((r = lk_walk_shares(f->fi_shares, cb, arg)) != 0 ||
		    (f->fi_recl != NULL &&
		    (r = lk_walk_shares(f->fi_recl->re_shares, cb, arg)) != 0))
			return r;
	}
	return 0;
}

static void
lk_waiter_info_of(struct lk_waiter_info *wi, const struct lk_waiter *w)
{
	lk_record_waiter(&wi->wi_req, w);
	wi->wi_udata = w->wa_udata;
	wi->wi_since = w->wa_since;
	wi->wi_granted = w->wa_granted;
}

static int
lk_waiters_walk(const struct lk_waiter *w, lk_waiter_cb cb, void *arg)
{
	struct lk_waiter_info wi;
	int rc;

	for (; w != NULL; w = w->wa_fnext) {
		lk_waiter_info_of(&wi, w);
		if ((rc = cb(&wi, arg)) != 0)
			return rc;
	}
	return 0;
}

int
lk_waiter_foreach(const struct lk_table *t, lk_waiter_cb cb, void *arg)
{
	const struct lk_file *f;
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_files, ob, i) {
		f = (const struct lk_file *)ob;
		if ((rc = lk_waiters_walk(f->fi_wq, cb, arg)) != 0 ||
		    (rc = lk_waiters_walk(f->fi_pend, cb, arg)) != 0)
			return rc;
	}
	return 0;
}

/* ---- resumable walks ---- */

struct lk_scan_count {
	const struct lk_scan_cbs *sn_cbs;
	size_t		 sn_n;
};

static int
lk_scan_lock_cb(const struct lk_record *rc, void *arg)
{
	struct lk_scan_count *sn = arg;

	sn->sn_n++;
	(void)sn->sn_cbs->sc_lock(rc, sn->sn_cbs->sc_arg);
	return 0;
}

static int
lk_scan_share_cb(const struct lk_record *rc, void *arg)
{
	struct lk_scan_count *sn = arg;

	sn->sn_n++;
	(void)sn->sn_cbs->sc_share(rc, sn->sn_cbs->sc_arg);
	return 0;
}

static int
lk_scan_waiter_cb(const struct lk_waiter_info *wi, void *arg)
{
	struct lk_scan_count *sn = arg;

	sn->sn_n++;
	(void)sn->sn_cbs->sc_waiter(wi, sn->sn_cbs->sc_arg);
	return 0;
}

/* Every record of one file; returns how many. */
static size_t
lk_scan_file(const struct lk_file *f, const struct lk_scan_cbs *cbs)
{
	struct lk_scan_count sn = { cbs, 0 };

	if (cbs->sc_lock != NULL)
		(void)lk_walk_file_locks(f, lk_scan_lock_cb, &sn);
	if (cbs->sc_share != NULL) {
		(void)lk_walk_shares(f->fi_shares, lk_scan_share_cb, &sn);
		if (f->fi_recl != NULL)
			(void)lk_walk_shares(f->fi_recl->re_shares,
			    lk_scan_share_cb, &sn);
	}
	if (cbs->sc_waiter != NULL) {
		(void)lk_waiters_walk(f->fi_wq, lk_scan_waiter_cb, &sn);
		(void)lk_waiters_walk(f->fi_pend, lk_scan_waiter_cb, &sn);
	}
	return sn.sn_n;
}

/* v's bits in reverse order: in each byte, then the bytes. */
static uint64_t
lk_rev64(uint64_t v)
{
	v = ((v >> 1) & 0x5555555555555555ULL) |
	    ((v & 0x5555555555555555ULL) << 1);
	v = ((v >> 2) & 0x3333333333333333ULL) |
	    ((v & 0x3333333333333333ULL) << 2);
	v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) |
	    ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
	return __builtin_bswap64(v);
}

/*
 * Buckets one call of lk_file_scan() visits at most, per record of its
 * budget: the file hash never shrinks, so after a million files came and
 * went a piece walked a million empty buckets, 250 ms of one loop turn
 * (found by review).
 */
#define LK_SCAN_BUCKETS_PER_RECORD	16

/*
 * A walk's order of files: their hash's bits reversed, then the handle
 * (bytewise, then shorter first).  Buckets visited in reverse-bit order
 * hold increasing reversed hashes, and this order inside a bucket goes on
 * across a split: when the hash doubles, the files of a bucket go to two
 * buckets visited one after the other, those of the first all before
 * those of the second in this order.  In handle order alone they did
 * not: a walk stopped inside a bucket that split began the files of the
 * first half after the one it had reached, forgot that one, and reported
 * the second half from its start -- that file and those before it twice,
 * the one it was in the middle of again from its first record
 * (test_scan_growth; found by review).
 */
static int
lk_scan_key_cmp(uint64_t ah, const unsigned char *a, size_t al, uint64_t bh,
    const unsigned char *b, size_t bl)
{
	int c;

	if (ah != bh) {
		ah = lk_rev64(ah);
		bh = lk_rev64(bh);
		return ah < bh ? -1 : 1;
	}
	if ((c = memcmp(a, b, al < bl ? al : bl)) != 0)
		return c;
	return al < bl ? -1 : al > bl;
}

static int
lk_scan_file_cmp(const void *x, const void *y)
{
	const struct lk_file *a = *(const struct lk_file *const *)x;
	const struct lk_file *b = *(const struct lk_file *const *)y;

	return lk_scan_key_cmp(a->fi_ob.ob_hash, a->fi_fh, a->fi_fhlen,
	    b->fi_ob.ob_hash, b->fi_fh, b->fi_fhlen);
}

/*
 * The phases of a file's walk in pieces (sc_phase), in the order they
 * report.  Each resumes after the key of the last record it reported:
 * locks by (start, address) in their tree; a share list (newest first)
 * by sh_seq, skipping what came in since; the queue (oldest first) by its
 * index key (start, wa_seq), and when that waiter has left, by wa_seq from
 * the queue's head; the unconfirmed grants (newest first) by wa_gseq.
 */
enum {
	LK_SCAN_LOCKS, LK_SCAN_RLOCKS, LK_SCAN_SHARES, LK_SCAN_RSHARES,
	LK_SCAN_QUEUED, LK_SCAN_PENDING, LK_SCAN_FILE_DONE
};

/* Locks of one tree after the saved key, up to the budget. */
static size_t
lk_scan_tree(struct lk_bnode *root, struct lk_scan *sc, size_t budget,
    const struct lk_scan_cbs *cbs)
{
	struct lk_record rc;
	struct lk_lock *l;
	size_t n = 0;

	if (cbs->sc_lock == NULL)
		l = NULL;	/* nothing to report */
	else
		l = sc->sc_haskey ? lk_tree_seek(root, sc->sc_kstart,
		    sc->sc_kaddr) : lk_tree_first(root);
	for (; l != NULL && n < budget; l = lk_tree_next(root, l)) {
		lk_record_lock(&rc, l);
		(void)cbs->sc_lock(&rc, cbs->sc_arg);
		n++;
		sc->sc_haskey = true;
		sc->sc_kstart = l->lo_start;
		sc->sc_kaddr = (uintptr_t)l;
	}
	if (l == NULL) {
		sc->sc_phase++;
		sc->sc_haskey = false;
	}
	return n;
}

/*
 * Shares of one list (newest first) after the saved one, up to the
 * budget.  Those at or after the saved number were reported, or came in
 * since: skipped (a walk from the list's head, O(what it skips)).
 */
static size_t
lk_scan_shares(const struct lk_share *s, struct lk_scan *sc, size_t budget,
    const struct lk_scan_cbs *cbs)
{
	struct lk_record rc;
	size_t n = 0;

	if (cbs->sc_share == NULL)
		s = NULL;
	else if (sc->sc_haskey)
		while (s != NULL && s->sh_seq >= sc->sc_kseq)
			s = s->sh_fnext;
	for (; s != NULL && n < budget; s = s->sh_fnext) {
		lk_record_share(&rc, s);
		(void)cbs->sc_share(&rc, cbs->sc_arg);
		n++;
		sc->sc_haskey = true;
		sc->sc_kseq = s->sh_seq;
	}
	if (s == NULL) {
		sc->sc_phase++;
		sc->sc_haskey = false;
	}
	return n;
}

static void
lk_scan_waiter(const struct lk_waiter *w, const struct lk_scan_cbs *cbs)
{
	struct lk_waiter_info wi;

	lk_waiter_info_of(&wi, w);
	(void)cbs->sc_waiter(&wi, cbs->sc_arg);
}

/*
 * Queued waiters (oldest first) after the saved one, up to the budget:
 * the saved one found in the index, O(log n), and the queue followed
 * from it; when it has left the queue, the first that arrived after it,
 * from the head.
 */
static size_t
lk_scan_queued(const struct lk_file *f, struct lk_scan *sc, size_t budget,
    const struct lk_scan_cbs *cbs)
{
	const struct lk_waiter *w = f->fi_wq;
	size_t n = 0;

	if (cbs->sc_waiter == NULL)
		w = NULL;
	else if (sc->sc_haskey) {
		w = lk_wq_find(f, sc->sc_kexcl, sc->sc_kstart, sc->sc_kseq);
		if (w != NULL)
			w = w->wa_fnext;
		else
			for (w = f->fi_wq; w != NULL &&
			    w->wa_seq <= sc->sc_kseq; w = w->wa_fnext)
				;
	}
	for (; w != NULL && n < budget; w = w->wa_fnext) {
		lk_scan_waiter(w, cbs);
		n++;
		sc->sc_haskey = true;
		sc->sc_kstart = w->wa_start;
		sc->sc_kseq = w->wa_seq;
		sc->sc_kexcl = w->wa_excl;
	}
	if (w == NULL) {
		sc->sc_phase++;
		sc->sc_haskey = false;
	}
	return n;
}

/* Unconfirmed grants (newest first) after the saved one, as shares go. */
static size_t
lk_scan_pending(const struct lk_file *f, struct lk_scan *sc, size_t budget,
    const struct lk_scan_cbs *cbs)
{
	const struct lk_waiter *w = f->fi_pend;
	size_t n = 0;

	if (cbs->sc_waiter == NULL)
		w = NULL;
	else if (sc->sc_haskey)
		while (w != NULL && w->wa_gseq >= sc->sc_kseq)
			w = w->wa_fnext;
	for (; w != NULL && n < budget; w = w->wa_fnext) {
		lk_scan_waiter(w, cbs);
		n++;
		sc->sc_haskey = true;
		sc->sc_kseq = w->wa_gseq;
	}
	if (w == NULL) {
		sc->sc_phase++;
		sc->sc_haskey = false;
	}
	return n;
}

/* Go on with file f from sc's phase; returns the records reported. */
static size_t
lk_scan_in_file(const struct lk_file *f, struct lk_scan *sc, size_t budget,
    const struct lk_scan_cbs *cbs)
{
	size_t n = 0;

	if (sc->sc_phase == LK_SCAN_LOCKS)
		n += lk_scan_tree(f->fi_root, sc, budget, cbs);
	if (sc->sc_phase == LK_SCAN_RLOCKS && n < budget)
		n += lk_scan_tree(f->fi_recl == NULL ? NULL :
		    f->fi_recl->re_root, sc, budget - n, cbs);
	if (sc->sc_phase == LK_SCAN_SHARES && n < budget)
		n += lk_scan_shares(f->fi_shares, sc, budget - n, cbs);
	if (sc->sc_phase == LK_SCAN_RSHARES && n < budget)
		n += lk_scan_shares(f->fi_recl == NULL ? NULL :
		    f->fi_recl->re_shares, sc, budget - n, cbs);
	if (sc->sc_phase == LK_SCAN_QUEUED && n < budget)
		n += lk_scan_queued(f, sc, budget - n, cbs);
	if (sc->sc_phase == LK_SCAN_PENDING && n < budget)
		n += lk_scan_pending(f, sc, budget - n, cbs);
	return n;
}

bool
lk_file_scan(const struct lk_table *t, struct lk_scan *sc, size_t budget,
    const struct lk_scan_cbs *cbs, size_t *reported)
{
	const struct lk_hash *h = &t->t_files;
	/* For its allocator only: the walk changes nothing in the table. */
	struct lk_table *at = (struct lk_table *)(uintptr_t)t;
	const struct lk_file *fv[64], **files;
	const struct lk_obj *ob;
	uint64_t m = h->h_mask;
	size_t n = 0, nf, cap, i, nb = 0;
	bool filter, stopped = false;
	int c;

	if (budget == 0)
		budget = 1;
	while (!sc->sc_done && n < budget &&
	    nb++ < budget * LK_SCAN_BUCKETS_PER_RECORD) {
		filter = sc->sc_inbucket &&
		    (sc->sc_cursor & sc->sc_bmask) == sc->sc_bbits;
		/* The bucket's files, in handle order. */
		nf = 0;
		for (ob = h->h_tab[sc->sc_cursor & m]; ob != NULL;
		    ob = ob->ob_next)
			nf++;
		files = fv;
		cap = sizeof(fv) / sizeof(fv[0]);
		if (nf > cap && (files = lk_alloc(at,
		    nf * sizeof(*files))) == NULL)
			break;	/* try again at the next call */
		nf = 0;
		for (ob = h->h_tab[sc->sc_cursor & m]; ob != NULL;
		    ob = ob->ob_next)
			if (ob->ob_refs > 0)
				files[nf++] = (const struct lk_file *)ob;
		qsort(files, nf, sizeof(*files), lk_scan_file_cmp);
		for (i = 0; i < nf; i++) {
			const struct lk_file *f = files[i];

			c = filter ? lk_scan_key_cmp(f->fi_ob.ob_hash,
			    f->fi_fh, f->fi_fhlen, sc->sc_fhash, sc->sc_fh,
			    sc->sc_fhlen) : 1;
			if (c < 0 ||
			    (c == 0 && sc->sc_phase == LK_SCAN_FILE_DONE))
				continue;	/* reported before */
			if (n >= budget) {
				stopped = true;
				break;
			}
			if (c > 0) {		/* a file not begun */
				memcpy(sc->sc_fh, f->fi_fh, f->fi_fhlen);
				sc->sc_fhlen = f->fi_fhlen;
				sc->sc_fhash = f->fi_ob.ob_hash;
				sc->sc_phase = LK_SCAN_LOCKS;
				sc->sc_haskey = false;
			}
			sc->sc_inbucket = true;
			sc->sc_bmask = m;
			sc->sc_bbits = sc->sc_cursor & m;
			filter = true;
			n += lk_scan_in_file(f, sc, budget - n, cbs);
			if (sc->sc_phase != LK_SCAN_FILE_DONE) {
				stopped = true;	/* inside this file */
				break;
			}
		}
		if (files != fv)
			lk_free(at, (void *)files);
		if (stopped)
			break;		/* the budget ran out in this bucket */
		/* The next bucket in reverse-bit order (Redis's dictScan). */
		sc->sc_cursor |= ~m;
		sc->sc_cursor = lk_rev64(sc->sc_cursor);
		sc->sc_cursor++;
		sc->sc_cursor = lk_rev64(sc->sc_cursor);
		if (sc->sc_inbucket &&
		    (sc->sc_cursor & sc->sc_bmask) != sc->sc_bbits)
			sc->sc_inbucket = false;
		if (sc->sc_cursor == 0)
			sc->sc_done = true;
	}
	if (reported != NULL)
		*reported = n;
	return !sc->sc_done;
}

bool
lk_file_records_scan(const struct lk_table *t, const void *fh, size_t fhlen,
    struct lk_scan *sc, size_t budget, const struct lk_scan_cbs *cbs,
    size_t *reported)
{
	const struct lk_file *f;
	size_t n = 0;

	if (!sc->sc_done) {
		f = lk_file_find((struct lk_table *)(uintptr_t)t, fh, fhlen);
		if (f == NULL || f->fi_ob.ob_refs == 0)
			sc->sc_done = true;	/* gone meanwhile: nothing more */
		else {
			n = lk_scan_in_file(f, sc, budget == 0 ? 1 : budget,
			    cbs);
			sc->sc_done = sc->sc_phase == LK_SCAN_FILE_DONE;
		}
	}
	if (reported != NULL)
		*reported = n;
	return !sc->sc_done;
}

enum lk_status
lk_file_records(const struct lk_table *t, const void *fh, size_t fhlen,
    const struct lk_scan_cbs *cbs)
{
	const struct lk_file *f;

	/* lk_file_find() only looks; it takes the table non-const. */
	f = lk_file_find((struct lk_table *)(uintptr_t)t, fh, fhlen);
	if (f == NULL || f->fi_ob.ob_refs == 0)
		return LK_NOTFOUND;
	(void)lk_scan_file(f, cbs);
	return LK_OK;
}

/* lk_table_check.  Sums of counters, indexed by what they count. */
enum {
	LK_S_LOCKS, LK_S_WAITERS, LK_S_PENDING, LK_S_SHARES, LK_S_RLOCKS,
	LK_S_RSHARES, LK_S_N
};

/* Every lock against everything overlapping it in its tree. */
static int
lk_check_pair_cb(struct lk_lock *l2, void *arg)
{
	const struct lk_lock *l = arg;

	if (l2 == l)
		return 0;
	if (l2->lo_owner == l->lo_owner)
		return 1;
	return lk_conflicts(l->lo_excl, l2->lo_excl);
}

static int
lk_check_lock_cb(struct lk_lock *l, void *arg)
{
	const struct lk_file *f = arg;

	if (l->lo_file != f || l->lo_reclaim || l->lo_owner->ow_ob.ob_refs == 0)
		return 1;
	return lk_tree_overlap(f->fi_root, l->lo_start, l->lo_end,
	    lk_check_pair_cb, l);
}

/*
 * A reclaimable lock: among the reclaimable ones as a live lock among the
 * live ones, and no live lock of its owner overlapping it.
 */
static int
lk_check_rlock_cb(struct lk_lock *l, void *arg)
{
	struct lk_file *f = arg;
	struct lk_range r = { l->lo_start, l->lo_end };

	if (l->lo_file != f || !l->lo_reclaim ||
	    l->lo_owner->ow_ob.ob_refs == 0 || l->lo_owner->ow_recl == NULL ||
	    lk_held_own(f, l->lo_owner, &r))
		return 1;
	return lk_tree_overlap(f->fi_recl->re_root, l->lo_start, l->lo_end,
	    lk_check_pair_cb, l);
}

/*
 * Queued waiter w of f not grantable (held, FIFO or its owner's
 * unconfirmed grant; but see GRANT BUDGET), nor meeting a reclaimable
 * lock.  Out of memory counts as a failure, as it always did.
 */
static bool
lk_check_waiter(struct lk_table *t, struct lk_file *f,
    const struct lk_waiter *w)
{
	struct lk_range r = { w->wa_start, w->wa_end };
	struct lk_waiter *q;

	if (lk_own_collect(t, w->wa_owner, f, &r) != LK_OK)
		return false;
	if (!f->fi_deferred &&
	    lk_held_conflict(f, w->wa_owner, &r, w->wa_excl) == NULL) {
		if (lk_queued_conflict(t, f, w->wa_owner, &r, w->wa_excl, w,
		    &q) != LK_OK)
			return false;
		if (q == NULL && lk_pending_count(w->wa_owner, f, &r) == 0)
			return false;
	}
	return lk_recl_find(f, w->wa_owner, &r, w->wa_excl, LK_RQ_GRACE) ==
	    NULL;
}

/*
 * Queue well formed, counts right, and no queued waiter grantable (but on
 * a file with grants pending: GRANT BUDGET), nor meeting a reclaimable
 * lock (see GRACE).  Uses the table's scratch vector, hence the non-const
 * table.
 */
static bool
lk_check_queue(struct lk_table *t, struct lk_file *f)
{
	struct lk_waiter *w, *prev = NULL;
	size_t n = 0, np = 0;

	for (w = f->fi_wq; w != NULL; prev = w, w = w->wa_fnext, n++)
		if (w->wa_granted || w->wa_file != f || w->wa_fprev != prev ||
		    !lk_check_waiter(t, f, w))
			return false;
	if (f->fi_wqtail != prev || n != f->fi_nwaiters || !lk_wq_check(f))
		return false;
	/* Newest grant first (a walk in pieces resumes by wa_gseq). */
	for (prev = NULL, w = f->fi_pend; w != NULL; prev = w,
	    w = w->wa_fnext, np++)
		if (!w->wa_granted || w->wa_file != f ||
		    (prev != NULL && w->wa_gseq >= prev->wa_gseq))
			return false;
	return np == f->fi_npending;
}

/*
 * A share list of f of one kind: well formed, newest first (by sh_seq: a
 * walk in pieces resumes by it), one reservation per owner, no two
 * conflicting; and (reclaimable list) no owner with a live reservation on
 * f too.  *n gets the length.
 */
static bool
lk_check_share_list(const struct lk_file *f, const struct lk_share *s,
    bool reclaim, size_t *n)
{
	const struct lk_share *s2, *prev = NULL;

	for (*n = 0; s != NULL; prev = s, s = s->sh_fnext, (*n)++) {
		if (s->sh_file != f || s->sh_reclaim != reclaim ||
		    s->sh_fprev != prev || s->sh_owner->ow_ob.ob_refs == 0 ||
		    (prev != NULL && s->sh_seq >= prev->sh_seq) ||
		    (reclaim && (s->sh_owner->ow_recl == NULL ||
		    lk_share_of(s->sh_owner->ow_shares, s->sh_owner,
		    f) != NULL)))
			return false;
		for (s2 = s->sh_fnext; s2 != NULL; s2 = s2->sh_fnext)
			if (s2->sh_owner == s->sh_owner ||
			    lk_share_conflicts(s2, s->sh_access, s->sh_deny))
				return false;
	}
	return true;
}

/* f's reclaimable records; a fi_recl is never empty. */
static bool
lk_check_file_recl(struct lk_file *f, size_t sum[LK_S_N])
{
	const struct lk_recl *re = f->fi_recl;
	size_t n, ns;

	if (re == NULL)
		return true;
	if (re->re_locks != NULL || re->re_nlocks + re->re_nshares == 0 ||
	    !lk_tree_check(re->re_root, &n) || n != re->re_nlocks ||
	    lk_tree_walk(re->re_root, lk_check_rlock_cb, f) != 0 ||
	    !lk_check_share_list(f, re->re_shares, true, &ns) ||
	    ns != re->re_nshares)
		return false;
	sum[LK_S_RLOCKS] += re->re_nlocks;
	sum[LK_S_RSHARES] += re->re_nshares;
	return true;
}

static bool
lk_check_file(struct lk_table *t, struct lk_file *f, size_t sum[LK_S_N])
{
	size_t n, ns, nr = 0;

	if (f->fi_recl != NULL)
		nr = f->fi_recl->re_nlocks + f->fi_recl->re_nshares;
	if (!lk_tree_check(f->fi_root, &n) || n != f->fi_nlocks ||
	    f->fi_ob.ob_refs != f->fi_nlocks + f->fi_nwaiters +
	    f->fi_npending + f->fi_nshares + nr + f->fi_deferred ||
	    lk_tree_walk(f->fi_root, lk_check_lock_cb, f) != 0 ||
	    !lk_check_queue(t, f) ||
	    !lk_check_share_list(f, f->fi_shares, false, &ns) ||
	    ns != f->fi_nshares || !lk_check_file_recl(f, sum))
		return false;
	sum[LK_S_LOCKS] += f->fi_nlocks;
	sum[LK_S_WAITERS] += f->fi_nwaiters;
	sum[LK_S_PENDING] += f->fi_npending;
	sum[LK_S_SHARES] += f->fi_nshares;
	return true;
}

/* Length of an owner's lock list, if every lock is o's and of its kind. */
static size_t
lk_check_owner_locks(const struct lk_owner *o, const struct lk_lock *l,
    bool reclaim)
{
	size_t n = 0;

	for (; l != NULL; l = l->lo_onext)
		n += l->lo_owner == o && l->lo_reclaim == reclaim ? 1 : 1000000;
	return n;
}

static size_t
lk_check_owner_shares(const struct lk_owner *o, const struct lk_share *s,
    bool reclaim)
{
	size_t n = 0;

	for (; s != NULL; s = s->sh_onext)
		n += s->sh_owner == o && s->sh_reclaim == reclaim ? 1 : 1000000;
	return n;
}

static bool
lk_check_owner(const struct lk_owner *o, size_t sum[LK_S_N])
{
	const struct lk_recl *re = o->ow_recl;
	const struct lk_waiter *w;
	size_t nl, nw = 0, np = 0, ns, nrl = 0, nrs = 0;

	nl = lk_check_owner_locks(o, o->ow_locks, false);
	for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
		w->wa_granted ? np++ : nw++;
	ns = lk_check_owner_shares(o, o->ow_shares, false);
	if (re != NULL) {
		nrl = lk_check_owner_locks(o, re->re_locks, true);
		nrs = lk_check_owner_shares(o, re->re_shares, true);
		if (re->re_root != NULL || nrl != re->re_nlocks ||
		    nrs != re->re_nshares || nrl + nrs == 0)
			return false;
	}
	if (nl != o->ow_nlocks || nw != o->ow_nwaiters ||
	    np != o->ow_npending || ns != o->ow_nshares ||
	    o->ow_ob.ob_refs != nl + nw + np + ns + nrl + nrs)
		return false;
	sum[LK_S_LOCKS] += nl;
	sum[LK_S_WAITERS] += nw;
	sum[LK_S_PENDING] += np;
	sum[LK_S_SHARES] += ns;
	sum[LK_S_RLOCKS] += nrl;
	sum[LK_S_RSHARES] += nrs;
	return true;
}

/* The host's counters, into sum[]. */
static void
lk_host_sums(const struct lk_host *ho, size_t sum[LK_S_N])
{
	sum[LK_S_LOCKS] += ho->ho_nlocks;
	sum[LK_S_WAITERS] += ho->ho_nwaiters;
	sum[LK_S_PENDING] += ho->ho_npending;
	sum[LK_S_SHARES] += ho->ho_nshares;
	sum[LK_S_RLOCKS] += ho->ho_nrlocks;
	sum[LK_S_RSHARES] += ho->ho_nrshares;
}

static bool
lk_check_host(const struct lk_host *ho)
{
	size_t sum[LK_S_N] = { 0 }, own[LK_S_N] = { 0 }, live = 0;
	const struct lk_owner *o;

	for (o = ho->ho_owners; o != NULL; o = o->ow_hnext) {
		if (o->ow_host != ho || !lk_check_owner(o, sum))
			return false;
		live += o->ow_ob.ob_refs != 0;
	}
	lk_host_sums(ho, own);
	return live == ho->ho_nowners && live == ho->ho_ob.ob_refs &&
	    memcmp(sum, own, sizeof(sum)) == 0;
}

/*
 * A kept collection of an owner's locks on a file (lk_own_all()) holds
 * exactly its live locks there, in start order.
 */
static bool
lk_check_ownc(const struct lk_ownc *c)
{
	const struct lk_lock *const *v = c->oc_v.v_data, *l;
	size_t i, n = 0;

	if (c->oc_o == NULL)
		return true;
	for (i = 0; i < c->oc_v.v_len; i++)
		if (v[i]->lo_owner != c->oc_o || v[i]->lo_file != c->oc_f ||
		    v[i]->lo_reclaim ||
		    (i > 0 && v[i - 1]->lo_end >= v[i]->lo_start))
			return false;
	for (l = c->oc_o->ow_locks; l != NULL; l = l->lo_onext)
		n += l->lo_file == c->oc_f;
	return n == c->oc_v.v_len;
}

enum lk_status
lk_table_check(const struct lk_table *ct)
{
	/* Only the scratch vectors t_tmp, t_ownc (and counters) are written. */
	struct lk_table *t = (struct lk_table *)(uintptr_t)ct;
	size_t fsum[LK_S_N] = { 0 }, hsum[LK_S_N] = { 0 }, tsum[LK_S_N], i;
	size_t ndef = 0, n;
	struct lk_obj *ob;
	struct lk_file *f;

	LK_FOREACH_OBJ(&t->t_files, ob, i) {
		if (!lk_check_file(t, (struct lk_file *)ob, fsum))
			return LK_INVAL;
		ndef += ((struct lk_file *)ob)->fi_deferred;
	}
	LK_FOREACH_OBJ(&t->t_hosts, ob, i) {
		if (!lk_check_host((const struct lk_host *)ob))
			return LK_INVAL;
		lk_host_sums((const struct lk_host *)ob, hsum);
	}
	tsum[LK_S_LOCKS] = t->t_nlocks;
	tsum[LK_S_WAITERS] = t->t_nwaiters;
	tsum[LK_S_PENDING] = t->t_npending;
	tsum[LK_S_SHARES] = t->t_nshares;
	tsum[LK_S_RLOCKS] = t->t_nrlocks;
	tsum[LK_S_RSHARES] = t->t_nrshares;
	if (memcmp(fsum, tsum, sizeof(tsum)) != 0 ||
	    memcmp(hsum, tsum, sizeof(tsum)) != 0 ||
	    (!t->t_grace && t->t_nrlocks + t->t_nrshares != 0))
		return LK_INVAL;
	/* t_defer: exactly the files marked deferred, t_defertail last. */
	n = 0;
	for (f = t->t_defer; f != NULL; f = f->fi_dnext)
		if (!f->fi_deferred || f->fi_dlo > f->fi_dhi || ++n > ndef ||
		    (f->fi_dnext == NULL && f != t->t_defertail))
			return LK_INVAL;
	if (n != ndef)
		return LK_INVAL;
	/* Every lock node is in a tree or a spare. */
	if (!lk_slab_check(&t->t_lslab) || t->t_lslab.sl_nobj !=
	    t->t_nlocks + t->t_nrlocks + t->t_nspare)
		return LK_INVAL;
	for (i = 0; i < LK_OWNC; i++)
		if (!lk_check_ownc(&t->t_ownc[i]))
			return LK_INVAL;
	return LK_OK;
}
