/*
 * echosrv.c - the floor: a do-nothing ONC RPC server for make bench-compare.
 *
 * It answers every call to procedure 0 (NULL) of any program with an
 * accepted, successful, empty reply; NLM version 4's TEST, LOCK, CANCEL and
 * UNLOCK (procedures 1-4) with the call's cookie and NLM4_GRANTED, nothing
 * checked and nothing kept (the least a lock server sends back: what a
 * LOCK+UNLOCK costs the transport and the load generator, apart from any
 * lock logic); any other procedure with PROC_UNAVAIL.  It does the least a
 * server of nlmd's design can: one thread,
 * epoll, and per wake-up one receive and one send.  UDP: recvfrom, sendto.
 * TCP: one recv, a reply for every complete record in the buffer, one send
 * (TCP_NODELAY, as nlmd).  No XDR library, no allocation per call.  What
 * it spends per NULL call is what the transport costs; nlmd's CPU per call
 * is compared with it.
 *
 * With -U it serves TCP only, through io_uring instead (tools/bench-uring.sh
 * asks whether that floor is lower): a multishot accept, a multishot
 * receive per connection into a ring of provided buffers, and each
 * connection's replies of a wake-up sent by one send; all of a wake-up's
 * sends go to the kernel in the one io_uring_enter that also waits for
 * the next completions.  No system call per call at all.
 *
 *   echosrv [-U] [-a addr] [-p port]   (default 127.0.0.1:4047; TCP and
 *                                       UDP, or with -U TCP only)
 *
 * Prints "echosrv ready" once listening; on SIGTERM or SIGINT prints the
 * calls it answered and exits 0.  Exit status 3 when -U finds io_uring
 * unavailable (the kernel lacks it, or kernel.io_uring_disabled is set).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>

#define RPC_CALL	0
#define RPC_REPLY	1
#define RPC_VERS	2
#define PROC_UNAVAIL	3
#define NLM_PROG	100021
#define NLM4_VERS	4
#define NETOBJ_MAX	1024	/* a cookie's largest size (RFC 1813 nlm4) */
#define REPLY_LEN	24	/* xid, REPLY, ACCEPTED, verf (2), stat */
#define REPLY_MAX	(REPLY_LEN + 4 + NETOBJ_MAX + 4)	/* + cookie, stat */
#define CONN_BUF	65536
#define MAX_CONNS	4096

struct conn {
	int		 fd;
	size_t		 inlen;
	size_t		 outlen;	/* unsent replies (peer not reading) */
	uint8_t		 in[CONN_BUF];
	uint8_t		 out[CONN_BUF];
};

static volatile sig_atomic_t stop;
static unsigned long long ncalls;
static unsigned nconns;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
die(const char *what)
{
	fprintf(stderr, "echosrv: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* XDR opaque data takes its length rounded up to 4 bytes. */
static size_t
pad4(size_t len)
{
	return (len + 3) & ~(size_t)3;
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/*
 * Where the arguments of the call in p[0..n) start (after the credential
 * and the verifier), or 0 if they do not fit.
 */
static size_t
args_at(const uint8_t *p, size_t n)
{
	size_t off = 24, i, len;

	for (i = 0; i < 2; i++) {		/* credential, verifier */
		if (n - off < 8)
			return 0;
		len = get32(p + off + 4);
		if (len > 400 || n - off - 8 < pad4(len))
			return 0;
		off += 8 + pad4(len);
	}
	return off;
}

/*
 * The reply to the call in p[0..n) into out (at most REPLY_MAX bytes): its
 * length, or 0 for something that is not an RPC v2 call (dropped, as a
 * server drops it).
 */
static size_t
reply_to(const uint8_t *p, size_t n, uint8_t *out)
{
	uint32_t w[6], proc, stat = PROC_UNAVAIL;
	size_t len = REPLY_LEN, a, clen;

	if (n < 24 || get32(p + 4) != RPC_CALL || get32(p + 8) != RPC_VERS)
		return 0;
	proc = get32(p + 20);
	if (proc == 0)
		stat = 0;
	else if (get32(p + 12) == NLM_PROG && get32(p + 16) == NLM4_VERS &&
	    proc <= 4 && (a = args_at(p, n)) != 0 && n - a >= 4 &&
	    (clen = get32(p + a)) <= NETOBJ_MAX &&
	    n - a - 4 >= pad4(clen)) {
		/* cookie (as sent, padding included), NLM4_GRANTED */
		clen = 4 + pad4(clen);
		memcpy(out + REPLY_LEN, p + a, clen);
		memset(out + REPLY_LEN + clen, 0, 4);
		len += clen + 4;
		stat = 0;
	}
	memcpy(&w[0], p, 4);			/* xid */
	w[1] = htonl(RPC_REPLY);
	w[2] = 0;				/* MSG_ACCEPTED */
	w[3] = 0;				/* verifier: AUTH_NONE, empty */
	w[4] = 0;
	w[5] = htonl(stat);
	memcpy(out, w, REPLY_LEN);
	ncalls++;
	return len;
}

/*
 * Replies to the complete records of in[0..*inlen) appended to
 * out[0..*outlen) (room for CONN_BUF bytes), as far as out has room; the
 * records answered are taken out of in.  False when the peer broke the
 * framing: calls are one fragment and fit the buffer, or we hang up.
 */
static bool
replies_to(uint8_t *in, size_t *inlen, uint8_t *out, size_t *outlen)
{
	size_t off = 0;

	while (*inlen - off >= 4 && *outlen + 4 + REPLY_MAX <= CONN_BUF) {
		uint32_t mark;
		size_t flen, rlen;

		memcpy(&mark, in + off, 4);
		mark = ntohl(mark);
		flen = mark & 0x7fffffffu;
		if (!(mark & 0x80000000u) || flen > CONN_BUF - 4)
			return false;
		if (*inlen - off - 4 < flen)
			break;
		if ((rlen = reply_to(in + off + 4, flen, out + *outlen + 4)) >
		    0) {
			mark = htonl(0x80000000u | (uint32_t)rlen);
			memcpy(out + *outlen, &mark, 4);
			*outlen += 4 + rlen;
		}
		off += 4 + flen;
	}
	memmove(in, in + off, *inlen - off);
	*inlen -= off;
	return true;
}

static void
conn_close(struct conn *c)
{
	close(c->fd);
	free(c);
	nconns--;
}

/* Send what is queued; false if the connection is gone. */
static bool
conn_flush(int ep, struct conn *c)
{
	struct epoll_event ee;
	ssize_t w;

	if (c->outlen == 0)
		return true;
	w = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w == -1 && errno != EAGAIN)
		return false;
	if (w > 0) {
		memmove(c->out, c->out + w, c->outlen - (size_t)w);
		c->outlen -= (size_t)w;
	}
	ee.events = EPOLLIN | (c->outlen > 0 ? EPOLLOUT : 0);
	ee.data.ptr = c;
	if (c->outlen > 0 || w == -1)
		(void)epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ee);
	return true;
}

/* One wake-up of a TCP connection: one recv, replies, one send. */
static void
conn_readable(int ep, struct conn *c)
{
	ssize_t n;

	if (c->outlen > 0 && !conn_flush(ep, c))
		goto gone;
	if (c->outlen + 4 + REPLY_MAX > sizeof(c->out))
		return;		/* the peer reads nothing: wait for EPOLLOUT */
	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen,
	    MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		goto gone;
	c->inlen += (size_t)n;
	if (!replies_to(c->in, &c->inlen, c->out, &c->outlen))
		goto gone;
	if (conn_flush(ep, c))
		return;
gone:
	(void)epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	conn_close(c);
}

static int
listen_on(const char *addr, unsigned port, int type)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	if ((fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) ==
	    -1)
		die("socket");
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "echosrv: bad address %s\n", addr);
		exit(2);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		die("bind");
	if (type == SOCK_STREAM && listen(fd, 1024) == -1)
		die("listen");
	return fd;
}

/* ---- -U: TCP through io_uring ------------------------------------------ */

#define UR_ENTRIES	1024		/* submission queue */
#define UR_NBUF		1024		/* provided receive buffers */
#define UR_BUFSZ	4096
#define UR_BGID		0
#define UR_ACCEPT	1		/* user_data tags (low bits) */
#define UR_RECV		2
#define UR_SEND		3
#define UR_TAGS		3ull

/*
 * A connection under io_uring.  Replies are made into `out' while the
 * kernel may still be reading `snd' (the send in flight); when it is done
 * the two swap.  A connection is freed once it is dead and neither its
 * receive nor a send is still in the kernel.
 */
struct uconn {
	int		 fd;
	bool		 recving;	/* the multishot receive is armed */
	bool		 sending;
	bool		 queued;	/* on the list of connections to send */
	bool		 dead;
	struct uconn	*next;		/* on the list to send */
	struct uconn	*anext;		/* every connection */
	struct uconn	*aprev;
	size_t		 inlen;
	size_t		 outlen;
	size_t		 sndlen;
	size_t		 sndoff;
	uint8_t		*out;
	uint8_t		*snd;
	uint8_t		 in[CONN_BUF];
	uint8_t		 buf[2][CONN_BUF];
};

struct uring {
	struct io_uring		 ring;
	struct io_uring_buf_ring *br;
	uint8_t			*bufs;
	struct uconn		*tosend;	/* replies made this wake-up */
	struct uconn		*all;
	int			 lfd;
};

/* A submission entry, making room by submitting when the queue is full. */
static struct io_uring_sqe *
ur_sqe(struct uring *u)
{
	struct io_uring_sqe *sqe;

	if ((sqe = io_uring_get_sqe(&u->ring)) == NULL) {
		(void)io_uring_submit(&u->ring);
		if ((sqe = io_uring_get_sqe(&u->ring)) == NULL) {
			fprintf(stderr, "echosrv: io_uring queue full\n");
			exit(1);
		}
	}
	return sqe;
}

static void
ur_accept_arm(struct uring *u)
{
	struct io_uring_sqe *sqe = ur_sqe(u);

	io_uring_prep_multishot_accept(sqe, u->lfd, NULL, NULL,
	    SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, UR_ACCEPT);
}

static void
ur_recv_arm(struct uring *u, struct uconn *c)
{
	struct io_uring_sqe *sqe = ur_sqe(u);

	io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = UR_BGID;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | UR_RECV);
	c->recving = true;
}

static void
ur_send_arm(struct uring *u, struct uconn *c)
{
	struct io_uring_sqe *sqe = ur_sqe(u);

	io_uring_prep_send(sqe, c->fd, c->snd + c->sndoff,
	    c->sndlen - c->sndoff, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | UR_SEND);
	c->sending = true;
}

/* Hand the replies made so far to the kernel, unless a send is out. */
static void
ur_send_start(struct uring *u, struct uconn *c)
{
	uint8_t *t;

	if (c->sending || c->dead || c->outlen == 0)
		return;
	t = c->snd;
	c->snd = c->out;
	c->out = t;
	c->sndlen = c->outlen;
	c->sndoff = 0;
	c->outlen = 0;
	ur_send_arm(u, c);
}

static void
ur_want_send(struct uring *u, struct uconn *c)
{
	if (!c->queued && c->outlen > 0) {
		c->queued = true;
		c->next = u->tosend;
		u->tosend = c;
	}
}

/*
 * Mark c dead: its receive ends (shutdown), and it is freed when nothing
 * of it is left in the kernel (ur_reap).
 */
static void
ur_kill(struct uconn *c)
{
	if (!c->dead) {
		c->dead = true;
		(void)shutdown(c->fd, SHUT_RDWR);
	}
}

static void
ur_free(struct uring *u, struct uconn *c)
{
	if (c->aprev != NULL)
		c->aprev->anext = c->anext;
	else
		u->all = c->anext;
	if (c->anext != NULL)
		c->anext->aprev = c->aprev;
	close(c->fd);
	free(c);
	nconns--;
}

static void
ur_reap(struct uring *u, struct uconn *c)
{
	if (c->dead && !c->recving && !c->sending && !c->queued)
		ur_free(u, c);
}

/* Replies to the complete records in c->in, as far as `out' has room. */
static void
ur_parse(struct uring *u, struct uconn *c)
{
	if (!replies_to(c->in, &c->inlen, c->out, &c->outlen)) {
		ur_kill(c);
		return;
	}
	ur_want_send(u, c);
}

static void
ur_on_accept(struct uring *u, const struct io_uring_cqe *cqe)
{
	struct uconn *c;
	int one = 1;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		ur_accept_arm(u);
	if (cqe->res < 0)
		return;
	if (nconns >= MAX_CONNS || (c = calloc(1, sizeof(*c))) == NULL) {
		close(cqe->res);
		return;
	}
	(void)setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof(one));
	c->fd = cqe->res;
	c->out = c->buf[0];
	c->snd = c->buf[1];
	c->anext = u->all;
	if (u->all != NULL)
		u->all->aprev = c;
	u->all = c;
	nconns++;
	ur_recv_arm(u, c);
}

/*
 * Bytes received into a provided buffer: copied after what c holds, the
 * buffer handed back to the ring at once.  A peer that has 64 KiB of calls
 * waiting while it reads none of the replies is hung up on (this is a
 * benchmark's floor, not a server).
 */
static void
ur_on_recv(struct uring *u, struct uconn *c, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		c->recving = false;
	if (cqe->res > 0 && (cqe->flags & IORING_CQE_F_BUFFER)) {
		unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		uint8_t *b = u->bufs + (size_t)bid * UR_BUFSZ;
		size_t n = (size_t)cqe->res;

		if (!c->dead && n <= sizeof(c->in) - c->inlen) {
			memcpy(c->in + c->inlen, b, n);
			c->inlen += n;
			ur_parse(u, c);
		} else
			ur_kill(c);
		io_uring_buf_ring_add(u->br, b, UR_BUFSZ, (unsigned short)bid,
		    io_uring_buf_ring_mask(UR_NBUF), 0);
		io_uring_buf_ring_advance(u->br, 1);
	} else if (cqe->res != -ENOBUFS)
		ur_kill(c);		/* end of stream, or an error */
	/* Out of buffers (or a receive that simply ended): again. */
	if (!c->recving && !c->dead)
		ur_recv_arm(u, c);
}

static void
ur_on_send(struct uring *u, struct uconn *c, const struct io_uring_cqe *cqe)
{
	c->sending = false;
	if (cqe->res < 0) {
		ur_kill(c);
		return;
	}
	c->sndoff += (size_t)cqe->res;
	if (c->sndoff < c->sndlen && !c->dead)
		ur_send_arm(u, c);
	else if (c->outlen > 0)
		ur_want_send(u, c);
	/* Replies waited for room in `out': make them now. */
	if (!c->dead && c->inlen > 0)
		ur_parse(u, c);
}

/* Set up the ring and its provided buffers; false if io_uring is missing. */
static bool
ur_init(struct uring *u)
{
	static const unsigned flags[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN, 0
	};
	struct io_uring_buf_reg reg;
	struct io_uring_params p;
	size_t i;
	int rc = -EINVAL;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = flags[i];
		if ((rc = io_uring_queue_init_params(UR_ENTRIES, &u->ring,
		    &p)) == 0)
			break;
		if (rc != -EINVAL)
			break;
	}
	if (rc != 0) {
		fprintf(stderr, "echosrv: io_uring unavailable: %s\n",
		    strerror(-rc));
		return false;
	}
	if ((u->br = aligned_alloc(4096, UR_NBUF * sizeof(struct io_uring_buf)))
	    == NULL || (u->bufs = malloc((size_t)UR_NBUF * UR_BUFSZ)) == NULL)
		die("malloc");
	io_uring_buf_ring_init(u->br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)u->br;
	reg.ring_entries = UR_NBUF;
	reg.bgid = UR_BGID;
	if ((rc = io_uring_register_buf_ring(&u->ring, &reg, 0)) != 0) {
		fprintf(stderr, "echosrv: io_uring unavailable: provided "
		    "buffer rings: %s\n", strerror(-rc));
		io_uring_queue_exit(&u->ring);
		free(u->br);
		free(u->bufs);
		return false;
	}
	for (i = 0; i < UR_NBUF; i++)
		io_uring_buf_ring_add(u->br, u->bufs + i * UR_BUFSZ, UR_BUFSZ,
		    (unsigned short)i, io_uring_buf_ring_mask(UR_NBUF), (int)i);
	io_uring_buf_ring_advance(u->br, UR_NBUF);
	return true;
}

/*
 * Serve TCP on lfd (bound to addr, port) through io_uring until SIGTERM or
 * SIGINT: 0, or 3 if io_uring is unavailable.
 */
static int
ur_serve(int lfd, const char *addr, unsigned port)
{
	struct uring u;

	memset(&u, 0, sizeof(u));
	u.lfd = lfd;
	if (!ur_init(&u))
		return 3;
	ur_accept_arm(&u);
	printf("echosrv ready on %s port %u (tcp, io_uring)\n", addr, port);
	fflush(stdout);
	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		int rc;

		/* This wake-up's sends and the wait for the next, together. */
		rc = io_uring_submit_and_wait(&u.ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			errno = -rc;
			die("io_uring_submit_and_wait");
		}
		io_uring_for_each_cqe(&u.ring, head, cqe) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);
			struct uconn *c = (struct uconn *)(uintptr_t)
			    (ud & ~UR_TAGS);

			n++;
			switch (ud & UR_TAGS) {
			case UR_ACCEPT:
				ur_on_accept(&u, cqe);
				continue;
			case UR_RECV:
				ur_on_recv(&u, c, cqe);
				break;
			case UR_SEND:
				ur_on_send(&u, c, cqe);
				break;
			}
			ur_reap(&u, c);
		}
		io_uring_cq_advance(&u.ring, n);
		while (u.tosend != NULL) {
			struct uconn *c = u.tosend;

			u.tosend = c->next;
			c->queued = false;
			ur_send_start(&u, c);
			ur_reap(&u, c);
		}
	}
	/* The ring first: then nothing of a connection is in the kernel. */
	io_uring_queue_exit(&u.ring);
	while (u.all != NULL)
		ur_free(&u, u.all);
	free(u.br);
	free(u.bufs);
	printf("echosrv: answered %llu calls\n", ncalls);
	return 0;
}

int
main(int argc, char **argv)
{
	static uint8_t dgram[65536];
	const char *addr = "127.0.0.1";
	unsigned port = 4047;
	struct epoll_event ee, evs[256];
	struct sigaction sa;
	int ep, tl, ul, ch, n, i, one = 1;
	bool uring = false;

	while ((ch = getopt(argc, argv, "a:p:U")) != -1)
		switch (ch) {
		case 'a': addr = optarg; break;
		case 'p': port = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'U': uring = true; break;
		default:
			fprintf(stderr, "usage: echosrv [-U] [-a addr] "
			    "[-p port]\n");
			return 2;
		}
	if (port == 0 || port > 65535) {
		fprintf(stderr, "echosrv: bad port\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	tl = listen_on(addr, port, SOCK_STREAM);
	if (uring)
		return ur_serve(tl, addr, port);
	ul = listen_on(addr, port, SOCK_DGRAM);
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		die("epoll_create1");
	ee.events = EPOLLIN;
	ee.data.ptr = &tl;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, tl, &ee) == -1)
		die("epoll_ctl");
	ee.data.ptr = &ul;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ul, &ee) == -1)
		die("epoll_ctl");
	printf("echosrv ready on %s port %u (tcp, udp)\n", addr, port);
	fflush(stdout);
	while (!stop) {
		if ((n = epoll_wait(ep, evs, 256, 1000)) == -1) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &ul) {
				struct sockaddr_storage from;
				socklen_t fl = sizeof(from);
				uint8_t out[REPLY_MAX];
				size_t rlen;
				ssize_t r;

				r = recvfrom(ul, dgram, sizeof(dgram), 0,
				    (struct sockaddr *)&from, &fl);
				if (r > 0 && (rlen = reply_to(dgram, (size_t)r,
				    out)) > 0)
					(void)sendto(ul, out, rlen, 0,
					    (struct sockaddr *)&from, fl);
			} else if (p == &tl) {
				struct conn *c;
				int fd = accept4(tl, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (fd == -1)
					continue;
				if (nconns >= MAX_CONNS ||
				    (c = calloc(1, sizeof(*c))) == NULL) {
					close(fd);
					continue;
				}
				(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY,
				    &one, sizeof(one));
				c->fd = fd;
				ee.events = EPOLLIN;
				ee.data.ptr = c;
				nconns++;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee) == -1)
					conn_close(c);
			} else
				conn_readable(ep, p);
		}
	}
	printf("echosrv: answered %llu calls\n", ncalls);
	return 0;
}
