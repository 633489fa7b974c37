/*
 * test_damage.c - a state directory damaged between two runs: the open or
 * the load fails, in time, with a message that names the file and says
 * why; it never hangs, crashes, or loads less than was stored.
 *
 * Each open of a damaged store runs in a child process under an alarm
 * (DAMAGE_SECS): a hang or a crash there fails the test instead of
 * stopping the binary.  The child reports through a pipe: the status of
 * the open or of the load, and the message.
 */
#include "stt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "store_test.h"

#define DAMAGE_SECS	20
#define PAGE_BYTES	16384	/* STORE_PAGE_BYTES */
#define NLOCKS		2000

static char *dir;
static struct store *st;

static int
teardown(void)
{
	stt_drop(&dir, &st);
	return 0;
}

/* What the child saw: the status, and the message. */
struct outcome {
	int	oc_status;	/* enum store_status; -1: it did not report */
	int	oc_signal;	/* the signal that ended it, 0 if none */
	char	oc_err[2048];
};

static int
count_record(const struct lk_record *rc, void *arg)
{
	(void)rc;
	(*(size_t *)arg)++;
	return 0;
}

static int
count_host(const struct store_host *h, void *arg)
{
	(void)h;
	(*(size_t *)arg)++;
	return 0;
}

/* The child: open dir, load everything, report to fd. */
static void
child_open(int fd)
{
	struct outcome oc;
	struct store_config cf;
	struct store *s = NULL;
	size_t n = 0;
	enum store_status r;

	alarm(DAMAGE_SECS);
	memset(&oc, 0, sizeof(oc));
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	r = store_open(&cf, &s, oc.oc_err, sizeof(oc.oc_err));
	if (r == STORE_OK)
		r = store_hosts_load(s, count_host, &n, oc.oc_err,
		    sizeof(oc.oc_err));
	if (r == STORE_OK)
		r = store_records_load(s, count_record, &n, oc.oc_err,
		    sizeof(oc.oc_err));
	if (r == STORE_OK)
		snprintf(oc.oc_err, sizeof(oc.oc_err), "loaded %zu", n);
	oc.oc_status = (int)r;
	if (write(fd, &oc, sizeof(oc)) != (ssize_t)sizeof(oc))
		_exit(2);
	/* Not store_close(): a failed store may not close cleanly. */
	_exit(0);
}

static void
open_damaged(struct outcome *oc)
{
	int p[2], status;
	pid_t pid;
	ssize_t n;

	memset(oc, 0, sizeof(*oc));
	oc->oc_status = -1;
	CU_ASSERT_FATAL(pipe(p) == 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		child_open(p[1]);
	}
	CU_ASSERT_FATAL(pid > 0);
	close(p[1]);
	n = read(p[0], oc, sizeof(*oc));
	close(p[0]);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status)) {
		oc->oc_signal = WTERMSIG(status);
		fprintf(stderr, "\nthe open died of signal %d%s\n",
		    oc->oc_signal, oc->oc_signal == SIGALRM ?
		    " (it hung)" : "");
	}
	if (n != (ssize_t)sizeof(*oc))
		oc->oc_status = -1;
}

/* A store of n locks of one host, closed. */
static void
make_store_n(int n)
{
	struct store_host h;
	struct lk_record rc;
	char fh[32];
	int i;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_SYNC);
	memset(&h, 0, sizeof(h));
	h.sh_id = 1;
	h.sh_name = "client";
	h.sh_addr.sa_len = 4;
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 2), STORE_OK);
	for (i = 0; i < n; i++) {
		snprintf(fh, sizeof(fh), "file-%06d", i);
		rc = stt_lock(1, 7, "owner", fh, 0, 0, true, (uint64_t)i + 1);
		CU_ASSERT_EQUAL_FATAL(store_put_record(st, &rc), STORE_OK);
	}
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
}

static void
make_store(void)
{
	make_store_n(NLOCKS);
}

/* Overwrite page `page' of dir/file with garbage (a fixed sequence). */
static void
garble_page(const char *file, unsigned page)
{
	uint8_t buf[PAGE_BYTES];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char path[4096];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	CU_ASSERT_FATAL((fd = open(path, O_WRONLY)) != -1);
	CU_ASSERT_EQUAL(pwrite(fd, buf, sizeof(buf),
	    (off_t)page * PAGE_BYTES), (ssize_t)sizeof(buf));
	close(fd);
}

/*
 * A page of garbage in a database: the open or the load fails and says
 * which file.  Before the databases were checksummed (DB_CHKSUM), a bad
 * root page of hosts.db made the load's btree search loop for ever, and
 * bad pages elsewhere read as "page not found" or worse.
 */
static void
test_garbage_page(void)
{
	static const struct {
		const char	*file;
		unsigned	 page;
	} cases[] = {
		{ "hosts.db", 1 }, { "locks.db", 1 }, { "locks.db", 2 },
		{ "meta.db", 1 }, { "shares.db", 1 }
	};
	struct outcome oc;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_store();
		garble_page(cases[i].file, cases[i].page);
		open_damaged(&oc);
		CU_ASSERT_EQUAL(oc.oc_signal, 0);
		CU_ASSERT(oc.oc_status == STORE_FATAL ||
		    oc.oc_status == STORE_CORRUPT);
		CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, cases[i].file));
		CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err,
		    "When the store is damaged"));
		if (oc.oc_signal != 0 || (oc.oc_status != STORE_FATAL &&
		    oc.oc_status != STORE_CORRUPT) ||
		    strstr(oc.oc_err, cases[i].file) == NULL)
			fprintf(stderr, "\n%s page %u: status %d: %s\n",
			    cases[i].file, cases[i].page, oc.oc_status,
			    oc.oc_err);
		stt_dir_free(dir);
		dir = NULL;
	}
}

/*
 * locks.db has no page checksums (store.c): a chain of leaf pages that
 * loops back is caught by the load's key order instead.  The last leaf's
 * link to the next page is pointed back at the first leaf (the page
 * header: LSN 8 bytes, pgno, prev_pgno, next_pgno 4 bytes each, entries,
 * hf_offset, level, type P_LBTREE = 5; host byte order).  The walk used
 * to go round for ever.
 */
static void
test_leaf_loop(void)
{
	uint8_t pg[PAGE_BYTES];
	char path[4096];
	uint32_t first = 0, last = 0, prev, next;
	struct outcome oc;
	off_t off;
	int fd;

	make_store();
	snprintf(path, sizeof(path), "%s/locks.db", dir);
	CU_ASSERT_FATAL((fd = open(path, O_RDWR)) != -1);
	for (off = PAGE_BYTES; pread(fd, pg, sizeof(pg), off) ==
	    (ssize_t)sizeof(pg); off += PAGE_BYTES) {
		if (pg[25] != 5)		/* P_LBTREE */
			continue;
		memcpy(&prev, pg + 12, 4);
		memcpy(&next, pg + 16, 4);
		if (prev == 0)
			first = (uint32_t)(off / PAGE_BYTES);
		if (next == 0)
			last = (uint32_t)(off / PAGE_BYTES);
	}
	printf("\n    locks.db: leaves from page %u to page %u ", first, last);
	CU_ASSERT_FATAL(first != 0 && last != 0 && first != last);
	CU_ASSERT_FATAL(pwrite(fd, &first, 4, (off_t)last * PAGE_BYTES + 16) ==
	    4);
	close(fd);
	open_damaged(&oc);
	CU_ASSERT_EQUAL(oc.oc_signal, 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "locks.db"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "key out of order"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "When the store is damaged"));
	if (oc.oc_status != STORE_CORRUPT)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status,
		    oc.oc_err);
	stt_dir_free(dir);
	dir = NULL;
}

/*
 * The leaves of locks.db in the order of their chain, from the one
 * without a previous page, at most max of them, into leaf[] (page
 * numbers); how many.  Page headers as in test_leaf_loop().
 */
static size_t
leaf_chain(int fd, uint32_t *leaf, size_t max)
{
	uint32_t next[1024] = { 0 }, first = 0, prev, pgno;
	uint8_t pg[PAGE_BYTES];
	off_t off;
	size_t n = 0;

	for (off = PAGE_BYTES; pread(fd, pg, sizeof(pg), off) ==
	    (ssize_t)sizeof(pg); off += PAGE_BYTES) {
		pgno = (uint32_t)(off / PAGE_BYTES);
		if (pg[25] != 5 || pgno >= 1024)	/* P_LBTREE */
			continue;
		memcpy(&prev, pg + 12, 4);
		memcpy(&next[pgno], pg + 16, 4);
		if (prev == 0)
			first = pgno;
	}
	for (pgno = first; pgno != 0 && pgno < 1024 && n < max;
	    pgno = next[pgno])
		leaf[n++] = pgno;
	return n;
}

/*
 * Set the link to the next page of locks.db's leaf number `which' (in
 * chain order) to leaf `to' (-1: its own page; -2: none, 0): the walk
 * ends early, or passes over leaves, with every key in order.
 */
static void
relink_leaf(size_t which, int to)
{
	uint32_t leaf[64], pgno;
	char path[4096];
	size_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/locks.db", dir);
	CU_ASSERT_FATAL((fd = open(path, O_RDWR)) != -1);
	n = leaf_chain(fd, leaf, 64);
	printf("\n    locks.db: %zu leaves, leaf %zu linked to %d ", n, which,
	    to);
	CU_ASSERT_FATAL(which < n && (to < 0 || (size_t)to < n));
	pgno = to == -1 ? leaf[which] : to == -2 ? 0 : leaf[to];
	CU_ASSERT_FATAL(pwrite(fd, &pgno, 4, (off_t)leaf[which] * PAGE_BYTES +
	    16) == 4);
	close(fd);
}

/* Open the damaged store: refused for its count. */
/* The last open_miscounted()'s error. */
static char miscounted_err[2048];

static void
open_miscounted(void)
{
	struct outcome oc;

	open_damaged(&oc);
	snprintf(miscounted_err, sizeof(miscounted_err), "%s", oc.oc_err);
	CU_ASSERT_EQUAL(oc.oc_signal, 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "locks.db"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "meta.db counts"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "When the store is damaged"));
	if (oc.oc_status != STORE_CORRUPT)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status, oc.oc_err);
}

/*
 * locks.db's leaves linked so that the walk ends early or passes over a
 * leaf, every key still in order: the root leaf (a small store, all of
 * its locks in it) linked to itself, where Berkeley DB's bulk get then
 * returns DB_NOTFOUND at once; the first leaf's link set to 0; the first
 * leaf linked to the third.  The load used to report success with fewer
 * locks (none at all in the first case), and those were lost without a
 * word; meta.db's count of the records (store_codec.c) tells now.
 */
static void
test_leaf_cut(void)
{
	static const struct {
		int	 nlocks;
		size_t	 which;
		int	 to;
	} cases[] = {
		{ 10, 0, -1 }, { NLOCKS, 0, -2 }, { NLOCKS, 0, 2 }
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_store_n(cases[i].nlocks);
		relink_leaf(cases[i].which, cases[i].to);
		open_miscounted();
		stt_dir_free(dir);
		dir = NULL;
	}
}

/*
 * A store of two locks with the longest key there is (handles of
 * LK_OH_MAX and LK_FH_MAX bytes), closed.
 */
static void
make_store_long(void)
{
	static char oh[LK_OH_MAX + 1], fh[LK_FH_MAX + 1];
	struct lk_record rc;
	int i;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_SYNC);
	memset(oh, 'o', LK_OH_MAX);
	memset(fh, 'f', LK_FH_MAX);
	for (i = 0; i < 2; i++) {
		fh[LK_FH_MAX - 1] = (char)('a' + i);
		rc = stt_lock(1, 7, oh, fh, 0, 0, true, (uint64_t)i + 1);
		CU_ASSERT_EQUAL_FATAL(store_put_record(st, &rc), STORE_OK);
	}
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
}

/*
 * Damage the index of locks.db's one leaf so that its second pair of
 * entries points at the first lock's key and value (the offsets after the
 * page header, host byte order), and open the store: refused.
 */
static void
leaf_dup(void)
{
	uint32_t leaf[4];
	uint16_t inp[2];
	char path[4096];
	struct outcome oc;
	off_t off;
	int fd;

	snprintf(path, sizeof(path), "%s/locks.db", dir);
	CU_ASSERT_FATAL((fd = open(path, O_RDWR)) != -1);
	CU_ASSERT_FATAL(leaf_chain(fd, leaf, 4) == 1);
	off = (off_t)leaf[0] * PAGE_BYTES + 26;
	CU_ASSERT_FATAL(pread(fd, inp, sizeof(inp), off) ==
	    (ssize_t)sizeof(inp));
	CU_ASSERT_FATAL(pwrite(fd, inp, sizeof(inp), off + 4) ==
	    (ssize_t)sizeof(inp));
	close(fd);
	open_damaged(&oc);
	CU_ASSERT_EQUAL(oc.oc_signal, 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "locks.db"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "key out of order"));
	if (oc.oc_status != STORE_CORRUPT)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status,
		    oc.oc_err);
	stt_dir_free(dir);
	dir = NULL;
}

/*
 * A leaf's index pointing twice at one lock (leaf_dup()): the walk reads
 * the first lock twice and never the second -- as many records as
 * meta.db counts, each with its check right.  Only the order of the keys
 * tells: a key equal to the one before it is out of order.  In a store of
 * 10 locks, and in one of two with the longest key (the one before is
 * kept whole for the comparison).
 */
static void
test_leaf_dup(void)
{
	make_store_n(10);
	leaf_dup();
	make_store_long();
	leaf_dup();
}

/*
 * meta.db counting fewer locks than locks.db's walk reads (9 of 10):
 * refused as well.  The counts and the walk must agree, not only the walk
 * read no fewer: whichever of them is wrong, the load cannot tell which
 * records are the store's.
 */
static void
test_counts_more(void)
{
	uint8_t v[9] = { 1, 0, 0, 0, 0, 0, 0, 0, 9 };

	make_store_n(10);
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_test_put_raw(st, STORE_TEST_META, "locks", 5,
	    v, sizeof(v)), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
	open_miscounted();
	/* Its message says which way they differ. */
	CU_ASSERT_PTR_NOT_NULL(strstr(miscounted_err,
	    "read 10 records, but meta.db counts 9"));
	CU_ASSERT_PTR_NOT_NULL(strstr(miscounted_err,
	    "records that are not in the tree"));
	stt_dir_free(dir);
	dir = NULL;
}

/*
 * A store written before meta.db counted the records of locks.db and
 * shares.db: its first load counts them and stores the counts, refusing
 * nothing, and the turns after it in the same run keep them (a lock
 * added here); from then on a walk that ends early is caught as in any
 * other.
 */
static void
test_counts_absent(void)
{
	struct lk_record rc = stt_lock(1, 7, "owner", "file-extra", 0, 0,
	    true, NLOCKS + 1);
	struct stt_snap ss;
	uint64_t n;

	make_store();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_test_nrec_forget(st), STORE_OK);
	store_close(st);
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_FALSE(store_test_nrec(st, 0, &n));
	CU_ASSERT_FALSE(store_test_nrec(st, 1, &n));
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, NLOCKS);
	stt_nrec_check(st, &ss);
	stt_snap_free(&ss);
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
	stt_snap_dir(dir, &ss);
	CU_ASSERT_EQUAL(ss.ss_nrecs, NLOCKS + 1);
	stt_snap_free(&ss);
	relink_leaf(0, -2);
	open_miscounted();
	stt_dir_free(dir);
	dir = NULL;
}

/*
 * One lock's length damaged in locks.db (the whole file, length 0, made
 * 5 bytes): the record still reads as a valid lock that conflicts with
 * none, so only its check (store_codec.c) tells.  Before lock values
 * carried one, the load took the damaged lock as it was.
 */
/*
 * Write 5 at byte `at' of every copy of want[n] in locks.db; how many
 * there were.  Every copy: a page split may leave the bytes of a moved
 * record in the free space of the page it left.
 */
static unsigned
damage_locks(const uint8_t *want, size_t n, size_t at)
{
	uint8_t pg[PAGE_BYTES];
	char path[4096];
	off_t off;
	unsigned found = 0;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/locks.db", dir);
	CU_ASSERT_FATAL((fd = open(path, O_RDWR)) != -1);
	for (off = 0; pread(fd, pg, sizeof(pg), off) == (ssize_t)sizeof(pg);
	    off += PAGE_BYTES)
		for (i = 0; i + n <= sizeof(pg); i++)
			if (memcmp(pg + i, want, n) == 0) {
				CU_ASSERT_FATAL(pwrite(fd, "\5", 1,
				    off + (off_t)(i + at)) == 1);
				found++;
			}
	close(fd);
	printf("\n    the record found %u time(s) ", found);
	return found;
}

static void
test_lock_damaged(void)
{
	/* The value of the lock with token 1001: length 0, exclusive. */
	static const uint8_t want[] = { 0, 0, 0, 0, 0, 0, 0, 0, 1,
	    0, 0, 0, 0, 0, 0, 0x03, 0xe9 };
	struct outcome oc;

	make_store();
	CU_ASSERT_FATAL(damage_locks(want, sizeof(want), 7) >= 1);
	open_damaged(&oc);
	CU_ASSERT_EQUAL(oc.oc_signal, 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "locks.db"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "the record is damaged"));
	if (oc.oc_status != STORE_CORRUPT)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status,
		    oc.oc_err);
	stt_dir_free(dir);
	dir = NULL;
}

/*
 * The store make_store() writes, as an nlmd before 2026-12-07 wrote it:
 * every lock value of version 1 (its first 26 bytes, no check).
 */
static void
make_v1_store(void)
{
	uint8_t key[STORE_TEST_KEY_ROOM], val[STORE_TEST_VAL_ROOM];
	struct store_host h;
	struct lk_record rc;
	size_t klen, vlen;
	char fh[32];
	int i;

	stt_fresh(&dir, &st);
	st = stt_open_ok(dir, STORE_SYNC);
	memset(&h, 0, sizeof(h));
	h.sh_id = 1;
	h.sh_name = "client";
	h.sh_addr.sa_len = 4;
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 2), STORE_OK);
	for (i = 0; i < NLOCKS; i++) {
		snprintf(fh, sizeof(fh), "file-%06d", i);
		rc = stt_lock(1, 7, "owner", fh, 0, 0, true, (uint64_t)i + 1);
		store_test_enc_lock(&rc, key, &klen, val, &vlen);
		val[0] = 1;
		CU_ASSERT_EQUAL_FATAL(store_test_put_raw(st, STORE_TEST_LOCKS,
		    key, klen, val, 26), STORE_OK);
	}
	CU_ASSERT_EQUAL_FATAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
}

/* Wait (30 s at most) until s's rewrite of version 1 locks is over. */
static void
upgrade_wait(struct store *s, struct store_info *si)
{
	double t0 = stt_now();

	do {
		usleep(10000);
		store_info(s, si);
	} while (si->si_upgrading && stt_now() - t0 < 30);
	CU_ASSERT_FALSE(si->si_upgrading);
}

/*
 * Open dir, load everything into *ss, check that the load found `v1'
 * locks of version 1 and that ss holds what *want does; with `upgrade',
 * rewrite them and wait for it.  Close.
 */
static void
open_v1(const struct stt_snap *want, struct stt_snap *ss, uint64_t v1,
    bool upgrade)
{
	struct store_info si;

	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(stt_snap_take(st, ss), STORE_OK);
	CU_ASSERT(stt_snap_equal(want, ss));
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_locks_v1, v1);
	if (upgrade) {
		store_locks_upgrade(st);
		upgrade_wait(st, &si);
		CU_ASSERT_EQUAL(si.si_locks_upgraded, v1);
	}
	/* The rewrite overwrites: the count stays. */
	stt_nrec_check(st, ss);
	store_close(st);
	st = NULL;
	stt_snap_free(ss);
}

/*
 * Lock values of version 1, as an nlmd before 2026-12-07 wrote them,
 * carry no check: they loaded unchecked for as long as nobody wrote the
 * lock again, and a damaged length read as a lock.  The first start
 * rewrites them all as version 2 (in transactions of 100 here): the next
 * load finds none of version 1, the same locks, and a damaged one is
 * refused.
 */
static void
test_lock_v1_upgraded(void)
{
	/* The version 2 value of the lock with token 1001. */
	static const uint8_t want[] = { 2, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	    0, 0, 0, 0, 0, 0, 0x03, 0xe9 };
	struct stt_snap a, b;
	struct outcome oc;

	store_test_lk_max(16 * 100);
	make_v1_store();
	stt_snap_dir(dir, &a);
	CU_ASSERT_EQUAL(a.ss_nrecs, NLOCKS);
	open_v1(&a, &b, NLOCKS, true);
	open_v1(&a, &b, 0, false);
	store_test_lk_max(0);
	stt_snap_free(&a);
	CU_ASSERT_FATAL(damage_locks(want, sizeof(want), 8) >= 1);
	open_damaged(&oc);
	CU_ASSERT_EQUAL(oc.oc_signal, 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "the record is damaged"));
	if (oc.oc_status != STORE_CORRUPT)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status,
		    oc.oc_err);
	stt_dir_free(dir);
	dir = NULL;
}

/* Rewrite 3 transactions' worth (300 locks), then die of SIGKILL. */
static void
child_upgrade_killed(void)
{
	struct store_info si;
	struct stt_snap ss;
	struct store *s = NULL;
	double t0;

	memset(&ss, 0, sizeof(ss));
	if (stt_open(dir, STORE_SYNC, 0, &s) != STORE_OK)
		_exit(1);
	if (stt_snap_take(s, &ss) != STORE_OK)
		_exit(2);
	store_test_upgrade_steps(s, 3);
	store_locks_upgrade(s);
	t0 = stt_now();
	do {
		usleep(10000);
		store_info(s, &si);
	} while (si.si_locks_upgraded < 300 && stt_now() - t0 < 30);
	if (si.si_locks_upgraded != 300 || !si.si_upgrading)
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

/*
 * nlmd killed (kill -9) while it rewrites version 1 locks: the store
 * holds some of each version, loads all the locks, and the next start
 * rewrites the rest.
 */
static void
test_lock_v1_killed(void)
{
	struct stt_snap a, b;

	store_test_lk_max(16 * 100);
	make_v1_store();
	stt_snap_dir(dir, &a);
	stt_run_killed(child_upgrade_killed);
	open_v1(&a, &b, NLOCKS - 300, true);
	open_v1(&a, &b, 0, false);
	store_test_lk_max(0);
	stt_snap_free(&a);
	stt_dir_free(dir);
	dir = NULL;
}

/* The offset just past the last byte of dir/file that is not zero. */
static off_t
data_end(const char *file)
{
	char path[4096];
	uint8_t buf[65536];
	off_t off = 0, end = 0;
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_RDONLY)) == -1)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = n; i > 0 && buf[i - 1] == 0; i--)
			continue;
		if (i > 0)
			end = off + i;
		off += n;
	}
	close(fd);
	return end;
}

/*
 * The log cut in the middle (a restore that lost its end, a bad copy):
 * recovery fails, and the message gives Berkeley DB's first word on it
 * ("file locks.db has LSN ..., past end of log"), not only its last
 * ("unable to join the environment", which names no file).
 */
static void
test_log_cut(void)
{
	char path[4096];
	struct outcome oc;
	off_t end;

	make_store();
	end = data_end("log.0000000001");
	CU_ASSERT_FATAL(end > 0);
	snprintf(path, sizeof(path), "%s/log.0000000001", dir);
	CU_ASSERT_EQUAL_FATAL(truncate(path, end / 2), 0);
	open_damaged(&oc);
	CU_ASSERT_EQUAL(oc.oc_signal, 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_FATAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "past end of log"));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err,
	    "When the store is damaged"));
	if (strstr(oc.oc_err, "past end of log") == NULL)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status, oc.oc_err);
	stt_dir_free(dir);
	dir = NULL;
}

/*
 * A file of the store that nlmd may not write (restored by root for an
 * nlmd that runs as its own user): refused by name, not "PANIC:
 * Permission denied ... run database recovery".  As root, the child
 * drops to nobody (65534) with the rest of the directory given to it.
 */
static void
test_unwritable(void)
{
	static const char *const files[] = { "meta.db", "hosts.db",
	    "shares.db", "log.0000000001" };
	char path[4096];
	struct outcome oc;
	int p[2], status;
	size_t i;
	pid_t pid;

	make_store();
	snprintf(path, sizeof(path), "%s/locks.db", dir);
	if (geteuid() != 0) {
		CU_ASSERT_EQUAL_FATAL(chmod(path, 0400), 0);
	} else {
		CU_ASSERT_EQUAL_FATAL(chown(dir, 65534, 65534), 0);
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
			CU_ASSERT_EQUAL_FATAL(chown(path, 65534, 65534), 0);
		}
	}
	memset(&oc, 0, sizeof(oc));
	oc.oc_status = -1;
	CU_ASSERT_FATAL(pipe(p) == 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		if (geteuid() == 0 && (setgroups(0, NULL) != 0 ||
		    setgid(65534) != 0 || setuid(65534) != 0))
			_exit(3);
		child_open(p[1]);
	}
	CU_ASSERT_FATAL(pid > 0);
	close(p[1]);
	CU_ASSERT_EQUAL(read(p[0], &oc, sizeof(oc)), (ssize_t)sizeof(oc));
	close(p[0]);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(oc.oc_status, STORE_IO);
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "locks.db in "));
	CU_ASSERT_PTR_NOT_NULL(strstr(oc.oc_err, "cannot be read and "
	    "written"));
	if (strstr(oc.oc_err, "cannot be read and written") == NULL)
		fprintf(stderr, "\nstatus %d: %s\n", oc.oc_status, oc.oc_err);
	stt_dir_free(dir);
	dir = NULL;
}

int
stt_register_damage(void)
{
	CU_pSuite s = CU_add_suite("damaged state directory", NULL,
	    teardown);

	if (s == NULL ||
	    !CU_add_test(s, "a page of garbage: an error, never a hang",
	    test_garbage_page) ||
	    !CU_add_test(s, "locks.db's leaves looping back: caught by the "
	    "key order", test_leaf_loop) ||
	    !CU_add_test(s, "locks.db's leaves linked short: caught by the "
	    "count", test_leaf_cut) ||
	    !CU_add_test(s, "locks.db's leaf pointing twice at one lock: "
	    "caught by the key order", test_leaf_dup) ||
	    !CU_add_test(s, "meta.db counting fewer locks than the walk "
	    "reads: refused", test_counts_more) ||
	    !CU_add_test(s, "a store without the counts: counted by its "
	    "first load", test_counts_absent) ||
	    !CU_add_test(s, "a lock's length damaged: caught by its check",
	    test_lock_damaged) ||
	    !CU_add_test(s, "version 1 locks rewritten at the start: then "
	    "a damaged one is caught", test_lock_v1_upgraded) ||
	    !CU_add_test(s, "version 1 locks: killed while rewriting them, "
	    "the store loads", test_lock_v1_killed) ||
	    !CU_add_test(s, "the log cut short: the reason in the message",
	    test_log_cut) ||
	    !CU_add_test(s, "a file nlmd cannot write: refused by name",
	    test_unwritable))
		return -1;
	return 0;
}
