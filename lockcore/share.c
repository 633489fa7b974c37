/*
 * share.c - NLM share reservations (SHARE/UNSHARE): per file, per share
 * owner (host, oh), an access mask and a deny mask.  Two reservations of
 * different owners conflict when one's access meets the other's deny.
 * A file has few of them, so a list is the right container.
 *
 * Reclaimable reservations (GRACE AND RECLAIM) are share nodes with
 * sh_reclaim set on the lists of fi_recl / ow_recl.  An owner has at most
 * one reservation on a file, live or reclaimable: a granted SHARE replaces
 * either.
 */
#include "lockcore.h"

#include <stdlib.h>
#include <string.h>

#include "lk_impl.h"

#define LK_SHARE_ALL	(LK_SHARE_R | LK_SHARE_W)

bool
lk_share_conflicts(const struct lk_share *s, uint8_t access, uint8_t deny)
{
	return (access & s->sh_deny) != 0 || (deny & s->sh_access) != 0;
}

void
lk_record_share(struct lk_record *rc, const struct lk_share *s)
{
	const struct lk_owner *o = s->sh_owner;

	memset(rc, 0, sizeof(*rc));
	rc->rc_kind = LK_REC_SHARE;
	rc->rc_host = o->ow_host->ho_id;
	rc->rc_oh = o->ow_oh;
	rc->rc_ohlen = o->ow_ohlen;
	rc->rc_fh = s->sh_file->fi_fh;
	rc->rc_fhlen = s->sh_file->fi_fhlen;
	rc->rc_access = s->sh_access;
	rc->rc_deny = s->sh_deny;
	rc->rc_epoch = s->sh_epoch;
	rc->rc_reclaim = s->sh_reclaim;
}

/* The heads of the file and owner lists s belongs on. */
static void
lk_share_heads(struct lk_share *s, struct lk_share ***fh, struct lk_share ***oh)
{
	if (s->sh_reclaim) {
		*fh = &s->sh_file->fi_recl->re_shares;
		*oh = &s->sh_owner->ow_recl->re_shares;
	} else {
		*fh = &s->sh_file->fi_shares;
		*oh = &s->sh_owner->ow_shares;
	}
}

/* Count s in (add) or out of the counters of its kind. */
static void
lk_share_count(struct lk_table *t, const struct lk_share *s, bool add)
{
	struct lk_owner *o = s->sh_owner;
	struct lk_file *f = s->sh_file;
	size_t *c[4], i;

	if (s->sh_reclaim) {
		c[0] = &f->fi_recl->re_nshares;
		c[1] = &o->ow_recl->re_nshares;
		c[2] = &o->ow_host->ho_nrshares;
		c[3] = &t->t_nrshares;
	} else {
		c[0] = &f->fi_nshares;
		c[1] = &o->ow_nshares;
		c[2] = &o->ow_host->ho_nshares;
		c[3] = &t->t_nshares;
	}
	for (i = 0; i < 4; i++)
		*c[i] = add ? *c[i] + 1 : *c[i] - 1;
}

/*
 * Link a new share node s (zeroed, then sh_access, sh_deny, sh_epoch and
 * sh_reclaim set) into the table (result slots reserved).  A reclaimable
 * one needs f->fi_recl and o->ow_recl.
 */
void
lk_share_add(struct lk_table *t, struct lk_share *s, struct lk_owner *o,
    struct lk_file *f)
{
	struct lk_share **added = t->t_adds.v_data, **fh, **oh;

	s->sh_owner = o;
	s->sh_file = f;
	s->sh_seq = ++t->t_sseq;
	lk_share_heads(s, &fh, &oh);
	s->sh_fprev = s->sh_oprev = NULL;
	s->sh_fnext = *fh;
	if (*fh != NULL)
		(*fh)->sh_fprev = s;
	*fh = s;
	s->sh_onext = *oh;
	if (*oh != NULL)
		(*oh)->sh_oprev = s;
	*oh = s;
	lk_owner_hold(t, o);
	lk_file_hold(t, f);
	lk_share_count(t, s, true);
	s->sh_fresh = 1;
	s->sh_addidx = (uint32_t)t->t_adds.v_len;
	added[t->t_adds.v_len++] = s;
}

static void
lk_share_unlink(struct lk_share *s)
{
	struct lk_share **fh, **oh;

	lk_share_heads(s, &fh, &oh);
	if (s->sh_fprev != NULL)
		s->sh_fprev->sh_fnext = s->sh_fnext;
	else
		*fh = s->sh_fnext;
	if (s->sh_fnext != NULL)
		s->sh_fnext->sh_fprev = s->sh_fprev;
	if (s->sh_oprev != NULL)
		s->sh_oprev->sh_onext = s->sh_onext;
	else
		*oh = s->sh_onext;
	if (s->sh_onext != NULL)
		s->sh_onext->sh_oprev = s->sh_oprev;
}

/* Remove and free a share; its record goes to rs_removed (reserved). */
void
lk_share_remove(struct lk_table *t, struct lk_share *s)
{
	struct lk_share **added = t->t_adds.v_data, *last;
	struct lk_record *rm = t->t_removed.v_data;
	struct lk_owner *o = s->sh_owner;
	struct lk_file *f = s->sh_file;

	if (s->sh_fresh) {
		last = added[--t->t_adds.v_len];
		added[s->sh_addidx] = last;
		last->sh_addidx = s->sh_addidx;
	} else
		lk_record_share(&rm[t->t_removed.v_len++], s);
	lk_share_unlink(s);
	lk_share_count(t, s, false);
	if (s->sh_reclaim) {
		lk_recl_put(t, &f->fi_recl);
		lk_recl_put(t, &o->ow_recl);
	}
	lk_owner_drop(t, o);
	lk_file_drop(t, f);
	lk_free(t, s);
}

static bool
lk_shares_fit(const struct lk_table *t, const struct lk_host *ho)
{
	const struct lk_config *cf = &t->t_cf;

	if (cf->cf_max_shares != 0 && t->t_nshares >= cf->cf_max_shares)
		return false;
	if (cf->cf_max_shares_per_host != 0 &&
	    ho->ho_nshares >= cf->cf_max_shares_per_host)
		return false;
	return true;
}

static bool
lk_sreq_ok(const struct lk_sharereq *req)
{
	return req->sq_fh != NULL && req->sq_fhlen > 0 &&
	    req->sq_fhlen <= LK_FH_MAX && req->sq_ohlen <= LK_OH_MAX &&
	    (req->sq_oh != NULL || req->sq_ohlen == 0) &&
	    (req->sq_access & ~LK_SHARE_ALL) == 0 &&
	    (req->sq_deny & ~LK_SHARE_ALL) == 0;
}

/* o's reservation on f in list (one of o's two lists), or NULL. */
struct lk_share *
lk_share_of(struct lk_share *list, const struct lk_owner *o,
    const struct lk_file *f)
{
	struct lk_share *s;

	for (s = list; s != NULL; s = s->sh_onext)
		if (s->sh_owner == o && s->sh_file == f)
			return s;
	return NULL;
}

/* Does s grant every access and deny bit of req? */
static bool
lk_share_covers(const struct lk_share *s, const struct lk_sharereq *req)
{
	return s != NULL && (req->sq_access & ~s->sh_access) == 0 &&
	    (req->sq_deny & ~s->sh_deny) == 0;
}

/*
 * The cf_reclaim_check part of a share reclaim (mine, rmine: o's live and
 * reclaimable reservation on f).  LK_OK, or LK_DENIED with rs_holder the
 * conflicting reclaimable share (zeroed when STRICT finds none in the way
 * but the request not on record).
 */
static enum lk_status
lk_share_reclaim_check(struct lk_table *t, struct lk_file *f,
    struct lk_owner *o, const struct lk_share *mine,
    const struct lk_share *rmine, const struct lk_sharereq *req)
{
	struct lk_share *c;

	switch (t->t_cf.cf_reclaim_check) {
	case LK_RECLAIM_OFF:
		return LK_OK;
	case LK_RECLAIM_STRICT:
		/* mine: a re-sent reclaim already granted. */
		if (lk_share_covers(rmine, req) || lk_share_covers(mine, req))
			return LK_OK;
		c = lk_rshare_find(f, o, req->sq_access, req->sq_deny,
		    LK_RQ_OTHER);
		break;
	case LK_RECLAIM_CONFLICT:
	default:
		if ((c = lk_rshare_find(f, o, req->sq_access, req->sq_deny,
		    LK_RQ_HOST)) == NULL)
			return LK_OK;
		break;
	}
	if (c != NULL)
		lk_record_share(&t->t_res.rs_holder, c);
	return LK_DENIED;
}

/*
 * Decide a SHARE: in grace a plain request meeting another owner's
 * reclaimable reservation is GRACE (before the live check, as for locks),
 * a reclaim is checked as GRACE AND RECLAIM says.  Sets *mp / *rmp to o's
 * live and reclaimable reservations on f.
 */
static enum lk_status
lk_share_decide(struct lk_table *t, struct lk_file *f, struct lk_owner *o,
    const struct lk_sharereq *req, struct lk_share **mp, struct lk_share **rmp)
{
	struct lk_share *s;

	*rmp = o->ow_recl == NULL ? NULL :
	    lk_share_of(o->ow_recl->re_shares, o, f);
	*mp = NULL;
	if (!req->sq_reclaim && f->fi_recl != NULL &&
	    (s = lk_rshare_find(f, o, req->sq_access, req->sq_deny,
	    LK_RQ_OTHER)) != NULL) {
		lk_record_share(&t->t_res.rs_holder, s);
		t->t_ct.ct_grace_denied++;
		return LK_GRACE;
	}
	for (s = f->fi_shares; s != NULL; s = s->sh_fnext) {
		if (s->sh_owner == o)
			*mp = s;
		else if (lk_share_conflicts(s, req->sq_access, req->sq_deny)) {
			lk_record_share(&t->t_res.rs_holder, s);
			t->t_ct.ct_reclaims_denied += req->sq_reclaim;
			return LK_DENIED;
		}
	}
	if (req->sq_reclaim &&
	    lk_share_reclaim_check(t, f, o, *mp, *rmp, req) != LK_OK) {
		t->t_ct.ct_reclaims_denied++;
		return LK_DENIED;
	}
	return LK_OK;
}

static enum lk_status
lk_share_do(struct lk_table *t, const struct lk_sharereq *req)
{
	struct lk_share *s, *mine, *rmine;
	struct lk_owner *o;
	struct lk_file *f;
	enum lk_status st;

	if (!lk_sreq_ok(req))
		return LK_INVAL;
	if (req->sq_reclaim && (!t->t_grace || t->t_grace_closed)) {
		/* As a lock reclaim (lk_lock_late): held already, granted. */
		if ((f = lk_file_find(t, req->sq_fh, req->sq_fhlen)) == NULL ||
		    (o = lk_owner_find(t, req->sq_host, 0, true, req->sq_oh,
		    req->sq_ohlen)) == NULL ||
		    (mine = lk_share_of(o->ow_shares, o, f)) == NULL ||
		    mine->sh_access != req->sq_access ||
		    mine->sh_deny != req->sq_deny)
			return LK_NOGRACE;
		t->t_ct.ct_reclaims++;
		return LK_OK;
	}
	if ((f = lk_file_get(t, req->sq_fh, req->sq_fhlen)) == NULL ||
	    (o = lk_owner_get(t, req->sq_host, 0, true, req->sq_oh,
	    req->sq_ohlen)) == NULL)
		return LK_NOMEM;
	if ((st = lk_share_decide(t, f, o, req, &mine, &rmine)) != LK_OK)
		return st;
	/* (o never has both: a live one replaced the reclaimable one.) */
	if (mine != NULL && mine->sh_access == req->sq_access &&
	    mine->sh_deny == req->sq_deny) {
		t->t_ct.ct_reclaims += req->sq_reclaim;
		return LK_OK;
	}
	/* Reclaims, like lock reclaims, are not limited. */
	if (!req->sq_reclaim && mine == NULL && !lk_shares_fit(t, o->ow_host))
		return LK_NOLOCKS;
	if (!lk_reserve(t, 1, 2) || (s = lk_alloc(t, sizeof(*s))) == NULL)
		return LK_NOMEM;
	if (mine != NULL)
		lk_share_remove(t, mine);
	if (rmine != NULL)
		lk_share_remove(t, rmine);
	s->sh_access = req->sq_access;
	s->sh_deny = req->sq_deny;
	s->sh_epoch = t->t_cf.cf_epoch;
	lk_share_add(t, s, o, f);
	t->t_ct.ct_reclaims += req->sq_reclaim;
	return LK_OK;
}

enum lk_status
lk_share(struct lk_table *t, const struct lk_sharereq *req,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish(t, lk_share_do(t, req), resp);
}

static enum lk_status
lk_unshare_do(struct lk_table *t, const struct lk_sharereq *req)
{
	struct lk_share *s, *rs;
	struct lk_owner *o;
	struct lk_file *f;

	if (!lk_sreq_ok(req))
		return LK_INVAL;
	if ((f = lk_file_find(t, req->sq_fh, req->sq_fhlen)) == NULL ||
	    (o = lk_owner_find(t, req->sq_host, 0, true, req->sq_oh,
	    req->sq_ohlen)) == NULL)
		return LK_OK;
	s = lk_share_of(o->ow_shares, o, f);
	rs = o->ow_recl == NULL ? NULL :
	    lk_share_of(o->ow_recl->re_shares, o, f);
	if (req->sq_before != 0 && s != NULL && s->sh_seq > req->sq_before)
		s = NULL;
	if (req->sq_before != 0 && rs != NULL && rs->sh_seq > req->sq_before)
		rs = NULL;
	if ((s != NULL || rs != NULL) && !lk_reserve(t, 0, 2))
		return LK_NOMEM;
	if (s != NULL)
		lk_share_remove(t, s);
	if (rs != NULL)
		lk_share_remove(t, rs);
	return LK_OK;
}

enum lk_status
lk_unshare(struct lk_table *t, const struct lk_sharereq *req,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish(t, lk_unshare_do(t, req), resp);
}
