/*
 * helpers.c - small wrappers that run a lockcore call and check the
 * table's invariants after it, so every unit test checks them too.
 */
#include "lktest.h"

#include <stdarg.h>
#include <stdio.h>
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
lt_undo(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_grant_undo(t, &rq, 3, &lt_res));
}

enum lk_status
lt_confirm(struct lk_table *t, struct lk_lockreq rq)
{
	return lt_checked(t, lk_grant_confirm(t, &rq, 3, &lt_res));
}

struct lk_sharereq
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

/* ---- allocation failure injection and table snapshots ---- */

static void *
lt_fail_malloc(size_t n, void *arg)
{
	struct lt_failer *f = arg;

	if (f->countdown >= 0 && f->countdown-- == 0) {
		f->failed++;
		return NULL;
	}
	return malloc(n);
}

static void *
lt_fail_realloc(void *p, size_t n, void *arg)
{
	struct lt_failer *f = arg;

	if (f->countdown >= 0 && f->countdown-- == 0) {
		f->failed++;
		return NULL;
	}
	return realloc(p, n);
}

static void
lt_fail_free(void *p, void *arg)
{
	(void)arg;
	free(p);
}

void
lt_failer_init(struct lt_failer *f)
{
	f->countdown = -1;
	f->failed = 0;
	f->al.al_malloc = lt_fail_malloc;
	f->al.al_realloc = lt_fail_realloc;
	f->al.al_free = lt_fail_free;
	f->al.al_arg = f;
}

/* Append to the snapshot; returns non-zero once it is full. */
static int __attribute__((format(printf, 2, 3)))
lt_snap_printf(struct lt_snap *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= sizeof(s->buf) - 1)
		return 1;
	va_start(ap, fmt);
	n = vsnprintf(s->buf + s->len, sizeof(s->buf) - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
	if (s->len >= sizeof(s->buf) - 1) {
		s->len = sizeof(s->buf) - 1;
		return 1;
	}
	return 0;
}

static int
lt_snap_rec(const struct lk_record *rc, void *arg)
{
	return lt_snap_printf(arg, "%d %llu %d %.*s %.*s %llu %llu %llu %llu "
	    "%d %d %d %d;", rc->rc_kind, (unsigned long long)rc->rc_host,
	    rc->rc_svid, (int)rc->rc_ohlen, (const char *)rc->rc_oh,
	    (int)rc->rc_fhlen, (const char *)rc->rc_fh,
	    (unsigned long long)rc->rc_start, (unsigned long long)rc->rc_len,
	    (unsigned long long)rc->rc_token, (unsigned long long)rc->rc_epoch,
	    rc->rc_excl, rc->rc_reclaim, rc->rc_access, rc->rc_deny);
}

static int
lt_snap_wait(const struct lk_waiter_info *wi, void *arg)
{
	return lt_snap_rec(&wi->wi_req, arg) ||
	    lt_snap_printf(arg, "%p %d|", wi->wi_udata, wi->wi_granted);
}

void
lt_snapshot(struct lk_table *t, struct lt_snap *s)
{
	struct lk_counts ct;

	s->len = 0;
	s->buf[0] = '\0';
	lk_lock_foreach(t, lt_snap_rec, s);
	lk_share_foreach(t, lt_snap_rec, s);
	lk_waiter_foreach(t, lt_snap_wait, s);
	lk_table_counts(t, &ct);
	lt_snap_printf(s, "%zu %zu %zu %zu %zu %zu %d %llu", ct.ct_locks,
	    ct.ct_waiters, ct.ct_pending, ct.ct_shares, ct.ct_rlocks,
	    ct.ct_rshares, ct.ct_grace, (unsigned long long)ct.ct_last_token);
}
