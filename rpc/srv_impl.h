/*
 * srv_impl.h - what the files of the server transport share (rpcsrv.c:
 * setup; srv_xprt.c: the SVCXPRT shim and dispatch; srv_reply.c: reply
 * queues, seal and release; srv_udp.c; srv_tcp.c: connections and record
 * marking).  Not for use outside rpc/ (the fuzz harnesses excepted).
 */
#ifndef NLMD_RPC_SRV_IMPL_H
#define NLMD_RPC_SRV_IMPL_H

#include "rpcsrv.h"

#include <stdbool.h>

#include "ev.h"

#define MAX_PROGRAMS	16
#define CONN_BUF_MIN	4096	/* a connection's first buffers */
#define MAX_LISTENERS	8
#define UDP_BATCH	64	/* datagrams per recvmmsg() */
/*
 * Largest datagram taken (larger ones are counted as garbage): an NLM or
 * NSM call with every string and netobj at its 1,024-byte maximum and
 * 400-byte credentials is about 5.3 KiB.
 */
#define UDP_MAXMSG	9216
#define REPLY_MAX	16384
/*
 * Default max_held: 2 MiB (some 65,000 replies; a flush of durability
 * sync holds a few hundred), and at most half of max_outq, so that
 * reading stops before any one connection's queue reaches max_outq for
 * the server's own delay (a turn adds ONC_TURN_CALLS replies at most).
 */
#define HELD_MAX	(2 * 1024 * 1024)
#define SWEEP_MS	5000
/*
 * How long a TCP listener is left alone when the server is out of
 * descriptors or memory (srv_tcp.c onc_tcp_pause()): the connections
 * stay in the backlog and the listener readable, so watching it would
 * wake every turn only to fail again.
 */
#define ACCEPT_PAUSE_MS	100
/*
 * UDP replies up to UDP_REPLY_SMALL bytes (all NLM and NSM results) are
 * recycled through a free list of at most UDP_REPLY_FREE: no allocation
 * per reply once it has filled.
 */
#define UDP_REPLY_SMALL	256
#define UDP_REPLY_FREE	1024
#define MAX_SWAPS	8
/*
 * Calls the TCP connections serve in a turn, shared out between those
 * that have calls: each serves ONC_TURN_CALLS / (connections busy of
 * late) at most, and at least one.  What else a connection sent waits
 * (in co_in, and unread in the socket) for the turns that follow, so a
 * client pipelining thousands of calls shares the loop with the others
 * instead of lengthening every turn they wait for.  Alone it is served
 * ONC_TURN_CALLS a turn; beside 16 clients with one call each, one.
 * Measured before any cap (bench-queue.sh, 10,000 blocking LOCKs sent
 * back to back beside 16 clients): turns of about a millisecond, each
 * serving some 60 of them, and the 16 clients' median latency from 0.35
 * to 1.1-2.3 ms.  With a flat 16 per connection, 100,000 shared LOCKs
 * queued and then released still doubled their p99 (x2.60: each turn
 * served the queue's 16 calls and sent 16 callbacks beside their 16).
 * "Of late": rs_busy, the connections that served a call in a turn, a
 * maximum decaying by 1/8 a turn (ONC_BUSY_SHIFT fixed point), so a turn
 * in which the others' next calls had not arrived yet does not hand the
 * pipelining one the whole share.
 */
#define ONC_TURN_CALLS	16
#define ONC_BUSY_SHIFT	3

struct onc_program {
	uint32_t	 rp_prog;
	uint32_t	 rp_vers;
	onc_dispatch_fn	*rp_fn;
};

struct onc_listener {
	int		 rl_fd;
	int		 rl_family;
	enum onc_xport	 rl_xport;
	struct onc_srv	*rl_srv;
	struct ev_timer	 rl_pause;	/* TCP: accept paused until then */
};

/* Bytes up to co_out[rm_off] may leave once commit rm_seq is durable. */
struct onc_mark {
	size_t		 rm_off;
	uint64_t	 rm_seq;
};

struct onc_conn {
	int		 co_fd;
	struct onc_srv	*co_srv;
	struct sockaddr_storage co_peer;
	socklen_t	 co_peerlen;
	struct sockaddr_storage co_local;
	socklen_t	 co_locallen;
	uint8_t		*co_in;		/* raw bytes read, not yet parsed */
	size_t		 co_inlen;
	size_t		 co_incap;	/* grows with use, to max_record + 4 */
	uint8_t		*co_rec;	/* record being assembled */
	size_t		 co_reclen;
	size_t		 co_reccap;	/* grows with use, to max_record */
	uint8_t		*co_out;	/* queued reply bytes (CONN_BUF_MIN
					   to max_outq; onc_conn_trim) */
	size_t		 co_outlen;
	size_t		 co_outoff;	/* sent so far */
	size_t		 co_safe;	/* may be sent: committed (see
					   onc_srv_release) */
	struct onc_mark	*co_marks;	/* sealed, waiting for commits */
	size_t		 co_nmarks;
	size_t		 co_capmarks;
	struct onc_conn	*co_wnext;	/* conns with marks */
	struct onc_conn	*co_wprev;
	int		 co_waiting;
	size_t		 co_outcap;
	uint64_t	 co_active;	/* last read, ev_now_ms() */
	int		 co_dead;	/* close at the end of the turn */
	int		 co_eof;	/* the peer sent all it will: answer,
					   then close (onc_conn_watch) */
	int		 co_abort;	/* ... with a reset: the peer broke
					   the framing or stopped reading */
	struct onc_conn	*co_next;	/* all connections */
	struct onc_conn	*co_prev;
	struct onc_conn	*co_dirty;	/* has output to flush this turn */
	int		 co_isdirty;
	struct onc_addrcount *co_addr;	/* its peer address's count */
	uint64_t	 co_turn;	/* rs_turn of co_ncalls */
	unsigned	 co_ncalls;	/* calls served in turn co_turn */
	int		 co_held;	/* calls wait in co_in: 1 on rs_held,
					   2 on rs_resuming */
	struct onc_conn	*co_hnext;
	struct onc_conn	*co_hprev;
};

struct onc_udpreply {
	int		 ur_fd;
	uint64_t	 ur_seq;	/* sealed: commit to wait for */
	struct sockaddr_storage ur_peer;
	socklen_t	 ur_peerlen;
	struct sockaddr_storage ur_local;
	size_t		 ur_len;
	size_t		 ur_cap;	/* of ur_buf */
	struct onc_udpreply *ur_next;
	uint8_t		 ur_buf[];
};

/*
 * XDR routines used in place of generated ones (onc_srv_add_decoder,
 * onc_srv_add_encoder): sw_fast[i] where the dispatcher names sw_proc[i].
 */
struct onc_xdr_swap {
	xdrproc_t		 sw_proc[MAX_SWAPS];
	xdrproc_t		 sw_fast[MAX_SWAPS];
	size_t			 sw_n;
};

/* The routine to use where `proc' is named: its swap, or proc itself. */
static inline xdrproc_t
onc_xdr_swapped(const struct onc_xdr_swap *sw, xdrproc_t proc)
{
	size_t i;

	for (i = 0; i < sw->sw_n; i++)
		if (sw->sw_proc[i] == proc)
			return sw->sw_fast[i];
	return proc;
}

struct onc_srv {
	struct ev_loop		*rs_loop;
	struct onc_srv_limits	 rs_lim;
	struct onc_program	 rs_progs[MAX_PROGRAMS];
	size_t			 rs_nprogs;
	struct onc_xdr_swap	 rs_dec;	/* argument decoders */
	struct onc_xdr_swap	 rs_enc;	/* result encoders */
	struct onc_listener	 rs_lis[MAX_LISTENERS];
	size_t			 rs_nlis;
	struct onc_conn		*rs_conns;
	struct onc_conn		*rs_dirty;	/* queued bytes this turn */
	struct onc_conn		*rs_waiting;	/* with marks */
	struct onc_udpreply	*rs_udpnew;	/* this turn's, not sealed */
	struct onc_udpreply	**rs_udpnewtail;
	struct onc_udpreply	*rs_udpq;	/* sealed, in seal order */
	struct onc_udpreply	**rs_udptail;
	struct ev_timer		 rs_sweep;
	uint64_t		 rs_turn;	/* turns sealed */
	unsigned		 rs_active;	/* connections that served a
						   call this turn */
	unsigned		 rs_busy;	/* busy of late, << ONC_BUSY_SHIFT */
	unsigned		 rs_share;	/* calls per connection a turn */
	struct onc_conn		*rs_held;	/* over ONC_TURN_CALLS */
	struct onc_conn		*rs_resuming;	/* being served again, or
						   left by a full turn */
	struct ev_timer		 rs_resume;	/* serves them next turn */
	uint64_t		 rs_paused;	/* reading stopped at (ms; 0:
						   not): rs_stats.held over
						   max_held */
	struct onc_srv_stats	 rs_stats;
	struct onc_udpbatch	*rs_udpb;	/* recvmmsg() buffers */
	struct onc_udpreply	*rs_udpfree;	/* small replies to reuse */
	size_t			 rs_nudpfree;
	void			*rs_addrs;	/* tsearch tree of struct
						   onc_addrcount: connections
						   open per peer address */
};

/* Connections open from one address (srv_tcp.c). */
struct onc_addrcount {
	uint8_t			 ac_family;
	uint8_t			 ac_addr[16];	/* IPv4: first 4 bytes */
	uint32_t		 ac_scope;	/* IPv6 link-local: the
						   interface; else 0 */
	unsigned		 ac_conns;
};

/*
 * What one recvmmsg() fills: UDP_BATCH datagrams and their addresses.
 * A turn that did enough (ev_turn_full()) dispatches no more of them:
 * ub_msg[ub_next .. ub_n) wait, read from ub_fd, and no socket is read
 * until they are dispatched (onc_udp_resume() and the next read).
 */
struct onc_udpbatch {
	struct mmsghdr		 ub_msg[UDP_BATCH];
	struct iovec		 ub_iov[UDP_BATCH];
	struct sockaddr_storage	 ub_peer[UDP_BATCH];
	char			 ub_cbuf[UDP_BATCH][128];
	uint8_t			 ub_buf[UDP_BATCH][UDP_MAXMSG];
	int			 ub_fd;		/* the socket they came from */
	int			 ub_next;	/* the next to dispatch */
	int			 ub_n;		/* read */
	uint64_t		 ub_turn;	/* rs_turn of ub_ncalls */
	unsigned		 ub_ncalls;	/* dispatched in turn ub_turn */
};

/* Per-call state behind the SVCXPRT handed to generated code. */
struct onc_ctx {
	struct onc_call	 cx_call;
	XDR		 cx_xdr;	/* positioned at the arguments */
	int		 cx_fd;		/* UDP socket */
	struct onc_conn	*cx_conn;	/* TCP connection */
	int		 cx_inplace;	/* args point into the request */
};

/* srv_xprt.c */
/* Decode and serve one call (UDP: cx_fd set; TCP: cx_conn set). */
void	onc_dispatch(struct onc_ctx *cx, uint8_t *msgbuf, size_t len);

/* srv_reply.c */
/*
 * Queue an encoded reply for cx's peer (held until sealed, released).
 * ONC_NOMEM, or ONC_SEND when the connection is dead or its peer reads
 * too slowly (it is closed); either way nothing of it is queued.
 */
enum onc_status onc_queue_reply(struct onc_ctx *cx, const uint8_t *p,
	    size_t n);
/*
 * After a flush: reclaim the sent part of co_out (the unsent bytes move
 * down) once it is as large as the rest, and shrink a buffer that is
 * three quarters free, so that a connection holds about what it has not
 * sent yet, not what it sent.
 */
void	onc_conn_trim(struct onc_conn *co);
/* Take co off (on=0) or put it on (on=1) the list waiting for commits. */
void	onc_conn_wait(struct onc_conn *co, int on);

/* A reply is no longer needed: to the free list, or freed. */
void	onc_udp_put(struct onc_srv *rs, struct onc_udpreply *ur);

/* srv_udp.c */
/* Event-loop callback: a UDP socket is readable. */
void	onc_udp_read(struct ev_loop *loop, int fd, int events, void *arg);
/* Datagrams of a batch a full turn left (onc_udpbatch) are waiting. */
bool	onc_udp_waiting(const struct onc_srv *rs);
/*
 * From onc_conn_resume(): dispatch the datagrams a full turn left, one at
 * least unless one was dispatched this turn, then until the turn is full.
 */
void	onc_udp_resume(struct onc_srv *rs);

/* srv_tcp.c */
/* Event-loop callbacks: a listener is readable; the idle sweep timer. */
void	onc_tcp_accept(struct ev_loop *loop, int lfd, int events, void *arg);
void	onc_sweep(struct ev_loop *loop, void *arg);
/* Close now, or at the seal if it has output this turn. */
void	onc_conn_close(struct onc_conn *co);
/* Write what is released and the socket takes; stop or resume reading. */
void	onc_conn_flush(struct onc_conn *co);
/*
 * Timer callback (armed by onc_srv_seal() while connections are held or
 * datagrams wait): serve the datagrams (onc_udp_resume()), then what the
 * held connections have waiting, rs_share each, in a full turn one call
 * each until they did another turn's worth (ev_turn_full()).
 */
void	onc_conn_resume(struct ev_loop *loop, void *arg);
/*
 * Stop (on false: rs_paused) or start again reading requests: listeners,
 * connections, and what earlier turns read and left (rpcsrv.h,
 * onc_srv_seal()).
 */
void	onc_srv_input(struct onc_srv *rs, bool on);
/*
 * Calls or datagrams wait for a later turn (held connections, a batch a
 * full turn left): have onc_conn_resume() serve them next turn, unless
 * reading is stopped (onc_srv_input() calls this again when it starts).
 */
void	onc_srv_resume_later(struct onc_srv *rs);
/* At the end of a turn (onc_srv_seal()): the next turn's rs_share. */
void	onc_conn_share(struct onc_srv *rs);

#endif
