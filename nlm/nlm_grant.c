/*
 * nlm_grant.c - GRANTED callbacks.
 *
 * HOW IT WORKS.  Every blocking LOCK gets a struct nlm_grant that records
 * what the callback will need: the lock exactly as the client sent it
 * (the Linux client matches GRANTED by range, svid, file handle and the
 * server address it sees it come from), the NLM version it used and the
 * server address it sent the LOCK to.  lockcore keeps it as the waiter's
 * udata.  When lockcore grants the waiter, nlm_grant_start() gives the
 * grant a fresh cookie and sends GRANTED_MSG (or the synchronous GRANTED,
 * by configuration) to the client's NLM, from that server address.  A timer
 * resends it with exponential backoff (callback-retry-min-ms doubling up to
 * callback-retry-max-ms) -- a GRANTED_MSG the client's NLM took (replied
 * to) only after callback-retry-max-ms: its GRANTED_RES is on its way, and
 * a copy it answers DENIED if its process took the first (grant_sent());
 * a synchronous GRANTED not answered yet stays open callback-retry-max-ms
 * beside the copies after it, so that its late reply still counts
 * (grant_retry()) --
 * until one of these ends it:
 *   - GRANTED_RES (or the reply to a synchronous GRANTED) saying granted:
 *     the grant is confirmed in lockcore;
 *   - the same with any other status but DENIED_GRACE_PERIOD: the client no
 *     longer wants the lock, so it is released;
 *   - the client's own re-sent LOCK (it polls every 30 s): lockcore confirms;
 *   - CANCEL, UNLOCK, FREE_ALL, a reboot or an admin release;
 *   - the give-up deadline (callback-give-up, off by default, as in Linux):
 *     the lock is released and the event logged and counted.
 * All of these reach nlm_grant_free() through lockcore's rs_dropped.
 *
 * A host has at most callback-max-per-host grants called back at a time
 * (h_cbsent): the others wait on its h_cbq, oldest first, and each end
 * of a called-back grant sends the next (from a timer, so never inside
 * the nlm_apply() that freed the grant).  A client then gets its
 * callbacks as fast as it answers them, however many of its waiters one
 * release grants; a waiting grant is still collected by the client's
 * re-sent LOCK, and still released at the give-up deadline.
 */
#include "nlm_impl.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_cb_limit;
static struct log_rl rl_give_up;
static struct log_rl rl_release;
static struct log_rl rl_refused;

/* Cookies are random (nlm_grant_start): their low bits spread them. */
static size_t
grant_bucket(const void *cookie, size_t mask)
{
	uint64_t c;

	memcpy(&c, cookie, sizeof(c));
	return (size_t)(c & mask);
}

static void
grant_hash_remove(struct nlm_grant *g)
{
	struct nlm_grant **pp =
	    &nlm->n_grants[grant_bucket(g->g_cookie, nlm->n_grants_mask)];

	for (; *pp != NULL; pp = &(*pp)->g_next)
		if (*pp == g) {
			*pp = g->g_next;
			nlm->n_ngrants--;
			return;
		}
}

/*
 * Add g to the cookie table, which doubles at load 1 (a release can grant
 * 100,000 waiters at once).  Out of memory: it stays, only slower.
 */
static void
grant_hash_add(struct nlm_grant *g)
{
	struct nlm_grant **tab, *x, *next;
	size_t i, b, size = (nlm->n_grants_mask + 1) * 2;

	if (nlm->n_ngrants >= nlm->n_grants_mask + 1 &&
	    (tab = calloc(size, sizeof(*tab))) != NULL) {
		for (i = 0; i <= nlm->n_grants_mask; i++)
			for (x = nlm->n_grants[i]; x != NULL; x = next) {
				next = x->g_next;
				b = grant_bucket(x->g_cookie, size - 1);
				x->g_next = tab[b];
				tab[b] = x;
			}
		free(nlm->n_grants);
		nlm->n_grants = tab;
		nlm->n_grants_mask = size - 1;
	}
	b = grant_bucket(g->g_cookie, nlm->n_grants_mask);
	g->g_next = nlm->n_grants[b];
	nlm->n_grants[b] = g;
	nlm->n_ngrants++;
}

struct nlm_grant *
nlm_grant_new(const struct nlm_ctx *cx, struct nlm_host *h,
    const nlm4_lockargs *a)
{
	struct nlm_grant *g;
	const nlm4_lock *l = &a->alock;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->g_fh = malloc(l->fh.nlm_netobj_len);
	g->g_oh = malloc(l->oh.nlm_netobj_len + 1);
	if (g->g_fh == NULL || g->g_oh == NULL) {
		nlm_grant_free(g);
		return NULL;
	}
	memcpy(g->g_fh, l->fh.nlm_netobj_val, l->fh.nlm_netobj_len);
	g->g_fhlen = l->fh.nlm_netobj_len;
	if (l->oh.nlm_netobj_len > 0)
		memcpy(g->g_oh, l->oh.nlm_netobj_val, l->oh.nlm_netobj_len);
	g->g_ohlen = l->oh.nlm_netobj_len;
	g->g_host = h;
	g->g_vers = cx->cx_vers;
	g->g_local = cx->cx_local;
	g->g_locallen = cx->cx_locallen;
	g->g_svid = l->svid;
	g->g_excl = a->exclusive;
	g->g_start = l->l_offset;
	g->g_len = l->l_len;
	g->g_wire_off = cx->cx_wire_off;
	g->g_wire_len = cx->cx_wire_len;
	return g;
}

/* Append g to its host's grants waiting for a callback. */
static void
grant_cbq_add(struct nlm_grant *g)
{
	struct nlm_host *h = g->g_host;

	nlm->n_stats.cb_waiting++;
	g->g_cbwait = true;
	g->g_cbnext = NULL;
	g->g_cbprev = h->h_cbqtail;
	if (h->h_cbqtail != NULL)
		h->h_cbqtail->g_cbnext = g;
	else
		h->h_cbq = g;
	h->h_cbqtail = g;
}

static void
grant_cbq_remove(struct nlm_grant *g)
{
	struct nlm_host *h = g->g_host;

	if (g->g_cbprev != NULL)
		g->g_cbprev->g_cbnext = g->g_cbnext;
	else
		h->h_cbq = g->g_cbnext;
	if (g->g_cbnext != NULL)
		g->g_cbnext->g_cbprev = g->g_cbprev;
	else
		h->h_cbqtail = g->g_cbprev;
	g->g_cbnext = g->g_cbprev = NULL;
	g->g_cbwait = false;
	nlm->n_stats.cb_waiting--;
}

static void	grant_send(struct nlm_grant *);

static void
grant_send_queued(struct ev_loop *loop, void *arg)
{
	(void)loop;
	grant_send(arg);
}

/*
 * A callback slot of h is free: the grant that waited longest takes it,
 * and its callback leaves from a timer (this may run inside nlm_apply(),
 * which a send that gives up and releases would re-enter).
 */
static void
grant_cb_next(struct nlm_host *h)
{
	struct nlm_grant *g = h->h_cbq;

	if (g == NULL || h->h_cbsent >= nlm->n_conf.nc_cb_max_per_host)
		return;
	ev_timer_set(nlm->n_loop, &g->g_timer, 0, grant_send_queued, g);
	grant_cbq_remove(g);
	g->g_cbslot = true;
	h->h_cbsent++;
}

/* Drop the oldest synchronous GRANTED kept open, ending it if open. */
static void
grant_sync_pop(struct nlm_grant *g)
{
	nlm_send_cancel(g->g_sync[g->g_sync_head].sc_send);
	g->g_sync[g->g_sync_head].sc_send = NULL;
	g->g_sync_head = (g->g_sync_head + 1) % NLM_GRANT_SYNC_KEEP;
	g->g_nsync--;
}

/* End every synchronous GRANTED kept open (grant_sync_keep()). */
static void
grant_sync_cancel(struct nlm_grant *g)
{
	while (g->g_nsync > 0)
		grant_sync_pop(g);
}

void
nlm_grant_free(struct nlm_grant *g)
{
	struct nlm_host *h = NULL;

	if (g == NULL)
		return;
	if (g->g_active) {
		if (!g->g_ended)	/* CANCEL, UNLOCK, a release ended it */
			nlm->n_stats.cb_dropped++;
		grant_hash_remove(g);
		if (g->g_cbwait)
			grant_cbq_remove(g);
		g->g_host->h_grants--;
		nlm->n_stats.cb_inflight--;
		if (g->g_cbslot) {
			g->g_host->h_cbsent--;
			h = g->g_host;
		}
	}
	ev_timer_cancel(nlm->n_loop, &g->g_timer);
	nlm_send_cancel(g->g_send);
	grant_sync_cancel(g);
	free(g->g_fh);
	free(g->g_oh);
	free(g);
	if (h != NULL)
		grant_cb_next(h);
}

void
nlm_grant_lockreq(const struct nlm_grant *g, struct lk_lockreq *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->rq_host = g->g_host->h_id;
	rq->rq_svid = g->g_svid;
	rq->rq_oh = g->g_oh;
	rq->rq_ohlen = g->g_ohlen;
	rq->rq_fh = g->g_fh;
	rq->rq_fhlen = g->g_fhlen;
	rq->rq_start = g->g_start;
	rq->rq_len = g->g_len;
	rq->rq_excl = g->g_excl;
}

struct nlm_grant *
nlm_grant_by_cookie(const nlm_netobj *cookie)
{
	struct nlm_grant *g;

	if (cookie->nlm_netobj_len != sizeof(g->g_cookie))
		return NULL;
	for (g = nlm->n_grants[grant_bucket(cookie->nlm_netobj_val,
	    nlm->n_grants_mask)];
	    g != NULL; g = g->g_next)
		if (memcmp(g->g_cookie, cookie->nlm_netobj_val,
		    sizeof(g->g_cookie)) == 0)
			return g;
	return NULL;
}

static void	grant_finish(struct nlm_grant *, bool);

static void
grant_release_retry(struct ev_loop *loop, void *arg)
{
	(void)loop;
	grant_finish(arg, false);
}

static void
grant_confirm_retry(struct ev_loop *loop, void *arg)
{
	(void)loop;
	grant_finish(arg, true);
}

/*
 * End the grant in lockcore, which hands g back as dropped (nlm_apply()
 * frees it):
 *   keep false: undo it -- the client refused it or we gave up.  The
 *     owner keeps what it held in the range before (lk_grant_undo(): a
 *     refused upgrade or extension must not take away the lock the
 *     client still holds).
 *   keep true: confirm it -- the client acknowledged it; the lock stays.
 * If lockcore cannot (out of memory), the grant stays and the same is
 * tried again in a second -- never left half done.  Its callbacks and its
 * give-up deadline end there: an acknowledged grant called back again
 * would be refused by a client that has no waiter any more, and that
 * refusal, like the deadline, would undo a lock the client holds.  A
 * re-sent LOCK, CANCEL or UNLOCK meanwhile ends it as usual.
 */
static void
grant_finish(struct nlm_grant *g, bool keep)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	enum lk_status st;
	char hs[300];

	nlm_grant_lockreq(g, &rq);
	st = keep ? lk_grant_confirm(nlm->n_table, &rq, ev_now_ms(), &res) :
	    lk_grant_undo(nlm->n_table, &rq, ev_now_ms(), &res);
	if (st == LK_NOTFOUND) {
		/*
		 * Cannot happen.  g is lockcore's unconfirmed grant here:
		 * g_active only from rs_granted (a grant never goes back to
		 * waiting), and when lockcore hands g back (rs_dropped) --
		 * every result that changed anything goes through
		 * nlm_apply() -- nlm_grant_free() ends its timers, sends and
		 * cookie, every way back into this function.  And rq names
		 * that grant: built from the LOCK arguments lk_lock() queued
		 * it with (a re-sent copy that replaced the udata matched the
		 * same owner, file, range and mode), fields lockcore never
		 * changes for a waiter, under a host id fixed for the host's
		 * life (held while h_grants > 0); lockcore keeps one
		 * unconfirmed grant per owner, file, range and mode.
		 * (tests/service confirm such grants: a re-sent copy that
		 * spells the range otherwise; a v3 range lockcore keeps to
		 * the end of the file.)
		 * Were the request ever to differ, lockcore would still hold
		 * g: freeing it would be a use after free (its table's
		 * teardown frees g again), keeping it a grant that never
		 * ends.  A broken invariant: exit, and the restart's store
		 * and reclaim take over.
		 */
		fatalx("host %s: %s grant lockcore does not know",
		    nlm_host_str(g->g_host, hs, sizeof(hs)), keep ?
		    "an acknowledged" : "a refused");
	}
	if (st != LK_OK) {
		nlm->n_stats.cb_release_failed++;
		log_rl_warnx(&rl_release, "host %s: %s failed (%s); trying "
		    "again in 1 s", nlm_host_str(g->g_host, hs, sizeof(hs)),
		    keep ? "confirming an acknowledged grant" :
		    "undoing a refused or expired grant", lk_strerror(st));
		nlm_send_cancel(g->g_send);
		g->g_send = NULL;
		grant_sync_cancel(g);
		ev_timer_set(nlm->n_loop, &g->g_timer, 1000, keep ?
		    grant_confirm_retry : grant_release_retry, g);
		return;
	}
	nlm_apply(res);	/* frees g */
}

/* The give-up deadline of a grant we do not call back (see below). */
static void
grant_deadline(struct ev_loop *loop, void *arg)
{
	struct nlm_grant *g = arg;
	char hs[300];

	(void)loop;
	nlm->n_stats.cb_given_up++;
	g->g_ended = true;
	log_rl_warnx(&rl_give_up, "host %s never collected a granted lock in "
	    "%u s: undoing it", nlm_host_str(g->g_host, hs, sizeof(hs)),
	    nlm->n_conf.nc_cb_give_up_sec);
	grant_finish(g, false);
}

/* Milliseconds left before give-up (UINT64_MAX: none; 0: it is due). */
static uint64_t
grant_left_ms(const struct nlm_grant *g, uint64_t now)
{
	uint64_t limit = (uint64_t)nlm->n_conf.nc_cb_give_up_sec * 1000;

	if (limit == 0)
		return UINT64_MAX;
	return now - g->g_granted_at >= limit ? 0 :
	    g->g_granted_at + limit - now;
}

static void	grant_retry(struct ev_loop *, void *);

/*
 * The next try `ms' from now, or the give-up deadline if it comes first
 * (where grant_send() gives up).
 */
static void
grant_rearm(struct nlm_grant *g, uint64_t ms)
{
	uint64_t left = grant_left_ms(g, ev_now_ms());

	ev_timer_set(nlm->n_loop, &g->g_timer, left < ms ? left : ms,
	    grant_retry, g);
}

void
nlm_grant_answer(struct nlm_grant *g, nlm4_stats st)
{
	uint64_t now;
	char hs[300];

	if (g->g_ended) {
		/*
		 * Its outcome is taken (acknowledged, refused, given up) and
		 * being applied again after lockcore ran out of memory: an
		 * answer to another copy of the callback changes nothing.
		 * A DENIED from a client whose process had the first copy
		 * would otherwise undo the lock it holds.
		 */
		nlm->n_stats.cb_unknown_res++;
		return;
	}
	switch (st) {
	case NLM4_GRANTED:
		nlm->n_stats.cb_acked++;
		g->g_ended = true;
		grant_finish(g, true);
		return;
	case NLM4_DENIED_GRACE_PERIOD:
		/*
		 * The client is recovering: keep trying -- at the backoff
		 * step set by the last send, if the GRANTED_MSG it answers
		 * was taken, which put the next copy off (grant_sent()).
		 */
		if (g->g_delivered) {
			now = ev_now_ms();
			g->g_delivered = false;
			grant_rearm(g, g->g_backoff_at > now ?
			    g->g_backoff_at - now : 0);
		}
		return;
	default:
		nlm->n_stats.cb_refused++;
		g->g_ended = true;
		log_rl_info(&rl_refused,
		    "host %s refused a granted lock (status %d): "
		    "undoing it", nlm_host_str(g->g_host, hs, sizeof(hs)),
		    (int)st);
		grant_finish(g, false);
		return;
	}
}

/* Which procedure this attempt uses. */
static uint32_t
grant_proc(const struct nlm_grant *g)
{
	switch (nlm->n_conf.nc_cbmode) {
	case NLM_CB_SYNC:
		return NLMPROC4_GRANTED;
	case NLM_CB_BOTH:
		return g->g_attempts % 2 == 0 ? NLMPROC4_GRANTED_MSG :
		    NLMPROC4_GRANTED;
	default:
		return NLMPROC4_GRANTED_MSG;
	}
}

/* The reply to a synchronous GRANTED: the client's answer. */
static void
grant_sync_reply(struct nlm_grant *g, XDR *res)
{
	nlm4_res r4;
	nlm_res r1;

	memset(&r4, 0, sizeof(r4));
	memset(&r1, 0, sizeof(r1));
	if (g->g_vers == NLM4_VERS) {
		if (xdr_nlm4_res(res, &r4))
			nlm_grant_answer(g, r4.stat.stat);	/* may free g */
		xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r4);
	} else {
		if (xdr_nlm_res(res, &r1))
			nlm_grant_answer(g, (nlm4_stats)r1.stat.stat);
		xdr_free(XDRPROC(xdr_nlm_res), (char *)&r1);
	}
}

/*
 * A synchronous GRANTED sent before the last send ended (grant_retry()):
 * answered, or open callback-retry-max-ms without an answer.
 */
static void
grant_sent_prev(void *arg, int ok, XDR *res)
{
	struct nlm_sync_copy *sc = arg;
	struct nlm_grant *g = sc->sc_grant;

	sc->sc_send = NULL;
	while (g->g_nsync > 0 && g->g_sync[g->g_sync_head].sc_send == NULL)
		grant_sync_pop(g);
	if (ok && res != NULL)
		grant_sync_reply(g, res);	/* may free g */
}

static void
grant_sent(void *arg, int ok, XDR *res)
{
	struct nlm_grant *g = arg;

	g->g_send = NULL;
	if (!ok || res == NULL)
		return;
	if (g->g_proc == NLMPROC4_GRANTED_MSG) {
		/*
		 * The client's NLM took it (it replied to the call); its
		 * answer comes as GRANTED_RES, which its RPC layer sends
		 * again if it is lost (Linux: after 10 s).  So the next
		 * copy waits callback-retry-max-ms (Linux: 60 s), not the
		 * backoff step: a copy that comes after the client's waiting
		 * process took the first one finds no waiter there, and the
		 * client answers it DENIED (Linux nlmclnt_grant()) -- taken
		 * for a refusal, that undid a lock the process holds, while
		 * its GRANTED_RES was still on its way.
		 */
		g->g_delivered = true;
		grant_rearm(g, nlm->n_conf.nc_cb_retry_max_ms);
		return;
	}
	grant_sync_reply(g, res);
}

static struct nlm_send *
grant_encode(struct nlm_grant *g, uint32_t proc)
{
	nlm4_testargs a4;
	nlm_testargs a1;
	nlm_netobj cookie = { sizeof(g->g_cookie), (char *)g->g_cookie };
	nlm_netobj fh = { (u_int)g->g_fhlen, (char *)g->g_fh };
	nlm_netobj oh = { (u_int)g->g_ohlen, (char *)g->g_oh };

	if (g->g_vers == NLM4_VERS) {
		a4.cookie = cookie;
		a4.exclusive = g->g_excl;
		a4.alock.caller_name = nlm->n_myname;
		a4.alock.fh = fh;
		a4.alock.oh = oh;
		a4.alock.svid = g->g_svid;
		a4.alock.l_offset = g->g_wire_off;
		a4.alock.l_len = g->g_wire_len;
		return nlm_send_new(&g->g_host->h_addr, g->g_host->h_addrlen,
		    NLM_PROG, g->g_vers, proc, XDRPROC(xdr_nlm4_testargs), &a4,
		    &g->g_local, g->g_locallen);
	}
	a1.cookie = cookie;
	a1.exclusive = g->g_excl;
	a1.alock.caller_name = nlm->n_myname;
	a1.alock.fh = fh;
	a1.alock.oh = oh;
	a1.alock.svid = g->g_svid;
	a1.alock.l_offset = (unsigned)g->g_wire_off;
	a1.alock.l_len = (unsigned)g->g_wire_len;
	return nlm_send_new(&g->g_host->h_addr, g->g_host->h_addrlen, NLM_PROG,
	    g->g_vers, proc, XDRPROC(xdr_nlm_testargs), &a1, &g->g_local,
	    g->g_locallen);
}

/*
 * The next copy is due.  A synchronous GRANTED still unanswered stays
 * open beside it, and beside the copies after it, for
 * callback-retry-max-ms (grant_send()): the client may have taken that
 * copy -- its process woke up holding the lock -- and be slow to say so.
 * Its reply GRANTED must confirm the grant: cancelled, the reply was
 * dropped as unknown, and a later copy, which finds no waiter at the
 * client, came back DENIED and undid the lock the process holds.  The
 * client answers in order, so that reply comes first.  Until 2026-12-06
 * only the copy before the newest was kept, for three backoff steps: a
 * client that answered its first copy after the third was sent (3 s at
 * the defaults) lost its lock to the next waiter.  (A reply lost on the
 * way cannot be told from a refusal: what the GRANTED_MSG mode, the
 * default, guards against, grant_sent().)  At most NLM_GRANT_SYNC_KEEP
 * are kept; when a shorter callback-retry-max-ms against -min-ms sends
 * more, the oldest goes.
 */
static void
grant_sync_keep(struct nlm_grant *g, struct nlm_send *s)
{
	struct nlm_sync_copy *sc;

	if (g->g_nsync == NLM_GRANT_SYNC_KEEP)
		grant_sync_pop(g);
	sc = &g->g_sync[(g->g_sync_head + g->g_nsync) % NLM_GRANT_SYNC_KEEP];
	sc->sc_grant = g;
	sc->sc_send = s;
	g->g_nsync++;
	nlm_send_set_cb(s, grant_sent_prev, sc);
}

static void
grant_retry(struct ev_loop *loop, void *arg)
{
	struct nlm_grant *g = arg;

	(void)loop;
	if (g->g_send != NULL && g->g_proc == NLMPROC4_GRANTED)
		grant_sync_keep(g, g->g_send);
	else		/* unanswered: it counts against the port */
		nlm_send_expire(g->g_send);
	g->g_send = NULL;
	if (grant_left_ms(g, ev_now_ms()) > 0)
		nlm->n_stats.cb_retried++;
	grant_send(g);
}

static void
grant_send(struct nlm_grant *g)
{
	uint64_t now = ev_now_ms(), left = grant_left_ms(g, now);
	struct nlm_send *s;
	uint32_t proc;
	unsigned next, wait;
	char hs[300];

	if (left == 0) {
		nlm->n_stats.cb_given_up++;
		g->g_ended = true;
		log_rl_warnx(&rl_give_up,
		    "host %s never acknowledged a granted lock in %u s: "
		    "undoing it", nlm_host_str(g->g_host, hs, sizeof(hs)),
		    nlm->n_conf.nc_cb_give_up_sec);
		grant_finish(g, false);
		return;
	}
	proc = grant_proc(g);
	g->g_proc = proc;
	g->g_delivered = false;
	next = g->g_delay_ms * 2 > nlm->n_conf.nc_cb_retry_max_ms ?
	    nlm->n_conf.nc_cb_retry_max_ms : g->g_delay_ms * 2;
	/*
	 * A synchronous GRANTED waits for its reply past the next copies,
	 * callback-retry-max-ms at least (grant_retry()).
	 */
	wait = g->g_delay_ms;
	if (proc == NLMPROC4_GRANTED)
		wait = g->g_delay_ms + next > nlm->n_conf.nc_cb_retry_max_ms ?
		    g->g_delay_ms + next : nlm->n_conf.nc_cb_retry_max_ms;
	if ((s = grant_encode(g, proc)) != NULL) {
		g->g_send = s;
		nlm->n_stats.cb_sent++;
		nlm_send_start(s, wait, 1, grant_sent, g);
	}
	g->g_attempts++;
	/* The next try, or the give-up deadline if it comes first. */
	g->g_backoff_at = now + g->g_delay_ms;
	ev_timer_set(nlm->n_loop, &g->g_timer, left < g->g_delay_ms ?
	    left : g->g_delay_ms, grant_retry, g);
	g->g_delay_ms = next;
}

void
nlm_grant_start(struct nlm_grant *g)
{
	nlm_netobj ck;
	char hs[300];

	if (g->g_active)
		return;
	g->g_active = true;
	g->g_granted_at = ev_now_ms();
	/*
	 * A GRANTED_RES is matched by cookie and source address: a cookie a
	 * host could guess (they were a counter, and a host sees its own)
	 * would let it, with another host's address forged, answer that
	 * host's GRANTED_MSG DENIED -- the grant undone while the client
	 * holds the lock.  So they are random (ChaCha20, as outgoing xids),
	 * never a live grant's, and a late GRANTED_RES for a grant of an
	 * earlier start matches nothing.
	 */
	ck.nlm_netobj_len = sizeof(g->g_cookie);
	ck.nlm_netobj_val = (char *)g->g_cookie;
	do
		arc4random_buf(g->g_cookie, sizeof(g->g_cookie));
	while (nlm_grant_by_cookie(&ck) != NULL);
	grant_hash_add(g);
	g->g_host->h_grants++;
	nlm->n_stats.cb_inflight++;
	nlm->n_stats.cb_granted++;
	g->g_delay_ms = nlm->n_conf.nc_cb_retry_min_ms;
	if (nlm->n_conf.nc_cbmode != NLM_CB_OFF &&
	    g->g_host->h_cbsent < nlm->n_conf.nc_cb_max_per_host) {
		g->g_cbslot = true;
		g->g_host->h_cbsent++;
		grant_send(g);
		return;
	}
	/*
	 * No callback now: callbacks are off (the client's re-sent LOCK
	 * collects the grant), or this host has callback-max-per-host
	 * called back already and this one waits for one of them to end
	 * (HOW IT WORKS).  Either way the give-up deadline still releases
	 * it.
	 */
	if (nlm->n_conf.nc_cbmode != NLM_CB_OFF) {
		grant_cbq_add(g);
		log_rl_warnx(&rl_cb_limit,
		    "host %s: %u callbacks in flight; the next wait for "
		    "their answers", nlm_host_str(g->g_host, hs, sizeof(hs)),
		    nlm->n_conf.nc_cb_max_per_host);
	}
	if (nlm->n_conf.nc_cb_give_up_sec > 0)
		ev_timer_set(nlm->n_loop, &g->g_timer,
		    (uint64_t)nlm->n_conf.nc_cb_give_up_sec * 1000,
		    grant_deadline, g);
}
