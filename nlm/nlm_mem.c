/*
 * nlm_mem.c - giving memory back after a peak.
 *
 * glibc's malloc keeps what is freed for reuse, so after a million locks
 * are taken and released the process would stay at its peak size for
 * good.  Every MEM_CHECK_MS the loop compares the locks held now with the
 * most held at once since the last trim (lockcore's ct_locks_peak, so a
 * peak between two looks counts too); when they fell by at least
 * MEM_TRIM_MIN and to half the peak or less, it frees the result buffers
 * lockcore grew for the release (lk_table_trim: an UNLOCK over 62,500
 * locks leaves 5.5 MB there) and calls malloc_trim(0), which hands the
 * free pages of every arena (the store's threads' too) back to the
 * kernel.  That walks the free lists once, some 25 ms after a
 * million locks; it is logged with the RSS before and after and how long
 * it took, and counted (nlmd_memory_trims_total).  Steady load never
 * trims: the count does not halve.
 *
 * The same timer has the rate-limited log (log.h) report floods that
 * stopped (log_rl_flush): without it a limiter says what it dropped only
 * at its next line, which may come days later or never.
 */
#include "nlm_impl.h"
#include "log.h"

#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#define MEM_CHECK_MS	2000
#define MEM_TRIM_MIN	10000

static struct ev_timer	mem_timer;

/* Resident set, KiB (0 if unknown). */
static unsigned long
mem_rss_kib(void)
{
	unsigned long size, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (unsigned long)(sysconf(_SC_PAGESIZE) / 1024);
}

static void
mem_check(struct ev_loop *loop, void *arg)
{
	struct lk_counts ct;
	size_t now, peak;

	(void)arg;
	log_rl_flush();
	lk_table_counts(nlm->n_table, &ct);
	now = ct.ct_locks + ct.ct_rlocks;
	peak = ct.ct_locks_peak;
	if (peak - now >= MEM_TRIM_MIN && now <= peak / 2) {
		unsigned long before = mem_rss_kib(), after;
		uint64_t t0 = ev_monotonic_us(), us;

		lk_table_trim(nlm->n_table);
		(void)malloc_trim(0);
		us = ev_monotonic_us() - t0;
		after = mem_rss_kib();
		log_info("memory: locks down from %zu to %zu, free memory "
		    "handed back: RSS %lu -> %lu MiB (%.1f ms)", peak, now,
		    before / 1024, after / 1024, (double)us / 1000);
		nlm->n_stats.mem_trims++;
		lk_table_peak_reset(nlm->n_table);
	}
	ev_timer_set(loop, &mem_timer, MEM_CHECK_MS, mem_check, NULL);
}

void
nlm_mem_start(void)
{
	ev_timer_set(nlm->n_loop, &mem_timer, MEM_CHECK_MS, mem_check,
	    NULL);
}

void
nlm_mem_stop(void)
{
	ev_timer_cancel(nlm->n_loop, &mem_timer);
}
