/*
 * test_requests.c - what single NLM requests answer, and what they leave
 * behind, through the whole service (transport, adapters, procedures,
 * lock core, fake store): bad input gets the protocol's error and
 * changes nothing; versions 1 and 3 answer in their 32-bit terms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>

#include "ev.h"
#include "lockcore.h"
#include "nlm_impl.h"
#include "rpc/sm_inter.h"
#include "store.h"
#include "svctest.h"
#include "tests/fakes/fakes.h"
#include "tests/runner.h"

#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

static void
t_begin(void)
{
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
}

/*
 * Send one call of version `vers' and decode its reply's result with
 * `xres' into `res' (free with xdr_free).  0, or -1 when no accepted
 * reply came.
 */
static int
t_call(uint32_t vers, uint32_t proc, xdrproc_t xargs, const void *args,
    xdrproc_t xres, void *res)
{
	(void)ts_send_vers(vers, proc, xargs, args);
	ts_pump();
	return ts_recv_result(xres, res);
}

static char t_cookie[4] = { 'c', 'k', 'i', 'e' };

static void
t_lock4(nlm4_lock *l, const char *name, int32_t svid, const char *fh,
    uint64_t off, uint64_t len)
{
	memset(l, 0, sizeof(*l));
	l->caller_name = (char *)(uintptr_t)name;
	l->fh.nlm_netobj_len = (u_int)strlen(fh);
	l->fh.nlm_netobj_val = (char *)(uintptr_t)fh;
	l->oh.nlm_netobj_len = 3;
	l->oh.nlm_netobj_val = (char *)(uintptr_t)"own";
	l->svid = svid;
	l->l_offset = off;
	l->l_len = len;
}

/* The same, a version 1/3 lock (32-bit range). */
static void
t_lock1(nlm_lock *l, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len)
{
	memset(l, 0, sizeof(*l));
	l->caller_name = (char *)(uintptr_t)name;
	l->fh.nlm_netobj_len = (u_int)strlen(fh);
	l->fh.nlm_netobj_val = (char *)(uintptr_t)fh;
	l->oh.nlm_netobj_len = 3;
	l->oh.nlm_netobj_val = (char *)(uintptr_t)"own";
	l->svid = svid;
	l->l_offset = off;
	l->l_len = len;
}

/* LOCK (v4) carrying NSM state `state'; its status. */
static int
t_v4_lockx(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len, bool excl, bool block, int32_t state)
{
	nlm4_lockargs a;
	nlm4_res r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.block = block;
	a.exclusive = excl;
	a.state = state;
	t_lock4(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(NLM4_VERS, NLMPROC4_LOCK, XDRPROC(xdr_nlm4_lockargs), &a,
	    XDRPROC(xdr_nlm4_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return st;
}

/* LOCK (v4, non-blocking, exclusive) carrying NSM state `state'. */
static int
t_v4_lock(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len, int32_t state)
{
	return t_v4_lockx(name, svid, fh, off, len, true, false, state);
}

static int
t_v4_unlock(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len)
{
	nlm4_unlockargs a;
	nlm4_res r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	t_lock4(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(NLM4_VERS, NLMPROC4_UNLOCK, XDRPROC(xdr_nlm4_unlockargs),
	    &a, XDRPROC(xdr_nlm4_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return st;
}

/* CANCEL (v4) of a blocking request, exclusive or shared; its status. */
static int
t_v4_cancelx(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len, bool excl)
{
	nlm4_cancargs a;
	nlm4_res r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.block = TRUE;
	a.exclusive = excl;
	t_lock4(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(NLM4_VERS, NLMPROC4_CANCEL, XDRPROC(xdr_nlm4_cancargs), &a,
	    XDRPROC(xdr_nlm4_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return st;
}

static int
t_v4_cancel(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len)
{
	return t_v4_cancelx(name, svid, fh, off, len, true);
}

/* TEST (v4, exclusive or shared); the holder in *ho when DENIED. */
static int
t_v4_testx(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len, bool excl, nlm4_holder *ho)
{
	nlm4_testargs a;
	nlm4_testres r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.exclusive = excl;
	t_lock4(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(NLM4_VERS, NLMPROC4_TEST, XDRPROC(xdr_nlm4_testargs), &a,
	    XDRPROC(xdr_nlm4_testres), &r) == 0) {
		st = (int)r.test_stat.stat;
		if (st == NLM4_DENIED && ho != NULL) {
			*ho = r.test_stat.nlm4_testrply_u.holder;
			ho->oh.nlm_netobj_val = NULL;
		}
	}
	xdr_free(XDRPROC(xdr_nlm4_testres), (char *)&r);
	return st;
}

static int
t_v4_test(const char *name, int32_t svid, const char *fh, uint64_t off,
    uint64_t len, nlm4_holder *ho)
{
	return t_v4_testx(name, svid, fh, off, len, true, ho);
}

/*
 * TEST of version `vers' (1 or 3, exclusive or shared); the holder in
 * *ho if DENIED.
 */
static int
t_v1_testx(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len, bool excl, nlm_holder *ho)
{
	nlm_testargs a;
	nlm_testres r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.exclusive = excl;
	t_lock1(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(vers, NLMPROC_TEST, XDRPROC(xdr_nlm_testargs), &a,
	    XDRPROC(xdr_nlm_testres), &r) == 0) {
		st = (int)r.test_stat.stat;
		if (st == nlm_denied && ho != NULL) {
			*ho = r.test_stat.nlm_testrply_u.holder;
			ho->oh.nlm_netobj_val = NULL;
		}
	}
	xdr_free(XDRPROC(xdr_nlm_testres), (char *)&r);
	return st;
}

static int
t_v1_test(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len, nlm_holder *ho)
{
	return t_v1_testx(vers, name, svid, fh, off, len, true, ho);
}

/*
 * LOCK of version `vers' (1 or 3) carrying NSM state `state'; its status,
 * -1 when no reply came.
 */
static int
t_v1_lockx(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len, bool excl, bool block, int32_t state)
{
	nlm_lockargs a;
	nlm_res r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.block = block;
	a.exclusive = excl;
	a.state = state;
	t_lock1(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(vers, NLMPROC_LOCK, XDRPROC(xdr_nlm_lockargs), &a,
	    XDRPROC(xdr_nlm_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return st;
}

/* The same, non-blocking and exclusive. */
static int
t_v1_lock(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len, int32_t state)
{
	return t_v1_lockx(vers, name, svid, fh, off, len, true, false, state);
}

/* CANCEL of version `vers' (1 or 3) of a blocking request; its status. */
static int
t_v1_cancelx(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len, bool excl)
{
	nlm_cancargs a;
	nlm_res r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.block = TRUE;
	a.exclusive = excl;
	t_lock1(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(vers, NLMPROC_CANCEL, XDRPROC(xdr_nlm_cancargs), &a,
	    XDRPROC(xdr_nlm_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return st;
}

/* UNLOCK of version `vers' (1 or 3); its status, -1 when no reply came. */
static int
t_v1_unlock(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len)
{
	nlm_unlockargs a;
	nlm_res r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	t_lock1(&a.alock, name, svid, fh, off, len);
	memset(&r, 0, sizeof(r));
	if (t_call(vers, NLMPROC_UNLOCK, XDRPROC(xdr_nlm_unlockargs), &a,
	    XDRPROC(xdr_nlm_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return st;
}

/*
 * LOCK, CANCEL or UNLOCK of version `vers' (1 or 3) by (name, 1, "own")
 * of [off, off + 1) of fh; its status, -1 when no reply came.
 */
static int
t_v1_call(uint32_t vers, uint32_t proc, const char *name, const char *fh,
    uint32_t off)
{
	nlm_lockargs la;
	nlm_cancargs ca;
	nlm_unlockargs ua;
	nlm_lock *l;
	nlm_res r;
	const void *args;
	xdrproc_t xargs;
	int st = -1;

	memset(&la, 0, sizeof(la));
	memset(&ca, 0, sizeof(ca));
	memset(&ua, 0, sizeof(ua));
	if (proc == NLMPROC_LOCK) {
		la.exclusive = TRUE;
		la.state = 3;
		l = &la.alock;
		args = &la;
		xargs = XDRPROC(xdr_nlm_lockargs);
	} else if (proc == NLMPROC_CANCEL) {
		ca.exclusive = TRUE;
		ca.block = TRUE;
		l = &ca.alock;
		args = &ca;
		xargs = XDRPROC(xdr_nlm_cancargs);
	} else {
		l = &ua.alock;
		args = &ua;
		xargs = XDRPROC(xdr_nlm_unlockargs);
	}
	l->caller_name = (char *)(uintptr_t)name;
	l->fh.nlm_netobj_len = (u_int)strlen(fh);
	l->fh.nlm_netobj_val = (char *)(uintptr_t)fh;
	l->oh.nlm_netobj_len = 3;
	l->oh.nlm_netobj_val = (char *)(uintptr_t)"own";
	l->svid = 1;
	l->l_offset = off;
	l->l_len = 1;
	memset(&r, 0, sizeof(r));
	if (t_call(vers, proc, xargs, args, XDRPROC(xdr_nlm_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return st;
}

/*
 * nlmd_nlm_replies_total counts every result sent, by procedure: a v1/v3
 * TEST, LOCK, CANCEL or UNLOCK whose offset 32 bits cannot express is
 * answered by the adapter (nlm_svc.c) without the procedure, and that
 * answer went uncounted -- requests_total went up, replies_total did not
 * (found by review).  For the synchronous procedures the results counted
 * are the requests received.
 */
static void
test_v1_replies_counted(void)
{
	static const uint32_t procs[] = { NLMPROC_TEST, NLMPROC_LOCK,
	    NLMPROC_CANCEL, NLMPROC_UNLOCK };
	const struct nlm_counters *c;
	uint64_t calls, results;
	uint32_t vers;
	size_t i, k;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		/* Within 32 bits (the procedure answers), and past them. */
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostV", 1, "fv", 5, 1, NULL),
		    nlm_granted);
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostV", 1, "fv", 0x80000000u,
		    1, NULL), nlm_denied_nolocks);
		CU_ASSERT_EQUAL(t_v1_call(vers, NLMPROC_LOCK, "hostV", "fv",
		    0x80000000u), nlm_denied_nolocks);
		CU_ASSERT_EQUAL(t_v1_call(vers, NLMPROC_CANCEL, "hostV", "fv",
		    0x80000000u), nlm_denied);
		CU_ASSERT_EQUAL(t_v1_call(vers, NLMPROC_UNLOCK, "hostV", "fv",
		    0x80000000u), nlm_granted);
	}
	CU_ASSERT_EQUAL(c->status[NLMPROC4_TEST][NLM4_DENIED_NOLOCKS], 2);
	CU_ASSERT_EQUAL(c->status[NLMPROC4_LOCK][NLM4_DENIED_NOLOCKS], 2);
	CU_ASSERT_EQUAL(c->status[NLMPROC4_CANCEL][NLM4_DENIED], 2);
	CU_ASSERT_EQUAL(c->status[NLMPROC4_UNLOCK][NLM4_GRANTED], 2);
	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		calls = c->calls[NLM_VERS][procs[i]] +
		    c->calls[NLM_VERSX][procs[i]] +
		    c->calls[NLM4_VERS][procs[i]];
		for (results = 0, k = 0; k < NLM_NSTATS; k++)
			results += c->status[procs[i]][k];
		CU_ASSERT_EQUAL(results, calls);
	}
	ts_stop();
}

/* Does the v1/v3 range (off, len; 0: to the end) hold byte b? */
static bool
t_v1_covers(uint32_t off, uint32_t len, uint32_t b)
{
	return b >= off && (len == 0 || b - off < len);
}

/*
 * A v4 LOCK whose range runs past the last byte is refused with FBIG
 * before anything happens: no host is made, and a host's NSM state in it
 * does not release what that host holds (Linux checks the range first
 * too: fs/lockd/svc4proc.c, nlm4svc_retrieve_args()).
 */
static void
test_fbig_changes_nothing(void)
{
	nlm4_holder ho;

	if (ts_skip())
		return;
	t_begin();
	/* Unknown host: FBIG, and no host record made for it. */
	CU_ASSERT_EQUAL(t_v4_lock("hostZ", 1, "f", UINT64_MAX, 2, 3),
	    NLM4_FBIG);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	/* A host holding a lock, in NSM state 3 ... */
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	/* ... sends a LOCK with a bad range and another state. */
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 2, "f", UINT64_MAX, 2, 5),
	    NLM4_FBIG);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "f", 0, 10, &ho), NLM4_DENIED);
	ts_stop();
}

/* A blocking v3 LOCK (exclusive, svid 1, [0, 1) of fh); its status. */
static int
t_v3_block(const char *name, const char *fh)
{
	nlm_lockargs la;
	nlm_res r;
	int st = -1;

	memset(&la, 0, sizeof(la));
	la.cookie.nlm_netobj_len = sizeof(t_cookie);
	la.cookie.nlm_netobj_val = t_cookie;
	la.block = TRUE;
	la.exclusive = TRUE;
	la.state = 3;
	t_lock1(&la.alock, name, 1, fh, 0, 1);
	memset(&r, 0, sizeof(r));
	if (t_call(NLM_VERSX, NLMPROC_LOCK, XDRPROC(xdr_nlm_lockargs), &la,
	    XDRPROC(xdr_nlm_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return st;
}

/*
 * callbacks = sync with a version 3 client: the GRANTED call is version
 * 3, and the client's nlm_res reply ends it as a version 4 one does --
 * nlm_granted confirms the grant (nothing more is called back),
 * nlm_denied undoes it.  Only version 4 replies were tried: one dropped
 * left a version 3 grant unconfirmed and called back for ever.
 */
static void
test_v3_sync_granted(void)
{
	const struct nlm_counters *c;
	const struct lk_table *t;
	struct lk_counts ct;
	uint32_t vers = 0;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_SYNC, 0);
	c = nlm_get_counters();
	t = nlm_get_table();
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_LOCK, "hostA", "f", 0),
	    nlm_granted);
	CU_ASSERT_EQUAL(t_v3_block("hostB", "f"), nlm_blocked);
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_UNLOCK, "hostA", "f", 0),
	    nlm_granted);
	CU_ASSERT_EQUAL(ts_callback_answer_v1(nlm_granted, &vers),
	    NLMPROC_GRANTED);
	CU_ASSERT_EQUAL(vers, NLM_VERSX);
	ts_pump();
	CU_ASSERT_EQUAL(c->cb_acked, 1);
	CU_ASSERT_EQUAL(c->cb_inflight, 0);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_pending, 0);
	CU_ASSERT_EQUAL(ct.ct_locks, 1);
	ts_advance(20000);
	ts_pump();
	CU_ASSERT(ts_no_callback());
	/* hostC waits for hostB's lock, and refuses it once granted. */
	CU_ASSERT_EQUAL(t_v3_block("hostC", "f"), nlm_blocked);
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_UNLOCK, "hostB", "f", 0),
	    nlm_granted);
	CU_ASSERT_EQUAL(ts_callback_answer_v1(nlm_denied, &vers),
	    NLMPROC_GRANTED);
	ts_pump();
	CU_ASSERT_EQUAL(c->cb_refused, 1);
	CU_ASSERT_EQUAL(c->cb_inflight, 0);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_pending, 0);
	CU_ASSERT_EQUAL(ct.ct_locks, 0);
	CU_ASSERT_EQUAL(t_v4_test("hostD", 4, "f", 0, 1, NULL), NLM4_GRANTED);
	ts_stop();
}

/*
 * A CANCEL from a host never seen: DENIED (it waits for nothing), and no
 * host is made for it.  Nothing sent one: the service takes the host it
 * looks up for granted once nlm_begin() says the request is good.
 */
static void
test_cancel_unknown_host(void)
{
	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_cancel("hostU", 1, "f", 0, 10), NLM4_DENIED);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	/* Still up: a known host's CANCEL of nothing is DENIED too. */
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_cancel("hostA", 1, "f", 0, 10), NLM4_DENIED);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	ts_stop();
}

/*
 * UNLOCK and CANCEL with a range past the last byte: FBIG, whether the
 * host is known or not (not GRANTED/DENIED for one and FBIG for the
 * other).
 */
static void
test_fbig_any_host(void)
{
	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_unlock("hostU", 1, "f", UINT64_MAX, 2),
	    NLM4_FBIG);
	CU_ASSERT_EQUAL(t_v4_cancel("hostU", 1, "f", UINT64_MAX, 2),
	    NLM4_FBIG);
	CU_ASSERT_EQUAL(t_v4_test("hostU", 1, "f", UINT64_MAX, 2, NULL),
	    NLM4_FBIG);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "f", UINT64_MAX, 2),
	    NLM4_FBIG);
	CU_ASSERT_EQUAL(t_v4_cancel("hostA", 1, "f", UINT64_MAX, 2),
	    NLM4_FBIG);
	ts_stop();
}

/*
 * A v1/v3 TEST meeting a holder whose range does not fit in 32 bits: the
 * holder reported must still cover the bytes asked about.  A v4 lock of
 * [0, 2^32) was reported as (0, 0x7fffffff): bytes up to 0x7ffffffe,
 * not the byte 0x7fffffff that was tested.  Past what 32 bits express it
 * runs to the end of the file, as a v1/v3 client sees it: length 0, from
 * the last offset 32 bits express (only the integration script looked:
 * the offset 2^32 truncated to 0 survived every unit test, mutation
 * testing).
 */
static void
test_v3_holder_covers(void)
{
	nlm_holder ho;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 0x100000000ull, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "g", 0x100000000ull, 10, 3),
	    NLM4_GRANTED);
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		memset(&ho, 0, sizeof(ho));
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostB", 9, "f", 0x7fffffff, 1,
		    &ho), nlm_denied);
		CU_ASSERT_EQUAL(ho.svid, 1);
		CU_ASSERT(t_v1_covers(ho.l_offset, ho.l_len, 0x7fffffff));
		/* Beyond 32 bits altogether: met by a range to the end. */
		memset(&ho, 0, sizeof(ho));
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostB", 9, "g", 0, 0, &ho),
		    nlm_denied);
		CU_ASSERT(t_v1_covers(ho.l_offset, ho.l_len, 0x7fffffff));
		CU_ASSERT_EQUAL(ho.l_offset, 0x7fffffff);
		CU_ASSERT_EQUAL(ho.l_len, 0);
	}
	ts_stop();
}

/*
 * A new host whose index entry cannot be allocated (the hosts at its
 * address) is refused like one over a limit: DENIED_NOLOCKS, no host, no
 * record, the server up; its next LOCK is served.  Before, nlmd exited
 * (fatalx "out of memory for the host table") in the middle of a LOCK.
 */
static void
test_host_nomem(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	ts_calloc_fail(sizeof(struct nlm_addrcount));
	CU_ASSERT_EQUAL(t_v4_lock("hostM", 1, "f", 0, 10, 3),
	    NLM4_DENIED_NOLOCKS);
	CU_ASSERT(!ts_calloc_armed());	/* it was asked for */
	ts_calloc_fail(0);
	CU_ASSERT_EQUAL(c->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(t_v4_lock("hostM", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->hosts, 1);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 1);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	ts_stop();
}

/* A new host (name, 10.0.0.last), made if it can be: nlm_host_get(). */
static struct nlm_host *
t_host_at(const char *name, unsigned last)
{
	struct sockaddr_in in;

	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(0x0a000000 + last);
	return nlm_host_get((struct sockaddr_storage *)&in, sizeof(in), name,
	    NULL, 0, true);
}

/*
 * max-hosts-per-address (3 here): an address brings that many hosts, the
 * next caller_name from it is refused (DENIED_NOLOCKS, counted, no host,
 * no record) while the hosts it has are served and another address
 * still brings hosts; one of its hosts gone (FREE_ALL), a new name from
 * it is served.  Only test_bounds.sh (a real nlmd) reached the limit:
 * nlm_host_new() comparing with `>' for `>=' -- one host more than the
 * limit from each address -- survived every unit test (mutation
 * testing).
 */
static void
test_hosts_per_address(void)
{
	const struct nlm_counters *c;
	nlm4_notify fa;

	if (ts_skip())
		return;
	ts_max_hosts_per_addr(3);
	t_begin();
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(t_v4_lock("p0", 1, "f0", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lock("p1", 1, "f1", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lock("p2", 1, "f2", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->hosts_refused, 0);
	CU_ASSERT_EQUAL(t_v4_lock("p3", 1, "f3", 0, 10, 3),
	    NLM4_DENIED_NOLOCKS);
	CU_ASSERT_EQUAL(c->hosts_refused, 1);
	CU_ASSERT_EQUAL(c->hosts, 3);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 3);
	CU_ASSERT_PTR_NULL(nlm_host_named("p3"));
	CU_ASSERT_EQUAL(t_v4_lock("p0", 1, "g0", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_PTR_NOT_NULL(t_host_at("p3", 1));
	CU_ASSERT_EQUAL(c->hosts, 4);
	memset(&fa, 0, sizeof(fa));
	fa.name = (char *)"p2";
	fa.state = 5;
	(void)ts_send(NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify), &fa);
	ts_pump();
	(void)ts_drain();
	CU_ASSERT_EQUAL(c->hosts, 3);
	CU_ASSERT_EQUAL(t_v4_lock("p4", 1, "f4", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->hosts_refused, 1);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 4);
	ts_stop();
	ts_max_hosts_per_addr(1000);
}

/*
 * max-hosts (3 here): three hosts are made, from any addresses; the
 * fourth is refused (over the wire DENIED_NOLOCKS), counted, and makes
 * no record, while the three are served.  nlm_host_new() comparing with
 * `>' for `>=' -- one host over max-hosts -- survived every unit test
 * (mutation testing).
 */
static void
test_max_hosts(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	ts_max_hosts(3);
	t_begin();
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(t_v4_lock("m0", 1, "f0", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_PTR_NOT_NULL(t_host_at("m1", 1));
	CU_ASSERT_PTR_NOT_NULL(t_host_at("m2", 2));
	CU_ASSERT_EQUAL(c->hosts, 3);
	CU_ASSERT_EQUAL(c->hosts_refused, 0);
	CU_ASSERT_PTR_NULL(t_host_at("m3", 3));
	CU_ASSERT_EQUAL(t_v4_lock("m4", 1, "f4", 0, 10, 3),
	    NLM4_DENIED_NOLOCKS);
	CU_ASSERT_EQUAL(c->hosts_refused, 2);
	CU_ASSERT_EQUAL(c->hosts, 3);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 3);
	CU_ASSERT_EQUAL(t_v4_lock("m0", 1, "g0", 0, 10, 3), NLM4_GRANTED);
	ts_stop();
	ts_max_hosts(1000);
}

/* The port cache's hash before it was keyed: FNV-1a over the sockaddr. */
static size_t
t_old_peer_hash(const struct sockaddr_in *sin, uint32_t prog, uint32_t vers)
{
	const uint8_t *p = (const uint8_t *)sin;
	uint64_t h = 1469598103934665603ull ^ vers ^ ((uint64_t)prog << 32);
	size_t i;

	for (i = 0; i < sizeof(*sin); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return (size_t)(h % 256);
}

static void
t_send_done(void *arg, int ok, XDR *res)
{
	(void)ok;
	(void)res;
	(*(int *)arg)++;
}

/*
 * The port cache (a client's NLM and status ports, one entry per source
 * address a _MSG came from, which can be forged) is keyed: 2,000
 * addresses that all fell in one bucket of the old, public hash -- a
 * chain walked for each _MSG -- spread over the buckets.
 */
static void
test_peer_hash_flood(void)
{
	struct sockaddr_in sin;
	struct sockaddr_storage ss;
	struct nlm_send *snd;
	nlm4_res res;
	uint32_t a;
	size_t n, longest, made = 0;
	int done = 0;

	if (ts_skip())
		return;
	t_begin();
	memset(&res, 0, sizeof(res));
	for (a = 0x0a000001; made < 2000; a++) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(a);
		if (t_old_peer_hash(&sin, NLM_PROG, NLM4_VERS) != 0)
			continue;
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &sin, sizeof(sin));
		snd = nlm_send_new(&ss, sizeof(sin), NLM_PROG, NLM4_VERS,
		    NLMPROC4_TEST_RES, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
		nlm_send_start(snd, 1000, 1, t_send_done, &done);
		made++;
	}
	nlm_out_peer_stats(&n, &longest);
	CU_ASSERT_EQUAL(n, 2000);
	/* 2,000 in 4,096 buckets: a chain of 6 is already rare. */
	CU_ASSERT(longest < 16);
	ts_stop();
}

struct t_sent {
	int	 n, failed;
};

static void
t_sent_cb(void *arg, int ok, XDR *res)
{
	struct t_sent *ts = arg;

	(void)res;
	ts->n++;
	ts->failed += !ok;
}

/* Start a GRANTED_MSG-like send to 10.x.y.z (`a'), its look-up quick. */
static void
t_send_to(uint32_t a, struct t_sent *ts)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct nlm_send *snd;
	nlm4_res res;

	memset(&res, 0, sizeof(res));
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(a);
	snd = nlm_send_new(&ss, sizeof(*sin), NLM_PROG, NLM4_VERS,
	    NLMPROC4_GRANTED_MSG, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_lookup(snd, 50, 1);
	nlm_send_start(snd, 1000, 1, t_sent_cb, ts);
}

/*
 * A full port cache (65,536 addresses: forged _MSG sources can fill it)
 * makes room for a new address by forgetting an idle entry, so that a
 * callback or SM_NOTIFY to a host not in it is still looked up.  Before,
 * every such send failed at once until entries expired (2 minutes).
 */
static void
test_peer_cache_full(void)
{
	struct t_sent fill = { 0, 0 }, late = { 0, 0 };
	const struct nlm_counters *c;
	size_t n, longest;
	uint32_t i;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	for (i = 0; i < 65536; i++)
		t_send_to(0x0a000000 + i, &fill);
	nlm_out_peer_stats(&n, &longest);
	CU_ASSERT_EQUAL_FATAL(n, 65536);
	/* Their look-ups go unanswered: idle entries, sends failed. */
	for (i = 0; i < 1000 && fill.n < 65536; i++) {
		ts_advance(100);
		ts_pump();
	}
	CU_ASSERT_EQUAL_FATAL(fill.n, 65536);
	t_send_to(0x0b000001, &late);
	CU_ASSERT_EQUAL(late.n, 0);		/* looking up, not failed */
	CU_ASSERT_EQUAL(c->peers_evicted, 1);
	nlm_out_peer_stats(&n, &longest);
	CU_ASSERT_EQUAL(n, 65536);
	ts_stop();
}

/*
 * Start a GRANTED_MSG-like send of version `vers' to the client's NLM at
 * 127.0.0.1 (the fake rpcbind knows it), one try, waited for 1 s.
 */
static void
t_send_lo(uint32_t vers, struct t_sent *ts)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct nlm_send *snd;
	nlm4_res res;

	memset(&res, 0, sizeof(res));
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snd = nlm_send_new(&ss, sizeof(*sin), NLM_PROG, vers,
	    NLMPROC4_GRANTED_MSG, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_start(snd, 1000, 1, t_sent_cb, ts);
	ts_pump();
}

/* t_send_lo(), its copy left unanswered until it times out. */
static void
t_send_lo_unanswered(struct t_sent *ts)
{
	uint8_t buf[2048];

	t_send_lo(NLM4_VERS, ts);
	CU_ASSERT(ts_callback_raw(buf, sizeof(buf)) > 0);
	ts_advance(1000);
	ts_pump();
}

/* t_send_lo(), its copy answered. */
static void
t_send_lo_answered(uint32_t vers, struct t_sent *ts)
{
	t_send_lo(vers, ts);
	CU_ASSERT_EQUAL(ts_callback_ack(), NLMPROC4_GRANTED_MSG);
	ts_pump();
}

/*
 * A call the program at the cached port refuses (PROG_UNAVAIL: the
 * client's lockd restarted, and that port is now another program's) has
 * the port looked up again at the next call, at once: only calls that
 * time out are given three chances (nlm_out.c, send_judge_port()).
 */
static void
test_port_refused_looked_up(void)
{
	struct t_sent ts = { 0, 0 };
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	lookups = ts_nlm_lookups();
	t_send_lo(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	CU_ASSERT_EQUAL(ts_callback_status(PROG_UNAVAIL),
	    NLMPROC4_GRANTED_MSG);
	ts_pump();
	CU_ASSERT_EQUAL(ts.n, 1);
	CU_ASSERT_EQUAL(ts.failed, 1);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(ts.n, 2);
	CU_ASSERT_EQUAL(ts.failed, 1);
	ts_stop();
}

/*
 * Calls that time out count against the cached port only in a row: an
 * answer in between says the port is right (two timeouts, an answer,
 * one timeout: the port is kept, no look-up).  Three timeouts in a row
 * have it looked up again.
 */
static void
test_port_timeouts_in_a_row(void)
{
	struct t_sent ts = { 0, 0 };
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	lookups = ts_nlm_lookups();
	t_send_lo_unanswered(&ts);
	t_send_lo_unanswered(&ts);
	t_send_lo_answered(NLM4_VERS, &ts);
	t_send_lo_unanswered(&ts);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts.n, 5);
	CU_ASSERT_EQUAL(ts.failed, 3);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	/* The control: three in a row, and the next call looks up. */
	t_send_lo_unanswered(&ts);
	t_send_lo_unanswered(&ts);
	t_send_lo_unanswered(&ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(ts.n, 9);
	CU_ASSERT_EQUAL(ts.failed, 6);
	ts_stop();
}

/*
 * The port cache is per program *and version*: a client's lockd may
 * register its versions on different ports, or not register one at
 * all, so a version 3 callback after a version 4 one is looked up on its
 * own, not sent to the port of version 4.
 */
static void
test_port_per_version(void)
{
	struct t_sent ts = { 0, 0 };
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	lookups = ts_nlm_lookups();
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	t_send_lo_answered(NLM_VERSX, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	t_send_lo_answered(NLM4_VERS, &ts);
	t_send_lo_answered(NLM_VERSX, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(ts.n, 4);
	CU_ASSERT_EQUAL(ts.failed, 0);
	ts_stop();
}

/* A _RES as nlm_proc.c sends it, to the client's NLM at 127.0.0.1. */
static void
t_res_lo(struct t_sent *ts)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct nlm_send *snd;
	nlm4_res res;

	memset(&res, 0, sizeof(res));
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snd = nlm_send_new(&ss, sizeof(*sin), NLM_PROG, NLM4_VERS,
	    NLMPROC4_LOCK_RES, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_lookup(snd, 1000, 1);
	nlm_send_reflectable(snd);
	nlm_send_oneway(snd);
	nlm_send_start(snd, 5000, 1, t_sent_cb, ts);
	ts_pump();
}

/*
 * The idle sweep (every minute, at any moment after a look-up) keeps a
 * look-up that found no port for its NEG_TTL_MS (30 s): a _RES to that
 * address fails at once until then, with no datagram to its rpcbind
 * (nlm_out.c, BOUNDS).  Only after it does the sweep forget it.
 */
static void
test_port_negative_kept_by_sweep(void)
{
	const struct nlm_counters *c;
	struct t_sent ts = { 0, 0 };
	unsigned lookups;
	size_t n, longest;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	ts_nlm_registered(false);
	lookups = ts_nlm_lookups();
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	CU_ASSERT_EQUAL(c->rpcb_failed, 1);
	CU_ASSERT_EQUAL(ts.failed, 1);
	ts_advance(1000);
	nlm_out_gc();
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	CU_ASSERT_EQUAL(c->rpcb_suppressed, 1);
	CU_ASSERT_EQUAL(ts.failed, 2);
	/* 30 s after the look-up: the sweep forgets it. */
	ts_advance(29000);
	nlm_out_gc();
	nlm_out_peer_stats(&n, &longest);
	CU_ASSERT_EQUAL(n, 0);
	ts_stop();
}

/*
 * A look-up that found no port bars only the _RES messages that would
 * look up again: once a later look-up (a callback's, which the negative
 * cache does not stop) has found the port, a _RES to that address goes
 * out to it at once, within NEG_TTL_MS of the failure too.  The failure
 * barring a _RES whatever the port (nlm_send_start() without its
 * `p_port == 0') -- every _MSG of a client whose lockd registered late
 * answered by nothing for 30 s -- survived every test (mutation
 * testing).
 */
static void
test_port_negative_then_found(void)
{
	const struct nlm_counters *c;
	struct t_sent ts = { 0, 0 };
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	ts_nlm_registered(false);
	lookups = ts_nlm_lookups();
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	CU_ASSERT_EQUAL(c->rpcb_failed, 1);
	CU_ASSERT_EQUAL(ts.failed, 1);
	/* The client's lockd registers; a callback looks it up. */
	ts_nlm_registered(true);
	ts_advance(1000);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(ts.n, 2);
	CU_ASSERT_EQUAL(ts.failed, 1);
	/* A _RES now: sent to that port, no look-up, nothing suppressed. */
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(ts_callback_ack(), NLMPROC4_LOCK_RES);
	ts_pump();
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(c->rpcb_suppressed, 0);
	CU_ASSERT_EQUAL(ts.n, 3);
	CU_ASSERT_EQUAL(ts.failed, 1);
	ts_stop();
}

/*
 * A look-up that finds the port ends what an earlier failed one said:
 * when that port is then dropped (a call refused there: the client's
 * lockd moved), the next _RES looks the port up again, within NEG_TTL_MS
 * of the old failure too.  Before, the failure's deadline outlived the
 * look-up that found the port, and that _RES failed at once, without a
 * look-up, as if the client's rpcbind had just said it had no NLM.
 */
static void
test_port_found_clears_negative(void)
{
	const struct nlm_counters *c;
	struct t_sent ts = { 0, 0 };
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	ts_nlm_registered(false);
	lookups = ts_nlm_lookups();
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(c->rpcb_failed, 1);
	ts_nlm_registered(true);
	ts_advance(1000);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	/* A call refused at that port: it is dropped. */
	t_send_lo(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_callback_status(PROG_UNAVAIL),
	    NLMPROC4_GRANTED_MSG);
	ts_pump();
	CU_ASSERT_EQUAL(ts.failed, 2);
	/* The next _RES: looked up, sent. */
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 3);
	CU_ASSERT_EQUAL(ts_callback_ack(), NLMPROC4_LOCK_RES);
	ts_pump();
	CU_ASSERT_EQUAL(c->rpcb_suppressed, 0);
	CU_ASSERT_EQUAL(ts.n, 4);
	CU_ASSERT_EQUAL(ts.failed, 2);
	ts_stop();
}

/*
 * A port found is used for PORT_TTL_MS (2 minutes): a callback a minute
 * after the look-up goes to it at once, one after it expired looks it up
 * again.  Ports kept for the negative cache's 30 s only (a wrong
 * constant in lookup_done()), a look-up for most callbacks, survived
 * every test (mutation testing).
 */
static void
test_port_ttl(void)
{
	struct t_sent ts = { 0, 0 };
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	lookups = ts_nlm_lookups();
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	ts_advance(60000);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	ts_advance(59000);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	ts_advance(1000);
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(ts.n, 4);
	CU_ASSERT_EQUAL(ts.failed, 0);
	ts_stop();
}

/*
 * An IPv6 link-local address means nothing without its interface: two
 * clients fe80::1 on two links are two cache entries (and the look-up
 * goes out with the scope, or not at all).  peer_key() dropping the
 * scope -- both merged into one entry whose look-up has no interface --
 * survived every test (mutation testing).
 */
static void
test_peer_scope(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct t_sent ts = { 0, 0 };
	struct nlm_send *snd;
	nlm4_res res;
	size_t n, longest;
	uint32_t scope;

	if (ts_skip())
		return;
	t_begin();
	memset(&res, 0, sizeof(res));
	for (scope = 1; scope <= 2; scope++) {
		memset(&ss, 0, sizeof(ss));
		sin6->sin6_family = AF_INET6;
		CU_ASSERT_EQUAL(inet_pton(AF_INET6, "fe80::1",
		    &sin6->sin6_addr), 1);
		sin6->sin6_scope_id = scope;
		snd = nlm_send_new(&ss, sizeof(*sin6), NLM_PROG, NLM4_VERS,
		    NLMPROC4_GRANTED_MSG, XDRPROC(xdr_nlm4_res), &res, NULL,
		    0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
		nlm_send_lookup(snd, 50, 1);
		nlm_send_start(snd, 1000, 1, t_sent_cb, &ts);
	}
	nlm_out_peer_stats(&n, &longest);
	CU_ASSERT_EQUAL(n, 2);
	ts_stop();
}

/* A UDP socket on [::1]:port, -1 when there is none (no IPv6). */
static int
t_udp6(uint16_t port)
{
	struct sockaddr_in6 a;
	int fd;

	if ((fd = socket(AF_INET6, SOCK_DGRAM, 0)) == -1)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_port = htons(port);
	a.sin6_addr = in6addr_loopback;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Answer the RPCB GETADDR waiting at rpcbfd (the client's rpcbind on ::1)
 * with the universal address `uaddr'.  0, or -1 when none came or it was
 * not a GETADDR for NLM v4 over udp6.
 */
static int
t_rpcb6_answer(int rpcbfd, const char *uaddr)
{
	uint8_t buf[2048], out[512];
	struct sockaddr_in6 from;
	socklen_t fl = sizeof(from);
	struct pollfd p = { rpcbfd, POLLIN, 0 };
	struct rpc_msg call, rep;
	RPCB rb;
	char *ua = (char *)(uintptr_t)uaddr;
	ssize_t n;
	XDR x;
	bool ok;

	if (poll(&p, 1, 50) != 1 || (n = recvfrom(rpcbfd, buf, sizeof(buf), 0,
	    (struct sockaddr *)&from, &fl)) <= 0)
		return -1;
	memset(&call, 0, sizeof(call));
	memset(&rb, 0, sizeof(rb));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	ok = xdr_callmsg(&x, &call) && call.rm_call.cb_prog == RPCBPROG &&
	    call.rm_call.cb_vers == RPCBVERS &&
	    call.rm_call.cb_proc == RPCBPROC_GETADDR && xdr_rpcb(&x, &rb) &&
	    rb.r_prog == NLM_PROG && rb.r_vers == NLM4_VERS &&
	    strcmp(rb.r_netid, "udp6") == 0;
	xdr_destroy(&x);
	xdr_free(XDRPROC(xdr_rpcb), (char *)&rb);
	if (!ok)
		return -1;
	ts_accepted(&rep, call.rm_xid, XDRPROC(xdr_wrapstring), &ua);
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(rpcbfd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&from, fl);
	xdr_destroy(&x);
	return 0;
}

/*
 * A callback to an IPv6 client: its NLM port is asked for with RPCB
 * GETADDR (not PMAP GETPORT) at [client]:111, and the answer, a
 * universal address "::1.p1.p2", gives the port p1 * 256 + p2 the call
 * then goes to.  (The fake rpcbind of the other tests speaks IPv4 only.)
 */
static void
test_port_ipv6_getaddr(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct t_sent ts = { 0, 0 };
	struct nlm_send *snd;
	char uaddr[64];
	uint8_t buf[2048];
	struct pollfd p;
	uint16_t port = 0;
	nlm4_res res;
	int rpcbfd, lockd;

	if (ts_skip())
		return;
	if ((rpcbfd = t_udp6(111)) == -1) {
		tests_skip("no IPv6 loopback");
		return;
	}
	t_begin();
	/* The client's NLM, at a port whose two bytes differ. */
	while ((lockd = t_udp6(0)) != -1) {
		socklen_t l = sizeof(*sin6);

		getsockname(lockd, (struct sockaddr *)sin6, &l);
		port = ntohs(sin6->sin6_port);
		if ((port >> 8) != (port & 0xff))
			break;
		close(lockd);
	}
	CU_ASSERT_FATAL(lockd != -1);
	snprintf(uaddr, sizeof(uaddr), "::1.%u.%u", port >> 8, port & 0xff);
	memset(&res, 0, sizeof(res));
	memset(&ss, 0, sizeof(ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = in6addr_loopback;
	snd = nlm_send_new(&ss, sizeof(*sin6), NLM_PROG, NLM4_VERS,
	    NLMPROC4_GRANTED_MSG, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_start(snd, 1000, 1, t_sent_cb, &ts);
	ts_pump();
	CU_ASSERT_EQUAL(t_rpcb6_answer(rpcbfd, uaddr), 0);
	ts_pump();
	p.fd = lockd;
	p.events = POLLIN;
	CU_ASSERT(poll(&p, 1, 50) == 1 && recv(lockd, buf, sizeof(buf), 0) > 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->rpcb_failed, 0);
	close(lockd);
	close(rpcbfd);
	ts_stop();
}

/*
 * A full cache never forgets an entry whose look-up is in flight, even
 * when no send waits for it any more (a callback cancelled meanwhile: its
 * host released): the look-up's answer comes back to that entry
 * (lookup_done()), and the port it brings is kept for the next call.
 * 127.0.0.1's entry is made last, so it heads its bucket; 30,000 new
 * addresses each make room in theirs, and (with odds of 1 in 1,500 the
 * other way) some fall in its bucket.
 */
static void
test_peer_cache_full_busy_kept(void)
{
	struct t_sent fill = { 0, 0 }, late = { 0, 0 }, ts = { 0, 0 };
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct nlm_send *snd;
	nlm4_res res;
	unsigned lookups;
	size_t n, longest;
	uint32_t i;

	if (ts_skip())
		return;
	t_begin();
	for (i = 0; i < 65535; i++)
		t_send_to(0x0a000000 + i, &fill);
	for (i = 0; i < 1000 && fill.n < 65535; i++) {
		ts_advance(100);
		ts_pump();
	}
	CU_ASSERT_EQUAL_FATAL(fill.n, 65535);
	/* 127.0.0.1 looked up, the send cancelled before the answer. */
	memset(&res, 0, sizeof(res));
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snd = nlm_send_new(&ss, sizeof(*sin), NLM_PROG, NLM4_VERS,
	    NLMPROC4_GRANTED_MSG, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_start(snd, 1000, 1, t_sent_cb, &ts);
	nlm_send_cancel(snd);
	nlm_out_peer_stats(&n, &longest);
	CU_ASSERT_EQUAL_FATAL(n, 65536);
	for (i = 0; i < 30000; i++)
		t_send_to(0x0b000000 + i, &late);
	lookups = ts_nlm_lookups();
	ts_pump();
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	/* The other look-ups leave, 128 a turn (rpcout.c: OUT_BURST). */
	for (i = 0; i < 300; i++)
		ts_turn();
	/* Its port came back to its entry: the next call needs no look-up. */
	t_send_lo_answered(NLM4_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	CU_ASSERT_EQUAL(ts.n, 1);
	CU_ASSERT_EQUAL(ts.failed, 0);
	ts_stop();
}

/* NM_LOCK of version `vers' (3 or 4), exclusive, of [off, off + len). */
static int
t_nm_lock(uint32_t vers, const char *name, int32_t svid, const char *fh,
    uint32_t off, uint32_t len, bool block)
{
	nlm4_lockargs a4;
	nlm_lockargs a1;
	nlm4_res r4;
	nlm_res r1;
	int st = -1;

	memset(&a4, 0, sizeof(a4));
	memset(&a1, 0, sizeof(a1));
	memset(&r4, 0, sizeof(r4));
	memset(&r1, 0, sizeof(r1));
	if (vers == NLM4_VERS) {
		a4.cookie.nlm_netobj_len = sizeof(t_cookie);
		a4.cookie.nlm_netobj_val = t_cookie;
		a4.block = block;
		a4.exclusive = TRUE;
		t_lock4(&a4.alock, name, svid, fh, off, len);
		if (t_call(vers, NLMPROC4_NM_LOCK, XDRPROC(xdr_nlm4_lockargs),
		    &a4, XDRPROC(xdr_nlm4_res), &r4) == 0)
			st = (int)r4.stat.stat;
		xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r4);
		return st;
	}
	a1.cookie.nlm_netobj_len = sizeof(t_cookie);
	a1.cookie.nlm_netobj_val = t_cookie;
	a1.block = block;
	a1.exclusive = TRUE;
	t_lock1(&a1.alock, name, svid, fh, off, len);
	if (t_call(vers, NLMPROC_NM_LOCK, XDRPROC(xdr_nlm_lockargs), &a1,
	    XDRPROC(xdr_nlm_res), &r1) == 0)
		st = (int)r1.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r1);
	return st;
}

/*
 * NM_LOCK never blocks (XNFS: "block should be set to false.  This
 * procedure does not block; it is the responsibility of the client to
 * retry"; BLOCKED is not among its return codes).  Its callers run no
 * status monitor and, PC clients, often no NLM service to take a GRANTED
 * callback: one with block set was queued, answered BLOCKED, and, once
 * granted, held the lock for a GRANTED_RES that never came -- with no
 * give-up deadline (the default), until an operator released it.  It is
 * answered as a non-blocking LOCK, as illumos does.
 */
static void
test_nm_lock_never_blocks(void)
{
	const struct lk_table *t;
	struct lk_counts ct;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	t = nlm_get_table();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	for (vers = NLM_VERSX; vers <= NLM4_VERS; vers++) {
		CU_ASSERT_EQUAL(t_nm_lock(vers, "hostB", 2, "f", 0, 10, true),
		    NLM4_DENIED);	/* nlm_denied in v3: the same 1 */
		lk_table_counts(t, &ct);
		CU_ASSERT_EQUAL(ct.ct_waiters, 0);
	}
	/* Free again: nothing was queued, so nothing is granted or called. */
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "f", 0, 10), NLM4_GRANTED);
	ts_pump();
	CU_ASSERT(ts_no_callback());
	CU_ASSERT_EQUAL(t_v4_test("hostC", 3, "f", 0, 10, NULL), NLM4_GRANTED);
	/* Without a conflict it is granted, blocking or not. */
	CU_ASSERT_EQUAL(t_nm_lock(NLM_VERSX, "hostB", 2, "f", 0, 10, true),
	    nlm_granted);
	CU_ASSERT_EQUAL(t_v4_test("hostC", 3, "f", 0, 10, NULL), NLM4_DENIED);
	ts_stop();
}

/*
 * Take the next call at the client's NLM, which must be a version 3
 * GRANTED_MSG, without answering it: its arguments in *ga (free with
 * xdr_free(xdr_nlm_testargs)).  0, or -1 when none came or it was not
 * that.
 */
static int
t_v3_granted_msg(nlm_testargs *ga)
{
	uint8_t buf[4096];
	struct rpc_msg m;
	ssize_t n;
	XDR x;
	bool ok;

	memset(ga, 0, sizeof(*ga));
	if ((n = ts_callback_raw(buf, sizeof(buf))) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	ok = xdr_callmsg(&x, &m) && xdr_nlm_testargs(&x, ga);
	xdr_destroy(&x);
	if (!ok)
		return -1;
	CU_ASSERT_EQUAL(m.rm_call.cb_vers, NLM_VERSX);
	CU_ASSERT_EQUAL(m.rm_call.cb_proc, NLMPROC_GRANTED_MSG);
	return m.rm_call.cb_vers == NLM_VERSX &&
	    m.rm_call.cb_proc == NLMPROC_GRANTED_MSG ? 0 : -1;
}

/*
 * A v3 blocking LOCK whose range runs past what 32 bits express (so to
 * the end of the file), granted later: the GRANTED_MSG is a version 3
 * call with the range exactly as the client sent it (the client matches
 * it against its own request), and a version 3 GRANTED_RES with its
 * cookie confirms the grant: the lock stays, to the end of the file.
 */
static void
test_v3_granted_res(void)
{
	const struct lk_table *t;
	struct lk_counts ct;
	nlm_lockargs la;
	nlm_testargs ga;
	nlm_res r;

	if (ts_skip())
		return;
	t_begin();
	t = nlm_get_table();
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_LOCK, "hostA", "f",
	    0x7fffff00u), nlm_granted);
	memset(&la, 0, sizeof(la));
	la.cookie.nlm_netobj_len = sizeof(t_cookie);
	la.cookie.nlm_netobj_val = t_cookie;
	la.block = TRUE;
	la.exclusive = TRUE;
	la.state = 3;
	la.alock.caller_name = (char *)"hostB";
	la.alock.fh.nlm_netobj_len = 1;
	la.alock.fh.nlm_netobj_val = (char *)"f";
	la.alock.oh.nlm_netobj_len = 3;
	la.alock.oh.nlm_netobj_val = (char *)"own";
	la.alock.svid = 7;
	la.alock.l_offset = 0x7fffff00u;
	la.alock.l_len = 0x1000;
	memset(&r, 0, sizeof(r));
	CU_ASSERT_EQUAL_FATAL(t_call(NLM_VERSX, NLMPROC_LOCK,
	    XDRPROC(xdr_nlm_lockargs), &la, XDRPROC(xdr_nlm_res), &r), 0);
	CU_ASSERT_EQUAL(r.stat.stat, nlm_blocked);
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_UNLOCK, "hostA", "f",
	    0x7fffff00u), nlm_granted);
	CU_ASSERT_FATAL(t_v3_granted_msg(&ga) == 0);
	CU_ASSERT_EQUAL(ga.alock.svid, 7);
	CU_ASSERT_EQUAL(ga.alock.l_offset, 0x7fffff00u);
	CU_ASSERT_EQUAL(ga.alock.l_len, 0x1000);
	CU_ASSERT(ga.exclusive);
	memset(&r, 0, sizeof(r));
	r.cookie = ga.cookie;
	r.stat.stat = nlm_granted;
	(void)ts_send_vers(NLM_VERSX, NLMPROC_GRANTED_RES, XDRPROC(xdr_nlm_res),
	    &r);
	ts_pump();
	CU_ASSERT_EQUAL(ts_drain(), 1);		/* its void reply */
	xdr_free(XDRPROC(xdr_nlm_testargs), (char *)&ga);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_pending, 0);
	CU_ASSERT_EQUAL(ct.ct_waiters, 0);
	CU_ASSERT_EQUAL(ct.ct_locks, 1);
	CU_ASSERT_EQUAL(t_v4_test("hostC", 3, "f", 0x100000000ull, 1, NULL),
	    NLM4_DENIED);
	ts_stop();
}

/*
 * The idle sweep forgets a turn's budget of hosts at a time: 3,000
 * short-lived clients gone idle together (a budget of 1,000 here; 8,192
 * by default) are forgotten over three turns in a row, not in one turn
 * whose length grows with the hosts -- 100,000 of them, each a record
 * deleted in that turn's commit, held every other client up.  A host
 * that holds a lock is never among them, and once done the sweep comes
 * back a minute later, not every turn.
 */
static void
test_sweep_in_pieces(void)
{
	struct sockaddr_in in;
	struct nlm_host *h;
	char name[32];
	unsigned i;

	if (ts_skip())
		return;
	ts_turn_changes(1000);
	ts_max_hosts(5000);
	t_begin();
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	for (i = 0; i < 3000; i++) {
		in.sin_addr.s_addr = htonl(0x0a000000 + i);
		snprintf(name, sizeof(name), "short%u", i);
		h = nlm_host_get((struct sockaddr_storage *)&in, sizeof(in),
		    name, NULL, 0, true);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	}
	CU_ASSERT_EQUAL(t_v4_lock("keeper", 1, "f", 0, 1, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 3001);
	ts_advance(660 * 1000);
	ts_turn();			/* the sweep: a budget's worth */
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2001);
	ts_turn();
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1001);
	ts_turn();
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	ts_turn();
	CU_ASSERT_EQUAL(fake_store_nhosts(), 1);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_named("keeper"));
	CU_ASSERT(ev_timer_armed(&nlm->n_gc) &&
	    nlm->n_gc.et_when >= ev_now_ms() + 59000);
	ts_stop();
	ts_max_hosts(1000);
	ts_turn_changes(0);
}

/*
 * A version 1 or 3 LOCK hands `reclaim' on to the procedure: outside
 * grace, a reclaim of a range its owner does not hold is refused
 * (nlm_denied_grace_period), one of a range it holds is granted.
 */
static void
test_v1_reclaim(void)
{
	nlm_lockargs la;
	nlm_res r;
	uint32_t vers;
	int i;

	if (ts_skip())
		return;
	t_begin();
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS)
		for (i = 0; i < 3; i++) {
			memset(&la, 0, sizeof(la));
			la.exclusive = TRUE;
			la.reclaim = i != 1;
			la.state = 3;
			t_lock1(&la.alock, "hostA", 1, vers == NLM_VERS ?
			    "f1" : "f3", 0, 10);
			memset(&r, 0, sizeof(r));
			CU_ASSERT_EQUAL_FATAL(t_call(vers, NLMPROC_LOCK,
			    XDRPROC(xdr_nlm_lockargs), &la,
			    XDRPROC(xdr_nlm_res), &r), 0);
			CU_ASSERT_EQUAL(r.stat.stat, i == 0 ?
			    nlm_denied_grace_period : nlm_granted);
			xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
		}
	CU_ASSERT_EQUAL(fake_store_nlocks(), 2);
	ts_stop();
}

/*
 * TEST answers in the mode asked: a shared TEST meets a shared lock
 * without conflict, an exclusive one meets it and reports the holder as
 * held -- shared, its owner and its own range, not the range asked about
 * (version 4 as it is, versions 1 and 3 within 32 bits).  No test asked
 * a shared TEST or met a shared holder: nlm_proc_test() testing every
 * request as exclusive, or reporting the mode asked as the holder's,
 * survived them all (mutation testing).
 */
static void
test_test_modes(void)
{
	nlm4_holder ho;
	nlm_holder ho1;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lockx("hostA", 5, "f", 100, 50, false, false, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_testx("hostB", 9, "f", 0, 0, false, NULL),
	    NLM4_GRANTED);
	memset(&ho, 0, sizeof(ho));
	CU_ASSERT_EQUAL(t_v4_testx("hostB", 9, "f", 120, 1, true, &ho),
	    NLM4_DENIED);
	CU_ASSERT(!ho.exclusive);
	CU_ASSERT_EQUAL(ho.svid, 5);
	CU_ASSERT_EQUAL(ho.oh.nlm_netobj_len, 3);
	CU_ASSERT_EQUAL(ho.l_offset, 100);
	CU_ASSERT_EQUAL(ho.l_len, 50);
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		CU_ASSERT_EQUAL(t_v1_testx(vers, "hostB", 9, "f", 0, 0, false,
		    NULL), nlm_granted);
		memset(&ho1, 0, sizeof(ho1));
		CU_ASSERT_EQUAL(t_v1_testx(vers, "hostB", 9, "f", 149, 1, true,
		    &ho1), nlm_denied);
		CU_ASSERT(!ho1.exclusive);
		CU_ASSERT_EQUAL(ho1.svid, 5);
		CU_ASSERT_EQUAL(ho1.l_offset, 100);
		CU_ASSERT_EQUAL(ho1.l_len, 50);
	}
	/* An exclusive holder is reported exclusive, to a shared TEST too. */
	CU_ASSERT_EQUAL(t_v4_lockx("hostA", 5, "g", 0, 10, true, false, 3),
	    NLM4_GRANTED);
	memset(&ho, 0, sizeof(ho));
	CU_ASSERT_EQUAL(t_v4_testx("hostB", 9, "g", 0, 1, false, &ho),
	    NLM4_DENIED);
	CU_ASSERT(ho.exclusive);
	ts_stop();
}

/*
 * TEST of a range held exclusively by the owner asking -- the same host
 * (source address and caller_name), svid and oh -- is GRANTED: its own
 * lock does not conflict with it, as fcntl(F_GETLK) reports no lock of
 * the caller's own.  The same TEST from another host, or from another
 * svid of the same host, is DENIED with the holder reported (v4, and v1
 * and v3 through their adapters).  Only the _MSG/_RES round trip tested
 * an owner's TEST of its own lock: nlm_proc_test() giving lockcore host
 * id 0 instead of the caller's survived the synchronous procedures
 * (mutation testing).
 */
static void
test_test_own_lock(void)
{
	nlm4_holder ho;
	nlm_holder ho1;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 7, "f", 0, 100, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_test("hostA", 7, "f", 10, 10, NULL),
	    NLM4_GRANTED);
	memset(&ho, 0, sizeof(ho));
	CU_ASSERT_EQUAL(t_v4_test("hostB", 7, "f", 10, 10, &ho), NLM4_DENIED);
	CU_ASSERT(ho.exclusive);
	CU_ASSERT_EQUAL(ho.svid, 7);
	CU_ASSERT_EQUAL(ho.oh.nlm_netobj_len, 3);
	CU_ASSERT_EQUAL(ho.l_offset, 0);
	CU_ASSERT_EQUAL(ho.l_len, 100);
	CU_ASSERT_EQUAL(t_v4_test("hostA", 8, "f", 10, 10, NULL),
	    NLM4_DENIED);
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostA", 7, "f", 10, 10, NULL),
		    nlm_granted);
		memset(&ho1, 0, sizeof(ho1));
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostB", 7, "f", 10, 10, &ho1),
		    nlm_denied);
		CU_ASSERT(ho1.exclusive);
		CU_ASSERT_EQUAL(ho1.svid, 7);
		CU_ASSERT_EQUAL(ho1.l_offset, 0);
		CU_ASSERT_EQUAL(ho1.l_len, 100);
	}
	/* Asked, not changed: the lock is still the one granted. */
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	ts_stop();
}

/*
 * A blocking LOCK that would close a cycle of waiting owners is answered
 * NLM4_DEADLCK in version 4 and nlm_denied in versions 1 and 3 (which
 * lack it; Linux answers so too), and is not queued.  No test of the
 * service met a deadlock: DEADLCK answered as DENIED (nlm_stat_from_lk())
 * or as nlm_denied_nolocks in v3 (nlm_stat_to_v1()) survived them all
 * (mutation testing).
 */
static void
test_deadlock_answered(void)
{
	const struct lk_table *t;
	struct lk_counts ct;

	if (ts_skip())
		return;
	t_begin();
	t = nlm_get_table();
	/* A holds f [0, 1), B holds f [10, 11); A waits for B's. */
	CU_ASSERT_EQUAL(t_v4_lockx("hostA", 1, "f", 0, 1, true, false, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 1, "f", 10, 1, true, false, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostA", 1, "f", 10, 1, true, true, 3),
	    NLM4_BLOCKED);
	/* B waiting for A's would close the cycle. */
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 1, "f", 0, 1, true, true, 3),
	    NLM4_DEADLCK);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_waiters, 1);
	/* The same on g, B's request a version 3 one ([0, 1), svid 1). */
	CU_ASSERT_EQUAL(t_v4_lockx("hostA", 1, "g", 0, 1, true, false, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 1, "g", 10, 1, true, false, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostA", 1, "g", 10, 1, true, true, 3),
	    NLM4_BLOCKED);
	CU_ASSERT_EQUAL(t_v3_block("hostB", "g"), nlm_denied);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_waiters, 2);
	CU_ASSERT_EQUAL(nlm_get_counters()->status[NLMPROC4_LOCK][NLM4_DEADLCK],
	    2);
	ts_stop();
}

/*
 * The last byte a 64-bit range can name is lockable: [UINT64_MAX, +1) and
 * [1, +UINT64_MAX) end at it and are granted; only a range past it is
 * FBIG.  The boundary was untested: nlm_begin() refusing a range that
 * ends at UINT64_MAX (comparing len, not len - 1) survived every test
 * (mutation testing).
 */
static void
test_last_byte(void)
{
	nlm4_holder ho;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", UINT64_MAX, 1, 3),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "g", 1, UINT64_MAX, 3),
	    NLM4_GRANTED);
	memset(&ho, 0, sizeof(ho));
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "f", UINT64_MAX, 1, &ho),
	    NLM4_DENIED);
	CU_ASSERT_EQUAL(ho.l_offset, UINT64_MAX);
	/* One byte, or "to the end": the same byte. */
	CU_ASSERT(ho.l_len == 1 || ho.l_len == 0);
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "g", UINT64_MAX, 1, NULL),
	    NLM4_DENIED);
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "g", 0, 1, NULL),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "f", UINT64_MAX, 1),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "f", UINT64_MAX, 1, NULL),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	ts_stop();
}

/*
 * CANCEL finds the blocked request by its mode too: a shared waiter is
 * cancelled by a shared CANCEL (GRANTED), is gone, and is not granted
 * when the lock it waited for goes.  Only exclusive requests were ever
 * cancelled: nlm_proc_cancel() passing every CANCEL on as exclusive
 * survived every test (mutation testing); with it, the shared waiter
 * stayed queued, DENIED was answered (which the client takes as done),
 * and the lock was granted later to an owner that no longer wanted it.
 */
static void
test_cancel_shared(void)
{
	const struct lk_table *t;
	struct lk_counts ct;

	if (ts_skip())
		return;
	t_begin();
	t = nlm_get_table();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 2, "f", 0, 10, false, true, 3),
	    NLM4_BLOCKED);
	/* An exclusive CANCEL is not the shared request's. */
	CU_ASSERT_EQUAL(t_v4_cancelx("hostB", 2, "f", 0, 10, true),
	    NLM4_DENIED);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_waiters, 1);
	CU_ASSERT_EQUAL(t_v4_cancelx("hostB", 2, "f", 0, 10, false),
	    NLM4_GRANTED);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_waiters, 0);
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "f", 0, 10), NLM4_GRANTED);
	ts_pump();
	CU_ASSERT(ts_no_callback());
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	ts_stop();
}

/*
 * A v1/v3 range ending at 0x7fffffff, the last byte 32 bits express, is
 * taken and reported as it is, not as running to the end of the file:
 * a LOCK of [0x7fffff00, +0x100) leaves 0x80000000 to others, and a
 * holder of that range is reported with its length, not 0.  Both
 * boundaries were untested: nlm_lock_to_v4() and nlm_holder_to_v1()
 * comparing the end rather than the last byte (one past 0x7fffffff)
 * survived every test (mutation testing).
 */
static void
test_v1_last_byte(void)
{
	nlm4_holder ho;
	nlm_holder ho1;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v1_lock(NLM_VERSX, "hostA", 1, "f", 0x7fffff00u,
	    0x100, 3), nlm_granted);
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "f", 0x80000000u, 0, NULL),
	    NLM4_GRANTED);
	memset(&ho, 0, sizeof(ho));
	CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "f", 0x7fffffffu, 1, &ho),
	    NLM4_DENIED);
	CU_ASSERT_EQUAL(ho.l_offset, 0x7fffff00u);
	CU_ASSERT_EQUAL(ho.l_len, 0x100);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "g", 0x7fffff00u, 0x100, 3),
	    NLM4_GRANTED);
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		memset(&ho1, 0, sizeof(ho1));
		CU_ASSERT_EQUAL(t_v1_test(vers, "hostB", 9, "g", 0x7fffffffu,
		    1, &ho1), nlm_denied);
		CU_ASSERT_EQUAL(ho1.l_offset, 0x7fffff00u);
		CU_ASSERT_EQUAL(ho1.l_len, 0x100);
	}
	ts_stop();
}

/*
 * The NSM state in a version 1 or 3 LOCK is the client's, as in version
 * 4: another state than the host's last one means it restarted without
 * an SM_NOTIFY reaching us, and what it held is released.  No test sent
 * a v1/v3 LOCK with another state: v1_lock() not handing `state' on to
 * the procedure survived every test (mutation testing).
 */
static void
test_v1_state(void)
{
	const struct nlm_counters *c;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		const char *name = vers == NLM_VERS ? "hostV1" : "hostV3";

		CU_ASSERT_EQUAL(t_v1_lock(vers, name, 1, "f", 0, 10, 3),
		    nlm_granted);
		CU_ASSERT_EQUAL(t_v1_lock(vers, name, 1, "g", 0, 10, 3),
		    nlm_granted);
		CU_ASSERT_EQUAL(fake_store_nlocks(), 2);
		/* Restarted: its old locks go, the new one is granted. */
		CU_ASSERT_EQUAL(t_v1_lock(vers, name, 2, "h", 0, 10, 5),
		    nlm_granted);
		ts_pump();
		CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
		CU_ASSERT_EQUAL(t_v4_test("hostB", 9, "f", 0, 10, NULL),
		    NLM4_GRANTED);
		CU_ASSERT_EQUAL(t_v1_lock(vers, name, 2, "h", 0, 10, 5),
		    nlm_granted);
		CU_ASSERT_EQUAL(t_v4_unlock(name, 2, "h", 0, 10),
		    NLM4_GRANTED);
		CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	}
	CU_ASSERT_EQUAL(c->reboots, 2);
	ts_stop();
}

/*
 * A LOCK carrying NSM state 0 tells nothing of a restart (0 is no
 * state: nlm_host_monitor() passes it by): what the host holds stays,
 * and so does the state it sent before.  No test sent one: nlm_host_monitor()
 * taking 0 for a new state -- releasing everything the host held, then
 * again at its next LOCK with its real state -- survived every test
 * (mutation testing).
 */
static void
test_lock_state_zero(void)
{
	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "g", 0, 10, 0), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "h", 0, 10, 3), NLM4_GRANTED);
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nlocks(), 3);
	CU_ASSERT_EQUAL(nlm_get_counters()->reboots, 0);
	ts_stop();
}

/*
 * Bad names and handles get the protocol's error and make nothing: a
 * caller_name over max-name bytes (255 here) or holding a '/' is
 * NLM4_FAILED, an empty file handle NLM4_STALE_FH (nlm_denied_nolocks
 * in version 3), and no host is made for them; a name of 255 bytes is
 * served.  Only the integration script sent them (tests/nlm/nlmtest.c,
 * test_limits): nlm_name_ok() accepting one byte more than max-name or
 * a '/', and nlm_fields_check() accepting an empty file handle, survived
 * every unit test (mutation testing).
 */
static void
test_bad_names(void)
{
	static char n255[256], n256[257];

	if (ts_skip())
		return;
	t_begin();
	memset(n255, 'x', 255);
	memset(n256, 'y', 256);
	CU_ASSERT_EQUAL(t_v4_lock(n256, 1, "f", 0, 10, 3), NLM4_FAILED);
	CU_ASSERT_EQUAL(t_v4_test(n256, 1, "f", 0, 10, NULL), NLM4_FAILED);
	CU_ASSERT_EQUAL(t_v4_lock("bad/name", 1, "f", 0, 10, 3),
	    NLM4_FAILED);
	CU_ASSERT_EQUAL(t_v4_unlock("bad/name", 1, "f", 0, 10),
	    NLM4_FAILED);
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "", 0, 10, 3), NLM4_STALE_FH);
	CU_ASSERT_EQUAL(t_v4_cancel("hostA", 1, "", 0, 10), NLM4_STALE_FH);
	CU_ASSERT_EQUAL(t_v1_lock(NLM_VERSX, n256, 1, "f", 0, 10, 3),
	    nlm_denied_nolocks);
	CU_ASSERT_EQUAL(t_v1_lock(NLM_VERSX, "hostA", 1, "", 0, 10, 3),
	    nlm_denied_nolocks);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(t_v4_lock(n255, 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	ts_stop();
}

/*
 * TEST and UNSHARE from a host never seen are answered (GRANTED: nothing
 * held conflicts, nothing held to give up) and make no host: anyone can
 * send them from any address, and each host made is a record stored and
 * one of max-hosts.  Only CANCEL from an unknown host was tried:
 * nlm_proc_test() and nlm_proc_unshare() resolving with `create' set
 * survived every test (mutation testing).
 */
static void
test_unknown_host_made_nothing(void)
{
	nlm4_shareargs sa;
	nlm4_shareres sr;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_test("hostU", 1, "f", 0, 10, NULL),
	    NLM4_GRANTED);
	memset(&sa, 0, sizeof(sa));
	sa.cookie.nlm_netobj_len = sizeof(t_cookie);
	sa.cookie.nlm_netobj_val = t_cookie;
	sa.share.caller_name = (char *)"hostU";
	sa.share.fh.nlm_netobj_len = 1;
	sa.share.fh.nlm_netobj_val = (char *)"f";
	sa.share.oh.nlm_netobj_len = 3;
	sa.share.oh.nlm_netobj_val = (char *)"own";
	sa.share.mode = fsm_DN;
	sa.share.access = fsa_R;
	memset(&sr, 0, sizeof(sr));
	CU_ASSERT_EQUAL_FATAL(t_call(NLM4_VERS, NLMPROC4_UNSHARE,
	    XDRPROC(xdr_nlm4_shareargs), &sa, XDRPROC(xdr_nlm4_shareres),
	    &sr), 0);
	CU_ASSERT_EQUAL(sr.stat, NLM4_GRANTED);
	xdr_free(XDRPROC(xdr_nlm4_shareres), (char *)&sr);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	ts_stop();
}

/*
 * A blocking reclaim is never queued, so it needs no callback record:
 * none is allocated for it, and it is served when that allocation would
 * fail.  Here outside grace, of a range its owner holds (granted, a
 * reclaim re-sent).  Clearing `block' for a reclaim was untested:
 * nlm_lock_decide() without `!a->reclaim' -- a callback record made for
 * every blocking reclaim, and the reclaim refused DENIED_NOLOCKS when
 * there was no memory for it -- survived every test (mutation testing).
 */
static void
test_reclaim_no_grant_record(void)
{
	nlm4_lockargs a;
	nlm4_res r;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(t_cookie);
	a.cookie.nlm_netobj_val = t_cookie;
	a.block = TRUE;
	a.exclusive = TRUE;
	a.reclaim = TRUE;
	a.state = 3;
	t_lock4(&a.alock, "hostA", 1, "f", 0, 10);
	ts_calloc_fail(sizeof(struct nlm_grant));
	memset(&r, 0, sizeof(r));
	CU_ASSERT_EQUAL_FATAL(t_call(NLM4_VERS, NLMPROC4_LOCK,
	    XDRPROC(xdr_nlm4_lockargs), &a, XDRPROC(xdr_nlm4_res), &r), 0);
	CU_ASSERT_EQUAL(r.stat.stat, NLM4_GRANTED);
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	CU_ASSERT(ts_calloc_armed());	/* never asked for */
	ts_calloc_fail(0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	ts_stop();
}

/*
 * A version 3 GRANTED_RES refusing the grant (nlm_denied: the client no
 * longer wants the lock) undoes it: the lock is free for others.  Only
 * an nlm_granted GRANTED_RES was sent (test_v3_granted_res()):
 * v1_granted_res() confirming whatever status the client sent survived
 * every test (mutation testing); with it the lock stayed held for a
 * client that had refused it.
 */
static void
test_v3_granted_res_refused(void)
{
	const struct nlm_counters *c;
	const struct lk_table *t;
	struct lk_counts ct;
	nlm_testargs ga;
	nlm_res r;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	t = nlm_get_table();
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_LOCK, "hostA", "f", 0),
	    nlm_granted);
	CU_ASSERT_EQUAL(t_v3_block("hostB", "f"), nlm_blocked);
	CU_ASSERT_EQUAL(t_v1_call(NLM_VERSX, NLMPROC_UNLOCK, "hostA", "f", 0),
	    nlm_granted);
	CU_ASSERT_FATAL(t_v3_granted_msg(&ga) == 0);
	memset(&r, 0, sizeof(r));
	r.cookie = ga.cookie;
	r.stat.stat = nlm_denied;
	(void)ts_send_vers(NLM_VERSX, NLMPROC_GRANTED_RES, XDRPROC(xdr_nlm_res),
	    &r);
	ts_pump();
	CU_ASSERT_EQUAL(ts_drain(), 1);		/* its void reply */
	xdr_free(XDRPROC(xdr_nlm_testargs), (char *)&ga);
	CU_ASSERT_EQUAL(c->cb_refused, 1);
	CU_ASSERT_EQUAL(c->cb_acked, 0);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_pending, 0);
	CU_ASSERT_EQUAL(ct.ct_locks, 0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(t_v4_test("hostC", 3, "f", 0, 1, NULL), NLM4_GRANTED);
	ts_stop();
}

/*
 * Versions 1 and 3 keep the mode of LOCK and CANCEL: two hosts' shared
 * locks are both granted (an exclusive one is not), and a shared blocked
 * request is cancelled by a shared CANCEL.  Only exclusive v1/v3 locks
 * were taken: v1_lock() or v1_cancel() passing every request on as
 * exclusive survived every test (mutation testing).
 */
static void
test_v1_shared(void)
{
	const struct lk_table *t;
	struct lk_counts ct;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	t = nlm_get_table();
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		const char *f = vers == NLM_VERS ? "f1" : "f3";
		const char *g = vers == NLM_VERS ? "g1" : "g3";

		CU_ASSERT_EQUAL(t_v1_lockx(vers, "hostA", 1, f, 0, 10, false,
		    false, 3), nlm_granted);
		CU_ASSERT_EQUAL(t_v1_lockx(vers, "hostB", 2, f, 0, 10, false,
		    false, 3), nlm_granted);
		CU_ASSERT_EQUAL(t_v1_lockx(vers, "hostC", 3, f, 0, 10, true,
		    false, 3), nlm_denied);
		CU_ASSERT_EQUAL(t_v4_lock("hostC", 3, g, 0, 10, 3),
		    NLM4_GRANTED);
		CU_ASSERT_EQUAL(t_v1_lockx(vers, "hostB", 2, g, 0, 10, false,
		    true, 3), nlm_blocked);
		CU_ASSERT_EQUAL(t_v1_cancelx(vers, "hostB", 2, g, 0, 10,
		    false), nlm_granted);
		lk_table_counts(t, &ct);
		CU_ASSERT_EQUAL(ct.ct_waiters, 0);
	}
	ts_stop();
}

/*
 * A shared LOCK that waited is called back shared: the GRANTED_MSG says
 * exclusive FALSE, in version 4 and in version 3.  A Linux client
 * matches a GRANTED against its waiting request by type as well
 * (nlm_compare_locks()): called back exclusive, its shared waiter is
 * not found, it answers DENIED and the grant is undone.  Only exclusive
 * waiters were called back: grant_encode() sending every callback
 * exclusive survived every test (mutation testing).
 */
static void
test_granted_shared(void)
{
	nlm4_testargs ta;
	nlm_testargs ga;

	if (ts_skip())
		return;
	t_begin();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 2, "f", 0, 10, false, true, 3),
	    NLM4_BLOCKED);
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "f", 0, 10), NLM4_GRANTED);
	CU_ASSERT_EQUAL_FATAL(ts_callback(&ta, NULL), NLMPROC4_GRANTED_MSG);
	CU_ASSERT_EQUAL(ta.alock.svid, 2);
	CU_ASSERT_FALSE(ta.exclusive);
	xdr_free(XDRPROC(xdr_nlm4_testargs), (char *)&ta);

	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "g", 0, 10, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v1_lockx(NLM_VERSX, "hostC", 3, "g", 0, 10, false,
	    true, 3), nlm_blocked);
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "g", 0, 10), NLM4_GRANTED);
	CU_ASSERT_FATAL(t_v3_granted_msg(&ga) == 0);
	CU_ASSERT_EQUAL(ga.alock.svid, 3);
	CU_ASSERT_FALSE(ga.exclusive);
	xdr_free(XDRPROC(xdr_nlm_testargs), (char *)&ga);
	ts_stop();
}

/*
 * A v1/v3 length of 0xffffffff from an offset past 1 runs past what 32
 * bits express: to the end of the file, as any range whose end passes
 * 0x7fffffff -- an end computed in 64 bits.  In 32 bits it wraps below
 * the offset (0x10 + 0xffffffff - 1 is 0xe) and the lock was taken as
 * [0x10, 0x10 + 0xffffffff), the bytes past it left to others.  Only
 * ranges whose 32-bit end does not wrap were sent: nlm_lock_to_v4()
 * without its cast to 64 bits survived every test (mutation testing).
 * UNLOCK of the same range gives it all back.
 */
static void
test_v1_len_max(void)
{
	nlm4_holder ho;
	uint32_t vers;

	if (ts_skip())
		return;
	t_begin();
	for (vers = NLM_VERS; vers <= NLM_VERSX; vers += NLM_VERSX - NLM_VERS) {
		const char *f = vers == NLM_VERS ? "f1" : "f3";

		CU_ASSERT_EQUAL(t_v1_lock(vers, "hostA", 1, f, 0x10,
		    0xffffffffu, 3), nlm_granted);
		memset(&ho, 0, sizeof(ho));
		CU_ASSERT_EQUAL(t_v4_test("hostB", 9, f, 1ull << 33, 1, &ho),
		    NLM4_DENIED);
		CU_ASSERT_EQUAL(ho.l_offset, 0x10);
		CU_ASSERT_EQUAL(ho.l_len, 0);
		CU_ASSERT_EQUAL(t_v4_test("hostB", 9, f, 0, 0x10, NULL),
		    NLM4_GRANTED);
		CU_ASSERT_EQUAL(t_v1_unlock(vers, "hostA", 1, f, 0x10,
		    0xffffffffu), nlm_granted);
		CU_ASSERT_EQUAL(t_v4_test("hostB", 9, f, 1ull << 33, 1, NULL),
		    NLM4_GRANTED);
	}
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	ts_stop();
}

/*
 * UNLOCK implies CANCEL: the owner's blocked request inside the range it
 * unlocks is abandoned (its process was interrupted, or its GRANTED_RES
 * got lost) and is not granted when the lock it waited for goes; its
 * request outside that range stays queued and is granted.  Only the
 * integration script checked it (tests/nlm/nlmtest.c, unlock-wait):
 * nlm_proc_unlock() calling lk_unlock() instead of lk_unlock_cancel() --
 * the abandoned request granted later to an owner that no longer wanted
 * it -- survived every unit test (mutation testing).
 */
static void
test_unlock_cancels_queued(void)
{
	const struct lk_table *t;
	struct lk_counts ct;
	nlm4_testargs ta;

	if (ts_skip())
		return;
	t_begin();
	t = nlm_get_table();
	CU_ASSERT_EQUAL(t_v4_lock("hostA", 1, "f", 0, 100, 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 2, "f", 10, 10, true, true, 3),
	    NLM4_BLOCKED);
	CU_ASSERT_EQUAL(t_v4_lockx("hostB", 2, "f", 50, 10, true, true, 3),
	    NLM4_BLOCKED);
	/* B holds nothing there: GRANTED, and its wait in [0, 20) ends. */
	CU_ASSERT_EQUAL(t_v4_unlock("hostB", 2, "f", 0, 20), NLM4_GRANTED);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_waiters, 1);
	CU_ASSERT_EQUAL(t_v4_unlock("hostA", 1, "f", 0, 100), NLM4_GRANTED);
	CU_ASSERT_EQUAL_FATAL(ts_callback(&ta, NULL), NLMPROC4_GRANTED_MSG);
	CU_ASSERT_EQUAL(ta.alock.svid, 2);
	CU_ASSERT_EQUAL(ta.alock.l_offset, 50);
	xdr_free(XDRPROC(xdr_nlm4_testargs), (char *)&ta);
	CU_ASSERT(ts_no_callback());
	CU_ASSERT_EQUAL(t_v4_test("hostC", 3, "f", 10, 10, NULL),
	    NLM4_GRANTED);
	ts_stop();
}

static void
t_out_done(void *arg, enum onc_out_status st, XDR *res)
{
	(void)res;
	*(int *)arg = (int)st;
}

/*
 * A datagram from the address called, carrying the call's xid, that is
 * no RPC reply (cut short after its direction or inside its header, or a
 * CALL that reuses the xid) leaves the call as it was: sent, pending,
 * not counted as a reply, sent again at its timer; the reply that then
 * comes completes it.  Taken for an answer, such a datagram would
 * acknowledge (or refuse) a GRANTED callback the client never saw.  No
 * test had run rpcout.c's branch (the coverage build).
 */
static void
test_out_reply_garbage(void)
{
	struct sockaddr_storage dst;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&dst;
	const struct onc_out_stats *os;
	struct onc_out_req rq;
	struct rpc_msg rep;
	uint8_t buf[128], raw[256];
	uint32_t xid, rx, w[10];
	uint64_t replies;
	size_t len = 0;
	XDR x;
	int st = -1;

	if (ts_skip())
		return;
	t_begin();
	memset(&dst, 0, sizeof(dst));
	s4->sin_family = AF_INET;
	s4->sin_port = htons(ts_cb_port());
	inet_pton(AF_INET, "127.0.0.1", &s4->sin_addr);
	memset(&rq, 0, sizeof(rq));
	rq.cr_dst = (struct sockaddr *)&dst;
	rq.cr_dstlen = sizeof(*s4);
	rq.cr_prog = NLM_PROG;
	rq.cr_vers = NLM4_VERS;
	rq.cr_proc = 0;	/* NULL */
	rq.cr_xargs = XDRPROC(xdr_void);
	rq.cr_timeout_ms = 1000;
	rq.cr_tries = 2;
	rq.cr_cb = t_out_done;
	rq.cr_arg = &st;
	CU_ASSERT_EQUAL_FATAL(onc_out_call(ts_clnt(), &rq, &xid), ONC_OK);
	onc_out_seal(ts_clnt(), UINT64_MAX);
	onc_out_release(ts_clnt(), UINT64_MAX);
	CU_ASSERT_FATAL(ts_callback_raw(raw, sizeof(raw)) >= 4);
	os = onc_out_stats(ts_clnt());
	replies = os->replies;

	/* The xid and REPLY, nothing more. */
	w[0] = htonl(xid);
	w[1] = htonl(REPLY);
	onc_out_input(ts_clnt(), &dst, (uint8_t *)w, 8);
	/* A CALL with the xid (40 bytes: a NULL call, AUTH_NONE). */
	w[1] = htonl(CALL);
	w[2] = htonl(2);
	w[3] = htonl(NLM_PROG);
	w[4] = htonl(NLM4_VERS);
	memset(&w[5], 0, 5 * sizeof(w[0]));
	onc_out_input(ts_clnt(), &dst, (uint8_t *)w, sizeof(w));
	/* An accepted reply cut short before its status. */
	ts_accepted(&rep, xid, XDRPROC(xdr_void), NULL);
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		len = xdr_getpos(&x);
	xdr_destroy(&x);
	CU_ASSERT_FATAL(len == 24);
	onc_out_input(ts_clnt(), &dst, buf, len - 4);
	CU_ASSERT_EQUAL(st, -1);
	CU_ASSERT(onc_out_sent(ts_clnt(), xid));
	CU_ASSERT_EQUAL(os->replies, replies);

	/* Still pending: sent again at its timer. */
	ts_advance(1000);
	ts_turn();
	CU_ASSERT_FATAL(ts_callback_raw(raw, sizeof(raw)) >= 4);
	memcpy(&rx, raw, 4);
	CU_ASSERT_EQUAL(ntohl(rx), xid);
	CU_ASSERT_EQUAL(st, -1);
	/* The reply completes it. */
	onc_out_input(ts_clnt(), &dst, buf, len);
	CU_ASSERT_EQUAL(st, ONC_OUT_OK);
	CU_ASSERT(!onc_out_sent(ts_clnt(), xid));
	CU_ASSERT_EQUAL(os->replies, replies + 1);
	ts_stop();
}

/*
 * A port look-up that could not even be made (onc_out_call() out of
 * memory: rpcout.c's allocation of the call) says nothing of the client:
 * the send waiting for it fails, and the next _RES to that address looks
 * the port up and goes out.  Before, the failure was taken for the
 * client's rpcbind saying "no port" and remembered for NEG_TTL_MS: every
 * _RES to that address failed at once, without a look-up, for 30 s -- a
 * client using the _MSG procedures left without answers after one failed
 * allocation of ours.  No test had run rpcout.c's branch (the coverage
 * build).
 */
static void
test_port_lookup_nomem(void)
{
	const struct nlm_counters *c;
	struct t_sent ts = { 0, 0 };
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct nlm_send *snd;
	nlm4_res res;
	unsigned lookups;

	if (ts_skip())
		return;
	t_begin();
	c = nlm_get_counters();
	lookups = ts_nlm_lookups();
	/* The port found and used... */
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(ts_callback_ack(), NLMPROC4_LOCK_RES);
	ts_pump();
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	/* ... expires (PORT_TTL_MS); the loop has not swept it yet. */
	ts_advance(120000);
	memset(&res, 0, sizeof(res));
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snd = nlm_send_new(&ss, sizeof(*sin), NLM_PROG, NLM4_VERS,
	    NLMPROC4_LOCK_RES, XDRPROC(xdr_nlm4_res), &res, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_lookup(snd, 1000, 1);
	nlm_send_reflectable(snd);
	nlm_send_oneway(snd);
	ts_calloc_fail(SIZE_MAX);
	nlm_send_start(snd, 5000, 1, t_sent_cb, &ts);
	CU_ASSERT(!ts_calloc_armed());		/* it was asked for */
	ts_calloc_fail(0);
	ts_pump();
	CU_ASSERT_EQUAL(ts.n, 2);
	CU_ASSERT_EQUAL(ts.failed, 1);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);	/* none went out */
	/* Memory back: the next _RES looks the port up and goes out. */
	t_res_lo(&ts);
	CU_ASSERT_EQUAL(c->rpcb_suppressed, 0);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(ts_callback_ack(), NLMPROC4_LOCK_RES);
	ts_pump();
	CU_ASSERT_EQUAL(ts.n, 3);
	CU_ASSERT_EQUAL(ts.failed, 1);
	ts_stop();
}

/*
 * The outgoing sockets cannot be made: onc_out_new() says why, for the
 * operator (nlmd does not start), and leaves no descriptor open.  Its
 * IPv4 port taken (here by a socket of the test's): "outgoing udp
 * socket (port N): Address already in use", the IPv6 socket made before
 * it closed again.  No memory for the client: "out of memory".  No test
 * had run these branches (the coverage build).
 */
static void
test_out_new_fails(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct ev_loop *l;
	char err[256], want[64];
	int fd, probe;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l = ev_loop_new());
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd != -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&sin, &sl) == 0);
	/* The lowest descriptor free now: free again after each failure. */
	CU_ASSERT_FATAL((probe = dup(fd)) != -1);
	close(probe);
	err[0] = '\0';
	CU_ASSERT_PTR_NULL(onc_out_new(l, ntohs(sin.sin_port), err,
	    sizeof(err)));
	snprintf(want, sizeof(want), "outgoing udp socket (port %u): ",
	    ntohs(sin.sin_port));
	CU_ASSERT_NSTRING_EQUAL(err, want, strlen(want));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(EADDRINUSE)));
	CU_ASSERT_EQUAL(dup(fd), probe);
	close(probe);
	err[0] = '\0';
	ts_calloc_fail(SIZE_MAX);
	CU_ASSERT_PTR_NULL(onc_out_new(l, 0, err, sizeof(err)));
	CU_ASSERT(!ts_calloc_armed());		/* it was asked for */
	ts_calloc_fail(0);
	CU_ASSERT_STRING_EQUAL(err, "out of memory");
	CU_ASSERT_EQUAL(dup(fd), probe);
	close(probe);
	close(fd);
	ev_loop_free(l);
}

/*
 * The outgoing client's IPv6 socket that cannot be made for a reason
 * other than a host without IPv6 (here its port held on [::] only) stops
 * the start with the reason.  Before, the client went on without it, with
 * no word: every callback and SM_NOTIFY to an IPv6 client failed.
 */
static void
test_out_new_ipv6_fails(void)
{
	struct sockaddr_in6 s6;
	socklen_t sl = sizeof(s6);
	struct ev_loop *l;
	struct onc_out *cl;
	char err[256], want[64];
	int fd, one = 1, probe;

	if ((fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		printf("\n    SKIPPED: no IPv6 socket here (%s) ",
		    strerror(errno));
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(l = ev_loop_new());
	CU_ASSERT_FATAL(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
	    sizeof(one)) == 0);
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&s6, &sl) == 0);
	CU_ASSERT_FATAL((probe = dup(fd)) != -1);
	close(probe);
	err[0] = '\0';
	cl = onc_out_new(l, ntohs(s6.sin6_port), err, sizeof(err));
	CU_ASSERT_PTR_NULL(cl);
	if (cl != NULL)
		onc_out_free(cl);
	snprintf(want, sizeof(want), "outgoing udp socket (IPv6, port %u): ",
	    ntohs(s6.sin6_port));
	CU_ASSERT_NSTRING_EQUAL(err, want, strlen(want));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(EADDRINUSE)));
	/* Its IPv4 socket closed again. */
	CU_ASSERT_EQUAL(dup(fd), probe);
	close(probe);
	close(fd);
	ev_loop_free(l);
}

/* nlm_out.c's bucket (peer_hash()) of 127.0.0.1, program prog, vers. */
static size_t
t_peer_hash_lo(uint32_t prog, uint32_t vers)
{
	uint8_t buf[12];
	uint32_t a = htonl(INADDR_LOOPBACK);

	memcpy(buf, &a, 4);
	memcpy(buf + 4, &prog, 4);
	memcpy(buf + 8, &vers, 4);
	return (size_t)(lk_siphash(nlm->n_conf.nc_hash_key, 0x70656572, buf,
	    sizeof(buf)) & 4095);
}

/*
 * The port cache is per program too: NLM version 1 and the status
 * monitor (SM_PROG) are both version 1, and a client's lockd and statd
 * listen on ports of their own.  An SM_NOTIFY after a version 1 callback
 * to the same address is looked up on its own and reaches the status
 * monitor, not the port of the client's NLM, also when the two entries
 * share a bucket (the hash key chosen so).  peer_get() matching entries
 * on version and address only -- the SM_NOTIFY sent to the client's
 * lockd, lost, the client never told to reclaim -- survived every test
 * (mutation testing).
 */
static void
test_port_per_program(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct t_sent ts = { 0, 0 };
	struct stat_chge sc, got;
	struct nlm_send *snd;
	unsigned lookups, smlookups;
	uint32_t k;

	if (ts_skip())
		return;
	t_begin();
	/* No host nor port cached yet: a new key changes no bucket in use. */
	for (k = 0; k < 1000000; k++) {
		memcpy(nlm->n_conf.nc_hash_key, &k, sizeof(k));
		if (t_peer_hash_lo(NLM_PROG, NLM_VERS) ==
		    t_peer_hash_lo(SM_PROG, SM_VERS))
			break;
	}
	CU_ASSERT_FATAL(k < 1000000);
	lookups = ts_nlm_lookups();
	smlookups = ts_sm_lookups();
	t_send_lo_answered(NLM_VERS, &ts);
	CU_ASSERT_EQUAL(ts_nlm_lookups() - lookups, 1);
	memset(&sc, 0, sizeof(sc));
	sc.mon_name = (char *)"server";
	sc.state = 3;
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snd = nlm_send_new(&ss, sizeof(*sin), SM_PROG, SM_VERS, SM_NOTIFY,
	    XDRPROC(xdr_stat_chge), &sc, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snd);
	nlm_send_start(snd, 1000, 1, t_sent_cb, &ts);
	ts_pump();
	CU_ASSERT_EQUAL(ts_sm_lookups() - smlookups, 1);
	memset(&got, 0, sizeof(got));
	CU_ASSERT_EQUAL_FATAL(ts_sm_notify(&got, true), 0);
	CU_ASSERT_STRING_EQUAL(got.mon_name, "server");
	CU_ASSERT_EQUAL(got.state, 3);
	xdr_free(XDRPROC(xdr_stat_chge), (char *)&got);
	ts_pump();
	CU_ASSERT(ts_no_callback());
	CU_ASSERT_EQUAL(ts.n, 2);
	CU_ASSERT_EQUAL(ts.failed, 0);
	ts_stop();
}

int
ts_register_requests(void)
{
	CU_pSuite s = CU_add_suite("requests", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "the idle sweep forgets a budget of hosts a turn",
	    test_sweep_in_pieces) == NULL ||
	    CU_add_test(s, "FBIG changes nothing", test_fbig_changes_nothing) ==
	    NULL ||
	    CU_add_test(s, "a host out of memory is refused, not fatal",
	    test_host_nomem) == NULL ||
	    CU_add_test(s, "max-hosts-per-address: one more name from the "
	    "address refused", test_hosts_per_address) == NULL ||
	    CU_add_test(s, "max-hosts: one more host refused",
	    test_max_hosts) == NULL ||
	    CU_add_test(s, "the port cache is keyed: no chosen collisions",
	    test_peer_hash_flood) == NULL ||
	    CU_add_test(s, "a full port cache makes room for a new address",
	    test_peer_cache_full) == NULL ||
	    CU_add_test(s, "a call refused at the cached port: looked up "
	    "again at once", test_port_refused_looked_up) == NULL ||
	    CU_add_test(s, "timeouts count against a port only in a row",
	    test_port_timeouts_in_a_row) == NULL ||
	    CU_add_test(s, "ports are cached per program: SM_NOTIFY after an "
	    "NLM v1 callback reaches the status monitor",
	    test_port_per_program) == NULL ||
	    CU_add_test(s, "ports are cached per version",
	    test_port_per_version) == NULL ||
	    CU_add_test(s, "the sweep keeps a failed look-up for its 30 s",
	    test_port_negative_kept_by_sweep) == NULL ||
	    CU_add_test(s, "a failed look-up bars no _RES once the port is "
	    "found", test_port_negative_then_found) == NULL ||
	    CU_add_test(s, "a port found ends a failed look-up's bar",
	    test_port_found_clears_negative) == NULL ||
	    CU_add_test(s, "a port found is kept for 2 minutes",
	    test_port_ttl) == NULL ||
	    CU_add_test(s, "IPv6 link-local clients on two links: two "
	    "entries", test_peer_scope) == NULL ||
	    CU_add_test(s, "an IPv6 client's port: RPCB GETADDR, its "
	    "universal address", test_port_ipv6_getaddr) == NULL ||
	    CU_add_test(s, "a full port cache keeps an entry whose look-up "
	    "is in flight", test_peer_cache_full_busy_kept) == NULL ||
	    CU_add_test(s, "FBIG for known and unknown hosts",
	    test_fbig_any_host) == NULL ||
	    CU_add_test(s, "v1/v3 TEST: the holder covers what was asked",
	    test_v3_holder_covers) == NULL ||
	    CU_add_test(s, "v1/v3 answers past 32 bits are counted",
	    test_v1_replies_counted) == NULL ||
	    CU_add_test(s, "NM_LOCK never blocks", test_nm_lock_never_blocks) ==
	    NULL ||
	    CU_add_test(s, "v3 GRANTED_MSG echoes the range, GRANTED_RES confirms",
	    test_v3_granted_res) == NULL ||
	    CU_add_test(s, "v1/v3 LOCK: a reclaim outside grace",
	    test_v1_reclaim) == NULL ||
	    CU_add_test(s, "v3 synchronous GRANTED: the reply confirms or "
	    "refuses", test_v3_sync_granted) == NULL ||
	    CU_add_test(s, "CANCEL from an unknown host: DENIED",
	    test_cancel_unknown_host) == NULL ||
	    CU_add_test(s, "TEST: shared meets shared; the holder as held",
	    test_test_modes) == NULL ||
	    CU_add_test(s, "TEST of the owner's own lock: GRANTED; of "
	    "another's: DENIED", test_test_own_lock) == NULL ||
	    CU_add_test(s, "a deadlock: DEADLCK in v4, nlm_denied in v1/v3",
	    test_deadlock_answered) == NULL ||
	    CU_add_test(s, "the last byte of 64 bits is lockable",
	    test_last_byte) == NULL ||
	    CU_add_test(s, "CANCEL of a shared blocked request",
	    test_cancel_shared) == NULL ||
	    CU_add_test(s, "v1/v3: a range ending at 0x7fffffff is exact",
	    test_v1_last_byte) == NULL ||
	    CU_add_test(s, "v1/v3 LOCK: a new NSM state releases the old "
	    "locks", test_v1_state) == NULL ||
	    CU_add_test(s, "LOCK with NSM state 0 releases nothing",
	    test_lock_state_zero) == NULL ||
	    CU_add_test(s, "bad names and file handles: refused, no host",
	    test_bad_names) == NULL ||
	    CU_add_test(s, "TEST and UNSHARE from an unknown host: no host",
	    test_unknown_host_made_nothing) == NULL ||
	    CU_add_test(s, "a blocking reclaim makes no callback record",
	    test_reclaim_no_grant_record) == NULL ||
	    CU_add_test(s, "v3 GRANTED_RES refusing the grant undoes it",
	    test_v3_granted_res_refused) == NULL ||
	    CU_add_test(s, "v1/v3 LOCK and CANCEL keep the shared mode",
	    test_v1_shared) == NULL ||
	    CU_add_test(s, "a shared waiter is called back shared (v4, v3)",
	    test_granted_shared) == NULL ||
	    CU_add_test(s, "v1/v3: length 0xffffffff runs to end of file",
	    test_v1_len_max) == NULL ||
	    CU_add_test(s, "UNLOCK ends the owner's queued request inside "
	    "its range", test_unlock_cancels_queued) == NULL ||
	    CU_add_test(s, "an outgoing call's xid on no RPC reply: the call "
	    "goes on", test_out_reply_garbage) == NULL ||
	    CU_add_test(s, "a port look-up out of memory bars no later _RES",
	    test_port_lookup_nomem) == NULL ||
	    CU_add_test(s, "the outgoing sockets cannot be made: why, and "
	    "nothing left open", test_out_new_fails) == NULL ||
	    CU_add_test(s, "the outgoing client's IPv6 socket refused "
	    "(its port held on [::]): the start stops with why",
	    test_out_new_ipv6_fails) == NULL)
		return -1;
	return 0;
}
