/*
 * slab.c - fixed-size objects carved from big blocks (lk_slab_*), for the
 * lock nodes: a million held locks are a million 64-byte nodes, and
 * malloc would give each a 16-byte header and round it up to 80.
 *
 * HOW IT WORKS
 *   A block is LK_SLAB_BLOCK bytes from the table's allocator: a header,
 *   then objects at 64-byte (cache line) boundaries.  Objects never handed
 *   out are taken in address order (sb_bump), so a block's untouched tail
 *   costs no resident memory; freed ones go on the block's own free list
 *   (the first word of a free object links it).  Blocks with a free object
 *   are on sl_partial, most recently freed into first.  To find the block
 *   of an object being freed, sl_blk keeps every block sorted by address
 *   (binary search: one block per ~1,000 objects, so 10 steps for a
 *   million).  A block whose last object is freed goes back to the
 *   allocator, unless it is the only empty block: one is kept so that a
 *   table hovering around a block boundary does not allocate and free a
 *   block on every call.
 *
 * COST
 *   get: O(1), plus a block allocation and an insertion into sl_blk (a
 *   memmove of the block pointers) once per block.  put: O(log blocks),
 *   plus the same memmove when a block is freed.
 */
#include "lockcore.h"

#include <string.h>

#include "lk_impl.h"

#define LK_SLAB_ALIGN	64

struct lk_sblk {
	struct lk_sblk	*sb_next;	/* sl_partial */
	struct lk_sblk	*sb_prev;
	void		*sb_free;	/* freed objects */
	char		*sb_first;	/* first object */
	char		*sb_bump;	/* next never-used object */
	char		*sb_end;	/* end of the last object */
	size_t		 sb_used;	/* objects handed out */
	bool		 sb_listed;	/* on sl_partial */
};

void
lk_slab_init(struct lk_slab *sl, size_t size)
{
	memset(sl, 0, sizeof(*sl));
	sl->sl_size = (size + LK_SLAB_ALIGN - 1) & ~(size_t)(LK_SLAB_ALIGN - 1);
}

static void
lk_slab_link(struct lk_slab *sl, struct lk_sblk *b)
{
	b->sb_prev = NULL;
	b->sb_next = sl->sl_partial;
	if (b->sb_next != NULL)
		b->sb_next->sb_prev = b;
	sl->sl_partial = b;
	b->sb_listed = true;
}

static void
lk_slab_unlink(struct lk_slab *sl, struct lk_sblk *b)
{
	if (b->sb_prev != NULL)
		b->sb_prev->sb_next = b->sb_next;
	else
		sl->sl_partial = b->sb_next;
	if (b->sb_next != NULL)
		b->sb_next->sb_prev = b->sb_prev;
	b->sb_listed = false;
}

/* Index of the last block starting at or below p; -1: none. */
static ptrdiff_t
lk_slab_find(const struct lk_slab *sl, const void *p)
{
	size_t lo = 0, hi = sl->sl_nblk;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((const char *)sl->sl_blk[mid] <= (const char *)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* A new empty block, listed and indexed; NULL: out of memory. */
static struct lk_sblk *
lk_slab_grow(struct lk_table *t, struct lk_slab *sl)
{
	struct lk_sblk *b, **v;
	uintptr_t first;
	size_t i;

	if (sl->sl_nblk == sl->sl_cap) {
		size_t cap = sl->sl_cap != 0 ? sl->sl_cap * 2 : 16;

		if ((v = lk_realloc(t, sl->sl_blk, cap * sizeof(*v))) == NULL)
			return NULL;
		sl->sl_blk = v;
		sl->sl_cap = cap;
	}
	/* Not lk_alloc: zeroing would make the whole block resident. */
	if ((b = t->t_al.al_malloc(LK_SLAB_BLOCK, t->t_al.al_arg)) == NULL)
		return NULL;
	first = ((uintptr_t)(b + 1) + LK_SLAB_ALIGN - 1) &
	    ~(uintptr_t)(LK_SLAB_ALIGN - 1);
	b->sb_first = b->sb_bump = (char *)first;
	b->sb_end = b->sb_first + (((char *)b + LK_SLAB_BLOCK -
	    b->sb_first) / sl->sl_size) * sl->sl_size;
	b->sb_free = NULL;
	b->sb_used = 0;
	i = (size_t)(lk_slab_find(sl, b) + 1);
	memmove(&sl->sl_blk[i + 1], &sl->sl_blk[i],
	    (sl->sl_nblk - i) * sizeof(*sl->sl_blk));
	sl->sl_blk[i] = b;
	sl->sl_nblk++;
	sl->sl_nempty++;
	lk_slab_link(sl, b);
	return b;
}

void *
lk_slab_get(struct lk_table *t, struct lk_slab *sl)
{
	struct lk_sblk *b = sl->sl_partial;
	void *p;

	if (b == NULL && (b = lk_slab_grow(t, sl)) == NULL)
		return NULL;
	if (b->sb_free != NULL) {
		p = b->sb_free;
		memcpy(&b->sb_free, p, sizeof(void *));
	} else {
		p = b->sb_bump;
		b->sb_bump += sl->sl_size;
	}
	if (b->sb_used++ == 0)
		sl->sl_nempty--;
	if (b->sb_free == NULL && b->sb_bump == b->sb_end)
		lk_slab_unlink(sl, b);
	sl->sl_nobj++;
	memset(p, 0, sl->sl_size);
	return p;
}

static void
lk_slab_release(struct lk_table *t, struct lk_slab *sl, size_t i)
{
	struct lk_sblk *b = sl->sl_blk[i];

	if (b->sb_listed)
		lk_slab_unlink(sl, b);
	memmove(&sl->sl_blk[i], &sl->sl_blk[i + 1],
	    (sl->sl_nblk - i - 1) * sizeof(*sl->sl_blk));
	sl->sl_nblk--;
	sl->sl_nempty--;
	lk_free(t, b);
}

void
lk_slab_put(struct lk_table *t, struct lk_slab *sl, void *p)
{
	ptrdiff_t i;
	struct lk_sblk *b;

	if (p == NULL)
		return;
	i = lk_slab_find(sl, p);
	b = sl->sl_blk[i];	/* i >= 0: p came from lk_slab_get */
	memcpy(p, &b->sb_free, sizeof(void *));
	b->sb_free = p;
	sl->sl_nobj--;
	if (!b->sb_listed)
		lk_slab_link(sl, b);
	if (--b->sb_used == 0 && ++sl->sl_nempty > 1)
		lk_slab_release(t, sl, (size_t)i);
}

void
lk_slab_fini(struct lk_table *t, struct lk_slab *sl)
{
	size_t i;

	for (i = 0; i < sl->sl_nblk; i++)
		lk_free(t, sl->sl_blk[i]);
	lk_free(t, sl->sl_blk);
	memset(sl, 0, sizeof(*sl));
}

/* Invariants (lk_table_check): the index, the lists and the counts agree. */
bool
lk_slab_check(const struct lk_slab *sl)
{
	const struct lk_sblk *b;
	size_t i, used = 0, empty = 0, listed = 0, nfree;
	const void *p;

	for (i = 0; i < sl->sl_nblk; i++) {
		b = sl->sl_blk[i];
		if (i > 0 && (const char *)sl->sl_blk[i - 1] >=
		    (const char *)b)
			return false;
		nfree = 0;
		for (p = b->sb_free; p != NULL; memcpy(&p, p, sizeof(p))) {
			if ((const char *)p < b->sb_first ||
			    (const char *)p >= b->sb_bump ||
			    ((const char *)p - b->sb_first) % sl->sl_size != 0 ||
			    ++nfree > LK_SLAB_BLOCK / sl->sl_size)
				return false;
		}
		if ((size_t)(b->sb_bump - b->sb_first) / sl->sl_size !=
		    b->sb_used + nfree || b->sb_listed !=
		    (b->sb_free != NULL || b->sb_bump != b->sb_end))
			return false;
		used += b->sb_used;
		empty += b->sb_used == 0;
		listed += b->sb_listed;
	}
	for (b = sl->sl_partial; b != NULL; b = b->sb_next)
		if (!b->sb_listed || listed-- == 0)
			return false;
	return listed == 0 && used == sl->sl_nobj && empty == sl->sl_nempty &&
	    empty <= 1;
}
