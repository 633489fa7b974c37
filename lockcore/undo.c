/*
 * undo.c - undoing an unconfirmed grant gives the owner back what it held.
 *
 * HOW IT WORKS
 *   A grant merges the waiter's range into its owner's locks (lk_take):
 *   where the owner already held part of the range, the lock it had and
 *   the one it asked for become one record.  Until the client acknowledges
 *   the grant it may refuse it (the process that waited is gone), never
 *   answer, or CANCEL the request; the grant is then undone, and undoing
 *   it must leave the owner what it held there before -- the client still
 *   holds those locks -- not unlock the whole range.  So every unconfirmed
 *   grant keeps a *prior*: the owner's locks inside the granted range that
 *   do not come from the grant, as (range, mode) pieces, disjoint, in
 *   start order, touching pieces of one mode and origin merged (from
 *   before the grant, or set since, below).  It is taken when the
 *   grant is made (the owner's locks there just before), and every later
 *   LOCK of the owner that overlaps the range (a LOCK, a reclaim, the grant
 *   of another of its waiters) sets its bytes in the prior of each such
 *   grant to its own mode: those bytes stay the owner's whatever becomes
 *   of the grant.  An UNLOCK overlapping the range ends the grant
 *   (lk_unlock_range()), so a prior never has to lose bytes.
 *
 *   lk_grant_undo() unlocks the range for the owner, ends its unconfirmed
 *   grants there, and takes each prior piece again, as a LOCK would (merged
 *   with what touches it, a new token).  An exclusive piece that a lock of
 *   another owner now overlaps comes back shared: that happens only when
 *   the grant was shared (it turned the owner's exclusive bytes into shared
 *   ones, and others may have shared them since), and shared is the most
 *   the table can give back without taking their locks away.  A piece a
 *   LOCK set since the grant is not merged with the older ones: the owner
 *   has held it in its mode ever since, and merged into an older
 *   exclusive piece that others now share, it came back shared with it
 *   although the client was told it holds it exclusive (found by mutation
 *   testing).  Everything the undo needs is reserved before anything
 *   changes.
 */
#include "lockcore.h"

#include <string.h>

#include "lk_impl.h"

/* Does piece a end right before b starts? */
static bool
lk_prior_touch(const struct lk_prior *a, const struct lk_prior *b)
{
	return a->pr_r.r_end != UINT64_MAX && a->pr_r.r_end + 1 ==
	    b->pr_r.r_start;
}

/*
 * The prior of a grant of r about to be made: the owner's locks that
 * lk_collect() left in t_tmp (disjoint, in start order, touching ones of a
 * mode already merged), cut to r.  *pp NULL when there are none.  False
 * when memory ran out (nothing allocated).
 */
bool
lk_prior_make(struct lk_table *t, const struct lk_range *r,
    struct lk_prior **pp, uint32_t *np)
{
	struct lk_lock **v = t->t_tmp.v_data;
	struct lk_prior *p;
	size_t i, n = 0;

	*pp = NULL;
	*np = 0;
	for (i = 0; i < t->t_tmp.v_len; i++)
		n += lk_overlaps(v[i]->lo_start, v[i]->lo_end, r->r_start,
		    r->r_end);
	if (n == 0)
		return true;
	if (n > UINT32_MAX - 2 ||
	    (p = lk_alloc(t, n * sizeof(*p))) == NULL)
		return false;
	for (i = 0, n = 0; i < t->t_tmp.v_len; i++) {
		if (!lk_overlaps(v[i]->lo_start, v[i]->lo_end, r->r_start,
		    r->r_end))
			continue;
		p[n].pr_r.r_start = v[i]->lo_start > r->r_start ?
		    v[i]->lo_start : r->r_start;
		p[n].pr_r.r_end = v[i]->lo_end < r->r_end ? v[i]->lo_end :
		    r->r_end;
		p[n].pr_excl = v[i]->lo_excl;
		p[n++].pr_later = false;
	}
	*pp = p;
	*np = (uint32_t)n;
	return true;
}

/*
 * Room for what lk_prior_set(o, f, r) may add (two pieces) in the prior of
 * each of o's unconfirmed grants on f that overlap r.  False when memory
 * ran out; what grew stays grown.
 */
bool
lk_prior_reserve(struct lk_table *t, struct lk_owner *o,
    const struct lk_file *f, const struct lk_range *r)
{
	struct lk_waiter *w;
	struct lk_prior *p;
	uint32_t cap;

	if (o->ow_npending == 0)
		return true;
	for (w = o->ow_waiters; w != NULL; w = w->wa_onext) {
		if (!w->wa_granted || w->wa_file != f ||
		    !lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end) ||
		    w->wa_capprior >= w->wa_nprior + 2)
			continue;
		if (w->wa_nprior > UINT32_MAX / 2 - 2)
			return false;
		cap = w->wa_nprior * 2 + 2;
		if ((p = lk_realloc(t, w->wa_prior, cap * sizeof(*p))) == NULL)
			return false;
		w->wa_prior = p;
		w->wa_capprior = cap;
	}
	return true;
}

/* Set the bytes of r in w's prior to mode excl (room reserved). */
static void
lk_prior_set_one(struct lk_waiter *w, const struct lk_range *r, bool excl)
{
	struct lk_prior *p = w->wa_prior, rep[3];
	uint32_t n = w->wa_nprior, i, j, k, nrep = 0;
	uint64_t s = r->r_start > w->wa_start ? r->r_start : w->wa_start;
	uint64_t e = r->r_end < w->wa_end ? r->r_end : w->wa_end;

	/* p[i..j) overlap [s, e]; the pieces before i end before s. */
	for (i = 0; i < n && p[i].pr_r.r_end < s; i++)
		continue;
	for (j = i; j < n && p[j].pr_r.r_start <= e; j++)
		continue;
	if (i < j && p[i].pr_r.r_start < s) {
		rep[nrep] = p[i];
		rep[nrep++].pr_r.r_end = s - 1;
	}
	rep[nrep].pr_r.r_start = s;
	rep[nrep].pr_r.r_end = e;
	rep[nrep].pr_excl = excl;
	rep[nrep++].pr_later = true;
	if (i < j && p[j - 1].pr_r.r_end > e) {
		rep[nrep] = p[j - 1];
		rep[nrep++].pr_r.r_start = e + 1;
	}
	/* p[i..j) -> rep[0..nrep): j - i >= nrep - 2, and room for 2 more. */
	memmove(&p[i + nrep], &p[j], (n - j) * sizeof(*p));
	memcpy(&p[i], rep, nrep * sizeof(*p));
	n = n - (j - i) + nrep;
	/*
	 * Merge touching pieces of one mode and origin around what changed:
	 * an exclusive piece from before the grant may come back shared
	 * (see HOW IT WORKS), one set since must not go with it.
	 */
	k = i > 0 ? i - 1 : 0;
	for (j = k + 1; j < n && j <= i + nrep; j++) {
		if (p[k].pr_excl == p[j].pr_excl &&
		    p[k].pr_later == p[j].pr_later &&
		    lk_prior_touch(&p[k], &p[j]))
			p[k].pr_r.r_end = p[j].pr_r.r_end;
		else
			p[++k] = p[j];
	}
	memmove(&p[k + 1], &p[j], (n - j) * sizeof(*p));
	w->wa_nprior = k + 1 + (n - j);
}

/*
 * o has just taken r in mode excl on f (a LOCK, a reclaim, another grant):
 * those bytes are its own, whatever becomes of its unconfirmed grants
 * there.  lk_prior_reserve() made the room.
 */
void
lk_prior_set(struct lk_owner *o, const struct lk_file *f,
    const struct lk_range *r, bool excl)
{
	struct lk_waiter *w;

	if (o->ow_npending == 0)
		return;
	for (w = o->ow_waiters; w != NULL; w = w->wa_onext)
		if (w->wa_granted && w->wa_file == f &&
		    lk_overlaps(w->wa_start, w->wa_end, r->r_start, r->r_end))
			lk_prior_set_one(w, r, excl);
}

/*
 * Undo o's unconfirmed grant w on f (lk_grant_undo(), lk_cancel()): see
 * HOW IT WORKS.  On failure nothing changed.
 */
enum lk_status
lk_undo_grant(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
    struct lk_waiter *w, uint64_t now)
{
	struct lk_range r = { w->wa_start, w->wa_end };
	struct lk_prior *pr = NULL;
	struct lk_lock *c;
	size_t np = w->wa_nprior, i, n, adds, removes;
	enum lk_status st;
	bool excl, gexcl = w->wa_excl;

	/* What the unlock removes and adds, then what each take may. */
	if (lk_own_in(t, o, f->fi_root, r.r_start, r.r_end, &t->t_tmp) !=
	    LK_OK)
		return LK_NOMEM;
	n = t->t_tmp.v_len;
	removes = n;
	if (f->fi_recl != NULL) {
		if (lk_recl_collect(t, o, f, &r) != LK_OK)
			return LK_NOMEM;
		removes += t->t_rtmp.v_len;
	}
	adds = 4 + 3 * np;
	removes += adds;
	if (np > 0 && t->t_token > UINT64_MAX - np)
		return LK_NOLOCKS;
	if (np > 0 && (pr = lk_alloc(t, np * sizeof(*pr))) == NULL)
		return LK_NOMEM;
	if (!lk_vec_reserve(t, &t->t_dropped, sizeof(void *),
	    lk_pending_count(o, f, &r)) ||
	    !lk_vec_reserve(t, &t->t_tmp, sizeof(struct lk_lock *),
	    n + adds) ||
	    !lk_reserve(t, adds, removes)) {
		lk_free(t, pr);
		return LK_NOMEM;
	}
	if (np > 0)
		memcpy(pr, w->wa_prior, np * sizeof(*pr));
	/*
	 * Not refused by the lock limits, as a grant is not: an undo gives
	 * back what the owner held before asking (the pieces the grant
	 * merged may count as several records again), and a grant the
	 * client refused must not stay held because the table is full.
	 */
	if ((st = lk_free_range(t, o, f, &r, false)) != LK_OK) {
		lk_free(t, pr);
		return st;
	}
	lk_pending_end_overlap(t, o, f, &r, NULL);	/* w (only w) */
	t->t_ct.ct_grants_undone++;
	for (i = 0; i < np; i++) {
		excl = pr[i].pr_excl;
		if (excl && lk_held_conflict(f, o, &pr[i].pr_r, true) != NULL) {
			excl = false;
			t->t_ct.ct_undo_shared++;
		}
		/* Reserved: neither can fail, nor meet a conflict. */
		(void)lk_collect(t, o, f, &pr[i].pr_r, excl, &c);
		(void)lk_take(t, o, f, &pr[i].pr_r, excl, false, &c);
		/*
		 * Only an exclusive piece under a shared grant is new to
		 * the others' requests: the grant covered every other piece
		 * in a mode at least as strong, so their edges into o were
		 * there before.  Noting those too had a request of another
		 * owner searched first and dropped for a cycle that o's
		 * weakened hold closed (the model, NLMD_TEST_LONG seed 33),
		 * where o's own request, whose edge is the new one, is the
		 * one to drop (lk_free_range() noted it).
		 */
		if (excl && !gexcl)
			lk_deadlock_note_into(t, o, f, &pr[i].pr_r, excl);
	}
	lk_free(t, pr);
	if (f->fi_nwaiters > 0)
		lk_grant_pass(t, f, now, &r);
	return LK_OK;
}
