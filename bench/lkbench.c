/*
 * lkbench.c - in-process lockcore benchmark: LOCK+UNLOCK pairs per second
 * at various table sizes, and heap bytes per held lock.
 *
 * Every measured pair is a non-conflicting exclusive LOCK of a fresh range
 * next to existing locks at a *random* position (so caches are not kept
 * warm by walking the same path), followed by the UNLOCK of that range.
 * File handles are 32 bytes, owner handles 20 bytes (NFSv3-like sizes).
 *
 * Memory is measured twice: with the C allocator, as the growth of
 * mallinfo2().uordblks (real heap use, malloc overhead included), and with
 * a counting lk_allocator hook (bytes requested by lockcore).
 *
 * usage: lkbench [seconds-per-case]   (default 1)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lockcore/lockcore.h"

#define FHLEN	32
#define OHLEN	20

static uint64_t rng = 88172645463325252ULL;

static uint64_t
xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
mkfh(unsigned char *fh, uint64_t i)
{
	memset(fh, 0xa5, FHLEN);
	memcpy(fh + 8, &i, sizeof(i));
}

static void
mkoh(unsigned char *oh, uint64_t i)
{
	memset(oh, 'o', OHLEN);
	memcpy(oh + 4, &i, sizeof(i));
}

static struct lk_lockreq
req(uint64_t host, uint64_t owner, const unsigned char *oh,
    const unsigned char *fh, uint64_t start, uint64_t len)
{
	struct lk_lockreq rq;

	memset(&rq, 0, sizeof(rq));
	rq.rq_host = host;
	rq.rq_svid = (int32_t)owner;
	rq.rq_oh = oh;
	rq.rq_ohlen = OHLEN;
	rq.rq_fh = fh;
	rq.rq_fhlen = FHLEN;
	rq.rq_start = start;
	rq.rq_len = len;
	rq.rq_excl = true;
	return rq;
}

/*
 * Fill t with nfiles files x perfile locks: lock k of a file is [20k, 20k+10)
 * held by one of `owners` owners (spread over owners/10 hosts).
 */
static int
fill(struct lk_table *t, uint64_t nfiles, uint64_t perfile, uint64_t owners)
{
	unsigned char fh[FHLEN], oh[OHLEN];
	struct lk_lockreq rq;
	uint64_t f, k, o;

	for (f = 0; f < nfiles; f++) {
		mkfh(fh, f);
		for (k = 0; k < perfile; k++) {
			o = (f * perfile + k) % owners;
			mkoh(oh, o);
			rq = req(o / 10, o, oh, fh, k * 20, 10);
			if (lk_lock(t, &rq, 0, NULL) != LK_GRANTED)
				return -1;
		}
	}
	return 0;
}

/* LOCK+UNLOCK pairs/s in the gaps [20k+12, 20k+16) at random k. */
static double
pairs(struct lk_table *t, uint64_t nfiles, uint64_t perfile, double secs)
{
	unsigned char fh[FHLEN], oh[OHLEN];
	struct lk_lockreq rq;
	uint64_t n = 0, i;
	double t0 = now(), t1;

	mkoh(oh, 999999999);
	do {
		for (i = 0; i < 4096; i++) {
			mkfh(fh, xrand() % nfiles);
			rq = req(7777777, 1, oh, fh,
			    (xrand() % perfile) * 20 + 12, 4);
			if (lk_lock(t, &rq, 0, NULL) != LK_GRANTED ||
			    lk_unlock(t, &rq, 0, NULL) != LK_OK) {
				fprintf(stderr, "lkbench: unexpected status\n");
				exit(1);
			}
		}
		n += 4096;
	} while ((t1 = now()) - t0 < secs);
	return (double)n / (t1 - t0);
}

static void
run_rate(const char *what, uint64_t nfiles, uint64_t perfile,
    uint64_t owners, double secs)
{
	struct lk_table *t = lk_table_new(NULL);
	double r;

	if (t == NULL || fill(t, nfiles, perfile, owners) != 0) {
		fprintf(stderr, "lkbench: setup failed\n");
		exit(1);
	}
	r = pairs(t, nfiles, perfile, secs);
	printf("%-44s %12.0f pairs/s  %7.0f ns/pair\n", what, r, 1e9 / r);
	lk_table_destroy(t);
}

static size_t counted;

static void *
count_malloc(size_t n, void *arg)
{
	size_t *p = malloc(n + sizeof(size_t) * 2);

	(void)arg;
	if (p == NULL)
		return NULL;
	*p = n;
	counted += n;
	return p + 2;
}

static void
count_free(void *q, void *arg)
{
	size_t *p = (size_t *)q - 2;

	(void)arg;
	counted -= *p;
	free(p);
}

static void *
count_realloc(void *q, size_t n, void *arg)
{
	size_t *p;

	if (q == NULL)
		return count_malloc(n, arg);
	p = (size_t *)q - 2;
	counted -= *p;
	if ((p = realloc(p, n + sizeof(size_t) * 2)) == NULL) {
		counted += *((size_t *)q - 2);
		return NULL;
	}
	*p = n;
	counted += n;
	return p + 2;
}

static void
run_mem(uint64_t nfiles, uint64_t perfile, uint64_t owners)
{
	struct lk_allocator al = { count_malloc, count_realloc, count_free,
	    NULL };
	uint64_t nlocks = nfiles * perfile;
	struct lk_config cf;
	struct lk_table *t;
	size_t before;

	before = mallinfo2().uordblks;
	t = lk_table_new(NULL);
	if (t == NULL || fill(t, nfiles, perfile, owners) != 0)
		exit(1);
	printf("memory, %llu locks, %llu files, %llu owners: "
	    "%.1f bytes/lock (mallinfo2)",
	    (unsigned long long)nlocks, (unsigned long long)nfiles,
	    (unsigned long long)owners,
	    (double)(mallinfo2().uordblks - before) / (double)nlocks);
	lk_table_destroy(t);
	lk_config_init(&cf);
	cf.cf_alloc = &al;
	counted = 0;
	t = lk_table_new(&cf);
	if (t == NULL || fill(t, nfiles, perfile, owners) != 0)
		exit(1);
	printf(", %.1f requested (hook)\n", (double)counted / (double)nlocks);
	lk_table_destroy(t);
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;

	printf("lkbench: lockcore, one core, in-process; random positions\n");
	run_rate("1 lock on 1 file", 1, 1, 1, secs);
	run_rate("1,000 locks on 1 file", 1, 1000, 100, secs);
	run_rate("100,000 locks on 1 file", 1, 100000, 1000, secs);
	run_rate("3 locks/file, 1,000 files", 1000, 3, 100, secs);
	run_rate("1,000,000 locks across 100,000 files", 100000, 10, 10000,
	    secs);
	run_mem(100000, 10, 10000);
	run_mem(100000, 10, 1000000);
	return 0;
}
