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
 *   echosrv [-a addr] [-p port]     (default 127.0.0.1:4047, TCP and UDP)
 *
 * Prints "echosrv ready" once listening; on SIGTERM or SIGINT prints the
 * calls it answered and exits 0.
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
	size_t off = 0;
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
	while (c->inlen - off >= 4 &&
	    c->outlen + 4 + REPLY_MAX <= sizeof(c->out)) {
		uint32_t mark;
		size_t flen, rlen;

		memcpy(&mark, c->in + off, 4);
		mark = ntohl(mark);
		flen = mark & 0x7fffffffu;
		/* Calls are one fragment and fit the buffer, or we hang up. */
		if (!(mark & 0x80000000u) || flen > sizeof(c->in) - 4)
			goto gone;
		if (c->inlen - off - 4 < flen)
			break;
		if ((rlen = reply_to(c->in + off + 4, flen,
		    c->out + c->outlen + 4)) > 0) {
			mark = htonl(0x80000000u | (uint32_t)rlen);
			memcpy(c->out + c->outlen, &mark, 4);
			c->outlen += 4 + rlen;
		}
		off += 4 + flen;
	}
	memmove(c->in, c->in + off, c->inlen - off);
	c->inlen -= off;
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

int
main(int argc, char **argv)
{
	static uint8_t dgram[65536];
	const char *addr = "127.0.0.1";
	unsigned port = 4047;
	struct epoll_event ee, evs[256];
	struct sigaction sa;
	int ep, tl, ul, ch, n, i, one = 1;

	while ((ch = getopt(argc, argv, "a:p:")) != -1)
		switch (ch) {
		case 'a': addr = optarg; break;
		case 'p': port = (unsigned)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: echosrv [-a addr] [-p port]\n");
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
