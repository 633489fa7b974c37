/*
 * deadlock.c - refuse a blocking request that would close a cycle in the
 * wait-for graph of owners.
 *
 * HOW IT WORKS
 *   Owner X waits for owner Y when one of X's queued waiters conflicts with
 *   a lock Y holds on that file or, with the FIFO policy, with an older
 *   queued waiter of Y there (X cannot be granted before Y's waiter).  The
 *   graph is never stored: a node's edges are recomputed from its queued
 *   waiters, the file trees and the file queues, so an edge is gone the
 *   moment its waiter is granted, cancelled or released.
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
 *   waiters (and index nodes) it gives up and lets the request queue, as
 *   Linux's own check gives up past a fixed depth.  Each owner reached
 *   has each of its waiters' blockers found by walking the queue, so one
 *   owner with n overlapping waiters made a single request of another
 *   owner cost O(n^2) -- 4,000 took 42 ms, the default 100,000 per host
 *   would hold the loop for tens of seconds.  A cycle longer than the
 *   bound is not reported (counted in ct_deadlock_giveups): its requests
 *   wait until a client gives up, as with LK_POLICY_BARGE below.
 *
 *   Checking at queue time is enough with FIFO: a grant (immediate or of a
 *   waiter) never conflicts with an older queued waiter of another owner,
 *   so it adds no edge out of an existing waiter, and younger waiters it
 *   conflicts with already had the edge to its owner.  With LK_POLICY_BARGE
 *   a grant can add edges; a cycle closed that way is not detected.
 */
#include "lockcore.h"

#include "lk_impl.h"

/* Waiters and index nodes one search may look at (a millisecond or so). */
#define LK_DL_VISITS	65536

struct lk_dl {
	struct lk_table		*d_t;
	const struct lk_owner	*d_x;
	bool			 d_excl;
	bool			 d_nomem;
};

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
};

static int
lk_dl_waiter_cb(struct lk_waiter *v, void *arg)
{
	struct lk_dlw *d = arg;

	if (lk_waiter_blocks(d->w_t, v, d->w_x, d->w_r, d->w_excl) &&
	    !lk_dl_push(d->w_t, v->wa_owner))
		return 1;
	return 0;
}

/*
 * Push every owner that blocks x's request (r, excl) queued before upto:
 * the queued waiters come from the index (wqidx.c), only those that
 * overlap r in a conflicting mode.
 */
static bool
lk_dl_blockers(struct lk_table *t, const struct lk_owner *x, struct lk_file *f,
    const struct lk_range *r, bool excl, const struct lk_waiter *upto)
{
	struct lk_dl d = { t, x, excl, false };
	struct lk_dlw dw = { t, x, r, excl };

	lk_tree_overlap(f->fi_root, r->r_start, r->r_end, lk_dl_lock_cb, &d);
	if (d.d_nomem)
		return false;
	if (t->t_cf.cf_policy != LK_POLICY_FIFO || f->fi_wq == NULL)
		return true;
	if (lk_own_collect(t, x, f, r) != LK_OK)
		return false;
	return lk_wq_each(t, f, true, excl, r->r_start, r->r_end,
	    upto != NULL ? upto->wa_seq : UINT64_MAX, lk_dl_waiter_cb,
	    &dw) == 0;
}

/*
 * Would queueing o's request (r, excl) on f deadlock?  Returns LK_OK,
 * LK_DEADLOCK or LK_NOMEM.
 */
enum lk_status
lk_deadlock_check(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl)
{
	struct lk_owner **stack, *x;
	struct lk_waiter *w;
	struct lk_range wr;
	uint64_t visits0 = t->t_ct.ct_queue_visits;

	/* Nothing can wait for o: no edge into it, no cycle through it. */
	if (o->ow_nlocks == 0 && o->ow_nwaiters == 0 && o->ow_npending == 0)
		return LK_OK;
	t->t_mark++;
	t->t_stack.v_len = 0;
	if (!lk_dl_blockers(t, o, f, r, excl, NULL))
		return LK_NOMEM;
	while (t->t_stack.v_len > 0) {
		stack = t->t_stack.v_data;
		x = stack[--t->t_stack.v_len];
		if (x == o)
			return LK_DEADLOCK;
		for (w = x->ow_waiters; w != NULL; w = w->wa_onext) {
			if (w->wa_granted)
				continue;
			wr.r_start = w->wa_start;
			wr.r_end = w->wa_end;
			if (!lk_dl_blockers(t, x, w->wa_file, &wr, w->wa_excl,
			    w))
				return LK_NOMEM;
			if (t->t_ct.ct_queue_visits - visits0 > LK_DL_VISITS) {
				t->t_ct.ct_deadlock_giveups++;
				return LK_OK;
			}
		}
	}
	return LK_OK;
}
