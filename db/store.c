/*
 * store.c - open, close, epoch and info of nlmd's Berkeley DB store (see
 * store.h for the contract and store_codec.c for the on-disk format).
 *
 * HOW IT WORKS
 *   store_open() creates a DB_ENV handle, sizes it (below), and opens the
 *   environment with DB_CREATE | DB_INIT_TXN | DB_INIT_LOG | DB_INIT_LOCK |
 *   DB_INIT_MPOOL | DB_RECOVER | DB_THREAD: the region files are rebuilt
 *   and normal recovery replays the log from the last checkpoint but one,
 *   so the databases hold exactly the committed transactions.  The region
 *   files live on disk (not DB_PRIVATE) so that db5.3_stat -h DIR works
 *   while nlmd runs; nlmd's flock on the state directory keeps a second
 *   nlmd (whose DB_RECOVER would tear the regions down) away.  Before
 *   that, a store whose meta.db is there without one of the three other
 *   databases is refused (store_files_check).  Then one transaction opens
 *   or creates the four databases (meta.db last), another reads
 *   meta.db, or on a new store writes its initial values (a format-1
 *   store is migrated here); the journal records recovery passed over
 *   (store_dispatch) are folded in (store_compact.c), and meta.db is read
 *   again.  Last, the compactor and checkpoint threads start
 *   (store_ckp.c).
 *
 * SIZING (measured with bench/storebench.c on the 2-core build machine,
 * 1,000,000 lock records of ~110 bytes: 1000 hosts, 28-byte owner
 * handles, 32-byte file handles)
 *   cache      16 MiB by default (sc_cache_bytes; store-cache-mib).
 *              locks.db is 245 MB for those records (inserted in no
 *              particular key order; 126 MB in key order), but loading is
 *              one sequential pass and a turn touches few pages.  One
 *              transaction of 1M puts took 7.7 s with 64 MiB, 10.8 s with
 *              16 MiB, 7.3 s with 256 MiB; but through nlmd (2026-11-26,
 *              tools/bench-persist.sh and bench-compare.sh) 16 MiB took a
 *              million locks as fast as 64 (16-17 s), restarted with them
 *              faster (ready in 0.6-1.1 s against 0.9-1.3 s) and held
 *              them in 146 bytes of RSS per lock against 210: the cache
 *              fills whatever its size, and is most of nlmd's memory.
 *   log        16 MiB files, 4 MiB in-memory buffer.
 *   locks      Berkeley DB locks pages, not records: the 1M-record
 *              transaction held 14,937 page locks at its peak, so the lock
 *              table has room for 100,000 locks and lock objects (an 18 MB
 *              region) - some 6M such records, or 1M of ~700 bytes.  More
 *              than that in one transaction fails with STORE_NOMEM, so
 *              what may touch more -- a fold, the drop under none -- goes
 *              in transactions of STORE_LOCKS_MAX / STORE_LOCKS_PER_OP
 *              (6,250) operations (store_compact_apply, store_db_clear).
 *   pages      16 KiB btree pages: fewer page locks in big transactions
 *              and fewer page reads when loading than 4 KiB (62,618 locks,
 *              load 0.49 s), while keys with 1 KiB handles still fit.
 */
#include "store_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENV_FLAGS	(DB_CREATE | DB_INIT_TXN | DB_INIT_LOG | \
			 DB_INIT_LOCK | DB_INIT_MPOOL | DB_RECOVER | DB_THREAD)

const char *
store_strerror(enum store_status s)
{
	switch (s) {
	case STORE_OK:
		return "success";
	case STORE_NOTFOUND:
		return "no such record";
	case STORE_INVAL:
		return "invalid argument";
	case STORE_NOMEM:
		return "out of memory; transaction aborted";
	case STORE_CORRUPT:
		return "the store is damaged, or of a newer format";
	case STORE_BUSY:
		return "the store is in use elsewhere";
	case STORE_IO:
		return "store operation failed; transaction aborted";
	case STORE_FATAL:
		return "the store needs recovery (restart)";
	}
	return "unknown store status";
}

enum store_status
store_status_of(struct store *st, int rc)
{
	if (rc != 0)
		st->st_lastrc = rc;
	switch (rc) {
	case 0:
		return STORE_OK;
	case DB_RUNRECOVERY:
		st->st_fatal = true;
		return STORE_FATAL;
	case ENOMEM:
		return STORE_NOMEM;
	case DB_PAGE_NOTFOUND:
	case DB_VERIFY_BAD:
		/* A page that should be there is not: a damaged file. */
		return STORE_CORRUPT;
	case STORE_JOURNAL_GONE:
		/* So is a log without the journal: the next open refuses it. */
		return STORE_CORRUPT;
	default:
		/* EINVAL too: our arguments were checked before the call. */
		return STORE_IO;
	}
}

void
store_thread_sigset(sigset_t *ss)
{
	sigfillset(ss);
	sigdelset(ss, SIGBUS);
	sigdelset(ss, SIGSEGV);
	sigdelset(ss, SIGFPE);
	sigdelset(ss, SIGILL);
}

/* Append src to the string in dst[size], as much as fits. */
static void
store_cat(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(dst, size), n = strlen(src);

	if (len + 1 >= size)
		return;
	if (n > size - len - 1)
		n = size - len - 1;
	memcpy(dst + len, src, n);
	dst[len + n] = '\0';
}

/*
 * Copy Berkeley DB's messages (any thread may be adding one); cut short
 * when they do not fit: what is left still says why.
 */
void
store_dberr(struct store *st, char *buf, size_t len)
{
	if (len == 0)
		return;
	buf[0] = '\0';
	pthread_mutex_lock(&st->st_emu);
	store_cat(buf, len, st->st_dberr);
	if (st->st_dbmore) {
		store_cat(buf, len, "; ...; ");
		store_cat(buf, len, st->st_dblast);
	}
	pthread_mutex_unlock(&st->st_emu);
}

/* Forget Berkeley DB's messages. */
void
store_dberr_clear(struct store *st)
{
	pthread_mutex_lock(&st->st_emu);
	st->st_dberr[0] = st->st_dblast[0] = '\0';
	st->st_dbmore = false;
	pthread_mutex_unlock(&st->st_emu);
}

/*
 * The error behind a failure that is the operator's to mend where the
 * files are, not a damaged store: the file system full (or the quota
 * used up), read-only, or a permission.  Berkeley DB names it in its
 * messages ("write: ...: No space left on device", "PANIC: ...") also
 * when what it returns is DB_RUNRECOVERY: a write that failed during
 * recovery panics the environment.  0: none of these.
 */
static int
store_sys_cause(int rc, const char *text)
{
	static const int eno[] = { ENOSPC, EDQUOT, EROFS, EACCES, EPERM };
	size_t i;

	for (i = 0; i < sizeof(eno) / sizeof(eno[0]); i++)
		if (rc == eno[i])
			return rc;
	for (i = 0; i < sizeof(eno) / sizeof(eno[0]); i++)
		if (strstr(text, strerror(eno[i])) != NULL)
			return eno[i];
	return 0;
}

const char *
store_last_error(struct store *st)
{
	char dberr[STORE_DBERR_MAX];
	int rc = st->st_lastrc;

	if (rc == 0)
		return "no error";
	store_dberr(st, dberr, sizeof(dberr));
	st->st_lasterr[0] = '\0';
	/*
	 * Our own code, which Berkeley DB does not know ("Unknown error:
	 * -29001"): a round found the log without what it had to fold.
	 */
	store_cat(st->st_lasterr, sizeof(st->st_lasterr),
	    rc == STORE_JOURNAL_GONE ? "the log no longer holds the journal "
	    "from its folded position on: log files were removed outside "
	    "nlmd, and locks committed after it may be lost (the next start "
	    "refuses the store)" : db_strerror(rc));
	if (dberr[0] != '\0') {
		store_cat(st->st_lasterr, sizeof(st->st_lasterr), " (");
		store_cat(st->st_lasterr, sizeof(st->st_lasterr), dberr);
		store_cat(st->st_lasterr, sizeof(st->st_lasterr), ")");
	}
	/*
	 * A system error (a full or failing disk, a permission) is the
	 * operator's to fix, where the files are; also when Berkeley DB
	 * panicked on it (DB_RUNRECOVERY, its messages naming the error).
	 */
	if (rc > 0 || rc == STORE_JOURNAL_GONE ||
	    store_sys_cause(rc, dberr) != 0) {
		store_cat(st->st_lasterr, sizeof(st->st_lasterr),
		    "; state directory ");
		store_cat(st->st_lasterr, sizeof(st->st_lasterr), st->st_dir);
	}
	return st->st_lasterr;
}

/*
 * Berkeley DB's error messages, kept for err[]: all of them, as far as
 * they fit, and the last.  Only the last would often hide the reason:
 * a failed recovery says why first ("file locks.db has LSN 1/3919704,
 * past end of log at 1/1999936", in four messages), then what failed
 * in consequence, down to "unable to join the environment".
 */
static void
store_errcall(const DB_ENV *env, const char *pfx, const char *msg)
{
	struct store *st = env->app_private;
	size_t len;

	(void)pfx;
	pthread_mutex_lock(&st->st_emu);
	len = strlen(st->st_dberr);
	if (len == 0)
		store_cat(st->st_dberr, sizeof(st->st_dberr), msg);
	else if (!st->st_dbmore && len + 2 + strlen(msg) <
	    sizeof(st->st_dberr)) {
		store_cat(st->st_dberr, sizeof(st->st_dberr), "; ");
		store_cat(st->st_dberr, sizeof(st->st_dberr), msg);
	} else
		st->st_dbmore = true;
	/* A long one is cut short: its beginning says what it is. */
	st->st_dblast[0] = '\0';
	store_cat(st->st_dblast, sizeof(st->st_dblast), msg);
	pthread_mutex_unlock(&st->st_emu);
}

/* err := "<what>: <db_strerror(rc)>[ (<last Berkeley DB message>)]". */
static enum store_status
store_report(struct store *st, int rc, const char *what, char *err,
    size_t errlen)
{
	char dberr[STORE_DBERR_MAX];

	if (err != NULL && errlen > 0) {
		store_dberr(st, dberr, sizeof(dberr));
		snprintf(err, errlen, "%s: %s%s%s%s", what, db_strerror(rc),
		    dberr[0] ? " (" : "", dberr, dberr[0] ? ")" : "");
	}
	return store_status_of(st, rc);
}

uint64_t
store_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Recovery hands every log record of a type it does not know to the
 * application.  Ours (the journal, store_commit.c) are redone by our own
 * fold after recovery (store_compact_open), so recovery passes over them;
 * anything else is not ours and fails recovery.
 */
static int
store_dispatch(DB_ENV *env, DBT *rec, DB_LSN *lsn, db_recops op)
{
	uint32_t type;

	(void)env;
	(void)lsn;
	(void)op;
	if (rec->size < STORE_LOGREC_HDR)
		return EINVAL;
	memcpy(&type, rec->data, sizeof(type));
	return type == STORE_LOGREC ? 0 : EINVAL;
}

_Atomic unsigned store_lk_max;

/* The page locks one transaction may hold (store_test_lk_max()). */
static unsigned
store_lkmax(void)
{
	unsigned n = atomic_load(&store_lk_max);

	return n != 0 ? n : STORE_LOCKS_MAX;
}

/*
 * Size the environment (only effective when the regions are created,
 * which DB_RECOVER does at every open).
 */
static int
store_env_config(DB_ENV *env, size_t cache)
{
	unsigned lkmax;
	int rc;

	if (cache == 0)
		cache = STORE_CACHE_DEFAULT;
	lkmax = store_lkmax();
	env->set_errcall(env, store_errcall);
	if ((rc = env->set_app_dispatch(env, store_dispatch)) != 0 ||
	    (rc = env->set_cachesize(env, (u_int32_t)(cache >> 30),
	    (u_int32_t)(cache & ((1u << 30) - 1)), 1)) != 0 ||
	    (rc = env->set_lg_max(env, STORE_LOG_FILE_BYTES)) != 0 ||
	    (rc = env->set_lg_bsize(env, STORE_LOG_BUF_BYTES)) != 0 ||
	    (rc = env->set_lk_max_locks(env, lkmax)) != 0 ||
	    (rc = env->set_lk_max_objects(env, lkmax)) != 0 ||
	    (rc = env->set_lk_detect(env, DB_LOCK_DEFAULT)) != 0)
		return rc;
	/*
	 * The region files (__db.*, the cache among them) are mapped.  Left
	 * sparse, as Berkeley DB makes them otherwise, each page takes its
	 * space on the file system when first touched: with the file system
	 * full, that is a SIGBUS -- at the load, or later -- and nlmd died
	 * without a word.  Written in full when created (at every open:
	 * DB_RECOVER rebuilds them), a full file system fails the open with
	 * ENOSPC instead.  It costs a write of the regions (~19 MB at the
	 * default cache size) and their pages resident from the start.
	 * The cache's region is created small and grows as pages are cached:
	 * store_regions_reserve() allocates the room it grows into.
	 */
	return env->set_flags(env, DB_REGION_INIT, 1);
}

/*
 * An existing store (meta.db is there) must have its three record
 * databases before recovery runs.  One that was lost (removed by hand,
 * left out of a restore) would be created anew, empty, by the open
 * (DB_CREATE), and the hosts, locks or shares it held forgotten without a
 * word.  Nor may recovery run without it: it passes over the file's
 * changes in the log, and once another checkpoint follows its own (ours
 * at close, an operator's), recovery starts past them: the file, put
 * back, would silently miss what was written to it since the last
 * checkpoint before a crash.  meta.db is created last, in the
 * transaction that creates the others (store_dbs_open): while it exists
 * they were all created, and if that transaction did not commit,
 * recovery removes meta.db with them.
 */
static enum store_status
store_files_check(const char *dir, char *err, size_t errlen)
{
	static const char *const name[] = { "hosts.db", "locks.db",
	    "shares.db" };
	static const char *const held[] = { "hosts", "locks", "shares" };
	char path[PATH_MAX];
	struct stat sb;
	size_t i;

	snprintf(path, sizeof(path), "%s/meta.db", dir);
	if (stat(path, &sb) == -1)
		return STORE_OK;	/* a new store, or meta.db lost (later) */
	for (i = 0; i < sizeof(name) / sizeof(name[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, name[i]);
		/* Other failures are the environment open's to report. */
		if (stat(path, &sb) == -1 && errno == ENOENT) {
			snprintf(err, errlen, "%s is missing from %s while "
			    "meta.db is there: it was removed outside nlmd or "
			    "left out of a restore, and the %s it held would "
			    "be lost; refusing to open (put it back; if it is "
			    "lost for good, moving the directory aside starts "
			    "nlmd empty)", name[i], dir, held[i]);
			return STORE_CORRUPT;
		}
	}
	return STORE_OK;
}

/* Is `name' one of the store's files (store_codec.c, ENVIRONMENT)? */
static bool
store_file_ours(const char *name)
{
	return strcmp(name, "meta.db") == 0 || strcmp(name, "hosts.db") == 0 ||
	    strcmp(name, "locks.db") == 0 || strcmp(name, "shares.db") == 0 ||
	    strncmp(name, "log.", 4) == 0 || strncmp(name, "__db.", 5) == 0;
}

/*
 * Every file of the store must be ours to read and write.  One that is
 * not (restored by root, say, for an nlmd that runs as its own user)
 * fails the recovery half-way, and Berkeley DB then says "PANIC:
 * Permission denied ... run database recovery", which reads as damage.
 */
static enum store_status
store_files_access(const char *dir, char *err, size_t errlen)
{
	enum store_status s = STORE_OK;
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	/* Other failures are the environment open's to report. */
	if ((d = opendir(dir)) == NULL)
		return STORE_OK;
	while (s == STORE_OK && (de = readdir(d)) != NULL) {
		if (!store_file_ours(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (access(path, R_OK | W_OK) == -1 && (errno == EACCES ||
		    errno == EPERM)) {
			snprintf(err, errlen, "%s in %s cannot be read and "
			    "written by nlmd (uid %u): %s; refusing to open "
			    "(give the store's files to the user nlmd runs as, "
			    "mode 0600)", de->d_name, dir, (unsigned)geteuid(),
			    strerror(errno));
			s = STORE_IO;
		}
	}
	closedir(d);
	return s;
}

/*
 * Berkeley DB creates two region files small and extends them as they
 * fill, writing only the last page of each extension (and not even
 * failing when that write does): the cache's (__db.003; 0.8 MB at the
 * default cache, up to about the cache size as pages are cached) and the
 * environment's main region (__db.001, which holds the lock table: 17
 * MB at the start, 36 MB after a fold of 80,000 locks, up to its
 * memory_max, 53 MiB with nlmd's settings).  What lies before is a hole
 * of a mapped file: on a full file system the first touch of one is a
 * SIGBUS.  Seen on a tmpfs with 2 MiB left and 12,000 locks taken: the
 * compactor's fold split a page into such a hole (__bam_split), and nlmd
 * died without a word, exit status 135.  DB_REGION_INIT fills the
 * regions when they are created only.  So the open allocates the blocks
 * both may grow into (fallocate, the file's size kept): a file system
 * without room fails the open with ENOSPC instead, and a running nlmd
 * no longer needs any for its regions.  The cache's file is the region
 * file whose size is nearest above the mpool region's (memp_stat: a few
 * KiB past it); a file system that cannot allocate (EOPNOTSUPP) is left
 * as it was.
 * A code.
 */
#define STORE_REGION_SLACK	(1u << 20)	/* alignment, the last page */
#define STORE_REGION_NEAR	(64u << 10)	/* a region file's size past
						   its region's: the last
						   page written, alignment */
#define STORE_REGION_MAIN	"__db.001"	/* the environment's region */

/* Allocate the blocks of dir/file up to bytes (its size kept). */
static int
store_region_room(struct store *st, const char *dir, const char *file,
    unsigned long long bytes, const char *what)
{
	char path[PATH_MAX + 256];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return errno;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes) == -1 &&
	    errno != EOPNOTSUPP && errno != ENOSYS) {
		rc = errno;
		snprintf(path, sizeof(path), "fallocate %s/%s, %llu MiB, the "
		    "room of %s at its largest: %s", dir, file,
		    (bytes + (1u << 20) - 1) >> 20, what, strerror(rc));
		store_errcall(st->st_env, NULL, path);
	}
	close(fd);
	return rc;
}

/* The cache's region file: the one nearest above the mpool region's size. */
static int
store_region_cache(struct store *st, const char *dir)
{
	char path[PATH_MAX], best[NAME_MAX + 1] = "";
	DB_MPOOL_STAT *ms;
	unsigned long long regsize, regmax, size, bestsize = 0;
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int rc;

	if ((rc = st->st_env->memp_stat(st->st_env, &ms, NULL, 0)) != 0)
		return rc;
	regsize = (unsigned long long)ms->st_regsize;
	regmax = (unsigned long long)ms->st_regmax;
	free(ms);
	if (regmax <= regsize)
		return 0;
	if ((d = opendir(dir)) == NULL)
		return errno;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "__db.", 5) != 0 ||
		    strcmp(de->d_name, STORE_REGION_MAIN) == 0 ||
		    strlen(de->d_name) >= sizeof(best))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &sb) == -1 || !S_ISREG(sb.st_mode))
			continue;
		size = (unsigned long long)sb.st_size;
		if (size >= regsize && size < regsize + STORE_REGION_NEAR &&
		    (best[0] == '\0' || size < bestsize)) {
			snprintf(best, sizeof(best), "%s", de->d_name);
			bestsize = size;
		}
	}
	closedir(d);
	if (best[0] == '\0')
		return 0;
	/* How much: it follows the cache size, not a constant. */
	return store_region_room(st, dir, best, regmax + STORE_REGION_SLACK,
	    "the cache's region, which follows store-cache-mib");
}

static int
store_regions_reserve(struct store *st, const char *dir)
{
	u_int32_t gb, bytes;
	int rc;

	if ((rc = store_region_cache(st, dir)) != 0 ||
	    (rc = st->st_env->get_memory_max(st->st_env, &gb, &bytes)) != 0)
		return rc;
	return store_region_room(st, dir, STORE_REGION_MAIN,
	    ((unsigned long long)gb << 30) + bytes + STORE_REGION_SLACK,
	    "the environment's region (its lock table)");
}

static enum store_status
store_env_open(struct store *st, const struct store_config *cf, char *err,
    size_t errlen)
{
	enum store_status s;
	char what[512];
	int rc;

	snprintf(what, sizeof(what), "cannot open the environment in %s",
	    cf->sc_dir);
	if ((rc = db_env_create(&st->st_env, 0)) != 0) {
		st->st_env = NULL;
		return store_report(st, rc, what, err, errlen);
	}
	st->st_env->app_private = st;
	st->st_kchunk = store_lkmax() / STORE_LOCKS_PER_OP;
	if ((rc = store_env_config(st->st_env, cf->sc_cache_bytes)) != 0 ||
	    (rc = st->st_env->open(st->st_env, cf->sc_dir, ENV_FLAGS,
	    0600)) != 0) {
		s = store_report(st, rc, what, err, errlen);
		return rc == EBUSY || rc == EAGAIN ? STORE_BUSY : s;
	}
	if ((rc = store_regions_reserve(st, cf->sc_dir)) != 0)
		return store_report(st, rc, "cannot allocate room for the "
		    "region files", err, errlen);
	return STORE_OK;
}

/*
 * Open (or create) one btree database inside txn; `chksum': with page
 * checksums.
 *
 * DB_CHKSUM: a page read from disk is checked (a database created
 * without it, before nlmd set it, stays without).  Unchecked, a page of
 * garbage is walked as it is: a btree search on a bad root page of
 * hosts.db looped for ever at the load, nlmd hung before it served;
 * checked, the read fails and nlmd exits saying so.  Not locks.db: a
 * checksum is a byte-by-byte hash of the 16 KiB page at every write and
 * read from disk, and folding the journal into a locks.db larger than the
 * cache evicts and reads pages all the time -- a million locks folded in
 * 33 s against 13, deleted in 47 against 17, recovered after a crash in
 * 36 against 13 (storebench -n 1000000), and memory handed back some
 * 60 s after a million locks are released instead of 15.  Its load walk
 * checks the key order instead (store_load.c), which a looping chain of
 * pages breaks, and that it read as many records as meta.db counts
 * (meta "locks"), which a chain cut short or passing over a page does
 * not have.
 */
static int
store_db_open(struct store *st, DB_TXN *txn, const char *file, bool chksum,
    DB **dbp)
{
	DB *db;
	int rc;

	if ((rc = db_create(&db, st->st_env, 0)) != 0)
		return rc;
	if ((rc = db->set_pagesize(db, STORE_PAGE_BYTES)) != 0 ||
	    (chksum && (rc = db->set_flags(db, DB_CHKSUM)) != 0) ||
	    (rc = db->open(db, txn, file, NULL, DB_BTREE,
	    DB_CREATE | DB_THREAD, 0600)) != 0) {
		(void)db->close(db, 0);
		return rc;
	}
	*dbp = db;
	return 0;
}

/* Read meta value `name'; DB_NOTFOUND when absent, EINVAL if corrupt. */
static int
store_meta_get(struct store *st, DB_TXN *txn, const char *name,
    uint64_t *out)
{
	DBT k, v;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.data = (void *)(uintptr_t)name;
	k.size = (u_int32_t)strlen(name);
	v.data = st->st_val;
	v.ulen = sizeof(st->st_val);
	v.flags = DB_DBT_USERMEM;
	/* Longer than any value: one that does not decode, not an I/O error. */
	if ((rc = st->st_meta->get(st->st_meta, txn, &k, &v, 0)) != 0)
		return rc == DB_BUFFER_SMALL ? EINVAL : rc;
	return store_dec_meta(v.data, v.size, out) == NULL ? 0 : EINVAL;
}

int
store_meta_put(struct store *st, DB_TXN *txn, const char *name, uint64_t val)
{
	uint8_t buf[16];	/* not st_val: the compactor calls this too */
	DBT k, v;

	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.data = (void *)(uintptr_t)name;
	k.size = (u_int32_t)strlen(name);
	v.data = buf;
	v.size = (u_int32_t)store_enc_meta(buf, val);
	return st->st_meta->put(st->st_meta, txn, &k, &v, 0);
}

/* The meta names of the counts of st_nrec.nr_n[0] and [1]. */
static const char *const store_nrec_name[2] = { "locks", "shares" };

int
store_nrec_put(struct store *st, DB_TXN *txn, const struct store_nrec *was,
    const struct store_nrec *nr)
{
	int i, rc;

	for (i = 0; i < 2; i++)
		if (nr->nr_known[i] && (was == NULL || !was->nr_known[i] ||
		    was->nr_n[i] != nr->nr_n[i]) &&
		    (rc = store_meta_put(st, txn, store_nrec_name[i],
		    nr->nr_n[i])) != 0)
			return rc;
	return 0;
}

/*
 * Read the counts of records (meta "locks", "shares") into st_nrec; one
 * that is absent is not known.  A code (EINVAL: one does not decode).
 */
static int
store_nrec_get(struct store *st, DB_TXN *txn)
{
	struct store_nrec *nr = &st->st_nrec;
	int i, rc;

	for (i = 0; i < 2; i++) {
		nr->nr_n[i] = 0;
		rc = store_meta_get(st, txn, store_nrec_name[i], &nr->nr_n[i]);
		if (rc != 0 && rc != DB_NOTFOUND)
			return rc;
		nr->nr_known[i] = rc == 0;
	}
	return 0;
}

/* A new store: its initial meta values. */
static int
store_meta_create(struct store *st, DB_TXN *txn)
{
	struct store_meta *m = &st->st_cur;
	int rc;

	m->sm_format = STORE_FORMAT;
	m->sm_epoch = 0;
	m->sm_token = 0;
	m->sm_next_host = 1;
	memset(&st->st_nrec, 0, sizeof(st->st_nrec));
	st->st_nrec.nr_known[0] = st->st_nrec.nr_known[1] = true;
	if ((rc = store_meta_put(st, txn, "format", m->sm_format)) != 0 ||
	    (rc = store_meta_put(st, txn, "epoch", m->sm_epoch)) != 0 ||
	    (rc = store_meta_put(st, txn, "token", m->sm_token)) != 0 ||
	    (rc = store_meta_put(st, txn, "nexthost", m->sm_next_host)) != 0 ||
	    (rc = store_nrec_put(st, txn, NULL, &st->st_nrec)) != 0)
		return rc;
	st->st_info.si_created = true;
	return 0;
}

/* *emptyp := does db hold no record at all?  A code. */
static int
store_db_empty(DB *db, DB_TXN *txn, bool *emptyp)
{
	DBC *c;
	DBT k, v;
	int rc, rc2;

	if ((rc = db->cursor(db, txn, &c, 0)) != 0)
		return rc;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.flags = v.flags = DB_DBT_PARTIAL;	/* whether, not what */
	rc = c->get(c, &k, &v, DB_FIRST);
	*emptyp = rc == DB_NOTFOUND;
	if ((rc2 = c->close(c)) != 0 && (rc == 0 || rc == DB_NOTFOUND))
		rc = rc2;
	return rc == DB_NOTFOUND ? 0 : rc;
}

/*
 * meta.db has no format: a new store, if nothing at all is stored.  Not
 * when meta.db was lost (deleted, left out of a restore) or damaged while
 * the other databases kept their records: started anew it would give out
 * host ids (and with them the stored hosts' locks) and fencing tokens
 * again.  STORE_OK when new.
 */
static enum store_status
store_meta_new(struct store *st, DB_TXN *txn, char *err, size_t errlen)
{
	DB *dbs[] = { st->st_meta, st->st_hosts, st->st_locks,
	    st->st_shares };
	bool empty = true;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(dbs) / sizeof(dbs[0]) && empty; i++)
		if ((rc = store_db_empty(dbs[i], txn, &empty)) != 0)
			return store_report(st, rc, "cannot read the databases",
			    err, errlen);
	if (!empty) {
		snprintf(err, errlen, "meta.db in %s has no format, yet the "
		    "store holds records: meta.db was lost or damaged; "
		    "refusing to start the store anew", st->st_dir);
		return STORE_CORRUPT;
	}
	return STORE_OK;
}

/* Read the meta values of an existing store; check its format. */
static enum store_status
store_meta_load(struct store *st, DB_TXN *txn, char *err, size_t errlen)
{
	struct store_meta *m = &st->st_cur;
	enum store_status s;
	int rc;

	if ((rc = store_meta_get(st, txn, "format", &m->sm_format)) ==
	    DB_NOTFOUND) {
		if ((s = store_meta_new(st, txn, err, errlen)) != STORE_OK)
			return s;
		if ((rc = store_meta_create(st, txn)) != 0)
			return store_report(st, rc, "cannot initialise meta.db",
			    err, errlen);
		return STORE_OK;
	}
	if (rc == 0 && m->sm_format > STORE_FORMAT) {
		snprintf(err, errlen, "the store in %s has format %llu, newer "
		    "than this nlmd knows (%d); refusing to open it",
		    st->st_dir, (unsigned long long)m->sm_format, STORE_FORMAT);
		return STORE_CORRUPT;
	}
	if (rc == 0 && m->sm_format == 0)
		rc = EINVAL;
	if (rc == 0 && (rc = store_meta_get(st, txn, "epoch",
	    &m->sm_epoch)) == 0 && (rc = store_meta_get(st, txn, "token",
	    &m->sm_token)) == 0)
		rc = store_meta_get(st, txn, "nexthost", &m->sm_next_host);
	if (rc == EINVAL || rc == DB_NOTFOUND) {
		snprintf(err, errlen, "meta.db in %s: a value is missing or "
		    "does not decode", st->st_dir);
		return STORE_CORRUPT;
	}
	return rc == 0 ? STORE_OK : store_report(st, rc, "cannot read meta.db",
	    err, errlen);
}

static enum store_status
store_dbs_open(struct store *st, char *err, size_t errlen)
{
	enum store_status s;
	DB_TXN *txn;
	int rc;

	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return store_report(st, rc, "cannot begin a transaction", err,
		    errlen);
	/* meta.db last: it exists only with the others (store_files_check). */
	if ((rc = store_db_open(st, txn, "hosts.db", true,
	    &st->st_hosts)) != 0 ||
	    (rc = store_db_open(st, txn, "locks.db", false,
	    &st->st_locks)) != 0 ||
	    (rc = store_db_open(st, txn, "shares.db", true,
	    &st->st_shares)) != 0 ||
	    (rc = store_db_open(st, txn, "meta.db", true,
	    &st->st_meta)) != 0) {
		s = store_report(st, rc, "cannot open the databases", err,
		    errlen);
		goto fail;
	}
	if ((rc = txn->commit(txn, DB_TXN_SYNC)) != 0)
		return store_report(st, rc, "cannot commit the databases' "
		    "creation", err, errlen);
	return STORE_OK;
fail:
	(void)txn->abort(txn);
	return s;
}

/*
 * A format-1 store journalled in two databases: fold them (older entries
 * first), then remove them and mark the store format 2, in one
 * transaction.  A code.
 */
static int
store_migrate_v1(struct store *st)
{
	static const char *const name[2] = { "journal0.db", "journal1.db" };
	DB *j[2] = { NULL, NULL };
	DB_TXN *txn;
	int rc, i;

	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return rc;
	for (i = 0; i < 2 && rc == 0; i++)
		rc = store_db_open(st, txn, name[i], false, &j[i]);
	/* A commit frees txn even when it fails: no abort after it. */
	if (rc != 0)
		(void)txn->abort(txn);
	else if ((rc = txn->commit(txn, 0)) == 0)
		rc = store_compact_v1(st, j);
	for (i = 0; i < 2; i++)
		if (j[i] != NULL)
			(void)j[i]->close(j[i], 0);
	if (rc != 0)
		return rc;
	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return rc;
	for (i = 0; i < 2 && rc == 0; i++)
		rc = st->st_env->dbremove(st->st_env, txn, name[i], NULL, 0);
	if (rc == 0)
		rc = store_meta_put(st, txn, "format", STORE_FORMAT);
	if (rc != 0) {
		(void)txn->abort(txn);
		return rc;
	}
	return txn->commit(txn, DB_TXN_SYNC);
}

/*
 * Read the meta values (creating a new store's), the counts of records
 * (st_nrec) and, with posp, the journal's folded position (meta
 * "journal"; 0 when absent), in a transaction of their own.
 */
static enum store_status
store_meta_read(struct store *st, uint64_t *posp, char *err, size_t errlen)
{
	enum store_status s;
	DB_TXN *txn;
	int rc;

	if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) != 0)
		return store_report(st, rc, "cannot begin a transaction", err,
		    errlen);
	if ((s = store_meta_load(st, txn, err, errlen)) != STORE_OK) {
		(void)txn->abort(txn);
		return s;
	}
	if (posp != NULL && (rc = store_meta_get(st, txn, "journal",
	    posp)) == DB_NOTFOUND) {
		*posp = 0;
		rc = 0;
	}
	if (rc == 0)
		rc = store_nrec_get(st, txn);
	if (rc == EINVAL) {
		(void)txn->abort(txn);
		snprintf(err, errlen, "meta.db in %s: the journal position "
		    "or a count of records does not decode", st->st_dir);
		return STORE_CORRUPT;
	}
	/* A commit frees txn even when it fails: no abort after it. */
	if (rc != 0)
		(void)txn->abort(txn);
	else
		rc = txn->commit(txn, DB_TXN_SYNC);
	if (rc != 0)
		return store_report(st, rc, "cannot read meta.db", err,
		    errlen);
	return STORE_OK;
}

/*
 * Migrate a format-1 store, fold what the journal holds after its folded
 * position (a crash left it there), then read the meta values.
 */
static enum store_status
store_journals_open(struct store *st, char *err, size_t errlen)
{
	uint64_t pos, t0 = store_now_ms();
	enum store_status s;
	int rc;

	if ((s = store_meta_read(st, &pos, err, errlen)) != STORE_OK)
		return s;
	st->st_jfold.file = (u_int32_t)(pos >> 32);
	st->st_jfold.offset = (u_int32_t)pos;
	if (st->st_cur.sm_format < 2 && (rc = store_migrate_v1(st)) != 0)
		return store_report(st, rc, "cannot fold the format-1 "
		    "journals", err, errlen);
	if ((rc = store_compact_open(st)) == STORE_JOURNAL_GONE) {
		snprintf(err, errlen, "the log of %s does not hold the "
		    "journal from its folded position (log file %u, offset "
		    "%u) on: log files were removed outside nlmd, and locks "
		    "committed after it may be lost; refusing to open",
		    st->st_dir, st->st_jfold.file, st->st_jfold.offset);
		return STORE_CORRUPT;
	}
	if (rc != 0)
		return store_report(st, rc, "cannot fold the journal", err,
		    errlen);
	st->st_info.si_fold_ms = store_now_ms() - t0;
	if ((s = store_meta_read(st, NULL, err, errlen)) != STORE_OK)
		return s;
	st->st_new = st->st_sealed_meta = st->st_cur;
	return STORE_OK;
}

/*
 * Delete every record of db, st_kchunk to a transaction (a truncate, or
 * one transaction for all, locks every page: more than the lock table
 * has for a big store, and the open failed); the last commit is synced.
 * Each transaction stores the count of records (st_nrec.nr_n[i]) it
 * leaves, when known: 0 with the last, which found no more.  A code.
 */
static int
store_db_clear(struct store *st, DB *db, int i)
{
	struct store_nrec nr;
	DB_TXN *txn;
	DBC *c;
	DBT k, v;
	size_t n;
	int rc, rc2;

	for (;;) {
		if ((rc = st->st_env->txn_begin(st->st_env, NULL, &txn, 0)) !=
		    0)
			return rc;
		if ((rc = db->cursor(db, txn, &c, 0)) != 0) {
			(void)txn->abort(txn);
			return rc;
		}
		memset(&k, 0, sizeof(k));
		memset(&v, 0, sizeof(v));
		k.flags = v.flags = DB_DBT_PARTIAL;	/* which, not what */
		for (n = 0; n < st->st_kchunk &&
		    (rc = c->get(c, &k, &v, DB_NEXT)) == 0; n++)
			if ((rc = c->del(c, 0)) != 0)
				break;
		if ((rc2 = c->close(c)) != 0 && (rc == 0 ||
		    rc == DB_NOTFOUND))
			rc = rc2;
		nr = st->st_nrec;
		nr.nr_n[i] = rc == DB_NOTFOUND || n > nr.nr_n[i] ? 0 :
		    nr.nr_n[i] - n;
		if ((rc != 0 && rc != DB_NOTFOUND) ||
		    (rc2 = store_nrec_put(st, txn, &st->st_nrec, &nr)) != 0) {
			(void)txn->abort(txn);
			return rc != 0 && rc != DB_NOTFOUND ? rc : rc2;
		}
		/* A failed commit frees the transaction too: no abort. */
		if ((rc2 = txn->commit(txn, rc == DB_NOTFOUND ? DB_TXN_SYNC :
		    DB_TXN_WRITE_NOSYNC)) != 0)
			return rc2;
		st->st_nrec = nr;
		if (rc == DB_NOTFOUND)
			return 0;
	}
}

/*
 * durability none stores no lock or share: what an earlier run under sync
 * or log left is dropped at open.  Kept, it came back as reclaimable at
 * every start under none (its deletes are not staged), and again, long
 * stale, after a switch back to sync or log.  In parts (store_db_clear):
 * a crash in the middle leaves some, which the next start under none
 * drops.
 */
static enum store_status
store_none_forget(struct store *st, char *err, size_t errlen)
{
	int rc;

	if ((rc = store_db_clear(st, st->st_locks, 0)) != 0 ||
	    (rc = store_db_clear(st, st->st_shares, 1)) != 0)
		return store_report(st, rc, "cannot drop the locks stored "
		    "before (durability none)", err, errlen);
	return STORE_OK;
}

/*
 * A failed open's message ends with where an operator reads on, unless
 * it says what to do itself (those of store_files_check and the like):
 * Berkeley DB's own ends with "run database recovery", which nlmd did.
 * A full or read-only file system, or a permission, is said as such:
 * recovery panics on a write that fails (DB_RUNRECOVERY), which read as
 * a damaged store -- and an operator who believed it would restore a
 * copy or start empty, losing locks, where freeing space was all it
 * took.
 */
static void
store_open_hint(struct store *st, enum store_status s, char *err,
    size_t errlen)
{
	size_t len = strlen(err);
	int rc = st->st_lastrc;

	if ((s != STORE_FATAL && s != STORE_IO && s != STORE_CORRUPT) ||
	    strstr(err, "refusing") != NULL)
		return;
	switch (store_sys_cause(rc, err)) {
	case ENOSPC:
	case EDQUOT:
		snprintf(err + len, errlen - len, " -- the file system of %s "
		    "is full (or the quota used up); the store is not "
		    "damaged: free space there and start nlmd again (besides "
		    "its databases it needs room for Berkeley DB's region "
		    "files, rebuilt at every start, about 75 MiB at the "
		    "default cache size, more with a larger store-cache-mib, "
		    "and for its log to go on to a new 16 MiB "
		    "file): see README, \"The state directory\"", st->st_dir);
		return;
	case EROFS:
		snprintf(err + len, errlen - len, " -- the file system of %s "
		    "is read-only; the store is not damaged: make it "
		    "writable and start nlmd again", st->st_dir);
		return;
	case EACCES:
	case EPERM:
		snprintf(err + len, errlen - len, " -- nlmd (uid %u) may not "
		    "write %s or a file in it; the store is not damaged: "
		    "give the directory (mode 0700) and its files (0600) to "
		    "the user nlmd runs as, then start nlmd again",
		    (unsigned)geteuid(), st->st_dir);
		return;
	}
	snprintf(err + len, errlen - len, "%s", s == STORE_IO ?
	    " -- unless the file system is full, read-only or denies "
	    "access, a file of the store is damaged or missing: see "
	    "README, \"When the store is damaged\"" :
	    " -- a file of the store is damaged or missing, and recovery "
	    "cannot mend it: see README, \"When the store is damaged\"");
}

/* Safe on a partly constructed handle. */
static void
store_destroy(struct store *st)
{
	DB **dbs[] = { &st->st_meta, &st->st_hosts, &st->st_locks,
	    &st->st_shares };
	size_t i;
	bool halt;

	store_txn_discard(st);
	/* What was sealed is committed before anything closes... */
	if (st->st_csync) {
		(void)store_commit_wait(st, st->st_sealed);
		store_compactor_stop(st);
		/* ... and folded, so the next open has nothing to do. */
		if (store_commit_error(st) == STORE_OK && st->st_meta != NULL)
			(void)store_compact_round(st);
	}
	store_commit_stop(st);
	store_ckp_stop(st->st_ckp);
	st->st_ckp = NULL;
	/*
	 * A last checkpoint makes the next open's recovery short.  Not
	 * after a failed journal append (st_lhalt): writing a page out
	 * flushes the log first, with the failed record in its buffer;
	 * the databases close without writing their pages either.
	 */
	halt = atomic_load(&st->st_lhalt);
	if (st->st_env != NULL && st->st_meta != NULL && !st->st_fatal &&
	    !halt)
		(void)store_ckp_run(st->st_env, &st->st_jkeep,
		    &st->st_info.si_logs_removed, NULL);
	for (i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++)
		if (*dbs[i] != NULL) {
			(void)(*dbs[i])->close(*dbs[i], halt ? DB_NOSYNC : 0);
			*dbs[i] = NULL;
		}
	if (st->st_env != NULL)
		(void)st->st_env->close(st->st_env, 0);
	pthread_mutex_destroy(&st->st_emu);
	free(st->st_dir);
	free(st);
}

enum store_status
store_open(const struct store_config *cf, struct store **stp, char *err,
    size_t errlen)
{
	struct store *st;
	enum store_status s;
	uint64_t t0 = store_now_ms();

	*stp = NULL;
	if (cf == NULL || cf->sc_dir == NULL ||
	    cf->sc_durability > STORE_NONE) {
		snprintf(err, errlen, "store_open: bad configuration");
		return STORE_INVAL;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->st_dir = strdup(cf->sc_dir)) == NULL) {
		free(st);
		snprintf(err, errlen, "store_open: out of memory");
		return STORE_NOMEM;
	}
	pthread_mutex_init(&st->st_emu, NULL);
	st->st_durability = cf->sc_durability;
	st->st_efd = -1;
	if (getrandom(st->st_fkey, sizeof(st->st_fkey), 0) !=
	    (ssize_t)sizeof(st->st_fkey)) {
		snprintf(err, errlen, "store_open: getrandom: %s",
		    strerror(errno));
		pthread_mutex_destroy(&st->st_emu);
		free(st->st_dir);
		free(st);
		return STORE_IO;
	}
	if ((s = store_files_check(st->st_dir, err, errlen)) == STORE_OK &&
	    (s = store_files_access(st->st_dir, err, errlen)) == STORE_OK &&
	    (s = store_env_open(st, cf, err, errlen)) == STORE_OK)
		st->st_info.si_recover_ms = store_now_ms() - t0;
	if (s != STORE_OK ||
	    (s = store_dbs_open(st, err, errlen)) != STORE_OK ||
	    (s = store_commit_start(st, err, errlen)) != STORE_OK ||
	    (s = store_journals_open(st, err, errlen)) != STORE_OK ||
	    (st->st_durability == STORE_NONE &&
	    (s = store_none_forget(st, err, errlen)) != STORE_OK) ||
	    (s = store_compactor_start(st, err, errlen)) != STORE_OK ||
	    (s = store_ckp_start(st, cf->sc_checkpoint_sec != 0 ?
	    cf->sc_checkpoint_sec : STORE_CKP_SEC_DEFAULT, err, errlen)) !=
	    STORE_OK) {
		store_open_hint(st, s, err, errlen);
		store_destroy(st);
		return s;
	}
	st->st_info.si_open_ms = store_now_ms() - t0;
	/* A failure from now on is reported with its own messages only. */
	store_dberr_clear(st);
	*stp = st;
	return STORE_OK;
}

void
store_close(struct store *st)
{
	if (st != NULL)
		store_destroy(st);
}

enum store_status
store_epoch_begin(struct store *st, uint64_t min_epoch, uint64_t *epochp,
    char *err, size_t errlen)
{
	enum store_status s;
	uint64_t epoch;

	if (store_pending(st)) {
		snprintf(err, errlen, "store_epoch_begin: a turn is pending");
		return STORE_INVAL;
	}
	if (st->st_sealed_meta.sm_epoch == UINT64_MAX) {
		snprintf(err, errlen, "the stored epoch is exhausted");
		return STORE_CORRUPT;
	}
	epoch = st->st_sealed_meta.sm_epoch + 1;
	if (epoch < min_epoch)
		epoch = min_epoch;
	store_require_flush(st);
	if ((s = store_put_epoch(st, epoch)) != STORE_OK ||
	    (s = store_commit(st)) != STORE_OK) {
		/* Why (a full disk, say) and where, not only that. */
		snprintf(err, errlen, "cannot store epoch %llu: %s: %s",
		    (unsigned long long)epoch, store_strerror(s),
		    store_last_error(st));
		return s;
	}
	*epochp = epoch;
	return STORE_OK;
}

void
store_info(const struct store *st, struct store_info *si)
{
	struct store_meta cur;
	uint64_t nckp, nremoved, nnear;

	store_commit_info(st, si, &cur);
	si->si_epoch = cur.sm_epoch;
	si->si_token = cur.sm_token;
	si->si_next_host = cur.sm_next_host;
	store_ckp_counts(st->st_ckp, &nckp, &nremoved, &nnear);
	si->si_checkpoints += nckp;
	si->si_logs_removed += nremoved;
	si->si_log_syncs_near += nnear;
}
