/*
 * release.c - releasing everything of a host or of a file (reclaimable
 * records included), and loading stored records at startup.
 */
#include "lockcore.h"

#include <stdlib.h>

#include "lk_impl.h"

/*
 * Remember f for a grant pass at the end (t_touched reserved), and that
 * [s, e] of it changed: the pass looks only within the span of what
 * changed on the file, so a host's release of one byte of a file with
 * 100,000 waiters elsewhere does not sweep them all.
 */
void
lk_file_touch(struct lk_table *t, struct lk_file *f, uint64_t s, uint64_t e)
{
	if (f->fi_mark == t->t_mark) {
		if (s < f->fi_tlo)
			f->fi_tlo = s;
		if (e > f->fi_thi)
			f->fi_thi = e;
		return;
	}
	f->fi_mark = t->t_mark;
	f->fi_tlo = s;
	f->fi_thi = e;
	((struct lk_file **)t->t_touched.v_data)[t->t_touched.v_len++] = f;
}

/* A grant pass on every touched file that has waiters. */
void
lk_touched_grant(struct lk_table *t, uint64_t now)
{
	struct lk_file **touched = t->t_touched.v_data;
	struct lk_range r;
	size_t i;

	for (i = 0; i < t->t_touched.v_len; i++)
		if (touched[i]->fi_nwaiters > 0) {
			r.r_start = touched[i]->fi_tlo;
			r.r_end = touched[i]->fi_thi;
			lk_grant_pass(t, touched[i], now, &r);
		}
}

/*
 * lk_host_release_some(): the host's waiters and unconfirmed grants all at
 * once, then up to `max' of its locks, shares and reclaimable records.
 */
static enum lk_status
lk_host_release_some_do(struct lk_table *t, uint64_t id, uint64_t now,
    size_t max, size_t *leftp)
{
	struct lk_owner *o;
	struct lk_waiter *w;
	struct lk_host *ho;
	size_t n = 0, recs;

	*leftp = 0;
	if ((ho = lk_host_find(t, id)) == NULL)
		return LK_OK;
	recs = ho->ho_nlocks + ho->ho_nshares + ho->ho_nrlocks +
	    ho->ho_nrshares;
	if (max > recs)
		max = recs;
	t->t_touched.v_len = 0;
	if (!lk_reserve(t, 0, max) ||
	    !lk_vec_reserve(t, &t->t_dropped, sizeof(void *),
	    ho->ho_nwaiters + ho->ho_npending) ||
	    !lk_vec_reserve(t, &t->t_touched, sizeof(struct lk_file *),
	    max + ho->ho_nwaiters))
		return LK_NOMEM;
	t->t_mark++;
	/*
	 * Waiters first, every one: granted a lock the pieces freed, one
	 * would come back to the host that is going.
	 */
	for (o = ho->ho_owners; o != NULL && ho->ho_nwaiters +
	    ho->ho_npending > 0; o = o->ow_hnext)
		while ((w = o->ow_waiters) != NULL) {
			if (!w->wa_granted)
				lk_file_touch(t, w->wa_file, w->wa_start,
				    w->wa_end);
			lk_drop_udata(t, w->wa_udata);
			lk_waiter_free(t, w);
		}
	for (o = ho->ho_owners; o != NULL && n < max; o = o->ow_hnext) {
		for (; o->ow_locks != NULL && n < max; n++) {
			lk_file_touch(t, o->ow_locks->lo_file,
			    o->ow_locks->lo_start, o->ow_locks->lo_end);
			lk_lock_remove(t, o->ow_locks);
		}
		for (; o->ow_shares != NULL && n < max; n++)
			lk_share_remove(t, o->ow_shares);
		/* No waiter waits for a reclaimable record: nothing to touch. */
		for (; o->ow_recl != NULL && n < max; n++) {
			if (o->ow_recl->re_locks != NULL)
				lk_lock_remove(t, o->ow_recl->re_locks);
			else
				lk_share_remove(t, o->ow_recl->re_shares);
		}
	}
	*leftp = recs - n;
	lk_touched_grant(t, now);
	return LK_OK;
}

enum lk_status
lk_host_release_some(struct lk_table *t, uint64_t host, uint64_t now,
    size_t max, size_t *leftp, const struct lk_result **resp)
{
	size_t left;
	enum lk_status st;

	lk_begin(t);
	st = lk_host_release_some_do(t, host, now, max, &left);
	if (leftp != NULL)
		*leftp = st == LK_OK ? left : 0;
	return lk_finish_at(t, st, now, resp);
}

/* All of it in one call: a piece with no limit. */
enum lk_status
lk_host_release(struct lk_table *t, uint64_t host, uint64_t now,
    const struct lk_result **resp)
{
	return lk_host_release_some(t, host, now, SIZE_MAX, NULL, resp);
}

static enum lk_status
lk_file_release_do(struct lk_table *t, const void *fh, size_t fhlen)
{
	struct lk_waiter *w;
	struct lk_file *f;

	if (fh == NULL || fhlen == 0 || fhlen > LK_FH_MAX)
		return LK_INVAL;
	if ((f = lk_file_find(t, fh, fhlen)) == NULL)
		return LK_OK;
	if (!lk_reserve(t, 0, f->fi_nlocks + f->fi_nshares +
	    (f->fi_recl == NULL ? 0 :
	    f->fi_recl->re_nlocks + f->fi_recl->re_nshares)) ||
	    !lk_vec_reserve(t, &t->t_dropped, sizeof(void *),
	    f->fi_nwaiters + f->fi_npending))
		return LK_NOMEM;
	while (f->fi_root != NULL)
		lk_lock_remove(t, lk_tree_first(f->fi_root));
	while ((w = f->fi_wq) != NULL || (w = f->fi_pend) != NULL) {
		lk_drop_udata(t, w->wa_udata);
		lk_waiter_free(t, w);
	}
	while (f->fi_shares != NULL)
		lk_share_remove(t, f->fi_shares);
	lk_file_recl_clear(t, f);
	return LK_OK;
}

enum lk_status
lk_file_release(struct lk_table *t, const void *fh, size_t fhlen,
    uint64_t now, const struct lk_result **resp)
{
	(void)now;
	lk_begin(t);
	return lk_finish(t, lk_file_release_do(t, fh, fhlen), resp);
}

static bool
lk_record_ok(const struct lk_record *rc)
{
	return rc->rc_fh != NULL && rc->rc_fhlen > 0 &&
	    rc->rc_fhlen <= LK_FH_MAX && rc->rc_ohlen <= LK_OH_MAX &&
	    (rc->rc_oh != NULL || rc->rc_ohlen == 0) && rc->rc_reclaim <= 1;
}

/*
 * Would reclaimable lock (o, r, excl) on f meet a queued waiter: one of o
 * overlapping it, or one of another owner conflicting with it?  (Refused,
 * so that no waiter ever waits for a reclaimable record.)
 */
static bool
lk_load_meets_waiter(const struct lk_file *f, const struct lk_owner *o,
    const struct lk_range *r, bool excl)
{
	const struct lk_waiter *w;

	for (w = f->fi_wq; w != NULL; w = w->wa_fnext)
		if (lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end) &&
		    (w->wa_owner == o || lk_conflicts(excl, w->wa_excl)))
			return true;
	return false;
}

/*
 * The checks of a record against what is loaded: a live lock against the
 * live locks (lk_collect) and o's reclaimable ones (the store keys of o's
 * live and reclaimable locks must differ); a reclaimable lock against the
 * reclaimable locks, o's live locks and the queued waiters.
 */
static enum lk_status
lk_load_lock_check(struct lk_table *t, const struct lk_record *rc,
    struct lk_owner *o, struct lk_file *f, const struct lk_range *r)
{
	struct lk_lock **own, *c;
	size_t i;

	if (rc->rc_reclaim) {
		if (lk_recl_find(f, o, r, rc->rc_excl, LK_RQ_GRACE) != NULL ||
		    lk_held_own(f, o, r) ||
		    lk_load_meets_waiter(f, o, r, rc->rc_excl))
			return LK_INVAL;
		return LK_OK;
	}
	switch (lk_collect(t, o, f, r, rc->rc_excl, &c)) {
	case LK_OK:
		break;
	case LK_DENIED:
		return LK_INVAL;
	default:
		return LK_NOMEM;
	}
	own = t->t_tmp.v_data;
	for (i = 0; i < t->t_tmp.v_len; i++)
		if (lk_overlaps(own[i]->lo_start, own[i]->lo_end, r->r_start,
		    r->r_end))
			return LK_INVAL;
	return lk_recl_find(f, o, r, false, LK_RQ_OWN) != NULL ? LK_INVAL :
	    LK_OK;
}

static enum lk_status
lk_load_lock(struct lk_table *t, const struct lk_record *rc)
{
	struct lk_piece p = { { 0, 0 }, rc->rc_token, rc->rc_epoch,
	    rc->rc_excl, rc->rc_reclaim };
	struct lk_owner *o;
	struct lk_file *f;
	enum lk_status st;

	if (rc->rc_excl > 1 || rc->rc_epoch > LK_EPOCH_MAX ||
	    lk_range_make(rc->rc_start, rc->rc_len, &p.p_r))
		return LK_INVAL;
	if ((f = lk_file_get(t, rc->rc_fh, rc->rc_fhlen)) == NULL ||
	    (o = lk_owner_get(t, rc->rc_host, rc->rc_svid, false, rc->rc_oh,
	    rc->rc_ohlen)) == NULL)
		return LK_NOMEM;
	if ((st = lk_load_lock_check(t, rc, o, f, &p.p_r)) != LK_OK)
		return st;
	if (!lk_reserve(t, 1, 0))
		return LK_NOMEM;
	if (rc->rc_reclaim && (!lk_recl_get(t, &f->fi_recl) ||
	    !lk_recl_get(t, &o->ow_recl))) {
		lk_recl_put(t, &f->fi_recl);
		lk_recl_put(t, &o->ow_recl);
		return LK_NOMEM;
	}
	lk_lock_add(t, o, f, &p);
	if (rc->rc_token > t->t_token)
		t->t_token = rc->rc_token;
	return LK_OK;
}

/*
 * A share against the loaded shares of its kind, and against o's share
 * of the other kind on f (one reservation per owner and file).
 */
static bool
lk_load_share_ok(const struct lk_record *rc, struct lk_owner *o,
    struct lk_file *f)
{
	struct lk_share *s, *own;

	if (rc->rc_reclaim) {
		s = f->fi_recl == NULL ? NULL : f->fi_recl->re_shares;
		own = lk_share_of(o->ow_shares, o, f);
	} else {
		s = f->fi_shares;
		own = o->ow_recl == NULL ? NULL :
		    lk_share_of(o->ow_recl->re_shares, o, f);
	}
	if (own != NULL)
		return false;
	for (; s != NULL; s = s->sh_fnext)
		if (s->sh_owner == o ||
		    lk_share_conflicts(s, rc->rc_access, rc->rc_deny))
			return false;
	return true;
}

static enum lk_status
lk_load_share(struct lk_table *t, const struct lk_record *rc)
{
	struct lk_share *s;
	struct lk_owner *o;
	struct lk_file *f;

	if (((rc->rc_access | rc->rc_deny) & ~(LK_SHARE_R | LK_SHARE_W)) != 0 ||
	    rc->rc_epoch > LK_EPOCH_MAX)
		return LK_INVAL;
	if ((f = lk_file_get(t, rc->rc_fh, rc->rc_fhlen)) == NULL ||
	    (o = lk_owner_get(t, rc->rc_host, 0, true, rc->rc_oh,
	    rc->rc_ohlen)) == NULL)
		return LK_NOMEM;
	if (!lk_load_share_ok(rc, o, f))
		return LK_INVAL;
	if (!lk_reserve(t, 1, 0) || (s = lk_alloc(t, sizeof(*s))) == NULL)
		return LK_NOMEM;
	if (rc->rc_reclaim && (!lk_recl_get(t, &f->fi_recl) ||
	    !lk_recl_get(t, &o->ow_recl))) {
		lk_recl_put(t, &f->fi_recl);
		lk_recl_put(t, &o->ow_recl);
		lk_free(t, s);
		return LK_NOMEM;
	}
	s->sh_access = rc->rc_access;
	s->sh_deny = rc->rc_deny;
	s->sh_epoch = rc->rc_epoch;
	s->sh_reclaim = rc->rc_reclaim;
	lk_share_add(t, s, o, f);
	return LK_OK;
}

enum lk_status
lk_table_load(struct lk_table *t, const struct lk_record *recs, size_t n,
    size_t *badp)
{
	enum lk_status st = LK_OK;
	size_t i;

	lk_begin(t);
	for (i = 0; i < n; i++) {
		if (!lk_record_ok(&recs[i]))
			st = LK_INVAL;
		else if (recs[i].rc_kind == LK_REC_LOCK)
			st = lk_load_lock(t, &recs[i]);
		else if (recs[i].rc_kind == LK_REC_SHARE)
			st = lk_load_share(t, &recs[i]);
		else
			st = LK_INVAL;
		if (st != LK_OK) {
			if (badp != NULL)
				*badp = i;
			break;
		}
		if (recs[i].rc_reclaim)
			t->t_grace = true;
	}
	/* What was loaded is not a change to report. */
	lk_begin(t);
	return st;
}
