/*
 * nlm_ctl.c - what the operator asks a running nlmd (ctl/ctlsrv.h): the
 * status dump, releasing locks by hand, ending grace, the metrics.
 *
 * status   server, grace and totals lines, one line per host; with
 *          locks=1 every lock, share and waiter too, produced in pieces
 *          of CTL_PIECE hosts or records (well under a millisecond) per
 *          turn of the loop (a cursor in the list of hosts, lockcore's
 *          resumable walk), so clients are served between the pieces:
 *          100,000 hosts held the loop 230 ms in one turn before.
 *          Lock, share and waiter lines name their host by id; the host
 *          lines come first, so a reader can join them.
 * release  goes through lockcore and the store like an UNLOCK (or, for a
 *          whole host, like FREE_ALL): waiters behind get their GRANTED
 *          callbacks; the answer leaves once the release is committed.
 *          With dry-run=1 it lists what it would release, changing nothing,
 *          in pieces as status does.
 * grace-end ends grace now, as the deadline would; the answer leaves once
 *          every record is dropped and that is committed.
 * (metrics: nlm_metrics.c, registered by the daemon with the NSM's.)
 *
 * Line kinds and keys (nlmctl reads them; see ctl/ctl.h for the format):
 *   server  version pid epoch nsm-state started uptime durability
 *           commit-stall-ms
 *   grace   active remaining-ms locks shares hosts how ended-after-ms
 *           dropped
 *   totals  hosts files locks shares waiters callbacks notifications
 *           reclaimable-locks reclaimable-shares tokens
 *   host    id name addr local nsm-state monitored epoch locks shares
 *           waiters reclaimable callbacks notify-since idle-ms
 *   lock    host svid oh fh start len mode token epoch reclaimable
 *   share   host oh fh access deny epoch reclaimable
 *   waiter  host svid oh fh start len mode waited-ms granted
 *   released kind host svid oh fh start len (release)
 */
#include "nlm_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctlsrv.h"
#include "log.h"
#include "rpcsrv.h"
#include "version.h"

#define CTL_PIECE	250	/* records per piece of a dump */
#define CTL_REL_PIECE	1024	/* records released per piece */
#define CTL_REL_STALL_MS 10000	/* a release by host's reader may stall */

static char ctl_durability[16];
static uint64_t ctl_started_unix;

/* ---- status ---- */

static int
ctl_recl_count(const struct lk_host_info *hi, void *arg)
{
	size_t *n = arg;

	if (hi->hi_rlocks + hi->hi_rshares > 0)
		(*n)++;
	return 0;
}

static void
ctl_addr(struct ctl_conn *c, const char *key,
    const struct sockaddr_storage *ss, socklen_t len)
{
	char a[64];

	ctl_kv(c, key, len == 0 ? "-" : addr_str_scoped((const struct
	    sockaddr *)ss, a, sizeof(a)));
}

struct ctl_status {
	bool		 st_locks;
	bool		 st_byhost;	/* filter: the hosts in st_ids */
	char		*st_name;	/* ... those of this caller_name */
	uint8_t		 st_fh[1024];
	long		 st_fhlen;	/* -1: no filter */
	uint64_t	*st_ids;	/* hosts named st_name */
	size_t		 st_nids;
	struct nlm_host	*st_cur;	/* host lines still to come */
	struct ctl_conn	*st_conn;	/* (during a fill) */
	struct lk_scan	 st_scan;
};

static bool
ctl_host_wanted(const struct ctl_status *st, uint64_t id)
{
	size_t i;

	if (!st->st_byhost)
		return true;
	for (i = 0; i < st->st_nids; i++)
		if (st->st_ids[i] == id)
			return true;
	return false;
}

static void
ctl_host_line(struct nlm_host *h, void *arg)
{
	struct ctl_status *st = arg;
	struct ctl_conn *c;
	struct lk_host_info hi;
	char locals[STORE_LOCAL_MAX * (INET6_ADDRSTRLEN + 16)];

	if (st->st_name != NULL && strcmp(h->h_name, st->st_name) != 0)
		return;
	c = st->st_conn;
	(void)lk_host_info(nlm->n_table, h->h_id, &hi);
	ctl_line(c, "host");
	ctl_kv_u64(c, "id", h->h_id);
	ctl_kv(c, "name", h->h_name);
	ctl_addr(c, "addr", &h->h_addr, h->h_addrlen);
	ctl_kv(c, "local", nlm_host_locals_str(h, locals, sizeof(locals)));
	ctl_kv_i64(c, "nsm-state", h->h_state);
	ctl_kv_u64(c, "monitored", h->h_monitored);
	ctl_kv_u64(c, "epoch", h->h_epoch);
	ctl_kv_u64(c, "locks", hi.hi_locks);
	ctl_kv_u64(c, "shares", hi.hi_shares);
	ctl_kv_u64(c, "waiters", hi.hi_waiters);
	ctl_kv_u64(c, "reclaimable", hi.hi_rlocks + hi.hi_rshares);
	ctl_kv_u64(c, "callbacks", h->h_grants);
	ctl_kv_u64(c, "callbacks-waiting", nlm->n_conf.nc_cbmode ==
	    NLM_CB_OFF ? 0 : h->h_grants - h->h_cbsent);
	ctl_kv_u64(c, "notify-since", h->h_notify_since);
	ctl_kv_u64(c, "idle-ms", ev_now_ms() - h->h_seen);
	ctl_line_end(c);
}

/*
 * The ids of the hosts named st_name, from the name index: the record
 * lines are filtered by them.  False: out of memory.
 */
static bool
ctl_status_ids(struct ctl_status *st)
{
	struct nlm_host *h;
	size_t n = 0;

	for (h = nlm_host_named(st->st_name); h != NULL; h = h->h_nnext)
		n++;
	if (n == 0)
		return true;
	if ((st->st_ids = calloc(n, sizeof(*st->st_ids))) == NULL)
		return false;
	for (h = nlm_host_named(st->st_name); h != NULL; h = h->h_nnext)
		st->st_ids[st->st_nids++] = h->h_id;
	return true;
}

static void
ctl_status_head(struct ctl_conn *c)
{
	const struct nlm_grace *g = &nlm->n_grace;
	struct lk_counts ct;
	uint64_t now = ev_now_ms();
	size_t recl_hosts = 0;

	lk_table_counts(nlm->n_table, &ct);
	/* A pass over the hosts only while there is something to count. */
	if (ct.ct_rlocks + ct.ct_rshares > 0)
		(void)lk_host_foreach(nlm->n_table, ctl_recl_count,
		    &recl_hosts);

	ctl_line(c, "server");
	ctl_kv(c, "version", NLMD_VERSION);
	ctl_kv_u64(c, "pid", (uint64_t)getpid());
	ctl_kv_u64(c, "epoch", nlm->n_conf.nc_epoch);
	ctl_kv_i64(c, "nsm-state", nlm->n_conf.nc_nsm_state);
	ctl_kv_u64(c, "started", ctl_started_unix);
	ctl_kv_u64(c, "uptime", (now - nlm->n_started_ms) / 1000);
	ctl_kv(c, "durability", ctl_durability);
	ctl_kv_u64(c, "commit-stall-ms", nlm_commit_stall_ms());
	ctl_kv_u64(c, "input-paused-ms", nlm_input_paused_ms());
	ctl_line_end(c);

	ctl_line(c, "grace");
	ctl_kv_u64(c, "active", g->g_active);
	ctl_kv_u64(c, "remaining-ms", g->g_active && g->g_deadline_ms > now ?
	    g->g_deadline_ms - now : 0);
	ctl_kv_u64(c, "locks", ct.ct_rlocks);
	ctl_kv_u64(c, "shares", ct.ct_rshares);
	ctl_kv_u64(c, "hosts", recl_hosts);
	ctl_kv(c, "how", !g->g_had ? "no grace at this start" :
	    g->g_how != NULL ? g->g_how : "in progress");
	ctl_kv_u64(c, "ended-after-ms", g->g_end_ms > 0 ?
	    g->g_end_ms - g->g_start_ms : 0);
	ctl_kv_u64(c, "dropped", g->g_dropped);
	ctl_line_end(c);

	ctl_line(c, "totals");
	ctl_kv_u64(c, "hosts", nlm->n_nhosts);
	ctl_kv_u64(c, "files", ct.ct_files);
	ctl_kv_u64(c, "locks", ct.ct_locks);
	ctl_kv_u64(c, "shares", ct.ct_shares);
	ctl_kv_u64(c, "waiters", ct.ct_waiters);
	ctl_kv_u64(c, "callbacks", nlm->n_stats.cb_inflight);
	ctl_kv_u64(c, "callbacks-waiting", nlm->n_stats.cb_waiting);
	ctl_kv_u64(c, "notifications", nlm->n_stats.notify_pending);
	ctl_kv_u64(c, "reclaimable-locks", ct.ct_rlocks);
	ctl_kv_u64(c, "reclaimable-shares", ct.ct_rshares);
	ctl_kv_u64(c, "tokens", ct.ct_last_token);
	ctl_line_end(c);
}

static int
ctl_lock_line(const struct lk_record *rc, void *arg)
{
	struct ctl_conn *c = arg;

	ctl_line(c, "lock");
	ctl_kv_u64(c, "host", rc->rc_host);
	ctl_kv_i64(c, "svid", rc->rc_svid);
	ctl_kv_hex(c, "oh", rc->rc_oh, rc->rc_ohlen);
	ctl_kv_hex(c, "fh", rc->rc_fh, rc->rc_fhlen);
	ctl_kv_u64(c, "start", rc->rc_start);
	ctl_kv_u64(c, "len", rc->rc_len);
	ctl_kv(c, "mode", rc->rc_excl ? "exclusive" : "shared");
	ctl_kv_u64(c, "token", rc->rc_token);
	ctl_kv_u64(c, "epoch", rc->rc_epoch);
	ctl_kv_u64(c, "reclaimable", rc->rc_reclaim);
	ctl_line_end(c);
	return 0;
}

static int
ctl_share_line(const struct lk_record *rc, void *arg)
{
	struct ctl_conn *c = arg;

	ctl_line(c, "share");
	ctl_kv_u64(c, "host", rc->rc_host);
	ctl_kv_hex(c, "oh", rc->rc_oh, rc->rc_ohlen);
	ctl_kv_hex(c, "fh", rc->rc_fh, rc->rc_fhlen);
	ctl_kv_u64(c, "access", rc->rc_access);
	ctl_kv_u64(c, "deny", rc->rc_deny);
	ctl_kv_u64(c, "epoch", rc->rc_epoch);
	ctl_kv_u64(c, "reclaimable", rc->rc_reclaim);
	ctl_line_end(c);
	return 0;
}

static int
ctl_waiter_line(const struct lk_waiter_info *wi, void *arg)
{
	struct ctl_conn *c = arg;
	const struct lk_record *rc = &wi->wi_req;

	ctl_line(c, "waiter");
	ctl_kv_u64(c, "host", rc->rc_host);
	ctl_kv_i64(c, "svid", rc->rc_svid);
	ctl_kv_hex(c, "oh", rc->rc_oh, rc->rc_ohlen);
	ctl_kv_hex(c, "fh", rc->rc_fh, rc->rc_fhlen);
	ctl_kv_u64(c, "start", rc->rc_start);
	ctl_kv_u64(c, "len", rc->rc_len);
	ctl_kv(c, "mode", rc->rc_excl ? "exclusive" : "shared");
	ctl_kv_u64(c, "waited-ms", ev_now_ms() - wi->wi_since);
	ctl_kv_u64(c, "granted", wi->wi_granted);
	ctl_line_end(c);
	return 0;
}

/* The host filter, applied to records: pass them on or not. */
struct ctl_filter {
	struct ctl_conn		*conn;
	struct ctl_status	*st;
};

static int
ctl_f_lock(const struct lk_record *rc, void *arg)
{
	struct ctl_filter *f = arg;

	return ctl_host_wanted(f->st, rc->rc_host) ?
	    ctl_lock_line(rc, f->conn) : 0;
}

static int
ctl_f_share(const struct lk_record *rc, void *arg)
{
	struct ctl_filter *f = arg;

	return ctl_host_wanted(f->st, rc->rc_host) ?
	    ctl_share_line(rc, f->conn) : 0;
}

static int
ctl_f_waiter(const struct lk_waiter_info *wi, void *arg)
{
	struct ctl_filter *f = arg;

	return ctl_host_wanted(f->st, wi->wi_req.rc_host) ?
	    ctl_waiter_line(wi, f->conn) : 0;
}

/*
 * One piece of the dump: CTL_PIECE host lines (the list walked with a
 * cursor, so hosts may come and go between pieces), then, with locks=1,
 * CTL_PIECE records of lockcore's resumable walk.
 */
static bool
ctl_status_fill(struct ctl_conn *c, void *arg)
{
	struct ctl_status *st = arg;
	struct ctl_filter f = { c, st };
	struct lk_scan_cbs cbs = { ctl_f_lock, ctl_f_share, ctl_f_waiter, &f };

	if (nlm == NULL)
		return false;
	if (st->st_cur != NULL) {
		st->st_conn = c;
		if (nlm_host_cursor_next(st->st_cur, CTL_PIECE, ctl_host_line,
		    st) > 0)
			return true;
		nlm_host_cursor_free(st->st_cur);
		st->st_cur = NULL;
	}
	if (!st->st_locks)
		return false;
	if (st->st_fhlen >= 0)
		return lk_file_records_scan(nlm->n_table, st->st_fh,
		    (size_t)st->st_fhlen, &st->st_scan, CTL_PIECE, &cbs, NULL);
	return lk_file_scan(nlm->n_table, &st->st_scan, CTL_PIECE, &cbs, NULL);
}

static void
ctl_status_free(void *arg)
{
	struct ctl_status *st = arg;

	nlm_host_cursor_free(st->st_cur);
	free(st->st_name);
	free(st->st_ids);
	free(st);
}

static void
ctl_cmd_status(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	struct ctl_status *st;
	const char *v, *name;

	(void)arg;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		ctl_error(c, "out of memory");
		return;
	}
	st->st_fhlen = -1;
	name = ctl_req_get(rq, "host");
	st->st_byhost = name != NULL;
	if ((v = ctl_req_get(rq, "fh")) != NULL &&
	    (st->st_fhlen = ctl_unhex(v, st->st_fh, sizeof(st->st_fh))) <= 0) {
		ctl_error(c, "fh: not a file handle in hex");
		free(st);
		return;
	}
	st->st_locks = (v = ctl_req_get(rq, "locks")) != NULL &&
	    strcmp(v, "1") == 0;
	if ((name != NULL && ((st->st_name = strdup(name)) == NULL ||
	    !ctl_status_ids(st))) || (st->st_cur = nlm_host_cursor_new()) ==
	    NULL) {
		ctl_error(c, "out of memory");
		ctl_status_free(st);
		return;
	}
	ctl_status_head(c);
	ctl_produce(c, ctl_status_fill, st, ctl_status_free);
}

/* ---- release ---- */

static bool
ctl_committed(void *arg)
{
	return nlm == NULL || nlm->n_committed >= (uint64_t)(uintptr_t)arg;
}

/* Hold the answer until what this turn staged is durable. */
static void
ctl_hold_commit(struct ctl_conn *c)
{
	if (store_pending(nlm->n_store))
		ctl_hold(c, ctl_committed,
		    (void *)(uintptr_t)(store_sealed(nlm->n_store) + 1));
}

struct ctl_rel {
	struct ctl_conn	*conn;
	const char	*name;		/* host= */
	struct sockaddr_storage addr;	/* addr= */
	bool		 by_addr;
	uint64_t	*ids;		/* owner=: hosts of that name */
	size_t		 nids;
	int32_t		 svid;
	uint8_t		 oh[1024];
	long		 ohlen;		/* -1: not by owner */
	struct lk_record *recs;		/* what to release */
	size_t		 nrecs, cap;
	unsigned	 hosts;
	unsigned	 failed;	/* hosts not released: no memory */
	size_t		 listed;	/* lines listed ("released") */
	size_t		 gone;		/* collected, found gone (or granted
					   anew) since */
	size_t		 refused;	/* collected, not released: out of
					   memory (still held) */
	uint64_t	 token_mark;	/* ct_last_token, ct_last_share when */
	uint64_t	 share_mark;	/* the command came (lk_release_range) */
	bool		 nomem;		/* a record or a host not kept */
	bool		 dry;
};

static void
ctl_rel_line(struct ctl_conn *c, const struct lk_record *rc)
{
	ctl_line(c, "released");
	ctl_kv(c, "kind", rc->rc_kind == LK_REC_LOCK ? "lock" : "share");
	ctl_kv_u64(c, "host", rc->rc_host);
	if (rc->rc_kind == LK_REC_LOCK)
		ctl_kv_i64(c, "svid", rc->rc_svid);
	ctl_kv_hex(c, "oh", rc->rc_oh, rc->rc_ohlen);
	ctl_kv_hex(c, "fh", rc->rc_fh, rc->rc_fhlen);
	if (rc->rc_kind == LK_REC_LOCK) {
		ctl_kv_u64(c, "start", rc->rc_start);
		ctl_kv_u64(c, "len", rc->rc_len);
	}
	ctl_kv_u64(c, "reclaimable", rc->rc_reclaim);
	ctl_line_end(c);
}

/*
 * Keep a copy of a record (its handles too) to release after the walk.
 * Out of memory: r->nomem, and every later record refused too --
 * a walk goes on whatever the callback returns.
 */
static int
ctl_rel_keep(const struct lk_record *rc, void *arg)
{
	struct ctl_rel *r = arg;
	struct lk_record *nr, *k;
	uint8_t *mem;
	size_t cap;

	if (r->nomem)
		return 1;
	/* Granted since the command came: a live client's, not for us. */
	if (rc->rc_kind == LK_REC_LOCK && rc->rc_token > r->token_mark)
		return 0;
	/*
	 * No share had been made when it came: any share is since, and
	 * lk_unshare() could not tell (sq_before 0 checks nothing).
	 */
	if (rc->rc_kind == LK_REC_SHARE && r->share_mark == 0)
		return 0;
	if (r->ohlen >= 0 && (rc->rc_kind != LK_REC_LOCK ||
	    rc->rc_svid != r->svid || rc->rc_ohlen != (size_t)r->ohlen ||
	    memcmp(rc->rc_oh, r->oh, rc->rc_ohlen) != 0))
		return 0;
	if (r->ids != NULL) {
		size_t i;

		for (i = 0; i < r->nids && r->ids[i] != rc->rc_host; i++)
			;
		if (i == r->nids)
			return 0;
	}
	if (r->nrecs == r->cap) {
		cap = r->cap == 0 ? 64 : r->cap * 2;
		if ((nr = realloc(r->recs, cap * sizeof(*nr))) == NULL)
			goto nomem;
		r->recs = nr;
		r->cap = cap;
	}
	if ((mem = malloc(rc->rc_ohlen + rc->rc_fhlen + 1)) == NULL)
		goto nomem;
	k = &r->recs[r->nrecs++];
	*k = *rc;
	memcpy(mem, rc->rc_oh, rc->rc_ohlen);
	memcpy(mem + rc->rc_ohlen, rc->rc_fh, rc->rc_fhlen);
	k->rc_oh = mem;
	k->rc_fh = mem + rc->rc_ohlen;
	return 0;
nomem:
	r->nomem = true;
	return 1;
}

static void
ctl_rel_listed(const struct lk_record *rc, void *arg)
{
	struct ctl_rel *r = arg;

	ctl_rel_line(r->conn, rc);
	r->listed++;
}

/*
 * A host to release, FREE_ALL-like: its id, for a release in pieces
 * (ctl_relh_fill()), or for a dry run, one walk of the table afterwards
 * (ctl_rd_fill()).
 */
static void
ctl_rel_host(struct nlm_host *h, void *arg)
{
	struct ctl_rel *r = arg;
	uint64_t *ids;

	if (r->by_addr ? !nlm_addr_equal(&h->h_addr, &r->addr) :
	    strcmp(h->h_name, r->name) != 0)
		return;
	r->hosts++;
	if ((ids = realloc(r->ids, (r->nids + 1) * sizeof(*ids))) == NULL) {
		r->failed++;
		return;
	}
	r->ids = ids;
	ids[r->nids++] = h->h_id;
}

/*
 * A release by host or address, host after host, each in pieces of
 * CTL_REL_PIECE records a turn, each piece's lines held until its commit
 * is durable: in one turn, a host of a million locks held the loop 832
 * ms.  Hosts are looked up by id at every piece: one may have gone
 * meanwhile (its own FREE_ALL finished the release).  Left part of the
 * way (the connection or nlmd went away), the host goes on being
 * released by the release's timer.
 */
struct ctl_relh {
	struct ctl_rel	 h_r;		/* h_r.ids: the hosts */
	size_t		 h_next;	/* the host being released */
	bool		 h_begun;	/* its release logged */
	bool		 h_cut;		/* the reader stalled: the rest the
					   timer's, unlisted */
	bool		 h_report;	/* all done, h_failed > 0: the answer
					   ends short once the lines before
					   are out */
	unsigned	 h_failed;
	unsigned	 h_uid;
	int		 h_pid;
	struct ev_timer	 h_stall;	/* no piece for CTL_REL_STALL_MS */
};

/*
 * No piece for CTL_REL_STALL_MS: the reader takes nothing (nlmctl
 * release ... | less, left open), or the commits hang.  Every host left
 * goes to the release timer, unlisted -- a host being released refuses
 * its client's LOCKs, and must not for as long as a reader sleeps -- and
 * the answer ends short, with no end line.
 */
static void
ctl_relh_stall(struct ev_loop *loop, void *arg)
{
	struct ctl_relh *p = arg;
	struct nlm_host *h;
	size_t i;

	(void)loop;
	if (nlm == NULL || p->h_cut)
		return;
	p->h_cut = true;
	log_warnx("operator's release (uid %u, pid %d): no piece taken for "
	    "%d s; nlmd releases the rest itself, unlisted", p->h_uid,
	    p->h_pid, CTL_REL_STALL_MS / 1000);
	for (i = p->h_next; i < p->h_r.nids; i++) {
		if ((h = nlm_host_by_id(p->h_r.ids[i])) == NULL)
			continue;
		/*
		 * The others to the timer, none released now: a piece each
		 * in this turn was as many pieces as hosts (behind one NAT
		 * address, hundreds).  The one begun here whose release was
		 * finished another way (its LOCK with a new NSM state) is
		 * left: what it holds now it was granted since.
		 */
		if (h->h_rel_ctl == p)
			nlm_host_release_handover(h, p);
		else if (i == p->h_next && p->h_begun)
			continue;	/* joined another's release, or over */
		else if (h->h_releasing == NULL &&
		    nlm_host_release_list(h, "released by the operator", 0,
		    NULL, NULL, NULL) == NLM_REL_FAILED)
			p->h_failed++;
	}
}

static bool
ctl_relh_fill(struct ctl_conn *c, void *arg)
{
	struct ctl_relh *p = arg;
	struct nlm_host *h;
	char hs[300];

	if (nlm == NULL)
		return false;
	if (p->h_cut) {
		ctl_error(c, "release: the answer was not read for %d s: the "
		    "rest was released without being listed (see nlmd's log)",
		    CTL_REL_STALL_MS / 1000);
		return false;
	}
	if (p->h_report) {
		/* Lines out before: no error line, the answer cut short. */
		ctl_error(c, "release: out of memory");
		return false;
	}
	p->h_r.conn = c;
	p->h_r.listed = 0;
	ev_timer_set(nlm->n_loop, &p->h_stall, CTL_REL_STALL_MS,
	    ctl_relh_stall, p);
	for (; p->h_next < p->h_r.nids; p->h_next++, p->h_begun = false) {
		if ((h = nlm_host_by_id(p->h_r.ids[p->h_next])) == NULL)
			continue;
		if (!p->h_begun) {
			log_info("operator (uid %u, pid %d): release of host "
			    "%s", p->h_uid, p->h_pid, nlm_host_str(h, hs,
			    sizeof(hs)));
			p->h_begun = true;
		} else if (h->h_releasing == NULL) {
			/*
			 * Its release, begun here, was finished another way
			 * (its LOCK with a new NSM state, another operator,
			 * the release timer): what it holds now it was
			 * granted since, and is not this release's.
			 */
			continue;
		}
		switch (nlm_host_release_list(h, "released by the operator",
		    CTL_REL_PIECE, p, ctl_rel_listed, &p->h_r)) {
		case NLM_REL_GOING:
			ctl_hold_commit(c);
			return true;
		case NLM_REL_FAILED:
			/* Out of memory: what is left, the timer's to retry. */
			p->h_failed++;
			nlm_host_release_handover(h, p);
			continue;
		case NLM_REL_DONE:
			/* A piece a turn: the next host's in the next. */
			p->h_next++;
			p->h_begun = false;
			ctl_hold_commit(c);
			if (p->h_next < p->h_r.nids)
				return true;
			break;
		}
		break;
	}
	ev_timer_cancel(nlm->n_loop, &p->h_stall);
	if (p->h_failed > 0) {
		log_warnx("operator's release: out of memory: %u of %zu "
		    "host(s) not released (or not all of it)", p->h_failed,
		    p->h_r.nids);
		/*
		 * What this piece released is listed: the error line would
		 * take its place (or, its first line out, the lines would
		 * be dropped with the answer cut).  The answer ends short
		 * once they are out.
		 */
		if (p->h_r.listed > 0) {
			p->h_report = true;
			return true;
		}
		ctl_error(c, "release: out of memory: %u of %zu host(s) not "
		    "released, or not all of it; try again", p->h_failed,
		    p->h_r.nids);
	}
	return false;
}

static void
ctl_relh_free(void *arg)
{
	struct ctl_relh *p = arg;
	struct nlm_host *h;

	if (nlm != NULL) {
		ev_timer_cancel(nlm->n_loop, &p->h_stall);
		if (p->h_next < p->h_r.nids &&
		    (h = nlm_host_by_id(p->h_r.ids[p->h_next])) != NULL)
			nlm_host_release_handover(h, p);
	}
	free(p->h_r.ids);
	free(p);
}

/*
 * A dry run's listing: one resumable walk -- of the table, or with
 * rd_fhlen >= 0 of one file -- in pieces of CTL_PIECE records, each kept
 * or not by a search of the sorted host ids (and, by owner, a match of
 * the owner) -- not a walk of the whole table per host, which with 256
 * hosts at one address and 500,000 locks held the loop 2.9 s, nor every
 * record collected and listed in one turn, which a dry run by file or by
 * owner did (the whole listing of a file of 200,000 locks in one turn,
 * and in the connection's buffer).
 */
struct ctl_rd {
	uint64_t	*rd_ids;	/* sorted; NULL: any host */
	size_t		 rd_nids;
	bool		 rd_byowner;	/* only the locks of this owner */
	int32_t		 rd_svid;
	uint8_t		 rd_oh[LK_OH_MAX];
	size_t		 rd_ohlen;
	uint8_t		 rd_fh[LK_FH_MAX];
	long		 rd_fhlen;	/* -1: the whole table */
	struct ctl_conn	*rd_conn;
	struct lk_scan	 rd_scan;
};

static int
ctl_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
ctl_rd_rec(const struct lk_record *rc, void *arg)
{
	struct ctl_rd *d = arg;

	if (d->rd_ids != NULL && bsearch(&rc->rc_host, d->rd_ids,
	    d->rd_nids, sizeof(uint64_t), ctl_u64_cmp) == NULL)
		return 0;
	if (d->rd_byowner && (rc->rc_kind != LK_REC_LOCK ||
	    rc->rc_svid != d->rd_svid || rc->rc_ohlen != d->rd_ohlen ||
	    memcmp(rc->rc_oh, d->rd_oh, rc->rc_ohlen) != 0))
		return 0;
	ctl_rel_line(d->rd_conn, rc);
	return 0;
}

static bool
ctl_rd_fill(struct ctl_conn *c, void *arg)
{
	struct ctl_rd *d = arg;
	struct lk_scan_cbs cbs = { ctl_rd_rec, ctl_rd_rec, NULL, d };

	if (nlm == NULL)
		return false;
	d->rd_conn = c;
	if (d->rd_fhlen >= 0)
		return lk_file_records_scan(nlm->n_table, d->rd_fh,
		    (size_t)d->rd_fhlen, &d->rd_scan, CTL_PIECE, &cbs, NULL);
	return lk_file_scan(nlm->n_table, &d->rd_scan, CTL_PIECE, &cbs, NULL);
}

static void
ctl_rd_free(void *arg)
{
	struct ctl_rd *d = arg;

	free(d->rd_ids);
	free(d);
}

/*
 * List what a release would release, in pieces (ctl_rd_fill()): the
 * records of the hosts r->ids (NULL: any), of the owner r names (if by
 * owner), of the file fh (fhlen >= 0) or the whole table.  Takes r->ids.
 */
static void
ctl_rd_start(struct ctl_conn *c, struct ctl_rel *r, const uint8_t *fh,
    long fhlen)
{
	struct ctl_rd *d;

	if ((d = calloc(1, sizeof(*d))) == NULL) {
		free(r->ids);
		r->ids = NULL;
		ctl_error(c, "release: out of memory");
		return;
	}
	if (r->ids != NULL)
		qsort(r->ids, r->nids, sizeof(*r->ids), ctl_u64_cmp);
	d->rd_ids = r->ids;
	d->rd_nids = r->nids;
	r->ids = NULL;
	if (r->ohlen >= 0) {
		d->rd_byowner = true;
		d->rd_svid = r->svid;
		memcpy(d->rd_oh, r->oh, (size_t)r->ohlen);
		d->rd_ohlen = (size_t)r->ohlen;
	}
	d->rd_fhlen = fhlen;
	if (fhlen > 0)
		memcpy(d->rd_fh, fh, (size_t)fhlen);
	ctl_produce(c, ctl_rd_fill, d, ctl_rd_free);
}

static void
ctl_owner_ids(struct nlm_host *h, void *arg)
{
	struct ctl_rel *r = arg;
	uint64_t *ids;

	if (strcmp(h->h_name, r->name) != 0)
		return;
	if ((ids = realloc(r->ids, (r->nids + 1) * sizeof(*ids))) == NULL) {
		r->nomem = true;
		return;
	}
	r->ids = ids;
	ids[r->nids++] = h->h_id;
}

/*
 * Did the unlock (unshare) of rc remove a record of rc's owner on rc's
 * file?  Not when it found nothing -- a client, its FREE_ALL, SM_NOTIFY
 * or another release let it go since it was collected -- or found it
 * granted anew since the command came (lk_release_range()).
 */
static bool
ctl_rel_removed(const struct lk_result *res, const struct lk_record *rc)
{
	const struct lk_record *x;
	size_t i;

	for (i = 0; i < res->rs_nremoved; i++) {
		x = &res->rs_removed[i];
		if (x->rc_kind == rc->rc_kind && nlm_rec_same_owner(rc, x) &&
		    x->rc_fhlen == rc->rc_fhlen &&
		    memcmp(x->rc_fh, rc->rc_fh, rc->rc_fhlen) == 0)
			return true;
	}
	return false;
}

/*
 * Release records [from, to) of those collected (locks: UNLOCK; shares:
 * UNSHARE); how many were, and in *why the last refusal (counted in
 * r->refused).  A record found gone already is neither listed nor
 * counted.
 */
static size_t
ctl_rel_records(struct ctl_rel *r, size_t from, size_t to,
    enum lk_status *why)
{
	const struct lk_result *res;
	struct lk_lockreq lq;
	struct lk_sharereq sq;
	size_t i, n = 0;
	enum lk_status st;

	for (i = from; i < to; i++) {
		const struct lk_record *rc = &r->recs[i];

		if (rc->rc_kind == LK_REC_LOCK) {
			memset(&lq, 0, sizeof(lq));
			lq.rq_host = rc->rc_host;
			lq.rq_svid = rc->rc_svid;
			lq.rq_oh = rc->rc_oh;
			lq.rq_ohlen = rc->rc_ohlen;
			lq.rq_fh = rc->rc_fh;
			lq.rq_fhlen = rc->rc_fhlen;
			lq.rq_start = rc->rc_start;
			lq.rq_len = rc->rc_len;
			lq.rq_before = r->token_mark;
			st = lk_release_range(nlm->n_table, &lq, ev_now_ms(),
			    &res);
		} else {
			memset(&sq, 0, sizeof(sq));
			sq.sq_host = rc->rc_host;
			sq.sq_oh = rc->rc_oh;
			sq.sq_ohlen = rc->rc_ohlen;
			sq.sq_fh = rc->rc_fh;
			sq.sq_fhlen = rc->rc_fhlen;
			sq.sq_before = r->share_mark;
			st = lk_unshare(nlm->n_table, &sq, &res);
		}
		/*
		 * Listed once released: out of memory, it is still held;
		 * gone before, or granted anew, this release did not
		 * release it.
		 */
		if (st != LK_OK) {
			*why = st;
			r->refused++;
		} else if (ctl_rel_removed(res, rc)) {
			ctl_rel_line(r->conn, rc);
			n++;
		} else
			r->gone++;
		nlm_apply(res);
	}
	return n;
}

/*
 * A release by file or by owner, in pieces of CTL_REL_PIECE records a
 * turn, each piece's lines held until its commit is durable: released
 * in one turn, 200,000 locks of a file held the loop 219 ms.  By file,
 * each piece is also collected in its turn, by lockcore's resumable
 * walk of the file (collected in one turn, a million records held the
 * loop 80 ms); by owner, the owner's records are collected when the
 * command comes (O(what it holds)).  What is released is what was held
 * when the command came: a lock granted since (a newer fencing token:
 * the client let go and locked again, grew its lock, was granted a
 * queued request) or a share made since is the live client's and stays
 * (lk_release_range()); one let go meanwhile is not listed.
 */
struct ctl_relp {
	struct ctl_rel	 p_r;		/* p_r.recs: what to release (by
					   file: this piece) */
	size_t		 p_next;	/* the next record to release */
	size_t		 p_total;	/* collected */
	size_t		 p_done;	/* released */
	enum lk_status	 p_why;		/* the last refusal */
	bool		 p_byfile;	/* collected a piece at a time: */
	bool		 p_walked;	/* the walk is over */
	size_t		 p_pass;	/* p_done when this walk began */
	struct lk_scan	 p_scan;
	uint8_t		 p_fh[LK_FH_MAX];
	size_t		 p_fhlen;
	char		 p_by[CTL_REQ_MAX + 8];	/* "fh=HEX", "owner=..." */
	unsigned	 p_uid;
	int		 p_pid;
};

static void
ctl_relp_drop_recs(struct ctl_rel *r)
{
	size_t i;

	for (i = 0; i < r->nrecs; i++)
		free((void *)(uintptr_t)r->recs[i].rc_oh);
	r->nrecs = 0;
}

/* By file: the next piece of the file's records into p->p_r.recs. */
static void
ctl_relp_collect(struct ctl_relp *p)
{
	struct lk_scan_cbs cbs = { ctl_rel_keep, ctl_rel_keep, NULL, &p->p_r };

	ctl_relp_drop_recs(&p->p_r);
	p->p_next = 0;
	p->p_walked = !lk_file_records_scan(nlm->n_table, p->p_fh, p->p_fhlen,
	    &p->p_scan, CTL_REL_PIECE, &cbs, NULL);
	p->p_total += p->p_r.nrecs;
}

static bool
ctl_relp_fill(struct ctl_conn *c, void *arg)
{
	struct ctl_relp *p = arg;
	size_t to;

	if (nlm == NULL)
		return false;
	p->p_r.conn = c;
	if (p->p_byfile && p->p_next == p->p_r.nrecs && !p->p_walked) {
		ctl_relp_collect(p);
		if (p->p_r.nomem) {
			/*
			 * A piece not all kept (the walk went past the rest):
			 * none of it is released.  Released, its lines would
			 * be lost to the error -- replaced by it in the first
			 * piece, cut with the answer in a later one (lines of
			 * the pieces before are out: it ends short).
			 */
			p->p_total -= p->p_r.nrecs;
			ctl_relp_drop_recs(&p->p_r);
			p->p_walked = true;
			log_warnx("operator's release by %s: out of memory "
			    "after %zu record(s) released", p->p_by,
			    p->p_done);
			ctl_error(c, "release: out of memory: %zu released, "
			    "the rest not; try again", p->p_done);
			return false;
		}
	}
	to = p->p_r.nrecs - p->p_next > CTL_REL_PIECE ?
	    p->p_next + CTL_REL_PIECE : p->p_r.nrecs;
	p->p_done += ctl_rel_records(&p->p_r, p->p_next, to, &p->p_why);
	p->p_next = to;
	ctl_hold_commit(c);
	/*
	 * By file, a walk that released something is followed by another:
	 * the walk resumes after the (start, node address) of the last
	 * lock it reported, and a lock of the same start split meanwhile
	 * (an UNLOCK of a part of it) is new nodes, the part below with
	 * that start, at any address -- and the old token: held when the
	 * command came, never reported (lk_file_records_scan() reports a
	 * record added meanwhile at most once).  The walk after it finds
	 * only what the one before left: usually nothing, the file gone.
	 * What the one before could not release (out of memory) it
	 * collects again: counted once in the total, by the last walk
	 * that found it (before, twice, and the warning below said "152
	 * of 1176" for 76 of 1100 left).
	 */
	if (p->p_byfile && p->p_walked && p->p_next == p->p_r.nrecs &&
	    p->p_done > p->p_pass) {
		memset(&p->p_scan, 0, sizeof(p->p_scan));
		p->p_walked = false;
		p->p_pass = p->p_done;
		p->p_total -= p->p_r.refused;
		p->p_r.refused = 0;
	}
	if (p->p_next < p->p_r.nrecs || (p->p_byfile && !p->p_walked))
		return true;
	if (p->p_done + p->p_r.gone < p->p_total)
		log_warnx("operator's release: %zu of %zu record(s) not "
		    "released: %s", p->p_total - p->p_done - p->p_r.gone,
		    p->p_total, lk_strerror(p->p_why));
	if (p->p_done > 0)
		log_info("operator (uid %u, pid %d): released %zu lock(s)/"
		    "share(s) by %s", p->p_uid, p->p_pid, p->p_done, p->p_by);
	return false;
}

static void
ctl_relp_free(void *arg)
{
	struct ctl_relp *p = arg;

	if (p->p_next < p->p_r.nrecs || (p->p_byfile && !p->p_walked))
		log_warnx("operator's release by %s cut short (the connection "
		    "or nlmd went away): %zu record(s) released", p->p_by,
		    p->p_done);
	ctl_relp_drop_recs(&p->p_r);
	free(p->p_r.recs);
	free(p);
}

static void
ctl_cmd_release(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	struct ctl_rel r;
	struct ctl_relp *rp;
	struct ctl_relh *hp;
	const char *host, *addr, *fh, *owner, *v;
	struct lk_counts ct;
	uint8_t fhb[LK_FH_MAX];
	long fhlen = 0;
	size_t i;
	int given;

	(void)arg;
	memset(&r, 0, sizeof(r));
	r.conn = c;
	r.ohlen = -1;
	lk_table_counts(nlm->n_table, &ct);
	r.token_mark = ct.ct_last_token;
	r.share_mark = ct.ct_last_share;
	r.dry = (v = ctl_req_get(rq, "dry-run")) != NULL && strcmp(v, "1") == 0;
	host = ctl_req_get(rq, "host");
	addr = ctl_req_get(rq, "addr");
	fh = ctl_req_get(rq, "fh");
	owner = ctl_req_get(rq, "owner");
	given = (host != NULL) + (addr != NULL) + (fh != NULL) +
	    (owner != NULL);
	if (given != 1) {
		ctl_error(c, "release: give exactly one of host, addr, fh, "
		    "owner");
		return;
	}
	if (addr != NULL) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&r.addr;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&r.addr;
		const char *scope = "";

		if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1)
			s4->sin_family = AF_INET;
		else if (addr_parse6(addr, &s6->sin6_addr, &scope) == 0)
			s6->sin6_family = AF_INET6;
		else {
			ctl_error(c, "release: addr: not an IPv4 or IPv6 "
			    "address");
			return;
		}
		/*
		 * fe80::1%eth0 (as the status shows it): the host at that
		 * address on that link only; fe80::1, on any.  A scope by
		 * index need not be an interface now: the host's may have
		 * gone.
		 */
		if (s6->sin6_family == AF_INET6 && scope[0] != '\0' &&
		    (s6->sin6_scope_id = addr_scope_id(scope, false)) == 0) {
			ctl_error(c, "release: addr: no interface %s", scope);
			return;
		}
		r.by_addr = true;
	}
	if (host != NULL || addr != NULL) {
		r.name = host;
		nlm_host_foreach(ctl_rel_host, &r);
		if (r.hosts == 0) {
			ctl_error(c, "release: no host %s %s", host != NULL ?
			    "named" : "at", host != NULL ? host : addr);
			return;
		}
		if (r.dry) {
			if (r.failed > 0) {
				free(r.ids);
				ctl_error(c, "release: out of memory");
				return;
			}
			ctl_rd_start(c, &r, NULL, -1);
			return;
		}
		if (r.failed > 0 || (hp = calloc(1, sizeof(*hp))) == NULL) {
			free(r.ids);
			ctl_error(c, "release: out of memory: nothing released; "
			    "try again");
			return;
		}
		hp->h_r = r;
		hp->h_uid = (unsigned)ctl_peer(c)->uid;
		hp->h_pid = (int)ctl_peer(c)->pid;
		/*
		 * The first piece now, before the answer's first line is
		 * out: a release that cannot begin is answered an error.
		 */
		if (ctl_relh_fill(c, hp))
			ctl_produce(c, ctl_relh_fill, hp, ctl_relh_free);
		else
			ctl_relh_free(hp);
		return;
	}
	if (fh != NULL) {
		if ((fhlen = ctl_unhex(fh, fhb, sizeof(fhb))) <= 0) {
			ctl_error(c, "release: fh: not a file handle in hex");
			return;
		}
		if (r.dry) {
			ctl_rd_start(c, &r, fhb, fhlen);
			return;
		}
	} else {
		char name[CTL_REQ_MAX], *p, *q, *end;
		long svid;

		/*
		 * HOST:SVID:OHHEX; the host name may itself hold ':'.  Any
		 * argument of a request fits (a name of 1,024 bytes and an
		 * OH of 2,048 hex digits do); one that did not, cut, would
		 * name another owner.
		 */
		if ((size_t)snprintf(name, sizeof(name), "%s", owner) >=
		    sizeof(name)) {
			ctl_error(c, "release: owner: too long");
			return;
		}
		if ((q = strrchr(name, ':')) == NULL || q == name ||
		    (*q = '\0', (p = strrchr(name, ':')) == NULL)) {
			ctl_error(c, "release: owner: HOST:SVID:OH expected");
			return;
		}
		*p = '\0';
		/*
		 * All of it, within 32 bits: cut or half read, "12x",
		 * "4294967297" or "" named another owner (svid 12, 1, 0).
		 */
		errno = 0;
		svid = strtol(p + 1, &end, 10);
		if (p[1] == '\0' || *end != '\0' || errno != 0 ||
		    svid < INT32_MIN || svid > INT32_MAX) {
			ctl_error(c, "release: owner: SVID %s is not a 32-bit "
			    "number", p + 1);
			return;
		}
		r.svid = (int32_t)svid;
		if ((r.ohlen = ctl_unhex(q + 1, r.oh, sizeof(r.oh))) < 0) {
			ctl_error(c, "release: owner: OH is not hex");
			return;
		}
		r.name = name;
		nlm_host_foreach(ctl_owner_ids, &r);
		if (r.nomem) {
			free(r.ids);
			ctl_error(c, "release: out of memory");
			return;
		}
		if (r.nids == 0) {
			ctl_error(c, "release: no host named %s", name);
			return;
		}
		if (r.dry) {
			ctl_rd_start(c, &r, NULL, -1);
			return;
		}
		/* The owner's own locks on each host of that name. */
		for (i = 0; i < r.nids; i++)
			if (lk_owner_locks(nlm->n_table, r.ids[i], r.svid,
			    r.oh, (size_t)r.ohlen, ctl_rel_keep, &r) != 0)
				break;
	}
	free(r.ids);
	r.ids = NULL;
	/*
	 * Some records not kept: none is released (a part of them, answered
	 * as done, was before; and the records array was written past).
	 */
	if (r.nomem || (rp = calloc(1, sizeof(*rp))) == NULL) {
		ctl_relp_drop_recs(&r);
		free(r.recs);
		ctl_error(c, "release: out of memory: nothing released; try "
		    "again");
		return;
	}
	rp->p_r = r;
	rp->p_total = r.nrecs;
	if (fh != NULL) {
		rp->p_byfile = true;
		memcpy(rp->p_fh, fhb, (size_t)fhlen);
		rp->p_fhlen = (size_t)fhlen;
	}
	(void)snprintf(rp->p_by, sizeof(rp->p_by), "%s=%s",
	    fh != NULL ? "fh" : "owner", fh != NULL ? fh : owner);
	rp->p_uid = (unsigned)ctl_peer(c)->uid;
	rp->p_pid = (int)ctl_peer(c)->pid;
	/*
	 * The first piece now, before the answer's first line is out: a
	 * release whose first piece cannot be collected is answered an
	 * error.
	 */
	if (ctl_relp_fill(c, rp))
		ctl_produce(c, ctl_relp_fill, rp, ctl_relp_free);
	else
		ctl_relp_free(rp);
}

/* ---- grace ---- */

/* Grace is over and the commit that dropped its last records durable. */
static bool
ctl_grace_over(void *arg)
{
	(void)arg;
	return nlm == NULL || (!nlm->n_grace.g_active &&
	    nlm->n_committed >= nlm->n_grace.g_end_seq);
}

/* The answer to grace-end, once it is over: what was dropped. */
static bool
ctl_grace_fill(struct ctl_conn *c, void *state)
{
	(void)state;
	if (nlm == NULL)
		return false;
	ctl_line(c, "grace");
	ctl_kv(c, "how", "ended by the operator");
	ctl_kv_u64(c, "dropped-locks", nlm->n_grace.g_drop_locks);
	ctl_kv_u64(c, "dropped-shares", nlm->n_grace.g_drop_shares);
	ctl_line_end(c);
	return false;
}

static void
ctl_cmd_grace_end(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	(void)rq;
	(void)arg;
	if (!nlm->n_grace.g_active || nlm->n_grace.g_how != NULL) {
		ctl_error(c, "not in grace");
		return;
	}
	log_info("operator (uid %u, pid %d): ending grace now",
	    (unsigned)ctl_peer(c)->uid, (int)ctl_peer(c)->pid);
	nlm_grace_end("ended by the operator");
	/*
	 * Only once all is dropped and durable: a large grace is dropped a
	 * step per turn (nlm_grace_drain()), and an answer after the first
	 * step's commit would say ended what a crash would bring back.  The
	 * counts are taken then too: until the last step they are the
	 * first steps' only.
	 */
	ctl_produce_last(c, ctl_grace_fill, NULL, NULL);
	ctl_hold(c, ctl_grace_over, NULL);
}

/* The arguments each command takes (the server refuses any other). */
static const char *const status_keys[] = { "host", "fh", "locks", NULL };
static const char *const status_flags[] = { "locks", NULL };
static const char *const release_keys[] = { "host", "addr", "fh", "owner",
    "dry-run", NULL };
static const char *const release_flags[] = { "dry-run", NULL };

int
nlm_ctl_register(struct ctl_srv *srv, const char *durability)
{
	snprintf(ctl_durability, sizeof(ctl_durability), "%s", durability);
	ctl_started_unix = (uint64_t)time(NULL);
	if (ctl_srv_command(srv, "status", status_keys, status_flags,
	    ctl_cmd_status, NULL) == -1 ||
	    ctl_srv_command(srv, "release", release_keys, release_flags,
	    ctl_cmd_release, NULL) == -1 ||
	    ctl_srv_command(srv, "grace-end", NULL, NULL, ctl_cmd_grace_end,
	    NULL) == -1)
		return -1;
	return 0;
}
