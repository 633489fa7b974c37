/*
 * test_model.c - randomized model-based test of lockcore.
 *
 * HOW IT WORKS
 *   The reference model is deliberately dumb: for each of MF files and MB
 *   "bytes" it stores what each of MO owners holds there (none, shared,
 *   exclusive), plus an array of waiters in arrival order and a table of
 *   share reservations.  Every rule is written per byte, with no ranges,
 *   trees, merging or splitting.  A random sequence of LOCK (blocking or
 *   not, sometimes re-sent), TEST, UNLOCK, CANCEL, CONFIRM, SHARE,
 *   UNSHARE and host release runs against both; after every step the test
 *   compares the status, the conflicting holder's validity, the granted
 *   and dropped udata, the lock records (the model's maximal same-mode
 *   runs per owner must be exactly the table's records), the waiters, the
 *   shares, and runs lk_table_check().
 *
 *   Two address spaces: "low", bytes 0..63 plus a virtual byte 64 that
 *   stands for [64, UINT64_MAX] (len 0 requests reach it), and "high",
 *   bytes UINT64_MAX-63 .. UINT64_MAX, where len 0 ends at byte 63 and
 *   ranges running past UINT64_MAX must be refused with LK_RANGE.
 *
 *   Persistence: a "store" applies each call's rs_removed then rs_added;
 *   it must equal the table's records (tokens included) at every check,
 *   and a table rebuilt with lk_table_load() from it must equal the
 *   original at the end.  Tokens of added records must be new (above
 *   every token seen before the call) or inherited from a record removed
 *   in the same call (a split).
 *
 *   Grace: now and then the run *restarts*: the table is destroyed (its
 *   waiters with it), and a new one, with a new epoch, a random
 *   cf_reclaim_check and the store's high-water token as seed, loads the
 *   store's live records as reclaimable (the store's old reclaimable ones
 *   are dropped).  The model keeps reclaimable locks per byte and owner
 *   (rheld) and reclaimable shares, and writes the GRACE rules per byte
 *   too.  In grace, half the LOCK and SHARE requests are reclaims (outside,
 *   a few are, and must get LK_NOGRACE); grace ends at random, and the
 *   epoch moves at random.  Epochs are checked like tokens: a record with
 *   a new token has the current epoch, one with an inherited token the
 *   epoch (and kind) of the record it was cut from.
 *
 *   FOCUS runs (test_model_focus()) draw their requests otherwise: four
 *   owners on a window of 16 bytes (at the start, or the last 16 below
 *   2^64) of mostly one file, half the requests steered at unconfirmed
 *   grants (m_pick_focus()), and now and then a plan (m_plan_start()):
 *   a short script of requests that builds a shared grant over its
 *   owner's exclusive bytes and acts on it before it is undone.  The
 *   model is the same.  Each run prints how often it reached the events
 *   an undo can get wrong (struct m_events), so that a change to the
 *   generator that stops reaching one shows.
 *
 *   Default: fixed seeds, a few tens of thousands of steps.  NLMD_TEST_LONG
 *   runs millions; NLMD_TEST_SEED picks another seed.  Under ASan a
 *   quarter of the steps (the same seeds, so a prefix of the debug
 *   build's runs: 47 s against 12 s on a 2-core AMD EPYC VM, while the
 *   debug build runs them all in 14 s).
 */
#include "lktest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#define MF	3		/* files */
#define MO	6		/* lock owners */
#define MB	65		/* model bytes (64 = beyond, low space only) */
#define MW	256		/* waiters + unconfirmed grants */
#define MAXREC	4096

struct m_owner {
	uint64_t	 host;
	int32_t		 svid;
	const char	*oh;
};

static const struct m_owner m_owners[MO] = {
	{ 1, 0, "a" }, { 1, 1, "a" }, { 1, 0, "b" },
	{ 2, 0, "a" }, { 2, -7, "c" }, { 3, 0, "" },
};
static const char *const m_files[MF] = { "F0", "file-1", "F2" };

struct m_wait {
	int		 o, f, s, e, id;
	bool		 excl, granted;
	/* granted: o's bytes of [s, e] apart from the grant (undo) */
	uint8_t		 prior[MB];
	uint8_t		 later[MB];	/* that byte set by o since */
};

struct m_rec {
	int		 kind, f, o, s, e, excl, access, deny, reclaim;
	uint64_t	 token, epoch;
};

/*
 * Events the runs are meant to reach, counted by the model (so restored
 * with it when a step is run again: m_snap) and printed per run.
 */
struct m_events {
	unsigned long	 weak_grants;	/* shared, over exclusive bytes of
					   the owner's */
	unsigned long	 undo_cancel, undo_refused;	/* grants undone by */
	unsigned long	 undo_sh_other;	/* of a shared grant, another owner
					   holding bytes of its range */
	unsigned long	 undo_later;	/* with bytes its owner set since */
	unsigned long	 undo_split;	/* an exclusive run from before the
					   grant given back shared beside
					   one set since, kept */
	unsigned long	 own_in_grant;	/* a LOCK or reclaim of an owner
					   inside its unconfirmed grant */
	unsigned long	 own_excl_in_sh;	/* exclusive, in a shared one */
	unsigned long	 upgrades, downgrades;	/* of an owner's bytes */
	unsigned long	 cancel_queued;	/* CANCEL of a queued request */
	unsigned long	 reclaims_grace;	/* reclaims granted in grace */
	unsigned long	 rel_pending;	/* host or file releases ending
					   unconfirmed grants */
};

/* A step of a FOCUS plan. */
struct m_plstep {
	int		 op, o, f, s, e;
	int		 alt;		/* -1: m_pick_lockop()'s choice */
	int		 dyn;		/* bytes of the grant: 1 weak, 2 not */
	bool		 excl, block;
};

/* One model + table run. */
struct m_run {
	struct lk_table	*t;
	bool		 high;		/* high address space */
	bool		 focus;		/* FOCUS (m_pick_focus()) */
	struct m_plstep	 pl[16];	/* FOCUS: a plan (m_plan_start()) */
	int		 npl, plan;	/* its steps, the next (none: 0) */
	bool		 plan_now;	/* this step is the plan's */
	unsigned long	 plans[2];	/* started, of each kind */
	bool		 fifo;
	uint64_t	 rng;
	uint8_t		 held[MF][MB][MO];
	uint8_t		 held0[MF][MB][MO];	/* before the step */
	uint8_t		 rheld[MF][MB][MO];	/* reclaimable */
	struct m_wait	 w[MW];
	int		 nw;
	int		 sh_acc[MF][MO], sh_den[MF][MO];	/* -1: none */
	int		 rsh_acc[MF][MO], rsh_den[MF][MO];	/* on record */
	bool		 grace;
	bool		 closing;	/* grace closed to reclaims, records
					   still being dropped (m_grace_step) */
	enum lk_reclaim_check check;
	uint64_t	 epoch;
	unsigned long	 restarts, reclaims, grace_ends;
	unsigned long	 closing_steps;	/* steps taken with grace closing */
	unsigned long	 undos, undo_kept, undo_shared;	/* m_undo() */
	unsigned long	 cycle_drops;	/* m_cycle_drops() */
	struct m_events	 ev;
	/* counted by m_step(), not the model */
	unsigned long	 rel_grants;	/* waiters granted by UNLOCK, CANCEL,
					   a release or a grace end */
	unsigned long	 len0, at_max;	/* LOCKs granted or queued: to EOF
					   (len 0); with UINT64_MAX (high) */
	int		 next_id;
	int		 granted[MW], ngranted;
	int		 dropped[MW * 2], ndropped;
	char		*live;		/* udata ids held by the table */
	int		 nlive;
	/* the store */
	struct m_srec	*store;
	size_t		 nstore, capstore;
	uint64_t	 max_token;
	unsigned long	 steps, failures;
	const struct lk_result *res;
	unsigned long	 nstat[LK_NOGRACE + 1], nwgrants, maxrec, maxw;
	int		 last_op, last_o, last_f, last_s, last_e, last_excl;
	size_t		 budget;	/* cf_grant_budget (0: none) */
	const struct m_limits *lim;	/* the table's limits (NULL: none) */
	const int	*hint;		/* the table's grants (m_hint_skip) */
	int		 nhint;
	struct m_wait	 w0[MW];	/* before the step */
	int		 nw0;
	int		 tg[MW * 4], ntg;	/* the table's, this step */
	int		 td[MW * 4], ntd;
	/*
	 * Records each host's unlock splits added past the locks limit since
	 * a step began with the table within it (the table's split credit,
	 * lk_split_credit() in lock.c).
	 */
	size_t		 over[4];
	/*
	 * Extended runs (m_run_ext()): lk_release_range() among the UNLOCKs,
	 * and lk_host_release_some() of rel_host in pieces between other
	 * steps (no LOCK or SHARE of it meanwhile, as the contract asks).
	 */
	bool		 ext;
	uint64_t	 rel_host;	/* being released in pieces (0: none) */
	size_t		 rel_max, rel_left;	/* the piece: max, *leftp */
	struct m_rec	 rel_rm[MAXREC];	/* the host's records the
					   table's piece removed */
	size_t		 rel_nrm;
	unsigned long	 rel_pieces, rel_hosts, rr_calls, rr_kept;
};

/* A stored record with its own copies of the bytes. */
struct m_srec {
	struct lk_record r;
	char		 fh[16], oh[16];
};

#define M_FAIL(m, what)	do {						\
	if ((m)->failures++ < 5)					\
		fprintf(stderr, "\nmodel: step %lu (op %d owner %d "	\
		    "file %d [%d,%d] %s): %s\n", (m)->steps,		\
		    (m)->last_op, (m)->last_o, (m)->last_f, (m)->last_s, \
		    (m)->last_e, (m)->last_excl ? "excl" : "shared",	\
		    (what));						\
	CU_FAIL(what);							\
} while (0)

static int
m_nbytes(const struct m_run *m)
{
	return m->high ? 64 : 65;
}

static uint64_t
m_base(const struct m_run *m)
{
	return m->high ? UINT64_MAX - 63 : 0;
}

static uint64_t
m_rand(struct m_run *m, uint64_t n)
{
	return lt_rand(&m->rng) % n;
}

/* Index of the share owner (host, oh) of lock owner o: first such. */
static int
m_share_owner(int o)
{
	int i;

	for (i = 0; i < MO; i++)
		if (m_owners[i].host == m_owners[o].host &&
		    strcmp(m_owners[i].oh, m_owners[o].oh) == 0)
			return i;
	return o;
}

/* ---- the model's rules, per byte ---- */

static int
m_mode(bool excl)
{
	return excl ? 2 : 1;
}

/* First other owner holding a byte of [s, e] in f in conflict, or -1. */
static int
m_held_conflict(const struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int b, p;

	for (b = s; b <= e; b++)
		for (p = 0; p < MO; p++)
			if (p != o && m->held[f][b][p] != 0 &&
			    (excl || m->held[f][b][p] == 2))
				return p;
	return -1;
}

/* Does o hold every byte of [s, e] in exactly that mode (idempotent)? */
static bool
m_same(const struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int i;

	for (i = s; i <= e; i++)
		if (m->held[f][i][o] != m_mode(excl))
			return false;
	return true;
}

static bool
m_waiter_blocks(const struct m_run *m, const struct m_wait *w, int o, int f,
    int s, int e, bool excl)
{
	int i;

	if (!m->fifo || w->granted || w->o == o || w->f != f ||
	    w->s > e || s > w->e || !(excl || w->excl))
		return false;
	/*
	 * Not when w waits for a lock of o anywhere in w's range, not only
	 * where the two overlap (lk_waiter_blocks).
	 */
	for (i = w->s; i <= w->e; i++)
		if (m->held[f][i][o] == 2 || (w->excl && m->held[f][i][o] != 0))
			return false;
	return true;
}

/* First queued waiter before index upto that holds the request back. */
static int
m_queued_block(const struct m_run *m, int o, int f, int s, int e, bool excl,
    int upto)
{
	int i;

	for (i = 0; i < upto; i++)
		if (m_waiter_blocks(m, &m->w[i], o, f, s, e, excl))
			return i;
	return -1;
}

static void
m_set(struct m_run *m, int o, int f, int s, int e, int mode)
{
	int b;

	for (b = s; b <= e; b++)
		m->held[f][b][o] = (uint8_t)mode;
}

/*
 * o took [s, e] of f in `mode' (a LOCK, a reclaim, another grant): in the
 * prior of each of its unconfirmed grants there, those bytes are that.
 */
static void
m_note(struct m_run *m, int o, int f, int s, int e, int mode)
{
	struct m_wait *w;
	bool hit = false, xsh = false;
	int b, i;

	for (i = 0; i < m->nw; i++) {
		w = &m->w[i];
		if (!w->granted || w->o != o || w->f != f || w->s > e ||
		    s > w->e)
			continue;
		hit = true;
		xsh |= mode == 2 && !w->excl;
		for (b = s > w->s ? s : w->s; b <= e && b <= w->e; b++) {
			w->prior[b] = (uint8_t)mode;
			w->later[b] = 1;
		}
	}
	m->ev.own_in_grant += hit;
	m->ev.own_excl_in_sh += xsh;
}

/* Count an upgrade or downgrade by o's taking [s, e] of f in `mode'. */
static void
m_note_mode(struct m_run *m, int o, int f, int s, int e, int mode)
{
	bool up = false, down = false;
	int b;

	for (b = s; b <= e; b++) {
		up |= m->held[f][b][o] == 1 && mode == 2;
		down |= m->held[f][b][o] == 2 && mode == 1;
	}
	m->ev.upgrades += up;
	m->ev.downgrades += down;
}

static void
m_drop(struct m_run *m, int id)
{
	m->dropped[m->ndropped++] = id;
}

static void
m_wremove(struct m_run *m, int i)
{
	memmove(&m->w[i], &m->w[i + 1], (size_t)(m->nw - i - 1) *
	    sizeof(m->w[0]));
	m->nw--;
}

/*
 * Grant what can be granted on f, in arrival order, until nothing can:
 * the reference rule is simply "no queued waiter is ever grantable".
 */
/* Has o an unconfirmed grant on f overlapping [s, e]? */
static bool
m_pending(const struct m_run *m, int o, int f, int s, int e)
{
	int i;

	for (i = 0; i < m->nw; i++)
		if (m->w[i].granted && m->w[i].o == o && m->w[i].f == f &&
		    m->w[i].s <= e && s <= m->w[i].e)
			return true;
	return false;
}

static bool
m_in(const int *v, int n, int id)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

/*
 * Of two waiters of one owner that overlap on a file, either may be
 * granted first, and it then holds the other back (lockcore.h,
 * lk_grant_more(); lockcore's sweeps go by where the change was, the
 * model's by arrival).  When the two sides chose differently, the step is
 * run again on the model with the table's grants as m->hint: pass over
 * waiter i if the table did not grant it but granted such a sibling.
 * Everything else is still checked (the sibling must be grantable here).
 */
static bool
m_hint_skip(const struct m_run *m, int i)
{
	const struct m_wait *w = &m->w[i], *x;
	int j;

	if (m->hint == NULL || m_in(m->hint, m->nhint, w->id))
		return false;
	for (j = 0; j < m->nw; j++) {
		x = &m->w[j];
		if (j != i && !x->granted && x->o == w->o && x->f == w->f &&
		    x->s <= w->e && w->s <= x->e &&
		    m_in(m->hint, m->nhint, x->id))
			return true;
	}
	return false;
}

static void
m_grant_pass(struct m_run *m, int f)
{
	struct m_wait *w;
	bool again = true;
	int i, b;

	while (again) {
		again = false;
		for (i = 0; i < m->nw; i++) {
			w = &m->w[i];
			if (w->granted || w->f != f ||
			    m_held_conflict(m, w->o, f, w->s, w->e,
			    w->excl) >= 0 ||
			    m_queued_block(m, w->o, f, w->s, w->e, w->excl,
			    i) >= 0 ||
			    /* not over its owner's unconfirmed grant */
			    m_pending(m, w->o, f, w->s, w->e) ||
			    m_hint_skip(m, i))
				continue;
			for (b = w->s; b <= w->e; b++) {
				w->prior[b] = m->held[f][b][w->o];
				w->later[b] = 0;
			}
			for (b = w->s; !w->excl && b <= w->e; b++)
				if (w->prior[b] == 2) {
					m->ev.weak_grants++;
					break;
				}
			m_set(m, w->o, f, w->s, w->e, m_mode(w->excl));
			m_note(m, w->o, f, w->s, w->e, m_mode(w->excl));
			w->granted = true;
			m->granted[m->ngranted++] = w->id;
			again = true;
			/*
			 * With a budget of one, every grant is another call,
			 * and each starts from the head of the queue.
			 */
			if (m->budget == 1)
				break;
		}
	}
}

/*
 * Is queued waiter i held back by an older queued request of x's own?
 * Then x's request behind i is no edge to i's owner: once that request
 * is granted, x holds a lock in i's range that i conflicts with, and goes
 * past i (lockcore's deadlock.c, lk_dl_behind()).
 */
static bool
m_behind_own(const struct m_run *m, int x, int i)
{
	const struct m_wait *v = &m->w[i];
	int j;

	for (j = 0; j < i; j++)
		if (m->w[j].o == x && m_waiter_blocks(m, &m->w[j], v->o,
		    v->f, v->s, v->e, v->excl))
			return true;
	return false;
}

/* Push the owners blocking (x, f, s, e, excl) queued before upto. */
static void
m_blockers(const struct m_run *m, int x, int f, int s, int e, bool excl,
    int upto, bool *out)
{
	int b, p, i;

	for (b = s; b <= e; b++)
		for (p = 0; p < MO; p++)
			if (p != x && m->held[f][b][p] != 0 &&
			    (excl || m->held[f][b][p] == 2))
				out[p] = true;
	for (i = 0; i < upto; i++)
		if (m_waiter_blocks(m, &m->w[i], x, f, s, e, excl) &&
		    !m_behind_own(m, x, i))
			out[m->w[i].o] = true;
}

/*
 * Would o waiting for (f, s, e, excl), queued before upto, close a cycle?
 * Fixed point.
 */
static bool
m_reach(const struct m_run *m, int o, int f, int s, int e, bool excl,
    int upto)
{
	bool reach[MO] = { false }, changed = true;
	int x, i;

	m_blockers(m, o, f, s, e, excl, upto, reach);
	while (changed) {
		changed = false;
		for (x = 0; x < MO; x++) {
			bool out[MO] = { false };
			int p;

			if (!reach[x])
				continue;
			for (i = 0; i < m->nw; i++)
				if (m->w[i].o == x && !m->w[i].granted)
					m_blockers(m, x, m->w[i].f, m->w[i].s,
					    m->w[i].e, m->w[i].excl, i, out);
			for (p = 0; p < MO; p++)
				if (out[p] && !reach[p])
					reach[p] = changed = true;
		}
	}
	return reach[o];
}

static bool
m_deadlock(const struct m_run *m, int o, int f, int s, int e, bool excl)
{
	return m_reach(m, o, f, s, e, excl, m->nw);
}

/* Is queued waiter i on a cycle of the wait-for graph? */
static bool
m_cycle(const struct m_run *m, int i)
{
	const struct m_wait *w = &m->w[i];

	return m_reach(m, w->o, w->f, w->s, w->e, w->excl, i);
}

/*
 * In grace, does (o, f, [s, e], excl) meet a reclaimable lock: one of o
 * overlapping it, or (own false) one of another owner conflicting with
 * it?  With `host', only owners of another host count.
 */
static bool
m_rconflict(const struct m_run *m, int o, int f, int s, int e, bool excl,
    bool own, bool host)
{
	int b, p;

	for (b = s; b <= e; b++)
		for (p = 0; p < MO; p++) {
			if (m->rheld[f][b][p] == 0)
				continue;
			if (p == o) {
				if (own)
					return true;
			} else if ((excl || m->rheld[f][b][p] == 2) &&
			    (!host || m_owners[p].host != m_owners[o].host))
				return true;
		}
	return false;
}

static int
m_find_wait(const struct m_run *m, int o, int f, int s, int e, bool excl,
    bool granted)
{
	int i;

	for (i = 0; i < m->nw; i++)
		if (m->w[i].o == o && m->w[i].f == f && m->w[i].s == s &&
		    m->w[i].e == e && m->w[i].excl == excl &&
		    m->w[i].granted == granted)
			return i;
	return -1;
}

/*
 * LIMITS, per byte: a limit counts records (maximal same-mode runs of one
 * owner on one file), queued waiters and live shares, per host and in
 * all; 0 is none.  A LOCK or UNLOCK is refused when it adds records over
 * one (an UNLOCK may go a sixteenth over, at least one), a request queues
 * only if records, queued requests (in all, of its host) and what it adds
 * are within the lock limits (or it adds nothing); reclaims, grants of
 * waiters and undone grants are never refused.
 */
struct m_limits {
	size_t		 locks, locks_host;
	size_t		 waiters, waiters_host;
	size_t		 shares, shares_host;
	size_t		 waiters_owner;	/* queued and unconfirmed */
};

/* Runs of the non-zero modes in col[0..nb). */
static long
m_col_runs(const uint8_t *col, int nb)
{
	long n = 0;
	int b;

	for (b = 0; b < nb; b++)
		n += col[b] != 0 && (b == 0 || col[b - 1] != col[b]);
	return n;
}

/* Live records of owners of `host' (0: every host). */
static size_t
m_nrecs(const struct m_run *m, uint64_t host)
{
	uint8_t col[MB];
	size_t n = 0;
	int f, o, b;

	for (f = 0; f < MF; f++)
		for (o = 0; o < MO; o++) {
			if (host != 0 && m_owners[o].host != host)
				continue;
			for (b = 0; b < MB; b++)
				col[b] = m->held[f][b][o];
			n += (size_t)m_col_runs(col, m_nbytes(m));
		}
	return n;
}

/* The records o gains (negative: loses) once its [s, e] of f are `mode'. */
static long
m_delta(const struct m_run *m, int o, int f, int s, int e, int mode)
{
	uint8_t col[MB];
	long delta;
	int b;

	for (b = 0; b < MB; b++)
		col[b] = m->held[f][b][o];
	delta = -m_col_runs(col, m_nbytes(m));
	for (b = s; b <= e; b++)
		col[b] = (uint8_t)mode;
	return delta + m_col_runs(col, m_nbytes(m));
}

/*
 * Would o's records fit the limits once its bytes [s, e] of f are `mode'
 * (0: unlocked)?  `unlock': with an unlock's sixteenth over the host's
 * limit, and over the table's its host's credit.
 */
static bool
m_locks_fit(const struct m_run *m, int o, int f, int s, int e, int mode,
    bool unlock)
{
	size_t max[2], have[2];
	long delta;

	if (m->lim == NULL || (delta = m_delta(m, o, f, s, e, mode)) <= 0)
		return true;
	max[0] = m->lim->locks;
	max[1] = m->lim->locks_host;
	have[0] = m_nrecs(m, 0);
	have[1] = m_nrecs(m, m_owners[o].host);
	/* Past the table's limit a split has its host's credit only. */
	if (max[0] != 0 && have[0] + (size_t)delta > max[0] &&
	    (!unlock || m->over[m_owners[o].host] + (size_t)delta >
	    have[1] / 16 + 1))
		return false;
	if (max[1] != 0 && unlock)
		max[1] += max[1] / 16 + 1;
	if (max[1] != 0 && have[1] + (size_t)delta > max[1])
		return false;
	return true;
}

/* o's split of [s, e] of f goes ahead: charge its host's credit. */
static void
m_split_charge(struct m_run *m, int o, int f, int s, int e)
{
	long delta;

	if (m->lim == NULL || m->lim->locks == 0 ||
	    (delta = m_delta(m, o, f, s, e, 0)) <= 0 ||
	    m_nrecs(m, 0) + (size_t)delta <= m->lim->locks)
		return;
	m->over[m_owners[o].host] += (size_t)delta;
}

/*
 * Is there room for one more queued request of o, (f, [s, e], excl)?
 * Per owner its unconfirmed grants count too, but not one the request
 * replaces (a re-send after the grant that must wait again).
 */
static bool
m_waiters_fit(const struct m_run *m, int o, int f, int s, int e, bool excl)
{
	size_t all = 0, host = 0, own = 0;
	int i;

	if (m->lim == NULL)
		return true;
	for (i = 0; i < m->nw; i++) {
		if (m->w[i].o == o && (!m->w[i].granted || m->w[i].f != f ||
		    m->w[i].s != s || m->w[i].e != e ||
		    m->w[i].excl != excl))
			own++;
		if (m->w[i].granted)
			continue;
		all++;
		host += m_owners[m->w[i].o].host == m_owners[o].host;
	}
	return (m->lim->waiters == 0 || all < m->lim->waiters) &&
	    (m->lim->waiters_host == 0 || host < m->lim->waiters_host) &&
	    (m->lim->waiters_owner == 0 || own < m->lim->waiters_owner);
}

/*
 * Is there room for o's request (f, [s, e], mode) to queue under the lock
 * limits: live records and queued requests, in all and of o's host, plus
 * the records it would add if granted now (none: it queues), within them?
 */
static bool
m_waiter_locks_fit(const struct m_run *m, int o, int f, int s, int e,
    int mode)
{
	size_t all = 0, host = 0;
	long delta;
	int i;

	if (m->lim == NULL || (delta = m_delta(m, o, f, s, e, mode)) <= 0)
		return true;
	for (i = 0; i < m->nw; i++) {
		if (m->w[i].granted)
			continue;
		all++;
		host += m_owners[m->w[i].o].host == m_owners[o].host;
	}
	all += m_nrecs(m, 0) + (size_t)delta;
	host += m_nrecs(m, m_owners[o].host) + (size_t)delta;
	return (m->lim->locks == 0 || all <= m->lim->locks) &&
	    (m->lim->locks_host == 0 || host <= m->lim->locks_host);
}

/* Is there room for one more live share of share owner so? */
static bool
m_shares_fit(const struct m_run *m, int so)
{
	size_t all = 0, host = 0;
	int f, p;

	if (m->lim == NULL)
		return true;
	for (f = 0; f < MF; f++)
		for (p = 0; p < MO; p++) {
			if (m->sh_acc[f][p] < 0)
				continue;
			all++;
			host += m_owners[p].host == m_owners[so].host;
		}
	return (m->lim->shares == 0 || all < m->lim->shares) &&
	    (m->lim->shares_host == 0 || host < m->lim->shares_host);
}

static enum lk_status
m_lock(struct m_run *m, int o, int f, int s, int e, bool excl, bool block,
    int id)
{
	bool own;
	int b, i;

	/* Re-sent while queued (a blocking request only). */
	if (block && (i = m_find_wait(m, o, f, s, e, excl, false)) >= 0) {
		m_drop(m, m->w[i].id);
		m->w[i].id = id;
		return LK_BLOCKED;
	}
	/* Another owner's reclaimable bytes in conflict: wait for grace. */
	if (m_rconflict(m, o, f, s, e, excl, false, false))
		return LK_GRACE;
	/* o's own reclaimable bytes: taken over, never queued. */
	own = m_rconflict(m, o, f, s, e, excl, true, false);
	if (m_held_conflict(m, o, f, s, e, excl) >= 0 ||
	    (!m_same(m, o, f, s, e, excl) &&
	    m_queued_block(m, o, f, s, e, excl, m->nw) >= 0)) {
		if (!block)
			return LK_DENIED;
		if (own)
			return LK_GRACE;
		if (m_deadlock(m, o, f, s, e, excl))
			return LK_DEADLOCK;
		if (!m_waiters_fit(m, o, f, s, e, excl) ||
		    !m_waiter_locks_fit(m, o, f, s, e, m_mode(excl)))
			return LK_NOLOCKS;
		m->w[m->nw] = (struct m_wait){ o, f, s, e, id, excl, false,
		    { 0 }, { 0 } };
		m->nw++;
		/* Supersedes a grant of it: o's waiters it held back. */
		if ((i = m_find_wait(m, o, f, s, e, excl, true)) >= 0) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
			m_grant_pass(m, f);
		}
		return LK_BLOCKED;
	}
	if (!m_locks_fit(m, o, f, s, e, m_mode(excl), false))
		return LK_NOLOCKS;
	for (b = s; own && b <= e; b++)
		m->rheld[f][b][o] = 0;
	m_note_mode(m, o, f, s, e, m_mode(excl));
	m_set(m, o, f, s, e, m_mode(excl));
	m_note(m, o, f, s, e, m_mode(excl));
	m_grant_pass(m, f);
	/*
	 * Re-sent after the grant (a blocking request only): it ends, and
	 * o's waiters it held back.
	 */
	if (block && (i = m_find_wait(m, o, f, s, e, excl, true)) >= 0) {
		m_drop(m, m->w[i].id);
		m_wremove(m, i);
		m_grant_pass(m, f);
	}
	return LK_GRANTED;
}

/* Is every byte of [s, e] o's, live or reclaimable, in mode >= excl's? */
static bool
m_on_record(const struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int b, have;

	for (b = s; b <= e; b++) {
		/* (An owner's live and reclaimable bytes never overlap.) */
		have = m->held[f][b][o] != 0 ? m->held[f][b][o] :
		    m->rheld[f][b][o];
		if (have < m_mode(excl))
			return false;
	}
	return true;
}

/* A reclaim (see GRACE AND RECLAIM), never queued. */
static enum lk_status
m_reclaim(struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int b, i;

	if (!m->grace || m->closing) {
		/* Held already, live, in its mode: granted, no change. */
		for (b = s; b <= e; b++)
			if (m->held[f][b][o] != m_mode(excl))
				return LK_NOGRACE;
		m->reclaims++;
		return LK_GRANTED;
	}
	if (m_held_conflict(m, o, f, s, e, excl) >= 0)
		return LK_DENIED;
	if ((m->check == LK_RECLAIM_STRICT &&
	    !m_on_record(m, o, f, s, e, excl)) ||
	    (m->check == LK_RECLAIM_CONFLICT &&
	    m_rconflict(m, o, f, s, e, excl, false, true)))
		return LK_DENIED;
	for (b = s; b <= e; b++)
		m->rheld[f][b][o] = 0;
	m_note_mode(m, o, f, s, e, m_mode(excl));
	m_set(m, o, f, s, e, m_mode(excl));
	m_note(m, o, f, s, e, m_mode(excl));
	m->ev.reclaims_grace++;
	if ((i = m_find_wait(m, o, f, s, e, excl, false)) >= 0) {
		m_drop(m, m->w[i].id);
		m_wremove(m, i);
	}
	m_grant_pass(m, f);
	/* Over a grant of it: that ends, and o's waiters it held back. */
	if ((i = m_find_wait(m, o, f, s, e, excl, true)) >= 0) {
		m_drop(m, m->w[i].id);
		m_wremove(m, i);
		m_grant_pass(m, f);
	}
	m->reclaims++;
	return LK_GRANTED;
}

static enum lk_status
m_unlock(struct m_run *m, int o, int f, int s, int e)
{
	int b, i;

	if (!m_locks_fit(m, o, f, s, e, 0, true))
		return LK_NOLOCKS;
	m_split_charge(m, o, f, s, e);
	m_set(m, o, f, s, e, 0);
	for (b = s; b <= e; b++)
		m->rheld[f][b][o] = 0;
	for (i = m->nw - 1; i >= 0; i--)
		if (m->w[i].granted && m->w[i].o == o && m->w[i].f == f &&
		    m->w[i].s <= e && s <= m->w[i].e) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
		}
	m_grant_pass(m, f);
	return LK_OK;
}

/* UNLOCK as NLM means it: also o's queued requests there go. */
static enum lk_status
m_unlock_cancel(struct m_run *m, int o, int f, int s, int e)
{
	int i;

	if (!m_locks_fit(m, o, f, s, e, 0, true))
		return LK_NOLOCKS;
	/* Its queued requests inside [s, e] (lk_unlock_cancel()). */
	for (i = m->nw - 1; i >= 0; i--)
		if (!m->w[i].granted && m->w[i].o == o && m->w[i].f == f &&
		    s <= m->w[i].s && m->w[i].e <= e) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
		}
	return m_unlock(m, o, f, s, e);
}

static void	m_to_rec(const struct m_run *, const struct lk_record *,
		    struct m_rec *);

/*
 * Has o a live lock on f overlapping [s, e] with a token later than
 * `before'?  (The store holds the table's records as of the step's
 * start, and is checked against the model's bytes at every step.)
 */
static bool
m_later_token(const struct m_run *m, int o, int f, int s, int e,
    uint64_t before)
{
	struct m_rec r;
	size_t i;

	for (i = 0; i < m->nstore; i++) {
		m_to_rec(m, &m->store[i].r, &r);
		if (r.kind == LK_REC_LOCK && !r.reclaim && r.o == o &&
		    r.f == f && r.s <= e && s <= r.e && r.token > before)
			return true;
	}
	return false;
}

/*
 * An operator's release (lk_release_range()): UNLOCK, and o's queued
 * requests overlapping [s, e] go; with `before', nothing at all when a
 * live lock of o there was granted after it.
 */
static enum lk_status
m_release_range(struct m_run *m, int o, int f, int s, int e,
    uint64_t before)
{
	int i;

	m->rr_calls++;
	if (before != 0 && m_later_token(m, o, f, s, e, before)) {
		m->rr_kept++;
		return LK_OK;
	}
	if (!m_locks_fit(m, o, f, s, e, 0, true))
		return LK_NOLOCKS;
	for (i = m->nw - 1; i >= 0; i--)
		if (!m->w[i].granted && m->w[i].o == o && m->w[i].f == f &&
		    m->w[i].s <= e && s <= m->w[i].e) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
		}
	return m_unlock(m, o, f, s, e);
}

/* Everything on file f goes. */
static void
m_file_release(struct m_run *m, int f)
{
	int o, b, i;

	for (o = 0; o < MO; o++) {
		m_set(m, o, f, 0, MB - 1, 0);
		for (b = 0; b < MB; b++)
			m->rheld[f][b][o] = 0;
		m->sh_acc[f][o] = m->sh_den[f][o] = -1;
		m->rsh_acc[f][o] = m->rsh_den[f][o] = -1;
	}
	for (i = 0; i < m->nw; i++)
		if (m->w[i].f == f && m->w[i].granted) {
			m->ev.rel_pending++;
			break;
		}
	for (i = m->nw - 1; i >= 0; i--)
		if (m->w[i].f == f) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
		}
}

/*
 * Undo unconfirmed grant i: o's bytes of [s, e] become its prior, where
 * a run of exclusive bytes held from before the grant that another
 * owner's byte now meets comes back shared, all of it (bytes o set since
 * are runs of their own); o's unconfirmed grants there end.
 */
static void
m_undo(struct m_run *m, int i)
{
	struct m_wait w = m->w[i];
	int b, a, p, mode, prev = 0;

	m->undos++;
	for (b = w.s; b <= w.e; b++)
		if (w.prior[b] != 0) {
			m->undo_kept++;
			break;
		}
	for (b = w.s; b <= w.e; b++)
		if (w.later[b]) {
			m->ev.undo_later++;
			break;
		}
	for (b = w.s; !w.excl && b <= w.e; b++)
		if (m_held_conflict(m, w.o, w.f, b, b, true) >= 0) {
			m->ev.undo_sh_other++;
			break;
		}
	m_set(m, w.o, w.f, w.s, w.e, 0);
	for (b = w.s; b <= w.e; b++)
		m->rheld[w.f][b][w.o] = 0;
	for (i = m->nw - 1; i >= 0; i--)
		if (m->w[i].granted && m->w[i].o == w.o && m->w[i].f == w.f &&
		    m->w[i].s <= w.e && w.s <= m->w[i].e) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
		}
	for (a = w.s; a <= w.e; a = b) {
		mode = w.prior[a];
		for (b = a; b <= w.e && w.prior[b] == mode &&
		    w.later[b] == w.later[a]; b++)
			continue;
		if (mode == 2)
			for (p = a; p < b && mode == 2; p++)
				if (m_held_conflict(m, w.o, w.f, p, p, true) >= 0)
					mode = 1;
		m->undo_shared += mode == 1 && w.prior[a] == 2;
		/* prev: 1 kept exclusive since, 2 given back shared */
		if (w.prior[a] == 2 && (prev == 1 ? mode == 1 && !w.later[a] :
		    prev == 2 && w.later[a]))
			m->ev.undo_split++;
		prev = w.prior[a] != 2 ? 0 : w.later[a] ? 1 : mode == 1 ? 2 :
		    0;
		if (mode != 0)
			m_set(m, w.o, w.f, a, b - 1, mode);
	}
	m_grant_pass(m, w.f);
}

static enum lk_status
m_cancel(struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int i;

	if ((i = m_find_wait(m, o, f, s, e, excl, false)) >= 0) {
		m_drop(m, m->w[i].id);
		m_wremove(m, i);
		m_grant_pass(m, f);
		m->ev.cancel_queued++;
		return LK_OK;
	}
	if ((i = m_find_wait(m, o, f, s, e, excl, true)) >= 0) {
		m->ev.undo_cancel++;
		m_undo(m, i);
		return LK_OK;
	}
	return LK_NOTFOUND;
}

static enum lk_status
m_grant_undo(struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int i;

	if ((i = m_find_wait(m, o, f, s, e, excl, true)) < 0)
		return LK_NOTFOUND;
	m->ev.undo_refused++;
	m_undo(m, i);
	return LK_OK;
}

static enum lk_status
m_confirm(struct m_run *m, int o, int f, int s, int e, bool excl)
{
	int i;

	if ((i = m_find_wait(m, o, f, s, e, excl, true)) < 0)
		return LK_NOTFOUND;
	m_drop(m, m->w[i].id);
	m_wremove(m, i);
	m_grant_pass(m, f);	/* o's waiters that waited for the answer */
	return LK_OK;
}

static void
m_host_release(struct m_run *m, uint64_t host)
{
	int o, f, b, i;

	for (o = 0; o < MO; o++) {
		if (m_owners[o].host != host)
			continue;
		for (f = 0; f < MF; f++) {
			m_set(m, o, f, 0, MB - 1, 0);
			for (b = 0; b < MB; b++)
				m->rheld[f][b][o] = 0;
			m->sh_acc[f][o] = m->sh_den[f][o] = -1;
			m->rsh_acc[f][o] = m->rsh_den[f][o] = -1;
		}
	}
	for (i = 0; i < m->nw; i++)
		if (m_owners[m->w[i].o].host == host && m->w[i].granted) {
			m->ev.rel_pending++;
			break;
		}
	for (i = m->nw - 1; i >= 0; i--)
		if (m_owners[m->w[i].o].host == host) {
			m_drop(m, m->w[i].id);
			m_wremove(m, i);
		}
	for (f = 0; f < MF; f++)
		m_grant_pass(m, f);
}

/*
 * A piece of lk_host_release_some() of m->rel_host, which the table ran
 * first (its choice of records is its own): every waiter and unconfirmed
 * grant of the host goes, and the records the table removed (m->rel_rm),
 * which must all be the host's; then waiters of others may be granted.
 */
static void
m_release_piece(struct m_run *m)
{
	const struct m_rec *r;
	size_t i;
	int f, b;

	for (i = 0; i < (size_t)m->nw; i++)
		if (m_owners[m->w[i].o].host == m->rel_host &&
		    m->w[i].granted) {
			m->ev.rel_pending++;
			break;
		}
	for (i = (size_t)m->nw; i-- > 0;)
		if (m_owners[m->w[i].o].host == m->rel_host) {
			m_drop(m, m->w[i].id);
			m_wremove(m, (int)i);
		}
	if (m->rel_max != SIZE_MAX && m->rel_nrm > m->rel_max)
		M_FAIL(m, "a piece removed more records than its max");
	for (i = 0; i < m->rel_nrm; i++) {
		r = &m->rel_rm[i];
		if (r->f < 0 || r->o < 0 ||
		    m_owners[r->o].host != m->rel_host) {
			M_FAIL(m, "a piece removed another host's record");
			continue;
		}
		if (r->kind == LK_REC_SHARE) {
			if (r->reclaim)
				m->rsh_acc[r->f][r->o] =
				    m->rsh_den[r->f][r->o] = -1;
			else
				m->sh_acc[r->f][r->o] =
				    m->sh_den[r->f][r->o] = -1;
			continue;
		}
		for (b = r->s; b <= r->e; b++)
			if (r->reclaim)
				m->rheld[r->f][b][r->o] = 0;
			else
				m->held[r->f][b][r->o] = 0;
	}
	for (f = 0; f < MF; f++)
		m_grant_pass(m, f);
}

static bool
m_sconflict(int acc, int den, int pacc, int pden)
{
	return pacc >= 0 && ((acc & pden) || (den & pacc));
}

/* Does (acc, den) ask for nothing beyond (pacc, pden)? */
static bool
m_scovered(int acc, int den, int pacc, int pden)
{
	return pacc >= 0 && (acc & ~pacc) == 0 && (den & ~pden) == 0;
}

/* The cf_reclaim_check part of a share reclaim. */
static bool
m_share_reclaim_ok(const struct m_run *m, int so, int f, int acc, int den)
{
	int p;

	if (m->check == LK_RECLAIM_STRICT)
		return m_scovered(acc, den, m->rsh_acc[f][so],
		    m->rsh_den[f][so]) ||
		    m_scovered(acc, den, m->sh_acc[f][so], m->sh_den[f][so]);
	if (m->check == LK_RECLAIM_CONFLICT)
		for (p = 0; p < MO; p++)
			if (m_owners[p].host != m_owners[so].host &&
			    m_sconflict(acc, den, m->rsh_acc[f][p],
			    m->rsh_den[f][p]))
				return false;
	return true;
}

static enum lk_status
m_share(struct m_run *m, int so, int f, int acc, int den, bool reclaim)
{
	int p;

	if (reclaim && (!m->grace || m->closing))
		return m->sh_acc[f][so] == acc && m->sh_den[f][so] == den ?
		    LK_OK : LK_NOGRACE;
	for (p = 0; p < MO && !reclaim; p++)
		if (p != so && m_sconflict(acc, den, m->rsh_acc[f][p],
		    m->rsh_den[f][p]))
			return LK_GRACE;
	for (p = 0; p < MO; p++)
		if (p != so && m_sconflict(acc, den, m->sh_acc[f][p],
		    m->sh_den[f][p]))
			return LK_DENIED;
	if (reclaim && !m_share_reclaim_ok(m, so, f, acc, den))
		return LK_DENIED;
	if (!reclaim && m->sh_acc[f][so] < 0 && !m_shares_fit(m, so))
		return LK_NOLOCKS;
	m->sh_acc[f][so] = acc;
	m->sh_den[f][so] = den;
	m->rsh_acc[f][so] = m->rsh_den[f][so] = -1;
	return LK_OK;
}

/* ---- comparing the table with the model ---- */

static int
m_file_of(const void *fh, size_t len)
{
	int f;

	for (f = 0; f < MF; f++)
		if (strlen(m_files[f]) == len && memcmp(m_files[f], fh, len) == 0)
			return f;
	return -1;
}

static int
m_owner_of(const struct lk_record *rc)
{
	int o;

	for (o = 0; o < MO; o++)
		if (m_owners[o].host == rc->rc_host &&
		    (rc->rc_kind == LK_REC_SHARE ||
		    m_owners[o].svid == rc->rc_svid) &&
		    strlen(m_owners[o].oh) == rc->rc_ohlen &&
		    memcmp(m_owners[o].oh, rc->rc_oh, rc->rc_ohlen) == 0)
			return o;
	return -1;
}

/* Model bytes of a record's range. */
static void
m_bytes(const struct m_run *m, const struct lk_record *rc, int *s, int *e)
{
	uint64_t base = m_base(m);

	*s = (int)(rc->rc_start - base);
	if (rc->rc_len == 0)
		*e = m_nbytes(m) - 1;
	else
		*e = (int)(rc->rc_start - base + rc->rc_len - 1);
}

static void
m_to_rec(const struct m_run *m, const struct lk_record *rc, struct m_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = rc->rc_kind;
	r->f = m_file_of(rc->rc_fh, rc->rc_fhlen);
	r->o = m_owner_of(rc);
	if (rc->rc_kind == LK_REC_LOCK) {
		m_bytes(m, rc, &r->s, &r->e);
		r->excl = rc->rc_excl;
	} else {
		r->access = rc->rc_access;
		r->deny = rc->rc_deny;
	}
	r->reclaim = rc->rc_reclaim;
	r->token = rc->rc_token;
	r->epoch = rc->rc_epoch;
}

static int
m_rec_cmp(const void *a, const void *b)
{
	const struct m_rec *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->reclaim != y->reclaim)
		return x->reclaim - y->reclaim;
	if (x->f != y->f)
		return x->f - y->f;
	if (x->o != y->o)
		return x->o - y->o;
	return x->s - y->s;
}

struct m_collect {
	const struct m_run *m;
	struct m_rec	*r;
	size_t		 n;
};

static int
m_collect_cb(const struct lk_record *rc, void *arg)
{
	struct m_collect *c = arg;

	if (c->n < MAXREC)
		m_to_rec(c->m, rc, &c->r[c->n]);
	c->n++;
	return 0;
}

/* The table's lock and share records, sorted. */
static size_t
m_table_recs(const struct m_run *m, struct lk_table *t, struct m_rec *r)
{
	struct m_collect c = { m, r, 0 };

	lk_lock_foreach(t, m_collect_cb, &c);
	lk_share_foreach(t, m_collect_cb, &c);
	CU_ASSERT_FATAL(c.n <= MAXREC);
	qsort(r, c.n, sizeof(*r), m_rec_cmp);
	return c.n;
}

/* Maximal same-mode runs of o in held[f] (a live or reclaimable map). */
static size_t
m_runs(const struct m_run *m, uint8_t held[MF][MB][MO], int f, int o,
    int reclaim, struct m_rec *r)
{
	int b, s, mode, nb = m_nbytes(m);
	size_t n = 0;

	for (b = 0; b < nb; b = s) {
		mode = held[f][b][o];
		for (s = b + 1; s < nb && held[f][s][o] == mode; s++)
			;
		if (mode != 0)
			r[n++] = (struct m_rec){ LK_REC_LOCK, f, o, b, s - 1,
			    mode == 2, 0, 0, reclaim, 0, 0 };
	}
	return n;
}

/*
 * The model's records: maximal same-mode runs, then shares, live and
 * reclaimable; sorted.  (Reclaimable records are runs too: they were
 * loaded from live records, and are only ever cut.)
 */
static size_t
m_model_recs(struct m_run *m, struct m_rec *r)
{
	size_t n = 0;
	int f, o;

	for (f = 0; f < MF; f++) {
		for (o = 0; o < MO; o++) {
			n += m_runs(m, m->held, f, o, 0, r + n);
			n += m_runs(m, m->rheld, f, o, 1, r + n);
			if (m->sh_acc[f][o] >= 0)
				r[n++] = (struct m_rec){ LK_REC_SHARE, f, o, 0,
				    0, 0, m->sh_acc[f][o], m->sh_den[f][o], 0,
				    0, 0 };
			if (m->rsh_acc[f][o] >= 0)
				r[n++] = (struct m_rec){ LK_REC_SHARE, f, o, 0,
				    0, 0, m->rsh_acc[f][o], m->rsh_den[f][o], 1,
				    0, 0 };
		}
	}
	qsort(r, n, sizeof(*r), m_rec_cmp);
	return n;
}

static bool
m_recs_equal(const struct m_rec *a, size_t na, const struct m_rec *b,
    size_t nb, bool tokens)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].kind != b[i].kind || a[i].f != b[i].f ||
		    a[i].o != b[i].o || a[i].s != b[i].s || a[i].e != b[i].e ||
		    a[i].excl != b[i].excl || a[i].access != b[i].access ||
		    a[i].deny != b[i].deny || a[i].reclaim != b[i].reclaim ||
		    (tokens && (a[i].token != b[i].token ||
		    a[i].epoch != b[i].epoch)))
			return false;
	return true;
}

static int
m_int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static bool
m_ids_equal(int *a, int na, int *b, int nb)
{
	qsort(a, (size_t)na, sizeof(int), m_int_cmp);
	qsort(b, (size_t)nb, sizeof(int), m_int_cmp);
	return na == nb && memcmp(a, b, (size_t)na * sizeof(int)) == 0;
}

struct m_wcollect {
	const struct m_run *m;
	struct m_wait	 w[MW];
	int		 n;
};

static int
m_wcollect_cb(const struct lk_waiter_info *wi, void *arg)
{
	struct m_wcollect *c = arg;
	struct m_wait *w = &c->w[c->n++];

	w->f = m_file_of(wi->wi_req.rc_fh, wi->wi_req.rc_fhlen);
	w->o = m_owner_of(&wi->wi_req);
	m_bytes(c->m, &wi->wi_req, &w->s, &w->e);
	w->excl = wi->wi_req.rc_excl;
	w->granted = wi->wi_granted;
	w->id = (int)(uintptr_t)wi->wi_udata;
	return c->n >= MW;
}

static int
m_wait_cmp(const void *a, const void *b)
{
	return ((const struct m_wait *)a)->id - ((const struct m_wait *)b)->id;
}

/* Waiters and unconfirmed grants: same set, same fields. */
static bool
m_waiters_equal(struct m_run *m)
{
	static struct m_wcollect c;
	struct m_wait mine[MW];
	int i;

	c.m = m;
	c.n = 0;
	lk_waiter_foreach(m->t, m_wcollect_cb, &c);
	if (c.n != m->nw)
		return false;
	memcpy(mine, m->w, sizeof(mine[0]) * (size_t)m->nw);
	qsort(mine, (size_t)m->nw, sizeof(mine[0]), m_wait_cmp);
	qsort(c.w, (size_t)c.n, sizeof(c.w[0]), m_wait_cmp);
	for (i = 0; i < c.n; i++)
		if (mine[i].id != c.w[i].id || mine[i].o != c.w[i].o ||
		    mine[i].f != c.w[i].f || mine[i].s != c.w[i].s ||
		    mine[i].e != c.w[i].e || mine[i].excl != c.w[i].excl ||
		    mine[i].granted != c.w[i].granted)
			return false;
	return true;
}

/* ---- the store (persistence seam) ---- */

static bool
m_same_key(const struct lk_record *a, const struct lk_record *b)
{
	if (a->rc_kind != b->rc_kind || a->rc_host != b->rc_host ||
	    a->rc_fhlen != b->rc_fhlen || a->rc_ohlen != b->rc_ohlen ||
	    memcmp(a->rc_fh, b->rc_fh, a->rc_fhlen) != 0 ||
	    memcmp(a->rc_oh, b->rc_oh, a->rc_ohlen) != 0)
		return false;
	return a->rc_kind == LK_REC_SHARE ||
	    (a->rc_svid == b->rc_svid && a->rc_start == b->rc_start);
}

/* Every field of a record but its key. */
static bool
m_same_value(const struct lk_record *a, const struct lk_record *b)
{
	return a->rc_start == b->rc_start && a->rc_len == b->rc_len &&
	    a->rc_token == b->rc_token && a->rc_epoch == b->rc_epoch &&
	    a->rc_excl == b->rc_excl && a->rc_reclaim == b->rc_reclaim &&
	    a->rc_access == b->rc_access && a->rc_deny == b->rc_deny;
}

/* Add a record to the store (its key not there yet). */
static void
m_store_add(struct m_run *m, const struct lk_record *rc)
{
	struct m_srec *s;
	size_t j;

	if (m->nstore == m->capstore) {
		m->capstore = m->capstore ? m->capstore * 2 : 256;
		m->store = realloc(m->store, m->capstore * sizeof(*m->store));
		CU_ASSERT_PTR_NOT_NULL_FATAL(m->store);
		for (j = 0; j < m->nstore; j++) {
			m->store[j].r.rc_fh = m->store[j].fh;
			m->store[j].r.rc_oh = m->store[j].oh;
		}
	}
	s = &m->store[m->nstore++];
	s->r = *rc;
	memcpy(s->fh, s->r.rc_fh, s->r.rc_fhlen);
	memcpy(s->oh, s->r.rc_oh, s->r.rc_ohlen);
	s->r.rc_fh = s->fh;
	s->r.rc_oh = s->oh;
}

static bool
m_store_apply(struct m_run *m, const struct lk_result *res)
{
	size_t i, j;

	for (i = 0; i < res->rs_nremoved; i++) {
		for (j = 0; j < m->nstore; j++)
			if (m_same_key(&m->store[j].r, &res->rs_removed[i]))
				break;
		if (j == m->nstore ||
		    !m_same_value(&m->store[j].r, &res->rs_removed[i]))
			return false;
		m->store[j] = m->store[--m->nstore];
		m->store[j].r.rc_fh = m->store[j].fh;
		m->store[j].r.rc_oh = m->store[j].oh;
	}
	for (i = 0; i < res->rs_nadded; i++) {
		for (j = 0; j < m->nstore; j++)
			if (m_same_key(&m->store[j].r, &res->rs_added[i]))
				return false;
		m_store_add(m, &res->rs_added[i]);
	}
	return true;
}

/*
 * Added tokens are new, with the current epoch and live; or inherited
 * from a record removed now, with its epoch and kind.  Added shares are
 * new and live.
 */
static bool
m_tokens_ok(struct m_run *m, const struct lk_result *res)
{
	const struct lk_record *a, *r;
	uint64_t max = m->max_token;
	size_t i, j;

	for (i = 0; i < res->rs_nadded; i++) {
		a = &res->rs_added[i];
		if (a->rc_kind != LK_REC_LOCK || a->rc_token > m->max_token) {
			if (a->rc_epoch != m->epoch || a->rc_reclaim)
				return false;
			if (a->rc_token > max)
				max = a->rc_token;
			continue;
		}
		for (j = 0; j < res->rs_nremoved; j++) {
			r = &res->rs_removed[j];
			if (r->rc_token == a->rc_token &&
			    r->rc_epoch == a->rc_epoch &&
			    r->rc_reclaim == a->rc_reclaim)
				break;
		}
		if (j == res->rs_nremoved)
			return false;
	}
	m->max_token = max;
	return true;
}

static size_t
m_store_recs(const struct m_run *m, struct m_rec *r)
{
	size_t i;

	for (i = 0; i < m->nstore; i++)
		m_to_rec(m, &m->store[i].r, &r[i]);
	qsort(r, m->nstore, sizeof(*r), m_rec_cmp);
	return m->nstore;
}

/* ---- driving a step ---- */


static void m_dump(const struct m_run *m);

static void
m_check_udata(struct m_run *m, enum lk_status st, int id)
{
	int i;

	for (i = 0; i < m->ntd; i++) {
		if (!m->live[m->td[i]])
			M_FAIL(m, "udata dropped twice or never taken");
		m->live[m->td[i]] = 0;
	}
	if (st == LK_BLOCKED && !m->live[id])
		m->live[id] = 1;
	if (!m_ids_equal(m->tg, m->ntg, m->granted, m->ngranted)) {
		M_FAIL(m, "granted waiters differ");
		fprintf(stderr, "model: granted: table");
		for (i = 0; i < m->ntg; i++)
			fprintf(stderr, " %d", m->tg[i]);
		fprintf(stderr, "; model");
		for (i = 0; i < m->ngranted; i++)
			fprintf(stderr, " %d", m->granted[i]);
		fprintf(stderr, "\n");
		m_dump(m);
	}
	if (!m_ids_equal(m->td, m->ntd, m->dropped, m->ndropped)) {
		M_FAIL(m, "dropped udata differ");
		fprintf(stderr, "model: dropped: table");
		for (i = 0; i < m->ntd; i++)
			fprintf(stderr, " %d", m->td[i]);
		fprintf(stderr, "; model");
		for (i = 0; i < m->ndropped; i++)
			fprintf(stderr, " %d", m->dropped[i]);
		fprintf(stderr, "\n");
	}
}

/* Take in one result of this step: the store, tokens, udata. */
static void
m_absorb(struct m_run *m, const struct lk_result *res)
{
	size_t i;

	if (!m_tokens_ok(m, res))
		M_FAIL(m, "a token went backwards");
	if (!m_store_apply(m, res))
		M_FAIL(m, "change set does not apply to the store");
	for (i = 0; i < res->rs_ngranted && m->ntg < MW * 4; i++)
		m->tg[m->ntg++] = (int)(uintptr_t)res->rs_granted[i].gr_udata;
	for (i = 0; i < res->rs_ndropped && m->ntd < MW * 4; i++)
		m->td[m->ntd++] = (int)(uintptr_t)res->rs_dropped[i];
}

/* With a grant budget: grant the rest, as the service does turn by turn. */
static void
m_drain(struct m_run *m)
{
	int n = 0;

	while (lk_grants_pending(m->t)) {
		if (n++ > MW + 8) {
			M_FAIL(m, "grants stay pending");
			return;
		}
		if (lk_grant_more(m->t, m->steps, &m->res) != LK_OK)
			M_FAIL(m, "lk_grant_more");
		m_absorb(m, m->res);
	}
}

/*
 * The reported holder must really conflict with the request, and for
 * LK_GRACE be a reclaimable lock, unless the request overlaps its owner's
 * own reclaimable locks (then what is in its way, live or queued); only a
 * STRICT reclaim refusal may have none.
 */
static void
m_check_holder(struct m_run *m, const struct lk_result *res,
    enum lk_status st, bool reclaim, int o, int f, int s, int e, bool excl)
{
	struct m_rec h;
	int i;

	if (res->rs_holder.rc_kind == 0) {
		if (st != LK_DENIED || !reclaim ||
		    m->check != LK_RECLAIM_STRICT)
			M_FAIL(m, "no holder reported");
		return;
	}
	m_to_rec(m, &res->rs_holder, &h);
	if (h.o < 0 || h.o == o || h.f != f || h.s > e || s > h.e ||
	    !(excl || h.excl) || (st == LK_GRACE && !h.reclaim &&
	    (reclaim || !m_rconflict(m, o, f, s, e, excl, true, false)))) {
		fprintf(stderr, "model: req o%d f%d [%d,%d] %d; holder o%d "
		    "f%d [%d,%d] %d waiting %d\n", o, f, s, e, excl, h.o, h.f,
		    h.s, h.e, h.excl, res->rs_holder_waiting);
		M_FAIL(m, "holder does not conflict");
		return;
	}
	if (res->rs_holder_waiting) {
		for (i = 0; i < m->nw; i++)
			if (!m->w[i].granted && m->w[i].o == h.o &&
			    m->w[i].s == h.s && m->w[i].e == h.e &&
			    m->w[i].excl == h.excl)
				return;
		M_FAIL(m, "waiting holder is not queued");
	} else if ((h.reclaim ? m->rheld : m->held)[f][s > h.s ? s : h.s]
	    [h.o] != m_mode(h.excl))
		M_FAIL(m, "holder does not hold");
}

static void
m_compare(struct m_run *m)
{
	static struct m_rec a[MAXREC], b[MAXREC];
	size_t na, nb;

	if (lk_table_check(m->t) != LK_OK)
		M_FAIL(m, "lk_table_check");
	na = m_table_recs(m, m->t, a);
	nb = m_model_recs(m, b);
	if (!m_recs_equal(a, na, b, nb, false))
		M_FAIL(m, "records differ from the model");
	nb = m_store_recs(m, b);
	if (!m_recs_equal(a, na, b, nb, true))
		M_FAIL(m, "store differs from the table");
	if (!m_waiters_equal(m))
		M_FAIL(m, "waiters differ from the model");
}

/* A random request range: model bytes [*s, *e] and wire (start, len). */
static bool
m_pick_range(struct m_run *m, int *s, int *e, uint64_t *start, uint64_t *len)
{
	uint64_t base = m_base(m);
	int last = m_nbytes(m) - 1;
	/* FOCUS: a window of 16 bytes at the start (the end, high). */
	int lo = m->focus && m->high ? 48 : 0, width = m->focus ? 16 : 64;

	*s = lo + (int)m_rand(m, (uint64_t)width);
	if (m_rand(m, 10) == 0) {
		if (!m->high && m_rand(m, 4) == 0)
			*s = 64;
		*e = last;
		*len = 0;
	} else if (m->high && m_rand(m, 25) == 0) {
		/* Runs past UINT64_MAX: must be refused. */
		*e = last;
		*len = (uint64_t)(64 - *s) + 1 + m_rand(m, 1000);
		*start = base + (uint64_t)*s;
		return false;
	} else {
		*e = *s + (int)m_rand(m, m_rand(m, 4) == 0 ? 64 : 6);
		if (*e > lo + width - 1)
			*e = lo + width - 1;
		*len = (uint64_t)(*e - *s + 1);
	}
	*start = base + (uint64_t)*s;
	return true;
}

static struct lk_lockreq
m_req(int o, int f, uint64_t start, uint64_t len, bool excl, bool block)
{
	return lt_req(m_owners[o].host, m_owners[o].svid, m_owners[o].oh,
	    m_files[f], start, len, excl, block);
}

/* Wire form of model bytes [s, e]. */
static void
m_wire_se(const struct m_run *m, int s, int e, uint64_t *start,
    uint64_t *len)
{
	*start = m_base(m) + (uint64_t)s;
	if (e == m_nbytes(m) - 1)
		*len = 0;
	else
		*len = (uint64_t)(e - s + 1);
}

/* Wire form of a model waiter's range. */
static void
m_wire(const struct m_run *m, const struct m_wait *w, uint64_t *start,
    uint64_t *len)
{
	m_wire_se(m, w->s, w->e, start, len);
}

static enum lk_status
m_test(const struct m_run *m, int o, int f, int s, int e, bool excl)
{
	if (m_held_conflict(m, o, f, s, e, excl) >= 0 ||
	    (!m_same(m, o, f, s, e, excl) &&
	    m_queued_block(m, o, f, s, e, excl, m->nw) >= 0) ||
	    m_rconflict(m, o, f, s, e, excl, false, false))
		return LK_DENIED;
	return LK_GRANTED;
}

/* A reclaim now and then; half the requests in grace. */
static bool
m_pick_reclaim(struct m_run *m)
{
	return m_rand(m, m->grace ? 2 : 25) == 0;
}

/* A LOCK-family operation, drawn (m_pick_lockop) before either side runs. */
struct m_pick {
	int		 op, o, f, s, e, id;
	bool		 excl, ok, reclaim;
	int		 alt;		/* op 3: 1 unlock_cancel, 2
					   release_range; op 5: grant_undo */
	uint64_t	 before;	/* op 3, release_range: rq_before */
	struct lk_lockreq rq;
};

/* A random waiter (granted: an unconfirmed grant), or -1. */
static int
m_pick_wait(struct m_run *m, bool granted)
{
	int i, n = 0, k;

	for (i = 0; i < m->nw; i++)
		n += m->w[i].granted == granted;
	if (n == 0)
		return -1;
	k = (int)m_rand(m, (uint64_t)n);
	for (i = 0; i < m->nw; i++)
		if (m->w[i].granted == granted && k-- == 0)
			break;
	return i;
}

/* Is byte b of grant w exclusive from before it, while the grant is shared? */
static bool
m_weak_byte(const struct m_wait *w, int b)
{
	return !w->excl && w->prior[b] == 2 && !w->later[b];
}

/*
 * A random unconfirmed grant, one with bytes m_weak_byte() when there is
 * one (its undo may give them back shared), or -1.
 */
static int
m_pick_grant(struct m_run *m)
{
	int i, b, n = 0, k;
	bool weak[MW] = { false };

	for (i = 0; i < m->nw; i++)
		for (b = m->w[i].s; m->w[i].granted && b <= m->w[i].e; b++)
			if (m_weak_byte(&m->w[i], b)) {
				weak[i] = true;
				n++;
				break;
			}
	if (n == 0)
		return m_pick_wait(m, true);
	k = (int)m_rand(m, (uint64_t)n);
	for (i = 0; i < m->nw; i++)
		if (weak[i] && k-- == 0)
			break;
	return i;
}

/*
 * A random run [*s, *e] of bytes of grant w around one that is (weak) or
 * is not m_weak_byte(), and (!weak) held by no other owner; false when
 * there is none.
 */
static bool
m_pick_bytes(struct m_run *m, const struct m_wait *w, bool weak, int *s,
    int *e)
{
	int b, n = 0, k;

#define M_FITS(x)	(m_weak_byte(w, (x)) == weak && (weak ||	\
			    m_held_conflict(m, w->o, w->f, (x), (x), true) < 0))
	for (b = w->s; b <= w->e; b++)
		n += M_FITS(b);
	if (n == 0)
		return false;
	k = (int)m_rand(m, (uint64_t)n);
	for (b = w->s; b <= w->e; b++)
		if (M_FITS(b) && k-- == 0)
			break;
	*s = *e = b;
	for (k = (int)m_rand(m, 3); k > 0 && *s > w->s && M_FITS(*s - 1); k--)
		(*s)--;
	for (k = (int)m_rand(m, 3); k > 0 && *e < w->e && M_FITS(*e + 1); k--)
		(*e)++;
#undef M_FITS
	return true;
}

/* A random byte within 6 of b that another owner than o holds exclusive. */
static int
m_near_excl(struct m_run *m, int o, int f, int b)
{
	int x, p, n = 0, k, last = m_nbytes(m) - 1;
	bool near[13] = { false };

	for (x = b - 6; x <= b + 6; x++)
		for (p = 0; x >= 0 && x <= last && p < MO; p++)
			if (p != o && m->held[f][x][p] == 2) {
				near[x - b + 6] = true;
				n++;
				break;
			}
	if (n == 0)
		return -1;
	k = (int)m_rand(m, (uint64_t)n);
	for (x = 0; x < 13; x++)
		if (near[x] && k-- == 0)
			break;
	return b - 6 + x;
}

/* A random sub-range [*s, *e] of [a, b]. */
static void
m_pick_sub(struct m_run *m, int a, int b, int *s, int *e)
{
	*s = a + (int)m_rand(m, (uint64_t)(b - a + 1));
	*e = *s + (int)m_rand(m, (uint64_t)(b - *s + 1));
}

/* FOCUS: the owners of its runs, two of host 1, one of 2 and one of 3. */
static const int m_focus_owners[] = { 0, 1, 3, 5 };

static int
m_focus_owner(struct m_run *m)
{
	return m_focus_owners[m_rand(m, 4)];
}

/*
 * FOCUS runs steer half their LOCKs, UNLOCKs and confirms at the states
 * where an undo goes wrong (lockcore's deterministic tests and the plain
 * runs, with six owners on 64 bytes of three files, reach most of them
 * a few times, or never):
 *   LOCK    an owner locks inside its unconfirmed grant (mostly
 *           exclusive), or another owner reads there; or an owner asks
 *           for a range around a byte it holds (a grant over its own
 *           locks, an upgrade or downgrade);
 *   UNLOCK  an owner in a queued request's way unlocks that range, which
 *           may grant it;
 *   CANCEL  cancels an unconfirmed grant (undoes it);
 *   op 5    confirms or (two in three) undoes one.
 * Grants with bytes m_weak_byte() are chosen first.
 * The request then goes on as any other: the model decides it as ever.
 */
static bool
m_pick_focus(struct m_run *m, int op, struct m_pick *p, bool *block)
{
	const struct m_wait *w;
	int i, b, x, n, k, last = m_nbytes(m) - 1;

	if (m_rand(m, 2) == 0)
		return false;
	if (op == 0 && (k = (int)m_rand(m, 3)) < 2 &&
	    (i = m_pick_grant(m)) >= 0) {
		w = &m->w[i];
		p->f = w->f;
		if (!m_pick_bytes(m, w, k == 1, &p->s, &p->e))
			m_pick_sub(m, w->s, w->e, &p->s, &p->e);
		if (k == 0) {
			p->o = w->o;
			p->excl = m_rand(m, 3) != 0;
		} else {
			if ((p->o = m_focus_owner(m)) == w->o)
				p->o = w->o == 0 ? 3 : 0;
			p->excl = false;
		}
		return true;
	}
	if (op == 0) {
		for (n = 0, b = 0; b <= last; b++)
			n += m->held[p->f][b][p->o] != 0;
		if (n == 0)
			return false;
		k = (int)m_rand(m, (uint64_t)n);
		for (b = 0; b <= last; b++)
			if (m->held[p->f][b][p->o] != 0 && k-- == 0)
				break;
		p->s = b - (int)m_rand(m, 5);
		p->e = b + (int)m_rand(m, 5);
		/* Reach a byte another owner holds exclusive near by. */
		if ((x = m_near_excl(m, p->o, p->f, b)) >= 0) {
			p->s = (x < b ? x : b) - (int)m_rand(m, 2);
			p->e = (x > b ? x : b) + (int)m_rand(m, 2);
		}
		p->s = p->s < 0 ? 0 : p->s;
		p->e = p->e > last ? last : p->e;
		/* Mostly shared over exclusive bytes: weak grants. */
		p->excl = m->held[p->f][b][p->o] == 2 ? m_rand(m, 3) == 0 :
		    m_rand(m, 2) == 0;
		*block = true;
		return true;
	}
	if (op == 3 && (i = m_pick_wait(m, false)) >= 0) {
		w = &m->w[i];
		for (b = w->s; b <= w->e; b++)
			for (x = 0; x < MO; x++)
				if (x != w->o && m->held[w->f][b][x] != 0 &&
				    (w->excl || m->held[w->f][b][x] == 2)) {
					p->o = x;
					p->f = w->f;
					p->s = w->s;
					p->e = w->e;
					return true;
				}
		return false;
	}
	if ((op == 4 || op == 5) && (i = m_pick_grant(m)) >= 0) {
		w = &m->w[i];
		p->o = w->o;
		p->f = w->f;
		p->s = w->s;
		p->e = w->e;
		p->excl = w->excl;
		*block = true;
		return true;
	}
	return false;
}

/*
 * FOCUS plans: a shared grant over its owner's exclusive bytes, and what
 * may happen to it before it is undone, in steps that other random steps
 * may come between (m_step()).  Each step is a request as any other: the
 * model decides what it does.  Both plans start alike: B locks [b]
 * exclusive, A the bytes [a] beside them; B asks for [r] over both,
 * shared, and waits; A unlocks, which grants it.  Then
 *   plan 0  C reads bytes of [b] (the grant made them shared) and B
 *           writes bytes of [r] beside them, in either order;
 *   plan 1  A locks byte y beside [r] exclusive, and C asks for bytes
 *           of [b] through y, shared, and waits for A; on file 1 C
 *           locks byte z, and B asks for it and waits for C: undone,
 *           the grant gives B its exclusive [b] back, which C waits for
 *           too, and one of the two requests closes a cycle;
 * then B's client refuses the grant, cancels it, or (one in four, plan
 * 0) confirms it, and the owners unlock the window for the next plan.
 */
static struct m_plstep *
m_plan_add(struct m_run *m, int op, int o, int f, int s, int e, bool excl,
    bool block)
{
	struct m_plstep *st = &m->pl[m->npl++];

	*st = (struct m_plstep){ op, o, f, s, e, -1, 0, excl, block };
	return st;
}

static void
m_plan_start(struct m_run *m)
{
	int lo = m->high ? 48 : 0, hi = lo + 15, last = m_nbytes(m) - 1;
	int o[4], i, k, x, f, b[2], a[2], r[2], y, z;
	bool cycle = m_rand(m, 2) == 0;

	for (i = 0; i < 4; i++) {
		x = (int)m_rand(m, (uint64_t)(4 - i));
		for (k = 0; k < 4; k++) {
			int j;

			for (j = 0; j < i && o[j] != m_focus_owners[k]; j++)
				continue;
			if (j == i && x-- == 0)
				break;
		}
		o[i] = m_focus_owners[k];
	}
	/* Half on F2, which the other FOCUS requests leave alone. */
	f = m_rand(m, 2) == 0 ? 2 : 0;
	b[0] = lo + 1 + (int)m_rand(m, 10);
	b[1] = b[0] + (int)m_rand(m, 3);
	if (m_rand(m, 2) == 0) {
		a[0] = b[1] + 1;
		a[1] = a[0] + (int)m_rand(m, 3);
		r[0] = b[0] - (int)m_rand(m, 2);
		r[1] = a[1] + (int)m_rand(m, 2);
	} else {
		a[1] = b[0] - 1;
		a[0] = a[1] - (int)m_rand(m, 2);
		a[0] = a[0] < lo ? lo : a[0];
		r[0] = a[0];
		r[1] = b[1] + (int)m_rand(m, 3);
	}
	if (r[1] > hi || (!cycle && m_rand(m, 5) == 0))
		r[1] = last;
	a[1] = a[1] > hi ? hi : a[1];
	m->npl = m->plan = 0;
	m_plan_add(m, 0, o[0], f, b[0], b[1], true, false);
	m_plan_add(m, 0, o[1], f, a[0], a[1], true, false);
	m_plan_add(m, 0, o[0], f, r[0], r[1], false, true);
	m_plan_add(m, 3, o[1], f, a[0], a[1], false, false);
	if (!cycle) {
		k = m_rand(m, 2) == 0;
		m_plan_add(m, 0, o[k ? 2 : 0], f, b[0], b[1], !k, false)->dyn =
		    k ? 1 : 2;
		m_plan_add(m, 0, o[k ? 0 : 2], f, b[0], b[1], k, false)->dyn =
		    k ? 2 : 1;
	} else {
		y = r[1] < last ? r[1] + 1 : r[0] - 1;
		z = lo + (int)m_rand(m, 16);
		m_plan_add(m, 0, o[1], f, y, y, true, false);
		m_plan_add(m, 0, o[2], f, y < b[0] ? y : b[0] +
		    (int)m_rand(m, (uint64_t)(b[1] - b[0] + 1)),
		    y > b[1] ? y : b[1], false, true);
		m_plan_add(m, 0, o[2], 1, z, z, true, false);
		m_plan_add(m, 0, o[0], 1, z, z, true, true);
	}
	m_plan_add(m, m_rand(m, 3) == 0 ? 4 : 5, o[0], f, r[0], r[1], false,
	    true)->alt = cycle || m_rand(m, 4) != 0;
	m_plan_add(m, 3, o[2], f, lo, last, false, false)->alt = 1;
	m_plan_add(m, 3, o[0], f, lo, last, false, false);
	if (cycle) {
		m_plan_add(m, 3, o[1], f, lo, last, false, false);
		m_plan_add(m, 3, o[0], 1, lo, last, false, false)->alt = 1;
		m_plan_add(m, 3, o[2], 1, lo, last, false, false);
	}
	m->plans[cycle]++;
}

/* The op of the plan's next step. */
static int
m_plan_op(const struct m_run *m)
{
	return m->pl[m->plan].op;
}

/* The plan's next step into p; the plan moves on. */
static void
m_plan_pick(struct m_run *m, struct m_pick *p, bool *block)
{
	const struct m_plstep *st = &m->pl[m->plan];
	int i;

	if (++m->plan == m->npl)
		m->npl = m->plan = 0;
	p->o = st->o, p->f = st->f, p->s = st->s, p->e = st->e;
	p->excl = st->excl;
	*block = st->block;
	/* Bytes of B's grant (pl[2]) that are or are not weak. */
	for (i = 0; st->dyn != 0 && i < m->nw; i++)
		if (m->w[i].granted && m->w[i].o == m->pl[2].o &&
		    m->w[i].f == st->f && m->w[i].s == m->pl[2].s &&
		    m->w[i].e == m->pl[2].e && !m->w[i].excl) {
			if (!m_pick_bytes(m, &m->w[i], st->dyn == 1, &p->s,
			    &p->e) && st->dyn == 2)
				m_pick_sub(m, m->w[i].s, m->w[i].e, &p->s,
				    &p->e);
			return;
		}
}

static void
m_pick_lockop(struct m_run *m, int op, struct m_pick *p)
{
	uint64_t start, len;
	int o = (int)m_rand(m, MO), f = (int)m_rand(m, MF), s, e, i;
	bool excl = m_rand(m, 2) == 0, block = m_rand(m, 2) == 0, ok;
	bool reclaim = (op == 0 || op == 1) && m_pick_reclaim(m);
	int plan_alt = -1;

	if (m->focus) {
		o = m_focus_owner(m);
		f = m_rand(m, 8) == 0;
	}
	ok = m_pick_range(m, &s, &e, &start, &len);
	if ((op == 1 || op == 4 || op == 5) && m->nw > 0 &&
	    (op != 4 || m_rand(m, 2) == 0)) {
		/* Re-send / cancel / confirm an existing request. */
		i = (int)m_rand(m, (uint64_t)m->nw);
		o = m->w[i].o;
		f = m->w[i].f;
		s = m->w[i].s;
		e = m->w[i].e;
		excl = m->w[i].excl;
		block = true;
		ok = true;
		m_wire(m, &m->w[i], &start, &len);
	}
	p->o = o, p->f = f, p->s = s, p->e = e, p->excl = excl;
	if (m->plan_now) {
		plan_alt = m->pl[m->plan].alt;
		m_plan_pick(m, p, &block);
		reclaim = false;
	}
	if (m->plan_now || (m->focus && m_pick_focus(m, op, p, &block))) {
		o = p->o, f = p->f, s = p->s, e = p->e, excl = p->excl;
		ok = true;
		m_wire_se(m, s, e, &start, &len);
	}
	/* Nothing may be added to a host released in pieces. */
	if (m->ext && m->rel_host == m_owners[o].host && (op == 0 || op == 1))
		o = (o + 3) % MO;
	if (m->nw > MW - 8)
		block = false;
	memset(p, 0, sizeof(*p));
	p->rq = m_req(o, f, start, len, excl, block);
	p->rq.rq_reclaim = reclaim;
	p->op = op, p->o = o, p->f = f, p->s = s, p->e = e;
	p->excl = excl, p->ok = ok, p->reclaim = reclaim;
	p->id = m->next_id++;
	p->rq.rq_udata = (void *)(uintptr_t)p->id;
	if (op == 3)
		p->alt = m_rand(m, 3) == 0;
	if (op == 3 && m->ext && m_rand(m, 3) == 0) {
		p->alt = 2;
		/* Half with rq_before, a token of the last few or none. */
		if (m_rand(m, 2) == 0 && m->max_token > 8)
			p->before = m->max_token - m_rand(m, 8);
		p->rq.rq_before = p->before;
	} else if (op == 5)
		p->alt = m->focus ? m_rand(m, 3) != 0 : m_rand(m, 2) == 0;
	if (plan_alt >= 0)
		p->alt = plan_alt;
}

/* The model's side of p: its status; *holder: one is to be reported. */
static enum lk_status
m_model_lockop(struct m_run *m, const struct m_pick *p, bool *holder)
{
	enum lk_status want;
	int o = p->o, f = p->f, s = p->s, e = p->e, i;
	bool excl = p->excl;

	*holder = false;
	switch (p->op) {
	case 0:
	case 1:
		i = m->nw;
		if (!p->ok)
			want = LK_RANGE;
		else if (p->reclaim)
			want = m_reclaim(m, o, f, s, e, excl);
		else
			want = m_lock(m, o, f, s, e, excl, p->rq.rq_block,
			    p->id);
		/* A holder is reported unless a re-send was answered. */
		*holder = want == LK_DENIED || want == LK_DEADLOCK ||
		    want == LK_GRACE || (want == LK_BLOCKED && m->nw > i);
		return want;
	case 2:
		want = p->ok ? m_test(m, o, f, s, e, excl) : LK_RANGE;
		*holder = want == LK_DENIED;
		return want;
	case 3:
		if (!p->ok)
			return LK_RANGE;
		if (p->alt == 2)
			return m_release_range(m, o, f, s, e, p->before);
		return p->alt ? m_unlock_cancel(m, o, f, s, e) :
		    m_unlock(m, o, f, s, e);
	case 4:
		return p->ok ? m_cancel(m, o, f, s, e, excl) : LK_RANGE;
	default:
		if (!p->ok)
			return LK_RANGE;
		return p->alt ? m_grant_undo(m, o, f, s, e, excl) :
		    m_confirm(m, o, f, s, e, excl);
	}
}

/* The table's side of p: its status (result in m->res). */
static enum lk_status
m_table_lockop(struct m_run *m, const struct m_pick *p)
{
	switch (p->op) {
	case 0:
	case 1:
		return lk_lock(m->t, &p->rq, m->steps, &m->res);
	case 2:
		return lk_test(m->t, &p->rq, &m->res);
	case 3:
		if (p->alt == 2)
			return lk_release_range(m->t, &p->rq, m->steps,
			    &m->res);
		return p->alt ? lk_unlock_cancel(m->t, &p->rq, m->steps,
		    &m->res) : lk_unlock(m->t, &p->rq, m->steps, &m->res);
	case 4:
		return lk_cancel(m->t, &p->rq, m->steps, &m->res);
	default:
		return p->alt ? lk_grant_undo(m->t, &p->rq, m->steps,
		    &m->res) : lk_grant_confirm(m->t, &p->rq, m->steps,
		    &m->res);
	}
}

static enum lk_status
m_do_shareop(struct m_run *m, int op, enum lk_status *want)
{
	struct lk_sharereq sq;
	int o = (int)m_rand(m, MO), f = (int)m_rand(m, MF), so;
	int acc = (int)m_rand(m, 4), den = (int)m_rand(m, 4);
	bool reclaim = op == 6 && m_pick_reclaim(m);

	if (m->ext && m->rel_host == m_owners[o].host && op == 6)
		o = (o + 3) % MO;
	so = m_share_owner(o);
	memset(&sq, 0, sizeof(sq));
	sq.sq_host = m_owners[o].host;
	sq.sq_oh = m_owners[o].oh;
	sq.sq_ohlen = strlen(m_owners[o].oh);
	sq.sq_fh = m_files[f];
	sq.sq_fhlen = strlen(m_files[f]);
	sq.sq_access = (uint8_t)acc;
	sq.sq_deny = (uint8_t)den;
	sq.sq_reclaim = reclaim;
	if (op == 6) {
		*want = m_share(m, so, f, acc, den, reclaim);
		return lk_share(m->t, &sq, &m->res);
	}
	*want = LK_OK;
	m->sh_acc[f][so] = m->sh_den[f][so] = -1;
	m->rsh_acc[f][so] = m->rsh_den[f][so] = -1;
	return lk_unshare(m->t, &sq, &m->res);
}

/* The run's limits into the table's configuration. */
static void
m_limits_set(const struct m_run *m, struct lk_config *cf)
{
	if (m->lim == NULL)
		return;
	cf->cf_max_locks = m->lim->locks;
	cf->cf_max_locks_per_host = m->lim->locks_host;
	cf->cf_max_waiters = m->lim->waiters;
	cf->cf_max_waiters_per_host = m->lim->waiters_host;
	cf->cf_max_shares = m->lim->shares;
	cf->cf_max_shares_per_host = m->lim->shares_host;
	cf->cf_max_waiters_per_owner = m->lim->waiters_owner;
}

/*
 * Restart: a new table, with a new epoch and a random reclaim check,
 * loads the store's live records as reclaimable (see HOW IT WORKS).
 */
static void
m_restart(struct m_run *m)
{
	struct lk_record *recs;
	struct m_srec *old;
	struct lk_config cf;
	size_t i, j, n = 0, bad = 0;
	int f, o;

	old = calloc(m->nstore + 1, sizeof(*old));
	recs = calloc(m->nstore + 1, sizeof(*recs));
	CU_ASSERT_FATAL(old != NULL && recs != NULL);
	for (i = 0; i < m->nstore; i++) {
		if (m->store[i].r.rc_reclaim)
			continue;
		old[n] = m->store[i];
		old[n].r.rc_fh = old[n].fh;
		old[n].r.rc_oh = old[n].oh;
		old[n].r.rc_reclaim = 1;
		n++;
	}
	/* In random order: loading must not depend on it. */
	for (i = 0; i < n; i++) {
		j = i + (size_t)m_rand(m, (uint64_t)(n - i));
		recs[i] = old[j].r;
		old[j].r = old[i].r;
	}
	lk_table_destroy(m->t);
	memset(m->over, 0, sizeof(m->over));
	lk_config_init(&cf);
	cf.cf_policy = m->fifo ? LK_POLICY_FIFO : LK_POLICY_BARGE;
	cf.cf_token_seed = m->max_token;
	cf.cf_epoch = ++m->epoch;
	cf.cf_reclaim_check = (enum lk_reclaim_check)m_rand(m, 3);
	cf.cf_grant_budget = m->budget;
	m_limits_set(m, &cf);
	m->check = cf.cf_reclaim_check;
	m->t = lk_table_new(&cf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->t);
	if (lk_table_load(m->t, recs, n, &bad) != LK_OK)
		M_FAIL(m, "restart: the store does not load");
	m->nstore = 0;
	for (i = 0; i < n; i++)
		m_store_add(m, &recs[i]);
	free(recs);
	free(old);
	/* The model: everything held is now on record, nothing waits. */
	memcpy(m->rheld, m->held, sizeof(m->rheld));
	memset(m->held, 0, sizeof(m->held));
	for (f = 0; f < MF; f++)
		for (o = 0; o < MO; o++) {
			m->rsh_acc[f][o] = m->sh_acc[f][o];
			m->rsh_den[f][o] = m->sh_den[f][o];
			m->sh_acc[f][o] = m->sh_den[f][o] = -1;
		}
	for (i = 0; i < (size_t)m->nw; i++)
		m->live[m->w[i].id] = 0;
	m->nw = 0;
	m->grace = n > 0;
	m->closing = false;
	if (m->grace != lk_in_grace(m->t))
		M_FAIL(m, "restart: grace");
	m->restarts++;
	m_compare(m);
}

/*
 * End grace: every reclaimable record goes, in one call or (now and then)
 * in steps of a few records, as the service does with a large table.
 */
/*
 * One step of a grace end left open (lk_grace_drop() of a few records):
 * grace is closed to reclaims, and the records the table chose to drop
 * leave the model too; the others still hold back conflicting requests
 * until later steps, with requests of every kind in between.
 */
static enum lk_status
m_grace_step(struct m_run *m)
{
	const struct lk_record *rc;
	enum lk_status st;
	struct m_rec r;
	size_t i;
	int b, f;

	m->closing = true;
	st = lk_grace_drop(m->t, 1 + (size_t)m_rand(m, 3), m->steps, &m->res);
	for (i = 0; st == LK_OK && i < m->res->rs_nremoved; i++) {
		rc = &m->res->rs_removed[i];
		m_to_rec(m, rc, &r);
		if (!rc->rc_reclaim || r.f < 0 || r.o < 0) {
			M_FAIL(m, "grace step removed a live record");
			continue;
		}
		if (r.kind == LK_REC_SHARE) {
			m->rsh_acc[r.f][r.o] = m->rsh_den[r.f][r.o] = -1;
			continue;
		}
		for (b = r.s; b <= r.e; b++)
			m->rheld[r.f][b][r.o] = 0;
	}
	if (!lk_in_grace(m->t)) {
		m->grace = m->closing = false;
		m->grace_ends++;
	}
	for (f = 0; f < MF; f++)
		m_grant_pass(m, f);
	return st;
}

static enum lk_status
m_grace_end(struct m_run *m)
{
	enum lk_status st;
	size_t i, max;
	int f, n = 0;

	if (m_rand(m, 2) == 0)
		return m_grace_step(m);
	memset(m->rheld, 0, sizeof(m->rheld));
	memset(m->rsh_acc, -1, sizeof(m->rsh_acc));
	memset(m->rsh_den, -1, sizeof(m->rsh_den));
	m->grace = m->closing = false;
	for (f = 0; f < MF; f++)
		m_grant_pass(m, f);
	max = m_rand(m, 2) == 0 ? SIZE_MAX : 1 + (size_t)m_rand(m, 3);
	for (;;) {
		st = lk_grace_drop(m->t, max, m->steps, &m->res);
		for (i = 0; i < m->res->rs_nremoved; i++)
			if (!m->res->rs_removed[i].rc_reclaim)
				M_FAIL(m, "grace end removed a live record");
		if (st != LK_OK || !lk_in_grace(m->t))
			break;
		if (n++ > 100000) {
			M_FAIL(m, "grace never ends");
			break;
		}
		m_absorb(m, m->res);
	}
	if (lk_in_grace(m->t))
		M_FAIL(m, "still in grace");
	m->grace_ends++;
	return st;
}

/* The model's waiters and locks on stderr, to read a failure by. */
static void
m_dump(const struct m_run *m)
{
	int i, f, o, b, n;

	for (i = 0; i < m->nw0; i++)
		fprintf(stderr, "  before: waiter %d: udata %d owner %d file %d "
		    "[%d,%d] %s%s\n", i, m->w0[i].id, m->w0[i].o, m->w0[i].f,
		    m->w0[i].s, m->w0[i].e, m->w0[i].excl ? "excl" : "shared",
		    m->w0[i].granted ? ", granted" : "");
	for (i = 0; i < m->nw; i++)
		fprintf(stderr, "  waiter %d: udata %d owner %d file %d "
		    "[%d,%d] %s%s\n", i, m->w[i].id, m->w[i].o, m->w[i].f,
		    m->w[i].s, m->w[i].e, m->w[i].excl ? "excl" : "shared",
		    m->w[i].granted ? ", granted" : "");
	for (f = 0; f < MF; f++)
		for (o = 0; o < MO; o++) {
			for (n = 0, b = 0; b < MB; b++) {
				if (m->held[f][b][o] == 0 &&
				    m->held0[f][b][o] == 0)
					continue;
				if (n++ == 0)
					fprintf(stderr, "  file %d owner %d, "
					    "byte:mode before>after:", f, o);
				fprintf(stderr, " %d:%d>%d", b,
				    m->held0[f][b][o], m->held[f][b][o]);
			}
			if (n > 0)
				fprintf(stderr, "\n");
		}
}

/* Did this step weaken o's hold on a byte of [s, e] of f? */
static bool
m_weakened(const struct m_run *m, int o, int f, int s, int e)
{
	int b;

	for (b = s; b <= e; b++)
		if (m->held[f][b][o] < m->held0[f][b][o])
			return true;
	return false;
}

/* Is the request with udata id queued (not granted)? */
static bool
m_queued_id(const struct m_run *m, int id)
{
	int i;

	for (i = 0; i < m->nw; i++)
		if (m->w[i].id == id && !m->w[i].granted)
			return true;
	return false;
}

/*
 * Did this step weaken queued waiter k's owner's hold on k's bytes, or
 * on the bytes of an older waiter (or grant) of another owner that k
 * conflicts with (which may hold k back now: m_waiter_blocks(); or, if
 * granted since, by its lock), or give another owner bytes of k's in a
 * mode that conflicts with k?
 */
static bool
m_changed(const struct m_run *m, int k)
{
	const struct m_wait *w = &m->w[k], *v;
	int b, p, j, was, now;

	if (m_weakened(m, w->o, w->f, w->s, w->e))
		return true;
	/*
	 * A queued request of k's owner on the file left the queue: a
	 * waiter held behind it was no edge for k (m_behind_own()) and may
	 * be one now.
	 */
	for (j = 0; j < m->nw0; j++)
		if (!m->w0[j].granted && m->w0[j].o == w->o &&
		    m->w0[j].f == w->f && m->w0[j].id != w->id &&
		    !m_queued_id(m, m->w0[j].id))
			return true;
	for (j = 0; j < k; j++) {
		v = &m->w[j];
		if (v->o != w->o && v->f == w->f &&
		    v->s <= w->e && w->s <= v->e && (v->excl || w->excl) &&
		    m_weakened(m, w->o, w->f, v->s, v->e))
			return true;
	}
	for (b = w->s; b <= w->e; b++)
		for (p = 0; p < MO; p++) {
			was = m->held0[w->f][b][p];
			now = m->held[w->f][b][p];
			if (p != w->o && now > was && (w->excl || now == 2))
				return true;
		}
	return false;
}

/*
 * A call that weakens an owner's hold while it waits may drop its queued
 * requests that then close a cycle (lockcore.h).  Which ones, when two
 * could, depends on the order the table looks at them, so the model
 * checks the table's choice instead of making its own: each udata the
 * table dropped and the model did not must be a queued request of an
 * owner whose hold on its bytes, or on those of an older waiter that may
 * now hold it back, weakened in this step (m_changed()), on a cycle when
 * dropped (in the table's order); the model drops it too and grants what
 * follows.  Then, with FIFO, no queued request may be on a cycle.
 */
static void
m_cycle_drops(struct m_run *m)
{
	int nd0 = m->ndropped, id, i, j, k;

	for (i = 0; i < m->ntd; i++) {
		id = m->td[i];
		for (j = 0; j < nd0 && m->dropped[j] != id; j++)
			continue;
		if (j < nd0)
			continue;
		for (k = 0; k < m->nw && (m->w[k].id != id ||
		    m->w[k].granted); k++)
			continue;
		if (k == m->nw) {
			M_FAIL(m, "dropped a request the model has not queued");
			continue;
		}
		if (!m->fifo || !m_changed(m, k)) {
			M_FAIL(m, "dropped a request that nothing changed "
			    "for");
			fprintf(stderr, "model: dropped waiter %d (udata %d), "
			    "cycle %d\n", k, id, m_cycle(m, k));
			m_dump(m);
		}
		if (!m_cycle(m, k))
			M_FAIL(m, "dropped a request that closed no cycle");
		j = m->w[k].f;
		m_drop(m, id);
		m_wremove(m, k);
		m_grant_pass(m, j);
		m->cycle_drops++;
	}
	for (k = 0; m->fifo && k < m->nw; k++)
		if (!m->w[k].granted && m_cycle(m, k)) {
			M_FAIL(m, "a queued request is on a cycle");
			if (m->failures <= 5) {
				fprintf(stderr, "model: waiter %d:\n", k);
				m_dump(m);
			}
			break;
		}
}

/* What a step's model side may change (m_save(), m_restore()). */
struct m_snap {
	uint8_t		 held[MF][MB][MO];
	uint8_t		 rheld[MF][MB][MO];
	struct m_wait	 w[MW];
	int		 nw;
	int		 sh_acc[MF][MO], sh_den[MF][MO];
	int		 rsh_acc[MF][MO], rsh_den[MF][MO];
	int		 granted[MW], ngranted;
	int		 dropped[MW * 2], ndropped;
	unsigned long	 reclaims, undos, undo_kept, undo_shared;
	struct m_events	 ev;
};

static void
m_save(const struct m_run *m, struct m_snap *sn)
{
	memcpy(sn->held, m->held, sizeof(sn->held));
	memcpy(sn->rheld, m->rheld, sizeof(sn->rheld));
	memcpy(sn->w, m->w, (size_t)m->nw * sizeof(m->w[0]));
	sn->nw = m->nw;
	memcpy(sn->sh_acc, m->sh_acc, sizeof(sn->sh_acc));
	memcpy(sn->sh_den, m->sh_den, sizeof(sn->sh_den));
	memcpy(sn->rsh_acc, m->rsh_acc, sizeof(sn->rsh_acc));
	memcpy(sn->rsh_den, m->rsh_den, sizeof(sn->rsh_den));
	memcpy(sn->granted, m->granted, sizeof(sn->granted));
	sn->ngranted = m->ngranted;
	memcpy(sn->dropped, m->dropped, sizeof(sn->dropped));
	sn->ndropped = m->ndropped;
	sn->reclaims = m->reclaims;
	sn->undos = m->undos;
	sn->undo_kept = m->undo_kept;
	sn->undo_shared = m->undo_shared;
	sn->ev = m->ev;
}

static void
m_restore(struct m_run *m, const struct m_snap *sn)
{
	memcpy(m->held, sn->held, sizeof(sn->held));
	memcpy(m->rheld, sn->rheld, sizeof(sn->rheld));
	memcpy(m->w, sn->w, (size_t)sn->nw * sizeof(m->w[0]));
	m->nw = sn->nw;
	memcpy(m->sh_acc, sn->sh_acc, sizeof(sn->sh_acc));
	memcpy(m->sh_den, sn->sh_den, sizeof(sn->sh_den));
	memcpy(m->rsh_acc, sn->rsh_acc, sizeof(sn->rsh_acc));
	memcpy(m->rsh_den, sn->rsh_den, sizeof(sn->rsh_den));
	memcpy(m->granted, sn->granted, sizeof(sn->granted));
	m->ngranted = sn->ngranted;
	memcpy(m->dropped, sn->dropped, sizeof(sn->dropped));
	m->ndropped = sn->ndropped;
	m->reclaims = sn->reclaims;
	m->undos = sn->undos;
	m->undo_kept = sn->undo_kept;
	m->undo_shared = sn->undo_shared;
	m->ev = sn->ev;
}

/*
 * The model's side of op (LOCK family, 8 host release, 10 file release,
 * 11 a piece of a host's release: the table's side ran first).
 */
static enum lk_status
m_model_op(struct m_run *m, int op, const struct m_pick *p, uint64_t host,
    int f, bool *holder)
{
	*holder = false;
	if (op <= 5)
		return m_model_lockop(m, p, holder);
	if (op == 8)
		m_host_release(m, host);
	else if (op == 10)
		m_file_release(m, f);
	else
		m_release_piece(m);
	return LK_OK;
}

/*
 * The table's side of a piece of m->rel_host's release: up to a few
 * records (now and then all); the host's records it removed are kept
 * for the model (others' may go too, merged by the grants it makes).
 */
static enum lk_status
m_table_piece(struct m_run *m)
{
	const struct lk_record *rc;
	enum lk_status st;
	size_t i;

	m->rel_max = m_rand(m, 6) == 0 ? SIZE_MAX : (size_t)m_rand(m, 4);
	m->rel_nrm = 0;
	m->rel_pieces++;
	st = lk_host_release_some(m->t, m->rel_host, m->steps, m->rel_max,
	    &m->rel_left, &m->res);
	for (i = 0; st == LK_OK && i < m->res->rs_nremoved; i++) {
		rc = &m->res->rs_removed[i];
		if (rc->rc_host == m->rel_host && m->rel_nrm < MAXREC)
			m_to_rec(m, rc, &m->rel_rm[m->rel_nrm++]);
	}
	return st;
}

/* After a piece: *leftp is what the store still holds of the host. */
static void
m_piece_left(struct m_run *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->nstore; i++)
		n += m->store[i].r.rc_host == m->rel_host;
	if (n != m->rel_left) {
		M_FAIL(m, "a piece's *leftp is not what the host has left");
		fprintf(stderr, "model: host %llu: left %zu, has %zu\n",
		    (unsigned long long)m->rel_host, m->rel_left, n);
	}
	if (m->rel_left == 0)
		m->rel_host = 0;
}

/* Run one random step; false once the table and the model disagree. */
static bool
m_step(struct m_run *m)
{
	static const int mix[] = { 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 3,
	    3, 4, 4, 5, 6, 7 };
	/* FOCUS: more UNLOCKs and confirms, fewer TESTs (same length) */
	static const int fmix[] = { 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4,
	    4, 5, 5, 5, 6, 7 };
	static struct m_snap snap;
	struct m_pick p;
	enum lk_status st, want;
	int op, o = 0, f = 0, s = 0, e = 0, id = 0;
	bool holder = false, excl = false, reclaim = false, again;
	unsigned long before = m->failures;
	uint64_t host = 0;

	memset(&p, 0, sizeof(p));
	m->ngranted = m->ndropped = m->ntg = m->ntd = 0;
	m->hint = NULL;
	m->closing_steps += m->closing;
	memcpy(m->w0, m->w, sizeof(m->w));
	m->nw0 = m->nw;
	memcpy(m->held0, m->held, sizeof(m->held0));
	/* The table starts the hosts' split credits again (lk_begin()). */
	if (m->lim == NULL || m->lim->locks == 0 ||
	    m_nrecs(m, 0) <= m->lim->locks)
		memset(m->over, 0, sizeof(m->over));
	if (m_rand(m, 3000) == 0) {
		m_restart(m);
		return before == m->failures;
	}
	if (m_rand(m, 700) == 0)
		lk_set_epoch(m->t, ++m->epoch);
	op = (m->focus ? fmix : mix)[m_rand(m, sizeof(mix) / sizeof(mix[0]))];
	m->plan_now = false;
	if (m->focus && m->npl == 0 && m_rand(m, 12) == 0)
		m_plan_start(m);
	if (m->focus && m->npl > 0 && m_rand(m, 3) != 0) {
		op = m_plan_op(m);
		m->plan_now = true;
	}
	/* FOCUS: hosts go more often, with their grants */
	if (m_rand(m, m->focus ? 60 : 150) == 0)
		op = 8;
	if (m->grace && m_rand(m, m->closing ? 100 : 800) == 0)
		op = 9;
	if (m_rand(m, 400) == 0)
		op = 10;
	if (m->ext && m->rel_host != 0 && m_rand(m, 3) == 0)
		op = 11;
	else if (m->ext && m->rel_host == 0 && m_rand(m, 150) == 0) {
		op = 11;
		m->rel_host = 1 + m_rand(m, 3);
		m->rel_hosts++;
	}
	if (op <= 5) {
		m_pick_lockop(m, op, &p);
		id = p.id, o = p.o, f = p.f, s = p.s, e = p.e;
		excl = p.excl, reclaim = p.reclaim;
	} else if (op == 8)
		host = 1 + m_rand(m, 3);
	else if (op == 10)
		f = (int)m_rand(m, MF);
	if (op <= 5 || op == 8 || op == 10 || op == 11) {
		m_save(m, &snap);
		if (op == 11)
			st = m_table_piece(m);
		want = m_model_op(m, op, &p, host, f, &holder);
		if (op <= 5)
			st = m_table_lockop(m, &p);
		else if (op == 8)
			st = lk_host_release(m->t, host, m->steps, &m->res);
		else if (op == 10)
			st = lk_file_release(m->t, m_files[f],
			    strlen(m_files[f]), m->steps, &m->res);
	} else if (op <= 7)
		st = m_do_shareop(m, op, &want);
	else {
		want = LK_OK;
		st = m_grace_end(m);
	}
	if (st != want) {
		M_FAIL(m, "status differs from the model");
		fprintf(stderr, "model: op %d owner %d file %d [%d,%d] %s: "
		    "table %s, model %s\n", op, o, f, s, e,
		    excl ? "excl" : "shared", lk_strerror(st),
		    lk_strerror(want));
		return false;
	}
	if (holder)
		m_check_holder(m, m->res, st, reclaim, o, f, s, e, excl);
	m->last_op = op, m->last_o = o, m->last_f = f, m->last_s = s;
	m->last_e = e, m->last_excl = excl;
	m_absorb(m, m->res);
	m_drain(m);
	/* The table chose another of an owner's overlapping waiters. */
	m->hint = m->tg;
	m->nhint = m->ntg;
	if ((op <= 5 || op == 8 || op == 10 || op == 11) &&
	    !m_ids_equal(m->tg, m->ntg, m->granted, m->ngranted)) {
		m_restore(m, &snap);
		if (m_model_op(m, op, &p, host, f, &again) != want)
			M_FAIL(m, "status differs on the model's second run");
	}
	m_cycle_drops(m);
	if (op == 11)
		m_piece_left(m);
	m_check_udata(m, st, id);
	m_compare(m);
	m->hint = NULL;
	m->nstat[st]++;
	m->nwgrants += (unsigned long)m->ngranted;
	if (op == 3 || op == 4 || op >= 8)
		m->rel_grants += (unsigned long)m->ngranted;
	if ((op == 0 || op == 1) && (st == LK_GRANTED || st == LK_BLOCKED)) {
		m->len0 += p.rq.rq_len == 0;
		m->at_max += m->high && e == 63;
	}
	if (m->nstore > m->maxrec)
		m->maxrec = m->nstore;
	if ((unsigned long)m->nw > m->maxw)
		m->maxw = (unsigned long)m->nw;
	return before == m->failures;
}

/* A table rebuilt from the store equals the table. */
static void
m_check_reload(struct m_run *m)
{
	static struct m_rec a[MAXREC], b[MAXREC];
	struct lk_record *recs;
	struct lk_table *t2;
	struct lk_counts c1, c2;
	size_t i, na, nb, bad = 0;

	t2 = lk_table_new(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t2);
	recs = calloc(m->nstore + 1, sizeof(*recs));
	CU_ASSERT_PTR_NOT_NULL_FATAL(recs);
	for (i = 0; i < m->nstore; i++)
		recs[i] = m->store[i].r;
	CU_ASSERT_EQUAL(lk_table_load(t2, recs, m->nstore, &bad), LK_OK);
	CU_ASSERT_EQUAL(lk_table_check(t2), LK_OK);
	na = m_table_recs(m, m->t, a);
	nb = m_table_recs(m, t2, b);
	CU_ASSERT_TRUE(m_recs_equal(a, na, b, nb, true));
	lk_table_counts(m->t, &c1);
	lk_table_counts(t2, &c2);
	CU_ASSERT_EQUAL(c1.ct_locks, c2.ct_locks);
	CU_ASSERT_EQUAL(c1.ct_shares, c2.ct_shares);
	CU_ASSERT_EQUAL(c1.ct_rlocks, c2.ct_rlocks);
	CU_ASSERT_EQUAL(c1.ct_rshares, c2.ct_rshares);
	CU_ASSERT_TRUE(c2.ct_last_token <= c1.ct_last_token);
	free(recs);
	lk_table_destroy(t2);
}

static void
m_run_all(bool high, bool fifo, uint64_t seed, unsigned long steps,
    size_t budget, const struct m_limits *lim, bool ext, bool focus)
{
	static struct m_run m;
	struct lk_config cf;
	unsigned long i;

	memset(&m, 0, sizeof(m));
	m.ext = ext;
	m.focus = focus;
	m.high = high;
	m.fifo = fifo;
	m.rng = seed;
	m.next_id = 1;
	memset(m.sh_acc, -1, sizeof(m.sh_acc));
	memset(m.sh_den, -1, sizeof(m.sh_den));
	memset(m.rsh_acc, -1, sizeof(m.rsh_acc));
	memset(m.rsh_den, -1, sizeof(m.rsh_den));
	m.epoch = seed & 0xff;
	m.live = calloc(steps + 2, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.live);
	lk_config_init(&cf);
	cf.cf_policy = fifo ? LK_POLICY_FIFO : LK_POLICY_BARGE;
	cf.cf_token_seed = seed & 0xffff;
	cf.cf_epoch = m.epoch;
	cf.cf_grant_budget = m.budget = budget;
	m.lim = lim;
	m_limits_set(&m, &cf);
	m.max_token = cf.cf_token_seed;
	m.t = lk_table_new(&cf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.t);
	for (i = 0; i < steps; i++) {
		m.steps = i;
		if (!m_step(&m)) {
			fprintf(stderr, "model: %s %s%s seed %llu failed at "
			    "step %lu\n", high ? "high" : "low",
			    fifo ? "fifo" : "barge", focus ? " focus" : "",
			    (unsigned long long)seed, i);
			break;
		}
	}
	m_check_reload(&m);
	printf("\n  model %s/%s%s seed %llu: %lu steps: granted %lu denied %lu "
	    "blocked %lu deadlock %lu range %lu notfound %lu; waiter grants "
	    "%lu; max records %lu, max waiters %lu; restarts %lu, reclaims "
	    "granted %lu, grace %lu, nograce %lu, grace ends %lu; grants "
	    "undone %lu (%lu keeping locks held before, %lu exclusive runs "
	    "given back shared); requests dropped as cycles %lu; "
	    "nolocks %lu; steps while grace closed %lu ",
	    high ? "high" : "low", fifo ? "fifo" : "barge",
	    focus ? "/focus" : "", (unsigned long long)seed, i,
	    m.nstat[LK_OK], m.nstat[LK_DENIED], m.nstat[LK_BLOCKED], m.nstat[LK_DEADLOCK], m.nstat[LK_RANGE],
	    m.nstat[LK_NOTFOUND], m.nwgrants, m.maxrec, m.maxw, m.restarts,
	    m.reclaims, m.nstat[LK_GRACE], m.nstat[LK_NOGRACE], m.grace_ends,
	    m.undos, m.undo_kept, m.undo_shared, m.cycle_drops,
	    m.nstat[LK_NOLOCKS], m.closing_steps);
	printf("\n    events: shared grants over exclusive bytes %lu; "
	    "undone %lu by CANCEL, %lu refused; of a shared "
	    "grant another owner meets %lu; with bytes set since %lu; "
	    "exclusive given back shared beside bytes set since %lu; LOCK in "
	    "own grant %lu (exclusive in a shared grant %lu); upgrades %lu, "
	    "downgrades %lu; waiters granted by a release %lu; CANCEL of a "
	    "queued request %lu; reclaims in grace %lu; LOCKs to EOF %lu, at "
	    "UINT64_MAX %lu; host/file releases ending grants %lu",
	    m.ev.weak_grants, m.ev.undo_cancel, m.ev.undo_refused,
	    m.ev.undo_sh_other,
	    m.ev.undo_later, m.ev.undo_split, m.ev.own_in_grant,
	    m.ev.own_excl_in_sh, m.ev.upgrades, m.ev.downgrades, m.rel_grants,
	    m.ev.cancel_queued, m.ev.reclaims_grace, m.len0, m.at_max,
	    m.ev.rel_pending);
	if (focus)
		printf("; plans %lu + %lu", m.plans[0], m.plans[1]);
	if (ext)
		printf("; release_range %lu (%lu kept by rq_before); hosts "
		    "released in pieces %lu, pieces %lu ", m.rr_calls,
		    m.rr_kept, m.rel_hosts, m.rel_pieces);
	lk_table_destroy(m.t);
	free(m.store);
	free(m.live);
}

static void
m_run_limits(bool high, bool fifo, uint64_t seed, unsigned long steps,
    size_t budget, const struct m_limits *lim)
{
	m_run_all(high, fifo, seed, steps, budget, lim, false, false);
}

static void
m_run(bool high, bool fifo, uint64_t seed, unsigned long steps,
    size_t budget)
{
	m_run_limits(high, fifo, seed, steps, budget, NULL);
}

#if defined(__SANITIZE_ADDRESS__)
#define M_STEPS_DIV	4UL
#else
#define M_STEPS_DIV	1UL
#endif

static unsigned long
m_steps(void)
{
	return (lt_long() ? 1000000UL : 120000UL) / M_STEPS_DIV;
}

static void
test_model_low_fifo(void)
{
	m_run(false, true, lt_seed(1), m_steps(), 0);
}

static void
test_model_low_barge(void)
{
	m_run(false, false, lt_seed(2), m_steps(), 0);
}

static void
test_model_high_fifo(void)
{
	m_run(true, true, lt_seed(3), m_steps(), 0);
}

static void
test_model_high_barge(void)
{
	m_run(true, false, lt_seed(4), m_steps(), 0);
}

static void
test_model_budget(void)
{
	m_run(false, true, lt_seed(5), m_steps(), 1);
	m_run(false, false, lt_seed(7), m_steps(), 1);
}

/*
 * More seeds, shorter: every shape and both budgets over 16 seeds (from
 * NLMD_TEST_SEED when set), so that each run of the suite sweeps a few
 * beyond the fixed ones.  Until 2026-12-06 the model took one order of
 * an owner's overlapping waiters for the only one, and seeds besides the
 * fixed ones failed on it (m_hint_skip()).
 */
static void
test_model_seeds(void)
{
	uint64_t base = lt_seed(100), k;

	for (k = 0; k < 16; k++)
		m_run((k & 1) != 0, (k & 2) != 0, base + k, m_steps() / 8,
		    (k & 4) != 0 ? 1 : 0);
}

/*
 * The seeds that found the model wrong, each run past the step where it
 * did (before 2026-12-06): 15 at step 4,206 (a reclaim over the owner's
 * own unconfirmed grant ended it without granting the waiters it held
 * back), 21, 39 and 54 at steps 109,571, 57,665 and 106,796 (an owner's
 * overlapping waiters granted in another order than lockcore's).
 */
static void
test_model_found(void)
{
	m_run(false, false, 15, 5000, 0);
	m_run(false, false, 21, 110000, 0);
	m_run(true, false, 39, 58000, 0);
	m_run(false, false, 54, 107000, 0);
}

/*
 * Limits tight enough to be met all the time (the runs hold some 60
 * records and 15 waiters): each refusal must change nothing, and what is
 * never refused (grants of waiters, undone grants, reclaims) may go over.
 */
static void
test_model_limits(void)
{
	static const struct m_limits lim[] = {
		{ 24, 10, 8, 4, 5, 2, 0 },
		{ 0, 6, 0, 2, 0, 1, 0 },
		{ 12, 0, 3, 0, 3, 0, 0 },
	};
	uint64_t base = lt_seed(200), k;

	for (k = 0; k < 8; k++)
		m_run_limits((k & 1) != 0, (k & 2) != 0, base + k,
		    m_steps() / 4, (k & 4) != 0 ? 1 : 0, &lim[k % 3]);
}

/*
 * The operations the runs above leave out, with their own seeds (so that
 * those runs stay as they were): lk_release_range() with and without
 * rq_before among the UNLOCKs, and hosts released in pieces
 * (lk_host_release_some()) while the other hosts go on, limits or not,
 * max-waiters-per-owner among them.
 */
static void
test_model_ext(void)
{
	static const struct m_limits lim[] = {
		{ 24, 10, 8, 4, 5, 2, 0 },
		{ 0, 0, 0, 0, 0, 0, 2 },
		{ 0, 12, 0, 5, 0, 0, 1 },
	};
	uint64_t base = lt_seed(300), k;

	for (k = 0; k < 8; k++)
		m_run_all((k & 1) != 0, (k & 2) != 0, base + k,
		    m_steps() / 4, (k & 4) != 0 ? 1 : 0,
		    k == 3 ? &lim[0] : k == 5 ? &lim[1] : k == 6 ? &lim[2] :
		    NULL, true, false);
}

/*
 * FOCUS (see HOW IT WORKS), so that every undo path is taken hundreds of
 * times per run.  The 1.72 million steps of the runs above undo some
 * 4,100 grants, 18 of them giving an exclusive run back shared and none
 * beside bytes its owner took since (the bug test_undo_shared_grant_
 * later_write() was written for, which they pass with or without the
 * fix); and they pass with lk_undo_grant()'s deadlock check removed:
 * no undo of theirs makes another owner's request close a cycle.  These
 * 240,000 steps undo some 6,700, 1,800 given back shared, 1,000 beside
 * bytes taken since, and drop some 300 requests for cycles; with the
 * fix reverted each run fails within 500 steps.  Two runs also release
 * ranges and hosts in pieces (m_run_ext()), four have a grant budget.
 */
static void
test_model_focus(void)
{
	uint64_t base = lt_seed(400), k;

	for (k = 0; k < 8; k++)
		m_run_all((k & 1) != 0, (k & 2) != 0, base + k,
		    m_steps() / 4, (k & 4) != 0 ? 1 : 0, NULL,
		    k == 3 || k == 6, true);
}

int
lt_register_model(void)
{
	CU_pSuite s = CU_add_suite("lockcore model", NULL, NULL);

	if (s == NULL ||
	    !CU_add_test(s, "random vs model, bytes 0..2^64, FIFO",
	    test_model_low_fifo) ||
	    !CU_add_test(s, "random vs model, bytes 0..2^64, BARGE",
	    test_model_low_barge) ||
	    !CU_add_test(s, "random vs model, last 64 bytes, FIFO",
	    test_model_high_fifo) ||
	    !CU_add_test(s, "random vs model, last 64 bytes, BARGE",
	    test_model_high_barge) ||
	    !CU_add_test(s, "random vs model, grant budget",
	    test_model_budget) ||
	    !CU_add_test(s, "random vs model, 16 more seeds",
	    test_model_seeds) ||
	    !CU_add_test(s, "random vs model, limits", test_model_limits) ||
	    !CU_add_test(s, "random vs model, release_range, host release "
	    "in pieces", test_model_ext) ||
	    !CU_add_test(s, "random vs model, steered at unconfirmed grants",
	    test_model_focus) ||
	    !CU_add_test(s, "random vs model, the seeds that found it wrong",
	    test_model_found))
		return -1;
	return 0;
}
