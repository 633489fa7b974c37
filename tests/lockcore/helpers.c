/*
 * helpers.c - small wrappers that run a lockcore call and check the
 * table's invariants after it, so every unit test checks them too.
 */
#include "lktest.h"

#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

const struct lk_result *lt_res;

struct lk_lockreq
lt_req(uint64_t host, int32_t svid, const char *oh, const char *fh,
    uint64_t start, uint64_t len, bool excl, bool block)
{
	struct lk_lockreq rq;

	memset(&rq, 0, sizeof(rq));
	rq.rq_host = host;
	rq.rq_svid = svid;
	rq.rq_oh = oh;
	rq.rq_ohlen = strlen(oh);
	rq.rq_fh = fh;
	rq.rq_fhlen = strlen(fh);
	rq.rq_start = start;
	rq.rq_len = len;
	rq.rq_excl = excl;
	rq.rq_block = block;
	return rq;
}

static enum lk_status
lt_checked(struct lk_table *t, enum lk_status st)
{
	CU_ASSERT_EQUAL(lk_table_check(t), LK_OK);
	return st;
}

enum lk_status
lt_lock(struct lk_table *t, struct lk_lockreq rq, void *udata)
{
	rq.rq_udata = udata;
	return lt_checked(t, lk_lock(t, &rq, 1, &lt_res));
}

enum lk_status
lt_test(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_test(t, &rq, &lt_res));
}

enum lk_status
lt_unlock(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_unlock(t, &rq, 2, &lt_res));
}

enum lk_status
lt_unlock_cancel(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_unlock_cancel(t, &rq, 2, &lt_res));
}

enum lk_status
lt_cancel(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_cancel(t, &rq, 3, &lt_res));
}

enum lk_status
lt_confirm(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_grant_confirm(t, &rq, &lt_res));
}

static struct lk_sharereq
lt_sreq(uint64_t host, const char *oh, const char *fh, uint8_t access,
    uint8_t deny)
{
	struct lk_sharereq sq;

	memset(&sq, 0, sizeof(sq));
	sq.sq_host = host;
	sq.sq_oh = oh;
	sq.sq_ohlen = strlen(oh);
	sq.sq_fh = fh;
	sq.sq_fhlen = strlen(fh);
	sq.sq_access = access;
	sq.sq_deny = deny;
	return sq;
}

enum lk_status
lt_share(struct lk_table *t, uint64_t host, const char *oh, const char *fh,
    uint8_t access, uint8_t deny)
{
	struct lk_sharereq sq = lt_sreq(host, oh, fh, access, deny);

	return lt_checked(t, lk_share(t, &sq, &lt_res));
}

enum lk_status
lt_unshare(struct lk_table *t, uint64_t host, const char *oh, const char *fh)
{
	struct lk_sharereq sq = lt_sreq(host, oh, fh, 0, 0);

	return lt_checked(t, lk_unshare(t, &sq, &lt_res));
}

struct lt_find {
	uint64_t	 host;
	int32_t		 svid;
	const char	*oh;
	const char	*fh;
	uint64_t	 start;
	uint64_t	 len;
	int		 excl;		/* -1: any */
	bool		 any_range;
	size_t		 n;
	uint64_t	 token;
};

static int
lt_find_cb(const struct lk_record *rc, void *arg)
{
	struct lt_find *f = arg;

	if (rc->rc_host != f->host || rc->rc_svid != f->svid ||
	    rc->rc_ohlen != strlen(f->oh) ||
	    memcmp(rc->rc_oh, f->oh, rc->rc_ohlen) != 0 ||
	    rc->rc_fhlen != strlen(f->fh) ||
	    memcmp(rc->rc_fh, f->fh, rc->rc_fhlen) != 0)
		return 0;
	if (!f->any_range && (rc->rc_start != f->start ||
	    rc->rc_len != f->len || rc->rc_excl != f->excl))
		return 0;
	f->n++;
	f->token = rc->rc_token;
	return 0;
}

size_t
lt_nlocks(struct lk_table *t, uint64_t host, int32_t svid, const char *oh,
    const char *fh)
{
	struct lt_find f = { host, svid, oh, fh, 0, 0, -1, true, 0, 0 };

	lk_lock_foreach(t, lt_find_cb, &f);
	return f.n;
}

uint64_t
lt_token(struct lk_table *t, uint64_t host, int32_t svid, const char *oh,
    const char *fh, uint64_t start, uint64_t len, bool excl)
{
	struct lt_find f = { host, svid, oh, fh, start, len, excl, false, 0,
	    0 };

	lk_lock_foreach(t, lt_find_cb, &f);
	return f.n == 1 ? f.token : 0;
}

bool
lt_has(struct lk_table *t, uint64_t host, int32_t svid, const char *oh,
    const char *fh, uint64_t start, uint64_t len, bool excl)
{
	struct lt_find f = { host, svid, oh, fh, start, len, excl, false, 0,
	    0 };

	lk_lock_foreach(t, lt_find_cb, &f);
	return f.n == 1;
}

bool
lt_dropped(const void *udata)
{
	size_t i;

	for (i = 0; i < lt_res->rs_ndropped; i++)
		if (lt_res->rs_dropped[i] == udata)
			return true;
	return false;
}

bool
lt_granted(const void *udata)
{
	size_t i;

	for (i = 0; i < lt_res->rs_ngranted; i++)
		if (lt_res->rs_granted[i].gr_udata == udata)
			return true;
	return false;
}

uint64_t
lt_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t
lt_seed(uint64_t def)
{
	const char *s = getenv("NLMD_TEST_SEED");

	return s != NULL && *s != '\0' ? strtoull(s, NULL, 0) : def;
}

bool
lt_long(void)
{
	const char *s = getenv("NLMD_TEST_LONG");

	return s != NULL && *s != '\0' && strcmp(s, "0") != 0;
}
