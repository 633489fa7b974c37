/*
 * srv_udp.c - UDP: datagrams read in batches with their local address
 * (IP_PKTINFO), dispatched; replies leave from where requests arrived
 * (from a source the kernel chooses for those sent to a multicast group).
 */
#include "srv_impl.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"

static void
onc_udp_local(struct msghdr *mh, struct onc_ctx *cx)
{
	struct cmsghdr *cm;

	memset(&cx->cx_call.rc_local, 0, sizeof(cx->cx_call.rc_local));
	cx->cx_call.rc_locallen = 0;
	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IP &&
		    cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			struct sockaddr_in *s4 =
			    (struct sockaddr_in *)&cx->cx_call.rc_local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			s4->sin_family = AF_INET;
			/*
			 * The local address it reached, not ipi_addr (the
			 * header's destination): for a datagram sent to a
			 * broadcast address or a multicast group that one is
			 * no source the kernel sends from, and the reply
			 * would be lost.  ipi_spec_dst is a unicast address
			 * of ours the kernel chose on the way in (its
			 * fib_compute_spec_dst()).  Linux's
			 * svc_udp_get_dest_4() takes this one too.
			 */
			s4->sin_addr = pi.ipi_spec_dst;
			cx->cx_call.rc_locallen = sizeof(*s4);
		} else if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			struct sockaddr_in6 *s6 =
			    (struct sockaddr_in6 *)&cx->cx_call.rc_local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			/*
			 * IPv6 has no ipi_spec_dst: ipi6_addr is the header's
			 * destination, for a datagram sent to a multicast
			 * group the group -- no source (RFC 4291 2.7; the
			 * kernel refuses it, EINVAL, and the reply was lost),
			 * and no address of ours to record for the host or
			 * to send its callbacks from.  None, then: the
			 * kernel chooses the reply's source, as it chose
			 * ipi_spec_dst for a broadcast above.  (Linux's
			 * svc_udp_get_dest_address6() and libtirpc's
			 * svc_dg echo ipi6_addr back and so lose it.)
			 */
			if (IN6_IS_ADDR_MULTICAST(&pi.ipi6_addr))
				continue;
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = pi.ipi6_addr;
			/*
			 * A link-local address means nothing without its
			 * interface: keep it, as getsockname() does on a
			 * TCP connection to the same address (one host
			 * record entry for both, and a reply or SM_NOTIFY
			 * from it leaves through that interface).
			 */
			if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr))
				s6->sin6_scope_id = pi.ipi6_ifindex;
			cx->cx_call.rc_locallen = sizeof(*s6);
		}
	}
}

bool
onc_udp_waiting(const struct onc_srv *rs)
{
	return rs->rs_udpb->ub_next < rs->rs_udpb->ub_n;
}

/*
 * Dispatch the batch's datagrams from ub_next on, until the turn did
 * enough (ev_turn_full()) once one was dispatched in it: as a TCP
 * connection stops at its call (onc_conn_parse()), so that 64 datagrams
 * each releasing thousands of locks are not one long turn.  The rest
 * wait in the batch.
 */
static void
onc_udp_serve(struct onc_srv *rs)
{
	struct onc_udpbatch *ub = rs->rs_udpb;
	struct onc_ctx cx;
	struct msghdr *mh;
	int i;

	if (ub->ub_turn != rs->rs_turn) {
		ub->ub_turn = rs->rs_turn;
		ub->ub_ncalls = 0;
	}
	while (ub->ub_next < ub->ub_n &&
	    !(ub->ub_ncalls > 0 && ev_turn_full_p(rs->rs_loop))) {
		i = ub->ub_next++;
		mh = &ub->ub_msg[i].msg_hdr;
		if (mh->msg_flags & MSG_TRUNC) {
			rs->rs_stats.garbage++;
			continue;
		}
		memset(&cx, 0, sizeof(cx));
		memcpy(&cx.cx_call.rc_peer, &ub->ub_peer[i],
		    sizeof(cx.cx_call.rc_peer));
		cx.cx_call.rc_xport = ONC_UDP;
		cx.cx_call.rc_peerlen = mh->msg_namelen;
		cx.cx_call.rc_srv = rs;
		cx.cx_fd = ub->ub_fd;
		onc_udp_local(mh, &cx);
		onc_dispatch(&cx, ub->ub_buf[i],
		    (size_t)ub->ub_msg[i].msg_len);
		ub->ub_ncalls++;
	}
}

void
onc_udp_resume(struct onc_srv *rs)
{
	if (onc_udp_waiting(rs))
		onc_udp_serve(rs);
}

/*
 * Read up to UDP_BATCH datagrams in one system call and dispatch each.
 * One batch per wake-up, as before one datagram at a time: the loop is
 * level-triggered, so what is left wakes it again after the other sockets
 * had their turn, and no call is spent just to learn EAGAIN.  Datagrams
 * a full turn left go first; while any waits, no socket is read (the
 * batch is shared; the kernel's buffer holds the rest meanwhile).
 */
void
onc_udp_read(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct onc_listener *rl = arg;
	struct onc_srv *rs = rl->rl_srv;
	struct onc_udpbatch *ub = rs->rs_udpb;
	struct msghdr *mh;
	int i, n;

	(void)events;
	if (rs->rs_paused)
		return;		/* not watched meanwhile (onc_srv_input()) */
	if (onc_udp_waiting(rs)) {
		onc_udp_serve(rs);
		if (onc_udp_waiting(rs) || ev_turn_full_p(loop))
			return;
	}
	for (i = 0; i < UDP_BATCH; i++) {
		mh = &ub->ub_msg[i].msg_hdr;
		memset(mh, 0, sizeof(*mh));
		ub->ub_iov[i].iov_base = ub->ub_buf[i];
		ub->ub_iov[i].iov_len = UDP_MAXMSG;
		mh->msg_name = &ub->ub_peer[i];
		mh->msg_namelen = sizeof(ub->ub_peer[i]);
		mh->msg_iov = &ub->ub_iov[i];
		mh->msg_iovlen = 1;
		mh->msg_control = ub->ub_cbuf[i];
		mh->msg_controllen = sizeof(ub->ub_cbuf[i]);
	}
	if ((n = recvmmsg(fd, ub->ub_msg, UDP_BATCH, MSG_DONTWAIT, NULL)) ==
	    -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			log_warn("udp recvmmsg");
		return;
	}
	ub->ub_fd = fd;
	ub->ub_next = 0;
	ub->ub_n = n;
	onc_udp_serve(rs);
}
