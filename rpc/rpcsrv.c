/*
 * rpcsrv.c - see rpcsrv.h.  This file: creating, listening, freeing;
 * the rest is in srv_xprt.c, srv_reply.c, srv_udp.c and srv_tcp.c.
 *
 * HOW IT WORKS.
 *  - Listeners: one UDP and one TCP socket per address family, all
 *    non-blocking, registered on the event loop.
 *  - UDP: on readiness, up to UDP_BATCH datagrams are read with recvmmsg()
 *    (IP_PKTINFO / IPV6_RECVPKTINFO give the local address), each is
 *    dispatched, and its reply is queued with that local address so the
 *    reply leaves from where the request went.
 *  - TCP: accepted connections read whatever is available into an input
 *    buffer; complete fragments are moved into the record buffer (RFC 5531
 *    record marking); a complete record is dispatched.  A record larger
 *    than max_record closes the connection.  Replies are appended, record
 *    marked, to the connection's output queue; if the queue grows past
 *    max_outq the peer is not reading and the connection is closed.  While
 *    output is pending we also stop reading, so a client cannot make us
 *    buffer without bound.  Idle connections are closed by a sweep timer.
 *  - Dispatch: the call header is decoded with xdr_callmsg(); RPC version,
 *    credential flavour and program/version are checked here (with the
 *    standard error replies); then the generated dispatcher runs with a
 *    stack SVCXPRT whose ops read arguments from the same XDR stream and
 *    encode replies into our queue.
 */
#include "rpcsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"
#include "srv_impl.h"

struct onc_srv *
onc_srv_new(struct ev_loop *loop, const struct onc_srv_limits *lim)
{
	struct onc_srv *rs;

	if ((rs = calloc(1, sizeof(*rs))) == NULL)
		return NULL;
	rs->rs_share = ONC_TURN_CALLS;
	if ((rs->rs_udpb = malloc(sizeof(*rs->rs_udpb))) == NULL) {
		free(rs);
		return NULL;
	}
	rs->rs_udpb->ub_next = rs->rs_udpb->ub_n = 0;
	rs->rs_udpb->ub_turn = 0;
	rs->rs_udpb->ub_ncalls = 0;
	rs->rs_loop = loop;
	rs->rs_lim = *lim;
	if (rs->rs_lim.max_outq == 0)
		rs->rs_lim.max_outq = 4 * 1024 * 1024;
	if (rs->rs_lim.max_held == 0)
		rs->rs_lim.max_held = rs->rs_lim.max_outq / 2 < HELD_MAX ?
		    rs->rs_lim.max_outq / 2 : HELD_MAX;
	rs->rs_udptail = &rs->rs_udpq;
	rs->rs_udpnewtail = &rs->rs_udpnew;
	ev_timer_set(loop, &rs->rs_sweep, SWEEP_MS, onc_sweep, rs);
	return rs;
}

static void
onc_udp_drop(struct onc_udpreply *ur)
{
	struct onc_udpreply *next;

	for (; ur != NULL; ur = next) {
		next = ur->ur_next;
		free(ur);
	}
}

void
onc_srv_free(struct onc_srv *rs)
{
	struct onc_conn *co;
	size_t i;

	if (rs == NULL)
		return;
	/*
	 * What was never released is dropped, not sent: it may report a
	 * commit that did not happen (the daemon releases everything durable
	 * before it gets here).
	 */
	onc_udp_drop(rs->rs_udpnew);
	onc_udp_drop(rs->rs_udpq);
	onc_udp_drop(rs->rs_udpfree);
	while ((co = rs->rs_dirty) != NULL) {
		rs->rs_dirty = co->co_dirty;
		co->co_isdirty = 0;
	}
	while (rs->rs_conns != NULL)
		onc_conn_close(rs->rs_conns);
	for (i = 0; i < rs->rs_nlis; i++) {
		ev_timer_cancel(rs->rs_loop, &rs->rs_lis[i].rl_pause);
		ev_fd_del(rs->rs_loop, rs->rs_lis[i].rl_fd);
		close(rs->rs_lis[i].rl_fd);
	}
	ev_timer_cancel(rs->rs_loop, &rs->rs_sweep);
	ev_timer_cancel(rs->rs_loop, &rs->rs_resume);
	free(rs->rs_udpb);
	free(rs);
}

enum onc_status
onc_srv_add_program(struct onc_srv *rs, uint32_t prog, uint32_t vers,
    onc_dispatch_fn *fn)
{
	if (rs->rs_nprogs == MAX_PROGRAMS)
		return ONC_FULL;
	rs->rs_progs[rs->rs_nprogs].rp_prog = prog;
	rs->rs_progs[rs->rs_nprogs].rp_vers = vers;
	rs->rs_progs[rs->rs_nprogs].rp_fn = fn;
	rs->rs_nprogs++;
	return ONC_OK;
}

static enum onc_status
onc_xdr_swap_add(struct onc_xdr_swap *sw, xdrproc_t proc, xdrproc_t fast)
{
	if (sw->sw_n == MAX_SWAPS)
		return ONC_FULL;
	sw->sw_proc[sw->sw_n] = proc;
	sw->sw_fast[sw->sw_n] = fast;
	sw->sw_n++;
	return ONC_OK;
}

enum onc_status
onc_srv_add_decoder(struct onc_srv *rs, xdrproc_t proc, xdrproc_t fast)
{
	return onc_xdr_swap_add(&rs->rs_dec, proc, fast);
}

enum onc_status
onc_srv_add_encoder(struct onc_srv *rs, xdrproc_t proc, xdrproc_t fast)
{
	return onc_xdr_swap_add(&rs->rs_enc, proc, fast);
}

unsigned
onc_srv_share(const struct onc_srv *rs)
{
	return rs->rs_share;
}

uint64_t
onc_srv_paused_since(const struct onc_srv *rs)
{
	return rs->rs_paused;
}

const struct onc_srv_stats *
onc_srv_stats(const struct onc_srv *rs)
{
	return &rs->rs_stats;
}

int
onc_srv_has_family(const struct onc_srv *rs, int family)
{
	size_t i;

	for (i = 0; i < rs->rs_nlis; i++)
		if (rs->rs_lis[i].rl_family == family)
			return 1;
	return 0;
}

static int
onc_sock_open(int family, enum onc_xport xp, const struct sockaddr *sa,
    socklen_t sl, char *err, size_t errlen)
{
	int fd, one = 1;
	char a[80];

	fd = socket(family, (xp == ONC_TCP ? SOCK_STREAM : SOCK_DGRAM) |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		int saved = errno;

		snprintf(err, errlen, "socket: %s", strerror(errno));
		errno = saved;		/* onc_srv_listen() reads it */
		return -1;
	}
	/*
	 * TCP only: a restart binds again beside the last run's connections
	 * in TIME_WAIT.  UDP has none to wait for, and there SO_REUSEADDR
	 * lets any local user's socket that sets it too bind the same port
	 * on a more specific address (127.0.0.1, the host's own) and take
	 * the datagrams sent there: lock calls, SM_NOTIFY.
	 */
	if (xp == ONC_TCP)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
		    sizeof(one));
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (xp == ONC_UDP && family == AF_INET)
		(void)setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	if (xp == ONC_UDP && family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
		    sizeof(one));
	if (bind(fd, sa, sl) == -1 ||
	    (xp == ONC_TCP && listen(fd, 1024) == -1)) {
		int saved = errno;

		snprintf(err, errlen, "%s %s: %s", xp == ONC_TCP ? "tcp" : "udp",
		    addr_str(sa, 1, a, sizeof(a)), strerror(errno));
		close(fd);
		errno = saved;		/* onc_srv_listen() reads it */
		return -1;
	}
	return fd;
}

static enum onc_status
onc_srv_add_listener(struct onc_srv *rs, int family, enum onc_xport xp,
    const struct sockaddr *sa, socklen_t sl, char *err, size_t errlen)
{
	struct onc_listener *rl;
	int fd;

	if (rs->rs_nlis == MAX_LISTENERS) {
		snprintf(err, errlen, "too many listeners");
		return ONC_FULL;
	}
	if ((fd = onc_sock_open(family, xp, sa, sl, err, errlen)) == -1)
		return ONC_SOCKET;
	rl = &rs->rs_lis[rs->rs_nlis];
	rl->rl_fd = fd;
	rl->rl_family = family;
	rl->rl_xport = xp;
	rl->rl_srv = rs;
	if (ev_fd_add(rs->rs_loop, fd, EV_READ,
	    xp == ONC_TCP ? onc_tcp_accept : onc_udp_read, rl) == -1) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		close(fd);
		return ONC_SOCKET;
	}
	rs->rs_nlis++;
	return ONC_OK;
}

static unsigned
onc_sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/*
 * Fill `ss' for family (wildcard unless `addr' is given): 1; 0 if `addr'
 * is not a numeric address of that family; -1 if it is an IPv6 address
 * whose "%scope" names no interface.
 */
static int
onc_make_addr(int family, const char *addr, unsigned port,
    struct sockaddr_storage *ss, socklen_t *sl)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		if (addr != NULL && inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			return 0;
		*sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		const char *scope;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		s6->sin6_addr = in6addr_any;
		*sl = sizeof(*s6);
		if (addr == NULL)
			return 1;
		/* fe80::1%eth0: a link-local address and its interface */
		if (addr_parse6(addr, &s6->sin6_addr, &scope) == -1)
			return 0;
		if (scope[0] != '\0' &&
		    (s6->sin6_scope_id = addr_scope_id(scope, true)) == 0)
			return -1;
	}
	return 1;
}

bool
onc_no_ipv6(int e)
{
	return e == EAFNOSUPPORT || e == EPROTONOSUPPORT ||
	    e == EADDRNOTAVAIL;
}

/*
 * One try of onc_srv_listen().  *inuse: a socket after the first failed
 * with EADDRINUSE on the port the kernel chose for the first (port 0).
 */
static enum onc_status
onc_srv_listen_try(struct onc_srv *rs, const char *addr, unsigned port,
    unsigned *bound, bool *inuse, char *err, size_t errlen)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	struct sockaddr_storage ss;
	socklen_t sl;
	int f, x, m, opened = 0;
	bool chose = port == 0;
	enum onc_status s;
	char why[256];

	*inuse = false;
	for (f = 0; f < 2; f++) {
		if ((m = onc_make_addr(fams[f], addr, port, &ss, &sl)) == 0)
			continue;	/* the address is of the other family */
		if (m == -1) {
			snprintf(err, errlen, "'%s': no interface '%s' on this "
			    "host", addr, strchr(addr, '%') + 1);
			return ONC_BADADDR;
		}
		for (x = 0; x < 2; x++) {
			enum onc_xport xp = x == 0 ? ONC_TCP : ONC_UDP;

			if ((s = onc_srv_add_listener(rs, fams[f], xp,
			    (struct sockaddr *)&ss, sl, why, sizeof(why))) !=
			    ONC_OK) {
				*inuse = chose && opened > 0 &&
				    s == ONC_SOCKET && errno == EADDRINUSE;
				if (fams[f] == AF_INET6 && addr == NULL &&
				    opened > 0 && x == 0 && s == ONC_SOCKET &&
				    onc_no_ipv6(errno)) {
					/* Host without IPv6: go on with v4. */
					log_warnx("no IPv6 listener: %s", why);
					break;
				}
				snprintf(err, errlen, "%s", why);
				return s;
			}
			if (port == 0) {
				port = onc_sock_port(
				    rs->rs_lis[rs->rs_nlis - 1].rl_fd);
				(void)onc_make_addr(fams[f], addr, port, &ss,
				    &sl);
			}
			opened++;
		}
	}
	if (opened == 0) {
		snprintf(err, errlen, "'%s' is not a numeric address", addr);
		return ONC_BADADDR;
	}
	*bound = port;
	return ONC_OK;
}

/*
 * With port 0 the kernel picks a free TCP port, which some UDP socket (or
 * another v6 one) may hold: then try again, up to ONC_LISTEN_TRIES times,
 * keeping the sockets of the failed tries open meanwhile so that the
 * kernel picks another port each time (closed at the end).
 */
#define ONC_LISTEN_TRIES	16

enum onc_status
onc_srv_listen(struct onc_srv *rs, const char *addr, unsigned port,
    unsigned *bound, char *err, size_t errlen)
{
	int held[ONC_LISTEN_TRIES * 4];
	size_t nheld = 0, first, i;
	enum onc_status s;
	bool inuse;
	int tries;

	if (addr != NULL && addr[0] == '\0')
		addr = NULL;
	for (tries = 1; ; tries++) {
		first = rs->rs_nlis;
		s = onc_srv_listen_try(rs, addr, port, bound, &inuse, err,
		    errlen);
		if (s == ONC_OK || !inuse || tries == ONC_LISTEN_TRIES)
			break;
		/* Out of the loop and the table, but still bound. */
		for (i = first; i < rs->rs_nlis; i++) {
			ev_fd_del(rs->rs_loop, rs->rs_lis[i].rl_fd);
			held[nheld++] = rs->rs_lis[i].rl_fd;
		}
		rs->rs_nlis = first;
	}
	for (i = 0; i < nheld; i++)
		close(held[i]);
	return s;
}
