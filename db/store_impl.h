/*
 * store_impl.h - internals shared by the files of db/ (never included
 * outside db/).  The on-disk format is specified in store_codec.c.
 *
 * FILES
 *   store.c        open, close, epoch, info, error mapping
 *   store_txn.c    the turn's transaction: staging, commit, abort, faults
 *   store_codec.c  encoding and decoding of keys and values (the format)
 *   store_load.c   bulk loading at startup
 *   store_ckp.c    the checkpoint thread
 *   store_test.c   test-only raw writes (store_test.h)
 */
#ifndef NLMD_DB_STORE_IMPL_H
#define NLMD_DB_STORE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <db.h>

#include "store.h"

/* Format of the whole store (meta "format"); bump on any layout change. */
#define STORE_FORMAT		1
/* Record version byte that starts every value written by this code. */
#define STORE_REC_V1		1

/* Tunables; see store.c's header comment for how they were chosen. */
#define STORE_CACHE_DEFAULT	(64u << 20)	/* mpool cache */
#define STORE_CKP_SEC_DEFAULT	30u		/* checkpoint period */
#define STORE_CKP_LOG_BYTES	(16u << 20)	/* or after this much log */
#define STORE_LOG_FILE_BYTES	(16u << 20)	/* one log.* file */
#define STORE_LOG_BUF_BYTES	(4u << 20)	/* in-memory log buffer */
#define STORE_PAGE_BYTES	16384u		/* btree page size */
#define STORE_LOCKS_MAX		100000u		/* page locks of one txn */
#define STORE_BULK_BYTES	(4u << 20)	/* bulk-get buffer (load) */

/* Largest encoded key and value (see store_codec.c). */
#define STORE_KEY_MAX	(8 + 4 + 2 + LK_OH_MAX + 2 + LK_FH_MAX + 8)
#define STORE_VAL_MAX	(1 + 2 + STORE_NAME_MAX + 2 * (1 + 16 + 4) + 4 + \
			 4 + 8)

/* The meta values, as last committed or as staged. */
struct store_meta {
	uint64_t	 sm_format;
	uint64_t	 sm_epoch;
	uint64_t	 sm_token;
	uint64_t	 sm_next_host;
};

struct store_ckp;

/*
 * The handle.  Everything but st_ckp belongs to the event-loop thread; the
 * checkpoint thread has its own DB_ENV handle inside st_ckp.
 */
struct store {
	DB_ENV		*st_env;
	DB		*st_meta;	/* meta.db */
	DB		*st_hosts;	/* hosts.db */
	DB		*st_locks;	/* locks.db */
	DB		*st_shares;	/* shares.db */
	DB_TXN		*st_txn;	/* the turn's transaction, or NULL */
	enum store_durability st_durability;
	bool		 st_flush;	/* store_require_flush() this turn */
	bool		 st_fatal;	/* DB_RUNRECOVERY seen: refuse all */
	unsigned	 st_fail;	/* fault countdown, 0 = off */
	struct store_meta st_cur;	/* as last committed */
	struct store_meta st_new;	/* as staged in st_txn */
	uint64_t	 st_turn_puts;	/* staged in st_txn */
	uint64_t	 st_turn_dels;
	struct store_info st_info;	/* counters (ckp ones in st_ckp) */
	struct store_ckp *st_ckp;	/* NULL until started */
	char		*st_dir;
	char		 st_dberr[256];	/* Berkeley DB's last message */
	int		 st_lastrc;	/* last failing Berkeley DB code */
	char		 st_lasterr[400]; /* store_last_error()'s text */
	uint8_t		 st_key[STORE_KEY_MAX];
	uint8_t		 st_val[STORE_VAL_MAX];
	char		 st_name[STORE_NAME_MAX + 1];
};

/*
 * Every Berkeley DB call the event-loop side makes (except closes and
 * aborts, which must not be skipped) goes through STORE_DB, so that
 * store_fail_after() can make the n-th one fail with EIO without calling
 * it.
 */
bool	store_fault(struct store *st);
#define STORE_DB(st, call)	(store_fault(st) ? EIO : (call))

/* Map a Berkeley DB or errno code; latches st_fatal on DB_RUNRECOVERY. */
enum store_status store_status_of(struct store *st, int rc);

/* Abort the turn's transaction (if any) and forget what it staged. */
void	store_txn_discard(struct store *st);

/* store_txn.c: the turn's transaction, begun on first use. */
enum store_status store_txn_get(struct store *st, DB_TXN **txnp);
/* Stage a put (val != NULL) or delete of key in db; aborts on failure. */
enum store_status store_stage(struct store *st, DB *db, const void *key,
	    size_t klen, const void *val, size_t vlen);

/* store_codec.c: encoders return the length written into buf. */
size_t	store_enc_u64key(uint8_t *buf, uint64_t v);
size_t	store_enc_meta(uint8_t *buf, uint64_t v);
size_t	store_enc_lock_key(uint8_t *buf, const struct lk_record *rc);
size_t	store_enc_lock_val(uint8_t *buf, const struct lk_record *rc);
size_t	store_enc_share_key(uint8_t *buf, const struct lk_record *rc);
size_t	store_enc_share_val(uint8_t *buf, const struct lk_record *rc);
size_t	store_enc_host_val(uint8_t *buf, const struct store_host *h);
/* Is rc storable (kind, lengths, pointers)?  Is h? */
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
/* Checkpoints done and log files removed so far (any thread). */
void	store_ckp_counts(const struct store_ckp *ck, uint64_t *nckp,
	    uint64_t *nremoved);
/*
 * One checkpoint of env and removal of the log files it no longer needs;
 * adds the number removed to *nremoved.  Returns a Berkeley DB code.
 */
int	store_ckp_run(DB_ENV *env, uint64_t *nremoved);

#endif /* NLMD_DB_STORE_IMPL_H */
