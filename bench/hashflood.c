/*
 * hashflood.c - do handles chosen to collide cost more than random ones?
 *
 * Before nlmd keyed its hashes, lockcore hashed file handles with a fixed,
 * public function: a client could compute handles that all land in one
 * bucket.  This builds N such 32-byte file handles -- each with exactly
 * the same 64-bit hash under that old function, made by inverting its
 * last step (no search needed) -- and N random ones, locks a byte of
 * each (a new file every time) in a table with a random key, then
 * unlocks them, and prints the time per call for both.  Built against
 * lockcore's public API only, so the same source measures an older tree.
 *
 * usage: hashflood [N]     (default 100000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "lockcore/lockcore.h"

#define FHLEN	32
#define K	0x9e3779b97f4a7c15ULL

/* The old hash: murmur's fmix64 per word, then multiply by K. */
static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t
inv(uint64_t a)		/* a^-1 mod 2^64, a odd (Newton) */
{
	uint64_t x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

static uint64_t
unmix(uint64_t x)
{
	x ^= x >> 33;
	x *= inv(0xc4ceb9fe1a85ec53ULL);
	x ^= x >> 33;
	x *= inv(0xff51afd7ed558ccdULL);
	x ^= x >> 33;
	return x;
}

static uint64_t
old_hash(const unsigned char *s, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * K), w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ mix(w)) * K;
	}
	return mix(h);
}

static uint64_t rng;

static uint64_t
xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A handle whose old hash is `target': the first 24 bytes random, the
 * last word solved for. */
static void
colliding(unsigned char *fh, uint64_t target)
{
	uint64_t h = 0x6a09e667f3bcc908ULL ^ (FHLEN * K), w, need;
	int i;

	for (i = 0; i < 3; i++) {
		w = xrand();
		memcpy(fh + 8 * i, &w, 8);
		h = (h ^ mix(w)) * K;
	}
	/* mix((h ^ mix(w)) * K) == target */
	need = unmix(target) * inv(K);
	w = unmix(need ^ h);
	memcpy(fh + 24, &w, 8);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lock then unlock one byte of each of the n handles: ns per call. */
static double
run(unsigned char (*fhs)[FHLEN], size_t n)
{
	struct lk_config cf;
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct lk_table *t;
	double t0;
	size_t i;

	lk_config_init(&cf);
#ifdef LK_HASH_KEY_LEN	/* a tree with keyed hashes */
	if (getrandom(cf.cf_hash_key, sizeof(cf.cf_hash_key), 0) < 0)
		abort();
#endif
	cf.cf_max_locks = cf.cf_max_locks_per_host = 2 * n;
	if ((t = lk_table_new(&cf)) == NULL)
		abort();
	memset(&rq, 0, sizeof(rq));
	rq.rq_host = 1;
	rq.rq_svid = 1;
	rq.rq_oh = "owner";
	rq.rq_ohlen = 5;
	rq.rq_fhlen = FHLEN;
	rq.rq_len = 1;
	rq.rq_excl = true;
	t0 = now();
	for (i = 0; i < n; i++) {
		rq.rq_fh = fhs[i];
		if (lk_lock(t, &rq, 1, &res) != LK_OK)
			abort();
	}
	for (i = 0; i < n; i++) {
		rq.rq_fh = fhs[i];
		if (lk_unlock(t, &rq, 2, &res) != LK_OK)
			abort();
	}
	t0 = now() - t0;
	lk_table_destroy(t);
	return t0 * 1e9 / (double)(2 * n);
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, i;
	unsigned char (*bad)[FHLEN], (*good)[FHLEN];
	double nb, ng;

	if (getrandom(&rng, sizeof(rng), 0) < 0 || rng == 0)
		rng = 88172645463325252ULL;
	if (n == 0 || (bad = malloc(n * FHLEN)) == NULL ||
	    (good = malloc(n * FHLEN)) == NULL)
		return 2;
	for (i = 0; i < n; i++) {
		uint64_t w;
		int j;

		colliding(bad[i], 0x1234);
		for (j = 0; j < 4; j++) {
			w = xrand();
			memcpy(good[i] + 8 * j, &w, 8);
		}
	}
	/* Every one of them collides, fully, under the old hash. */
	for (i = 0; i < n; i++)
		if (old_hash(bad[i], FHLEN, 0x6a09e667f3bcc908ULL) != 0x1234)
			return 3;
	/* Each twice, alternating; the second of each counts (warm). */
	(void)run(good, n);
	(void)run(bad, n);
	ng = run(good, n);
	nb = run(bad, n);
	printf("handles=%zu random_ns_per_call=%.0f colliding_ns_per_call=%.0f "
	    "ratio=%.2f\n", n, ng, nb, nb / ng);
	return 0;
}
