/*
 * nlmt_wire.c - harness, NLM client helpers and the callback receiver of
 * the NLM integration test.  See nlmt.h.
 *
 * The receiver runs svc_run() in its own thread; the test thread makes
 * blocking client calls meanwhile.  Records are kept in an array under one
 * mutex; the test thread waits on a condition variable.
 */
#include "nlmt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <rpc/pmap_clnt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct t_cfg tcfg;

/* ---- harness ---- */

static int npass, nfail;

static u_int32_t t_next_xid;

static void
t_vresult(bool ok, const char *extra, const char *fmt, va_list ap)
{
	printf("%s: ", ok ? "PASS" : "FAIL");
	vprintf(fmt, ap);
	if (!ok && extra != NULL)
		printf(" (%s)", extra);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

void
t_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_vresult(ok, NULL, fmt, ap);
	va_end(ap);
}

void
t_eq(long long got, long long want, const char *fmt, ...)
{
	char extra[96];
	va_list ap;

	snprintf(extra, sizeof(extra), "got %lld, want %lld", got, want);
	va_start(ap, fmt);
	t_vresult(got == want, extra, fmt, ap);
	va_end(ap);
}

void
t_note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int
t_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, npass, nfail);
	fflush(stdout);
	return nfail == 0 ? 0 : 1;
}

uint64_t
t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
t_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ---- clients ---- */

/* Fill ss with a literal address and port; returns its length. */
static socklen_t
t_sockaddr(struct sockaddr_storage *ss, const char *addr, uint16_t port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, '%') != NULL) {
		/* Scoped (fe80::1%eth0): getaddrinfo() knows the syntax. */
		struct addrinfo hints, *ai;

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_INET6;
		hints.ai_flags = AI_NUMERICHOST;
		if (getaddrinfo(addr, NULL, &hints, &ai) != 0) {
			fprintf(stderr, "t_sockaddr: bad address %s\n", addr);
			exit(2);
		}
		memcpy(s6, ai->ai_addr, sizeof(*s6));
		freeaddrinfo(ai);
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	if (strchr(addr, ':') != NULL) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	inet_pton(AF_INET, addr, &s4->sin_addr);
	return sizeof(*s4);
}

CLIENT *
t_clnt(const char *src, const char *dst, rpcvers_t vers, bool tcp)
{
	struct sockaddr_storage sa, da;
	socklen_t sl, dl;
	struct netbuf nb;
	struct timeval tv = { 3, 0 }, rt = { 0, 300000 };
	CLIENT *c;
	int fd;

	sl = t_sockaddr(&sa, src, 0);
	dl = t_sockaddr(&da, dst, tcfg.port);
	fd = socket(sa.ss_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sa, sl) == -1) {
		perror("t_clnt: socket/bind");
		exit(2);
	}
	if (tcp && connect(fd, (struct sockaddr *)&da, dl) == -1) {
		perror("t_clnt: connect");
		exit(2);
	}
	nb.buf = &da;
	nb.len = nb.maxlen = dl;
	c = tcp ? clnt_vc_create(fd, &nb, NLM_PROG, vers, 0, 0) :
	    clnt_dg_create(fd, &nb, NLM_PROG, vers, 0, 0);
	if (c == NULL) {
		clnt_pcreateerror("t_clnt");
		exit(2);
	}
	clnt_control(c, CLSET_FD_CLOSE, NULL);
	clnt_control(c, CLSET_TIMEOUT, (char *)&tv);
	/*
	 * libtirpc seeds each handle's xid from the clock and the pid, so two
	 * handles can reuse each other's xids; tshark then pairs a reply with
	 * the wrong call and reports it malformed.  Space the handles apart.
	 */
	if (t_next_xid == 0 && getrandom(&t_next_xid, sizeof(t_next_xid), 0) !=
	    sizeof(t_next_xid))
		t_next_xid = (u_int32_t)getpid() << 16;
	t_next_xid += 0x10000u;
	clnt_control(c, CLSET_XID, (char *)&t_next_xid);
	if (!tcp)
		clnt_control(c, CLSET_RETRY_TIMEOUT, (char *)&rt);
	/* AUTH_UNIX, as the Linux client sends. */
	c->cl_auth = authunix_create_default();
	return c;
}

void
t_clnt_free(CLIENT *c)
{
	if (c == NULL)
		return;
	if (c->cl_auth != NULL)
		auth_destroy(c->cl_auth);
	clnt_destroy(c);
}

int
t_clnt_fd(CLIENT *c)
{
	int fd = -1;

	clnt_control(c, CLGET_FD, (char *)&fd);
	return fd;
}

static uint32_t cookie_ctr = 0x51000000;
static unsigned cookie_replies, cookie_bad;

static nlm_netobj
t_obj(const char *s)
{
	nlm_netobj o = { (u_int)strlen(s), (char *)(uintptr_t)s };

	return o;
}

/* A fresh 4-byte cookie (like Linux) in buf. */
static nlm_netobj
t_cookie(uint8_t buf[4])
{
	uint32_t c = htonl(++cookie_ctr);
	nlm_netobj o = { 4, (char *)buf };

	memcpy(buf, &c, 4);
	return o;
}

static void
t_cookie_cmp(const nlm_netobj *sent, const nlm_netobj *got, const char *what)
{
	cookie_replies++;
	if (sent->nlm_netobj_len != got->nlm_netobj_len ||
	    (sent->nlm_netobj_len > 0 && memcmp(sent->nlm_netobj_val,
	    got->nlm_netobj_val, sent->nlm_netobj_len) != 0)) {
		cookie_bad++;
		t_note("cookie not echoed in %s reply", what);
	}
}

void
t_cookie_summary(void)
{
	t_check(cookie_bad == 0 && cookie_replies > 0,
	    "every reply echoed its cookie byte for byte (%u replies)",
	    cookie_replies);
}

static int
t_rpcfail(CLIENT *c, enum clnt_stat st, const char *what)
{
	(void)c;
	t_check(false, "RPC %s: %s", what, clnt_sperrno(st));
	return -1;
}

static void
mk4(nlm4_lock *l, const struct t_lk *k)
{
	l->caller_name = (char *)(uintptr_t)k->name;
	l->fh = t_obj(k->fh);
	l->oh = t_obj(k->oh);
	l->svid = k->svid;
	l->l_offset = k->off;
	l->l_len = k->len;
}

static void
mk1(nlm_lock *l, const struct t_lk *k)
{
	l->caller_name = (char *)(uintptr_t)k->name;
	l->fh = t_obj(k->fh);
	l->oh = t_obj(k->oh);
	l->svid = k->svid;
	l->l_offset = (unsigned)k->off;
	l->l_len = (unsigned)k->len;
}

int
l4_test(CLIENT *c, const struct t_lk *k, bool excl, struct t_holder *ho)
{
	uint8_t cb[4];
	nlm4_testargs a;
	nlm4_testres r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.exclusive = excl;
	mk4(&a.alock, k);
	if ((st = nlmproc4_test_4(&a, &r, c)) != RPC_SUCCESS)
		return t_rpcfail(c, st, "TEST");
	t_cookie_cmp(&a.cookie, &r.cookie, "TEST");
	ret = r.test_stat.stat;
	if (ho != NULL) {
		memset(ho, 0, sizeof(*ho));
		if (ret == NLM4_DENIED) {
			nlm4_holder *h = &r.test_stat.nlm4_testrply_u.holder;

			ho->excl = h->exclusive;
			ho->svid = h->svid;
			ho->ohlen = h->oh.nlm_netobj_len;
			if (ho->ohlen > 0 && ho->ohlen < sizeof(ho->oh))
				memcpy(ho->oh, h->oh.nlm_netobj_val, ho->ohlen);
			ho->off = h->l_offset;
			ho->len = h->l_len;
		}
	}
	xdr_free(XDRPROC(xdr_nlm4_testres), (char *)&r);
	return ret;
}

static int
l4_lock_proc(CLIENT *c, const struct t_lk *k, bool excl, bool block,
    int state, bool nm, bool reclaim)
{
	uint8_t cb[4];
	nlm4_lockargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.block = block;
	a.exclusive = excl;
	mk4(&a.alock, k);
	a.state = state;
	a.reclaim = reclaim;
	st = nm ? nlmproc4_nm_lock_4(&a, &r, c) : nlmproc4_lock_4(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, nm ? "NM_LOCK" : "LOCK");
	t_cookie_cmp(&a.cookie, &r.cookie, "LOCK");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

int
l4_lock(CLIENT *c, const struct t_lk *k, bool excl, bool block, int state)
{
	return l4_lock_proc(c, k, excl, block, state, false, false);
}

int
l4_lock_reclaim(CLIENT *c, const struct t_lk *k, bool excl)
{
	return l4_lock_proc(c, k, excl, false, 0, false, true);
}

int
l4_nm_lock(CLIENT *c, const struct t_lk *k, bool excl, bool block)
{
	return l4_lock_proc(c, k, excl, block, 0, true, false);
}

int
l4_lock_cookie(CLIENT *c, const struct t_lk *k, const void *cookie,
    unsigned len, void *echo, unsigned *echolen)
{
	nlm4_lockargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie.nlm_netobj_len = len;
	a.cookie.nlm_netobj_val = (char *)(uintptr_t)cookie;
	a.exclusive = true;
	mk4(&a.alock, k);
	if ((st = nlmproc4_lock_4(&a, &r, c)) != RPC_SUCCESS)
		return t_rpcfail(c, st, "LOCK");
	*echolen = r.cookie.nlm_netobj_len;
	if (*echolen > 0 && *echolen <= 1024)
		memcpy(echo, r.cookie.nlm_netobj_val, *echolen);
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

int
l4_cancel(CLIENT *c, const struct t_lk *k, bool excl, bool block)
{
	uint8_t cb[4];
	nlm4_cancargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.block = block;
	a.exclusive = excl;
	mk4(&a.alock, k);
	if ((st = nlmproc4_cancel_4(&a, &r, c)) != RPC_SUCCESS)
		return t_rpcfail(c, st, "CANCEL");
	t_cookie_cmp(&a.cookie, &r.cookie, "CANCEL");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

int
l4_unlock(CLIENT *c, const struct t_lk *k)
{
	uint8_t cb[4];
	nlm4_unlockargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	mk4(&a.alock, k);
	if ((st = nlmproc4_unlock_4(&a, &r, c)) != RPC_SUCCESS)
		return t_rpcfail(c, st, "UNLOCK");
	t_cookie_cmp(&a.cookie, &r.cookie, "UNLOCK");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

int
l4_granted(CLIENT *c, const struct t_lk *k, bool excl)
{
	uint8_t cb[4];
	nlm4_testargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.exclusive = excl;
	mk4(&a.alock, k);
	if ((st = nlmproc4_granted_4(&a, &r, c)) != RPC_SUCCESS)
		return t_rpcfail(c, st, "GRANTED");
	t_cookie_cmp(&a.cookie, &r.cookie, "GRANTED");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

static int
l4_share_proc(CLIENT *c, const struct t_lk *k, int mode, int access,
    bool share, bool reclaim)
{
	uint8_t cb[4];
	nlm4_shareargs a;
	nlm4_shareres r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.share.caller_name = (char *)(uintptr_t)k->name;
	a.share.fh = t_obj(k->fh);
	a.share.oh = t_obj(k->oh);
	a.share.mode = (fsh_mode)mode;
	a.share.access = (fsh_access)access;
	a.reclaim = reclaim;
	st = share ? nlmproc4_share_4(&a, &r, c) :
	    nlmproc4_unshare_4(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, share ? "SHARE" : "UNSHARE");
	t_cookie_cmp(&a.cookie, &r.cookie, "SHARE");
	ret = r.stat;
	xdr_free(XDRPROC(xdr_nlm4_shareres), (char *)&r);
	return ret;
}

int
l4_share(CLIENT *c, const struct t_lk *k, int mode, int access)
{
	return l4_share_proc(c, k, mode, access, true, false);
}

int
l4_share_reclaim(CLIENT *c, const struct t_lk *k, int mode, int access)
{
	return l4_share_proc(c, k, mode, access, true, true);
}

int
l4_unshare(CLIENT *c, const struct t_lk *k, int mode, int access)
{
	return l4_share_proc(c, k, mode, access, false, false);
}

enum clnt_stat
l4_free_all(CLIENT *c, const char *name, int state)
{
	nlm4_notify a;

	a.name = (char *)(uintptr_t)name;
	a.state = state;
	return nlmproc4_free_all_4(&a, NULL, c);
}

enum clnt_stat
l4_granted_res(CLIENT *c, const void *cookie, unsigned len, int stat)
{
	nlm4_res a;

	a.cookie.nlm_netobj_len = len;
	a.cookie.nlm_netobj_val = (char *)(uintptr_t)cookie;
	a.stat.stat = (nlm4_stats)stat;
	return nlmproc4_granted_res_4(&a, NULL, c);
}

enum clnt_stat
l4_msg(CLIENT *c, int proc, const struct t_lk *k, bool excl, bool block,
    const void *cookie, unsigned cookielen)
{
	nlm_netobj ck = { cookielen, (char *)(uintptr_t)cookie };
	nlm4_testargs ta;
	nlm4_lockargs la;
	nlm4_cancargs ca;
	nlm4_unlockargs ua;

	switch (proc) {
	case NLMPROC4_TEST_MSG:
	case NLMPROC4_GRANTED_MSG:
		memset(&ta, 0, sizeof(ta));
		ta.cookie = ck;
		ta.exclusive = excl;
		mk4(&ta.alock, k);
		return proc == NLMPROC4_TEST_MSG ?
		    nlmproc4_test_msg_4(&ta, NULL, c) :
		    nlmproc4_granted_msg_4(&ta, NULL, c);
	case NLMPROC4_LOCK_MSG:
		memset(&la, 0, sizeof(la));
		la.cookie = ck;
		la.block = block;
		la.exclusive = excl;
		mk4(&la.alock, k);
		return nlmproc4_lock_msg_4(&la, NULL, c);
	case NLMPROC4_CANCEL_MSG:
		memset(&ca, 0, sizeof(ca));
		ca.cookie = ck;
		ca.block = block;
		ca.exclusive = excl;
		mk4(&ca.alock, k);
		return nlmproc4_cancel_msg_4(&ca, NULL, c);
	case NLMPROC4_UNLOCK_MSG:
		memset(&ua, 0, sizeof(ua));
		ua.cookie = ck;
		mk4(&ua.alock, k);
		return nlmproc4_unlock_msg_4(&ua, NULL, c);
	}
	return RPC_PROCUNAVAIL;
}

/* ---- versions 1 and 3 ---- */

static bool
is_v3(CLIENT *c)
{
	rpcvers_t v = 0;

	clnt_control(c, CLGET_VERS, (char *)&v);
	return v == NLM_VERSX;
}

int
l1_test(CLIENT *c, const struct t_lk *k, bool excl, struct t_holder *ho)
{
	uint8_t cb[4];
	nlm_testargs a;
	nlm_testres r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.exclusive = excl;
	mk1(&a.alock, k);
	st = is_v3(c) ? nlmproc_test_3(&a, &r, c) : nlmproc_test_1(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, "TEST v1/v3");
	t_cookie_cmp(&a.cookie, &r.cookie, "TEST v1/v3");
	ret = r.test_stat.stat;
	if (ho != NULL) {
		memset(ho, 0, sizeof(*ho));
		if (ret == nlm_denied) {
			nlm_holder *h = &r.test_stat.nlm_testrply_u.holder;

			ho->excl = h->exclusive;
			ho->svid = h->svid;
			ho->ohlen = h->oh.nlm_netobj_len;
			if (ho->ohlen > 0 && ho->ohlen < sizeof(ho->oh))
				memcpy(ho->oh, h->oh.nlm_netobj_val, ho->ohlen);
			ho->off = h->l_offset;
			ho->len = h->l_len;
		}
	}
	xdr_free(XDRPROC(xdr_nlm_testres), (char *)&r);
	return ret;
}

static int
l1_lock_proc(CLIENT *c, const struct t_lk *k, bool excl, bool block,
    int state, bool nm)
{
	uint8_t cb[4];
	nlm_lockargs a;
	nlm_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.block = block;
	a.exclusive = excl;
	mk1(&a.alock, k);
	a.state = state;
	if (nm)
		st = nlmproc_nm_lock_3(&a, &r, c);
	else
		st = is_v3(c) ? nlmproc_lock_3(&a, &r, c) :
		    nlmproc_lock_1(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, "LOCK v1/v3");
	t_cookie_cmp(&a.cookie, &r.cookie, "LOCK v1/v3");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return ret;
}

int
l1_lock(CLIENT *c, const struct t_lk *k, bool excl, bool block, int state)
{
	return l1_lock_proc(c, k, excl, block, state, false);
}

int
l1_nm_lock(CLIENT *c, const struct t_lk *k, bool excl, bool block)
{
	return l1_lock_proc(c, k, excl, block, 0, true);
}

int
l1_cancel(CLIENT *c, const struct t_lk *k, bool excl, bool block)
{
	uint8_t cb[4];
	nlm_cancargs a;
	nlm_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.block = block;
	a.exclusive = excl;
	mk1(&a.alock, k);
	st = is_v3(c) ? nlmproc_cancel_3(&a, &r, c) :
	    nlmproc_cancel_1(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, "CANCEL v1/v3");
	t_cookie_cmp(&a.cookie, &r.cookie, "CANCEL v1/v3");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return ret;
}

int
l1_unlock(CLIENT *c, const struct t_lk *k)
{
	uint8_t cb[4];
	nlm_unlockargs a;
	nlm_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	mk1(&a.alock, k);
	st = is_v3(c) ? nlmproc_unlock_3(&a, &r, c) :
	    nlmproc_unlock_1(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, "UNLOCK v1/v3");
	t_cookie_cmp(&a.cookie, &r.cookie, "UNLOCK v1/v3");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return ret;
}

int
l1_granted(CLIENT *c, const struct t_lk *k, bool excl)
{
	uint8_t cb[4];
	nlm_testargs a;
	nlm_res r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.exclusive = excl;
	mk1(&a.alock, k);
	st = is_v3(c) ? nlmproc_granted_3(&a, &r, c) :
	    nlmproc_granted_1(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, "GRANTED v1/v3");
	t_cookie_cmp(&a.cookie, &r.cookie, "GRANTED v1/v3");
	ret = r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm_res), (char *)&r);
	return ret;
}

static int
l1_share_proc(CLIENT *c, const struct t_lk *k, int mode, int access,
    bool share)
{
	uint8_t cb[4];
	nlm_shareargs a;
	nlm_shareres r;
	enum clnt_stat st;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = t_cookie(cb);
	a.share.caller_name = (char *)(uintptr_t)k->name;
	a.share.fh = t_obj(k->fh);
	a.share.oh = t_obj(k->oh);
	a.share.mode = (fsh_mode)mode;
	a.share.access = (fsh_access)access;
	st = share ? nlmproc_share_3(&a, &r, c) : nlmproc_unshare_3(&a, &r, c);
	if (st != RPC_SUCCESS)
		return t_rpcfail(c, st, share ? "SHARE v3" : "UNSHARE v3");
	t_cookie_cmp(&a.cookie, &r.cookie, "SHARE v3");
	ret = r.stat;
	xdr_free(XDRPROC(xdr_nlm_shareres), (char *)&r);
	return ret;
}

int
l1_share(CLIENT *c, const struct t_lk *k, int mode, int access)
{
	return l1_share_proc(c, k, mode, access, true);
}

int
l1_unshare(CLIENT *c, const struct t_lk *k, int mode, int access)
{
	return l1_share_proc(c, k, mode, access, false);
}

enum clnt_stat
l1_free_all(CLIENT *c, const char *name, int state)
{
	nlm_notify a;

	a.name = (char *)(uintptr_t)name;
	a.state = state;
	return nlmproc_free_all_3(&a, NULL, c);
}

enum clnt_stat
l1_granted_res(CLIENT *c, const void *cookie, unsigned len, int stat)
{
	nlm_res a;

	a.cookie.nlm_netobj_len = len;
	a.cookie.nlm_netobj_val = (char *)(uintptr_t)cookie;
	a.stat.stat = (nlm_stats)stat;
	return is_v3(c) ? nlmproc_granted_res_3(&a, NULL, c) :
	    nlmproc_granted_res_1(&a, NULL, c);
}

enum clnt_stat
l1_msg(CLIENT *c, int proc, const struct t_lk *k, bool excl, bool block)
{
	uint8_t cb[4];
	nlm_testargs ta;
	nlm_lockargs la;
	nlm_unlockargs ua;
	bool v3 = is_v3(c);

	switch (proc) {
	case NLMPROC_TEST_MSG:
		memset(&ta, 0, sizeof(ta));
		ta.cookie = t_cookie(cb);
		ta.exclusive = excl;
		mk1(&ta.alock, k);
		return v3 ? nlmproc_test_msg_3(&ta, NULL, c) :
		    nlmproc_test_msg_1(&ta, NULL, c);
	case NLMPROC_LOCK_MSG:
		memset(&la, 0, sizeof(la));
		la.cookie = t_cookie(cb);
		la.block = block;
		la.exclusive = excl;
		mk1(&la.alock, k);
		return v3 ? nlmproc_lock_msg_3(&la, NULL, c) :
		    nlmproc_lock_msg_1(&la, NULL, c);
	case NLMPROC_UNLOCK_MSG:
		memset(&ua, 0, sizeof(ua));
		ua.cookie = t_cookie(cb);
		mk1(&ua.alock, k);
		return v3 ? nlmproc_unlock_msg_3(&ua, NULL, c) :
		    nlmproc_unlock_msg_1(&ua, NULL, c);
	}
	return RPC_PROCUNAVAIL;
}

/* ---- raw calls ---- */

struct t_rawbuf {
	const void	*p;
	size_t		 n;
};

static bool_t
xdr_t_raw(XDR *x, void *arg)
{
	struct t_rawbuf *r = arg;

	return xdr_opaque(x, (char *)(uintptr_t)r->p, (u_int)r->n);
}

enum clnt_stat
t_null(CLIENT *c)
{
	struct timeval tv = { 3, 0 };

	return clnt_call(c, 0, XDRPROC(xdr_void), NULL, XDRPROC(xdr_void),
	    NULL, tv);
}

enum clnt_stat
t_raw(CLIENT *c, rpcproc_t proc, const void *args, size_t len)
{
	struct timeval tv = { 3, 0 };
	struct t_rawbuf rb = { args, len };
	char sink[64];

	/* Success replies are not expected here; void decoding is enough. */
	memset(sink, 0, sizeof(sink));
	return clnt_call(c, proc, XDRPROC(xdr_t_raw), (caddr_t)&rb,
	    XDRPROC(xdr_void), sink, tv);
}

static bool_t
enc_bytes(XDR *x, unsigned len, char fill)
{
	static char buf[4096];
	char *p = buf;
	u_int l = len;

	memset(buf, fill, sizeof(buf));
	return xdr_bytes(x, &p, &l, sizeof(buf));
}

size_t
t_enc_lock4(uint8_t *buf, size_t cap, unsigned cookielen, unsigned namelen,
    unsigned fhlen, unsigned ohlen)
{
	XDR x;
	bool_t t = TRUE, f = FALSE;
	int svid = 7, state = 0;
	uint64_t off = 0, len = 10;
	size_t n = 0;

	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	/* caller_name is a string: the same wire form as opaque bytes. */
	if (enc_bytes(&x, cookielen, 'c') && xdr_bool(&x, &f) &&
	    xdr_bool(&x, &t) && enc_bytes(&x, namelen, 'n') &&
	    enc_bytes(&x, fhlen, 'f') && enc_bytes(&x, ohlen, 'o') &&
	    xdr_int(&x, &svid) && xdr_u_int64_t(&x, &off) &&
	    xdr_u_int64_t(&x, &len) && xdr_bool(&x, &f) &&
	    xdr_int(&x, &state))
		n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

/* ---- the callback receiver ---- */

#define CB_MAX	2048

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_cv = PTHREAD_COND_INITIALIZER;
static struct t_cb *cb_recs;
static int cb_n;
static int cb_sync_stat = NLM4_GRANTED;
static SVCXPRT *cb_ux, *cb_tx, *cb_ux6;
static uint16_t cb_uport, cb_tport, cb_u6port;
static pthread_t cb_thr;

static void
cb_copy(uint8_t *dst, unsigned *dlen, const nlm_netobj *o)
{
	*dlen = o->nlm_netobj_len > 1024 ? 1024 : o->nlm_netobj_len;
	if (*dlen > 0)
		memcpy(dst, o->nlm_netobj_val, *dlen);
}

static void
cb_fill_lock4(struct t_cb *r, const nlm4_testargs *a)
{
	cb_copy(r->cookie, &r->cookielen, &a->cookie);
	r->excl = a->exclusive;
	snprintf(r->caller, sizeof(r->caller), "%s", a->alock.caller_name);
	cb_copy(r->fh, &r->fhlen, &a->alock.fh);
	cb_copy(r->oh, &r->ohlen, &a->alock.oh);
	r->svid = a->alock.svid;
	r->off = a->alock.l_offset;
	r->len = a->alock.l_len;
}

static void
cb_fill_lock1(struct t_cb *r, const nlm_testargs *a)
{
	cb_copy(r->cookie, &r->cookielen, &a->cookie);
	r->excl = a->exclusive;
	snprintf(r->caller, sizeof(r->caller), "%s", a->alock.caller_name);
	cb_copy(r->fh, &r->fhlen, &a->alock.fh);
	cb_copy(r->oh, &r->ohlen, &a->alock.oh);
	r->svid = a->alock.svid;
	r->off = a->alock.l_offset;
	r->len = a->alock.l_len;
}

static void
cb_record(const struct t_cb *r)
{
	pthread_mutex_lock(&cb_mu);
	if (cb_n < CB_MAX)
		cb_recs[cb_n++] = *r;
	pthread_cond_broadcast(&cb_cv);
	pthread_mutex_unlock(&cb_mu);
}

union cb_args {
	nlm4_testargs	t4;
	nlm_testargs	t1;
	nlm4_testres	tr4;
	nlm_testres	tr1;
	nlm4_res	r4;
	nlm_res		r1;
};

static void
cb_res(struct t_cb *r, bool v4, union cb_args *u)
{
	if (r->proc == NLMPROC4_TEST_RES && v4) {
		cb_copy(r->cookie, &r->cookielen, &u->tr4.cookie);
		r->stat = u->tr4.test_stat.stat;
		if (r->stat == NLM4_DENIED) {
			nlm4_holder *h = &u->tr4.test_stat.nlm4_testrply_u.holder;

			r->holder.excl = h->exclusive;
			r->holder.svid = h->svid;
			r->holder.off = h->l_offset;
			r->holder.len = h->l_len;
		}
	} else if (r->proc == NLMPROC_TEST_RES) {
		cb_copy(r->cookie, &r->cookielen, &u->tr1.cookie);
		r->stat = u->tr1.test_stat.stat;
		if (r->stat == nlm_denied) {
			nlm_holder *h = &u->tr1.test_stat.nlm_testrply_u.holder;

			r->holder.excl = h->exclusive;
			r->holder.svid = h->svid;
			r->holder.off = h->l_offset;
			r->holder.len = h->l_len;
		}
	} else if (v4) {
		cb_copy(r->cookie, &r->cookielen, &u->r4.cookie);
		r->stat = u->r4.stat.stat;
	} else {
		cb_copy(r->cookie, &r->cookielen, &u->r1.cookie);
		r->stat = u->r1.stat.stat;
	}
}

static void
cb_dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	struct t_cb *r;
	union cb_args u;
	struct netbuf *nb;
	xdrproc_t xa;
	bool v4 = rq->rq_vers == NLM4_VERS;

	if (rq->rq_proc == 0) {
		svc_sendreply(xp, XDRPROC(xdr_void), NULL);
		return;
	}
	switch (rq->rq_proc) {
	case NLMPROC4_GRANTED:
	case NLMPROC4_GRANTED_MSG:
		xa = v4 ? XDRPROC(xdr_nlm4_testargs) :
		    XDRPROC(xdr_nlm_testargs);
		break;
	case NLMPROC4_TEST_RES:
		xa = v4 ? XDRPROC(xdr_nlm4_testres) :
		    XDRPROC(xdr_nlm_testres);
		break;
	case NLMPROC4_LOCK_RES:
	case NLMPROC4_CANCEL_RES:
	case NLMPROC4_UNLOCK_RES:
	case NLMPROC4_GRANTED_RES:
		xa = v4 ? XDRPROC(xdr_nlm4_res) : XDRPROC(xdr_nlm_res);
		break;
	default:
		svcerr_noproc(xp);
		return;
	}
	memset(&u, 0, sizeof(u));
	if (!svc_getargs(xp, xa, (caddr_t)&u)) {
		svcerr_decode(xp);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		abort();
	r->vers = (int)rq->rq_vers;
	r->proc = (int)rq->rq_proc;
	r->tcp = xp != cb_ux && xp != cb_ux6;
	r->t_ms = t_now_ms();
	nb = svc_getrpccaller(xp);
	if (nb != NULL && nb->len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr *sa = nb->buf;

		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)
			    nb->buf)->sin_addr, r->from, sizeof(r->from));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)
			    nb->buf)->sin6_addr, r->from, sizeof(r->from));
	}
	if (rq->rq_proc == NLMPROC4_GRANTED ||
	    rq->rq_proc == NLMPROC4_GRANTED_MSG) {
		if (v4)
			cb_fill_lock4(r, &u.t4);
		else
			cb_fill_lock1(r, &u.t1);
	} else
		cb_res(r, v4, &u);
	cb_record(r);
	if (rq->rq_proc == NLMPROC4_GRANTED) {
		int st;

		pthread_mutex_lock(&cb_mu);
		st = cb_sync_stat;
		pthread_mutex_unlock(&cb_mu);
		if (v4) {
			nlm4_res res = { u.t4.cookie, { (nlm4_stats)st } };

			svc_sendreply(xp, XDRPROC(xdr_nlm4_res),
			    (caddr_t)&res);
		} else {
			nlm_res res = { u.t1.cookie, { (nlm_stats)st } };

			svc_sendreply(xp, XDRPROC(xdr_nlm_res),
			    (caddr_t)&res);
		}
	} else
		svc_sendreply(xp, XDRPROC(xdr_void), NULL);
	svc_freeargs(xp, xa, (caddr_t)&u);
	free(r);
}

static void *
cb_main(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

static int
cb_sock(int family, int type, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if ((fd = socket(family, type, 0)) == -1)
		return -1;
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return -1;
	if (type == SOCK_STREAM && listen(fd, 16) == -1)
		return -1;
	*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* Register NLM vers on udp6 with the local rpcbind (RPCB SET). */
static bool
cb_reg6(rpcvers_t vers, uint16_t port)
{
	struct netconfig *nc = getnetconfigent("udp6");
	struct sockaddr_in6 s6;
	struct netbuf nb;
	bool ok;

	if (nc == NULL)
		return false;
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons(port);
	nb.buf = &s6;
	nb.len = nb.maxlen = sizeof(s6);
	(void)rpcb_unset(NLM_PROG, vers, nc);
	ok = rpcb_set(NLM_PROG, vers, nc, &nb);
	freenetconfigent(nc);
	return ok;
}

int
cb_start(void)
{
	static const rpcvers_t vers[] = { NLM_VERS, NLM_VERSX, NLM4_VERS };
	uint16_t port6 = 0;
	int ufd, tfd, u6fd;
	size_t i;

	if ((cb_recs = calloc(CB_MAX, sizeof(*cb_recs))) == NULL)
		return -1;
	if ((ufd = cb_sock(AF_INET, SOCK_DGRAM, &cb_uport)) == -1 ||
	    (tfd = cb_sock(AF_INET, SOCK_STREAM, &cb_tport)) == -1) {
		perror("receiver socket");
		return -1;
	}
	cb_ux = svc_dg_create(ufd, 0, 0);
	cb_tx = svc_vc_create(tfd, 0, 0);
	if (cb_ux == NULL || cb_tx == NULL)
		return -1;
	/* IPv6 is optional: only when the host has it. */
	if ((u6fd = cb_sock(AF_INET6, SOCK_DGRAM, &port6)) != -1)
		cb_ux6 = svc_dg_create(u6fd, 0, 0);
	cb_u6port = port6;
	for (i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		pmap_unset(NLM_PROG, vers[i]);
		if (!svc_reg(cb_ux, NLM_PROG, vers[i], cb_dispatch, NULL) ||
		    !svc_reg(cb_tx, NLM_PROG, vers[i], cb_dispatch, NULL) ||
		    !pmap_set(NLM_PROG, vers[i], IPPROTO_UDP, cb_uport) ||
		    !pmap_set(NLM_PROG, vers[i], IPPROTO_TCP, cb_tport)) {
			fprintf(stderr, "receiver: cannot register v%lu\n",
			    (unsigned long)vers[i]);
			return -1;
		}
		if (cb_ux6 != NULL &&
		    (!svc_reg(cb_ux6, NLM_PROG, vers[i], cb_dispatch, NULL) ||
		    !cb_reg6(vers[i], port6))) {
			fprintf(stderr, "receiver: cannot register v%lu/udp6\n",
			    (unsigned long)vers[i]);
			return -1;
		}
	}
	if (pthread_create(&cb_thr, NULL, cb_main, NULL) != 0)
		return -1;
	return 0;
}

void
cb_stop(void)
{
	static const rpcvers_t vers[] = { NLM_VERS, NLM_VERSX, NLM4_VERS };
	size_t i;

	struct netconfig *nc = getnetconfigent("udp6");

	for (i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		pmap_unset(NLM_PROG, vers[i]);
		if (nc != NULL)
			(void)rpcb_unset(NLM_PROG, vers[i], nc);
	}
	if (nc != NULL)
		freenetconfigent(nc);
}

bool
cb_register(bool on)
{
	static const rpcvers_t vers[] = { NLM_VERS, NLM_VERSX, NLM4_VERS };
	bool ok = true;
	size_t i;

	/*
	 * All versions: rpcbind answers GETPORT for a missing version with
	 * the port of another version of the program.
	 */
	for (i = 0; i < sizeof(vers) / sizeof(vers[0]); i++)
		if (!on)
			ok = pmap_unset(NLM_PROG, vers[i]) && ok;
		else
			ok = pmap_set(NLM_PROG, vers[i], IPPROTO_UDP, cb_uport) &&
			    pmap_set(NLM_PROG, vers[i], IPPROTO_TCP, cb_tport) &&
			    ok;
	return ok;
}

uint16_t
cb_udp_port(void)
{
	return cb_uport;
}

uint16_t
cb_udp6_port(void)
{
	return cb_u6port;
}

static struct t_cb *
cb_find(int vers, int proc)
{
	int i;

	for (i = 0; i < cb_n; i++)
		if (!cb_recs[i].used && (vers == 0 || cb_recs[i].vers == vers) &&
		    (proc == -1 || cb_recs[i].proc == proc))
			return &cb_recs[i];
	return NULL;
}

struct t_cb *
cb_wait(int vers, int proc, unsigned ms)
{
	struct timespec dl;
	struct t_cb *r;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&cb_mu);
	while ((r = cb_find(vers, proc)) == NULL)
		if (pthread_cond_timedwait(&cb_cv, &cb_mu, &dl) == ETIMEDOUT) {
			r = cb_find(vers, proc);
			break;
		}
	if (r != NULL)
		r->used = true;
	pthread_mutex_unlock(&cb_mu);
	/* Records never move or get overwritten: the pointer stays valid. */
	return r;
}

int
cb_count(int vers, int proc)
{
	int i, n = 0;

	pthread_mutex_lock(&cb_mu);
	for (i = 0; i < cb_n; i++)
		if (!cb_recs[i].used && (vers == 0 || cb_recs[i].vers == vers) &&
		    (proc == -1 || cb_recs[i].proc == proc))
			n++;
	pthread_mutex_unlock(&cb_mu);
	return n;
}

void
cb_flush(void)
{
	int i;

	pthread_mutex_lock(&cb_mu);
	for (i = 0; i < cb_n; i++)
		cb_recs[i].used = true;
	pthread_mutex_unlock(&cb_mu);
}

void
cb_set_sync_reply(int stat)
{
	pthread_mutex_lock(&cb_mu);
	cb_sync_stat = stat;
	pthread_mutex_unlock(&cb_mu);
}
