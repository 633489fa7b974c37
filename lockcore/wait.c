/*
 * wait.c - blocked requests: the per-file FIFO, granting waiters after a
 * release, unconfirmed grants, and deadlock detection.
 *
 * A waiter is on its owner's list (ow_waiters) for its whole life, and on
 * its file's queue (fi_wq, arrival order) while queued, or on the file's
 * list of unconfirmed grants (fi_pend) once granted.
 *
 * INVARIANT: when a call returns, no queued waiter could be granted (it
 * conflicts with a held lock of another owner, or, with the FIFO policy,
 * is held back by an older queued waiter of another owner:
 * lk_waiter_blocks()).  Every release path ends with lk_grant_pass() on
 * the files it touched to restore it, and so does every path that gives
 * an owner a lock past older waiters (a reclaim, the grant of a waiter),
 * over where the owner's other requests may now go past them
 * (lk_gain_span()).  The exceptions: the grant budget (GRANT BUDGET in
 * lockcore.h: the file is deferred), and running out of memory inside
 * the pass, which defers the file the same way.
 */
#include "lockcore.h"

#include <stdlib.h>
#include <string.h>

#include "lk_impl.h"

/* A waiter as a lock record (token 0). */
void
lk_record_waiter(struct lk_record *rc, const struct lk_waiter *w)
{
	const struct lk_owner *o = w->wa_owner;

	memset(rc, 0, sizeof(*rc));
	rc->rc_kind = LK_REC_LOCK;
	rc->rc_host = o->ow_host->ho_id;
	rc->rc_svid = o->ow_svid;
	rc->rc_oh = o->ow_oh;
	rc->rc_ohlen = o->ow_ohlen;
	rc->rc_fh = w->wa_file->fi_fh;
	rc->rc_fhlen = w->wa_file->fi_fhlen;
	rc->rc_start = w->wa_start;
	rc->rc_len = lk_record_len(w->wa_start, w->wa_end);
	rc->rc_excl = w->wa_excl;
}

/* The owner's queued (or, if granted, unconfirmed) request for exactly r. */
struct lk_waiter *
lk_waiter_match(struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, bool granted)
{
	struct lk_waiter *w;

	for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
		if (w->wa_file == f && w->wa_granted == granted &&
		    w->wa_start == r->r_start && w->wa_end == r->r_end &&
		    w->wa_excl == excl)
			return w;
	return NULL;
}

/*
 * The owner's limit bounds its list (ow_waiters), which every look-up of
 * one of its requests walks (lk_waiter_match(), and an UNLOCK's count of
 * its requests): without it one owner with 100,000 waiters (the host's
 * limit) made each re-sent LOCK of an old one cost 0.55 ms and their
 * queueing 37 s in all (found by review).
 */
static bool
lk_waiters_fit(const struct lk_table *t, struct lk_owner *o,
    struct lk_file *f, const struct lk_range *r, bool excl)
{
	const struct lk_config *cf = &t->t_cf;
	const struct lk_host *ho = o->ow_host;

	if (cf->cf_max_waiters != 0 && t->t_nwaiters >= cf->cf_max_waiters)
		return false;
	if (cf->cf_max_waiters_per_host != 0 &&
	    ho->ho_nwaiters >= cf->cf_max_waiters_per_host)
		return false;
	/*
	 * A request re-sent after its grant that must wait again (the owner
	 * changed the range since) replaces that grant (lk_lock_do()): the
	 * owner's count does not grow.  Refused, the client was told
	 * NOLOCKS for what it had been granted (found by review).  The
	 * look-up walks a list this limit bounds.
	 */
	if (cf->cf_max_waiters_per_owner != 0 &&
	    o->ow_nwaiters + o->ow_npending >= cf->cf_max_waiters_per_owner &&
	    (o->ow_npending == 0 ||
	    lk_waiter_match(o, f, r, excl, true) == NULL))
		return false;
	return true;
}

/*
 * Would the lock limits hold if every request queued (of the table, of
 * ho) were granted one record, and this one the `need' it would add now?
 * Grants are not refused by the lock limits (LIMITS in lockcore.h), so
 * without this a host at max-locks-per-host could queue requests, have
 * another host release what they wait for, and queue again: its locks
 * grew past the limit without bound, and past max-locks too (found by
 * review).  A request that adds nothing (it merges the owner's own locks)
 * still queues.
 */
static bool
lk_waiter_locks_fit(const struct lk_table *t, const struct lk_host *ho,
    long need)
{
	const struct lk_config *cf = &t->t_cf;

	if (need <= 0)
		return true;
	if (cf->cf_max_locks != 0 &&
	    t->t_nlocks + t->t_nwaiters + (size_t)need > cf->cf_max_locks)
		return false;
	if (cf->cf_max_locks_per_host != 0 && ho->ho_nlocks +
	    ho->ho_nwaiters + (size_t)need > cf->cf_max_locks_per_host)
		return false;
	return true;
}

/*
 * Queue a request that would add `need' records if granted now (see
 * lk_waiter_locks_fit).  Returns LK_BLOCKED, LK_NOLOCKS or LK_NOMEM.
 */
enum lk_status
lk_waiter_queue(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, void *udata, uint64_t now, long need)
{
	struct lk_waiter *w;

	if (!lk_waiters_fit(t, o, f, r, excl) ||
	    !lk_waiter_locks_fit(t, o->ow_host, need))
		return LK_NOLOCKS;
	if ((w = lk_alloc(t, sizeof(*w))) == NULL)
		return LK_NOMEM;
	w->wa_owner = o;
	w->wa_file = f;
	w->wa_start = r->r_start;
	w->wa_end = r->r_end;
	w->wa_excl = excl;
	w->wa_udata = udata;
	w->wa_since = now;
	w->wa_fprev = f->fi_wqtail;
	if (f->fi_wqtail != NULL) {
		f->fi_wqtail->wa_fnext = w;
		if (w->wa_start < f->fi_wqlo)
			f->fi_wqlo = w->wa_start;
		if (w->wa_end > f->fi_wqhi)
			f->fi_wqhi = w->wa_end;
	} else {
		f->fi_wq = w;
		f->fi_wqlo = w->wa_start;
		f->fi_wqhi = w->wa_end;
	}
	f->fi_wqtail = w;
	lk_wq_insert(t, f, w);
	w->wa_onext = o->ow_waiters;
	if (o->ow_waiters != NULL)
		o->ow_waiters->wa_oprev = w;
	o->ow_waiters = w;
	lk_owner_hold(t, o);
	lk_file_hold(t, f);
	o->ow_nwaiters++;
	o->ow_host->ho_nwaiters++;
	f->fi_nwaiters++;
	t->t_nwaiters++;
	t->t_ct.ct_blocked++;
	return LK_BLOCKED;
}

/* Off f's FIFO; off its index too unless `index' is false (a grant pass). */
static void
lk_queue_unlink(struct lk_file *f, struct lk_waiter *w, bool index)
{
	if (index)
		lk_wq_remove(f, w);
	if (w->wa_fprev != NULL)
		w->wa_fprev->wa_fnext = w->wa_fnext;
	else
		f->fi_wq = w->wa_fnext;
	if (w->wa_fnext != NULL)
		w->wa_fnext->wa_fprev = w->wa_fprev;
	else
		f->fi_wqtail = w->wa_fprev;
	w->wa_fnext = w->wa_fprev = NULL;
}

static void
lk_pend_unlink(struct lk_file *f, struct lk_waiter *w)
{
	if (w->wa_fprev != NULL)
		w->wa_fprev->wa_fnext = w->wa_fnext;
	else
		f->fi_pend = w->wa_fnext;
	if (w->wa_fnext != NULL)
		w->wa_fnext->wa_fprev = w->wa_fprev;
	w->wa_fnext = w->wa_fprev = NULL;
}

/* Free a waiter or unconfirmed grant (its udata is the caller's business). */
void
lk_waiter_free(struct lk_table *t, struct lk_waiter *w)
{
	struct lk_owner *o = w->wa_owner;
	struct lk_file *f = w->wa_file;

	if (w->wa_granted) {
		lk_pend_unlink(f, w);
		o->ow_npending--;
		o->ow_host->ho_npending--;
		f->fi_npending--;
		t->t_npending--;
	} else {
		lk_queue_unlink(f, w, true);
		o->ow_nwaiters--;
		o->ow_host->ho_nwaiters--;
		f->fi_nwaiters--;
		t->t_nwaiters--;
	}
	if (w->wa_oprev != NULL)
		w->wa_oprev->wa_onext = w->wa_onext;
	else
		o->ow_waiters = w->wa_onext;
	if (w->wa_onext != NULL)
		w->wa_onext->wa_oprev = w->wa_oprev;
	lk_owner_drop(t, o);
	lk_file_drop(t, f);
	lk_free(t, w->wa_prior);
	lk_free(t, w);
}

/*
 * Turn a queued waiter into an unconfirmed grant and report it with the
 * token and epoch of the lock now covering it.  It stays in the index
 * until the pass ends (lk_grant_pass), marked granted.
 */
static void
lk_waiter_granted(struct lk_table *t, struct lk_waiter *w,
    const struct lk_lock *cover, uint64_t now)
{
	struct lk_grant *g = t->t_granted.v_data;
	struct lk_owner *o = w->wa_owner;
	struct lk_file *f = w->wa_file;

	lk_queue_unlink(f, w, false);
	w->wa_granted = true;
	w->wa_since = now;
	w->wa_gseq = ++t->t_gseq;
	w->wa_fnext = f->fi_pend;
	if (f->fi_pend != NULL)
		f->fi_pend->wa_fprev = w;
	f->fi_pend = w;
	o->ow_nwaiters--;
	o->ow_npending++;
	o->ow_host->ho_nwaiters--;
	o->ow_host->ho_npending++;
	f->fi_nwaiters--;
	f->fi_npending++;
	t->t_nwaiters--;
	t->t_npending++;
	t->t_ct.ct_waiter_grants++;
	g = &g[t->t_granted.v_len++];
	lk_record_waiter(&g->gr_lock, w);
	g->gr_lock.rc_token = cover->lo_token;
	g->gr_lock.rc_epoch = cover->lo_epoch;
	g->gr_udata = w->wa_udata;
}

/*
 * Has o an unconfirmed grant on f overlapping r?  Looks through f's
 * grants or o's waiters and grants, whichever list is shorter, each entry
 * counted as a visit (a grant pass asks this of every waiter it reaches).
 */
static bool
lk_pending_any(struct lk_table *t, const struct lk_owner *o,
    const struct lk_file *f, const struct lk_range *r)
{
	const struct lk_waiter *w;

	if (f->fi_npending <= o->ow_nwaiters + o->ow_npending) {
		for (w = f->fi_pend; w != NULL; w = w->wa_fnext) {
			t->t_ct.ct_queue_visits++;
			if (w->wa_owner == o && lk_overlaps(w->wa_start,
			    w->wa_end, r->r_start, r->r_end))
				return true;
		}
		return false;
	}
	for (w = o->ow_waiters; w != NULL; w = w->wa_onext) {
		t->t_ct.ct_queue_visits++;
		if (w->wa_granted && w->wa_file == f && lk_overlaps(w->wa_start,
		    w->wa_end, r->r_start, r->r_end))
			return true;
	}
	return false;
}

/*
 * Where a sweep can still find a grantable waiter (see lk_grant_pass()):
 * up to LK_DSET_MAX disjoint ranges, one set for exclusive requests and
 * one for shared ones.  A set may over-approximate, never miss a byte.
 */
#define LK_DSET_MAX	8

struct lk_dset {
	struct lk_range	 ds_r[LK_DSET_MAX];
	size_t		 ds_n;
};

/* Add [start, end]; with the set full, widen the last range to cover it. */
static void
lk_dset_add(struct lk_dset *ds, uint64_t start, uint64_t end)
{
	struct lk_range *d;

	if (ds->ds_n < LK_DSET_MAX) {
		ds->ds_r[ds->ds_n].r_start = start;
		ds->ds_r[ds->ds_n].r_end = end;
		ds->ds_n++;
		return;
	}
	d = &ds->ds_r[LK_DSET_MAX - 1];
	if (start < d->r_start)
		d->r_start = start;
	if (end > d->r_end)
		d->r_end = end;
}

static bool
lk_dset_overlaps(const struct lk_dset *ds, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < ds->ds_n; i++)
		if (lk_overlaps(ds->ds_r[i].r_start, ds->ds_r[i].r_end, start,
		    end))
			return true;
	return false;
}

/*
 * Take [start, end] out of the set.  A range that would split in two
 * with the set full stays whole: the set may only over-approximate.
 */
static void
lk_dset_sub(struct lk_dset *ds, uint64_t start, uint64_t end)
{
	struct lk_range *d;
	size_t i = 0;

	while (i < ds->ds_n) {
		d = &ds->ds_r[i];
		if (!lk_overlaps(d->r_start, d->r_end, start, end)) {
			i++;
		} else if (d->r_start < start && d->r_end > end) {
			if (ds->ds_n < LK_DSET_MAX) {
				ds->ds_r[ds->ds_n].r_start = end + 1;
				ds->ds_r[ds->ds_n].r_end = d->r_end;
				ds->ds_n++;
				d->r_end = start - 1;
			}
			i++;
		} else if (d->r_start < start) {
			d->r_end = start - 1;
			i++;
		} else if (d->r_end > end) {
			d->r_start = end + 1;
			i++;
		} else {
			*d = ds->ds_r[--ds->ds_n];	/* all of it: gone */
		}
	}
}

/*
 * The oldest queued waiter after arrival `after' that overlaps the sets
 * (exclusive ones dx, shared ones ds): where a sweep goes on after a run
 * of waiters it had no reason to look at.
 */
static struct lk_waiter *
lk_sweep_jump(struct lk_table *t, const struct lk_file *f,
    const struct lk_dset *dx, const struct lk_dset *ds, uint64_t after)
{
	const struct lk_dset *set[2] = { ds, dx };	/* by wa_excl */
	struct lk_waiter *best = NULL, *w;
	uint64_t before = UINT64_MAX;
	size_t i;
	int x;

	for (x = 0; x < 2; x++)
		for (i = 0; i < set[x]->ds_n; i++)
			if ((w = lk_wq_next(t, f, x, !x,
			    set[x]->ds_r[i].r_start, set[x]->ds_r[i].r_end,
			    after, before)) != NULL) {
				best = w;
				before = w->wa_seq;
			}
	return best;
}

/*
 * One sweep of f's queue in arrival order, granting every waiter that no
 * held lock and (FIFO) no older queued waiter of another owner blocks.
 * Only waiters that overlap the sets (dx for exclusive requests, ds for
 * shared ones) are looked at; the sweep ends once both are empty, and
 * jumps (lk_sweep_jump) over runs of waiters outside them.  Returns how
 * many it granted; *nomem when it had to stop, *spent when the call's
 * grant budget ran out before a waiter it could grant.  Grants whose owner
 * held locks or had other waiters queued may unblock a waiter the sweep
 * had passed (see lk_grant_pass()): their ranges, widened by
 * lk_gain_span(), go into *again.
 */
static size_t
lk_grant_sweep(struct lk_table *t, struct lk_file *f, uint64_t now,
    struct lk_dset *dx, struct lk_dset *ds, bool *nomem, bool *spent,
    struct lk_dset *again)
{
	struct lk_waiter *w, *next, *held;
	struct lk_lock *conflict, *cover;
	struct lk_prior *prior;
	struct lk_range r, h;
	size_t n = 0;
	unsigned run = 0;
	uint32_t nprior;
	bool alone;

	for (w = f->fi_wq; w != NULL; w = next) {
		next = w->wa_fnext;
		if (dx->ds_n == 0 && ds->ds_n == 0)
			break;
		t->t_ct.ct_queue_visits++;
		if (!lk_dset_overlaps(w->wa_excl ? dx : ds, w->wa_start,
		    w->wa_end)) {
			if (++run >= LK_WQ_RUN && next != NULL) {
				next = lk_sweep_jump(t, f, dx, ds, w->wa_seq);
				run = 0;
			}
			continue;
		}
		run = 0;
		r.r_start = w->wa_start;
		r.r_end = w->wa_end;
		switch (lk_collect(t, w->wa_owner, f, &r, w->wa_excl,
		    &conflict)) {
		case LK_OK:
			break;
		case LK_DENIED:
			/*
			 * Every waiter on conflict's bytes that conflicts with
			 * it stays blocked there (when its owner has no
			 * waiters, no waiter is of that owner): those bytes
			 * are done.
			 */
			if (conflict->lo_owner->ow_nwaiters == 0) {
				lk_dset_sub(dx, conflict->lo_start,
				    conflict->lo_end);
				if (conflict->lo_excl)
					lk_dset_sub(ds, conflict->lo_start,
					    conflict->lo_end);
			}
			continue;
		default:
			*nomem = true;
			return n;
		}
		/*
		 * Not over an unconfirmed grant of its own owner: undoing
		 * that one would have to take back bytes this grant counts as
		 * held before it (its prior), and ending this one with it left
		 * its lock held by nobody.  It waits for the answer
		 * (lk_grant_confirm() and the undo pass again).  Asked before
		 * the FIFO check, and of the shorter list: an owner's n
		 * overlapping requests, all held back by the grant of the
		 * first, each walked the others through the index and the
		 * owner's whole list, O(n^2 log n) in one pass.
		 */
		if (w->wa_owner->ow_npending > 0 &&
		    lk_pending_any(t, w->wa_owner, f, &r))
			continue;
		if (lk_queued_conflict(t, f, w->wa_owner, &r, w->wa_excl, w,
		    &held) != LK_OK)
			goto nomem;
		if (held != NULL)
			continue;
		if (t->t_budget == 0) {
			*spent = true;	/* w and what is left: GRANT BUDGET */
			return n;
		}
		alone = w->wa_owner->ow_nlocks == 0 &&
		    w->wa_owner->ow_nwaiters == 1;
		/* What the owner holds there apart from this grant (undo.c). */
		if (!lk_prior_make(t, &r, &prior, &nprior))
			goto nomem;
		if (!lk_vec_reserve(t, &t->t_granted, sizeof(struct lk_grant),
		    1) || lk_take(t, w->wa_owner, f, &r, w->wa_excl, false,
		    &cover) != LK_OK) {
			lk_free(t, prior);
			goto nomem;
		}
		lk_waiter_granted(t, w, cover, now);
		w->wa_prior = prior;
		w->wa_nprior = w->wa_capprior = nprior;
		t->t_budget--;
		n++;
		if (!alone) {
			lk_gain_span(t, f, w->wa_owner, &r, w->wa_excl, &h);
			lk_dset_add(again, h.r_start, h.r_end);
		}
		/*
		 * Every younger waiter of another owner that overlaps this new
		 * lock conflicts with it (a shared one only if it is
		 * exclusive): it stays blocked there, so those bytes are done.
		 * Not when the grantee had other locks or waiters: the next
		 * sweep looks there again.
		 */
		if (alone) {
			lk_dset_sub(dx, r.r_start, r.r_end);
			if (w->wa_excl)
				lk_dset_sub(ds, r.r_start, r.r_end);
		}
	}
	return n;
nomem:
	*nomem = true;
	return n;
}

/*
 * The pass granted the n waiters at the head of fi_pend; they are still in
 * the index (wqidx.c skips granted ones).  Take them out one by one, or,
 * when they are at least as many as the waiters left, rebuild the index
 * from those: granting 100,000 at once then costs no tree work at all.
 */
static void
lk_wq_settle(struct lk_file *f, size_t n)
{
	struct lk_waiter *w;

	if (n == 0)
		return;
	if (n >= f->fi_nwaiters) {
		f->fi_wx = f->fi_ws = NULL;
		for (w = f->fi_wq; w != NULL; w = w->wa_fnext)
			lk_wq_reinsert(f, w);
		return;
	}
	for (w = f->fi_pend; n > 0; w = w->wa_fnext, n--)
		lk_wq_remove(f, w);
}

/*
 * o has just taken r in mode excl on f where queued waiters of other
 * owners may conflict with it (a reclaim, which goes past the queue; the
 * grant of one of its waiters, ahead of younger ones): where o's queued
 * requests may now go past older waiters, into *h.  A queued waiter of
 * another owner that conflicts with the new lock waits for o now, so it
 * no longer holds back o's requests anywhere in its range
 * (lk_waiter_blocks()): the requests freed overlap such a waiter, and
 * such a waiter overlaps r.  So *h is r and the ranges of the waiters
 * overlapping r in a mode that conflicts with excl, as one range
 * (lk_wq_hull(): two paths down the index, no walk).  Just r when o has
 * nothing queued.
 */
void
lk_gain_span(struct lk_table *t, const struct lk_file *f,
    const struct lk_owner *o, const struct lk_range *r, bool excl,
    struct lk_range *h)
{
	*h = *r;
	if (o->ow_nwaiters > 0 && t->t_cf.cf_policy == LK_POLICY_FIFO)
		lk_wq_hull(t, f, true, excl, r, h);
}

/*
 * Grant every queued waiter on f that can be granted, in arrival order.
 * d: the only bytes whose locks or queued waiters changed since the queue
 * was last settled (NULL: anywhere).
 *
 * Before the change no waiter could be granted, so a waiter that can be
 * now overlaps d: what blocked it was there.  The first sweep looks only
 * at those, and takes out of where it looks the bytes of each grant (the
 * younger waiters there conflict with the grant) and of each held lock
 * that blocks a waiter (the others there conflict with it too); so
 * releasing a byte that 100,000 processes wait for grants the first and
 * stops, instead of trying all 100,000 again.
 *
 * One sweep is not always enough: a grant can unblock a waiter the sweep
 * already passed, either by downgrading an exclusive lock the grantee
 * held (its waiter asked for shared over it: a waiter on the bytes of the
 * grant), or, with FIFO, by giving the grantee a lock that a queued
 * waiter of another owner conflicts with: that waiter now waits for the
 * grantee, so it no longer holds back the grantee's other requests
 * anywhere in its range (lk_waiter_blocks()) -- requests that may lie
 * far from the grant and from d, and that nothing else would look at
 * again.  The first needs a grantee that held locks, the second one with
 * other requests queued.  So sweep again, on the bytes of those grants
 * and the ranges of the waiters they conflict with (lk_gain_span(): one
 * range a grant, two paths down the index, no walk), until a sweep grants
 * nothing; each extra sweep grants at least one waiter, so this ends.  A
 * sweep whose grantees had neither only added locks, which unblock
 * nobody, so it is the last (the usual case: a queue of processes each
 * blocked on one lock costs one sweep, not two).
 *
 * The callers' d follows the same rule: a reclaim, which goes past the
 * queue, passes lk_gain_span() of what it took.  A plain LOCK need not: a
 * waiter its new lock conflicts with, it went past, so its owner held a
 * lock that waiter waits for already.
 */
/*
 * Remember f, and that its grantable waiters lie within [lo, hi]: at the
 * back of t_defer, which lk_grant_more() serves from the front, so that
 * every file with grants pending gets its turn.
 */
static void
lk_defer(struct lk_table *t, struct lk_file *f, uint64_t lo, uint64_t hi)
{
	if (f->fi_deferred) {
		if (lo < f->fi_dlo)
			f->fi_dlo = lo;
		if (hi > f->fi_dhi)
			f->fi_dhi = hi;
		return;
	}
	lk_file_hold(t, f);
	f->fi_deferred = true;
	f->fi_dlo = lo;
	f->fi_dhi = hi;
	f->fi_dnext = NULL;
	if (t->t_defer == NULL)
		t->t_defer = f;
	else
		t->t_defertail->fi_dnext = f;
	t->t_defertail = f;
}

/* The smallest range holding every range of the sets (lo > hi: none). */
static void
lk_dset_hull(const struct lk_dset *const *sets, size_t nsets, uint64_t *lo,
    uint64_t *hi)
{
	size_t i, j;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < nsets; i++)
		for (j = 0; j < sets[i]->ds_n; j++) {
			if (sets[i]->ds_r[j].r_start < *lo)
				*lo = sets[i]->ds_r[j].r_start;
			if (sets[i]->ds_r[j].r_end > *hi)
				*hi = sets[i]->ds_r[j].r_end;
		}
}

void
lk_grant_pass(struct lk_table *t, struct lk_file *f, uint64_t now,
    const struct lk_range *d)
{
	struct lk_dset dx, ds, again;
	const struct lk_dset *left[3] = { &dx, &ds, &again };
	bool nomem = false, spent = false;
	uint64_t lo, hi;
	size_t n = 0, k;

	/* Nothing queued where it changed (fi_wqlo..fi_wqhi spans the queue). */
	if (f->fi_wq == NULL || (d != NULL && !lk_overlaps(f->fi_wqlo,
	    f->fi_wqhi, d->r_start, d->r_end)))
		return;
	dx.ds_n = 0;
	lk_dset_add(&dx, d != NULL ? d->r_start : 0,
	    d != NULL ? d->r_end : UINT64_MAX);
	ds = dx;
	for (;;) {
		again.ds_n = 0;
		n += (k = lk_grant_sweep(t, f, now, &dx, &ds, &nomem, &spent,
		    &again));
		if (spent || k == 0 || nomem || again.ds_n == 0 ||
		    f->fi_nwaiters == 0)
			break;
		dx = ds = again;
	}
	lk_wq_settle(f, n);
	if (spent || nomem) {
		/*
		 * What this sweep had still to look at (dx, ds) and where its
		 * grants may have unblocked a waiter it passed (again).  Out
		 * of memory, too: the waiters it could not grant stay pending
		 * (lk_grant_more() tries them again), never grantable and
		 * forgotten until the next change on the file.
		 */
		lk_dset_hull(left, 3, &lo, &hi);
		lk_defer(t, f, lo, hi);
		if (nomem)
			t->t_pass_nomem = true;
	}
}

void
lk_set_grant_budget(struct lk_table *t, size_t budget)
{
	t->t_cf.cf_grant_budget = budget;
}

bool
lk_grants_pending(const struct lk_table *t)
{
	return t->t_defer != NULL;
}

enum lk_status
lk_grant_more(struct lk_table *t, uint64_t now, const struct lk_result **resp)
{
	struct lk_file *list, *last, *f;
	struct lk_range r;

	lk_begin(t);
	list = t->t_defer;
	last = t->t_defertail;
	t->t_defer = t->t_defertail = NULL;
	while ((f = list) != NULL && t->t_budget > 0) {
		list = f->fi_dnext;
		f->fi_deferred = false;
		r.r_start = f->fi_dlo;
		r.r_end = f->fi_dhi;
		lk_grant_pass(t, f, now, &r);	/* may defer f again */
		lk_file_drop(t, f);
	}
	/*
	 * Budget spent: the files not reached stay first, in their order,
	 * ahead of those served now (deferred again, at the back).  Put
	 * back in reverse, as they were, the calls went to the last two
	 * files in turn and the others got nothing while those had
	 * grantable waiters left (found by review).
	 */
	if (list != NULL) {
		last->fi_dnext = t->t_defer;
		if (t->t_defer == NULL)
			t->t_defertail = last;
		t->t_defer = list;
	}
	return lk_finish_at(t, t->t_pass_nomem ? LK_NOMEM : LK_OK, now,
	    resp);
}

/* How many of o's unconfirmed grants on f overlap r. */
size_t
lk_pending_count(const struct lk_owner *o, const struct lk_file *f,
    const struct lk_range *r)
{
	const struct lk_waiter *w;
	size_t n = 0;

	for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
		n += w->wa_granted && w->wa_file == f &&
		    lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end);
	return n;
}

/*
 * End o's unconfirmed grants on f overlapping r (t_dropped reserved).
 * *hull (may be NULL) grows to cover their ranges: o's waiters held back
 * by them (lk_grant_sweep()) lie there.
 */
void
lk_pending_end_overlap(struct lk_table *t, struct lk_owner *o,
    struct lk_file *f, const struct lk_range *r, struct lk_range *hull)
{
	struct lk_waiter *w, *next;

	for (w = o->ow_waiters; w != NULL; w = next) {
		next = w->wa_onext;
		if (w->wa_granted && w->wa_file == f &&
		    lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end)) {
			if (hull != NULL && w->wa_start < hull->r_start)
				hull->r_start = w->wa_start;
			if (hull != NULL && w->wa_end > hull->r_end)
				hull->r_end = w->wa_end;
			lk_drop_udata(t, w->wa_udata);
			lk_waiter_free(t, w);
		}
	}
}

/* Is w queued on f for a range inside r (`overlap': overlapping r)? */
static bool
lk_queued_in(const struct lk_waiter *w, const struct lk_file *f,
    const struct lk_range *r, bool overlap)
{
	if (w->wa_granted || w->wa_file != f)
		return false;
	return overlap ? lk_overlaps(w->wa_start, w->wa_end, r->r_start,
	    r->r_end) : w->wa_start >= r->r_start && w->wa_end <= r->r_end;
}

size_t
lk_queued_count(const struct lk_owner *o, const struct lk_file *f,
    const struct lk_range *r, bool overlap)
{
	const struct lk_waiter *w;
	size_t n = 0;

	for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
		n += lk_queued_in(w, f, r, overlap);
	return n;
}

/*
 * Remove o's queued requests on f inside r (`overlap': overlapping r;
 * t_dropped reserved).
 */
void
lk_queued_end(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool overlap)
{
	struct lk_waiter *w, *next;

	for (w = o->ow_waiters; w != NULL; w = next) {
		next = w->wa_onext;
		if (lk_queued_in(w, f, r, overlap)) {
			lk_deadlock_note_leave(t, w);
			lk_drop_udata(t, w->wa_udata);
			lk_waiter_free(t, w);
		}
	}
}
