/*
 * srv_xprt.c - the SVCXPRT that rpcgen's dispatchers and libtirpc's
 * svcerr_*() helpers are handed: its operations decode arguments from our
 * request buffer and encode replies into our queue; and dispatch: the call
 * header, RPC version, credential flavour and program/version checks with
 * the standard error replies, then the generated dispatcher.
 */
#include "srv_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"

static bool_t
onc_xp_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	(void)xprt;
	(void)msg;
	return FALSE;
}

static enum xprt_stat
onc_xp_stat(SVCXPRT *xprt)
{
	(void)xprt;
	return XPRT_IDLE;
}

static bool_t
onc_xp_getargs(SVCXPRT *xprt, xdrproc_t proc, void *args)
{
	struct onc_ctx *cx = xprt->xp_p1;
	xdrproc_t fast = onc_xdr_swapped(&cx->cx_call.rc_srv->rs_dec, proc);

	if (fast != proc) {
		cx->cx_inplace = 1;
		return (*fast)(&cx->cx_xdr, args);
	}
	if ((*proc)(&cx->cx_xdr, args))
		return TRUE;
	/*
	 * The dispatcher zeroed args before decoding and will not free them
	 * on failure: free what a partial decode allocated.
	 */
	xdr_free(proc, args);
	return FALSE;
}

static bool_t
onc_xp_freeargs(SVCXPRT *xprt, xdrproc_t proc, void *args)
{
	struct onc_ctx *cx = xprt->xp_p1;
	XDR x;

	if (cx->cx_inplace)
		return TRUE;
	memset(&x, 0, sizeof(x));
	x.x_op = XDR_FREE;
	return (*proc)(&x, args);
}

static void
onc_xp_destroy(SVCXPRT *xprt)
{
	(void)xprt;
}

static bool_t
onc_xp_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	(void)xprt;
	(void)rq;
	(void)in;
	return FALSE;
}


/*
 * The usual reply (accepted, SUCCESS, no verifier) has a header of six
 * fixed words: written here, then the results with their encoder (or the
 * faster one registered for it).  Anything else goes through
 * xdr_replymsg().  The buffer is word-aligned, so that xdrmem streams
 * over it can inline.
 */
#define ONC_REPLY_HDR	24

static bool_t
onc_xp_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct onc_ctx *cx = xprt->xp_p1;
	uint32_t buf[REPLY_MAX / 4];
	xdrproc_t proc;
	XDR x;
	bool_t ok;
	size_t len;

	msg->rm_xid = cx->cx_call.rc_xid;
	if (msg->rm_direction == REPLY &&
	    msg->rm_reply.rp_stat == MSG_ACCEPTED &&
	    msg->acpted_rply.ar_stat == SUCCESS &&
	    msg->acpted_rply.ar_verf.oa_flavor == AUTH_NONE &&
	    msg->acpted_rply.ar_verf.oa_length == 0) {
		buf[0] = htonl(msg->rm_xid);
		buf[1] = htonl(REPLY);
		buf[2] = htonl(MSG_ACCEPTED);
		buf[3] = htonl(AUTH_NONE);
		buf[4] = 0;
		buf[5] = htonl(SUCCESS);
		proc = onc_xdr_swapped(&cx->cx_call.rc_srv->rs_enc,
		    msg->acpted_rply.ar_results.proc);
		xdrmem_create(&x, (char *)buf + ONC_REPLY_HDR,
		    sizeof(buf) - ONC_REPLY_HDR, XDR_ENCODE);
		ok = (*proc)(&x, msg->acpted_rply.ar_results.where);
		len = ONC_REPLY_HDR + xdr_getpos(&x);
	} else {
		xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
		ok = xdr_replymsg(&x, msg);
		len = xdr_getpos(&x);
	}
	xdr_destroy(&x);
	if (!ok) {
		log_warnx("cannot encode reply to xid %08x",
		    cx->cx_call.rc_xid);
		return FALSE;
	}
	return onc_queue_reply(cx, (const uint8_t *)buf, len) == ONC_OK;
}

static const struct xp_ops onc_xp_ops = {
	.xp_recv = onc_xp_recv,
	.xp_stat = onc_xp_stat,
	.xp_getargs = onc_xp_getargs,
	.xp_reply = onc_xp_reply,
	.xp_freeargs = onc_xp_freeargs,
	.xp_destroy = onc_xp_destroy,
};

static const struct xp_ops2 onc_xp_ops2 = {
	.xp_control = onc_xp_control,
};

struct onc_call *
onc_srv_call(struct svc_req *rq)
{
	struct onc_ctx *cx = rq->rq_xprt->xp_p1;

	return &cx->cx_call;
}

static void
onc_reply_denied(SVCXPRT *xp, enum reject_stat why)
{
	struct rpc_msg m;

	memset(&m, 0, sizeof(m));
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_DENIED;
	m.rjcted_rply.rj_stat = why;
	m.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
	m.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
	(void)onc_xp_reply(xp, &m);
}

/* Find prog/vers; on failure send PROG_UNAVAIL or PROG_MISMATCH. */
static onc_dispatch_fn *
onc_lookup(struct onc_srv *rs, SVCXPRT *xp, uint32_t prog, uint32_t vers)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	size_t i;

	for (i = 0; i < rs->rs_nprogs; i++) {
		if (rs->rs_progs[i].rp_prog != prog)
			continue;
		if (rs->rs_progs[i].rp_vers == vers)
			return rs->rs_progs[i].rp_fn;
		if (rs->rs_progs[i].rp_vers < lo)
			lo = rs->rs_progs[i].rp_vers;
		if (rs->rs_progs[i].rp_vers > hi)
			hi = rs->rs_progs[i].rp_vers;
	}
	rs->rs_stats.noprog++;
	if (hi == 0)
		svcerr_noprog(xp);
	else
		svcerr_progvers(xp, lo, hi);
	return NULL;
}

/* The stack SVCXPRT generated code and svcerr_*() reply through. */
static void
onc_xprt_init(SVCXPRT *xp, struct onc_ctx *cx)
{
	memset(xp, 0, sizeof(*xp));
	xp->xp_fd = cx->cx_conn ? cx->cx_conn->co_fd : cx->cx_fd;
	xp->xp_ops = &onc_xp_ops;
	xp->xp_ops2 = &onc_xp_ops2;
	xp->xp_rtaddr.buf = &cx->cx_call.rc_peer;
	xp->xp_rtaddr.len = xp->xp_rtaddr.maxlen = cx->cx_call.rc_peerlen;
	xp->xp_ltaddr.buf = &cx->cx_call.rc_local;
	xp->xp_ltaddr.len = xp->xp_ltaddr.maxlen = cx->cx_call.rc_locallen;
	xp->xp_verf = _null_auth;
	xp->xp_p1 = cx;
}

/*
 * xdr_callmsg() refuses a call whose RPC version is not 2, so look at the
 * first three words ourselves: a CALL of another version is answered
 * RPC_MISMATCH (RFC 5531) instead of being dropped as garbage.  Returns 1
 * when the message was handled here.
 */
static int
onc_check_version(struct onc_ctx *cx, SVCXPRT *xp, const uint8_t *msg,
    size_t len)
{
	uint32_t w[3];

	if (len < sizeof(w))
		return 0;
	memcpy(w, msg, sizeof(w));
	if (ntohl(w[1]) != CALL || ntohl(w[2]) == RPC_MSG_VERSION)
		return 0;
	cx->cx_call.rc_xid = ntohl(w[0]);
	onc_reply_denied(xp, RPC_MISMATCH);
	return 1;
}

/*
 * Is the credential's body an AUTH_SYS one (RFC 5531, appendix A)?  A
 * stamp, a machine name of 255 bytes at most, uid, gid and 16 gids at
 * most, all within the credential's length.  nlmd trusts none of it (a
 * caller is its address and the names in its arguments), but a body
 * that breaks those bounds is no AUTH_SYS credential, and libtirpc's
 * svc and the Linux kernel's both refuse it (AUTH_BADCRED) rather than
 * serve the call.  Bytes after the gids are let be, as libtirpc does.
 */
static bool
onc_authsys_ok(const struct opaque_auth *oa)
{
	const uint8_t *p = (const uint8_t *)oa->oa_base;
	size_t len = oa->oa_length, off;
	uint32_t n;

	if (len < 8)
		return false;
	memcpy(&n, p + 4, 4);			/* the name's length */
	if ((n = ntohl(n)) > 255)
		return false;
	off = 8 + ((n + 3) & ~3u);
	if (len < off + 12)
		return false;
	memcpy(&n, p + off + 8, 4);		/* how many gids */
	if ((n = ntohl(n)) > 16)
		return false;
	return off + 12 + 4 * (size_t)n <= len;
}

void
onc_dispatch(struct onc_ctx *cx, uint8_t *msgbuf, size_t len)
{
	struct onc_srv *rs = cx->cx_call.rc_srv;
	char credbuf[MAX_AUTH_BYTES], verfbuf[MAX_AUTH_BYTES];
	struct rpc_msg msg;
	struct svc_req rq;
	SVCXPRT xp;
	onc_dispatch_fn *fn;

	onc_xprt_init(&xp, cx);
	if (onc_check_version(cx, &xp, msgbuf, len))
		return;
	memset(&msg, 0, sizeof(msg));
	msg.rm_call.cb_cred.oa_base = credbuf;
	msg.rm_call.cb_verf.oa_base = verfbuf;
	xdrmem_create(&cx->cx_xdr, (char *)msgbuf, (u_int)len, XDR_DECODE);
	if (!xdr_callmsg(&cx->cx_xdr, &msg) || msg.rm_direction != CALL) {
		rs->rs_stats.garbage++;
		goto out;
	}
	cx->cx_call.rc_xid = msg.rm_xid;
	cx->cx_call.rc_prog = (uint32_t)msg.rm_call.cb_prog;
	cx->cx_call.rc_vers = (uint32_t)msg.rm_call.cb_vers;
	cx->cx_call.rc_proc = (uint32_t)msg.rm_call.cb_proc;
	cx->cx_call.rc_flavor = (uint32_t)msg.rm_call.cb_cred.oa_flavor;
	if (msg.rm_call.cb_cred.oa_flavor != AUTH_NONE &&
	    msg.rm_call.cb_cred.oa_flavor != AUTH_SYS) {
		rs->rs_stats.badauth++;
		svcerr_auth(&xp, AUTH_BADCRED);
		goto out;
	}
	if (msg.rm_call.cb_cred.oa_flavor == AUTH_SYS &&
	    !onc_authsys_ok(&msg.rm_call.cb_cred)) {
		rs->rs_stats.badauth++;
		svcerr_auth(&xp, AUTH_BADCRED);
		goto out;
	}
	if ((fn = onc_lookup(rs, &xp, cx->cx_call.rc_prog,
	    cx->cx_call.rc_vers)) == NULL)
		goto out;
	memset(&rq, 0, sizeof(rq));
	rq.rq_prog = msg.rm_call.cb_prog;
	rq.rq_vers = msg.rm_call.cb_vers;
	rq.rq_proc = msg.rm_call.cb_proc;
	rq.rq_cred = msg.rm_call.cb_cred;
	rq.rq_xprt = &xp;
	rs->rs_stats.calls++;
	fn(&rq, &xp);
out:
	xdr_destroy(&cx->cx_xdr);
}
