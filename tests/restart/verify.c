/*
 * verify.c - VERIFY: after a restart, is what nlmd lets the clients
 * reclaim exactly what they were told they held?  Also the quiescent
 * cross-checks and the model files.  nlmd runs with reclaim-check=strict.
 *
 * HOW IT WORKS.  The load threads are parked; their models are fixed.
 *   0. Wait for nlmd: a reclaim by a third identity (a host that holds
 *      nothing: "rst-probe", same address) until it is answered; DENIED
 *      means nlmd is in grace, DENIED_GRACE_PERIOD that it is not.  Grace
 *      is expected when any client certainly holds something.
 *   A. The third identity, before anybody reclaims: a slot that neither
 *      pair member holds (certainly) must TEST free; a held slot must
 *      refuse its exclusive LOCK with DENIED_GRACE_PERIOD; a slot held
 *      only shared must grant its shared LOCK (grace holds back only what
 *      conflicts).  The same with SHARE (access and deny RW) on the share
 *      files.  Whatever it got is released at once.
 *   B1. Every client, in parallel, the refusals: a reclaim of a slot it
 *      certainly does not hold, an exclusive reclaim of a slot it holds
 *      shared, a reclaim of a share it does not hold: DENIED.  Nobody has
 *      reclaimed anything yet, so grace cannot have ended.
 *   B2. Every client, in parallel: each certain lock and share is
 *      reclaimed in its mode: GRANTED.  Each uncertain one is reclaimed
 *      (either answer) and released: the model is certain again.
 *   C. Nothing is left to reclaim: grace must end, which the third
 *      identity sees as DENIED_GRACE_PERIOD for its reclaim.
 * A wrongly granted probe or reclaim is released again, so that one bug
 * does not make every later check fail.  The first call without a reply
 * ends VERIFY: nlmd is gone, and every further call would only wait for
 * its timeout.
 */
#include "crashdrv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_GRACE_END_MS	5000
#define PROBE_NAME		"rst-probe"
#define PROBE_SVID		999
#define PROBE_OH		"oh-probe"
#define PROBE_FH		"rst-probefile"
#define SHARE_RW		3

static const char *const tally_names[RT_NTALLY] = {
	[RT_GRACE_IN] = "nlmd is in grace after the restart exactly when "
	    "something was held",
	[RT_FREE_TEST] = "free slots: TEST by another host -> GRANTED",
	[RT_HELD_CLOSED] = "held slots: exclusive LOCK by another host -> "
	    "DENIED_GRACE_PERIOD",
	[RT_SHARED_OPEN] = "slots held shared: shared LOCK by another host "
	    "-> GRANTED in grace",
	[RT_FREE_SHARE] = "free share files: SHARE by another host -> GRANTED",
	[RT_HELD_SHARE] = "held share files: conflicting SHARE by another "
	    "host -> DENIED_GRACE_PERIOD",
	[RT_NEG_LOCK] = "unheld slots: reclaim by the former owner -> "
	    "refused",
	[RT_NEG_MODE] = "slots held shared: exclusive reclaim -> refused",
	[RT_NEG_SHARE] = "unheld shares: reclaim -> refused",
	[RT_POS_LOCK] = "held locks: reclaim in the same mode -> GRANTED",
	[RT_POS_SHARE] = "held shares: reclaim with the same access and deny "
	    "-> GRANTED",
	[RT_UNSURE] = "uncertain locks and shares: reclaim answered, then "
	    "released",
	[RT_GRACE_OVER] = "grace over once everything was reclaimed",
	[RT_EXCLUSION] = "pair members never hold conflicting locks or shares",
};

/* What the checks of one VERIFY share. */
struct verify_ctx {
	struct rs_drv	*v_drv;
	bool		 v_in_grace;
	int		 v_refused;	/* the status of a refused reclaim */
	bool		 v_dead;	/* a call got no reply (d_mu) */
};

/* Note a call's outcome; returns st. */
static int
verify_saw(struct verify_ctx *v, int st)
{
	if (st == RS_NOREPLY) {
		pthread_mutex_lock(&v->v_drv->d_mu);
		v->v_dead = true;
		pthread_mutex_unlock(&v->v_drv->d_mu);
	}
	return st;
}

static bool
verify_dead(struct verify_ctx *v)
{
	bool dead;

	pthread_mutex_lock(&v->v_drv->d_mu);
	dead = v->v_dead;
	pthread_mutex_unlock(&v->v_drv->d_mu);
	return dead;
}

static bool
verify_unsure(unsigned may)
{
	return (may & (may - 1)) != 0;
}

static const char *
verify_mode(unsigned m)
{
	return m == RS_M_EXCL ? "exclusive" : m == RS_M_SHARED ? "shared" :
	    m == RS_M_NONE ? "free" : "uncertain";
}

static void
verify_probe_lk(const char *fh, int s, struct rs_lk *k)
{
	k->lk_name = PROBE_NAME;
	k->lk_fh = fh;
	k->lk_oh = PROBE_OH;
	k->lk_svid = PROBE_SVID;
	k->lk_off = (uint64_t)s * RS_SLOT_STRIDE;
	k->lk_len = s < 0 ? 0 : RS_SLOT_LEN;
}

/* Release what a probe got; nothing to check. */
static void
verify_probe_undo(struct rs_drv *d, const struct rs_lk *k, bool share)
{
	int st;

	st = share ? rs_call_unshare(&d->d_probe, k) :
	    rs_call_unlock(&d->d_probe, k);
	if (st != NLM4_GRANTED)
		rs_note("probe: %s of %s -> %s", share ? "UNSHARE" : "UNLOCK",
		    k->lk_fh, rs_stat_name(st));
}

/* 0: wait for nlmd; the status of the third identity's reclaim. */
static int
verify_first(struct rs_drv *d)
{
	struct rs_lk k;
	uint64_t t0 = rs_now_ms(), wall;
	int st;

	/* d_first retransmits every 10 ms: restart times are measured so. */
	verify_probe_lk(PROBE_FH, 0, &k);
	do
		st = rs_call_lock(&d->d_first, &k, true, false, true);
	while (st == RS_NOREPLY && rs_now_ms() - t0 < d->d_opt.o_first_ms);
	wall = rs_wall_ms();
	/* Granted (not strict?): release it, or it stays on record. */
	if (st == NLM4_GRANTED)
		verify_probe_undo(d, &k, false);
	if (st != RS_NOREPLY)
		rs_note("cycle %d: first LOCK answered %" PRIu64 " ms after "
		    "`up', at %" PRIu64 " (wall clock ms): %s", d->d_cycle,
		    rs_now_ms() - t0, wall, rs_stat_name(st));
	return st;
}

/* 1: a certain lock or share somewhere; 0: nothing; -1: only uncertain. */
static int
verify_expect_grace(struct rs_drv *d)
{
	struct rs_client *c;
	bool unsure = false;
	int i, s, f;

	for (i = 0; i < d->d_opt.o_nclients; i++) {
		c = &d->d_cl[i];
		for (s = 0; s < d->d_opt.o_nslots; s++) {
			if (c->c_slot[s] == RS_M_SHARED ||
			    c->c_slot[s] == RS_M_EXCL)
				return 1;
			unsure = unsure || verify_unsure(c->c_slot[s]);
		}
		for (f = 0; f < 2; f++) {
			if (!verify_unsure(c->c_share[f]) &&
			    c->c_share[f] != RS_SH_NONE)
				return 1;
			unsure = unsure || verify_unsure(c->c_share[f]);
		}
	}
	return unsure ? -1 : 0;
}

/* A: one slot of a pair's lock file (b may be NULL). */
static void
verify_third_slot(struct verify_ctx *v, struct rs_client *a,
    struct rs_client *b, int s)
{
	struct rs_drv *d = v->v_drv;
	unsigned ma = a->c_slot[s], mb = b != NULL ? b->c_slot[s] : RS_M_NONE;
	bool unsure = verify_unsure(ma) || verify_unsure(mb);
	struct rs_lk k;
	int st;

	if (verify_dead(v))
		return;
	verify_probe_lk(a->c_lockfh, s, &k);
	if (ma == RS_M_NONE && mb == RS_M_NONE) {
		st = verify_saw(v, rs_call_test(&d->d_probe, &k, true));
		rs_tally(d, RT_FREE_TEST, st == NLM4_GRANTED, "%s slot %d "
		    "(free): TEST -> %s", a->c_lockfh, s, rs_stat_name(st));
		return;
	}
	if (ma != RS_M_SHARED && ma != RS_M_EXCL && mb != RS_M_SHARED &&
	    mb != RS_M_EXCL)
		return;
	st = verify_saw(v, rs_call_lock(&d->d_probe, &k, true, false, false));
	rs_tally(d, RT_HELD_CLOSED, st == NLM4_DENIED_GRACE_PERIOD, "%s slot "
	    "%d (%s, %s): exclusive LOCK -> %s", a->c_lockfh, s,
	    verify_mode(ma), verify_mode(mb), rs_stat_name(st));
	if (st == NLM4_GRANTED)
		verify_probe_undo(d, &k, false);
	if (unsure || ma == RS_M_EXCL || mb == RS_M_EXCL)
		return;
	st = verify_saw(v, rs_call_lock(&d->d_probe, &k, false, false, false));
	rs_tally(d, RT_SHARED_OPEN, st == NLM4_GRANTED, "%s slot %d (shared): "
	    "shared LOCK -> %s", a->c_lockfh, s, rs_stat_name(st));
	if (st == NLM4_GRANTED || st == RS_NOREPLY)
		verify_probe_undo(d, &k, false);
}

/* A: one share file and its holders (m[] their models). */
static void
verify_third_share(struct verify_ctx *v, const char *fh, const uint32_t *m,
    int n)
{
	struct rs_drv *d = v->v_drv;
	bool free = true, held = false;
	struct rs_lk k;
	int i, st;

	for (i = 0; i < n; i++) {
		free = free && m[i] == RS_SH_NONE;
		held = held || (!verify_unsure(m[i]) && m[i] != RS_SH_NONE &&
		    m[i] != RS_SH_BIT(0, 0));
	}
	if ((!free && !held) || verify_dead(v))
		return;
	verify_probe_lk(fh, -1, &k);
	st = verify_saw(v, rs_call_share(&d->d_probe, &k, SHARE_RW, SHARE_RW,
	    false));
	if (free)
		rs_tally(d, RT_FREE_SHARE, st == NLM4_GRANTED, "%s (free): "
		    "SHARE -> %s", fh, rs_stat_name(st));
	else
		rs_tally(d, RT_HELD_SHARE, st == NLM4_DENIED_GRACE_PERIOD,
		    "%s (held): SHARE -> %s", fh, rs_stat_name(st));
	if (st == NLM4_GRANTED || st == RS_NOREPLY)
		verify_probe_undo(d, &k, true);
}

/* A, for every pair. */
static void
verify_third(struct verify_ctx *v)
{
	struct rs_drv *d = v->v_drv;
	struct rs_client *a, *b;
	uint32_t m[2];
	int i, s;

	for (i = 0; i < d->d_opt.o_nclients; i += 2) {
		a = &d->d_cl[i];
		b = i + 1 < d->d_opt.o_nclients ? &d->d_cl[i + 1] : NULL;
		for (s = 0; s < d->d_opt.o_nslots; s++)
			verify_third_slot(v, a, b, s);
		m[0] = a->c_share[RS_SH_PAIR];
		m[1] = b != NULL ? b->c_share[RS_SH_PAIR] : RS_SH_NONE;
		verify_third_share(v, a->c_sharefh[RS_SH_PAIR], m, 2);
		verify_third_share(v, a->c_sharefh[RS_SH_PRIVATE],
		    &a->c_share[RS_SH_PRIVATE], 1);
		if (b != NULL)
			verify_third_share(v, b->c_sharefh[RS_SH_PRIVATE],
			    &b->c_share[RS_SH_PRIVATE], 1);
	}
}

/* UNLOCK after a reclaim that must not have been granted. */
static void
verify_unlock(struct verify_ctx *v, struct rs_client *c, int s)
{
	struct rs_lk k;
	int st;

	rs_slot_lk(c, s, &k);
	st = verify_saw(v, rs_call_unlock(&c->c_conn, &k));
	rs_log(c, st, "UNLOCK slot=%d (verify)", s);
	rs_slot_set(c, s, st == NLM4_GRANTED ? RS_M_NONE : RS_M_ANY);
}

static void
verify_unshare(struct verify_ctx *v, struct rs_client *c, int f)
{
	struct rs_lk k;
	int st;

	rs_share_lk(c, f, &k);
	st = verify_saw(v, rs_call_unshare(&c->c_conn, &k));
	rs_log(c, st, "UNSHARE file=%s (verify)", c->c_sharefh[f]);
	rs_share_set(c, f, st == NLM4_GRANTED ? RS_SH_NONE : RS_SH_ANY);
}

static int
verify_reclaim(struct verify_ctx *v, struct rs_client *c, int s, bool excl)
{
	struct rs_lk k;
	int st;

	rs_slot_lk(c, s, &k);
	st = verify_saw(v, rs_call_lock(&c->c_conn, &k, excl, false, true));
	rs_log(c, st, "LOCK slot=%d %s reclaim", s, excl ? "exclusive" :
	    "shared");
	return st;
}

static int
verify_reclaim_share(struct verify_ctx *v, struct rs_client *c, int f,
    int access, int deny)
{
	struct rs_lk k;
	int st;

	rs_share_lk(c, f, &k);
	st = verify_saw(v, rs_call_share(&c->c_conn, &k, access, deny, true));
	rs_log(c, st, "SHARE file=%s access=%d deny=%d reclaim",
	    c->c_sharefh[f], access, deny);
	return st;
}

/* B1 for one client. */
static void
verify_negative(struct verify_ctx *v, struct rs_client *c)
{
	struct rs_drv *d = v->v_drv;
	unsigned m;
	int s, f, st;

	for (s = 0; s < d->d_opt.o_nslots && !verify_dead(v); s++) {
		if ((m = rs_slot_get(c, s)) != RS_M_NONE && m != RS_M_SHARED)
			continue;
		st = verify_reclaim(v, c, s, m == RS_M_SHARED);
		rs_tally(d, m == RS_M_NONE ? RT_NEG_LOCK : RT_NEG_MODE,
		    st == v->v_refused, "%s slot %d (%s): %s reclaim -> %s",
		    c->c_name, s, verify_mode(m), m == RS_M_NONE ? "shared" :
		    "exclusive", rs_stat_name(st));
		if (st == NLM4_GRANTED && m == RS_M_NONE)
			verify_unlock(v, c, s);
		else if (st == NLM4_GRANTED)
			rs_slot_set(c, s, RS_M_EXCL);
		else if (st == RS_NOREPLY)
			rs_slot_set(c, s, RS_M_ANY);
	}
	for (f = 0; f < 2 && !verify_dead(v); f++) {
		if (rs_share_get(c, f) != RS_SH_NONE)
			continue;
		st = verify_reclaim_share(v, c, f, 0, 0);
		rs_tally(d, RT_NEG_SHARE, st == v->v_refused, "%s %s (none): "
		    "reclaim -> %s", c->c_name, c->c_sharefh[f],
		    rs_stat_name(st));
		if (st == NLM4_GRANTED || st == RS_NOREPLY)
			verify_unshare(v, c, f);
	}
}

/* B2 for one slot. */
static void
verify_positive_slot(struct verify_ctx *v, struct rs_client *c, int s)
{
	unsigned m = rs_slot_get(c, s);
	int st;

	if (m == RS_M_NONE || verify_dead(v))
		return;
	st = verify_reclaim(v, c, s, m == RS_M_EXCL);
	if (verify_unsure(m)) {
		/*
		 * Any answer (DENIED_GRACE_PERIOD too: grace may be over when
		 * only uncertain records were left); then release, and the
		 * model is certain again.
		 */
		verify_unlock(v, c, s);
		rs_tally(v->v_drv, RT_UNSURE, (st == NLM4_GRANTED ||
		    st == NLM4_DENIED || st == NLM4_DENIED_GRACE_PERIOD) &&
		    rs_slot_get(c, s) == RS_M_NONE,
		    "%s slot %d (uncertain): reclaim -> %s, then UNLOCK",
		    c->c_name, s, rs_stat_name(st));
		return;
	}
	rs_tally(v->v_drv, RT_POS_LOCK, st == NLM4_GRANTED, "%s slot %d (%s):"
	    " reclaim -> %s", c->c_name, s, verify_mode(m), rs_stat_name(st));
	if (st != NLM4_GRANTED)
		verify_unlock(v, c, s);
}

/* B2 for one share file. */
static void
verify_positive_share(struct verify_ctx *v, struct rs_client *c, int f)
{
	uint32_t m = rs_share_get(c, f);
	int a, dn, st;

	if (m == RS_SH_NONE || verify_dead(v))
		return;
	if (verify_unsure(m)) {
		st = verify_reclaim_share(v, c, f, 0, 0);
		verify_unshare(v, c, f);
		rs_tally(v->v_drv, RT_UNSURE, (st == NLM4_GRANTED ||
		    st == NLM4_DENIED || st == NLM4_DENIED_GRACE_PERIOD) &&
		    rs_share_get(c, f) == RS_SH_NONE,
		    "%s %s (uncertain): reclaim -> %s, then UNSHARE",
		    c->c_name, c->c_sharefh[f], rs_stat_name(st));
		return;
	}
	for (a = 0; a < 4; a++)
		for (dn = 0; dn < 4; dn++)
			if (m == RS_SH_BIT(a, dn))
				goto found;
	return;
found:
	st = verify_reclaim_share(v, c, f, a, dn);
	rs_tally(v->v_drv, RT_POS_SHARE, st == NLM4_GRANTED, "%s %s (access "
	    "%d deny %d): reclaim -> %s", c->c_name, c->c_sharefh[f], a, dn,
	    rs_stat_name(st));
	if (st != NLM4_GRANTED)
		verify_unshare(v, c, f);
}

static void
verify_positive(struct verify_ctx *v, struct rs_client *c)
{
	int s, f;

	for (s = 0; s < v->v_drv->d_opt.o_nslots; s++)
		verify_positive_slot(v, c, s);
	for (f = 0; f < 2; f++)
		verify_positive_share(v, c, f);
}

struct verify_job {
	struct verify_ctx	*j_v;
	struct rs_client	*j_c;
	void			(*j_fn)(struct verify_ctx *, struct rs_client *);
	pthread_t		 j_thr;
};

static void *
verify_job_main(void *arg)
{
	struct verify_job *j = arg;

	j->j_fn(j->j_v, j->j_c);
	return NULL;
}

/* fn for every client, each in a thread of its own; wait for all. */
static void
verify_parallel(struct verify_ctx *v,
    void (*fn)(struct verify_ctx *, struct rs_client *))
{
	struct verify_job jobs[RS_MAXCLIENTS];
	int i, n = v->v_drv->d_opt.o_nclients;

	for (i = 0; i < n; i++) {
		jobs[i] = (struct verify_job){ v, &v->v_drv->d_cl[i], fn, 0 };
		if (pthread_create(&jobs[i].j_thr, NULL, verify_job_main,
		    &jobs[i]) != 0) {
			fprintf(stderr, "crashdrv: pthread_create failed\n");
			exit(2);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(jobs[i].j_thr, NULL);
}

/* C: the third identity's reclaim until DENIED_GRACE_PERIOD. */
static void
verify_grace_over(struct verify_ctx *v)
{
	struct rs_drv *d = v->v_drv;
	uint64_t t0 = rs_now_ms();
	struct rs_lk k;
	int st;

	if (verify_dead(v))
		return;
	verify_probe_lk(PROBE_FH, 0, &k);
	for (;;) {
		st = verify_saw(v, rs_call_lock(&d->d_probe, &k, true, false,
		    true));
		if (st == NLM4_GRANTED)
			verify_probe_undo(d, &k, false);
		if (st == NLM4_DENIED_GRACE_PERIOD || st == RS_NOREPLY ||
		    rs_now_ms() - t0 >= VERIFY_GRACE_END_MS)
			break;
		rs_sleep_ms(20);
	}
	rs_tally(d, RT_GRACE_OVER, st == NLM4_DENIED_GRACE_PERIOD, "reclaim "
	    "by another host after %" PRIu64 " ms -> %s", rs_now_ms() - t0,
	    rs_stat_name(st));
}

void
rs_verify(struct rs_drv *d)
{
	struct verify_ctx v = { d, false, NLM4_DENIED, false };
	int st, expect;

	expect = verify_expect_grace(d);
	if ((st = verify_first(d)) == RS_NOREPLY) {
		rs_check(d, false, "cycle %d: nlmd answers within %u ms",
		    d->d_cycle, d->d_opt.o_first_ms);
		return;
	}
	v.v_in_grace = st == NLM4_DENIED;
	v.v_refused = v.v_in_grace ? NLM4_DENIED : NLM4_DENIED_GRACE_PERIOD;
	rs_tally(d, RT_GRACE_IN, (st == NLM4_DENIED ||
	    st == NLM4_DENIED_GRACE_PERIOD) && (expect == -1 ||
	    v.v_in_grace == (expect == 1)), "grace %s, reclaim by another host"
	    " -> %s", expect == 1 ? "expected" : expect == 0 ? "not expected" :
	    "possible", rs_stat_name(st));
	verify_third(&v);
	verify_parallel(&v, verify_negative);
	verify_parallel(&v, verify_positive);
	if (v.v_in_grace)
		verify_grace_over(&v);
	if (v.v_dead)
		rs_check(d, false, "cycle %d: nlmd answered every call of "
		    "VERIFY (it stopped; VERIFY cut short)", d->d_cycle);
}

void
rs_exclusion_check(struct rs_drv *d, enum rs_tally_id id)
{
	struct rs_client *a, *b;
	unsigned ma, mb;
	uint32_t sa, sb;
	int i, s, x, y, p, q;

	for (i = 0; i + 1 < d->d_opt.o_nclients; i += 2) {
		a = &d->d_cl[i];
		b = &d->d_cl[i + 1];
		for (s = 0; s < d->d_opt.o_nslots; s++) {
			ma = a->c_slot[s];
			mb = b->c_slot[s];
			if (verify_unsure(ma) || verify_unsure(mb) ||
			    (ma == RS_M_NONE && mb == RS_M_NONE))
				continue;
			rs_tally(d, id, !(ma == RS_M_EXCL && mb != RS_M_NONE) &&
			    !(mb == RS_M_EXCL && ma != RS_M_NONE), "%s slot %d: "
			    "%s and %s", a->c_lockfh, s, verify_mode(ma),
			    verify_mode(mb));
		}
		sa = a->c_share[RS_SH_PAIR];
		sb = b->c_share[RS_SH_PAIR];
		if (verify_unsure(sa) || verify_unsure(sb) ||
		    sa == RS_SH_NONE || sb == RS_SH_NONE)
			continue;
		for (x = 0; x < 16 && sa != RS_SH_BIT(x / 4, x % 4); x++)
			;
		for (y = 0; y < 16 && sb != RS_SH_BIT(y / 4, y % 4); y++)
			;
		/* access & other's deny, or deny & other's access */
		p = (x / 4) & (y % 4);
		q = (x % 4) & (y / 4);
		rs_tally(d, id, p == 0 && q == 0, "%s: access %d deny %d and "
		    "access %d deny %d", a->c_sharefh[RS_SH_PAIR], x / 4, x % 4,
		    y / 4, y % 4);
	}
}

void
rs_tally_report(struct rs_drv *d, const char *prefix)
{
	struct rs_tally *t;
	int i;

	for (i = 0; i < RT_NTALLY; i++) {
		t = &d->d_tally[i];
		if (t->t_n > 0)
			rs_check(d, t->t_bad == 0, "%s: %s (%u%s)", prefix,
			    tally_names[i], t->t_n, t->t_bad > 0 ?
			    ", see the notes above" : "");
		t->t_n = t->t_bad = 0;
	}
}

static void
model_hex(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		fprintf(f, "%02x", (unsigned char)*s);
}

/* The states in may, as the dump names them, joined by ','. */
static void
model_slot(FILE *f, unsigned may)
{
	static const char *const names[] = { "none", "shared", "exclusive" };
	const char *sep = "";
	int i;

	for (i = 0; i < 3; i++)
		if (may & (1u << i)) {
			fprintf(f, "%s%s", sep, names[i]);
			sep = ",";
		}
}

static void
model_share(FILE *f, uint32_t may)
{
	const char *sep = "";
	int i;

	if (may & RS_SH_NONE) {
		fprintf(f, "none");
		sep = ",";
	}
	for (i = 0; i < 16; i++)
		if (may & (1u << i)) {
			fprintf(f, "%s%d/%d", sep, i / 4, i % 4);
			sep = ",";
		}
}

static void
model_client(FILE *f, const struct rs_client *c, int nslots)
{
	int s, i;

	for (s = 0; s < nslots; s++) {
		fprintf(f, "slot %s %d ", c->c_name, c->c_svid);
		model_hex(f, c->c_oh);
		fputc(' ', f);
		model_hex(f, c->c_lockfh);
		fprintf(f, " %d %d ", s * RS_SLOT_STRIDE, RS_SLOT_LEN);
		model_slot(f, c->c_slot[s]);
		fputc('\n', f);
	}
	for (i = 0; i < 2; i++) {
		fprintf(f, "share %s ", c->c_name);
		model_hex(f, c->c_oh);
		fputc(' ', f);
		model_hex(f, c->c_sharefh[i]);
		fputc(' ', f);
		model_share(f, c->c_share[i]);
		fputc('\n', f);
	}
}

void
rs_model_write(struct rs_drv *d)
{
	char path[4096];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/model.%d", d->d_opt.o_dir,
	    ++d->d_nmodel);
	if ((f = fopen(path, "w")) == NULL) {
		rs_check(d, false, "write %s", path);
		return;
	}
	fprintf(f, "# slot name svid oh fh start len states | "
	    "share name oh fh states (access/deny)\n");
	for (i = 0; i < d->d_opt.o_nclients; i++)
		model_client(f, &d->d_cl[i], d->d_opt.o_nslots);
	if (fclose(f) != 0)
		rs_check(d, false, "write %s", path);
}
