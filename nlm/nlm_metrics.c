/*
 * nlm_metrics.c - the NLM service's counters in the Prometheus text
 * format (exposition format 0.0.4): names start with nlmd_, counters end
 * in _total, times are in seconds.  Served by the control socket's
 * `metrics' command and by the HTTP endpoint (metrics-address).
 */
#include "nlm_impl.h"

#include <stdio.h>
#include <string.h>

#include "sbuf.h"
#include "version.h"

/* Procedure names by number (NLM v4; the same numbers in v1 and v3). */
static const char *const nlm_proc_name[NLM_NPROCS] = {
	"null", "test", "lock", "cancel", "unlock", "granted", "test_msg",
	"lock_msg", "cancel_msg", "unlock_msg", "granted_msg", "test_res",
	"lock_res", "cancel_res", "unlock_res", "granted_res", "sm_notify",
	NULL, NULL, NULL, "share", "unshare", "nm_lock", "free_all"
};

static const char *const nlm_stat_name[NLM_NSTATS] = {
	"granted", "denied", "denied_nolocks", "blocked",
	"denied_grace_period", "deadlck", "rofs", "stale_fh", "fbig", "failed"
};

static void
help(struct sbuf *c, const char *name, const char *type,
    const char *text)
{
	sbuf_printf(c, "# HELP %s %s\n", name, text);
	sbuf_printf(c, "# TYPE %s %s\n", name, type);
}

/* One sample of a labelled series: name{label} v. */
static void
lab(struct sbuf *c, const char *name, const char *label, uint64_t v)
{
	sbuf_printf(c, "%s{%s} %llu\n", name, label, (unsigned long long)v);
}

static void
one(struct sbuf *c, const char *name, const char *type,
    const char *text, uint64_t v)
{
	help(c, name, type, text);
	sbuf_printf(c, "%s %llu\n", name, (unsigned long long)v);
}

/* Event loop turns by duration, as a Prometheus histogram. */
static void
turn_histogram(struct sbuf *c)
{
	uint64_t h[EV_TURN_BUCKETS + 1], sum, n = 0;
	unsigned i;

	sum = ev_turn_hist(h);
	sbuf_printf(c, "# HELP nlmd_loop_turn_seconds Event loop turns "
	    "(handlers, timers, commit, release) by duration.\n"
	    "# TYPE nlmd_loop_turn_seconds histogram\n");
	for (i = 0; i < EV_TURN_BUCKETS; i++) {
		n += h[i];
		sbuf_printf(c, "nlmd_loop_turn_seconds_bucket{le=\"%g\"} "
		    "%llu\n", ev_turn_bounds_us[i] / 1e6,
		    (unsigned long long)n);
	}
	n += h[EV_TURN_BUCKETS];
	sbuf_printf(c, "nlmd_loop_turn_seconds_bucket{le=\"+Inf\"} %llu\n"
	    "nlmd_loop_turn_seconds_sum %.6f\n"
	    "nlmd_loop_turn_seconds_count %llu\n", (unsigned long long)n,
	    (double)sum / 1e6, (unsigned long long)n);
}

void
nlm_metrics(struct sbuf *c)
{
	const struct nlm_counters *s = &nlm->n_stats;
	struct store_info si;
	struct lk_counts ct;
	static const unsigned vers[] = { 1, 3, 4 };
	unsigned v, p, k;

	lk_table_counts(nlm->n_table, &ct);
	store_info(nlm->n_store, &si);

	help(c, "nlmd_build_info", "gauge", "Version of nlmd; always 1.");
	sbuf_printf(c, "nlmd_build_info{version=\"%s\"} 1\n", NLMD_VERSION);
	one(c, "nlmd_epoch", "gauge", "Epoch of this start (one more at "
	    "every start).", nlm->n_conf.nc_epoch);
	one(c, "nlmd_nsm_state", "gauge", "NSM state number announced "
	    "in SM_NOTIFY.", (uint64_t)nlm->n_conf.nc_nsm_state);
	one(c, "nlmd_uptime_seconds", "gauge", "Seconds since this start.",
	    (ev_now_ms() - nlm->n_started_ms) / 1000);

	help(c, "nlmd_nlm_requests_total", "counter",
	    "NLM requests received, by version and procedure.");
	for (v = 0; v < 3; v++)
		for (p = 0; p < NLM_NPROCS; p++)
			if (nlm_proc_name[p] != NULL &&
			    (vers[v] == 4 || s->calls[vers[v]][p] > 0))
				sbuf_printf(c, "nlmd_nlm_requests_total{version="
				    "\"%u\",procedure=\"%s\"} %llu\n", vers[v],
				    nlm_proc_name[p], (unsigned long long)
				    s->calls[vers[v]][p]);
	help(c, "nlmd_nlm_replies_total", "counter",
	    "NLM results sent (replies and _RES messages), by procedure and "
	    "status.");
	for (p = 0; p < NLM_NPROCS; p++)
		for (k = 0; k < NLM_NSTATS; k++)
			if (nlm_proc_name[p] != NULL && s->status[p][k] > 0)
				sbuf_printf(c, "nlmd_nlm_replies_total{procedure="
				    "\"%s\",status=\"%s\"} %llu\n",
				    nlm_proc_name[p], nlm_stat_name[k],
				    (unsigned long long)s->status[p][k]);
	nlm_lat_metrics(c, nlm_proc_name);
	one(c, "nlmd_nlm_bad_arguments_total", "counter", "Requests with a "
	    "field over a limit or malformed.", s->bad_args);
	help(c, "nlmd_nlm_res_messages_total", "counter", "_RES messages, by "
	    "outcome.");
	lab(c, "nlmd_nlm_res_messages_total", "outcome=\"sent\"", s->res_sent);
	lab(c, "nlmd_nlm_res_messages_total", "outcome=\"failed\"",
	    s->res_failed);
	lab(c, "nlmd_nlm_res_messages_total", "outcome=\"dropped\"",
	    s->res_dropped);

	help(c, "nlmd_callbacks_total", "counter", "GRANTED callbacks, by "
	    "event.");
#define CB(ev, f)	lab(c, "nlmd_callbacks_total", "event=\"" ev "\"", s->f)
	CB("started", cb_granted);
	CB("sent", cb_sent);
	CB("retransmitted", cb_retried);
	CB("acknowledged", cb_acked);
	CB("refused", cb_refused);
	CB("repolled", cb_repoll);
	CB("given_up", cb_given_up);
	CB("dropped", cb_dropped);
	CB("unknown_result", cb_unknown_res);
	CB("release_failed", cb_release_failed);
#undef CB
	one(c, "nlmd_callbacks_pending", "gauge", "Grants awaiting the "
	    "client's acknowledgement.", s->cb_inflight);
	one(c, "nlmd_callbacks_waiting", "gauge", "Of those, grants not "
	    "called back yet: their host has callback-max-per-host called "
	    "back already.", s->cb_waiting);
	help(c, "nlmd_rpcbind_lookups_total", "counter", "rpcbind queries to "
	    "client hosts, by outcome.");
	lab(c, "nlmd_rpcbind_lookups_total", "outcome=\"sent\"",
	    s->rpcb_lookups);
	lab(c, "nlmd_rpcbind_lookups_total", "outcome=\"failed\"",
	    s->rpcb_failed);
	one(c, "nlmd_rpcbind_suppressed_total", "counter", "Sends failed at "
	    "once: the address had no port a moment ago (no new look-up).",
	    s->rpcb_suppressed);
	one(c, "nlmd_port_cache_evictions_total", "counter", "Idle entries "
	    "of the client port cache forgotten to make room (the cache was "
	    "full).", s->peers_evicted);

	help(c, "nlmd_host_restarts_total", "counter", "Client restarts "
	    "acted on (hosts released), by how nlmd learnt of them: SM_NOTIFY "
	    "to its status monitor, a LOCK with a new NSM state, FREE_ALL, "
	    "a status monitor on this host (procedure 16).");
	lab(c, "nlmd_host_restarts_total", "how=\"sm_notify\"", s->notified);
	lab(c, "nlmd_host_restarts_total", "how=\"nsm_state\"", s->reboots);
	lab(c, "nlmd_host_restarts_total", "how=\"free_all\"", s->free_all);
	lab(c, "nlmd_host_restarts_total", "how=\"local_statd\"", s->sm_notify);
	one(c, "nlmd_host_release_failed_total", "counter", "Releases of "
	    "everything a host holds that ran out of memory: what was left "
	    "kept, the host kept for a later try.  Once a release, however "
	    "often it is tried again until it completes.", s->release_failed);
	one(c, "nlmd_host_releases_in_pieces_total", "counter", "Releases "
	    "of a host holding more than a turn's budget of records, done "
	    "in pieces over several turns.", s->release_pieces);
	one(c, "nlmd_host_releasing_refused_total", "counter", "LOCK and "
	    "SHARE requests of a host being released in pieces, answered "
	    "DENIED_GRACE_PERIOD.", s->release_refused);
	help(c, "nlmd_refused_total", "counter", "Requests refused for "
	    "coming from the wrong place.");
	lab(c, "nlmd_refused_total", "what=\"free_all\"", s->free_all_refused);
	lab(c, "nlmd_refused_total", "what=\"sm_notify_proc16\"",
	    s->sm_notify_refused);
	help(c, "nlmd_sm_notify_ignored_total", "counter", "SM_NOTIFY from "
	    "client hosts that released no host: by why.");
	lab(c, "nlmd_sm_notify_ignored_total", "why=\"gone\"",
	    s->notify_gone);
	lab(c, "nlmd_sm_notify_ignored_total", "why=\"ambiguous\"",
	    s->notify_ambiguous);
	lab(c, "nlmd_sm_notify_ignored_total", "why=\"unmatched\"",
	    s->notify_unmatched);

	help(c, "nlmd_notifications_total", "counter", "SM_NOTIFY to client "
	    "hosts after a restart, by event.");
	lab(c, "nlmd_notifications_total", "event=\"owed\"", s->notify_started);
	lab(c, "nlmd_notifications_total", "event=\"sent\"", s->notify_sent);
	lab(c, "nlmd_notifications_total", "event=\"answered\"",
	    s->notify_acked);
	lab(c, "nlmd_notifications_total", "event=\"given_up\"",
	    s->notify_given_up);
	one(c, "nlmd_notifications_pending", "gauge", "Hosts still to be "
	    "told of this start.", s->notify_pending);

	one(c, "nlmd_memory_trims_total", "counter", "Times free memory was "
	    "handed back to the kernel after the lock table shrank.",
	    s->mem_trims);

	one(c, "nlmd_hosts", "gauge", "Client hosts known (the monitor "
	    "list).", nlm->n_nhosts);
	one(c, "nlmd_hosts_refused_total", "counter", "New hosts refused: "
	    "max-hosts or max-hosts-per-address reached.", s->hosts_refused);
	one(c, "nlmd_files", "gauge", "Files with locks, shares or waiters.",
	    ct.ct_files);
	one(c, "nlmd_locks", "gauge", "Locks held (not reclaimable ones).",
	    ct.ct_locks);
	one(c, "nlmd_shares", "gauge", "Share reservations held.",
	    ct.ct_shares);
	one(c, "nlmd_waiters", "gauge", "Blocked lock requests queued.",
	    ct.ct_waiters);
	help(c, "nlmd_reclaimable", "gauge", "Records of before the restart "
	    "still to be reclaimed.");
	lab(c, "nlmd_reclaimable", "kind=\"lock\"", ct.ct_rlocks);
	lab(c, "nlmd_reclaimable", "kind=\"share\"", ct.ct_rshares);
	help(c, "nlmd_lock_decisions_total", "counter", "Lock-core decisions "
	    "on lock requests (outcome grace: lock and share requests "
	    "refused in grace).");
	lab(c, "nlmd_lock_decisions_total", "outcome=\"granted\"",
	    ct.ct_granted);
	lab(c, "nlmd_lock_decisions_total", "outcome=\"denied\"", ct.ct_denied);
	lab(c, "nlmd_lock_decisions_total", "outcome=\"blocked\"",
	    ct.ct_blocked);
	lab(c, "nlmd_lock_decisions_total", "outcome=\"deadlock\"",
	    ct.ct_deadlocks);
	lab(c, "nlmd_lock_decisions_total", "outcome=\"grace\"",
	    ct.ct_grace_denied);
	one(c, "nlmd_waiter_grants_total", "counter", "Queued requests "
	    "granted.", ct.ct_waiter_grants);
	one(c, "nlmd_deadlock_drops_total", "counter", "Queued requests "
	    "dropped because a later change (a downgrade, an unlock, a "
	    "reclaim) made them close a deadlock cycle; sent again they get "
	    "DEADLCK.", ct.ct_deadlock_drops);
	one(c, "nlmd_deadlock_searches_given_up_total", "counter",
	    "Deadlock searches given up at their bound (65,536 queued "
	    "requests and locks looked at) or out of memory: the request was "
	    "queued without knowing whether it closes a cycle.",
	    ct.ct_deadlock_giveups);
	one(c, "nlmd_queue_visits_total", "counter", "Queued requests (and "
	    "nodes of their index) looked at to decide requests and grants; "
	    "per request it stays small however long the queues.",
	    ct.ct_queue_visits);
	help(c, "nlmd_reclaims_total", "counter", "Reclaims, by outcome.");
	lab(c, "nlmd_reclaims_total", "outcome=\"granted\"", ct.ct_reclaims);
	lab(c, "nlmd_reclaims_total", "outcome=\"refused\"",
	    ct.ct_reclaims_denied);
	one(c, "nlmd_grace_active", "gauge", "1 while in grace.",
	    nlm->n_grace.g_active);
	one(c, "nlmd_grace_dropped_total", "counter", "Records not "
	    "reclaimed by the end of grace, dropped.", ct.ct_grace_dropped);
	one(c, "nlmd_fencing_token_last", "gauge", "Fencing-token "
	    "high-water mark: the last token issued, or after a restart the "
	    "stored mark; every later token is above it.", ct.ct_last_token);

	one(c, "nlmd_store_commits_total", "counter", "Store transactions "
	    "committed.", si.si_commits);
	one(c, "nlmd_store_flushes_total", "counter", "Commits flushed to "
	    "disk.", si.si_flushes);
	one(c, "nlmd_store_checkpoints_total", "counter", "Store checkpoints.",
	    si.si_checkpoints);
	one(c, "nlmd_store_log_files_removed_total", "counter", "Transaction "
	    "log files removed after checkpoints.", si.si_logs_removed);
	one(c, "nlmd_store_log_syncs_near_end_total", "counter", "Syncs of "
	    "the log while a log file was about to fill.",
	    si.si_log_syncs_near);
	one(c, "nlmd_turns_committed_total", "counter", "Loop turns that "
	    "committed changes.", s->commits);
	sbuf_printf(c, "# HELP nlmd_store_commit_stall_seconds How long "
	    "commits have been pending with none completing (0: none "
	    "pending); their answers and callbacks are held meanwhile.\n"
	    "# TYPE nlmd_store_commit_stall_seconds gauge\n"
	    "nlmd_store_commit_stall_seconds %.3f\n",
	    (double)nlm_commit_stall_ms() / 1000);
	sbuf_printf(c, "# HELP nlmd_loop_turn_max_seconds The longest event "
	    "loop turn since start (handlers, timers, commit, release).\n"
	    "# TYPE nlmd_loop_turn_max_seconds gauge\n"
	    "nlmd_loop_turn_max_seconds %.6f\n",
	    (double)ev_turn_max_us() / 1e6);
	turn_histogram(c);
}
