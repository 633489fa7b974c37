/*
 * rpcsend.h - the functions through which every byte nlmd sends
 * leaves the process: UDP datagrams (replies, callbacks, _RES messages,
 * rpcbind look-ups) and TCP reply bytes.
 *
 * They live in a file of their own so that unit tests can link a fake in
 * their place (tests/fakes/) and see exactly what would have left, and
 * when: nothing may leave before the turn that produced it is committed
 * (DESIGN.md, rule 1).
 */
#ifndef NLMD_RPC_RPCSEND_H
#define NLMD_RPC_RPCSEND_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "onc.h"

/*
 * Send one datagram on UDP socket fd to dst, leaving from local address
 * src (IP_PKTINFO / IPV6_PKTINFO; NULL: the kernel chooses).  Never
 * blocks.  Returns ONC_OK (also when the socket buffer is full: UDP may
 * lose it), ONC_SEND on a hard error.
 */
enum onc_status onc_send_from(int fd, const void *buf, size_t len,
	    const struct sockaddr_storage *dst, socklen_t dstlen,
	    const struct sockaddr_storage *src);

/* One datagram for onc_send_many(). */
struct onc_dgram {
	const void			*dg_buf;
	size_t				 dg_len;
	const struct sockaddr_storage	*dg_dst;
	socklen_t			 dg_dstlen;
	const struct sockaddr_storage	*dg_src;	/* NULL: any */
};

/*
 * Send n datagrams on UDP socket fd, each as onc_send_from() would, in as
 * few system calls as the kernel takes them (sendmmsg(2), up to 64 at a
 * time).  Never blocks.  Returns how many hit a hard error; *nfull (if not
 * NULL) gets how many were dropped because the socket buffer was full.
 */
size_t	onc_send_many(int fd, const struct onc_dgram *d, size_t n,
	    size_t *nfull);

/*
 * onc_send_many() as one call of `sendfn' (an onc_send_from()) per
 * datagram, same result: the fake senders of the tests and fuzzers define
 * it so, and each datagram goes through their recording onc_send_from().
 */
typedef enum onc_status onc_send_fn(int, const void *, size_t,
	    const struct sockaddr_storage *, socklen_t,
	    const struct sockaddr_storage *);

static inline size_t
onc_send_each(int fd, const struct onc_dgram *d, size_t n, size_t *nfull,
    onc_send_fn *sendfn)
{
	size_t i, failed = 0;

	if (nfull != NULL)
		*nfull = 0;	/* onc_send_from() cannot tell */

	for (i = 0; i < n; i++)
		failed += sendfn(fd, d[i].dg_buf, d[i].dg_len, d[i].dg_dst,
		    d[i].dg_dstlen, d[i].dg_src) != ONC_OK;
	return failed;
}

/*
 * Write up to len bytes to the connected stream socket fd without
 * blocking.  Returns what send(2) returns (bytes written, or -1 with errno
 * set; EAGAIN when the socket buffer is full).
 */
ssize_t	onc_stream_send(int fd, const void *buf, size_t len);

#endif
