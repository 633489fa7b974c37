/*
 * nlm_impl.h - what the files of nlm/ share.
 *
 * Layers (FreeBSD's shape):
 *   nlm_svc.c    the handlers rpcgen's dispatchers call, one per version
 *                and procedure: convert v1/v3 arguments to v4, build a
 *                struct nlm_ctx from the transport, call nlm_proc.c,
 *                convert the result back.  No decisions.
 *   nlm_proc.c   the semantics of each procedure over lockcore, on v4
 *                types and a protocol-neutral context: testable without
 *                sockets.  Each does validate -> resolve host -> decide ->
 *                stage (nlm_apply()).
 *   nlm_host.c   hosts: (source address, caller_name) -> lockcore host id,
 *                the client's NSM state; each host is a store record.
 *   nlm_grace.c  the grace period after a restart, and the end of a turn
 *                (commit, then release what the turn produced).
 *   nlm_out.c    outbound calls to a client's NLM: rpcbind look-up on the
 *                client's address, then the call, all non-blocking.
 *   nlm_grant.c  GRANTED callbacks: one record per blocked request, sent
 *                with backoff until acknowledged, released on refusal.
 *
 * Ownership legend: a struct nlm_grant is created for every blocking LOCK
 * and given to lockcore as the waiter's udata; lockcore hands it back in
 * rs_granted (start calling back) and, exactly once, in rs_dropped (free
 * it).  The store is borrowed from the daemon.  Everything else belongs to
 * the service singleton `nlm'.
 *
 * Staging rule: every change to the lock table goes through nlm_apply()
 * with the result of the call that made it, before the next lockcore call
 * (a result lives until then); every change to a host goes through
 * nlm_host_stage().  Nothing is sent directly: replies wait in the
 * transport and outbound calls in the RPC client until the turn that made
 * them is committed (nlm_grace.c, THE END OF A TURN).
 */
#ifndef NLMD_NLM_NLM_IMPL_H
#define NLMD_NLM_NLM_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ev.h"
#include "lockcore.h"
#include "netaddr.h"
#include "nlm.h"
#include "rpc/nlm_prot.h"
#include "rpcout.h"
#include "store.h"

struct onc_out;
struct nlm_host;
struct ctl_conn;
struct ctl_req;

/* Who is asking, and how: filled by the adapters (or by tests). */
struct nlm_ctx {
	uint32_t		 cx_vers;	/* 1, 3 or 4 */
	uint32_t		 cx_proc;
	struct sockaddr_storage	 cx_peer;	/* source, v4-mapped undone */
	socklen_t		 cx_peerlen;
	struct sockaddr_storage	 cx_local;	/* address the client used */
	socklen_t		 cx_locallen;
	bool			 cx_monitored;	/* LOCK, not NM_LOCK */
	/* The range exactly as on the wire, for GRANTED to echo. */
	uint64_t		 cx_wire_off;
	uint64_t		 cx_wire_len;
};

struct nlm_host {
	uint64_t		 h_id;		/* lockcore host id = store key */
	char			*h_name;	/* caller_name */
	struct sockaddr_storage	 h_addr;	/* port 0 */
	socklen_t		 h_addrlen;
	struct store_addr	 h_local[STORE_LOCAL_MAX]; /* our addresses
						   it used, oldest first */
	uint64_t		 h_local_used[STORE_LOCAL_MAX]; /* last
						   request through each,
						   ev_now_ms(); 0: none
						   since the start */
	unsigned		 h_nlocal;	/* of them, known; 0: none */
	int32_t			 h_state;	/* client's NSM state, 0 unknown */
	bool			 h_monitored;
	uint64_t		 h_epoch;	/* epoch it was first stored in */
	uint64_t		 h_seen;	/* last request, ev_now_ms() */
	unsigned		 h_grants;	/* grants active: called back
						   or waiting to be */
	unsigned		 h_cbsent;	/* of them, called back: at most
						   callback-max-per-host */
	struct nlm_grant	*h_cbq;		/* the others, oldest first */
	struct nlm_grant	*h_cbqtail;
	uint64_t		 h_notify_since; /* Unix s an SM_NOTIFY is owed
						   since; 0: none (stored) */
	struct nlm_notifier	*h_notify;	/* that notification's sender */
	uint64_t		 h_hash;	/* of (address, name) */
	struct nlm_host		*h_next;	/* hash chain */
	struct nlm_addrcount	*h_ag;		/* hosts at its address */
	struct nlm_host		*h_anext, *h_aprev;
	struct nlm_namegroup	*h_ng;		/* hosts of its name */
	struct nlm_host		*h_nnext, *h_nprev;
	struct nlm_host		*h_inext;	/* chain of the id index */
	struct nlm_host		*h_lnext, *h_lprev; /* every host, oldest
						   first, and the cursors */
	bool			 h_cursor;	/* a cursor's place: no host */
	const char		*h_releasing;	/* why, while released in
						   pieces; NULL: not */
	bool			 h_rel_forget;	/* forgotten once released */
	const void		*h_rel_ctl;	/* released in pieces by this
						   operator's connection (not
						   in n_releasing); NULL:
						   not */
	size_t			 h_rel_n;	/* records released so far */
	bool			 h_rel_nomem;	/* a release of it ran out of
						   memory (counted once in
						   release_failed) and has not
						   completed since */
	struct nlm_host		*h_rnext;	/* n_releasing list */
};

/*
 * The hosts at one source address (nlm_host.c keeps the index), and the
 * SM_NOTIFYs to that address: those in flight and those waiting for a
 * slot (nlm_notify.c paces them).
 */
struct nlm_addrcount {
	struct sockaddr_storage	 ac_addr;
	uint64_t		 ac_hash;
	unsigned		 ac_count;
	struct nlm_host		*ac_hosts;	/* h_anext list */
	struct nlm_addrcount	*ac_next;
	unsigned		 ac_notifying;	/* SM_NOTIFY in flight */
	struct nlm_notifier	*ac_nqhead;	/* waiting, in order */
	struct nlm_notifier	*ac_nqtail;
};

/*
 * The hosts of one caller_name, at any address (FREE_ALL, SM_NOTIFY,
 * proc 16; nlm_host.c keeps the index; here so that the service tests
 * can fail its allocation).
 */
struct nlm_namegroup {
	uint64_t		 ng_hash;
	struct nlm_host		*ng_hosts;	/* h_nnext list; names equal */
	struct nlm_namegroup	*ng_next;
};

/*
 * The SM_NOTIFYs a host is owed at this start (nlm_notify.c; here so that
 * the service tests can fail its allocation).
 */
struct nlm_notifier {
	struct nlm_host		*nt_host;
	int32_t			 nt_state;	/* the state we announce */
	struct store_addr	 nt_locals[STORE_LOCAL_MAX]; /* h_local when
						   the debt began */
	unsigned		 nt_nlocal;	/* of them, in use */
	unsigned		 nt_local;	/* the server address told now
						   (index in nt_locals) */
	unsigned		 nt_told;	/* bit i: address i answered */
	unsigned		 nt_delay_ms;	/* this attempt's wait */
	unsigned		 nt_attempts;	/* all addresses' */
	unsigned		 nt_tries[STORE_LOCAL_MAX]; /* per address */
	uint64_t		 nt_begun_ms;	/* ev_now_ms() of the first */
	uint64_t		 nt_prior_sec;	/* owed before nt_begun_ms (an
						   earlier start's debt) */
	uint64_t		 nt_attempt_ms;	/* ... and of this attempt */
	struct nlm_send		*nt_send;	/* in flight */
	struct ev_timer		 nt_timer;	/* next attempt */
	bool			 nt_slot;	/* holds a slot at its address */
	bool			 nt_queued;	/* waits for a slot */
	struct nlm_notifier	*nt_qnext;
};

/* A blocked request and, once granted, its callback.  See legend. */
/*
 * Unanswered synchronous GRANTED copies a grant keeps open beside the
 * newest (grant_retry()): each stays open callback-retry-max-ms, and with
 * the backoff doubling from callback-retry-min-ms no more than seven are
 * sent in that time at the defaults (1 s to 60 s).
 */
#define NLM_GRANT_SYNC_KEEP	8

struct nlm_grant {
	struct nlm_host		*g_host;
	uint32_t		 g_vers;	/* version the client used */
	struct sockaddr_storage	 g_local;	/* call back from here */
	socklen_t		 g_locallen;
	int32_t			 g_svid;
	bool			 g_excl;
	uint64_t		 g_start;	/* as lockcore knows it */
	uint64_t		 g_len;
	uint64_t		 g_wire_off;	/* as the client sent it */
	uint64_t		 g_wire_len;
	uint8_t			*g_fh;
	size_t			 g_fhlen;
	uint8_t			*g_oh;
	size_t			 g_ohlen;
	char			*g_caller;	/* our name for the callback */
	uint8_t			 g_cookie[8];
	bool			 g_active;	/* granted: calling back */
	bool			 g_ended;	/* acked, refused, given up or
						   re-polled (else, freed while
						   active: cb_dropped) */
	bool			 g_cbslot;	/* holds one of h_cbsent */
	bool			 g_cbwait;	/* on its host's h_cbq */
	struct nlm_grant	*g_cbnext;	/* h_cbq */
	struct nlm_grant	*g_cbprev;
	unsigned		 g_attempts;
	uint32_t		 g_proc;	/* procedure of the last send */
	bool			 g_delivered;	/* the client's NLM replied to
						   that GRANTED_MSG: the next
						   copy waits (grant_sent()) */
	unsigned		 g_delay_ms;	/* next backoff */
	uint64_t		 g_backoff_at;	/* ev_now_ms() of the next try
						   the last send set */
	uint64_t		 g_granted_at;
	struct ev_timer		 g_timer;
	struct nlm_send		*g_send;	/* transmission in flight */
	/*
	 * The synchronous GRANTEDs sent before it, still awaiting their
	 * replies (grant_retry()): a ring, oldest at g_sync_head.
	 */
	struct nlm_sync_copy {
		struct nlm_grant	*sc_grant;
		struct nlm_send		*sc_send;	/* NULL: ended */
	}			 g_sync[NLM_GRANT_SYNC_KEEP];
	unsigned		 g_sync_head;
	unsigned		 g_nsync;
	struct nlm_grant	*g_next;	/* cookie hash chain */
};

typedef void	nlm_send_cb(void *arg, int ok, XDR *res);

struct nlm_peer;

/* One outbound call to a client's NLM (see nlm_out.c). */
struct nlm_send {
	struct sockaddr_storage	 s_peer;	/* the client (port ignored) */
	socklen_t		 s_peerlen;
	struct nlm_peer		*s_waiton;	/* port look-up it waits for */
	uint32_t		 s_prog;
	uint32_t		 s_vers;
	uint32_t		 s_proc;
	struct sockaddr_storage	 s_local;
	socklen_t		 s_locallen;
	unsigned		 s_timeout_ms;
	unsigned		 s_tries;
	unsigned		 s_lk_timeout_ms; /* port look-up; 0: default */
	unsigned		 s_lk_tries;
	bool			 s_reflect;	/* answers a request whose source
						   may be forged (_RES) */
	bool			 s_oneway;	/* no reply expected (_RES) */
	nlm_send_cb		*s_cb;
	void			*s_arg;
	uint32_t		 s_xid;		/* 0: not on the wire yet */
	struct nlm_send		*s_next;	/* waiting list */
	struct nlm_send		*s_anext;	/* every live send */
	struct nlm_send		*s_aprev;
	size_t			 s_len;
	uint8_t			 s_args[];	/* encoded arguments */
};

#define NLM_HOST_BUCKETS	1024	/* at first; doubles with the hosts */
#define NLM_HOST_MEMO		256	/* n_memo's slots, a power of two */
#define NLM_HOST_GONE		1024	/* n_gone's slots */
#define NLM_TOKEN_AHEAD		4096	/* the stored token mark's lead */
#define NLM_GRANT_BUCKETS	1024	/* at first; doubles at load 1 */
/*
 * Grants a call (or a turn's lk_grant_more()) makes at most.  Each costs
 * a GRANTED callback sent at the turn's end, about as much as serving a
 * call: 8 keep a turn of a release within a few clients' calls.  Measured
 * (bench-queue.sh 100000, shared: 100,000 waiters granted at once),
 * against 64: nlmd CPU per grant 12-16 us against 22-23, the release
 * alone 1.1-1.6 s against 1.7, beside 16 clients 0.18-0.27 s of turns
 * over 1 ms against 0.84-1.59 s, the longest turn 5.5-12.8 ms against
 * 20.5-21.3.  That is the most; beside busy connections a turn grants
 * what each of them is served (nlm_grant_pace()).
 */
#define NLM_GRANT_STEP		8
/*
 * Records (locks, shares) the requests of a turn may add or remove before
 * the turn stops taking more (ev_turn_full: the connections and sockets
 * it did not reach are served first in the next).  One request still
 * does all it must: an UNLOCK of a whole file releases everything it
 * holds there.  But 64 clients each releasing 15,625 locks at once were
 * one turn of 329 ms, every other client waiting it out (nlmbench hold,
 * 1,000,000 locks); at about 0.3 us a record, 8,192 is some 3 ms.
 */
#define NLM_TURN_CHANGES	8192
/*
 * Commits pending and none completed for this long (the disk does not
 * take the log: a hung device, a full or failing one under durability
 * sync) is logged, and again every NLM_CWAIT_REPEAT_MS while it lasts:
 * every answer and callback of those turns is held meanwhile.
 */
#define NLM_CWAIT_WARN_MS	5000
#define NLM_CWAIT_REPEAT_MS	30000

struct nlm_service {
	struct ev_loop		*n_loop;
	struct onc_out		*n_clnt;
	struct store		*n_store;	/* borrowed */
	struct nlm_config	 n_conf;
	struct lk_table		*n_table;
	struct onc_srv		*n_srv;		/* the transport (turn ends) */
	uint64_t		 n_committed;	/* last commit known durable */
	uint64_t		 n_token_stored; /* token high-water mark staged */
	uint64_t		 n_host_stored;	/* next host id staged */
	struct nlm_grace	 n_grace;
	struct ev_timer		 n_grace_timer;
	struct ev_timer		 n_more_timer;	/* lk_grant_more() next turn */
	uint64_t		 n_cwait_ms;	/* ev_now_ms() since which commits
						   are pending and none completed
						   (0: none pending) */
	bool			 n_cwait_warned;
	struct ev_timer		 n_cwait_timer;	/* NLM_CWAIT_WARN_MS */
	bool			 n_turn_granted; /* this turn granted already */
	bool			 n_more_waited;	/* the last turn put the grant
						   step off: not this one */
	size_t			 n_turn_changes; /* records changed this turn
						    since its last budget */
	struct nlm_host		**n_hosts;	/* keyed hash of (addr, name) */
	size_t			 n_hbuckets;	/* a power of two */
	struct nlm_host		*n_hfirst;	/* h_lnext list */
	struct nlm_host		*n_hlast;
	/*
	 * The host each source (address and port) last found: a client
	 * keeps its connection and its name, so most calls find their host
	 * here without hashing.  Checked like a table hit; a slot two
	 * sources share only misses.  Cleared when a host goes.
	 */
	struct nlm_host		*n_memo[NLM_HOST_MEMO];
	/*
	 * The hosts forgotten lately (released after they reported a
	 * restart, or swept while idle) as the h_hash of their (address,
	 * name), the oldest replaced: an SM_NOTIFY naming one of them is
	 * about a host already gone, not the status monitor's name of
	 * another one (nlm_host_notified()).
	 */
	uint64_t		 n_gone[NLM_HOST_GONE];
	uint64_t		 n_ngone;	/* ever recorded: the next slot
						   is n_ngone % NLM_HOST_GONE */
	struct nlm_addrcount	**n_addrs;	/* hosts per source address */
	size_t			 n_abuckets;
	size_t			 n_naddrs;
	struct nlm_namegroup	**n_names;	/* hosts per caller_name */
	size_t			 n_nbuckets;
	size_t			 n_nnames;
	struct nlm_host		**n_ids;	/* hosts by h_id */
	size_t			 n_ibuckets;
	unsigned		 n_nhosts;
	uint64_t		 n_next_host;
	struct nlm_grant	**n_grants;	/* active, by cookie */
	size_t			 n_grants_mask;	/* buckets - 1 */
	size_t			 n_ngrants;
	char			 n_myname[256];	/* caller_name in GRANTED */
	struct ev_timer		 n_gc;
	size_t			 n_gc_bucket;	/* a sweep carried on: from here */
	struct nlm_host		*n_releasing;	/* released in pieces, in
						   turn (h_rnext) */
	struct ev_timer		 n_rel_timer;	/* their next piece */
	bool			 n_rel_waited;	/* it was put off last turn */
	struct nlm_counters	 n_stats;
	uint64_t		 n_started_ms;	/* ev_now_ms() at nlm_init() */
};

extern struct nlm_service *nlm;

/* ---- nlm_proc.c: the procedures, on v4 types ----
 *
 * Each takes the caller's context and the decoded v4 arguments (borrowed
 * for the call) and fills the result, whose pointers (cookie, holder owner
 * handle) point into the arguments or the lock table and stay valid until
 * the reply is encoded.  A handler never fails: bad input gets the
 * protocol's error in the result and changes nothing.  Mutating handlers
 * stage what they change (nlm_apply()); their reply leaves after the
 * turn's commit.
 */
void	nlm_proc_test(const struct nlm_ctx *, const nlm4_testargs *,
	    nlm4_testres *);
/* LOCK and NM_LOCK (cx_monitored false); reclaims included. */
void	nlm_proc_lock(const struct nlm_ctx *, const nlm4_lockargs *,
	    nlm4_res *);
void	nlm_proc_cancel(const struct nlm_ctx *, const nlm4_cancargs *,
	    nlm4_res *);
void	nlm_proc_unlock(const struct nlm_ctx *, const nlm4_unlockargs *,
	    nlm4_res *);
/* GRANTED sent to us: we are a server, so always DENIED. */
void	nlm_proc_granted(const struct nlm_ctx *, const nlm4_testargs *,
	    nlm4_res *);
void	nlm_proc_share(const struct nlm_ctx *, const nlm4_shareargs *,
	    nlm4_shareres *);
void	nlm_proc_unshare(const struct nlm_ctx *, const nlm4_shareargs *,
	    nlm4_shareres *);
/* FREE_ALL: release the hosts of that name, if asked from their address. */
void	nlm_proc_free_all(const struct nlm_ctx *, const nlm4_notify *);
/* GRANTED_RES: the client's answer to a GRANTED_MSG callback. */
void	nlm_proc_granted_res(const struct nlm_ctx *, const nlm4_res *);
/* Procedure 16, from a status monitor on this host only. */
void	nlm_proc_sm_notify(const struct nlm_ctx *, const nlm_sm_status *);
/*
 * Count a result sent for procedure `proc' (v4 numbering) with v4 status
 * st (nlmd_nlm_replies_total); the procedures above count their own.
 */
void	nlm_proc_count(uint32_t proc, nlm4_stats st);

/*
 * Stage a lockcore result and act on it: its change set goes to the
 * store's turn transaction (a failure is fatal), its grants start their
 * GRANTED callbacks (held until the commit), its dropped waiter records
 * are freed.  Call after every mutating lockcore call, before the next
 * one; NULL does nothing.
 */
void	nlm_apply(const struct lk_result *);
/* a and b are records of one owner (a lock's svid too). */
bool	nlm_rec_same_owner(const struct lk_record *,
	    const struct lk_record *);
/*
 * At the end of a turn: the grants each of the next turn's calls, and its
 * grant pass if none of them granted, make at most: `share' (the calls
 * each busy connection is served, onc_srv_share()), between 1 and
 * NLM_GRANT_STEP.  A release that made 100,000 waiters grantable then
 * takes no more of a busy turn than one more client does, and the
 * callbacks go out no faster than a client served that share a turn can
 * answer them.
 */
void	nlm_grant_pace(unsigned share);
/* The one lockcore -> wire mapping. */
nlm4_stats nlm_stat_from_lk(enum lk_status);
/*
 * Queue a _RES message of `proc' carrying `res' (encoded by `xres' at
 * once) to the client's NLM, found through the rpcbind on the request's
 * source address.  One try; failures are counted, never retried (the
 * client re-sends its _MSG).
 */
void	nlm_send_res(const struct nlm_ctx *, uint32_t proc, xdrproc_t xres,
	    const void *res);
/*
 * A store call failed (st != STORE_OK) while doing `what': log and exit(1)
 * (the in-memory state has moved on; recovery runs at the next start).
 * Returns when st is STORE_OK.
 */
void	nlm_store_check(enum store_status st, const char *what);

/*
 * ---- nlm_xdr.c: in-place decoders and the nlm4_res encoder (the same
 * wire format as rpcgen's; other directions are handed to rpcgen's) ----
 */
bool_t	nlm_xdr_lockargs(XDR *, nlm4_lockargs *);
bool_t	nlm_xdr_unlockargs(XDR *, nlm4_unlockargs *);
bool_t	nlm_xdr_testargs(XDR *, nlm4_testargs *);
bool_t	nlm_xdr_cancargs(XDR *, nlm4_cancargs *);
bool_t	nlm_xdr_res(XDR *, nlm4_res *);

/* ---- nlm_host.c ---- */
/*
 * The host (source address ss, caller_name name), or NULL when unknown and
 * !create.  With create, a new host gets the next id, `local' (the server
 * address it used; may be NULL) and a store record staged with a flush
 * required (its first record reaches the disk before it is answered);
 * NULL then means the host table is full (max-hosts) or memory ran out.
 */
struct nlm_host	*nlm_host_get(const struct sockaddr_storage *ss,
		    socklen_t sl, const char *name,
		    const struct sockaddr_storage *local, socklen_t locallen,
		    bool create);
/* Stage the host's record (after a change of state, flags or address). */
void		 nlm_host_stage(struct nlm_host *);
/*
 * The i-th (i < h_nlocal) server address the host used, port 0, in ss;
 * returns its length.
 */
socklen_t	 nlm_host_local_addr(const struct nlm_host *, unsigned i,
		    struct sockaddr_storage *ss);
/* The server addresses the host used, "A,B,..." ("-": none known). */
const char	*nlm_host_locals_str(const struct nlm_host *, char *, size_t);
/*
 * A stored address in ss (port 0); returns its length, 0 when sa holds
 * none.
 */
socklen_t	 nlm_addr_from_store(const struct store_addr *sa,
		    struct sockaddr_storage *ss);
/*
 * Add a host read from the store at startup (no record staged).  Returns
 * 1, or 0 when the record is unusable (logged; ignored), or -1 when out
 * of memory (nothing added): the start must fail, or the host's locks
 * would come back owned by no host and the host go unnotified.
 */
int		 nlm_host_restore(const struct store_host *);
/* How a release of a host went (nlm_host_release()). */
enum nlm_rel {
	NLM_REL_FAILED,		/* out of memory: nothing released */
	NLM_REL_DONE,		/* everything, now */
	NLM_REL_GOING		/* its waiters now, the rest in pieces */
};
/*
 * Release everything the host holds in the lock table (staged).  A host
 * that holds more than a turn's budget of records (nc_turn_changes) is
 * released in pieces, one a turn (NLM_REL_GOING): its waiters and grants
 * at once, then its locks and shares over the next turns, h_releasing
 * set until the last piece -- in one turn, 200,000 locks held the loop
 * 141-187 ms, every other client waiting.  Meanwhile the host's LOCK
 * and SHARE are refused with NLM4_DENIED_GRACE_PERIOD (the client tries
 * again; granted now, they would go with the next piece); what it
 * unlocks is unlocked.  NLM_REL_FAILED when the lock table is out of
 * memory: nothing was released (logged; counted in release_failed once
 * a release, however often it is tried again until it completes), and
 * the host must not be forgotten -- its locks would outlive every way to
 * release them.
 */
enum nlm_rel	 nlm_host_release(struct nlm_host *, const char *why);
/*
 * nlm_host_release(), then nlm_host_forget() once all is released (now,
 * or after the last piece).  false: out of memory, nothing released.
 */
bool		 nlm_host_release_forget(struct nlm_host *, const char *why);
/*
 * The operator's release, a piece of up to `max' records a call, and
 * each(record, arg) for every lock and share of the host it released.
 * While records are left (NLM_REL_GOING) the host is released as by
 * nlm_host_release(), but its pieces are the caller's (`owner', when the
 * release began with this call): it calls again in a later turn, or
 * hands the host to the release's timer with nlm_host_release_handover()
 * when it stops.  NLM_REL_DONE: all of it
 * released (and the host forgotten, freed perhaps, if a FREE_ALL or
 * SM_NOTIFY had asked for that: look it up again by id).  NLM_REL_FAILED:
 * out of memory, nothing released.  With max 0 and owner NULL: its
 * waiters now, all of its records by the release's timer, a piece a
 * turn (none in this one).
 */
enum nlm_rel	 nlm_host_release_list(struct nlm_host *, const char *why,
		    size_t max, const void *owner,
		    void (*each)(const struct lk_record *, void *), void *arg);
/*
 * An operator's release in pieces that `owner' (as given to
 * nlm_host_release_list()) leaves part of the way: the timer's.  A host
 * whose pieces are another's, or the timer's already, is left as it is.
 */
void		 nlm_host_release_handover(struct nlm_host *,
		    const void *owner);
/* The host with that id, or NULL (its index: O(1)). */
struct nlm_host	*nlm_host_by_id(uint64_t id);
/* Call fn for every host; fn may release (not free) the host. */
void		 nlm_host_foreach(void (*fn)(struct nlm_host *, void *),
		    void *arg);
/*
 * A place in the list of every host that stays valid while hosts come
 * and go, to walk it a few at a time across turns of the loop (a status
 * dump): hosts added after it are reached, hosts freed before it is
 * reached are not.  nlm_host_cursor_next() calls fn (which must not free
 * hosts) for up to `max' hosts after the cursor, moves it past them, and
 * returns how many; 0 at the end.  NULL: out of memory.
 */
struct nlm_host	*nlm_host_cursor_new(void);
size_t		 nlm_host_cursor_next(struct nlm_host *cur, size_t max,
		    void (*fn)(struct nlm_host *, void *), void *arg);
void		 nlm_host_cursor_free(struct nlm_host *cur);
/* "name@address" for logs. */
const char	*nlm_host_str(const struct nlm_host *, char *, size_t);
void		 nlm_host_gc_start(void);
/* Hand free memory back to the kernel after the table shrank (nlm_mem.c). */
void		 nlm_mem_start(void);
void		 nlm_mem_stop(void);
void		 nlm_host_free_all(void);
/* The address bytes of an AF_INET or AF_INET6 address (*len 4 or 16). */
const uint8_t	*nlm_addr_bytes(const struct sockaddr_storage *, size_t *len);
/*
 * Same address (ignoring port)?  A link-local IPv6 address with its scope
 * (interface), unless either side's is not known (0).
 */
bool		 nlm_addr_equal(const struct sockaddr_storage *,
		    const struct sockaddr_storage *);

/*
 * The host of (address ss, name), without creating it, or NULL.  O(1).
 */
struct nlm_host	*nlm_host_find(const struct sockaddr_storage *ss,
		    const char *name);
/* The first host of that caller_name (any address), or NULL.  O(1). */
struct nlm_host	*nlm_host_named(const char *name);

/*
 * The host told us it restarted (FREE_ALL, SM_NOTIFY) and was released:
 * it leaves the monitor list now -- its record is deleted and it is
 * freed, or, while a callback is still winding down, it is left to the
 * next sweep.  `h' must not be used after.
 */
void		 nlm_host_forget(struct nlm_host *);

/* ---- nlm_notify.c: SM_NOTIFY to the hosts on the monitor list ---- */
/*
 * Owe every host an SM_NOTIFY carrying `state' and start sending (each
 * host record is staged with the time the debt began, unless it already
 * had one: a pending notification survives restarts, and its give-up
 * time counts from when it was first owed, or from now when that time is
 * ahead of the clock).
 */
void		 nlm_notify_all(int32_t state);
/* Stop notifying `h' (it is being freed, or told us it restarted). */
void		 nlm_notify_stop(struct nlm_host *);
/*
 * `h' is owed nothing (it answered, was given up, runs no status monitor,
 * or restarted since it held anything here): stop notifying it and clear
 * its debt, staging the host record when there was one.
 */
void		 nlm_notify_settle(struct nlm_host *);
/*
 * The idle sweep's look at `h': a debt stored but not being sent (out of
 * memory when it began) is taken up again.  Nothing for a host that is
 * owed nothing or is being told.
 */
void		 nlm_notify_resume(struct nlm_host *);
/* Free every sender (shutdown; nothing staged). */
void		 nlm_notify_shutdown(void);

/* ---- nlm_lat.c: request latency histograms ---- */
struct sbuf;
/* A request of procedure `proc' (v4 numbering) starts now. */
void		 nlm_lat_begin(uint32_t proc);
/* The turn's requests wait for commit number `seq'. */
void		 nlm_lat_seal(uint64_t seq);
/* Commits up to `done' are durable: their requests are answered. */
void		 nlm_lat_release(uint64_t done);
/* The histograms, `names' indexed by procedure (NULL: none). */
void		 nlm_lat_metrics(struct sbuf *, const char *const *names);
void		 nlm_lat_shutdown(void);

/* ---- nlm_grace.c ---- */
/* Start grace if the loaded table has reclaimable records (logged). */
void		 nlm_grace_start(void);
/* End grace now if nothing is left to reclaim (called every turn). */
void		 nlm_grace_check(void);
/* End grace: drop what is left (staged), log why.  No-op outside grace. */
void		 nlm_grace_end(const char *how);
/* Stop the commit-wait watch (nlm_shutdown). */
void		 nlm_cwait_stop(void);
/* The store's descriptor is readable: release what is now durable. */
void		 nlm_store_ready(struct ev_loop *, int fd, int events,
		    void *arg);

/* ---- nlm_out.c ---- */
/*
 * A call to program `prog' (NLM_PROG, SM_PROG) of the client at `peer'
 * (port ignored): procedure `proc' of version `vers', arguments encoded
 * now by `xargs', to leave from `local' (may be NULL).  NULL when it
 * cannot be encoded or memory runs out.  Not started: see
 * nlm_send_start().
 */
struct nlm_send	*nlm_send_new(const struct sockaddr_storage *peer,
		    socklen_t peerlen, uint32_t prog, uint32_t vers,
		    uint32_t proc, xdrproc_t xargs, const void *args,
		    const struct sockaddr_storage *local, socklen_t locallen);
/*
 * Before nlm_send_start(): if this send needs a port look-up, query
 * rpcbind `tries' times, `timeout_ms' apart (default 3 x 1 s).
 */
void		 nlm_send_lookup(struct nlm_send *, unsigned timeout_ms,
		    unsigned tries);
/*
 * Before nlm_send_start(): the send answers a request whose source may
 * be forged (a _RES): after a look-up there found no port, it fails at
 * once for a while instead of looking up again.
 */
void		 nlm_send_reflectable(struct nlm_send *);
/*
 * Before nlm_send_start(): the call is a one-way message (a _RES): its
 * timing out unanswered, at a client that never answered one, completes
 * it as delivered (ok = 1) and says nothing of the port it went to; once
 * one has, the next are waited for 250 ms only (nlm_out.c).
 */
void		 nlm_send_oneway(struct nlm_send *);
/*
 * Start it: look up the client's NLM port if needed, then call; both go
 * out at the next flush.  cb runs exactly once (ok = reply received),
 * unless cancelled; the send is freed after cb.
 */
void		 nlm_send_start(struct nlm_send *, unsigned timeout_ms,
		    unsigned tries, nlm_send_cb *cb, void *arg);
/* Abandon a started send: its callback will not run; frees it. */
void		 nlm_send_cancel(struct nlm_send *);
/*
 * Abandon a started send whose time is up unanswered (a GRANTED_MSG
 * whose next copy is due): as nlm_send_cancel(), and, if it went out,
 * counted against the port it went to like a call timed out.
 */
void		 nlm_send_expire(struct nlm_send *);
/* Run cb(arg) instead of the callback a started send was given. */
void		 nlm_send_set_cb(struct nlm_send *, nlm_send_cb *cb, void *arg);
/*
 * Forget what the port cache knows of a client's lockd (NLM 1, 3, 4) and
 * statd: it restarted, and may listen elsewhere now.
 */
void		 nlm_ports_forget(const struct sockaddr_storage *);
/* Free port cache entries that expired and wait for nothing. */
void		 nlm_out_gc(void);
/* The port cache: entries, and the longest chain (tests). */
void		 nlm_out_peer_stats(size_t *n, size_t *longest);
/* Free the port cache and abandon waiting sends (shutdown). */
void		 nlm_out_shutdown(void);

/* ---- nlm_grant.c ---- */
/*
 * The callback record of a blocking LOCK (copies what it needs from the
 * arguments), or NULL when out of memory.  Owned by the caller until
 * lockcore takes it as udata (LK_BLOCKED).
 */
struct nlm_grant *nlm_grant_new(const struct nlm_ctx *, struct nlm_host *,
		    const nlm4_lockargs *);
/* Free; stops its timer and any send in flight.  NULL ok. */
void		 nlm_grant_free(struct nlm_grant *);
/* lockcore granted the waiter: start calling back (idempotent). */
void		 nlm_grant_start(struct nlm_grant *);
/* The client answered a GRANTED callback with `st' (may free g). */
void		 nlm_grant_answer(struct nlm_grant *, nlm4_stats st);
/* The active grant with this cookie, or NULL. */
struct nlm_grant *nlm_grant_by_cookie(const nlm_netobj *);
/* Fill a lockcore request describing the grant's lock. */
void		 nlm_grant_lockreq(const struct nlm_grant *,
		    struct lk_lockreq *);

#endif
