/*
 * test_transport_random.c - the TCP transport under random input: every
 * call answered exactly once whatever the framing (fragments of any size,
 * empty ones, one byte a turn), chunking, half-closes, full turns and
 * commit lag; and, with abrupt resets, idle sweeps, stalled commits and
 * small reply queues, never a reply twice nor a connection left behind
 * (memory errors: the ASan/UBSan build of this binary).  A transport of
 * its own on a Unix socket: each turn seals with commit N and releases
 * N - lag, as the daemon's turn end does when its commits lag.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"
#include "srv_impl.h"
#include "rpcout.h"
#include "svctest.h"
#include "tests/fakes/fakes.h"

static struct {
	struct ev_loop	*loop;
	struct onc_srv	*rs;
	struct onc_listener rl;
	int		 lfd;
	struct sockaddr_un lsa;
	socklen_t	 lsalen;
	uint64_t	 seq;
	uint64_t	 lag;
	unsigned	 calls;
	uint32_t	 xid;
	uint64_t	 ms;
	int		 fill;		/* ev_turn_full() at each call */
} tr;

static uint64_t tr_now(void) { return 5000000 + tr.ms; }

static void
tr_answer(struct svc_req *rq, SVCXPRT *xp)
{
	(void)rq;
	tr.calls++;
	if (tr.fill)
		ev_turn_full(tr.loop);
	(void)svc_sendreply(xp, XDRPROC(xdr_void), NULL);
}

static void
tr_hook(struct ev_loop *l, void *arg)
{
	(void)l;
	tr.seq++;
	onc_srv_seal(arg, tr.seq);
	if (tr.seq > tr.lag)
		onc_srv_release(arg, tr.seq - tr.lag);
}

static void
tr_start(size_t max_outq, uint64_t lag)
{
	struct onc_srv_limits lim;

	memset(&tr, 0, sizeof(tr));
	tr.lag = lag;
	ev_set_clock(tr_now);
	fake_send_hook(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tr.loop = ev_loop_new());
	memset(&lim, 0, sizeof(lim));
	lim.max_record = 4096;
	lim.max_conns = 16;
	lim.idle_sec = 600;
	lim.max_outq = max_outq;
	CU_ASSERT_PTR_NOT_NULL_FATAL(tr.rs = onc_srv_new(tr.loop, &lim));
	CU_ASSERT_FATAL(onc_srv_add_program(tr.rs, 100021, 4, tr_answer) ==
	    ONC_OK);
	ev_set_beforesleep(tr.loop, tr_hook, tr.rs);
	tr.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(&tr.lsa, 0, sizeof(tr.lsa));
	tr.lsa.sun_family = AF_UNIX;
	tr.lsalen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)snprintf(tr.lsa.sun_path + 1, sizeof(tr.lsa.sun_path) - 1,
	    "nlmd-test-transport-random-%d", (int)getpid()));
	CU_ASSERT_FATAL(bind(tr.lfd, (struct sockaddr *)&tr.lsa, tr.lsalen) ==
	    0);
	CU_ASSERT_FATAL(listen(tr.lfd, 64) == 0);
	tr.rl.rl_fd = tr.lfd;
	tr.rl.rl_family = AF_UNIX;
	tr.rl.rl_xport = ONC_TCP;
	tr.rl.rl_srv = tr.rs;
	CU_ASSERT_FATAL(ev_fd_add(tr.loop, tr.lfd, EV_READ, onc_tcp_accept,
	    &tr.rl) == 0);
}

static void
tr_stop(void)
{
	ev_set_beforesleep(tr.loop, NULL, NULL);
	ev_fd_del(tr.loop, tr.lfd);
	close(tr.lfd);
	onc_srv_free(tr.rs);
	ev_loop_free(tr.loop);
	ev_set_clock(NULL);
}

static int
tr_connect(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&tr.lsa, tr.lsalen) ==
	    0);
	return fd;
}

/* A NULL call body (40 bytes, no mark). */
static size_t
tr_body(uint8_t *buf)
{
	uint32_t w[10] = {
		htonl(++tr.xid), htonl(CALL), htonl(2), htonl(100021),
		htonl(4), htonl(0), 0, 0, 0, 0,
	};

	memcpy(buf, w, sizeof(w));
	return sizeof(w);
}

static size_t
tr_call(uint8_t *buf)
{
	uint32_t m = htonl(0x80000000u | 40);

	memcpy(buf, &m, 4);
	return 4 + tr_body(buf + 4);
}

static unsigned
tr_replies(int fd, uint8_t *acc, size_t cap, size_t *acclen)
{
	unsigned n = 0;
	ssize_t r;

	while ((r = recv(fd, acc + *acclen, cap - *acclen, MSG_DONTWAIT)) > 0)
		*acclen += (size_t)r;
	while (*acclen >= 4) {
		uint32_t mark;
		size_t flen;

		memcpy(&mark, acc, 4);
		flen = ntohl(mark) & 0x7fffffffu;
		if (*acclen - 4 < flen)
			break;
		memmove(acc, acc + 4 + flen, *acclen - 4 - flen);
		*acclen -= 4 + flen;
		n++;
	}
	return n;
}

/* Multi-fragment records with zero-length fragments, one byte a turn. */
static void
test_bytewise(void)
{
	static uint8_t acc[4096], buf[4096];
	size_t len = 0, acclen = 0, i;
	unsigned got = 0, k;
	int fd;

	tr_start(0, 1);
	fd = tr_connect();
	(void)ev_run_once(tr.loop, 0);
	for (k = 0; k < 3; k++) {
		uint8_t b[40];
		uint32_t m;

		tr_body(b);
		m = htonl(0);			/* empty, not last */
		memcpy(buf + len, &m, 4); len += 4;
		m = htonl(13);
		memcpy(buf + len, &m, 4); len += 4;
		memcpy(buf + len, b, 13); len += 13;
		m = htonl(0);
		memcpy(buf + len, &m, 4); len += 4;
		m = htonl(0x80000000u | 27);
		memcpy(buf + len, &m, 4); len += 4;
		memcpy(buf + len, b + 13, 27); len += 27;
	}
	for (i = 0; i < len; i++) {
		CU_ASSERT_FATAL(write(fd, buf + i, 1) == 1);
		(void)ev_run_once(tr.loop, 0);
		got += tr_replies(fd, acc, sizeof(acc), &acclen);
	}
	for (i = 0; i < 5; i++) {
		(void)ev_run_once(tr.loop, 0);
		got += tr_replies(fd, acc, sizeof(acc), &acclen);
	}
	CU_ASSERT_EQUAL(tr.calls, 3);
	CU_ASSERT_EQUAL(got, 3);
	close(fd);
	tr_stop();
}

/* Pipelined calls then SHUT_WR, with full turns. */
static void
test_pipeline_halfclose(void)
{
	static uint8_t acc[65536], buf[1000 * 44];
	size_t len = 0, acclen = 0;
	unsigned got = 0, i;
	int fd, fill;

	for (fill = 0; fill < 2; fill++) {
		len = acclen = 0;
		got = 0;
		tr_start(0, 1);
		tr.fill = fill;
		fd = tr_connect();
		(void)ev_run_once(tr.loop, 0);
		for (i = 0; i < 500; i++)
			len += tr_call(buf + len);
		CU_ASSERT_FATAL(write(fd, buf, len) == (ssize_t)len);
		CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
		for (i = 0; i < 2000 && tr.rs->rs_conns != NULL; i++) {
			(void)ev_run_once(tr.loop, 0);
			got += tr_replies(fd, acc, sizeof(acc), &acclen);
		}
		got += tr_replies(fd, acc, sizeof(acc), &acclen);
		CU_ASSERT_EQUAL(tr.calls, 500);
		CU_ASSERT_EQUAL(got, 500);
		close(fd);
		tr_stop();
	}
}


/* Randomized: several connections, chunked writes, half-closes, full turns. */
static void
test_random_mix(void)
{
	enum { NC = 8, MAXCALLS = 300 };
	static uint8_t out[NC][MAXCALLS * 80], acc[NC][65536];
	size_t outlen[NC], sent[NC], acclen[NC];
	unsigned want[NC], got[NC], iter, seed;
	int fd[NC], shut[NC], c, bad = 0;

	for (seed = 1; seed <= 200; seed++) {
		srand(seed);
		tr_start(0, (uint64_t)(rand() % 3));
		for (c = 0; c < NC; c++) {
			unsigned i;

			fd[c] = tr_connect();
			outlen[c] = sent[c] = acclen[c] = 0;
			got[c] = 0;
			shut[c] = 0;
			want[c] = (unsigned)(rand() % MAXCALLS);
			for (i = 0; i < want[c]; i++) {
				uint8_t b[40];
				int nf = 1 + rand() % 3, f;
				size_t bl = tr_body(b), o = 0;

				for (f = 0; f < nf; f++) {
					size_t fl = f == nf - 1 ? bl - o :
					    (size_t)(rand() % (int)(bl - o + 1));
					uint32_t m = htonl((f == nf - 1 ?
					    0x80000000u : 0) | (uint32_t)fl);

					memcpy(out[c] + outlen[c], &m, 4);
					outlen[c] += 4;
					memcpy(out[c] + outlen[c], b + o, fl);
					outlen[c] += fl;
					o += fl;
				}
			}
		}
		for (iter = 0; iter < 20000; iter++) {
			int done = 1;

			for (c = 0; c < NC; c++) {
				if (sent[c] < outlen[c]) {
					size_t k = 1 + (size_t)(rand() % 300);
					ssize_t w;

					if (k > outlen[c] - sent[c])
						k = outlen[c] - sent[c];
					w = send(fd[c], out[c] + sent[c], k,
					    MSG_DONTWAIT | MSG_NOSIGNAL);
					if (w > 0)
						sent[c] += (size_t)w;
				} else if (!shut[c] && rand() % 2) {
					shutdown(fd[c], SHUT_WR);
					shut[c] = 1;
				}
				got[c] += tr_replies(fd[c], acc[c],
				    sizeof(acc[c]), &acclen[c]);
				if (got[c] < want[c])
					done = 0;
			}
			tr.fill = rand() % 4 == 0;
			(void)ev_run_once(tr.loop, 0);
			if (done && iter > 50)
				break;
		}
		for (c = 0; c < NC; c++) {
			if (got[c] != want[c]) {
				const struct onc_conn *co;

				bad++;
				printf("\n    seed %u conn %d: %u of %u replies "
				    "(sent %zu/%zu shut %d) ", seed, c, got[c],
				    want[c], sent[c], outlen[c], shut[c]);
				for (co = tr.rs->rs_conns; co; co = co->co_next)
					printf("\n      co fd %d inlen %zu held %d "
					    "eof %d out %zu/%zu/%zu marks %zu",
					    co->co_fd, co->co_inlen,
					    co->co_held, co->co_eof,
					    co->co_outoff, co->co_safe,
					    co->co_outlen, co->co_nmarks);
			}
			close(fd[c]);
		}
		tr_stop();
		if (bad)
			break;
	}
	CU_ASSERT_EQUAL(bad, 0);
}


/* Chaos: abrupt resets, idle sweeps, varying commit lag, small queues. */
static void
test_chaos(void)
{
	enum { NC = 12, MAXCALLS = 200 };
	static uint8_t out[NC][MAXCALLS * 80], acc[NC][65536];
	size_t outlen[NC], sent[NC], acclen[NC];
	unsigned want[NC], got[NC], iter, seed;
	int fd[NC], shut[NC], dead[NC], c, bad = 0;

	for (seed = 1; seed <= 300; seed++) {
		srand(seed * 7919);
		tr_start(rand() % 2 ? 0 : 2048 + (size_t)(rand() % 8192),
		    (uint64_t)(rand() % 4));
		for (c = 0; c < NC; c++) {
			unsigned i;

			fd[c] = tr_connect();
			outlen[c] = sent[c] = acclen[c] = 0;
			got[c] = 0;
			shut[c] = dead[c] = 0;
			want[c] = (unsigned)(rand() % MAXCALLS);
			for (i = 0; i < want[c]; i++)
				outlen[c] += tr_call(out[c] + outlen[c]);
		}
		for (iter = 0; iter < 3000; iter++) {
			for (c = 0; c < NC; c++) {
				if (dead[c])
					continue;
				if (rand() % 500 == 0) {
					struct linger l = { 1, 0 };

					setsockopt(fd[c], SOL_SOCKET,
					    SO_LINGER, &l, sizeof(l));
					close(fd[c]);
					dead[c] = 1;
					continue;
				}
				if (sent[c] < outlen[c]) {
					size_t k = 1 + (size_t)(rand() % 500);
					ssize_t w;

					if (k > outlen[c] - sent[c])
						k = outlen[c] - sent[c];
					w = send(fd[c], out[c] + sent[c], k,
					    MSG_DONTWAIT | MSG_NOSIGNAL);
					if (w > 0)
						sent[c] += (size_t)w;
				} else if (!shut[c] && rand() % 3 == 0) {
					shutdown(fd[c], SHUT_WR);
					shut[c] = 1;
				}
				if (rand() % 3)
					got[c] += tr_replies(fd[c], acc[c],
					    sizeof(acc[c]), &acclen[c]);
			}
			tr.fill = rand() % 3 == 0;
			if (rand() % 200 == 0)
				tr.ms += 600 * 1000 + SWEEP_MS + 1;
			if (rand() % 50 == 0)
				tr.lag = rand() % 2 ? 0 : 1000000;
			else if (tr.lag == 1000000 && rand() % 10 == 0)
				tr.lag = 0;
			(void)ev_run_once(tr.loop, 0);
		}
		tr.lag = 0;
		for (iter = 0; iter < 200; iter++) {
			for (c = 0; c < NC; c++)
				if (!dead[c])
					got[c] += tr_replies(fd[c], acc[c],
					    sizeof(acc[c]), &acclen[c]);
			(void)ev_run_once(tr.loop, 0);
		}
		for (c = 0; c < NC; c++)
			if (!dead[c]) {
				got[c] += tr_replies(fd[c], acc[c],
				    sizeof(acc[c]), &acclen[c]);
				close(fd[c]);
			}
		/* Never a reply twice (a connection may lose some). */
		for (c = 0; c < NC; c++)
			if (got[c] > want[c]) {
				bad++;
				printf("\n    seed %u conn %d: %u replies to %u "
				    "calls ", seed, c, got[c], want[c]);
			}
		/* Every client gone: no connection left behind. */
		for (iter = 0; iter < 50 && tr.rs->rs_conns != NULL; iter++)
			(void)ev_run_once(tr.loop, 0);
		if (tr.rs->rs_conns != NULL) {
			bad++;
			printf("\n    seed %u: connections left ", seed);
		}
		tr_stop();
		if (bad)
			break;
	}
	CU_ASSERT_EQUAL(bad, 0);
}

int
ts_register_transport_random(void)
{
	CU_pSuite s = CU_add_suite("transport: random", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "bytewise multi-fragment", test_bytewise) == NULL ||
	    CU_add_test(s, "pipeline then half-close", test_pipeline_halfclose)
	    == NULL ||
	    CU_add_test(s, "random mix", test_random_mix) == NULL ||
	    CU_add_test(s, "resets, sweeps, stalled commits", test_chaos) == NULL)
		return -1;
	return 0;
}
