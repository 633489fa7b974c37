/*
 * libnfs_flows.c - the key NLM flows driven through libnfs's NLM client,
 * whose XDR (libnfs-raw-nlm.h, ZDR) is independent of ours.
 *
 *   libnfs_flows SERVER [main|hold|reclaim [SECONDS]]
 *
 * Two libnfs contexts play two client hosts (two caller_names; same source
 * address).  Each finds nlmd through the server's rpcbind and talks NLMv4
 * over TCP.  Flows: lock, conflicting lock, TEST with holder, unlock,
 * blocked lock then unlock by the holder, re-sent LOCK granted; CANCEL of
 * a waiter and of nothing.  Around a restart of nlmd (grace): "hold" takes
 * locks and leaves them; after the restart "reclaim" checks that a new
 * conflicting LOCK is told DENIED_GRACE_PERIOD, a free one is granted, one
 * owner's reclaim (reclaim = TRUE, encoded by libnfs) is granted, and so
 * is the other's plain LOCK over its own stored lock (asked again, as by a
 * client whose answer was lost in the crash).
 * A call whose reply has not come after SECONDS (default 5) fails; a
 * caller that makes nlmd's replies wait on purpose (test_stall.sh's
 * frozen disk) gives them longer.
 * Output: PASS/FAIL lines and a final "libnfs: N passed, M failed".
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nlm.h>

static int npass, nfail;
static uint64_t call_limit_ms = 5000;	/* a call's wait for its reply */

static void
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

/* What a callback leaves for the waiting caller. */
struct call {
	bool		 done;
	int		 rpc_status;
	int		 stat;
	uint32_t	 cookie;	/* as echoed */
	unsigned	 cookielen;
	bool		 hexcl;		/* TEST holder */
	unsigned	 hsvid;
	uint64_t	 hoff;
	uint64_t	 hlen;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Drive the context until the call completes (call_limit_ms at most). */
static bool
run(struct rpc_context *rpc, struct call *c)
{
	uint64_t t0 = now_ms();
	struct pollfd p;

	while (!c->done) {
		if (now_ms() - t0 > call_limit_ms)
			return false;
		p.fd = rpc_get_fd(rpc);
		p.events = (short)rpc_which_events(rpc);
		p.revents = 0;
		if (poll(&p, 1, 100) < 0)
			return false;
		if (rpc_service(rpc, p.revents) < 0)
			return false;
	}
	return c->rpc_status == RPC_STATUS_SUCCESS;
}

static void
cookie_from(struct call *c, const nlm_cookie *ck)
{
	c->cookielen = ck->data.data_len;
	c->cookie = 0;
	if (ck->data.data_len == 4)
		memcpy(&c->cookie, ck->data.data_val, 4);
}

static void
connect_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct call *c = priv;

	(void)rpc;
	(void)data;
	c->rpc_status = status;
	c->done = true;
}

static void
null_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	connect_cb(rpc, status, data, priv);
}

static void
lock_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct call *c = priv;
	NLM4_LOCKres *r = data;

	(void)rpc;
	c->rpc_status = status;
	if (status == RPC_STATUS_SUCCESS) {
		c->stat = r->status;
		cookie_from(c, &r->cookie);
	}
	c->done = true;
}

static void
unlock_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct call *c = priv;
	NLM4_UNLOCKres *r = data;

	(void)rpc;
	c->rpc_status = status;
	if (status == RPC_STATUS_SUCCESS) {
		c->stat = r->status;
		cookie_from(c, &r->cookie);
	}
	c->done = true;
}

static void
cancel_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct call *c = priv;
	NLM4_CANCres *r = data;

	(void)rpc;
	c->rpc_status = status;
	if (status == RPC_STATUS_SUCCESS) {
		c->stat = r->status;
		cookie_from(c, &r->cookie);
	}
	c->done = true;
}

static void
test_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct call *c = priv;
	NLM4_TESTres *r = data;

	(void)rpc;
	c->rpc_status = status;
	if (status == RPC_STATUS_SUCCESS) {
		c->stat = r->reply.status;
		cookie_from(c, &r->cookie);
		if (r->reply.status == NLM4_DENIED) {
			nlm4_holder *h = &r->reply.nlm4_testreply_u.lock.holder;

			c->hexcl = h->exclusive;
			c->hsvid = h->svid;
			c->hoff = h->l_offset;
			c->hlen = h->l_len;
		}
	}
	c->done = true;
}

/* One client host: a libnfs context and its lock owner. */
struct host {
	struct rpc_context	*rpc;
	char			*name;
	char			*oh;
	unsigned		 svid;
	uint32_t		 cookie;
};

static char fh_bytes[] = "libnfs-file-handle";

static void
fill_lock(struct host *h, nlm4_lock *l, uint64_t off, uint64_t len)
{
	memset(l, 0, sizeof(*l));
	l->caller_name = h->name;
	l->fh.data.data_len = sizeof(fh_bytes) - 1;
	l->fh.data.data_val = fh_bytes;
	l->oh = h->oh;
	l->svid = h->svid;
	l->l_offset = off;
	l->l_len = len;
}

static void
fill_cookie(struct host *h, nlm_cookie *ck)
{
	h->cookie++;
	ck->data.data_len = 4;
	ck->data.data_val = (char *)&h->cookie;
}

static bool cookies_ok = true;

static int
finish(struct host *h, struct call *c, const char *what)
{
	if (!run(h->rpc, c)) {
		check(false, "%s: RPC failed (%s)", what,
		    rpc_get_error(h->rpc));
		return -1;
	}
	if (c->cookielen != 4 || c->cookie != h->cookie)
		cookies_ok = false;
	return c->stat;
}

static int
do_lock_r(struct host *h, bool block, bool reclaim, uint64_t off,
    uint64_t len)
{
	struct call c = { 0 };
	NLM4_LOCKargs a;

	memset(&a, 0, sizeof(a));
	fill_cookie(h, &a.cookie);
	a.block = block;
	a.exclusive = 1;
	a.reclaim = reclaim;
	fill_lock(h, &a.lock, off, len);
	a.state = 1;
	if (rpc_nlm4_lock_async(h->rpc, lock_cb, &a, &c) != 0)
		return -1;
	return finish(h, &c, "LOCK");
}

static int
do_lock(struct host *h, bool block, uint64_t off, uint64_t len)
{
	return do_lock_r(h, block, false, off, len);
}

static int
do_unlock(struct host *h, uint64_t off, uint64_t len)
{
	struct call c = { 0 };
	NLM4_UNLOCKargs a;

	memset(&a, 0, sizeof(a));
	fill_cookie(h, &a.cookie);
	fill_lock(h, &a.lock, off, len);
	if (rpc_nlm4_unlock_async(h->rpc, unlock_cb, &a, &c) != 0)
		return -1;
	return finish(h, &c, "UNLOCK");
}

static int
do_cancel(struct host *h, uint64_t off, uint64_t len)
{
	struct call c = { 0 };
	NLM4_CANCargs a;

	memset(&a, 0, sizeof(a));
	fill_cookie(h, &a.cookie);
	a.block = 1;
	a.exclusive = 1;
	fill_lock(h, &a.lock, off, len);
	if (rpc_nlm4_cancel_async(h->rpc, cancel_cb, &a, &c) != 0)
		return -1;
	return finish(h, &c, "CANCEL");
}

static int
do_test(struct host *h, uint64_t off, uint64_t len, struct call *c)
{
	NLM4_TESTargs a;

	memset(c, 0, sizeof(*c));
	memset(&a, 0, sizeof(a));
	fill_cookie(h, &a.cookie);
	a.exclusive = 1;
	fill_lock(h, &a.lock, off, len);
	if (rpc_nlm4_test_async(h->rpc, test_cb, &a, c) != 0)
		return -1;
	return finish(h, c, "TEST");
}

static bool
host_open(struct host *h, const char *server, const char *name,
    unsigned svid)
{
	struct call c = { 0 };

	h->rpc = rpc_init_context();
	h->name = (char *)name;
	h->oh = (char *)name;
	h->svid = svid;
	h->cookie = svid << 16;
	if (h->rpc == NULL ||
	    rpc_connect_program_async(h->rpc, server, NLM_PROGRAM, NLM_V4,
	    connect_cb, &c) != 0 || !run(h->rpc, &c)) {
		check(false, "libnfs connects to nlockmgr v4 at %s (%s)",
		    server, h->rpc ? rpc_get_error(h->rpc) : "no context");
		return false;
	}
	check(true, "libnfs (%s) finds nlockmgr v4 via rpcbind and connects",
	    name);
	return true;
}

/* Before a restart: A holds [0,100), B holds [200,210). */
static void
flows_hold(struct host *A, struct host *B)
{
	check(do_lock(A, false, 0, 100) == NLM4_GRANTED,
	    "hold: A LOCK [0,100) -> GRANTED");
	check(do_lock(B, false, 200, 10) == NLM4_GRANTED,
	    "hold: B LOCK [200,210) -> GRANTED");
}

/* After the restart, in grace. */
static void
flows_reclaim(struct host *A, struct host *B)
{
	struct call c = { 0 };

	check(do_lock(B, false, 50, 10) == NLM4_DENIED_GRACE_PERIOD,
	    "grace: B LOCK over A's stored lock -> DENIED_GRACE_PERIOD");
	check(do_lock(B, false, 500, 10) == NLM4_GRANTED,
	    "grace: B LOCK that conflicts with nothing stored -> GRANTED");
	check(do_test(B, 50, 10, &c) == NLM4_DENIED && c.hsvid == 11,
	    "grace: TEST names A's stored lock");
	check(do_lock_r(A, false, true, 0, 100) == NLM4_GRANTED,
	    "grace: A reclaims [0,100) -> GRANTED");
	/*
	 * As a client whose answer was lost in the crash: a plain LOCK over
	 * its own stored lock, granted at once (it takes the record over,
	 * and nothing of B's is left to reclaim).
	 */
	check(do_lock(B, false, 200, 10) == NLM4_GRANTED,
	    "grace: B asks for [200,210) again, not as a reclaim -> GRANTED");
	check(do_unlock(A, 0, 100) == NLM4_GRANTED &&
	    do_unlock(B, 200, 10) == NLM4_GRANTED &&
	    do_unlock(B, 500, 10) == NLM4_GRANTED, "grace: unlock all");
}

static void
flows_main(struct host *A, struct host *B);

int
main(int argc, char **argv)
{
	struct host A = { 0 }, B = { 0 };
	const char *phase = argc > 2 ? argv[2] : "main";
	unsigned long secs = 5;
	char *end = NULL;

	if (argc > 3) {
		errno = 0;
		secs = strtoul(argv[3], &end, 10);
	}
	if (argc < 2 || argc > 4 || (strcmp(phase, "main") != 0 &&
	    strcmp(phase, "hold") != 0 && strcmp(phase, "reclaim") != 0) ||
	    (end != NULL && (errno != 0 || end == argv[3] || *end != '\0' ||
	    secs == 0 || secs > 3600))) {
		fprintf(stderr, "usage: libnfs_flows SERVER "
		    "[main|hold|reclaim [SECONDS]]\n");
		return 2;
	}
	call_limit_ms = (uint64_t)secs * 1000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!host_open(&A, argv[1], "libnfs-a", 11) ||
	    !host_open(&B, argv[1], "libnfs-b", 22))
		goto out;
	if (strcmp(phase, "hold") == 0)
		flows_hold(&A, &B);
	else if (strcmp(phase, "reclaim") == 0)
		flows_reclaim(&A, &B);
	else
		flows_main(&A, &B);
	check(cookies_ok, "every reply echoed libnfs's cookie");
out:
	if (A.rpc != NULL)
		rpc_destroy_context(A.rpc);
	if (B.rpc != NULL)
		rpc_destroy_context(B.rpc);
	printf("libnfs: %d passed, %d failed\n", npass, nfail);
	return nfail == 0 ? 0 : 1;
}

static void
flows_main(struct host *A, struct host *B)
{
	struct call c = { 0 };
	uint64_t t0;
	int st;

	if (rpc_nlm4_null_async(A->rpc, null_cb, &c) == 0)
		check(run(A->rpc, &c), "NLM4 NULL");

	check(do_lock(A, false, 0, 100) == NLM4_GRANTED,
	    "A: LOCK [0,100) -> GRANTED");
	check(do_lock(B, false, 50, 10) == NLM4_DENIED,
	    "B: conflicting LOCK -> DENIED");
	st = do_test(B, 50, 10, &c);
	check(st == NLM4_DENIED, "B: TEST -> DENIED");
	check(c.hexcl && c.hsvid == 11 && c.hoff == 0 && c.hlen == 100,
	    "B: TEST holder is A's lock {excl, svid 11, 0, 100} (got excl %d "
	    "svid %u %llu+%llu)", c.hexcl, c.hsvid,
	    (unsigned long long)c.hoff, (unsigned long long)c.hlen);
	check(do_test(A, 50, 10, &c) == NLM4_GRANTED,
	    "A: TEST of its own lock -> GRANTED");
	check(do_unlock(A, 0, 100) == NLM4_GRANTED, "A: UNLOCK -> GRANTED");
	check(do_lock(B, false, 50, 10) == NLM4_GRANTED,
	    "B: LOCK after A's UNLOCK -> GRANTED");
	check(do_unlock(B, 50, 10) == NLM4_GRANTED, "B: UNLOCK");

	/* Blocked lock, then the holder unlocks; B's re-sent LOCK wins. */
	check(do_lock(A, false, 0, 0) == NLM4_GRANTED, "A: LOCK whole file");
	check(do_lock(B, true, 10, 10) == NLM4_BLOCKED,
	    "B: blocking LOCK -> BLOCKED");
	check(do_lock(B, true, 10, 10) == NLM4_BLOCKED,
	    "B: re-sent blocking LOCK -> BLOCKED");
	check(do_unlock(A, 0, 0) == NLM4_GRANTED, "A: UNLOCK");
	t0 = now_ms();
	while ((st = do_lock(B, true, 10, 10)) != NLM4_GRANTED &&
	    now_ms() - t0 < 3000)
		;
	check(st == NLM4_GRANTED, "B: re-sent LOCK after the unlock -> "
	    "GRANTED");
	st = do_test(A, 0, 0, &c);
	check(st == NLM4_DENIED && c.hsvid == 22 && c.hoff == 10 &&
	    c.hlen == 10, "A: TEST shows B's lock as holder");
	check(do_unlock(B, 10, 10) == NLM4_GRANTED, "B: UNLOCK");
	check(do_test(A, 0, 0, &c) == NLM4_GRANTED, "A: file free again");

	/* CANCEL. */
	check(do_cancel(B, 10, 10) == NLM4_DENIED, "B: CANCEL of nothing -> "
	    "DENIED");
	check(do_lock(A, false, 0, 0) == NLM4_GRANTED, "A: LOCK whole file");
	check(do_lock(B, true, 10, 10) == NLM4_BLOCKED, "B: waits");
	check(do_cancel(B, 10, 10) == NLM4_GRANTED, "B: CANCEL of its wait -> "
	    "GRANTED");
	check(do_unlock(A, 0, 0) == NLM4_GRANTED, "A: UNLOCK");
	check(do_test(A, 0, 0, &c) == NLM4_GRANTED,
	    "nothing granted to the cancelled waiter");
}
