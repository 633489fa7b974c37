/*
 * test_share.c - SHARE/UNSHARE through the whole service (versions 3 and
 * 4), and the _MSG procedures' _RES answers: procedure, version and
 * cookie.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "lockcore.h"
#include "nlm_impl.h"
#include "svctest.h"
#include "tests/fakes/fakes.h"

#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

static char s_cookie[6] = { 's', 'h', 'c', 'k', 'i', 'e' };

static void
s_begin(void)
{
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
}

/*
 * SHARE or UNSHARE (proc) of version vers (3 or 4) by (name, oh) on fh;
 * its status (the cookie checked), -1 when no reply came.
 */
static int
s_share(uint32_t vers, uint32_t proc, const char *name, const char *oh,
    const char *fh, int mode, int access, bool reclaim)
{
	nlm4_shareargs a;
	nlm4_shareres r;
	int st = -1;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(s_cookie);
	a.cookie.nlm_netobj_val = s_cookie;
	a.share.caller_name = (char *)(uintptr_t)name;
	a.share.fh.nlm_netobj_len = (u_int)strlen(fh);
	a.share.fh.nlm_netobj_val = (char *)(uintptr_t)fh;
	a.share.oh.nlm_netobj_len = (u_int)strlen(oh);
	a.share.oh.nlm_netobj_val = (char *)(uintptr_t)oh;
	a.share.mode = (fsh_mode)mode;
	a.share.access = (fsh_access)access;
	a.reclaim = reclaim;
	memset(&r, 0, sizeof(r));
	/* v3 and v4 share arguments and results encode the same. */
	(void)ts_send_vers(vers, proc, XDRPROC(xdr_nlm4_shareargs), &a);
	ts_pump();
	if (ts_recv_result(XDRPROC(xdr_nlm4_shareres), &r) == 0) {
		st = (int)r.stat;
		CU_ASSERT_EQUAL(r.cookie.nlm_netobj_len, sizeof(s_cookie));
		CU_ASSERT(r.cookie.nlm_netobj_len == sizeof(s_cookie) &&
		    memcmp(r.cookie.nlm_netobj_val, s_cookie,
		    sizeof(s_cookie)) == 0);
	}
	xdr_free(XDRPROC(xdr_nlm4_shareres), (char *)&r);
	return st;
}

/*
 * The conflict rules (an access meeting another owner's deny, a deny
 * meeting another's access), a second SHARE of an owner replacing its
 * first, UNSHARE of nothing, a mode out of range, reclaims outside grace;
 * every reply echoes the cookie.  The mode out of range is FAILED, which
 * version 3 lacks: nlm_denied_nolocks there (a v3 SHARE answered with
 * version 4's number survived every test, mutation testing).
 */
static void
test_share_rules(void)
{
	int v;

	if (ts_skip())
		return;
	s_begin();
	for (v = 3; v <= 4; v++) {
		uint32_t sp = v == 3 ? NLMPROC_SHARE : NLMPROC4_SHARE;
		uint32_t up = v == 3 ? NLMPROC_UNSHARE : NLMPROC4_UNSHARE;
		const char *f = v == 3 ? "f3" : "f4";

		/* read, deny write */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostA", "a", f, fsm_DW, fsa_R,
		    false), NLM4_GRANTED);
		/* another reader, deny none: fine */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostB", "b", f, fsm_DN, fsa_R,
		    false), NLM4_GRANTED);
		/* a writer: denied by A's deny-write */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostC", "c", f, fsm_DN, fsa_W,
		    false), NLM4_DENIED);
		/* deny read while A and B read: denied */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostC", "c", f, fsm_DR,
		    fsa_NONE, false), NLM4_DENIED);
		/* A replaces its own: read-write, deny none: B does not deny */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostA", "a", f, fsm_DN, fsa_RW,
		    false), NLM4_GRANTED);
		/* now C may write (A no longer denies write) */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostC", "c", f, fsm_DN, fsa_W,
		    false), NLM4_GRANTED);
		/* unshare of nothing held */
		CU_ASSERT_EQUAL(s_share(v, up, "hostD", "d", f, 0, 0, false),
		    NLM4_GRANTED);
		CU_ASSERT_EQUAL(s_share(v, up, "hostA", "zz", f, 0, 0, false),
		    NLM4_GRANTED);
		/* bad mode */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostE", "e", f, 7, 0, false),
		    v == 3 ? nlm_denied_nolocks : NLM4_FAILED);
		/* reclaim outside grace of what is not held */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostE", "e", f, 0, fsa_R,
		    true), NLM4_DENIED_GRACE_PERIOD);
		/* reclaim outside grace of what is held */
		CU_ASSERT_EQUAL(s_share(v, sp, "hostC", "c", f, fsm_DN, fsa_W,
		    true), NLM4_GRANTED);
	}
	CU_ASSERT_EQUAL(fake_store_nshares(), 6);
	ts_stop();
}

/* LOCK or UNLOCK (v4, exclusive) of fh [0, 10) by (name, 1, oh). */
static int
s_lock(uint32_t proc, const char *name, const char *oh, const char *fh)
{
	nlm4_lockargs la;
	nlm4_unlockargs ua;
	nlm4_lock *l;
	nlm4_res r;
	int st = -1;

	memset(&la, 0, sizeof(la));
	memset(&ua, 0, sizeof(ua));
	l = proc == NLMPROC4_LOCK ? &la.alock : &ua.alock;
	la.cookie.nlm_netobj_len = ua.cookie.nlm_netobj_len = sizeof(s_cookie);
	la.cookie.nlm_netobj_val = ua.cookie.nlm_netobj_val = s_cookie;
	la.exclusive = TRUE;
	la.state = 3;
	l->caller_name = (char *)(uintptr_t)name;
	l->fh.nlm_netobj_len = (u_int)strlen(fh);
	l->fh.nlm_netobj_val = (char *)(uintptr_t)fh;
	l->oh.nlm_netobj_len = (u_int)strlen(oh);
	l->oh.nlm_netobj_val = (char *)(uintptr_t)oh;
	l->svid = 1;
	l->l_len = 10;
	if (proc == NLMPROC4_LOCK)
		(void)ts_send(proc, XDRPROC(xdr_nlm4_lockargs), &la);
	else
		(void)ts_send(proc, XDRPROC(xdr_nlm4_unlockargs), &ua);
	ts_pump();
	memset(&r, 0, sizeof(r));
	if (ts_recv_result(XDRPROC(xdr_nlm4_res), &r) == 0)
		st = (int)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return st;
}

/*
 * Share reservations and byte-range locks are independent: a deny-all
 * reservation stops no LOCK (its own owner's or another host's), and
 * UNSHARE and UNLOCK each leave the other kind alone.
 */
static void
test_share_vs_locks(void)
{
	if (ts_skip())
		return;
	s_begin();
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "own", "f",
	    fsm_DRW, fsa_RW, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_lock(NLMPROC4_LOCK, "hostA", "own", "f"),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_lock(NLMPROC4_LOCK, "hostB", "own", "f"),
	    NLM4_DENIED);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_UNSHARE, "hostA", "own", "f", 0,
	    0, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nshares(), 0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 1);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "own", "f",
	    fsm_DRW, fsa_RW, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_lock(NLMPROC4_UNLOCK, "hostA", "own", "f"),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(fake_store_nshares(), 1);
	CU_ASSERT_EQUAL(s_lock(NLMPROC4_LOCK, "hostB", "own", "f"),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostB", "own", "f",
	    fsm_DN, fsa_R, false), NLM4_DENIED);
	ts_stop();
}

/*
 * Shares survive a restart and come back reclaimable: in grace a SHARE
 * that meets one is DENIED_GRACE_PERIOD, one that does not is granted,
 * reclaims are granted, and grace ends when all are reclaimed.
 */
static void
test_share_restart(void)
{
	struct lk_counts ct;

	if (ts_skip())
		return;
	s_begin();
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a", "f", fsm_DW,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_share(3, NLMPROC_SHARE, "hostB", "b", "f", fsm_DN,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nshares(), 2);
	ts_stop();
	ts_start(NLM_CB_MSG, 0);
	lk_table_counts(nlm_get_table(), &ct);
	CU_ASSERT_EQUAL(ct.ct_rshares, 2);
	CU_ASSERT_EQUAL(ct.ct_shares, 0);
	/* a writer in grace meets A's reclaimable deny-write */
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostC", "c", "f", fsm_DN,
	    fsa_W, false), NLM4_DENIED_GRACE_PERIOD);
	/* a reader does not */
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostC", "c", "f", fsm_DN,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a", "f", fsm_DW,
	    fsa_R, true), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_share(3, NLMPROC_SHARE, "hostB", "b", "f", fsm_DN,
	    fsa_R, true), NLM4_GRANTED);
	lk_table_counts(nlm_get_table(), &ct);
	CU_ASSERT_EQUAL(ct.ct_rshares, 0);
	CU_ASSERT_EQUAL(ct.ct_shares, 3);
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nshares(), 3);
	ts_stop();
}

/* FREE_ALL releases a host's shares, and they leave the store. */
static void
test_share_free_all(void)
{
	nlm4_notify n;

	if (ts_skip())
		return;
	s_begin();
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a", "f", fsm_DW,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a2", "g", fsm_DW,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nshares(), 2);
	memset(&n, 0, sizeof(n));
	n.name = (char *)"hostA";
	n.state = 5;
	(void)ts_send(NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify), &n);
	ts_pump();
	(void)ts_drain();
	CU_ASSERT_EQUAL(fake_store_nshares(), 0);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostC", "c", "f", fsm_DN,
	    fsa_W, false), NLM4_GRANTED);
	ts_stop();
}

/* FREE_ALL's arguments (nlm_notify, nlm4_notify) named "hostA\0junk". */
static bool_t
s_enc_notify_nul(XDR *x, void *arg)
{
	char raw[] = "hostA\0junk";
	u_int len = sizeof(raw) - 1;
	int state = 7;

	(void)arg;
	return xdr_u_int(x, &len) && xdr_opaque(x, raw, len) &&
	    xdr_int(x, &state);
}

/* The accept status of the next reply at the UDP socket, -1: none. */
static int
s_accept_stat(void)
{
	uint32_t w[8];
	ssize_t n;

	if ((n = ts_recv(w, sizeof(w))) < 24)
		return -1;
	return (int)ntohl(w[5]);
}

/*
 * A name holding a NUL is not the name before the NUL: FREE_ALL of v3
 * and v4 naming "hostA\0junk" get GARBAGE_ARGS and release nothing of
 * hostA; FREE_ALL "hostA" does.  rpcgen's xdr_string() read the name as
 * "hostA" and released hostA's shares (only the in-place v4 LOCK, TEST,
 * UNLOCK and CANCEL decoders refused such a name).
 */
static void
test_name_with_nul(void)
{
	nlm4_notify n;
	uint32_t v;

	if (ts_skip())
		return;
	s_begin();
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a", "f", fsm_DW,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nshares(), 1);
	for (v = 3; v <= 4; v++) {
		(void)ts_send_vers(v, NLMPROC4_FREE_ALL,
		    XDRPROC(s_enc_notify_nul), NULL);
		ts_pump();
		CU_ASSERT_EQUAL(s_accept_stat(), GARBAGE_ARGS);
		CU_ASSERT_EQUAL(fake_store_nshares(), 1);
	}
	memset(&n, 0, sizeof(n));
	n.name = (char *)"hostA";
	n.state = 7;
	(void)ts_send_vers(3, NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify), &n);
	ts_pump();
	(void)ts_drain();
	CU_ASSERT_EQUAL(fake_store_nshares(), 0);
	ts_stop();
}

static int
s_rec_cb(const struct lk_record *rc, void *arg)
{
	struct lk_record *out = arg;

	*out = *rc;
	return 0;
}

/* A replaced share is stored replaced; UNSHARE in grace ends grace. */
static void
test_share_replace_restart(void)
{
	struct lk_counts ct;
	struct lk_record rc;
	nlm4_notify n;

	if (ts_skip())
		return;
	s_begin();
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a", "f", fsm_DW,
	    fsa_R, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a", "f", fsm_DN,
	    fsa_RW, false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nshares(), 1);
	ts_stop();
	ts_start(NLM_CB_MSG, 0);
	memset(&rc, 0, sizeof(rc));
	lk_share_foreach(nlm_get_table(), s_rec_cb, &rc);
	CU_ASSERT_EQUAL(rc.rc_access, LK_SHARE_R | LK_SHARE_W);
	CU_ASSERT_EQUAL(rc.rc_deny, 0);
	CU_ASSERT(rc.rc_reclaim);
	CU_ASSERT(nlm_get_grace()->g_active);
	/* another owner of the host, denying read: meets a's reader */
	CU_ASSERT_EQUAL(s_share(4, NLMPROC4_SHARE, "hostA", "a2", "f", fsm_DR,
	    fsa_R, false), NLM4_DENIED_GRACE_PERIOD);
	/* FREE_ALL in grace releases the reclaimable one */
	memset(&n, 0, sizeof(n));
	n.name = (char *)"hostA";
	(void)ts_send(NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify), &n);
	ts_pump();
	(void)ts_drain();
	lk_table_counts(nlm_get_table(), &ct);
	CU_ASSERT_EQUAL(ct.ct_rshares, 0);
	CU_ASSERT_EQUAL(fake_store_nshares(), 0);
	CU_ASSERT(!nlm_get_grace()->g_active);
	ts_stop();
	/* UNSHARE in grace */
	s_begin();
	CU_ASSERT_EQUAL(s_share(3, NLMPROC_SHARE, "hostA", "a", "f", fsm_DW,
	    fsa_R, false), NLM4_GRANTED);
	ts_stop();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT(nlm_get_grace()->g_active);
	CU_ASSERT_EQUAL(s_share(3, NLMPROC_UNSHARE, "hostA", "a", "f", 0, 0,
	    false), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_nshares(), 0);
	CU_ASSERT(!nlm_get_grace()->g_active);
	ts_stop();
}

/* ---- _MSG -> _RES ---- */

struct s_msg {
	uint32_t	vers;
	uint32_t	proc;
	uint32_t	res;
	int		st;	/* the status the _RES carries */
};

/* The owner handle of the holder s_msg() last returned. */
static char s_hoh[16];

/* The holder of a decoded TEST_RES of version vers, as version 4's. */
static void
s_holder(uint32_t vers, const nlm4_testres *tr, const nlm_testres *tr1,
    nlm4_holder *ho)
{
	const nlm_holder *h1 = &tr1->test_stat.nlm_testrply_u.holder;

	memset(ho, 0, sizeof(*ho));
	memset(s_hoh, 0, sizeof(s_hoh));
	if (vers == 4) {
		*ho = tr->test_stat.nlm4_testrply_u.holder;
	} else {
		ho->exclusive = h1->exclusive;
		ho->svid = h1->svid;
		ho->oh = h1->oh;
		ho->l_offset = h1->l_offset;
		ho->l_len = h1->l_len;
	}
	if (ho->oh.nlm_netobj_len <= sizeof(s_hoh))
		memcpy(s_hoh, ho->oh.nlm_netobj_val, ho->oh.nlm_netobj_len);
	ho->oh.nlm_netobj_val = s_hoh;
}

/*
 * Send the _MSG m with cookie `ck' for the range [off, off + 10), and take
 * the call at the client's NLM: checks program, version, procedure and
 * the cookie it carries.
 * The holder a DENIED TEST_RES carries in *ho (when ho is not NULL; its
 * owner handle in s_hoh, at most sizeof(s_hoh) bytes).
 */
static void
s_msg(const struct s_msg *m, uint32_t off, const char *ck, int *statp,
    nlm4_holder *ho)
{
	nlm4_lockargs la;
	nlm4_testargs ta;
	nlm4_cancargs ca;
	nlm4_unlockargs ua;
	nlm_lockargs la1;
	nlm_testargs ta1;
	nlm_cancargs ca1;
	nlm_unlockargs ua1;
	uint8_t buf[4096];
	struct rpc_msg cm;
	nlm4_testres tr;
	nlm4_res r;
	nlm_testres tr1;
	nlm_res r1;
	nlm_netobj *cookie = NULL;
	ssize_t n;
	XDR x;
	bool ok = false;
	nlm4_lock l4;
	nlm_lock l1;
	const void *args;
	xdrproc_t xa;

	memset(&l4, 0, sizeof(l4));
	l4.caller_name = (char *)"hostM";
	l4.fh.nlm_netobj_len = 1;
	l4.fh.nlm_netobj_val = (char *)"m";
	l4.oh.nlm_netobj_len = 2;
	l4.oh.nlm_netobj_val = (char *)"om";
	l4.svid = 9;
	l4.l_offset = off;
	l4.l_len = 10;
	memset(&l1, 0, sizeof(l1));
	l1.caller_name = l4.caller_name;
	l1.fh = l4.fh;
	l1.oh = l4.oh;
	l1.svid = 9;
	l1.l_offset = off;
	l1.l_len = 10;
	memset(&la, 0, sizeof(la));
	memset(&ta, 0, sizeof(ta));
	memset(&ca, 0, sizeof(ca));
	memset(&ua, 0, sizeof(ua));
	memset(&la1, 0, sizeof(la1));
	memset(&ta1, 0, sizeof(ta1));
	memset(&ca1, 0, sizeof(ca1));
	memset(&ua1, 0, sizeof(ua1));
	la.cookie.nlm_netobj_len = ta.cookie.nlm_netobj_len =
	    ca.cookie.nlm_netobj_len = ua.cookie.nlm_netobj_len =
	    (u_int)strlen(ck);
	la.cookie.nlm_netobj_val = ta.cookie.nlm_netobj_val =
	    ca.cookie.nlm_netobj_val = ua.cookie.nlm_netobj_val = (char *)ck;
	la1.cookie = ta1.cookie = ca1.cookie = ua1.cookie = la.cookie;
	la.alock = ta.alock = ca.alock = ua.alock = l4;
	la1.alock = ta1.alock = ca1.alock = ua1.alock = l1;
	la.exclusive = la1.exclusive = TRUE;
	ta.exclusive = ta1.exclusive = TRUE;
	la.state = la1.state = 3;
	if (m->vers == 4) {
		switch (m->proc) {
		case NLMPROC4_TEST_MSG:
		case NLMPROC4_GRANTED_MSG:
			args = &ta;
			xa = XDRPROC(xdr_nlm4_testargs);
			break;
		case NLMPROC4_LOCK_MSG:
			args = &la;
			xa = XDRPROC(xdr_nlm4_lockargs);
			break;
		case NLMPROC4_CANCEL_MSG:
			args = &ca;
			xa = XDRPROC(xdr_nlm4_cancargs);
			break;
		default:
			args = &ua;
			xa = XDRPROC(xdr_nlm4_unlockargs);
			break;
		}
	} else {
		switch (m->proc) {
		case NLMPROC_TEST_MSG:
		case NLMPROC_GRANTED_MSG:
			args = &ta1;
			xa = XDRPROC(xdr_nlm_testargs);
			break;
		case NLMPROC_LOCK_MSG:
			args = &la1;
			xa = XDRPROC(xdr_nlm_lockargs);
			break;
		case NLMPROC_CANCEL_MSG:
			args = &ca1;
			xa = XDRPROC(xdr_nlm_cancargs);
			break;
		default:
			args = &ua1;
			xa = XDRPROC(xdr_nlm_unlockargs);
			break;
		}
	}
	(void)ts_send_vers(m->vers, m->proc, xa, args);
	ts_pump();
	(void)ts_drain();
	n = ts_callback_raw(buf, sizeof(buf));
	CU_ASSERT_FATAL(n > 0);
	memset(&cm, 0, sizeof(cm));
	memset(&tr, 0, sizeof(tr));
	memset(&r, 0, sizeof(r));
	memset(&tr1, 0, sizeof(tr1));
	memset(&r1, 0, sizeof(r1));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	if (xdr_callmsg(&x, &cm)) {
		CU_ASSERT_EQUAL(cm.rm_call.cb_prog, NLM_PROG);
		CU_ASSERT_EQUAL(cm.rm_call.cb_vers, m->vers);
		CU_ASSERT_EQUAL(cm.rm_call.cb_proc, m->res);
		if (m->res == NLMPROC4_TEST_RES && m->vers == 4) {
			ok = xdr_nlm4_testres(&x, &tr);
			cookie = &tr.cookie;
			*statp = tr.test_stat.stat;
		} else if (m->res == NLMPROC_TEST_RES) {
			ok = xdr_nlm_testres(&x, &tr1);
			cookie = &tr1.cookie;
			*statp = tr1.test_stat.stat;
		} else if (m->vers == 4) {
			ok = xdr_nlm4_res(&x, &r);
			cookie = &r.cookie;
			*statp = r.stat.stat;
		} else {
			ok = xdr_nlm_res(&x, &r1);
			cookie = &r1.cookie;
			*statp = r1.stat.stat;
		}
	}
	xdr_destroy(&x);
	CU_ASSERT_FATAL(ok);
	if (ho != NULL && *statp == NLM4_DENIED)
		s_holder(m->vers, &tr, &tr1, ho);
	CU_ASSERT_EQUAL(cookie->nlm_netobj_len, strlen(ck));
	CU_ASSERT(cookie->nlm_netobj_len == strlen(ck) &&
	    memcmp(cookie->nlm_netobj_val, ck, strlen(ck)) == 0);
	xdr_free(XDRPROC(xdr_nlm4_testres), (char *)&tr);
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	xdr_free(XDRPROC(xdr_nlm_testres), (char *)&tr1);
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r1);
	CU_ASSERT(ts_no_callback());
}

/*
 * Every _MSG of every version is answered with the matching _RES, to the
 * client's NLM of the request's version, carrying the request's cookie
 * and the status the synchronous call would have.
 */
static void
test_msg_res(void)
{
	/* TEST (nothing held), LOCK, TEST (its own lock), CANCEL, UNLOCK, GRANTED */
	static const struct s_msg ms[] = {
		{ 4, NLMPROC4_TEST_MSG, NLMPROC4_TEST_RES, NLM4_GRANTED },
		{ 4, NLMPROC4_LOCK_MSG, NLMPROC4_LOCK_RES, NLM4_GRANTED },
		{ 4, NLMPROC4_TEST_MSG, NLMPROC4_TEST_RES, NLM4_GRANTED },
		{ 4, NLMPROC4_CANCEL_MSG, NLMPROC4_CANCEL_RES, NLM4_DENIED },
		{ 4, NLMPROC4_UNLOCK_MSG, NLMPROC4_UNLOCK_RES, NLM4_GRANTED },
		{ 4, NLMPROC4_GRANTED_MSG, NLMPROC4_GRANTED_RES, NLM4_DENIED },
		{ 3, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, NLM4_GRANTED },
		{ 3, NLMPROC_LOCK_MSG, NLMPROC_LOCK_RES, NLM4_GRANTED },
		{ 3, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, NLM4_GRANTED },
		{ 3, NLMPROC_CANCEL_MSG, NLMPROC_CANCEL_RES, NLM4_DENIED },
		{ 3, NLMPROC_UNLOCK_MSG, NLMPROC_UNLOCK_RES, NLM4_GRANTED },
		{ 3, NLMPROC_GRANTED_MSG, NLMPROC_GRANTED_RES, NLM4_DENIED },
		{ 1, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, NLM4_GRANTED },
		{ 1, NLMPROC_LOCK_MSG, NLMPROC_LOCK_RES, NLM4_GRANTED },
		{ 1, NLMPROC_CANCEL_MSG, NLMPROC_CANCEL_RES, NLM4_DENIED },
		{ 1, NLMPROC_UNLOCK_MSG, NLMPROC_UNLOCK_RES, NLM4_GRANTED },
		{ 1, NLMPROC_GRANTED_MSG, NLMPROC_GRANTED_RES, NLM4_DENIED },
	};
	size_t i;
	int st;
	char ck[16];

	if (ts_skip())
		return;
	s_begin();
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(ck, sizeof(ck), "cookie-%zu", i);
		st = -1;
		s_msg(&ms[i], 0, ck, &st, NULL);
		CU_ASSERT_EQUAL(st, ms[i].st);
	}
	ts_stop();
}

/* Does cookie hold the bytes of the string ck? */
static bool
s_cookie_is(const nlm_netobj *cookie, const char *ck)
{
	return cookie->nlm_netobj_len == strlen(ck) &&
	    memcmp(cookie->nlm_netobj_val, ck, strlen(ck)) == 0;
}

/*
 * A synchronous GRANTED sent to us (we are a server: no request of ours
 * waits for a grant) is answered DENIED with its cookie, in versions 1,
 * 3 and 4, counted, and changes nothing: the lock it names is neither
 * taken nor released.  Only GRANTED_MSG was sent by a test: the v1 and
 * v3 GRANTED procedures (nlm_svc.c) had never run.
 */
static void
test_granted_call_denied(void)
{
	static const uint32_t vers[] = { NLM_VERS, NLM_VERSX, NLM4_VERS };
	const struct nlm_counters *c;
	nlm4_testargs a4;
	nlm_testargs a1;
	nlm4_res r4;
	nlm_res r1;
	uint64_t denied;
	size_t i;
	char ck[16];

	if (ts_skip())
		return;
	s_begin();
	c = nlm_get_counters();
	denied = c->status[NLMPROC4_GRANTED][NLM4_DENIED];
	for (i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		snprintf(ck, sizeof(ck), "grant-%zu", i);
		memset(&a4, 0, sizeof(a4));
		a4.cookie.nlm_netobj_len = (u_int)strlen(ck);
		a4.cookie.nlm_netobj_val = ck;
		a4.exclusive = TRUE;
		a4.alock.caller_name = (char *)(uintptr_t)"hostG";
		a4.alock.fh.nlm_netobj_len = 2;
		a4.alock.fh.nlm_netobj_val = (char *)(uintptr_t)"fg";
		a4.alock.oh.nlm_netobj_len = 3;
		a4.alock.oh.nlm_netobj_val = (char *)(uintptr_t)"own";
		a4.alock.svid = 1;
		a4.alock.l_len = 10;
		memset(&r4, 0, sizeof(r4));
		memset(&r1, 0, sizeof(r1));
		if (vers[i] == NLM4_VERS) {
			(void)ts_send_vers(vers[i], NLMPROC4_GRANTED,
			    XDRPROC(xdr_nlm4_testargs), &a4);
			ts_pump();
			CU_ASSERT_FATAL(ts_recv_result(XDRPROC(xdr_nlm4_res),
			    &r4) == 0);
			CU_ASSERT_EQUAL(r4.stat.stat, NLM4_DENIED);
			CU_ASSERT(s_cookie_is(&r4.cookie, ck));
			xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r4);
			continue;
		}
		/* The same lock in the version 1/3 types. */
		memset(&a1, 0, sizeof(a1));
		a1.cookie = a4.cookie;
		a1.exclusive = a4.exclusive;
		a1.alock.caller_name = a4.alock.caller_name;
		a1.alock.fh = a4.alock.fh;
		a1.alock.oh = a4.alock.oh;
		a1.alock.svid = a4.alock.svid;
		a1.alock.l_len = (u_int)a4.alock.l_len;
		(void)ts_send_vers(vers[i], NLMPROC_GRANTED,
		    XDRPROC(xdr_nlm_testargs), &a1);
		ts_pump();
		CU_ASSERT_FATAL(ts_recv_result(XDRPROC(xdr_nlm_res), &r1) ==
		    0);
		CU_ASSERT_EQUAL(r1.stat.stat, nlm_denied);
		CU_ASSERT(s_cookie_is(&r1.cookie, ck));
		xdr_free(XDRPROC(xdr_nlm_res), (char *)&r1);
	}
	CU_ASSERT_EQUAL(c->status[NLMPROC4_GRANTED][NLM4_DENIED] - denied, 3);
	CU_ASSERT_EQUAL(c->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT(ts_no_callback());
	ts_stop();
}

/*
 * A TEST_MSG that meets another owner's lock is answered with a TEST_RES
 * carrying the holder -- its mode, svid, owner handle and its own range,
 * not the range asked about -- in versions 1, 3 and 4 alike.  Only
 * TEST_MSGs that met nothing were sent: a TEST_RES encoded as a plain
 * nlm_res (cookie and status, no holder) and a v1/v3 holder without its
 * owner handle survived every test (mutation testing).
 */
static void
test_msg_res_holder(void)
{
	static const struct s_msg ms[] = {
		{ 4, NLMPROC4_TEST_MSG, NLMPROC4_TEST_RES, NLM4_DENIED },
		{ 3, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, nlm_denied },
		{ 1, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, nlm_denied },
	};
	nlm4_holder ho;
	size_t i;
	int st;
	char ck[16];

	if (ts_skip())
		return;
	s_begin();
	/* hostH holds m [0, 10): exclusive, svid 1, owner handle "hh". */
	CU_ASSERT_EQUAL_FATAL(s_lock(NLMPROC4_LOCK, "hostH", "hh", "m"),
	    NLM4_GRANTED);
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(ck, sizeof(ck), "holder-%zu", i);
		st = -1;
		memset(&ho, 0, sizeof(ho));
		s_msg(&ms[i], 5, ck, &st, &ho);
		CU_ASSERT_EQUAL(st, ms[i].st);
		CU_ASSERT(ho.exclusive);
		CU_ASSERT_EQUAL(ho.svid, 1);
		CU_ASSERT_EQUAL(ho.oh.nlm_netobj_len, 2);
		CU_ASSERT(memcmp(s_hoh, "hh", 2) == 0);
		CU_ASSERT_EQUAL(ho.l_offset, 0);
		CU_ASSERT_EQUAL(ho.l_len, 10);
	}
	ts_stop();
}

/*
 * A v1/v3 _MSG whose offset 32 bits cannot express (read signed, as
 * Linux reads them) is answered by the adapter, without the procedure:
 * its _RES still carries the request's cookie and the status the
 * synchronous call gets, and no host is made.  No _MSG past 32 bits was
 * sent, and no test looked at the cookie of those answers: each of them
 * sent with an empty cookie -- a client matching its _RES by cookie
 * never finds the request -- survived every test (mutation testing).
 */
static void
test_msg_res_past_32(void)
{
	static const struct s_msg ms[] = {
		{ 3, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, nlm_denied_nolocks },
		{ 3, NLMPROC_LOCK_MSG, NLMPROC_LOCK_RES, nlm_denied_nolocks },
		{ 3, NLMPROC_CANCEL_MSG, NLMPROC_CANCEL_RES, nlm_denied },
		{ 3, NLMPROC_UNLOCK_MSG, NLMPROC_UNLOCK_RES, nlm_granted },
		{ 1, NLMPROC_TEST_MSG, NLMPROC_TEST_RES, nlm_denied_nolocks },
		{ 1, NLMPROC_LOCK_MSG, NLMPROC_LOCK_RES, nlm_denied_nolocks },
		{ 1, NLMPROC_CANCEL_MSG, NLMPROC_CANCEL_RES, nlm_denied },
		{ 1, NLMPROC_UNLOCK_MSG, NLMPROC_UNLOCK_RES, nlm_granted },
	};
	size_t i;
	int st;
	char ck[16];

	if (ts_skip())
		return;
	s_begin();
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(ck, sizeof(ck), "past32-%zu", i);
		st = -1;
		/* The first offset past 0x7fffffff, and the last. */
		s_msg(&ms[i], ms[i].vers == 3 ? 0x80000000u : 0xffffffffu, ck,
		    &st, NULL);
		CU_ASSERT_EQUAL(st, ms[i].st);
	}
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	ts_stop();
}

int
ts_register_share(void)
{
	CU_pSuite s = CU_add_suite("shares and messages", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "SHARE/UNSHARE v3 and v4: conflicts, replacing, "
	    "nothing held, bad mode, reclaim outside grace",
	    test_share_rules) == NULL ||
	    CU_add_test(s, "shares and locks are independent",
	    test_share_vs_locks) == NULL ||
	    CU_add_test(s, "shares survive a restart; grace and reclaims",
	    test_share_restart) == NULL ||
	    CU_add_test(s, "FREE_ALL releases shares", test_share_free_all) ==
	    NULL ||
	    CU_add_test(s, "a name holding a NUL is refused, v3 and v4",
	    test_name_with_nul) == NULL ||
	    CU_add_test(s, "a replaced share is stored replaced; FREE_ALL and "
	    "UNSHARE in grace", test_share_replace_restart) == NULL ||
	    CU_add_test(s, "each _MSG of v1, v3, v4: its _RES, version, cookie",
	    test_msg_res) == NULL ||
	    CU_add_test(s, "a GRANTED call to the server, v1, v3, v4: DENIED, "
	    "nothing changed", test_granted_call_denied) == NULL ||
	    CU_add_test(s, "a TEST_MSG meeting a lock: its TEST_RES carries "
	    "the holder, v1, v3, v4", test_msg_res_holder) == NULL ||
	    CU_add_test(s, "a v1/v3 _MSG past 32 bits: its _RES, cookie, "
	    "status", test_msg_res_past_32) == NULL)
		return -1;
	return 0;
}
