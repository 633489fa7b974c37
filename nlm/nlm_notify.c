/*
 * nlm_notify.c - telling the hosts on the monitor list that we restarted.
 *
 * The monitor list is the host table (nlm_host.c): every host that held or
 * waited for a lock or share, kept in the store.  At every start (and at a
 * simulated one, SM_SIMU_CRASH) each monitored host (one that sent a LOCK,
 * not only NM_LOCK or SHARE: those run no status monitor) is owed an
 * SM_NOTIFY (NSM v1 procedure 6) carrying our new state number, so that
 * its status monitor tells its lock manager to reclaim.  For each host:
 *
 *   - the debt is stored: the host record gets the Unix time it began
 *     (h_notify_since), staged now and committed before anything is sent.
 *     A restart before the host answered finds it there and keeps the
 *     original time, so the give-up deadline counts from the first start
 *     that owed it (unless that time is ahead of the clock: then from
 *     now); within a start the time owed runs on the monotonic clock, so
 *     that a step of the wall clock gives nothing up (notify_owed_sec());
 *   - the notification goes to the `status' program that the host's
 *     rpcbind knows (PMAP GETPORT over IPv4, RPCB GETADDR over IPv6, both
 *     through nlm_out.c's port cache), over UDP, from the server address
 *     the host used to reach us;
 *   - mon_name is that server address in presentation form, which is what
 *     a Linux client monitors (its statd compares names, the kernel asked
 *     for the address it mounted); the notify-name setting replaces it
 *     with a fixed name;
 *   - a host that reached us through several of our addresses (it mounted
 *     from each) monitors each under its own name, and a notification
 *     names one: it gets one per address, in turn, each from that address
 *     and naming it (with notify-name, one: the name is the same).  An
 *     attempt without an answer passes the turn to the next address still
 *     owed: one that cannot be sent from (no longer ours: renumbered, a
 *     floating address moved away) must not keep the others from being
 *     told until the debt is given up.  The addresses are those of its
 *     record when the debt began, copied: a request through a new one
 *     meanwhile may push the oldest out of the record (nlm_host.c), and
 *     must not shift what is still to be told;
 *   - an attempt is one look-up (if the port is not cached) and one call,
 *     each waiting up to the current delay; without an answer the next
 *     attempt starts when the delay has passed since this one began.  The
 *     delay starts at 1 s and doubles up to 60 s.  A reply for every
 *     address ends the debt (record staged); notify-give-up seconds after
 *     it began, it is dropped, logged;
 *   - everything runs from the event loop: a host that never answers
 *     costs a timer and a UDP datagram now and then;
 *   - at most NOTIFY_PER_ADDR attempts are in flight to one address
 *     (hosts sharing an address are one machine, one status monitor);
 *     the rest wait their turn in order (the count and the queue live
 *     in the host index's record of that address).  A burst of hundreds of
 *     datagrams would overflow the receiver's socket buffer and cost
 *     each lost one a full backoff delay; other addresses never wait
 *     for this one;
 *   - out of memory when a debt begins, the debt stays stored and the
 *     idle sweep (nlm_host.c, once a minute) takes it up again
 *     (nlm_notify_resume()): the next start of nlmd may be months away,
 *     and the client must reclaim in this one's grace period.  Out of
 *     memory for an attempt's call, the attempt counts as lost: the next
 *     is scheduled as after any loss (arming a timer allocates nothing).
 *
 * A host that tells us itself that it restarted (FREE_ALL, SM_NOTIFY)
 * needs no notification: it leaves the list (nlm_host_forget()); one
 * released in pieces, after the last, its notifier stopped at the first
 * (nlm_host.c).
 */
#include "nlm_impl.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "rpc/sm_inter.h"
#include "rpcsrv.h"

#define NOTIFY_DELAY_MIN_MS	1000
#define NOTIFY_DELAY_MAX_MS	60000
#define NOTIFY_PER_ADDR		16
#define NOTIFY_NAME_LEN		(INET6_ADDRSTRLEN + 16)

static bool notify_closing;	/* shutdown: start nothing */

static void	notify_send(struct nlm_notifier *);
static unsigned	notify_targets(const struct nlm_notifier *);
static const char *notify_mon_name(const struct nlm_notifier *, unsigned,
		    char *, size_t);
static const char *notify_owed_names(const struct nlm_notifier *, char *,
		    size_t);

/* An attempt ended: give its slot to the next one waiting there. */
static void
addr_release(struct nlm_addrcount *ac)
{
	struct nlm_notifier *nt;

	ac->ac_notifying--;
	if (notify_closing || (nt = ac->ac_nqhead) == NULL)
		return;
	ac->ac_nqhead = nt->nt_qnext;
	if (ac->ac_nqhead == NULL)
		ac->ac_nqtail = NULL;
	nt->nt_queued = false;
	nt->nt_qnext = NULL;
	ac->ac_notifying++;
	nt->nt_slot = true;
	notify_send(nt);
}

static void
addr_unqueue(struct nlm_notifier *nt)
{
	struct nlm_addrcount *ac = nt->nt_host->h_ag;
	struct nlm_notifier **pp, *prev = NULL;

	for (pp = &ac->ac_nqhead; *pp != NULL; prev = *pp,
	    pp = &(*pp)->nt_qnext)
		if (*pp == nt) {
			*pp = nt->nt_qnext;
			if (ac->ac_nqtail == nt)
				ac->ac_nqtail = prev;
			break;
		}
	nt->nt_queued = false;
}

static uint64_t
notify_unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 1;
}

/* A stored start further than this from the one counted is restaged. */
#define NOTIFY_CLOCK_SLACK_SEC	60

/*
 * The seconds nt's debt has been owed: what an earlier start owed it
 * (nt_prior_sec, read from the wall clock when this notifier began) and
 * the time since, on the loop's monotonic clock.  h_notify_since is
 * wall-clock (the store keeps it across restarts) and the wall clock is
 * stepped, at boot above all (NTP, chrony): back, now - since wrapped and
 * the debt was given up at the first unanswered attempt; forward -- a
 * server without a working RTC boots in the past, nlmd stores the debt's
 * start under that clock, then the clock jumps ahead by more than
 * notify-give-up -- it was given up at once too.  Either way the client
 * was never told to reclaim.  A stored start that no longer agrees with
 * the time counted moves (staged), so that the next start counts from it
 * too.
 */
static uint64_t
notify_owed_sec(struct nlm_notifier *nt)
{
	struct nlm_host *h = nt->nt_host;
	uint64_t now = notify_unix_now(), owed, since;

	owed = nt->nt_prior_sec + (ev_now_ms() - nt->nt_begun_ms) / 1000;
	since = now > owed ? now - owed : 1;
	if (h->h_notify_since > since + NOTIFY_CLOCK_SLACK_SEC ||
	    h->h_notify_since + NOTIFY_CLOCK_SLACK_SEC < since) {
		h->h_notify_since = since;
		nlm_host_stage(h);
	}
	return owed;
}

static void	notify_attempt(struct ev_loop *, void *);

/*
 * Move nt_local to the next address (after the current one, round) not
 * answered yet; false when every one has been.
 */
static bool
notify_next(struct nlm_notifier *nt)
{
	unsigned n = notify_targets(nt), i, k;

	for (k = 1; k <= n; k++) {
		i = (nt->nt_local + k) % n;
		if ((nt->nt_told & 1u << i) == 0) {
			nt->nt_local = i;
			return true;
		}
	}
	return false;
}

/* The debt is settled (answered or given up): stored, sender freed. */
static void
notify_end(struct nlm_notifier *nt)
{
	nlm_notify_settle(nt->nt_host);
}

static void
notify_done(void *arg, int ok, XDR *res)
{
	struct nlm_notifier *nt = arg;
	struct nlm_host *h = nt->nt_host;
	uint64_t now = ev_now_ms(), next;
	char hs[300];

	(void)res;
	nt->nt_send = NULL;
	if (nt->nt_slot) {
		nt->nt_slot = false;
		addr_release(h->h_ag);
	}
	if (ok) {
		char name[NOTIFY_NAME_LEN];

		log_info("host %s: SM_NOTIFY (state %d, mon_name %s) answered "
		    "after %u attempt(s), %" PRIu64 " ms", nlm_host_str(h, hs,
		    sizeof(hs)), nt->nt_state, notify_mon_name(nt, nt->nt_local,
		    name, sizeof(name)), nt->nt_tries[nt->nt_local],
		    now - nt->nt_begun_ms);
		nt->nt_told |= 1u << nt->nt_local;
		if (notify_next(nt)) {
			/* The next of our addresses it knows us by. */
			nt->nt_delay_ms = NOTIFY_DELAY_MIN_MS;
			notify_attempt(nlm->n_loop, nt);
			return;
		}
		nlm->n_stats.notify_acked++;
		notify_end(nt);
		return;
	}
	if (notify_owed_sec(nt) >= nlm->n_conf.nc_notify_give_up_sec) {
		char owed[STORE_LOCAL_MAX * (NOTIFY_NAME_LEN + 1)];

		nlm->n_stats.notify_given_up++;
		log_warnx("host %s: SM_NOTIFY (state %d, mon_name %s) "
		    "unanswered since %" PRIu64 " (%u attempts); giving up "
		    "(notify-give-up %u s): it will not know to reclaim what "
		    "it holds under %s", nlm_host_str(h, hs, sizeof(hs)),
		    nt->nt_state, notify_owed_names(nt, owed, sizeof(owed)),
		    h->h_notify_since, nt->nt_attempts,
		    nlm->n_conf.nc_notify_give_up_sec,
		    notify_targets(nt) > 1 ? "those names" : "that name");
		notify_end(nt);
		return;
	}
	/* The next attempt tells the next address owed (see above). */
	(void)notify_next(nt);
	next = nt->nt_attempt_ms + nt->nt_delay_ms;
	if (nt->nt_delay_ms < NOTIFY_DELAY_MAX_MS)
		nt->nt_delay_ms = nt->nt_delay_ms * 2 > NOTIFY_DELAY_MAX_MS ?
		    NOTIFY_DELAY_MAX_MS : nt->nt_delay_ms * 2;
	ev_timer_set(nlm->n_loop, &nt->nt_timer, next > now ? next - now : 0,
	    notify_attempt, nt);
}

/*
 * How many notifications nt's host is owed: one per server address it
 * used (each names its own), one when it used none we know or when
 * notify-name names us.
 */
static unsigned
notify_targets(const struct nlm_notifier *nt)
{
	if (nlm->n_conf.nc_notify_name[0] != '\0' || nt->nt_nlocal == 0)
		return 1;
	return nt->nt_nlocal;
}

/*
 * The server address notification i (< notify_targets(nt)) is sent from,
 * in `ss'; 0 when none is known (the kernel picks one).  With
 * notify-name, the one notification goes first from the last address
 * the host used, and each attempt after an unanswered one from the one
 * before (round): an address no longer ours must not keep it from being
 * told, as without notify-name (notify_next()).
 */
static socklen_t
notify_local(const struct nlm_notifier *nt, unsigned i,
    struct sockaddr_storage *ss)
{
	if (nt->nt_nlocal > 0 && nlm->n_conf.nc_notify_name[0] != '\0')
		i = nt->nt_nlocal - 1 - nt->nt_attempts % nt->nt_nlocal;
	if (i >= nt->nt_nlocal) {
		memset(ss, 0, sizeof(*ss));
		return 0;
	}
	return nlm_addr_from_store(&nt->nt_locals[i], ss);
}

/* The mon_names not answered yet, "A,B" (for the give-up line). */
static const char *
notify_owed_names(const struct nlm_notifier *nt, char *buf, size_t len)
{
	char name[NOTIFY_NAME_LEN];
	size_t n = 0;
	unsigned i;
	int w;

	buf[0] = '\0';
	for (i = 0; i < notify_targets(nt); i++) {
		if (nt->nt_told & 1u << i)
			continue;
		w = snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "",
		    notify_mon_name(nt, i, name, sizeof(name)));
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	return buf;
}

/* The mon_name of notification i: notify-name, or the address. */
static const char *
notify_mon_name(const struct nlm_notifier *nt, unsigned i, char *buf,
    size_t len)
{
	struct sockaddr_storage ss;

	if (nlm->n_conf.nc_notify_name[0] != '\0')
		return nlm->n_conf.nc_notify_name;
	if (notify_local(nt, i, &ss) > 0)
		return addr_str((const struct sockaddr *)&ss, 0, buf, len);
	/* Never talked to us through a known address: our name. */
	return nlm->n_myname;
}

/* Start an attempt, or queue it behind the others to that address. */
static void
notify_attempt(struct ev_loop *loop, void *arg)
{
	struct nlm_notifier *nt = arg;
	struct nlm_addrcount *ac = nt->nt_host->h_ag;

	(void)loop;
	if (ac->ac_notifying >= NOTIFY_PER_ADDR) {
		nt->nt_queued = true;
		nt->nt_qnext = NULL;
		if (ac->ac_nqtail != NULL)
			ac->ac_nqtail->nt_qnext = nt;
		else
			ac->ac_nqhead = nt;
		ac->ac_nqtail = nt;
		return;
	}
	ac->ac_notifying++;
	nt->nt_slot = true;
	notify_send(nt);
}

static void
notify_send(struct nlm_notifier *nt)
{
	struct nlm_host *h = nt->nt_host;
	struct sockaddr_storage local;
	socklen_t locallen;
	struct stat_chge sc;
	char name[NOTIFY_NAME_LEN], hs[300];

	locallen = notify_local(nt, nt->nt_local, &local);
	sc.mon_name = (char *)notify_mon_name(nt, nt->nt_local, name,
	    sizeof(name));
	sc.state = nt->nt_state;
	nt->nt_attempts++;
	nt->nt_tries[nt->nt_local]++;
	nt->nt_attempt_ms = ev_now_ms();
	nt->nt_send = nlm_send_new(&h->h_addr, h->h_addrlen, SM_PROG, SM_VERS,
	    SM_NOTIFY, XDRPROC(xdr_stat_chge), &sc,
	    locallen > 0 ? &local : NULL, locallen);
	if (nt->nt_send == NULL) {
		log_warnx("host %s: out of memory for SM_NOTIFY; retrying",
		    nlm_host_str(h, hs, sizeof(hs)));
		notify_done(nt, 0, NULL);
		return;
	}
	nlm->n_stats.notify_sent++;
	log_debug("host %s: SM_NOTIFY mon_name %s state %d, attempt %u",
	    nlm_host_str(h, hs, sizeof(hs)), sc.mon_name, sc.state,
	    nt->nt_tries[nt->nt_local]);
	nlm_send_lookup(nt->nt_send, nt->nt_delay_ms, 1);
	nlm_send_start(nt->nt_send, nt->nt_delay_ms, 1, notify_done, nt);
}

/*
 * Start telling h (its debt stored, owed since h_notify_since) of our
 * state `state', `now' being notify_unix_now().  False when out of memory.
 */
static bool
notify_begin(struct nlm_host *h, int32_t state, uint64_t now)
{
	struct nlm_notifier *nt;

	if ((nt = calloc(1, sizeof(*nt))) == NULL)
		return false;
	nt->nt_host = h;
	nt->nt_state = state;
	memcpy(nt->nt_locals, h->h_local, sizeof(nt->nt_locals));
	nt->nt_nlocal = h->h_nlocal;
	nt->nt_delay_ms = NOTIFY_DELAY_MIN_MS;
	nt->nt_begun_ms = ev_now_ms();
	/* Ahead of the clock (stepped back since): see notify_owed_sec(). */
	nt->nt_prior_sec = now > h->h_notify_since ? now - h->h_notify_since :
	    0;
	h->h_notify = nt;
	nlm->n_stats.notify_started++;
	nlm->n_stats.notify_pending++;
	/* Made now, held by the RPC client until the turn is committed. */
	notify_attempt(nlm->n_loop, nt);
	return true;
}

static void
notify_one(struct nlm_host *h, void *arg)
{
	int32_t state = *(const int32_t *)arg;
	uint64_t now;

	nlm_notify_stop(h);	/* an older state's: superseded */
	/*
	 * Only a host that asked to be monitored (a LOCK; NM_LOCK and SHARE
	 * alone do not) is told, as nfs-utils' sm-notify tells only the
	 * hosts Linux lockd had rpc.statd monitor: NM_LOCK is for clients
	 * that run no status monitor (X/Open XNFS), which learn of the
	 * restart from DENIED_GRACE_PERIOD.  Notified, such a host never
	 * answered: a look-up at its rpcbind up to once a minute until
	 * notify-give-up (a day by default), the host kept from the idle
	 * sweep all that time, then a warning that it would not reclaim.  A
	 * debt an earlier start stored for it is settled.
	 */
	if (!h->h_monitored) {
		nlm_notify_settle(h);
		return;
	}
	now = notify_unix_now();
	/* One ahead of the clock counts from now: see notify_owed_sec(). */
	if (h->h_notify_since == 0 || h->h_notify_since > now)
		h->h_notify_since = now;
	nlm_host_stage(h);
	/* Stored: the idle sweep takes it up (nlm_notify_resume()). */
	if (!notify_begin(h, state, now))
		log_warnx("out of memory: SM_NOTIFY to %s deferred to the "
		    "idle sweep", h->h_name);
}

void
nlm_notify_resume(struct nlm_host *h)
{
	char hs[300];

	/*
	 * Being told already, owed nothing, or being released for a
	 * restart it told us of: as good as gone.
	 */
	if (h->h_notify != NULL || !h->h_monitored ||
	    h->h_notify_since == 0 || h->h_rel_forget || notify_closing)
		return;
	if (notify_begin(h, nlm->n_conf.nc_nsm_state, notify_unix_now()))
		log_info("host %s: SM_NOTIFY deferred for want of memory: "
		    "sending it now", nlm_host_str(h, hs, sizeof(hs)));
}

static void
notify_count(struct nlm_host *h, void *arg)
{
	if (h->h_monitored)
		(*(unsigned *)arg)++;
}

void
nlm_notify_all(int32_t state)
{
	unsigned n = 0;

	/* Counted first: this line comes before those of each host. */
	nlm_host_foreach(notify_count, &n);
	if (n > 0)
		log_info("notifying %u host(s) of NSM state %d", n, state);
	nlm_host_foreach(notify_one, &state);
}

void
nlm_notify_stop(struct nlm_host *h)
{
	struct nlm_notifier *nt = h->h_notify;

	if (nt == NULL)
		return;
	ev_timer_cancel(nlm->n_loop, &nt->nt_timer);
	nlm_send_cancel(nt->nt_send);
	if (nt->nt_queued)
		addr_unqueue(nt);
	if (nt->nt_slot)
		addr_release(h->h_ag);
	h->h_notify = NULL;
	nlm->n_stats.notify_pending--;
	free(nt);
}

void
nlm_notify_settle(struct nlm_host *h)
{
	nlm_notify_stop(h);
	if (h->h_notify_since != 0) {
		h->h_notify_since = 0;
		nlm_host_stage(h);
	}
}

static void
notify_free_one(struct nlm_host *h, void *arg)
{
	(void)arg;
	nlm_notify_stop(h);
}

void
nlm_notify_shutdown(void)
{
	notify_closing = true;
	nlm_host_foreach(notify_free_one, NULL);
	notify_closing = false;
}
