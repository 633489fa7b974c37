/*
 * wire.c - client handles and NLM v4 calls of crashdrv (see crashdrv.h),
 * on the rpcgen client stubs of rpc/nlm_prot.x.
 *
 * Every handle is bound to the client address, so that nlmd sees every
 * client on one host address (and looks the callback receiver up on that
 * address's rpcbind).  Handles get xid ranges 4M apart: libtirpc seeds
 * each handle's xid from the clock and the pid, and two handles reusing
 * each other's xids make tshark pair a reply with the wrong call.
 * Every cookie is 8 bytes: the handle's tag, then a sequence number.
 */
#include "crashdrv.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in wire_srv, wire_cli;
static atomic_uint wire_xid;

static void
wire_addr(struct sockaddr_in *sa, const char *addr, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		fprintf(stderr, "crashdrv: not an IPv4 address: %s\n", addr);
		exit(2);
	}
}

void
rs_wire_init(const char *srv, const char *cli, uint16_t port)
{
	unsigned seed;

	wire_addr(&wire_srv, srv, port);
	wire_addr(&wire_cli, cli, 0);
	if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		seed = (unsigned)getpid() << 16;
	atomic_store(&wire_xid, seed);
}

static struct timeval
wire_tv(unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000),
	    (suseconds_t)(ms % 1000) * 1000 };

	return tv;
}

/* A socket bound to the client address; TCP ones connected. -1 if not. */
static int
wire_socket(bool tcp)
{
	struct timeval tv = wire_tv(2000);
	int fd;

	fd = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&wire_cli, sizeof(wire_cli)) == -1)
		goto fail;
	/* connect() honours SO_SNDTIMEO: a bounded wait. */
	if (tcp && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) == -1 || connect(fd, (struct sockaddr *)&wire_srv,
	    sizeof(wire_srv)) == -1))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static CLIENT *
wire_clnt_new(const struct rs_conn *cn)
{
	struct timeval tv = wire_tv(cn->cn_timeout_ms);
	struct timeval rt = wire_tv(cn->cn_retry_ms);
	struct netbuf nb;
	u_int32_t xid;
	CLIENT *c;
	int fd;

	if ((fd = wire_socket(cn->cn_tcp)) == -1)
		return NULL;
	nb.buf = &wire_srv;
	nb.len = nb.maxlen = sizeof(wire_srv);
	c = cn->cn_tcp ? clnt_vc_create(fd, &nb, NLM_PROG, NLM4_VERS, 0, 0) :
	    clnt_dg_create(fd, &nb, NLM_PROG, NLM4_VERS, 0, 0);
	if (c == NULL) {
		close(fd);
		return NULL;
	}
	clnt_control(c, CLSET_FD_CLOSE, NULL);
	clnt_control(c, CLSET_TIMEOUT, (char *)&tv);
	if (!cn->cn_tcp)
		clnt_control(c, CLSET_RETRY_TIMEOUT, (char *)&rt);
	xid = atomic_fetch_add(&wire_xid, 0x400000u);
	clnt_control(c, CLSET_XID, (char *)&xid);
	/* AUTH_UNIX, as the Linux client sends. */
	if ((c->cl_auth = authunix_create_default()) == NULL)
		c->cl_auth = authnone_create();
	return c;
}

void
rs_conn_init(struct rs_conn *cn, bool tcp, unsigned timeout_ms,
    unsigned retry_ms, uint32_t tag)
{
	memset(cn, 0, sizeof(*cn));
	cn->cn_tcp = tcp;
	cn->cn_timeout_ms = timeout_ms;
	cn->cn_retry_ms = retry_ms;
	cn->cn_tag = tag;
}

void
rs_conn_close(struct rs_conn *cn)
{
	if (cn->cn_clnt == NULL)
		return;
	if (cn->cn_clnt->cl_auth != NULL)
		auth_destroy(cn->cn_clnt->cl_auth);
	clnt_destroy(cn->cn_clnt);
	cn->cn_clnt = NULL;
}

/* Make the handle if there is none.  false: counted as no reply. */
static bool
wire_ready(struct rs_conn *cn)
{
	if (cn->cn_clnt == NULL)
		cn->cn_clnt = wire_clnt_new(cn);
	if (cn->cn_clnt == NULL)
		cn->cn_noreply++;
	return cn->cn_clnt != NULL;
}

static nlm_netobj
wire_cookie(struct rs_conn *cn, uint8_t buf[8])
{
	uint32_t a = htonl(cn->cn_tag), b = htonl(++cn->cn_seq);
	nlm_netobj o = { 8, (char *)buf };

	memcpy(buf, &a, 4);
	memcpy(buf + 4, &b, 4);
	return o;
}

/* Account for one call; the status, or RS_NOREPLY. */
static int
wire_done(struct rs_conn *cn, enum clnt_stat st, const nlm_netobj *sent,
    const nlm_netobj *got, int stat)
{
	if (st != RPC_SUCCESS) {
		cn->cn_noreply++;
		/* A broken stream stays broken: the next call reconnects. */
		if (cn->cn_tcp)
			rs_conn_close(cn);
		return RS_NOREPLY;
	}
	if (got->nlm_netobj_len != sent->nlm_netobj_len ||
	    memcmp(got->nlm_netobj_val, sent->nlm_netobj_val,
	    sent->nlm_netobj_len) != 0)
		cn->cn_cookie_bad++;
	cn->cn_stat[stat >= 0 && stat < RS_NSTAT - 1 ? stat : RS_NSTAT - 1]++;
	return stat;
}

static void
wire_lock4(nlm4_lock *l, const struct rs_lk *k)
{
	l->caller_name = (char *)(uintptr_t)k->lk_name;
	l->fh.nlm_netobj_len = (u_int)strlen(k->lk_fh);
	l->fh.nlm_netobj_val = (char *)(uintptr_t)k->lk_fh;
	l->oh.nlm_netobj_len = (u_int)strlen(k->lk_oh);
	l->oh.nlm_netobj_val = (char *)(uintptr_t)k->lk_oh;
	l->svid = k->lk_svid;
	l->l_offset = k->lk_off;
	l->l_len = k->lk_len;
}

int
rs_call_lock(struct rs_conn *cn, const struct rs_lk *k, bool excl,
    bool block, bool reclaim)
{
	uint8_t cb[8];
	nlm4_lockargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	if (!wire_ready(cn))
		return RS_NOREPLY;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = wire_cookie(cn, cb);
	a.block = block;
	a.exclusive = excl;
	wire_lock4(&a.alock, k);
	a.reclaim = reclaim;
	a.state = RS_NSM_STATE;
	cn->cn_reclaims += reclaim;
	st = nlmproc4_lock_4(&a, &r, cn->cn_clnt);
	ret = wire_done(cn, st, &a.cookie, &r.cookie, (int)r.stat.stat);
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

int
rs_call_test(struct rs_conn *cn, const struct rs_lk *k, bool excl)
{
	uint8_t cb[8];
	nlm4_testargs a;
	nlm4_testres r;
	enum clnt_stat st;
	int ret;

	if (!wire_ready(cn))
		return RS_NOREPLY;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = wire_cookie(cn, cb);
	a.exclusive = excl;
	wire_lock4(&a.alock, k);
	st = nlmproc4_test_4(&a, &r, cn->cn_clnt);
	ret = wire_done(cn, st, &a.cookie, &r.cookie, (int)r.test_stat.stat);
	xdr_free(XDRPROC(xdr_nlm4_testres), (char *)&r);
	return ret;
}

int
rs_call_cancel(struct rs_conn *cn, const struct rs_lk *k, bool excl,
    bool block)
{
	uint8_t cb[8];
	nlm4_cancargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	if (!wire_ready(cn))
		return RS_NOREPLY;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = wire_cookie(cn, cb);
	a.block = block;
	a.exclusive = excl;
	wire_lock4(&a.alock, k);
	st = nlmproc4_cancel_4(&a, &r, cn->cn_clnt);
	ret = wire_done(cn, st, &a.cookie, &r.cookie, (int)r.stat.stat);
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

int
rs_call_unlock(struct rs_conn *cn, const struct rs_lk *k)
{
	uint8_t cb[8];
	nlm4_unlockargs a;
	nlm4_res r;
	enum clnt_stat st;
	int ret;

	if (!wire_ready(cn))
		return RS_NOREPLY;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = wire_cookie(cn, cb);
	wire_lock4(&a.alock, k);
	st = nlmproc4_unlock_4(&a, &r, cn->cn_clnt);
	ret = wire_done(cn, st, &a.cookie, &r.cookie, (int)r.stat.stat);
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return ret;
}

static int
wire_share(struct rs_conn *cn, const struct rs_lk *k, int access, int deny,
    bool reclaim, bool unshare)
{
	uint8_t cb[8];
	nlm4_shareargs a;
	nlm4_shareres r;
	enum clnt_stat st;
	int ret;

	if (!wire_ready(cn))
		return RS_NOREPLY;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.cookie = wire_cookie(cn, cb);
	a.share.caller_name = (char *)(uintptr_t)k->lk_name;
	a.share.fh.nlm_netobj_len = (u_int)strlen(k->lk_fh);
	a.share.fh.nlm_netobj_val = (char *)(uintptr_t)k->lk_fh;
	a.share.oh.nlm_netobj_len = (u_int)strlen(k->lk_oh);
	a.share.oh.nlm_netobj_val = (char *)(uintptr_t)k->lk_oh;
	a.share.mode = (fsh_mode)deny;
	a.share.access = (fsh_access)access;
	a.reclaim = reclaim;
	cn->cn_reclaims += reclaim;
	st = unshare ? nlmproc4_unshare_4(&a, &r, cn->cn_clnt) :
	    nlmproc4_share_4(&a, &r, cn->cn_clnt);
	ret = wire_done(cn, st, &a.cookie, &r.cookie, (int)r.stat);
	xdr_free(XDRPROC(xdr_nlm4_shareres), (char *)&r);
	return ret;
}

int
rs_call_share(struct rs_conn *cn, const struct rs_lk *k, int access,
    int deny, bool reclaim)
{
	return wire_share(cn, k, access, deny, reclaim, false);
}

int
rs_call_unshare(struct rs_conn *cn, const struct rs_lk *k)
{
	return wire_share(cn, k, 0, 0, false, true);
}

void
rs_call_granted_res(struct rs_conn *cn, const nlm_netobj *cookie, int stat)
{
	nlm4_res a;

	if (!wire_ready(cn))
		return;
	memset(&a, 0, sizeof(a));
	a.cookie = *cookie;
	a.stat.stat = (nlm4_stats)stat;
	/* The handle's timeout is 1 ms: send, hardly wait. */
	(void)nlmproc4_granted_res_4(&a, NULL, cn->cn_clnt);
}

const char *
rs_stat_name(int stat)
{
	static const char *const names[] = { "GRANTED", "DENIED",
	    "DENIED_NOLOCKS", "BLOCKED", "DENIED_GRACE_PERIOD", "DEADLCK",
	    "ROFS", "STALE_FH", "FBIG", "FAILED" };

	if (stat == RS_NOREPLY)
		return "no reply";
	if (stat >= 0 && stat < (int)(sizeof(names) / sizeof(names[0])))
		return names[stat];
	return "unknown status";
}
