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
 *     exclusive) -- unless the requester holds a lock anywhere in the older
 *     request's range that the older request conflicts with: new requests
 *     never barge ahead of older waiters, but one waiting for the
 *     requester's own lock could not go first anyway, and holding the
 *     requester back behind it would leave both waiting for ever (a reader
 *     upgrading while a writer waits for it is granted, and so is its
 *     exclusive request beside its read lock inside the writer's range, as
 *     a local fcntl() grants them); so keeping or downgrading what one
 *     holds never waits either.  A lock the older request does not
 *     conflict with (both shared) does not count.  When an owner gains
 *     such a lock (a waiter's grant, a reclaim), its queued requests that
 *     were held behind that older request are granted in the same call if
 *     nothing else holds them (GRANT BUDGET permitting).  TEST and
 *     non-blocking LOCK answer the same way (rs_holder_waiting is then set).
 *     Waiters are granted in arrival order -- except that of two
 *     overlapping waiters of one owner on a file either may be granted
 *     first (a pass looks where the change was first), and its grant then
 *     holds the other back until it is answered.
 *   - A blocking request whose queueing would close a cycle in the wait-for
 *     graph of owners (across files and hosts) gets LK_DEADLOCK instead.
 *     The graph is computed from the live waiters on every check, so an
 *     edge disappears the moment its waiter is granted or removed.  An
 *     owner that downgrades or gives back a lock while it waits loses the
 *     exemption above from the older requests that waited for it, so its
 *     queued requests that overlap those are checked again before the
 *     call returns: one that now closes a cycle is
 *     dropped (its udata in rs_dropped; ct_deadlock_drops), as it would
 *     have been refused had it come then; so are requests of other
 *     owners that a reclaim (or an undone grant giving back what its
 *     owner held) made close a cycle, as those go past the queue.  This
 *     can happen in any call that changes what an owner holds or grants
 *     waiters.  (With
 *     LK_POLICY_BARGE a cycle closed by a grant rather than by queueing is
 *     not detected.)  A request held back by an older request that itself
 *     waits behind an older request of the requester's own does not wait
 *     for it (it goes past it once that request of its own is granted);
 *     when that request of its own leaves ungranted (a cancel, an unlock
 *     that ends it, a drop), the owner's requests around it are checked
 *     again the same way.
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
 *                          lk_grant_confirm(), a re-sent LOCK, lk_cancel()
 *                          or lk_grant_undo() (which give the owner back
 *                          what it held in the range before), an
 *                          overlapping unlock, or a release ends it.
 *     rs_dropped           udata pointers whose life in the table ended
 *                          (see UDATA); the caller frees them.
 *     rs_holder            the conflicting lock or share, on LK_DENIED,
 *                          LK_BLOCKED, LK_DEADLOCK and LK_GRACE
 *                          (rc_reclaim set when it is a reclaimable
 *                          record; see GRACE AND RECLAIM).
 *
 * UDATA
 *   lk_lock() takes ownership of rq_udata if and only if it returns
 *   LK_BLOCKED.  The table never dereferences it.  It is handed back in
 *   rs_granted when the waiter is granted (the table still holds it while the
 *   grant is unconfirmed) and exactly once in rs_dropped when its life ends:
 *   the waiter is cancelled or released, a re-sent request replaced it (the
 *   newest udata is kept), or its unconfirmed grant was confirmed, undone
 *   (cancelled, refused) or released.  lk_table_destroy() drops the rest silently.
 *
 * FENCING TOKENS
 *   A strictly increasing 64-bit counter, seeded by cf_token_seed (the last
 *   token ever issued; the first new token is seed + 1).  Every lock record
 *   created by a grant (new lock, merge that grows one, mode change) gets a
 *   new token; the pieces left by a split keep the token they had.  A LOCK
 *   already covered by the owner's lock of the same mode changes nothing and
 *   reports that lock's token.
 *
 * GRACE AND RECLAIM
 *   Records loaded by lk_table_load() with rc_reclaim set are *reclaimable*:
 *   what an owner held before the server restarted.  They are kept apart
 *   from the live locks and shares (they never merge with them and count
 *   toward no limit), and loading any puts the table *in grace* until
 *   lk_grace_end().  While in grace:
 *     - LOCK with rq_reclaim is never queued (rq_block does not matter).
 *       It is LK_DENIED (rs_holder) when it conflicts with a live lock of
 *       another owner; otherwise, by cf_reclaim_check:
 *         LK_RECLAIM_STRICT    granted only when the owner's reclaimable
 *                              locks on the file cover the whole range in
 *                              a mode at least as strong (an exclusive
 *                              record covers a shared reclaim); the owner's
 *                              live locks count as cover too, so a re-sent
 *                              reclaim is granted again.  Otherwise
 *                              LK_DENIED, rs_holder the conflicting
 *                              reclaimable record of another owner, or all
 *                              zero (rc_kind 0) when there is none;
 *         LK_RECLAIM_CONFLICT  LK_DENIED when it conflicts with a
 *                              reclaimable lock of another *host*
 *                              (rs_holder); otherwise granted (the default;
 *                              values not listed here act as it);
 *         LK_RECLAIM_OFF       granted (only live locks are checked).
 *       A granted reclaim removes the owner's reclaimable locks where they
 *       overlap the range (the parts outside stay reclaimable, with their
 *       token and epoch) and takes the range as an ordinary LOCK would
 *       (merge, new token, the current epoch; rs_token), ignoring the
 *       limits and the queue.  A queued request of the owner for exactly
 *       that range and mode is thereby answered and removed (its udata in
 *       rs_dropped).  (Going past the queue, a reclaim not on record can
 *       close a wait-for cycle that is then not detected, as with
 *       LK_POLICY_BARGE.)
 *     - LOCK without rq_reclaim that conflicts with a reclaimable lock of
 *       another owner is LK_GRACE (rs_holder: that record) and never
 *       queued.  One that overlaps only reclaimable locks of its own owner
 *       (a client asking again for a lock granted before the restart whose
 *       answer it never heard) is decided as outside grace but never
 *       queued: with a live lock or an older waiter of another owner in
 *       the way, LK_DENIED, or LK_GRACE when blocking (rs_holder: what is
 *       in the way); otherwise granted, within the limits, taking over the
 *       owner's reclaimable locks where they overlap as a reclaim does.
 *       Any other is handled as outside grace.  (Only a re-sent blocking
 *       request still queued is answered LK_BLOCKED before these checks.)
 *       So no waiter ever conflicts with a reclaimable record, and an
 *       owner's live and reclaimable locks never overlap.
 *     - TEST also reports a conflicting reclaimable lock of another owner as
 *       the holder (after live locks and queued waiters).  Like the rest of
 *       TEST it looks at other owners only: the requester's own records do
 *       not make it LK_DENIED.
 *     - UNLOCK (lk_unlock, lk_unlock_cancel, and lk_cancel ending a grant)
 *       also removes the owner's reclaimable locks in the range.
 *     - SHARE with sq_reclaim: LK_DENIED when it conflicts with a live share
 *       of another owner; then STRICT grants it only when the owner's
 *       reclaimable share on the file (or, re-sent, its live one) has every
 *       access and deny bit asked for, CONFLICT refuses it when it
 *       conflicts with a reclaimable share of another host, OFF grants it;
 *       rs_holder as for LOCK.  Share reclaims are not limited either.
 *       SHARE without sq_reclaim is LK_GRACE when it conflicts with a
 *       reclaimable share of another owner (checked before live shares, as
 *       for LOCK).  A granted SHARE (either kind) replaces the owner's
 *       reclaimable share on the file; UNSHARE removes it too.  So an owner
 *       has at most one reservation per file, live or reclaimable.
 *     - lk_host_release() and lk_file_release() remove reclaimable records
 *       as well.
 *     - rq_reclaim means nothing to TEST, UNLOCK, CANCEL or confirm, nor
 *       sq_reclaim to UNSHARE.
 *   A live record may conflict with a reclaimable one only where a reclaim
 *   was granted over it (another owner of the same host under CONFLICT, or
 *   anyone under OFF), or where lk_table_load() loaded both; reclaiming
 *   that record later is then LK_DENIED.
 *   Outside grace a request with rq_reclaim / sq_reclaim is LK_NOGRACE and
 *   changes nothing -- unless its owner holds it already, live (a lock of
 *   its mode covering the range, the same share): then it is granted
 *   (LK_GRANTED, LK_OK), nothing changes, and it counts as a reclaim (a
 *   reclaim re-sent after its reply was lost, when grace ended with it).
 *   Reclaimable records appear in rs_removed (rc_reclaim set) when they
 *   go; a reclaim may report a removed reclaimable record and an added
 *   live record with the same key, so a store must apply removals before
 *   additions (as RESULTS says).  The pieces of a reclaimable lock
 *   cut by a reclaim or an UNLOCK appear in rs_added with rc_reclaim set.
 *   When ct_rlocks and ct_rshares are both 0 every record was reclaimed or
 *   released, and the caller may end grace at once (grace never ends by
 *   itself).  Reclaims are counted in ct_reclaims and ct_reclaims_denied
 *   only (not in ct_granted / ct_denied); LK_NOGRACE is not counted.
 *
 * EPOCHS
 *   Every record carries rc_epoch, the epoch (a number chosen by the caller,
 *   cf_epoch or lk_set_epoch()) it was granted in.  New locks and shares
 *   get the current epoch; pieces left by a split keep theirs, as they keep
 *   their token.  A granted waiter's gr_lock carries the epoch of the lock
 *   covering it; waiter records (lk_waiter_foreach) have epoch 0.
 *   lockcore gives epochs no other meaning.  Epochs are at most
 *   LK_EPOCH_MAX (a lock node keeps 32 bits of it; nlmd's epochs are
 *   bounded far below by the 32-bit NSM state number derived from them):
 *   lk_table_new() refuses a larger cf_epoch, lk_set_epoch() and
 *   lk_table_load() a larger epoch with LK_INVAL.
 *
 * LIMITS
 *   Limits count lock records (after merging), queued waiters and share
 *   reservations, per host and for the whole table, and an owner's blocked
 *   requests (queued, or granted and not yet confirmed: every look-up of
 *   one walks its owner's list of them); 0 means unlimited.  A
 *   request that would exceed one gets LK_NOLOCKS and changes nothing; a
 *   split by UNLOCK counts too, with some room: it may go a sixteenth
 *   over a host's limit, and over max-locks a sixteenth of what that host
 *   holds (each host its own: others' splits cannot use it up).  A request is queued only if the lock
 *   records, the queued requests (of the table, of its host) and the
 *   records it would add if granted now fit the lock limits (one that adds
 *   none, merging its owner's locks, always may), so granting a queued
 *   waiter is not refused by them (the overshoot is bounded: a grant adds
 *   at most two records, when it cuts a lock of the owner's own of the
 *   other mode), and
 *   neither is undoing an unconfirmed grant (lk_grant_undo(), lk_cancel()):
 *   it gives back what the owner held there before, which the grant may
 *   have merged into one record (so an undo may add a few records over a
 *   full table), and a grant the client refused must not stay held.
 *
 * COMPLEXITY
 *   File, host and owner lookup O(1) (hash); a lock, test or unlock is
 *   O(log n + k) in the n locks on the file (interval B+-tree keyed by start)
 *   and the k locks overlapping the request.  Queued waiters are indexed by
 *   range (wqidx.c): the FIFO check, the grant pass after a change and the
 *   deadlock search look at the waiters overlapping what they decide (plus
 *   at most 8 at the head of the queue), each found through the index in
 *   O(log w) of the w waiters on the file when arrival order and range
 *   order agree (see wqidx.c for the worst case); a requester's own
 *   overlapping waiters are looked at too.  In grace, requests on a file
 *   with reclaimable records also query its second tree of them
 *   (O(log r + k)); outside grace that costs one test.  With a grant
 *   budget B (GRANT BUDGET), no call grants more than B waiters, so a
 *   release costs O(B log w) however many it makes grantable.
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
#define LK_EPOCH_MAX	UINT32_MAX	/* EPOCHS */

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
	LK_INVAL,		/* malformed argument or record */
	LK_GRACE,		/* grace: conflicts with a reclaimable record */
	LK_NOGRACE		/* reclaim outside grace: refused */
};

/* How reclaims are checked against the reclaimable records (see GRACE). */
enum lk_reclaim_check {
	LK_RECLAIM_CONFLICT = 0,	/* default */
	LK_RECLAIM_STRICT,
	LK_RECLAIM_OFF
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

#define LK_HASH_KEY_LEN	16

struct lk_config {
	/*
	 * The key of the table's hashes (SipHash-1-3).  Choose it at random
	 * at every start (getrandom): then no client can choose handles that
	 * land in one bucket.  All zero is a valid, fixed key (tests).
	 */
	uint8_t		 cf_hash_key[LK_HASH_KEY_LEN];
	size_t		 cf_max_locks;		/* lock records, all hosts */
	size_t		 cf_max_locks_per_host;
	size_t		 cf_max_waiters;	/* queued requests */
	size_t		 cf_max_waiters_per_host;
	size_t		 cf_max_waiters_per_owner; /* queued and unconfirmed */
	size_t		 cf_max_shares;		/* share reservations */
	size_t		 cf_max_shares_per_host;
	enum lk_policy	 cf_policy;
	uint64_t	 cf_token_seed;		/* last token issued before */
	uint64_t	 cf_epoch;		/* epoch of new records,
						   <= LK_EPOCH_MAX */
	enum lk_reclaim_check cf_reclaim_check;
	size_t		 cf_grant_budget;	/* waiters one call grants at
						   most; 0: all (GRANT BUDGET) */
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
	uint64_t	 rc_epoch;	/* epoch it was granted in */
	int32_t		 rc_svid;	/* locks: owner's svid */
	uint8_t		 rc_kind;	/* LK_REC_LOCK or LK_REC_SHARE */
	uint8_t		 rc_reclaim;	/* 1: reclaimable (see GRACE) */
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
	size_t			 rs_ncycles;	/* of those: queued requests that
						   came to close a deadlock
						   cycle (see the rules) */
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
	bool		 rq_reclaim;	/* lk_lock: a reclaim (see GRACE) */
	void		*rq_udata;	/* see UDATA */
	uint64_t	 rq_before;	/* lk_release_range: not 0, a token
					   (see lk_release_range) */
};

struct lk_sharereq {
	uint64_t	 sq_host;
	const void	*sq_oh;
	size_t		 sq_ohlen;
	const void	*sq_fh;
	size_t		 sq_fhlen;
	uint8_t		 sq_access;	/* LK_SHARE_* mask, lk_share() only */
	uint8_t		 sq_deny;	/* LK_SHARE_* mask, lk_share() only */
	bool		 sq_reclaim;	/* lk_share(): a reclaim (see GRACE) */
	uint64_t	 sq_before;	/* lk_unshare: not 0, a share number
					   (see lk_unshare) */
};

struct lk_table;

/*
 * Fill *cf with the defaults: no limits, FIFO, token seed 0, epoch 0,
 * LK_RECLAIM_CONFLICT, libc.
 */
void	lk_config_init(struct lk_config *cf);

/*
 * SipHash-1-3 of `data' under `key', with a 64-bit `tweak' hashed first
 * (a domain or a number that goes with the bytes).  For the service's own
 * tables of client-chosen keys (hosts by address and name).
 */
uint64_t lk_siphash(const uint8_t key[LK_HASH_KEY_LEN], uint64_t tweak,
	    const void *data, size_t len);

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
 *                A downgrade may also drop queued requests of the owner
 *                that it made close a cycle (see the rules above).
 *   LK_BLOCKED   queued (req->rq_block only); the table now owns rq_udata.
 *                A re-sent blocking request matching a queued waiter (same
 *                owner, file, range, mode) is not queued twice: its udata
 *                replaces the waiter's, whose old udata is in rs_dropped.
 *                A non-blocking one is decided as any other request and
 *                leaves the waiter and its udata alone.
 *   LK_DENIED    conflict and !rq_block; rs_holder says with what.
 *   LK_DEADLOCK  conflict, rq_block, and waiting would deadlock (the
 *                search is bounded: past some 65,536 queued waiters of
 *                the request's own range, or as many waiters and locks
 *                looked at beyond it, with no cycle found by then, it
 *                gives up and the request queues; counted in
 *                ct_deadlock_giveups).
 *   LK_NOLOCKS   a limit would be exceeded.
 *   LK_GRACE     in grace, the request meets another owner's reclaimable
 *                record, or it would have to wait while overlapping its
 *                owner's own (see GRACE AND RECLAIM; rs_holder says what);
 *                nothing changed.
 *   LK_NOGRACE   rq_reclaim outside grace, for what its owner does not
 *                hold already; nothing changed.
 *   LK_NOMEM, LK_RANGE, LK_INVAL (bad lengths).
 * A reclaim (rq_reclaim) is never queued: LK_GRANTED or LK_DENIED as GRACE
 * AND RECLAIM says.
 * On everything but LK_BLOCKED the caller keeps rq_udata.
 */
enum lk_status lk_lock(struct lk_table *t, const struct lk_lockreq *req,
	    uint64_t now, const struct lk_result **resp);

/*
 * TEST: would a non-blocking lk_lock() of req be granted?  Changes nothing.
 * Returns LK_GRANTED, or LK_DENIED with one conflicting holder in
 * rs_holder (a live lock if any, else a queued waiter, else, in grace, a
 * reclaimable lock; the first in file order), or LK_RANGE / LK_INVAL.
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
 * requests on the file that lie inside the range (their udata in
 * rs_dropped): a client that unlocks all a request asked for (a process
 * closing the file or exiting unlocks the whole file) has given up that
 * request; left queued, it would later be granted to nobody.  One that
 * only overlaps the range stays: the client gives one owner to all the
 * threads of a process, and a thread unlocking a few bytes says nothing
 * of another thread's F_SETLKW on a larger range (Linux lockd cancels only
 * the request for exactly the range; before, nlmd cancelled every
 * overlapping one, and that thread waited for its client's next poll).
 * Returns as lk_unlock(); on failure nothing changed.
 */
enum lk_status lk_unlock_cancel(struct lk_table *t,
	    const struct lk_lockreq *req, uint64_t now,
	    const struct lk_result **resp);

/*
 * An operator's release of a lock record (nlmctl release): as
 * lk_unlock_cancel(), but every queued request of the owner on the file
 * that overlaps the range goes: the operator releases what a client gone
 * for good held, and its requests reaching past it would be granted to
 * nobody.  With rq_before (not 0: ct_last_token when the operator asked),
 * nothing is released if a live lock of the owner overlapping the range
 * carries a later token: granted since -- re-taken, merged, its mode
 * changed, a queued request granted -- it is a live client's, not what
 * the operator saw, and it stays with the owner's requests.
 */
enum lk_status lk_release_range(struct lk_table *t,
	    const struct lk_lockreq *req, uint64_t now,
	    const struct lk_result **resp);

/*
 * CANCEL a blocked request: the owner's waiter on the file with the same
 * range and mode is removed (its udata in rs_dropped) and LK_OK returned.
 * Failing that, an unconfirmed grant with the same range and mode is
 * undone as by lk_grant_undo() (LK_OK).  Otherwise LK_NOTFOUND.  May grant
 * waiters.  Also LK_NOLOCKS/LK_NOMEM (as unlock), LK_RANGE, LK_INVAL; on
 * failure nothing changed.
 */
enum lk_status lk_cancel(struct lk_table *t, const struct lk_lockreq *req,
	    uint64_t now, const struct lk_result **resp);

/*
 * Undo an unconfirmed grant (the client refused the GRANTED callback, or
 * never acknowledged it): the grant matching owner, file, range and mode
 * ends (its udata in rs_dropped), and the owner's locks in the range become
 * what they were when the grant was made, as changed since by the owner's
 * own later LOCKs there (a LOCK, a reclaim): what it held before asking
 * stays held, in the mode it had --
 * except an exclusive part that a lock of another owner now overlaps,
 * which comes back shared (possible only when the grant was shared and
 * turned it shared; ct_undo_shared counts them).  Those locks are taken
 * again as by LOCK: merged, new tokens.  An UNLOCK overlapping the range
 * ends the grant itself (see lk_unlock()), so nothing unlocked comes
 * back.  May grant waiters.  Not refused by the lock limits (LIMITS).
 * Returns LK_OK, LK_NOTFOUND, LK_NOLOCKS (tokens exhausted), LK_NOMEM,
 * LK_RANGE, LK_INVAL; on failure nothing changed.
 */
enum lk_status lk_grant_undo(struct lk_table *t,
	    const struct lk_lockreq *req, uint64_t now,
	    const struct lk_result **resp);

/*
 * Confirm an unconfirmed grant (the client acknowledged the GRANTED
 * callback): the grant matching owner, file, range and mode is forgotten
 * and its udata appears in rs_dropped.  The lock stays.  An owner is
 * never granted a waiter that overlaps one of its unconfirmed grants
 * (undoing one must not have to take back another), so the owner's
 * waiters that waited for this answer may be granted now (rs_granted).
 * Returns LK_OK, LK_NOTFOUND, LK_RANGE, LK_INVAL.
 */
enum lk_status lk_grant_confirm(struct lk_table *t,
	    const struct lk_lockreq *req, uint64_t now,
	    const struct lk_result **resp);

/*
 * SHARE: reserve (access, deny) on the file for the share owner (host, oh).
 * Conflicts with another owner's reservation when
 * (new.access & old.deny) || (new.deny & old.access).  The owner's previous
 * reservation on the file, if any, is replaced.  Returns LK_OK, LK_DENIED
 * (rs_holder is the conflicting share), LK_GRACE, LK_NOGRACE (see GRACE
 * AND RECLAIM), LK_NOLOCKS, LK_NOMEM, LK_INVAL.
 */
enum lk_status lk_share(struct lk_table *t, const struct lk_sharereq *req,
	    const struct lk_result **resp);

/*
 * UNSHARE: drop the owner's reservation on the file (sq_access/sq_deny
 * ignored).  Dropping none succeeds.  With sq_before (not 0: ct_last_share
 * when an operator asked), a reservation made later (a SHARE replacing one
 * makes a new one) is kept.  Returns LK_OK, LK_INVAL.
 */
enum lk_status lk_unshare(struct lk_table *t, const struct lk_sharereq *req,
	    const struct lk_result **resp);

/*
 * Release everything host holds: locks, shares, waiters, unconfirmed
 * grants (NLM FREE_ALL, SM_NOTIFY, admin).  Reports the removed records,
 * the dropped udata and the waiters of other hosts this granted.
 * Returns LK_OK (also when the host is unknown) or LK_NOMEM (nothing
 * released).
 */
enum lk_status lk_host_release(struct lk_table *t, uint64_t host,
	    uint64_t now, const struct lk_result **resp);

/*
 * Release a host in pieces (so that one with a million locks does not
 * hold everyone else up): every waiter and unconfirmed grant of the host
 * at the first call (no waiter of it is granted by what a piece frees),
 * and up to `max' of its locks, shares and reclaimable records a call.
 * *leftp (when not NULL) is how many of those remain; the caller calls
 * again until 0, and must meanwhile add nothing to the host (no LOCK or
 * SHARE of it), or that would go with the next piece.  Reports as
 * lk_host_release().  Returns LK_OK (also when the host is unknown:
 * *leftp 0) or LK_NOMEM (nothing released, *leftp 0).
 */
enum lk_status lk_host_release_some(struct lk_table *t, uint64_t host,
	    uint64_t now, size_t max, size_t *leftp,
	    const struct lk_result **resp);

/*
 * Release every lock, share, waiter and unconfirmed grant on one file
 * (admin).  Returns LK_OK (also for an unknown file) or LK_INVAL.
 */
enum lk_status lk_file_release(struct lk_table *t, const void *fh,
	    size_t fhlen, uint64_t now, const struct lk_result **resp);

/*
 * Add stored records to the table (startup).  Records keep their tokens
 * and epochs and are not merged; the token counter moves past the largest
 * token.  Records with rc_reclaim set are loaded as reclaimable and put the
 * table in grace (see GRACE AND RECLAIM); they are checked against each
 * other as live records are (one owner's never overlap; different owners'
 * never conflict), and not against other owners' live records.  Against
 * its own owner's live records a reclaimable record is refused where the
 * two could share a store key: a reclaimable lock overlapping a live lock
 * of its owner, a reclaimable share where its owner has a live share on
 * the file (and the other way round).  A reclaimable lock is refused too
 * where it meets a queued waiter (one of its owner overlapping it, or one
 * of another owner conflicting with it).
 * Fails with LK_INVAL (bad lengths, kind or rc_reclaim > 1, or a record
 * overlapping another lock of its owner, or conflicting with another
 * owner's lock or share, or refused as above) or LK_NOMEM, and then stores
 * the index of the bad record in *badp (when not NULL); records before it
 * stay loaded (and grace, if one of them was reclaimable).  Limits are not
 * applied.
 */
enum lk_status lk_table_load(struct lk_table *t, const struct lk_record *recs,
	    size_t n, size_t *badp);

/*
 * End grace: every reclaimable record is removed (rs_removed, rc_reclaim
 * set) and requests are no longer checked against them; reclaims are
 * LK_NOGRACE from now on.  Waiters that can now be granted are (rs_granted;
 * by the GRACE rules no waiter waits for a reclaimable record, so this
 * grants none unless a rule changes).  Returns LK_OK (also when not in
 * grace) or LK_NOMEM (nothing changed).
 */
enum lk_status lk_grace_end(struct lk_table *t, uint64_t now,
	    const struct lk_result **resp);

/*
 * End grace in steps of at most `max' records, so that a caller storing
 * each change set is never held up by a huge one: the first call closes
 * grace to reclaims (LK_NOGRACE from then on), and each call removes up
 * to `max' reclaimable records (rs_removed), which until then still hold
 * back conflicting requests (LK_GRACE).  When the last one is gone the
 * table is out of grace (lk_in_grace() false).  lk_grace_end() is this
 * with no limit.  Returns LK_OK (also when not in grace) or LK_NOMEM
 * (nothing changed).
 */
enum lk_status lk_grace_drop(struct lk_table *t, size_t max, uint64_t now,
	    const struct lk_result **resp);

/* Is the table in grace (reclaimable records were loaded, not ended)? */
bool	lk_in_grace(const struct lk_table *t);

/*
 * GRANT BUDGET
 *   One release can make a great many waiters grantable at once (100,000
 *   shared requests behind one exclusive lock of their bytes).  With
 *   cf_grant_budget B > 0, no call grants more than B waiters: the others
 *   stay queued where they are, ahead of every newer request (a newer one
 *   that conflicts with them is refused or queued behind them), the file
 *   is remembered, and lk_grants_pending() is true.  lk_grant_more()
 *   grants up to B more per call, in the order a single pass would have
 *   (except between two overlapping waiters of one owner: either may go
 *   first, and it holds the other back until its grant is answered),
 *   until nothing is pending; the caller runs it once per turn, so that
 *   granting is spread over turns instead of stalling one.  Files are
 *   served in the order they came to have grants pending, and one whose
 *   turn spends the budget goes back behind the others: every file gets
 *   its turn however many others keep the budget busy.  The INVARIANT
 *   of wait.c (no queued waiter grantable) holds on every file but those
 *   with grants pending.
 */
bool	lk_grants_pending(const struct lk_table *t);

/*
 * Grant up to cf_grant_budget more of the pending waiters (rs_granted,
 * rs_added, rs_removed as any release).  LK_OK, also with nothing pending;
 * LK_NOMEM when a pass ran out of memory: what it granted is in the
 * result all the same (apply it), and the waiters it could not grant stay
 * pending, for a later call.  (Any call's grant pass that runs out of
 * memory leaves its file pending so: lk_grants_pending() is true.)
 */
enum lk_status lk_grant_more(struct lk_table *t, uint64_t now,
	    const struct lk_result **resp);

/*
 * Change cf_grant_budget (0: no limit) for the calls from now on, e.g. to
 * what the other work of a turn leaves room for.
 */
void	lk_set_grant_budget(struct lk_table *t, size_t budget);

/*
 * The epoch given to records created from now on.  LK_INVAL (nothing
 * changed): epoch > LK_EPOCH_MAX.
 */
enum lk_status lk_set_epoch(struct lk_table *t, uint64_t epoch);

/* Gauges and counters, for the status dump and metrics. */
struct lk_counts {
	size_t		 ct_files;
	size_t		 ct_hosts;
	size_t		 ct_owners;	/* lock owners and share owners */
	size_t		 ct_locks;
	size_t		 ct_shares;
	size_t		 ct_waiters;
	size_t		 ct_pending;	/* unconfirmed grants */
	size_t		 ct_rlocks;	/* reclaimable locks */
	size_t		 ct_rshares;	/* reclaimable shares */
	bool		 ct_grace;	/* lk_in_grace() */
	uint64_t	 ct_last_token;	/* last fencing token issued */
	uint64_t	 ct_last_share;	/* last share number given (every new
					   reservation gets a larger one) */
	size_t		 ct_locks_peak;	/* most locks (held + reclaimable) at
					   once since lk_table_peak_reset() */
	uint64_t	 ct_granted;	/* LOCKs granted at once (cumulative) */
	uint64_t	 ct_denied;
	uint64_t	 ct_blocked;
	uint64_t	 ct_deadlocks;
	uint64_t	 ct_waiter_grants;
	uint64_t	 ct_reclaims;	/* reclaims granted (locks, shares) */
	uint64_t	 ct_reclaims_denied; /* reclaims refused in grace */
	uint64_t	 ct_grace_denied; /* LK_GRACE answers */
	uint64_t	 ct_grace_dropped; /* records dropped by lk_grace_end */
	uint64_t	 ct_queue_visits; /* queued waiters (and nodes of their
					   index) looked at by FIFO checks,
					   grant passes, deadlock searches */
	uint64_t	 ct_deadlock_giveups; /* deadlock searches given up at
					   their bound (the request queued),
					   or re-checks out of memory */
	uint64_t	 ct_deadlock_drops; /* queued requests dropped: their
					   owner's hold weakened and they
					   then closed a cycle (deadlock.c) */
	uint64_t	 ct_grants_undone; /* unconfirmed grants undone
					   (lk_grant_undo, lk_cancel) */
	uint64_t	 ct_undo_shared; /* exclusive locks an undo could give
					   back only shared */
};

void	lk_table_counts(const struct lk_table *t, struct lk_counts *ct);
/* Start ct_locks_peak again from the locks held now. */
void	lk_table_peak_reset(struct lk_table *t);
/*
 * Forget the last call's result (as the next call would) and free the
 * result buffers a large call grew: for an idle moment after a mass
 * release, before malloc_trim().  Pointers into the last result die.
 */
void	lk_table_trim(struct lk_table *t);

/*
 * ENUMERATION.  Callbacks get borrowed pointers valid during the callback;
 * a non-zero return stops the walk and is returned.  The table must not be
 * changed from a callback.  Order: unspecified for files, hosts and owners;
 * locks in (file, start) order; waiters in arrival order per file.
 */
struct lk_file_info {
	const void	*fi_fh;
	size_t		 fi_fhlen;
	size_t		 fi_locks;	/* live ones (not reclaimable) */
	size_t		 fi_waiters;
	size_t		 fi_shares;	/* live */
};

struct lk_host_info {
	uint64_t	 hi_host;
	size_t		 hi_owners;
	size_t		 hi_locks;
	size_t		 hi_waiters;
	size_t		 hi_shares;
	size_t		 hi_pending;
	size_t		 hi_rlocks;	/* reclaimable */
	size_t		 hi_rshares;
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
	size_t		 oi_rlocks;	/* reclaimable */
	size_t		 oi_rshares;
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
/* One host's counts, O(1); false (all zero) when it has nothing. */
bool	lk_host_info(const struct lk_table *t, uint64_t host,
	    struct lk_host_info *hi);
int	lk_owner_foreach(const struct lk_table *t, lk_owner_cb cb, void *arg);
/* Every lock record (rc_kind LK_REC_LOCK), reclaimable ones included. */
int	lk_lock_foreach(const struct lk_table *t, lk_record_cb cb, void *arg);
/*
 * The lock records of one lock owner (host, svid, oh): its live locks,
 * then its reclaimable ones; O(what it holds), not a walk of the table.
 */
int	lk_owner_locks(const struct lk_table *t, uint64_t host, int32_t svid,
	    const void *oh, size_t ohlen, lk_record_cb cb, void *arg);
/* Every share record (rc_kind LK_REC_SHARE), reclaimable ones included. */
int	lk_share_foreach(const struct lk_table *t, lk_record_cb cb, void *arg);
/* Every waiter and unconfirmed grant. */
int	lk_waiter_foreach(const struct lk_table *t, lk_waiter_cb cb, void *arg);

/*
 * RESUMABLE WALKS, for dumps served in pieces between other work.
 * lk_file_scan() reports the records of the table -- file by file: its
 * live locks in start order, its reclaimable locks in start order, its
 * shares, its waiters -- through the callbacks of `cbs' (any may be NULL;
 * a non-zero return is ignored), until about `budget' records were
 * reported, and says whether there is more; `sc' (zeroed before the first
 * call) remembers where it stopped, even inside a file's locks.  The
 * table may change between calls: a record present for the whole walk is
 * reported exactly once, one added or removed meanwhile at most once (a
 * record that changes kind -- a queued request granted, a reclaimable
 * lock or share reclaimed -- is one removed and another added: it may
 * come twice, as each, or not at all).  A callback may be NULL: that
 * kind is not walked.  A call looks at 16 buckets of the file hash per
 * record of its budget at most: a table whose files are gone reports
 * nothing for a while; resuming in a file's shares or unconfirmed grants,
 * or after a queued request that has left, it walks that list from its
 * head to where it stopped (pointer steps, no callback).
 * (Buckets are visited in reverse-bit order, as Redis's SCAN does, which
 * survives the hash growing; inside a bucket files go in the order of
 * their hashes with the bits reversed, then of their handles, which goes
 * on across a bucket's split when the hash grows;
 * inside a file locks go in key order and the walk resumes after the last
 * key reported; shares and waiters resume after the last one reported,
 * in their lists' order, see walk.c.)
 * *reported (may be NULL) gets the number of records this call reported.
 *
 * lk_file_records() reports the records of one file the same way;
 * returns LK_NOTFOUND when no file has that handle.
 * lk_file_records_scan() does so in pieces, as lk_file_scan() does the
 * table: about `budget' records a call, `sc' (zeroed before the first
 * call) remembering where it stopped; false once the file is done, or
 * gone (no file has that handle any more).
 */
struct lk_scan_cbs {
	lk_record_cb	 sc_lock;
	lk_record_cb	 sc_share;
	lk_waiter_cb	 sc_waiter;
	void		*sc_arg;
};

struct lk_scan {
	uint64_t	 sc_cursor;	/* bucket, reverse-bit order */
	bool		 sc_done;
	bool		 sc_inbucket;	/* resuming inside a bucket: */
	uint64_t	 sc_bmask;	/* the hash mask then */
	uint64_t	 sc_bbits;	/* the bucket's bits under it */
	unsigned char	 sc_fh[LK_FH_MAX];	/* the file reached */
	size_t		 sc_fhlen;
	uint64_t	 sc_fhash;	/* its hash */
	int		 sc_phase;	/* in it: locks, reclaimable locks,
					   shares, reclaimable shares,
					   queued waiters, unconfirmed
					   grants, done (walk.c) */
	bool		 sc_haskey;	/* the phase's last record: */
	uint64_t	 sc_kstart;	/* lock, waiter: its start */
	uintptr_t	 sc_kaddr;	/* lock: its address */
	uint64_t	 sc_kseq;	/* share, waiter, grant: its number */
	bool		 sc_kexcl;	/* waiter: exclusive */
};

bool		lk_file_scan(const struct lk_table *t, struct lk_scan *sc,
		    size_t budget, const struct lk_scan_cbs *cbs,
		    size_t *reported);
enum lk_status	lk_file_records(const struct lk_table *t, const void *fh,
		    size_t fhlen, const struct lk_scan_cbs *cbs);
bool		lk_file_records_scan(const struct lk_table *t, const void *fh,
		    size_t fhlen, struct lk_scan *sc, size_t budget,
		    const struct lk_scan_cbs *cbs, size_t *reported);

/*
 * Verify every internal invariant (tree order and balance data, counts,
 * no overlapping locks of one owner, no conflicting locks, no grantable
 * waiter; among reclaimable records the same, no live lock of an owner
 * overlapping a reclaimable lock of that owner, at most one reservation,
 * live or reclaimable, per share owner and file, no queued waiter meeting
 * a reclaimable lock, none at all outside grace).  O(everything); for
 * tests.  Returns LK_OK or LK_INVAL.
 */
enum lk_status lk_table_check(const struct lk_table *t);

#endif /* NLMD_LOCKCORE_LOCKCORE_H */
