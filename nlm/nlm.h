/*
 * nlm.h - the NLM service (program 100021, versions 1, 3 and 4).
 *
 * Turns NLM requests into lock-core calls and lock-core results into
 * replies, _RES messages and GRANTED callbacks.  It holds no lock logic of
 * its own.  There is one service per process: the rpcgen-generated
 * dispatchers call global handler functions, which find it here.
 *
 * Every change a turn of the event loop makes (lock-core change sets,
 * host records, the fencing-token high-water mark) is staged in the store
 * as it happens; nlm_turn_end() seals the turn, and its replies and
 * outbound calls leave once the store has committed it (DESIGN.md, rule
 * 1).
 */
#ifndef NLMD_NLM_NLM_H
#define NLMD_NLM_NLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "onc.h"

struct ctl_srv;
struct ev_loop;
struct onc_out;
struct onc_srv;
struct lk_allocator;
struct lk_table;
struct store;

enum nlm_cbmode {
	NLM_CB_MSG,		/* GRANTED_MSG, acknowledged by GRANTED_RES */
	NLM_CB_SYNC,		/* synchronous GRANTED */
	NLM_CB_BOTH,		/* GRANTED_MSG, then GRANTED on later tries */
	NLM_CB_OFF		/* no callbacks: clients find out by polling */
};

struct nlm_config {
	size_t		nc_max_name;		/* caller_name bytes */
	size_t		nc_max_fh;		/* file handle bytes */
	size_t		nc_max_oh;		/* owner handle bytes */
	unsigned	nc_max_hosts;
	unsigned	nc_max_hosts_per_addr;
	enum nlm_cbmode	nc_cbmode;
	unsigned	nc_cb_retry_min_ms;	/* first retransmission */
	unsigned	nc_cb_retry_max_ms;	/* backoff ceiling */
	unsigned	nc_cb_give_up_sec;	/* 0: retry while held */
	unsigned	nc_cb_max_per_host;	/* callbacks in flight */
	size_t		nc_max_locks;		/* lock-core limits */
	size_t		nc_max_locks_per_host;
	size_t		nc_max_waiters_per_host;
	size_t		nc_max_waiters_per_owner;
	size_t		nc_max_waiters;
	size_t		nc_max_shares;
	size_t		nc_max_shares_per_host;
	uint64_t	nc_epoch;		/* this start's epoch */
	unsigned	nc_grace_sec;		/* grace deadline */
	int		nc_reclaim_check;	/* enum lk_reclaim_check */
	int32_t		nc_nsm_state;		/* our NSM state this start */
	uint8_t		nc_hash_key[16];	/* random at each start: the
						   key of every table of
						   client-chosen keys */
	char		nc_notify_name[256];	/* SM_NOTIFY mon_name; "": the
						   address the host used */
	unsigned	nc_notify_give_up_sec;	/* stop notifying after */
	unsigned	nc_host_idle_sec;	/* unused hosts leave after */
	size_t		nc_turn_changes;	/* records a turn's requests
						   change before it takes no
						   more; 0: NLM_TURN_CHANGES */
	const struct lk_allocator *nc_lk_alloc;	/* the lock table's
						   allocator (tests: failure
						   injection); NULL: the C
						   library */
};

/* Counters, kept from the start; the operator tooling exposes them. */
#define NLM_NPROCS	24	/* procedure numbers 0..23 */
#define NLM_NSTATS	10	/* nlm4_stats 0..9 */

struct nlm_counters {
	uint64_t	calls[5][NLM_NPROCS];	/* [version][procedure] */
	uint64_t	status[NLM_NPROCS][NLM_NSTATS];	/* v4 status sent */
	uint64_t	bad_args;	/* over a limit or malformed field */
	uint64_t	res_sent;	/* _RES messages handed to the network */
	uint64_t	res_failed;	/* _RES not delivered (no port...) */
	uint64_t	cb_granted;	/* waiters granted -> callback started */
	uint64_t	cb_sent;	/* GRANTED / GRANTED_MSG transmissions */
	uint64_t	cb_retried;	/* of which retransmissions */
	uint64_t	cb_acked;	/* GRANTED_RES / reply: granted */
	uint64_t	cb_refused;	/* client said not granted: released */
	uint64_t	cb_repoll;	/* acknowledged by a re-sent LOCK */
	uint64_t	cb_given_up;	/* give-up deadline: released */
	uint64_t	cb_dropped;	/* ended by cancel/unlock/release */
	uint64_t	cb_unknown_res;	/* GRANTED_RES matching nothing */
	uint64_t	cb_release_failed; /* undoing or confirming a grant
					      failed: retried */
	uint64_t	rpcb_lookups;	/* rpcbind queries to client hosts */
	uint64_t	rpcb_failed;
	uint64_t	rpcb_suppressed; /* sends failed at once: no port lately */
	uint64_t	peers_evicted;	/* port cache full: idle entries
					   forgotten for new addresses */
	uint64_t	res_dropped;	/* _RES over the in-flight cap */
	uint64_t	res_inflight;	/* gauge: _RES on their way */
	uint64_t	reboots;	/* hosts whose NSM state changed */
	uint64_t	free_all;	/* FREE_ALL that released a host */
	uint64_t	free_all_refused; /* FREE_ALL from a foreign address */
	uint64_t	sm_notify;	/* hosts released by proc 16 */
	uint64_t	notified;	/* hosts released by an SM_NOTIFY to
					   our status monitor */
	uint64_t	sm_notify_refused;
	uint64_t	notify_gone;	/* SM_NOTIFY naming a host forgotten
					   lately, or re-sent about a
					   restart acted on: ignored */
	uint64_t	notify_ambiguous; /* SM_NOTIFY naming no host, from an
					   address with several: ignored */
	uint64_t	notify_unmatched; /* SM_NOTIFY naming no host, from an
					   address with one of another name:
					   ignored */
	uint64_t	release_failed;	/* a host's release out of memory:
					   host kept; once a release,
					   however often it is tried */
	uint64_t	release_pieces;	/* hosts released in pieces */
	uint64_t	release_refused; /* their LOCK/SHARE meanwhile:
					   DENIED_GRACE_PERIOD */
	uint64_t	hosts;		/* gauge: hosts known */
	uint64_t	hosts_refused;	/* max-hosts or max-hosts-per-address */
	uint64_t	cb_inflight;	/* gauge: grants awaiting acknowledgement */
	uint64_t	cb_waiting;	/* gauge: of them, not called back yet:
					   over their host's
					   callback-max-per-host */
	uint64_t	loaded_locks;	/* reclaimable at start */
	uint64_t	loaded_shares;
	uint64_t	loaded_hosts;
	uint64_t	grace_dropped;	/* not reclaimed by the deadline */
	uint64_t	commits;	/* turns committed with changes */
	uint64_t	notify_started;	/* SM_NOTIFY owed to a host */
	uint64_t	notify_sent;	/* SM_NOTIFY attempts (incl. retries) */
	uint64_t	notify_acked;	/* answered: the host knows */
	uint64_t	notify_given_up; /* unanswered after notify-give-up */
	uint64_t	notify_pending;	/* gauge: hosts still to notify */
	uint64_t	mem_trims;	/* free memory handed back (nlm_mem.c) */
};

/* The grace period of this start (see nlm_grace.c). */
struct nlm_grace {
	bool		g_active;	/* in grace now */
	bool		g_had;		/* there was one at this start */
	uint64_t	g_start_ms;	/* ev_now_ms() when it began */
	uint64_t	g_deadline_ms;
	uint64_t	g_end_ms;	/* when it ended (0: not yet) */
	const char	*g_how;		/* why it ends (set: ending) */
	size_t		g_drop_locks;	/* dropped so far (not reclaimed) */
	size_t		g_drop_shares;
	uint64_t	g_dropped;	/* dropped so far */
	uint64_t	g_end_seq;	/* the commit of its end (when over) */
};

/*
 * Start the service: create the lock table and the host table, load the
 * hosts, locks and shares `st' holds (the locks and shares as reclaimable:
 * a grace period of conf->nc_grace_sec starts when there are any), and arm
 * the timers.  `clnt' is the outbound caller used for callbacks and _RES
 * messages; `st' (borrowed, must outlive the service) receives every
 * change.  Call after store_epoch_begin() and before the listeners open.
 * Returns 0, or -1 with a reason in err[errlen].
 */
int	nlm_init(struct ev_loop *loop, struct onc_out *clnt, struct store *st,
	    const struct nlm_config *conf, char *err, size_t errlen);

/*
 * The end of a turn of the event loop (its before-sleep hook): end grace
 * if nothing is left to reclaim, stage the token and host-id high-water
 * marks, seal the turn (the store commits it on its own thread), and tag
 * the replies queued on `srv' and the calls held by the RPC client with
 * its commit number; they leave when the store says that commit is
 * durable (the service watches the store's descriptor).  A failed commit
 * is fatal: logged, and the process exits with status 1 without sending
 * anything of the turns it carried (recovery runs at the next start).
 */
void	nlm_turn_end(struct onc_srv *srv);

/*
 * After the loop stopped: wait until everything sealed is committed, and
 * let out what it reported.  Call before tearing the transport down.
 */
void	nlm_drain(void);

/*
 * A simulated restart (SM_SIMU_CRASH): records created from now on carry
 * `epoch', and every host on the monitor list is owed an SM_NOTIFY with
 * our new NSM state `state' (staged; sent after the turn's commit).
 */
void	nlm_set_epoch(uint64_t epoch, int32_t state);

/* Tear everything down (pending callbacks are abandoned).  Idempotent. */
void	nlm_shutdown(void);

/*
 * Serve NLM versions 1, 3 and 4 on `srv'.  Returns ONC_OK, or ONC_FULL
 * (a programming error: the server's tables are full).
 */
enum onc_status nlm_register(struct onc_srv *srv);

/*
 * Serve the operator's commands (status, release, grace-end) on the
 * control socket `srv' (nlm_ctl.c).  `durability' is shown in status.
 * 0, or -1 when out of memory.
 */
int	nlm_ctl_register(struct ctl_srv *srv, const char *durability);
/* The NLM service's metrics, as Prometheus text (nlm_metrics.c). */
struct sbuf;
void	nlm_metrics(struct sbuf *);

const struct nlm_counters *nlm_get_counters(void);
/*
 * Milliseconds since which commits are pending and none completed (the
 * store is not keeping up or the disk hangs; answers are held): 0 when
 * nothing is pending.
 */
uint64_t nlm_commit_stall_ms(void);
/*
 * Milliseconds since which no request is read because too many answers
 * wait for commits (rpcsrv.h, onc_srv_seal()): 0 while reading.
 */
uint64_t nlm_input_paused_ms(void);
const struct nlm_grace *nlm_get_grace(void);
/* The current epoch (a simulated restart moves it on). */
uint64_t nlm_get_epoch(void);
/* The lock table, for the status dump (read only). */
const struct lk_table *nlm_get_table(void);

/*
 * A client sent SM_NOTIFY (it restarted, now in NSM state `state') from
 * `addr': release what the host (addr, name) holds and take it off the
 * monitor list.  When no host anywhere has that name, its status monitor
 * may go by another form of its lock manager's name (the same name but
 * for case, a short name for a full one or the reverse, or the sender's
 * address): then the host at that address is released if it is the only
 * one there and `name' is such a form of its caller_name; nothing when
 * it is not (counted in notify_unmatched, logged), when there are
 * several (counted in notify_ambiguous, logged) or when `name'
 * is that of a host forgotten at that address lately (a re-sent
 * notification, or a host swept while idle), or the same (addr, name,
 * state) released a host lately, or the same state at addr released a
 * host of this caller_name lately under another form of it (re-sent:
 * counted in notify_gone, as the others; this holds for the named host
 * too, which may have come back since and taken new locks that the
 * re-sent notification is not about).  A name known only at other addresses releases nothing.  Hosts
 * elsewhere are never touched, and neither is a host whose recorded state
 * is already `state' (a repeated notification; counted in *unchanged,
 * which may be NULL).  Returns the number of hosts released.
 */
unsigned	nlm_host_notified(const char *name, int32_t state,
		    const struct sockaddr *addr, socklen_t addrlen,
		    unsigned *unchanged);

/*
 * Could an SM_NOTIFY naming `name' release a host (nlm_host_notified())?
 * It can when `name' is a caller_name we accept (printable ASCII, no '/',
 * at most max-name-length bytes: any, even empty or with a leading dot)
 * or a form of one: the full name of a short caller_name (longer than
 * max-name-length after its first dot) or a numeric address.  False for
 * a name of no such form: the caller refuses it before any look-up.
 */
bool		nlm_notify_name_ok(const char *name);

/*
 * A status monitor on this host reported that host `name' restarted into
 * NSM state `state' (NLM procedure 16): release the hosts of that
 * caller_name, but for those whose recorded state is already `state' (they
 * locked again since that restart; state 0: every one).  Returns how many.
 */
unsigned	nlm_host_rebooted(const char *name, int32_t state);

#endif
