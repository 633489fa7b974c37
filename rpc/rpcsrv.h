/*
 * rpcsrv.h - nlmd's ONC RPC server transport.
 *
 * Our own listeners on the event loop instead of libtirpc's svc_* loop, so
 * that nothing a client does can block the daemon: TCP records are
 * assembled without blocking and capped in size, replies are queued per
 * connection and written when the socket can take them, and a connection
 * that stops reading is closed rather than waited for.  UDP replies leave
 * from the address the request arrived at (IP_PKTINFO).
 *
 * Calls are handed to the rpcgen-generated dispatchers (nlm_prog_4(),
 * sm_prog_1() ...) through a per-call SVCXPRT whose operations decode from
 * our buffer and encode into our reply queue, so generated code and the
 * svcerr_*() helpers of libtirpc work unchanged.
 *
 * Replies made during one turn of the event loop are held: the turn's end
 * seals them with the turn's commit number (onc_srv_seal()), and they
 * leave when that commit is durable (onc_srv_release()).
 */
#ifndef NLMD_RPC_RPCSRV_H
#define NLMD_RPC_RPCSRV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "onc.h"
#include "rpcsend.h"

struct ev_loop;
struct onc_srv;

enum onc_xport { ONC_UDP, ONC_TCP };

/* What a handler can learn about the call it is serving. */
struct onc_call {
	enum onc_xport		 rc_xport;
	struct sockaddr_storage	 rc_peer;	/* source of the request */
	socklen_t		 rc_peerlen;
	struct sockaddr_storage	 rc_local;	/* address it was sent to */
	socklen_t		 rc_locallen;
	uint32_t		 rc_xid;
	uint32_t		 rc_prog;
	uint32_t		 rc_vers;
	uint32_t		 rc_proc;
	uint32_t		 rc_flavor;	/* credential flavour */
	struct onc_srv		*rc_srv;
	void			*rc_priv;	/* transport-private */
};

/* Dispatcher signature, as rpcgen generates it. */
typedef void	onc_dispatch_fn(struct svc_req *, SVCXPRT *);

struct onc_srv_limits {
	size_t		max_record;	/* largest TCP record accepted */
	unsigned	max_conns;	/* TCP connections at once */
	unsigned	idle_sec;	/* close idle TCP connections */
	size_t		max_outq;	/* queued reply bytes per connection */
	unsigned	max_conns_per_addr; /* from one address; 0: no cap */
	size_t		max_held;	/* reply bytes waiting for commits
					   before requests stop being read
					   (onc_srv_seal()); 0: 2 MiB, or
					   max_outq / 2 if less */
};

struct onc_srv_stats {
	uint64_t	calls;		/* dispatched calls */
	uint64_t	garbage;	/* undecodable messages dropped */
	uint64_t	oversize;	/* TCP records over the limit */
	uint64_t	noprog;		/* PROG_UNAVAIL / PROG_MISMATCH */
	uint64_t	badauth;	/* credentials refused (flavour, or
					   a malformed AUTH_SYS body) */
	uint64_t	conns_open;	/* TCP connections now */
	uint64_t	conns_total;	/* TCP connections accepted */
	uint64_t	conns_refused;	/* reset at accept: over a cap, no
					   memory, or not watched */
	uint64_t	accept_paused;	/* accept paused: out of descriptors,
					   memory or epoll watches */
	uint64_t	conns_slow;	/* closed: reply queue full */
	uint64_t	conns_idle;	/* closed: idle timeout */
	uint64_t	udp_send_fail;	/* UDP replies the kernel refused */
	uint64_t	udp_send_full;	/* UDP replies dropped: socket buffer
					   full */
	uint64_t	held;		/* reply bytes waiting for commits */
	uint64_t	input_paused;	/* times reading stopped: max_held
					   bytes waiting for commits */
	uint64_t	input_paused_ms; /* how long, all told (not counting
					   a pause still on) */
};

/* Create a server on `loop'.  NULL on allocation failure. */
struct onc_srv	*onc_srv_new(struct ev_loop *loop,
		    const struct onc_srv_limits *limits);
/*
 * Close every socket and free; replies never released are dropped.  Safe
 * on NULL.
 */
void		 onc_srv_free(struct onc_srv *);

/*
 * Serve program `prog' version `vers' with `fn'.  Returns ONC_OK, or
 * ONC_FULL when the table is full (a programming error).
 */
enum onc_status onc_srv_add_program(struct onc_srv *, uint32_t prog,
	    uint32_t vers, onc_dispatch_fn *fn);

/*
 * Listen on `port' (0: let the kernel pick one TCP port and use the same
 * for UDP, another if a socket holds that one for UDP or IPv6) over UDP
 * and TCP, IPv4 and IPv6 (IPv6 sockets are v6-only).
 * `addr' NULL or "" binds the wildcard addresses; otherwise one numeric
 * address.  Stores the port bound in *bound.  Returns ONC_OK, or
 * ONC_BADADDR, ONC_SOCKET (or ONC_FULL) with the details in err[errlen]
 * (sockets opened so far stay open and are closed by onc_srv_free()).
 */
enum onc_status onc_srv_listen(struct onc_srv *, const char *addr,
	    unsigned port, unsigned *bound, char *err, size_t errlen);

/* Which address families onc_srv_listen() got (for rpcbind). */
int	onc_srv_has_family(const struct onc_srv *, int family);

/*
 * Decode arguments that generated code would decode with `proc' with
 * `fast' instead.  `fast' may point the decoded structure into the request
 * buffer rather than allocate (the buffer outlives the handler and the
 * reply); such arguments are then not passed to xdr_free().  At most
 * eight.  Returns ONC_OK, or ONC_FULL past eight.
 */
enum onc_status onc_srv_add_decoder(struct onc_srv *, xdrproc_t proc,
	    xdrproc_t fast);

/*
 * Encode results that generated code would encode with `proc' with `fast'
 * instead: the same bytes, fewer steps (`fast' may hand what it does not
 * do itself to `proc').  At most eight.  Returns ONC_OK, or ONC_FULL past
 * eight.
 */
enum onc_status onc_srv_add_encoder(struct onc_srv *, xdrproc_t proc,
	    xdrproc_t fast);

/*
 * End of a turn: every reply queued since the last seal waits for commit
 * number `seq' (the daemon's store).  Until onc_srv_release() says it is
 * durable no byte of them leaves, not even on a connection that becomes
 * writable.  Connections that died this turn are closed here.
 *
 * Back-pressure: once more than max_held reply bytes wait for commits (a
 * disk that stopped answering under durability sync), no request is read
 * -- no socket, no connection accepted, no call already buffered served
 * -- until releases bring them down to half of it.  Clients wait in
 * their sockets (TCP) or retransmit (UDP), as they would for a server
 * that is slow; memory stays bounded, and no connection is reset for the
 * server's own delay.
 */
void	onc_srv_seal(struct onc_srv *, uint64_t seq);

/*
 * Commit number `committed' is durable: send every sealed reply waiting
 * for it or an earlier one (UDP at once; TCP as the socket takes it).
 */
void	onc_srv_release(struct onc_srv *, uint64_t committed);

/*
 * The calls each busy TCP connection is served in the next turn: 16
 * split between the connections busy of late, at least 1 (srv_impl.h,
 * ONC_TURN_CALLS).  Work of the daemon's own that competes with them
 * for the turn (the grant pass) can take as much.
 */
unsigned onc_srv_share(const struct onc_srv *);


/* The call being served by a handler (valid only during dispatch). */
struct onc_call	*onc_srv_call(struct svc_req *);

const struct onc_srv_stats *onc_srv_stats(const struct onc_srv *);

/* Not reading requests now (see onc_srv_seal()): since when (ms), or 0. */
uint64_t onc_srv_paused_since(const struct onc_srv *);

#endif
