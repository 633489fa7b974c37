/*
 * store_fake.c - db/store.h in memory, for unit tests (see fakes.h).
 *
 * Records are kept in plain arrays; a staged operation is a copy of its
 * record plus "put" or "delete".  store_seal() marks what was staged as
 * sealed and, unless the test deferred commits (fake_store_defer()),
 * commits it at once: applied in order, the committed number raised, the
 * eventfd written -- as the real committer does, only sooner.  Deferred,
 * the sealed turns commit all at once (fake_store_complete()) or one at a
 * time (fake_store_complete_one()), as the committer's runs may.
 * Keys are those of the real store: locks (host, svid, oh, fh, start),
 * shares (host, oh, fh), hosts by id.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/types.h>
#include <unistd.h>

#include "fakes.h"

enum fk_op { FK_PUT, FK_DEL, FK_HOST_PUT, FK_HOST_DEL, FK_TOKEN, FK_NEXT,
	FK_EPOCH };

struct fk_rec {
	struct lk_record r;
	uint8_t		 oh[LK_OH_MAX];
	uint8_t		 fh[LK_FH_MAX];
	char		 name[STORE_NAME_MAX + 1];
	struct store_host h;
};

struct fk_staged {
	enum fk_op	 op;
	uint64_t	 val;
	struct fk_rec	 rec;
};

struct store {
	struct fk_rec	*recs;		/* committed locks and shares */
	size_t		 nrecs, caprecs;
	struct fk_rec	*hosts;
	size_t		 nhosts, caphosts;
	struct fk_staged *staged;	/* sealed ones first */
	size_t		 nstaged, capstaged;
	size_t		 nsealed;	/* staged[0..nsealed) are sealed */
	size_t		*ends;		/* per sealed turn not committed: */
	size_t		 nends, capends; /* its staged[0..end) */
	uint64_t	 seq_sealed, seq_committed;
	enum store_status cerr;		/* latched commit failure */
	bool		 defer;
	int		 efd;
	uint64_t	 epoch, token, next_host;
	uint64_t	 commits, flushes;
	bool		 flush;
	bool		 fail_commit;
};

static struct store fk;

struct store *
fake_store(void)
{
	return &fk;
}

void
fake_store_reset(void)
{
	int efd = fk.efd;

	free(fk.recs);
	free(fk.hosts);
	free(fk.staged);
	free(fk.ends);
	memset(&fk, 0, sizeof(fk));
	fk.efd = efd;
}

static void
fk_copy(struct fk_rec *d, const struct lk_record *r)
{
	memset(d, 0, sizeof(*d));
	d->r = *r;
	memcpy(d->oh, r->rc_oh, r->rc_ohlen);
	memcpy(d->fh, r->rc_fh, r->rc_fhlen);
	d->r.rc_oh = d->oh;
	d->r.rc_fh = d->fh;
	d->r.rc_reclaim = 0;
}

static bool
fk_same_key(const struct lk_record *a, const struct lk_record *b)
{
	/* The cheap fields first: tests hold thousands of records. */
	if (a->rc_kind != b->rc_kind || a->rc_host != b->rc_host ||
	    a->rc_ohlen != b->rc_ohlen || a->rc_fhlen != b->rc_fhlen)
		return false;
	if (a->rc_kind == LK_REC_LOCK && (a->rc_svid != b->rc_svid ||
	    a->rc_start != b->rc_start))
		return false;
	return memcmp(a->rc_oh, b->rc_oh, a->rc_ohlen) == 0 &&
	    memcmp(a->rc_fh, b->rc_fh, a->rc_fhlen) == 0;
}

/* Make room for one more element in *vp (n used, *capp allocated). */
static void *
fk_grow(void *v, size_t n, size_t *capp, size_t elsize)
{
	if (n < *capp)
		return v;
	*capp = *capp == 0 ? 16 : *capp * 2;
	if ((v = realloc(v, *capp * elsize)) == NULL)
		abort();
	return v;
}

static ssize_t
fk_find(const struct lk_record *r)
{
	size_t i;

	for (i = 0; i < fk.nrecs; i++)
		if (fk_same_key(&fk.recs[i].r, r))
			return (ssize_t)i;
	return -1;
}

static void
fk_rec_fix(struct fk_rec *d)
{
	d->r.rc_oh = d->oh;
	d->r.rc_fh = d->fh;
	d->h.sh_name = d->name;
}

static void
fk_apply_put(const struct fk_rec *src)
{
	ssize_t i = fk_find(&src->r);

	if (i < 0) {
		size_t j;

		struct fk_rec *old = fk.recs;

		fk.recs = fk_grow(fk.recs, fk.nrecs, &fk.caprecs,
		    sizeof(*fk.recs));
		/* Moved: every record points into itself again. */
		for (j = 0; old != fk.recs && j < fk.nrecs; j++)
			fk_rec_fix(&fk.recs[j]);
		i = (ssize_t)fk.nrecs++;
	}
	fk.recs[i] = *src;
	fk_rec_fix(&fk.recs[i]);
}

static void
fk_apply_del(const struct fk_rec *src)
{
	ssize_t i = fk_find(&src->r);

	if (i < 0)
		return;
	fk.recs[i] = fk.recs[--fk.nrecs];
	fk_rec_fix(&fk.recs[i]);
}

static ssize_t
fk_host_find(uint64_t id)
{
	size_t i;

	for (i = 0; i < fk.nhosts; i++)
		if (fk.hosts[i].h.sh_id == id)
			return (ssize_t)i;
	return -1;
}

static void
fk_apply_host(const struct fk_staged *s)
{
	ssize_t i = fk_host_find(s->op == FK_HOST_PUT ? s->rec.h.sh_id :
	    s->val);

	if (s->op == FK_HOST_DEL) {
		if (i >= 0) {
			fk.hosts[i] = fk.hosts[--fk.nhosts];
			fk_rec_fix(&fk.hosts[i]);
		}
		return;
	}
	if (i < 0) {
		size_t j;

		fk.hosts = fk_grow(fk.hosts, fk.nhosts, &fk.caphosts,
		    sizeof(*fk.hosts));
		for (j = 0; j < fk.nhosts; j++)
			fk_rec_fix(&fk.hosts[j]);
		i = (ssize_t)fk.nhosts++;
	}
	fk.hosts[i] = s->rec;
	fk_rec_fix(&fk.hosts[i]);
}

static struct fk_staged *
fk_stage(enum fk_op op)
{
	struct fk_staged *s;

	fk.staged = fk_grow(fk.staged, fk.nstaged, &fk.capstaged,
	    sizeof(*fk.staged));
	s = &fk.staged[fk.nstaged++];
	memset(s, 0, sizeof(*s));
	s->op = op;
	return s;
}

const char *
store_strerror(enum store_status st)
{
	return st == STORE_OK ? "ok" : "fake store error";
}

const char *
store_last_error(struct store *st)
{
	(void)st;
	return "injected by the test";
}

enum store_status
store_open(const struct store_config *cf, struct store **stp, char *err,
    size_t errlen)
{
	(void)cf;
	(void)err;
	(void)errlen;
	*stp = &fk;
	return STORE_OK;
}

void
store_close(struct store *st)
{
	(void)st;
	fk.nstaged = fk.nsealed;
}

enum store_status
store_epoch_begin(struct store *st, uint64_t min_epoch, uint64_t *epochp,
    char *err, size_t errlen)
{
	(void)st;
	(void)err;
	(void)errlen;
	fk.epoch = fk.epoch + 1 > min_epoch ? fk.epoch + 1 : min_epoch;
	*epochp = fk.epoch;
	return STORE_OK;
}

void
store_info(const struct store *st, struct store_info *si)
{
	(void)st;
	memset(si, 0, sizeof(*si));
	si->si_epoch = fk.epoch;
	si->si_token = fk.token;
	si->si_next_host = fk.next_host;
	si->si_commits = fk.commits;
	si->si_flushes = fk.flushes;
}

enum store_status
store_hosts_load(struct store *st, store_host_cb *cb, void *arg, char *err,
    size_t errlen)
{
	size_t i;

	(void)st;
	(void)err;
	(void)errlen;
	for (i = 0; i < fk.nhosts; i++)
		if (cb(&fk.hosts[i].h, arg) != 0)
			return STORE_INVAL;
	return STORE_OK;
}

enum store_status
store_records_load(struct store *st, store_record_cb *cb, void *arg,
    char *err, size_t errlen)
{
	size_t i;
	int kind;

	(void)st;
	(void)err;
	(void)errlen;
	for (kind = LK_REC_LOCK; kind <= LK_REC_SHARE; kind++)
		for (i = 0; i < fk.nrecs; i++)
			if (fk.recs[i].r.rc_kind == kind &&
			    cb(&fk.recs[i].r, arg) != 0)
				return STORE_INVAL;
	return STORE_OK;
}

enum store_status
store_put_record(struct store *st, const struct lk_record *rc)
{
	(void)st;
	fk_copy(&fk_stage(FK_PUT)->rec, rc);
	return STORE_OK;
}

enum store_status
store_del_record(struct store *st, const struct lk_record *rc)
{
	(void)st;
	fk_copy(&fk_stage(FK_DEL)->rec, rc);
	return STORE_OK;
}

enum store_status
store_apply(struct store *st, const struct lk_result *res)
{
	size_t i;

	for (i = 0; i < res->rs_nremoved; i++)
		(void)store_del_record(st, &res->rs_removed[i]);
	for (i = 0; i < res->rs_nadded; i++)
		(void)store_put_record(st, &res->rs_added[i]);
	return STORE_OK;
}

enum store_status
store_put_host(struct store *st, const struct store_host *h)
{
	struct fk_staged *s = fk_stage(FK_HOST_PUT);

	(void)st;
	s->rec.h = *h;
	strncpy(s->rec.name, h->sh_name, STORE_NAME_MAX);
	return STORE_OK;
}

enum store_status
store_del_host(struct store *st, uint64_t id)
{
	(void)st;
	fk_stage(FK_HOST_DEL)->val = id;
	return STORE_OK;
}

enum store_status
store_put_token(struct store *st, uint64_t token)
{
	(void)st;
	fk_stage(FK_TOKEN)->val = token;
	return STORE_OK;
}

enum store_status
store_put_next_host(struct store *st, uint64_t next)
{
	(void)st;
	fk_stage(FK_NEXT)->val = next;
	return STORE_OK;
}

enum store_status
store_put_epoch(struct store *st, uint64_t epoch)
{
	(void)st;
	fk_stage(FK_EPOCH)->val = epoch;
	return STORE_OK;
}

void
store_require_flush(struct store *st)
{
	(void)st;
	fk.flush = true;
}

bool
store_pending(const struct store *st)
{
	(void)st;
	return fk.nstaged > fk.nsealed;
}

static void
fk_apply(const struct fk_staged *s)
{
	switch (s->op) {
	case FK_PUT:
		fk_apply_put(&s->rec);
		break;
	case FK_DEL:
		fk_apply_del(&s->rec);
		break;
	case FK_HOST_PUT:
	case FK_HOST_DEL:
		fk_apply_host(s);
		break;
	case FK_TOKEN:
		fk.token = s->val > fk.token ? s->val : fk.token;
		break;
	case FK_NEXT:
		fk.next_host = s->val > fk.next_host ? s->val : fk.next_host;
		break;
	case FK_EPOCH:
		fk.epoch = s->val > fk.epoch ? s->val : fk.epoch;
		break;
	}
}

static void
fk_notify(void)
{
	uint64_t one = 1;

	if (fk.efd > 0 && write(fk.efd, &one, sizeof(one)) == -1)
		return;
}

/* Latch the failure a test asked for, if it did (true). */
static bool
fk_fail(void)
{
	if (!fk.fail_commit)
		return false;
	fk.fail_commit = false;
	fk.cerr = STORE_IO;
	fk_notify();
	return true;
}

/* Commit the first n operations sealed: the turns through `seq'. */
static void
fk_commit(size_t n, uint64_t seq)
{
	size_t i;

	for (i = 0; i < n; i++) {
		/* The staged array may have moved since: point inside again. */
		fk_rec_fix(&fk.staged[i].rec);
		fk_apply(&fk.staged[i]);
	}
	memmove(fk.staged, fk.staged + n,
	    (fk.nstaged - n) * sizeof(*fk.staged));
	fk.nstaged -= n;
	fk.nsealed -= n;
	fk.commits++;
	if (fk.flush)
		fk.flushes++;
	fk.flush = false;
	fk.seq_committed = seq;
	fk_notify();
}

/* Commit everything sealed (or latch the failure a test asked for). */
void
fake_store_complete(void)
{
	if (fk.nsealed == 0 || fk.cerr != STORE_OK || fk_fail())
		return;
	fk.nends = 0;
	fk_commit(fk.nsealed, fk.seq_sealed);
}

/* Commit the oldest sealed turn only (or latch the failure asked for). */
void
fake_store_complete_one(void)
{
	size_t i, n;

	if (fk.nends == 0 || fk.cerr != STORE_OK || fk_fail())
		return;
	n = fk.ends[0];
	fk.nends--;
	for (i = 0; i < fk.nends; i++)
		fk.ends[i] = fk.ends[i + 1] - n;
	fk_commit(n, fk.seq_committed + 1);
}

void
fake_store_defer(bool on)
{
	fk.defer = on;
}

enum store_status
store_seal(struct store *st, uint64_t *seqp)
{
	(void)st;
	if (fk.cerr != STORE_OK) {
		fk.nstaged = fk.nsealed;
		return fk.cerr;
	}
	if (fk.nstaged > fk.nsealed) {
		fk.nsealed = fk.nstaged;
		fk.seq_sealed++;
		fk.ends = fk_grow(fk.ends, fk.nends, &fk.capends,
		    sizeof(*fk.ends));
		fk.ends[fk.nends++] = fk.nsealed;
	}
	*seqp = fk.seq_sealed;
	if (!fk.defer)
		fake_store_complete();
	return STORE_OK;
}

uint64_t
store_durable(struct store *st)
{
	(void)st;
	return fk.seq_committed;
}

uint64_t
store_sealed(const struct store *st)
{
	(void)st;
	return fk.seq_sealed;
}

int
store_fd(const struct store *st)
{
	(void)st;
	if (fk.efd <= 0)
		fk.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return fk.efd;
}

enum store_status
store_committed(struct store *st, uint64_t *seqp)
{
	uint64_t n;

	(void)st;
	while (fk.efd > 0 && read(fk.efd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		continue;
	*seqp = fk.seq_committed;
	return fk.cerr;
}

enum store_status
store_commit(struct store *st)
{
	enum store_status s;
	uint64_t seq;

	if ((s = store_seal(st, &seq)) != STORE_OK)
		return s;
	fake_store_complete();
	return fk.cerr;
}

void
store_abort(struct store *st)
{
	(void)st;
	fk.nstaged = fk.nsealed;
	fk.flush = false;
}

void
store_fail_after(struct store *st, unsigned n)
{
	(void)st;
	(void)n;
}

size_t
fake_store_staged(void)
{
	return fk.nstaged - fk.nsealed;
}

size_t
fake_store_uncommitted(void)
{
	return fk.nsealed;
}

static size_t
fk_count(int kind)
{
	size_t i, n = 0;

	for (i = 0; i < fk.nrecs; i++)
		n += fk.recs[i].r.rc_kind == kind;
	return n;
}

size_t
fake_store_nlocks(void)
{
	return fk_count(LK_REC_LOCK);
}

uint64_t
fake_store_max_token(void)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < fk.nrecs; i++)
		if (fk.recs[i].r.rc_kind == LK_REC_LOCK &&
		    fk.recs[i].r.rc_token > m)
			m = fk.recs[i].r.rc_token;
	return m;
}

size_t
fake_store_nshares(void)
{
	return fk_count(LK_REC_SHARE);
}

size_t
fake_store_nhosts(void)
{
	return fk.nhosts;
}

bool
fake_store_host(uint64_t id, struct store_host *out)
{
	ssize_t i = fk_host_find(id);

	if (i < 0)
		return false;
	*out = fk.hosts[i].h;
	return true;
}

/*
 * The last byte of [start, start + len): a length of 0, or one that
 * reaches past the last offset, is to the end of the file -- the same
 * range however the protocol spelt it.
 */
static uint64_t
fk_end(uint64_t start, uint64_t len)
{
	return len == 0 || len - 1 > UINT64_MAX - start ? UINT64_MAX :
	    start + len - 1;
}

bool
fake_store_has_lock(uint64_t host, int32_t svid, const void *oh, size_t ohlen,
    const void *fh, size_t fhlen, uint64_t start, uint64_t len, bool excl)
{
	struct lk_record k;
	ssize_t i;

	memset(&k, 0, sizeof(k));
	k.rc_kind = LK_REC_LOCK;
	k.rc_svid = svid;
	k.rc_oh = oh;
	k.rc_ohlen = ohlen;
	k.rc_fh = fh;
	k.rc_fhlen = fhlen;
	k.rc_start = start;
	for (i = 0; i < (ssize_t)fk.nrecs; i++) {
		k.rc_host = host != 0 ? host : fk.recs[i].r.rc_host;
		if (fk_same_key(&fk.recs[i].r, &k))
			return fk_end(start, fk.recs[i].r.rc_len) ==
			    fk_end(start, len) && fk.recs[i].r.rc_excl == excl;
	}
	return false;
}

uint64_t
fake_store_commits(void)
{
	return fk.commits;
}

uint64_t
fake_store_flushes(void)
{
	return fk.flushes;
}

uint64_t
fake_store_token(void)
{
	return fk.token;
}

uint64_t
fake_store_epoch(void)
{
	return fk.epoch;
}

void
fake_store_fail_next_commit(void)
{
	fk.fail_commit = true;
}
