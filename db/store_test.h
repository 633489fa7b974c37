/*
 * store_test.h - test-only access to nlmd's store.  Used by tests/store/
 * to write records the public API cannot produce (unknown versions,
 * garbage, newer formats); nlmd itself never includes this header.
 */
#ifndef NLMD_DB_STORE_TEST_H
#define NLMD_DB_STORE_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum store_test_db {
	STORE_TEST_META,	/* meta.db */
	STORE_TEST_HOSTS,	/* hosts.db */
	STORE_TEST_LOCKS,	/* locks.db */
	STORE_TEST_SHARES	/* shares.db */
};

/*
 * Stage key[klen] := val[vlen] verbatim in database `which', in the
 * current turn's transaction (commit it with store_commit()).  Returns as
 * the staging calls of store.h do; STORE_INVAL for an unknown `which' or
 * an empty key.
 */
enum store_status store_test_put_raw(struct store *st,
	    enum store_test_db which, const void *key, size_t klen,
	    const void *val, size_t vlen);

/* The compactor's round period (STORE_COMPACT_MS). */
#define STORE_TEST_COMPACT_MS	500

/*
 * The most the environment's main region (__db.001, the lock table) may
 * grow to, in bytes: Berkeley DB's memory_max for the open store.
 */
unsigned long long store_test_main_region_max(struct store *st);

/* Room for any key, and for a lock's value, as the store encodes them. */
#define STORE_TEST_KEY_ROOM	4096
#define STORE_TEST_VAL_ROOM	64

/*
 * The key and value of lock rc exactly as the store writes them to
 * locks.db: key[*klenp], val[*vlenp] (rooms above).
 */
void	store_test_enc_lock(const struct lk_record *rc, uint8_t *key,
	    size_t *klenp, uint8_t *val, size_t *vlenp);

/*
 * Decode a locks.db key and value as the load does: NULL and *rc, or why
 * the record is refused.
 */
const char *store_test_dec_lock(const void *key, size_t klen,
	    const void *val, size_t vlen, struct lk_record *rc);

/*
 * Write what the current turn staged as a format-1 store would have
 * committed it: one entry, key seq, in journal0.db (j 0) or journal1.db
 * (j 1), and meta "format" 1; the turn is then discarded.  The next open
 * must fold it.
 */
enum store_status store_test_v1_entry(struct store *st, unsigned j,
	    uint64_t seq);

/*
 * Write what the current turn staged as one journal record whose entry
 * begins with the byte `kind' (STORE_REC_V1 is 1; see store_codec.c),
 * appended to the log and flushed behind the compactor's back; the turn is
 * then discarded.  The next open folds it.
 */
enum store_status store_test_journal_entry(struct store *st, uint8_t kind);

/*
 * Hold (true) or resume (false) the compactor's rounds: commits then stay
 * in the log unfolded, as when the compactor lags behind.
 */
void	store_test_hold_fold(struct store *st, bool hold);

/*
 * Keep at most `bytes' of the journal's unfolded tail in memory (default
 * STORE_JTAIL_BYTES): a round that finds the tail dropped reads its
 * records back from the log.
 */
void	store_test_tail_max(struct store *st, size_t bytes);

/*
 * Where the log ends now (synced: where the part of it that was synced to
 * disk ends, as far as Berkeley DB knows): *filep := the number of the
 * log file (log.N), *offp := the offset in it (0/0 if unknown).  Log files
 * are created at their full size, so a file's size does not say how full
 * it is.
 */
void	store_test_log_end(struct store *st, bool synced,
	    unsigned long *filep, unsigned long *offp);

/*
 * How many batches the store keeps for reuse (committed turns' buffers
 * not given back).
 */
size_t	store_test_free_batches(struct store *st);

/*
 * The page locks a transaction of the stores opened from now on may hold
 * (0: the default, STORE_LOCKS_MAX).  A fold needing more is applied in
 * several transactions.
 */
void	store_test_lk_max(unsigned n);

/*
 * Make the n-th transaction of the next fold (0: none) fail, after the
 * ones before it committed: the fold is cut as by a crash between them.
 */
void	store_test_fold_fail_at(struct store *st, unsigned n);

/*
 * Let the rewrite of version 1 lock records (store_locks_upgrade()) run
 * n transactions in all, then wait until this is called again with a
 * larger n, or with 0 (no limit, the default).
 */
void	store_test_upgrade_steps(struct store *st, unsigned n);

/*
 * The count of records meta.db holds for locks.db (which 0) or shares.db
 * (1), read from meta.db: true and *np, or false when it holds none (a
 * store from before the counts, until its first load).
 */
bool	store_test_nrec(struct store *st, unsigned which, uint64_t *np);

/*
 * Remove both counts from meta.db, as in a store written before they
 * were kept: the next load counts the records and stores them.
 */
enum store_status store_test_nrec_forget(struct store *st);

#endif /* NLMD_DB_STORE_TEST_H */
