/*
 * stt.h - helpers shared by the store unit tests (test-store).
 *
 * Every test works in its own mkdtemp directory (stt_dir_new), removed by
 * stt_dir_free.  A snapshot is everything a store holds as seen through
 * the public API (meta values, hosts, records, in load order), so two
 * snapshots compare equal exactly when the stores hold the same content.
 */
#ifndef NLMD_TESTS_STORE_STT_H
#define NLMD_TESTS_STORE_STT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* A fresh directory; NULL-safe removal (rm -r). */
char	*stt_dir_new(void);
void	 stt_dir_free(char *dir);
void	 stt_drop(char **dirp, struct store **stp);
void	 stt_fresh(char **dirp, struct store **stp);

/* Open dir (durability d, checkpoint period ckp, 0 = default). */
enum store_status stt_open(const char *dir, enum store_durability d,
	    unsigned ckp, struct store **stp);
/* Same, asserting success (CU_FAIL_FATAL otherwise). */
struct store *stt_open_ok(const char *dir, enum store_durability d);

/* Lock record with NUL-terminated oh and fh (bytes point into them). */
struct lk_record stt_lock(uint64_t host, int32_t svid, const char *oh,
	    const char *fh, uint64_t start, uint64_t len, bool excl,
	    uint64_t token);
struct lk_record stt_share(uint64_t host, const char *oh, const char *fh,
	    uint8_t access, uint8_t deny);

/* Deep copies of loaded records and hosts. */
struct stt_snap {
	struct lk_record *ss_recs;
	size_t		 ss_nrecs;
	size_t		 ss_reccap;
	struct store_host *ss_hosts;
	size_t		 ss_nhosts;
	size_t		 ss_hostcap;
	uint64_t	 ss_epoch;
	uint64_t	 ss_token;
	uint64_t	 ss_next_host;
};

/* Load everything from st; returns the load status (STORE_OK). */
enum store_status stt_snap_take(struct store *st, struct stt_snap *ss);
void	stt_snap_free(struct stt_snap *ss);
bool	stt_snap_equal(const struct stt_snap *a, const struct stt_snap *b);
/*
 * Assert that meta.db counts as many records of locks.db and shares.db
 * as ss holds locks and shares (a snapshot of st).
 */
void	stt_nrec_check(struct store *st, const struct stt_snap *ss);
/*
 * Open dir, snapshot, close; asserts the open and load succeed, and the
 * counts of records (stt_nrec_check).
 */
void	stt_snap_dir(const char *dir, struct stt_snap *ss);

bool	stt_rec_equal(const struct lk_record *a, const struct lk_record *b);
bool	stt_host_equal(const struct store_host *a, const struct store_host *b);

/* CLOCK_MONOTONIC in seconds. */
double	stt_now(void);

/*
 * Turns that write ~64 MiB of log (locks of `host' with the largest
 * handles, put and deleted) but leave no record; false on error.
 */
bool	stt_churn(struct store *st, uint64_t host);

/*
 * Every 100 ms a lock of `host' put and deleted (each its own commit),
 * until the checkpoint thread has made n more checkpoints, at most 30 s:
 * checkpoints are due (an idle store has none) and nothing is left of
 * it.  0 when they were made, -1 on a store error, -2 when they were not.
 */
int	stt_ckp_wait(struct store *st, uint64_t host, unsigned n);

/*
 * Run child() in a forked process, which must die of SIGKILL (it raises
 * it after its work; its exit code, printed, says what failed first).
 */
void	stt_run_killed(void (*child)(void));

/* Number of log.* files in dir. */
size_t	stt_nlogs(const char *dir);

/*
 * Called, when set, by the test binary's fdatasync() and fsync() (every
 * sync Berkeley DB makes) with the descriptor, before the sync, in the
 * thread that syncs (test_syncfail.c interposes them).
 */
extern void (*_Atomic stt_sync_hook)(int fd);

/* NLMD_TEST_LONG set (and not "0")? */
bool	stt_long(void);

/* Suite registration, one per test file. */
int	stt_register_basic(void);
int	stt_register_fault(void);
int	stt_register_durable(void);
int	stt_register_commit(void);
int	stt_register_journal(void);
int	stt_register_syncfail(void);
int	stt_register_writefail(void);
int	stt_register_cut(void);
int	stt_register_damage(void);
int	stt_register_dump(void);

#endif
