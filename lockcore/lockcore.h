/*
 * lockcore.h - protocol-free byte-range lock manager (NLM locks, NLM share
 * reservations, blocked-request queues, deadlock detection, fencing tokens).
 *
 * lockcore knows nothing of RPC, XDR, sockets, Berkeley DB, clocks or
 * logging.  The caller passes every input (including "now", in whatever
 * monotonic unit it likes; lockcore only stores it for the status dump) and
 * receives decisions as values.  Nothing here blocks, allocates without
 * checking, or aborts: allocation failure is LK_NOMEM and leaves the table
 * exactly as it was before the call.
 *
 * OBJECTS
 *   file   opaque file handle, 1..LK_FH_MAX bytes, compared bytewise.
 *   host   a uint64_t chosen by the caller (e.g. the NSM monitor id).
 *   owner  (host, svid, oh): svid is any int32_t (0 is valid), oh is an
 *          opaque owner handle of 0..LK_OH_MAX bytes.  A share reservation
 *          owner is (host, oh) alone; share owners and lock owners live in
 *          separate name spaces.
 *   lock   (owner, file, start, len, exclusive?); len 0 means "to the end of
 *          the file", i.e. the last byte is UINT64_MAX.  A range whose last
 *          byte would be past UINT64_MAX is refused with LK_RANGE.  A lock
 *          whose last byte is UINT64_MAX is always *reported* with len 0.
 *   share  (share owner, file, access, deny), access/deny are masks of
 *          LK_SHARE_R | LK_SHARE_W.
 *
 * File and owner handle bytes are copied once when the file or owner is
 * first seen and shared by every lock, waiter and share that refers to it.
 *
 * SEMANTICS (POSIX fcntl locks, as NLM wants them)
 *   - Locks of different owners conflict when they overlap and at least one
 *     is exclusive.  The locks of one owner on one file never overlap: a new
 *     lock merges with same-mode locks it overlaps or touches, and splits
 *     or replaces locks of the other mode (upgrade/downgrade happen
 *     atomically: a refused upgrade leaves the original lock untouched).
 *   - Unlocking a range nobody holds succeeds.
 *   - A blocking request that conflicts is queued (LK_BLOCKED).  With the
 *     default policy LK_POLICY_FIFO, a request also conflicts with every
 *     older queued request of another owner that it overlaps (one of the two
 *     exclusive) on bytes the requester does not already hold in a mode at
 *     least as strong: new requests never barge ahead of older waiters, while
 *     keeping or downgrading what one holds never waits.  TEST and
 *     non-blocking LOCK answer the same way (rs_holder_waiting is then set).
 *     Waiters are granted in arrival order.
 *   - A blocking request whose queueing would close a cycle in the wait-for
 *     graph of owners (across files and hosts) gets LK_DEADLOCK instead.
 *     The graph is computed from the live waiters on every check, so an
 *     edge disappears the moment its waiter is granted or removed.  (With
 *     LK_POLICY_BARGE a cycle closed by a grant rather than by queueing is
 *     not detected.)
 *
 * RESULTS
 *   Every call that takes `const struct lk_result **resp` stores there a
 *   pointer to a result owned by the table; it (and every pointer inside it,
 *   including file and owner handle bytes) stays valid until the next call
 *   on the table that takes a resp argument, lk_table_load() or
 *   lk_table_destroy().  resp may be NULL when the caller does not care.
 *   The result lists:
 *     rs_added/rs_removed  exact lock and share records that the call added
 *                          to / removed from the table (net: a record added
 *                          and removed within one call appears in neither).
 *                          Applying removals then additions to a store that
 *                          holds the previous records yields the table's
 *                          records.  Unique keys: locks (host, svid, oh, fh,
 *                          start); shares (host, oh, fh).
 *     rs_granted           waiters granted by this call (any release path:
 *                          unlock, cancel, downgrade, host/file release).
 *                          Each becomes an *unconfirmed grant* until
 *                          lk_grant_confirm(), a re-sent LOCK, lk_cancel(),
 *                          an overlapping unlock, or a release ends it.
 *     rs_dropped           udata pointers whose life in the table ended
 *                          (see UDATA); the caller frees them.
 *     rs_holder            the conflicting lock or share, on LK_DENIED,
 *                          LK_BLOCKED and LK_DEADLOCK.
 *
 * UDATA
 *   lk_lock() takes ownership of rq_udata if and only if it returns
 *   LK_BLOCKED.  The table never dereferences it.  It is handed back in
 *   rs_granted when the waiter is granted (the table still holds it while the
 *   grant is unconfirmed) and exactly once in rs_dropped when its life ends:
 *   the waiter is cancelled or released, a re-sent request replaced it (the
 *   newest udata is kept), or its unconfirmed grant was confirmed, cancelled
 *   or released.  lk_table_destroy() drops the rest silently.
 *
 * FENCING TOKENS
 *   A strictly increasing 64-bit counter, seeded by cf_token_seed (the last
 *   token ever issued; the first new token is seed + 1).  Every lock record
 *   created by a grant (new lock, merge that grows one, mode change) gets a
 *   new token; the pieces left by a split keep the token they had.  A LOCK
 *   already covered by the owner's lock of the same mode changes nothing and
 *   reports that lock's token.
 *
 * LIMITS
 *   Limits count lock records (after merging), queued waiters and share
 *   reservations, per host and for the whole table; 0 means unlimited.  A
 *   request that would exceed one gets LK_NOLOCKS and changes nothing; a
 *   split by UNLOCK counts too.  Granting a queued waiter is not refused by
 *   the lock limits (the overshoot is bounded by the waiter limits).
 *
 * COMPLEXITY
 *   File, host and owner lookup O(1) (hash); a lock, test or unlock is
 *   O(log n + k) in the n locks on the file (interval B+-tree keyed by start)
 *   and the k locks overlapping the request.  Release paths that have waiters on the file also scan that
 *   file's waiter queue (O(w^2) in the waiters of that file).
 *
 * THREADS
 *   A table is not locked internally: one thread at a time per table.
 */
#ifndef NLMD_LOCKCORE_LOCKCORE_H
#define NLMD_LOCKCORE_LOCKCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest file handle / owner handle accepted (NLMv4 uses up to 1024). */
#define LK_FH_MAX	1024
#define LK_OH_MAX	1024

/* Share reservation access and deny bits (NLM fsh_access / fsh_mode). */
#define LK_SHARE_R	1
#define LK_SHARE_W	2

/* Kinds of struct lk_record. */
#define LK_REC_LOCK	1
#define LK_REC_SHARE	2

enum lk_status {
	LK_OK = 0,		/* done; for lock requests: granted */
	LK_GRANTED = LK_OK,
	LK_DENIED,		/* conflicts with a lock or share (rs_holder) */
	LK_BLOCKED,		/* queued; a grant event will follow */
	LK_DEADLOCK,		/* queueing would close a wait-for cycle */
	LK_NOLOCKS,		/* a configured limit would be exceeded */
	LK_NOMEM,		/* out of memory; nothing changed */
	LK_RANGE,		/* start + len - 1 is beyond UINT64_MAX */
	LK_NOTFOUND,		/* cancel/confirm: no such waiter or grant */
	LK_INVAL		/* malformed argument or record */
};

enum lk_policy {
	LK_POLICY_FIFO = 0,	/* default: no barging past older waiters */
	LK_POLICY_BARGE		/* grant whatever held locks allow */
};

/*
 * Optional allocator: when set, the table calls these (with al_arg) instead
 * of malloc/realloc/free, for everything it allocates, the table included.
 * For failure-injection tests and memory accounting.  al_realloc(NULL, n)
 * must behave as al_malloc(n).
 */
struct lk_allocator {
	void	*(*al_malloc)(size_t size, void *arg);
	void	*(*al_realloc)(void *p, size_t size, void *arg);
	void	 (*al_free)(void *p, void *arg);
	void	*al_arg;
};

struct lk_config {
	size_t		 cf_max_locks;		/* lock records, all hosts */
	size_t		 cf_max_locks_per_host;
	size_t		 cf_max_waiters;	/* queued requests */
	size_t		 cf_max_waiters_per_host;
	size_t		 cf_max_shares;		/* share reservations */
	size_t		 cf_max_shares_per_host;
	enum lk_policy	 cf_policy;
	uint64_t	 cf_token_seed;		/* last token issued before */
	const struct lk_allocator *cf_alloc;	/* NULL: the C library; the
						   struct must outlive the
						   table */
};

/*
 * A lock or share as stored and reported.  Byte pointers are borrowed (see
 * RESULTS for how long they live).  In lk_table_load() input, rc_len 0 means
 * to end of file, as everywhere.
 */
struct lk_record {
	uint64_t	 rc_host;
	const void	*rc_oh;		/* owner handle bytes */
	const void	*rc_fh;		/* file handle bytes */
	size_t		 rc_ohlen;
	size_t		 rc_fhlen;
	uint64_t	 rc_start;	/* locks: first byte */
	uint64_t	 rc_len;	/* locks: 0 = through UINT64_MAX */
	uint64_t	 rc_token;	/* locks: fencing token */
	int32_t		 rc_svid;	/* locks: owner's svid */
	uint8_t		 rc_kind;	/* LK_REC_LOCK or LK_REC_SHARE */
	uint8_t		 rc_excl;	/* locks: 1 exclusive, 0 shared */
	uint8_t		 rc_access;	/* shares: LK_SHARE_* mask */
	uint8_t		 rc_deny;	/* shares: LK_SHARE_* mask */
};

/* A waiter that has just been granted. */
struct lk_grant {
	struct lk_record gr_lock;	/* owner, file, the range and mode the
					   waiter asked for, token of the lock
					   now covering it */
	void		*gr_udata;	/* the waiter's udata (still held) */
};

struct lk_result {
	const struct lk_record	*rs_added;
	size_t			 rs_nadded;
	const struct lk_record	*rs_removed;
	size_t			 rs_nremoved;
	const struct lk_grant	*rs_granted;
	size_t			 rs_ngranted;
	void *const		*rs_dropped;
	size_t			 rs_ndropped;
	struct lk_record	 rs_holder;	/* see RESULTS */
	bool			 rs_holder_waiting; /* holder is a waiter */
	uint64_t		 rs_token;	/* lk_lock granted: token of the
						   lock covering the request */
};

/*
 * A lock request; lk_lock(), lk_test(), lk_unlock(), lk_cancel() and
 * lk_grant_confirm() read the fields they need (see each).  All pointers are
 * borrowed for the duration of the call.
 */
struct lk_lockreq {
	uint64_t	 rq_host;
	int32_t		 rq_svid;
	const void	*rq_oh;
	size_t		 rq_ohlen;	/* 0..LK_OH_MAX */
	const void	*rq_fh;
	size_t		 rq_fhlen;	/* 1..LK_FH_MAX */
	uint64_t	 rq_start;
	uint64_t	 rq_len;	/* 0 = to end of file */
	bool		 rq_excl;
	bool		 rq_block;
	void		*rq_udata;	/* see UDATA */
};

struct lk_sharereq {
	uint64_t	 sq_host;
	const void	*sq_oh;
	size_t		 sq_ohlen;
	const void	*sq_fh;
	size_t		 sq_fhlen;
	uint8_t		 sq_access;	/* LK_SHARE_* mask, lk_share() only */
	uint8_t		 sq_deny;	/* LK_SHARE_* mask, lk_share() only */
};

struct lk_table;

/* Fill *cf with the defaults: no limits, FIFO, token seed 0, libc. */
void	lk_config_init(struct lk_config *cf);

/*
 * Create an empty table.  cf may be NULL for the defaults; it is copied.
 * Returns NULL when out of memory.
 */
struct lk_table *lk_table_new(const struct lk_config *cf);

/*
 * Free the table and everything in it (udata of waiters and unconfirmed
 * grants is dropped without being reported).  t may be NULL.
 */
void	lk_table_destroy(struct lk_table *t);

/* Static English text for a status; never NULL. */
const char *lk_strerror(enum lk_status st);

/*
 * LOCK: grant req's range to the owner (host, svid, oh) on fh, or queue it.
 * Reads every field of req; `now` is stored with a waiter or grant.
 * Returns
 *   LK_GRANTED   the owner now holds the range in the requested mode; the
 *                changes are in rs_added/rs_removed (none when the range was
 *                already held in that mode), rs_token is the covering lock's
 *                token.  A downgrade may grant waiters (rs_granted).  A
 *                re-sent request matching an unconfirmed grant confirms it
 *                (its udata appears in rs_dropped); req's udata stays the
 *                caller's.  (If such a re-sent request is BLOCKED because
 *                the owner changed the range since, the new waiter
 *                replaces the unconfirmed grant, whose udata is dropped.)
 *   LK_BLOCKED   queued (req->rq_block only); the table now owns rq_udata.
 *                A re-sent request matching a queued waiter (same owner,
 *                file, range, mode) is not queued twice: its udata replaces
 *                the waiter's, whose old udata is in rs_dropped.
 *   LK_DENIED    conflict and !rq_block; rs_holder says with what.
 *   LK_DEADLOCK  conflict, rq_block, and waiting would deadlock.
 *   LK_NOLOCKS   a limit would be exceeded.
 *   LK_NOMEM, LK_RANGE, LK_INVAL (bad lengths).
 * On everything but LK_BLOCKED the caller keeps rq_udata.
 */
enum lk_status lk_lock(struct lk_table *t, const struct lk_lockreq *req,
	    uint64_t now, const struct lk_result **resp);

/*
 * TEST: would a non-blocking lk_lock() of req be granted?  Changes nothing.
 * Returns LK_GRANTED, or LK_DENIED with one conflicting holder in
 * rs_holder (the first in file order), or LK_RANGE / LK_INVAL.
 */
enum lk_status lk_test(struct lk_table *t, const struct lk_lockreq *req,
	    const struct lk_result **resp);

/*
 * UNLOCK the range for the owner (rq_excl, rq_block, rq_udata ignored).
 * Unlocking what is not held succeeds.  Ends the owner's unconfirmed grants
 * on the file that overlap the range.  May grant waiters.
 * Returns LK_OK, LK_NOLOCKS (the split would exceed a limit), LK_NOMEM,
 * LK_RANGE, LK_INVAL.
 */
enum lk_status lk_unlock(struct lk_table *t, const struct lk_lockreq *req,
	    uint64_t now, const struct lk_result **resp);

/*
 * UNLOCK as NLM means it: lk_unlock(), and also remove the owner's queued
 * requests on the file that overlap the range (their udata in rs_dropped).
 * A client unlocking a range has given up waiting for any part of it; left
 * queued, such a request would later be granted to nobody.  Returns as
 * lk_unlock(); on failure nothing changed.
 */
enum lk_status lk_unlock_cancel(struct lk_table *t,
	    const struct lk_lockreq *req, uint64_t now,
	    const struct lk_result **resp);

/*
 * CANCEL a blocked request: the owner's waiter on the file with the same
 * range and mode is removed (its udata in rs_dropped) and LK_OK returned.
 * Failing that, an unconfirmed grant with the same range and mode is ended
 * and its range unlocked for the owner (LK_OK).  Otherwise LK_NOTFOUND.
 * May grant waiters.  Also LK_NOLOCKS/LK_NOMEM (as unlock), LK_RANGE,
 * LK_INVAL.
 */
enum lk_status lk_cancel(struct lk_table *t, const struct lk_lockreq *req,
	    uint64_t now, const struct lk_result **resp);

/*
 * Confirm an unconfirmed grant (the client acknowledged the GRANTED
 * callback): the grant matching owner, file, range and mode is forgotten
 * and its udata appears in rs_dropped.  The lock stays.  Returns LK_OK,
 * LK_NOTFOUND, LK_RANGE, LK_INVAL.
 */
enum lk_status lk_grant_confirm(struct lk_table *t,
	    const struct lk_lockreq *req, const struct lk_result **resp);

/*
 * SHARE: reserve (access, deny) on the file for the share owner (host, oh).
 * Conflicts with another owner's reservation when
 * (new.access & old.deny) || (new.deny & old.access).  The owner's previous
 * reservation on the file, if any, is replaced.  Returns LK_OK, LK_DENIED
 * (rs_holder is the conflicting share), LK_NOLOCKS, LK_NOMEM, LK_INVAL.
 */
enum lk_status lk_share(struct lk_table *t, const struct lk_sharereq *req,
	    const struct lk_result **resp);

/*
 * UNSHARE: drop the owner's reservation on the file (sq_access/sq_deny
 * ignored).  Dropping none succeeds.  Returns LK_OK, LK_INVAL.
 */
enum lk_status lk_unshare(struct lk_table *t, const struct lk_sharereq *req,
	    const struct lk_result **resp);

/*
 * Release everything host holds: locks, shares, waiters, unconfirmed
 * grants (NLM FREE_ALL, SM_NOTIFY, admin).  Reports the removed records,
 * the dropped udata and the waiters of other hosts this granted.
 * Returns LK_OK (also when the host is unknown).
 */
enum lk_status lk_host_release(struct lk_table *t, uint64_t host,
	    uint64_t now, const struct lk_result **resp);

/*
 * Release every lock, share, waiter and unconfirmed grant on one file
 * (admin).  Returns LK_OK (also for an unknown file) or LK_INVAL.
 */
enum lk_status lk_file_release(struct lk_table *t, const void *fh,
	    size_t fhlen, uint64_t now, const struct lk_result **resp);

/*
 * Add stored records to the table (startup).  Records keep their tokens
 * and are not merged; the token counter moves past the largest token.
 * Fails with LK_INVAL (bad lengths or kind, or a record overlapping another
 * lock of its owner, or conflicting with another owner's lock or share) or
 * LK_NOMEM, and then stores the index of the bad record in *badp (when not
 * NULL); records before it stay loaded.  Limits are not applied.
 */
enum lk_status lk_table_load(struct lk_table *t, const struct lk_record *recs,
	    size_t n, size_t *badp);

/* Gauges and counters, for the status dump and metrics. */
struct lk_counts {
	size_t		 ct_files;
	size_t		 ct_hosts;
	size_t		 ct_owners;	/* lock owners and share owners */
	size_t		 ct_locks;
	size_t		 ct_shares;
	size_t		 ct_waiters;
	size_t		 ct_pending;	/* unconfirmed grants */
	uint64_t	 ct_last_token;	/* last fencing token issued */
	uint64_t	 ct_granted;	/* LOCKs granted at once (cumulative) */
	uint64_t	 ct_denied;
	uint64_t	 ct_blocked;
	uint64_t	 ct_deadlocks;
	uint64_t	 ct_waiter_grants;
};

void	lk_table_counts(const struct lk_table *t, struct lk_counts *ct);

/*
 * ENUMERATION.  Callbacks get borrowed pointers valid during the callback;
 * a non-zero return stops the walk and is returned.  The table must not be
 * changed from a callback.  Order: unspecified for files, hosts and owners;
 * locks in (file, start) order; waiters in arrival order per file.
 */
struct lk_file_info {
	const void	*fi_fh;
	size_t		 fi_fhlen;
	size_t		 fi_locks;
	size_t		 fi_waiters;
	size_t		 fi_shares;
};

struct lk_host_info {
	uint64_t	 hi_host;
	size_t		 hi_owners;
	size_t		 hi_locks;
	size_t		 hi_waiters;
	size_t		 hi_shares;
	size_t		 hi_pending;
};

struct lk_owner_info {
	uint64_t	 oi_host;
	const void	*oi_oh;
	size_t		 oi_ohlen;
	int32_t		 oi_svid;	/* 0 for share owners */
	bool		 oi_share;	/* a share owner (host, oh) */
	size_t		 oi_locks;
	size_t		 oi_waiters;	/* queued + unconfirmed grants */
	size_t		 oi_shares;
};

/* A queued request, or an unconfirmed grant (wi_granted). */
struct lk_waiter_info {
	struct lk_record wi_req;	/* rc_token 0 */
	void		*wi_udata;
	uint64_t	 wi_since;	/* `now` when queued / granted */
	bool		 wi_granted;
};

typedef int	(*lk_file_cb)(const struct lk_file_info *, void *);
typedef int	(*lk_host_cb)(const struct lk_host_info *, void *);
typedef int	(*lk_owner_cb)(const struct lk_owner_info *, void *);
typedef int	(*lk_record_cb)(const struct lk_record *, void *);
typedef int	(*lk_waiter_cb)(const struct lk_waiter_info *, void *);

int	lk_file_foreach(const struct lk_table *t, lk_file_cb cb, void *arg);
int	lk_host_foreach(const struct lk_table *t, lk_host_cb cb, void *arg);
int	lk_owner_foreach(const struct lk_table *t, lk_owner_cb cb, void *arg);
/* Every lock record (rc_kind LK_REC_LOCK). */
int	lk_lock_foreach(const struct lk_table *t, lk_record_cb cb, void *arg);
/* Every share record (rc_kind LK_REC_SHARE). */
int	lk_share_foreach(const struct lk_table *t, lk_record_cb cb, void *arg);
/* Every waiter and unconfirmed grant. */
int	lk_waiter_foreach(const struct lk_table *t, lk_waiter_cb cb, void *arg);

/*
 * Verify every internal invariant (tree order and balance data, counts,
 * no overlapping locks of one owner, no conflicting locks, no grantable
 * waiter).  O(everything); for tests.  Returns LK_OK or LK_INVAL.
 */
enum lk_status lk_table_check(const struct lk_table *t);

#endif /* NLMD_LOCKCORE_LOCKCORE_H */
