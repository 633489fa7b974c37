/*
 * grace.c - reclaimable records (lockcore.h, GRACE AND RECLAIM; lk_impl.h,
 * RECLAIMABLE RECORDS): their side containers, the queries the LOCK, TEST,
 * SHARE and UNLOCK paths make against them, cutting a range out of an
 * owner's reclaimable locks, the reclaim checks, and the end of grace.
 *
 * Nothing here runs outside grace: every caller first finds fi_recl (or
 * t_grace) unset.
 */
#include "lockcore.h"

#include "lk_impl.h"

/* Make sure *rp exists (allocated empty).  false when out of memory. */
bool
lk_recl_get(struct lk_table *t, struct lk_recl **rp)
{
	if (*rp == NULL)
		*rp = lk_alloc(t, sizeof(**rp));
	return *rp != NULL;
}

/* Free *rp once it holds nothing: fi_recl / ow_recl never stay empty. */
void
lk_recl_put(struct lk_table *t, struct lk_recl **rp)
{
	if (*rp != NULL && (*rp)->re_nlocks == 0 && (*rp)->re_nshares == 0) {
		lk_free(t, *rp);
		*rp = NULL;
	}
}

/* Does reclaimable lock l answer query q for o's request (excl)? */
static bool
lk_recl_matches(const struct lk_lock *l, const struct lk_owner *o, bool excl,
    enum lk_recl_q q)
{
	bool conflict = lk_conflicts(excl, l->lo_excl);

	switch (q) {
	case LK_RQ_OWN:
		return l->lo_owner == o;
	case LK_RQ_GRACE:
		return l->lo_owner == o || conflict;
	case LK_RQ_OTHER:
		return l->lo_owner != o && conflict;
	case LK_RQ_HOST:
		break;
	}
	return conflict && l->lo_owner->ow_host != o->ow_host;
}

struct lk_rfind {
	const struct lk_owner	*q_owner;
	bool			 q_excl;
	enum lk_recl_q		 q_q;
	struct lk_lock		*q_hit;
};

static int
lk_rfind_cb(struct lk_lock *l, void *arg)
{
	struct lk_rfind *q = arg;

	if (!lk_recl_matches(l, q->q_owner, q->q_excl, q->q_q))
		return 0;
	q->q_hit = l;
	return 1;
}

/*
 * The first reclaimable lock on f (in start order) overlapping r that
 * answers q for o's request in mode excl; NULL if none.  o may be NULL
 * (an owner the table does not know) for LK_RQ_OTHER.
 */
struct lk_lock *
lk_recl_find(const struct lk_file *f, const struct lk_owner *o,
    const struct lk_range *r, bool excl, enum lk_recl_q q)
{
	struct lk_rfind rf = { o, excl, q, NULL };

	if (f->fi_recl == NULL)
		return NULL;
	lk_tree_overlap(f->fi_recl->re_root, r->r_start, r->r_end,
	    lk_rfind_cb, &rf);
	return rf.q_hit;
}

/*
 * The reclaimable share on f that answers q for o's reservation
 * (access, deny): LK_RQ_OWN o's own; LK_RQ_OTHER / LK_RQ_HOST one of another
 * owner / host that conflicts.  NULL if none.
 */
struct lk_share *
lk_rshare_find(const struct lk_file *f, const struct lk_owner *o,
    uint8_t access, uint8_t deny, enum lk_recl_q q)
{
	struct lk_share *s;

	if (f->fi_recl == NULL)
		return NULL;
	for (s = f->fi_recl->re_shares; s != NULL; s = s->sh_fnext) {
		if (q == LK_RQ_OWN) {
			if (s->sh_owner == o)
				return s;
		} else if (lk_share_conflicts(s, access, deny) &&
		    (q == LK_RQ_HOST ? s->sh_owner->ow_host != o->ow_host :
		    s->sh_owner != o))
			return s;
	}
	return NULL;
}

/*
 * Put o's reclaimable locks on f that overlap r into t_rtmp, in start
 * order (none when f has none).  LK_OK or LK_NOMEM.
 */
enum lk_status
lk_recl_collect(struct lk_table *t, const struct lk_owner *o,
    const struct lk_file *f, const struct lk_range *r)
{
	if (f->fi_recl == NULL) {
		t->t_rtmp.v_len = 0;
		return LK_OK;
	}
	return lk_own_in(t, o, f->fi_recl->re_root, r->r_start, r->r_end,
	    &t->t_rtmp);
}

/*
 * The pieces of the collected reclaimable locks (t_rtmp) left outside r:
 * at most two, into p[*np].  With lk_recl_cut(), t_rtmp.v_len removals and
 * *np additions are to be reserved.
 */
void
lk_recl_cut_plan(const struct lk_table *t, const struct lk_range *r,
    struct lk_piece *p, size_t *np)
{
	struct lk_lock **v = t->t_rtmp.v_data;
	size_t i;

	*np = 0;
	for (i = 0; i < t->t_rtmp.v_len; i++)
		lk_outside(v[i], r, p, np);
}

/*
 * Replace the collected reclaimable locks (t_rtmp) by their pieces p[np]
 * (reserved).  The pieces go in first, so that fi_recl / ow_recl, which
 * the last removal would free, are still there for them.
 */
void
lk_recl_cut(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_piece *p, size_t np)
{
	struct lk_lock **v = t->t_rtmp.v_data;
	size_t i;

	for (i = 0; i < np; i++)
		lk_lock_add(t, o, f, &p[i]);
	for (i = 0; i < t->t_rtmp.v_len; i++)
		lk_lock_remove(t, v[i]);
	t->t_rtmp.v_len = 0;
}

/*
 * Do o's live locks (t_tmp, from lk_collect) and reclaimable locks (t_rtmp)
 * together cover all of r in a mode at least as strong as excl?  Both are
 * in start order, and all of them are disjoint (an owner's live and
 * reclaimable locks never overlap), so a merge of the two is too.
 */
static bool
lk_recl_covers(const struct lk_table *t, const struct lk_range *r, bool excl)
{
	struct lk_lock **a = t->t_tmp.v_data, **b = t->t_rtmp.v_data, *l;
	size_t i = 0, j = 0, na = t->t_tmp.v_len, nb = t->t_rtmp.v_len;
	uint64_t cursor = r->r_start;

	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i]->lo_start <= b[j]->lo_start))
			l = a[i++];
		else
			l = b[j++];
		if ((excl && !l->lo_excl) || l->lo_end < cursor)
			continue;
		if (l->lo_start > cursor)
			return false;
		if (l->lo_end >= r->r_end)
			return true;
		cursor = l->lo_end + 1;
	}
	return false;
}

/*
 * The cf_reclaim_check part of deciding a lock reclaim, after the live
 * check (lk_collect: o's live locks in t_tmp) and lk_recl_collect().
 * Returns LK_OK, or LK_DENIED with rs_holder set to the conflicting
 * reclaimable lock (left zeroed when STRICT finds the range not on record
 * and no other owner's record in the way).
 */
enum lk_status
lk_recl_lock_check(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    const struct lk_range *r, bool excl)
{
	struct lk_lock *c;

	switch (t->t_cf.cf_reclaim_check) {
	case LK_RECLAIM_OFF:
		return LK_OK;
	case LK_RECLAIM_STRICT:
		if (lk_recl_covers(t, r, excl))
			return LK_OK;
		c = lk_recl_find(f, o, r, excl, LK_RQ_OTHER);
		break;
	case LK_RECLAIM_CONFLICT:
	default:
		if ((c = lk_recl_find(f, o, r, excl, LK_RQ_HOST)) == NULL)
			return LK_OK;
		break;
	}
	if (c != NULL)
		lk_record_lock(&t->t_res.rs_holder, c);
	return LK_DENIED;
}

#define LK_FOREACH_FILE(t, ob, i)					\
	for ((i) = 0; (i) <= (t)->t_files.h_mask; (i)++)		\
		for ((ob) = (t)->t_files.h_tab[(i)]; (ob) != NULL;	\
		    (ob) = (ob)->ob_next)

/*
 * Remove up to `max' reclaimable records of f (removals reserved);
 * returns how many.
 */
static size_t
lk_file_recl_drop(struct lk_table *t, struct lk_file *f, size_t max)
{
	size_t n = 0;

	while (f->fi_recl != NULL && n < max) {
		if (f->fi_recl->re_root != NULL)
			lk_lock_remove(t, lk_tree_first(f->fi_recl->re_root));
		else
			lk_share_remove(t, f->fi_recl->re_shares);
		n++;
	}
	return n;
}

/* Remove every reclaimable record of f (removals reserved). */
void
lk_file_recl_clear(struct lk_table *t, struct lk_file *f)
{
	(void)lk_file_recl_drop(t, f, SIZE_MAX);
}

/*
 * End grace, `max' records at a time.  The first call closes grace to
 * reclaims; each removes up to `max' reclaimable records, walking the file
 * table from where the last call stopped (t_grace_cursor), so that every
 * call costs what it removes plus the buckets it passes, and all of them
 * together one walk of the table.  When none is left grace is over.
 * Everything is reserved before the first removal; the grant passes at the
 * end are the usual release epilogue (by the GRACE rules no waiter was
 * ever held back by a reclaimable record, so they find the queues as they
 * were).
 */
static enum lk_status
lk_grace_drop_do(struct lk_table *t, size_t max, uint64_t now)
{
	size_t i, n = t->t_nrlocks + t->t_nrshares, done = 0;
	struct lk_file *f;
	struct lk_obj *ob;

	if (!t->t_grace)
		return LK_OK;
	if (max > n)
		max = n;
	t->t_touched.v_len = 0;
	if (!lk_reserve(t, 0, max) || !lk_vec_reserve(t, &t->t_touched,
	    sizeof(struct lk_file *), max))
		return LK_NOMEM;
	t->t_grace_closed = true;
	t->t_mark++;
	for (i = t->t_grace_cursor; i <= t->t_files.h_mask && done < max;
	    i++) {
		for (ob = t->t_files.h_tab[i]; ob != NULL && done < max;
		    ob = ob->ob_next) {
			f = (struct lk_file *)ob;
			if (f->fi_recl == NULL)
				continue;
			if (f->fi_nwaiters > 0)
				lk_file_touch(t, f, 0, UINT64_MAX);
			done += lk_file_recl_drop(t, f, max - done);
		}
		if (done == max)
			break;
	}
	t->t_grace_cursor = i;
	t->t_ct.ct_grace_dropped += done;
	if (t->t_nrlocks + t->t_nrshares == 0) {
		t->t_grace = t->t_grace_closed = false;
		t->t_grace_cursor = 0;
	}
	lk_touched_grant(t, now);
	return LK_OK;
}

enum lk_status
lk_grace_drop(struct lk_table *t, size_t max, uint64_t now,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish_at(t, lk_grace_drop_do(t, max, now), now, resp);
}

enum lk_status
lk_grace_end(struct lk_table *t, uint64_t now, const struct lk_result **resp)
{
	return lk_grace_drop(t, SIZE_MAX, now, resp);
}

bool
lk_in_grace(const struct lk_table *t)
{
	return t->t_grace;
}

enum lk_status
lk_set_epoch(struct lk_table *t, uint64_t epoch)
{
	if (epoch > LK_EPOCH_MAX)
		return LK_INVAL;
	t->t_cf.cf_epoch = epoch;
	return LK_OK;
}
