/*
 * req.c - the lock request entry points: lk_lock, lk_test, lk_unlock,
 * lk_cancel, lk_grant_confirm.  Each validates, resolves file and owner,
 * decides, and leaves the change set in the table's result.
 *
 * Order of the LOCK decision (why): a re-sent blocking request that is
 * still queued is answered BLOCKED before anything else (never queued
 * twice; a non-blocking one is decided like any other); in grace,
 * a request meeting another owner's conflicting reclaimable record is
 * answered GRACE before it can be granted or queued (so no waiter ever
 * waits for a reclaimable record), and one over the owner's own takes
 * them over but is never queued (lk_lock_new()); a range the owner
 * already holds in the mode is GRANTED before looking at the queue
 * (idempotent even while others wait); only then does an older
 * conflicting waiter of another owner stop the request (FIFO).
 *
 * A reclaim (rq_reclaim) takes its own path, lk_lock_reclaim(): never
 * queued, not held back by waiters, not limited.
 */
#include "lockcore.h"

#include "lk_impl.h"

static enum lk_status
lk_req_check(const struct lk_lockreq *req, struct lk_range *r)
{
	if (req->rq_fh == NULL || req->rq_fhlen == 0 ||
	    req->rq_fhlen > LK_FH_MAX || req->rq_ohlen > LK_OH_MAX ||
	    (req->rq_oh == NULL && req->rq_ohlen != 0))
		return LK_INVAL;
	return lk_range_make(req->rq_start, req->rq_len, r);
}

static struct lk_owner *
lk_req_owner(struct lk_table *t, const struct lk_lockreq *req)
{
	return lk_owner_find(t, req->rq_host, req->rq_svid, false, req->rq_oh,
	    req->rq_ohlen);
}

static void
lk_holder_lock(struct lk_table *t, const struct lk_lock *l)
{
	lk_record_lock(&t->t_res.rs_holder, l);
	t->t_res.rs_holder_waiting = false;
}

static void
lk_holder_waiter(struct lk_table *t, const struct lk_waiter *w)
{
	lk_record_waiter(&t->t_res.rs_holder, w);
	t->t_res.rs_holder_waiting = true;
}

/*
 * The request conflicts (holder already set): deny, refuse or queue.
 * `own': it overlaps o's reclaimable locks, so it is never queued (an
 * owner's waiter must not overlap them): LK_GRACE when blocking.
 */
static enum lk_status
lk_lock_conflict(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, const struct lk_lockreq *req, uint64_t now,
    bool own)
{
	enum lk_status st;
	long need;

	if (!req->rq_block) {
		t->t_ct.ct_denied++;
		return LK_DENIED;
	}
	if (own) {
		t->t_ct.ct_grace_denied++;
		return LK_GRACE;
	}
	st = lk_deadlock_check(t, o, f, r, req->rq_excl);
	if (st == LK_DEADLOCK)
		t->t_ct.ct_deadlocks++;
	if (st != LK_OK)
		return st;
	if (lk_take_delta(t, o, f, r, req->rq_excl, &need) != LK_OK)
		return LK_NOMEM;
	return lk_waiter_queue(t, o, f, r, req->rq_excl, req->rq_udata, now,
	    need);
}

/*
 * Cut o's reclaimable locks (collected in t_rtmp by lk_recl_collect())
 * out of r and take r (o's live locks collected in t_tmp by lk_collect();
 * `limits' as lk_take_plan()), the cut and the take reserved together
 * before either changes anything.  LK_OK with *coverp the lock now
 * covering r, or LK_NOLOCKS, LK_NOMEM (nothing changed).
 */
static enum lk_status
lk_take_over(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, bool limits, struct lk_lock **coverp)
{
	struct lk_piece rem[2];
	struct lk_plan pl;
	enum lk_status st;
	size_t nrem;

	lk_recl_cut_plan(t, r, rem, &nrem);
	if ((st = lk_take_plan(t, o, r, excl, limits, &pl)) != LK_OK)
		return st;
	if (!lk_prior_reserve(t, o, f, r) ||
	    !lk_reserve(t, nrem + pl.pl_adds, t->t_rtmp.v_len + pl.pl_removes))
		return LK_NOMEM;
	lk_recl_cut(t, o, f, rem, nrem);
	*coverp = lk_take_apply(t, o, f, r, excl, &pl);
	lk_prior_set(o, f, r, excl);
	return LK_OK;
}

/*
 * A LOCK, not a reclaim.  In grace, one over o's own reclaimable locks and
 * no other owner's (`own') is what a client asks again when it never
 * heard the answer to a LOCK granted before the restart (the reply or the
 * GRANTED callback lost in the crash), so it does not know to reclaim it:
 * decided as outside grace, but never queued (lk_lock_conflict()), and
 * when granted it takes o's reclaimable locks over as lk_lock_reclaim()
 * does, within the limits and behind the queue.
 */
static enum lk_status
lk_lock_new(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, const struct lk_lockreq *req, uint64_t now)
{
	bool excl = req->rq_excl, own = false;
	struct lk_waiter *w = NULL;
	struct lk_lock *c;
	enum lk_status st;

	if (f->fi_recl != NULL) {
		if ((c = lk_recl_find(f, o, r, excl, LK_RQ_OTHER)) != NULL) {
			lk_holder_lock(t, c);
			t->t_ct.ct_grace_denied++;
			return LK_GRACE;
		}
		own = lk_recl_find(f, o, r, excl, LK_RQ_OWN) != NULL;
	}
	switch (lk_collect(t, o, f, r, excl, &c)) {
	case LK_OK:
		break;
	case LK_DENIED:
		lk_holder_lock(t, c);
		return lk_lock_conflict(t, o, f, r, req, now, own);
	default:
		return LK_NOMEM;
	}
	if (lk_covered(t, r, excl) == NULL &&
	    lk_queued_conflict(t, f, o, r, excl, NULL, &w) != LK_OK)
		return LK_NOMEM;
	if (w != NULL) {
		lk_holder_waiter(t, w);
		return lk_lock_conflict(t, o, f, r, req, now, own);
	}
	if (own) {
		if (lk_recl_collect(t, o, f, r) != LK_OK)
			return LK_NOMEM;
		st = lk_take_over(t, o, f, r, excl, true, &c);
	} else
		st = lk_take(t, o, f, r, excl, true, &c);
	if (st != LK_OK)
		return st;
	t->t_res.rs_token = c->lo_token;
	t->t_ct.ct_granted++;
	/*
	 * A downgrade releases.  A new lock frees none of o's own queued
	 * requests (FIFO): an older waiter that conflicts with it, it went
	 * past, so o held a lock that waiter waits for already
	 * (lk_waiter_blocks()).  Not so a reclaim or a waiter's grant.
	 */
	if (f->fi_nwaiters > 0 && !excl)
		lk_grant_pass(t, f, now, r);
	return LK_GRANTED;
}

/*
 * The hull of the bytes of r that o does not hold in a mode at least as
 * strong as excl, from o's locks in t_tmp (lk_collect(): in order of
 * start, overlapping or touching r), into *h; false when there are none
 * (o held all of r so: a reclaim sent again).  Only there does taking r
 * give other owners' requests an edge into o.
 */
static bool
lk_gain_hull(const struct lk_table *t, const struct lk_range *r, bool excl,
    struct lk_range *h)
{
	struct lk_lock *const *v = t->t_tmp.v_data;
	uint64_t cur = r->r_start;
	size_t i;

	h->r_start = UINT64_MAX;	/* empty */
	h->r_end = 0;
	for (i = 0; i < t->t_tmp.v_len; i++) {
		const struct lk_lock *l = v[i];

		if (l->lo_end < r->r_start || l->lo_start > r->r_end)
			continue;
		if (l->lo_start > cur)
			lk_hull_add(h, cur, l->lo_start - 1);
		if (excl && !l->lo_excl)
			lk_hull_add(h, l->lo_start > r->r_start ?
			    l->lo_start : r->r_start, l->lo_end < r->r_end ?
			    l->lo_end : r->r_end);
		if (l->lo_end >= r->r_end)
			return h->r_start <= h->r_end;
		cur = l->lo_end + 1;
	}
	lk_hull_add(h, cur, r->r_end);
	return true;
}

/*
 * A reclaim in grace (see GRACE AND RECLAIM): the live check, the
 * cf_reclaim_check check, then o's reclaimable locks are cut out of r and
 * r is taken.  The cut and the take are reserved together, before either
 * changes anything.
 */
static enum lk_status
lk_lock_reclaim(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, const struct lk_lockreq *req, uint64_t now)
{
	bool excl = req->rq_excl, freed = false, gain;
	struct lk_waiter *w;
	struct lk_range d, g;
	struct lk_lock *c;
	enum lk_status st;

	switch (lk_collect(t, o, f, r, excl, &c)) {
	case LK_OK:
		break;
	case LK_DENIED:
		lk_holder_lock(t, c);
		t->t_ct.ct_reclaims_denied++;
		return LK_DENIED;
	default:
		return LK_NOMEM;
	}
	gain = lk_gain_hull(t, r, excl, &g);
	if (lk_recl_collect(t, o, f, r) != LK_OK)
		return LK_NOMEM;
	if ((st = lk_recl_lock_check(t, o, f, r, excl)) != LK_OK) {
		t->t_ct.ct_reclaims_denied++;
		return st;
	}
	if ((st = lk_take_over(t, o, f, r, excl, false, &c)) != LK_OK)
		return st;
	/*
	 * Not held back: others' requests there may wait for o now -- only
	 * where o gained bytes or strength (a reclaim sent again in a weaker
	 * mode gains none; noted whole, another owner's request, searched
	 * first, was dropped for a cycle that the downgrade closed).
	 */
	if (gain)
		lk_deadlock_note_into(t, o, f, &g, excl);
	t->t_res.rs_token = c->lo_token;
	t->t_ct.ct_reclaims++;
	/*
	 * A queued request of o for exactly this is answered now (at most
	 * one request per owner, file, range and mode; t_dropped reserved).
	 */
	if ((w = lk_waiter_match(o, f, r, excl, false)) != NULL) {
		lk_drop_udata(t, w->wa_udata);
		lk_waiter_free(t, w);
		freed = true;
	}
	if (f->fi_nwaiters > 0 && (!excl || o->ow_nwaiters > 0 || freed)) {
		lk_gain_span(t, f, o, r, excl, &d);
		lk_grant_pass(t, f, now, &d);
	}
	return LK_GRANTED;
}

/*
 * A reclaim outside grace (or while it closes): LK_NOGRACE, unless the
 * owner holds that lock already, live -- one of its mode covering the
 * range: a reclaim sent again after its reply was lost, when grace ended
 * with it (it was the last record), or one a client sends for what it
 * holds when told of a restart that kept its locks (SM_SIMU_CRASH).
 * Refused, a Linux client takes the lock for lost although nlmd holds it
 * for it.  Then LK_GRANTED, and nothing changes.
 */
static enum lk_status
lk_lock_late(struct lk_table *t, const struct lk_lockreq *req,
    const struct lk_range *r)
{
	struct lk_file *f;
	struct lk_owner *o;
	struct lk_lock *c;

	if ((f = lk_file_find(t, req->rq_fh, req->rq_fhlen)) == NULL ||
	    (o = lk_owner_find(t, req->rq_host, req->rq_svid, false,
	    req->rq_oh, req->rq_ohlen)) == NULL)
		return LK_NOGRACE;
	if (lk_own_collect(t, o, f, r) != LK_OK)
		return LK_NOMEM;
	if ((c = lk_covered(t, r, req->rq_excl)) == NULL)
		return LK_NOGRACE;
	t->t_res.rs_token = c->lo_token;
	t->t_ct.ct_reclaims++;
	return LK_GRANTED;
}

static enum lk_status
lk_lock_do(struct lk_table *t, const struct lk_lockreq *req, uint64_t now)
{
	struct lk_range r;
	struct lk_file *f;
	struct lk_owner *o;
	struct lk_waiter *w;
	enum lk_status st;

	if ((st = lk_req_check(req, &r)) != LK_OK)
		return st;
	if (req->rq_reclaim && (!t->t_grace || t->t_grace_closed))
		return lk_lock_late(t, req, &r);
	/* Two drops at most: a queued and (reclaim) a granted request. */
	if ((f = lk_file_get(t, req->rq_fh, req->rq_fhlen)) == NULL ||
	    (o = lk_owner_get(t, req->rq_host, req->rq_svid, false,
	    req->rq_oh, req->rq_ohlen)) == NULL ||
	    !lk_vec_reserve(t, &t->t_dropped, sizeof(void *), 2))
		return LK_NOMEM;
	if (req->rq_reclaim)
		st = lk_lock_reclaim(t, o, f, &r, req, now);
	else if (req->rq_block &&
	    (w = lk_waiter_match(o, f, &r, req->rq_excl, false)) != NULL) {
		/*
		 * Re-sent while queued: keep the newest udata.  Only a
		 * blocking request is one: a non-blocking one for the same
		 * range (its udata NULL) is decided afresh below, denied
		 * while the conflict lasts, and leaves the queued request
		 * and its udata as they are (a grant would otherwise find
		 * no udata to call back).
		 */
		lk_drop_udata(t, w->wa_udata);
		w->wa_udata = req->rq_udata;
		return LK_BLOCKED;
	} else
		st = lk_lock_new(t, o, f, &r, req, now);
	if ((req->rq_block || req->rq_reclaim) &&
	    (st == LK_GRANTED || st == LK_BLOCKED) &&
	    (w = lk_waiter_match(o, f, &r, req->rq_excl, true)) != NULL) {
		/*
		 * Re-sent after the grant: the client has its answer now (or,
		 * if the owner changed the range since and must wait again,
		 * the new waiter supersedes the old grant).  Either way at
		 * most one request per owner, file, range and mode exists.
		 * Only a blocking request (or a reclaim, which says the
		 * client holds the range) is one: a non-blocking LOCK of the
		 * range (another thread of the process: the same owner) is
		 * granted over the grant and leaves it, callback and all --
		 * ended, its callback was cancelled and the thread blocked
		 * in F_SETLKW waited for the client's next poll (30 s).
		 */
		lk_drop_udata(t, w->wa_udata);
		lk_waiter_free(t, w);
		/* o's waiters held back by that grant (lk_grant_sweep()). */
		if (f->fi_nwaiters > 0)
			lk_grant_pass(t, f, now, &r);
	}
	return st;
}

enum lk_status
lk_lock(struct lk_table *t, const struct lk_lockreq *req, uint64_t now,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_lock_do(t, req, now), now, resp);
}

static enum lk_status
lk_test_do(struct lk_table *t, const struct lk_lockreq *req)
{
	struct lk_range r;
	struct lk_file *f;
	struct lk_owner *o;
	struct lk_waiter *w;
	struct lk_lock *c;
	enum lk_status st;

	if ((st = lk_req_check(req, &r)) != LK_OK)
		return st;
	if ((f = lk_file_find(t, req->rq_fh, req->rq_fhlen)) == NULL)
		return LK_GRANTED;
	o = lk_req_owner(t, req);
	st = lk_collect(t, o, f, &r, req->rq_excl, &c);
	if (st == LK_DENIED) {
		lk_holder_lock(t, c);
		return LK_DENIED;
	}
	if (st != LK_OK)
		return st;
	w = NULL;
	if (lk_covered(t, &r, req->rq_excl) == NULL &&
	    lk_queued_conflict(t, f, o, &r, req->rq_excl, NULL, &w) != LK_OK)
		return LK_NOMEM;
	if (w != NULL) {
		lk_holder_waiter(t, w);
		return LK_DENIED;
	}
	if ((c = lk_recl_find(f, o, &r, req->rq_excl, LK_RQ_OTHER)) != NULL) {
		lk_holder_lock(t, c);
		return LK_DENIED;
	}
	return LK_GRANTED;
}

enum lk_status
lk_test(struct lk_table *t, const struct lk_lockreq *req,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish(t, lk_test_do(t, req), resp);
}

/* Which of the owner's queued requests an unlock ends. */
enum lk_unlock_queued {
	LK_UQ_NONE,		/* none (lk_unlock) */
	LK_UQ_WITHIN,		/* those inside the range (lk_unlock_cancel) */
	LK_UQ_OVERLAP		/* those overlapping it (lk_release_range) */
};

/*
 * Unlock r for o on f, end overlapping unconfirmed grants (and, as `q'
 * says, o's queued requests), grant waiters.  Every drop is reserved
 * first: after lk_free_range() nothing may fail.
 */
static enum lk_status
lk_unlock_range(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, uint64_t now, enum lk_unlock_queued q)
{
	size_t nq = q == LK_UQ_NONE ? 0 :
	    lk_queued_count(o, f, r, q == LK_UQ_OVERLAP);
	struct lk_range d = *r;
	enum lk_status st;

	if (!lk_vec_reserve(t, &t->t_dropped, sizeof(void *),
	    lk_pending_count(o, f, r) + nq))
		return LK_NOMEM;
	if ((st = lk_free_range(t, o, f, r, true)) != LK_OK)
		return st;
	lk_pending_end_overlap(t, o, f, r, &d);
	if (nq > 0)
		lk_queued_end(t, o, f, r, q == LK_UQ_OVERLAP);
	/*
	 * Only r changed, and the ranges of the grants that ended (o's
	 * waiters held back by them lie there), unless queued requests
	 * went: they may reach past r, and held younger ones back wherever
	 * they did (FIFO).
	 */
	if (f->fi_nwaiters > 0)
		lk_grant_pass(t, f, now, nq > 0 ? NULL : &d);
	return LK_OK;
}

static enum lk_status
lk_unlock_do(struct lk_table *t, const struct lk_lockreq *req, uint64_t now,
    enum lk_unlock_queued q)
{
	struct lk_range r;
	struct lk_file *f;
	struct lk_owner *o;
	enum lk_status st;

	if ((st = lk_req_check(req, &r)) != LK_OK)
		return st;
	if ((f = lk_file_find(t, req->rq_fh, req->rq_fhlen)) == NULL ||
	    (o = lk_req_owner(t, req)) == NULL)
		return LK_OK;
	if (q == LK_UQ_OVERLAP && req->rq_before != 0) {
		struct lk_lock **v;
		size_t i;

		if (lk_own_in(t, o, f->fi_root, r.r_start, r.r_end,
		    &t->t_tmp) != LK_OK)
			return LK_NOMEM;
		v = t->t_tmp.v_data;
		for (i = 0; i < t->t_tmp.v_len; i++)
			if (v[i]->lo_token > req->rq_before)
				return LK_OK;
	}
	return lk_unlock_range(t, o, f, &r, now, q);
}

enum lk_status
lk_unlock(struct lk_table *t, const struct lk_lockreq *req, uint64_t now,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_unlock_do(t, req, now, LK_UQ_NONE), now,
	    resp);
}

enum lk_status
lk_unlock_cancel(struct lk_table *t, const struct lk_lockreq *req,
    uint64_t now, const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_unlock_do(t, req, now, LK_UQ_WITHIN), now,
	    resp);
}

enum lk_status
lk_release_range(struct lk_table *t, const struct lk_lockreq *req,
    uint64_t now, const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_unlock_do(t, req, now, LK_UQ_OVERLAP), now,
	    resp);
}

static enum lk_status
lk_cancel_do(struct lk_table *t, const struct lk_lockreq *req, uint64_t now)
{
	struct lk_range r;
	struct lk_file *f;
	struct lk_owner *o;
	struct lk_waiter *w;
	enum lk_status st;

	if ((st = lk_req_check(req, &r)) != LK_OK)
		return st;
	if ((f = lk_file_find(t, req->rq_fh, req->rq_fhlen)) == NULL ||
	    (o = lk_req_owner(t, req)) == NULL)
		return LK_NOTFOUND;
	if ((w = lk_waiter_match(o, f, &r, req->rq_excl, false)) != NULL) {
		if (!lk_vec_reserve(t, &t->t_dropped, sizeof(void *), 1))
			return LK_NOMEM;
		lk_deadlock_note_leave(t, w);
		lk_drop_udata(t, w->wa_udata);
		lk_waiter_free(t, w);
		/* Younger waiters may have queued behind this one. */
		if (f->fi_nwaiters > 0)
			lk_grant_pass(t, f, now, &r);
		return LK_OK;
	}
	if ((w = lk_waiter_match(o, f, &r, req->rq_excl, true)) != NULL)
		return lk_undo_grant(t, o, f, w, now);
	return LK_NOTFOUND;
}

enum lk_status
lk_cancel(struct lk_table *t, const struct lk_lockreq *req, uint64_t now,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_cancel_do(t, req, now), now, resp);
}

/* The unconfirmed grant req names: LK_OK with it in *wp, or why not. */
static enum lk_status
lk_grant_find(struct lk_table *t, const struct lk_lockreq *req,
    struct lk_owner **op, struct lk_file **fp, struct lk_waiter **wp)
{
	struct lk_range r;
	enum lk_status st;

	if ((st = lk_req_check(req, &r)) != LK_OK)
		return st;
	if ((*fp = lk_file_find(t, req->rq_fh, req->rq_fhlen)) == NULL ||
	    (*op = lk_req_owner(t, req)) == NULL ||
	    (*wp = lk_waiter_match(*op, *fp, &r, req->rq_excl, true)) == NULL)
		return LK_NOTFOUND;
	return LK_OK;
}

static enum lk_status
lk_grant_undo_do(struct lk_table *t, const struct lk_lockreq *req,
    uint64_t now)
{
	struct lk_file *f;
	struct lk_owner *o;
	struct lk_waiter *w;
	enum lk_status st;

	if ((st = lk_grant_find(t, req, &o, &f, &w)) != LK_OK)
		return st;
	return lk_undo_grant(t, o, f, w, now);
}

enum lk_status
lk_grant_undo(struct lk_table *t, const struct lk_lockreq *req, uint64_t now,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_grant_undo_do(t, req, now), now,
	    resp);
}

static enum lk_status
lk_confirm_do(struct lk_table *t, const struct lk_lockreq *req, uint64_t now)
{
	struct lk_file *f;
	struct lk_owner *o;
	struct lk_waiter *w;
	struct lk_range r;
	enum lk_status st;

	if ((st = lk_grant_find(t, req, &o, &f, &w)) != LK_OK)
		return st;
	if (!lk_vec_reserve(t, &t->t_dropped, sizeof(void *), 1))
		return LK_NOMEM;
	r.r_start = w->wa_start;
	r.r_end = w->wa_end;
	lk_drop_udata(t, w->wa_udata);
	lk_waiter_free(t, w);
	/* o's waiters held back by this grant (lk_grant_sweep()). */
	if (o->ow_nwaiters > 0 && f->fi_nwaiters > 0)
		lk_grant_pass(t, f, now, &r);
	return LK_OK;
}

enum lk_status
lk_grant_confirm(struct lk_table *t, const struct lk_lockreq *req,
    uint64_t now, const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_confirm_do(t, req, now), now, resp);
}
