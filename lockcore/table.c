/*
 * table.c - the lock table object, per-call result bookkeeping, ranges,
 * status strings and counts.
 *
 * Every public entry point that reports a result is bracketed by
 * lk_begin() (forget the previous result, maybe sweep zombies) and
 * lk_finish() (turn surviving added nodes into records, publish the
 * result).  See lk_impl.h, CHANGE SETS.
 */
#include "lockcore.h"

#include <stdlib.h>
#include <string.h>

#include "lk_impl.h"

void
lk_config_init(struct lk_config *cf)
{
	memset(cf, 0, sizeof(*cf));
	cf->cf_policy = LK_POLICY_FIFO;
}

static void *
lk_libc_malloc(size_t size, void *arg)
{
	(void)arg;
	return malloc(size);
}

static void *
lk_libc_realloc(void *p, size_t size, void *arg)
{
	(void)arg;
	return realloc(p, size);
}

static void
lk_libc_free(void *p, void *arg)
{
	(void)arg;
	free(p);
}

static const struct lk_allocator lk_libc = {
	lk_libc_malloc, lk_libc_realloc, lk_libc_free, NULL
};

/* Zeroed memory from the table's allocator. */
void *
lk_alloc(struct lk_table *t, size_t size)
{
	void *p;

	if ((p = t->t_al.al_malloc(size, t->t_al.al_arg)) != NULL)
		memset(p, 0, size);
	return p;
}

void *
lk_realloc(struct lk_table *t, void *p, size_t size)
{
	return t->t_al.al_realloc(p, size, t->t_al.al_arg);
}

void
lk_free(struct lk_table *t, void *p)
{
	if (p != NULL)
		t->t_al.al_free(p, t->t_al.al_arg);
}

struct lk_table *
lk_table_new(const struct lk_config *cf)
{
	const struct lk_allocator *al;
	struct lk_table *t;

	al = cf != NULL && cf->cf_alloc != NULL ? cf->cf_alloc : &lk_libc;
	if ((t = al->al_malloc(sizeof(*t), al->al_arg)) == NULL)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->t_al = *al;
	if (cf != NULL)
		t->t_cf = *cf;
	else
		lk_config_init(&t->t_cf);
	t->t_token = t->t_cf.cf_token_seed;
	lk_slab_init(&t->t_lslab, sizeof(struct lk_lock));
	if (t->t_cf.cf_epoch > LK_EPOCH_MAX)
		goto fail;
	if (!lk_hash_init(t, &t->t_files) || !lk_hash_init(t, &t->t_owners) ||
	    !lk_hash_init(t, &t->t_hosts))
		goto fail;
	return t;
fail:
	lk_table_destroy(t);
	return NULL;
}

void
lk_table_destroy(struct lk_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	lk_objects_free(t);
	lk_hash_fini(t, &t->t_files);
	lk_hash_fini(t, &t->t_owners);
	lk_hash_fini(t, &t->t_hosts);
	lk_slab_fini(t, &t->t_lslab);	/* every lock node, spares too */
	lk_tree_pools_free(t);
	lk_vec_free(t, &t->t_addl);
	lk_vec_free(t, &t->t_adds);
	lk_vec_free(t, &t->t_added);
	lk_vec_free(t, &t->t_removed);
	lk_vec_free(t, &t->t_granted);
	lk_vec_free(t, &t->t_dropped);
	lk_vec_free(t, &t->t_tmp);
	for (i = 0; i < LK_OWNC; i++)
		lk_vec_free(t, &t->t_ownc[i].oc_v);
	lk_vec_free(t, &t->t_rtmp);
	lk_vec_free(t, &t->t_stack);
	lk_vec_free(t, &t->t_touched);
	lk_vec_free(t, &t->t_weak);
	lk_vec_free(t, &t->t_wcand);
	lk_free(t, t);
}

const char *
lk_strerror(enum lk_status st)
{
	switch (st) {
	case LK_OK:
		return "granted";
	case LK_DENIED:
		return "conflicting lock or share";
	case LK_BLOCKED:
		return "blocked, queued";
	case LK_DEADLOCK:
		return "deadlock";
	case LK_NOLOCKS:
		return "lock, waiter or share limit reached";
	case LK_NOMEM:
		return "out of memory";
	case LK_RANGE:
		return "range beyond 2^64";
	case LK_NOTFOUND:
		return "no such waiter or grant";
	case LK_INVAL:
		return "invalid argument";
	case LK_GRACE:
		return "grace period: a lock or share is still to be reclaimed";
	case LK_NOGRACE:
		return "reclaim outside the grace period";
	}
	return "unknown lockcore status";
}

bool
lk_vec_reserve(struct lk_table *t, struct lk_vec *v, size_t elsize,
    size_t extra)
{
	size_t cap;
	void *p;

	if (v->v_cap - v->v_len >= extra)
		return true;
	if (extra > (SIZE_MAX / elsize) - v->v_len)
		return false;
	cap = v->v_cap ? v->v_cap : 16;
	while (cap - v->v_len < extra)
		cap = cap > SIZE_MAX / elsize / 2 ? v->v_len + extra : cap * 2;
	if ((p = lk_realloc(t, v->v_data, cap * elsize)) == NULL)
		return false;
	v->v_data = p;
	v->v_cap = cap;
	return true;
}

void
lk_vec_free(struct lk_table *t, struct lk_vec *v)
{
	lk_free(t, v->v_data);
	memset(v, 0, sizeof(*v));
}

/*
 * A result vector that one large call grew (an UNLOCK of a range over
 * 62,500 locks left 5.5 MB in t_removed) is freed when the next call
 * begins: kept, it would hold the peak for good.  Ordinary calls stay
 * far below LK_VEC_KEEP_BYTES and keep theirs.
 */
static void
lk_vec_trim(struct lk_table *t, struct lk_vec *v, size_t elsize)
{
	if (v->v_cap > LK_VEC_KEEP_BYTES / elsize)
		lk_vec_free(t, v);
}

/*
 * Start a call: the previous result dies here (its added nodes stop being
 * fresh; vectors it grew past LK_VEC_KEEP_BYTES are freed), and surplus
 * zombies are freed.
 */
void
lk_begin(struct lk_table *t)
{
	struct lk_lock **ln = t->t_addl.v_data;
	struct lk_share **sn = t->t_adds.v_data;
	size_t i;

	for (i = 0; i < t->t_addl.v_len; i++)
		ln[i]->lo_fresh = 0;
	for (i = 0; i < t->t_adds.v_len; i++)
		sn[i]->sh_fresh = 0;
	t->t_addl.v_len = 0;
	t->t_adds.v_len = 0;
	t->t_added.v_len = 0;
	t->t_removed.v_len = 0;
	t->t_granted.v_len = 0;
	t->t_dropped.v_len = 0;
	t->t_weak.v_len = 0;
	/* Within max-locks: the hosts' split credits start again. */
	if (t->t_cf.cf_max_locks == 0 || t->t_nlocks <= t->t_cf.cf_max_locks)
		t->t_over_gen++;
	/* Owners and files may be freed below: forget whose locks t_ownc has. */
	for (i = 0; i < LK_OWNC; i++) {
		t->t_ownc[i].oc_o = NULL;
		lk_vec_trim(t, &t->t_ownc[i].oc_v, sizeof(struct lk_lock *));
	}
	lk_vec_trim(t, &t->t_addl, sizeof(struct lk_lock *));
	lk_vec_trim(t, &t->t_adds, sizeof(struct lk_share *));
	lk_vec_trim(t, &t->t_added, sizeof(struct lk_record));
	lk_vec_trim(t, &t->t_removed, sizeof(struct lk_record));
	lk_vec_trim(t, &t->t_granted, sizeof(struct lk_grant));
	lk_vec_trim(t, &t->t_dropped, sizeof(void *));
	lk_vec_trim(t, &t->t_weak, sizeof(struct lk_weak));
	memset(&t->t_res, 0, sizeof(t->t_res));
	/* Every public call begins here: the only place the budget is set. */
	t->t_pass_nomem = false;
	t->t_budget = t->t_cf.cf_grant_budget > 0 ? t->t_cf.cf_grant_budget :
	    SIZE_MAX;
	if (t->t_zfiles.z_count + t->t_zowners.z_count +
	    t->t_zhosts.z_count > LK_ZOMBIE_KEEP)
		lk_sweep(t);
}

/*
 * End a call: build the added records (capacity was reserved together with
 * the nodes, so this cannot fail) and publish the result.
 */
enum lk_status
lk_finish(struct lk_table *t, enum lk_status st,
    const struct lk_result **resp)
{
	struct lk_lock **ln = t->t_addl.v_data;
	struct lk_share **sn = t->t_adds.v_data;
	struct lk_record *rc = t->t_added.v_data;
	size_t i, n = 0;

	for (i = 0; i < t->t_addl.v_len; i++)
		lk_record_lock(&rc[n++], ln[i]);
	for (i = 0; i < t->t_adds.v_len; i++)
		lk_record_share(&rc[n++], sn[i]);
	t->t_added.v_len = n;
	t->t_res.rs_added = rc;
	t->t_res.rs_nadded = n;
	t->t_res.rs_removed = t->t_removed.v_data;
	t->t_res.rs_nremoved = t->t_removed.v_len;
	t->t_res.rs_granted = t->t_granted.v_data;
	t->t_res.rs_ngranted = t->t_granted.v_len;
	t->t_res.rs_dropped = t->t_dropped.v_data;
	t->t_res.rs_ndropped = t->t_dropped.v_len;
	if (resp != NULL)
		*resp = &t->t_res;
	return st;
}

/*
 * Make sure `adds` more lock or share nodes (and their records) and
 * `removes` more removed records can be produced without failing.
 */
bool
lk_reserve(struct lk_table *t, size_t adds, size_t removes)
{
	struct lk_lock *l;
	size_t total;

	while (t->t_nspare < adds) {
		if ((l = lk_slab_get(t, &t->t_lslab)) == NULL)
			return false;
		l->lo_onext = t->t_spare;
		t->t_spare = l;
		t->t_nspare++;
	}
	if (!lk_tree_reserve(t, adds))
		return false;
	total = t->t_addl.v_len + t->t_adds.v_len + adds;
	if (t->t_addl.v_len + adds > LK_ADDIDX_MAX)
		return false;	/* lo_addidx would not hold it */
	if (!lk_vec_reserve(t, &t->t_addl, sizeof(struct lk_lock *), adds) ||
	    !lk_vec_reserve(t, &t->t_adds, sizeof(struct lk_share *), adds) ||
	    !lk_vec_reserve(t, &t->t_added, sizeof(struct lk_record), total) ||
	    !lk_vec_reserve(t, &t->t_removed, sizeof(struct lk_record), removes))
		return false;
	return true;
}

/* Hand a udata back to the caller.  Capacity reserved by the caller. */
void
lk_drop_udata(struct lk_table *t, void *udata)
{
	void **d = t->t_dropped.v_data;

	d[t->t_dropped.v_len++] = udata;
}

/* Wire length of [start, end]: 0 when the range runs to UINT64_MAX. */
uint64_t
lk_record_len(uint64_t start, uint64_t end)
{
	return end == UINT64_MAX ? 0 : end - start + 1;
}

/*
 * Validate (start, len) and turn it into first/last byte without ever
 * computing start + len: the last byte is start + (len - 1), which fits
 * iff len - 1 <= UINT64_MAX - start.
 */
enum lk_status
lk_range_make(uint64_t start, uint64_t len, struct lk_range *r)
{
	r->r_start = start;
	if (len == 0) {
		r->r_end = UINT64_MAX;
		return LK_OK;
	}
	if (len - 1 > UINT64_MAX - start)
		return LK_RANGE;
	r->r_end = start + (len - 1);
	return LK_OK;
}

void
lk_table_counts(const struct lk_table *t, struct lk_counts *ct)
{
	*ct = t->t_ct;
	ct->ct_files = t->t_files.h_count - t->t_zfiles.z_count;
	ct->ct_owners = t->t_owners.h_count - t->t_zowners.z_count;
	ct->ct_hosts = t->t_hosts.h_count - t->t_zhosts.z_count;
	ct->ct_locks = t->t_nlocks;
	ct->ct_shares = t->t_nshares;
	ct->ct_waiters = t->t_nwaiters;
	ct->ct_pending = t->t_npending;
	ct->ct_rlocks = t->t_nrlocks;
	ct->ct_rshares = t->t_nrshares;
	ct->ct_grace = t->t_grace;
	ct->ct_last_token = t->t_token;
	ct->ct_last_share = t->t_sseq;
	ct->ct_locks_peak = t->t_locks_peak;
}

void
lk_table_peak_reset(struct lk_table *t)
{
	t->t_locks_peak = t->t_nlocks + t->t_nrlocks;
}

void
lk_table_trim(struct lk_table *t)
{
	lk_begin(t);
}
