/*
 * crashdrv.h - what the files of crashdrv share.
 *
 * crashdrv drives nlmd through crashes and restarts (run by
 * tests/integration/test_restart.sh and tools/bench-restart.sh): a number
 * of NLM v4 clients, each a thread with its own caller_name, svid, owner
 * handle and CLIENT handle (UDP, or TCP for every other one), all from one
 * address, issue random LOCK / UNLOCK / SHARE / UNSHARE requests and keep a
 * model of what they hold, built only from the replies they received.
 * After every restart of nlmd the model is checked against the server,
 * mostly through reclaims (VERIFY, verify.c).
 *
 *   crashdrv.c  options, the commands on stdin, phases, the check report
 *   wire.c      client handles and one helper per NLM v4 procedure
 *   load.c      the client threads: random operations, the model
 *   verify.c    VERIFY, the cross-checks, the model files
 *   receiver.c  the callback receiver: GRANTED_MSG -> GRANTED_RES
 *
 * FILES AND SLOTS.  Clients 2k and 2k+1 (a pair) share lock file k (file
 * handle "lockfile-k").  Slot j of a lock file is the byte range
 * [j*100, j*100+10): slots never touch, so an owner's locks never merge or
 * split.  Every client also has a private share file ("share-i") and its
 * pair's share file ("pairshare-k").
 *
 * THE MODEL.  What a client may hold is a set of possible states: for a
 * slot a subset of {none, shared, exclusive} (RS_M_*), for a share file a
 * subset of {none} and the 16 (access, deny) pairs (RS_SH_*).  One element
 * means certain.  A reply sets the new state; a request without a reply
 * adds the state it asked for to the old one (both outcomes allowed).
 *
 * LOCKING.  d_mu guards the phase, every client's model and wait state,
 * the tallies and the counters kept in struct rs_drv; it is never held
 * across an RPC.  A client's rs_conn belongs to its load thread while the
 * phase is RS_RUN, and to VERIFY while the load threads are parked.
 */
#ifndef NLMD_TESTS_RESTART_CRASHDRV_H
#define NLMD_TESTS_RESTART_CRASHDRV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "rpc/nlm_prot.h"

/* A cast between XDR routine types that -Wcast-function-type accepts. */
#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

#define RS_MAXCLIENTS	64
#define RS_MAXSLOTS	32
#define RS_SLOT_STRIDE	100
#define RS_SLOT_LEN	10
#define RS_SVID_BASE	1000
#define RS_NSM_STATE	3	/* our NSM state: constant, we never reboot */
#define RS_NOREPLY	(-1)	/* a call that got no reply */
#define RS_NSTAT	11	/* nlm4_stats 0..9, then "other" */

/* Possible states of a slot. */
#define RS_M_NONE	0x1u
#define RS_M_SHARED	0x2u
#define RS_M_EXCL	0x4u
#define RS_M_ANY	0x7u

/* Possible states of a share file: bit 4*access+deny, or RS_SH_NONE. */
#define RS_SH_NONE	(1u << 16)
#define RS_SH_BIT(a, d)	(1u << ((unsigned)(a) * 4 + (unsigned)(d)))
#define RS_SH_ANY	0x1ffffu

#define RS_SH_PRIVATE	0
#define RS_SH_PAIR	1

enum rs_phase {
	RS_RUN,		/* load */
	RS_PAUSE,	/* parked: nlmd is going down, or VERIFY */
	RS_QUIT
};

/* A lock or share as sent: an identity and one range of one file. */
struct rs_lk {
	const char	*lk_name;	/* caller_name */
	const char	*lk_fh;
	const char	*lk_oh;
	int32_t		 lk_svid;
	uint64_t	 lk_off;
	uint64_t	 lk_len;
};

/* A CLIENT handle to nlmd's NLM v4, remade after a TCP failure. */
struct rs_conn {
	CLIENT		*cn_clnt;	/* NULL: made by the next call */
	bool		 cn_tcp;
	unsigned	 cn_timeout_ms;	/* a whole call */
	unsigned	 cn_retry_ms;	/* UDP retransmission interval */
	uint32_t	 cn_tag;	/* first half of every cookie */
	uint32_t	 cn_seq;	/* second half */
	uint64_t	 cn_stat[RS_NSTAT];	/* replies by status */
	uint64_t	 cn_noreply;
	uint64_t	 cn_cookie_bad;	/* replies not echoing the cookie */
	uint64_t	 cn_reclaims;	/* reclaim calls made */
};

struct rs_client {
	int		 c_id;
	char		 c_name[32];	/* caller_name "rst-client-NN" */
	int32_t		 c_svid;
	char		 c_oh[32];
	char		 c_lockfh[32];	/* "lockfile-k", the pair's */
	char		 c_sharefh[2][32];	/* RS_SH_PRIVATE, RS_SH_PAIR */
	struct rs_conn	 c_conn;
	FILE		*c_log;		/* every reply, one line each */
	uint64_t	 c_rng;
	pthread_t	 c_thr;
	uint64_t	 c_wend_ms[RS_MAXSLOTS];	/* last wait's end */
	struct rs_drv	*c_drv;
	/* d_mu: */
	unsigned	 c_slot[RS_MAXSLOTS];	/* RS_M_* set */
	uint32_t	 c_share[2];		/* RS_SH_* set */
	int		 c_wslot;	/* slot of a BLOCKED LOCK, or -1 */
	bool		 c_wexcl;
	bool		 c_wgranted;	/* a GRANTED_MSG for it arrived */
	bool		 c_parked;
	/* the load thread's; read by `down' while it is parked: */
	uint64_t	 c_ops;		/* requests answered, this window */
};

/* One aggregated check: n cases, bad of them failed. */
struct rs_tally {
	const char	*t_what;
	unsigned	 t_n;
	unsigned	 t_bad;
};

/* The tallies of one VERIFY or one quiescent point. */
enum rs_tally_id {
	RT_GRACE_IN,		/* in grace after the restart */
	RT_FREE_TEST,		/* free slot: TEST by another host */
	RT_HELD_CLOSED,		/* held slot: LOCK by another host */
	RT_SHARED_OPEN,		/* shared slot: shared LOCK by another */
	RT_FREE_SHARE,		/* free share file: SHARE by another */
	RT_HELD_SHARE,		/* held share: conflicting SHARE by another */
	RT_NEG_LOCK,		/* unheld slot: reclaim refused */
	RT_NEG_MODE,		/* shared slot: exclusive reclaim refused */
	RT_NEG_SHARE,		/* unheld share: reclaim refused */
	RT_POS_LOCK,		/* held slot: reclaim granted */
	RT_POS_SHARE,		/* held share: reclaim granted */
	RT_UNSURE,		/* uncertain: reclaimed or not, released */
	RT_GRACE_OVER,		/* grace over once all was reclaimed */
	RT_EXCLUSION,		/* pair members do not conflict */
	RT_NTALLY
};

struct rs_opts {
	const char	*o_srv;		/* nlmd's address */
	const char	*o_cli;		/* ours */
	uint16_t	 o_port;	/* nlmd's NLM port */
	int		 o_nclients;
	int		 o_nslots;
	unsigned	 o_timeout_ms;	/* one call */
	unsigned	 o_wait_ms;	/* a BLOCKED LOCK, before CANCEL */
	unsigned	 o_first_ms;	/* `up': wait this long for nlmd */
	unsigned	 o_impatient;	/* % of waits given up in 20-200 ms */
	unsigned	 o_drop;	/* % of GRANTED_MSG ignored */
	uint64_t	 o_seed;
	const char	*o_dir;		/* client logs and model files */
};

struct rs_drv {
	struct rs_opts	 d_opt;
	pthread_mutex_t	 d_mu;
	pthread_cond_t	 d_cv;		/* phase, parking, wait states */
	enum rs_phase	 d_phase;
	int		 d_cycle;	/* `up' commands so far */
	int		 d_nmodel;	/* model files written */
	uint64_t	 d_t0;		/* start, monotonic ms */
	struct rs_client d_cl[RS_MAXCLIENTS];
	struct rs_conn	 d_probe;	/* the third identity */
	struct rs_conn	 d_first;	/* its first call after `up' */
	struct rs_tally	 d_tally[RT_NTALLY];
	/* counters (d_mu) */
	uint64_t	 d_blocked;	/* BLOCKED answers */
	uint64_t	 d_cb_msgs;	/* GRANTED / GRANTED_MSG received */
	uint64_t	 d_cb_repeat;	/* of them, cookie seen before */
	uint64_t	 d_cb_matched;	/* of them, for a waiting request */
	uint64_t	 d_cb_refused;	/* answered DENIED */
	uint64_t	 d_cb_dropped;	/* ignored (o_drop) */
	uint64_t	 d_cb_confirmed;	/* re-sent LOCK said GRANTED */
	uint64_t	 d_cb_unconfirmed;	/* ... said BLOCKED */
	uint64_t	 d_resend_grants;	/* granted by a re-sent LOCK */
	uint64_t	 d_giveups;	/* CANCEL after waiting too long */
	uint64_t	 d_grace_retries;	/* DENIED_GRACE_PERIOD in load */
	uint64_t	 d_min_window_ops;	/* fewest answers in a window */
	int		 d_windows;
	int		 d_npass;
	int		 d_nfail;
};

/* ---- crashdrv.c ---- */
uint64_t rs_now_ms(void);
uint64_t rs_wall_ms(void);
/* A CLOCK_MONOTONIC deadline ms from now, for d_cv. */
void	 rs_deadline(struct timespec *, unsigned ms);
void	 rs_sleep_ms(unsigned ms);
/* One output line (stdout is shared by every thread). */
void	 rs_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A "# " note line. */
void	 rs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One PASS/FAIL check line, counted. */
void	 rs_check(struct rs_drv *, bool ok, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Count one case of tally id; a failed one is noted with fmt. */
void	 rs_tally(struct rs_drv *, enum rs_tally_id, bool ok,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- wire.c ---- */
/* Addresses for every handle; exits on a bad literal. */
void	 rs_wire_init(const char *srv, const char *cli, uint16_t port);
void	 rs_conn_init(struct rs_conn *, bool tcp, unsigned timeout_ms,
	    unsigned retry_ms, uint32_t tag);
void	 rs_conn_close(struct rs_conn *);
/*
 * Every call returns the reply's nlm4_stats, or RS_NOREPLY when the RPC
 * failed (a TCP handle is then closed, to be remade by the next call).
 */
int	 rs_call_lock(struct rs_conn *, const struct rs_lk *, bool excl,
	    bool block, bool reclaim);
int	 rs_call_test(struct rs_conn *, const struct rs_lk *, bool excl);
int	 rs_call_cancel(struct rs_conn *, const struct rs_lk *, bool excl,
	    bool block);
int	 rs_call_unlock(struct rs_conn *, const struct rs_lk *);
int	 rs_call_share(struct rs_conn *, const struct rs_lk *, int access,
	    int deny, bool reclaim);
int	 rs_call_unshare(struct rs_conn *, const struct rs_lk *);
/* GRANTED_RES, one way (a handle with a 1 ms timeout): no reply awaited. */
void	 rs_call_granted_res(struct rs_conn *, const nlm_netobj *cookie,
	    int stat);
const char *rs_stat_name(int stat);

/* ---- load.c ---- */
int	 rs_clients_start(struct rs_drv *);
void	 rs_clients_join(struct rs_drv *);
/* The lock of client c on slot s, and its share on file f. */
void	 rs_slot_lk(const struct rs_client *, int s, struct rs_lk *);
void	 rs_share_lk(const struct rs_client *, int f, struct rs_lk *);
/* One line in the client's log: "ms what -> status". */
void	 rs_log(struct rs_client *, int stat, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* The receiver got GRANTED(_MSG) a; the status to answer (d_mu taken). */
int	 rs_client_granted(struct rs_drv *, const nlm4_testargs *a,
	    bool repeat);
/* Set the possible states (d_mu taken). */
void	 rs_slot_set(struct rs_client *, int s, unsigned may);
void	 rs_share_set(struct rs_client *, int f, uint32_t may);
unsigned rs_slot_get(struct rs_client *, int s);
uint32_t rs_share_get(struct rs_client *, int f);

/* ---- verify.c ---- */
/* `up': wait for nlmd, then VERIFY; the load threads are parked. */
void	 rs_verify(struct rs_drv *);
/* A quiescent point: pair members must not conflict (tally id). */
void	 rs_exclusion_check(struct rs_drv *, enum rs_tally_id);
/* Report the tallies as checks (prefix e.g. "cycle 2"), then reset. */
void	 rs_tally_report(struct rs_drv *, const char *prefix);
/* Write what every client may hold to <dir>/model.N. */
void	 rs_model_write(struct rs_drv *);

/* ---- receiver.c ---- */
int	 rs_receiver_start(struct rs_drv *);
void	 rs_receiver_stop(void);

#endif
