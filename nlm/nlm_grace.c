/*
 * nlm_grace.c - the grace period after a restart, and the end of every
 * turn of the event loop.
 *
 * GRACE (HOW IT WORKS).  At startup every stored lock and share is loaded
 * as reclaimable (nlm_service.c); if there are any, grace begins, with a
 * deadline of grace-period seconds.  Unlike the lock managers nlmd
 * replaces, it holds back only what could conflict: lockcore refuses a
 * new request with LK_GRACE only where it meets a record still to be
 * reclaimed, and grants everything else at once.  Grace ends at the first
 * of:
 *   - nothing left to reclaim: every record was reclaimed, or released by
 *     its host (UNLOCK, FREE_ALL), or dropped because its host is known to
 *     have restarted (SM_NOTIFY, a LOCK with a new NSM state) -- checked at
 *     the end of every turn;
 *   - the deadline: what is left is dropped (NLM_GRACE_STEP records a
 *     turn, so that a huge drop never stalls the loop), logged and
 *     counted.
 * No reclaimable record at startup means no grace at all.
 *
 * THE END OF A TURN.  Handlers and timers stage their changes in the
 * store's turn batch as they go (nlm_apply(), nlm_host_stage()); replies
 * wait in the transport and outbound calls in the RPC client.
 * nlm_turn_end() stages the high-water marks and seals the turn: the store
 * commits it on its own thread, and the replies and calls are tagged with
 * its commit number.  When the store's descriptor says commits completed
 * (nlm_store_ready()), everything tagged up to the last durable number
 * leaves: nothing leaves that reports state not yet stored, and the loop
 * never waits for the disk (the next turns are decided while a commit is
 * flushing, and share the next flush).  A turn that staged nothing is
 * tagged with the last number sealed: its replies may depend on it.
 */
#include "nlm_impl.h"

#include <inttypes.h>

#include "log.h"
#include "rpcsrv.h"

/* Records dropped per turn once the deadline passed (see nlm_grace_end). */
#define NLM_GRACE_STEP	4096

static void	nlm_grace_drain(struct ev_loop *, void *);

/* Limits for the drain's messages (log.h). */
static struct log_rl rl_drain;

static void
nlm_grace_deadline(struct ev_loop *loop, void *arg)
{
	(void)loop;
	(void)arg;
	nlm_grace_end("deadline");
}

void
nlm_grace_start(void)
{
	struct nlm_grace *g = &nlm->n_grace;
	struct lk_counts ct;

	lk_table_counts(nlm->n_table, &ct);
	if (!ct.ct_grace) {
		log_info("no grace period: nothing to reclaim");
		return;
	}
	g->g_active = g->g_had = true;
	g->g_start_ms = ev_now_ms();
	g->g_deadline_ms = g->g_start_ms +
	    (uint64_t)nlm->n_conf.nc_grace_sec * 1000;
	log_info("grace period: %zu locks and %zu shares to reclaim; ends "
	    "when all are reclaimed, at the latest in %u s", ct.ct_rlocks,
	    ct.ct_rshares, nlm->n_conf.nc_grace_sec);
	ev_timer_set(nlm->n_loop, &nlm->n_grace_timer,
	    (uint64_t)nlm->n_conf.nc_grace_sec * 1000, nlm_grace_deadline,
	    NULL);
}

/* Grace is over: log how it ended. */
static void
nlm_grace_over(void)
{
	struct nlm_grace *g = &nlm->n_grace;

	g->g_active = false;
	g->g_end_ms = ev_now_ms();
	/* The last drop is staged in this turn, or sealed already. */
	g->g_end_seq = store_sealed(nlm->n_store) +
	    (store_pending(nlm->n_store) ? 1 : 0);
	if (g->g_dropped > 0)
		log_warnx("grace period over (%s) after %" PRIu64 " ms: %zu "
		    "locks and %zu shares not reclaimed, dropped", g->g_how,
		    g->g_end_ms - g->g_start_ms, g->g_drop_locks,
		    g->g_drop_shares);
	else
		log_info("grace period over (%s) after %" PRIu64 " ms: "
		    "everything reclaimed or released", g->g_how,
		    g->g_end_ms - g->g_start_ms);
}

/*
 * Drop the next NLM_GRACE_STEP records that were not reclaimed, and come
 * back next turn while any is left: dropping a million records is seconds
 * of store work, which must not stall the loop (each step is one turn's
 * commit; requests are served in between, and until its record is gone a
 * conflicting request is still told to wait).
 */
static void
nlm_grace_drain(struct ev_loop *loop, void *arg)
{
	const struct lk_result *res;
	enum lk_status st;
	size_t i, n = 0;
	uint64_t again = 0;

	(void)arg;
	st = lk_grace_drop(nlm->n_table, NLM_GRACE_STEP, ev_now_ms(), &res);
	if (st == LK_OK) {
		/*
		 * Not what waiters granted by the step merged with.  Counted
		 * as dropped here, not as left when grace ended: between two
		 * steps a host may release (FREE_ALL, UNLOCK) or split some
		 * of what is left.
		 */
		for (i = 0; i < res->rs_nremoved; i++) {
			if (!res->rs_removed[i].rc_reclaim)
				continue;
			n++;
			if (res->rs_removed[i].rc_kind == LK_REC_LOCK)
				nlm->n_grace.g_drop_locks++;
			else
				nlm->n_grace.g_drop_shares++;
		}
		nlm->n_stats.grace_dropped += n;
		nlm->n_grace.g_dropped += n;
		nlm_apply(res);
	} else {
		/*
		 * Out of memory: again in a second, as nlm_grant_more() does
		 * -- at once, the loop never slept while it lasted, a warning
		 * a turn.  The records stay stored and reclaimable meanwhile.
		 */
		log_rl_warnx(&rl_drain, "grace end: %s; trying again in 1 s",
		    lk_strerror(st));
		again = 1000;
	}
	if (!lk_in_grace(nlm->n_table)) {
		nlm_grace_over();
		return;
	}
	ev_timer_set(loop, &nlm->n_grace_timer, again, nlm_grace_drain, NULL);
}

void
nlm_grace_end(const char *how)
{
	struct nlm_grace *g = &nlm->n_grace;

	if (!g->g_active || g->g_how != NULL)
		return;
	g->g_how = how;
	ev_timer_cancel(nlm->n_loop, &nlm->n_grace_timer);
	nlm_grace_drain(nlm->n_loop, NULL);
}

void
nlm_grace_check(void)
{
	struct lk_counts ct;

	if (!nlm->n_grace.g_active)
		return;
	lk_table_counts(nlm->n_table, &ct);
	if (ct.ct_rlocks == 0 && ct.ct_rshares == 0)
		nlm_grace_end("nothing left to reclaim");
}

/* Stage what only grows: the token and host-id high-water marks. */
static void
nlm_stage_marks(void)
{
	struct lk_counts ct;
	uint64_t mark;

	lk_table_counts(nlm->n_table, &ct);
	if (ct.ct_last_token > nlm->n_token_stored) {
		/*
		 * Stored ahead of what was issued (NLM_TOKEN_AHEAD): then
		 * only one turn in thousands stages it.  A restart issues
		 * from the stored mark on, above every token given out.
		 */
		mark = ct.ct_last_token > UINT64_MAX - NLM_TOKEN_AHEAD ?
		    UINT64_MAX : ct.ct_last_token + NLM_TOKEN_AHEAD;
		nlm_store_check(store_put_token(nlm->n_store, mark),
		    "staging the token high-water mark");
		nlm->n_token_stored = mark;
	}
	if (nlm->n_next_host > nlm->n_host_stored) {
		nlm_store_check(store_put_next_host(nlm->n_store,
		    nlm->n_next_host), "staging the next host id");
		nlm->n_host_stored = nlm->n_next_host;
	}
}

/* ---- commits that do not complete ---- */

static void
nlm_cwait_check(struct ev_loop *loop, void *arg)
{
	uint64_t now = ev_now_ms(), since = nlm->n_cwait_ms, at;

	(void)arg;
	if (since == 0)
		return;
	at = since + NLM_CWAIT_WARN_MS;
	if (now >= at) {
		log_warnx("store: no commit has completed for %.1f s (%" PRIu64
		    " waiting): the answers and callbacks of their turns are "
		    "held until the disk takes the log", (double)(now - since) /
		    1000, store_sealed(nlm->n_store) - nlm->n_committed);
		nlm->n_cwait_warned = true;
		at = now + NLM_CWAIT_REPEAT_MS;
	}
	ev_timer_set(loop, &nlm->n_cwait_timer, at - now,
	    nlm_cwait_check, NULL);
}

/* After a seal or a release: is a commit pending, since when? */
static void
nlm_cwait_note(bool progress)
{
	uint64_t now = ev_now_ms();

	if (store_sealed(nlm->n_store) <= nlm->n_committed) {
		if (nlm->n_cwait_ms == 0)
			return;		/* the usual case, every turn */
		if (nlm->n_cwait_warned)
			log_info("store: commits complete again, after %.1f s",
			    (double)(now - nlm->n_cwait_ms) / 1000);
		nlm->n_cwait_ms = 0;
		nlm->n_cwait_warned = false;
		ev_timer_cancel(nlm->n_loop, &nlm->n_cwait_timer);
		return;
	}
	if (nlm->n_cwait_ms != 0 && !progress)
		return;
	if (nlm->n_cwait_warned)
		log_info("store: a commit completed after %.1f s",
		    (double)(now - nlm->n_cwait_ms) / 1000);
	nlm->n_cwait_warned = false;
	nlm->n_cwait_ms = now > 0 ? now : 1;
	ev_timer_set(nlm->n_loop, &nlm->n_cwait_timer,
	    NLM_CWAIT_WARN_MS, nlm_cwait_check, NULL);
}

void
nlm_cwait_stop(void)
{
	ev_timer_cancel(nlm->n_loop, &nlm->n_cwait_timer);
}

uint64_t
nlm_commit_stall_ms(void)
{
	uint64_t now = ev_now_ms();

	return nlm == NULL || nlm->n_cwait_ms == 0 || now < nlm->n_cwait_ms ?
	    0 : now - nlm->n_cwait_ms;
}

uint64_t
nlm_input_paused_ms(void)
{
	uint64_t since, now = ev_now_ms();

	if (nlm == NULL || nlm->n_srv == NULL ||
	    (since = onc_srv_paused_since(nlm->n_srv)) == 0 || now < since)
		return 0;
	return now - since;
}

/* Let out what turns up to commit number `done' (durable) reported. */
static void
nlm_release_upto(uint64_t done)
{
	bool progress = done > nlm->n_committed;

	nlm->n_committed = done;
	nlm_cwait_note(progress);
	nlm_lat_release(done);
	if (nlm->n_srv != NULL)
		onc_srv_release(nlm->n_srv, done);
	onc_out_release(nlm->n_clnt, done);
}

/* The store says commits completed (or one failed: fatal). */
static void
nlm_release(void)
{
	uint64_t done;

	nlm_store_check(store_committed(nlm->n_store, &done),
	    "committing a turn");
	nlm_release_upto(done);
}

void
nlm_store_ready(struct ev_loop *loop, int fd, int events, void *arg)
{
	(void)loop;
	(void)fd;
	(void)events;
	(void)arg;
	nlm_release();
}

void
nlm_turn_end(struct onc_srv *srv)
{
	uint64_t seq, done;

	nlm->n_srv = srv;
	do {
		nlm_grace_check();
		nlm_stage_marks();
		if (store_pending(nlm->n_store))
			nlm->n_stats.commits++;
		nlm_store_check(store_seal(nlm->n_store, &seq),
		    "committing a turn");
		onc_srv_seal(srv, seq);
		onc_out_seal(nlm->n_clnt, seq);
		nlm_lat_seal(seq);
		/*
		 * Depends on nothing newer than what is durable (under
		 * durability log the store commits as it seals): out now,
		 * without a read of the store's descriptor in every turn.
		 */
		done = seq > nlm->n_committed ? store_durable(nlm->n_store) :
		    nlm->n_committed;
		if (seq <= done)
			nlm_release_upto(done);
		/* A completion run by the release may have changed more. */
	} while (store_pending(nlm->n_store) || onc_out_held(nlm->n_clnt));
	if (nlm->n_cwait_ms == 0 && store_sealed(nlm->n_store) >
	    nlm->n_committed)
		nlm_cwait_note(false);
	nlm->n_turn_changes = 0;
	nlm_grant_pace(onc_srv_share(srv));
}

void
nlm_drain(void)
{
	nlm_stage_marks();
	nlm_store_check(store_commit(nlm->n_store), "committing a turn");
	if (nlm->n_srv != NULL) {
		onc_srv_seal(nlm->n_srv, store_sealed(nlm->n_store));
		onc_out_seal(nlm->n_clnt, store_sealed(nlm->n_store));
		nlm_release();
	}
}

void
nlm_set_epoch(uint64_t epoch, int32_t state)
{
	/* NSM's 32-bit state number keeps epochs far below LK_EPOCH_MAX. */
	if (lk_set_epoch(nlm->n_table, epoch) != LK_OK)
		fatalx("epoch %" PRIu64 " is beyond what lockcore keeps",
		    epoch);
	nlm->n_conf.nc_epoch = epoch;
	nlm->n_conf.nc_nsm_state = state;
	nlm_notify_all(state);
}

uint64_t
nlm_get_epoch(void)
{
	return nlm->n_conf.nc_epoch;
}

const struct nlm_grace *
nlm_get_grace(void)
{
	return &nlm->n_grace;
}
