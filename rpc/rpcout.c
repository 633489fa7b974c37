/*
 * rpcout.c - see rpcout.h.
 *
 * HOW IT WORKS.  Each pending call keeps its encoded message, destination,
 * source address and a timer.  A new call is only *held* (list HELD);
 * at the end of its turn onc_out_seal() tags it with the turn's commit
 * number and moves it to SEALED, in order; onc_out_release(), once that
 * number is committed, sends it and arms its timer (a GRANTED callback
 * or a _RES must never report state that is not yet stored).  The timer
 * fires after cr_timeout_ms: the
 * message is sent again until cr_tries sends have been made, then the
 * callback reports ONC_OUT_TIMEDOUT.  Replies arriving on the sockets are
 * matched by xid through a small hash table; a reply from an address other
 * than the one called, or to a call not sent yet, is ignored (a spoofed or
 * stray datagram cannot complete someone else's call).
 */
#include "rpcout.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"
#include "log.h"
#include "netaddr.h"
#include "rpcsrv.h"

#define OUT_BUCKETS	256	/* at first; doubles when calls outnumber it */
#define OUT_MAXMSG	16384
/*
 * Released calls sent per loop turn at the most: a release that grants
 * 100,000 waiters must not hold the loop while 100,000 callbacks go out
 * (the rest follow in the next turns, right away).
 */
#define OUT_BURST	128

struct onc_pending {
	struct onc_out		*pe_clnt;
	struct onc_pending	*pe_next;	/* hash chain */
	uint32_t		 pe_xid;
	unsigned		 pe_tries_left;
	unsigned		 pe_timeout_ms;
	struct sockaddr_storage	 pe_dst;
	socklen_t		 pe_dstlen;
	struct sockaddr_storage	 pe_src;
	socklen_t		 pe_srclen;
	onc_out_cb		*pe_cb;
	void			*pe_arg;
	struct ev_timer		 pe_timer;
	struct onc_pending	*pe_hnext;	/* list pe_list (not yet sent) */
	struct onc_pending	*pe_hprev;
	int			 pe_list;	/* CL_NONE: sent */
	uint64_t		 pe_seq;	/* SEALED: commit to wait for */
	size_t			 pe_len;
	uint8_t			 pe_msg[];
};

/* Where a call not yet sent waits. */
enum { CL_NONE, CL_HELD, CL_SEALED, CL_SENDING, CL_NLISTS };

struct onc_out {
	struct ev_loop		*cl_loop;
	int			 cl_fd4;
	int			 cl_fd6;
	uint32_t		 cl_xid;	/* onc_out_count_xids(): the last */
	bool			 cl_xid_count;
	struct onc_pending	**cl_hash;	/* by xid, chained */
	size_t			 cl_mask;	/* buckets - 1 */
	struct onc_pending	*cl_head[CL_NLISTS]; /* HELD: this turn's;
						   SEALED: in seal order;
						   SENDING: being released */
	struct onc_pending	*cl_tail[CL_NLISTS];
	struct ev_timer		 cl_burst;	/* more SENDING: next turn */
	struct onc_out_stats	 cl_stats;
	uint8_t			 cl_buf[OUT_MAXMSG];
};

/*
 * Double the xid table (at load 1), so that a burst of calls in flight
 * (100,000 grants at once) does not make every look-up walk long chains.
 * Out of memory: the table stays as it is, only slower.
 */
static void
out_grow(struct onc_out *cl)
{
	size_t i, size = (cl->cl_mask + 1) * 2;
	struct onc_pending **tab, *pe, *next;

	if ((tab = calloc(size, sizeof(*tab))) == NULL)
		return;
	for (i = 0; i <= cl->cl_mask; i++)
		for (pe = cl->cl_hash[i]; pe != NULL; pe = next) {
			next = pe->pe_next;
			pe->pe_next = tab[pe->pe_xid & (size - 1)];
			tab[pe->pe_xid & (size - 1)] = pe;
		}
	free(cl->cl_hash);
	cl->cl_hash = tab;
	cl->cl_mask = size - 1;
}

static struct onc_pending **
out_slot(struct onc_out *cl, uint32_t xid)
{
	struct onc_pending **pp = &cl->cl_hash[xid & cl->cl_mask];

	while (*pp != NULL && (*pp)->pe_xid != xid)
		pp = &(*pp)->pe_next;
	return pp;
}

/* Take pe off the list it waits on (none: no-op). */
static void
out_list_del(struct onc_out *cl, struct onc_pending *pe)
{
	if (pe->pe_list == CL_NONE)
		return;
	if (pe->pe_hprev != NULL)
		pe->pe_hprev->pe_hnext = pe->pe_hnext;
	else
		cl->cl_head[pe->pe_list] = pe->pe_hnext;
	if (pe->pe_hnext != NULL)
		pe->pe_hnext->pe_hprev = pe->pe_hprev;
	else
		cl->cl_tail[pe->pe_list] = pe->pe_hprev;
	pe->pe_hnext = pe->pe_hprev = NULL;
	pe->pe_list = CL_NONE;
}

/* Append pe to list `l' (it is on none). */
static void
out_list_add(struct onc_out *cl, struct onc_pending *pe, int l)
{
	struct onc_pending *last = cl->cl_tail[l];

	pe->pe_list = l;
	pe->pe_hnext = NULL;
	pe->pe_hprev = last;
	if (last != NULL)
		last->pe_hnext = pe;
	else
		cl->cl_head[l] = pe;
	cl->cl_tail[l] = pe;
}

static void
out_unlink(struct onc_out *cl, struct onc_pending *pe)
{
	struct onc_pending **pp = out_slot(cl, pe->pe_xid);

	if (*pp == pe)
		*pp = pe->pe_next;
	out_list_del(cl, pe);
	ev_timer_cancel(cl->cl_loop, &pe->pe_timer);
	cl->cl_stats.pending--;
}

static enum onc_status
out_send(struct onc_out *cl, struct onc_pending *pe)
{
	int fd = pe->pe_dst.ss_family == AF_INET6 ? cl->cl_fd6 : cl->cl_fd4;

	if (fd == -1)
		return ONC_SEND;
	return onc_send_from(fd, pe->pe_msg, pe->pe_len, &pe->pe_dst,
	    pe->pe_dstlen, pe->pe_srclen > 0 ? &pe->pe_src : NULL);
}

static void
out_finish(struct onc_pending *pe, enum onc_out_status st, XDR *res)
{
	struct onc_out *cl = pe->pe_clnt;

	out_unlink(cl, pe);
	if (pe->pe_cb != NULL)
		pe->pe_cb(pe->pe_arg, st, res);
	free(pe);
}

static void
out_timer(struct ev_loop *loop, void *arg)
{
	struct onc_pending *pe = arg;
	struct onc_out *cl = pe->pe_clnt;

	if (pe->pe_tries_left == 0) {
		cl->cl_stats.timeouts++;
		out_finish(pe, ONC_OUT_TIMEDOUT, NULL);
		return;
	}
	pe->pe_tries_left--;
	cl->cl_stats.retransmits++;
	/*
	 * A send that fails is a datagram lost, as in out_start(): the
	 * errors sendmsg(2) gives an unconnected UDP socket are mostly
	 * transient (ENOBUFS, a firewall's EPERM, a route coming back).
	 * Ending the call here made a port look-up whose second try hit one
	 * fail as "no port", remembered for every _RES to that address.
	 */
	if (out_send(cl, pe) != ONC_OK)
		cl->cl_stats.errors++;
	ev_timer_set(loop, &pe->pe_timer, pe->pe_timeout_ms, out_timer, pe);
}

void
onc_out_input(struct onc_out *cl, const struct sockaddr_storage *from,
    uint8_t *buf, size_t len)
{
	char verfbuf[MAX_AUTH_BYTES];
	struct rpc_msg msg;
	struct onc_pending *pe;
	uint32_t xid;
	XDR x;

	if (len < 8)
		return;
	memcpy(&xid, buf, 4);
	xid = ntohl(xid);
	/*
	 * A call still waiting for its commit has not left: a reply to it
	 * was forged with a guessed xid (they follow each other), and
	 * completing the call would act on state not yet stored.
	 */
	if ((pe = *out_slot(cl, xid)) == NULL || pe->pe_list != CL_NONE ||
	    !addr_same(from, &pe->pe_dst))
		return;
	memset(&msg, 0, sizeof(msg));
	/*
	 * The verifier's body goes here: with no buffer xdr_replymsg()
	 * allocates one, which nothing would free (any peer we call could
	 * leak up to MAX_AUTH_BYTES with every reply).
	 */
	msg.acpted_rply.ar_verf.oa_base = verfbuf;
	msg.acpted_rply.ar_results.where = NULL;
	msg.acpted_rply.ar_results.proc = XDRPROC(xdr_void);
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	/* Decode the header only; the caller decodes the results. */
	if (!xdr_replymsg(&x, &msg) || msg.rm_direction != REPLY) {
		xdr_destroy(&x);
		return;
	}
	cl->cl_stats.replies++;
	if (msg.rm_reply.rp_stat == MSG_ACCEPTED &&
	    msg.acpted_rply.ar_stat == SUCCESS)
		out_finish(pe, ONC_OUT_OK, &x);
	else
		out_finish(pe, ONC_OUT_REFUSED, NULL);
	xdr_destroy(&x);
}

static void
out_read(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct onc_out *cl = arg;
	struct sockaddr_storage from;
	socklen_t fl;
	ssize_t n;
	int i;

	(void)loop;
	(void)events;
	for (i = 0; i < 64; i++) {
		fl = sizeof(from);
		n = recvfrom(fd, cl->cl_buf, sizeof(cl->cl_buf), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &fl);
		if (n == -1) {
			/* ECONNREFUSED etc. come back as errors here. */
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			continue;
		}
		onc_out_input(cl, &from, cl->cl_buf, (size_t)n);
	}
}

static int
out_socket(int family, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1;

	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		sl = sizeof(*s6);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

struct onc_out *
onc_out_new(struct ev_loop *loop, unsigned port, char *err, size_t errlen)
{
	struct onc_out *cl;

	if ((cl = calloc(1, sizeof(*cl))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cl->cl_loop = loop;
	cl->cl_mask = OUT_BUCKETS - 1;
	if ((cl->cl_hash = calloc(OUT_BUCKETS, sizeof(*cl->cl_hash))) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(cl);
		return NULL;
	}
	cl->cl_fd6 = -1;
	if ((cl->cl_fd4 = out_socket(AF_INET, port)) == -1) {
		snprintf(err, errlen, "outgoing udp socket (port %u): %s", port,
		    strerror(errno));
		onc_out_free(cl);
		return NULL;
	}
	/* None on a host without IPv6; but no other failure is let pass. */
	if ((cl->cl_fd6 = out_socket(AF_INET6, port)) == -1 &&
	    !onc_no_ipv6(errno)) {
		snprintf(err, errlen, "outgoing udp socket (IPv6, port %u): %s",
		    port, strerror(errno));
		onc_out_free(cl);
		return NULL;
	}
	if (ev_fd_add(loop, cl->cl_fd4, EV_READ, out_read, cl) == -1 ||
	    (cl->cl_fd6 != -1 &&
	    ev_fd_add(loop, cl->cl_fd6, EV_READ, out_read, cl) == -1)) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		onc_out_free(cl);
		return NULL;
	}
	return cl;
}

void
onc_out_free(struct onc_out *cl)
{
	size_t i;

	if (cl == NULL)
		return;
	if (cl->cl_loop != NULL)
		ev_timer_cancel(cl->cl_loop, &cl->cl_burst);
	for (i = 0; cl->cl_hash != NULL && i <= cl->cl_mask; i++)
		while (cl->cl_hash[i] != NULL) {
			struct onc_pending *pe = cl->cl_hash[i];

			out_unlink(cl, pe);
			free(pe);
		}
	free(cl->cl_hash);
	if (cl->cl_fd4 != -1) {
		ev_fd_del(cl->cl_loop, cl->cl_fd4);
		close(cl->cl_fd4);
	}
	if (cl->cl_fd6 != -1) {
		ev_fd_del(cl->cl_loop, cl->cl_fd6);
		close(cl->cl_fd6);
	}
	free(cl);
}

/* Encode the call message into cl_buf; returns its length or 0. */
static size_t
out_encode(struct onc_out *cl, const struct onc_out_req *rq, uint32_t xid)
{
	struct rpc_msg msg;
	XDR x;
	size_t len = 0;

	memset(&msg, 0, sizeof(msg));
	msg.rm_xid = xid;
	msg.rm_direction = CALL;
	msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	msg.rm_call.cb_prog = rq->cr_prog;
	msg.rm_call.cb_vers = rq->cr_vers;
	msg.rm_call.cb_proc = rq->cr_proc;
	msg.rm_call.cb_cred = _null_auth;
	msg.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)cl->cl_buf, sizeof(cl->cl_buf), XDR_ENCODE);
	/*
	 * xdr_callhdr() stops after the version (clients marshal the
	 * procedure and credentials themselves): add them.
	 */
	if (xdr_callhdr(&x, &msg) &&
	    xdr_u_int32_t(&x, &msg.rm_call.cb_proc) &&
	    xdr_opaque_auth(&x, &msg.rm_call.cb_cred) &&
	    xdr_opaque_auth(&x, &msg.rm_call.cb_verf) &&
	    rq->cr_xargs(&x, (void *)(uintptr_t)rq->cr_args))
		len = xdr_getpos(&x);
	xdr_destroy(&x);
	return len;
}

enum onc_status
onc_out_call(struct onc_out *cl, const struct onc_out_req *rq,
    uint32_t *xidp)
{
	struct onc_pending *pe;
	struct onc_pending **slot;
	uint32_t xid;
	size_t len;

	/*
	 * Random, not the next of a counter: a reply is matched by its xid
	 * and its source address, and a peer who saw one of our calls (a
	 * _MSG from its own address draws a look-up at it) could otherwise
	 * predict the xids of our callbacks to other hosts and forge their
	 * answers from those hosts' addresses.  Never 0: callers keep 0 for
	 * "no call on the wire" (nlm_out.c); never one of a call pending.
	 */
	do {
		if (cl->cl_xid_count)
			xid = ++cl->cl_xid;
		else
			xid = arc4random();
	} while (xid == 0 || *out_slot(cl, xid) != NULL);
	if ((len = out_encode(cl, rq, xid)) == 0 ||
	    rq->cr_dstlen > sizeof(pe->pe_dst) ||
	    rq->cr_srclen > sizeof(pe->pe_src))
		return ONC_ENCODE;
	if ((pe = calloc(1, sizeof(*pe) + len)) == NULL)
		return ONC_NOMEM;
	memcpy(pe->pe_msg, cl->cl_buf, len);
	pe->pe_len = len;
	pe->pe_clnt = cl;
	pe->pe_xid = xid;
	memcpy(&pe->pe_dst, rq->cr_dst, rq->cr_dstlen);
	pe->pe_dstlen = rq->cr_dstlen;
	addr_unmap(&pe->pe_dst, &pe->pe_dstlen);
	if (rq->cr_src != NULL && rq->cr_srclen > 0) {
		memcpy(&pe->pe_src, rq->cr_src, rq->cr_srclen);
		pe->pe_srclen = rq->cr_srclen;
		addr_unmap(&pe->pe_src, &pe->pe_srclen);
	}
	pe->pe_tries_left = rq->cr_tries > 0 ? rq->cr_tries - 1 : 0;
	pe->pe_timeout_ms = rq->cr_timeout_ms > 0 ? rq->cr_timeout_ms : 1000;
	pe->pe_cb = rq->cr_cb;
	pe->pe_arg = rq->cr_arg;
	slot = out_slot(cl, xid);
	*slot = pe;
	if (cl->cl_stats.pending >= cl->cl_mask + 1)
		out_grow(cl);
	out_list_add(cl, pe, CL_HELD);
	cl->cl_stats.pending++;
	cl->cl_stats.calls++;
	if (xidp != NULL)
		*xidp = xid;
	return ONC_OK;
}

void
onc_out_seal(struct onc_out *cl, uint64_t seq)
{
	struct onc_pending *pe;

	while ((pe = cl->cl_head[CL_HELD]) != NULL) {
		out_list_del(cl, pe);
		pe->pe_seq = seq;
		out_list_add(cl, pe, CL_SEALED);
	}
}

/* Send pe now and start its timer. */
static void
out_start(struct onc_out *cl, struct onc_pending *pe)
{
	ev_timer_set(cl->cl_loop, &pe->pe_timer, pe->pe_timeout_ms, out_timer,
	    pe);
	if (out_send(cl, pe) != ONC_OK)
		cl->cl_stats.errors++;	/* the timer retries */
}

static void	out_burst_cb(struct ev_loop *, void *);

/*
 * Send up to OUT_BURST released calls; if more wait, come back in the
 * next loop turn (a timer due at once), after that turn's requests.
 */
static void
out_send_burst(struct onc_out *cl)
{
	struct onc_pending *pe;
	unsigned n = 0;

	while (n++ < OUT_BURST && (pe = cl->cl_head[CL_SENDING]) != NULL) {
		out_list_del(cl, pe);
		out_start(cl, pe);
	}
	if (cl->cl_head[CL_SENDING] != NULL && !ev_timer_armed(&cl->cl_burst))
		ev_timer_set(cl->cl_loop, &cl->cl_burst, 0, out_burst_cb,
		    cl);
}

static void
out_burst_cb(struct ev_loop *loop, void *arg)
{
	(void)loop;
	out_send_burst(arg);
}

void
onc_out_release(struct onc_out *cl, uint64_t committed)
{
	struct onc_pending *pe;

	/*
	 * Moved to a list of its own first: a completion callback run from
	 * here may make new calls (they belong to a later turn) or cancel
	 * calls still on this list.
	 */
	while ((pe = cl->cl_head[CL_SEALED]) != NULL &&
	    pe->pe_seq <= committed) {
		out_list_del(cl, pe);
		out_list_add(cl, pe, CL_SENDING);
	}
	if (!ev_timer_armed(&cl->cl_burst))
		out_send_burst(cl);
}

int
onc_out_held(const struct onc_out *cl)
{
	return cl->cl_head[CL_HELD] != NULL;
}

int
onc_out_sent(struct onc_out *cl, uint32_t xid)
{
	struct onc_pending *pe = *out_slot(cl, xid);

	return pe != NULL && pe->pe_list == CL_NONE;
}

void
onc_out_cancel(struct onc_out *cl, uint32_t xid)
{
	struct onc_pending *pe = *out_slot(cl, xid);

	if (pe == NULL)
		return;
	out_unlink(cl, pe);
	free(pe);
}

void
onc_out_count_xids(struct onc_out *cl, uint32_t last)
{
	cl->cl_xid = last;
	cl->cl_xid_count = true;
}

const struct onc_out_stats *
onc_out_stats(const struct onc_out *cl)
{
	return &cl->cl_stats;
}
