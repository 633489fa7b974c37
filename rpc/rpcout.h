/*
 * rpcout.h - non-blocking outbound ONC RPC calls over UDP.
 *
 * Used for everything nlmd sends on its own: GRANTED callbacks, _RES
 * replies, SM_NOTIFY and rpcbind look-ups on client hosts.  A call is
 * encoded at once and held until the turn that made it is committed
 * (rpc_clnt_seal(), rpc_clnt_release()), then sent on a shared
 * non-blocking socket, retransmitted on a timer and matched to its reply by xid; the caller learns the outcome
 * through a callback from the event loop.  Nothing here ever waits.
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

struct ev_loop;
struct rpc_clnt;

/*
 * Convert a typed XDR routine (rpcgen's xdr_nlm4_res, libtirpc's xdr_void
 * ...) to xdrproc_t.  libtirpc declares xdrproc_t variadic; going through
 * void (*)(void) is the one conversion the compiler accepts as deliberate.
 */
#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

enum rpc_clnt_status {
	RPC_CLNT_OK,		/* accepted reply, results at hand */
	RPC_CLNT_TIMEDOUT,	/* no reply after every try */
	RPC_CLNT_REFUSED,	/* an RPC-level error reply (no program ...) */
	RPC_CLNT_UNREACH	/* the kernel refused to send (ICMP error...) */
};

/*
 * Completion callback.  On RPC_CLNT_OK `res' is positioned at the results
 * (decode with the result's xdr routine; the buffer lives only during the
 * callback), otherwise NULL.
 */
typedef void	rpc_clnt_cb(void *arg, enum rpc_clnt_status st, XDR *res);

struct rpc_clnt_req {
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
	rpc_clnt_cb		*cr_cb;		/* may be NULL */
	void			*cr_arg;
};

struct rpc_clnt_stats {
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
struct rpc_clnt	*rpc_clnt_new(struct ev_loop *, unsigned port, char *err,
		    size_t errlen);
/* Close and free; pending calls are dropped without callbacks.  NULL ok. */
void		 rpc_clnt_free(struct rpc_clnt *);

/*
 * Encode a call and hold it until it is sealed and released (see
 * rpc_clnt_seal()).  The arguments are copied (encoded) before this
 * returns.  On success stores the xid in *xidp (may be NULL) and returns
 * 0; the callback will run exactly once, later, unless rpc_clnt_cancel()
 * is called first.  Returns -1 if the call cannot be encoded or memory
 * runs out (no callback).
 */
int	rpc_clnt_call(struct rpc_clnt *, const struct rpc_clnt_req *,
	    uint32_t *xidp);

/*
 * End of a turn: every call made since the last seal waits for commit
 * number `seq' (the daemon's store; see rpc_clnt_release()).
 */
void	rpc_clnt_seal(struct rpc_clnt *, uint64_t seq);

/*
 * Commit number `committed' is durable: send every sealed call waiting
 * for it or an earlier one, in seal order, and start its retransmission
 * timer.  A call whose timer cannot be armed completes RPC_CLNT_UNREACH.
 */
void	rpc_clnt_release(struct rpc_clnt *, uint64_t committed);


/* Non-zero when calls are held (made since the last seal). */
int	rpc_clnt_held(const struct rpc_clnt *);

/* Forget a pending call; its callback will not run.  Unknown xid: no-op. */
void	rpc_clnt_cancel(struct rpc_clnt *, uint32_t xid);

const struct rpc_clnt_stats *rpc_clnt_stats(const struct rpc_clnt *);

#endif
