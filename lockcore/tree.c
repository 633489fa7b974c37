/*
 * tree.c - per-file interval tree of locks.
 *
 * HOW IT WORKS
 *   A treap: a binary search tree ordered by (lo_start, lo_owner) that is
 *   also a max-heap on a priority.  The priority is a hash of the node's
 *   address, so it costs no memory and the expected depth is O(log n)
 *   whatever order ranges arrive in.  (start, owner) is unique because the
 *   locks of one owner on one file never overlap.
 *
 *   Every node carries lo_max, the largest lo_end in its subtree, which
 *   turns the treap into an interval tree: a subtree whose lo_max is below
 *   the query start holds nothing overlapping, and once a node starts
 *   after the query end so does everything to its right.  lk_tree_overlap
 *   therefore visits O(log n + k) nodes for k hits, in start order.
 *
 *   Insert descends by key and rotates the new node up while its priority
 *   beats its parent's; remove finds the node by key and replaces it with
 *   the merge of its two subtrees.  Both recompute lo_max on the way back
 *   up.  Recursion depth is the tree depth (expected ~2 ln n).
 */
#include "lockcore.h"

#include <stdint.h>

#include "lk_impl.h"

static uint64_t
lk_prio(const struct lk_lock *n)
{
	uint64_t x = (uint64_t)(uintptr_t)n;

	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

static bool
lk_less(const struct lk_lock *a, const struct lk_lock *b)
{
	if (a->lo_start != b->lo_start)
		return a->lo_start < b->lo_start;
	return (uintptr_t)a->lo_owner < (uintptr_t)b->lo_owner;
}

static void
lk_update(struct lk_lock *n)
{
	uint64_t m = n->lo_end;

	n->lo_lmax = n->lo_left != NULL ? n->lo_left->lo_max : 0;
	if (n->lo_left != NULL && n->lo_lmax > m)
		m = n->lo_lmax;
	if (n->lo_right != NULL && n->lo_right->lo_max > m)
		m = n->lo_right->lo_max;
	n->lo_max = m;
}

static struct lk_lock *
lk_rotate_right(struct lk_lock *n)
{
	struct lk_lock *l = n->lo_left;

	n->lo_left = l->lo_right;
	l->lo_right = n;
	lk_update(n);
	lk_update(l);
	return l;
}

static struct lk_lock *
lk_rotate_left(struct lk_lock *n)
{
	struct lk_lock *r = n->lo_right;

	n->lo_right = r->lo_left;
	r->lo_left = n;
	lk_update(n);
	lk_update(r);
	return r;
}

/*
 * Insert n below root.  lo_max is raised on the way down, so the way back
 * up never reads a sibling (at 100,000 locks each one is a cache miss);
 * only a rotation recomputes the two nodes it moves.
 */
static struct lk_lock *
lk_insert(struct lk_lock *root, struct lk_lock *n, uint64_t prio)
{
	if (root == NULL)
		return n;
	if (n->lo_end > root->lo_max)
		root->lo_max = n->lo_end;
	if (lk_less(n, root)) {
		if (root->lo_left == NULL || n->lo_end > root->lo_lmax)
			root->lo_lmax = n->lo_end;
		root->lo_left = lk_insert(root->lo_left, n, prio);
		if (root->lo_left == n && prio > lk_prio(root))
			return lk_rotate_right(root);
	} else {
		root->lo_right = lk_insert(root->lo_right, n, prio);
		if (root->lo_right == n && prio > lk_prio(root))
			return lk_rotate_left(root);
	}
	return root;
}

void
lk_tree_insert(struct lk_lock **root, struct lk_lock *n)
{
	n->lo_left = n->lo_right = NULL;
	n->lo_max = n->lo_end;
	n->lo_lmax = 0;
	*root = lk_insert(*root, n, lk_prio(n));
}

static struct lk_lock *
lk_merge(struct lk_lock *a, struct lk_lock *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (lk_prio(a) > lk_prio(b)) {
		a->lo_right = lk_merge(a->lo_right, b);
		lk_update(a);
		return a;
	}
	b->lo_left = lk_merge(a, b->lo_left);
	lk_update(b);
	return b;
}

/*
 * Remove n below root.  An ancestor's lo_max can only change if it was n's
 * end, so other ancestors are left alone (no sibling reads).
 */
static struct lk_lock *
lk_remove(struct lk_lock *root, struct lk_lock *n)
{
	if (root == n)
		return lk_merge(n->lo_left, n->lo_right);
	if (lk_less(n, root))
		root->lo_left = lk_remove(root->lo_left, n);
	else
		root->lo_right = lk_remove(root->lo_right, n);
	if (root->lo_max == n->lo_end || root->lo_lmax == n->lo_end)
		lk_update(root);
	return root;
}

void
lk_tree_remove(struct lk_lock **root, struct lk_lock *n)
{
	*root = lk_remove(*root, n);
}

/* Call cb on every node overlapping [s, e], in start order, until != 0. */
int
lk_tree_overlap(struct lk_lock *n, uint64_t s, uint64_t e, lk_tree_cb cb,
    void *arg)
{
	int rc;

	while (n != NULL && n->lo_max >= s) {
		/* lo_lmax spares reading the left child when going right. */
		if (n->lo_left != NULL && n->lo_lmax >= s &&
		    (rc = lk_tree_overlap(n->lo_left, s, e, cb, arg)) != 0)
			return rc;
		if (n->lo_start > e)
			return 0;
		if (n->lo_end >= s && (rc = cb(n, arg)) != 0)
			return rc;
		n = n->lo_right;
	}
	return 0;
}

/* Call cb on every node in order, until it returns non-zero. */
int
lk_tree_walk(struct lk_lock *n, lk_tree_cb cb, void *arg)
{
	struct lk_lock *right;
	int rc;

	while (n != NULL) {
		if ((rc = lk_tree_walk(n->lo_left, cb, arg)) != 0)
			return rc;
		right = n->lo_right;
		if ((rc = cb(n, arg)) != 0)
			return rc;
		n = right;
	}
	return 0;
}

/* Check order, heap property and lo_max below n; count the nodes. */
static bool
lk_check(const struct lk_lock *n, const struct lk_lock *lo,
    const struct lk_lock *hi, size_t *count)
{
	uint64_t m;

	if (n == NULL)
		return true;
	if ((lo != NULL && !lk_less(lo, n)) || (hi != NULL && !lk_less(n, hi)))
		return false;
	if (n->lo_start > n->lo_end)
		return false;
	m = n->lo_end;
	if (n->lo_left != NULL) {
		if (lk_prio(n->lo_left) > lk_prio(n) ||
		    n->lo_lmax != n->lo_left->lo_max)
			return false;
		if (n->lo_left->lo_max > m)
			m = n->lo_left->lo_max;
	}
	if (n->lo_right != NULL) {
		if (lk_prio(n->lo_right) > lk_prio(n))
			return false;
		if (n->lo_right->lo_max > m)
			m = n->lo_right->lo_max;
	}
	if (m != n->lo_max)
		return false;
	(*count)++;
	return lk_check(n->lo_left, lo, n, count) &&
	    lk_check(n->lo_right, n, hi, count);
}

bool
lk_tree_check(const struct lk_lock *root, size_t *count)
{
	*count = 0;
	return lk_check(root, NULL, NULL, count);
}
