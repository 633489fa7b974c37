/*
 * store_impl.h - internals shared by the files of db/ (never included
 * outside db/).  The on-disk format is specified in store_codec.c.
 *
 * FILES
 *   store.c        open, close, epoch, info, error mapping
 *   store_txn.c    the turn: staging into a batch, sealing, waiting,
 *                  abort, faults
 *   store_commit.c committing sealed turns as journal records in the
 *                  log (the committer thread under sync), folding
 *   store_compact.c the compactor: the journal folded into the records
 *   store_codec.c  encoding and decoding of keys and values (the format)
 *   store_load.c   bulk loading at startup
 *   store_ckp.c    the checkpoint thread
 *   store_test.c   test-only raw writes (store_test.h)
 */
#ifndef NLMD_DB_STORE_IMPL_H
#define NLMD_DB_STORE_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <db.h>

#include "store.h"

/*
 * Format of the whole store (meta "format"); bump on any layout change.
 * 1: turns journalled in journal0.db/journal1.db (still read at open);
 * 2: turns journalled as records of Berkeley DB's log (STORE_LOGREC).
 */
#define STORE_FORMAT		2
/*
 * Our log records' type (Berkeley DB reserves the types from DB_user_BEGIN
 * for applications), and their header: Berkeley DB's own layout of u32
 * type, u32 transaction id and DB_LSN of the previous record (both 0: no
 * transaction), in the host's order as all of its log is.
 */
#define STORE_LOGREC		(DB_user_BEGIN + 0x4e4c)
#define STORE_LOGREC_HDR	16
/*
 * A commit larger than this (a turn that releases a million locks) is
 * written as several records, each flagged (its first byte) as the first,
 * a middle or the last part; a record holds at most 16 MiB, the size of a
 * log file.  A commit in one record starts with STORE_REC_V1.
 */
#define STORE_LOGREC_MAX	(1u << 20)
/*
 * The compactor's code for "the log no longer holds the journal from its
 * folded position on" (the position's file, or one after it, is gone):
 * neither an errno value nor one of Berkeley DB's (-30999 .. -30800).
 */
#define STORE_JOURNAL_GONE	(-29001)
/* The most a part can need: a full part and one more operation. */
#define STORE_LOGREC_ROOM	(STORE_LOGREC_MAX + 8 + STORE_KEY_MAX + \
				 STORE_VAL_MAX)
#define STORE_JREC_FIRST	2	/* first part, more follow */
#define STORE_JREC_MIDDLE	3
#define STORE_JREC_LAST		4
/* Record version byte that starts every value written by this code. */
#define STORE_REC_V1		1
#define STORE_REC_V2		2	/* host and lock values only */
#define STORE_REC_V3		3	/* host values only */

/* Tunables; see store.c's header comment for how they were chosen. */
#define STORE_CACHE_DEFAULT	(16u << 20)	/* mpool cache (store.c) */
#define STORE_CKP_SEC_DEFAULT	30u		/* checkpoint period */
#define STORE_CKP_LOG_BYTES	(16u << 20)	/* or after this much log */
#define STORE_LOG_FILE_BYTES	(16u << 20)	/* one log.* file */
#define STORE_LOG_BUF_BYTES	(4u << 20)	/* in-memory log buffer */
#define STORE_PAGE_BYTES	16384u		/* btree page size */
#define STORE_LOCKS_MAX		100000u		/* page locks of one txn */
#define STORE_LOCKS_PER_OP	16u		/* a fold's transaction applies
						   at most STORE_LOCKS_MAX / this
						   operations (store_compact.c) */
#define STORE_BULK_BYTES	(4u << 20)	/* bulk-get buffer (load) */
#define STORE_COMMIT_OPS	50000u		/* operations per journal entry
						   (one batch may exceed it) */
#define STORE_COMPACT_MS	500u		/* compactor round period */
#define STORE_COMPACT_OPS	25000u		/* or after this many ops (a
						   round's buffers grow with
						   them: ~20 MB at 100,000) */
#define STORE_KEEP_BYTES	(4u << 20)	/* larger buffers freed after use */
#define STORE_FREE_MAX		16u		/* committed batches kept for
						   reuse; more are freed */
#define STORE_JTAIL_BYTES	(8u << 20)	/* the journal's unfolded tail
						   kept in memory, at most */
#define STORE_DBERR_MAX		1024u		/* Berkeley DB's messages kept
						   (store_dberr) */

/* Largest encoded key and value (see store_codec.c). */
#define STORE_KEY_MAX	(8 + 4 + 2 + LK_OH_MAX + 2 + LK_FH_MAX + 8)
#define STORE_VAL_MAX	(1 + 2 + STORE_NAME_MAX + (1 + 16 + 4) + 1 + \
			 STORE_LOCAL_MAX * (1 + 16 + 4) + 4 + 4 + 8 + 8)

/*
 * The records of locks.db and shares.db as meta "locks" and "shares"
 * count them (store_codec.c), or as a fold's transaction leaves them.
 */
struct store_nrec {
	uint64_t	 nr_n[2];	/* [0] locks.db, [1] shares.db */
	bool		 nr_known[2];	/* stored (not in a store from
					   before the counts until its
					   first load: store_load.c) */
};

/* The meta values, as last committed or as staged. */
struct store_meta {
	uint64_t	 sm_format;
	uint64_t	 sm_epoch;
	uint64_t	 sm_token;
	uint64_t	 sm_next_host;
};

struct store_ckp;

/* The databases, as staged operations name them. */
enum store_dbi {
	STORE_DBI_META,
	STORE_DBI_HOSTS,
	STORE_DBI_LOCKS,
	STORE_DBI_SHARES
};

/*
 * One staged operation, in memory only: this header, then the encoded key
 * (op_klen bytes) and, for a put, the encoded value (op_vlen bytes).
 */
struct store_op {
	uint8_t		 op_dbi;	/* enum store_dbi */
	uint8_t		 op_put;	/* 1 put, 0 delete */
	uint16_t	 op_klen;
	uint32_t	 op_vlen;
};

/* Bytes an operation takes in a batch: padded so the next is aligned. */
#define STORE_OP_SPACE(klen, vlen) \
	((sizeof(struct store_op) + (klen) + (vlen) + 7) & ~(size_t)7)

/* A turn's operations; once sealed, owned by the committer's queue. */
struct store_batch {
	struct store_batch *b_next;	/* queue / free list */
	uint64_t	 b_seq;		/* sealed: its sequence number */
	bool		 b_flush;	/* commit with DB_TXN_SYNC */
	struct store_meta b_meta;	/* the meta once it is committed */
	uint8_t		*b_buf;		/* struct store_op, key, value ... */
	size_t		 b_len;
	size_t		 b_cap;
	size_t		 b_nops;
	uint64_t	 b_puts;	/* of which puts (store_info) */
};

struct store_slot;

/* A fold table: per key, the last operation (store_commit.c). */
struct store_fold {
	struct store_slot *fo_slot;
	size_t		 fo_cap;
	size_t		 fo_mask;
	uint8_t		 fo_key[LK_HASH_KEY_LEN]; /* the slots' hash key */
};

/*
 * The handle.  The event-loop thread owns the staging side (st_batch,
 * st_new, st_sealed*, st_flush, st_key/st_val); whoever commits
 * (store_commit.c) owns st_jbuf; the compactor (store_compact.c) owns
 * st_kbuf and st_kfold; what they share is under st_cmu, st_jmu and
 * st_kmu (see the LOCKING notes there).  The database handles are opened
 * DB_THREAD; the checkpoint thread (st_ckp) uses st_env too.
 */
struct store {
	DB_ENV		*st_env;
	DB		*st_meta;	/* meta.db */
	DB		*st_hosts;	/* hosts.db */
	DB		*st_locks;	/* locks.db */
	DB		*st_shares;	/* shares.db */
	enum store_durability st_durability;
	bool		 st_flush;	/* store_require_flush() this turn */
	_Atomic bool	 st_fatal;	/* DB_RUNRECOVERY seen: refuse all
					   (any thread may latch it) */
	_Atomic unsigned st_fail;	/* fault countdown, 0 = off */
	struct store_meta st_new;	/* sealed + staged */
	struct store_batch *st_batch;	/* the turn's operations */
	uint64_t	 st_sealed;	/* last sequence number sealed */
	struct store_meta st_sealed_meta; /* st_new at the last seal */
	/* shared with the committer, under st_cmu */
	pthread_mutex_t	 st_cmu;
	pthread_cond_t	 st_ccv;	/* work queued / stop */
	pthread_cond_t	 st_dcv;	/* a run committed (or failed) */
	bool		 st_csync;	/* the three above initialised */
	struct store_batch *st_qhead;	/* sealed, not yet committed */
	struct store_batch **st_qtail;
	struct store_batch *st_free;	/* recycled batches */
	size_t		 st_nfree;	/* of them (at most STORE_FREE_MAX) */
	uint64_t	 st_committed;	/* last sequence number committed */
	enum store_status st_cerr;	/* latched commit failure */
	bool		 st_cstop;
	struct store_meta st_cur;	/* as last committed */
	struct store_info st_info;	/* counters (ckp ones in st_ckp) */
	/* the committer (a thread under STORE_SYNC, else the loop) */
	pthread_t	 st_cthread;
	bool		 st_cstarted;
	int		 st_efd;	/* eventfd: commits done */
	uint8_t		*st_jbuf;	/* a journal entry being encoded */
	size_t		 st_jcap;
	/* the journal (our records in the log) and the compactor */
	pthread_mutex_t	 st_jmu;	/* st_jend, st_jops, st_jtail*,
					   st_jappending */
	DB_LSN		 st_jend;	/* our last record in the log */
	bool		 st_jappending;	/* a commit is appending: it may have
					   records in the log after st_jend */
	size_t		 st_jops;	/* ops written since the last round */
	struct store_batch st_jtail;	/* the operations of our records
					   after st_jtail_from, as staged */
	DB_LSN		 st_jtail_from;
	bool		 st_jtail_ok;	/* st_jtail holds all of them */
	size_t		 st_jtail_max;	/* STORE_JTAIL_BYTES (tests lower it) */
	DB_LSN		 st_jfold;	/* last record folded (st_kmu) */
	_Atomic uint32_t st_jkeep;	/* first log file not to remove (0:
					   none may go yet) */
	pthread_mutex_t	 st_kmu;	/* one compaction round at a time */
	pthread_cond_t	 st_kcv;	/* wakes the compactor (st_cmu) */
	bool		 st_kstop;	/* under st_cmu */
	pthread_t	 st_kthread;
	bool		 st_kstarted;
	_Atomic bool	 st_khold;	/* store_test_hold_fold() */
	/*
	 * A journal append failed (store_journal_append()): its record may
	 * be in Berkeley DB's log buffer, which keeps what a failed write
	 * left, and any later flush of the log would write it -- a commit
	 * reported failed, and never answered, back at the next open.  From
	 * here nothing of ours writes the log: no sync or checkpoint
	 * (store_ckp.c), no fold (store_compact.c), no last checkpoint or
	 * database flush at close.
	 */
	_Atomic bool	 st_lhalt;
	_Atomic unsigned st_kfail_at;	/* store_test_fold_fail_at() */
	size_t		 st_kchunk;	/* operations per fold transaction */
	/* rewriting version 1 lock records (store_compact.c) */
	bool		 st_kupgrade;	/* under way (st_cmu) */
	uint64_t	 st_kupgrade_t0; /* when it began, ms (st_cmu) */
	uint8_t		 st_ukey[STORE_KEY_MAX]; /* the last key it visited
					   (st_kmu) */
	u_int32_t	 st_uklen;	/* (0: none yet) */
	unsigned	 st_ksteps;	/* its transactions so far (st_cmu) */
	unsigned	 st_kstep_max;	/* store_test_upgrade_steps(); 0: no
					   limit (st_cmu) */
	struct store_nrec st_nrec;	/* as committed (st_kmu) */
	struct store_batch st_kbuf;	/* a journal, decoded */
	struct store_fold st_kfold;
	uint8_t		 st_fkey[LK_HASH_KEY_LEN]; /* the folds' hash key */
	struct store_ckp *st_ckp;	/* NULL until started */
	char		*st_dir;
	pthread_mutex_t	 st_emu;	/* st_dberr* (any thread's Berkeley DB
					   call may report a message) */
	char		 st_dberr[STORE_DBERR_MAX]; /* Berkeley DB's messages
					   since the last clear, the first
					   ones, "; "-separated */
	char		 st_dblast[256]; /* and its last message */
	bool		 st_dbmore;	/* some fell between the two */
	_Atomic int	 st_lastrc;	/* last failing Berkeley DB code */
	char		 st_lasterr[STORE_DBERR_MAX + 256 + 4096]; /*
					   store_last_error()'s text (the
					   directory's name too) */
	uint8_t		 st_key[STORE_KEY_MAX];
	uint8_t		 st_val[STORE_VAL_MAX];
	char		 st_name[STORE_NAME_MAX + 1];
};

/*
 * The Berkeley DB calls a turn or a load depends on (the journal's log
 * appends, the loads' cursor calls; not the open's, the compactor's or
 * the checkpoint thread's, nor closes and aborts, which must not be
 * skipped) go through STORE_DB, so that store_fail_after() can make the
 * n-th one fail with EIO without calling it.  The countdown is atomic:
 * the committer counts too.
 */
bool	store_fault(struct store *st);
#define STORE_DB(st, call)	(store_fault(st) ? EIO : (call))

/*
 * Berkeley DB's messages since the last store_dberr_clear() (the first
 * ones, and the last: the first says why, the last what failed in the
 * end, e.g. "file locks.db has LSN 1/3919704, past end of log at
 * 1/1999936; ... unable to join the environment"), copied into buf
 * (STORE_DBERR_MAX bytes are enough).  Clearing forgets them.
 */
void	store_dberr(struct store *st, char *buf, size_t len);
void	store_dberr_clear(struct store *st);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t store_now_ms(void);

/* Map a Berkeley DB or errno code; latches st_fatal on DB_RUNRECOVERY. */
enum store_status store_status_of(struct store *st, int rc);

/* Write meta value `name' := val in txn (any thread); a code. */
int	store_meta_put(struct store *st, DB_TXN *txn, const char *name,
	    uint64_t val);
/*
 * Write in txn the counts of *nr that are known and differ from *was's
 * (was NULL: every known one); a code.
 */
int	store_nrec_put(struct store *st, DB_TXN *txn,
	    const struct store_nrec *was, const struct store_nrec *nr);

/* Forget what the turn staged (nothing of it was sealed). */
void	store_txn_discard(struct store *st);

/*
 * store_txn.c: stage a put (val != NULL) or delete of key in database
 * dbi, in the turn's batch.  STORE_NOMEM drops the turn.
 */
enum store_status store_stage(struct store *st, enum store_dbi dbi,
	    const void *key, size_t klen, const void *val, size_t vlen);

/* store_commit.c: committing, and folding. */
struct store_batch *store_batch_new(void);
/*
 * Room for `need' more bytes in b's buffer, doubling from `first' bytes
 * (a power of two); false: ENOMEM (b unchanged).
 */
bool	store_batch_room(struct store_batch *b, size_t need, size_t first);
/* Fold a run of batches (nops operations) into fo.  false: ENOMEM. */
bool	store_fold(struct store *st, const struct store_batch *run,
	    size_t nops, struct store_fold *fo);
/*
 * Apply up to max of a fold's operations in txn, from its slot *atp on;
 * *atp := the slot to go on from (past the table's end: all applied);
 * *nr counts the records of locks.db and shares.db they add and remove.
 * A Berkeley DB code.
 */
int	store_fold_apply(struct store *st, const struct store_fold *fo,
	    DB_TXN *txn, size_t *atp, size_t max, uint64_t *puts,
	    uint64_t *dels, struct store_nrec *nr);
void	store_fold_free(struct store_fold *fo);
/*
 * After a peak: free *bufp (capacity *capp) or the fold table when over
 * STORE_KEEP_BYTES, so it does not hold the peak for good; true if freed.
 */
bool	store_buf_trim(uint8_t **bufp, size_t *capp);
bool	store_fold_trim(struct store_fold *fo);
/* Start / stop (after finishing what was sealed) the committer thread. */
enum store_status store_commit_start(struct store *st, char *err,
	    size_t errlen);
void	store_commit_stop(struct store *st);
/* Hand a sealed batch to the committer. */
void	store_commit_queue(struct store *st, struct store_batch *b);
/* Make store_fd() readable: a commit done, or a failure latched. */
void	store_notify(struct store *st);
/* The latched commit failure, STORE_OK when none. */
enum store_status store_commit_error(struct store *st);
/* Wait until seq is committed: STORE_OK, or the latched failure. */
enum store_status store_commit_wait(struct store *st, uint64_t seq);
/* Counters and meta as committed. */
void	store_commit_info(const struct store *st, struct store_info *si,
	    struct store_meta *cur);

/* store_compact.c: folding the journal. */
/*
 * At open, before the threads: fold what the log holds after st_jfold
 * (meta "journal"; zero: from the log's first record) through its end.
 */
int	store_compact_open(struct store *st);
/*
 * A format-1 store: fold its journal databases j[0] and j[1]
 * (journal0.db, journal1.db; older entries first) into the record
 * databases and empty them, in one transaction; a code.
 */
int	store_compact_v1(struct store *st, DB *j[2]);
/* One round (fold what was written since the last); failures latched. */
int	store_compact_round(struct store *st);
/*
 * One transaction of the rewrite of version 1 lock records (the
 * compactor's thread, st_kmu taken here); failures latched as a round's.
 */
int	store_compact_upgrade(struct store *st);
/* store_test_lk_max()'s; 0: STORE_LOCKS_MAX. */
extern _Atomic unsigned store_lk_max;
/* Wait for every sealed commit, then fold it all (loads). */
enum store_status store_compact_all(struct store *st);
enum store_status store_compactor_start(struct store *st, char *err,
	    size_t errlen);
void	store_compactor_stop(struct store *st);
/* A commit added n operations to the journal (st_jmu held). */
void	store_compact_noted(struct store *st, size_t n);
/*
 * A commit appended the run to the log (ok), or failed to (st_jmu held):
 * keep its operations for the next round, or forget what was kept.
 */
void	store_compact_tail(struct store *st, const struct store_batch *run,
	    bool ok);
/* store_codec.c: a journal operation, to and from its stored form. */
size_t	store_enc_jop(uint8_t *buf, const struct store_op *op);
/*
 * Decode the operation at *offp of a journal value: its header into *op,
 * a pointer to its key and value into *datap, *offp past it.  NULL, or
 * why it does not decode.
 */
const char *store_dec_jop(const void *v, size_t vlen, size_t *offp,
	    struct store_op *op, const uint8_t **datap);

/* store_codec.c: encoders return the length written into buf. */
size_t	store_enc_u64key(uint8_t *buf, uint64_t v);
size_t	store_enc_meta(uint8_t *buf, uint64_t v);
size_t	store_enc_lock_key(uint8_t *buf, const struct lk_record *rc);
/* The value of a lock whose key (store_enc_lock_key) is key, klen. */
size_t	store_enc_lock_val(uint8_t *buf, const struct lk_record *rc,
	    const uint8_t *key, size_t klen);
size_t	store_enc_share_key(uint8_t *buf, const struct lk_record *rc);
size_t	store_enc_share_val(uint8_t *buf, const struct lk_record *rc);
size_t	store_enc_host_val(uint8_t *buf, const struct store_host *h);
/*
 * The version 2 value of the lock whose key is k, klen and whose value v,
 * vlen is version 1 and decodes, into buf (STORE_VAL_MAX bytes); its
 * length, or 0 when v is not such a value.
 */
size_t	store_lock_upgrade(uint8_t *buf, const void *k, size_t klen,
	    const void *v, size_t vlen);
/* Is rc storable (kind, lengths, pointers, epoch <= LK_EPOCH_MAX)?  Is h? */
bool	store_record_ok(const struct lk_record *rc);
bool	store_host_ok(const struct store_host *h);
/*
 * Decoders: fill the output from key/value bytes (pointers into them are
 * borrowed; a host name is copied into name[STORE_NAME_MAX + 1]).  Return
 * NULL, or a static reason it does not decode.
 */
const char *store_dec_meta(const void *v, size_t vlen, uint64_t *out);
const char *store_dec_lock(const void *k, size_t klen, const void *v,
	    size_t vlen, struct lk_record *rc);
const char *store_dec_share(const void *k, size_t klen, const void *v,
	    size_t vlen, struct lk_record *rc);
const char *store_dec_host(const void *k, size_t klen, const void *v,
	    size_t vlen, struct store_host *h, char *name);

/* store_ckp.c */
enum store_status store_ckp_start(struct store *st, unsigned period_sec,
	    char *err, size_t errlen);
/* Stop and join the thread, close its handle; safe on NULL. */
void	store_ckp_stop(struct store_ckp *ck);

/*
 * What db/'s threads block: every signal (they are the event loop's),
 * but the faults (SIGBUS, SIGSEGV, SIGFPE, SIGILL).  A fault in a thread
 * that blocks it is not blocked: the kernel resets it to its default
 * action, and the process's handler never ran -- a SIGBUS from a mapped
 * region file the full file system could not back killed nlmd without
 * its message.
 */
void	store_thread_sigset(sigset_t *ss);
/*
 * Checkpoints done, log files removed and syncs of the log near a file's
 * end (STORE_CKP_NEAR_MS) so far (any thread).
 */
void	store_ckp_counts(const struct store_ckp *ck, uint64_t *nckp,
	    uint64_t *nremoved, uint64_t *nnear);
/*
 * One checkpoint of env and removal of the log files it no longer needs
 * -- and that hold no record of ours not yet folded: none numbered *keep
 * or above, none at all while *keep is 0.  Adds the number removed to
 * *nremoved; *lowp (unless NULL) := the lowest-numbered log file left.
 * Returns a Berkeley DB code.
 */
int	store_ckp_run(DB_ENV *env, const _Atomic uint32_t *keep,
	    uint64_t *nremoved, uint32_t *lowp);

#endif /* NLMD_DB_STORE_IMPL_H */
