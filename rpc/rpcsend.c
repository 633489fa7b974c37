/*
 * rpcsend.c - see rpcsend.h.
 */
#include "rpcsend.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* Room for one IP_PKTINFO or IPV6_PKTINFO control message. */
union onc_cbuf {
	char	c4[CMSG_SPACE(sizeof(struct in_pktinfo))];
	char	c6[CMSG_SPACE(sizeof(struct in6_pktinfo))];
	size_t	align;		/* as struct cmsghdr */
};

/* Fill mh (and iov, cbuf) to send buf to dst from src (NULL: any). */
static void
onc_msg_fill(struct msghdr *mh, struct iovec *iov, union onc_cbuf *cbuf,
    const void *buf, size_t len, const struct sockaddr_storage *dst,
    socklen_t dstlen, const struct sockaddr_storage *src)
{
	struct cmsghdr *cm = (struct cmsghdr *)(void *)cbuf;

	memset(mh, 0, sizeof(*mh));
	memset(cbuf, 0, sizeof(*cbuf));
	iov->iov_base = (void *)(uintptr_t)buf;
	iov->iov_len = len;
	mh->msg_name = (void *)(uintptr_t)dst;
	mh->msg_namelen = dstlen;
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	if (src != NULL && src->ss_family == AF_INET &&
	    dst->ss_family == AF_INET) {
		struct in_pktinfo pi;

		memset(&pi, 0, sizeof(pi));
		pi.ipi_spec_dst = ((const struct sockaddr_in *)(const void *)
		    src)->sin_addr;
		mh->msg_control = cbuf;
		mh->msg_controllen = CMSG_SPACE(sizeof(pi));
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	} else if (src != NULL && src->ss_family == AF_INET6 &&
	    dst->ss_family == AF_INET6) {
		struct in6_pktinfo pi;

		memset(&pi, 0, sizeof(pi));
		pi.ipi6_addr = ((const struct sockaddr_in6 *)(const void *)
		    src)->sin6_addr;
		/* A link-local source: the interface it belongs to. */
		pi.ipi6_ifindex = ((const struct sockaddr_in6 *)(const void *)
		    src)->sin6_scope_id;
		mh->msg_control = cbuf;
		mh->msg_controllen = CMSG_SPACE(sizeof(pi));
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	}
}

const char *
onc_strerror(enum onc_status s)
{
	switch (s) {
	case ONC_OK:		return "success";
	case ONC_FULL:		return "table full";
	case ONC_NOMEM:		return "out of memory";
	case ONC_BADADDR:	return "not a numeric address";
	case ONC_SOCKET:	return "cannot open a socket";
	case ONC_ENCODE:	return "cannot encode the call";
	case ONC_SEND:		return "the kernel refused to send";
	case ONC_RPCBIND:	return "rpcbind refused or did not answer";
	}
	return "unknown status";
}

enum onc_status
onc_send_from(int fd, const void *buf, size_t len,
    const struct sockaddr_storage *dst, socklen_t dstlen,
    const struct sockaddr_storage *src)
{
	union onc_cbuf cbuf;
	struct msghdr mh;
	struct iovec iov;

	onc_msg_fill(&mh, &iov, &cbuf, buf, len, dst, dstlen, src);
	if (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == -1 &&
	    errno != EAGAIN && errno != EWOULDBLOCK)
		return ONC_SEND;
	return ONC_OK;
}

#define ONC_MMSG	64

size_t
onc_send_many(int fd, const struct onc_dgram *d, size_t n, size_t *nfull)
{
	struct mmsghdr v[ONC_MMSG];
	struct iovec iov[ONC_MMSG];
	union onc_cbuf cbuf[ONC_MMSG];
	size_t i, k, done = 0, failed = 0, full = 0;
	int r;

	while (done < n) {
		k = n - done < ONC_MMSG ? n - done : ONC_MMSG;
		for (i = 0; i < k; i++) {
			onc_msg_fill(&v[i].msg_hdr, &iov[i], &cbuf[i],
			    d[done + i].dg_buf, d[done + i].dg_len,
			    d[done + i].dg_dst, d[done + i].dg_dstlen,
			    d[done + i].dg_src);
			v[i].msg_len = 0;
		}
		r = sendmmsg(fd, v, (unsigned)k, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		/* The first one could not go: skip it, counted. */
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			full++;
		else
			failed++;
		done++;
	}
	if (nfull != NULL)
		*nfull = full;
	return failed;
}

ssize_t
onc_stream_send(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}
