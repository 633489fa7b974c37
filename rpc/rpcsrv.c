/*
 * rpcsrv.c - see rpcsrv.h.
 *
 * HOW IT WORKS.
 *  - Listeners: one UDP and one TCP socket per address family, all
 *    non-blocking, registered on the event loop.
 *  - UDP: on readiness, up to UDP_BATCH datagrams are read with recvmsg()
 *    (IP_PKTINFO / IPV6_RECVPKTINFO give the local address), each is
 *    dispatched, and its reply is queued with that local address so the
 *    reply leaves from where the request went.
 *  - TCP: accepted connections read whatever is available into an input
 *    buffer; complete fragments are moved into the record buffer (RFC 5531
 *    record marking); a complete record is dispatched.  A record larger
 *    than max_record closes the connection.  Replies are appended, record
 *    marked, to the connection's output queue; if the queue grows past
 *    max_outq the peer is not reading and the connection is closed.  While
 *    output is pending we also stop reading, so a client cannot make us
 *    buffer without bound.  Idle connections are closed by a sweep timer.
 *  - Dispatch: the call header is decoded with xdr_callmsg(); RPC version,
 *    credential flavour and program/version are checked here (with the
 *    standard error replies); then the generated dispatcher runs with a
 *    stack SVCXPRT whose ops read arguments from the same XDR stream and
 *    encode replies into our queue.
 */
#include "rpcsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ev.h"
#include "log.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_record_size;
static struct log_rl rl_reply_backlog;

#define MAX_PROGRAMS	16
#define CONN_BUF_MIN	4096	/* a connection's first input buffers */
#define MAX_LISTENERS	8
#define UDP_BATCH	64
#define UDP_MAXMSG	65536
#define REPLY_MAX	16384
#define SWEEP_MS	5000
#define MAX_DECODERS	8

struct rpc_program {
	uint32_t	 rp_prog;
	uint32_t	 rp_vers;
	rpc_dispatch_fn	*rp_fn;
};

struct rpc_listener {
	int		 rl_fd;
	int		 rl_family;
	enum rpc_xport	 rl_xport;
	struct rpc_srv	*rl_srv;
};

/* Bytes up to co_out[rm_off] may leave once commit rm_seq is durable. */
struct rpc_mark {
	size_t		 rm_off;
	uint64_t	 rm_seq;
};

struct rpc_conn {
	int		 co_fd;
	struct rpc_srv	*co_srv;
	struct sockaddr_storage co_peer;
	socklen_t	 co_peerlen;
	struct sockaddr_storage co_local;
	socklen_t	 co_locallen;
	uint8_t		*co_in;		/* raw bytes read, not yet parsed */
	size_t		 co_inlen;
	size_t		 co_incap;	/* grows with use, to max_record + 4 */
	uint8_t		*co_rec;	/* record being assembled */
	size_t		 co_reclen;
	size_t		 co_reccap;	/* grows with use, to max_record */
	uint8_t		*co_out;	/* queued reply bytes */
	size_t		 co_outlen;
	size_t		 co_outoff;	/* sent so far */
	size_t		 co_safe;	/* may be sent: committed (see
					   rpc_srv_release) */
	struct rpc_mark	*co_marks;	/* sealed, waiting for commits */
	size_t		 co_nmarks;
	size_t		 co_capmarks;
	struct rpc_conn	*co_wnext;	/* conns with marks */
	struct rpc_conn	*co_wprev;
	int		 co_waiting;
	size_t		 co_outcap;
	uint64_t	 co_active;	/* last read, ev_now_ms() */
	int		 co_dead;	/* close at the end of the turn */
	struct rpc_conn	*co_next;	/* all connections */
	struct rpc_conn	*co_prev;
	struct rpc_conn	*co_dirty;	/* has output to flush this turn */
	int		 co_isdirty;
};

struct rpc_udpreply {
	int		 ur_fd;
	uint64_t	 ur_seq;	/* sealed: commit to wait for */
	struct sockaddr_storage ur_peer;
	socklen_t	 ur_peerlen;
	struct sockaddr_storage ur_local;
	size_t		 ur_len;
	struct rpc_udpreply *ur_next;
	uint8_t		 ur_buf[];
};

struct rpc_srv {
	struct ev_loop		*rs_loop;
	struct rpc_srv_limits	 rs_lim;
	struct rpc_program	 rs_progs[MAX_PROGRAMS];
	size_t			 rs_nprogs;
	xdrproc_t		 rs_dec_proc[MAX_DECODERS];
	xdrproc_t		 rs_dec_fast[MAX_DECODERS];
	size_t			 rs_ndec;
	struct rpc_listener	 rs_lis[MAX_LISTENERS];
	size_t			 rs_nlis;
	struct rpc_conn		*rs_conns;
	struct rpc_conn		*rs_dirty;	/* queued bytes this turn */
	struct rpc_conn		*rs_waiting;	/* with marks */
	struct rpc_udpreply	*rs_udpnew;	/* this turn's, not sealed */
	struct rpc_udpreply	**rs_udpnewtail;
	struct rpc_udpreply	*rs_udpq;	/* sealed, in seal order */
	struct rpc_udpreply	**rs_udptail;
	struct ev_timer		 rs_sweep;
	struct rpc_srv_stats	 rs_stats;
	uint8_t			*rs_udpbuf;
};

/* Per-call state behind the SVCXPRT handed to generated code. */
struct rpc_ctx {
	struct rpc_call	 cx_call;
	XDR		 cx_xdr;	/* positioned at the arguments */
	int		 cx_fd;		/* UDP socket */
	struct rpc_conn	*cx_conn;	/* TCP connection */
	int		 cx_inplace;	/* args point into the request */
};

static void	rpc_conn_close(struct rpc_conn *);
static void	rpc_conn_flush(struct rpc_conn *);

/* ---- addresses --------------------------------------------------- */

void
rpc_addr_unmap(struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in s4;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
	*len = sizeof(s4);
}

int
rpc_addr_local_privileged(const struct sockaddr_storage *in, socklen_t len)
{
	struct sockaddr_storage ss = *in;

	rpc_addr_unmap(&ss, &len);
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)&ss;

		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127 &&
		    ntohs(s4->sin_port) < 1024;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&ss;

		return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) &&
		    ntohs(s6->sin6_port) < 1024;
	}
	return 0;
}

const char *
rpc_addr_str(const struct sockaddr *sa, int with_port, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];
	unsigned port = 0;

	memset(&ss, 0, sizeof(ss));
	if (sa->sa_family == AF_INET)
		memcpy(&ss, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6)
		memcpy(&ss, sa, sizeof(struct sockaddr_in6));
	else {
		snprintf(buf, len, "(family %d)", sa->sa_family);
		return buf;
	}
	rpc_addr_unmap(&ss, &sl);
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		port = ntohs(s4->sin_port);
		if (with_port)
			snprintf(buf, len, "%s:%u", a, port);
		else
			snprintf(buf, len, "%s", a);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		port = ntohs(s6->sin6_port);
		if (with_port)
			snprintf(buf, len, "[%s]:%u", a, port);
		else
			snprintf(buf, len, "%s", a);
	}
	return buf;
}

/* ---- the SVCXPRT operations generated code calls ------------------- */

static bool_t
rpc_xp_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	(void)xprt;
	(void)msg;
	return FALSE;
}

static enum xprt_stat
rpc_xp_stat(SVCXPRT *xprt)
{
	(void)xprt;
	return XPRT_IDLE;
}

static bool_t
rpc_xp_getargs(SVCXPRT *xprt, xdrproc_t proc, void *args)
{
	struct rpc_ctx *cx = xprt->xp_p1;
	struct rpc_srv *rs = cx->cx_call.rc_srv;
	size_t i;

	for (i = 0; i < rs->rs_ndec; i++)
		if (rs->rs_dec_proc[i] == proc) {
			cx->cx_inplace = 1;
			return (*rs->rs_dec_fast[i])(&cx->cx_xdr, args);
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
rpc_xp_freeargs(SVCXPRT *xprt, xdrproc_t proc, void *args)
{
	struct rpc_ctx *cx = xprt->xp_p1;
	XDR x;

	if (cx->cx_inplace)
		return TRUE;
	memset(&x, 0, sizeof(x));
	x.x_op = XDR_FREE;
	return (*proc)(&x, args);
}

static void
rpc_xp_destroy(SVCXPRT *xprt)
{
	(void)xprt;
}

static bool_t
rpc_xp_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	(void)xprt;
	(void)rq;
	(void)in;
	return FALSE;
}

static int	rpc_queue_reply(struct rpc_ctx *, const uint8_t *, size_t);

static bool_t
rpc_xp_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct rpc_ctx *cx = xprt->xp_p1;
	uint8_t buf[REPLY_MAX];
	XDR x;
	bool_t ok;

	msg->rm_xid = cx->cx_call.rc_xid;
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	ok = xdr_replymsg(&x, msg);
	if (!ok) {
		log_warnx("cannot encode reply to xid %08x",
		    cx->cx_call.rc_xid);
		xdr_destroy(&x);
		return FALSE;
	}
	ok = rpc_queue_reply(cx, buf, xdr_getpos(&x)) == 0;
	xdr_destroy(&x);
	return ok;
}

static const struct xp_ops rpc_xp_ops = {
	.xp_recv = rpc_xp_recv,
	.xp_stat = rpc_xp_stat,
	.xp_getargs = rpc_xp_getargs,
	.xp_reply = rpc_xp_reply,
	.xp_freeargs = rpc_xp_freeargs,
	.xp_destroy = rpc_xp_destroy,
};

static const struct xp_ops2 rpc_xp_ops2 = {
	.xp_control = rpc_xp_control,
};

struct rpc_call *
rpc_srv_call(struct svc_req *rq)
{
	struct rpc_ctx *cx = rq->rq_xprt->xp_p1;

	return &cx->cx_call;
}

/* ---- reply queues ---------------------------------------------------- */

static int
rpc_conn_append(struct rpc_conn *co, const uint8_t *p, size_t n)
{
	struct rpc_srv *rs = co->co_srv;
	size_t need;

	if (co->co_outoff > 0 && co->co_outoff == co->co_outlen &&
	    co->co_nmarks == 0)
		co->co_outoff = co->co_outlen = co->co_safe = 0;
	need = co->co_outlen + n;
	if (need - co->co_outoff > rs->rs_lim.max_outq) {
		char a[64];

		log_rl_warnx(&rl_reply_backlog,
		    "closing connection from %s: %zu reply bytes "
		    "unread", rpc_addr_str((struct sockaddr *)&co->co_peer, 1,
		    a, sizeof(a)), co->co_outlen - co->co_outoff);
		rs->rs_stats.conns_slow++;
		co->co_dead = 1;
		return -1;
	}
	if (need > co->co_outcap) {
		size_t cap = co->co_outcap ? co->co_outcap : 4096;
		uint8_t *o;

		while (cap < need)
			cap *= 2;
		if ((o = realloc(co->co_out, cap)) == NULL)
			return -1;
		co->co_out = o;
		co->co_outcap = cap;
	}
	memcpy(co->co_out + co->co_outlen, p, n);
	co->co_outlen += n;
	if (!co->co_isdirty) {
		co->co_isdirty = 1;
		co->co_dirty = rs->rs_dirty;
		rs->rs_dirty = co;
	}
	return 0;
}

static int
rpc_queue_reply(struct rpc_ctx *cx, const uint8_t *p, size_t n)
{
	struct rpc_srv *rs = cx->cx_call.rc_srv;
	struct rpc_udpreply *ur;

	if (cx->cx_conn != NULL) {
		uint32_t mark = htonl(0x80000000u | (uint32_t)n);

		if (cx->cx_conn->co_dead)
			return -1;
		if (rpc_conn_append(cx->cx_conn, (uint8_t *)&mark, 4) == -1)
			return -1;
		return rpc_conn_append(cx->cx_conn, p, n);
	}
	if ((ur = malloc(sizeof(*ur) + n)) == NULL)
		return -1;
	ur->ur_fd = cx->cx_fd;
	ur->ur_peer = cx->cx_call.rc_peer;
	ur->ur_peerlen = cx->cx_call.rc_peerlen;
	ur->ur_local = cx->cx_call.rc_local;
	ur->ur_len = n;
	ur->ur_next = NULL;
	memcpy(ur->ur_buf, p, n);
	*rs->rs_udpnewtail = ur;
	rs->rs_udpnewtail = &ur->ur_next;
	return 0;
}

/* The reply leaves from the local address the request came to. */
static void
rpc_udp_send(struct rpc_srv *rs, struct rpc_udpreply *ur)
{
	if (rpc_send_from(ur->ur_fd, ur->ur_buf, ur->ur_len, &ur->ur_peer,
	    ur->ur_peerlen, ur->ur_local.ss_family != AF_UNSPEC ?
	    &ur->ur_local : NULL) == -1)
		rs->rs_stats.udp_send_fail++;
}

/* Put co on (or take it off) the list of connections with marks. */
static void
rpc_conn_wait(struct rpc_conn *co, int on)
{
	struct rpc_srv *rs = co->co_srv;

	if (on == co->co_waiting)
		return;
	if (on) {
		co->co_wprev = NULL;
		co->co_wnext = rs->rs_waiting;
		if (rs->rs_waiting != NULL)
			rs->rs_waiting->co_wprev = co;
		rs->rs_waiting = co;
	} else {
		if (co->co_wprev != NULL)
			co->co_wprev->co_wnext = co->co_wnext;
		else
			rs->rs_waiting = co->co_wnext;
		if (co->co_wnext != NULL)
			co->co_wnext->co_wprev = co->co_wprev;
	}
	co->co_waiting = on;
}

/* Everything co queued so far waits for commit seq.  -1: no memory. */
static int
rpc_conn_mark(struct rpc_conn *co, uint64_t seq)
{
	struct rpc_mark *m;
	size_t cap;

	if (co->co_nmarks > 0 &&
	    co->co_marks[co->co_nmarks - 1].rm_off == co->co_outlen)
		return 0;
	if (co->co_nmarks == co->co_capmarks) {
		cap = co->co_capmarks ? co->co_capmarks * 2 : 4;
		if ((m = realloc(co->co_marks, cap * sizeof(*m))) == NULL)
			return -1;
		co->co_marks = m;
		co->co_capmarks = cap;
	}
	co->co_marks[co->co_nmarks].rm_off = co->co_outlen;
	co->co_marks[co->co_nmarks++].rm_seq = seq;
	rpc_conn_wait(co, 1);
	return 0;
}

void
rpc_srv_seal(struct rpc_srv *rs, uint64_t seq)
{
	struct rpc_udpreply *ur;
	struct rpc_conn *co, *cnext;

	for (ur = rs->rs_udpnew; ur != NULL; ur = ur->ur_next)
		ur->ur_seq = seq;
	if (rs->rs_udpnew != NULL) {
		*rs->rs_udptail = rs->rs_udpnew;
		rs->rs_udptail = rs->rs_udpnewtail;
	}
	rs->rs_udpnew = NULL;
	rs->rs_udpnewtail = &rs->rs_udpnew;
	for (co = rs->rs_dirty; co != NULL; co = cnext) {
		cnext = co->co_dirty;
		co->co_dirty = NULL;
		co->co_isdirty = 0;
		if (!co->co_dead && rpc_conn_mark(co, seq) == -1)
			co->co_dead = 1;
		if (co->co_dead)
			rpc_conn_close(co);
	}
	rs->rs_dirty = NULL;
}

void
rpc_srv_release(struct rpc_srv *rs, uint64_t committed)
{
	struct rpc_udpreply *ur;
	struct rpc_conn *co, *cnext;
	size_t i;

	while ((ur = rs->rs_udpq) != NULL && ur->ur_seq <= committed) {
		rs->rs_udpq = ur->ur_next;
		if (rs->rs_udpq == NULL)
			rs->rs_udptail = &rs->rs_udpq;
		rpc_udp_send(rs, ur);
		free(ur);
	}
	for (co = rs->rs_waiting; co != NULL; co = cnext) {
		cnext = co->co_wnext;
		for (i = 0; i < co->co_nmarks &&
		    co->co_marks[i].rm_seq <= committed; i++)
			co->co_safe = co->co_marks[i].rm_off;
		if (i == 0)
			continue;
		co->co_nmarks -= i;
		memmove(co->co_marks, co->co_marks + i,
		    co->co_nmarks * sizeof(*co->co_marks));
		if (co->co_nmarks == 0)
			rpc_conn_wait(co, 0);
		rpc_conn_flush(co);
	}
}

/* ---- dispatch ---------------------------------------------------------- */

static void
rpc_reply_denied(SVCXPRT *xp, enum reject_stat why)
{
	struct rpc_msg m;

	memset(&m, 0, sizeof(m));
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_DENIED;
	m.rjcted_rply.rj_stat = why;
	m.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
	m.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
	(void)rpc_xp_reply(xp, &m);
}

/* Find prog/vers; on failure send PROG_UNAVAIL or PROG_MISMATCH. */
static rpc_dispatch_fn *
rpc_lookup(struct rpc_srv *rs, SVCXPRT *xp, uint32_t prog, uint32_t vers)
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
rpc_xprt_init(SVCXPRT *xp, struct rpc_ctx *cx)
{
	memset(xp, 0, sizeof(*xp));
	xp->xp_fd = cx->cx_conn ? cx->cx_conn->co_fd : cx->cx_fd;
	xp->xp_ops = &rpc_xp_ops;
	xp->xp_ops2 = &rpc_xp_ops2;
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
rpc_check_version(struct rpc_ctx *cx, SVCXPRT *xp, const uint8_t *msg,
    size_t len)
{
	uint32_t w[3];

	if (len < sizeof(w))
		return 0;
	memcpy(w, msg, sizeof(w));
	if (ntohl(w[1]) != CALL || ntohl(w[2]) == RPC_MSG_VERSION)
		return 0;
	cx->cx_call.rc_xid = ntohl(w[0]);
	rpc_reply_denied(xp, RPC_MISMATCH);
	return 1;
}

static void
rpc_dispatch(struct rpc_ctx *cx, uint8_t *msgbuf, size_t len)
{
	struct rpc_srv *rs = cx->cx_call.rc_srv;
	char credbuf[MAX_AUTH_BYTES], verfbuf[MAX_AUTH_BYTES];
	struct rpc_msg msg;
	struct svc_req rq;
	SVCXPRT xp;
	rpc_dispatch_fn *fn;

	rpc_xprt_init(&xp, cx);
	if (rpc_check_version(cx, &xp, msgbuf, len))
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
	if ((fn = rpc_lookup(rs, &xp, cx->cx_call.rc_prog,
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

/* ---- UDP --------------------------------------------------------------- */

static void
rpc_udp_local(struct msghdr *mh, struct rpc_ctx *cx)
{
	struct cmsghdr *cm;

	memset(&cx->cx_call.rc_local, 0, sizeof(cx->cx_call.rc_local));
	cx->cx_call.rc_locallen = 0;
	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IP &&
		    cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			struct sockaddr_in *s4 =
			    (struct sockaddr_in *)&cx->cx_call.rc_local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			s4->sin_family = AF_INET;
			s4->sin_addr = pi.ipi_addr;
			cx->cx_call.rc_locallen = sizeof(*s4);
		} else if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			struct sockaddr_in6 *s6 =
			    (struct sockaddr_in6 *)&cx->cx_call.rc_local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = pi.ipi6_addr;
			cx->cx_call.rc_locallen = sizeof(*s6);
		}
	}
}

static void
rpc_udp_read(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct rpc_listener *rl = arg;
	struct rpc_srv *rs = rl->rl_srv;
	char cbuf[256];
	struct rpc_ctx cx;
	struct msghdr mh;
	struct iovec iov;
	ssize_t n;
	int i;

	(void)loop;
	(void)events;
	for (i = 0; i < UDP_BATCH; i++) {
		memset(&cx, 0, sizeof(cx));
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = rs->rs_udpbuf;
		iov.iov_len = UDP_MAXMSG;
		mh.msg_name = &cx.cx_call.rc_peer;
		mh.msg_namelen = sizeof(cx.cx_call.rc_peer);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if ((n = recvmsg(fd, &mh, MSG_DONTWAIT)) == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				log_warn("udp recvmsg");
			return;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			rs->rs_stats.garbage++;
			continue;
		}
		cx.cx_call.rc_xport = RPC_UDP;
		cx.cx_call.rc_peerlen = mh.msg_namelen;
		cx.cx_call.rc_srv = rs;
		cx.cx_fd = fd;
		rpc_udp_local(&mh, &cx);
		rpc_dispatch(&cx, rs->rs_udpbuf, (size_t)n);
	}
}

/* ---- TCP --------------------------------------------------------------- */

static void
rpc_conn_close(struct rpc_conn *co)
{
	struct rpc_srv *rs = co->co_srv;

	if (co->co_isdirty) {
		/* Still on the dirty list: rpc_srv_seal() closes it. */
		co->co_dead = 1;
		return;
	}
	rpc_conn_wait(co, 0);
	ev_fd_del(rs->rs_loop, co->co_fd);
	close(co->co_fd);
	if (co->co_prev != NULL)
		co->co_prev->co_next = co->co_next;
	else
		rs->rs_conns = co->co_next;
	if (co->co_next != NULL)
		co->co_next->co_prev = co->co_prev;
	rs->rs_stats.conns_open--;
	free(co->co_in);
	free(co->co_rec);
	free(co->co_out);
	free(co->co_marks);
	free(co);
}

static void	rpc_conn_io(struct ev_loop *, int, int, void *);

/* Watch for input only while no output is pending (back-pressure). */
static void
rpc_conn_watch(struct rpc_conn *co)
{
	int ev = co->co_outoff < co->co_safe ? EV_WRITE : EV_READ;

	if (ev_fd_set(co->co_srv->rs_loop, co->co_fd, ev) == -1)
		co->co_dead = 1;
}

static void
rpc_conn_flush(struct rpc_conn *co)
{
	ssize_t n;

	/* Never past co_safe: later bytes report an uncommitted turn. */
	while (co->co_outoff < co->co_safe) {
		n = rpc_stream_send(co->co_fd, co->co_out + co->co_outoff,
		    co->co_safe - co->co_outoff);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			co->co_dead = 1;
			rpc_conn_close(co);
			return;
		}
		co->co_outoff += (size_t)n;
	}
	if (co->co_outoff == co->co_outlen && co->co_nmarks == 0)
		co->co_outoff = co->co_outlen = co->co_safe = 0;
	rpc_conn_watch(co);
	if (co->co_dead)
		rpc_conn_close(co);
}

/*
 * Grow *bufp (capacity *capp) to hold `need' bytes, doubling from 4 KiB,
 * never past `max'.  0, or -1 when `need' is over `max' or memory is out.
 */
static int
rpc_grow(uint8_t **bufp, size_t *capp, size_t need, size_t max)
{
	size_t cap = *capp == 0 ? CONN_BUF_MIN : *capp;
	uint8_t *nb;

	if (need > max)
		return -1;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max;
	if (cap == *capp)
		return 0;
	if ((nb = realloc(*bufp, cap)) == NULL)
		return -1;
	*bufp = nb;
	*capp = cap;
	return 0;
}

/*
 * Move complete fragments from co_in into co_rec and dispatch complete
 * records.  Returns -1 when the peer broke the framing or the size limit.
 */
static int
rpc_conn_parse(struct rpc_conn *co)
{
	struct rpc_srv *rs = co->co_srv;
	size_t off = 0;

	while (co->co_inlen - off >= 4 && !co->co_dead) {
		uint32_t mark;
		size_t flen;
		int last;

		memcpy(&mark, co->co_in + off, 4);
		mark = ntohl(mark);
		last = (mark & 0x80000000u) != 0;
		flen = mark & 0x7fffffffu;
		if (co->co_reclen + flen > rs->rs_lim.max_record) {
			rs->rs_stats.oversize++;
			return -1;
		}
		if (co->co_inlen - off - 4 < flen)
			break;
		if (co->co_reclen + flen > co->co_reccap &&
		    rpc_grow(&co->co_rec, &co->co_reccap, co->co_reclen + flen,
		    rs->rs_lim.max_record) == -1)
			return -1;
		memcpy(co->co_rec + co->co_reclen, co->co_in + off + 4, flen);
		co->co_reclen += flen;
		off += 4 + flen;
		if (last) {
			struct rpc_ctx cx;

			memset(&cx, 0, sizeof(cx));
			cx.cx_call.rc_xport = RPC_TCP;
			cx.cx_call.rc_peer = co->co_peer;
			cx.cx_call.rc_peerlen = co->co_peerlen;
			cx.cx_call.rc_local = co->co_local;
			cx.cx_call.rc_locallen = co->co_locallen;
			cx.cx_call.rc_srv = rs;
			cx.cx_conn = co;
			cx.cx_fd = -1;
			rpc_dispatch(&cx, co->co_rec, co->co_reclen);
			co->co_reclen = 0;
		}
	}
	memmove(co->co_in, co->co_in + off, co->co_inlen - off);
	co->co_inlen -= off;
	return 0;
}

static void
rpc_conn_read(struct rpc_conn *co)
{
	struct rpc_srv *rs = co->co_srv;
	ssize_t n;

	/*
	 * At most one full record plus its mark is ever buffered; the
	 * buffer grows (doubling) only when it is full of an unfinished
	 * fragment, so an idle or small-call connection keeps 4 KiB.
	 */
	if (co->co_inlen == co->co_incap &&
	    rpc_grow(&co->co_in, &co->co_incap, co->co_incap + 1,
	    rs->rs_lim.max_record + 4) == -1) {
		co->co_dead = 1;	/* full and at the limit: framing */
		return;
	}
	n = recv(co->co_fd, co->co_in + co->co_inlen,
	    co->co_incap - co->co_inlen, MSG_DONTWAIT);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR)) {
		co->co_dead = 1;
		return;
	}
	if (n < 0)
		return;
	co->co_inlen += (size_t)n;
	co->co_active = ev_now_ms();
	if (rpc_conn_parse(co) == -1) {
		char a[64];

		log_rl_warnx(&rl_record_size,
		    "closing connection from %s: record over %zu bytes "
		    "or bad framing", rpc_addr_str((struct sockaddr *)
		    &co->co_peer, 1, a, sizeof(a)), rs->rs_lim.max_record);
		co->co_dead = 1;
	}
}

static void
rpc_conn_io(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct rpc_conn *co = arg;

	(void)loop;
	(void)fd;
	if (events & EV_WRITE)
		rpc_conn_flush(co);
	else if (events & EV_READ) {
		rpc_conn_read(co);
		if (co->co_dead)
			rpc_conn_close(co);
	}
}

static struct rpc_conn *
rpc_conn_new(struct rpc_srv *rs, int fd)
{
	struct rpc_conn *co;
	size_t inmax = rs->rs_lim.max_record + 4;

	if ((co = calloc(1, sizeof(*co))) == NULL)
		return NULL;
	co->co_incap = inmax < CONN_BUF_MIN ? inmax : CONN_BUF_MIN;
	co->co_reccap = rs->rs_lim.max_record < CONN_BUF_MIN ?
	    rs->rs_lim.max_record : CONN_BUF_MIN;
	co->co_in = malloc(co->co_incap);
	co->co_rec = malloc(co->co_reccap);
	if (co->co_in == NULL || co->co_rec == NULL) {
		free(co->co_in);
		free(co->co_rec);
		free(co);
		return NULL;
	}
	co->co_fd = fd;
	co->co_srv = rs;
	co->co_active = ev_now_ms();
	return co;
}

/* Same address, whatever the port? */
static bool
rpc_addr_same_host(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->
		    sin_addr.s_addr == ((const struct sockaddr_in *)
		    (const void *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->
		    sin6_addr, &((const struct sockaddr_in6 *)(const void *)b)->
		    sin6_addr, sizeof(struct in6_addr)) == 0;
	return false;
}

/* Connections open from this address (any port). */
static unsigned
rpc_conns_from(const struct rpc_srv *rs, const struct sockaddr_storage *ss)
{
	struct sockaddr_storage a = *ss, b;
	socklen_t al = sizeof(a), bl;
	const struct rpc_conn *co;
	unsigned n = 0;

	rpc_addr_unmap(&a, &al);
	for (co = rs->rs_conns; co != NULL; co = co->co_next) {
		b = co->co_peer;
		bl = co->co_peerlen;
		rpc_addr_unmap(&b, &bl);
		if (rpc_addr_same_host(&a, &b))
			n++;
	}
	return n;
}

static void
rpc_tcp_accept(struct ev_loop *loop, int lfd, int events, void *arg)
{
	struct rpc_listener *rl = arg;
	struct rpc_srv *rs = rl->rl_srv;
	struct sockaddr_storage ss;
	socklen_t sl;
	struct rpc_conn *co;
	int fd, i;

	(void)events;
	for (i = 0; i < 64; i++) {
		sl = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		if (rs->rs_stats.conns_open >= rs->rs_lim.max_conns ||
		    (rs->rs_lim.max_conns_per_addr > 0 &&
		    rpc_conns_from(rs, &ss) >= rs->rs_lim.max_conns_per_addr) ||
		    (co = rpc_conn_new(rs, fd)) == NULL) {
			rs->rs_stats.conns_refused++;
			close(fd);
			continue;
		}
		co->co_peer = ss;
		co->co_peerlen = sl;
		co->co_locallen = sizeof(co->co_local);
		if (getsockname(fd, (struct sockaddr *)&co->co_local,
		    &co->co_locallen) == -1)
			co->co_locallen = 0;
		if (ev_fd_add(loop, fd, EV_READ, rpc_conn_io, co) == -1) {
			log_warn("ev_fd_add");
			close(fd);
			free(co->co_in);
			free(co->co_rec);
			free(co);
			continue;
		}
		co->co_next = rs->rs_conns;
		if (rs->rs_conns != NULL)
			rs->rs_conns->co_prev = co;
		rs->rs_conns = co;
		rs->rs_stats.conns_open++;
		rs->rs_stats.conns_total++;
	}
}

static void
rpc_sweep(struct ev_loop *loop, void *arg)
{
	struct rpc_srv *rs = arg;
	struct rpc_conn *co, *next;
	uint64_t now = ev_now_ms();
	uint64_t idle = (uint64_t)rs->rs_lim.idle_sec * 1000;

	for (co = rs->rs_conns; co != NULL; co = next) {
		next = co->co_next;
		if (now - co->co_active > idle && !co->co_isdirty) {
			rs->rs_stats.conns_idle++;
			rpc_conn_close(co);
		}
	}
	(void)ev_timer_set(loop, &rs->rs_sweep, SWEEP_MS, rpc_sweep, rs);
}

/* ---- setup ------------------------------------------------------------- */

struct rpc_srv *
rpc_srv_new(struct ev_loop *loop, const struct rpc_srv_limits *lim)
{
	struct rpc_srv *rs;

	if ((rs = calloc(1, sizeof(*rs))) == NULL)
		return NULL;
	if ((rs->rs_udpbuf = malloc(UDP_MAXMSG)) == NULL) {
		free(rs);
		return NULL;
	}
	rs->rs_loop = loop;
	rs->rs_lim = *lim;
	if (rs->rs_lim.max_outq == 0)
		rs->rs_lim.max_outq = 4 * 1024 * 1024;
	rs->rs_udptail = &rs->rs_udpq;
	rs->rs_udpnewtail = &rs->rs_udpnew;
	(void)ev_timer_set(loop, &rs->rs_sweep, SWEEP_MS, rpc_sweep, rs);
	return rs;
}

static void
rpc_udp_drop(struct rpc_udpreply *ur)
{
	struct rpc_udpreply *next;

	for (; ur != NULL; ur = next) {
		next = ur->ur_next;
		free(ur);
	}
}

void
rpc_srv_free(struct rpc_srv *rs)
{
	struct rpc_conn *co;
	size_t i;

	if (rs == NULL)
		return;
	/*
	 * What was never released is dropped, not sent: it may report a
	 * commit that did not happen (the daemon releases everything durable
	 * before it gets here).
	 */
	rpc_udp_drop(rs->rs_udpnew);
	rpc_udp_drop(rs->rs_udpq);
	while ((co = rs->rs_dirty) != NULL) {
		rs->rs_dirty = co->co_dirty;
		co->co_isdirty = 0;
	}
	while (rs->rs_conns != NULL)
		rpc_conn_close(rs->rs_conns);
	for (i = 0; i < rs->rs_nlis; i++) {
		ev_fd_del(rs->rs_loop, rs->rs_lis[i].rl_fd);
		close(rs->rs_lis[i].rl_fd);
	}
	ev_timer_cancel(rs->rs_loop, &rs->rs_sweep);
	free(rs->rs_udpbuf);
	free(rs);
}

int
rpc_srv_add_program(struct rpc_srv *rs, uint32_t prog, uint32_t vers,
    rpc_dispatch_fn *fn)
{
	if (rs->rs_nprogs == MAX_PROGRAMS)
		return -1;
	rs->rs_progs[rs->rs_nprogs].rp_prog = prog;
	rs->rs_progs[rs->rs_nprogs].rp_vers = vers;
	rs->rs_progs[rs->rs_nprogs].rp_fn = fn;
	rs->rs_nprogs++;
	return 0;
}

int
rpc_srv_add_decoder(struct rpc_srv *rs, xdrproc_t proc, xdrproc_t fast)
{
	if (rs->rs_ndec == MAX_DECODERS)
		return -1;
	rs->rs_dec_proc[rs->rs_ndec] = proc;
	rs->rs_dec_fast[rs->rs_ndec] = fast;
	rs->rs_ndec++;
	return 0;
}

const struct rpc_srv_stats *
rpc_srv_stats(const struct rpc_srv *rs)
{
	return &rs->rs_stats;
}

int
rpc_srv_has_family(const struct rpc_srv *rs, int family)
{
	size_t i;

	for (i = 0; i < rs->rs_nlis; i++)
		if (rs->rs_lis[i].rl_family == family)
			return 1;
	return 0;
}

static int
rpc_sock_open(int family, enum rpc_xport xp, const struct sockaddr *sa,
    socklen_t sl, char *err, size_t errlen)
{
	int fd, one = 1;
	char a[80];

	fd = socket(family, (xp == RPC_TCP ? SOCK_STREAM : SOCK_DGRAM) |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (xp == RPC_UDP && family == AF_INET)
		(void)setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	if (xp == RPC_UDP && family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
		    sizeof(one));
	if (bind(fd, sa, sl) == -1 ||
	    (xp == RPC_TCP && listen(fd, 1024) == -1)) {
		snprintf(err, errlen, "%s %s: %s", xp == RPC_TCP ? "tcp" : "udp",
		    rpc_addr_str(sa, 1, a, sizeof(a)), strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int
rpc_srv_add_listener(struct rpc_srv *rs, int family, enum rpc_xport xp,
    const struct sockaddr *sa, socklen_t sl, char *err, size_t errlen)
{
	struct rpc_listener *rl;
	int fd;

	if (rs->rs_nlis == MAX_LISTENERS) {
		snprintf(err, errlen, "too many listeners");
		return -1;
	}
	if ((fd = rpc_sock_open(family, xp, sa, sl, err, errlen)) == -1)
		return -1;
	rl = &rs->rs_lis[rs->rs_nlis];
	rl->rl_fd = fd;
	rl->rl_family = family;
	rl->rl_xport = xp;
	rl->rl_srv = rs;
	if (ev_fd_add(rs->rs_loop, fd, EV_READ,
	    xp == RPC_TCP ? rpc_tcp_accept : rpc_udp_read, rl) == -1) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		close(fd);
		return -1;
	}
	rs->rs_nlis++;
	return 0;
}

static unsigned
rpc_sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Fill `ss' for family (wildcard unless `addr' is given). */
static int
rpc_make_addr(int family, const char *addr, unsigned port,
    struct sockaddr_storage *ss, socklen_t *sl)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		if (addr != NULL && inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			return -1;
		*sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		s6->sin6_addr = in6addr_any;
		if (addr != NULL && inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			return -1;
		*sl = sizeof(*s6);
	}
	return 0;
}

int
rpc_srv_listen(struct rpc_srv *rs, const char *addr, unsigned port,
    unsigned *bound, char *err, size_t errlen)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	struct sockaddr_storage ss;
	socklen_t sl;
	int f, x, opened = 0;
	char why[256];

	if (addr != NULL && addr[0] == '\0')
		addr = NULL;
	for (f = 0; f < 2; f++) {
		if (rpc_make_addr(fams[f], addr, port, &ss, &sl) == -1)
			continue;	/* the address is of the other family */
		for (x = 0; x < 2; x++) {
			enum rpc_xport xp = x == 0 ? RPC_TCP : RPC_UDP;

			if (rpc_srv_add_listener(rs, fams[f], xp,
			    (struct sockaddr *)&ss, sl, why, sizeof(why)) == -1) {
				if (fams[f] == AF_INET6 && addr == NULL &&
				    opened > 0 && x == 0) {
					/* Host without IPv6: go on with v4. */
					log_warnx("no IPv6 listener: %s", why);
					break;
				}
				snprintf(err, errlen, "%s", why);
				return -1;
			}
			if (port == 0) {
				port = rpc_sock_port(
				    rs->rs_lis[rs->rs_nlis - 1].rl_fd);
				rpc_make_addr(fams[f], addr, port, &ss, &sl);
			}
			opened++;
		}
	}
	if (opened == 0) {
		snprintf(err, errlen, "'%s' is not a numeric address", addr);
		return -1;
	}
	*bound = port;
	return 0;
}
