/*
 * receiver.c - crashdrv's callback receiver: the NLM of the client host
 * as far as nlmd can tell.
 *
 * A UDP RPC server for NLM v4, registered with this host's rpcbind (PMAP
 * SET), where nlmd finds it (PMAP GETPORT on the source address of the
 * LOCK).  A GRANTED_MSG gets an empty reply, then GRANTED_RES goes to
 * nlmd's NLM port from the client address; a synchronous GRANTED gets its
 * result as the reply.  What to answer is the client's business
 * (rs_client_granted()): GRANTED when it waited for that lock or holds
 * it, DENIED otherwise (as Linux does), which makes nlmd release it.
 *
 * Retransmissions: nlmd gives each grant a fresh cookie and resends it
 * until answered; a cookie seen before marks a retransmission, which never
 * wakes a waiter (load.c, "Stale callbacks").  The last RCV_SEEN cookies
 * are kept.  To make nlmd retransmit (and some clients learn of their
 * grant from a re-sent LOCK instead), o_drop per cent of the GRANTED_MSG
 * not seen before are ignored: no reply, no GRANTED_RES, cookie not
 * remembered, as if the datagram had been lost.
 *
 * One thread runs svc_run(); the dispatcher has no argument, hence the
 * file-static state below, set once before the thread starts.
 */
#include "crashdrv.h"

#include <netinet/in.h>
#include <rpc/pmap_clnt.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RCV_SEEN	8192
#define RCV_COOKIE_MAX	16

struct rcv_cookie {
	uint8_t		 ck_len;
	uint8_t		 ck_val[RCV_COOKIE_MAX];
};

static struct rs_drv *rcv_drv;
static struct rs_conn rcv_res;		/* GRANTED_RES, one way */
static struct rcv_cookie rcv_seen[RCV_SEEN];
static size_t rcv_next;			/* ring position */
static pthread_t rcv_thr;
static uint64_t rcv_rng = 0x2545f4914f6cdd1dull;

/* Lose this (first) delivery?  o_drop per cent of them. */
static bool
rcv_drop(void)
{
	rcv_rng ^= rcv_rng >> 12;
	rcv_rng ^= rcv_rng << 25;
	rcv_rng ^= rcv_rng >> 27;
	return (rcv_rng * 2685821657736338717ull >> 33) % 100 <
	    rcv_drv->d_opt.o_drop;
}

/* Was this cookie seen before? */
static bool
rcv_repeat(const nlm_netobj *ck)
{
	struct rcv_cookie *c;
	size_t i, n = ck->nlm_netobj_len;

	if (n > RCV_COOKIE_MAX)
		n = RCV_COOKIE_MAX;
	for (i = 0; i < RCV_SEEN; i++) {
		c = &rcv_seen[i];
		if (c->ck_len == n && n > 0 &&
		    memcmp(c->ck_val, ck->nlm_netobj_val, n) == 0)
			return true;
	}
	return false;
}

static void
rcv_remember(const nlm_netobj *ck)
{
	struct rcv_cookie *c;
	size_t n = ck->nlm_netobj_len;

	if (n > RCV_COOKIE_MAX)
		n = RCV_COOKIE_MAX;
	c = &rcv_seen[rcv_next];
	rcv_next = (rcv_next + 1) % RCV_SEEN;
	c->ck_len = (uint8_t)n;
	if (n > 0)
		memcpy(c->ck_val, ck->nlm_netobj_val, n);
}

static void
rcv_dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	nlm4_testargs a;
	nlm4_res res;
	bool repeat;
	int ans;

	if (rq->rq_proc == NULLPROC) {
		svc_sendreply(xp, XDRPROC(xdr_void), NULL);
		return;
	}
	if (rq->rq_proc != NLMPROC4_GRANTED &&
	    rq->rq_proc != NLMPROC4_GRANTED_MSG) {
		svcerr_noproc(xp);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (!svc_getargs(xp, XDRPROC(xdr_nlm4_testargs), (caddr_t)&a)) {
		svcerr_decode(xp);
		return;
	}
	if (!(repeat = rcv_repeat(&a.cookie)) && rcv_drop()) {
		pthread_mutex_lock(&rcv_drv->d_mu);
		rcv_drv->d_cb_dropped++;
		pthread_mutex_unlock(&rcv_drv->d_mu);
		goto out;
	}
	if (!repeat)
		rcv_remember(&a.cookie);
	ans = rs_client_granted(rcv_drv, &a, repeat);
	if (rq->rq_proc == NLMPROC4_GRANTED) {
		memset(&res, 0, sizeof(res));
		res.cookie = a.cookie;
		res.stat.stat = (nlm4_stats)ans;
		svc_sendreply(xp, XDRPROC(xdr_nlm4_res), (caddr_t)&res);
	} else {
		svc_sendreply(xp, XDRPROC(xdr_void), NULL);
		rs_call_granted_res(&rcv_res, &a.cookie, ans);
	}
out:
	svc_freeargs(xp, XDRPROC(xdr_nlm4_testargs), (caddr_t)&a);
}

static void *
rcv_main(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

/* A UDP socket on any address, an ephemeral port; -1 if not. */
static int
rcv_socket(uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int
rs_receiver_start(struct rs_drv *d)
{
	SVCXPRT *xp;
	uint16_t port;
	int fd;

	rcv_drv = d;
	/*
	 * A message: wait 1 ms, never retransmit.  (With a timeout of 0,
	 * libtirpc 1.3 returns RPC_TIMEDOUT without sending anything.)
	 */
	rs_conn_init(&rcv_res, false, 1, 1000, 0x52430000u);
	if ((fd = rcv_socket(&port)) == -1) {
		perror("crashdrv: receiver socket");
		return -1;
	}
	if ((xp = svc_dg_create(fd, 0, 0)) == NULL ||
	    !svc_reg(xp, NLM_PROG, NLM4_VERS, rcv_dispatch, NULL)) {
		fprintf(stderr, "crashdrv: receiver: svc_dg_create/svc_reg\n");
		return -1;
	}
	(void)pmap_unset(NLM_PROG, NLM4_VERS);
	if (!pmap_set(NLM_PROG, NLM4_VERS, IPPROTO_UDP, port)) {
		fprintf(stderr, "crashdrv: receiver: cannot register NLM v4 "
		    "with the local rpcbind\n");
		return -1;
	}
	if (pthread_create(&rcv_thr, NULL, rcv_main, NULL) != 0) {
		fprintf(stderr, "crashdrv: pthread_create failed\n");
		return -1;
	}
	rs_note("receiver: NLM v4 on udp port %u, registered with rpcbind",
	    port);
	return 0;
}

void
rs_receiver_stop(void)
{
	(void)pmap_unset(NLM_PROG, NLM4_VERS);
}
