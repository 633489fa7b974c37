/*
 * nlm_proc.c - the NLM procedures, on version 4 types, over lockcore.
 *
 * Every mutating lockcore call is followed at once by nlm_apply() on its
 * result (the result is only valid until the next call): grants start
 * their GRANTED callbacks, dropped waiter records are freed.
 *
 * Statuses follow what the Linux client expects: UNLOCK of nothing is
 * GRANTED; CANCEL of nothing is DENIED (which the client treats as done,
 * not as a reason to retry); a GRANTED call sent to us (we are a server)
 * is answered DENIED.
 */
#include "nlm_impl.h"

#include <ctype.h>
#include <netinet/in.h>
#include <string.h>

#include "log.h"
#include "rpcsrv.h"

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
	case LK_INVAL:
		break;
	}
	return NLM4_FAILED;
}

void
nlm_apply(const struct lk_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < res->rs_ngranted; i++)
		nlm_grant_start(res->rs_granted[i].gr_udata);
	for (i = 0; i < res->rs_ndropped; i++)
		nlm_grant_free(res->rs_dropped[i]);
}

static void
nlm_count(uint32_t proc, nlm4_stats st)
{
	if (proc < NLM_NPROCS && (unsigned)st < NLM_NSTATS)
		nlm->n_stats.status[proc][st]++;
}

/* A caller_name we accept: bounded, printable, no '/'. */
static bool
nlm_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n > nlm->n_conf.nc_max_name)
		return false;
	for (i = 0; i < n; i++)
		if (!isprint((unsigned char)name[i]) || name[i] == '/')
			return false;
	return true;
}

/* Check the lengths of a request's fields; NLM4_GRANTED when fine. */
static nlm4_stats
nlm_check(const char *caller, const nlm_netobj *fh, const nlm_netobj *oh)
{
	nlm4_stats st = NLM4_GRANTED;

	if (fh->nlm_netobj_len == 0 || fh->nlm_netobj_len > nlm->n_conf.nc_max_fh)
		st = NLM4_STALE_FH;
	else if (!nlm_name_ok(caller) ||
	    oh->nlm_netobj_len > nlm->n_conf.nc_max_oh)
		st = NLM4_FAILED;
	if (st != NLM4_GRANTED)
		nlm->n_stats.bad_args++;
	return st;
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

/* Existing host of a request, or NULL (it holds nothing then). */
static struct nlm_host *
nlm_host_of(const struct nlm_ctx *cx, const char *name, bool create)
{
	struct nlm_host *h;

	h = nlm_host_get(&cx->cx_peer, cx->cx_peerlen, name, create);
	if (h != NULL)
		h->h_seen = ev_now_ms();
	return h;
}

/*
 * The NSM state in a LOCK differs from the one this host sent before: it
 * rebooted without an SM_NOTIFY reaching us, so what it held is stale.
 */
static void
nlm_state_check(struct nlm_host *h, int32_t state)
{
	char hs[300];

	if (state == 0)
		return;
	if (h->h_state != 0 && h->h_state != state) {
		log_info("host %s: NSM state %d -> %d, it restarted; "
		    "releasing what it held", nlm_host_str(h, hs, sizeof(hs)),
		    h->h_state, state);
		nlm->n_stats.reboots++;
		nlm_host_release(h, "reboot seen in LOCK");
	}
	h->h_state = state;
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
	ns = nlm_check(a->alock.caller_name, &a->alock.fh, &a->alock.oh);
	if (ns != NLM4_GRANTED)
		goto out;
	h = nlm_host_of(cx, a->alock.caller_name, false);
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
	nlm_count(NLMPROC4_TEST, ns);
}

void
nlm_proc_lock(const struct nlm_ctx *cx, const nlm4_lockargs *a, nlm4_res *r)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	struct nlm_grant *g = NULL;
	enum lk_status st;
	nlm4_stats ns;
	size_t i;

	r->cookie = a->cookie;
	ns = nlm_check(a->alock.caller_name, &a->alock.fh, &a->alock.oh);
	if (ns != NLM4_GRANTED)
		goto out;
	/*
	 * Reclaims are honoured only during a grace period, and nlmd is
	 * never in one yet (no lock survives a restart to be reclaimed).
	 * Like Linux, refuse them rather than grant them as new locks.
	 */
	if (a->reclaim) {
		ns = NLM4_DENIED_GRACE_PERIOD;
		goto out;
	}
	if ((h = nlm_host_of(cx, a->alock.caller_name, true)) == NULL) {
		ns = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	if (cx->cx_monitored) {
		h->h_monitored = true;
		nlm_state_check(h, a->state);
	}
	nlm_lockreq(&rq, h->h_id, &a->alock, a->exclusive, a->block);
	if (a->block && (g = nlm_grant_new(cx, h, a)) == NULL) {
		ns = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	rq.rq_udata = g;
	st = lk_lock(nlm->n_table, &rq, ev_now_ms(), &res);
	if (st != LK_BLOCKED && g != NULL)
		nlm_grant_free(g);
	if (st == LK_GRANTED)
		for (i = 0; i < res->rs_ndropped; i++)
			if (((struct nlm_grant *)res->rs_dropped[i])->g_active)
				nlm->n_stats.cb_repoll++;
	nlm_apply(res);
	ns = nlm_stat_from_lk(st);
out:
	r->stat.stat = ns;
	nlm_count(NLMPROC4_LOCK, ns);
}

void
nlm_proc_cancel(const struct nlm_ctx *cx, const nlm4_cancargs *a,
    nlm4_res *r)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	enum lk_status st;
	nlm4_stats ns;

	r->cookie = a->cookie;
	ns = nlm_check(a->alock.caller_name, &a->alock.fh, &a->alock.oh);
	if (ns != NLM4_GRANTED)
		goto out;
	if ((h = nlm_host_of(cx, a->alock.caller_name, false)) == NULL) {
		ns = NLM4_DENIED;
		goto out;
	}
	nlm_lockreq(&rq, h->h_id, &a->alock, a->exclusive, a->block);
	st = lk_cancel(nlm->n_table, &rq, ev_now_ms(), &res);
	nlm_apply(res);
	ns = nlm_stat_from_lk(st);
out:
	r->stat.stat = ns;
	nlm_count(NLMPROC4_CANCEL, ns);
}

void
nlm_proc_unlock(const struct nlm_ctx *cx, const nlm4_unlockargs *a,
    nlm4_res *r)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	enum lk_status st;
	nlm4_stats ns;

	r->cookie = a->cookie;
	ns = nlm_check(a->alock.caller_name, &a->alock.fh, &a->alock.oh);
	if (ns != NLM4_GRANTED)
		goto out;
	if ((h = nlm_host_of(cx, a->alock.caller_name, false)) == NULL)
		goto out;	/* holds nothing: unlocking nothing succeeds */
	/*
	 * UNLOCK implies CANCEL: a client whose blocked request was
	 * interrupted, or whose GRANTED_RES got lost, unlocks the range; any
	 * request of this owner still queued inside it is abandoned too.
	 */
	nlm_lockreq(&rq, h->h_id, &a->alock, false, false);
	st = lk_unlock_cancel(nlm->n_table, &rq, ev_now_ms(), &res);
	nlm_apply(res);
	ns = nlm_stat_from_lk(st);
out:
	r->stat.stat = ns;
	nlm_count(NLMPROC4_UNLOCK, ns);
}

void
nlm_proc_granted(const struct nlm_ctx *cx, const nlm4_testargs *a,
    nlm4_res *r)
{
	(void)cx;
	/* We are a server: no request of ours waits for a grant. */
	r->cookie = a->cookie;
	r->stat.stat = NLM4_DENIED;
	nlm_count(NLMPROC4_GRANTED, NLM4_DENIED);
}

static nlm4_stats
nlm_share_check(const nlm4_shareargs *a)
{
	nlm4_stats ns;

	ns = nlm_check(a->share.caller_name, &a->share.fh, &a->share.oh);
	if (ns == NLM4_GRANTED &&
	    ((unsigned)a->share.mode > fsm_DRW ||
	    (unsigned)a->share.access > fsa_RW)) {
		nlm->n_stats.bad_args++;
		ns = NLM4_FAILED;
	}
	return ns;
}

static void
nlm_sharereq(struct lk_sharereq *sq, uint64_t host, const nlm4_share *s)
{
	memset(sq, 0, sizeof(*sq));
	sq->sq_host = host;
	sq->sq_oh = s->oh.nlm_netobj_val;
	sq->sq_ohlen = s->oh.nlm_netobj_len;
	sq->sq_fh = s->fh.nlm_netobj_val;
	sq->sq_fhlen = s->fh.nlm_netobj_len;
	/* fsh_access R=1 W=2 and fsh_mode DR=1 DW=2 are lockcore's bits. */
	sq->sq_access = (uint8_t)s->access;
	sq->sq_deny = (uint8_t)s->mode;
}

void
nlm_proc_share(const struct nlm_ctx *cx, const nlm4_shareargs *a,
    nlm4_shareres *r)
{
	struct lk_sharereq sq;
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	r->sequence = 0;
	if ((ns = nlm_share_check(a)) != NLM4_GRANTED)
		goto out;
	if (a->reclaim) {
		ns = NLM4_DENIED_GRACE_PERIOD;	/* as for LOCK */
		goto out;
	}
	if ((h = nlm_host_of(cx, a->share.caller_name, true)) == NULL) {
		ns = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	nlm_sharereq(&sq, h->h_id, &a->share);
	ns = nlm_stat_from_lk(lk_share(nlm->n_table, &sq, NULL));
out:
	r->stat = ns;
	nlm_count(NLMPROC4_SHARE, ns);
}

void
nlm_proc_unshare(const struct nlm_ctx *cx, const nlm4_shareargs *a,
    nlm4_shareres *r)
{
	struct lk_sharereq sq;
	struct nlm_host *h;
	nlm4_stats ns;

	r->cookie = a->cookie;
	r->sequence = 0;
	if ((ns = nlm_share_check(a)) != NLM4_GRANTED)
		goto out;
	if ((h = nlm_host_of(cx, a->share.caller_name, false)) == NULL)
		goto out;
	nlm_sharereq(&sq, h->h_id, &a->share);
	ns = nlm_stat_from_lk(lk_unshare(nlm->n_table, &sq, NULL));
out:
	r->stat = ns;
	nlm_count(NLMPROC4_UNSHARE, ns);
}

struct nlm_free_all_arg {
	const struct nlm_ctx	*fa_cx;
	const char		*fa_name;
};

static void
nlm_free_all_one(struct nlm_host *h, void *arg)
{
	struct nlm_free_all_arg *fa = arg;
	char hs[300], ps[64];

	if (strcmp(h->h_name, fa->fa_name) != 0)
		return;
	if (!nlm_addr_equal(&h->h_addr, &fa->fa_cx->cx_peer)) {
		/* A name is not proof of identity: anyone can send one. */
		nlm->n_stats.free_all_refused++;
		log_warnx("FREE_ALL for %s from %s refused: not its address",
		    nlm_host_str(h, hs, sizeof(hs)), rpc_addr_str(
		    (const struct sockaddr *)&fa->fa_cx->cx_peer, 0, ps,
		    sizeof(ps)));
		return;
	}
	nlm->n_stats.free_all++;
	nlm_host_release(h, "FREE_ALL");
}

void
nlm_proc_free_all(const struct nlm_ctx *cx, const nlm4_notify *a)
{
	struct nlm_free_all_arg fa = { cx, a->name };

	if (!nlm_name_ok(a->name)) {
		nlm->n_stats.bad_args++;
		return;
	}
	nlm_host_foreach(nlm_free_all_one, &fa);
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
	if (!rpc_addr_local_privileged(&cx->cx_peer, cx->cx_peerlen) || !nlm_name_ok(a->mon_name)) {
		nlm->n_stats.sm_notify_refused++;
		log_warnx("status-monitor notification from %s refused",
		    rpc_addr_str((const struct sockaddr *)&cx->cx_peer, 1, ps,
		    sizeof(ps)));
		return;
	}
	nlm->n_stats.sm_notify++;
	(void)nlm_host_rebooted(a->mon_name);
}

static void
nlm_res_done(void *arg, int ok, XDR *res)
{
	(void)arg;
	(void)res;
	if (!ok)
		nlm->n_stats.res_failed++;
}

void
nlm_send_res(const struct nlm_ctx *cx, uint32_t proc, xdrproc_t xres,
    const void *res)
{
	struct nlm_send *s;

	/*
	 * To the client's NLM as registered with the rpcbind at the
	 * request's source address: never to the source port, and never
	 * by looking up caller_name.
	 */
	s = nlm_send_new(&cx->cx_peer, cx->cx_peerlen, cx->cx_vers, proc, xres,
	    res, &cx->cx_local, cx->cx_locallen);
	if (s == NULL) {
		nlm->n_stats.res_failed++;
		return;
	}
	nlm->n_stats.res_sent++;
	/* One try: a client missing a _RES sends its _MSG again. */
	nlm_send_start(s, 5000, 1, nlm_res_done, NULL);
}
