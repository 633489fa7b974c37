/*
 * svcmgr.c - see svcmgr.h.
 *
 * The STATUS line is rebuilt from the NLM service's grace state
 * (nlm_get_grace()) and the lock table's reclaimable counts; while grace
 * lasts a one-second timer refreshes it (counts and time left), and the
 * before-sleep check sends "serving" in the very turn grace ends.  The
 * watchdog timer runs at half the manager's interval, as sd_watchdog_enabled(3)
 * advises: a loop that stops turning stops the pings, and the manager
 * restarts nlmd.
 */
#include "svcmgr.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "lockcore.h"
#include "log.h"
#include "nlm.h"
#include "sdnotify.h"

#define SVCMGR_GRACE_TICK_MS	1000

struct svcmgr {
	struct sdnotify	*sm_notify;
	struct ev_loop	*sm_loop;
	bool		 sm_grace;	/* the last STATUS was about grace */
	bool		 sm_stopping;
	uint64_t	 sm_wd_ms;	/* watchdog ping period; 0: none */
	struct ev_timer	 sm_wd_timer;
	struct ev_timer	 sm_grace_timer;
};

struct svcmgr *
svcmgr_new(struct ev_loop *loop)
{
	struct sdnotify *n;
	struct svcmgr *m;
	char err[256];

	if (sdnotify_open(&n, err, sizeof(err)) != CM_OK) {
		log_warnx("systemd notification off: %s", err);
		return NULL;
	}
	if (n == NULL)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		log_warnx("systemd notification off: out of memory");
		sdnotify_free(n);
		return NULL;
	}
	m->sm_notify = n;
	m->sm_loop = loop;
	return m;
}

/* Send `msg'; a lost message is worth a warning, never more. */
static void
svcmgr_send(struct svcmgr *m, const char *msg)
{
	if (sdnotify_send(m->sm_notify, msg) != CM_OK)
		log_warn("notifying the service manager (%.*s)",
		    (int)strcspn(msg, "\n"), msg);
}

/* "READY=1\n" (or nothing) then the STATUS line of the moment. */
static void
svcmgr_status(struct svcmgr *m, const char *prefix)
{
	const struct nlm_grace *g = nlm_get_grace();
	struct lk_counts ct;
	char msg[512];

	m->sm_grace = g->g_active;
	if (!g->g_active) {
		snprintf(msg, sizeof(msg), "%sSTATUS=serving, epoch %" PRIu64,
		    prefix, nlm_get_epoch());
		svcmgr_send(m, msg);
		return;
	}
	lk_table_counts(nlm_get_table(), &ct);
	if (g->g_how != NULL)
		snprintf(msg, sizeof(msg), "%sSTATUS=grace ending (%s): "
		    "dropping %zu locks, %zu shares not reclaimed, epoch %"
		    PRIu64, prefix, g->g_how, ct.ct_rlocks, ct.ct_rshares,
		    nlm_get_epoch());
	else
		snprintf(msg, sizeof(msg), "%sSTATUS=grace: %zu locks, %zu "
		    "shares to reclaim, %" PRIu64 " s left, epoch %" PRIu64,
		    prefix, ct.ct_rlocks, ct.ct_rshares,
		    g->g_deadline_ms > ev_now_ms() ?
		    (g->g_deadline_ms - ev_now_ms() + 999) / 1000 : 0,
		    nlm_get_epoch());
	svcmgr_send(m, msg);
}

static void
svcmgr_grace_tick(struct ev_loop *loop, void *arg)
{
	struct svcmgr *m = arg;

	if (m->sm_stopping)
		return;
	svcmgr_status(m, "");
	if (m->sm_grace)
		ev_timer_set(loop, &m->sm_grace_timer, SVCMGR_GRACE_TICK_MS,
		    svcmgr_grace_tick, m);
}

static void
svcmgr_watchdog(struct ev_loop *loop, void *arg)
{
	struct svcmgr *m = arg;

	svcmgr_send(m, "WATCHDOG=1");
	ev_timer_set(loop, &m->sm_wd_timer, m->sm_wd_ms, svcmgr_watchdog, m);
}

void
svcmgr_ready(struct svcmgr *m)
{
	uint64_t us;

	if (m == NULL)
		return;
	svcmgr_status(m, "READY=1\n");
	if (m->sm_grace)
		ev_timer_set(m->sm_loop, &m->sm_grace_timer,
		    SVCMGR_GRACE_TICK_MS, svcmgr_grace_tick, m);
	if ((us = sdnotify_watchdog_usec()) == 0)
		return;
	m->sm_wd_ms = us / 2000 > 0 ? us / 2000 : 1;
	log_info("systemd watchdog: %" PRIu64 " ms, pinging every %" PRIu64
	    " ms", us / 1000, m->sm_wd_ms);
	svcmgr_watchdog(m->sm_loop, m);
}

void
svcmgr_turn(struct svcmgr *m)
{
	if (m == NULL || !m->sm_grace || m->sm_stopping)
		return;
	if (!nlm_get_grace()->g_active) {
		ev_timer_cancel(m->sm_loop, &m->sm_grace_timer);
		svcmgr_status(m, "");
	}
}

void
svcmgr_stopping(struct svcmgr *m)
{
	if (m == NULL)
		return;
	m->sm_stopping = true;
	ev_timer_cancel(m->sm_loop, &m->sm_grace_timer);
	ev_timer_cancel(m->sm_loop, &m->sm_wd_timer);
	svcmgr_send(m, "STOPPING=1\nSTATUS=stopping");
}

void
svcmgr_free(struct svcmgr *m)
{
	if (m == NULL)
		return;
	ev_timer_cancel(m->sm_loop, &m->sm_grace_timer);
	ev_timer_cancel(m->sm_loop, &m->sm_wd_timer);
	sdnotify_free(m->sm_notify);
	free(m);
}
