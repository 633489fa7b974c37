/*
 * waitbench.c - what queued lock requests cost lockcore (issue 11, item 3).
 *
 * N owners (distinct hosts) queue a blocking exclusive LOCK of one byte
 * held by another owner; then the holder unlocks, and each owner, once
 * granted, confirms and unlocks, which grants the next.  Prints the mean
 * and the largest time of one queueing call and of one release (unlock
 * plus the grant pass it triggers), in microseconds -- the largest is what
 * one request holds the event loop for.  A second case queues shared
 * requests on N different ranges behind one exclusive lock of them all.
 * Also printed: the cost of a LOCK+UNLOCK pair of an unrelated owner on a
 * byte of the same file outside the queued ranges, while the queue is
 * full.  A third case puts each of N shared waiters on its own even byte
 * behind an exclusive lock of that byte alone, so that the unrelated
 * LOCK+UNLOCK pairs (on odd bytes) fall inside the span of the queue but
 * overlap no waiter, and releases the bytes last to first, so that each
 * grant is the youngest waiter: the cost a walk of the queue in arrival
 * order would pay in full, and the index of the queue (lockcore/wqidx.c)
 * does not.  Each line also gives the waiters and index nodes lockcore
 * looked at (ct_queue_visits) per call.
 *
 * usage: waitbench [N ...]     (default 1000 10000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lockcore/lockcore.h"

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static struct lk_lockreq
req(uint64_t host, uint64_t start, uint64_t len, bool excl, bool block)
{
	struct lk_lockreq rq;

	memset(&rq, 0, sizeof(rq));
	rq.rq_host = host;
	rq.rq_svid = 1;
	rq.rq_oh = "owner";
	rq.rq_ohlen = 5;
	rq.rq_fh = "one-file";
	rq.rq_fhlen = 8;
	rq.rq_start = start;
	rq.rq_len = len;
	rq.rq_excl = excl;
	rq.rq_block = block;
	rq.rq_udata = (void *)(uintptr_t)(host + 1);
	return rq;
}

enum shape { ONE_BYTE, RANGES, EVEN_BYTES };

static uint64_t
visits(const struct lk_table *t)
{
	struct lk_counts ct;

	lk_table_counts(t, &ct);
	return ct.ct_queue_visits;
}

/* Releases: their time (us), how many, what they granted. */
struct rel {
	double		 r_sum;
	double		 r_max;
	size_t		 r_n;
	size_t		 r_granted;
};

static void
timed_unlock(struct lk_table *t, const struct lk_lockreq *rq, uint64_t now,
    struct rel *r)
{
	const struct lk_result *res;
	double t0 = now_us(), d;

	if (lk_unlock(t, rq, now, &res) != LK_OK)
		abort();
	d = now_us() - t0;
	r->r_sum += d;
	r->r_max = d > r->r_max ? d : r->r_max;
	r->r_n++;
	r->r_granted += res->rs_ngranted;
}

static void
run(size_t n, enum shape sh)
{
	static const char *names[] = { "exclusive, one byte",
	    "shared, distinct ranges", "shared, even bytes, inside" };
	struct lk_config cf;
	struct lk_table *t;
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct rel rel = { 0, 0, 0, 0 };
	double t0, d, qsum = 0, qmax = 0, besidepair = 0;
	uint64_t v0, vq, vb = 0, vr;
	size_t i, k, npairs = 0;

	lk_config_init(&cf);
	cf.cf_max_waiters_per_host = cf.cf_max_waiters = 0;
	if ((t = lk_table_new(&cf)) == NULL)
		abort();
	/* The holder: host 1; byte 0, everything, or every even byte. */
	for (i = 0; i < (sh == EVEN_BYTES ? n : 1); i++) {
		rq = req(1, sh == EVEN_BYTES ? 2 * i : 0,
		    sh == RANGES ? 0 : 1, true, false);
		if (lk_lock(t, &rq, 1, &res) != LK_GRANTED)
			abort();
	}
	v0 = visits(t);
	for (i = 0; i < n; i++) {
		rq = sh == RANGES ? req(2 + i, i * 10, 5, false, true) :
		    sh == EVEN_BYTES ? req(2 + i, 2 * i, 1, false, true) :
		    req(2 + i, 0, 1, true, true);
		t0 = now_us();
		if (lk_lock(t, &rq, 1, &res) != LK_BLOCKED)
			abort();
		d = now_us() - t0;
		qsum += d;
		qmax = d > qmax ? d : qmax;
	}
	vq = visits(t) - v0;
	/*
	 * Beside the queue: 1,000 LOCK+UNLOCK pairs of another owner on a
	 * byte of the same file (each LOCK checks the queue for an older
	 * conflicting waiter): past every queued range, or (even bytes) on
	 * odd bytes among them.  Not in the shared case, whose holder has
	 * the whole file.
	 */
	npairs = sh == RANGES ? 0 : 1000;
	v0 = visits(t);
	t0 = now_us();
	for (i = 0; i < npairs; i++) {
		rq = req(n + 100, sh == EVEN_BYTES ? 2 * (i * n / npairs) + 1 :
		    10 * n + 100 + i, 1, true, false);
		if (lk_lock(t, &rq, 1, &res) != LK_GRANTED ||
		    lk_unlock(t, &rq, 1, &res) != LK_OK)
			abort();
	}
	if (npairs > 0) {
		besidepair = (now_us() - t0) / (double)npairs;
		vb = (visits(t) - v0) / npairs;
	}
	/* Release; each grant (one byte) is confirmed and released in turn. */
	v0 = visits(t);
	for (k = 0; k < (sh == EVEN_BYTES ? n : 1); k++) {
		rq = req(1, sh == EVEN_BYTES ? 2 * (n - 1 - k) : 0,
		    sh == RANGES ? 0 : 1, true, false);
		timed_unlock(t, &rq, 2, &rel);
	}
	for (i = 0; i < n && sh == ONE_BYTE; i++) {
		rq = req(2 + i, 0, 1, true, false);
		if (lk_grant_confirm(t, &rq, 3, &res) != LK_OK)
			abort();
		timed_unlock(t, &rq, 3, &rel);
	}
	vr = visits(t) - v0;
	printf("%-28s waiters=%zu queue_mean_us=%.1f queue_max_us=%.0f "
	    "beside_pair_us=%.2f release_mean_us=%.1f release_max_us=%.0f "
	    "granted=%zu visits_per_queue=%.1f visits_per_pair=%ju "
	    "visits_per_release=%.1f\n", names[sh], n, qsum / (double)n,
	    qmax, besidepair, rel.r_sum / (double)rel.r_n, rel.r_max,
	    rel.r_granted, (double)vq / (double)n, (uintmax_t)vb,
	    (double)vr / (double)rel.r_n);
	lk_table_destroy(t);
}

int
main(int argc, char **argv)
{
	size_t sizes[8] = { 1000, 10000 };
	int i, ns = 2;

	if (argc > 1)
		for (ns = 0; ns < argc - 1 && ns < 8; ns++)
			sizes[ns] = strtoul(argv[ns + 1], NULL, 10);
	for (i = 0; i < ns; i++) {
		run(sizes[i], ONE_BYTE);
		run(sizes[i], RANGES);
		run(sizes[i], EVEN_BYTES);
	}
	return 0;
}
