/*
 * nlm_lat.c - how long requests take: from decoding an NLM request to
 * the release of its answer, which waits for the commit of its turn
 * (DESIGN.md rule 1), per procedure, as Prometheus histograms.
 *
 * Every request of a turn gets an entry (procedure, start time) in a ring;
 * at the end of the turn its unsealed entries take the turn's commit
 * number; when commits become durable (nlm_lat_release) the entries up to
 * that number are observed, oldest first, and dropped.  One clock read
 * per request and one per release; no allocation once the ring has grown
 * to the largest burst.
 */
#include "nlm_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbuf.h"

#define LAT_NB	14

/* Upper bounds in seconds (Prometheus "le"), the last one +Inf. */
static const double lat_le[LAT_NB] = { 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 0 };
static const char *const lat_le_s[LAT_NB] = { "5e-05", "0.0001",
	"0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
	"0.05", "0.1", "0.25", "1", "+Inf" };

struct lat_ent {
	uint64_t	 le_t0;		/* ns */
	uint64_t	 le_seq;	/* 0: this turn, not sealed yet */
	uint32_t	 le_proc;
};

static struct lat_ent *ring;
static size_t ring_cap, ring_head, ring_n, ring_unsealed;
static uint64_t lat_bucket[NLM_NPROCS][LAT_NB];	/* not cumulative */
static double lat_sum[NLM_NPROCS];
static uint64_t lat_count[NLM_NPROCS];

static uint64_t
lat_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
lat_grow(void)
{
	size_t cap = ring_cap == 0 ? 1024 : ring_cap * 2, i;
	struct lat_ent *nr;

	if ((nr = malloc(cap * sizeof(*nr))) == NULL)
		return -1;
	for (i = 0; i < ring_n; i++)
		nr[i] = ring[(ring_head + i) % ring_cap];
	free(ring);
	ring = nr;
	ring_cap = cap;
	ring_head = 0;
	return 0;
}

void
nlm_lat_begin(uint32_t proc)
{
	struct lat_ent *e;

	if (proc >= NLM_NPROCS || (ring_n == ring_cap && lat_grow() == -1))
		return;		/* not measured; nothing else depends on it */
	e = &ring[(ring_head + ring_n++) % ring_cap];
	e->le_t0 = lat_now_ns();
	e->le_seq = 0;
	e->le_proc = proc;
	ring_unsealed++;
}

void
nlm_lat_seal(uint64_t seq)
{
	size_t i;

	for (i = ring_n - ring_unsealed; i < ring_n; i++)
		ring[(ring_head + i) % ring_cap].le_seq = seq;
	ring_unsealed = 0;
}

void
nlm_lat_release(uint64_t done)
{
	struct lat_ent *e;
	uint64_t now;
	double s;
	int b;

	if (ring_n == ring_unsealed)
		return;
	now = lat_now_ns();
	while (ring_n > ring_unsealed) {
		e = &ring[ring_head];
		if (e->le_seq > done)
			break;
		s = (double)(now - e->le_t0) / 1e9;
		for (b = 0; b < LAT_NB - 1 && s > lat_le[b]; b++)
			;
		lat_bucket[e->le_proc][b]++;
		lat_sum[e->le_proc] += s;
		lat_count[e->le_proc]++;
		ring_head = (ring_head + 1) % ring_cap;
		ring_n--;
	}
}

void
nlm_lat_metrics(struct sbuf *sb, const char *const *names)
{
	uint64_t cum;
	unsigned p;
	int b;

	sbuf_printf(sb, "# HELP nlmd_nlm_request_duration_seconds From "
	    "decoding an NLM request to the release of its answer after the "
	    "commit it waits for, by procedure.\n");
	sbuf_printf(sb, "# TYPE nlmd_nlm_request_duration_seconds "
	    "histogram\n");
	for (p = 0; p < NLM_NPROCS; p++) {
		if (names[p] == NULL || (lat_count[p] == 0 && p != 1 &&
		    p != 2 && p != 4))
			continue;
		for (b = 0, cum = 0; b < LAT_NB; b++) {
			cum += lat_bucket[p][b];
			sbuf_printf(sb, "nlmd_nlm_request_duration_seconds_bucket"
			    "{procedure=\"%s\",le=\"%s\"} %llu\n", names[p],
			    lat_le_s[b], (unsigned long long)cum);
		}
		sbuf_printf(sb, "nlmd_nlm_request_duration_seconds_sum"
		    "{procedure=\"%s\"} %.9f\n", names[p], lat_sum[p]);
		sbuf_printf(sb, "nlmd_nlm_request_duration_seconds_count"
		    "{procedure=\"%s\"} %llu\n", names[p],
		    (unsigned long long)lat_count[p]);
	}
}

void
nlm_lat_shutdown(void)
{
	free(ring);
	ring = NULL;
	ring_cap = ring_head = ring_n = ring_unsealed = 0;
}
