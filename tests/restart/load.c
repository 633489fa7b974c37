/*
 * load.c - the client threads of crashdrv: random requests, and the model
 * of what each client holds (crashdrv.h, THE MODEL).
 *
 * HOW IT WORKS.  Each client loops: park while the phase is not RS_RUN;
 * release anything uncertain first (UNLOCK / UNSHARE: the answer makes the
 * model certain again); otherwise send one random request: LOCK (shared or
 * exclusive, blocking or not; on a slot held in the other mode it is an
 * upgrade or a downgrade), UNLOCK, SHARE with random access and deny, or
 * UNSHARE.  DENIED_GRACE_PERIOD is retried after RS_GRACE_RETRY_MS (Linux
 * waits 5 s).  After a call without a reply the client pauses
 * RS_NOREPLY_PAUSE_MS (a TCP client would otherwise spin on "connection
 * refused" while nlmd is down).  Every reply goes to the client's log.
 *
 * A BLOCKED LOCK is waited for.  The slot is held once the receiver saw a
 * GRANTED_MSG for it (the client then re-sends the LOCK once, which must
 * say GRANTED: a check of the callback), or once the LOCK, re-sent every
 * RS_RESEND_MS, says GRANTED.  After o_wait_ms (o_impatient per cent of
 * the waits: after 20-200 ms, as an interrupted F_SETLKW) the client gives
 * up: CANCEL, then UNLOCK (after CANCEL alone it is unknown whether an
 * upgrade's shared lock survived), which leaves the slot certainly free.
 * A wait cut short by `down' leaves the slot as it was, or granted, or
 * free: the server may grant it and the receiver refuse the grant, which
 * releases the range.
 *
 * Stale callbacks.  A GRANTED_MSG whose cookie was seen before is a
 * retransmission and never wakes a waiter.  The first delivery of a grant
 * that ended meanwhile (CANCEL, or a re-sent LOCK that said GRANTED) may
 * still sit in the receiver's socket when the client starts a new wait on
 * the same slot; so a slot is not waited on again within RS_REWAIT_MS of
 * the end of the last wait on it (a non-blocking LOCK is sent instead).
 */
#include "crashdrv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RS_RESEND_MS		300
#define RS_GRACE_RETRY_MS	200
#define RS_GRACE_TRIES		25
#define RS_REWAIT_MS		1000
#define RS_NOREPLY_PAUSE_MS	100

enum load_wake {
	LW_GRANTED,	/* the receiver matched a GRANTED_MSG */
	LW_PAUSE,	/* `down' or `quit' */
	LW_TIMER
};

static uint64_t
load_rand(struct rs_client *c)
{
	uint64_t x = c->c_rng;

	/* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->c_rng = x;
	return x * 2685821657736338717ull;
}

static unsigned
load_pick(struct rs_client *c, unsigned n)
{
	return (unsigned)((load_rand(c) >> 33) % n);
}

static bool
load_unsure(unsigned may)
{
	return (may & (may - 1)) != 0;
}

static unsigned
load_mode(bool excl)
{
	return excl ? RS_M_EXCL : RS_M_SHARED;
}

static const char *
load_mode_name(bool excl)
{
	return excl ? "exclusive" : "shared";
}

void
rs_slot_lk(const struct rs_client *c, int s, struct rs_lk *k)
{
	k->lk_name = c->c_name;
	k->lk_fh = c->c_lockfh;
	k->lk_oh = c->c_oh;
	k->lk_svid = c->c_svid;
	k->lk_off = (uint64_t)s * RS_SLOT_STRIDE;
	k->lk_len = RS_SLOT_LEN;
}

void
rs_share_lk(const struct rs_client *c, int f, struct rs_lk *k)
{
	rs_slot_lk(c, 0, k);
	k->lk_fh = c->c_sharefh[f];
	k->lk_off = k->lk_len = 0;
}

void
rs_log(struct rs_client *c, int stat, const char *fmt, ...)
{
	va_list ap;

	flockfile(c->c_log);
	fprintf(c->c_log, "%llu ",
	    (unsigned long long)(rs_now_ms() - c->c_drv->d_t0));
	va_start(ap, fmt);
	vfprintf(c->c_log, fmt, ap);
	va_end(ap);
	fprintf(c->c_log, " -> %s\n", rs_stat_name(stat));
	funlockfile(c->c_log);
}

void
rs_slot_set(struct rs_client *c, int s, unsigned may)
{
	pthread_mutex_lock(&c->c_drv->d_mu);
	c->c_slot[s] = may;
	pthread_mutex_unlock(&c->c_drv->d_mu);
}

unsigned
rs_slot_get(struct rs_client *c, int s)
{
	unsigned may;

	pthread_mutex_lock(&c->c_drv->d_mu);
	may = c->c_slot[s];
	pthread_mutex_unlock(&c->c_drv->d_mu);
	return may;
}

void
rs_share_set(struct rs_client *c, int f, uint32_t may)
{
	pthread_mutex_lock(&c->c_drv->d_mu);
	c->c_share[f] = may;
	pthread_mutex_unlock(&c->c_drv->d_mu);
}

uint32_t
rs_share_get(struct rs_client *c, int f)
{
	uint32_t may;

	pthread_mutex_lock(&c->c_drv->d_mu);
	may = c->c_share[f];
	pthread_mutex_unlock(&c->c_drv->d_mu);
	return may;
}

static void
load_count(struct rs_client *c, uint64_t *ctr)
{
	pthread_mutex_lock(&c->c_drv->d_mu);
	(*ctr)++;
	pthread_mutex_unlock(&c->c_drv->d_mu);
}

static bool
load_running(struct rs_client *c)
{
	bool run;

	pthread_mutex_lock(&c->c_drv->d_mu);
	run = c->c_drv->d_phase == RS_RUN;
	pthread_mutex_unlock(&c->c_drv->d_mu);
	return run;
}

/* Sleep up to ms; false when the phase left RS_RUN meanwhile. */
static bool
load_sleep(struct rs_client *c, unsigned ms)
{
	struct rs_drv *d = c->c_drv;
	struct timespec dl;
	bool run;

	rs_deadline(&dl, ms);
	pthread_mutex_lock(&d->d_mu);
	while (d->d_phase == RS_RUN &&
	    pthread_cond_timedwait(&d->d_cv, &d->d_mu, &dl) != ETIMEDOUT)
		;
	run = d->d_phase == RS_RUN;
	pthread_mutex_unlock(&d->d_mu);
	return run;
}

/* The receiver may match GRANTED_MSG for (s, excl) from now on. */
static void
load_wait_begin(struct rs_client *c, int s, bool excl)
{
	pthread_mutex_lock(&c->c_drv->d_mu);
	c->c_wslot = s;
	c->c_wexcl = excl;
	c->c_wgranted = false;
	pthread_mutex_unlock(&c->c_drv->d_mu);
}

static void
load_wait_end(struct rs_client *c)
{
	pthread_mutex_lock(&c->c_drv->d_mu);
	c->c_wslot = -1;
	c->c_wgranted = false;
	pthread_mutex_unlock(&c->c_drv->d_mu);
}

/* Wait until a matched callback, a phase change or until_ms. */
static enum load_wake
load_wait_event(struct rs_client *c, uint64_t until_ms)
{
	struct rs_drv *d = c->c_drv;
	enum load_wake w = LW_TIMER;
	struct timespec dl;
	uint64_t now = rs_now_ms();

	rs_deadline(&dl, until_ms > now ? (unsigned)(until_ms - now) : 0);
	pthread_mutex_lock(&d->d_mu);
	for (;;) {
		if (c->c_wgranted) {
			w = LW_GRANTED;
			break;
		}
		if (d->d_phase != RS_RUN) {
			w = LW_PAUSE;
			break;
		}
		if (pthread_cond_timedwait(&d->d_cv, &d->d_mu, &dl) ==
		    ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&d->d_mu);
	return w;
}

/* LOCK (no reclaim), retried while nlmd answers DENIED_GRACE_PERIOD. */
static int
load_lock_call(struct rs_client *c, int s, bool excl, bool block)
{
	struct rs_lk k;
	int st, tries = 0;

	rs_slot_lk(c, s, &k);
	for (;;) {
		if (block)
			load_wait_begin(c, s, excl);
		st = rs_call_lock(&c->c_conn, &k, excl, block, false);
		rs_log(c, st, "LOCK slot=%d %s%s", s, load_mode_name(excl),
		    block ? " block" : "");
		c->c_ops += st != RS_NOREPLY;
		if (block && st != NLM4_BLOCKED)
			load_wait_end(c);
		if (st != NLM4_DENIED_GRACE_PERIOD || ++tries > RS_GRACE_TRIES)
			return st;
		load_count(c, &c->c_drv->d_grace_retries);
		if (!load_sleep(c, RS_GRACE_RETRY_MS))
			return st;
	}
}

/* Give up a wait: CANCEL, then UNLOCK, so that the slot is certain. */
static void
load_giveup(struct rs_client *c, int s, bool excl)
{
	struct rs_lk k;
	int st;

	load_count(c, &c->c_drv->d_giveups);
	rs_slot_lk(c, s, &k);
	st = rs_call_cancel(&c->c_conn, &k, excl, true);
	rs_log(c, st, "CANCEL slot=%d %s block", s, load_mode_name(excl));
	st = rs_call_unlock(&c->c_conn, &k);
	rs_log(c, st, "UNLOCK slot=%d (after CANCEL)", s);
	rs_slot_set(c, s, st == NLM4_GRANTED ? RS_M_NONE : RS_M_ANY);
}

/*
 * The receiver said the slot was granted: re-send the LOCK once, which
 * must say GRANTED.  No reply leaves the slot held: the callback left
 * nlmd only after the grant was stored.
 */
static void
load_confirm(struct rs_client *c, int s, bool excl)
{
	struct rs_drv *d = c->c_drv;
	struct rs_lk k;
	int st;

	rs_slot_set(c, s, load_mode(excl));
	if (!load_running(c))
		return;
	rs_slot_lk(c, s, &k);
	st = rs_call_lock(&c->c_conn, &k, excl, true, false);
	rs_log(c, st, "LOCK slot=%d %s block (after GRANTED_MSG)", s,
	    load_mode_name(excl));
	if (st == NLM4_GRANTED || st == RS_NOREPLY) {
		load_count(c, &d->d_cb_confirmed);
		return;
	}
	load_count(c, &d->d_cb_unconfirmed);
	rs_note("%s slot %d: GRANTED_MSG received, but the re-sent LOCK "
	    "got %s", c->c_name, s, rs_stat_name(st));
	/* The next step releases it (UNLOCK also cancels). */
	rs_slot_set(c, s, RS_M_ANY);
}

/* A BLOCKED LOCK: wait as HOW IT WORKS says. */
static void
load_wait(struct rs_client *c, int s, bool excl, unsigned before)
{
	const struct rs_opts *o = &c->c_drv->d_opt;
	uint64_t end, next;
	unsigned want = load_mode(excl);
	enum load_wake w;
	struct rs_lk k;
	int st;

	load_count(c, &c->c_drv->d_blocked);
	end = rs_now_ms() + (load_pick(c, 100) < o->o_impatient ?
	    20 + load_pick(c, 181) : o->o_wait_ms);
	rs_slot_lk(c, s, &k);
	for (;;) {
		next = rs_now_ms() + RS_RESEND_MS;
		w = load_wait_event(c, next < end ? next : end);
		if (w != LW_TIMER || rs_now_ms() >= end)
			break;
		st = rs_call_lock(&c->c_conn, &k, excl, true, false);
		rs_log(c, st, "LOCK slot=%d %s block (re-sent)", s,
		    load_mode_name(excl));
		if (st == NLM4_BLOCKED)
			continue;
		load_wait_end(c);
		c->c_wend_ms[s] = rs_now_ms();
		if (st == NLM4_GRANTED) {
			load_count(c, &c->c_drv->d_resend_grants);
			rs_slot_set(c, s, want);
		} else if (st == RS_NOREPLY)
			rs_slot_set(c, s, before | want | RS_M_NONE);
		else
			load_giveup(c, s, excl);
		return;
	}
	load_wait_end(c);
	c->c_wend_ms[s] = rs_now_ms();
	if (w == LW_GRANTED)
		load_confirm(c, s, excl);
	else if (w == LW_PAUSE)
		rs_slot_set(c, s, before | want | RS_M_NONE);
	else
		load_giveup(c, s, excl);
}

static void
load_op_lock(struct rs_client *c, int s, bool excl, bool block)
{
	unsigned before = rs_slot_get(c, s), want = load_mode(excl);
	int st;

	if (block && rs_now_ms() < c->c_wend_ms[s] + RS_REWAIT_MS)
		block = false;
	st = load_lock_call(c, s, excl, block);
	if (st == NLM4_GRANTED)
		rs_slot_set(c, s, want);
	else if (st == NLM4_BLOCKED)
		load_wait(c, s, excl, before);
	else if (st == RS_NOREPLY) {
		/* Queued and granted, perhaps: a callback may come. */
		rs_slot_set(c, s, before | want | (block ? RS_M_NONE : 0));
		if (block)
			c->c_wend_ms[s] = rs_now_ms();
	}
	/* Anything else (DENIED, DEADLCK, ...) changed nothing. */
}

static void
load_op_unlock(struct rs_client *c, int s)
{
	unsigned before = rs_slot_get(c, s);
	struct rs_lk k;
	int st;

	rs_slot_lk(c, s, &k);
	st = rs_call_unlock(&c->c_conn, &k);
	rs_log(c, st, "UNLOCK slot=%d", s);
	c->c_ops += st != RS_NOREPLY;
	if (st == NLM4_GRANTED)
		rs_slot_set(c, s, RS_M_NONE);
	else if (st == RS_NOREPLY)
		rs_slot_set(c, s, before | RS_M_NONE);
}

static void
load_op_share(struct rs_client *c, int f, int access, int deny)
{
	uint32_t before = rs_share_get(c, f);
	struct rs_lk k;
	int st, tries = 0;

	rs_share_lk(c, f, &k);
	for (;;) {
		st = rs_call_share(&c->c_conn, &k, access, deny, false);
		rs_log(c, st, "SHARE file=%s access=%d deny=%d",
		    c->c_sharefh[f], access, deny);
		c->c_ops += st != RS_NOREPLY;
		if (st != NLM4_DENIED_GRACE_PERIOD || ++tries > RS_GRACE_TRIES)
			break;
		load_count(c, &c->c_drv->d_grace_retries);
		if (!load_sleep(c, RS_GRACE_RETRY_MS))
			break;
	}
	if (st == NLM4_GRANTED)
		rs_share_set(c, f, RS_SH_BIT(access, deny));
	else if (st == RS_NOREPLY)
		rs_share_set(c, f, before | RS_SH_BIT(access, deny));
}

static void
load_op_unshare(struct rs_client *c, int f)
{
	uint32_t before = rs_share_get(c, f);
	struct rs_lk k;
	int st;

	rs_share_lk(c, f, &k);
	st = rs_call_unshare(&c->c_conn, &k);
	rs_log(c, st, "UNSHARE file=%s", c->c_sharefh[f]);
	c->c_ops += st != RS_NOREPLY;
	if (st == NLM4_GRANTED)
		rs_share_set(c, f, RS_SH_NONE);
	else if (st == RS_NOREPLY)
		rs_share_set(c, f, before | RS_SH_NONE);
}

/* An uncertain slot (or -1), and a held one (else s). */
static int
load_find(struct rs_client *c, bool unsure, int s)
{
	int i, n = c->c_drv->d_opt.o_nslots, off = (int)load_pick(c,
	    (unsigned)n);
	unsigned m;

	for (i = 0; i < n; i++) {
		m = rs_slot_get(c, (i + off) % n);
		if (unsure ? load_unsure(m) : m != RS_M_NONE)
			return (i + off) % n;
	}
	return unsure ? -1 : s;
}

static void
load_step(struct rs_client *c)
{
	int s, f, n = c->c_drv->d_opt.o_nslots;
	unsigned r;

	if ((s = load_find(c, true, -1)) >= 0) {
		load_op_unlock(c, s);
		return;
	}
	for (f = 0; f < 2; f++)
		if (load_unsure(rs_share_get(c, f))) {
			load_op_unshare(c, f);
			return;
		}
	r = load_pick(c, 100);
	s = (int)load_pick(c, (unsigned)n);
	if (r < 50)
		load_op_lock(c, s, load_pick(c, 2), load_pick(c, 100) < 35);
	else if (r < 75)
		load_op_unlock(c, load_find(c, false, s));
	else if (r < 92)
		load_op_share(c, (int)load_pick(c, 2), (int)load_pick(c, 4),
		    (int)load_pick(c, 4));
	else
		load_op_unshare(c, (int)load_pick(c, 2));
}

/* Park while paused; false once the phase is RS_QUIT. */
static bool
load_gate(struct rs_client *c)
{
	struct rs_drv *d = c->c_drv;
	bool run;

	pthread_mutex_lock(&d->d_mu);
	while (d->d_phase == RS_PAUSE) {
		if (!c->c_parked) {
			fflush(c->c_log);
			c->c_parked = true;
			pthread_cond_broadcast(&d->d_cv);
		}
		pthread_cond_wait(&d->d_cv, &d->d_mu);
	}
	run = d->d_phase == RS_RUN;
	c->c_parked = !run;
	pthread_mutex_unlock(&d->d_mu);
	return run;
}

static void *
load_main(void *arg)
{
	struct rs_client *c = arg;
	uint64_t noreply;

	while (load_gate(c)) {
		noreply = c->c_conn.cn_noreply;
		load_step(c);
		if (c->c_conn.cn_noreply != noreply)
			(void)load_sleep(c, RS_NOREPLY_PAUSE_MS);
	}
	return NULL;
}

/* The client and slot GRANTED(_MSG) a is for; false if none. */
static bool
load_match(struct rs_drv *d, const nlm4_testargs *a, struct rs_client **cp,
    int *sp)
{
	const nlm4_lock *l = &a->alock;
	int i = l->svid - RS_SVID_BASE;
	struct rs_client *c;

	if (i < 0 || i >= d->d_opt.o_nclients)
		return false;
	c = &d->d_cl[i];
	if (l->fh.nlm_netobj_len != strlen(c->c_lockfh) ||
	    memcmp(l->fh.nlm_netobj_val, c->c_lockfh,
	    l->fh.nlm_netobj_len) != 0 ||
	    l->oh.nlm_netobj_len != strlen(c->c_oh) ||
	    memcmp(l->oh.nlm_netobj_val, c->c_oh, l->oh.nlm_netobj_len) != 0 ||
	    l->l_len != RS_SLOT_LEN || l->l_offset % RS_SLOT_STRIDE != 0 ||
	    l->l_offset / RS_SLOT_STRIDE >= (uint64_t)d->d_opt.o_nslots)
		return false;
	*cp = c;
	*sp = (int)(l->l_offset / RS_SLOT_STRIDE);
	return true;
}

int
rs_client_granted(struct rs_drv *d, const nlm4_testargs *a, bool repeat)
{
	struct rs_client *c;
	const char *why;
	int s, ans = NLM4_GRANTED;

	if (!load_match(d, a, &c, &s)) {
		rs_note("receiver: GRANTED for svid %d at %llu: not ours",
		    a->alock.svid, (unsigned long long)a->alock.l_offset);
		pthread_mutex_lock(&d->d_mu);
		d->d_cb_msgs++;
		d->d_cb_refused++;
		pthread_mutex_unlock(&d->d_mu);
		return NLM4_DENIED;
	}
	pthread_mutex_lock(&d->d_mu);
	d->d_cb_msgs++;
	d->d_cb_repeat += repeat;
	if (!repeat && c->c_wslot == s && c->c_wexcl == (bool)a->exclusive) {
		why = "waited for";
		c->c_wgranted = true;
		d->d_cb_matched++;
		pthread_cond_broadcast(&d->d_cv);
	} else if (c->c_slot[s] == load_mode(a->exclusive))
		why = repeat ? "repeated, held" : "held";
	else {
		why = repeat ? "repeated, not wanted" : "not wanted";
		ans = NLM4_DENIED;
		d->d_cb_refused++;
	}
	pthread_mutex_unlock(&d->d_mu);
	rs_log(c, ans, "GRANTED_MSG slot=%d %s (%s), answered", s,
	    load_mode_name(a->exclusive), why);
	return ans;
}

static int
load_client_init(struct rs_drv *d, struct rs_client *c, int i)
{
	char path[4096];
	int s;

	c->c_id = i;
	c->c_drv = d;
	snprintf(c->c_name, sizeof(c->c_name), "rst-client-%02d", i);
	c->c_svid = RS_SVID_BASE + i;
	snprintf(c->c_oh, sizeof(c->c_oh), "oh-%02d", i);
	snprintf(c->c_lockfh, sizeof(c->c_lockfh), "lockfile-%d", i / 2);
	snprintf(c->c_sharefh[RS_SH_PRIVATE], sizeof(c->c_sharefh[0]),
	    "share-%02d", i);
	snprintf(c->c_sharefh[RS_SH_PAIR], sizeof(c->c_sharefh[1]),
	    "pairshare-%d", i / 2);
	/* Every other client on TCP. */
	rs_conn_init(&c->c_conn, i % 2 == 1, d->d_opt.o_timeout_ms, 250,
	    0x52530000u | (uint32_t)i);
	c->c_rng = (d->d_opt.o_seed + 1) * 0x9e3779b97f4a7c15ull ^
	    ((uint64_t)i + 1) * 0xbf58476d1ce4e5b9ull;
	if (c->c_rng == 0)
		c->c_rng = 1;
	for (s = 0; s < RS_MAXSLOTS; s++)
		c->c_slot[s] = RS_M_NONE;
	c->c_share[0] = c->c_share[1] = RS_SH_NONE;
	c->c_wslot = -1;
	snprintf(path, sizeof(path), "%s/client-%02d.log", d->d_opt.o_dir, i);
	if ((c->c_log = fopen(path, "w")) == NULL) {
		perror(path);
		return -1;
	}
	return 0;
}

int
rs_clients_start(struct rs_drv *d)
{
	struct rs_client *c;
	int i;

	for (i = 0; i < d->d_opt.o_nclients; i++)
		if (load_client_init(d, &d->d_cl[i], i) == -1)
			return -1;
	for (i = 0; i < d->d_opt.o_nclients; i++) {
		c = &d->d_cl[i];
		if (pthread_create(&c->c_thr, NULL, load_main, c) != 0) {
			fprintf(stderr, "crashdrv: pthread_create failed\n");
			return -1;
		}
	}
	return 0;
}

void
rs_clients_join(struct rs_drv *d)
{
	struct rs_client *c;
	int i;

	for (i = 0; i < d->d_opt.o_nclients; i++) {
		c = &d->d_cl[i];
		pthread_join(c->c_thr, NULL);
		/*
		 * The log stays open: the receiver thread may still write a
		 * late GRANTED_MSG to it (closed here, it wrote through a
		 * NULL FILE: the SEGV at 0x88, FILE's lock, seen under ASan
		 * in a CI run of 2026-11-28 and under TSan on 2026-12-05).
		 * main() flushes every stream before it leaves.
		 */
		fflush(c->c_log);
		rs_conn_close(&c->c_conn);
	}
}
