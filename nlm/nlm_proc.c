/*
 * nlm_proc.c - the NLM procedures, on version 4 types, over lockcore.
 *
 * Every procedure has the same four steps: validate the fields, resolve
 * the caller's host (nlm_begin(), the one prologue), decide (one lockcore
 * call), stage (nlm_apply(): the change set goes to the store's turn
 * transaction, grants start their callbacks, dropped waiters are freed).
 * The reply is encoded when the handler returns but leaves only after
 * nlm_turn_end() has committed the turn.
 *
 * Statuses follow what the Linux client expects: UNLOCK of nothing is
 * GRANTED; CANCEL of nothing is DENIED (which the client treats as done,
 * not as a reason to retry); a GRANTED call sent to us (we are a server)
 * is answered DENIED; a reclaim outside grace (of what its owner does not
 * hold already: lockcore grants that), and a request that meets a lock
 * still to be reclaimed during grace, get DENIED_GRACE_PERIOD (the client
 * waits and retries).
 */
#include "nlm_impl.h"

#include <netinet/in.h>
#include <string.h>

#include "log.h"
#include "rpcsrv.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_free_all;
static struct log_rl rl_sm_refused;
static struct log_rl rl_state_change;
static struct log_rl rl_cycles;
static struct log_rl rl_grant_more;

struct nlm_service *nlm;

nlm4_stats
nlm_stat_from_lk(enum lk_status st)
{
	switch (st) {
	case LK_GRANTED:
		return NLM4_GRANTED;
	case LK_DENIED:
		return NLM4_DENIED;
	case LK_BLOCKED:
		return NLM4_BLOCKED;
	case LK_DEADLOCK:
		return NLM4_DEADLCK;
	case LK_NOLOCKS:
	case LK_NOMEM:
		return NLM4_DENIED_NOLOCKS;
	case LK_RANGE:
		return NLM4_FBIG;
	case LK_NOTFOUND:
		return NLM4_DENIED;
	case LK_GRACE:
	case LK_NOGRACE:
		return NLM4_DENIED_GRACE_PERIOD;
	case LK_INVAL:
		break;
	}
	return NLM4_FAILED;
}

void
nlm_store_check(enum store_status st, const char *what)
{
	if (st == STORE_OK)
		return;
	/* A damaged store is refused by the next start: no promise then. */
	fatalx("store: %s while %s: %s; exiting without answering (%s)",
	    store_strerror(st), what, store_last_error(nlm->n_store),
	    st == STORE_CORRUPT ? "see \"When the store is damaged\" in "
	    "the README" : "the store recovers at the next start");
}

/*
 * The next step of the waiters a release made grantable (GRANT BUDGET in
 * lockcore.h; nlm_grant_pace() sizes it), one step a turn: granting
 * 100,000 shared waiters at once would hold the loop for a third of a
 * second, every other client waiting behind it.  Not in a turn that has
 * granted already (the release's own): the timer, armed again from here,
 * runs next turn -- but only once in a row.  Put off in every turn that
 * granted, the step waited as long as any client's UNLOCK granted a
 * waiter in each turn (two hosts handing a lock to each other), and the
 * waiters left pending, grantable, were granted to nobody.
 */
static void
nlm_grant_more(struct ev_loop *loop, void *arg)
{
	const struct lk_result *res;
	enum lk_status st;

	(void)loop;
	(void)arg;
	if (nlm->n_turn_granted && !nlm->n_more_waited) {
		ev_timer_set(nlm->n_loop, &nlm->n_more_timer, 0,
		    nlm_grant_more, NULL);
		nlm->n_more_waited = true;
		return;
	}
	nlm->n_more_waited = false;
	st = lk_grant_more(nlm->n_table, ev_now_ms(), &res);
	nlm_apply(res);		/* what it granted, whatever st says */
	if (st == LK_OK)
		return;
	/*
	 * Out of memory: the waiters it could not grant are still pending
	 * (lockcore.h): again in a second, not at once in every turn.
	 */
	log_rl_warnx(&rl_grant_more, "granting queued locks: %s; trying "
	    "again in 1 s", lk_strerror(st));
	ev_timer_set(nlm->n_loop, &nlm->n_more_timer, 1000, nlm_grant_more,
	    NULL);
}

void
nlm_grant_pace(unsigned share)
{
	nlm->n_turn_granted = false;
	lk_set_grant_budget(nlm->n_table, share < 1 ? 1 :
	    share > NLM_GRANT_STEP ? NLM_GRANT_STEP : share);
}

void
nlm_apply(const struct lk_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	if (res->rs_nadded > 0 || res->rs_nremoved > 0) {
		nlm_store_check(store_apply(nlm->n_store, res),
		    "staging lock changes");
		nlm->n_turn_changes += res->rs_nadded + res->rs_nremoved;
		/*
		 * Once for each budget's worth: what is served after the
		 * sockets (held connections, onc_conn_resume()) stops at
		 * the next one.
		 */
		if (nlm->n_turn_changes >= (nlm->n_conf.nc_turn_changes > 0 ?
		    nlm->n_conf.nc_turn_changes : NLM_TURN_CHANGES)) {
			ev_turn_full(nlm->n_loop);
			nlm->n_turn_changes = 0;
		}
	}
	if (res->rs_ngranted > 0)
		nlm->n_turn_granted = true;
	for (i = 0; i < res->rs_ngranted; i++)
		nlm_grant_start(res->rs_granted[i].gr_udata);
	if (res->rs_ncycles > 0)
		log_rl_info(&rl_cycles, "%zu queued lock request%s dropped: "
		    "a change of what an owner holds made %s close a deadlock "
		    "cycle; sent again, %s DEADLCK", res->rs_ncycles,
		    res->rs_ncycles == 1 ? "" : "s",
		    res->rs_ncycles == 1 ? "it" : "them",
		    res->rs_ncycles == 1 ? "it gets" : "they get");
	for (i = 0; i < res->rs_ndropped; i++)
		nlm_grant_free(res->rs_dropped[i]);
	if (lk_grants_pending(nlm->n_table) &&
	    !ev_timer_armed(&nlm->n_more_timer))
		ev_timer_set(nlm->n_loop, &nlm->n_more_timer, 0, nlm_grant_more,
		    NULL);
}

void
nlm_proc_count(uint32_t proc, nlm4_stats st)
{
	if (proc < NLM_NPROCS && (unsigned)st < NLM_NSTATS)
		nlm->n_stats.status[proc][st]++;
}

/*
 * A caller_name we accept: bounded, printable ASCII (what isprint() means
 * in the C locale nlmd runs in), no '/'.  One pass, on every call.
 */
static bool
nlm_name_ok(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t i, max = nlm->n_conf.nc_max_name;

	for (i = 0; p[i] != '\0'; i++)
		if (i >= max || (unsigned char)(p[i] - 0x20) > 0x7e - 0x20 ||
		    p[i] == '/')
			return false;
	return true;
}

/*
 * Validate a request's fields: a file handle of 1..max-fh-length bytes
 * (else NLM4_STALE_FH), a printable caller_name and an owner handle within
 * their limits (else NLM4_FAILED).  NLM4_GRANTED when they are fine.
 */
static nlm4_stats
nlm_fields_check(const char *caller, const nlm_netobj *fh,
    const nlm_netobj *oh)
{
	if (fh->nlm_netobj_len == 0 ||
	    fh->nlm_netobj_len > nlm->n_conf.nc_max_fh) {
		nlm->n_stats.bad_args++;
		return NLM4_STALE_FH;
	}
	if (!nlm_name_ok(caller) || oh->nlm_netobj_len > nlm->n_conf.nc_max_oh) {
		nlm->n_stats.bad_args++;
		return NLM4_FAILED;
	}
	return NLM4_GRANTED;
}

/*
 * Resolve the caller's host (source address, caller_name), created when
 * `create' (one that cannot be: NLM4_DENIED_NOLOCKS), and note that it was
 * seen.  NLM4_GRANTED with *hp set (NULL: unknown, not created).
 */
static nlm4_stats
nlm_resolve(const struct nlm_ctx *cx, const char *caller, bool create,
    struct nlm_host **hp)
{
	struct nlm_host *h;

	h = nlm_host_get(&cx->cx_peer, cx->cx_peerlen, caller, &cx->cx_local,
	    cx->cx_locallen, create);
	*hp = h;
	if (h == NULL)
		return create ? NLM4_DENIED_NOLOCKS : NLM4_GRANTED;
	h->h_seen = ev_now_ms();
	return NLM4_GRANTED;
}

/*
 * The prologue of every lock procedure: validate (the fields, then the
 * range: one whose last byte would be past UINT64_MAX is NLM4_FBIG, as
 * lockcore would answer), then resolve.  The range is checked before the
 * host is resolved, as Linux does (fs/lockd/svc4proc.c): a refused
 * request must neither make a host nor, through its NSM state, release
 * what the host holds.  Returns NLM4_GRANTED with *hp set (NULL: unknown,
 * not created) or the status to answer; nothing changed then.
 */
static nlm4_stats
nlm_begin(const struct nlm_ctx *cx, const nlm4_lock *l, bool create,
    struct nlm_host **hp)
{
	nlm4_stats ns;

	*hp = NULL;
	if ((ns = nlm_fields_check(l->caller_name, &l->fh, &l->oh)) !=
	    NLM4_GRANTED)
		return ns;
	/* Never start + len: the last byte is start + (len - 1). */
	if (l->l_len != 0 && l->l_len - 1 > UINT64_MAX - l->l_offset) {
		nlm->n_stats.bad_args++;
		return NLM4_FBIG;
	}
	return nlm_resolve(cx, l->caller_name, create, hp);
}

static void
nlm_lockreq(struct lk_lockreq *rq, uint64_t host, const nlm4_lock *l,
    bool excl, bool block)
{
	memset(rq, 0, sizeof(*rq));
	rq->rq_host = host;
	rq->rq_svid = l->svid;
	rq->rq_oh = l->oh.nlm_netobj_val;
	rq->rq_ohlen = l->oh.nlm_netobj_len;
	rq->rq_fh = l->fh.nlm_netobj_val;
	rq->rq_fhlen = l->fh.nlm_netobj_len;
	rq->rq_start = l->l_offset;
	rq->rq_len = l->l_len;
	rq->rq_excl = excl;
	rq->rq_block = block;
}

/*
 * A monitored LOCK: the host now needs status monitoring, and the NSM
 * state it carries is checked.  A state that differs from the one this
 * host sent before means it rebooted without an SM_NOTIFY reaching us:
 * what it held is stale and is released (staged).  The host record is
 * staged when anything changed.  false when that release ran out of
 * memory: the old state is kept, so that the next LOCK tries again, and
 * this one must be refused -- granted now, it would go with the stale
 * locks at that next try.
 */
static bool
nlm_host_monitor(struct nlm_host *h, int32_t state)
{
	bool was_monitored = h->h_monitored, changed = !was_monitored;
	bool ok = true;
	char hs[300];

	h->h_monitored = true;
	if (state != 0 && h->h_state != state) {
		/*
		 * A restart it told us of (FREE_ALL, SM_NOTIFY) is being
		 * acted on, in pieces (h_rel_forget): this state is that
		 * restart's, already released, not another one to count.
		 */
		if (h->h_state != 0 && !h->h_rel_forget) {
			log_rl_info(&rl_state_change,
			    "host %s: NSM state %d -> %d, it restarted; "
			    "releasing what it held",
			    nlm_host_str(h, hs, sizeof(hs)), h->h_state, state);
			if ((ok = nlm_host_release(h, "reboot seen in LOCK") !=
			    NLM_REL_FAILED)) {
				nlm->n_stats.reboots++;
				/*
				 * Nothing it held before our start is left
				 * on it to reclaim: owed no SM_NOTIFY, which
				 * would make it reclaim what it is granted
				 * now (as after its own SM_NOTIFY).
				 */
				nlm_notify_settle(h);
			}
		}
		if (ok) {
			h->h_state = state;
			changed = true;
		}
	}
	if (changed)
		nlm_host_stage(h);
	/*
	 * Monitored from now on: to disk before the LOCK is answered,
	 * whatever the durability, as a new host's first record is.  Under
	 * `log' a power loss could otherwise bring the host back
	 * unmonitored: its lock lost and no SM_NOTIFY at the next start to
	 * have it reclaimed.  Once per host (or per host that came with
	 * NM_LOCK or SHARE first: its first record was flushed unmonitored).
	 */
	if (!was_monitored)
		store_require_flush(nlm->n_store);
	return ok;
}

void
nlm_proc_test(const struct nlm_ctx *cx, const nlm4_testargs *a,
    nlm4_testres *r)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	enum lk_status st;
	nlm4_stats ns;

	memset(r, 0, sizeof(*r));
	r->cookie = a->cookie;
	ns = nlm_begin(cx, &a->alock, false, &h);
	if (ns != NLM4_GRANTED)
		goto out;
	/* Host id 0 is never assigned: an unknown host owns nothing. */
	nlm_lockreq(&rq, h != NULL ? h->h_id : 0, &a->alock, a->exclusive,
	    false);
	st = lk_test(nlm->n_table, &rq, &res);
	ns = nlm_stat_from_lk(st);
	if (st == LK_DENIED) {
		nlm4_holder *ho = &r->test_stat.nlm4_testrply_u.holder;

		ho->exclusive = res->rs_holder.rc_excl;
		ho->svid = res->rs_holder.rc_svid;
		ho->oh.nlm_netobj_len = (u_int)res->rs_holder.rc_ohlen;
		ho->oh.nlm_netobj_val = (char *)(uintptr_t)res->rs_holder.rc_oh;
		ho->l_offset = res->rs_holder.rc_start;
		ho->l_len = res->rs_holder.rc_len;
	}
out:
	r->test_stat.stat = ns;
	nlm_proc_count(NLMPROC4_TEST, ns);
}

/* LOCK, decided: the lockcore call, its callback record, staging. */
static nlm4_stats
nlm_lock_decide(const struct nlm_ctx *cx, struct nlm_host *h,
    const nlm4_lockargs *a)
{
	const struct lk_result *res;
	struct nlm_grant *g = NULL;
	struct lk_lockreq rq;
	enum lk_status st;
	size_t i;
	char hs[300];

	if (cx->cx_monitored && !nlm_host_monitor(h, a->state))
		return NLM4_DENIED_NOLOCKS;
	if (h->h_releasing != NULL) {
		/* Granted now, it would go with the release's next piece. */
		nlm->n_stats.release_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	/*
	 * A reclaim is never queued: it needs no callback record.  Nor is an
	 * NM_LOCK: it "does not block" (XNFS; BLOCKED is not among its
	 * answers), its callers run no status monitor and often no NLM
	 * service, and a grant waiting for their GRANTED_RES would hold the
	 * lock for nobody.  The client retries a DENIED (illumos clears
	 * block too; Linux queues it).
	 */
	nlm_lockreq(&rq, h->h_id, &a->alock, a->exclusive,
	    a->block && !a->reclaim && cx->cx_monitored);
	rq.rq_reclaim = a->reclaim;
	if (rq.rq_block && (g = nlm_grant_new(cx, h, a)) == NULL)
		return NLM4_DENIED_NOLOCKS;
	rq.rq_udata = g;
	st = lk_lock(nlm->n_table, &rq, ev_now_ms(), &res);
	if (st != LK_BLOCKED && g != NULL)
		nlm_grant_free(g);
	if (st == LK_GRANTED)
		for (i = 0; i < res->rs_ndropped; i++)
			if (((struct nlm_grant *)res->rs_dropped[i])->
			    g_active) {
				nlm->n_stats.cb_repoll++;
				((struct nlm_grant *)res->rs_dropped[i])->
				    g_ended = true;
			}
	if (a->reclaim)
		log_debug("host %s: reclaim of %s [%llu, +%llu) by svid %d: %s",
		    nlm_host_str(h, hs, sizeof(hs)),
		    a->exclusive ? "exclusive" : "shared",
		    (unsigned long long)a->alock.l_offset,
		    (unsigned long long)a->alock.l_len, a->alock.svid,
		    lk_strerror(st));
	nlm_apply(res);
	return nlm_stat_from_lk(st);
}

void
nlm_proc_lock(const struct nlm_ctx *cx, const nlm4_lockargs *a, nlm4_res *r)
{
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	ns = nlm_begin(cx, &a->alock, true, &h);
	if (ns == NLM4_GRANTED)
		ns = nlm_lock_decide(cx, h, a);
	r->stat.stat = ns;
	nlm_proc_count(NLMPROC4_LOCK, ns);
}

void
nlm_proc_cancel(const struct nlm_ctx *cx, const nlm4_cancargs *a,
    nlm4_res *r)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	ns = nlm_begin(cx, &a->alock, false, &h);
	if (ns == NLM4_GRANTED && h == NULL)
		ns = NLM4_DENIED;	/* an unknown host waits for nothing */
	if (ns == NLM4_GRANTED) {
		nlm_lockreq(&rq, h->h_id, &a->alock, a->exclusive, a->block);
		ns = nlm_stat_from_lk(lk_cancel(nlm->n_table, &rq, ev_now_ms(),
		    &res));
		nlm_apply(res);
	}
	r->stat.stat = ns;
	nlm_proc_count(NLMPROC4_CANCEL, ns);
}

void
nlm_proc_unlock(const struct nlm_ctx *cx, const nlm4_unlockargs *a,
    nlm4_res *r)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	ns = nlm_begin(cx, &a->alock, false, &h);
	/* An unknown host holds nothing: unlocking nothing succeeds. */
	if (ns == NLM4_GRANTED && h != NULL) {
		/*
		 * UNLOCK implies CANCEL: a client whose blocked request was
		 * interrupted, or whose GRANTED_RES got lost, unlocks the
		 * range; any request of this owner still queued inside it is
		 * abandoned too.  During grace it also gives up what the owner
		 * held there before the restart.
		 */
		nlm_lockreq(&rq, h->h_id, &a->alock, false, false);
		ns = nlm_stat_from_lk(lk_unlock_cancel(nlm->n_table, &rq,
		    ev_now_ms(), &res));
		nlm_apply(res);
	}
	r->stat.stat = ns;
	nlm_proc_count(NLMPROC4_UNLOCK, ns);
}

void
nlm_proc_granted(const struct nlm_ctx *cx, const nlm4_testargs *a,
    nlm4_res *r)
{
	(void)cx;
	/* We are a server: no request of ours waits for a grant. */
	r->cookie = a->cookie;
	r->stat.stat = NLM4_DENIED;
	nlm_proc_count(NLMPROC4_GRANTED, NLM4_DENIED);
}

/* The SHARE/UNSHARE prologue: nlm_begin() with mode and access checked. */
static nlm4_stats
nlm_share_begin(const struct nlm_ctx *cx, const nlm4_shareargs *a,
    bool create, struct nlm_host **hp)
{
	nlm4_stats ns;

	*hp = NULL;
	ns = nlm_fields_check(a->share.caller_name, &a->share.fh, &a->share.oh);
	if (ns != NLM4_GRANTED)
		return ns;
	if ((unsigned)a->share.mode > fsm_DRW ||
	    (unsigned)a->share.access > fsa_RW) {
		nlm->n_stats.bad_args++;
		return NLM4_FAILED;
	}
	return nlm_resolve(cx, a->share.caller_name, create, hp);
}

static void
nlm_sharereq(struct lk_sharereq *sq, uint64_t host, const nlm4_shareargs *a)
{
	const nlm4_share *s = &a->share;

	memset(sq, 0, sizeof(*sq));
	sq->sq_host = host;
	sq->sq_oh = s->oh.nlm_netobj_val;
	sq->sq_ohlen = s->oh.nlm_netobj_len;
	sq->sq_fh = s->fh.nlm_netobj_val;
	sq->sq_fhlen = s->fh.nlm_netobj_len;
	/* fsh_access R=1 W=2 and fsh_mode DR=1 DW=2 are lockcore's bits. */
	sq->sq_access = (uint8_t)s->access;
	sq->sq_deny = (uint8_t)s->mode;
	sq->sq_reclaim = a->reclaim;
}

void
nlm_proc_share(const struct nlm_ctx *cx, const nlm4_shareargs *a,
    nlm4_shareres *r)
{
	const struct lk_result *res;
	struct lk_sharereq sq;
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	r->sequence = 0;
	ns = nlm_share_begin(cx, a, true, &h);
	if (ns == NLM4_GRANTED && h->h_releasing != NULL) {
		nlm->n_stats.release_refused++;
		ns = NLM4_DENIED_GRACE_PERIOD;
	}
	if (ns == NLM4_GRANTED) {
		nlm_sharereq(&sq, h->h_id, a);
		ns = nlm_stat_from_lk(lk_share(nlm->n_table, &sq, &res));
		nlm_apply(res);
	}
	r->stat = ns;
	nlm_proc_count(NLMPROC4_SHARE, ns);
}

void
nlm_proc_unshare(const struct nlm_ctx *cx, const nlm4_shareargs *a,
    nlm4_shareres *r)
{
	const struct lk_result *res;
	struct lk_sharereq sq;
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	r->sequence = 0;
	ns = nlm_share_begin(cx, a, false, &h);
	if (ns == NLM4_GRANTED && h != NULL) {
		nlm_sharereq(&sq, h->h_id, a);
		sq.sq_reclaim = false;
		ns = nlm_stat_from_lk(lk_unshare(nlm->n_table, &sq, &res));
		nlm_apply(res);
	}
	r->stat = ns;
	nlm_proc_count(NLMPROC4_UNSHARE, ns);
}

/*
 * FREE_ALL: the host (this address, this name) restarted.  Found by its
 * key, not by a scan; a name held only at other addresses is refused (a
 * name is not proof of identity: anyone can send one).
 */
void
nlm_proc_free_all(const struct nlm_ctx *cx, const nlm4_notify *a)
{
	struct nlm_host *h;
	char hs[300], ps[64];

	if (!nlm_name_ok(a->name)) {
		nlm->n_stats.bad_args++;
		return;
	}
	if ((h = nlm_host_find(&cx->cx_peer, a->name)) != NULL) {
		/*
		 * Its restart being released already, in pieces (a FREE_ALL
		 * re-sent, or after an SM_NOTIFY): as good as gone.
		 */
		if (h->h_rel_forget)
			return;
		/* Not released (out of memory): kept for a later try. */
		if (nlm_host_release_forget(h, "FREE_ALL"))
			nlm->n_stats.free_all++;
		return;
	}
	if ((h = nlm_host_named(a->name)) != NULL) {
		nlm->n_stats.free_all_refused++;
		log_rl_warnx(&rl_free_all,
		    "FREE_ALL for %s from %s refused: not its address",
		    nlm_host_str(h, hs, sizeof(hs)), addr_str(
		    (const struct sockaddr *)&cx->cx_peer, 0, ps, sizeof(ps)));
	}
}

void
nlm_proc_granted_res(const struct nlm_ctx *cx, const nlm4_res *a)
{
	struct nlm_grant *g = nlm_grant_by_cookie(&a->cookie);

	if (g == NULL || !nlm_addr_equal(&g->g_host->h_addr, &cx->cx_peer)) {
		nlm->n_stats.cb_unknown_res++;
		return;
	}
	nlm_grant_answer(g, a->stat.stat);
}

void
nlm_proc_sm_notify(const struct nlm_ctx *cx, const nlm_sm_status *a)
{
	char ps[64];

	/* Only a status monitor on this host may tell us of reboots. */
	if (!addr_local_privileged(&cx->cx_peer, cx->cx_peerlen) ||
	    !nlm_name_ok(a->mon_name)) {
		nlm->n_stats.sm_notify_refused++;
		log_rl_warnx(&rl_sm_refused,
		    "status-monitor notification from %s refused",
		    addr_str((const struct sockaddr *)&cx->cx_peer, 1, ps,
		    sizeof(ps)));
		return;
	}
	/* Restarts acted on: hosts released, not notifications. */
	nlm->n_stats.sm_notify += nlm_host_rebooted(a->mon_name, a->state);
}

#define MAX_RES_INFLIGHT	4096

static void
nlm_res_done(void *arg, int ok, XDR *res)
{
	(void)arg;
	(void)res;
	nlm->n_stats.res_inflight--;
	if (!ok)
		nlm->n_stats.res_failed++;
}

void
nlm_send_res(const struct nlm_ctx *cx, uint32_t proc, xdrproc_t xres,
    const void *res)
{
	struct nlm_send *s;

	if (nlm->n_stats.res_inflight >= MAX_RES_INFLIGHT) {
		nlm->n_stats.res_dropped++;
		return;	/* the client re-sends its _MSG */
	}
	/*
	 * To the client's NLM as registered with the rpcbind at the
	 * request's source address: never to the source port, and never
	 * by looking up caller_name.
	 */
	s = nlm_send_new(&cx->cx_peer, cx->cx_peerlen, NLM_PROG, cx->cx_vers,
	    proc, xres, res, &cx->cx_local, cx->cx_locallen);
	if (s == NULL) {
		nlm->n_stats.res_failed++;
		return;
	}
	nlm->n_stats.res_sent++;
	nlm->n_stats.res_inflight++;
	/*
	 * One try, and one port look-up (the source may be forged): a
	 * client missing a _RES sends its _MSG again.
	 */
	nlm_send_lookup(s, 1000, 1);
	nlm_send_reflectable(s);
	/*
	 * One-way (XNFS): rpc.lockd and the BSD and illumos kernels, the
	 * clients that send _MSG calls, never answer a _RES.
	 */
	nlm_send_oneway(s);
	nlm_send_start(s, 5000, 1, nlm_res_done, NULL);
}
