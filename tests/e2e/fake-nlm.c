/*
 * fake-nlm.c - a "grant everything" NLM server: the negative control of the
 * e2e suite.  It registers NLM (100021) v1, v3 and v4 on one TCP and one UDP
 * port, over IPv4 and (when the host has it) IPv6, with the local rpcbind
 * (netids tcp, udp, tcp6, udp6) and answers every TEST, LOCK, CANCEL, UNLOCK,
 * GRANTED, SHARE, UNSHARE and NM_LOCK with "granted", remembering nothing and
 * never calling back.  A suite that passes against this server checks
 * nothing; run.sh with E2E_SERVER=fake must fail.
 *
 * The replies of all those procedures begin with the caller's cookie
 * followed by the status, and a granted TEST reply is exactly that, so the
 * arguments are only decoded as far as needed to echo the cookie and to log
 * the lock (v4 only; v1/v3 calls are logged by procedure number).
 *
 * Usage: fake-nlm -p PORT        logs one line per call to stderr;
 *                                SIGTERM/SIGINT: unregister and exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>

#define NLM_PROG 100021
#define FAKE_MAXNETOBJ 1024
#define FAKE_MAXNAME 1024

enum {
	PROC_NULL = 0, PROC_TEST = 1, PROC_LOCK = 2, PROC_CANCEL = 3,
	PROC_UNLOCK = 4, PROC_GRANTED = 5, PROC_SHARE = 20,
	PROC_UNSHARE = 21, PROC_NM_LOCK = 22, PROC_FREE_ALL = 23
};

static const char *const procname[] = {
	"NULL", "TEST", "LOCK", "CANCEL", "UNLOCK", "GRANTED", "TEST_MSG",
	"LOCK_MSG", "CANCEL_MSG", "UNLOCK_MSG", "GRANTED_MSG", "TEST_RES",
	"LOCK_RES", "CANCEL_RES", "UNLOCK_RES", "GRANTED_RES", "SM_NOTIFY",
	"17", "18", "19", "SHARE", "UNSHARE", "NM_LOCK", "FREE_ALL",
};

static volatile sig_atomic_t stop;

/* What we decode of any call: the cookie, and for v4 locks the lock. */
struct fake_args {
	struct netobj cookie;
	bool_t block, exclusive, reclaim;
	char *caller;
	struct netobj fh, oh;
	int svid, state;
	u_quad_t off, len;
};

static bool_t
xdr_obj(XDR *x, struct netobj *o)
{
	return xdr_bytes(x, &o->n_bytes, &o->n_len, FAKE_MAXNETOBJ);
}

static bool_t
xdr_lock4(XDR *x, struct fake_args *a)
{
	return xdr_string(x, &a->caller, FAKE_MAXNAME) &&
	    xdr_obj(x, &a->fh) && xdr_obj(x, &a->oh) &&
	    xdr_int(x, &a->svid) && xdr_u_quad_t(x, &a->off) &&
	    xdr_u_quad_t(x, &a->len);
}

/* Decoder for one procedure; the procedure is passed through a global
 * because svc_getargs() decoders take no context. */
static int cur_vers, cur_proc;

static bool_t
xdr_fake_args(XDR *x, struct fake_args *a)
{
	if (!xdr_obj(x, &a->cookie))
		return FALSE;
	if (cur_vers != 4)
		return TRUE;
	switch (cur_proc) {
	case PROC_TEST:
		return xdr_bool(x, &a->exclusive) && xdr_lock4(x, a);
	case PROC_LOCK:
	case PROC_NM_LOCK:
		return xdr_bool(x, &a->block) && xdr_bool(x, &a->exclusive) &&
		    xdr_lock4(x, a) && xdr_bool(x, &a->reclaim) &&
		    xdr_int(x, &a->state);
	case PROC_CANCEL:
		return xdr_bool(x, &a->block) && xdr_bool(x, &a->exclusive) &&
		    xdr_lock4(x, a);
	case PROC_UNLOCK:
	case PROC_GRANTED:
		return xdr_lock4(x, a);
	}
	return TRUE;
}

static void
free_args(struct fake_args *a)
{
	free(a->cookie.n_bytes);
	free(a->caller);
	free(a->fh.n_bytes);
	free(a->oh.n_bytes);
	memset(a, 0, sizeof(*a));
}

/* Reply: cookie, status 0 (granted), and for SHARE a sequence number. */
struct fake_res {
	struct netobj *cookie;
	int share;
};

static bool_t
xdr_fake_res(XDR *x, struct fake_res *r)
{
	enum_t stat = 0;
	int seq = 0;

	return xdr_obj(x, r->cookie) && xdr_enum(x, &stat) &&
	    (!r->share || xdr_int(x, &seq));
}

/* xdr_void has no arguments, which -Wcast-function-type dislikes. */
static bool_t
xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static const char *
caller_addr(SVCXPRT *xprt, char *buf, size_t sz)
{
	const struct netbuf *nb = svc_getrpccaller(xprt);
	const struct sockaddr *sa;
	char a[INET6_ADDRSTRLEN];

	if (nb == NULL || nb->len < sizeof(struct sockaddr_in))
		return "?";
	sa = nb->buf;
	if (sa->sa_family == AF_INET6 &&
	    nb->len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = nb->buf;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, sz, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = nb->buf;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(buf, sz, "%s:%u", a, ntohs(sin->sin_port));
	} else {
		return "?";
	}
	return buf;
}

static void
dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct fake_args a;
	struct fake_res r;
	char from[64];
	const char *pn;

	memset(&a, 0, sizeof(a));
	cur_vers = (int)rq->rq_vers;
	cur_proc = (int)rq->rq_proc;
	pn = rq->rq_proc < sizeof(procname) / sizeof(procname[0]) ?
	    procname[rq->rq_proc] : "?";
	if (rq->rq_proc == PROC_NULL) {
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		return;
	}
	if (!svc_getargs(xprt, (xdrproc_t)xdr_fake_args, (caddr_t)&a)) {
		fprintf(stderr, "fake-nlm: v%d %s from %s: garbage\n",
		    cur_vers, pn, caller_addr(xprt, from, sizeof(from)));
		svcerr_decode(xprt);
		goto out;
	}
	fprintf(stderr, "fake-nlm: v%d %s from %s caller=%s svid=%d "
	    "off=%llu len=%llu excl=%d block=%d -> granted\n", cur_vers, pn,
	    caller_addr(xprt, from, sizeof(from)),
	    a.caller ? a.caller : "-", a.svid, (unsigned long long)a.off,
	    (unsigned long long)a.len, a.exclusive, a.block);
	switch (rq->rq_proc) {
	case PROC_TEST:
	case PROC_LOCK:
	case PROC_CANCEL:
	case PROC_UNLOCK:
	case PROC_GRANTED:
	case PROC_NM_LOCK:
	case PROC_SHARE:
	case PROC_UNSHARE:
		r.cookie = &a.cookie;
		r.share = rq->rq_proc == PROC_SHARE ||
		    rq->rq_proc == PROC_UNSHARE;
		svc_sendreply(xprt, (xdrproc_t)xdr_fake_res, (caddr_t)&r);
		break;
	default:
		/* _MSG, _RES, SM_NOTIFY, FREE_ALL: void reply, no callback. */
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	}
out:
	svc_freeargs(xprt, (xdrproc_t)xdr_fake_args, (caddr_t)&a);
	free_args(&a);
}

/* A socket of `family' bound to `port' (IPv6: IPv6 only), listening if TCP. */
static int
bound_socket(int family, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	fd = socket(family, type, 0);
	if (fd == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)port);
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)port);
		len = sizeof(*sin);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) == -1 ||
	    (type == SOCK_STREAM && listen(fd, 64) == -1)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
unregister_all(void)
{
	static const unsigned long vers[] = {1, 3, 4};
	size_t i;

	for (i = 0; i < 3; i++)
		rpcb_unset(NLM_PROG, vers[i], NULL);	/* every netid */
}

/*
 * Serve and register NLM v1, v3 and v4 on `netid' (tcp, udp, tcp6, udp6)
 * at `port'.  0, or -1 (errno or the reason on stderr).
 */
static int
serve(const char *netid, int port)
{
	static const unsigned long vers[] = {1, 3, 4};
	struct netconfig *nc;
	SVCXPRT *xprt;
	size_t i;
	int fd, family, type;

	family = strchr(netid, '6') != NULL ? AF_INET6 : AF_INET;
	type = strncmp(netid, "tcp", 3) == 0 ? SOCK_STREAM : SOCK_DGRAM;
	if ((nc = getnetconfigent(netid)) == NULL) {
		fprintf(stderr, "fake-nlm: no netconfig entry %s\n", netid);
		return -1;
	}
	if ((fd = bound_socket(family, type, port)) == -1) {
		fprintf(stderr, "fake-nlm: %s: bind port %d: %s\n", netid,
		    port, strerror(errno));
		freenetconfigent(nc);
		return -1;
	}
	if ((xprt = svc_tli_create(fd, nc, NULL, 0, 0)) == NULL) {
		fprintf(stderr, "fake-nlm: %s: cannot create the transport\n",
		    netid);
		close(fd);
		freenetconfigent(nc);
		return -1;
	}
	for (i = 0; i < 3; i++)
		if (!svc_reg(xprt, NLM_PROG, vers[i], dispatch, nc)) {
			fprintf(stderr, "fake-nlm: %s: cannot register v%lu "
			    "with rpcbind\n", netid, vers[i]);
			freenetconfigent(nc);
			return -1;
		}
	freenetconfigent(nc);
	return 0;
}

int
main(int argc, char **argv)
{
	int port = 0, c, v6 = 0;

	while ((c = getopt(argc, argv, "p:")) != -1) {
		if (c != 'p') {
			fprintf(stderr, "usage: fake-nlm -p PORT\n");
			return 2;
		}
		port = atoi(optarg);
	}
	unregister_all();
	if (serve("tcp", port) == -1 || serve("udp", port) == -1) {
		unregister_all();
		return 1;
	}
	/* IPv6 when the host has it (the e2e's locks-v6 boot). */
	if (access("/proc/net/if_inet6", F_OK) == 0) {
		if (serve("tcp6", port) == -1 || serve("udp6", port) == -1) {
			unregister_all();
			return 1;
		}
		v6 = 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fprintf(stderr, "fake-nlm: serving NLM v1/v3/v4 on port %d, %s "
	    "(grants everything)\n", port, v6 ? "IPv4+IPv6" : "IPv4");
	while (!stop) {
		int n = poll(svc_pollfd, (nfds_t)svc_max_pollfd, 500);

		if (n > 0)
			svc_getreq_poll(svc_pollfd, n);
		else if (n == -1 && errno != EINTR)
			break;
	}
	unregister_all();
	fprintf(stderr, "fake-nlm: unregistered, exiting\n");
	return 0;
}
