/*
 * share.c - NLM share reservations (SHARE/UNSHARE): per file, per share
 * owner (host, oh), an access mask and a deny mask.  Two reservations of
 * different owners conflict when one's access meets the other's deny.
 * A file has few of them, so a list is the right container.
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
}

/* Link a new share node s into the table (result slots reserved). */
void
lk_share_add(struct lk_table *t, struct lk_share *s, struct lk_owner *o,
    struct lk_file *f, uint8_t access, uint8_t deny)
{
	struct lk_share **added = t->t_adds.v_data;

	memset(s, 0, sizeof(*s));
	s->sh_owner = o;
	s->sh_file = f;
	s->sh_access = access;
	s->sh_deny = deny;
	s->sh_fnext = f->fi_shares;
	if (f->fi_shares != NULL)
		f->fi_shares->sh_fprev = s;
	f->fi_shares = s;
	s->sh_onext = o->ow_shares;
	if (o->ow_shares != NULL)
		o->ow_shares->sh_oprev = s;
	o->ow_shares = s;
	lk_owner_hold(t, o);
	lk_file_hold(t, f);
	o->ow_nshares++;
	o->ow_host->ho_nshares++;
	f->fi_nshares++;
	t->t_nshares++;
	s->sh_fresh = 1;
	s->sh_addidx = (uint32_t)t->t_adds.v_len;
	added[t->t_adds.v_len++] = s;
}

static void
lk_share_unlink(struct lk_share *s)
{
	if (s->sh_fprev != NULL)
		s->sh_fprev->sh_fnext = s->sh_fnext;
	else
		s->sh_file->fi_shares = s->sh_fnext;
	if (s->sh_fnext != NULL)
		s->sh_fnext->sh_fprev = s->sh_fprev;
	if (s->sh_oprev != NULL)
		s->sh_oprev->sh_onext = s->sh_onext;
	else
		s->sh_owner->ow_shares = s->sh_onext;
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
	o->ow_nshares--;
	o->ow_host->ho_nshares--;
	f->fi_nshares--;
	t->t_nshares--;
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

static enum lk_status
lk_share_do(struct lk_table *t, const struct lk_sharereq *req)
{
	struct lk_share *s, *mine = NULL;
	struct lk_owner *o;
	struct lk_file *f;

	if (!lk_sreq_ok(req))
		return LK_INVAL;
	if ((f = lk_file_get(t, req->sq_fh, req->sq_fhlen)) == NULL ||
	    (o = lk_owner_get(t, req->sq_host, 0, true, req->sq_oh,
	    req->sq_ohlen)) == NULL)
		return LK_NOMEM;
	for (s = f->fi_shares; s != NULL; s = s->sh_fnext) {
		if (s->sh_owner == o)
			mine = s;
		else if (lk_share_conflicts(s, req->sq_access, req->sq_deny)) {
			lk_record_share(&t->t_res.rs_holder, s);
			return LK_DENIED;
		}
	}
	if (mine != NULL && mine->sh_access == req->sq_access &&
	    mine->sh_deny == req->sq_deny)
		return LK_OK;
	if (mine == NULL && !lk_shares_fit(t, o->ow_host))
		return LK_NOLOCKS;
	if (!lk_reserve(t, 1, 1) || (s = lk_alloc(t, sizeof(*s))) == NULL)
		return LK_NOMEM;
	if (mine != NULL)
		lk_share_remove(t, mine);
	lk_share_add(t, s, o, f, req->sq_access, req->sq_deny);
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
	struct lk_share *s;
	struct lk_owner *o;
	struct lk_file *f;

	if (!lk_sreq_ok(req))
		return LK_INVAL;
	if ((f = lk_file_find(t, req->sq_fh, req->sq_fhlen)) == NULL ||
	    (o = lk_owner_find(t, req->sq_host, 0, true, req->sq_oh,
	    req->sq_ohlen)) == NULL)
		return LK_OK;
	for (s = o->ow_shares; s != NULL; s = s->sh_onext) {
		if (s->sh_file == f) {
			if (!lk_reserve(t, 0, 1))
				return LK_NOMEM;
			lk_share_remove(t, s);
			break;
		}
	}
	return LK_OK;
}

enum lk_status
lk_unshare(struct lk_table *t, const struct lk_sharereq *req,
    const struct lk_result **resp)
{
	lk_begin(t);
	return lk_finish(t, lk_unshare_do(t, req), resp);
}
