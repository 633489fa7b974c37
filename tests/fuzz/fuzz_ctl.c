/*
 * fuzz_ctl.c - libFuzzer: the control protocol nlmctl speaks to nlmd, from
 * the bytes of a connection to the answer, through the real control server
 * (ctl/ctlsrv.c: reading a request, its limits; ctl/ctl.c: parsing it,
 * percent-decoding) and the real commands (nlm/nlm_ctl.c: status, release,
 * grace-end; metrics as nlmd registers it) of an NLM service over
 * tests/fakes/store_fake.c, on the fake clock.
 *
 * Input: request lines, split on '\n'.  Each line (its '\n' with it) goes
 * to the control socket on a connection of its own, in one piece, or, every
 * other line, in two with a turn of the loop between them; the loop turns
 * (5 ms of the fake clock each, the poll of a held answer) until the server
 * closes the connection; every fourth line's reader goes away two turns
 * after it was sent, unread (fz_abandon()).  A last piece with no '\n' is
 * sent and the sending side shut: no answer unless it filled the request
 * buffer.  At most FZ_MAXREQ requests an input.
 *
 * Before the requests, each input sets up the same service: hosts of
 * several addresses (IPv4, IPv6, link-local with a scope, two hosts named
 * alice; one name with a blank, '%' and '='), locks and shares
 * taken through LOCK and SHARE calls (onc_dispatch()), a restart (they come
 * back reclaimable, grace begins), a reclaim, new locks, a share and a
 * queued LOCK in grace: status has something to list, release something
 * to release, grace-end something to drop.
 *
 * After every turn lk_table_check().  After every request: the answer is
 * "nlmctl 1 ok", body lines, "nlmctl 1 end N" with N the number of body
 * lines (none forging a protocol line; outside metrics each KIND, then
 * TAB-separated KEY=VALUE fields, VALUE percent-encoded), or one line
 * "nlmctl 1 error MESSAGE" in printable ASCII, then EOF; an error, a
 * status, metrics and a dry run change no lock, share or waiter (a digest
 * of the table); every "released" line of a release names a record held
 * before it, once, and that record is gone after a release that is not a
 * dry run; a status with neither host= nor fh= has a line for each host
 * and record its totals line counts (waiters: those queued); a grace-end
 * answered ok leaves nothing reclaimable and no grace, and says it dropped
 * what was reclaimable.  Every line is also put through ctl_enc()/
 * ctl_dec(), ctl_vis() and ctl_hex()/ctl_unhex() on buffers of exactly the
 * size they need, and one byte short.  With FUZZ_CTL_SHOW set in the
 * environment, each request and its answer are printed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "ctlsrv.h"
#include "lockcore.h"
#include "nlm.h"
#include "nsm.h"
#include "rpc/nlm_prot.h"
#include "rpcout.h"
#include "sbuf.h"
#include "srv_impl.h"
#include "store.h"
#include "tests/fakes/fakes.h"
#include "tests/fuzz/fz_service.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

#define FZ_MAXREQ	16
/* Turns an answer may take (a release in pieces, a held answer: few). */
#define FZ_MAXTURNS	400
#define FZ_TURN_MS	5
/* Turns after a reader went away (the release timer's are due at once). */
#define FZ_ABANDON_TURNS 20
#define FZ_ANSWER_MAX	(1 << 20)

static const struct fz_peer fz_peers[] = {
	{ AF_INET, "127.0.0.1", 700, 0 },
	{ AF_INET, "10.0.0.1", 900, 0 },
	{ AF_INET, "10.0.0.2", 41000, 0 },
	{ AF_INET6, "fd00::1", 1000, 0 },
	{ AF_INET, "192.168.1.1", 1023, 0 },
	{ AF_INET6, "::1", 800, 0 },
	{ AF_INET6, "fe80::1", 600, 1 },
	{ AF_INET, "10.0.0.3", 650, 0 },
};

static struct {
	struct ctl_srv	*ctl;
	uint32_t	 xid;
	char		 sdir[64];	/* the control socket's */
	char		 path[96];
	char		*ans;		/* FZ_ANSWER_MAX + 1 bytes */
	size_t		 anslen;
	bool		 show;		/* FUZZ_CTL_SHOW set: print answers */
} fz;

/* ---- the sending functions of rpc/rpcsend.h: nothing leaves ---- */

enum onc_status onc_send_from(int, const void *, size_t,
	    const struct sockaddr_storage *, socklen_t,
	    const struct sockaddr_storage *);
ssize_t	onc_stream_send(int, const void *, size_t);
size_t	onc_send_many(int, const struct onc_dgram *, size_t, size_t *);

enum onc_status
onc_send_from(int fd, const void *buf, size_t len,
    const struct sockaddr_storage *dst, socklen_t dstlen,
    const struct sockaddr_storage *src)
{
	(void)fd;
	(void)buf;
	(void)len;
	(void)dst;
	(void)dstlen;
	(void)src;
	return ONC_OK;
}

ssize_t
onc_stream_send(int fd, const void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	return (ssize_t)len;
}

size_t
onc_send_many(int fd, const struct onc_dgram *d, size_t n, size_t *nfull)
{
	return onc_send_each(fd, d, n, nfull, onc_send_from);
}

/* ---- the service ---- */

/* `metrics', as nlmd registers it (cmd/nlmd.c): the text line by line. */
static void
fz_metrics(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	struct sbuf sb;
	char *line, *save = NULL;

	(void)rq;
	(void)arg;
	memset(&sb, 0, sizeof(sb));
	nlm_metrics(&sb);
	nsm_metrics(&sb);
	if (sb.sb_failed || sb.sb_buf == NULL) {
		ctl_error(c, "out of memory");
		sbuf_free(&sb);
		return;
	}
	for (line = strtok_r(sb.sb_buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		ctl_raw(c, "%s", line);
	sbuf_free(&sb);
}

static void
fz_start(void)
{
	struct nlm_config nc;

	fz_svc_config(&nc);
	nc.nc_max_hosts = 64;
	fz_svc_start(&nc);
}

static void
fz_stop(void)
{
	ctl_srv_free(fz.ctl);
	fz.ctl = NULL;
	fz_svc_stop();
}

/* ---- the setup: NLM calls from the peers ---- */

/* An NLM v4 call from peer p, through the server's dispatch. */
static void
fz_call(const struct fz_peer *p, uint32_t proc, xdrproc_t xargs,
    const void *args)
{
	struct rpc_msg m;
	uint8_t buf[4096];
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = ++fz.xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = NLM_PROG;
	m.rm_call.cb_vers = NLM4_VERS;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	FZ_CHECK(xdr_callmsg(&x, &m) && xargs(&x, (void *)(uintptr_t)args));
	fz_dispatch(buf, xdr_getpos(&x), p);
	xdr_destroy(&x);
}

struct fz_lock {
	unsigned	 peer;
	const char	*name;
	const char	*fh;
	int		 svid;
	const char	*oh;
	uint64_t	 off;
	uint64_t	 len;
	bool		 excl;
	bool		 block;
	bool		 reclaim;
};

static void
fz_lock(const struct fz_lock *l)
{
	static char cookie[4] = { 'c', 'k', 'i', 'e' };
	nlm4_lockargs a;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(cookie);
	a.cookie.nlm_netobj_val = cookie;
	a.block = l->block;
	a.exclusive = l->excl;
	a.reclaim = l->reclaim;
	a.state = 3;
	a.alock.caller_name = (char *)(uintptr_t)l->name;
	a.alock.fh.nlm_netobj_len = (u_int)strlen(l->fh);
	a.alock.fh.nlm_netobj_val = (char *)(uintptr_t)l->fh;
	a.alock.oh.nlm_netobj_len = (u_int)strlen(l->oh);
	a.alock.oh.nlm_netobj_val = (char *)(uintptr_t)l->oh;
	a.alock.svid = l->svid;
	a.alock.l_offset = l->off;
	a.alock.l_len = l->len;
	fz_call(&fz_peers[l->peer], NLMPROC4_LOCK, XDRPROC(xdr_nlm4_lockargs),
	    &a);
}

static void
fz_share(unsigned peer, const char *name, const char *fh, int access,
    int mode, bool reclaim)
{
	static char cookie[4] = { 's', 'h', 'r', 'e' };
	nlm4_shareargs a;

	memset(&a, 0, sizeof(a));
	a.cookie.nlm_netobj_len = sizeof(cookie);
	a.cookie.nlm_netobj_val = cookie;
	a.share.caller_name = (char *)(uintptr_t)name;
	a.share.fh.nlm_netobj_len = (u_int)strlen(fh);
	a.share.fh.nlm_netobj_val = (char *)(uintptr_t)fh;
	a.share.oh.nlm_netobj_len = 3;
	a.share.oh.nlm_netobj_val = (char *)(uintptr_t)"own";
	a.share.access = (fsh_access)access;
	a.share.mode = (fsh_mode)mode;
	a.reclaim = reclaim;
	fz_call(&fz_peers[peer], NLMPROC4_SHARE, XDRPROC(xdr_nlm4_shareargs),
	    &a);
}

/* Before the restart: all reclaimable after it. */
static const struct fz_lock fz_before[] = {
	{ 0, "alice", "f", 1, "own", 0, 10, true, false, false },
	{ 0, "alice", "f", 1, "own", 20, 0, false, false, false },
	{ 0, "alice", "g", 2, "own2", 0, 1, true, false, false },
	{ 1, "bob", "f", 7, "bob", 100, 1, false, false, false },
	{ 2, "we ird%=name", "\x01\xff", -5, "", 5, 5, true, false, false },
	{ 3, "v6", "f", 1, "own", 12, 1, true, false, false },
};

/* After it, in grace. */
static const struct fz_lock fz_after[] = {
	{ 0, "alice", "f", 1, "own", 0, 10, true, false, true },
	{ 4, "carol", "h", 1, "own", 0, 100, true, false, false },
	{ 5, "dave", "h", 9, "d", 50, 1, true, true, false },
	{ 6, "eve", "i", 1, "own", 0, 1, true, false, false },
	{ 7, "alice", "j", 1, "own", 0, 1, true, false, false },
	{ 7, "alice", "j", 1, "own", 4, 4, false, false, false },
};

static void
fz_setup(void)
{
	struct lk_counts ct;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(fz_before) / sizeof(fz_before[0]); i++)
		fz_lock(&fz_before[i]);
	fz_share(1, "bob", "g", 1, 0, false);
	fz_turn(100);
	fz_stop();
	fz_start();
	for (i = 0; i < sizeof(fz_after) / sizeof(fz_after[0]); i++)
		fz_lock(&fz_after[i]);
	fz_share(4, "carol", "h", 1, 0, false);
	fz_turn(100);
	/* What the requests find: the setup must not have gone wrong. */
	lk_table_counts(nlm_get_table(), &ct);
	FZ_CHECK(ct.ct_grace && ct.ct_rlocks > 0 && ct.ct_rshares > 0 &&
	    ct.ct_locks > 0 && ct.ct_shares > 0 && ct.ct_waiters > 0);
	fz.ctl = ctl_srv_new(fzs.loop, fz.path, (long)getgid(), err,
	    sizeof(err));
	if (fz.ctl == NULL) {
		fprintf(stderr, "fuzz_ctl: ctl_srv_new: %s\n", err);
		abort();
	}
	FZ_CHECK(nlm_ctl_register(fz.ctl, "sync") == 0 &&
	    ctl_srv_command(fz.ctl, "metrics", NULL, NULL, fz_metrics, NULL) == 0);
}

/* ---- the table: a digest, the records held ---- */

struct fz_rec {
	uint8_t		 kind;
	uint64_t	 host;
	int32_t		 svid;
	uint64_t	 start;
	uint64_t	 len;
	uint64_t	 token;
	uint8_t		 reclaim;
	bool		 listed;	/* in a "released" line */
	size_t		 ohlen;
	size_t		 fhlen;
	uint8_t		 oh[LK_OH_MAX];
	uint8_t		 fh[LK_FH_MAX];
};

#define FZ_MAXRECS	512

static struct {
	uint64_t	 digest;	/* sum of each record's hash */
	size_t		 n;
	struct fz_rec	 recs[FZ_MAXRECS];
} fz_tab;

static uint64_t
fz_fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t
fz_rec_hash(const struct lk_record *rc, uint8_t waiter)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = fz_fnv(h, &waiter, 1);
	h = fz_fnv(h, &rc->rc_kind, 1);
	h = fz_fnv(h, &rc->rc_host, sizeof(rc->rc_host));
	h = fz_fnv(h, &rc->rc_svid, sizeof(rc->rc_svid));
	h = fz_fnv(h, &rc->rc_ohlen, sizeof(rc->rc_ohlen));
	h = fz_fnv(h, rc->rc_oh, rc->rc_ohlen);
	h = fz_fnv(h, &rc->rc_fhlen, sizeof(rc->rc_fhlen));
	h = fz_fnv(h, rc->rc_fh, rc->rc_fhlen);
	h = fz_fnv(h, &rc->rc_start, sizeof(rc->rc_start));
	h = fz_fnv(h, &rc->rc_len, sizeof(rc->rc_len));
	h = fz_fnv(h, &rc->rc_token, sizeof(rc->rc_token));
	h = fz_fnv(h, &rc->rc_reclaim, 1);
	h = fz_fnv(h, &rc->rc_excl, 1);
	h = fz_fnv(h, &rc->rc_access, 1);
	return fz_fnv(h, &rc->rc_deny, 1);
}

static int
fz_tab_rec(const struct lk_record *rc, void *arg)
{
	struct fz_rec *r;

	(void)arg;
	fz_tab.digest += fz_rec_hash(rc, 0);
	FZ_CHECK(fz_tab.n < FZ_MAXRECS);
	r = &fz_tab.recs[fz_tab.n++];
	r->kind = rc->rc_kind;
	r->host = rc->rc_host;
	r->svid = rc->rc_svid;
	r->start = rc->rc_start;
	r->len = rc->rc_len;
	r->token = rc->rc_token;
	r->reclaim = rc->rc_reclaim;
	r->listed = false;
	r->ohlen = rc->rc_ohlen;
	r->fhlen = rc->rc_fhlen;
	memcpy(r->oh, rc->rc_oh, rc->rc_ohlen);
	memcpy(r->fh, rc->rc_fh, rc->rc_fhlen);
	return 0;
}

static int
fz_tab_waiter(const struct lk_waiter_info *wi, void *arg)
{
	(void)arg;
	fz_tab.digest += fz_rec_hash(&wi->wi_req, wi->wi_granted ? 2 : 1);
	return 0;
}

/* The table now: its digest, and its locks and shares into fz_tab. */
static uint64_t
fz_tab_take(void)
{
	const struct lk_table *t = nlm_get_table();

	fz_tab.digest = 0;
	fz_tab.n = 0;
	(void)lk_lock_foreach(t, fz_tab_rec, NULL);
	(void)lk_share_foreach(t, fz_tab_rec, NULL);
	(void)lk_waiter_foreach(t, fz_tab_waiter, NULL);
	return fz_tab.digest;
}

/* ---- the answer ---- */

static int
fz_xval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* An encoded value: printable, no blank, '=' or TAB; each '%' an escape. */
static void
fz_check_value(const char *v, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		FZ_CHECK(v[i] > 0x20 && v[i] < 0x7f && v[i] != '=');
		if (v[i] == '%') {
			FZ_CHECK(i + 2 < len && fz_xval(v[i + 1]) >= 0 &&
			    fz_xval(v[i + 2]) >= 0);
			i += 2;
		}
	}
}

/* KIND, then TAB-separated KEY=VALUE fields. */
static void
fz_check_body_line(const char *p, size_t len)
{
	size_t i = 0, f;

	while (i < len && p[i] >= 'a' && p[i] <= 'z')
		i++;
	FZ_CHECK(i > 0);
	while (i < len) {
		FZ_CHECK(p[i] == '\t');
		f = ++i;
		while (i < len && ((p[i] >= 'a' && p[i] <= 'z') ||
		    p[i] == '-'))
			i++;
		FZ_CHECK(i > f && i < len && p[i] == '=');
		f = ++i;
		while (i < len && p[i] != '\t')
			i++;
		fz_check_value(p + f, i - f);
	}
}

/* The value of `key' in a body line (not decoded), its length in *lenp. */
static const char *
fz_field(const char *p, size_t len, const char *key, size_t *lenp)
{
	size_t kl = strlen(key), i, e;

	for (i = 0; i < len; i++) {
		if (p[i] != '\t' || i + 1 + kl >= len ||
		    memcmp(p + i + 1, key, kl) != 0 || p[i + 1 + kl] != '=')
			continue;
		i += kl + 2;
		for (e = i; e < len && p[e] != '\t'; e++)
			;
		*lenp = e - i;
		return p + i;
	}
	return NULL;
}

static bool
fz_field_is(const char *p, size_t len, const char *key, const char *want)
{
	const char *v;
	size_t vl;

	return (v = fz_field(p, len, key, &vl)) != NULL &&
	    vl == strlen(want) && memcmp(v, want, vl) == 0;
}

static uint64_t
fz_field_u64(const char *p, size_t len, const char *key)
{
	const char *v;
	char b[32];
	size_t vl;

	FZ_CHECK((v = fz_field(p, len, key, &vl)) != NULL && vl > 0 &&
	    vl < sizeof(b));
	memcpy(b, v, vl);
	b[vl] = '\0';
	return strtoull(b, NULL, 10);
}

static bool
fz_field_hex(const char *p, size_t len, const char *key, const uint8_t *b,
    size_t blen)
{
	const char *v;
	size_t vl, i;

	if ((v = fz_field(p, len, key, &vl)) == NULL || vl != 2 * blen)
		return false;
	for (i = 0; i < blen; i++)
		if (fz_xval(v[2 * i]) != b[i] >> 4 ||
		    fz_xval(v[2 * i + 1]) != (b[i] & 15))
			return false;
	return true;
}

/*
 * A "released" line names one of the records held before the request,
 * not listed before.  It is marked listed.
 */
static void
fz_check_released(const char *p, size_t len)
{
	struct fz_rec *r;
	bool lock = fz_field_is(p, len, "kind", "lock");
	size_t i;

	FZ_CHECK(lock || fz_field_is(p, len, "kind", "share"));
	for (i = 0; i < fz_tab.n; i++) {
		r = &fz_tab.recs[i];
		if (r->listed || (r->kind == LK_REC_LOCK) != lock ||
		    r->host != fz_field_u64(p, len, "host") ||
		    !fz_field_hex(p, len, "oh", r->oh, r->ohlen) ||
		    !fz_field_hex(p, len, "fh", r->fh, r->fhlen) ||
		    r->reclaim != fz_field_u64(p, len, "reclaimable"))
			continue;
		if (lock) {
			char b[16];
			const char *v;
			size_t vl;

			snprintf(b, sizeof(b), "%d", (int)r->svid);
			if ((v = fz_field(p, len, "svid", &vl)) == NULL ||
			    vl != strlen(b) || memcmp(v, b, vl) != 0 ||
			    r->start != fz_field_u64(p, len, "start") ||
			    r->len != fz_field_u64(p, len, "len"))
				continue;
		}
		r->listed = true;
		return;
	}
	fprintf(stderr, "fuzz_ctl: released, never held or listed twice: "
	    "%.*s\n", (int)len, p);
	abort();
}

/* The records listed released, while fz_tab is taken anew. */
static struct {
	size_t		 n;
	struct fz_rec	 recs[FZ_MAXRECS];
} fz_gone;

static bool
fz_rec_same(const struct fz_rec *a, const struct fz_rec *b)
{
	if (a->kind != b->kind || a->host != b->host ||
	    a->ohlen != b->ohlen || a->fhlen != b->fhlen ||
	    memcmp(a->oh, b->oh, a->ohlen) != 0 ||
	    memcmp(a->fh, b->fh, a->fhlen) != 0)
		return false;
	/* A lock of that owner granted since has a newer token. */
	return a->kind != LK_REC_LOCK || (a->svid == b->svid &&
	    a->start == b->start && a->len == b->len && a->token == b->token);
}

/* Keep the records listed released (fz_tab: the table before). */
static void
fz_gone_keep(void)
{
	size_t i;

	fz_gone.n = 0;
	for (i = 0; i < fz_tab.n; i++)
		if (fz_tab.recs[i].listed)
			fz_gone.recs[fz_gone.n++] = fz_tab.recs[i];
}

/* None of them is held any more (fz_tab: the table after). */
static void
fz_gone_check(void)
{
	const struct fz_rec *g;
	size_t i, j;

	for (i = 0; i < fz_gone.n; i++) {
		g = &fz_gone.recs[i];
		for (j = 0; j < fz_tab.n; j++)
			FZ_CHECK(!fz_rec_same(g, &fz_tab.recs[j]));
	}
}

/* What the harness makes of a request line (independently of ctl.c). */
struct fz_req {
	char	 cmd[32];
	bool	 dry;		/* the first dry-run= decodes to "1" */
	bool	 filtered;	/* a host= or fh= argument */
};

/* Does v[0..len), percent-decoded, read "1"? */
static bool
fz_is_one(const uint8_t *v, size_t len)
{
	if (len == 1)
		return v[0] == '1';
	return len == 3 && v[0] == '%' && fz_xval((char)v[1]) == 3 &&
	    fz_xval((char)v[2]) == 1;
}

static void
fz_req_read(const uint8_t *line, size_t len, struct fz_req *q)
{
	size_t i = 0, s, n = 0;
	bool seen = false;

	memset(q, 0, sizeof(*q));
	while (i < len) {
		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			break;
		s = i;
		while (i < len && line[i] != ' ')
			i++;
		if (n == 2 && i - s < sizeof(q->cmd))
			memcpy(q->cmd, line + s, i - s);
		if (n > 2 && ((i - s >= 5 && memcmp(line + s, "host=", 5) ==
		    0) || (i - s >= 3 && memcmp(line + s, "fh=", 3) == 0)))
			q->filtered = true;
		else if (n > 2 && !seen && i - s >= 8 &&
		    memcmp(line + s, "dry-run=", 8) == 0) {
			seen = true;
			q->dry = fz_is_one(line + s + 8, i - s - 8);
		}
		n++;
	}
}

/* What the body lines of an answer said. */
struct fz_tally {
	size_t		 lines;
	size_t		 nk[4];		/* host, lock, share, queued waiter
					   lines */
	uint64_t	 tot[4];	/* the same, as the totals line says */
	bool		 grace;		/* grace-end's line came */
};

/* One body line of the answer to q (before it: counts ct0). */
static void
fz_check_line(const struct fz_req *q, const char *p, size_t ll,
    const struct lk_counts *ct0, struct fz_tally *t)
{
	static const char *const kinds[4] = { "host\t", "lock\t", "share\t",
	    "waiter\t" };
	size_t i;

	t->lines++;
	FZ_CHECK(ll > 0 && (ll < 7 || memcmp(p, CTL_MAGIC " ", 7) != 0));
	if (strcmp(q->cmd, "metrics") == 0) {
		for (i = 0; i < ll; i++)
			FZ_CHECK(p[i] >= 0x20 && p[i] < 0x7f);
		return;
	}
	fz_check_body_line(p, ll);
	/* Waiters: the queued (totals count no unconfirmed grant). */
	for (i = 0; i < 4; i++)
		if (ll > strlen(kinds[i]) &&
		    memcmp(p, kinds[i], strlen(kinds[i])) == 0 &&
		    (i < 3 || fz_field_is(p, ll, "granted", "0")))
			t->nk[i]++;
	if (ll > 7 && memcmp(p, "totals\t", 7) == 0) {
		t->tot[0] = fz_field_u64(p, ll, "hosts");
		t->tot[1] = fz_field_u64(p, ll, "locks") +
		    fz_field_u64(p, ll, "reclaimable-locks");
		t->tot[2] = fz_field_u64(p, ll, "shares") +
		    fz_field_u64(p, ll, "reclaimable-shares");
		t->tot[3] = fz_field_u64(p, ll, "waiters");
	}
	if (strcmp(q->cmd, "release") == 0) {
		FZ_CHECK(ll > 9 && memcmp(p, "released\t", 9) == 0);
		fz_check_released(p, ll);
	}
	if (strcmp(q->cmd, "grace-end") == 0 && ll > 6 &&
	    memcmp(p, "grace\t", 6) == 0) {
		FZ_CHECK(fz_field_u64(p, ll, "dropped-locks") ==
		    ct0->ct_rlocks);
		FZ_CHECK(fz_field_u64(p, ll, "dropped-shares") ==
		    ct0->ct_rshares);
		t->grace = true;
	}
}

/*
 * An answer "ok": its body lines, then "end N" counting them; what it
 * says it did is what happened (the table was `before' and counts ct0).
 */
static void
fz_check_ok(const struct fz_req *q, uint64_t before,
    const struct lk_counts *ct0)
{
	static const char ok[] = CTL_MAGIC " 1 ok\n";
	const char *a = fz.ans, *p, *nl;
	struct fz_tally t;
	struct lk_counts ct;
	char end[64];
	uint64_t after;

	memset(&t, 0, sizeof(t));
	FZ_CHECK(fz.anslen >= sizeof(ok) - 1 &&
	    memcmp(a, ok, sizeof(ok) - 1) == 0);
	for (p = a + sizeof(ok) - 1; p < a + fz.anslen; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(a + fz.anslen - p));
		if (nl + 1 == a + fz.anslen)
			break;
		fz_check_line(q, p, (size_t)(nl - p), ct0, &t);
	}
	FZ_CHECK(p < a + fz.anslen);
	snprintf(end, sizeof(end), CTL_MAGIC " 1 end %zu\n", t.lines);
	FZ_CHECK((size_t)(a + fz.anslen - p) == strlen(end) &&
	    memcmp(p, end, strlen(end)) == 0);
	/*
	 * A status of everything: a line for each host the totals count,
	 * and with locks=1 (records listed) for each record.
	 */
	if (strcmp(q->cmd, "status") == 0 && !q->filtered) {
		FZ_CHECK(t.nk[0] == t.tot[0]);
		if (t.nk[1] + t.nk[2] + t.nk[3] > 0)
			FZ_CHECK(t.nk[1] == t.tot[1] && t.nk[2] == t.tot[2] &&
			    t.nk[3] == t.tot[3]);
	}
	fz_gone_keep();
	after = fz_tab_take();
	lk_table_counts(nlm_get_table(), &ct);
	if (strcmp(q->cmd, "release") == 0 && !q->dry)
		fz_gone_check();
	if (strcmp(q->cmd, "grace-end") == 0) {
		FZ_CHECK(t.grace && t.lines == 1);
		FZ_CHECK(!ct.ct_grace && ct.ct_rlocks == 0 &&
		    ct.ct_rshares == 0);
	} else if (strcmp(q->cmd, "release") != 0 || q->dry)
		FZ_CHECK(after == before);
}

/*
 * The answer to request q (terminated: it had its '\n'; reqlen bytes),
 * taken before table `before' (fz_tab) and counts ct0: none to a request
 * cut off, else "ok" and the rest (fz_check_ok()), or one error line that
 * changed nothing.
 */
static void
fz_check_answer(const struct fz_req *q, bool terminated, size_t reqlen,
    uint64_t before, const struct lk_counts *ct0)
{
	static const char er[] = CTL_MAGIC " 1 error ";
	const char *a = fz.ans;
	size_t i;

	if (!terminated && reqlen < CTL_REQ_MAX) {
		FZ_CHECK(fz.anslen == 0);
		FZ_CHECK(fz_tab_take() == before);
		return;
	}
	FZ_CHECK(fz.anslen > 0 && a[fz.anslen - 1] == '\n');
	FZ_CHECK(memchr(a, '\0', fz.anslen) == NULL);
	if (fz.anslen >= sizeof(er) - 1 && memcmp(a, er, sizeof(er) - 1) == 0) {
		/* One line of printable ASCII, and nothing changed. */
		for (i = sizeof(er) - 1; i < fz.anslen - 1; i++)
			FZ_CHECK(a[i] >= 0x20 && a[i] < 0x7f);
		FZ_CHECK(fz_tab_take() == before);
		return;
	}
	FZ_CHECK(terminated);
	fz_check_ok(q, before, ct0);
}

/* ---- one request ---- */

static int
fz_connect(void)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, fz.path, strlen(fz.path));
	FZ_CHECK((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1);
	FZ_CHECK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	return fd;
}

static void
fz_send_all(int fd, const uint8_t *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		/* A request that filled the buffer is answered and closed. */
		if (n == -1 && (errno == EPIPE || errno == ECONNRESET))
			return;
		FZ_CHECK(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

/*
 * Take what the socket has; true at EOF (or the server gone: it closes a
 * connection whose request filled its buffer with the rest unread).
 */
static bool
fz_read(int fd)
{
	ssize_t n;

	for (;;) {
		n = recv(fd, fz.ans + fz.anslen, FZ_ANSWER_MAX - fz.anslen,
		    MSG_DONTWAIT);
		if (n > 0) {
			fz.anslen += (size_t)n;
			FZ_CHECK(fz.anslen < FZ_ANSWER_MAX);
			continue;
		}
		if (n == 0)
			return true;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return false;
		FZ_CHECK(errno == ECONNRESET);
		return true;
	}
}

/*
 * A request whose reader went away (nlmctl killed) two turns after it was
 * sent: whatever it had begun goes on or stops without it.  The table
 * stays consistent (fz_turn()); a status, metrics or dry run, or a
 * request cut off, changed nothing.
 */
static void
fz_abandon(int fd, const struct fz_req *q, bool terminated, size_t len,
    uint64_t before)
{
	int i;

	fz_turn(FZ_TURN_MS);
	fz_turn(FZ_TURN_MS);
	(void)fz_read(fd);
	close(fd);
	for (i = 0; i < FZ_ABANDON_TURNS; i++)
		fz_turn(FZ_TURN_MS);
	if ((!terminated && len < CTL_REQ_MAX) ||
	    strcmp(q->cmd, "status") == 0 || strcmp(q->cmd, "metrics") == 0 ||
	    (strcmp(q->cmd, "release") == 0 && q->dry))
		FZ_CHECK(fz_tab_take() == before);
}

static void
fz_request(const uint8_t *line, size_t len, bool terminated, bool split,
    bool abandon)
{
	struct lk_counts ct0;
	struct fz_req q;
	uint64_t before;
	size_t half = split ? len / 2 : len;
	int fd, i;

	fz_req_read(line, terminated ? len - 1 : len, &q);
	before = fz_tab_take();
	lk_table_counts(nlm_get_table(), &ct0);
	fz.anslen = 0;
	fd = fz_connect();
	fz_send_all(fd, line, half);
	if (half < len) {
		fz_turn(FZ_TURN_MS);
		fz_turn(FZ_TURN_MS);
		fz_send_all(fd, line + half, len - half);
	}
	if (!terminated)
		(void)shutdown(fd, SHUT_WR);
	if (abandon) {
		fz_abandon(fd, &q, terminated, len, before);
		return;
	}
	for (i = 0; i < FZ_MAXTURNS; i++) {
		fz_turn(FZ_TURN_MS);
		if (fz_read(fd))
			break;
	}
	if (i == FZ_MAXTURNS) {
		fprintf(stderr, "fuzz_ctl: no end of the answer after %d "
		    "turns: %.*s\n", FZ_MAXTURNS, (int)fz.anslen, fz.ans);
		abort();
	}
	close(fd);
	if (fz.show)
		fprintf(stderr, "fuzz_ctl: request %.*s\n"
		    "fuzz_ctl: answer\n%.*s", (int)len, (const char *)line,
		    (int)fz.anslen, fz.ans);
	fz_check_answer(&q, terminated, len, before, &ct0);
}

/* ---- the encoding functions of ctl.c, on the line's bytes ---- */

static void
fz_codec(const uint8_t *line, size_t len)
{
	char *s, *enc, *vis, *hex;
	uint8_t *back;
	size_t n, sl, i, o;

	FZ_CHECK((s = malloc(len + 1)) != NULL);
	memcpy(s, line, len);
	s[len] = '\0';
	sl = strlen(s);
	/* ctl_enc: printable, no '=', and ctl_dec gives the bytes back. */
	FZ_CHECK((enc = malloc(3 * len + 1)) != NULL);
	n = ctl_enc(s, len, enc, 3 * len + 1);
	FZ_CHECK(n != (size_t)-1 && n <= 3 * len && enc[n] == '\0');
	fz_check_value(enc, n);
	if (n > 0)
		FZ_CHECK(ctl_enc(s, len, enc, n) == (size_t)-1);
	n = ctl_enc(s, len, enc, 3 * len + 1);
	FZ_CHECK(ctl_dec(enc) == len && memcmp(enc, s, len) == 0);
	free(enc);
	/* ctl_vis: never empty, printable, no blank; read back, the same. */
	FZ_CHECK((vis = malloc(CTL_VIS_MAX(sl))) != NULL);
	n = ctl_vis(s, vis, CTL_VIS_MAX(sl));
	FZ_CHECK(n != (size_t)-1 && n > 0 && vis[n] == '\0');
	FZ_CHECK(strcmp(vis, "-") != 0 || sl == 0);
	FZ_CHECK(strcmp(vis, "?") != 0);
	for (i = 0, o = 0; i < n; o++) {
		FZ_CHECK(vis[i] > 0x20 && vis[i] < 0x7f);
		if (vis[i] == '\\') {
			FZ_CHECK(i + 3 < n && vis[i + 1] >= '0' &&
			    vis[i + 1] <= '3' && vis[i + 2] >= '0' &&
			    vis[i + 2] <= '7' && vis[i + 3] >= '0' &&
			    vis[i + 3] <= '7');
			FZ_CHECK(o < sl && (uint8_t)s[o] ==
			    ((vis[i + 1] - '0') << 6 | (vis[i + 2] - '0') << 3 |
			    (vis[i + 3] - '0')));
			i += 4;
		} else {
			FZ_CHECK(sl == 0 || (o < sl && vis[i] == s[o]));
			i++;
		}
	}
	FZ_CHECK(o == (sl == 0 ? 1 : sl));
	FZ_CHECK(ctl_vis(s, vis, n) == (size_t)-1);
	free(vis);
	/* ctl_hex and back. */
	FZ_CHECK((hex = malloc(2 * len + 1)) != NULL);
	FZ_CHECK((back = malloc(len + 1)) != NULL);
	ctl_hex(line, len, hex, 2 * len + 1);
	FZ_CHECK(strlen(hex) == 2 * len);
	FZ_CHECK(ctl_unhex(hex, back, len) == (long)len &&
	    memcmp(back, line, len) == 0);
	if (len > 0)
		FZ_CHECK(ctl_unhex(hex, back, len - 1) == -1);
	/* And ctl_unhex on the line itself, as fh= and owner= get it. */
	(void)ctl_unhex(s, back, sl / 2 < len ? sl / 2 : len);
	free(back);
	free(hex);
	free(s);
}

/* At exit: the socket's directory (empty: each input's stop removed it). */
static void
fz_cleanup(void)
{
	(void)rmdir(fz.sdir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_svc_init();
	snprintf(fz.sdir, sizeof(fz.sdir), "/tmp/nlmd-fuzzctl.XXXXXX");
	FZ_CHECK(mkdtemp(fz.sdir) != NULL);
	snprintf(fz.path, sizeof(fz.path), "%s/ctl.sock", fz.sdir);
	FZ_CHECK(atexit(fz_cleanup) == 0);
	FZ_CHECK((fz.ans = malloc(FZ_ANSWER_MAX + 1)) != NULL);
	fz.show = getenv("FUZZ_CTL_SHOW") != NULL;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *nl;
	size_t left = size, len;
	unsigned nreq = 0;

	fake_store_reset();
	fzs.clock = 1000000;
	fz.xid = 0;
	fz_start();
	fz_setup();
	while (left > 0 && nreq < FZ_MAXREQ) {
		nl = memchr(p, '\n', left);
		len = nl != NULL ? (size_t)(nl - p) + 1 : left;
		fz_codec(p, nl != NULL ? len - 1 : len);
		fz_request(p, len, nl != NULL, nreq % 2 == 1, nreq % 4 == 3);
		p += len;
		left -= len;
		nreq++;
	}
	fz_stop();
	return 0;
}
