/*
 * nlmbench.c - closed-loop load generator for nlmd (NLM v4 over TCP/UDP).
 *
 * HOW IT WORKS.  N clients, each with its own socket (a TCP connection or
 * a connected UDP socket) and its own identity: caller_name "bench-<i>",
 * svid 1000+i, owner handle "<svid>@bench-<i>".  Each client has exactly
 * one request outstanding (closed loop); one thread drives them all with
 * epoll.  Calls are encoded by hand (RFC 5531 / RFC 1813 XDR), independent
 * of the XDR code nlmd is built from, and every reply is decoded and
 * checked: xid, accepted/SUCCESS, the cookie echoed byte for byte, and the
 * NLM status the mode expects.  Anything else is an error, counted apart
 * from the operations; any error makes the exit status 1.
 *
 * Modes (-m):
 *   null        NULL procedure: the transport's ceiling.
 *   test        TEST on a client-private file: no conflict, GRANTED.
 *   lockunlock  LOCK (non-blocking, exclusive) then UNLOCK of a private
 *               file; one pair is one op, latency is that of the pair.
 *   contended   every client LOCKs the same range of one file, exclusive,
 *               non-blocking; a client that gets it UNLOCKs it.  Every RPC
 *               is an op; grants and denials are counted.
 *   hold        every client first takes K locks (-k) on one shared file
 *               and keeps them, then runs lockunlock on a private range of
 *               that same file (so lockcore works on a tree of N*K locks).
 *   blackhole   -r rounds of: lockunlock without, then with, a client at
 *               its own address (-b) holding a pending grant whose NLM
 *               callback port drops everything; reports the p99 ratio.
 *   queue       -k waiters at their own address (-b) queue blocking LOCKs
 *               behind one holder (exclusive on one byte, or with -S
 *               shared on -k distinct bytes behind an exclusive lock of
 *               them all); the holder unlocks, and each waiter UNLOCKs as
 *               soon as its GRANTED_MSG arrives, which passes the byte on.
 *               Meanwhile the -c clients run lockunlock; reports the cost
 *               per queued request and per grant and the clients' p99
 *               against a run without the queue.  -N n: the threads that
 *               play the waiters (sender, callback reader) run at nice n,
 *               or with -N idle under SCHED_IDLE, so that on a small
 *               machine they stand for hosts elsewhere rather than take
 *               the CPU nlmd and the clients share.  Nice 19 is not
 *               enough on 2 CPUs: a waiter thread running alone on one
 *               CPU keeps it, and the scheduler wakes the clients' thread
 *               beside nlmd on the other, where it waits for a CPU for
 *               milliseconds (perf sched timehist); a CPU that runs only
 *               SCHED_IDLE threads counts as idle, so the clients' thread
 *               is woken there.
 *
 * Operations completing in the window [warm-up, warm-up + -t seconds) are
 * counted; after it each client finishes what it holds (UNLOCK) and stops.
 *
 * Output: one line of key=value pairs per run (per phase in blackhole).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Wire constants (RFC 5531, NLM v4 of the Open Group XNFS spec). */
#define RPC_CALL		0
#define RPC_REPLY		1
#define RPC_VERS		2
#define MSG_ACCEPTED		0
#define ACCEPT_SUCCESS		0
#define AUTH_NONE_FLAVOR	0
#define AUTH_SYS_FLAVOR		1
#define NLM_PROGRAM		100021
#define NLM_V4			4
#define PROC_NULL		0
#define PROC_TEST		1
#define PROC_LOCK		2
#define PROC_UNLOCK		4
#define PROC_GRANTED		5
#define PROC_GRANTED_MSG	10
#define NLM4_GRANTED		0
#define NLM4_DENIED		1
#define NLM4_BLOCKED		3
#define PMAP_PROGRAM		100000
#define PMAP_GETPORT		3

#define MAX_CLIENTS	4096
#define MSG_MAX		2048
#define INBUF		8192
#define MAX_ERRMSG	5
#define DRAIN_MS	3000
#define UDP_RTO_MS	500
#define UDP_MAXTRIES	10

enum mode { M_NULL, M_TEST, M_LOCKUNLOCK, M_CONTENDED, M_HOLD, M_BLACKHOLE,
	M_QUEUE };

static const char *const mode_names[] = {
	"null", "test", "lockunlock", "contended", "hold", "blackhole", "queue"
};

/* What a client is waiting for. */
enum step {
	S_NULL,		/* NULL reply */
	S_TEST,		/* TEST reply */
	S_LOCK,		/* LOCK reply, measured */
	S_UNLOCK,	/* UNLOCK reply, measured */
	S_HOLD,		/* one of the K setup LOCKs */
	S_READY,	/* hold mode: setup done, waiting for the others */
	S_DRAIN,	/* the UNLOCK sent after the window closed */
	S_DONE
};

#define QNICE_IDLE	100	/* -N idle: SCHED_IDLE */

struct opts {
	const char	*addr;
	unsigned	 port;
	unsigned	 clients;
	double		 secs;
	double		 warm;
	bool		 udp;
	enum mode	 mode;
	unsigned	 hold;
	pid_t		 srvpid;
	const char	*bhaddr;
	bool		 bh_rpcbind;	/* black-hole the rpcbind, not NLM */
	unsigned	 rounds;
	unsigned	 bh_wait_ms;
	bool		 keep;		/* hold: leave the K locks held */
	bool		 qshared;	/* queue: shared on distinct bytes */
	int		 qnice;		/* queue: the waiters' threads' nice,
					   or QNICE_IDLE */
	const char	*export;	/* -E: real NFSv3 file handles */
};

struct client {
	int		 c_fd;
	unsigned	 c_idx;
	enum step	 c_step;
	uint32_t	 c_xid;
	uint32_t	 c_seq;
	uint32_t	 c_proc;
	uint64_t	 c_sent;	/* ns, this RPC */
	uint64_t	 c_opstart;	/* ns, this op (pair) */
	unsigned	 c_held;	/* hold mode: setup locks taken */
	unsigned	 c_tries;	/* UDP: sends of this xid */
	bool		 c_locked;	/* holds the measured lock */
	char		 c_name[32];
	char		 c_oh[48];
	char		 c_fh[64];	/* file of the measured lock */
	uint8_t		 c_fhraw[64];	/* -E: its NFSv3 handle, sent instead */
	size_t		 c_fhlen;
	uint64_t	 c_off;
	uint8_t		 c_msg[MSG_MAX];	/* last call, for UDP resend */
	size_t		 c_msglen;
	uint8_t		 c_in[INBUF];
	size_t		 c_inlen;
};

struct stats {
	uint64_t	 ops;
	uint64_t	 rpcs;
	uint64_t	 granted;
	uint64_t	 denied;
	uint64_t	 errors;
	uint64_t	 retrans;
	uint64_t	 stale;
	uint32_t	*lat;		/* µs per op */
	size_t		 nlat;
	size_t		 caplat;
	double		 wall;		/* s, measured window */
	double		 gen_cpu;	/* fraction of one core */
	double		 srv_cpu;
	long		 srv_rss_kib;	/* when the window opened; -1 unknown */
	long		 srv_pss_kib;	/* the same, shared pages once */
	double		 setup_s;	/* hold: taking the K locks each */
	unsigned	 nerrmsg;
};

struct run {
	const struct opts *r_o;
	enum mode	 r_mode;	/* the load mode of this run */
	struct client	*r_cl;
	unsigned	 r_n;
	int		 r_ep;
	char		 r_tag[32];	/* makes file handles unique per run */
	uint64_t	 r_t0;		/* window start, ns */
	uint64_t	 r_start;	/* run start (hold: setup start), ns */
	uint64_t	 r_tend;	/* window end, ns */
	bool		 r_measuring;
	bool		 r_stopping;
	unsigned	 r_ready;	/* hold: clients done with setup */
	unsigned	 r_done;
	struct stats	*r_st;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "nlmbench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static void
run_error(struct run *r, const struct client *c, const char *fmt, ...)
{
	va_list ap;

	r->r_st->errors++;
	if (r->r_st->nerrmsg++ >= MAX_ERRMSG)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "nlmbench: client %u (proc %u): ", c->c_idx, c->c_proc);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* ---- XDR encoding ---------------------------------------------------- */

struct xbuf {
	uint8_t	*x_p;
	size_t	 x_len;
	size_t	 x_cap;
	bool	 x_err;
};

static void
put_u32(struct xbuf *x, uint32_t v)
{
	if (x->x_len + 4 > x->x_cap) {
		x->x_err = true;
		return;
	}
	v = htonl(v);
	memcpy(x->x_p + x->x_len, &v, 4);
	x->x_len += 4;
}

static void
put_u64(struct xbuf *x, uint64_t v)
{
	put_u32(x, (uint32_t)(v >> 32));
	put_u32(x, (uint32_t)v);
}

static void
put_opaque(struct xbuf *x, const void *p, size_t n)
{
	size_t pad = (4 - n % 4) % 4;

	put_u32(x, (uint32_t)n);
	if (x->x_len + n + pad > x->x_cap) {
		x->x_err = true;
		return;
	}
	memcpy(x->x_p + x->x_len, p, n);
	memset(x->x_p + x->x_len + n, 0, pad);
	x->x_len += n + pad;
}

static void
put_str(struct xbuf *x, const char *s)
{
	put_opaque(x, s, strlen(s));
}

/* -A: AUTH_SYS credentials (uid 0, gid 0) on every call, as the Linux
 * client sends them and as an NFS server's NLM may require. */
static bool g_authsys;
static const char *g_prefix = "bench";	/* -n: client host names */

static void
put_callhdr(struct xbuf *x, uint32_t xid, uint32_t prog, uint32_t vers,
    uint32_t proc)
{
	put_u32(x, xid);
	put_u32(x, RPC_CALL);
	put_u32(x, RPC_VERS);
	put_u32(x, prog);
	put_u32(x, vers);
	put_u32(x, proc);
	if (g_authsys) {
		put_u32(x, AUTH_SYS_FLAVOR);
		put_u32(x, 28);		/* body: 4 words + "nlmbench" */
		put_u32(x, 0);		/* stamp */
		put_str(x, "nlmbench");	/* machine name */
		put_u32(x, 0);		/* uid */
		put_u32(x, 0);		/* gid */
		put_u32(x, 0);		/* no supplementary groups */
	} else {
		put_u32(x, AUTH_NONE_FLAVOR);
		put_u32(x, 0);
	}
	put_u32(x, AUTH_NONE_FLAVOR);	/* verifier */
	put_u32(x, 0);
}

/* The 8-byte cookie of a call: client index, sequence number. */
static void
cookie_of(const struct client *c, uint8_t ck[8])
{
	uint32_t a = htonl(c->c_idx), b = htonl(c->c_seq);

	memcpy(ck, &a, 4);
	memcpy(ck + 4, &b, 4);
}

/* nlm4_lock */
static void
put_lock(struct xbuf *x, const struct client *c, const char *fh,
    uint64_t off, uint64_t len)
{
	put_str(x, c->c_name);
	if (c->c_fhlen > 0)
		put_opaque(x, c->c_fhraw, c->c_fhlen);
	else
		put_opaque(x, fh, strlen(fh));
	put_str(x, c->c_oh);
	put_u32(x, 1000 + c->c_idx);
	put_u64(x, off);
	put_u64(x, len);
}

struct call {
	uint32_t	 proc;
	const char	*fh;
	uint64_t	 off;
	uint64_t	 len;
	bool		 block;
	bool		 shared;	/* LOCK: shared, not exclusive */
};

/* Encode call `k' for client c (next xid, next cookie) into its c_msg. */
static void
encode_call(struct client *c, const struct call *k, bool tcp)
{
	struct xbuf x = { c->c_msg, 0, sizeof(c->c_msg), false };
	uint8_t ck[8];

	c->c_xid = (uint32_t)random();
	c->c_seq++;
	c->c_proc = k->proc;
	cookie_of(c, ck);
	if (tcp)
		put_u32(&x, 0);		/* record mark, patched below */
	put_callhdr(&x, c->c_xid, NLM_PROGRAM, NLM_V4, k->proc);
	switch (k->proc) {
	case PROC_NULL:
		break;
	case PROC_TEST:
		put_opaque(&x, ck, sizeof(ck));
		put_u32(&x, 1);			/* exclusive */
		put_lock(&x, c, k->fh, k->off, k->len);
		break;
	case PROC_LOCK:
		put_opaque(&x, ck, sizeof(ck));
		put_u32(&x, k->block);
		put_u32(&x, !k->shared);	/* exclusive */
		put_lock(&x, c, k->fh, k->off, k->len);
		put_u32(&x, 0);			/* reclaim */
		put_u32(&x, 1);			/* our NSM state */
		break;
	case PROC_UNLOCK:
		put_opaque(&x, ck, sizeof(ck));
		put_lock(&x, c, k->fh, k->off, k->len);
		break;
	default:
		die("internal: proc %u", k->proc);
	}
	if (x.x_err)
		die("call does not fit in %zu bytes", sizeof(c->c_msg));
	if (tcp) {
		uint32_t mark = htonl(0x80000000u | (uint32_t)(x.x_len - 4));

		memcpy(c->c_msg, &mark, 4);
	}
	c->c_msglen = x.x_len;
}

/* ---- reply decoding --------------------------------------------------- */

struct xdec {
	const uint8_t	*d_p;
	size_t		 d_len;
	size_t		 d_off;
	bool		 d_err;
};

static uint32_t
get_u32(struct xdec *d)
{
	uint32_t v;

	if (d->d_len - d->d_off < 4) {
		d->d_err = true;
		return 0;
	}
	memcpy(&v, d->d_p + d->d_off, 4);
	d->d_off += 4;
	return ntohl(v);
}

/* Skip (or, with want != NULL, compare) an opaque<>. */
static bool
get_opaque(struct xdec *d, const uint8_t *want, size_t wantlen)
{
	uint32_t n = get_u32(d);
	size_t padded = ((size_t)n + 3) & ~(size_t)3;

	if (d->d_err || d->d_len - d->d_off < padded) {
		d->d_err = true;
		return false;
	}
	if (want != NULL && (n != wantlen ||
	    memcmp(d->d_p + d->d_off, want, n) != 0))
		return false;
	d->d_off += padded;
	return true;
}

/*
 * Check the reply to client c's outstanding call.  Returns 1 and sets
 * *stat on success (stat is 0 for NULL), 0 for a reply to another xid
 * (UDP: a late duplicate), -1 with a message for anything broken.
 */
static int
decode_reply(const struct client *c, const uint8_t *p, size_t n,
    uint32_t *stat, const char **why)
{
	struct xdec d = { p, n, 0, false };
	uint8_t ck[8];

	if (get_u32(&d) != c->c_xid)
		return d.d_err ? (*why = "short reply", -1) : 0;
	if (get_u32(&d) != RPC_REPLY)
		return *why = "not a reply", -1;
	if (get_u32(&d) != MSG_ACCEPTED)
		return *why = "call denied (MSG_DENIED)", -1;
	(void)get_u32(&d);			/* verifier flavour */
	(void)get_opaque(&d, NULL, 0);		/* verifier body */
	if (get_u32(&d) != ACCEPT_SUCCESS)
		return *why = d.d_err ? "short reply" :
		    "accept_stat not SUCCESS", -1;
	*stat = 0;
	if (c->c_proc == PROC_NULL)
		return d.d_off == n ? 1 : (*why = "NULL reply not empty", -1);
	cookie_of(c, ck);
	if (!get_opaque(&d, ck, sizeof(ck)))
		return *why = d.d_err ? "short reply" : "cookie not echoed", -1;
	*stat = get_u32(&d);
	if (d.d_err)
		return *why = "short reply", -1;
	return 1;
}

/* ---- the run ----------------------------------------------------------- */

static void
stats_lat(struct stats *st, uint64_t ns)
{
	if (st->nlat == st->caplat) {
		size_t cap = st->caplat ? st->caplat * 2 : 65536;
		uint32_t *l = realloc(st->lat, cap * sizeof(*l));

		if (l == NULL)
			die("out of memory");
		st->lat = l;
		st->caplat = cap;
	}
	st->lat[st->nlat++] = (uint32_t)(ns / 1000 > UINT32_MAX ? UINT32_MAX :
	    ns / 1000);
}

static void
client_send(struct run *r, struct client *c, const struct call *k)
{
	ssize_t w;

	encode_call(c, k, !r->r_o->udp);
	c->c_tries = 1;
	c->c_sent = now_ns();
	w = send(c->c_fd, c->c_msg, c->c_msglen, MSG_NOSIGNAL);
	if (w != (ssize_t)c->c_msglen) {
		/* Closed loop, ~200-byte calls: a short send is a failure. */
		run_error(r, c, "send: %s", w == -1 ? strerror(errno) :
		    "short");
		c->c_step = S_DONE;
		r->r_done++;
	}
}

static const char *
client_fh(const struct run *r, const struct client *c)
{
	(void)r;
	return c->c_fh;
}

/* Send the first call of an op in the client's mode. */
static void
client_next(struct run *r, struct client *c)
{
	struct call k = { PROC_NULL, client_fh(r, c), c->c_off, 1, false,
	    false };

	c->c_opstart = now_ns();
	switch (r->r_mode) {
	case M_NULL:
		c->c_step = S_NULL;
		break;
	case M_TEST:
		k.proc = PROC_TEST;
		c->c_step = S_TEST;
		break;
	default:
		k.proc = PROC_LOCK;
		c->c_step = S_LOCK;
		break;
	}
	client_send(r, c, &k);
}

static void
client_unlock(struct run *r, struct client *c, enum step next)
{
	struct call k = { PROC_UNLOCK, client_fh(r, c), c->c_off, 1, false,
	    false };

	c->c_step = next;
	client_send(r, c, &k);
}

/* Hold mode: the j-th held lock of client i, apart from all others. */
static uint64_t
hold_off(const struct run *r, unsigned i, unsigned j)
{
	return ((uint64_t)i * (r->r_o->hold + 1) + j) * 2;
}

static void
client_hold_next(struct run *r, struct client *c)
{
	struct call k = { PROC_LOCK, c->c_fh, hold_off(r, c->c_idx, c->c_held),
	    1, false, false };

	c->c_step = S_HOLD;
	client_send(r, c, &k);
}

static void
client_finish(struct run *r, struct client *c)
{
	c->c_step = S_DONE;
	r->r_done++;
}

/* After the window: release what is held, then stop. */
static void
client_stop(struct run *r, struct client *c)
{
	if (r->r_mode == M_HOLD && r->r_o->keep && !c->c_locked) {
		client_finish(r, c);	/* -K: the K locks stay held */
		return;
	}
	if (r->r_mode == M_HOLD && !r->r_o->keep) {
		/* One UNLOCK of the whole file drops the K held locks too. */
		struct call k = { PROC_UNLOCK, c->c_fh, 0, 0, false, false };

		c->c_step = S_DRAIN;
		client_send(r, c, &k);
		return;
	}
	if (c->c_locked) {
		client_unlock(r, c, S_DRAIN);
		c->c_locked = false;
		return;
	}
	client_finish(r, c);
}

static bool
in_window(const struct run *r, uint64_t t)
{
	return r->r_measuring && t >= r->r_t0 && t < r->r_tend;
}

static void
count_rpc(struct run *r, uint64_t t)
{
	if (in_window(r, t))
		r->r_st->rpcs++;
}

static void
count_op(struct run *r, const struct client *c, uint64_t t, uint64_t start)
{
	(void)c;
	if (!in_window(r, t))
		return;
	r->r_st->ops++;
	stats_lat(r->r_st, t - start);
}

static void	start_measuring(struct run *);

/* A checked reply with NLM status `st' arrived for client c. */
static void
client_reply(struct run *r, struct client *c, uint32_t st)
{
	uint64_t t = now_ns();
	bool go = !r->r_stopping;

	count_rpc(r, t);
	switch (c->c_step) {
	case S_NULL:
	case S_TEST:
		if (st != NLM4_GRANTED)
			goto bad;
		count_op(r, c, t, c->c_sent);
		break;
	case S_LOCK:
		if (r->r_mode == M_CONTENDED && st == NLM4_DENIED) {
			if (in_window(r, t))
				r->r_st->denied++;
			count_op(r, c, t, c->c_sent);
			break;
		}
		if (st != NLM4_GRANTED)
			goto bad;
		c->c_locked = true;
		if (r->r_mode == M_CONTENDED) {
			if (in_window(r, t))
				r->r_st->granted++;
			count_op(r, c, t, c->c_sent);
			c->c_opstart = t;
		}
		client_unlock(r, c, S_UNLOCK);
		return;
	case S_UNLOCK:
		if (st != NLM4_GRANTED)
			goto bad;
		c->c_locked = false;
		count_op(r, c, t, r->r_mode == M_CONTENDED ? c->c_sent :
		    c->c_opstart);
		break;
	case S_HOLD:
		if (st != NLM4_GRANTED)
			goto bad;
		if (++c->c_held < r->r_o->hold) {
			client_hold_next(r, c);
			return;
		}
		c->c_step = S_READY;
		if (++r->r_ready == r->r_n)
			start_measuring(r);
		return;
	case S_DRAIN:
		if (st != NLM4_GRANTED)
			goto bad;
		client_finish(r, c);
		return;
	default:
		run_error(r, c, "reply in state %d", (int)c->c_step);
		return;
	}
	if (go)
		client_next(r, c);
	else
		client_stop(r, c);
	return;
bad:
	run_error(r, c, "unexpected NLM status %u in step %d", st,
	    (int)c->c_step);
	c->c_locked = false;
	client_stop(r, c);
}

static void
client_record(struct run *r, struct client *c, const uint8_t *p, size_t n)
{
	const char *why = NULL;
	uint32_t st = 0;
	int rc;

	if (c->c_step == S_DONE || c->c_step == S_READY) {
		run_error(r, c, "unsolicited reply");
		return;
	}
	rc = decode_reply(c, p, n, &st, &why);
	if (rc == 0) {
		if (r->r_o->udp)
			r->r_st->stale++;
		else
			run_error(r, c, "reply to a call not made");
		return;
	}
	if (rc == -1) {
		run_error(r, c, "%s", why);
		client_finish(r, c);
		return;
	}
	client_reply(r, c, st);
}

static void
client_readable(struct run *r, struct client *c)
{
	ssize_t n;
	size_t off = 0;

	n = recv(c->c_fd, c->c_in + c->c_inlen, sizeof(c->c_in) - c->c_inlen,
	    MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (c->c_step != S_DONE) {
			run_error(r, c, "connection lost: %s", n == 0 ?
			    "EOF" : strerror(errno));
			client_finish(r, c);
		}
		(void)epoll_ctl(r->r_ep, EPOLL_CTL_DEL, c->c_fd, NULL);
		return;
	}
	if (r->r_o->udp) {
		client_record(r, c, c->c_in, (size_t)n);
		return;
	}
	c->c_inlen += (size_t)n;
	/* Replies are single-fragment records of a few dozen bytes. */
	while (c->c_inlen - off >= 4) {
		uint32_t mark;
		size_t flen;

		memcpy(&mark, c->c_in + off, 4);
		mark = ntohl(mark);
		flen = mark & 0x7fffffffu;
		if (!(mark & 0x80000000u) || flen > sizeof(c->c_in) - 4) {
			run_error(r, c, "multi-fragment or oversized record");
			client_finish(r, c);
			c->c_inlen = 0;
			return;
		}
		if (c->c_inlen - off - 4 < flen)
			break;
		client_record(r, c, c->c_in + off + 4, flen);
		off += 4 + flen;
	}
	memmove(c->c_in, c->c_in + off, c->c_inlen - off);
	c->c_inlen -= off;
}

/* UDP: resend a call whose reply is overdue (same xid). */
static void
udp_resend(struct run *r, uint64_t t)
{
	unsigned i;

	for (i = 0; i < r->r_n; i++) {
		struct client *c = &r->r_cl[i];

		if (c->c_step == S_DONE || c->c_step == S_READY ||
		    t - c->c_sent < (uint64_t)UDP_RTO_MS * 1000000 * c->c_tries)
			continue;
		if (c->c_tries >= UDP_MAXTRIES) {
			run_error(r, c, "no reply after %u sends", c->c_tries);
			client_finish(r, c);
			continue;
		}
		c->c_tries++;
		r->r_st->retrans++;
		(void)send(c->c_fd, c->c_msg, c->c_msglen, MSG_NOSIGNAL);
	}
}

static int
sock_open(const struct opts *o, const char *src)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	fd = socket(AF_INET, (o->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		die("socket: %s", strerror(errno));
	if (src != NULL) {
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		if (inet_pton(AF_INET, src, &sa.sin_addr) != 1)
			die("bad address %s", src);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
			die("bind %s: %s", src, strerror(errno));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)o->port);
	if (inet_pton(AF_INET, o->addr, &sa.sin_addr) != 1)
		die("bad address %s", o->addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		die("connect %s:%u: %s", o->addr, o->port, strerror(errno));
	if (!o->udp)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	return fd;
}

/* ---- real file handles (-E) -------------------------------------------- */

/*
 * With -E /export, locks name real files: nlmbench asks the server's
 * rpcbind (TCP 111) for MOUNT v3 and NFS v3, mounts the export, CREATEs
 * each file it would lock (UNCHECKED: made or opened) and sends the NFSv3
 * handles in place of the made-up names: for a server whose NLM resolves
 * handles (NFS-Ganesha's).  Done before the window opens; AUTH_SYS.
 */
#define MOUNT_PROGRAM	100005
#define NFS_PROGRAM	100003
#define MOUNTPROC3_MNT	1
#define NFSPROC3_LOOKUP	3
#define NFSPROC3_CREATE	8
#define FH3_MAX		64

static int	 g_nfsfd = -1;
static uint8_t	 g_root[FH3_MAX];
static size_t	 g_rootlen;

static int
tcp_connect(const char *addr, unsigned port)
{
	struct opts t;

	memset(&t, 0, sizeof(t));
	t.addr = addr;
	t.port = port;
	return sock_open(&t, NULL);
}

/* Read one whole record (any number of fragments) from a blocking TCP
 * socket; its length, or -1 on EOF, error or a record over cap. */
static ssize_t
read_record(int fd, uint8_t *buf, size_t cap)
{
	size_t len = 0, flen, got;
	uint32_t mark;
	ssize_t n;

	do {
		if (recv(fd, &mark, 4, MSG_WAITALL) != 4)
			return -1;
		mark = ntohl(mark);
		flen = mark & 0x7fffffffu;
		if (flen > cap - len)
			return -1;
		for (got = 0; got < flen; got += (size_t)n)
			if ((n = recv(fd, buf + len + got, flen - got, 0)) <= 0)
				return -1;
		len += flen;
	} while (!(mark & 0x80000000u));
	return (ssize_t)len;
}

/* One call on a blocking TCP socket; d is left at the results. */
static void
plain_call(int fd, uint32_t prog, uint32_t vers, uint32_t proc,
    const struct xbuf *args, uint8_t *res, size_t cap, struct xdec *d)
{
	uint8_t msg[MSG_MAX];
	struct xbuf x = { msg, 0, sizeof(msg), false };
	uint32_t xid = (uint32_t)random(), mark;
	bool sys = g_authsys;
	ssize_t n;

	put_u32(&x, 0);
	g_authsys = true;
	put_callhdr(&x, xid, prog, vers, proc);
	g_authsys = sys;
	if (x.x_err || args->x_err || args->x_len > x.x_cap - x.x_len)
		die("nfs setup: call too large");
	memcpy(msg + x.x_len, args->x_p, args->x_len);
	x.x_len += args->x_len;
	mark = htonl(0x80000000u | (uint32_t)(x.x_len - 4));
	memcpy(msg, &mark, 4);
	if (send(fd, msg, x.x_len, MSG_NOSIGNAL) != (ssize_t)x.x_len)
		die("nfs setup: send: %s", strerror(errno));
	if ((n = read_record(fd, res, cap)) < 0)
		die("nfs setup: program %u proc %u: no reply", prog, proc);
	*d = (struct xdec){ res, (size_t)n, 0, false };
	if (get_u32(d) != xid || get_u32(d) != RPC_REPLY ||
	    get_u32(d) != MSG_ACCEPTED)
		die("nfs setup: program %u proc %u: bad or denied reply",
		    prog, proc);
	(void)get_u32(d);
	(void)get_opaque(d, NULL, 0);
	if (get_u32(d) != ACCEPT_SUCCESS || d->d_err)
		die("nfs setup: program %u proc %u: not accepted", prog, proc);
}

/* A handle (opaque<64>) out of a reply. */
static size_t
get_fh3(struct xdec *d, uint8_t *fh, const char *what)
{
	uint32_t n = get_u32(d);

	if (d->d_err || n == 0 || n > FH3_MAX || d->d_len - d->d_off < n)
		die("nfs setup: %s: bad file handle", what);
	memcpy(fh, d->d_p + d->d_off, n);
	d->d_off += (n + 3) & ~3u;
	return n;
}

static unsigned
pmap_getport_tcp(int fd, uint32_t prog, uint32_t vers)
{
	uint8_t a[16], res[512];
	struct xbuf x = { a, 0, sizeof(a), false };
	struct xdec d;
	uint32_t port;

	put_u32(&x, prog);
	put_u32(&x, vers);
	put_u32(&x, 6);			/* IPPROTO_TCP */
	put_u32(&x, 0);
	plain_call(fd, PMAP_PROGRAM, 2, PMAP_GETPORT, &x, res, sizeof(res),
	    &d);
	port = get_u32(&d);
	if (d.d_err || port == 0 || port > 65535)
		die("nfs setup: program %u v%u not registered", prog, vers);
	return port;
}

static void
nfs_setup(const struct opts *o)
{
	uint8_t a[1100], res[2048];
	struct xbuf x = { a, 0, sizeof(a), false };
	struct xdec d;
	unsigned mport, nport;
	uint32_t st;
	int fd;

	fd = tcp_connect(o->addr, 111);
	mport = pmap_getport_tcp(fd, MOUNT_PROGRAM, 3);
	nport = pmap_getport_tcp(fd, NFS_PROGRAM, 3);
	close(fd);
	fd = tcp_connect(o->addr, mport);
	put_str(&x, o->export);
	plain_call(fd, MOUNT_PROGRAM, 3, MOUNTPROC3_MNT, &x, res, sizeof(res),
	    &d);
	if ((st = get_u32(&d)) != 0)
		die("nfs setup: MOUNT %s: status %u", o->export, st);
	g_rootlen = get_fh3(&d, g_root, "MOUNT");
	close(fd);
	g_nfsfd = tcp_connect(o->addr, nport);
}

/* The NFSv3 handle of file `name' in the export, made if missing. */
static size_t
nfs_fh_of(const struct opts *o, const char *name, uint8_t *fh)
{
	static char last[64];
	static uint8_t lastfh[FH3_MAX];
	static size_t lastlen;
	uint8_t a[512], res[4096];
	struct xbuf x = { a, 0, sizeof(a), false };
	struct xdec d;
	uint32_t st;

	if (g_nfsfd == -1)
		nfs_setup(o);
	if (lastlen > 0 && strcmp(name, last) == 0) {
		memcpy(fh, lastfh, lastlen);
		return lastlen;
	}
	put_opaque(&x, g_root, g_rootlen);
	put_str(&x, name);
	put_u32(&x, 0);			/* UNCHECKED */
	put_u32(&x, 1);			/* set mode */
	put_u32(&x, 0644);
	put_u32(&x, 0);			/* uid, gid, size: unset */
	put_u32(&x, 0);
	put_u32(&x, 0);
	put_u32(&x, 0);			/* atime, mtime: DONT_CHANGE */
	put_u32(&x, 0);
	plain_call(g_nfsfd, NFS_PROGRAM, 3, NFSPROC3_CREATE, &x, res,
	    sizeof(res), &d);
	if ((st = get_u32(&d)) != 0)
		die("nfs setup: CREATE %s: NFS3 status %u", name, st);
	if (get_u32(&d) == 1)		/* post_op_fh3: handle follows */
		lastlen = get_fh3(&d, lastfh, "CREATE");
	else {
		x.x_len = 0;
		put_opaque(&x, g_root, g_rootlen);
		put_str(&x, name);
		plain_call(g_nfsfd, NFS_PROGRAM, 3, NFSPROC3_LOOKUP, &x, res,
		    sizeof(res), &d);
		if ((st = get_u32(&d)) != 0)
			die("nfs setup: LOOKUP %s: NFS3 status %u", name, st);
		lastlen = get_fh3(&d, lastfh, "LOOKUP");
	}
	snprintf(last, sizeof(last), "%s", name);
	memcpy(fh, lastfh, lastlen);
	return lastlen;
}

static void
client_init(struct run *r, struct client *c, unsigned i)
{
	struct epoll_event ee;

	memset(c, 0, sizeof(*c));
	c->c_idx = i;
	snprintf(c->c_name, sizeof(c->c_name), "%s-%u", g_prefix, i);
	snprintf(c->c_oh, sizeof(c->c_oh), "%u@%s-%u", 1000 + i, g_prefix, i);
	switch (r->r_mode) {
	case M_CONTENDED:
		snprintf(c->c_fh, sizeof(c->c_fh), "nlmbench-%s-contended",
		    r->r_tag);
		break;
	case M_HOLD:
		snprintf(c->c_fh, sizeof(c->c_fh), "nlmbench-%s-hold",
		    r->r_tag);
		c->c_off = hold_off(r, i, r->r_o->hold);
		break;
	default:
		snprintf(c->c_fh, sizeof(c->c_fh), "nlmbench-%s-f%u",
		    r->r_tag, i);
		break;
	}
	if (r->r_o->export != NULL)
		c->c_fhlen = nfs_fh_of(r->r_o, c->c_fh, c->c_fhraw);
	c->c_fd = sock_open(r->r_o, NULL);
	if (fcntl(c->c_fd, F_SETFL, O_NONBLOCK) == -1)
		die("fcntl: %s", strerror(errno));
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.ptr = c;
	if (epoll_ctl(r->r_ep, EPOLL_CTL_ADD, c->c_fd, &ee) == -1)
		die("epoll_ctl: %s", strerror(errno));
}

static double
cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* utime + stime of another process, seconds; -1 if unknown. */
static double
cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields after the parenthesised command: state is field 3. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The "key N kB" line of /proc/<pid>/<file>, KiB; -1 if unknown. */
static long
proc_kib(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0) {
			kib = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

static void
start_measuring(struct run *r)
{
	unsigned i;

	r->r_measuring = true;
	r->r_st->setup_s = (double)(now_ns() - r->r_start) / 1e9;
	r->r_t0 = now_ns() + (uint64_t)(r->r_o->warm * 1e9);
	r->r_tend = r->r_t0 + (uint64_t)(r->r_o->secs * 1e9);
	for (i = 0; i < r->r_n; i++)
		if (r->r_cl[i].c_step == S_READY)
			client_next(r, &r->r_cl[i]);
}

/* The event loop of one run: until every client is done. */
static void
run_loop(struct run *r)
{
	struct epoll_event evs[256];
	uint64_t t, drain_until = 0, last_scan = 0;
	double cpu0 = 0, scpu0 = 0;
	bool window_open = false;
	int n, i;

	while (r->r_done < r->r_n) {
		n = epoll_wait(r->r_ep, evs, 256, 10);
		if (n == -1 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++)
			client_readable(r, evs[i].data.ptr);
		t = now_ns();
		if (r->r_measuring && !window_open && t >= r->r_t0) {
			window_open = true;
			cpu0 = cpu_self();
			scpu0 = cpu_of(r->r_o->srvpid);
			r->r_st->srv_rss_kib = proc_kib(r->r_o->srvpid,
			    "status", "VmRSS:");
			r->r_st->srv_pss_kib = proc_kib(r->r_o->srvpid,
			    "smaps_rollup", "Pss:");
		}
		if (r->r_measuring && !r->r_stopping && t >= r->r_tend) {
			double cpu1 = cpu_self(), scpu1 = cpu_of(r->r_o->srvpid);
			double wall = (double)(t - r->r_t0) / 1e9;

			r->r_st->wall = (double)(r->r_tend - r->r_t0) / 1e9;
			r->r_st->gen_cpu = (cpu1 - cpu0) / wall;
			r->r_st->srv_cpu = scpu0 >= 0 && scpu1 >= 0 ?
			    (scpu1 - scpu0) / wall : -1;
			r->r_stopping = true;
			drain_until = t + (uint64_t)DRAIN_MS * 1000000;
			/* Clients waiting for others (hold setup) stop now. */
			for (i = 0; i < (int)r->r_n; i++)
				if (r->r_cl[i].c_step == S_READY)
					client_finish(r, &r->r_cl[i]);
		}
		if (r->r_stopping && t >= drain_until) {
			fprintf(stderr, "nlmbench: %u clients still busy after "
			    "%d ms drain\n", r->r_n - r->r_done, DRAIN_MS);
			r->r_st->errors += r->r_n - r->r_done;
			break;
		}
		if (r->r_o->udp && t - last_scan > 10000000) {
			udp_resend(r, t);
			last_scan = t;
		}
	}
}

static void
run_once(const struct opts *o, enum mode mode, const char *tag,
    struct stats *st)
{
	struct run r;
	unsigned i;

	memset(&r, 0, sizeof(r));
	memset(st, 0, sizeof(*st));
	r.r_o = o;
	r.r_mode = mode;
	r.r_n = o->clients;
	r.r_st = st;
	snprintf(r.r_tag, sizeof(r.r_tag), "%s", tag);
	if ((r.r_cl = calloc(r.r_n, sizeof(*r.r_cl))) == NULL)
		die("out of memory");
	if ((r.r_ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		die("epoll_create1: %s", strerror(errno));
	for (i = 0; i < r.r_n; i++)
		client_init(&r, &r.r_cl[i], i);
	r.r_start = now_ns();
	if (mode == M_HOLD && o->hold > 0)
		for (i = 0; i < r.r_n; i++)
			client_hold_next(&r, &r.r_cl[i]);
	else {
		for (i = 0; i < r.r_n; i++)
			r.r_cl[i].c_step = S_READY;
		r.r_ready = r.r_n;
		start_measuring(&r);
	}
	run_loop(&r);
	for (i = 0; i < r.r_n; i++)
		close(r.r_cl[i].c_fd);
	close(r.r_ep);
	free(r.r_cl);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t
pct(const struct stats *st, double p)
{
	size_t i;

	if (st->nlat == 0)
		return 0;
	i = (size_t)(p * (double)(st->nlat - 1) + 0.5);
	return st->lat[i];
}

static void
report(const struct opts *o, const char *mode, const struct stats *st,
    const char *extra)
{
	double w = st->wall > 0 ? st->wall : 1;

	if (st->nlat > 0)	/* lat is NULL when nothing was measured */
		qsort(st->lat, st->nlat, sizeof(*st->lat), cmp_u32);
	printf("mode=%s proto=%s clients=%u secs=%.2f ops=%" PRIu64
	    " ops_s=%.0f p50_us=%u p99_us=%u max_us=%u rpc_s=%.0f", mode,
	    o->udp ? "udp" : "tcp", o->clients, st->wall, st->ops,
	    (double)st->ops / w, pct(st, 0.50), pct(st, 0.99),
	    pct(st, 1.0), (double)st->rpcs / w);
	if (strcmp(mode, "contended") == 0)
		printf(" granted=%" PRIu64 " denied=%" PRIu64, st->granted,
		    st->denied);
	if (strcmp(mode, "hold") == 0)
		printf(" held=%u setup_s=%.2f", o->hold * o->clients,
		    st->setup_s);
	printf(" errors=%" PRIu64 " retrans=%" PRIu64 " gen_cpu=%.0f%%",
	    st->errors, st->retrans, st->gen_cpu * 100);
	if (st->srv_cpu >= 0)
		printf(" srv_cpu=%.0f%%", st->srv_cpu * 100);
	if (st->srv_rss_kib > 0)
		printf(" srv_rss_kib=%ld", st->srv_rss_kib);
	if (st->srv_pss_kib > 0)
		printf(" srv_pss_kib=%ld", st->srv_pss_kib);
	if (extra != NULL)
		printf(" %s", extra);
	printf("\n");
	fflush(stdout);
}

/* ---- black hole -------------------------------------------------------- */

/*
 * At address bhaddr: a port mapper on UDP 111 that tells whoever asks that
 * NLM lives on the "dead" UDP port, where we read and count every call and
 * answer none (from the caller's side a black hole: no reply, no ICMP).
 * With bh_rpcbind the port mapper itself is the black hole instead.
 */
struct blackhole {
	int		 b_pmap;
	int		 b_dead;
	uint16_t	 b_deadport;
	bool		 b_answer_pmap;
	bool		 b_pmap_only;	/* b_dead is read by someone else */
	pthread_t	 b_thr;
	atomic_bool	 b_stop;
	atomic_uint	 b_pmap_calls;
	atomic_uint	 b_nlm_calls;
	atomic_uint	 b_granted_msgs;
	int		 b_nice;	/* the thread's nice (queue: -N) */
};

static int
udp_bind(const char *addr, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		die("socket: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("bad address %s", addr);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		die("bind %s:%u: %s", addr, port, strerror(errno));
	if (bound != NULL) {
		getsockname(fd, (struct sockaddr *)&sa, &sl);
		*bound = ntohs(sa.sin_port);
	}
	return fd;
}

static void
pmap_answer(struct blackhole *b, const uint8_t *p, size_t n,
    const struct sockaddr_in *from)
{
	struct xdec d = { p, n, 0, false };
	uint8_t out[64];
	struct xbuf x = { out, 0, sizeof(out), false };
	uint32_t xid = get_u32(&d), prog, proc;

	if (get_u32(&d) != RPC_CALL || get_u32(&d) != RPC_VERS)
		return;
	prog = get_u32(&d);
	(void)get_u32(&d);
	proc = get_u32(&d);
	if (d.d_err || prog != PMAP_PROGRAM || proc != PMAP_GETPORT)
		return;
	put_u32(&x, xid);
	put_u32(&x, RPC_REPLY);
	put_u32(&x, MSG_ACCEPTED);
	put_u32(&x, AUTH_NONE_FLAVOR);
	put_u32(&x, 0);
	put_u32(&x, ACCEPT_SUCCESS);
	put_u32(&x, b->b_deadport);
	(void)sendto(b->b_pmap, out, x.x_len, 0, (const struct sockaddr *)from,
	    sizeof(*from));
}

/*
 * The calling thread at nice n (Linux: per thread); 0: unchanged;
 * QNICE_IDLE: SCHED_IDLE.
 */
static void
thread_nice(int n)
{
	struct sched_param sp;

	if (n == QNICE_IDLE) {
		memset(&sp, 0, sizeof(sp));
		if (sched_setscheduler((pid_t)syscall(SYS_gettid), SCHED_IDLE,
		    &sp) == -1)
			die("sched_setscheduler(SCHED_IDLE): %s",
			    strerror(errno));
		return;
	}
	if (n != 0 && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
	    n) == -1)
		die("setpriority(%d): %s", n, strerror(errno));
}

static void *
bh_thread(void *arg)
{
	struct blackhole *b = arg;
	struct pollfd pf[2];
	uint8_t buf[65536];

	thread_nice(b->b_nice);

	pf[0].fd = b->b_pmap;
	pf[1].fd = b->b_pmap_only ? -1 : b->b_dead;
	pf[0].events = pf[1].events = POLLIN;
	while (!atomic_load(&b->b_stop)) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (poll(pf, 2, 100) <= 0)
			continue;
		if (pf[0].revents & POLLIN) {
			n = recvfrom(b->b_pmap, buf, sizeof(buf), MSG_DONTWAIT,
			    (struct sockaddr *)&from, &fl);
			if (n > 0) {
				atomic_fetch_add(&b->b_pmap_calls, 1);
				if (b->b_answer_pmap)
					pmap_answer(b, buf, (size_t)n, &from);
			}
		}
		if (pf[1].revents & POLLIN) {
			n = recv(b->b_dead, buf, sizeof(buf), MSG_DONTWAIT);
			if (n >= 24) {
				uint32_t proc;

				memcpy(&proc, buf + 20, 4);
				atomic_fetch_add(&b->b_nlm_calls, 1);
				if (ntohl(proc) == PROC_GRANTED_MSG)
					atomic_fetch_add(&b->b_granted_msgs, 1);
			}
		}
	}
	return NULL;
}

/* One blocking RPC on a TCP socket; returns the NLM status. */
static uint32_t
sync_call(int fd, struct client *c, const struct call *k)
{
	uint8_t hdr[4];
	uint32_t mark, st = 0;
	size_t len, got;
	const char *why = "?";
	ssize_t n;

	encode_call(c, k, true);
	if (send(fd, c->c_msg, c->c_msglen, MSG_NOSIGNAL) !=
	    (ssize_t)c->c_msglen)
		die("black-hole client: send: %s", strerror(errno));
	if (recv(fd, hdr, 4, MSG_WAITALL) != 4)
		die("black-hole client: no reply");
	memcpy(&mark, hdr, 4);
	len = ntohl(mark) & 0x7fffffffu;
	if (len > sizeof(c->c_in))
		die("black-hole client: oversized reply");
	for (got = 0; got < len; got += (size_t)n)
		if ((n = recv(fd, c->c_in + got, len - got, 0)) <= 0)
			die("black-hole client: short reply");
	if (decode_reply(c, c->c_in, len, &st, &why) != 1)
		die("black-hole client: bad reply: %s", why);
	return st;
}

struct bh_clients {
	struct client	 h;	/* holder, at the normal address */
	struct client	 v;	/* victim, at the black-hole address */
	int		 hfd;
	int		 vfd;
};

static void
bh_client_init(struct client *c, unsigned idx, const char *name,
    const char *fh)
{
	memset(c, 0, sizeof(*c));
	c->c_idx = idx;
	snprintf(c->c_name, sizeof(c->c_name), "%s", name);
	snprintf(c->c_oh, sizeof(c->c_oh), "%u@%s", 1000 + idx, name);
	snprintf(c->c_fh, sizeof(c->c_fh), "%s", fh);
}

/*
 * Make the victim hold a pending grant: the holder locks, the victim
 * blocks, the holder unlocks, nlmd grants to the victim and starts calling
 * it back.  Waits until the first GRANTED_MSG (or rpcbind query) arrives.
 */
static void
bh_arm(const struct opts *o, struct blackhole *b, struct bh_clients *bc,
    unsigned round)
{
	struct opts tcp = *o;
	char fh[64];
	struct call k = { PROC_LOCK, NULL, 0, 1, false, false };
	unsigned before = o->bh_rpcbind ? atomic_load(&b->b_pmap_calls) :
	    atomic_load(&b->b_granted_msgs);
	uint64_t until;
	uint32_t st;

	tcp.udp = false;
	snprintf(fh, sizeof(fh), "nlmbench-%d-bh%u", (int)getpid(), round);
	bh_client_init(&bc->h, 9000, "bench-holder", fh);
	bh_client_init(&bc->v, 9001, "bench-blackhole", fh);
	bc->hfd = sock_open(&tcp, NULL);
	bc->vfd = sock_open(&tcp, o->bhaddr);
	k.fh = fh;
	if ((st = sync_call(bc->hfd, &bc->h, &k)) != NLM4_GRANTED)
		die("black hole: holder LOCK: status %u", st);
	k.block = true;
	if ((st = sync_call(bc->vfd, &bc->v, &k)) != NLM4_BLOCKED)
		die("black hole: victim LOCK: status %u, not BLOCKED", st);
	k.proc = PROC_UNLOCK;
	k.block = false;
	if ((st = sync_call(bc->hfd, &bc->h, &k)) != NLM4_GRANTED)
		die("black hole: holder UNLOCK: status %u", st);
	until = now_ns() + (uint64_t)o->bh_wait_ms * 1000000;
	while ((o->bh_rpcbind ? atomic_load(&b->b_pmap_calls) :
	    atomic_load(&b->b_granted_msgs)) == before) {
		if (now_ns() > until)
			die("black hole: no %s reached %s in %u ms",
			    o->bh_rpcbind ? "rpcbind query" : "GRANTED_MSG",
			    o->bhaddr, o->bh_wait_ms);
		usleep(1000);
	}
}

/* The victim UNLOCKs: that releases its granted lock and ends the callbacks. */
static void
bh_disarm(struct bh_clients *bc)
{
	struct call k = { PROC_UNLOCK, bc->v.c_fh, 0, 1, false, false };
	uint32_t st;

	if ((st = sync_call(bc->vfd, &bc->v, &k)) != NLM4_GRANTED)
		die("black hole: victim UNLOCK: status %u", st);
	close(bc->hfd);
	close(bc->vfd);
}

static double
median(double *v, unsigned n)
{
	unsigned i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
run_blackhole(const struct opts *o)
{
	struct blackhole b;
	struct bh_clients bc;
	struct stats st;
	double base[16], bh[16], bops[16], hops[16];
	char tag[32], extra[128];
	unsigned i, cb0 = 0, cb1, nr = o->rounds > 16 ? 16 : o->rounds;
	uint64_t errors = 0;

	memset(&b, 0, sizeof(b));
	b.b_answer_pmap = !o->bh_rpcbind;
	b.b_pmap = udp_bind(o->bhaddr, 111, NULL);
	b.b_dead = udp_bind(o->bhaddr, 0, &b.b_deadport);
	if (pthread_create(&b.b_thr, NULL, bh_thread, &b) != 0)
		die("pthread_create");
	for (i = 0; i < nr; i++) {
		snprintf(tag, sizeof(tag), "%d-b%u", (int)getpid(), i);
		run_once(o, M_LOCKUNLOCK, tag, &st);
		report(o, "lockunlock", &st, "blackhole=no");
		base[i] = pct(&st, 0.99);
		bops[i] = (double)st.ops / st.wall;
		errors += st.errors;
		free(st.lat);

		/*
		 * NLM black hole: calls must keep arriving during the run.
		 * rpcbind black hole: nlmd waits out one query (3 x 1 s) at
		 * a time, so count from before the grant.
		 */
		if (o->bh_rpcbind)
			cb0 = atomic_load(&b.b_pmap_calls);
		bh_arm(o, &b, &bc, i);
		if (!o->bh_rpcbind)
			cb0 = atomic_load(&b.b_nlm_calls);
		snprintf(tag, sizeof(tag), "%d-h%u", (int)getpid(), i);
		run_once(o, M_LOCKUNLOCK, tag, &st);
		cb1 = o->bh_rpcbind ? atomic_load(&b.b_pmap_calls) :
		    atomic_load(&b.b_nlm_calls);
		snprintf(extra, sizeof(extra), "blackhole=%s dropped_calls=%u",
		    o->bh_rpcbind ? "rpcbind" : "nlm", cb1 - cb0);
		report(o, "lockunlock", &st, extra);
		bh[i] = pct(&st, 0.99);
		hops[i] = (double)st.ops / st.wall;
		errors += st.errors;
		free(st.lat);
		bh_disarm(&bc);
		if (cb1 == cb0) {
			fprintf(stderr, "nlmbench: the black hole received "
			    "nothing during the run\n");
			errors++;
		}
	}
	atomic_store(&b.b_stop, true);
	pthread_join(b.b_thr, NULL);
	printf("blackhole=%s clients=%u proto=%s rounds=%u "
	    "p99_without_us=%.0f p99_with_us=%.0f p99_ratio=%.2f "
	    "ops_s_without=%.0f ops_s_with=%.0f pmap_queries=%u "
	    "nlm_calls_dropped=%u errors=%" PRIu64 "\n",
	    o->bh_rpcbind ? "rpcbind" : "nlm", o->clients,
	    o->udp ? "udp" : "tcp", nr, median(base, nr), median(bh, nr),
	    median(bh, nr) / median(base, nr), median(bops, nr),
	    median(hops, nr), atomic_load(&b.b_pmap_calls),
	    atomic_load(&b.b_nlm_calls), errors);
	close(b.b_pmap);
	close(b.b_dead);
	return errors ? 1 : 0;
}

/* ---- queue ------------------------------------------------------------- */

/*
 * The queue mode's driver thread: waiters at bhaddr (their own rpcbind on
 * UDP 111 there points nlmd's callbacks to q_cb), one TCP connection for
 * all of them, each waiter its own owner (svid 1000+i) of host
 * "bench-queue".
 */
struct queue {
	const struct opts *q_o;
	unsigned	 q_n;
	struct blackhole q_bh;		/* b_pmap answers, b_dead: callbacks */
	int		 q_hfd;		/* the holder's connection */
	int		 q_wfd;		/* the waiters' connection */
	struct client	 q_h;
	struct client	 q_w;		/* aimed at waiter i before each call */
	char		 q_fh[64];
	uint8_t		*q_granted;	/* per waiter: GRANTED_MSG seen */
	double		 q_queue_wall, q_queue_cpu, q_rel_wall, q_rel_cpu;
	unsigned	 q_grants, q_dups;
	char		 q_err[160];	/* empty: all went well */
	atomic_bool	 q_done;
	atomic_bool	 q_filled;	/* queued: releasing now */
};

static void
queue_aim(struct queue *q, unsigned i)
{
	q->q_w.c_idx = i;
	snprintf(q->q_w.c_oh, sizeof(q->q_w.c_oh), "%u@bench-queue", 1000 + i);
}

/* The NLM status of an accepted reply that echoes an 8-byte cookie. */
static bool
reply_status(const uint8_t *p, size_t n, uint32_t *st)
{
	struct xdec d = { p, n, 0, false };

	(void)get_u32(&d);			/* xid */
	if (get_u32(&d) != RPC_REPLY || get_u32(&d) != MSG_ACCEPTED)
		return false;
	(void)get_u32(&d);
	(void)get_opaque(&d, NULL, 0);		/* verifier */
	if (get_u32(&d) != ACCEPT_SUCCESS)
		return false;
	(void)get_opaque(&d, NULL, 0);		/* cookie */
	*st = get_u32(&d);
	return !d.d_err;
}

/*
 * The svid of a GRANTED_MSG or GRANTED call (nlm4_testargs; nlmd's
 * callback-mode "both" alternates them); false if neither.
 */
static bool
granted_svid(const uint8_t *p, size_t n, uint32_t *svid)
{
	struct xdec d = { p, n, 0, false };
	uint32_t proc;

	(void)get_u32(&d);			/* xid */
	if (get_u32(&d) != RPC_CALL || get_u32(&d) != RPC_VERS ||
	    get_u32(&d) != NLM_PROGRAM || get_u32(&d) != NLM_V4)
		return false;
	proc = get_u32(&d);
	(void)get_u32(&d);
	(void)get_opaque(&d, NULL, 0);		/* credential */
	(void)get_u32(&d);
	(void)get_opaque(&d, NULL, 0);		/* verifier */
	(void)get_opaque(&d, NULL, 0);		/* cookie */
	(void)get_u32(&d);			/* exclusive */
	(void)get_opaque(&d, NULL, 0);		/* caller_name */
	(void)get_opaque(&d, NULL, 0);		/* fh */
	(void)get_opaque(&d, NULL, 0);		/* oh */
	*svid = get_u32(&d);
	return !d.d_err && (proc == PROC_GRANTED_MSG || proc == PROC_GRANTED);
}

static void
queue_send(struct queue *q, const struct call *k)
{
	encode_call(&q->q_w, k, true);
	if (send(q->q_wfd, q->q_w.c_msg, q->q_w.c_msglen, MSG_NOSIGNAL) !=
	    (ssize_t)q->q_w.c_msglen)
		die("queue: send: %s", strerror(errno));
}

/* Queue the n waiters, 256 calls in flight at a time; all must block. */
static bool
queue_fill(struct queue *q)
{
	struct call k = { PROC_LOCK, q->q_fh, 0, 1, true, q->q_o->qshared };
	uint8_t buf[INBUF];
	unsigned i, j, chunk;
	uint32_t st;
	ssize_t n;

	for (i = 0; i < q->q_n; i += chunk) {
		chunk = q->q_n - i < 256 ? q->q_n - i : 256;
		for (j = i; j < i + chunk; j++) {
			queue_aim(q, j);
			k.off = q->q_o->qshared ? j : 0;
			queue_send(q, &k);
		}
		for (j = 0; j < chunk; j++) {
			if ((n = read_record(q->q_wfd, buf, sizeof(buf))) < 0 ||
			    !reply_status(buf, (size_t)n, &st)) {
				snprintf(q->q_err, sizeof(q->q_err),
				    "queueing: bad or no reply");
				return false;
			}
			if (st != NLM4_BLOCKED) {
				snprintf(q->q_err, sizeof(q->q_err),
				    "queueing waiter %u: status %u, not BLOCKED",
				    i + j, st);
				return false;
			}
		}
	}
	return true;
}

/*
 * The holder unlocks; every waiter UNLOCKs when its GRANTED_MSG arrives
 * (a retried callback is counted, not answered twice).  Ends when all n
 * UNLOCKs are answered, or after 30 s without progress.
 */
static bool
queue_release(struct queue *q)
{
	struct call k = { PROC_UNLOCK, q->q_fh, 0, 1, false, false };
	struct pollfd pf[2];
	uint8_t buf[65536];
	unsigned unlocked = 0;
	uint64_t idle_since = now_ns();
	uint32_t st, svid;
	ssize_t n;

	k.len = q->q_o->qshared ? q->q_n : 1;
	if ((st = sync_call(q->q_hfd, &q->q_h, &k)) != NLM4_GRANTED) {
		snprintf(q->q_err, sizeof(q->q_err), "holder UNLOCK: %u", st);
		return false;
	}
	k.len = 1;
	pf[0].fd = q->q_bh.b_dead;
	pf[1].fd = q->q_wfd;
	pf[0].events = pf[1].events = POLLIN;
	while (unlocked < q->q_n) {
		if (now_ns() - idle_since > 30000000000ull) {
			snprintf(q->q_err, sizeof(q->q_err), "no progress for "
			    "30 s: %u of %u granted, %u unlocked", q->q_grants,
			    q->q_n, unlocked);
			return false;
		}
		if (poll(pf, 2, 100) <= 0)
			continue;
		while ((pf[0].revents & POLLIN) && (n = recv(q->q_bh.b_dead,
		    buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			if (!granted_svid(buf, (size_t)n, &svid))
				continue;
			if (svid < 1000 || svid - 1000 >= q->q_n) {
				snprintf(q->q_err, sizeof(q->q_err),
				    "GRANTED_MSG for svid %u", svid);
				return false;
			}
			if (q->q_granted[svid - 1000]++ != 0) {
				q->q_dups++;
				continue;
			}
			q->q_grants++;
			queue_aim(q, svid - 1000);
			k.off = q->q_o->qshared ? svid - 1000 : 0;
			queue_send(q, &k);
		}
		if (pf[1].revents & POLLIN) {
			if ((n = read_record(q->q_wfd, buf, sizeof(buf))) < 0 ||
			    !reply_status(buf, (size_t)n, &st) ||
			    st != NLM4_GRANTED) {
				snprintf(q->q_err, sizeof(q->q_err),
				    "waiter UNLOCK: bad reply");
				return false;
			}
			unlocked++;
			idle_since = now_ns();
		}
	}
	return true;
}

static void *
queue_thread(void *arg)
{
	struct queue *q = arg;
	uint64_t t0;
	double c0;

	thread_nice(q->q_o->qnice);
	t0 = now_ns();
	c0 = cpu_of(q->q_o->srvpid);
	if (queue_fill(q)) {
		q->q_queue_wall = (double)(now_ns() - t0) / 1e9;
		q->q_queue_cpu = cpu_of(q->q_o->srvpid) - c0;
		atomic_store(&q->q_filled, true);
		if (q->q_o->keep) {
			/* -K: the queue stays until we are killed. */
			printf("mode=queue waiters=%u queued on %s in %.3f s; "
			    "kept (-K) until killed\n", q->q_n, q->q_fh,
			    q->q_queue_wall);
			fflush(stdout);
			for (;;)
				pause();
		}
		t0 = now_ns();
		c0 = cpu_of(q->q_o->srvpid);
		if (queue_release(q)) {
			q->q_rel_wall = (double)(now_ns() - t0) / 1e9;
			q->q_rel_cpu = cpu_of(q->q_o->srvpid) - c0;
		}
	}
	atomic_store(&q->q_done, true);
	return NULL;
}

/* Append b's latencies and counts to a. */
static void
stats_merge(struct stats *a, struct stats *b)
{
	size_t i;

	for (i = 0; i < b->nlat; i++)
		stats_lat(a, (uint64_t)b->lat[i] * 1000);
	a->ops += b->ops;
	a->rpcs += b->rpcs;
	a->errors += b->errors;
	a->wall += b->wall;
	free(b->lat);
}

/*
 * One cycle on a new file: the holder locks, the thread queues and
 * releases; with `clients', the -c clients run lockunlock in 1 s windows
 * meanwhile and their latencies go to *with.  False if the cycle failed
 * (q_err says why).
 */
static bool
queue_cycle(const struct opts *o, struct queue *q, const char *tagp,
    bool clients, struct stats *with)
{
	struct opts w = *o;
	struct call k = { PROC_LOCK, NULL, 0, 1, false, false };
	struct stats st;
	pthread_t thr;
	char tag[32];
	unsigned round = 0;
	uint32_t s;

	memset(q->q_granted, 0, q->q_n);
	q->q_grants = q->q_dups = 0;
	q->q_queue_wall = q->q_queue_cpu = q->q_rel_wall = q->q_rel_cpu = 0;
	atomic_store(&q->q_done, false);
	atomic_store(&q->q_filled, false);
	snprintf(q->q_fh, sizeof(q->q_fh), "nlmbench-%d-%s", (int)getpid(),
	    tagp);
	bh_client_init(&q->q_h, 9000, "bench-holder", q->q_fh);
	bh_client_init(&q->q_w, 0, "bench-queue", q->q_fh);
	w.udp = false;
	q->q_hfd = sock_open(&w, NULL);
	q->q_wfd = sock_open(&w, o->bhaddr);
	k.fh = q->q_fh;
	k.len = o->qshared ? q->q_n : 1;
	if ((s = sync_call(q->q_hfd, &q->q_h, &k)) != NLM4_GRANTED)
		die("queue: holder LOCK: status %u", s);
	if (pthread_create(&thr, NULL, queue_thread, q) != 0)
		die("pthread_create");
	w = *o;
	w.secs = 1;
	w.warm = 0;
	while (clients && !atomic_load(&q->q_done)) {
		snprintf(tag, sizeof(tag), "%d-%s%u", (int)getpid(), tagp,
		    round++);
		run_once(&w, M_LOCKUNLOCK, tag, &st);
		if (getenv("NLMBENCH_WINDOWS") != NULL && st.nlat > 0) {
			qsort(st.lat, st.nlat, sizeof(*st.lat), cmp_u32);
			fprintf(stderr, "window %u (%s): calls/s %.0f p50_us %u "
			    "p99_us %u\n", round, atomic_load(&q->q_filled) ?
			    "release" : "queueing", (double)st.rpcs /
			    (st.wall > 0 ? st.wall : 1), pct(&st, 0.50),
			    pct(&st, 0.99));
		}
		stats_merge(with, &st);
	}
	pthread_join(thr, NULL);
	close(q->q_hfd);
	close(q->q_wfd);
	return q->q_err[0] == '\0';
}

static int
run_queue(const struct opts *o)
{
	struct queue q;
	struct stats base, with;
	char tag[32];
	uint32_t p99b, p99w;
	char nicebuf[16];
	int big = 64 << 20;

	if (o->hold == 0)
		die("queue: -k waiters must be at least 1");
	memset(&q, 0, sizeof(q));
	memset(&with, 0, sizeof(with));
	q.q_o = o;
	q.q_n = o->hold;
	if ((q.q_granted = calloc(q.q_n, 1)) == NULL)
		die("out of memory");
	q.q_bh.b_answer_pmap = true;
	q.q_bh.b_pmap = udp_bind(o->bhaddr, 111, NULL);
	q.q_bh.b_dead = udp_bind(o->bhaddr, 0, &q.q_bh.b_deadport);
	/* A burst of N callbacks must not be lost here (root: FORCE). */
	if (setsockopt(q.q_bh.b_dead, SOL_SOCKET, SO_RCVBUFFORCE, &big,
	    sizeof(big)) == -1)
		(void)setsockopt(q.q_bh.b_dead, SOL_SOCKET, SO_RCVBUF, &big,
		    sizeof(big));
	/* The thread answers the port mapper; the driver reads b_dead. */
	q.q_bh.b_pmap_only = true;
	q.q_bh.b_nice = o->qnice;
	if (pthread_create(&q.q_bh.b_thr, NULL, bh_thread, &q.q_bh) != 0)
		die("pthread_create");

	/* 1. The queue alone: what it costs nlmd. */
	if (queue_cycle(o, &q, "qa", false, NULL))
		printf("mode=queue shape=%s waiters=%u alone: queue_s=%.3f "
		    "queue_us_per_req=%.1f queue_srv_cpu_us_per_req=%.1f "
		    "release_s=%.3f grants=%u callback_repeats=%u "
		    "us_per_grant=%.1f release_srv_cpu_us_per_grant=%.1f\n",
		    o->qshared ? "shared-ranges" : "exclusive-byte", q.q_n,
		    q.q_queue_wall, q.q_queue_wall * 1e6 / q.q_n,
		    q.q_queue_cpu * 1e6 / q.q_n, q.q_rel_wall, q.q_grants,
		    q.q_dups, q.q_rel_wall * 1e6 / q.q_grants,
		    q.q_rel_cpu * 1e6 / q.q_grants);
	/* 2. The clients alone, then 3. the queue again beside them. */
	snprintf(tag, sizeof(tag), "%d-qbase", (int)getpid());
	run_once(o, M_LOCKUNLOCK, tag, &base);
	report(o, "lockunlock", &base, "queue=no");
	if (q.q_err[0] == '\0')
		(void)queue_cycle(o, &q, "qb", true, &with);
	atomic_store(&q.q_bh.b_stop, true);
	pthread_join(q.q_bh.b_thr, NULL);
	with.srv_cpu = -1;
	report(o, "lockunlock", &with, "queue=yes");
	qsort(base.lat, base.nlat, sizeof(*base.lat), cmp_u32);
	qsort(with.lat, with.nlat, sizeof(*with.lat), cmp_u32);
	p99b = pct(&base, 0.99);
	p99w = pct(&with, 0.99);
	if (o->qnice == QNICE_IDLE)
		snprintf(nicebuf, sizeof(nicebuf), "idle");
	else
		snprintf(nicebuf, sizeof(nicebuf), "%d", o->qnice);
	printf("mode=queue shape=%s waiters=%u beside %u clients: "
	    "queue_s=%.3f release_s=%.3f grants=%u callback_repeats=%u "
	    "clients_p99_without_us=%u clients_p99_with_us=%u "
	    "p99_ratio=%.2f waiters_nice=%s clients_errors=%" PRIu64 "%s%s\n",
	    o->qshared ? "shared-ranges" : "exclusive-byte", q.q_n,
	    o->clients, q.q_queue_wall, q.q_rel_wall, q.q_grants, q.q_dups,
	    p99b, p99w, p99b ? (double)p99w / p99b : 0.0, nicebuf,
	    base.errors + with.errors, q.q_err[0] ? " error=" : "", q.q_err);
	free(base.lat);
	free(with.lat);
	free(q.q_granted);
	close(q.q_bh.b_pmap);
	close(q.q_bh.b_dead);
	return q.q_err[0] || base.errors || with.errors ? 1 : 0;
}

/* ---- main --------------------------------------------------------------- */

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: nlmbench [-u] [-a addr] [-p port] [-c clients] [-t secs]\n"
	    "                [-w warmup-secs] [-m mode] [-k held-locks]\n"
	    "                [-P server-pid] [-b blackhole-addr] [-r rounds]"
	    " [-R] [-K] [-S]\n"
	    "                [-A] [-E export] [-N nice] [-n name-prefix]\n"
	    "  modes: null test lockunlock contended hold blackhole queue\n"
	    "  -R  (blackhole) black-hole the client's rpcbind, not its NLM\n"
	    "  -K  (hold) leave the held locks held at the end (restart "
	    "benchmarks); (queue) keep the queue, unreleased, until killed\n"
	    "  -N  (queue) the waiters' threads at this nice, or idle: "
	    "SCHED_IDLE (hosts elsewhere)\n"
	    "  -S  (queue) shared waiters on -k distinct bytes behind an "
	    "exclusive lock\n"
	    "  -A  AUTH_SYS credentials (uid 0) instead of AUTH_NONE\n"
	    "  -n  client i's caller_name is PREFIX-i (default bench)\n"
	    "  -E  lock real files of this NFSv3 export (MOUNT + CREATE at "
	    "-a) by handle\n");
}

static enum mode
parse_mode(const char *s)
{
	unsigned i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (strcmp(s, mode_names[i]) == 0)
			return (enum mode)i;
	usage(stderr);
	exit(2);
}

static double
parse_num(const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi)
		die("bad number '%s' (range %g..%g)", s, lo, hi);
	return v;
}

int
main(int argc, char **argv)
{
	struct opts o = { "127.0.0.1", 4045, 1, 3.0, 0.3, false, M_NULL, 100,
	    0, "127.0.0.2", false, 3, 5000, false, false, 0, NULL };
	struct stats st;
	char tag[32];
	int ch;

	while ((ch = getopt(argc, argv, "Aa:b:c:E:hk:Km:n:N:p:P:r:RSt:uw:")) != -1)
		switch (ch) {
		case 'A': g_authsys = true; break;
		case 'a': o.addr = optarg; break;
		case 'E': o.export = optarg; break;
		case 'b': o.bhaddr = optarg; break;
		case 'c':
			o.clients = (unsigned)parse_num(optarg, 1, MAX_CLIENTS);
			break;
		case 'k': o.hold = (unsigned)parse_num(optarg, 0, 1e6); break;
		case 'm': o.mode = parse_mode(optarg); break;
		case 'p': o.port = (unsigned)parse_num(optarg, 1, 65535); break;
		case 'P': o.srvpid = (pid_t)parse_num(optarg, 1, 1e9); break;
		case 'r': o.rounds = (unsigned)parse_num(optarg, 1, 16); break;
		case 'R': o.bh_rpcbind = true; break;
		case 'K': o.keep = true; break;
		case 'n':
			if (strlen(optarg) == 0 || strlen(optarg) > 16)
				die("-n: 1 to 16 characters");
			g_prefix = optarg;
			break;
		case 'S': o.qshared = true; break;
		case 'N':
			o.qnice = strcmp(optarg, "idle") == 0 ? QNICE_IDLE :
			    (int)parse_num(optarg, -20, 19);
			break;
		case 't': o.secs = parse_num(optarg, 0.1, 7200); break;
		case 'u': o.udp = true; break;
		case 'w': o.warm = parse_num(optarg, 0, 60); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	srandom((unsigned)(getpid() ^ now_ns()));
	if (o.export != NULL && (o.mode == M_BLACKHOLE || o.mode == M_QUEUE))
		die("-E works with modes null, test, lockunlock, contended and "
		    "hold");
	if (o.mode == M_BLACKHOLE)
		return run_blackhole(&o);
	if (o.mode == M_QUEUE)
		return run_queue(&o);
	snprintf(tag, sizeof(tag), "%d-%s", (int)getpid(), mode_names[o.mode]);
	run_once(&o, o.mode, tag, &st);
	report(&o, mode_names[o.mode], &st, NULL);
	free(st.lat);
	return st.errors ? 1 : 0;
}
