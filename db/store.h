/*
 * store.h - nlmd's durable state: a Berkeley DB 5.3 transactional
 * environment in the state directory.
 *
 * WHAT IS STORED
 *   meta    the epoch (bumped at every start), the fencing-token high-water
 *           mark (no token ever issued is above it), the next host id, the
 *           format version;
 *   hosts   one record per host nlmd knows (id, caller_name, the address it
 *           sent from, the server address it talked to, its NSM state,
 *           flags, since when an SM_NOTIFY to it is owed): the status
 *           monitor's list;
 *   locks   every granted lock, keyed like lockcore's (host, svid, oh, fh,
 *           start), with its length, mode, fencing token and epoch;
 *   shares  every share reservation, keyed (host, oh, fh), with its access
 *           and deny masks and epoch.
 *   Every value starts with a record version byte; integers are big-endian;
 *   byte strings are length-prefixed.  No C struct is ever written raw.
 *   Everything lives inside the environment (no side files), so Berkeley DB
 *   replication could be switched on later.  db/store_codec.c specifies the
 *   format byte by byte.
 *
 * HOW IT WORKS (one commit per turn of the event loop, off the loop)
 *   Each store_put_* / store_del_* / store_apply() of a turn adds its
 *   operations, encoded, to the turn's batch in memory (no disk, no
 *   Berkeley DB call).  At the end of the turn store_seal() gives the
 *   batch a sequence number and commits it: one journal record appended
 *   to Berkeley DB's log, written by the committer thread under
 *   STORE_SYNC (with whatever else was sealed meanwhile: group commit),
 *   by store_seal() itself otherwise; a background thread folds the
 *   journal into the databases (per key only the last change counts).
 *   store_fd() becomes readable when the thread's commits complete;
 *   store_committed() says up to which sequence number.  Only then may
 *   the caller let out what turns up to that number reported.
 *   store_commit() seals and waits (startup, tools, tests).  The commit
 *   is flushed to disk (DB_FLUSH) under
 *   STORE_SYNC, or when store_require_flush() was called in one of its
 *   turns; under STORE_LOG it is written to the OS only (survives kill -9
 *   of the process, not a power loss).  Under STORE_NONE lock, share and
 *   token changes are not stored at all (benchmarks; a restart forgets
 *   them, and an open drops the locks and shares an earlier run under
 *   sync or log stored); hosts and the epoch still are.
 *
 *   A failing commit is latched: the store is then as the last
 *   successful commit left it, nothing more is committed or written to
 *   the log, and the caller must treat it as fatal (log, exit non-zero;
 *   recovery runs at the next store_open()), because the in-memory state
 *   has already moved on.  The one exception is a commit whose write
 *   reached the OS and whose sync failed: it may still reach the disk and
 *   come back at the next open (store_commit.c says what that costs).
 *
 *   A background thread checkpoints the environment every
 *   sc_checkpoint_sec seconds (when anything was written), or sooner once
 *   16 MiB of log were written, and removes log files no longer needed, so
 *   the log does not grow without bound and recovery after a crash stays
 *   short; the event loop never waits for it.
 *
 * ERRORS
 *   Every function returns enum store_status; Berkeley DB's DB_* codes
 *   never leave db/.  Messages for operators go to err[errlen] where a
 *   function takes one.
 *
 * THREADS
 *   One thread (the event loop) calls everything here; the committer,
 *   compactor and checkpoint threads are internal.
 */
#ifndef NLMD_DB_STORE_H
#define NLMD_DB_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lockcore.h"

enum store_status {
	STORE_OK = 0,
	STORE_NOTFOUND,		/* no such record */
	STORE_INVAL,		/* bad argument (length, kind) */
	STORE_NOMEM,		/* out of memory */
	STORE_CORRUPT,		/* a stored record does not decode, or a
				   newer format than we know */
	STORE_BUSY,		/* the environment is in use elsewhere */
	STORE_IO,		/* an operation failed; the turn's transaction
				   was aborted */
	STORE_FATAL		/* the environment needs recovery
				   (DB_RUNRECOVERY): exit, restart */
};

enum store_durability {
	STORE_SYNC = 0,		/* every commit flushed (default) */
	STORE_LOG,		/* written to the OS; hosts' first records
				   flushed (store_require_flush) */
	STORE_NONE		/* locks and shares not stored */
};

struct store_config {
	const char		*sc_dir;	/* environment directory; must
						   exist */
	enum store_durability	 sc_durability;
	size_t			 sc_cache_bytes; /* 0: built-in default,
						   16 MiB */
	unsigned		 sc_checkpoint_sec; /* 0: built-in default,
						   30 s */
};

/* Host flags. */
#define STORE_HOST_MONITORED	0x1	/* sent a LOCK (not NM_LOCK) */

/* Addresses are stored as raw bytes: 4 (IPv4) or 16 (IPv6), 0 = none. */
struct store_addr {
	uint8_t		 sa_len;
	uint8_t		 sa_bytes[16];
	uint32_t	 sa_scope;	/* IPv6 scope id, else 0 */
};

/*
 * The most server addresses a host record keeps: a client that mounted
 * through two of our addresses monitors each of them separately, and
 * must be told of a restart under each.
 */
#define STORE_LOCAL_MAX	4

struct store_host {
	uint64_t	 sh_id;		/* never 0 */
	const char	*sh_name;	/* caller_name, NUL-terminated, borrowed;
					   at most STORE_NAME_MAX bytes */
	struct store_addr sh_addr;	/* where its requests come from */
	struct store_addr sh_local[STORE_LOCAL_MAX]; /* our addresses it
					   talked to, oldest first */
	unsigned	 sh_nlocal;	/* of them, in use (each sa_len 4 or
					   16); 0: none known */
	int32_t		 sh_state;	/* its NSM state, 0 unknown */
	uint32_t	 sh_flags;	/* STORE_HOST_* */
	uint64_t	 sh_epoch;	/* epoch the record was first written */
	uint64_t	 sh_notify_since; /* Unix seconds since an SM_NOTIFY to
					   it is owed; 0: none owed */
};

#define STORE_NAME_MAX	1024

/*
 * What store_open() found, and the counters.  Meta values are as last
 * committed (staged ones show after store_commit()).
 */
struct store_info {
	uint64_t	 si_epoch;	/* current (after store_epoch_begin) */
	uint64_t	 si_token;	/* fencing-token high-water mark */
	uint64_t	 si_next_host;	/* next host id to give out */
	bool		 si_created;	/* the environment was new */
	uint64_t	 si_open_ms;	/* store_open(), all of it: */
	uint64_t	 si_recover_ms;	/* environment open with recovery */
	uint64_t	 si_fold_ms;	/* folding what the journal held */
	uint64_t	 si_commits;	/* commits (journal records) */
	uint64_t	 si_flushes;	/* of which flushed to disk */
	uint64_t	 si_puts;	/* records written (as staged) */
	uint64_t	 si_dels;	/* records deleted (as staged) */
	uint64_t	 si_folds;	/* folds of the journal into the records */
	uint64_t	 si_fold_ops;	/* net operations they applied */
	uint64_t	 si_fold_reads;	/* of those folds, how many read the
					   journal back from the log (at
					   open, or when the compactor fell
					   behind by STORE_JTAIL_BYTES) */
	uint64_t	 si_fold_moves;	/* folded position moved to the log's
					   end with nothing to fold (idle,
					   after the log went on to a new
					   file) */
	uint64_t	 si_locks_v1;	/* lock records of version 1 (without
					   their check) the last load found */
	uint64_t	 si_locks_upgraded; /* records rewritten as version 2
					   by store_locks_upgrade() */
	bool		 si_upgrading;	/* that rewrite is under way */
	uint64_t	 si_upgrade_ms;	/* how long it took, once done */
	uint64_t	 si_checkpoints;
	uint64_t	 si_logs_removed; /* log files removed */
	uint64_t	 si_log_syncs_near; /* the checkpoint thread's syncs
					   of the log while a log file was
					   about to fill (every 10 ms) */
};

struct store;

/* Static English text for a status; never NULL. */
const char	*store_strerror(enum store_status st);

/*
 * What the last failing Berkeley DB call said ("no error" when none
 * failed): its error text and Berkeley DB's own message, for the log of a
 * fatal failure.  Valid until the next call on st.
 */
const char	*store_last_error(struct store *st);

/*
 * Open (creating if needed) the environment in cf->sc_dir and run normal
 * recovery, so that the store holds exactly what was committed before the
 * last exit or crash.  Starts the checkpoint thread.  Does not change the
 * epoch (see store_epoch_begin()).  On success stores the handle in *stp.
 * Returns STORE_OK, STORE_BUSY (Berkeley DB said EBUSY/EAGAIN; nlmd's
 * flock on the state directory normally keeps other users away),
 * STORE_CORRUPT (a newer format version, meta.db does not decode, or it
 * lacks the format while the other databases hold records, or it is there
 * while hosts.db, locks.db or shares.db is not: refused before recovery),
 * STORE_INVAL (cf), STORE_NOMEM, STORE_IO or STORE_FATAL with a reason in
 * err[errlen]; *stp is then NULL.
 */
enum store_status store_open(const struct store_config *cf,
	    struct store **stp, char *err, size_t errlen);

/*
 * Abort a transaction left open, stop the checkpoint thread, checkpoint
 * once more and close everything.  Safe on NULL.
 */
void	store_close(struct store *st);

/*
 * Start a new epoch: epoch = max(stored epoch + 1, min_epoch), committed
 * and flushed in a transaction of its own before this returns.  Call once,
 * after store_open(), before loading.  *epochp gets the new epoch.
 * Returns STORE_OK, STORE_INVAL (a turn is pending: nothing changed),
 * STORE_CORRUPT (the stored epoch is UINT64_MAX), STORE_IO, STORE_NOMEM,
 * STORE_FATAL (err[errlen] says why; the stored epoch is unchanged).
 */
enum store_status store_epoch_begin(struct store *st, uint64_t min_epoch,
	    uint64_t *epochp, char *err, size_t errlen);

/* Meta values and counters (cheap). */
void	store_info(const struct store *st, struct store_info *si);

/*
 * LOADING (startup).  Walk every stored host / every lock and share record
 * (locks first, then shares), in key order, calling cb with borrowed
 * pointers valid during the call.  A non-zero return from cb stops the walk
 * and store_*_load() returns STORE_INVAL.  Records come back with rc_epoch
 * as stored and rc_reclaim 0.  Call with no turn pending (STORE_INVAL
 * otherwise).  Returns STORE_OK, STORE_INVAL, STORE_CORRUPT (a record that
 * does not decode, keys out of order, or fewer or more lock or share
 * records than the store counts: err says which), STORE_NOMEM, STORE_IO,
 * STORE_FATAL; a failed load changes nothing in the store.  The first
 * store_records_load() of a store from before the counts stores those it
 * walked.
 */
typedef int	store_host_cb(const struct store_host *h, void *arg);
typedef int	store_record_cb(const struct lk_record *rc, void *arg);

enum store_status store_hosts_load(struct store *st, store_host_cb *cb,
	    void *arg, char *err, size_t errlen);
enum store_status store_records_load(struct store *st, store_record_cb *cb,
	    void *arg, char *err, size_t errlen);

/*
 * Rewrite every lock record of version 1 (written by an nlmd before
 * 2026-12-07, without a check: store_codec.c) as version 2, when the last
 * store_records_load() found any (si_locks_v1), so that a damaged one is
 * refused at the next load instead of read as a lock.  The rewrite runs
 * in the background, in the compactor's thread, in transactions of a few
 * thousand records between its rounds: a crash or store_close() in the
 * middle leaves some records rewritten and the rest as they were, which
 * all load, and the next start's load finds the rest.  What a record
 * holds does not change.  si_upgrading says whether it is under way;
 * si_locks_upgraded counts the records rewritten.  A failing transaction
 * is latched as a failed fold (store_committed() and the next turns
 * return it).  Call after the load, on the loop's thread.
 */
void	store_locks_upgrade(struct store *st);

/*
 * STAGING (the current turn's batch; see HOW IT WORKS).  Each returns
 * STORE_OK, or STORE_INVAL (a record that cannot be stored: nothing staged,
 * the batch stays as it was), or STORE_NOMEM (the turn's batch was
 * dropped: fatal for the caller), or STORE_FATAL (the store needs
 * recovery).  Staging does no I/O.
 */
/* Store a lock or share record (insert or replace by key). */
enum store_status store_put_record(struct store *st,
	    const struct lk_record *rc);
/* Delete a lock or share record by key (deleting none is STORE_OK). */
enum store_status store_del_record(struct store *st,
	    const struct lk_record *rc);
/* A lockcore change set: every rs_removed record, then every rs_added. */
enum store_status store_apply(struct store *st, const struct lk_result *res);
/* Insert or replace a host record. */
enum store_status store_put_host(struct store *st, const struct store_host *h);
/* Delete a host record (none: STORE_OK). */
enum store_status store_del_host(struct store *st, uint64_t id);
/*
 * Raise the token high-water mark to `token' (never lowers it; a lower or
 * equal value stages nothing).  Does nothing under STORE_NONE.
 */
enum store_status store_put_token(struct store *st, uint64_t token);
/* Raise the stored next host id to `next' (never lowers it). */
enum store_status store_put_next_host(struct store *st, uint64_t next);
/* Set the epoch (never lowers it), e.g. for a simulated restart. */
enum store_status store_put_epoch(struct store *st, uint64_t epoch);

/* This turn's commit must be flushed to disk whatever the durability. */
void	store_require_flush(struct store *st);

/* Was anything staged this turn (not yet sealed)? */
bool	store_pending(const struct store *st);

/*
 * End the turn: what it staged becomes commit number *seqp (numbers rise
 * by one per sealed turn), queued for the committer.  When nothing was
 * staged, *seqp is the last number sealed before (what the turn's
 * messages may depend on).  Returns STORE_OK, or the latched failure of
 * an earlier commit (STORE_IO, STORE_NOMEM, STORE_FATAL: the turn is
 * dropped; fatal for the caller).
 */
enum store_status store_seal(struct store *st, uint64_t *seqp);

/* The last sequence number sealed (0: none yet). */
uint64_t store_sealed(const struct store *st);

/*
 * The last sequence number committed, without touching store_fd() (after
 * store_seal() under STORE_LOG and STORE_NONE the turn is committed
 * already: the caller may release at once).
 */
uint64_t store_durable(struct store *st);

/*
 * A descriptor (eventfd) that is readable when the committer thread
 * (STORE_SYNC) completed commits since the last store_committed(); watch
 * it for reading in the event loop.  (A failure of any commit makes it
 * readable too.)
 */
int	store_fd(const struct store *st);

/*
 * Drain store_fd() and store in *seqp the last sequence number committed
 * (everything up to it is in the store).  Returns STORE_OK, or the
 * latched failure (fatal for the caller).
 */
enum store_status store_committed(struct store *st, uint64_t *seqp);

/*
 * Seal the turn and wait until everything sealed is committed: STORE_OK
 * (also when nothing was staged), or the failure (the store is as the
 * last successful commit left it; fatal for the caller).
 */
enum store_status store_commit(struct store *st);

/*
 * Drop what the turn staged (tests, and error paths that exit).  What was
 * sealed is not affected.
 */
void	store_abort(struct store *st);

/*
 * FAULT INJECTION (tests).  Make the `n'-th Berkeley DB call from now
 * (counting the calls db/ makes after store_open() that a turn or a load
 * depends on, the committer's included: log appends (a commit, or each
 * part of a large one), the loads' cursor opens and gets; not aborts and
 * closes, which must not be skipped, nor the compactor's or the
 * checkpoint thread's) fail
 * as an I/O error (EIO) would; 0 switches it off.  The store then behaves
 * as it must after a real failure.  Test-only raw writes: db/store_test.h.
 */
void	store_fail_after(struct store *st, unsigned n);

#endif /* NLMD_DB_STORE_H */
