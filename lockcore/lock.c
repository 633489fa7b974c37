/*
 * lock.c - LOCK, TEST and UNLOCK: conflict search and the POSIX
 * merge/split of one owner's ranges.
 *
 * HOW IT WORKS (lk_take, the owner's ranges after a grant)
 *   lk_collect gathers the owner's locks on the file that overlap or touch
 *   [s, e] (one interval query over [s-1, e+1], which also finds the first
 *   conflicting lock of another owner).  Then:
 *     same mode, overlapping or touching   removed; the new range grows to
 *                                           cover it (merge);
 *     other mode, overlapping              removed; the parts left of s and
 *                                           right of e stay as new records
 *                                           with the old mode and token;
 *     other mode, only touching            untouched.
 *   and one record [merged start, merged end] in the new mode, with a new
 *   token and the current epoch, is added.  At most two remainders exist
 *   (only the leftmost lock can start before s, only the rightmost end
 *   after e), so a take needs at most three new nodes; they are reserved,
 *   with the record slots, before anything changes: an ENOMEM or a limit
 *   leaves the table as it was.  lk_take_plan() and lk_take_apply() are
 *   the two halves, for callers that reserve for more than the take (a
 *   reclaim).  Unlock (lk_free_range) is the same without the new record,
 *   and also cuts the range out of the owner's reclaimable locks.
 */
#include "lockcore.h"

#include <stdlib.h>
#include <string.h>

#include "lk_impl.h"

bool
lk_conflicts(bool excl1, bool excl2)
{
	return excl1 || excl2;
}

bool
lk_overlaps(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2)
{
	return s1 <= e2 && s2 <= e1;
}

void
lk_record_lock(struct lk_record *rc, const struct lk_lock *l)
{
	const struct lk_owner *o = l->lo_owner;

	/* Field by field, no memset: this runs for every record reported. */
	rc->rc_host = o->ow_host->ho_id;
	rc->rc_oh = o->ow_oh;
	rc->rc_fh = l->lo_file->fi_fh;
	rc->rc_ohlen = o->ow_ohlen;
	rc->rc_fhlen = l->lo_file->fi_fhlen;
	rc->rc_start = l->lo_start;
	rc->rc_len = lk_record_len(l->lo_start, l->lo_end);
	rc->rc_token = l->lo_token;
	rc->rc_epoch = l->lo_epoch;
	rc->rc_svid = o->ow_svid;
	rc->rc_kind = LK_REC_LOCK;
	rc->rc_reclaim = l->lo_reclaim;
	rc->rc_excl = l->lo_excl;
	rc->rc_access = 0;
	rc->rc_deny = 0;
}

/* Count l in (d 1) or out (d -1, as size_t) of the counters of its kind. */
static inline void
lk_lock_count(struct lk_table *t, const struct lk_lock *l, size_t d)
{
	struct lk_owner *o = l->lo_owner;
	struct lk_file *f = l->lo_file;

	if (l->lo_reclaim) {
		f->fi_recl->re_nlocks += d;
		o->ow_recl->re_nlocks += d;
		o->ow_host->ho_nrlocks += d;
		t->t_nrlocks += d;
	} else {
		f->fi_nlocks += d;
		o->ow_nlocks += d;
		o->ow_host->ho_nlocks += d;
		t->t_nlocks += d;
	}
	if (d == 1 && t->t_nlocks + t->t_nrlocks > t->t_locks_peak)
		t->t_locks_peak = t->t_nlocks + t->t_nrlocks;
}

/*
 * Add a lock node (reserved by lk_reserve) made from p to the table and
 * the result.  A reclaimable one needs f->fi_recl and o->ow_recl.
 */
struct lk_lock *
lk_lock_add(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_piece *p)
{
	struct lk_lock *l = t->t_spare, **added = t->t_addl.v_data, **head;

	t->t_spare = l->lo_onext;
	t->t_nspare--;
	l->lo_start = p->p_r.r_start;
	l->lo_end = p->p_r.r_end;
	l->lo_token = p->p_token;
	l->lo_epoch = (uint32_t)p->p_epoch;	/* <= LK_EPOCH_MAX */
	l->lo_owner = o;
	l->lo_file = f;
	l->lo_excl = p->p_excl;
	l->lo_reclaim = p->p_reclaim;
	head = l->lo_reclaim ? &o->ow_recl->re_locks : &o->ow_locks;
	l->lo_oprev = NULL;
	l->lo_onext = *head;
	if (*head != NULL)
		(*head)->lo_oprev = l;
	*head = l;
	lk_tree_insert(t, l->lo_reclaim ? &f->fi_recl->re_root : &f->fi_root,
	    l);
	lk_owner_hold(t, o);
	lk_file_hold(t, f);
	lk_lock_count(t, l, 1);
	lk_ownc_add(t, l);
	l->lo_fresh = 1;
	l->lo_addidx = (uint32_t)t->t_addl.v_len;
	added[t->t_addl.v_len++] = l;
	return l;
}

/* Forget a fresh node's place in the added list (swap-remove). */
static void
lk_lock_unfresh(struct lk_table *t, struct lk_lock *l)
{
	struct lk_lock **added = t->t_addl.v_data;
	struct lk_lock *last = added[--t->t_addl.v_len];

	added[l->lo_addidx] = last;
	last->lo_addidx = l->lo_addidx;
	l->lo_fresh = 0;
}

/* Remove a lock from the table; its record goes to rs_removed. */
void
lk_lock_remove(struct lk_table *t, struct lk_lock *l)
{
	struct lk_record *rm = t->t_removed.v_data;
	struct lk_owner *o = l->lo_owner;
	struct lk_file *f = l->lo_file;

	if (l->lo_fresh)
		lk_lock_unfresh(t, l);
	else
		lk_record_lock(&rm[t->t_removed.v_len++], l);
	if (l->lo_oprev != NULL)
		l->lo_oprev->lo_onext = l->lo_onext;
	else if (l->lo_reclaim)
		o->ow_recl->re_locks = l->lo_onext;
	else
		o->ow_locks = l->lo_onext;
	if (l->lo_onext != NULL)
		l->lo_onext->lo_oprev = l->lo_oprev;
	lk_lock_count(t, l, (size_t)-1);
	lk_ownc_remove(t, l);
	if (l->lo_reclaim) {
		lk_tree_remove(t, &f->fi_recl->re_root, l);
		lk_recl_put(t, &f->fi_recl);
		lk_recl_put(t, &o->ow_recl);
	} else
		lk_tree_remove(t, &f->fi_root, l);
	lk_owner_drop(t, o);
	lk_file_drop(t, f);
	/*
	 * Back to its block at once (cheap), not to the spares: spares
	 * scattered over many blocks would keep them all from going back.
	 */
	lk_slab_put(t, &t->t_lslab, l);
}

struct lk_collect {
	struct lk_table		*c_t;
	const struct lk_owner	*c_owner;
	struct lk_range		 c_r;
	bool			 c_excl;
	bool			 c_nomem;
	struct lk_lock		*c_conflict;
};

static int
lk_collect_cb(struct lk_lock *l, void *arg)
{
	struct lk_collect *c = arg;
	struct lk_vec *v = &c->c_t->t_tmp;

	if (l->lo_owner == c->c_owner) {
		if (!lk_vec_reserve(c->c_t, v, sizeof(l), 1)) {
			c->c_nomem = true;
			return 1;
		}
		((struct lk_lock **)v->v_data)[v->v_len++] = l;
		return 0;
	}
	if (lk_overlaps(l->lo_start, l->lo_end, c->c_r.r_start, c->c_r.r_end) &&
	    lk_conflicts(c->c_excl, l->lo_excl)) {
		c->c_conflict = l;
		return 1;
	}
	return 0;
}

/*
 * Put o's locks on f that overlap or touch r into t_tmp, unless a lock of
 * another owner conflicts with (r, excl): then return LK_DENIED with it in
 * *conflictp (t_tmp incomplete).  LK_NOMEM possible.
 */
enum lk_status
lk_collect(struct lk_table *t, const struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, struct lk_lock **conflictp)
{
	struct lk_collect c = { t, o, *r, excl, false, NULL };
	uint64_t s = r->r_start, e = r->r_end;

	t->t_tmp.v_len = 0;
	*conflictp = NULL;
	lk_tree_overlap(f->fi_root, s == 0 ? 0 : s - 1,
	    e == UINT64_MAX ? e : e + 1, lk_collect_cb, &c);
	if (c.c_nomem)
		return LK_NOMEM;
	*conflictp = c.c_conflict;
	return c.c_conflict != NULL ? LK_DENIED : LK_OK;
}

static int
lk_conflict_cb(struct lk_lock *l, void *arg)
{
	struct lk_collect *c = arg;

	if (l->lo_owner != c->c_owner && lk_conflicts(c->c_excl, l->lo_excl)) {
		c->c_conflict = l;
		return 1;
	}
	return 0;
}

/* First lock of another owner than o on f that conflicts with (r, excl). */
struct lk_lock *
lk_held_conflict(struct lk_file *f, struct lk_owner *o,
    const struct lk_range *r, bool excl)
{
	struct lk_collect c = { NULL, o, *r, excl, false, NULL };

	lk_tree_overlap(f->fi_root, r->r_start, r->r_end, lk_conflict_cb, &c);
	return c.c_conflict;
}

static int
lk_own_any_cb(struct lk_lock *l, void *arg)
{
	const struct lk_collect *c = arg;

	return l->lo_owner == c->c_owner;
}

/* Does o hold a (live) lock on f overlapping r? */
bool
lk_held_own(struct lk_file *f, const struct lk_owner *o,
    const struct lk_range *r)
{
	struct lk_collect c = { NULL, o, *r, false, false, NULL };

	return lk_tree_overlap(f->fi_root, r->r_start, r->r_end, lk_own_any_cb,
	    &c) != 0;
}

/*
 * Does one of the locks in v (one owner's, disjoint, in start order) lie
 * on [a, b] in a mode that a request of mode excl conflicts with?  The
 * first that may is found by bisection: a request's FIFO check asks this
 * of every waiter it passes.
 */
static bool
lk_own_in_way(const struct lk_vec *v, uint64_t a, uint64_t b, bool excl)
{
	struct lk_lock **l = v->v_data;
	size_t lo = 0, hi = v->v_len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l[mid]->lo_end < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < v->v_len && l[lo]->lo_start <= b; lo++)
		if (lk_conflicts(excl, l[lo]->lo_excl))
			return true;
	return false;
}

static int
lk_lock_start_cmp(const void *a, const void *b)
{
	const struct lk_lock *x = *(struct lk_lock *const *)a;
	const struct lk_lock *y = *(struct lk_lock *const *)b;

	return x->lo_start < y->lo_start ? -1 : x->lo_start > y->lo_start;
}

/* The first of v's locks (start order) whose start is >= s. */
static size_t
lk_ownc_find(const struct lk_vec *v, uint64_t s)
{
	struct lk_lock **l = v->v_data;
	size_t lo = 0, hi = v->v_len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l[mid]->lo_start < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The next of the collections lk_own_all() keeps that holds live lock
 * l's owner's locks on l's file, from slot *ip on; NULL: no more.
 */
static struct lk_ownc *
lk_ownc_of(struct lk_table *t, const struct lk_lock *l, size_t *ip)
{
	struct lk_ownc *c;

	if (l->lo_reclaim)
		return NULL;
	while (*ip < LK_OWNC) {
		c = &t->t_ownc[(*ip)++];
		if (c->oc_o == l->lo_owner && c->oc_f == l->lo_file)
			return c;
	}
	return NULL;
}

/*
 * A live lock added: into the collections of its owner's locks on its
 * file that lk_own_all() keeps (out of memory, such a collection is
 * forgotten: collected again when next asked for).
 */
void
lk_ownc_add(struct lk_table *t, struct lk_lock *l)
{
	struct lk_ownc *c;
	struct lk_lock **v;
	size_t i = 0, at;

	while ((c = lk_ownc_of(t, l, &i)) != NULL) {
		if (!lk_vec_reserve(t, &c->oc_v, sizeof(l), 1)) {
			c->oc_o = NULL;
			continue;
		}
		v = c->oc_v.v_data;
		at = lk_ownc_find(&c->oc_v, l->lo_start);
		memmove(&v[at + 1], &v[at], (c->oc_v.v_len - at) * sizeof(l));
		v[at] = l;
		c->oc_v.v_len++;
	}
}

/* A live lock removed: out of those collections. */
void
lk_ownc_remove(struct lk_table *t, struct lk_lock *l)
{
	struct lk_ownc *c;
	struct lk_lock **v;
	size_t i = 0, at;

	while ((c = lk_ownc_of(t, l, &i)) != NULL) {
		v = c->oc_v.v_data;
		/* Starts are distinct but while a change is applied. */
		for (at = lk_ownc_find(&c->oc_v, l->lo_start);
		    at < c->oc_v.v_len && v[at] != l &&
		    v[at]->lo_start == l->lo_start; at++)
			;
		if (at == c->oc_v.v_len || v[at] != l) {
			c->oc_o = NULL;		/* not found: collect again */
			continue;
		}
		memmove(&v[at], &v[at + 1], (c->oc_v.v_len - at - 1) *
		    sizeof(l));
		c->oc_v.v_len--;
	}
}

/*
 * All of o's live locks on f, in start order, into *vp: from o's list
 * (then sorted) or from f's tree, whichever is shorter, each lock looked
 * at counted in ct_queue_visits.  The last LK_OWNC such collections are
 * kept, up to date as locks come and go (lk_ownc_add(), _remove()),
 * until the call ends (lk_begin), so that a FIFO check passing many
 * waiters, or a grant pass looking at many requests of a few owners,
 * collects each owner's once.  Before, one collection was kept, and
 * thrown away whenever any lock anywhere changed: a grant pass
 * collected and sorted an owner's 100,000 locks again after each grant
 * (43 ms for one UNLOCK), and a pass over waiters of two such owners in
 * turn at each waiter (154 ms, found by review).  A collection not kept
 * costs the locks it looks at, known before it starts: if that would take
 * ct_queue_visits past `limit' (UINT64_MAX: none), nothing is collected
 * or counted -- made first and counted after, one owner's 100,000 locks
 * took the deadlock search's bound of 65,536 steps that far past it
 * (found by review).  LK_OK, LK_NOMEM, or LK_NOLOCKS: past the limit.
 */
static enum lk_status
lk_own_all(struct lk_table *t, const struct lk_owner *o, struct lk_file *f,
    uint64_t limit, const struct lk_vec **vp)
{
	struct lk_ownc *c = NULL;
	struct lk_lock *l;
	uint64_t cost, visits = t->t_ct.ct_queue_visits;
	size_t i;

	for (i = 0; i < LK_OWNC; i++) {
		if (t->t_ownc[i].oc_o == o && t->t_ownc[i].oc_f == f) {
			c = &t->t_ownc[i];
			c->oc_used = ++t->t_ownc_clock;
			*vp = &c->oc_v;
			return LK_OK;
		}
		/* A free slot, or else the one asked for longest ago. */
		if (c == NULL || (c->oc_o != NULL &&
		    (t->t_ownc[i].oc_o == NULL ||
		    t->t_ownc[i].oc_used < c->oc_used)))
			c = &t->t_ownc[i];
	}
	cost = o->ow_nlocks <= f->fi_nlocks ? o->ow_nlocks : f->fi_nlocks;
	if (visits > limit || cost > limit - visits)
		return LK_NOLOCKS;
	c->oc_o = NULL;
	c->oc_v.v_len = 0;
	if (o->ow_nlocks <= f->fi_nlocks) {
		for (l = o->ow_locks; l != NULL; l = l->lo_onext) {
			t->t_ct.ct_queue_visits++;
			if (l->lo_file != f)
				continue;
			if (!lk_vec_reserve(t, &c->oc_v, sizeof(l), 1))
				return LK_NOMEM;
			((struct lk_lock **)c->oc_v.v_data)[c->oc_v.v_len++] =
			    l;
		}
		if (c->oc_v.v_len > 1)
			qsort(c->oc_v.v_data, c->oc_v.v_len, sizeof(l),
			    lk_lock_start_cmp);
	} else {
		t->t_ct.ct_queue_visits += f->fi_nlocks;
		if (lk_own_in(t, o, f->fi_root, 0, UINT64_MAX, &c->oc_v) !=
		    LK_OK)
			return LK_NOMEM;
	}
	c->oc_o = o;
	c->oc_f = f;
	c->oc_used = ++t->t_ownc_clock;
	*vp = &c->oc_v;
	return LK_OK;
}

/*
 * Does queued waiter w (of another owner) hold back o's request (r, excl)?
 * Into *blocksp.  Not when o holds a lock anywhere in w's range that w
 * conflicts with: w cannot be granted before o lets go of it, so o
 * waiting behind w would leave both waiting for ever (a reader upgrading
 * while a writer waits for it, or taking a write lock on other bytes of
 * the writer's range: a local fcntl() grants both).  That covers keeping
 * or weakening what o holds where the two overlap (bytes it holds in a
 * mode at least as strong as the request's, which w, conflicting with
 * the request, conflicts with too): neither is barging.  A lock of o in
 * w's range that w does not conflict with (both shared) does not count:
 * w does not wait for it.
 *
 * The answer depends on o's locks over all of w's range, so a change of
 * them far from a request of o's changes it: a lock o gains past w (a
 * waiter's grant, a reclaim) frees o's requests anywhere in w's range,
 * and the grant pass looks there again (lk_gain_span() in wait.c); a lock
 * o gives up or weakens may hold them back again, and may close a cycle:
 * lk_deadlock_note() has them searched again, over w's range too.
 *
 * Needs o's locks on the file overlapping or touching r in t_tmp
 * (lk_collect or lk_own_collect); when w reaches beyond those and o holds
 * other locks, all of o's locks on the file are collected once
 * (lk_own_all), unless that would take ct_queue_visits past `limit'
 * (UINT64_MAX: none; the deadlock search's bound).  o NULL: an owner the
 * table does not know (TEST), who holds nothing.  LK_OK, LK_NOMEM, or
 * LK_NOLOCKS: past the limit (either way *blocksp is then true).
 */
enum lk_status
lk_waiter_blocks(struct lk_table *t, const struct lk_waiter *w,
    const struct lk_owner *o, const struct lk_range *r, bool excl,
    uint64_t limit, bool *blocksp)
{
	uint64_t lo = r->r_start == 0 ? 0 : r->r_start - 1;
	uint64_t hi = r->r_end == UINT64_MAX ? UINT64_MAX : r->r_end + 1;
	const struct lk_vec *own;
	enum lk_status st;

	*blocksp = false;
	if (w->wa_owner == o ||
	    !lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end) ||
	    !lk_conflicts(excl, w->wa_excl) ||
	    lk_own_in_way(&t->t_tmp, w->wa_start, w->wa_end, w->wa_excl))
		return LK_OK;
	*blocksp = true;
	/* t_tmp has all of o's locks on w's range, or all there are. */
	if ((w->wa_start >= lo && w->wa_end <= hi) || o == NULL ||
	    t->t_tmp.v_len == o->ow_nlocks)
		return LK_OK;
	if ((st = lk_own_all(t, o, w->wa_file, limit, &own)) != LK_OK)
		return st;
	*blocksp = !lk_own_in_way(own, w->wa_start, w->wa_end, w->wa_excl);
	return LK_OK;
}

/*
 * With the FIFO policy, the first queued waiter ahead of `upto` (NULL: the
 * whole queue) that holds back o's request (r, excl), into *wp (NULL:
 * none); see lk_waiter_blocks() for what t_tmp must hold.  A request
 * outside the span of the file's queue (fi_wqlo..fi_wqhi) skips the walk:
 * a LOCK of byte 5 does not visit 100,000 waiters queued on byte 0.
 * Inside it, the walk looks at the first LK_WQ_RUN waiters in arrival
 * order (a queue on one byte answers at its head) and then goes from one
 * overlapping waiter of a conflicting mode to the next through the index
 * (wqidx.c): what it visits past the head is what overlaps r, not the
 * queue.  LK_OK or LK_NOMEM.
 */
enum lk_status
lk_queued_conflict(struct lk_table *t, const struct lk_file *f,
    const struct lk_owner *o, const struct lk_range *r, bool excl,
    const struct lk_waiter *upto, struct lk_waiter **wp)
{
	struct lk_waiter *w;
	uint64_t before = upto != NULL ? upto->wa_seq : UINT64_MAX;
	unsigned run = 0;
	bool blocks;

	*wp = NULL;
	if (t->t_cf.cf_policy != LK_POLICY_FIFO || f->fi_wq == NULL ||
	    !lk_overlaps(f->fi_wqlo, f->fi_wqhi, r->r_start, r->r_end))
		return LK_OK;
	for (w = f->fi_wq; w != NULL && w != upto; ) {
		t->t_ct.ct_queue_visits++;
		if (lk_waiter_blocks(t, w, o, r, excl, UINT64_MAX, &blocks) !=
		    LK_OK)
			return LK_NOMEM;
		if (blocks) {
			*wp = w;
			return LK_OK;
		}
		if (run < LK_WQ_RUN) {
			run++;
			w = w->wa_fnext;
		} else
			w = lk_wq_next(t, f, true, excl, r->r_start, r->r_end,
			    w->wa_seq, before);
	}
	return LK_OK;
}

/*
 * A limit, or (`unlock') what an unlock's split may reach: a sixteenth
 * more, at least one.  A client at its limit must still be able to
 * unlock the middle of a lock -- refused, the server would keep the whole
 * lock while the client (Linux drops its own copy whatever the answer)
 * believes that part free -- yet splits cannot grow the table without
 * bound either (unlocking every other byte of one lock).  0: none.
 * (Past max-locks itself, each host has its own such sixteenth:
 * lk_split_credit().)
 */
static size_t
lk_limit(size_t max, bool unlock)
{
	if (max == 0 || !unlock)
		return max;
	return max + max / 16 + 1 > max ? max + max / 16 + 1 : SIZE_MAX;
}

/*
 * The records ho's unlock splits have added past max-locks since the
 * table was last within it (at the start of a call).
 */
static size_t
lk_split_over(const struct lk_table *t, const struct lk_host *ho)
{
	return ho->ho_over_gen == t->t_over_gen ? ho->ho_over : 0;
}

/*
 * May ho's unlock split add `delta' records past max-locks?  Each host
 * may go a sixteenth of what it holds over it, at least one record: one
 * global allowance (a sixteenth of max-locks) could be used up by a few
 * hosts splitting their own locks, and then a mid-range UNLOCK of any
 * other host was refused, its lock kept whole while its client believed
 * that part free (found by review: ten hosts filling the table did it).
 * The table's overshoot stays bounded: at most a fifteenth of max-locks
 * and one record per host.
 */
static bool
lk_split_credit(const struct lk_table *t, const struct lk_host *ho,
    long delta)
{
	return lk_split_over(t, ho) + (size_t)delta <= ho->ho_nlocks / 16 + 1;
}

/* ho's split added `delta' records with the table past max-locks. */
static void
lk_split_charge(struct lk_table *t, struct lk_host *ho, size_t delta)
{
	ho->ho_over = lk_split_over(t, ho) + delta;
	ho->ho_over_gen = t->t_over_gen;
}

/* Would the lock counts stay within the limits after +delta? */
static bool
lk_locks_fit(const struct lk_table *t, const struct lk_host *ho, long delta,
    bool unlock)
{
	const struct lk_config *cf = &t->t_cf;
	size_t max;

	if (delta <= 0)
		return true;
	if ((max = cf->cf_max_locks) != 0 &&
	    t->t_nlocks + (size_t)delta > max &&
	    (!unlock || !lk_split_credit(t, ho, delta)))
		return false;
	if ((max = lk_limit(cf->cf_max_locks_per_host, unlock)) != 0 &&
	    ho->ho_nlocks + (size_t)delta > max)
		return false;
	return true;
}

/* Count what lk_take will add and remove, for limits and reservation. */
static inline void
lk_take_count(const struct lk_table *t, const struct lk_range *r, bool excl,
    size_t *adds, size_t *removes)
{
	struct lk_lock **v = t->t_tmp.v_data, *l;
	size_t i;

	*adds = 1;
	*removes = 0;
	for (i = 0; i < t->t_tmp.v_len; i++) {
		l = v[i];
		if (l->lo_excl == excl) {
			(*removes)++;
		} else if (lk_overlaps(l->lo_start, l->lo_end, r->r_start,
		    r->r_end)) {
			(*removes)++;
			*adds += (l->lo_start < r->r_start) +
			    (l->lo_end > r->r_end);
		}
	}
}

/* The owner's lock of mode excl covering all of r, from t_tmp, if any. */
struct lk_lock *
lk_covered(const struct lk_table *t, const struct lk_range *r, bool excl)
{
	struct lk_lock **v = t->t_tmp.v_data;
	size_t i;

	for (i = 0; i < t->t_tmp.v_len; i++)
		if (v[i]->lo_excl == excl && v[i]->lo_start <= r->r_start &&
		    v[i]->lo_end >= r->r_end)
			return v[i];
	return NULL;
}

/*
 * Append the parts of l outside r (at most two in all) to p[*np]; they
 * keep l's token, epoch, mode and kind.
 */
static inline void
lk_outside_in(const struct lk_lock *l, const struct lk_range *r,
    struct lk_piece *p, size_t *np)
{
	struct lk_piece keep = { { 0, 0 }, l->lo_token, l->lo_epoch,
	    l->lo_excl, l->lo_reclaim };

	if (l->lo_start < r->r_start) {
		p[*np] = keep;
		p[*np].p_r.r_start = l->lo_start;
		p[(*np)++].p_r.r_end = r->r_start - 1;
	}
	if (l->lo_end > r->r_end) {
		p[*np] = keep;
		p[*np].p_r.r_start = r->r_end + 1;
		p[(*np)++].p_r.r_end = l->lo_end;
	}
}

void
lk_outside(const struct lk_lock *l, const struct lk_range *r,
    struct lk_piece *p, size_t *np)
{
	lk_outside_in(l, r, p, np);
}

/*
 * First half of lk_take: decide, given o's collected locks in t_tmp and no
 * conflict.  Fills *pl: the covering lock when o already holds r in that
 * mode (nothing to do), else what to reserve.  Returns LK_OK, or
 * LK_NOLOCKS (limits and `limits`, or tokens exhausted).
 */
static inline enum lk_status
lk_take_plan_in(const struct lk_table *t, const struct lk_owner *o,
    const struct lk_range *r, bool excl, bool limits, struct lk_plan *pl)
{
	pl->pl_adds = pl->pl_removes = 0;
	if ((pl->pl_cover = lk_covered(t, r, excl)) != NULL)
		return LK_OK;
	lk_take_count(t, r, excl, &pl->pl_adds, &pl->pl_removes);
	if (limits && !lk_locks_fit(t, o->ow_host,
	    (long)pl->pl_adds - (long)pl->pl_removes, false))
		return LK_NOLOCKS;
	if (t->t_token == UINT64_MAX)
		return LK_NOLOCKS;
	return LK_OK;
}

/*
 * Second half: remove the collected locks (t_tmp) and add the merged range
 * (new token, current epoch) and the remainders.  pl's nodes and records
 * are reserved; this cannot fail.  Returns the lock now covering r.
 */
static inline struct lk_lock *
lk_take_apply_in(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, const struct lk_plan *pl)
{
	struct lk_lock **v = t->t_tmp.v_data, *l;
	struct lk_piece m = { *r, 0, t->t_cf.cf_epoch, excl, false };
	struct lk_piece rem[2];
	struct lk_range down = { UINT64_MAX, 0 };
	size_t i, nrem = 0;

	if (pl->pl_cover != NULL)
		return pl->pl_cover;
	for (i = 0; i < t->t_tmp.v_len; i++) {
		l = v[i];
		if (l->lo_excl == excl) {
			if (l->lo_start < m.p_r.r_start)
				m.p_r.r_start = l->lo_start;
			if (l->lo_end > m.p_r.r_end)
				m.p_r.r_end = l->lo_end;
		} else if (lk_overlaps(l->lo_start, l->lo_end, r->r_start,
		    r->r_end)) {
			lk_outside_in(l, r, rem, &nrem);
			/* A downgrade: the bytes of l in r weakened. */
			if (l->lo_excl)
				lk_hull_add(&down, l->lo_start > r->r_start ?
				    l->lo_start : r->r_start, l->lo_end <
				    r->r_end ? l->lo_end : r->r_end);
		} else
			continue;
		lk_lock_remove(t, l);
	}
	/*
	 * Once, however many exclusive locks r covered, and only for the
	 * bytes that weakened (their hull, and the waiters around them:
	 * lk_deadlock_note()): a queued request of o elsewhere in r lost
	 * nothing, and searching it again could drop it for a cycle that a
	 * reclaim's edge into o closed (the other owner's request is the one
	 * to drop then, lk_deadlock_note_into(), searched first).
	 */
	if (down.r_start <= down.r_end)
		lk_deadlock_note(t, o, f, &down);
	for (i = 0; i < nrem; i++)
		lk_lock_add(t, o, f, &rem[i]);
	m.p_token = ++t->t_token;
	return lk_lock_add(t, o, f, &m);
}

enum lk_status
lk_take_plan(const struct lk_table *t, const struct lk_owner *o,
    const struct lk_range *r, bool excl, bool limits, struct lk_plan *pl)
{
	return lk_take_plan_in(t, o, r, excl, limits, pl);
}

struct lk_lock *
lk_take_apply(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, const struct lk_plan *pl)
{
	return lk_take_apply_in(t, o, f, r, excl, pl);
}

/*
 * Give o the range r in mode excl on f, given its collected locks in t_tmp
 * and no conflict.  *coverp gets the lock now covering r.  Returns LK_OK,
 * LK_NOLOCKS (limits and `limits`, or tokens exhausted), LK_NOMEM.
 */
enum lk_status
lk_take(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, bool limits,
    struct lk_lock **coverp)
{
	struct lk_plan pl;
	enum lk_status st;

	if ((st = lk_take_plan_in(t, o, r, excl, limits, &pl)) != LK_OK)
		return st;
	if (!lk_prior_reserve(t, o, f, r) ||
	    !lk_reserve(t, pl.pl_adds, pl.pl_removes))
		return LK_NOMEM;
	*coverp = lk_take_apply_in(t, o, f, r, excl, &pl);
	lk_prior_set(o, f, r, excl);	/* o's own now, whatever its grants */
	return LK_OK;
}

struct lk_ocollect {
	struct lk_table		*oc_t;
	const struct lk_owner	*oc_owner;
	struct lk_vec		*oc_v;
	bool			 oc_nomem;
};

static int
lk_own_cb(struct lk_lock *l, void *arg)
{
	struct lk_ocollect *c = arg;

	if (l->lo_owner != c->oc_owner)
		return 0;
	if (!lk_vec_reserve(c->oc_t, c->oc_v, sizeof(l), 1)) {
		c->oc_nomem = true;
		return 1;
	}
	((struct lk_lock **)c->oc_v->v_data)[c->oc_v->v_len++] = l;
	return 0;
}

/*
 * Put o's locks in the tree root that overlap [s, e] into v (emptied
 * first), in start order.  LK_OK or LK_NOMEM.
 */
enum lk_status
lk_own_in(struct lk_table *t, const struct lk_owner *o, struct lk_bnode *root,
    uint64_t s, uint64_t e, struct lk_vec *v)
{
	struct lk_ocollect c = { t, o, v, false };

	v->v_len = 0;
	lk_tree_overlap(root, s, e, lk_own_cb, &c);
	return c.oc_nomem ? LK_NOMEM : LK_OK;
}

/*
 * The records taking r in mode excl would add for o now (negative: it
 * merges), into *deltap; o's locks touching r are left in t_tmp.  LK_OK
 * or LK_NOMEM.
 */
enum lk_status
lk_take_delta(struct lk_table *t, const struct lk_owner *o,
    struct lk_file *f, const struct lk_range *r, bool excl, long *deltap)
{
	size_t adds, removes;

	if (lk_own_collect(t, o, f, r) != LK_OK)
		return LK_NOMEM;
	lk_take_count(t, r, excl, &adds, &removes);
	*deltap = (long)adds - (long)removes;
	return LK_OK;
}

/* Put all of o's locks on f overlapping or touching r into t_tmp. */
enum lk_status
lk_own_collect(struct lk_table *t, const struct lk_owner *o,
    struct lk_file *f, const struct lk_range *r)
{
	uint64_t s = r->r_start, e = r->r_end;

	return lk_own_in(t, o, f->fi_root, s == 0 ? 0 : s - 1,
	    e == UINT64_MAX ? e : e + 1, &t->t_tmp);
}

/*
 * Unlock r for o on f: remove what o holds there, live or reclaimable, and
 * keep the parts outside.  Only the live split counts toward the limits
 * (raised by lk_limit()'s sixteenth), and only with `limits'.  Returns
 * LK_OK, LK_NOLOCKS (a split over them), LK_NOMEM.
 */
enum lk_status
lk_free_range(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool limits)
{
	struct lk_piece rem[2], rrem[2];
	struct lk_lock **v;
	size_t i, n, nrem = 0, nr = 0, nrrem = 0;

	if (lk_own_in(t, o, f->fi_root, r->r_start, r->r_end, &t->t_tmp) !=
	    LK_OK)
		return LK_NOMEM;
	if (f->fi_recl != NULL) {
		if (lk_recl_collect(t, o, f, r) != LK_OK)
			return LK_NOMEM;
		lk_recl_cut_plan(t, r, rrem, &nrrem);
		nr = t->t_rtmp.v_len;
	}
	v = t->t_tmp.v_data;
	n = t->t_tmp.v_len;
	for (i = 0; i < n; i++)
		lk_outside_in(v[i], r, rem, &nrem);
	if (limits && !lk_locks_fit(t, o->ow_host, (long)nrem - (long)n,
	    true))
		return LK_NOLOCKS;
	if (!lk_reserve(t, nrem + nrrem, n + nr))
		return LK_NOMEM;
	if (limits && nrem > n && t->t_cf.cf_max_locks != 0 &&
	    t->t_nlocks + (nrem - n) > t->t_cf.cf_max_locks)
		lk_split_charge(t, o->ow_host, nrem - n);
	for (i = 0; i < n; i++)
		lk_lock_remove(t, v[i]);
	for (i = 0; i < nrem; i++)
		lk_lock_add(t, o, f, &rem[i]);
	if (nr > 0)
		lk_recl_cut(t, o, f, rrem, nrrem);
	if (n > 0)
		lk_deadlock_note(t, o, f, r);
	return LK_OK;
}
