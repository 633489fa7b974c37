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
 *   token, is added.  At most two remainders exist (only the leftmost lock
 *   can start before s, only the rightmost end after e), so a take needs
 *   at most three new nodes; they are reserved, with the record slots,
 *   before anything changes: an ENOMEM or a limit leaves the table as it
 *   was.  Unlock (lk_free_range) is the same without the new record.
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

	memset(rc, 0, sizeof(*rc));
	rc->rc_kind = LK_REC_LOCK;
	rc->rc_host = o->ow_host->ho_id;
	rc->rc_svid = o->ow_svid;
	rc->rc_oh = o->ow_oh;
	rc->rc_ohlen = o->ow_ohlen;
	rc->rc_fh = l->lo_file->fi_fh;
	rc->rc_fhlen = l->lo_file->fi_fhlen;
	rc->rc_start = l->lo_start;
	rc->rc_len = lk_record_len(l->lo_start, l->lo_end);
	rc->rc_token = l->lo_token;
	rc->rc_excl = l->lo_excl;
}

/* Add a lock node (reserved by lk_reserve) to the table and the result. */
struct lk_lock *
lk_lock_add(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, uint64_t token)
{
	struct lk_lock *l = t->t_spare, **added = t->t_addl.v_data;
	struct lk_host *ho = o->ow_host;

	t->t_spare = l->lo_onext;
	t->t_nspare--;
	l->lo_start = r->r_start;
	l->lo_end = r->r_end;
	l->lo_token = token;
	l->lo_owner = o;
	l->lo_file = f;
	l->lo_excl = excl;
	l->lo_oprev = NULL;
	l->lo_onext = o->ow_locks;
	if (o->ow_locks != NULL)
		o->ow_locks->lo_oprev = l;
	o->ow_locks = l;
	lk_tree_insert(t, &f->fi_root, l);
	lk_owner_hold(t, o);
	lk_file_hold(t, f);
	o->ow_nlocks++;
	ho->ho_nlocks++;
	f->fi_nlocks++;
	t->t_nlocks++;
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
	lk_tree_remove(t, &f->fi_root, l);
	if (l->lo_oprev != NULL)
		l->lo_oprev->lo_onext = l->lo_onext;
	else
		o->ow_locks = l->lo_onext;
	if (l->lo_onext != NULL)
		l->lo_onext->lo_oprev = l->lo_oprev;
	o->ow_nlocks--;
	o->ow_host->ho_nlocks--;
	f->fi_nlocks--;
	t->t_nlocks--;
	lk_owner_drop(t, o);
	lk_file_drop(t, f);
	if (t->t_nspare < LK_SPARE_KEEP) {
		l->lo_onext = t->t_spare;
		t->t_spare = l;
		t->t_nspare++;
	} else
		lk_free(t, l);
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

/*
 * Do the owner's locks collected in t_tmp (disjoint, in start order) with a
 * mode at least as strong as excl cover all of [a, b]?
 */
static bool
lk_own_covers(const struct lk_table *t, uint64_t a, uint64_t b, bool excl)
{
	struct lk_lock **v = t->t_tmp.v_data;
	uint64_t cursor = a;
	size_t i;

	for (i = 0; i < t->t_tmp.v_len; i++) {
		if ((excl && !v[i]->lo_excl) || v[i]->lo_end < cursor)
			continue;
		if (v[i]->lo_start > cursor)
			return false;
		if (v[i]->lo_end >= b)
			return true;
		cursor = v[i]->lo_end + 1;
	}
	return false;
}

/*
 * Does queued waiter w (of another owner) hold back o's request (r, excl)?
 * Only for bytes o does not already hold in a mode at least as strong:
 * keeping or weakening what one holds (a downgrade) is not barging.
 * Needs o's locks on the file in t_tmp (lk_collect or lk_own_collect).
 */
bool
lk_waiter_blocks(const struct lk_table *t, const struct lk_waiter *w,
    const struct lk_owner *o, const struct lk_range *r, bool excl)
{
	uint64_t a, b;

	if (w->wa_owner == o ||
	    !lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end) ||
	    !lk_conflicts(excl, w->wa_excl))
		return false;
	a = w->wa_start > r->r_start ? w->wa_start : r->r_start;
	b = w->wa_end < r->r_end ? w->wa_end : r->r_end;
	return !lk_own_covers(t, a, b, excl);
}

/*
 * With the FIFO policy, the first queued waiter ahead of `upto` (NULL: the
 * whole queue) that holds back o's request (r, excl); see
 * lk_waiter_blocks() for what t_tmp must hold.
 */
struct lk_waiter *
lk_queued_conflict(const struct lk_table *t, const struct lk_file *f,
    const struct lk_owner *o, const struct lk_range *r, bool excl,
    const struct lk_waiter *upto)
{
	struct lk_waiter *w;

	if (t->t_cf.cf_policy != LK_POLICY_FIFO)
		return NULL;
	for (w = f->fi_wq; w != NULL && w != upto; w = w->wa_fnext)
		if (lk_waiter_blocks(t, w, o, r, excl))
			return w;
	return NULL;
}

/* Would the lock and waiter counts stay within the limits after +delta? */
static bool
lk_locks_fit(const struct lk_table *t, const struct lk_host *ho, long delta)
{
	const struct lk_config *cf = &t->t_cf;

	if (delta <= 0)
		return true;
	if (cf->cf_max_locks != 0 &&
	    t->t_nlocks + (size_t)delta > cf->cf_max_locks)
		return false;
	if (cf->cf_max_locks_per_host != 0 &&
	    ho->ho_nlocks + (size_t)delta > cf->cf_max_locks_per_host)
		return false;
	return true;
}

/* Count what lk_take will add and remove, for limits and reservation. */
static void
lk_take_plan(const struct lk_table *t, const struct lk_range *r, bool excl,
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

/* A piece of a lock left outside an unlocked or re-moded range. */
struct lk_piece {
	struct lk_range	 p_r;
	uint64_t	 p_token;
	bool		 p_excl;
};

/* Append the parts of l outside r (at most two in all) to p[*np]. */
static void
lk_outside(const struct lk_lock *l, const struct lk_range *r,
    struct lk_piece *p, size_t *np)
{
	if (l->lo_start < r->r_start) {
		p[*np].p_r.r_start = l->lo_start;
		p[*np].p_r.r_end = r->r_start - 1;
		p[*np].p_token = l->lo_token;
		p[(*np)++].p_excl = l->lo_excl;
	}
	if (l->lo_end > r->r_end) {
		p[*np].p_r.r_start = r->r_end + 1;
		p[*np].p_r.r_end = l->lo_end;
		p[*np].p_token = l->lo_token;
		p[(*np)++].p_excl = l->lo_excl;
	}
}

/*
 * Remove the collected locks (t_tmp) and add the merged range and the
 * remainders.  Everything is reserved; this cannot fail.
 */
static void
lk_take_apply(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, uint64_t token)
{
	struct lk_lock **v = t->t_tmp.v_data, *l;
	struct lk_range m = *r;
	struct lk_piece rem[2];
	size_t i, nrem = 0;

	for (i = 0; i < t->t_tmp.v_len; i++) {
		l = v[i];
		if (l->lo_excl == excl) {
			if (l->lo_start < m.r_start)
				m.r_start = l->lo_start;
			if (l->lo_end > m.r_end)
				m.r_end = l->lo_end;
		} else if (lk_overlaps(l->lo_start, l->lo_end, r->r_start,
		    r->r_end))
			lk_outside(l, r, rem, &nrem);
		else
			continue;
		lk_lock_remove(t, l);
	}
	for (i = 0; i < nrem; i++)
		lk_lock_add(t, o, f, &rem[i].p_r, rem[i].p_excl,
		    rem[i].p_token);
	lk_lock_add(t, o, f, &m, excl, token);
}

/*
 * Give o the range r in mode excl on f, given its collected locks in t_tmp
 * and no conflict.  *tokenp gets the covering lock's token.  Returns LK_OK,
 * LK_NOLOCKS (limits and `limits`, or tokens exhausted), LK_NOMEM.
 */
enum lk_status
lk_take(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl, bool limits, uint64_t *tokenp)
{
	struct lk_lock *cover;
	size_t adds, removes;

	if ((cover = lk_covered(t, r, excl)) != NULL) {
		*tokenp = cover->lo_token;
		return LK_OK;
	}
	lk_take_plan(t, r, excl, &adds, &removes);
	if (limits && !lk_locks_fit(t, o->ow_host, (long)adds - (long)removes))
		return LK_NOLOCKS;
	if (t->t_token == UINT64_MAX)
		return LK_NOLOCKS;
	if (!lk_reserve(t, adds, removes))
		return LK_NOMEM;
	*tokenp = ++t->t_token;
	lk_take_apply(t, o, f, r, excl, *tokenp);
	return LK_OK;
}

static int
lk_own_cb(struct lk_lock *l, void *arg)
{
	struct lk_collect *c = arg;
	struct lk_vec *v = &c->c_t->t_tmp;

	if (l->lo_owner != c->c_owner)
		return 0;
	if (!lk_vec_reserve(c->c_t, v, sizeof(l), 1)) {
		c->c_nomem = true;
		return 1;
	}
	((struct lk_lock **)v->v_data)[v->v_len++] = l;
	return 0;
}

/* Put all of o's locks on f overlapping or touching r into t_tmp. */
enum lk_status
lk_own_collect(struct lk_table *t, const struct lk_owner *o,
    struct lk_file *f, const struct lk_range *r)
{
	struct lk_collect c = { t, o, *r, false, false, NULL };
	uint64_t s = r->r_start, e = r->r_end;

	t->t_tmp.v_len = 0;
	lk_tree_overlap(f->fi_root, s == 0 ? 0 : s - 1,
	    e == UINT64_MAX ? e : e + 1, lk_own_cb, &c);
	return c.c_nomem ? LK_NOMEM : LK_OK;
}

/*
 * Unlock r for o on f: remove what o holds there, keep the parts outside.
 * Returns LK_OK, LK_NOLOCKS (a split over the limits), LK_NOMEM.
 */
enum lk_status
lk_free_range(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r)
{
	struct lk_collect c = { t, o, *r, false, false, NULL };
	struct lk_piece rem[2];
	struct lk_lock **v;
	size_t i, n, nrem = 0;

	t->t_tmp.v_len = 0;
	lk_tree_overlap(f->fi_root, r->r_start, r->r_end, lk_own_cb, &c);
	if (c.c_nomem)
		return LK_NOMEM;
	v = t->t_tmp.v_data;
	n = t->t_tmp.v_len;
	for (i = 0; i < n; i++)
		lk_outside(v[i], r, rem, &nrem);
	if (!lk_locks_fit(t, o->ow_host, (long)nrem - (long)n))
		return LK_NOLOCKS;
	if (!lk_reserve(t, nrem, n))
		return LK_NOMEM;
	for (i = 0; i < n; i++)
		lk_lock_remove(t, v[i]);
	for (i = 0; i < nrem; i++)
		lk_lock_add(t, o, f, &rem[i].p_r, rem[i].p_excl,
		    rem[i].p_token);
	return LK_OK;
}
