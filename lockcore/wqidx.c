/*
 * wqidx.c - an index of a file's queued waiters by range, for the FIFO
 * check, the grant sweep and the deadlock search (wait.c, lock.c,
 * deadlock.c), so that none of them walks the whole queue to find the few
 * waiters that overlap a range.
 *
 * HOW IT WORKS
 *   Each file has two treaps of its queued waiters, one of exclusive and
 *   one of shared requests (a shared request conflicts only with the
 *   first).  The nodes are the waiters themselves (no allocation, so
 *   queueing cannot fail half way), keyed by (start, arrival number); the
 *   arrival number (wa_seq) is unique and increases with arrival, so the
 *   FIFO order is the order of wa_seq.  Priorities are keyed SipHash of the
 *   arrival number (the table's random key): a peer cannot choose arrivals
 *   that make the tree a list.  Every node keeps, for its subtree, the
 *   largest end (an interval tree: a subtree whose largest end is before
 *   the query start holds nothing overlapping) and the smallest and largest
 *   arrival number.
 *
 *   lk_wq_next() answers "the oldest waiter after arrival A and before B
 *   overlapping [s, e]": a depth-first search that skips subtrees ending
 *   before s, starting after e, holding only arrivals at or before A, or
 *   only arrivals at or after the best found so far.  When start order
 *   follows arrival order (a queue on one byte, or ranges queued left to
 *   right) that is one path, O(log n); its worst case is the overlapping
 *   waiters in (A, B).  The callers walk the FIFO itself first and ask
 *   the index only to jump over a long run of waiters that do not matter
 *   (LK_WQ_RUN in a row), so the common short queue costs what it did.
 *   lk_wq_each() visits every waiter overlapping [s, e] that arrived
 *   before B, in start order: O(log n + k).  lk_wq_hull() tells how far
 *   the waiters overlapping [s, e] reach, whatever their number: the
 *   leftmost one ending at or after s (down the left edge of the
 *   subtrees whose largest end reaches s), and the largest end among
 *   those starting by e (a node and its whole left subtree do when the
 *   node does): two paths, O(log n).
 *
 *   During a grant pass, granted waiters stay in the index (marked
 *   wa_granted, skipped by the queries; the subtree summaries then
 *   over-approximate, which only prunes less) and leave it when the pass
 *   ends (lk_wq_settle in wait.c): one by one, or, when most of the queue
 *   was granted, by rebuilding the index from the waiters left.
 */
#include "lockcore.h"

#include <stddef.h>
#include <stdint.h>

#include "lk_impl.h"

/* Recompute n's subtree summary from its children. */
static void
lk_wq_fix(struct lk_waiter *n)
{
	const struct lk_waiter *c;
	int i;

	n->wa_tmax = n->wa_end;
	n->wa_tlo = n->wa_thi = n->wa_seq;
	for (i = 0; i < 2; i++) {
		if ((c = n->wa_t[i]) == NULL)
			continue;
		n->wa_tmax = c->wa_tmax > n->wa_tmax ? c->wa_tmax : n->wa_tmax;
		n->wa_tlo = c->wa_tlo < n->wa_tlo ? c->wa_tlo : n->wa_tlo;
		n->wa_thi = c->wa_thi > n->wa_thi ? c->wa_thi : n->wa_thi;
	}
}

static bool
lk_wq_less(const struct lk_waiter *a, const struct lk_waiter *b)
{
	if (a->wa_start != b->wa_start)
		return a->wa_start < b->wa_start;
	return a->wa_seq < b->wa_seq;
}

/* Insert w below n; a child that now outranks n rotates up over it. */
static struct lk_waiter *
lk_wq_ins(struct lk_waiter *n, struct lk_waiter *w)
{
	struct lk_waiter *c;
	int d;

	if (n == NULL)
		return w;
	d = !lk_wq_less(w, n);
	n->wa_t[d] = c = lk_wq_ins(n->wa_t[d], w);
	if (c->wa_prio > n->wa_prio) {
		n->wa_t[d] = c->wa_t[!d];
		c->wa_t[!d] = n;
		lk_wq_fix(n);
		lk_wq_fix(c);
		return c;
	}
	lk_wq_fix(n);
	return n;
}

/* Join two treaps, every key of a below every key of b. */
static struct lk_waiter *
lk_wq_join(struct lk_waiter *a, struct lk_waiter *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (a->wa_prio > b->wa_prio) {
		a->wa_t[1] = lk_wq_join(a->wa_t[1], b);
		lk_wq_fix(a);
		return a;
	}
	b->wa_t[0] = lk_wq_join(a, b->wa_t[0]);
	lk_wq_fix(b);
	return b;
}

static struct lk_waiter *
lk_wq_del(struct lk_waiter *n, struct lk_waiter *w)
{
	int d;

	if (n == NULL)
		return NULL;	/* not found: lk_table_check() reports it */
	if (n == w)
		return lk_wq_join(n->wa_t[0], n->wa_t[1]);
	d = !lk_wq_less(w, n);
	n->wa_t[d] = lk_wq_del(n->wa_t[d], w);
	lk_wq_fix(n);
	return n;
}

static struct lk_waiter **
lk_wq_root(struct lk_file *f, bool excl)
{
	return excl ? &f->fi_wx : &f->fi_ws;
}

/* In with its arrival number and priority (also after a rebuild). */
void
lk_wq_reinsert(struct lk_file *f, struct lk_waiter *w)
{
	struct lk_waiter **root = lk_wq_root(f, w->wa_excl);

	w->wa_t[0] = w->wa_t[1] = NULL;
	lk_wq_fix(w);
	*root = lk_wq_ins(*root, w);
}

void
lk_wq_insert(struct lk_table *t, struct lk_file *f, struct lk_waiter *w)
{
	w->wa_seq = ++t->t_wseq;
	w->wa_prio = (uint32_t)lk_hash_bytes(t, &w->wa_seq,
	    sizeof(w->wa_seq), 0x7771);
	lk_wq_reinsert(f, w);
}

void
lk_wq_remove(struct lk_file *f, struct lk_waiter *w)
{
	struct lk_waiter **root = lk_wq_root(f, w->wa_excl);

	*root = lk_wq_del(*root, w);
	w->wa_t[0] = w->wa_t[1] = NULL;
}

const struct lk_waiter *
lk_wq_find(const struct lk_file *f, bool excl, uint64_t start, uint64_t seq)
{
	const struct lk_waiter *n = excl ? f->fi_wx : f->fi_ws;

	while (n != NULL && (n->wa_start != start || n->wa_seq != seq))
		n = n->wa_t[n->wa_start < start ||
		    (n->wa_start == start && n->wa_seq < seq)];
	return n != NULL && !n->wa_granted ? n : NULL;
}

struct lk_wq_q {
	uint64_t		 q_s, q_e;
	uint64_t		 q_after;	/* arrivals > q_after ... */
	uint64_t		 q_before;	/* ... and < q_before */
	struct lk_waiter	*q_best;
	uint64_t		 q_visits;
};

static void
lk_wq_min(const struct lk_waiter *n, struct lk_wq_q *q)
{
	for (; n != NULL; n = n->wa_t[1]) {
		uint64_t hi = q->q_best != NULL ? q->q_best->wa_seq :
		    q->q_before;

		q->q_visits++;
		if (n->wa_tmax < q->q_s || n->wa_thi <= q->q_after ||
		    n->wa_tlo >= hi)
			return;
		lk_wq_min(n->wa_t[0], q);
		if (n->wa_start > q->q_e)
			return;		/* and everything right of it */
		hi = q->q_best != NULL ? q->q_best->wa_seq : q->q_before;
		if (n->wa_seq > q->q_after && n->wa_seq < hi &&
		    n->wa_end >= q->q_s && !n->wa_granted)
			q->q_best = (struct lk_waiter *)n;
	}
}

struct lk_waiter *
lk_wq_next(struct lk_table *t, const struct lk_file *f, bool excl,
    bool shared, uint64_t s, uint64_t e, uint64_t after, uint64_t before)
{
	struct lk_wq_q q = { s, e, after, before, NULL, 0 };

	if (excl)
		lk_wq_min(f->fi_wx, &q);
	if (shared)
		lk_wq_min(f->fi_ws, &q);
	t->t_ct.ct_queue_visits += q.q_visits;
	return q.q_best;
}

static int
lk_wq_visit(struct lk_waiter *n, uint64_t s, uint64_t e, uint64_t before,
    lk_wq_cb cb, void *arg, uint64_t *visits)
{
	int rc;

	for (; n != NULL; n = n->wa_t[1]) {
		(*visits)++;
		if (n->wa_tmax < s || n->wa_tlo >= before)
			return 0;
		if ((rc = lk_wq_visit(n->wa_t[0], s, e, before, cb, arg,
		    visits)) != 0)
			return rc;
		if (n->wa_start > e)
			return 0;
		if (n->wa_end >= s && n->wa_seq < before && !n->wa_granted &&
		    (rc = cb(n, arg)) != 0)
			return rc;
	}
	return 0;
}

int
lk_wq_each(struct lk_table *t, struct lk_file *f, bool excl, bool shared,
    uint64_t s, uint64_t e, uint64_t before, lk_wq_cb cb, void *arg)
{
	int rc = 0;

	if (excl)
		rc = lk_wq_visit(f->fi_wx, s, e, before, cb, arg,
		    &t->t_ct.ct_queue_visits);
	if (rc == 0 && shared)
		rc = lk_wq_visit(f->fi_ws, s, e, before, cb, arg,
		    &t->t_ct.ct_queue_visits);
	return rc;
}

/* The first waiter under n in key order that ends at or after s. */
static const struct lk_waiter *
lk_wq_first_to(const struct lk_waiter *n, uint64_t s, uint64_t *visits)
{
	while (n != NULL) {
		(*visits)++;
		if (n->wa_tmax < s)
			return NULL;
		if (n->wa_t[0] != NULL && n->wa_t[0]->wa_tmax >= s)
			n = n->wa_t[0];
		else if (n->wa_end >= s)
			return n;
		else
			n = n->wa_t[1];
	}
	return NULL;
}

/*
 * The largest end of the waiters under n that start at or before e (a
 * node and its left subtree do when it does), into *hi if larger.
 */
static void
lk_wq_last_end(const struct lk_waiter *n, uint64_t e, uint64_t *hi,
    uint64_t *visits)
{
	while (n != NULL) {
		(*visits)++;
		if (n->wa_start > e) {
			n = n->wa_t[0];
			continue;
		}
		if (n->wa_end > *hi)
			*hi = n->wa_end;
		if (n->wa_t[0] != NULL && n->wa_t[0]->wa_tmax > *hi)
			*hi = n->wa_t[0]->wa_tmax;
		n = n->wa_t[1];
	}
}

/*
 * One treap's part of lk_wq_hull(): the leftmost waiter that ends at or
 * after r's start overlaps r iff it starts by r's end, and then the
 * waiters that start by r's end and reach furthest right overlap it too.
 * (Waiters granted in the current pass may count: more, never less.)
 */
static void
lk_wq_hull_in(const struct lk_waiter *root, const struct lk_range *r,
    struct lk_range *h, uint64_t *visits)
{
	const struct lk_waiter *n;

	if ((n = lk_wq_first_to(root, r->r_start, visits)) == NULL ||
	    n->wa_start > r->r_end)
		return;
	if (n->wa_start < h->r_start)
		h->r_start = n->wa_start;
	lk_wq_last_end(root, r->r_end, &h->r_end, visits);
}

void
lk_wq_hull(struct lk_table *t, const struct lk_file *f, bool excl,
    bool shared, const struct lk_range *r, struct lk_range *h)
{
	if (excl)
		lk_wq_hull_in(f->fi_wx, r, h, &t->t_ct.ct_queue_visits);
	if (shared)
		lk_wq_hull_in(f->fi_ws, r, h, &t->t_ct.ct_queue_visits);
}

/* In-order: keys increasing, heap order, summaries right, counted. */
static bool
lk_wq_check_node(const struct lk_waiter *n, const struct lk_file *f,
    bool excl, const struct lk_waiter **prev, size_t *count)
{
	const struct lk_waiter *l = n->wa_t[0], *r = n->wa_t[1];
	struct lk_waiter tmp = *n;

	if (n->wa_file != f || n->wa_granted || n->wa_excl != excl ||
	    (l != NULL && l->wa_prio > n->wa_prio) ||
	    (r != NULL && r->wa_prio > n->wa_prio))
		return false;
	if (l != NULL && !lk_wq_check_node(l, f, excl, prev, count))
		return false;
	if (*prev != NULL && !lk_wq_less(*prev, n))
		return false;
	*prev = n;
	(*count)++;
	if (r != NULL && !lk_wq_check_node(r, f, excl, prev, count))
		return false;
	lk_wq_fix(&tmp);
	return tmp.wa_tmax == n->wa_tmax && tmp.wa_tlo == n->wa_tlo &&
	    tmp.wa_thi == n->wa_thi;
}

/*
 * Both treaps well formed, holding exactly the queued waiters, and each
 * waiter's arrival number above the one ahead of it in the FIFO.
 */
bool
lk_wq_check(const struct lk_file *f)
{
	const struct lk_waiter *w, *prev = NULL;
	size_t n = 0, nq = 0;
	uint64_t last = 0;

	if (f->fi_wx != NULL && !lk_wq_check_node(f->fi_wx, f, true, &prev, &n))
		return false;
	prev = NULL;
	if (f->fi_ws != NULL &&
	    !lk_wq_check_node(f->fi_ws, f, false, &prev, &n))
		return false;
	for (w = f->fi_wq; w != NULL; w = w->wa_fnext, nq++) {
		if (w->wa_seq <= last)
			return false;
		last = w->wa_seq;
	}
	return n == nq;
}
