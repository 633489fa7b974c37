/*
 * tree.c - per-file interval tree of locks.
 *
 * HOW IT WORKS
 *   A B+-tree of fanout LK_BT_ORDER keyed by (start, lock address); the
 *   address breaks ties between locks of different owners that start on
 *   the same byte.  Leaves hold the locks in key order; internal nodes hold
 *   for each child a separator (a lower bound of every key below it) and
 *   the largest end below it, which makes the tree an interval tree: a
 *   child whose largest end is before the query start holds nothing
 *   overlapping, and once a separator is past the query end so is every
 *   key after it.  An interval query visits O(log n + k) nodes for k hits,
 *   in start order.  With 16 keys per node, 100,000 locks need 4-5 levels
 *   whose nodes are a few cache lines each, where a binary tree needs ~23
 *   scattered nodes: at that size the lock table is bound by cache misses.
 *
 *   Insert splits full nodes on the way down (so a split never has to go
 *   back up; in halves, or full/one when the key goes past the node's last,
 *   so ascending inserts fill nodes) and raises each child's largest end
 *   on the way.  Remove takes
 *   the key out of its leaf and recomputes a parent's largest end only if
 *   it was the removed lock's end; empty nodes are freed, a root with one
 *   child is replaced by the child, and nodes are otherwise left as they
 *   are (no merging: separators stay valid lower bounds, depth never grows
 *   on removal).
 *
 *   Nodes come from spare pools filled by lk_tree_reserve() before a call
 *   changes anything, so an insert cannot fail half way.
 */
#include "lockcore.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lk_impl.h"

struct lk_bnode {
	struct lk_bnode	*bn_next;	/* spare pool link */
	uint16_t	 bn_n;		/* keys (leaf) or children in use */
	uint16_t	 bn_leaf;
	uint64_t	 bn_start[LK_BT_ORDER];	/* key start / separator start */
	struct lk_lock	*bn_key[LK_BT_ORDER];	/* the lock / separator's lock */
	/* internal nodes only: */
	uint64_t	 bn_max[LK_BT_ORDER];	/* largest end below */
	struct lk_bnode	*bn_child[LK_BT_ORDER];
};

/*
 * Leaves are allocated without the last two arrays: 272 bytes for 16
 * locks, not 400.  A leaf key's end is its lock's lo_end (lk_bn_max),
 * which never changes while the lock is in the tree.
 */
#define LK_BT_LEAF_SIZE	offsetof(struct lk_bnode, bn_max)

static inline uint64_t
lk_bn_max(const struct lk_bnode *b, unsigned i)
{
	return b->bn_leaf ? b->bn_key[i]->lo_end : b->bn_max[i];
}

static int
lk_key_cmp(uint64_t s1, const struct lk_lock *l1, uint64_t s2,
    const struct lk_lock *l2)
{
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	if (l1 == l2)
		return 0;
	return (uintptr_t)l1 < (uintptr_t)l2 ? -1 : 1;
}

static uint64_t
lk_bn_maxof(const struct lk_bnode *b)
{
	uint64_t m = 0;
	unsigned i;

	for (i = 0; i < b->bn_n; i++)
		if (lk_bn_max(b, i) > m)
			m = lk_bn_max(b, i);
	return m;
}

/* The child of internal node b whose key range holds (s, l). */
static unsigned
lk_bn_child_idx(const struct lk_bnode *b, uint64_t s, const struct lk_lock *l)
{
	unsigned i;

	for (i = 1; i < b->bn_n; i++)
		if (lk_key_cmp(s, l, b->bn_start[i], b->bn_key[i]) < 0)
			break;
	return i - 1;
}

/* ---- node pools ---- */

bool
lk_tree_reserve(struct lk_table *t, size_t adds)
{
	struct lk_bnode *b;
	size_t ints = adds * LK_BT_MAXH + 1;

	while (t->t_nbleaf < adds) {
		if ((b = lk_alloc(t, LK_BT_LEAF_SIZE)) == NULL)
			return false;
		b->bn_next = t->t_bleaf;
		t->t_bleaf = b;
		t->t_nbleaf++;
	}
	while (t->t_nbint < ints) {
		if ((b = lk_alloc(t, sizeof(*b))) == NULL)
			return false;
		b->bn_next = t->t_bint;
		t->t_bint = b;
		t->t_nbint++;
	}
	return true;
}

static struct lk_bnode *
lk_bn_take(struct lk_table *t, bool leaf)
{
	struct lk_bnode *b;

	if (leaf) {
		b = t->t_bleaf;
		t->t_bleaf = b->bn_next;
		t->t_nbleaf--;
	} else {
		b = t->t_bint;
		t->t_bint = b->bn_next;
		t->t_nbint--;
	}
	b->bn_next = NULL;
	b->bn_n = 0;
	b->bn_leaf = leaf;
	return b;
}

static void
lk_bn_give(struct lk_table *t, struct lk_bnode *b)
{
	if (b->bn_leaf && t->t_nbleaf < LK_BT_SPARE_KEEP) {
		b->bn_next = t->t_bleaf;
		t->t_bleaf = b;
		t->t_nbleaf++;
	} else if (!b->bn_leaf && t->t_nbint < LK_BT_SPARE_KEEP) {
		b->bn_next = t->t_bint;
		t->t_bint = b;
		t->t_nbint++;
	} else
		lk_free(t, b);
}

void
lk_tree_pools_free(struct lk_table *t)
{
	struct lk_bnode *b;

	while ((b = t->t_bleaf) != NULL) {
		t->t_bleaf = b->bn_next;
		lk_free(t, b);
	}
	while ((b = t->t_bint) != NULL) {
		t->t_bint = b->bn_next;
		lk_free(t, b);
	}
	t->t_nbleaf = t->t_nbint = 0;
}

/* ---- insert ---- */

/*
 * Where to split a full node for an insert of (s, l): in halves, or, when
 * the new key goes after every key of the node, keeping the node full and
 * starting the right one with its last key.  Locks taken in ascending
 * order (a client walking through a file, or each of many clients through
 * its own region) then fill their leaves instead of leaving each half
 * empty: 17 bytes of leaf per lock instead of 34.
 */
static unsigned
lk_bn_split_at(const struct lk_bnode *c, uint64_t s, const struct lk_lock *l)
{
	if (lk_key_cmp(s, l, c->bn_start[LK_BT_ORDER - 1],
	    c->bn_key[LK_BT_ORDER - 1]) > 0)
		return LK_BT_ORDER - 1;
	return LK_BT_ORDER / 2;
}

/* Split full child i of internal node p: keys from h on go right. */
static void
lk_bn_split(struct lk_table *t, struct lk_bnode *p, unsigned i, unsigned h)
{
	struct lk_bnode *c = p->bn_child[i], *r;
	unsigned m = LK_BT_ORDER - h, j;

	r = lk_bn_take(t, c->bn_leaf);
	memcpy(r->bn_start, c->bn_start + h, m * sizeof(r->bn_start[0]));
	memcpy(r->bn_key, c->bn_key + h, m * sizeof(r->bn_key[0]));
	if (!c->bn_leaf) {
		memcpy(r->bn_max, c->bn_max + h, m * sizeof(r->bn_max[0]));
		memcpy(r->bn_child, c->bn_child + h,
		    m * sizeof(r->bn_child[0]));
	}
	r->bn_n = (uint16_t)m;
	c->bn_n = (uint16_t)h;
	for (j = p->bn_n; j > i + 1; j--) {
		p->bn_start[j] = p->bn_start[j - 1];
		p->bn_max[j] = p->bn_max[j - 1];
		p->bn_key[j] = p->bn_key[j - 1];
		p->bn_child[j] = p->bn_child[j - 1];
	}
	p->bn_start[i + 1] = r->bn_start[0];
	p->bn_key[i + 1] = r->bn_key[0];
	p->bn_child[i + 1] = r;
	p->bn_max[i] = lk_bn_maxof(c);
	p->bn_max[i + 1] = lk_bn_maxof(r);
	p->bn_n++;
}

static void
lk_bn_leaf_insert(struct lk_bnode *b, struct lk_lock *l)
{
	unsigned pos, j;

	for (pos = 0; pos < b->bn_n; pos++)
		if (lk_key_cmp(l->lo_start, l, b->bn_start[pos],
		    b->bn_key[pos]) < 0)
			break;
	for (j = b->bn_n; j > pos; j--) {
		b->bn_start[j] = b->bn_start[j - 1];
		b->bn_key[j] = b->bn_key[j - 1];
	}
	b->bn_start[pos] = l->lo_start;
	b->bn_key[pos] = l;
	b->bn_n++;
}

void
lk_tree_insert(struct lk_table *t, struct lk_bnode **root, struct lk_lock *l)
{
	struct lk_bnode *b = *root, *nr;
	uint64_t s = l->lo_start, e = l->lo_end;
	unsigned i;

	if (b == NULL) {
		b = lk_bn_take(t, true);
		*root = b;
	} else if (b->bn_n == LK_BT_ORDER) {
		nr = lk_bn_take(t, false);
		nr->bn_n = 1;
		nr->bn_start[0] = b->bn_start[0];
		nr->bn_key[0] = b->bn_key[0];
		nr->bn_max[0] = lk_bn_maxof(b);
		nr->bn_child[0] = b;
		lk_bn_split(t, nr, 0, lk_bn_split_at(b, s, l));
		*root = b = nr;
	}
	while (!b->bn_leaf) {
		i = lk_bn_child_idx(b, s, l);
		if (b->bn_child[i]->bn_n == LK_BT_ORDER) {
			lk_bn_split(t, b, i, lk_bn_split_at(b->bn_child[i], s,
			    l));
			if (lk_key_cmp(s, l, b->bn_start[i + 1],
			    b->bn_key[i + 1]) >= 0)
				i++;
		}
		/* Separators stay lower bounds of what is below them. */
		if (lk_key_cmp(s, l, b->bn_start[i], b->bn_key[i]) < 0) {
			b->bn_start[i] = s;
			b->bn_key[i] = l;
		}
		if (e > b->bn_max[i])
			b->bn_max[i] = e;
		b = b->bn_child[i];
	}
	lk_bn_leaf_insert(b, l);
}

/* ---- remove ---- */

static void
lk_bn_cut(struct lk_bnode *b, unsigned i)
{
	unsigned j;

	for (j = i + 1; j < b->bn_n; j++) {
		b->bn_start[j - 1] = b->bn_start[j];
		b->bn_key[j - 1] = b->bn_key[j];
		if (!b->bn_leaf) {
			b->bn_max[j - 1] = b->bn_max[j];
			b->bn_child[j - 1] = b->bn_child[j];
		}
	}
	b->bn_n--;
}

static void
lk_bn_remove(struct lk_table *t, struct lk_bnode *b, struct lk_lock *l)
{
	struct lk_bnode *c;
	unsigned i;

	if (b->bn_leaf) {
		for (i = 0; i < b->bn_n; i++)
			if (b->bn_key[i] == l) {
				lk_bn_cut(b, i);
				return;
			}
		return;
	}
	i = lk_bn_child_idx(b, l->lo_start, l);
	c = b->bn_child[i];
	lk_bn_remove(t, c, l);
	if (c->bn_n == 0) {
		lk_bn_give(t, c);
		lk_bn_cut(b, i);
	} else if (b->bn_max[i] == l->lo_end)
		b->bn_max[i] = lk_bn_maxof(c);
}

void
lk_tree_remove(struct lk_table *t, struct lk_bnode **root, struct lk_lock *l)
{
	struct lk_bnode *b = *root;

	lk_bn_remove(t, b, l);
	while (b != NULL && (b->bn_n == 0 || (!b->bn_leaf && b->bn_n == 1))) {
		struct lk_bnode *next = b->bn_n == 0 ? NULL : b->bn_child[0];

		lk_bn_give(t, b);
		b = next;
	}
	*root = b;
}

/* ---- queries ---- */

int
lk_tree_overlap(struct lk_bnode *b, uint64_t s, uint64_t e, lk_tree_cb cb,
    void *arg)
{
	unsigned i;
	int rc;

	if (b == NULL)
		return 0;
	/*
	 * A leaf's ends are in its locks: fetch every candidate's line at
	 * once, so that the misses overlap instead of coming one by one.
	 */
	for (i = 0; b->bn_leaf && i < b->bn_n && b->bn_start[i] <= e; i++)
		__builtin_prefetch(b->bn_key[i]);
	for (i = 0; i < b->bn_n; i++) {
		if (b->bn_start[i] > e)
			break;
		if (lk_bn_max(b, i) < s)
			continue;
		rc = b->bn_leaf ? cb(b->bn_key[i], arg) :
		    lk_tree_overlap(b->bn_child[i], s, e, cb, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
lk_tree_walk(struct lk_bnode *b, lk_tree_cb cb, void *arg)
{
	unsigned i;
	int rc;

	if (b == NULL)
		return 0;
	for (i = 0; i < b->bn_n; i++) {
		rc = b->bn_leaf ? cb(b->bn_key[i], arg) :
		    lk_tree_walk(b->bn_child[i], cb, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

struct lk_lock *
lk_tree_first(struct lk_bnode *b)
{
	if (b == NULL)
		return NULL;
	while (!b->bn_leaf)
		b = b->bn_child[0];
	return b->bn_key[0];
}

/*
 * The lock after l in key order in the tree holding l, or NULL.  The
 * successor is below the child l would be inserted into or in the first
 * key of a later child: every key of a child is below the next child's
 * separator.  O(log n).
 */
struct lk_lock *
lk_tree_next(struct lk_bnode *b, const struct lk_lock *l)
{
	struct lk_lock *n;
	unsigned i, first;

	if (b == NULL)
		return NULL;
	if (b->bn_leaf) {
		for (i = 0; i < b->bn_n; i++)
			if (lk_key_cmp(l->lo_start, l, b->bn_start[i],
			    b->bn_key[i]) < 0)
				return b->bn_key[i];
		return NULL;
	}
	first = lk_bn_child_idx(b, l->lo_start, l);
	for (i = first; i < b->bn_n; i++) {
		n = i == first ? lk_tree_next(b->bn_child[i], l) :
		    lk_tree_first(b->bn_child[i]);
		if (n != NULL)
			return n;
	}
	return NULL;
}

/*
 * The first lock whose key is after (s, a) -- a key that may no longer be
 * in the tree: a resumable walk continues after the last lock it
 * reported, whether or not that lock still exists.  O(log n).
 */
static int
lk_key_cmp_raw(uint64_t s1, uintptr_t a1, uint64_t s2, const struct lk_lock *l2)
{
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	if (a1 == (uintptr_t)l2)
		return 0;
	return a1 < (uintptr_t)l2 ? -1 : 1;
}

struct lk_lock *
lk_tree_seek(struct lk_bnode *b, uint64_t s, uintptr_t a)
{
	struct lk_lock *n;
	unsigned i, first;

	if (b == NULL)
		return NULL;
	if (b->bn_leaf) {
		for (i = 0; i < b->bn_n; i++)
			if (lk_key_cmp_raw(s, a, b->bn_start[i],
			    b->bn_key[i]) < 0)
				return b->bn_key[i];
		return NULL;
	}
	for (first = 1; first < b->bn_n; first++)
		if (lk_key_cmp_raw(s, a, b->bn_start[first],
		    b->bn_key[first]) < 0)
			break;
	first--;
	for (i = first; i < b->bn_n; i++) {
		n = i == first ? lk_tree_seek(b->bn_child[i], s, a) :
		    lk_tree_first(b->bn_child[i]);
		if (n != NULL)
			return n;
	}
	return NULL;
}

void
lk_tree_free(struct lk_table *t, struct lk_bnode *b)
{
	unsigned i;

	if (b == NULL)
		return;
	/* The lock nodes go with their slab (lk_table_destroy). */
	for (i = 0; !b->bn_leaf && i < b->bn_n; i++)
		lk_tree_free(t, b->bn_child[i]);
	lk_free(t, b);
}

/* ---- invariants (tests) ---- */

struct lk_bt_span {
	uint64_t		 sp_start;	/* smallest key */
	const struct lk_lock	*sp_key;
	uint64_t		 sp_lstart;	/* largest key */
	const struct lk_lock	*sp_lkey;
	uint64_t		 sp_max;	/* largest end */
	unsigned		 sp_depth;
};

static bool
lk_bt_check(const struct lk_bnode *b, size_t *count, struct lk_bt_span *sp)
{
	struct lk_bt_span c;
	unsigned i;

	if (b->bn_n == 0 || b->bn_n > LK_BT_ORDER)
		return false;
	sp->sp_max = 0;
	for (i = 0; i < b->bn_n; i++) {
		if (b->bn_leaf) {
			const struct lk_lock *l = b->bn_key[i];

			if (b->bn_start[i] != l->lo_start ||
			    l->lo_start > l->lo_end)
				return false;
			c.sp_start = c.sp_lstart = l->lo_start;
			c.sp_key = c.sp_lkey = l;
			c.sp_max = l->lo_end;
			c.sp_depth = 0;
			(*count)++;
		} else {
			if (!lk_bt_check(b->bn_child[i], count, &c) ||
			    c.sp_max != b->bn_max[i] ||
			    lk_key_cmp(b->bn_start[i], b->bn_key[i], c.sp_start,
			    c.sp_key) > 0)
				return false;
			c.sp_depth++;
		}
		if (i > 0 && (c.sp_depth != sp->sp_depth ||
		    lk_key_cmp(sp->sp_lstart, sp->sp_lkey, b->bn_start[i],
		    b->bn_key[i]) >= 0 || lk_key_cmp(sp->sp_lstart, sp->sp_lkey,
		    c.sp_start, c.sp_key) >= 0))
			return false;
		if (i == 0) {
			sp->sp_start = c.sp_start;
			sp->sp_key = c.sp_key;
			sp->sp_depth = c.sp_depth;
		}
		sp->sp_lstart = c.sp_lstart;
		sp->sp_lkey = c.sp_lkey;
		if (c.sp_max > sp->sp_max)
			sp->sp_max = c.sp_max;
	}
	return true;
}

bool
lk_tree_check(const struct lk_bnode *root, size_t *count)
{
	struct lk_bt_span sp;

	*count = 0;
	if (root == NULL)
		return true;
	if (!root->bn_leaf && root->bn_n < 2)
		return false;
	return lk_bt_check(root, count, &sp);
}
