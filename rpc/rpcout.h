/*
 * rpcout.h - non-blocking outbound ONC RPC calls over UDP.
 *
 * Used for everything nlmd sends on its own: GRANTED callbacks, _RES
 * replies, SM_NOTIFY and rpcbind look-ups on client hosts.  A call is
 * encoded at once and held until the turn that made it is committed
 * (onc_out_seal(), onc_out_release()), then sent on a shared
 * non-blocking socket, retransmitted on a timer and matched to its reply
 * by xid; the caller learns the outcome through a callback from the event
 * loop.  Nothing here ever waits.
 *
 * A call may name the local address it must leave from (IP_PKTINFO), so a
 * callback to a client comes from the server address that client uses.
 */
#ifndef NLMD_RPC_RPCOUT_H
#define NLMD_RPC_RPCOUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "onc.h"

struct ev_loop;
struct onc_out;

/*
 * Convert a typed XDR routine (rpcgen's xdr_nlm4_res, libtirpc's xdr_void
 * ...) to xdrproc_t.  libtirpc declares xdrproc_t variadic; going through
 * void (*)(void) is the one conversion the compiler accepts as deliberate.
 */
#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

enum onc_out_status {
	ONC_OUT_OK,		/* accepted reply, results at hand */
	ONC_OUT_TIMEDOUT,	/* no reply after every try */
	ONC_OUT_REFUSED,	/* an RPC-level error reply (no program ...) */
	ONC_OUT_UNREACH	/* never sent: the caller's, when
			   onc_out_call() failed (a send the kernel refuses
			   is a datagram lost, retried) */
};

/*
 * Completion callback.  On ONC_OUT_OK `res' is positioned at the results
 * (decode with the result's xdr routine; the buffer lives only during the
 * callback, and only until it calls onc_out_call(), which encodes into the
 * same buffer: decode first), otherwise NULL.
 */
typedef void	onc_out_cb(void *arg, enum onc_out_status st, XDR *res);

struct onc_out_req {
	const struct sockaddr	*cr_dst;
	socklen_t		 cr_dstlen;
	const struct sockaddr	*cr_src;	/* NULL: any local address */
	socklen_t		 cr_srclen;
	uint32_t		 cr_prog;
	uint32_t		 cr_vers;
	uint32_t		 cr_proc;
	xdrproc_t		 cr_xargs;
	const void		*cr_args;
	unsigned		 cr_timeout_ms;	/* per try */
	unsigned		 cr_tries;	/* >= 1 */
	onc_out_cb		*cr_cb;		/* may be NULL */
	void			*cr_arg;
};

struct onc_out_stats {
	uint64_t	calls;
	uint64_t	retransmits;
	uint64_t	replies;
	uint64_t	timeouts;
	uint64_t	errors;
	uint64_t	pending;
};

/*
 * Open the sockets (IPv4 and, when available, IPv6) bound to `port' (0:
 * any).  Returns NULL with a reason in err[errlen].
 */
struct onc_out	*onc_out_new(struct ev_loop *, unsigned port, char *err,
		    size_t errlen);
/* Close and free; pending calls are dropped without callbacks.  NULL ok. */
void		 onc_out_free(struct onc_out *);

/*
 * Encode a call and hold it until it is sealed and released (see
 * onc_out_seal()).  The arguments are copied (encoded) before this
 * returns.  On success stores the xid (never 0, so that callers may
 * keep 0 for "none") in *xidp (may be NULL) and returns
 * ONC_OK; the callback will run exactly once, later, unless
 * onc_out_cancel() is called first.  Returns ONC_ENCODE if the call cannot
 * be encoded, ONC_NOMEM if memory runs out (no callback either way).
 */
enum onc_status onc_out_call(struct onc_out *, const struct onc_out_req *,
	    uint32_t *xidp);

/*
 * End of a turn: every call made since the last seal waits for commit
 * number `seq' (the daemon's store; see onc_out_release()).
 */
void	onc_out_seal(struct onc_out *, uint64_t seq);

/*
 * Commit number `committed' is durable: send every sealed call waiting
 * for it or an earlier one, in seal order, and start its retransmission
 * timer.
 */
void	onc_out_release(struct onc_out *, uint64_t committed);


/* Non-zero when calls are held (made since the last seal). */
int	onc_out_held(const struct onc_out *);
/*
 * Non-zero when call xid is pending and has been sent (not held or
 * sealed, waiting for its commit).
 */
int	onc_out_sent(struct onc_out *, uint32_t xid);

/*
 * One datagram read from the sockets, from `from': a reply completes the
 * pending call of its xid if that call has been sent and the reply comes
 * from the address it went to; anything else is ignored.  The sockets' reader calls it; exported
 * so that the dispatch fuzzer can answer the calls it sees go out.
 */
void	onc_out_input(struct onc_out *, const struct sockaddr_storage *from,
	    uint8_t *buf, size_t len);
/* Forget a pending call; its callback will not run.  Unknown xid: no-op. */
void	onc_out_cancel(struct onc_out *, uint32_t xid);
/*
 * Xids are drawn at random (arc4random), never 0 and never one of a
 * pending call.  For tests that need a given one (0, a wrap): from now
 * on they follow `last' one by one instead, skipping the same.
 */
void	onc_out_count_xids(struct onc_out *, uint32_t last);

const struct onc_out_stats *onc_out_stats(const struct onc_out *);

#endif
