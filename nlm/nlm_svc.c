/*
 * nlm_svc.c - the handlers rpcgen's dispatchers call, for NLM versions 1,
 * 3 and 4.
 *
 * Each handler builds a struct nlm_ctx from the transport, converts v1/v3
 * arguments to their v4 form, calls the one implementation in nlm_proc.c
 * and converts the result back.  No decisions are made here.
 *
 * Versions 1 and 3 carry 32-bit ranges.  Like the Linux server we read
 * them as signed 32-bit values: an offset above 0x7fffffff cannot be
 * expressed (answered nlm_denied_nolocks; UNLOCK of it is a no-op), and a
 * length of 0 or one whose end passes 0x7fffffff means "to end of file".
 * A conflicting holder is reported with its offset clamped to 0x7fffffff,
 * and with length 0 (to end of file) when it runs to end of file or past
 * 0x7fffffff.  Version 4 status
 * codes that versions 1/3 lack become nlm_denied (DEADLCK) or
 * nlm_denied_nolocks (the rest), as Linux does.
 *
 * Results never own memory: cookies point into the arguments and holder
 * owner handles into the lock table, both alive until the reply has been
 * encoded, so the freeresult functions free nothing.
 */
#include "nlm_impl.h"

#include <string.h>

#include "rpcsrv.h"

#define NLM32_MAX	0x7fffffffu

static void
nlm_ctx_init(struct nlm_ctx *cx, struct svc_req *rq)
{
	struct onc_call *c = onc_srv_call(rq);

	memset(cx, 0, sizeof(*cx));
	cx->cx_vers = (uint32_t)rq->rq_vers;
	cx->cx_proc = (uint32_t)rq->rq_proc;
	cx->cx_peer = c->rc_peer;
	cx->cx_peerlen = c->rc_peerlen;
	addr_unmap(&cx->cx_peer, &cx->cx_peerlen);
	cx->cx_local = c->rc_local;
	cx->cx_locallen = c->rc_locallen;
	addr_unmap(&cx->cx_local, &cx->cx_locallen);
	cx->cx_monitored = true;
	if (cx->cx_vers < 5 && cx->cx_proc < NLM_NPROCS) {
		nlm->n_stats.calls[cx->cx_vers][cx->cx_proc]++;
		nlm_lat_begin(cx->cx_proc);
	}
}

/* ---- 32-bit conversions ---- */

static nlm_stats
nlm_stat_to_v1(nlm4_stats s)
{
	switch (s) {
	case NLM4_GRANTED:
		return nlm_granted;
	case NLM4_DENIED:
	case NLM4_DEADLCK:
		return nlm_denied;
	case NLM4_BLOCKED:
		return nlm_blocked;
	case NLM4_DENIED_GRACE_PERIOD:
		return nlm_denied_grace_period;
	default:
		return nlm_denied_nolocks;
	}
}

/* v1/v3 lock -> v4 lock.  Returns -1 when the offset cannot be expressed. */
static int
nlm_lock_to_v4(const nlm_lock *l, nlm4_lock *l4, struct nlm_ctx *cx)
{
	l4->caller_name = l->caller_name;
	l4->fh = l->fh;
	l4->oh = l->oh;
	l4->svid = l->svid;
	l4->l_offset = l->l_offset;
	cx->cx_wire_off = l->l_offset;
	cx->cx_wire_len = l->l_len;
	if (l->l_offset > NLM32_MAX)
		return -1;
	if (l->l_len == 0 || (uint64_t)l->l_offset + l->l_len - 1 > NLM32_MAX)
		l4->l_len = 0;
	else
		l4->l_len = l->l_len;
	return 0;
}

static void
nlm_holder_to_v1(const nlm4_holder *h4, nlm_holder *h)
{
	h->exclusive = h4->exclusive;
	h->svid = h4->svid;
	h->oh = h4->oh;
	h->l_offset = h4->l_offset > NLM32_MAX ? NLM32_MAX :
	    (unsigned)h4->l_offset;
	/*
	 * A last byte past NLM32_MAX is past the end of the file as versions
	 * 1 and 3 see it: to the end (length 0).  Clamping the length
	 * instead reported a holder that may miss the bytes asked about:
	 * [0, 2^32) as (0, 0x7fffffff), without the byte 0x7fffffff.
	 */
	if (h4->l_len == 0 || h4->l_offset > NLM32_MAX ||
	    h4->l_len - 1 > NLM32_MAX - h4->l_offset)
		h->l_len = 0;
	else
		h->l_len = (unsigned)h4->l_len;
}

static void
nlm_res_to_v1(const nlm4_res *r4, nlm_res *r)
{
	r->cookie = r4->cookie;
	r->stat.stat = nlm_stat_to_v1(r4->stat.stat);
}

static void
nlm_testres_to_v1(const nlm4_testres *r4, nlm_testres *r)
{
	r->cookie = r4->cookie;
	r->test_stat.stat = nlm_stat_to_v1(r4->test_stat.stat);
	if (r4->test_stat.stat == NLM4_DENIED)
		nlm_holder_to_v1(&r4->test_stat.nlm4_testrply_u.holder,
		    &r->test_stat.nlm_testrply_u.holder);
}

/* A v1/v3 request whose offset does not fit: the answer without a call. */
static void
nlm_res_nolocks(const nlm_netobj *cookie, nlm_res *r)
{
	r->cookie = *cookie;
	r->stat.stat = nlm_denied_nolocks;
	nlm->n_stats.bad_args++;
	nlm_proc_count(NLMPROC4_LOCK, NLM4_DENIED_NOLOCKS);
}

/* ---- version-independent bodies of the v1/v3 handlers ---- */

static void
v1_test(struct nlm_ctx *cx, nlm_testargs *a, nlm_testres *r)
{
	nlm4_testargs a4;
	nlm4_testres r4;

	memset(r, 0, sizeof(*r));
	a4.cookie = a->cookie;
	a4.exclusive = a->exclusive;
	if (nlm_lock_to_v4(&a->alock, &a4.alock, cx) == -1) {
		r->cookie = a->cookie;
		r->test_stat.stat = nlm_denied_nolocks;
		nlm->n_stats.bad_args++;
		nlm_proc_count(NLMPROC4_TEST, NLM4_DENIED_NOLOCKS);
		return;
	}
	nlm_proc_test(cx, &a4, &r4);
	nlm_testres_to_v1(&r4, r);
}

static void
v1_lock(struct nlm_ctx *cx, nlm_lockargs *a, nlm_res *r)
{
	nlm4_lockargs a4;
	nlm4_res r4;

	a4.cookie = a->cookie;
	a4.block = a->block;
	a4.exclusive = a->exclusive;
	a4.reclaim = a->reclaim;
	a4.state = a->state;
	if (nlm_lock_to_v4(&a->alock, &a4.alock, cx) == -1) {
		nlm_res_nolocks(&a->cookie, r);
		return;
	}
	nlm_proc_lock(cx, &a4, &r4);
	nlm_res_to_v1(&r4, r);
}

static void
v1_cancel(struct nlm_ctx *cx, nlm_cancargs *a, nlm_res *r)
{
	nlm4_cancargs a4;
	nlm4_res r4;

	a4.cookie = a->cookie;
	a4.block = a->block;
	a4.exclusive = a->exclusive;
	if (nlm_lock_to_v4(&a->alock, &a4.alock, cx) == -1) {
		/* Nothing can be queued there: nothing to cancel. */
		r->cookie = a->cookie;
		r->stat.stat = nlm_denied;
		nlm_proc_count(NLMPROC4_CANCEL, NLM4_DENIED);
		return;
	}
	nlm_proc_cancel(cx, &a4, &r4);
	nlm_res_to_v1(&r4, r);
}

static void
v1_unlock(struct nlm_ctx *cx, nlm_unlockargs *a, nlm_res *r)
{
	nlm4_unlockargs a4;
	nlm4_res r4;

	a4.cookie = a->cookie;
	if (nlm_lock_to_v4(&a->alock, &a4.alock, cx) == -1) {
		/* Nothing can be held there: unlocking it succeeds. */
		r->cookie = a->cookie;
		r->stat.stat = nlm_granted;
		nlm_proc_count(NLMPROC4_UNLOCK, NLM4_GRANTED);
		return;
	}
	nlm_proc_unlock(cx, &a4, &r4);
	nlm_res_to_v1(&r4, r);
}

static void
v1_granted(struct nlm_ctx *cx, nlm_testargs *a, nlm_res *r)
{
	nlm4_testargs a4;
	nlm4_res r4;

	memset(&a4, 0, sizeof(a4));
	a4.cookie = a->cookie;
	nlm_proc_granted(cx, &a4, &r4);
	nlm_res_to_v1(&r4, r);
}

static void
v1_share(nlm_shareargs *a, nlm_shareres *r, struct svc_req *rq, bool share)
{
	struct nlm_ctx cx;
	nlm4_shareargs a4;
	nlm4_shareres r4;

	nlm_ctx_init(&cx, rq);
	a4.cookie = a->cookie;
	a4.reclaim = a->reclaim;
	a4.share.caller_name = a->share.caller_name;
	a4.share.fh = a->share.fh;
	a4.share.oh = a->share.oh;
	a4.share.mode = a->share.mode;
	a4.share.access = a->share.access;
	if (share)
		nlm_proc_share(&cx, &a4, &r4);
	else
		nlm_proc_unshare(&cx, &a4, &r4);
	r->cookie = r4.cookie;
	r->stat = nlm_stat_to_v1(r4.stat);
	r->sequence = r4.sequence;
}

static void
v1_free_all(nlm_notify *a, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_notify a4;

	nlm_ctx_init(&cx, rq);
	a4.name = a->name;
	a4.state = a->state;
	nlm_proc_free_all(&cx, &a4);
}

static void
v1_granted_res(nlm_res *a, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_res a4;

	nlm_ctx_init(&cx, rq);
	a4.cookie = a->cookie;
	/* nlm_stats values 0-4 are the same numbers in nlm4_stats. */
	a4.stat.stat = (nlm4_stats)a->stat.stat;
	nlm_proc_granted_res(&cx, &a4);
}

static void
v_sm_notify(nlm_sm_status *a, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	nlm_proc_sm_notify(&cx, a);
}

/* A _RES we did not ask for: accepted, counted, otherwise ignored. */
static void
v_res_ignored(struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
}

/* ---- version 1 and 3 handlers ---- */

bool_t
nlmproc_test_1_svc(nlm_testargs *a, nlm_testres *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_test(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_lock_1_svc(nlm_lockargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_lock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_cancel_1_svc(nlm_cancargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_cancel(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_unlock_1_svc(nlm_unlockargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_unlock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_granted_1_svc(nlm_testargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_granted(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_test_3_svc(nlm_testargs *a, nlm_testres *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_test(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_lock_3_svc(nlm_lockargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_lock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_cancel_3_svc(nlm_cancargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_cancel(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_unlock_3_svc(nlm_unlockargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_unlock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_granted_3_svc(nlm_testargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	v1_granted(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc_nm_lock_3_svc(nlm_lockargs *a, nlm_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	nlm_ctx_init(&cx, rq);
	cx.cx_monitored = false;
	v1_lock(&cx, a, r);
	return TRUE;
}

/* _MSG forms: the same work, the result sent as the matching _RES call. */
bool_t
nlmproc_test_msg_1_svc(nlm_testargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_testres r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_test(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_TEST_RES, XDRPROC(xdr_nlm_testres), &r);
	return TRUE;
}

bool_t
nlmproc_lock_msg_1_svc(nlm_lockargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_lock(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_LOCK_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_cancel_msg_1_svc(nlm_cancargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_cancel(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_CANCEL_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_unlock_msg_1_svc(nlm_unlockargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_unlock(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_UNLOCK_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_granted_msg_1_svc(nlm_testargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_granted(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_GRANTED_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_test_msg_3_svc(nlm_testargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_testres r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_test(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_TEST_RES, XDRPROC(xdr_nlm_testres), &r);
	return TRUE;
}

bool_t
nlmproc_lock_msg_3_svc(nlm_lockargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_lock(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_LOCK_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_cancel_msg_3_svc(nlm_cancargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_cancel(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_CANCEL_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_unlock_msg_3_svc(nlm_unlockargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_unlock(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_UNLOCK_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_granted_msg_3_svc(nlm_testargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm_res r;

	(void)unused;
	nlm_ctx_init(&cx, rq);
	v1_granted(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC_GRANTED_RES, XDRPROC(xdr_nlm_res), &r);
	return TRUE;
}

bool_t
nlmproc_test_res_1_svc(nlm_testres *a, void *r, struct svc_req *rq)
{
	(void)a;
	(void)r;
	v_res_ignored(rq);
	return TRUE;
}

bool_t
nlmproc_test_res_3_svc(nlm_testres *a, void *r, struct svc_req *rq)
{
	return nlmproc_test_res_1_svc(a, r, rq);
}

bool_t
nlmproc_lock_res_1_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	(void)a;
	(void)r;
	v_res_ignored(rq);
	return TRUE;
}

bool_t
nlmproc_lock_res_3_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	return nlmproc_lock_res_1_svc(a, r, rq);
}

bool_t
nlmproc_cancel_res_1_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	return nlmproc_lock_res_1_svc(a, r, rq);
}

bool_t
nlmproc_cancel_res_3_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	return nlmproc_lock_res_1_svc(a, r, rq);
}

bool_t
nlmproc_unlock_res_1_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	return nlmproc_lock_res_1_svc(a, r, rq);
}

bool_t
nlmproc_unlock_res_3_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	return nlmproc_lock_res_1_svc(a, r, rq);
}

bool_t
nlmproc_granted_res_1_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	(void)r;
	v1_granted_res(a, rq);
	return TRUE;
}

bool_t
nlmproc_granted_res_3_svc(nlm_res *a, void *r, struct svc_req *rq)
{
	return nlmproc_granted_res_1_svc(a, r, rq);
}

bool_t
nlmproc_sm_notify_1_svc(nlm_sm_status *a, void *r, struct svc_req *rq)
{
	(void)r;
	v_sm_notify(a, rq);
	return TRUE;
}

bool_t
nlmproc_sm_notify_3_svc(nlm_sm_status *a, void *r, struct svc_req *rq)
{
	return nlmproc_sm_notify_1_svc(a, r, rq);
}

bool_t
nlmproc_share_3_svc(nlm_shareargs *a, nlm_shareres *r, struct svc_req *rq)
{
	v1_share(a, r, rq, true);
	return TRUE;
}

bool_t
nlmproc_unshare_3_svc(nlm_shareargs *a, nlm_shareres *r, struct svc_req *rq)
{
	v1_share(a, r, rq, false);
	return TRUE;
}

bool_t
nlmproc_free_all_3_svc(nlm_notify *a, void *r, struct svc_req *rq)
{
	(void)r;
	v1_free_all(a, rq);
	return TRUE;
}

int
nlm_prog_1_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	(void)xp;
	(void)proc;
	(void)res;
	return 1;
}

int
nlm_prog_3_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	return nlm_prog_1_freeresult(xp, proc, res);
}

/* ---- version 4 handlers ---- */

static void
v4_ctx(struct nlm_ctx *cx, struct svc_req *rq, const nlm4_lock *l)
{
	nlm_ctx_init(cx, rq);
	if (l != NULL) {
		cx->cx_wire_off = l->l_offset;
		cx->cx_wire_len = l->l_len;
	}
}

bool_t
nlmproc4_test_4_svc(nlm4_testargs *a, nlm4_testres *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_test(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_lock_4_svc(nlm4_lockargs *a, nlm4_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_lock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_nm_lock_4_svc(nlm4_lockargs *a, nlm4_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, &a->alock);
	cx.cx_monitored = false;
	nlm_proc_lock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_cancel_4_svc(nlm4_cancargs *a, nlm4_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_cancel(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_unlock_4_svc(nlm4_unlockargs *a, nlm4_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_unlock(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_granted_4_svc(nlm4_testargs *a, nlm4_res *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, NULL);
	nlm_proc_granted(&cx, a, r);
	return TRUE;
}

/* _MSG forms: same work, result sent as the matching _RES call. */
bool_t
nlmproc4_test_msg_4_svc(nlm4_testargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_testres r;

	(void)unused;
	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_test(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC4_TEST_RES, XDRPROC(xdr_nlm4_testres), &r);
	return TRUE;
}

bool_t
nlmproc4_lock_msg_4_svc(nlm4_lockargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_res r;

	(void)unused;
	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_lock(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC4_LOCK_RES, XDRPROC(xdr_nlm4_res), &r);
	return TRUE;
}

bool_t
nlmproc4_cancel_msg_4_svc(nlm4_cancargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_res r;

	(void)unused;
	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_cancel(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC4_CANCEL_RES, XDRPROC(xdr_nlm4_res), &r);
	return TRUE;
}

bool_t
nlmproc4_unlock_msg_4_svc(nlm4_unlockargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_res r;

	(void)unused;
	v4_ctx(&cx, rq, &a->alock);
	nlm_proc_unlock(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC4_UNLOCK_RES, XDRPROC(xdr_nlm4_res), &r);
	return TRUE;
}

bool_t
nlmproc4_granted_msg_4_svc(nlm4_testargs *a, void *unused, struct svc_req *rq)
{
	struct nlm_ctx cx;
	nlm4_res r;

	(void)unused;
	v4_ctx(&cx, rq, NULL);
	nlm_proc_granted(&cx, a, &r);
	nlm_send_res(&cx, NLMPROC4_GRANTED_RES, XDRPROC(xdr_nlm4_res), &r);
	return TRUE;
}

bool_t
nlmproc4_test_res_4_svc(nlm4_testres *a, void *r, struct svc_req *rq)
{
	(void)a;
	(void)r;
	v_res_ignored(rq);
	return TRUE;
}

bool_t
nlmproc4_lock_res_4_svc(nlm4_res *a, void *r, struct svc_req *rq)
{
	(void)a;
	(void)r;
	v_res_ignored(rq);
	return TRUE;
}

bool_t
nlmproc4_cancel_res_4_svc(nlm4_res *a, void *r, struct svc_req *rq)
{
	return nlmproc4_lock_res_4_svc(a, r, rq);
}

bool_t
nlmproc4_unlock_res_4_svc(nlm4_res *a, void *r, struct svc_req *rq)
{
	return nlmproc4_lock_res_4_svc(a, r, rq);
}

bool_t
nlmproc4_granted_res_4_svc(nlm4_res *a, void *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	(void)r;
	v4_ctx(&cx, rq, NULL);
	nlm_proc_granted_res(&cx, a);
	return TRUE;
}

bool_t
nlmproc4_sm_notify_4_svc(nlm_sm_status *a, void *r, struct svc_req *rq)
{
	(void)r;
	v_sm_notify(a, rq);
	return TRUE;
}

bool_t
nlmproc4_share_4_svc(nlm4_shareargs *a, nlm4_shareres *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, NULL);
	nlm_proc_share(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_unshare_4_svc(nlm4_shareargs *a, nlm4_shareres *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	v4_ctx(&cx, rq, NULL);
	nlm_proc_unshare(&cx, a, r);
	return TRUE;
}

bool_t
nlmproc4_free_all_4_svc(nlm4_notify *a, void *r, struct svc_req *rq)
{
	struct nlm_ctx cx;

	(void)r;
	v4_ctx(&cx, rq, NULL);
	nlm_proc_free_all(&cx, a);
	return TRUE;
}

int
nlm_prog_4_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	return nlm_prog_1_freeresult(xp, proc, res);
}
