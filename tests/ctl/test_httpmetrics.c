/*
 * test_httpmetrics.c - the Prometheus endpoint (ctl/httpmetrics.c):
 * libmicrohttpd driven by a real event loop, spoken to in HTTP over TCP
 * on loopback as a scraper would.
 *
 * What libmicrohttpd 0.9.75 (Debian 12) does at the limits, found by
 * trying: a fifth connection from one address is accepted and closed at
 * once, unanswered; a seventeenth connection is not accepted at all (it
 * waits in the listener's backlog) until a place is given back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"

#include "ev.h"
#include "httpmetrics.h"
#include "sbuf.h"

int	ctl_register_httpmetrics(void);

#define HMT_BODY	"nlmd_up 1\nnlmd_locks 3\n"
#define HMT_TYPE	"Content-Type: text/plain; version=0.0.4; charset=utf-8"

/* The test's endpoint: a loop, the server, what its callback saw. */
struct hmt {
	struct ev_loop		*loop;
	struct http_metrics	*hm;
	unsigned		 port;
	unsigned		 calls;	/* of the callback */
	bool			 fail;	/* the callback runs out of memory */
};

static void
hmt_fill(struct sbuf *sb, void *arg)
{
	struct hmt *t = arg;

	t->calls++;
	sbuf_printf(sb, "%s", HMT_BODY);
	if (t->fail)
		sb->sb_failed = true;
}

static void
hmt_start(struct hmt *t, const char *addr)
{
	char err[256];

	memset(t, 0, sizeof(*t));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t->loop = ev_loop_new());
	err[0] = '\0';
	t->hm = http_metrics_new(t->loop, addr, hmt_fill, t, err,
	    sizeof(err));
	if (t->hm == NULL)
		printf("\n    %s: %s ", addr, err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t->hm);
	t->port = http_metrics_port(t->hm);
	CU_ASSERT_FATAL(t->port != 0);
}

static void
hmt_stop(struct hmt *t)
{
	http_metrics_free(t->hm);
	ev_loop_free(t->loop);
}

/* An IPv4 or IPv6 literal and a port as a socket address. */
static socklen_t
hmt_addr(const char *host, unsigned port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(host, ':') != NULL) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		CU_ASSERT_FATAL(inet_pton(AF_INET6, host, &s6->sin6_addr) == 1);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	CU_ASSERT_FATAL(inet_pton(AF_INET, host, &s4->sin_addr) == 1);
	return sizeof(*s4);
}

/*
 * A connection to host at the endpoint's port, from `from' (NULL: the
 * kernel's choice).  -1 with errno when refused.
 */
static int
hmt_dial_from(const struct hmt *t, const char *host, const char *from)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	len = hmt_addr(host, t->port, &ss);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd != -1);
	if (from != NULL) {
		struct sockaddr_storage src;
		socklen_t slen = hmt_addr(from, 0, &src);

		CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&src, slen) == 0);
	}
	if (connect(fd, (struct sockaddr *)&ss, len) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int
hmt_dial(const struct hmt *t, const char *host)
{
	int fd = hmt_dial_from(t, host, NULL);

	CU_ASSERT_FATAL(fd != -1);
	return fd;
}

static void
hmt_send(int fd, const char *text)
{
	size_t len = strlen(text);

	CU_ASSERT_FATAL(send(fd, text, len, MSG_NOSIGNAL) == (ssize_t)len);
}

/* Turns of the loop for `ms' milliseconds. */
static void
hmt_turns(struct hmt *t, unsigned ms)
{
	unsigned long long t0 = tests_now_ms();

	while (tests_now_ms() - t0 < ms)
		(void)ev_run_once(t->loop, 5);
}

/* Turns of ev_run_once(loop, 50) in `ms' milliseconds. */
static unsigned
hmt_count_turns(struct hmt *t, unsigned ms)
{
	unsigned long long t0 = tests_now_ms();
	unsigned turns = 0;

	while (tests_now_ms() - t0 < ms) {
		(void)ev_run_once(t->loop, 50);
		turns++;
	}
	return turns;
}

/* Whole answers at the start of buf: headers, Content-Length of body. */
static int
hmt_complete(const char *buf, size_t len)
{
	const char *p = buf, *eoh, *cl;
	int n = 0;

	while ((eoh = memmem(p, len - (size_t)(p - buf), "\r\n\r\n", 4)) !=
	    NULL) {
		unsigned long body = 0;

		cl = memmem(p, (size_t)(eoh - p), "\r\nContent-Length: ", 18);
		if (cl != NULL)
			body = strtoul(cl + 18, NULL, 10);
		if ((size_t)(eoh + 4 - buf) + body > len)
			break;
		p = eoh + 4 + body;
		n++;
	}
	return n;
}

/*
 * Serve until fd has received `n' whole answers (0: until the server
 * closes), or `ms' passed.  What came is in buf, NUL-terminated; the
 * length is returned; *closed says whether the server closed (an end of
 * stream or a reset).
 */
static size_t
hmt_read(struct hmt *t, int fd, int n, unsigned ms, char *buf, size_t cap,
    bool *closed)
{
	unsigned long long t0 = tests_now_ms();
	size_t got = 0;
	ssize_t r;

	*closed = false;
	while (tests_now_ms() - t0 < ms) {
		(void)ev_run_once(t->loop, 5);
		while ((r = recv(fd, buf + got, cap - 1 - got,
		    MSG_DONTWAIT)) > 0)
			got += (size_t)r;
		if (r == 0 || (r == -1 && errno != EAGAIN)) {
			*closed = true;
			break;
		}
		if (n > 0 && hmt_complete(buf, got) >= n)
			break;
	}
	buf[got] = '\0';
	return got;
}

/* The status of the answer at buf (0: not an HTTP answer). */
static int
hmt_status(const char *buf)
{
	if (strncmp(buf, "HTTP/1.1 ", 9) != 0 || buf[9] < '1' || buf[9] > '5')
		return 0;
	return atoi(buf + 9);
}

/* The body of the answer at buf ("" when it has none). */
static const char *
hmt_body(const char *buf)
{
	const char *p = strstr(buf, "\r\n\r\n");

	return p != NULL ? p + 4 : "";
}

/*
 * `method' `url' on a connection of its own to host (which it closes after
 * the answer): the status; the whole answer in ans.
 */
static int
hmt_ask_at(struct hmt *t, const char *host, const char *method,
    const char *url, char *ans, size_t cap)
{
	char req[256];
	bool closed;
	int fd;

	fd = hmt_dial(t, host);
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: test\r\n"
	    "Connection: close\r\n\r\n", method, url);
	hmt_send(fd, req);
	(void)hmt_read(t, fd, 0, 1000, ans, cap, &closed);
	close(fd);
	CU_ASSERT(closed);
	return hmt_status(ans);
}

static int
hmt_ask(struct hmt *t, const char *method, const char *url, char *ans,
    size_t cap)
{
	return hmt_ask_at(t, "127.0.0.1", method, url, ans, cap);
}

#define HMT_GET	"GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n"

static void
test_get(void)
{
	struct hmt t;
	char ans[2048];

	hmt_start(&t, "127.0.0.1:0");
	CU_ASSERT_EQUAL(hmt_ask(&t, "GET", "/metrics", ans, sizeof(ans)),
	    200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	CU_ASSERT_PTR_NOT_NULL(strstr(ans, "\r\n" HMT_TYPE "\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ans, "\r\nContent-Length: 23\r\n"));
	CU_ASSERT_EQUAL(t.calls, 1);
	/* The query is not part of the path. */
	CU_ASSERT_EQUAL(hmt_ask(&t, "GET", "/metrics?x=1", ans, sizeof(ans)),
	    200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	hmt_stop(&t);
}

static void
test_head(void)
{
	struct hmt t;
	char ans[2048];

	hmt_start(&t, "127.0.0.1:0");
	CU_ASSERT_EQUAL(hmt_ask(&t, "HEAD", "/metrics", ans, sizeof(ans)),
	    200);
	/* The length the body would have; no body. */
	CU_ASSERT_PTR_NOT_NULL(strstr(ans, "\r\nContent-Length: 23\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ans, "\r\n" HMT_TYPE "\r\n"));
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), "");
	hmt_stop(&t);
}

static void
test_not_found(void)
{
	static const char *const urls[] = {
		"/", "/metric", "/metricsx", "/metrics/", "/metrics/x",
		"/Metrics", "//metrics", "/x/metrics",
	};
	struct hmt t;
	char ans[2048];
	size_t i;

	hmt_start(&t, "127.0.0.1:0");
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		CU_ASSERT_EQUAL(hmt_ask(&t, "GET", urls[i], ans, sizeof(ans)),
		    404);
		CU_ASSERT_STRING_EQUAL(hmt_body(ans),
		    "nothing here; see /metrics\n");
		CU_ASSERT_EQUAL(hmt_ask(&t, "HEAD", urls[i], ans,
		    sizeof(ans)), 404);
	}
	CU_ASSERT_EQUAL(t.calls, 0);
	hmt_stop(&t);
}

static void
test_not_allowed(void)
{
	static const char *const methods[] = {
		"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "get", "BREW",
	};
	struct hmt t;
	char ans[2048];
	size_t i;

	hmt_start(&t, "127.0.0.1:0");
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		CU_ASSERT_EQUAL(hmt_ask(&t, methods[i], "/metrics", ans,
		    sizeof(ans)), 405);
		CU_ASSERT_STRING_EQUAL(hmt_body(ans), "only GET /metrics\n");
		/* RFC 9110, 15.5.6: a 405 names the methods allowed. */
		CU_ASSERT_PTR_NOT_NULL(strstr(ans, "\r\nAllow: GET, HEAD\r\n"));
		/* Whatever the path. */
		CU_ASSERT_EQUAL(hmt_ask(&t, methods[i], "/other", ans,
		    sizeof(ans)), 405);
	}
	CU_ASSERT_EQUAL(t.calls, 0);
	hmt_stop(&t);
}

static void
test_out_of_memory(void)
{
	struct hmt t;
	char ans[2048];

	hmt_start(&t, "127.0.0.1:0");
	t.fail = true;
	CU_ASSERT_EQUAL(hmt_ask(&t, "GET", "/metrics", ans, sizeof(ans)),
	    500);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), "out of memory\n");
	CU_ASSERT_PTR_NULL(strstr(ans, HMT_TYPE));
	/* Only that answer: the next one is whole again. */
	t.fail = false;
	CU_ASSERT_EQUAL(hmt_ask(&t, "GET", "/metrics", ans, sizeof(ans)),
	    200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	CU_ASSERT_EQUAL(t.calls, 2);
	hmt_stop(&t);
}

static void
test_keep_alive(void)
{
	struct hmt t;
	char ans[4096];
	bool closed;
	int fd;

	hmt_start(&t, "127.0.0.1:0");
	fd = hmt_dial(&t, "127.0.0.1");
	hmt_send(fd, HMT_GET);
	(void)hmt_read(&t, fd, 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT(!closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	/* The same connection, again. */
	hmt_send(fd, HMT_GET);
	(void)hmt_read(&t, fd, 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT(!closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	/* A body with a GET is read and dropped; the connection stays. */
	hmt_send(fd, "GET /metrics HTTP/1.1\r\nHost: test\r\n"
	    "Content-Length: 5\r\n\r\nhello");
	(void)hmt_read(&t, fd, 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT(!closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	hmt_send(fd, HMT_GET);
	(void)hmt_read(&t, fd, 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT_EQUAL(t.calls, 4);
	close(fd);
	hmt_stop(&t);
}

/*
 * Two requests in one segment: libmicrohttpd answers the first, keeps the
 * second in its buffer and asks (MHD_get_timeout() 0) to be run again,
 * as no descriptor becomes ready for it.
 */
static void
test_pipelined(void)
{
	struct hmt t;
	char ans[4096];
	bool closed;
	int fd;

	hmt_start(&t, "127.0.0.1:0");
	fd = hmt_dial(&t, "127.0.0.1");
	hmt_send(fd, HMT_GET HMT_GET);
	(void)hmt_read(&t, fd, 2, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT(!closed);
	CU_ASSERT_EQUAL(hmt_complete(ans, strlen(ans)), 2);
	CU_ASSERT_EQUAL(t.calls, 2);
	close(fd);
	hmt_stop(&t);
}

static void
test_split(void)
{
	static const char *const parts[] = {
		"G", "ET /met", "rics HTTP/1.", "1\r\nHo", "st: test\r", "\n",
		"Connection: close\r\n\r", "\n",
	};
	struct hmt t;
	char ans[2048];
	bool closed;
	size_t i;
	int fd;

	hmt_start(&t, "127.0.0.1:0");
	fd = hmt_dial(&t, "127.0.0.1");
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		hmt_send(fd, parts[i]);
		(void)hmt_read(&t, fd, 1, 10, ans, sizeof(ans), &closed);
		if (i + 1 < sizeof(parts) / sizeof(parts[0])) {
			/* Nothing before the request is whole. */
			CU_ASSERT_STRING_EQUAL(ans, "");
			CU_ASSERT(!closed);
		}
	}
	if (ans[0] == '\0')
		(void)hmt_read(&t, fd, 0, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	CU_ASSERT_EQUAL(t.calls, 1);
	close(fd);
	hmt_stop(&t);
}

/* A fifth connection from one address is closed unanswered. */
static void
test_per_address(void)
{
	struct hmt t;
	char ans[2048];
	bool closed;
	int fd[5], other, i;

	hmt_start(&t, "127.0.0.1:0");
	for (i = 0; i < 4; i++)
		fd[i] = hmt_dial(&t, "127.0.0.1");
	hmt_turns(&t, 20);
	fd[4] = hmt_dial(&t, "127.0.0.1");
	CU_ASSERT_EQUAL(hmt_read(&t, fd[4], 0, 1000, ans, sizeof(ans),
	    &closed), 0);
	CU_ASSERT(closed);
	close(fd[4]);
	/* The four are served... */
	for (i = 0; i < 4; i++) {
		hmt_send(fd[i], HMT_GET);
		(void)hmt_read(&t, fd[i], 1, 1000, ans, sizeof(ans), &closed);
		CU_ASSERT_EQUAL(hmt_status(ans), 200);
		CU_ASSERT(!closed);
	}
	/* ... and so is another address meanwhile. */
	other = hmt_dial_from(&t, "127.0.0.1", "127.0.0.2");
	CU_ASSERT_FATAL(other != -1);
	hmt_send(other, HMT_GET);
	(void)hmt_read(&t, other, 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	close(other);
	/* A place given back is taken again. */
	close(fd[0]);
	hmt_turns(&t, 20);
	fd[0] = hmt_dial(&t, "127.0.0.1");
	hmt_send(fd[0], HMT_GET);
	(void)hmt_read(&t, fd[0], 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	for (i = 0; i < 4; i++)
		close(fd[i]);
	hmt_stop(&t);
}

/*
 * Sixteen connections from four addresses: a seventeenth waits, not
 * accepted, until one of them goes.
 */
static void
test_all_places(void)
{
	struct hmt t;
	char ans[2048], from[32];
	bool closed;
	int fd[16], last, i;

	hmt_start(&t, "127.0.0.1:0");
	for (i = 0; i < 16; i++) {
		snprintf(from, sizeof(from), "127.0.0.%d", 1 + i / 4);
		fd[i] = hmt_dial_from(&t, "127.0.0.1", from);
		CU_ASSERT_FATAL(fd[i] != -1);
	}
	hmt_turns(&t, 20);
	last = hmt_dial_from(&t, "127.0.0.1", "127.0.0.5");
	CU_ASSERT_FATAL(last != -1);
	hmt_send(last, HMT_GET);
	CU_ASSERT_EQUAL(hmt_read(&t, last, 1, 100, ans, sizeof(ans),
	    &closed), 0);
	CU_ASSERT(!closed);
	/* Full, with nothing to do: the loop sleeps. */
	CU_ASSERT(hmt_count_turns(&t, 100) < 10);
	/* The sixteen are served meanwhile. */
	hmt_send(fd[15], HMT_GET);
	(void)hmt_read(&t, fd[15], 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT(!closed);
	/* A place given back: the one waiting gets its answer. */
	close(fd[0]);
	(void)hmt_read(&t, last, 1, 1000, ans, sizeof(ans), &closed);
	CU_ASSERT_EQUAL(hmt_status(ans), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	close(last);
	for (i = 1; i < 16; i++)
		close(fd[i]);
	hmt_stop(&t);
}

static void
test_check(void)
{
	static const char *const good[] = {
		"127.0.0.1:9464", "0.0.0.0:0", "[::1]:0", "[::]:65535", ":80",
		"[fe80::1]:9464",
	};
	static const char *const bad[] = {
		"", ":", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x",
		"127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1: 80",
		"127.0.0.1:80x", "localhost:80", "::1:80", "[::1]80",
		"[::1:80", "[127.0.0.1]:80", "1.2.3:80", "[]:80",
	};
	char err[256], want[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CU_ASSERT_EQUAL(http_metrics_check(good[i], err, sizeof(err)),
		    0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(http_metrics_check(bad[i], err, sizeof(err)),
		    -1);
		snprintf(want, sizeof(want), "metrics-address %s: not "
		    "ADDRESS:PORT", bad[i]);
		CU_ASSERT_STRING_EQUAL(err, want);
	}
}

static void
test_refused(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct ev_loop *loop;
	char addr[64], err[256], want[256];
	socklen_t len;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(loop = ev_loop_new());
	/* Not an address. */
	CU_ASSERT_PTR_NULL(http_metrics_new(loop, "127.0.0.1:x", hmt_fill,
	    NULL, err, sizeof(err)));
	CU_ASSERT_STRING_EQUAL(err,
	    "metrics-address 127.0.0.1:x: not ADDRESS:PORT");
	/* A port another socket listens on. */
	len = hmt_addr("127.0.0.1", 0, &ss);
	CU_ASSERT_FATAL((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) != -1);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&ss, len) == 0);
	CU_ASSERT_FATAL(listen(fd, 1) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&ss, &len) == 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(s4->sin_port));
	CU_ASSERT_PTR_NULL(http_metrics_new(loop, addr, hmt_fill, NULL, err,
	    sizeof(err)));
	snprintf(want, sizeof(want), "metrics-address %s: cannot listen (in "
	    "use, or not an address of this host)", addr);
	CU_ASSERT_STRING_EQUAL(err, want);
	close(fd);
	/* Not an address of this host (TEST-NET-1). */
	CU_ASSERT_PTR_NULL(http_metrics_new(loop, "192.0.2.1:0", hmt_fill,
	    NULL, err, sizeof(err)));
	CU_ASSERT_STRING_EQUAL(err, "metrics-address 192.0.2.1:0: cannot "
	    "listen (in use, or not an address of this host)");
	ev_loop_free(loop);
}

static uint64_t hmt_clock_ms;

static uint64_t
hmt_clock(void)
{
	return hmt_clock_ms;
}

/*
 * The listener goes with the endpoint, and its connections; nothing of
 * it stays in the loop: not its timer (armed for the idle connection's
 * timeout, it would run the freed endpoint when due), not its descriptor
 * (a new endpoint on the same loop is served).
 */
static void
test_free(void)
{
	struct hmt t;
	char ans[2048], err[256];
	ssize_t n;
	int fd, idle;

	hmt_start(&t, "127.0.0.1:0");
	idle = hmt_dial(&t, "127.0.0.1");
	hmt_turns(&t, 20);
	http_metrics_free(t.hm);
	http_metrics_free(NULL);
	fd = hmt_dial_from(&t, "127.0.0.1", NULL);
	CU_ASSERT_EQUAL(fd, -1);
	CU_ASSERT_EQUAL(errno, ECONNREFUSED);
	if (fd != -1)
		close(fd);
	n = recv(idle, ans, sizeof(ans), MSG_DONTWAIT);
	CU_ASSERT(n == 0 || (n == -1 && errno == ECONNRESET));
	close(idle);
	hmt_clock_ms = ev_now_ms() + 60000;
	ev_set_clock(hmt_clock);
	(void)ev_run_once(t.loop, 0);
	ev_set_clock(NULL);
	t.hm = http_metrics_new(t.loop, "127.0.0.1:0", hmt_fill, &t, err,
	    sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t.hm);
	t.port = http_metrics_port(t.hm);
	CU_ASSERT_EQUAL(hmt_ask(&t, "GET", "/metrics", ans, sizeof(ans)),
	    200);
	hmt_stop(&t);
}

/* Has this host IPv6, with ::1 on loopback? */
static bool
hmt_has_ipv6(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool ok;
	int fd;

	if ((fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return false;
	len = hmt_addr("::1", 0, &ss);
	ok = bind(fd, (struct sockaddr *)&ss, len) == 0;
	close(fd);
	return ok;
}

static void
test_ipv6(void)
{
	struct hmt t;
	char ans[2048];

	if (!hmt_has_ipv6()) {
		tests_skip("no IPv6 on this host (or no ::1)");
		return;
	}
	hmt_start(&t, "[::1]:0");
	CU_ASSERT_EQUAL(hmt_ask_at(&t, "::1", "GET", "/metrics", ans,
	    sizeof(ans)), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	CU_ASSERT_EQUAL(hmt_dial_from(&t, "127.0.0.1", NULL), -1);
	hmt_stop(&t);
	/* An explicit [::] stays IPv6's. */
	hmt_start(&t, "[::]:0");
	CU_ASSERT_EQUAL(hmt_ask_at(&t, "::1", "GET", "/metrics", ans,
	    sizeof(ans)), 200);
	CU_ASSERT_EQUAL(hmt_dial_from(&t, "127.0.0.1", NULL), -1);
	CU_ASSERT_EQUAL(errno, ECONNREFUSED);
	hmt_stop(&t);
}

/* ":PORT" is every address of both families. */
static void
test_any(void)
{
	struct hmt t;
	char ans[2048];

	if (!hmt_has_ipv6()) {
		tests_skip("no IPv6 on this host (or no ::1)");
		return;
	}
	hmt_start(&t, ":0");
	CU_ASSERT_EQUAL(hmt_ask_at(&t, "127.0.0.1", "GET", "/metrics", ans,
	    sizeof(ans)), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	CU_ASSERT_EQUAL(hmt_ask_at(&t, "::1", "GET", "/metrics", ans,
	    sizeof(ans)), 200);
	CU_ASSERT_STRING_EQUAL(hmt_body(ans), HMT_BODY);
	hmt_stop(&t);
}

/*
 * ":PORT" whose IPv6 side another socket holds: refused, not served on
 * IPv4 alone -- the IPv4 fallback is for a host without IPv6.
 */
static void
test_any_ipv6_taken(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct ev_loop *loop;
	struct http_metrics *hm;
	char addr[32], err[256], want[256];
	socklen_t len;
	int fd, on = 1;

	if (!hmt_has_ipv6()) {
		tests_skip("no IPv6 on this host (or no ::1)");
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(loop = ev_loop_new());
	len = hmt_addr("::", 0, &ss);
	CU_ASSERT_FATAL((fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) != -1);
	CU_ASSERT_FATAL(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
	    sizeof(on)) == 0);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&ss, len) == 0);
	CU_ASSERT_FATAL(listen(fd, 1) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&ss, &len) == 0);
	snprintf(addr, sizeof(addr), ":%u", ntohs(s6->sin6_port));
	hm = http_metrics_new(loop, addr, hmt_fill, NULL, err, sizeof(err));
	CU_ASSERT_PTR_NULL(hm);
	snprintf(want, sizeof(want), "metrics-address %s: cannot listen (in "
	    "use, or not an address of this host)", addr);
	CU_ASSERT_STRING_EQUAL(err, want);
	http_metrics_free(hm);
	close(fd);
	ev_loop_free(loop);
}

int
ctl_register_httpmetrics(void)
{
	CU_pSuite s = CU_add_suite("metrics over HTTP", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "GET /metrics: 200, the text, its type",
	    test_get) == NULL ||
	    CU_add_test(s, "HEAD /metrics: the headers only", test_head) ==
	    NULL ||
	    CU_add_test(s, "another path: 404", test_not_found) == NULL ||
	    CU_add_test(s, "another method: 405", test_not_allowed) == NULL ||
	    CU_add_test(s, "the callback out of memory: 500",
	    test_out_of_memory) == NULL ||
	    CU_add_test(s, "two requests on one connection",
	    test_keep_alive) == NULL ||
	    CU_add_test(s, "two requests in one segment", test_pipelined) ==
	    NULL ||
	    CU_add_test(s, "a request in pieces", test_split) == NULL ||
	    CU_add_test(s, "four connections from one address",
	    test_per_address) == NULL ||
	    CU_add_test(s, "sixteen connections, then one waits",
	    test_all_places) == NULL ||
	    CU_add_test(s, "addresses refused by the check", test_check) ==
	    NULL ||
	    CU_add_test(s, "a port in use, an address not ours",
	    test_refused) == NULL ||
	    CU_add_test(s, "freed: the listener is closed", test_free) ==
	    NULL ||
	    CU_add_test(s, "IPv6: [::1] and [::]", test_ipv6) == NULL ||
	    CU_add_test(s, "':PORT' is both families", test_any) == NULL ||
	    CU_add_test(s, "':PORT' with IPv6's port taken is refused",
	    test_any_ipv6_taken) == NULL)
		return -1;
	return 0;
}
