/*
 * lk_impl.h - lockcore internals shared by the lockcore sources; never
 * included from outside lockcore/.
 *
 * OWNERSHIP LEGEND (single-threaded; no locking)
 *   table  owns the three hash tables (files, owners, hosts) and through
 *          them every object; owns the result vectors, the slab the
 *          lock nodes come from (slab.c) and the nodes reserved for the
 *          current call (t_spare).
 *   file   owns its interval tree of locks (fi_root), its share list and
 *          the FIFO of *queued* waiters (fi_wq) and their index by
 *          range (fi_wx, fi_ws: wqidx.c); holds fh bytes; owns
 *          fi_recl (below) while it has reclaimable records.
 *   owner  owns nothing but ow_recl; links its locks (ow_locks), its
 *          waiters and unconfirmed grants (ow_waiters) and its shares
 *          (ow_shares).
 *   host   links its owners (ho_owners), live or zombie.
 *
 * RECLAIMABLE RECORDS (HOW IT WORKS)
 *   Reclaimable locks and shares (lockcore.h, GRACE AND RECLAIM) are
 *   ordinary lock and share nodes with lo_reclaim / sh_reclaim set, kept
 *   out of every live container: a file's reclaimable locks are in a second
 *   interval tree and its reclaimable shares in a second list, an owner's
 *   in second lists, all in a struct lk_recl that the file or owner has
 *   only while it holds reclaimable records (allocated by lk_table_load(),
 *   freed by the removal that empties it).  So the live paths (collect,
 *   take, grant sweep, deadlock search) never see a reclaimable node, and
 *   outside grace every reclaimable check is one NULL test.  Reclaimable
 *   records count in ob_refs like live ones (they keep their file and
 *   owner alive) and have their own counters (re_n*, ho_nr*, t_nr*), never
 *   the live ones the limits look at.
 *
 * LIFETIME OF FILES, OWNERS, HOSTS (HOW IT WORKS)
 *   ob_refs counts what refers to an object: locks + waiters + grants +
 *   shares for files and owners, live owners for hosts.  An object whose
 *   count falls to 0 becomes a *zombie*: it stays in its hash table (so a
 *   LOCK right after an UNLOCK revives it without malloc/free), and goes on
 *   the table's zombie list.  Zombies are freed only at the start of a later
 *   call (lk_begin) and only when there are more than LK_ZOMBIE_KEEP of
 *   them; this is also what keeps fh/oh bytes referenced by the previous
 *   call's result valid until the next call.
 *
 * CHANGE SETS (HOW IT WORKS)
 *   Lock and share nodes are never modified in place once in the table: a
 *   change is "remove node" + "add node".  Removing writes a record into
 *   t_removed; adding pushes the node on t_addl/t_adds and marks it fresh
 *   (lo_fresh, lo_addidx = index).  Removing a fresh node just swap-removes
 *   it from the added vector instead, so the reported set is net.  lk_finish
 *   turns the surviving added nodes into records.
 */
#ifndef NLMD_LOCKCORE_LK_IMPL_H
#define NLMD_LOCKCORE_LK_IMPL_H

#include "lockcore.h"

#define LK_ZOMBIE_KEEP	1024	/* zombies kept before a sweep */
#define LK_VEC_KEEP_BYTES	(64u << 10)	/* result vectors kept across calls */
#define LK_BT_ORDER	16	/* keys per B+-tree node */
#define LK_BT_MAXH	16	/* deepest tree reserved for (16^16 keys) */
#define LK_BT_SPARE_KEEP 128	/* free tree nodes kept for reuse */
#define LK_HASH_MIN	64

/* Growable array of fixed-size elements. */
struct lk_vec {
	void		*v_data;
	size_t		 v_len;
	size_t		 v_cap;
};

/* Hash-table and zombie-list linkage shared by files, owners, hosts. */
struct lk_obj {
	struct lk_obj	*ob_next;	/* hash chain */
	struct lk_obj	*ob_znext;	/* zombie list, when ob_refs == 0 */
	struct lk_obj	*ob_zprev;
	uint64_t	 ob_hash;
	size_t		 ob_refs;
};

struct lk_hash {
	struct lk_obj	**h_tab;
	size_t		 h_mask;	/* buckets - 1 */
	size_t		 h_count;
};

struct lk_zlist {
	struct lk_obj	*z_head;
	size_t		 z_count;
};

/* A validated byte range: first and last byte, inclusive. */
struct lk_range {
	uint64_t	 r_start;
	uint64_t	 r_end;
};

/* A granted byte range: a key of its file's interval B+-tree. */
struct lk_bnode;

/* Fixed-size objects carved from big blocks (slab.c). */
#define LK_SLAB_BLOCK	(64u << 10)
struct lk_sblk;
struct lk_slab {
	size_t		 sl_size;	/* object size, cache lines */
	struct lk_sblk	*sl_partial;	/* blocks with a free object */
	struct lk_sblk	**sl_blk;	/* every block, by address */
	size_t		 sl_nblk;
	size_t		 sl_cap;
	size_t		 sl_nempty;	/* blocks with no object in use */
	size_t		 sl_nobj;	/* objects in use */
};

struct lk_lock {
	uint64_t	 lo_start;
	uint64_t	 lo_end;	/* last byte, inclusive */
	uint64_t	 lo_token;
	struct lk_owner	*lo_owner;
	struct lk_file	*lo_file;
	struct lk_lock	*lo_onext;	/* owner's (reclaimable) locks; spare
					   list link */
	struct lk_lock	*lo_oprev;
	uint32_t	 lo_epoch;	/* <= LK_EPOCH_MAX */
	uint32_t	 lo_addidx:29;	/* index in t_addl when lo_fresh */
	uint32_t	 lo_excl:1;
	uint32_t	 lo_fresh:1;
	uint32_t	 lo_reclaim:1;	/* in the reclaimable containers */
};
/* One cache line, one slab object (a million held locks: 64 MB). */
_Static_assert(sizeof(struct lk_lock) == 64, "struct lk_lock grew");
#define LK_ADDIDX_MAX	((1u << 29) - 1)

/* What a lock node is made from (lk_lock_add). */
struct lk_piece {
	struct lk_range	 p_r;
	uint64_t	 p_token;
	uint64_t	 p_epoch;
	bool		 p_excl;
	bool		 p_reclaim;
};

/* One piece of an unconfirmed grant's prior (undo.c). */
struct lk_prior {
	struct lk_range	 pr_r;
	bool		 pr_excl;
	bool		 pr_later;	/* set by a LOCK since the grant */
};

/* A queued request, or (wa_granted) an unconfirmed grant. */
struct lk_waiter {
	struct lk_owner	*wa_owner;
	struct lk_file	*wa_file;
	uint64_t	 wa_start;
	uint64_t	 wa_end;
	uint64_t	 wa_since;
	void		*wa_udata;
	struct lk_waiter *wa_fnext;	/* file queue (queued only) */
	struct lk_waiter *wa_fprev;
	struct lk_waiter *wa_onext;	/* owner's waiters and grants */
	struct lk_waiter *wa_oprev;
	/* queued only: node of the file's index (wqidx.c) */
	struct lk_waiter *wa_t[2];	/* children: [0] before, [1] after */
	uint64_t	 wa_seq;	/* arrival number (FIFO order) */
	uint64_t	 wa_gseq;	/* granted: grant number (fi_pend,
					   newest first, is in its order) */
	uint64_t	 wa_tmax;	/* subtree: largest end */
	uint64_t	 wa_tlo;	/* subtree: smallest wa_seq */
	uint64_t	 wa_thi;	/* subtree: largest wa_seq */
	uint32_t	 wa_prio;
	bool		 wa_excl;
	bool		 wa_granted;
	/* granted only: the owner's locks in the range apart from it */
	uint32_t	 wa_nprior;
	uint32_t	 wa_capprior;
	struct lk_prior	*wa_prior;
};

struct lk_share {
	struct lk_owner	*sh_owner;
	struct lk_file	*sh_file;
	struct lk_share	*sh_fnext;	/* file's (reclaimable) shares */
	struct lk_share	*sh_fprev;
	struct lk_share	*sh_onext;	/* owner's (reclaimable) shares */
	struct lk_share	*sh_oprev;
	uint64_t	 sh_epoch;
	uint64_t	 sh_seq;	/* number at lk_share_add: a file's
					   lists, newest first, are in its
					   order (walks in pieces resume by
					   it) */
	uint32_t	 sh_addidx;	/* index in t_adds when sh_fresh */
	uint8_t		 sh_access;
	uint8_t		 sh_deny;
	uint8_t		 sh_fresh;
	uint8_t		 sh_reclaim;	/* in the reclaimable containers */
};

/* A file's or owner's reclaimable records (see RECLAIMABLE RECORDS). */
struct lk_recl {
	struct lk_bnode	*re_root;	/* file: interval tree of its locks */
	struct lk_lock	*re_locks;	/* owner: its locks (lo_onext) */
	struct lk_share	*re_shares;	/* file: sh_fnext; owner: sh_onext */
	size_t		 re_nlocks;
	size_t		 re_nshares;
};

struct lk_file {
	struct lk_obj	 fi_ob;
	struct lk_bnode	*fi_root;	/* interval B+-tree keyed by start */
	struct lk_waiter *fi_wq;	/* FIFO of queued waiters, head */
	struct lk_waiter *fi_wqtail;
	uint64_t	 fi_wqlo;	/* every queued waiter lies within */
	uint64_t	 fi_wqhi;	/* [fi_wqlo, fi_wqhi] (when any) */
	struct lk_waiter *fi_wx;	/* index of queued exclusive ones */
	struct lk_waiter *fi_ws;	/* and of queued shared ones */
	struct lk_waiter *fi_pend;	/* unconfirmed grants */
	struct lk_share	*fi_shares;
	struct lk_recl	*fi_recl;	/* NULL: no reclaimable records */
	size_t		 fi_nlocks;
	size_t		 fi_nwaiters;	/* queued */
	size_t		 fi_npending;	/* unconfirmed grants */
	size_t		 fi_nshares;
	uint64_t	 fi_mark;	/* release passes: visited */
	uint64_t	 fi_tlo;	/* release passes: what changed */
	uint64_t	 fi_thi;	/* lies within [fi_tlo, fi_thi] */
	struct lk_file	*fi_dnext;	/* t_defer (GRANT BUDGET) */
	uint64_t	 fi_dlo;	/* grantable waiters left lie */
	uint64_t	 fi_dhi;	/* within [fi_dlo, fi_dhi] */
	bool		 fi_deferred;	/* on t_defer, holding a ref */
	size_t		 fi_fhlen;
	unsigned char	 fi_fh[];
};

struct lk_owner {
	struct lk_obj	 ow_ob;
	struct lk_host	*ow_host;
	struct lk_owner	*ow_hnext;	/* host's owners */
	struct lk_owner	*ow_hprev;
	struct lk_lock	*ow_locks;
	struct lk_waiter *ow_waiters;
	struct lk_share	*ow_shares;
	struct lk_recl	*ow_recl;	/* NULL: no reclaimable records */
	size_t		 ow_nlocks;
	size_t		 ow_nwaiters;	/* queued */
	size_t		 ow_npending;
	size_t		 ow_nshares;
	uint64_t	 ow_mark;	/* deadlock search: visited */
	int32_t		 ow_svid;
	bool		 ow_share;	/* share owner (host, oh) */
	uint16_t	 ow_ohlen;	/* <= LK_OH_MAX; packed next to
					   ow_svid: owners are many */
	unsigned char	 ow_oh[];
};

struct lk_host {
	struct lk_obj	 ho_ob;
	uint64_t	 ho_id;
	struct lk_owner	*ho_owners;
	size_t		 ho_nowners;	/* live */
	size_t		 ho_nlocks;
	size_t		 ho_nwaiters;
	size_t		 ho_npending;
	size_t		 ho_nshares;
	size_t		 ho_nrlocks;	/* reclaimable */
	size_t		 ho_nrshares;
	size_t		 ho_over;	/* its splits past max-locks ... */
	uint64_t	 ho_over_gen;	/* ... since t_over_gen was this */
};

/* An owner's hold on a file weakened in a range (deadlock.c). */
struct lk_weak {
	struct lk_owner	*wk_owner;
	struct lk_file	*wk_file;
	struct lk_range	 wk_r;
	bool		 wk_into;	/* edges into the owner, not out */
	bool		 wk_excl;	/* (into) the mode it took */
};

/*
 * One owner's live locks on one file, in start order (lk_own_all()):
 * kept up to date as locks are added and removed until the call ends.
 */
#define LK_OWNC	8
struct lk_ownc {
	const struct lk_owner *oc_o;	/* NULL: the slot is free */
	const struct lk_file *oc_f;
	struct lk_vec	 oc_v;		/* struct lk_lock * */
	uint64_t	 oc_used;	/* t_ownc_clock when last asked */
};

struct lk_table {
	struct lk_config t_cf;
	struct lk_allocator t_al;
	struct lk_hash	 t_files;
	struct lk_hash	 t_owners;
	struct lk_hash	 t_hosts;
	struct lk_zlist	 t_zfiles;
	struct lk_zlist	 t_zowners;
	struct lk_zlist	 t_zhosts;
	size_t		 t_nlocks;
	size_t		 t_locks_peak;	/* most locks + t_nrlocks since reset */
	uint64_t	 t_over_gen;	/* one more at each call begun with
					   t_nlocks within max-locks */
	size_t		 t_nwaiters;
	size_t		 t_npending;
	size_t		 t_nshares;
	size_t		 t_nrlocks;	/* reclaimable */
	size_t		 t_nrshares;
	bool		 t_grace;	/* see GRACE AND RECLAIM */
	bool		 t_grace_closed; /* ending: reclaims refused */
	size_t		 t_grace_cursor; /* lk_grace_drop: next file bucket */
	uint64_t	 t_token;	/* last token issued */
	uint64_t	 t_mark;	/* generation for ow_mark/fi_mark */
	uint64_t	 t_wseq;	/* last waiter arrival number */
	uint64_t	 t_gseq;	/* last grant number (wa_gseq) */
	uint64_t	 t_sseq;	/* last share number (sh_seq) */
	size_t		 t_budget;	/* grants this call may still make */
	bool		 t_pass_nomem;	/* a grant pass of this call ran out
					   of memory (its file deferred) */
	struct lk_file	*t_defer;	/* files with grants pending, the
					   longest waiting first */
	struct lk_file	*t_defertail;	/* and the last of them */
	struct lk_lock	*t_spare;	/* reserved lock nodes, via lo_onext */
	size_t		 t_nspare;
	struct lk_slab	 t_lslab;	/* where lock nodes come from */
	struct lk_bnode	*t_bleaf;	/* free tree leaves */
	size_t		 t_nbleaf;
	struct lk_bnode	*t_bint;	/* free internal tree nodes */
	size_t		 t_nbint;
	/* result of the current call */
	struct lk_vec	 t_addl;	/* struct lk_lock * */
	struct lk_vec	 t_adds;	/* struct lk_share * */
	struct lk_vec	 t_added;	/* struct lk_record, built at finish */
	struct lk_vec	 t_removed;	/* struct lk_record */
	struct lk_vec	 t_granted;	/* struct lk_grant */
	struct lk_vec	 t_dropped;	/* void * */
	struct lk_result t_res;
	/* scratch */
	struct lk_vec	 t_tmp;		/* struct lk_lock * */
	struct lk_ownc	 t_ownc[LK_OWNC]; /* lk_own_all() */
	uint64_t	 t_ownc_clock;	/* its LRU stamps */
	struct lk_vec	 t_rtmp;	/* struct lk_lock *, reclaimable */
	struct lk_vec	 t_stack;	/* struct lk_owner * */
	struct lk_vec	 t_touched;	/* struct lk_file * */
	struct lk_vec	 t_weak;	/* struct lk_weak (deadlock.c) */
	struct lk_vec	 t_wcand;	/* struct lk_waiter * (deadlock.c) */
	struct lk_counts t_ct;		/* cumulative counters only */
};

/* table.c */
void	*lk_alloc(struct lk_table *t, size_t size);
void	*lk_realloc(struct lk_table *t, void *p, size_t size);
void	lk_free(struct lk_table *t, void *p);
bool	lk_vec_reserve(struct lk_table *t, struct lk_vec *v, size_t elsize,
	    size_t extra);
void	lk_vec_free(struct lk_table *t, struct lk_vec *v);
void	lk_begin(struct lk_table *t);
enum lk_status lk_finish(struct lk_table *t, enum lk_status st,
	    const struct lk_result **resp);
bool	lk_reserve(struct lk_table *t, size_t adds, size_t removes);
void	lk_drop_udata(struct lk_table *t, void *udata);
uint64_t lk_record_len(uint64_t start, uint64_t end);
enum lk_status lk_range_make(uint64_t start, uint64_t len,
	    struct lk_range *r);

/* obj.c */
uint64_t lk_hash_bytes(const struct lk_table *t, const void *p, size_t n,
	    uint64_t tweak);
bool	lk_hash_init(struct lk_table *t, struct lk_hash *h);
void	lk_hash_fini(struct lk_table *t, struct lk_hash *h);
struct lk_file *lk_file_find(struct lk_table *t, const void *fh, size_t len);
struct lk_file *lk_file_get(struct lk_table *t, const void *fh, size_t len);
struct lk_owner *lk_owner_find(struct lk_table *t, uint64_t host,
	    int32_t svid, bool share, const void *oh, size_t ohlen);
struct lk_owner *lk_owner_get(struct lk_table *t, uint64_t host,
	    int32_t svid, bool share, const void *oh, size_t ohlen);
struct lk_host *lk_host_find(const struct lk_table *t, uint64_t id);
void	lk_file_hold(struct lk_table *t, struct lk_file *f);
void	lk_file_drop(struct lk_table *t, struct lk_file *f);
void	lk_owner_hold(struct lk_table *t, struct lk_owner *o);
void	lk_owner_drop(struct lk_table *t, struct lk_owner *o);
void	lk_sweep(struct lk_table *t);
void	lk_objects_free(struct lk_table *t);

/* wqidx.c */
/*
 * Waiters in a row that a FIFO walk may pass over (not overlapping what it
 * looks for) before it asks the index where the next one is.
 */
#ifndef LK_WQ_RUN
#define LK_WQ_RUN	8
#endif
void	lk_wq_insert(struct lk_table *t, struct lk_file *f,
	    struct lk_waiter *w);
void	lk_wq_reinsert(struct lk_file *f, struct lk_waiter *w);
void	lk_wq_remove(struct lk_file *f, struct lk_waiter *w);
/*
 * The queued waiter on f with the index key (start, seq) among the
 * exclusive (excl) or the shared ones; NULL when it is not queued there
 * (any more).  O(log n).
 */
const struct lk_waiter *lk_wq_find(const struct lk_file *f, bool excl,
	    uint64_t start, uint64_t seq);
/*
 * The oldest queued waiter on f, exclusive (excl) or shared (shared), that
 * overlaps [s, e] and arrived after `after' and before `before' (wa_seq).
 */
struct lk_waiter *lk_wq_next(struct lk_table *t, const struct lk_file *f,
	    bool excl, bool shared, uint64_t s, uint64_t e, uint64_t after,
	    uint64_t before);
typedef int (*lk_wq_cb)(struct lk_waiter *, void *);
/* Each such waiter that arrived before `before', in start order. */
int	lk_wq_each(struct lk_table *t, struct lk_file *f, bool excl,
	    bool shared, uint64_t s, uint64_t e, uint64_t before, lk_wq_cb cb,
	    void *arg);
/*
 * Grow *h (holding r) to the smallest range that holds r and every such
 * waiter overlapping r, whenever it arrived: O(log n), no walk.
 */
void	lk_wq_hull(struct lk_table *t, const struct lk_file *f, bool excl,
	    bool shared, const struct lk_range *r, struct lk_range *h);
bool	lk_wq_check(const struct lk_file *f);

/* tree.c */
/* Make sure `adds' inserts can proceed without allocating. */
bool	lk_tree_reserve(struct lk_table *t, size_t adds);
void	lk_tree_pools_free(struct lk_table *t);
/* slab.c */
void	lk_slab_init(struct lk_slab *sl, size_t size);
void	*lk_slab_get(struct lk_table *t, struct lk_slab *sl);	/* zeroed */
void	lk_slab_put(struct lk_table *t, struct lk_slab *sl, void *p);
void	lk_slab_fini(struct lk_table *t, struct lk_slab *sl);
bool	lk_slab_check(const struct lk_slab *sl);

void	lk_tree_insert(struct lk_table *t, struct lk_bnode **root,
	    struct lk_lock *n);
void	lk_tree_remove(struct lk_table *t, struct lk_bnode **root,
	    struct lk_lock *n);
typedef int (*lk_tree_cb)(struct lk_lock *, void *);
int	lk_tree_overlap(struct lk_bnode *root, uint64_t s, uint64_t e,
	    lk_tree_cb cb, void *arg);
int	lk_tree_walk(struct lk_bnode *root, lk_tree_cb cb, void *arg);
struct lk_lock *lk_tree_first(struct lk_bnode *root);
struct lk_lock *lk_tree_next(struct lk_bnode *root, const struct lk_lock *l);
struct lk_lock *lk_tree_seek(struct lk_bnode *root, uint64_t start,
	    uintptr_t addr);
/* Free every node and every lock in the tree. */
void	lk_tree_free(struct lk_table *t, struct lk_bnode *root);
bool	lk_tree_check(const struct lk_bnode *root, size_t *count);

/* What lk_take_plan() decided. */
struct lk_plan {
	struct lk_lock	*pl_cover;	/* already held so: nothing to do */
	size_t		 pl_adds;	/* nodes to reserve */
	size_t		 pl_removes;
};

/* lock.c */
bool	lk_conflicts(bool excl1, bool excl2);
bool	lk_overlaps(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2);

/* Grow h (empty when r_start > r_end) to cover [s, e]. */
static inline void
lk_hull_add(struct lk_range *h, uint64_t s, uint64_t e)
{
	if (s < h->r_start)
		h->r_start = s;
	if (e > h->r_end)
		h->r_end = e;
}

void	lk_record_lock(struct lk_record *rc, const struct lk_lock *l);
void	lk_record_share(struct lk_record *rc, const struct lk_share *s);
struct lk_lock *lk_held_conflict(struct lk_file *f, struct lk_owner *o,
	    const struct lk_range *r, bool excl);
bool	lk_held_own(struct lk_file *f, const struct lk_owner *o,
	    const struct lk_range *r);
enum lk_status lk_take_delta(struct lk_table *t, const struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl,
	    long *deltap);
enum lk_status lk_own_collect(struct lk_table *t, const struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r);
enum lk_status lk_own_in(struct lk_table *t, const struct lk_owner *o,
	    struct lk_bnode *root, uint64_t s, uint64_t e, struct lk_vec *v);
enum lk_status lk_waiter_blocks(struct lk_table *t,
	    const struct lk_waiter *w, const struct lk_owner *o,
	    const struct lk_range *r, bool excl, uint64_t limit,
	    bool *blocksp);
enum lk_status lk_queued_conflict(struct lk_table *t,
	    const struct lk_file *f, const struct lk_owner *o,
	    const struct lk_range *r, bool excl, const struct lk_waiter *upto,
	    struct lk_waiter **wp);
enum lk_status lk_collect(struct lk_table *t, const struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl,
	    struct lk_lock **conflictp);
struct lk_lock *lk_covered(const struct lk_table *t, const struct lk_range *r,
	    bool excl);
enum lk_status lk_take_plan(const struct lk_table *t,
	    const struct lk_owner *o, const struct lk_range *r, bool excl,
	    bool limits, struct lk_plan *pl);
struct lk_lock *lk_take_apply(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl,
	    const struct lk_plan *pl);
enum lk_status lk_take(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl,
	    bool limits, struct lk_lock **coverp);
enum lk_status lk_free_range(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool limits);
void	lk_outside(const struct lk_lock *l, const struct lk_range *r,
	    struct lk_piece *p, size_t *np);
void	lk_lock_remove(struct lk_table *t, struct lk_lock *l);
void	lk_ownc_add(struct lk_table *t, struct lk_lock *l);
void	lk_ownc_remove(struct lk_table *t, struct lk_lock *l);
struct lk_lock *lk_lock_add(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_piece *p);

/* wait.c */
enum lk_status lk_deadlock_check(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl);
void	lk_deadlock_note(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r);
void	lk_deadlock_note_into(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl);
void	lk_deadlock_note_leave(struct lk_table *t,
	    const struct lk_waiter *w);
void	lk_deadlock_recheck(struct lk_table *t, uint64_t now);
enum lk_status lk_finish_at(struct lk_table *t, enum lk_status st,
	    uint64_t now, const struct lk_result **resp);
struct lk_waiter *lk_waiter_match(struct lk_owner *o, struct lk_file *f,
	    const struct lk_range *r, bool excl, bool granted);
enum lk_status lk_waiter_queue(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl,
	    void *udata, uint64_t now, long need);
void	lk_waiter_free(struct lk_table *t, struct lk_waiter *w);
/* undo.c */
bool	lk_prior_make(struct lk_table *t, const struct lk_range *r,
	    struct lk_prior **pp, uint32_t *np);
bool	lk_prior_reserve(struct lk_table *t, struct lk_owner *o,
	    const struct lk_file *f, const struct lk_range *r);
void	lk_prior_set(struct lk_owner *o, const struct lk_file *f,
	    const struct lk_range *r, bool excl);
enum lk_status lk_undo_grant(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, struct lk_waiter *w, uint64_t now);
void	lk_grant_pass(struct lk_table *t, struct lk_file *f, uint64_t now,
	    const struct lk_range *d);
void	lk_gain_span(struct lk_table *t, const struct lk_file *f,
	    const struct lk_owner *o, const struct lk_range *r, bool excl,
	    struct lk_range *h);
size_t	lk_pending_count(const struct lk_owner *o, const struct lk_file *f,
	    const struct lk_range *r);
void	lk_record_waiter(struct lk_record *rc, const struct lk_waiter *w);
void	lk_pending_end_overlap(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r,
	    struct lk_range *hull);
size_t	lk_queued_count(const struct lk_owner *, const struct lk_file *,
	    const struct lk_range *, bool overlap);
void	lk_queued_end(struct lk_table *, struct lk_owner *, struct lk_file *,
	    const struct lk_range *, bool overlap);

/* share.c */
void	lk_share_remove(struct lk_table *t, struct lk_share *s);
void	lk_share_add(struct lk_table *t, struct lk_share *s,
	    struct lk_owner *o, struct lk_file *f);
bool	lk_share_conflicts(const struct lk_share *s, uint8_t access,
	    uint8_t deny);
struct lk_share *lk_share_of(struct lk_share *list,
	    const struct lk_owner *o, const struct lk_file *f);

/* grace.c */
/* Which reclaimable lock lk_recl_find() looks for. */
enum lk_recl_q {
	LK_RQ_OWN,	/* o's, overlapping */
	LK_RQ_GRACE,	/* o's overlapping, or another owner's conflicting */
	LK_RQ_OTHER,	/* another owner's, conflicting */
	LK_RQ_HOST	/* another host's, conflicting */
};
bool	lk_recl_get(struct lk_table *t, struct lk_recl **rp);
void	lk_recl_put(struct lk_table *t, struct lk_recl **rp);
struct lk_lock *lk_recl_find(const struct lk_file *f, const struct lk_owner *o,
	    const struct lk_range *r, bool excl, enum lk_recl_q q);
struct lk_share *lk_rshare_find(const struct lk_file *f,
	    const struct lk_owner *o, uint8_t access, uint8_t deny,
	    enum lk_recl_q q);
enum lk_status lk_recl_collect(struct lk_table *t, const struct lk_owner *o,
	    const struct lk_file *f, const struct lk_range *r);
void	lk_recl_cut_plan(const struct lk_table *t, const struct lk_range *r,
	    struct lk_piece *p, size_t *np);
void	lk_recl_cut(struct lk_table *t, struct lk_owner *o, struct lk_file *f,
	    const struct lk_piece *p, size_t np);
enum lk_status lk_recl_lock_check(struct lk_table *t, struct lk_owner *o,
	    struct lk_file *f, const struct lk_range *r, bool excl);
void	lk_file_recl_clear(struct lk_table *t, struct lk_file *f);

/* release.c */
void	lk_file_touch(struct lk_table *t, struct lk_file *f, uint64_t s,
	    uint64_t e);
void	lk_touched_grant(struct lk_table *t, uint64_t now);

#endif /* NLMD_LOCKCORE_LK_IMPL_H */
