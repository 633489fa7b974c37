/*
 * deadlock.c - refuse a blocking request that would close a cycle in the
 * wait-for graph of owners.
 *
 * HOW IT WORKS
 *   Owner X waits for owner Y when one of X's queued waiters conflicts with
 *   a lock Y holds on that file or, with the FIFO policy, is held back by
 *   an older queued waiter of Y there (X cannot be granted before Y's
 *   waiter; lk_waiter_blocks()).  The graph is never stored: a node's
 *   edges are recomputed from its queued waiters, the file trees and the
 *   file queues, so an edge is gone the moment its waiter is granted,
 *   cancelled or released.
 *
 *   Queueing request R of owner O adds the edges O -> B for every blocker B
 *   of R; that closes a cycle iff O is reachable from some B.  A depth-first
 *   search from the blockers answers it; visited owners are marked with a
 *   fresh generation (ow_mark == t_mark), the stack is t_stack.
 *
 *   An edge into O comes from a queued waiter of another owner that
 *   conflicts with a lock O holds, or (FIFO) with an older queued waiter
 *   of O.  So an owner that holds no lock and has nothing queued cannot
 *   be reached, and its request cannot close a cycle: no search at all.
 *   That is the common case -- a process that blocks on its first lock
 *   -- and it kept a queue of n waiters from costing O(n^2) per request
 *   (each visited waiter's blockers are found by walking its queue).
 *
 *   The search is bounded: once it has looked at LK_DL_VISITS queued
 *   waiters and index nodes of the request's own range, or as many
 *   waiters, index nodes and locks beyond it (the
 *   locks of each waiter's range it reaches count: a waiter over a range
 *   of many locks costs that many steps; so do an owner's locks on a file
 *   collected when a waiter reaches past the owner's request,
 *   lk_own_all() in lock.c, counted before they are collected: a
 *   collection that would pass the bound is not made; so does each entry
 *   of a reached owner's list, its unconfirmed grants too) it gives up
 *   and lets the
 *   request queue, as Linux's own check gives up past a fixed depth --
 *   unless it has reached the requester by then, even part way through
 *   a range: a cycle found is one.  Each owner reached
 *   has each of its waiters' blockers found by walking the queue, so one
 *   owner with n overlapping waiters made a single request of another
 *   owner cost O(n^2) -- 4,000 took 42 ms, the default 100,000 per host
 *   would hold the loop for tens of seconds.  A cycle longer than the
 *   bound is not reported (counted in ct_deadlock_giveups): its requests
 *   wait until a client gives up, as with LK_POLICY_BARGE below.
 *
 *   Checking at queue time is almost enough with FIFO: a grant (immediate
 *   or of a waiter) conflicts with an older queued waiter of another owner
 *   only where that waiter already waits for a lock of the grantee, so it
 *   adds no edge out of an existing waiter, and younger waiters it
 *   conflicts with already had the edge to its owner (or lost their
 *   exemption from it, below, in a change that was noted).  The exception
 *   is an owner whose hold weakens while it waits: an older waiter of
 *   another owner does not hold back O's request when O holds a lock
 *   anywhere in that waiter's range that the waiter conflicts with
 *   (lk_waiter_blocks(): the waiter waits for O), so when O downgrades or
 *   gives back such a lock (a shared LOCK over its exclusive range, the
 *   grant of its own shared waiter there, an undone grant, a plain
 *   unlock) its queued requests that overlap such a waiter gain edges,
 *   and may close a cycle: Y waits for X's lock on file g; on f, X holds
 *   [0,30] exclusive and waits for [20,40] behind Z's exclusive byte 40,
 *   Y waits for [0,40] shared behind X and Z; X downgrades [0,30] to
 *   shared -- now Y's older request no longer waits for X on f, so it
 *   holds X's back, and Y waits for X on g: after Z unlocks both would
 *   wait forever.  So every change that weakens an owner's hold while it
 *   has queued requests is noted (lk_deadlock_note()), and before the
 *   call returns those requests of the owner on that file are searched
 *   again (lk_deadlock_recheck()) that overlap what weakened or a queued
 *   waiter that overlapped it then (the hull of those, taken when noted:
 *   such a waiter granted before the re-check holds the requests back by
 *   its lock): one that now closes a cycle is dropped (its udata in
 *   rs_dropped, counted in ct_deadlock_drops), as the request would have
 *   been refused had it come now; a client that sends it again gets
 *   LK_DEADLOCK.  Only its edges are new: a request of the owner that
 *   overlaps none of those was checked before and is still free of
 *   cycles (the edges into the owner only went away).
 *
 *   One FIFO edge is left out: O's request held back by an older waiter
 *   of P that itself waits behind an older request V of O's own.  Once V
 *   is granted, P's waiter waits for O's lock and O's request goes past
 *   it; until then O's request waits for V, whose blockers are O's edges
 *   already (lk_dl_behind()).  Before 2026-12-06 the edge was taken, and
 *   such a request got LK_DEADLOCK although nothing would stall (and so
 *   until 2026-12-07 once finding V had cost LK_DL_VISITS steps: now
 *   that counts against the search's bound, and past it the search gives
 *   up).  When V
 *   leaves without a grant (a cancel, an unlock that ends it, a drop for
 *   a cycle), the edge is real again: lk_deadlock_note_leave() notes V's
 *   range, and O's requests around it are searched again as below.
 *
 *   The other way in is a lock taken past the queue: a reclaim, or an
 *   undone grant giving its owner back what it held before.  Queued
 *   requests of other owners that conflict with it gain an edge into its
 *   owner (lk_deadlock_note_into()) -- only where the owner gains bytes
 *   or strength: the bytes a reclaim finds not held as strongly already
 *   (none for a reclaim sent again), an exclusive piece under a shared
 *   grant undone.  Each is searched again the same way, and dropped if
 *   it now closes a cycle -- the reclaim itself cannot be refused for
 *   it.  Noting more had another owner's request searched first and
 *   dropped for a cycle that the owner's own weakened hold closed.  The
 *   searches of one call share one bound.  The model test checks after
 *   every step that no queued request is on a cycle.  With
 *   LK_POLICY_BARGE a grant can add edges; a cycle closed that way is not
 *   detected.
 */
#include "lockcore.h"

#include "lk_impl.h"

/*
 * Waiters, index nodes and locks one search may look at beyond the
 * request's own range (a millisecond or so).
 */
#define LK_DL_VISITS	65536

struct lk_dl {
	struct lk_table		*d_t;
	const struct lk_owner	*d_x;
	bool			 d_excl;
	bool			 d_nomem;
	bool			 d_spent;	/* past d_limit */
	uint64_t		 d_limit;	/* of ct_queue_visits */
};

/* One more lock looked at; false once the search's bound is passed. */
static bool
lk_dl_count(struct lk_dl *d)
{
	if (++d->d_t->t_ct.ct_queue_visits > d->d_limit) {
		d->d_spent = true;
		return false;
	}
	return true;
}

static bool
lk_dl_push(struct lk_table *t, struct lk_owner *o)
{
	struct lk_vec *v = &t->t_stack;

	if (o->ow_mark == t->t_mark)
		return true;
	if (!lk_vec_reserve(t, v, sizeof(o), 1))
		return false;
	o->ow_mark = t->t_mark;
	((struct lk_owner **)v->v_data)[v->v_len++] = o;
	return true;
}

static int
lk_dl_lock_cb(struct lk_lock *l, void *arg)
{
	struct lk_dl *d = arg;

	if (!lk_dl_count(d))
		return 1;
	if (l->lo_owner == d->d_x || !lk_conflicts(d->d_excl, l->lo_excl))
		return 0;
	if (!lk_dl_push(d->d_t, l->lo_owner)) {
		d->d_nomem = true;
		return 1;
	}
	return 0;
}

struct lk_dlw {
	struct lk_table		*w_t;
	const struct lk_owner	*w_x;
	const struct lk_range	*w_r;
	bool			 w_excl;
	uint64_t		 w_limit;	/* of ct_queue_visits */
	bool			 w_spent;	/* w_limit reached */
};

struct lk_dlh {
	const struct lk_owner	*h_p;
	bool			 h_excl;
	bool			 h_found;
	bool			 h_spent;	/* h_limit reached */
	uint64_t		 h_limit;	/* of *h_visits */
	uint64_t		*h_visits;
};

static int
lk_dl_holds_cb(struct lk_lock *l, void *arg)
{
	struct lk_dlh *h = arg;

	if (++*h->h_visits > h->h_limit) {
		h->h_spent = true;
		return 1;
	}
	if (l->lo_owner == h->h_p && lk_conflicts(h->h_excl, l->lo_excl)) {
		h->h_found = true;
		return 1;
	}
	return 0;
}

/*
 * Does v (of another owner, holding back d->w_x's request) wait behind an
 * older queued request V of d->w_x's own?  Then it is no edge: once V is
 * granted, w_x holds a lock in v's range that v conflicts with, and its
 * request goes past v (lk_waiter_blocks()); until then it waits for V,
 * whose own blockers are w_x's edges already.  V holds v back when the
 * two overlap in conflicting modes and v's owner holds no lock in V's
 * range that V conflicts with (V would wait for it).  When V leaves
 * without a grant, lk_deadlock_note_leave() has w_x's requests around it
 * searched again.  x's waiters and the locks looked at count against the
 * search's bound: past it, w_spent is set and the search gives up.  Until
 * 2026-12-07 the walk had a bound of its own, LK_DL_VISITS steps, past
 * which the edge was taken: with 4,000 requests of the requester's own
 * ahead of V on its list, the 17th waiter behind V became an edge, and a
 * request that closed no cycle got LK_DEADLOCK (found by review).
 */
static bool
lk_dl_behind(struct lk_dlw *d, const struct lk_waiter *v)
{
	const struct lk_waiter *own;
	struct lk_dlh h;

	for (own = d->w_x->ow_waiters; own != NULL; own = own->wa_onext) {
		if (++d->w_t->t_ct.ct_queue_visits > d->w_limit) {
			d->w_spent = true;
			return false;
		}
		if (own->wa_granted || own->wa_file != v->wa_file ||
		    own->wa_seq >= v->wa_seq ||
		    !lk_overlaps(own->wa_start, own->wa_end, v->wa_start,
		    v->wa_end) || !lk_conflicts(own->wa_excl, v->wa_excl))
			continue;
		h.h_p = v->wa_owner;
		h.h_excl = own->wa_excl;
		h.h_found = false;
		h.h_spent = false;
		h.h_limit = d->w_limit;
		h.h_visits = &d->w_t->t_ct.ct_queue_visits;
		lk_tree_overlap(v->wa_file->fi_root, own->wa_start, own->wa_end,
		    lk_dl_holds_cb, &h);
		if (h.h_spent) {
			d->w_spent = true;
			return false;
		}
		if (!h.h_found)
			return true;
	}
	return false;
}

static int
lk_dl_waiter_cb(struct lk_waiter *v, void *arg)
{
	struct lk_dlw *d = arg;
	enum lk_status st;
	bool blocks;

	if (d->w_t->t_ct.ct_queue_visits > d->w_limit) {
		d->w_spent = true;	/* the bound, inside a walk too */
		return 1;
	}
	/*
	 * Pushed already: its edge adds nothing, and lk_waiter_blocks()
	 * (an lk_own_all() of the requester's locks) need not run.
	 */
	if (v->wa_owner->ow_mark == d->w_t->t_mark)
		return 0;
	/* LK_NOLOCKS: collecting w_x's locks would pass the bound. */
	st = lk_waiter_blocks(d->w_t, v, d->w_x, d->w_r, d->w_excl,
	    d->w_limit, &blocks);
	if (st != LK_OK) {
		d->w_spent = st == LK_NOLOCKS;
		return 1;
	}
	if (!blocks || (d->w_x->ow_nwaiters > 0 && lk_dl_behind(d, v)))
		return 0;
	if (d->w_spent)
		return 1;
	return lk_dl_push(d->w_t, v->wa_owner) ? 0 : 1;
}

/* lk_own_collect()'s work, each lock looked at counted against the bound. */
static int
lk_dl_own_cb(struct lk_lock *l, void *arg)
{
	struct lk_dl *d = arg;
	struct lk_vec *v = &d->d_t->t_tmp;

	if (!lk_dl_count(d))
		return 1;
	if (l->lo_owner != d->d_x)
		return 0;
	if (!lk_vec_reserve(d->d_t, v, sizeof(l), 1)) {
		d->d_nomem = true;
		return 1;
	}
	((struct lk_lock **)v->v_data)[v->v_len++] = l;
	return 0;
}

/*
 * Push every owner that blocks x's request (r, excl) queued before upto:
 * the queued waiters come from the index (wqidx.c), only those that
 * overlap r in a conflicting mode.  The locks looked at in the file's
 * tree count against the search's bound as the waiters do: a request
 * over a range of many locks cost that many steps for every waiter the
 * search reached, uncounted (found by review).  The locks count against
 * `llimit', the waiters against `limit'.  LK_OK, LK_NOMEM, or LK_NOLOCKS:
 * past a limit (the search gives up).
 */
static enum lk_status
lk_dl_blockers(struct lk_table *t, const struct lk_owner *x, struct lk_file *f,
    const struct lk_range *r, bool excl, const struct lk_waiter *upto,
    uint64_t llimit, uint64_t limit)
{
	struct lk_dl d = { t, x, excl, false, false, llimit };
	struct lk_dlw dw = { t, x, r, excl, limit, false };
	int rc;
	uint64_t s = r->r_start, e = r->r_end;

	lk_tree_overlap(f->fi_root, s, e, lk_dl_lock_cb, &d);
	if (d.d_nomem || d.d_spent)
		return d.d_nomem ? LK_NOMEM : LK_NOLOCKS;
	if (t->t_cf.cf_policy != LK_POLICY_FIFO || f->fi_wq == NULL)
		return LK_OK;
	/* x's locks on f overlapping or touching r, as lk_own_collect(). */
	t->t_tmp.v_len = 0;
	lk_tree_overlap(f->fi_root, s == 0 ? 0 : s - 1,
	    e == UINT64_MAX ? e : e + 1, lk_dl_own_cb, &d);
	if (d.d_nomem || d.d_spent)
		return d.d_nomem ? LK_NOMEM : LK_NOLOCKS;
	rc = lk_wq_each(t, f, true, excl, r->r_start, r->r_end,
	    upto != NULL ? upto->wa_seq : UINT64_MAX, lk_dl_waiter_cb, &dw);
	return rc == 0 ? LK_OK : dw.w_spent ? LK_NOLOCKS : LK_NOMEM;
}

/*
 * Is o reachable from the blockers of its request (r, excl) on f queued
 * before upto (NULL: a new request)?  The search gives up (LK_OK,
 * counted) once it has looked at LK_DL_VISITS waiters, index nodes and
 * locks -- unless it reached o before: a cycle found is one.  LK_OK,
 * LK_DEADLOCK or LK_NOMEM.
 */
static enum lk_status
lk_dl_search(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, const struct lk_waiter *upto)
{
	struct lk_owner **stack, *x;
	struct lk_waiter *w;
	struct lk_range wr;
	uint64_t limit;
	size_t queued;
	enum lk_status st;
	bool cut;

	t->t_mark++;
	t->t_stack.v_len = 0;
	/*
	 * The request's own range: its locks are walked whatever they are,
	 * as deciding the request did (lk_collect), but its queued waiters
	 * count against a bound of their own -- walked whatever they were,
	 * 100,000 waiters there (one host's limit) cost 17 ms for every
	 * blocking LOCK of an owner that held a lock elsewhere, 180 ms at a
	 * million (found by review).  Cut there, the search still goes on
	 * from the owners found, with the bound for what lies beyond, so
	 * that the holder of a lock in the range is followed (a two-owner
	 * cycle went undetected when the range held 70,000 of the
	 * requester's own locks, found by review); a cycle through the
	 * waiters left out goes undetected, counted as a give-up.
	 */
	limit = t->t_ct.ct_queue_visits + LK_DL_VISITS;
	st = lk_dl_blockers(t, o, f, r, excl, upto, UINT64_MAX, limit);
	if ((cut = st == LK_NOLOCKS))
		st = LK_OK;
	limit = t->t_ct.ct_queue_visits + LK_DL_VISITS;
	while (st == LK_OK && t->t_stack.v_len > 0) {
		stack = t->t_stack.v_data;
		x = stack[--t->t_stack.v_len];
		/*
		 * x's list holds its unconfirmed grants too (together up
		 * to max-waiters-per-owner): each entry walked counts
		 * against the bound -- an owner with one queued request
		 * behind 4,095 grants cost that many steps, uncounted
		 * (found by review) -- and the walk ends at the last
		 * queued request.
		 */
		queued = 0;
		for (w = x->ow_waiters; w != NULL && st == LK_OK &&
		    queued < x->ow_nwaiters; w = w->wa_onext) {
			if (++t->t_ct.ct_queue_visits > limit) {
				st = LK_NOLOCKS;
				break;
			}
			if (w->wa_granted)
				continue;
			queued++;
			wr.r_start = w->wa_start;
			wr.r_end = w->wa_end;
			st = lk_dl_blockers(t, x, w->wa_file, &wr, w->wa_excl,
			    w, limit, limit);
			/* o reached, even by a walk cut short: a cycle. */
			if (o->ow_mark == t->t_mark)
				return LK_DEADLOCK;
			if (st == LK_OK && t->t_ct.ct_queue_visits > limit)
				st = LK_NOLOCKS;
		}
	}
	if (st == LK_NOLOCKS || (st == LK_OK && cut)) {
		t->t_ct.ct_deadlock_giveups++;	/* the bound: queue */
		return LK_OK;
	}
	return st;
}

/*
 * Would queueing o's request (r, excl) on f deadlock?  Returns LK_OK,
 * LK_DEADLOCK or LK_NOMEM.
 */
enum lk_status
lk_deadlock_check(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl)
{
	/* Nothing can wait for o: no edge into it, no cycle through it. */
	if (o->ow_nlocks == 0 && o->ow_nwaiters == 0 && o->ow_npending == 0)
		return LK_OK;
	return lk_dl_search(t, o, f, r, excl, NULL);
}

static void
lk_dl_noted(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool into, bool excl)
{
	struct lk_weak *wk;

	if (!lk_vec_reserve(t, &t->t_weak, sizeof(*wk), 1)) {
		t->t_ct.ct_deadlock_giveups++;
		return;
	}
	wk = (struct lk_weak *)t->t_weak.v_data + t->t_weak.v_len++;
	wk->wk_owner = o;
	wk->wk_file = f;
	wk->wk_r = *r;
	wk->wk_into = into;
	wk->wk_excl = excl;
}

/*
 * o's hold on f weakened somewhere in r: note it for lk_deadlock_recheck()
 * if o has queued requests that could now close a cycle -- those that
 * overlap r or a queued waiter overlapping r (it may hold them back now:
 * lk_waiter_blocks()).  The note keeps the hull of both, taken now: a
 * waiter granted before the re-check (by the pass this very change sets
 * off) holds o's requests back by its lock from then on, and is no
 * longer in the queue to be found.  Never fails: out of memory, the note
 * is not taken (counted as a search given up).
 */
void
lk_deadlock_note(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r)
{
	struct lk_range h = *r;

	if (t->t_cf.cf_policy != LK_POLICY_FIFO || o->ow_nwaiters == 0)
		return;
	lk_wq_hull(t, f, true, true, r, &h);
	lk_dl_noted(t, o, f, &h, false, false);
}

/*
 * Queued request w leaves without a grant (cancelled, ended by its
 * owner's unlock, dropped for a cycle): its owner's requests that were
 * no edge to a waiter held behind w (lk_dl_behind()) may be one now, and
 * close a cycle.  Those overlap such a waiter, which overlaps w: note w's
 * range (lk_deadlock_note() widens it by the waiters around it).
 */
void
lk_deadlock_note_leave(struct lk_table *t, const struct lk_waiter *w)
{
	struct lk_range r;

	if (w->wa_granted || w->wa_owner->ow_nwaiters < 2)
		return;
	r.r_start = w->wa_start;
	r.r_end = w->wa_end;
	lk_deadlock_note(t, w->wa_owner, w->wa_file, &r);
}

/*
 * o took r on f in mode excl past the queue (a reclaim, or an undone
 * grant giving back what o held): queued requests of other owners there
 * that conflict with it now wait for o, and may close a cycle through it.
 */
void
lk_deadlock_note_into(struct lk_table *t, struct lk_owner *o,
    struct lk_file *f, const struct lk_range *r, bool excl)
{
	if (t->t_cf.cf_policy == LK_POLICY_FIFO && f->fi_nwaiters > 0)
		lk_dl_noted(t, o, f, r, true, excl);
}

static int
lk_dl_into_cb(struct lk_waiter *w, void *arg)
{
	struct lk_table *t = arg;

	((struct lk_waiter **)t->t_wcand.v_data)[t->t_wcand.v_len++] = w;
	return 0;
}

/*
 * The queued requests a note names, into t_wcand: o's own on the file
 * overlapping the range (lk_deadlock_note() widened it to the waiters
 * that may hold them back now), or (into) those of other owners there
 * that conflict with the mode.  False: out of memory.
 */
static bool
lk_dl_candidates(struct lk_table *t, const struct lk_weak *wk)
{
	const struct lk_owner *o = wk->wk_owner;
	struct lk_waiter *w;
	/* The owner's list: its queued requests and unconfirmed grants. */
	size_t n = o->ow_nwaiters + o->ow_npending;

	t->t_wcand.v_len = 0;
	if (!wk->wk_into) {
		/* Counted against the bound like the searches. */
		t->t_ct.ct_queue_visits += n;
		if (!lk_vec_reserve(t, &t->t_wcand, sizeof(w), n))
			return false;
		for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
			if (!w->wa_granted && w->wa_file == wk->wk_file &&
			    lk_overlaps(w->wa_start, w->wa_end,
			    wk->wk_r.r_start, wk->wk_r.r_end))
				lk_dl_into_cb(w, t);
		return true;
	}
	if (!lk_vec_reserve(t, &t->t_wcand, sizeof(w),
	    wk->wk_file->fi_nwaiters))
		return false;
	(void)lk_wq_each(t, wk->wk_file, true, wk->wk_excl, wk->wk_r.r_start,
	    wk->wk_r.r_end, UINT64_MAX, lk_dl_into_cb, t);
	return true;
}

/*
 * The notes of edges into an owner (a reclaim, an undone grant) ahead of
 * those of weakened holds.  A reclaim that also downgrades notes both,
 * and the weakened hold's note reaches the owner's requests over the
 * waiters around what weakened, some of which lost nothing: searched
 * first, one of those could be dropped for a cycle the reclaim's edge
 * closed, where the other owner's request is the one to drop
 * (lk_take_apply_in()).  The passes of the re-check note only weakened
 * holds, so this order holds for the notes added later too.
 */
static void
lk_dl_into_first(struct lk_table *t)
{
	struct lk_weak *wk = t->t_weak.v_data, tmp;
	size_t i, n = 0;

	for (i = 0; i < t->t_weak.v_len; i++)
		if (wk[i].wk_into) {
			tmp = wk[n];
			wk[n++] = wk[i];
			wk[i] = tmp;
		}
}

/*
 * Search the noted requests again (see HOW IT WORKS): drop each that now
 * closes a cycle, then grant what the drops let through -- which may
 * weaken other owners' holds and note more, searched in turn.  Owners and
 * files stay allocated until the next call's lk_begin().
 */
void
lk_deadlock_recheck(struct lk_table *t, uint64_t now)
{
	struct lk_range wr, hull = { 0, 0 };
	struct lk_waiter *w;
	struct lk_weak wk;
	uint64_t visits0 = t->t_ct.ct_queue_visits;
	enum lk_status st;
	size_t i, j;
	bool any;

	lk_dl_into_first(t);
	for (i = 0; i < t->t_weak.v_len; i++) {
		if (t->t_ct.ct_queue_visits - visits0 > LK_DL_VISITS) {
			t->t_ct.ct_deadlock_giveups++;
			break;
		}
		/* A copy: a grant pass below may note more and move it. */
		wk = ((struct lk_weak *)t->t_weak.v_data)[i];
		if (!lk_dl_candidates(t, &wk)) {
			t->t_ct.ct_deadlock_giveups++;
			continue;
		}
		any = false;
		for (j = 0; j < t->t_wcand.v_len; j++) {
			w = ((struct lk_waiter **)t->t_wcand.v_data)[j];
			if (w->wa_owner == wk.wk_owner && wk.wk_into)
				continue;
			if (t->t_ct.ct_queue_visits - visits0 > LK_DL_VISITS) {
				t->t_ct.ct_deadlock_giveups++;
				goto out;
			}
			wr.r_start = w->wa_start;
			wr.r_end = w->wa_end;
			st = lk_dl_search(t, w->wa_owner, w->wa_file, &wr,
			    w->wa_excl, w);
			if (st == LK_OK)
				continue;
			/*
			 * Out of memory, the request stays queued, on a cycle
			 * perhaps: counted as a search given up, as a note
			 * not taken is (before, neither left a trace).
			 */
			if (st != LK_DEADLOCK || !lk_vec_reserve(t,
			    &t->t_dropped, sizeof(void *), 1)) {
				t->t_ct.ct_deadlock_giveups++;
				continue;
			}
			if (!any || wr.r_start < hull.r_start)
				hull.r_start = wr.r_start;
			if (!any || wr.r_end > hull.r_end)
				hull.r_end = wr.r_end;
			any = true;
			lk_deadlock_note_leave(t, w);
			lk_drop_udata(t, w->wa_udata);
			lk_waiter_free(t, w);
			t->t_ct.ct_deadlock_drops++;
			t->t_res.rs_ncycles++;
		}
		/* Younger requests may have waited behind the dropped ones. */
		if (any && wk.wk_file->fi_nwaiters > 0)
			lk_grant_pass(t, wk.wk_file, now, &hull);
	}
out:
	t->t_weak.v_len = 0;
}

/* lk_finish(), after lk_deadlock_recheck() for what the call weakened. */
enum lk_status
lk_finish_at(struct lk_table *t, enum lk_status st, uint64_t now,
    const struct lk_result **resp)
{
	if (t->t_weak.v_len > 0)
		lk_deadlock_recheck(t, now);
	return lk_finish(t, st, resp);
}
