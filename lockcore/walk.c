/*
 * walk.c - enumeration for the status dump, and the invariant checker the
 * tests run after every step.
 */
#include "lockcore.h"

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

int
lk_host_foreach(const struct lk_table *t, lk_host_cb cb, void *arg)
{
	struct lk_host_info hi;
	const struct lk_host *ho;
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_hosts, ob, i) {
		if (ob->ob_refs == 0)
			continue;
		ho = (const struct lk_host *)ob;
		hi.hi_host = ho->ho_id;
		hi.hi_owners = ho->ho_nowners;
		hi.hi_locks = ho->ho_nlocks;
		hi.hi_waiters = ho->ho_nwaiters;
		hi.hi_shares = ho->ho_nshares;
		hi.hi_pending = ho->ho_npending;
		if ((rc = cb(&hi, arg)) != 0)
			return rc;
	}
	return 0;
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
		if ((rc = cb(&oi, arg)) != 0)
			return rc;
	}
	return 0;
}

struct lk_walk {
	lk_record_cb	 w_cb;
	void		*w_arg;
};

static int
lk_walk_lock_cb(struct lk_lock *l, void *arg)
{
	struct lk_walk *w = arg;
	struct lk_record rc;

	lk_record_lock(&rc, l);
	return w->w_cb(&rc, w->w_arg);
}

int
lk_lock_foreach(const struct lk_table *t, lk_record_cb cb, void *arg)
{
	struct lk_walk w = { cb, arg };
	struct lk_obj *ob;
	size_t i;
	int rc;

	LK_FOREACH_OBJ(&t->t_files, ob, i)
		if ((rc = lk_tree_walk(((struct lk_file *)ob)->fi_root,
		    lk_walk_lock_cb, &w)) != 0)
			return rc;
	return 0;
}

int
lk_share_foreach(const struct lk_table *t, lk_record_cb cb, void *arg)
{
	struct lk_record rc;
	struct lk_share *s;
	struct lk_obj *ob;
	size_t i;
	int r;

	LK_FOREACH_OBJ(&t->t_files, ob, i) {
		for (s = ((struct lk_file *)ob)->fi_shares; s != NULL;
		    s = s->sh_fnext) {
			lk_record_share(&rc, s);
			if ((r = cb(&rc, arg)) != 0)
				return r;
		}
	}
	return 0;
}

static int
lk_waiters_walk(const struct lk_waiter *w, lk_waiter_cb cb, void *arg)
{
	struct lk_waiter_info wi;
	int rc;

	for (; w != NULL; w = w->wa_fnext) {
		lk_record_waiter(&wi.wi_req, w);
		wi.wi_udata = w->wa_udata;
		wi.wi_since = w->wa_since;
		wi.wi_granted = w->wa_granted;
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

/* lk_table_check: every lock against everything overlapping it. */
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

	if (l->lo_file != f || l->lo_owner->ow_ob.ob_refs == 0)
		return 1;
	return lk_tree_overlap(f->fi_root, l->lo_start, l->lo_end,
	    lk_check_pair_cb, l);
}

/*
 * Queue well formed, counts right, and no queued waiter grantable.  Uses
 * the table's scratch vector, hence the non-const table.
 */
static bool
lk_check_queue(struct lk_table *t, struct lk_file *f)
{
	struct lk_waiter *w, *prev = NULL;
	struct lk_range r;
	size_t n = 0, np = 0;

	for (w = f->fi_wq; w != NULL; prev = w, w = w->wa_fnext, n++) {
		r.r_start = w->wa_start;
		r.r_end = w->wa_end;
		if (w->wa_granted || w->wa_file != f || w->wa_fprev != prev ||
		    lk_own_collect(t, w->wa_owner, f, &r) != LK_OK ||
		    (lk_held_conflict(f, w->wa_owner, &r, w->wa_excl) == NULL &&
		    lk_queued_conflict(t, f, w->wa_owner, &r, w->wa_excl,
		    w) == NULL))
			return false;
	}
	if (f->fi_wqtail != prev || n != f->fi_nwaiters)
		return false;
	for (w = f->fi_pend; w != NULL; w = w->wa_fnext, np++)
		if (!w->wa_granted || w->wa_file != f)
			return false;
	return np == f->fi_npending;
}

static bool
lk_check_shares(const struct lk_file *f)
{
	const struct lk_share *s, *s2;
	size_t n = 0;

	for (s = f->fi_shares; s != NULL; s = s->sh_fnext, n++) {
		if (s->sh_file != f)
			return false;
		for (s2 = s->sh_fnext; s2 != NULL; s2 = s2->sh_fnext)
			if (s2->sh_owner == s->sh_owner ||
			    lk_share_conflicts(s2, s->sh_access, s->sh_deny))
				return false;
	}
	return n == f->fi_nshares;
}

static bool
lk_check_file(struct lk_table *t, struct lk_file *f, size_t sum[4])
{
	size_t n;

	if (!lk_tree_check(f->fi_root, &n) || n != f->fi_nlocks ||
	    f->fi_ob.ob_refs != f->fi_nlocks + f->fi_nwaiters +
	    f->fi_npending + f->fi_nshares ||
	    lk_tree_walk(f->fi_root, lk_check_lock_cb, f) != 0 ||
	    !lk_check_queue(t, f) || !lk_check_shares(f))
		return false;
	sum[0] += f->fi_nlocks;
	sum[1] += f->fi_nwaiters;
	sum[2] += f->fi_npending;
	sum[3] += f->fi_nshares;
	return true;
}

static bool
lk_check_owner(const struct lk_owner *o, size_t sum[4])
{
	const struct lk_waiter *w;
	const struct lk_lock *l;
	const struct lk_share *s;
	size_t nl = 0, nw = 0, np = 0, ns = 0;

	for (l = o->ow_locks; l != NULL; l = l->lo_onext)
		nl += l->lo_owner == o ? 1 : 1000000;
	for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
		w->wa_granted ? np++ : nw++;
	for (s = o->ow_shares; s != NULL; s = s->sh_onext)
		ns += s->sh_owner == o ? 1 : 1000000;
	if (nl != o->ow_nlocks || nw != o->ow_nwaiters ||
	    np != o->ow_npending || ns != o->ow_nshares ||
	    o->ow_ob.ob_refs != nl + nw + np + ns)
		return false;
	sum[0] += nl;
	sum[1] += nw;
	sum[2] += np;
	sum[3] += ns;
	return true;
}

static bool
lk_check_host(const struct lk_host *ho)
{
	size_t sum[4] = { 0, 0, 0, 0 }, live = 0;
	const struct lk_owner *o;

	for (o = ho->ho_owners; o != NULL; o = o->ow_hnext) {
		if (o->ow_host != ho || !lk_check_owner(o, sum))
			return false;
		live += o->ow_ob.ob_refs != 0;
	}
	return live == ho->ho_nowners && live == ho->ho_ob.ob_refs &&
	    sum[0] == ho->ho_nlocks && sum[1] == ho->ho_nwaiters &&
	    sum[2] == ho->ho_npending && sum[3] == ho->ho_nshares;
}

enum lk_status
lk_table_check(const struct lk_table *ct)
{
	/* Only the scratch vector t_tmp is written. */
	struct lk_table *t = (struct lk_table *)(uintptr_t)ct;
	size_t fsum[4] = { 0, 0, 0, 0 }, hsum[4] = { 0, 0, 0, 0 }, i;
	const struct lk_host *ho;
	struct lk_obj *ob;

	LK_FOREACH_OBJ(&t->t_files, ob, i)
		if (!lk_check_file(t, (struct lk_file *)ob, fsum))
			return LK_INVAL;
	LK_FOREACH_OBJ(&t->t_hosts, ob, i) {
		ho = (const struct lk_host *)ob;
		if (!lk_check_host(ho))
			return LK_INVAL;
		hsum[0] += ho->ho_nlocks;
		hsum[1] += ho->ho_nwaiters;
		hsum[2] += ho->ho_npending;
		hsum[3] += ho->ho_nshares;
	}
	if (fsum[0] != t->t_nlocks || fsum[1] != t->t_nwaiters ||
	    fsum[2] != t->t_npending || fsum[3] != t->t_nshares ||
	    hsum[0] != t->t_nlocks || hsum[1] != t->t_nwaiters ||
	    hsum[2] != t->t_npending || hsum[3] != t->t_nshares)
		return LK_INVAL;
	return LK_OK;
}
