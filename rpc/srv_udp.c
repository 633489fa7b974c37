/*
 * srv_udp.c - UDP: datagrams read in batches with their local address
 * (IP_PKTINFO), dispatched; replies leave from where requests arrived.
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
			s4->sin_addr = pi.ipi_addr;
			cx->cx_call.rc_locallen = sizeof(*s4);
		} else if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			struct sockaddr_in6 *s6 =
			    (struct sockaddr_in6 *)&cx->cx_call.rc_local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = pi.ipi6_addr;
			cx->cx_call.rc_locallen = sizeof(*s6);
		}
	}
}

void
onc_udp_read(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct onc_listener *rl = arg;
	struct onc_srv *rs = rl->rl_srv;
	char cbuf[256];
	struct onc_ctx cx;
	struct msghdr mh;
	struct iovec iov;
	ssize_t n;
	int i;

	(void)loop;
	(void)events;
	for (i = 0; i < UDP_BATCH; i++) {
		memset(&cx, 0, sizeof(cx));
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = rs->rs_udpbuf;
		iov.iov_len = UDP_MAXMSG;
		mh.msg_name = &cx.cx_call.rc_peer;
		mh.msg_namelen = sizeof(cx.cx_call.rc_peer);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if ((n = recvmsg(fd, &mh, MSG_DONTWAIT)) == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				log_warn("udp recvmsg");
			return;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			rs->rs_stats.garbage++;
			continue;
		}
		cx.cx_call.rc_xport = ONC_UDP;
		cx.cx_call.rc_peerlen = mh.msg_namelen;
		cx.cx_call.rc_srv = rs;
		cx.cx_fd = fd;
		onc_udp_local(&mh, &cx);
		onc_dispatch(&cx, rs->rs_udpbuf, (size_t)n);
	}
}
