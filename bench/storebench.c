/*
 * storebench.c - measure nlmd's Berkeley DB store (db/store.h).
 *
 * usage: storebench [-n records] [-c cache_mib] [-t turns] [-d dir] [-k] [-s]
 *
 *   1. commits/s with 1 and with 64 locks per transaction (each turn
 *      puts that many lock records and deletes as many from 64 turns
 *      before: locks granted and released), under STORE_SYNC and
 *      STORE_LOG (-t transactions each, default 2000 for SYNC, 20000 for
 *      LOG), with turn latencies;
 *   2. one transaction putting -n records (default 1,000,000), commit;
 *   3. close, reopen (open + recovery) and load them all, timed; bytes on
 *      disk per record (du of the directory / n);
 *   4. one transaction deleting them all, commit;
 *   5. a child process commits -n records in 64-record transactions
 *      without a checkpoint and exits without closing: how long does
 *      recovery at the next open take?
 * The directory (default a new one under $TMPDIR or /var/tmp) is removed
 * at the end unless -k.  Records look like what nlmd stores: 1000 hosts,
 * 28-byte owner handles, 32-byte file handles, 4 KiB ranges.
 */
#include "store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bench {
	const char	*b_top;		/* -d, or a new directory */
	const char	*b_dir;		/* the current store */
	size_t		 b_cache;
	size_t		 b_n;
	unsigned	 b_turns;
	bool		 b_stat;	/* -s: db5.3_stat after big txns */
	bool		 b_keep;	/* -k: keep the directory */
	char		 b_oh[64];
	uint8_t		 b_fh[32];
};

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
die(const char *what, enum store_status s, const char *err)
{
	fprintf(stderr, "storebench: %s: %s%s%s\n", what, store_strerror(s),
	    err != NULL ? ": " : "", err != NULL ? err : "");
	exit(1);
}

/* Record i, built in b's buffers. */
static struct lk_record
bench_rec(struct bench *b, uint64_t i)
{
	struct lk_record rc;
	uint64_t file = i / 8;

	memset(&rc, 0, sizeof(rc));
	rc.rc_kind = LK_REC_LOCK;
	rc.rc_host = i % 1000 + 1;
	rc.rc_svid = (int32_t)(i / 1000 % 50000);
	snprintf(b->b_oh, sizeof(b->b_oh), "%08" PRIu64 "@client%04" PRIu64
	    ".example", i / 8 % 100000000, i % 1000);
	rc.rc_oh = b->b_oh;
	rc.rc_ohlen = strlen(b->b_oh);
	memset(b->b_fh, 0x5a, sizeof(b->b_fh));
	memcpy(b->b_fh, &file, sizeof(file));
	rc.rc_fh = b->b_fh;
	rc.rc_fhlen = sizeof(b->b_fh);
	rc.rc_start = i % 8 * 4096;
	rc.rc_len = 4096;
	rc.rc_excl = (uint8_t)(i & 1);
	rc.rc_token = i + 1;
	rc.rc_epoch = 1;
	return rc;
}

static struct store *
bench_open(struct bench *b, enum store_durability d)
{
	struct store_config cf = { b->b_dir, d, b->b_cache, 0 };
	struct store *st;
	enum store_status s;
	char err[512];

	if ((s = store_open(&cf, &st, err, sizeof(err))) != STORE_OK)
		die("open", s, err);
	return st;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One turn: `per' new locks, and the `per' of CHURN_WINDOW turns ago go. */
#define CHURN_WINDOW	64
static void
bench_turn(struct bench *b, struct store *st, unsigned per, uint64_t t)
{
	struct lk_record rc;
	enum store_status s;
	uint64_t j;

	for (j = 0; j < per; j++) {
		rc = bench_rec(b, 10000000 + t * per + j);
		if ((s = store_put_record(st, &rc)) != STORE_OK)
			die("put", s, NULL);
		if (t < CHURN_WINDOW)
			continue;
		rc = bench_rec(b, 10000000 + (t - CHURN_WINDOW) * per + j);
		if ((s = store_del_record(st, &rc)) != STORE_OK)
			die("del", s, NULL);
	}
	if ((s = store_commit(st)) != STORE_OK)
		die("commit", s, NULL);
}

/*
 * Part 1: `turns' transactions, each granting `per' locks and releasing
 * as many (a steady state of CHURN_WINDOW * per locks); latency is that
 * of a whole turn (staging + commit).
 */
static void
bench_commits(struct bench *b, enum store_durability d, unsigned per,
    unsigned turns)
{
	struct store *st = bench_open(b, d);
	double t0 = now_sec(), t1, dt, *lat;
	unsigned t;

	if ((lat = calloc(turns, sizeof(*lat))) == NULL)
		die("calloc", STORE_NOMEM, NULL);
	for (t = 0; t < turns; t++) {
		t1 = now_sec();
		bench_turn(b, st, per, t);
		lat[t] = now_sec() - t1;
	}
	dt = now_sec() - t0;
	qsort(lat, turns, sizeof(*lat), cmp_double);
	printf("%-4s %2u locks/txn: %7.0f txn/s %8.0f locks/s, turn p50 "
	    "%.0f us p99 %.0f us max %.1f ms (%u txns)\n",
	    d == STORE_SYNC ? "SYNC" : "LOG", per, turns / dt,
	    (double)turns * per / dt, lat[turns / 2] * 1e6,
	    lat[turns - 1 - turns / 100] * 1e6, lat[turns - 1] * 1e3, turns);
	free(lat);
	store_close(st);
}

/*
 * With -s: the lock and log peaks as db5.3_stat sees them (shared
 * regions: this works on a running store).
 */
static void
bench_stat(const struct bench *b)
{
	char cmd[4300];

	if (!b->b_stat)
		return;
	snprintf(cmd, sizeof(cmd), "db5.3_stat -h '%s' -c | grep -E "
	    "'Maximum number of (locks|lock objects) at any|Maximum number "
	    "of locks possible|Size of the lock'; db5.3_stat -h '%s' -e | "
	    "grep -E 'Region size|^  *[0-9]+.*(Size|size)' | head; "
	    "du -sh '%s'/__db.*", b->b_dir, b->b_dir, b->b_dir);
	fflush(stdout);
	if (system(cmd) != 0)
		fprintf(stderr, "storebench: db5.3_stat failed\n");
}

/* One transaction putting (del = false) or deleting all n records. */
static void
bench_big(struct bench *b, bool del)
{
	struct store *st = bench_open(b, STORE_LOG);
	struct lk_record rc;
	enum store_status s;
	double t0 = now_sec(), t1;
	size_t i;

	for (i = 0; i < b->b_n; i++) {
		rc = bench_rec(b, i);
		s = del ? store_del_record(st, &rc) : store_put_record(st, &rc);
		if (s != STORE_OK)
			die(del ? "del" : "put", s, NULL);
	}
	t1 = now_sec();
	if ((s = store_commit(st)) != STORE_OK)
		die("commit", s, NULL);
	printf("one txn %s %zu records: staging %.2f s, commit %.2f s\n",
	    del ? "deleting" : "putting", b->b_n, t1 - t0, now_sec() - t1);
	bench_stat(b);
	t0 = now_sec();
	store_close(st);
	printf("  close (checkpoint) %.2f s\n", now_sec() - t0);
}

/*
 * Recovery: a child commits n records in 64-record turns (STORE_LOG, no
 * checkpoint) and exits without closing; the parent's open must replay
 * all of that log.
 */
static void
bench_recovery(struct bench *b)
{
	struct store_config cf = { b->b_dir, STORE_LOG, b->b_cache, 3600 };
	struct store *st;
	struct lk_record rc;
	struct store_info si;
	enum store_status s;
	char err[512];
	size_t i;
	pid_t pid;
	double t0;

	if ((pid = fork()) == 0) {
		if ((s = store_open(&cf, &st, err, sizeof(err))) != STORE_OK)
			die("open", s, err);
		for (i = 0; i < b->b_n; i++) {
			rc = bench_rec(b, i);
			if ((s = store_put_record(st, &rc)) != STORE_OK)
				die("put", s, NULL);
			if (i % 64 == 63 && (s = store_commit(st)) != STORE_OK)
				die("commit", s, NULL);
		}
		if ((s = store_commit(st)) != STORE_OK)
			die("commit", s, NULL);
		_exit(0);
	}
	if (pid == -1 || waitpid(pid, NULL, 0) != pid) {
		perror("storebench: fork");
		exit(1);
	}
	t0 = now_sec();
	st = bench_open(b, STORE_LOG);
	store_info(st, &si);
	printf("recovery of %zu records in 64-record txns: open %.3f s\n",
	    b->b_n, now_sec() - t0);
	store_close(st);
}

static int
count_cb(const struct lk_record *rc, void *arg)
{
	size_t *n = arg;

	*n += rc->rc_fhlen > 0;
	return 0;
}

static void
bench_load(struct bench *b)
{
	struct store *st;
	struct store_info si;
	enum store_status s;
	char err[512], cmd[4200];
	size_t n = 0;
	double t0 = now_sec(), t1;

	st = bench_open(b, STORE_LOG);
	t1 = now_sec();
	if ((s = store_records_load(st, count_cb, &n, err, sizeof(err))) !=
	    STORE_OK)
		die("load", s, err);
	store_info(st, &si);
	printf("reopen %.3f s (si_open_ms %" PRIu64 "), load %zu records "
	    "%.3f s, total %.3f s\n", t1 - t0, si.si_open_ms, n,
	    now_sec() - t1, now_sec() - t0);
	store_close(st);
	snprintf(cmd, sizeof(cmd), "cd '%s' && { du -sb .; du -sb locks.db; "
	    "} | awk '{ printf \"on disk %%s: %%d bytes, %%.1f bytes/record"
	    "\\n\", $2, $1, $1 / %zu }'; ls -ls", b->b_dir, b->b_n);
	fflush(stdout);
	if (system(cmd) != 0)
		fprintf(stderr, "storebench: du failed\n");
}

static void
usage(void)
{
	fprintf(stderr, "usage: storebench [-k] [-n records] [-c cache_mib] "
	    "[-t turns] [-d dir] [-s]\n");
	exit(2);
}

static void
bench_args(struct bench *b, int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "c:d:kn:st:")) != -1) {
		switch (ch) {
		case 'c':
			b->b_cache = strtoul(optarg, NULL, 10) << 20;
			break;
		case 'd':
			b->b_top = optarg;
			break;
		case 'k':
			b->b_keep = true;
			break;
		case 'n':
			b->b_n = strtoul(optarg, NULL, 10);
			break;
		case 's':
			b->b_stat = true;
			break;
		case 't':
			b->b_turns = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
}

/* Make the top directory (unless -d) and one subdirectory per part. */
static void
bench_dirs(struct bench *b, char *tmpl, size_t len, char sub[][4200])
{
	static const char *names[] = { "commits", "big", "recovery" };
	const char *tmp = getenv("TMPDIR");
	size_t i;

	if (b->b_top == NULL) {
		snprintf(tmpl, len, "%s/storebench.XXXXXX",
		    tmp != NULL ? tmp : "/var/tmp");
		if ((b->b_top = mkdtemp(tmpl)) == NULL) {
			perror("storebench: mkdtemp");
			exit(1);
		}
	}
	for (i = 0; i < 3; i++) {
		snprintf(sub[i], 4200, "%s/%s", b->b_top, names[i]);
		if (mkdir(sub[i], 0700) == -1) {
			perror("storebench: mkdir");
			exit(1);
		}
	}
}

int
main(int argc, char **argv)
{
	struct bench b = { NULL, NULL, 0, 1000000, 0, false, false, "", { 0 } };
	char tmpl[4096], cmd[4200], sub[3][4200];

	bench_args(&b, argc, argv);
	bench_dirs(&b, tmpl, sizeof(tmpl), sub);
	printf("directory %s, cache %zu MiB\n", b.b_top,
	    (b.b_cache != 0 ? b.b_cache : 64u << 20) >> 20);
	b.b_dir = sub[0];
	bench_commits(&b, STORE_SYNC, 1, b.b_turns ? b.b_turns : 2000);
	bench_commits(&b, STORE_SYNC, 64, b.b_turns ? b.b_turns : 2000);
	bench_commits(&b, STORE_LOG, 1, b.b_turns ? b.b_turns : 20000);
	bench_commits(&b, STORE_LOG, 64, b.b_turns ? b.b_turns : 20000);
	b.b_dir = sub[1];
	bench_big(&b, false);
	bench_load(&b);
	bench_big(&b, true);
	b.b_dir = sub[2];
	bench_recovery(&b);
	if (!b.b_keep) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b.b_top);
		if (system(cmd) != 0)
			fprintf(stderr, "storebench: cannot remove %s\n",
			    b.b_top);
	}
	return 0;
}
