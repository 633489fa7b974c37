/*
 * obj.c - files, owners and hosts: hashing, interning, reference counts,
 * zombies (see lk_impl.h, LIFETIME), and freeing everything at destroy.
 *
 * The hash tables are chained, power-of-two sized, and double when the
 * load reaches 1.  A failed resize is ignored: the table stays correct,
 * only chains get longer, so inserting never fails once the object exists.
 */
#include "lockcore.h"

#include <stdlib.h>
#include <string.h>

#include "lk_impl.h"

/* ow_ohlen is a uint16_t. */
_Static_assert(LK_OH_MAX <= UINT16_MAX, "LK_OH_MAX does not fit ow_ohlen");

/* Domains of the keyed hash (tweaks): files, owners, hosts. */
#define LK_SEED_FILE	0x6a09e667f3bcc908ULL
#define LK_SEED_OWNER	0xbb67ae8584caa73bULL
#define LK_SEED_HOST	0x3c6ef372fe94f82bULL

static uint64_t
lk_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* n client-chosen bytes, hashed under the table's key. */
uint64_t
lk_hash_bytes(const struct lk_table *t, const void *p, size_t n,
    uint64_t tweak)
{
	return lk_siphash(t->t_cf.cf_hash_key, tweak, p, n);
}

bool
lk_hash_init(struct lk_table *t, struct lk_hash *h)
{
	h->h_tab = lk_alloc(t, LK_HASH_MIN * sizeof(*h->h_tab));
	h->h_mask = LK_HASH_MIN - 1;
	h->h_count = 0;
	return h->h_tab != NULL;
}

void
lk_hash_fini(struct lk_table *t, struct lk_hash *h)
{
	lk_free(t, h->h_tab);
	h->h_tab = NULL;
}

static void
lk_hash_grow(struct lk_table *t, struct lk_hash *h)
{
	struct lk_obj **tab, *ob, *next;
	size_t i, size = (h->h_mask + 1) * 2;

	if (size > SIZE_MAX / sizeof(*tab) ||
	    (tab = lk_alloc(t, size * sizeof(*tab))) == NULL)
		return;
	for (i = 0; i <= h->h_mask; i++) {
		for (ob = h->h_tab[i]; ob != NULL; ob = next) {
			next = ob->ob_next;
			ob->ob_next = tab[ob->ob_hash & (size - 1)];
			tab[ob->ob_hash & (size - 1)] = ob;
		}
	}
	lk_free(t, h->h_tab);
	h->h_tab = tab;
	h->h_mask = size - 1;
}

static void
lk_hash_insert(struct lk_table *t, struct lk_hash *h, struct lk_obj *ob)
{
	struct lk_obj **b;

	if (h->h_count > h->h_mask)
		lk_hash_grow(t, h);
	b = &h->h_tab[ob->ob_hash & h->h_mask];
	ob->ob_next = *b;
	*b = ob;
	h->h_count++;
}

static void
lk_hash_remove(struct lk_hash *h, struct lk_obj *ob)
{
	struct lk_obj **pp = &h->h_tab[ob->ob_hash & h->h_mask];

	while (*pp != ob)
		pp = &(*pp)->ob_next;
	*pp = ob->ob_next;
	h->h_count--;
}

static void
lk_zombie_add(struct lk_zlist *z, struct lk_obj *ob)
{
	ob->ob_zprev = NULL;
	ob->ob_znext = z->z_head;
	if (z->z_head != NULL)
		z->z_head->ob_zprev = ob;
	z->z_head = ob;
	z->z_count++;
}

static void
lk_zombie_del(struct lk_zlist *z, struct lk_obj *ob)
{
	if (ob->ob_zprev != NULL)
		ob->ob_zprev->ob_znext = ob->ob_znext;
	else
		z->z_head = ob->ob_znext;
	if (ob->ob_znext != NULL)
		ob->ob_znext->ob_zprev = ob->ob_zprev;
	z->z_count--;
}

static struct lk_file *
lk_file_lookup(struct lk_table *t, const void *fh, size_t len, uint64_t h)
{
	struct lk_obj *ob;
	struct lk_file *f;

	for (ob = t->t_files.h_tab[h & t->t_files.h_mask]; ob != NULL;
	    ob = ob->ob_next) {
		f = (struct lk_file *)ob;
		if (ob->ob_hash == h && f->fi_fhlen == len &&
		    memcmp(f->fi_fh, fh, len) == 0)
			return f;
	}
	return NULL;
}

struct lk_file *
lk_file_find(struct lk_table *t, const void *fh, size_t len)
{
	return lk_file_lookup(t, fh, len, lk_hash_bytes(t, fh, len, LK_SEED_FILE));
}

/* Find or create (as a zombie, refs 0) the file; NULL when out of memory. */
struct lk_file *
lk_file_get(struct lk_table *t, const void *fh, size_t len)
{
	uint64_t h = lk_hash_bytes(t, fh, len, LK_SEED_FILE);
	struct lk_file *f;

	if ((f = lk_file_lookup(t, fh, len, h)) != NULL)
		return f;
	if ((f = lk_alloc(t, sizeof(*f) + len)) == NULL)
		return NULL;
	memcpy(f->fi_fh, fh, len);
	f->fi_fhlen = len;
	f->fi_ob.ob_hash = h;
	lk_hash_insert(t, &t->t_files, &f->fi_ob);
	lk_zombie_add(&t->t_zfiles, &f->fi_ob);
	return f;
}

static uint64_t
lk_owner_hash(const struct lk_table *t, uint64_t host, int32_t svid,
    bool share, const void *oh, size_t ohlen)
{
	uint64_t tweak = lk_mix(host ^ LK_SEED_OWNER) ^
	    ((uint64_t)(uint32_t)svid << 1 | share);

	return lk_hash_bytes(t, oh, ohlen, tweak);
}

static struct lk_owner *
lk_owner_lookup(struct lk_table *t, uint64_t host, int32_t svid, bool share,
    const void *oh, size_t ohlen, uint64_t h)
{
	struct lk_obj *ob;
	struct lk_owner *o;

	for (ob = t->t_owners.h_tab[h & t->t_owners.h_mask]; ob != NULL;
	    ob = ob->ob_next) {
		o = (struct lk_owner *)ob;
		if (ob->ob_hash == h && o->ow_host->ho_id == host &&
		    o->ow_svid == svid && o->ow_share == share &&
		    o->ow_ohlen == ohlen &&
		    (ohlen == 0 || memcmp(o->ow_oh, oh, ohlen) == 0))
			return o;
	}
	return NULL;
}

struct lk_owner *
lk_owner_find(struct lk_table *t, uint64_t host, int32_t svid, bool share,
    const void *oh, size_t ohlen)
{
	return lk_owner_lookup(t, host, svid, share, oh, ohlen,
	    lk_owner_hash(t, host, svid, share, oh, ohlen));
}

struct lk_host *
lk_host_find(const struct lk_table *t, uint64_t id)
{
	uint64_t h = lk_mix(id ^ LK_SEED_HOST);
	struct lk_obj *ob;

	for (ob = t->t_hosts.h_tab[h & t->t_hosts.h_mask]; ob != NULL;
	    ob = ob->ob_next)
		if (((struct lk_host *)ob)->ho_id == id)
			return (struct lk_host *)ob;
	return NULL;
}

static struct lk_host *
lk_host_get(struct lk_table *t, uint64_t id)
{
	struct lk_host *ho;

	if ((ho = lk_host_find(t, id)) != NULL)
		return ho;
	if ((ho = lk_alloc(t, sizeof(*ho))) == NULL)
		return NULL;
	ho->ho_id = id;
	ho->ho_ob.ob_hash = lk_mix(id ^ LK_SEED_HOST);
	lk_hash_insert(t, &t->t_hosts, &ho->ho_ob);
	lk_zombie_add(&t->t_zhosts, &ho->ho_ob);
	return ho;
}

/* Find or create (as a zombie) the owner and its host; NULL on ENOMEM. */
struct lk_owner *
lk_owner_get(struct lk_table *t, uint64_t host, int32_t svid, bool share,
    const void *oh, size_t ohlen)
{
	uint64_t h = lk_owner_hash(t, host, svid, share, oh, ohlen);
	struct lk_owner *o;
	struct lk_host *ho;

	if ((o = lk_owner_lookup(t, host, svid, share, oh, ohlen, h)) != NULL)
		return o;
	if ((ho = lk_host_get(t, host)) == NULL)
		return NULL;
	if ((o = lk_alloc(t, sizeof(*o) + ohlen)) == NULL)
		return NULL;
	/* An empty owner handle may come as NULL (memcpy wants non-NULL). */
	if (ohlen > 0)
		memcpy(o->ow_oh, oh, ohlen);
	o->ow_ohlen = (uint16_t)ohlen;
	o->ow_svid = svid;
	o->ow_share = share;
	o->ow_host = ho;
	o->ow_hnext = ho->ho_owners;
	if (ho->ho_owners != NULL)
		ho->ho_owners->ow_hprev = o;
	ho->ho_owners = o;
	o->ow_ob.ob_hash = h;
	lk_hash_insert(t, &t->t_owners, &o->ow_ob);
	lk_zombie_add(&t->t_zowners, &o->ow_ob);
	return o;
}

void
lk_file_hold(struct lk_table *t, struct lk_file *f)
{
	if (f->fi_ob.ob_refs++ == 0)
		lk_zombie_del(&t->t_zfiles, &f->fi_ob);
}

void
lk_file_drop(struct lk_table *t, struct lk_file *f)
{
	if (--f->fi_ob.ob_refs == 0)
		lk_zombie_add(&t->t_zfiles, &f->fi_ob);
}

void
lk_owner_hold(struct lk_table *t, struct lk_owner *o)
{
	struct lk_host *ho = o->ow_host;

	if (o->ow_ob.ob_refs++ != 0)
		return;
	lk_zombie_del(&t->t_zowners, &o->ow_ob);
	ho->ho_nowners++;
	if (ho->ho_ob.ob_refs++ == 0)
		lk_zombie_del(&t->t_zhosts, &ho->ho_ob);
}

void
lk_owner_drop(struct lk_table *t, struct lk_owner *o)
{
	struct lk_host *ho = o->ow_host;

	if (--o->ow_ob.ob_refs != 0)
		return;
	lk_zombie_add(&t->t_zowners, &o->ow_ob);
	ho->ho_nowners--;
	if (--ho->ho_ob.ob_refs == 0)
		lk_zombie_add(&t->t_zhosts, &ho->ho_ob);
}

static void
lk_owner_unlink(struct lk_owner *o)
{
	struct lk_host *ho = o->ow_host;

	if (o->ow_hprev != NULL)
		o->ow_hprev->ow_hnext = o->ow_hnext;
	else
		ho->ho_owners = o->ow_hnext;
	if (o->ow_hnext != NULL)
		o->ow_hnext->ow_hprev = o->ow_hprev;
}

/*
 * Free zombies.  Owners go first: a zombie host (no live owner) can still
 * list zombie owners, and is freed only once that list is empty.
 */
void
lk_sweep(struct lk_table *t)
{
	struct lk_obj *ob;

	while ((ob = t->t_zowners.z_head) != NULL) {
		lk_zombie_del(&t->t_zowners, ob);
		lk_owner_unlink((struct lk_owner *)ob);
		lk_hash_remove(&t->t_owners, ob);
		lk_free(t, ob);
	}
	while ((ob = t->t_zfiles.z_head) != NULL) {
		lk_zombie_del(&t->t_zfiles, ob);
		lk_hash_remove(&t->t_files, ob);
		lk_free(t, ob);
	}
	while ((ob = t->t_zhosts.z_head) != NULL) {
		lk_zombie_del(&t->t_zhosts, ob);
		lk_hash_remove(&t->t_hosts, ob);
		lk_free(t, ob);
	}
}

static void
lk_file_free_contents(struct lk_table *t, struct lk_file *f)
{
	struct lk_share *s;

	lk_tree_free(t, f->fi_root);
	while ((s = f->fi_shares) != NULL) {
		f->fi_shares = s->sh_fnext;
		lk_free(t, s);
	}
	if (f->fi_recl == NULL)
		return;
	lk_tree_free(t, f->fi_recl->re_root);
	while ((s = f->fi_recl->re_shares) != NULL) {
		f->fi_recl->re_shares = s->sh_fnext;
		lk_free(t, s);
	}
	lk_free(t, f->fi_recl);
}

static void
lk_owner_free_contents(struct lk_table *t, struct lk_owner *o)
{
	struct lk_waiter *w;

	while ((w = o->ow_waiters) != NULL) {
		o->ow_waiters = w->wa_onext;
		lk_free(t, w->wa_prior);
		lk_free(t, w);
	}
	/* Its reclaimable records went with their files. */
	lk_free(t, o->ow_recl);
}

/* Free every file, owner and host with what they own (destroy only). */
void
lk_objects_free(struct lk_table *t)
{
	struct lk_hash *hs[3] = { &t->t_files, &t->t_owners, &t->t_hosts };
	struct lk_obj *ob, *next;
	size_t i, k;

	for (k = 0; k < 3; k++) {
		if (hs[k]->h_tab == NULL)
			continue;
		for (i = 0; i <= hs[k]->h_mask; i++) {
			for (ob = hs[k]->h_tab[i]; ob != NULL; ob = next) {
				next = ob->ob_next;
				if (k == 0)
					lk_file_free_contents(t,
					    (struct lk_file *)ob);
				else if (k == 1)
					lk_owner_free_contents(t,
					    (struct lk_owner *)ob);
				lk_free(t, ob);
			}
			hs[k]->h_tab[i] = NULL;
		}
		hs[k]->h_count = 0;
	}
}
