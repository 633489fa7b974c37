/*
 * nlm_out.c - calls from nlmd to a client's NLM (GRANTED callbacks, _RES
 * messages) and status monitor (SM_NOTIFY), over UDP, without ever
 * waiting.
 *
 * HOW IT WORKS.  A send holds its arguments already encoded.  To deliver
 * it we need the port the client's program registered with the rpcbind on
 * the client's address: the port cache (one entry per client address,
 * program and version) answers at once when it knows, otherwise the send
 * joins the
 * entry's waiting list and one non-blocking rpcbind query (PMAP GETPORT for
 * IPv4, RPCB GETADDR for IPv6) is made for all of them.  When the answer
 * comes every waiting send goes out, in the order they were made; when it does not, each completes as
 * failed.  Ports are cached for PORT_TTL_MS and forgotten after a failure.
 *
 * BOUNDS.  A request's source address can be forged, and every _MSG
 * from it makes us look up a port at that address: reflected traffic.
 * So a look-up that found no port is remembered for NEG_TTL_MS (or
 * until one finds it), and a _RES message to that address and program
 * fails at once, without a datagram (callbacks and notifications, which
 * go only to hosts that hold something and pace themselves, still look
 * up); _RES messages look up once, not three times, at most MAX_PEERS
 * addresses are cached (a full cache forgets an idle entry in the new
 * address's bucket, see peer_evict()) and at most MAX_RES_INFLIGHT _RES
 * messages are on their way; over those, a send fails at once and is
 * counted.
 * Every send completes exactly once through its callback, unless its owner
 * cancels it first; either way it is then freed here.  Every live send is
 * also on one list, so that shutdown frees those nobody owns (a _RES in
 * flight) as well.
 */
#include "nlm_impl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/sm_inter.h"
#include "rpcout.h"
#include "rpcsrv.h"
#include "log.h"

#define PEER_BUCKETS	4096		/* a power of 2; 16 a chain at MAX_PEERS */
#define UADDR_MAX	256		/* longest GETADDR answer taken */
#define PORT_TTL_MS	120000
#define NEG_TTL_MS	30000
#define MAX_PEERS	65536
#define RPCB_PORT	111
#define RPCB_TIMEOUT_MS	1000
#define RPCB_TRIES	3
#define PORT_TIMEOUTS	3
/*
 * A one-way call to a peer that leaves them unanswered is waited for this
 * long, not its full timeout: its reply slot (MAX_RES_INFLIGHT) is free
 * again at once, where 5 s a _RES capped such clients at about 820 _MSG
 * calls a second.  Ample for a peer that does answer: it answers one and
 * is waited for as a call from then on.
 */
#define ONEWAY_SILENT_MS 250

struct nlm_peer {
	struct sockaddr_storage	 p_addr;	/* port 0 */
	socklen_t		 p_addrlen;
	uint32_t		 p_prog;
	uint32_t		 p_vers;
	uint16_t		 p_port;	/* 0: unknown */
	uint64_t		 p_expires;
	uint64_t		 p_neg_until;	/* no port found: fail until */
	bool			 p_busy;	/* rpcbind query in flight */
	unsigned		 p_timeouts;	/* calls unanswered in a row */
	bool			 p_answers;	/* has answered a one-way call */
	bool			 p_silent;	/* has left one unanswered, and
					   answered none */
	uint32_t		 p_xid;
	struct nlm_send		*p_waiting;
	struct nlm_peer		*p_next;
};

static struct nlm_peer *peers[PEER_BUCKETS];
static size_t npeers;
static struct nlm_send *sends;	/* every live send */

static void
send_free(struct nlm_send *s)
{
	if (s->s_aprev != NULL)
		s->s_aprev->s_anext = s->s_anext;
	else
		sends = s->s_anext;
	if (s->s_anext != NULL)
		s->s_anext->s_aprev = s->s_aprev;
	free(s);
}

/*
 * Keyed, as every table of client-chosen keys is: the addresses come from
 * requests' source addresses, which can be forged, and a public hash let
 * a peer put every entry in one chain (65,536 entries walked for each
 * _MSG).  The key is the one the host table uses (nc_hash_key).
 */
static size_t
peer_hash(const struct sockaddr_storage *ss, uint32_t prog, uint32_t vers)
{
	uint8_t buf[28];
	size_t n;
	const uint8_t *a = nlm_addr_bytes(ss, &n);

	memcpy(buf, a, n);
	if (ss->ss_family == AF_INET6) {
		memcpy(buf + n, &((const struct sockaddr_in6 *)(const void *)
		    ss)->sin6_scope_id, 4);
		n += 4;
	}
	memcpy(buf + n, &prog, 4);
	memcpy(buf + n + 4, &vers, 4);
	return (size_t)(lk_siphash(nlm->n_conf.nc_hash_key, 0x70656572, buf,
	    n + 8) & (PEER_BUCKETS - 1));
}

void
nlm_out_peer_stats(size_t *np, size_t *longestp)
{
	struct nlm_peer *p;
	size_t b, len, longest = 0;

	for (b = 0; b < PEER_BUCKETS; b++) {
		for (len = 0, p = peers[b]; p != NULL; p = p->p_next)
			len++;
		if (len > longest)
			longest = len;
	}
	*np = npeers;
	*longestp = longest;
}

static void
peer_key(const struct sockaddr_storage *in, socklen_t inlen,
    struct sockaddr_storage *out, socklen_t *outlen)
{
	memset(out, 0, sizeof(*out));
	if (in->ss_family == AF_INET) {
		struct sockaddr_in *o = (struct sockaddr_in *)out;

		o->sin_family = AF_INET;
		o->sin_addr = ((const struct sockaddr_in *)(const void *)in)->sin_addr;
		*outlen = sizeof(*o);
	} else {
		struct sockaddr_in6 *o = (struct sockaddr_in6 *)out;

		o->sin6_family = AF_INET6;
		o->sin6_addr =
		    ((const struct sockaddr_in6 *)(const void *)in)->sin6_addr;
		o->sin6_scope_id =
		    ((const struct sockaddr_in6 *)(const void *)in)->sin6_scope_id;
		*outlen = sizeof(*o);
	}
	(void)inlen;
}

/*
 * The cache is full (forged source addresses can fill it): make room in
 * bucket b by forgetting one idle entry there -- no look-up in flight, no
 * send waiting -- if there is one.  What it knew is only a cache: a port
 * is looked up again, a failed look-up (the negative cache) may be tried
 * again once.  Looking in one bucket keeps this O(a chain); the keyed
 * hash spreads the entries.  Before, a full cache failed every callback
 * and SM_NOTIFY to a host not in it until entries expired.
 */
static bool
peer_evict(size_t b)
{
	struct nlm_peer **pp, *p;

	for (pp = &peers[b]; (p = *pp) != NULL; pp = &p->p_next)
		if (!p->p_busy && p->p_waiting == NULL) {
			*pp = p->p_next;
			free(p);
			npeers--;
			nlm->n_stats.peers_evicted++;
			return true;
		}
	return false;
}

static struct nlm_peer *
peer_get(const struct sockaddr_storage *addr, socklen_t len, uint32_t prog,
    uint32_t vers, bool create)
{
	struct sockaddr_storage key;
	socklen_t kl;
	struct nlm_peer *p;
	size_t b;

	peer_key(addr, len, &key, &kl);
	b = peer_hash(&key, prog, vers);
	for (p = peers[b]; p != NULL; p = p->p_next)
		if (p->p_prog == prog && p->p_vers == vers &&
		    memcmp(&p->p_addr, &key, kl) == 0)
			return p;
	if (!create)
		return NULL;
	if (npeers >= MAX_PEERS && !peer_evict(b))
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	npeers++;
	p->p_addr = key;
	p->p_addrlen = kl;
	p->p_prog = prog;
	p->p_vers = vers;
	p->p_next = peers[b];
	peers[b] = p;
	return p;
}

static bool_t
nlm_xdr_raw(XDR *x, void *arg)
{
	struct nlm_send *s = arg;

	return xdr_opaque(x, (char *)s->s_args, (u_int)s->s_len);
}

struct nlm_send *
nlm_send_new(const struct sockaddr_storage *peer, socklen_t peerlen,
    uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xargs,
    const void *args, const struct sockaddr_storage *local,
    socklen_t locallen)
{
	uint8_t buf[8192];
	struct nlm_send *s;
	XDR x;
	size_t len;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	if (!xargs(&x, (void *)(uintptr_t)args)) {
		xdr_destroy(&x);
		return NULL;
	}
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	if ((s = calloc(1, sizeof(*s) + len)) == NULL)
		return NULL;
	memcpy(s->s_args, buf, len);
	s->s_len = len;
	s->s_anext = sends;
	if (sends != NULL)
		sends->s_aprev = s;
	sends = s;
	peer_key(peer, peerlen, &s->s_peer, &s->s_peerlen);
	s->s_prog = prog;
	s->s_vers = vers;
	s->s_proc = proc;
	if (local != NULL && locallen > 0) {
		s->s_local = *local;
		s->s_locallen = locallen;
	}
	return s;
}

/*
 * What the end of a call sent to the cached port says of that port: an
 * answer, that it is right; an error, or PORT_TIMEOUTS calls in a row
 * unanswered, that it may be stale (the client's lockd or statd
 * restarted elsewhere): looked up again at the next call.
 */
static void
send_judge_port(const struct nlm_send *s, enum onc_out_status st)
{
	struct nlm_peer *p;

	if ((p = peer_get(&s->s_peer, s->s_peerlen, s->s_prog, s->s_vers,
	    false)) == NULL)
		return;
	if (st == ONC_OUT_OK)
		p->p_timeouts = 0;
	else if (st != ONC_OUT_TIMEDOUT || ++p->p_timeouts >= PORT_TIMEOUTS) {
		p->p_port = 0;
		p->p_timeouts = 0;
	}
}

/*
 * Is st, the end of the one-way call s, its going unanswered by a peer
 * that never answers them?  The clients that send _MSG calls (rpc.lockd,
 * the BSD and illumos kernels) never answer a _RES: counted against the
 * port, every third one had it looked up again.  One that answered one
 * answers them all: its silence says what a call's does.
 */
static bool
send_unanswered(const struct nlm_send *s, enum onc_out_status st)
{
	struct nlm_peer *p;

	if (!s->s_oneway || (p = peer_get(&s->s_peer, s->s_peerlen,
	    s->s_prog, s->s_vers, false)) == NULL)
		return false;
	if (st == ONC_OUT_OK)
		p->p_answers = true;
	if (st != ONC_OUT_TIMEDOUT || p->p_answers)
		return false;
	p->p_silent = true;
	return true;
}

static void
send_done(void *arg, enum onc_out_status st, XDR *res)
{
	struct nlm_send *s = arg;
	bool unanswered = send_unanswered(s, st);

	s->s_xid = 0;
	/* Delivered as far as anyone can tell; the port not judged. */
	if (!unanswered)
		send_judge_port(s, st);
	if (s->s_cb != NULL)
		s->s_cb(s->s_arg, st == ONC_OUT_OK || unanswered, res);
	send_free(s);
}

static void
send_fail(struct nlm_send *s)
{
	if (s->s_cb != NULL)
		s->s_cb(s->s_arg, 0, NULL);
	send_free(s);
}

static void
send_transmit(struct nlm_send *s, uint16_t port)
{
	struct sockaddr_storage dst = s->s_peer;
	struct onc_out_req rq;

	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(port);
	memset(&rq, 0, sizeof(rq));
	rq.cr_dst = (struct sockaddr *)&dst;
	rq.cr_dstlen = s->s_peerlen;
	rq.cr_src = s->s_locallen > 0 ? (struct sockaddr *)&s->s_local : NULL;
	rq.cr_srclen = s->s_locallen;
	rq.cr_prog = s->s_prog;
	rq.cr_vers = s->s_vers;
	rq.cr_proc = s->s_proc;
	rq.cr_xargs = XDRPROC(nlm_xdr_raw);
	rq.cr_args = s;
	rq.cr_timeout_ms = s->s_timeout_ms;
	rq.cr_tries = s->s_tries;
	rq.cr_cb = send_done;
	rq.cr_arg = s;
	if (onc_out_call(nlm->n_clnt, &rq, &s->s_xid) != ONC_OK)
		send_fail(s);
}

/* Parse the port out of a universal address "h1.h2...p1.p2". */
static uint16_t
uaddr_port(const char *ua)
{
	const char *last, *prev = NULL;
	unsigned hi, lo;

	if (ua == NULL || (last = strrchr(ua, '.')) == NULL)
		return 0;
	for (const char *p = ua; p < last; p++)
		if (*p == '.')
			prev = p;
	if (prev == NULL || sscanf(prev + 1, "%u.%u", &hi, &lo) != 2 ||
	    hi > 255 || lo > 255)
		return 0;
	return (uint16_t)(hi << 8 | lo);
}

static void
lookup_done(void *arg, enum onc_out_status st, XDR *res)
{
	struct nlm_peer *p = arg;
	struct nlm_send *s, *next, *prev;
	uint16_t port = 0;
	char a[64];

	p->p_busy = false;
	p->p_xid = 0;
	if (st == ONC_OUT_OK && p->p_addr.ss_family == AF_INET) {
		u_long v = 0;

		if (xdr_u_long(res, &v) && v < 65536)
			port = (uint16_t)v;
	} else if (st == ONC_OUT_OK) {
		char *ua = NULL;

		/*
		 * Bounded: an IPv6 universal address with a scope and the
		 * port is under 64 bytes; unbounded, the peer's length
		 * (up to 4 GB) was allocated before the bytes were looked
		 * for.
		 */
		if (xdr_string(res, &ua, UADDR_MAX))
			port = uaddr_port(ua);
		xdr_free(XDRPROC(xdr_wrapstring), (char *)&ua);
	}
	if (port == 0)
		nlm->n_stats.rpcb_failed++;
	if (port == 0 && st != ONC_OUT_UNREACH) {
		/*
		 * An expired port found earlier is no longer true either, and
		 * left in place it would hide the failure from the check of
		 * nlm_send_start(): every _RES would look up again.  Not when
		 * the look-up was never sent (onc_out_call() failed: out of
		 * memory here), which says nothing of the peer: remembered,
		 * it failed every _RES to the address for NEG_TTL_MS.
		 */
		p->p_port = 0;
		p->p_neg_until = ev_now_ms() + NEG_TTL_MS;
		log_debug("no port for program %u v%u/udp from rpcbind at %s",
		    p->p_prog, p->p_vers, addr_str((struct sockaddr *)
		    &p->p_addr, 0, a, sizeof(a)));
	} else if (port != 0) {
		p->p_port = port;
		p->p_expires = ev_now_ms() + PORT_TTL_MS;
		/*
		 * An earlier look-up's failure is no longer true: kept, it
		 * failed the next _RES without a look-up once this port was
		 * dropped (a call refused there).
		 */
		p->p_neg_until = 0;
	}
	/*
	 * The list is detached while it is worked off: a completion callback
	 * may start new sends to this peer, but must not cancel one of these
	 * (none does: callbacks only record the outcome).  It is a stack
	 * (nlm_send_start() pushes): turned over, the sends leave in the
	 * order they were made -- a LOCK_RES saying BLOCKED before the
	 * GRANTED_MSG of that request, when both waited for this answer.
	 */
	for (s = p->p_waiting, p->p_waiting = NULL, prev = NULL; s != NULL;
	    s = next) {
		next = s->s_next;
		s->s_next = prev;
		prev = s;
	}
	for (s = prev; s != NULL; s = next) {
		next = s->s_next;
		s->s_waiton = NULL;
		if (port != 0)
			send_transmit(s, port);
		else
			send_fail(s);
	}
}

static void
peer_lookup(struct nlm_peer *p, const struct nlm_send *s)
{
	struct sockaddr_storage dst = p->p_addr;
	struct onc_out_req rq;
	struct pmap pm;
	RPCB rb;

	memset(&rq, 0, sizeof(rq));
	rq.cr_prog = PMAPPROG;
	if (dst.ss_family == AF_INET) {
		((struct sockaddr_in *)&dst)->sin_port = htons(RPCB_PORT);
		pm.pm_prog = p->p_prog;
		pm.pm_vers = p->p_vers;
		pm.pm_prot = IPPROTO_UDP;
		pm.pm_port = 0;
		rq.cr_vers = PMAPVERS;
		rq.cr_proc = PMAPPROC_GETPORT;
		rq.cr_xargs = XDRPROC(xdr_pmap);
		rq.cr_args = &pm;
	} else {
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(RPCB_PORT);
		rb.r_prog = p->p_prog;
		rb.r_vers = p->p_vers;
		rb.r_netid = (char *)"udp6";
		rb.r_addr = (char *)"";
		rb.r_owner = (char *)"";
		rq.cr_vers = RPCBVERS;
		rq.cr_proc = RPCBPROC_GETADDR;
		rq.cr_xargs = XDRPROC(xdr_rpcb);
		rq.cr_args = &rb;
	}
	rq.cr_dst = (struct sockaddr *)&dst;
	rq.cr_dstlen = p->p_addrlen;
	rq.cr_src = s->s_locallen > 0 ? (const struct sockaddr *)&s->s_local :
	    NULL;
	rq.cr_srclen = s->s_locallen;
	/* The first waiting send may ask for its own look-up timing. */
	rq.cr_timeout_ms = s->s_lk_timeout_ms > 0 ? s->s_lk_timeout_ms :
	    RPCB_TIMEOUT_MS;
	rq.cr_tries = s->s_lk_tries > 0 ? s->s_lk_tries : RPCB_TRIES;
	rq.cr_cb = lookup_done;
	rq.cr_arg = p;
	nlm->n_stats.rpcb_lookups++;
	p->p_busy = true;
	if (onc_out_call(nlm->n_clnt, &rq, &p->p_xid) != ONC_OK)
		lookup_done(p, ONC_OUT_UNREACH, NULL);
}

void
nlm_send_start(struct nlm_send *s, unsigned timeout_ms, unsigned tries,
    nlm_send_cb *cb, void *arg)
{
	struct nlm_peer *p;

	s->s_timeout_ms = timeout_ms;
	s->s_tries = tries;
	s->s_cb = cb;
	s->s_arg = arg;
	p = peer_get(&s->s_peer, s->s_peerlen, s->s_prog, s->s_vers, true);
	if (p == NULL) {
		send_fail(s);
		return;
	}
	/* Known to leave them unanswered: not waited for (see above). */
	if (s->s_oneway && p->p_silent && !p->p_answers &&
	    s->s_timeout_ms > ONEWAY_SILENT_MS)
		s->s_timeout_ms = ONEWAY_SILENT_MS;
	if (s->s_reflect && p->p_port == 0 && ev_now_ms() < p->p_neg_until) {
		/* Looked up in vain a moment ago: no new datagram to it. */
		nlm->n_stats.rpcb_suppressed++;
		send_fail(s);
		return;
	}
	if (p->p_port != 0 && ev_now_ms() < p->p_expires) {
		send_transmit(s, p->p_port);
		return;
	}
	s->s_waiton = p;
	s->s_next = p->p_waiting;
	p->p_waiting = s;
	if (!p->p_busy)
		peer_lookup(p, s);
}

void
nlm_send_cancel(struct nlm_send *s)
{
	struct nlm_send **pp;

	if (s == NULL)
		return;
	if (s->s_waiton != NULL) {
		for (pp = &s->s_waiton->p_waiting; *pp != NULL;
		    pp = &(*pp)->s_next)
			if (*pp == s) {
				*pp = s->s_next;
				break;
			}
	} else if (s->s_xid != 0)
		onc_out_cancel(nlm->n_clnt, s->s_xid);
	send_free(s);
}

void
nlm_send_expire(struct nlm_send *s)
{
	/*
	 * Only a copy that left counts against the port: one still held
	 * for its turn's commit (a slow disk under `sync') was never
	 * sent, and three of those had the port looked up again for
	 * nothing.
	 */
	if (s != NULL && s->s_waiton == NULL && s->s_xid != 0 &&
	    onc_out_sent(nlm->n_clnt, s->s_xid))
		send_judge_port(s, ONC_OUT_TIMEDOUT);
	nlm_send_cancel(s);
}

void
nlm_send_set_cb(struct nlm_send *s, nlm_send_cb *cb, void *arg)
{
	s->s_cb = cb;
	s->s_arg = arg;
}

void
nlm_out_gc(void)
{
	struct nlm_peer **pp, *p;
	uint64_t now = ev_now_ms();
	size_t b;

	for (b = 0; b < PEER_BUCKETS; b++) {
		pp = &peers[b];
		while ((p = *pp) != NULL) {
			if (!p->p_busy && p->p_waiting == NULL &&
			    now >= p->p_expires && now >= p->p_neg_until) {
				*pp = p->p_next;
				free(p);
				npeers--;
				continue;
			}
			pp = &p->p_next;
		}
	}
}

void
nlm_send_lookup(struct nlm_send *s, unsigned timeout_ms, unsigned tries)
{
	s->s_lk_timeout_ms = timeout_ms;
	s->s_lk_tries = tries;
}

void
nlm_send_reflectable(struct nlm_send *s)
{
	s->s_reflect = true;
}

void
nlm_send_oneway(struct nlm_send *s)
{
	s->s_oneway = true;
}

void
nlm_ports_forget(const struct sockaddr_storage *addr)
{
	static const uint32_t pv[][2] = {
		{ NLM_PROG, NLM_VERS }, { NLM_PROG, NLM_VERSX },
		{ NLM_PROG, NLM4_VERS }, { SM_PROG, SM_VERS }
	};
	struct nlm_peer *p;
	size_t i;

	for (i = 0; i < sizeof(pv) / sizeof(pv[0]); i++)
		if ((p = peer_get(addr, 0, pv[i][0], pv[i][1], false)) !=
		    NULL) {
			p->p_port = 0;
			p->p_timeouts = 0;
			p->p_neg_until = 0;
		}
}

void
nlm_out_shutdown(void)
{
	struct nlm_peer *p;
	struct nlm_send *s;
	size_t b;

	for (b = 0; b < PEER_BUCKETS; b++)
		while ((p = peers[b]) != NULL) {
			peers[b] = p->p_next;
			if (p->p_xid != 0)
				onc_out_cancel(nlm->n_clnt, p->p_xid);
			p->p_waiting = NULL;	/* freed below, with the rest */
			free(p);
		}
	npeers = 0;
	while ((s = sends) != NULL) {
		if (s->s_waiton == NULL && s->s_xid != 0)
			onc_out_cancel(nlm->n_clnt, s->s_xid);
		send_free(s);
	}
}
