/*
 * svctest.h - what the NLM service unit tests share (harness.c).
 *
 * One service at a time: ts_start() builds loop, transport, RPC client
 * and NLM service over the fake store (which keeps what a test committed
 * or preloaded across ts_stop()/ts_start(): a restart), ts_stop() tears
 * them down.  Requests go out as datagrams (or one TCP call) from this
 * process; ts_pump() turns the loop and answers nlmd's rpcbind look-ups.
 */
#ifndef NLMD_TESTS_SERVICE_SVCTEST_H
#define NLMD_TESTS_SERVICE_SVCTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "nlm.h"
#include "rpc/nlm_prot.h"
#include "rpcout.h"

/* Make a network namespace (once, at suite start).  0: cannot (why:). */
int		 ts_namespace(void);
/* NULL when the namespace exists, else why the tests cannot run. */
const char	*ts_skip_reason(void);
/* *rep: an accepted, successful reply to xid carrying proc(res). */
void		 ts_accepted(struct rpc_msg *rep, uint32_t xid, xdrproc_t proc,
		    void *res);
/* The tests cannot run: say why (SKIPPED) and return true. */
bool		 ts_skip(void);

void		 ts_start(enum nlm_cbmode cbmode, unsigned give_up_sec);
/*
 * What nlmd logs (stderr) goes to a file from ts_log_begin() until
 * ts_log_end(), which puts it into buf (len bytes, NUL-terminated) and
 * on stderr again.  Meanwhile the rate limiters' clock moves a whole
 * window at every line, so that no line a test looks for is dropped for
 * the lines earlier tests made.  A capture left open (a fatal assertion
 * before ts_log_end()) is ended, its lines sent to stderr, by the next
 * ts_start() or ts_log_begin().
 */
void		 ts_log_begin(void);
void		 ts_log_end(char *buf, size_t len);
/*
 * The same, but nlm_init() may fail (the stored records refused): -1
 * with its message in err, and nothing started (no ts_stop()).
 */
int		 ts_start_try(enum nlm_cbmode cbmode, unsigned give_up_sec,
		    char *err, size_t errlen);
/* The lock table's allocator at the next ts_start()s (NULL: malloc). */
struct lk_allocator;
void		 ts_lk_alloc(const struct lk_allocator *);
/*
 * An allocator for ts_lk_alloc() that fails every allocation while
 * ts_lk_fail(true): the lock table out of memory.
 */
extern const struct lk_allocator ts_lk_failing;
void		 ts_lk_fail(bool on);
/*
 * How many allocations ts_lk_failing has refused so far: lockcore asked
 * for memory while ts_lk_fail(true).
 */
unsigned long	 ts_lk_refused(void);
/*
 * The next calloc(1, size) of the server's objects fails, of any size
 * with SIZE_MAX (0: none); ts_calloc_armed(): not asked for yet.
 */
void		 ts_calloc_fail(size_t size);
bool		 ts_calloc_armed(void);
/*
 * The next realloc() of `size' bytes fails, of any size with SIZE_MAX
 * (0: none); ts_realloc_armed(): not asked for yet; ts_realloc_failed():
 * the size of the last one failed.
 */
void		 ts_realloc_fail(size_t size);
bool		 ts_realloc_armed(void);
size_t		 ts_realloc_failed(void);
/*
 * The next getsockopt(SO_PEERCRED) of the server fails with errno `err'
 * (0: none); ts_peercred_armed(): not asked for yet.
 */
void		 ts_peercred_fail(int err);
bool		 ts_peercred_armed(void);
/*
 * The next getsockopt(SO_PEERGROUPS) of the server that succeeds fails
 * with errno `err' instead (0: none); ts_peergroups_armed(): not yet.
 */
void		 ts_peergroups_fail(int err);
bool		 ts_peergroups_armed(void);
/*
 * The next malloc() of `size' bytes of the server fails, of any size
 * with SIZE_MAX (0: none); ts_malloc_armed(): not asked for yet.
 */
void		 ts_malloc_fail(size_t size);
bool		 ts_malloc_armed(void);
/*
 * While on, a failure armed by ts_calloc_fail(), ts_realloc_fail() or
 * ts_malloc_fail() stays armed once it failed: every request of its size
 * fails, memory that does not come back until the test disarms it (0).
 * ts_alloc_refused(): how many requests the three have failed so far.
 */
void		 ts_alloc_keep(bool on);
unsigned long	 ts_alloc_refused(void);
/*
 * The state directory the next ts_start()s give nsm_init(), where an
 * earlier nlmd's nsm-state file is migrated from (NULL: one that does
 * not exist, the default).
 */
void		 ts_state_dir(const char *dir);
/* nc_turn_changes at the next ts_start()s (0: the default). */
void		 ts_turn_changes(size_t n);
/* notify-name of the next ts_start()s ("": the address, the default). */
void		 ts_notify_name(const char *name);
/* max-hosts of the next ts_start() (1000 by default). */
void		 ts_max_hosts(size_t n);
/* max-hosts-per-address of the next ts_start() (1000 by default). */
void		 ts_max_hosts_per_addr(size_t n);
/* callback-retry-min-ms, -max-ms of the next ts_start()s (1000, 8000). */
void		 ts_cb_retry(unsigned min_ms, unsigned max_ms);
/* notify-give-up of the next ts_start()s (86400, the default). */
void		 ts_notify_give_up(unsigned sec);
void		 ts_stop(void);
void		 ts_pump(void);
/* One turn of the loop, without waiting. */
void		 ts_turn(void);
/* Move the loop's clock forward. */
void		 ts_advance(uint64_t ms);
uint32_t	 ts_send(uint32_t proc, xdrproc_t xargs, const void *args);
/* The same for NLM version `vers' (1, 3 or 4). */
uint32_t	 ts_send_vers(uint32_t vers, uint32_t proc, xdrproc_t xargs,
		    const void *args);
/* The same for any program served (NSM: SM_PROG), from 127.0.0.1. */
uint32_t	 ts_send_prog(uint32_t prog, uint32_t vers, uint32_t proc,
		    xdrproc_t xargs, const void *args);
/*
 * An NLM v4 call over UDP from the address `src' (another loopback
 * address: another machine), from a socket closed at once; its xid.
 */
uint32_t	 ts_send_from(const char *src, uint32_t proc, xdrproc_t xargs,
		    const void *args);
/* The same for any program served (NSM: SM_PROG). */
uint32_t	 ts_send_prog_from(const char *src, uint32_t prog, uint32_t vers,
		    uint32_t proc, xdrproc_t xargs, const void *args);
/*
 * A UDP socket on 127.0.0.1 at a privileged port (root's tools, which
 * the NSM's local-only procedures require); -1 when none is free.
 */
int		 ts_priv_socket(void);
/* A call of any program served, sent from the socket fd; its xid. */
uint32_t	 ts_send_prog_fd(int fd, uint32_t prog, uint32_t vers,
		    uint32_t proc, xdrproc_t xargs, const void *args);
int		 ts_send_tcp(uint32_t proc, xdrproc_t xargs, const void *args,
		    uint32_t *xidp);
/* A TCP connection to the service (accepted at the loop's next turn). */
int		 ts_tcp_connect(void);
/*
 * Append an NLM v4 call, record-marked, to buf (*lenp of cap bytes used,
 * advanced); returns its xid.  Write several at once to pipeline them.
 */
uint32_t	 ts_tcp_record(uint8_t *buf, size_t cap, size_t *lenp,
		    uint32_t proc, xdrproc_t xargs, const void *args);
/* The next datagram at the UDP request socket (a reply), -1: none. */
ssize_t		 ts_recv(void *buf, size_t cap);
/*
 * The next datagram there, an accepted reply: its result decoded with
 * xres into res (free with xdr_free).  0, or -1 when none came.
 */
int		 ts_recv_result(xdrproc_t xres, void *res);
/* The same at the socket fd, waiting for it as ts_recv() does. */
int		 ts_recv_result_fd(int fd, xdrproc_t xres, void *res);
/*
 * Discard the datagrams the UDP request socket holds now, without
 * waiting (the loop runs in this thread: after a turn, everything it
 * sent is there already); returns how many.
 */
int		 ts_drain(void);
/* fd -1: the UDP request socket.  0, or -1 when nothing decodable came. */
int		 ts_reply(int fd, bool stream, nlm4_res *res);
/*
 * Decode buf[0..len), one RPC reply carrying an nlm4_res, into *res (free
 * with xdr_free(xdr_nlm4_res)) and its xid into *xidp (unless NULL).  0,
 * or -1 when it does not decode.
 */
int		 ts_decode_reply(const uint8_t *buf, size_t len, uint32_t *xidp,
		    nlm4_res *res);
/* Procedure of the next call at the client's NLM, -1 when none came. */
int		 ts_callback(nlm4_testargs *args, nlm4_res *res);
/*
 * Answer the next call at the client's NLM (a synchronous GRANTED) with
 * status st; its procedure, -1 when none came.
 */
int		 ts_callback_answer(nlm4_stats st);
/* A call taken at the client's NLM, to be answered later. */
struct ts_call {
	uint32_t		 tc_xid;
	int			 tc_proc;
	struct sockaddr_storage	 tc_from;
	socklen_t		 tc_fromlen;
	nlm4_testargs		 tc_args;
};
/*
 * Take the next call at the client's NLM without answering it; its
 * procedure, -1 when none came (then *c holds nothing to free).
 */
/*
 * The value of one series of nlm_metrics()'s exposition, e.g.
 * `nlmd_host_restarts_total{how="free_all"}'; -1 when it is not there.
 */
double		 ts_metric(const char *series);
int		 ts_callback_take(struct ts_call *c);
/* Answer a taken call with an nlm4_res of status st (cookie echoed); free it. */
void		 ts_callback_reply(struct ts_call *c, nlm4_stats st);
/*
 * Take the next call at the client's NLM and reply to it with a void
 * result (a GRANTED_MSG taken); its arguments in *args (free with
 * xdr_free(xdr_nlm4_testargs)).  Its procedure, -1 when none came.
 */
int		 ts_callback_void(nlm4_testargs *args);
/*
 * Take the next call at the client's NLM, whatever its arguments, and
 * reply with a void result (as Linux lockd answers a _RES); its
 * procedure, -1 when none came.
 */
int		 ts_callback_ack(void);
/*
 * The same, the reply of accept status `st' (PROG_UNAVAIL ...: the
 * program at that port is not the client's NLM, no result).
 */
int		 ts_callback_status(enum accept_stat st);
/*
 * The next call at the client's NLM, unanswered, as it came (any version
 * and procedure): its bytes in buf, their number; -1 when none came.
 */
ssize_t		 ts_callback_raw(void *buf, size_t cap);
/*
 * Take the next call at the client's NLM as a version 1/3 GRANTED and
 * answer it with an nlm_res of status st (its cookie echoed); its
 * version in *vers.  Its procedure, -1 when none came.
 */
int		 ts_callback_answer_v1(nlm_stats st, uint32_t *vers);
bool		 ts_no_callback(void);
uint16_t	 ts_cb_port(void);
/*
 * The client's NLM moves to another port (its lockd restarted); the fake
 * rpcbind gives the new one.  Nothing listens on the old one.
 */
void		 ts_cb_rebind(void);
/* GETPORT queries for the client's NLM answered so far. */
unsigned	 ts_nlm_lookups(void);
uint16_t	 ts_cli_port(void);

int		 ts_register_turn(void);
int		 ts_register_notify(void);
int		 ts_register_listen(void);
int		 ts_register_transport(void);
int		 ts_register_requests(void);
int		 ts_register_ctl(void);
int		 ts_register_share(void);
int		 ts_register_svcmgr(void);
/* The service's event loop (a test's own sockets on it). */
struct ev_loop	*ts_loop(void);
/* The service's transport (tests that look at its connections). */
struct onc_srv	*ts_srv(void);

struct stat_chge;
/* The server's outgoing-call client: its statistics, the next xid. */
struct onc_out	*ts_clnt(void);
/*
 * Bytes of verifier body (flavor AUTH_SHORT) in the fake rpcbind's
 * answers from now on, at most MAX_AUTH_BYTES; 0 (default): AUTH_NONE.
 */
void		 ts_rpcb_verifier(unsigned len);
/* Does the fake rpcbind know the client's NLM?  (default; each start) */
void		 ts_nlm_registered(bool on);
/* Does the fake rpcbind know the client's status program?  (default) */
void		 ts_sm_registered(bool on);
/* GETPORT queries for the status program answered so far. */
unsigned	 ts_sm_lookups(void);
uint16_t	 ts_sm_port(void);
/*
 * The next SM_NOTIFY at the client's status monitor, decoded into *sc
 * (free with xdr_free(xdr_stat_chge)); answered when `answer'.  0, or -1
 * when none is waiting.
 */
int		 ts_sm_notify(struct stat_chge *sc, bool answer);
/* An SM_NOTIFY (name, state) from 127.0.0.1, pumped: hosts released. */
unsigned	 ts_notified(const char *name, int32_t state);
/* The source address of the last one, "A.B.C.D". */
const char	*ts_sm_notify_from(void);
/* The source address of the last GETPORT at the fake rpcbind. */
const char	*ts_rpcb_from(void);

#endif
