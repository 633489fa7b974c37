/*
 * test_basic.c - open/create, epochs, records, hosts, high-water marks,
 * uncommitted turns, STORE_NONE, counters, corrupt records.
 */
#include "stt.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "store_test.h"

static char *dir;
static struct store *st;

static int
setup(void)
{
	return (dir = stt_dir_new()) == NULL ? -1 : 0;
}

/* Each test closes its store; this catches the ones that failed early. */
static int
teardown(void)
{
	stt_drop(&dir, &st);
	return 0;
}

/* A fresh directory for the next test. */
static void
fresh(void)
{
	stt_fresh(&dir, &st);
}

static void
reopen(enum store_durability d)
{
	store_close(st);
	st = stt_open_ok(dir, d);
}

static void
test_open_create(void)
{
	struct store_info si;
	struct store *bad = (struct store *)&si;
	struct store_config cf = { "/nonexistent/nlmd-test", STORE_SYNC, 0, 0 };
	char err[256] = "", path[4200];

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	store_info(st, &si);
	CU_ASSERT(si.si_created);
	CU_ASSERT_EQUAL(si.si_epoch, 0);
	CU_ASSERT_EQUAL(si.si_token, 0);
	CU_ASSERT_EQUAL(si.si_next_host, 1);
	CU_ASSERT_EQUAL(si.si_commits, 0);
	CU_ASSERT(!store_pending(st));
	snprintf(path, sizeof(path), "%s/locks.db", dir);
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	reopen(STORE_SYNC);
	store_info(st, &si);
	CU_ASSERT(!si.si_created);
	CU_ASSERT_EQUAL(si.si_next_host, 1);
	store_close(st);
	st = NULL;
	/* A directory that does not exist: an error, a reason, no handle. */
	CU_ASSERT_NOT_EQUAL(store_open(&cf, &bad, err, sizeof(err)), STORE_OK);
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT(err[0] != '\0');
	CU_ASSERT_STRING_NOT_EQUAL(store_strerror(STORE_IO), "");
	CU_ASSERT_PTR_NOT_NULL(store_strerror((enum store_status)99));
}

static void
test_epoch(void)
{
	struct store_info si;
	struct lk_record rc = stt_lock(1, 1, "o", "f", 0, 0, true, 1);
	uint64_t e, want;
	char err[256];

	fresh();
	for (want = 1; want <= 3; want++) {
		reopen(STORE_LOG);
		CU_ASSERT_EQUAL(store_epoch_begin(st, 0, &e, err, sizeof(err)),
		    STORE_OK);
		CU_ASSERT_EQUAL(e, want);
		store_info(st, &si);
		CU_ASSERT_EQUAL(si.si_epoch, want);
		/* Its own transaction, flushed even under STORE_LOG. */
		CU_ASSERT_EQUAL(si.si_flushes, 1);
	}
	reopen(STORE_SYNC);
	CU_ASSERT_EQUAL(store_epoch_begin(st, 10, &e, err, sizeof(err)),
	    STORE_OK);
	CU_ASSERT_EQUAL(e, 10);
	reopen(STORE_SYNC);
	CU_ASSERT_EQUAL(store_epoch_begin(st, 5, &e, err, sizeof(err)),
	    STORE_OK);
	CU_ASSERT_EQUAL(e, 11);
	/* Not while a turn is pending. */
	CU_ASSERT_EQUAL(store_put_record(st, &rc), STORE_OK);
	CU_ASSERT_EQUAL(store_epoch_begin(st, 0, &e, err, sizeof(err)),
	    STORE_INVAL);
	store_abort(st);
	reopen(STORE_SYNC);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_epoch, 11);
	store_close(st);
	st = NULL;
}

/* Records on the edges of every field. */
static size_t
edge_records(struct lk_record *v, char *big_fh, char *big_oh)
{
	size_t n = 0;

	memset(big_fh, 'F', LK_FH_MAX);
	big_fh[LK_FH_MAX] = '\0';
	memset(big_oh, 'O', LK_OH_MAX);
	big_oh[LK_OH_MAX] = '\0';
	v[n++] = stt_lock(1, 0, "", "f", 0, 0, true, 1);
	v[n++] = stt_lock(1, -1, "o", "f", 0, 1, false, 2);
	v[n++] = stt_lock(1, INT32_MIN, "o", "f", 10, 5, true, 3);
	v[n++] = stt_lock(1, INT32_MAX, "o", "f", UINT64_MAX, 1, true, 4);
	v[n++] = stt_lock(2, 7, "o", "f", UINT64_MAX, 0, false, UINT64_MAX);
	v[n++] = stt_lock(UINT64_MAX, 7, big_oh, big_fh, 1, UINT64_MAX, true,
	    5);
	v[n++] = stt_lock(3, 7, big_oh, "f", 0, 0, false, 6);
	v[n++] = stt_share(1, "", "f", LK_SHARE_R, 0);
	v[n++] = stt_share(1, "o", "f", LK_SHARE_R | LK_SHARE_W,
	    LK_SHARE_R | LK_SHARE_W);
	v[n++] = stt_share(UINT64_MAX, big_oh, big_fh, 0, LK_SHARE_W);
	v[1].rc_epoch = 0;
	v[2].rc_epoch = LK_EPOCH_MAX;
	v[8].rc_epoch = 77;
	return n;
}

/* Every record of want[] in ss exactly once; locks before shares. */
static void
assert_records(const struct stt_snap *ss, const struct lk_record *want,
    size_t n)
{
	size_t i, j, found;

	CU_ASSERT_EQUAL_FATAL(ss->ss_nrecs, n);
	for (i = 0; i < n; i++) {
		for (found = 0, j = 0; j < n; j++)
			found += stt_rec_equal(&want[i], &ss->ss_recs[j]);
		CU_ASSERT_EQUAL(found, 1);
		if (found != 1)
			fprintf(stderr, "\nrecord %zu not loaded once\n", i);
	}
	for (i = 1; i < n; i++)
		CU_ASSERT(ss->ss_recs[i - 1].rc_kind <= ss->ss_recs[i].rc_kind);
}

static void
test_records(void)
{
	struct lk_record v[16];
	static char big_fh[LK_FH_MAX + 1], big_oh[LK_OH_MAX + 1];
	struct stt_snap ss;
	size_t i, n;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	n = edge_records(v, big_fh, big_oh);
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(store_put_record(st, &v[i]), STORE_OK);
	CU_ASSERT(store_pending(st));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT(!store_pending(st));
	reopen(STORE_SYNC);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	assert_records(&ss, v, n);
	/* Key order: host, then svid numerically (negative first). */
	CU_ASSERT_EQUAL(ss.ss_recs[0].rc_svid, INT32_MIN);
	CU_ASSERT_EQUAL(ss.ss_recs[1].rc_svid, -1);
	CU_ASSERT_EQUAL(ss.ss_recs[2].rc_svid, 0);
	CU_ASSERT_EQUAL(ss.ss_recs[3].rc_svid, INT32_MAX);
	for (i = 0; i < ss.ss_nrecs; i++)
		CU_ASSERT_EQUAL(ss.ss_recs[i].rc_reclaim, 0);
	stt_snap_free(&ss);
	store_close(st);
	st = NULL;
}

/* What cannot be stored is refused and stages nothing. */
static void
test_records_invalid(void)
{
	struct lk_record v[16], bad;
	static char big_fh[LK_FH_MAX + 1], big_oh[LK_OH_MAX + 1];

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	(void)edge_records(v, big_fh, big_oh);
	bad = v[0];
	bad.rc_fhlen = 0;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad.rc_fhlen = LK_FH_MAX + 1;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[1];
	bad.rc_ohlen = LK_OH_MAX + 1;
	CU_ASSERT_EQUAL(store_del_record(st, &bad), STORE_INVAL);
	bad = v[3];
	bad.rc_len = 2;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[0];
	bad.rc_excl = 2;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[0];
	bad.rc_kind = 3;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[7];
	bad.rc_access = 4;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[7];
	bad.rc_deny = 4;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[2];
	bad.rc_epoch = (uint64_t)LK_EPOCH_MAX + 1;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	bad = v[7];
	bad.rc_epoch = UINT64_MAX;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	CU_ASSERT(!store_pending(st));
	store_close(st);
	st = NULL;
}

static void
test_del_apply(void)
{
	struct lk_record a = stt_lock(1, 1, "oa", "f", 0, 10, true, 1);
	struct lk_record b = stt_lock(1, 1, "oa", "f", 20, 10, true, 2);
	struct lk_record c = stt_share(2, "oc", "g", LK_SHARE_R, 0);
	struct lk_record a2, d = stt_lock(3, 9, "od", "h", 5, 0, false, 4);
	struct lk_record none = stt_lock(9, 9, "x", "y", 0, 0, true, 9);
	struct lk_record rem[1], add[2], want[3];
	struct lk_result res;
	struct stt_snap ss;

	fresh();
	st = stt_open_ok(dir, STORE_LOG);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &b), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &c), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(store_del_record(st, &b), STORE_OK);
	CU_ASSERT_EQUAL(store_del_record(st, &none), STORE_OK);
	/* Removal and addition of the same key: the addition wins. */
	a2 = a;
	a2.rc_len = 30;
	a2.rc_token = 3;
	memset(&res, 0, sizeof(res));
	rem[0] = a;
	add[0] = a2;
	add[1] = d;
	res.rs_removed = rem;
	res.rs_nremoved = 1;
	res.rs_added = add;
	res.rs_nadded = 2;
	CU_ASSERT_EQUAL(store_apply(st, &res), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_LOG);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	want[0] = a2;
	want[1] = d;
	want[2] = c;
	assert_records(&ss, want, 3);
	stt_snap_free(&ss);
	/* One bad record in a change set: nothing of it is staged. */
	add[1].rc_fhlen = 0;
	CU_ASSERT_EQUAL(store_apply(st, &res), STORE_INVAL);
	CU_ASSERT(!store_pending(st));
	store_close(st);
	st = NULL;
}

static struct store_host
host(uint64_t id, const char *name, uint8_t alen, uint32_t scope)
{
	struct store_host h;
	unsigned i;

	memset(&h, 0, sizeof(h));
	h.sh_id = id;
	h.sh_name = name;
	h.sh_addr.sa_len = alen;
	for (i = 0; i < alen; i++)
		h.sh_addr.sa_bytes[i] = (uint8_t)(id + i);
	h.sh_addr.sa_scope = scope;
	h.sh_nlocal = 1;
	h.sh_local[0].sa_len = 4;
	memcpy(h.sh_local[0].sa_bytes, "\x7f\0\0\x01", 4);
	h.sh_state = (int32_t)(id * 2 + 1);
	h.sh_flags = STORE_HOST_MONITORED;
	h.sh_epoch = id + 100;
	h.sh_notify_since = id % 2 ? 1790000000 + id : 0;
	return h;
}

static void
test_hosts(void)
{
	static char longname[STORE_NAME_MAX + 2];
	struct store_host h[5];
	struct stt_snap ss;
	size_t i;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	memset(longname, 'n', STORE_NAME_MAX);
	h[0] = host(1, "client1.example", 4, 0);
	h[1] = host(2, "client6", 16, 3);
	h[1].sh_state = -7;
	h[2] = host(3, longname, 0, 0);
	h[3] = host(UINT64_MAX, "", 16, 0);
	/* Every server address it used, IPv4 and IPv6 (with a scope). */
	h[3].sh_nlocal = STORE_LOCAL_MAX;
	h[3].sh_local[1].sa_len = 16;
	h[3].sh_local[1].sa_bytes[0] = 0xfe;
	h[3].sh_local[1].sa_bytes[1] = 0x80;
	h[3].sh_local[1].sa_bytes[15] = 9;
	h[3].sh_local[1].sa_scope = 2;
	h[3].sh_local[2] = h[3].sh_local[0];
	h[3].sh_local[2].sa_bytes[3] = 2;
	h[3].sh_local[3] = h[3].sh_local[0];
	h[3].sh_local[3].sa_bytes[3] = 3;
	h[2].sh_nlocal = 0;	/* none known */
	h[2].sh_local[0].sa_len = 0;
	h[4] = host(4, "gone", 4, 0);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(store_put_host(st, &h[i]), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/* Replace one, delete one, delete one that is not there. */
	h[0].sh_state = 42;
	CU_ASSERT_EQUAL(store_put_host(st, &h[0]), STORE_OK);
	CU_ASSERT_EQUAL(store_del_host(st, 4), STORE_OK);
	CU_ASSERT_EQUAL(store_del_host(st, 12345), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_SYNC);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	/* In id order. */
	CU_ASSERT_EQUAL_FATAL(ss.ss_nhosts, 4);
	for (i = 0; i < 4; i++)
		CU_ASSERT(stt_host_equal(&ss.ss_hosts[i], &h[i]));
	CU_ASSERT_EQUAL(strlen(ss.ss_hosts[2].sh_name), STORE_NAME_MAX);
	stt_snap_free(&ss);
	store_close(st);
	st = NULL;
}

/*
 * A version 1 host value (the first persistent nlmd's, without
 * notify-since) still loads, with nothing owed.
 */
static int
v1_host_cb(const struct store_host *h, void *arg)
{
	struct store_host *out = arg;

	CU_ASSERT_STRING_EQUAL(h->sh_name, "old");
	*out = *h;
	out->sh_name = NULL;
	return 0;
}

/*
 * A fresh store holding only the raw host value val under key, reopened
 * and loaded into *h (st stays open).
 */
static void
raw_host_load(const uint8_t *key, size_t klen, const uint8_t *val,
    size_t vlen, struct store_host *h)
{
	char err[512] = "";

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_test_put_raw(st, STORE_TEST_HOSTS, key, klen,
	    val, vlen), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_SYNC);
	memset(h, 0xff, sizeof(*h));
	CU_ASSERT_EQUAL(store_hosts_load(st, v1_host_cb, h, err,
	    sizeof(err)), STORE_OK);
}

static void
test_hosts_v1(void)
{
	static const uint8_t key[] = { 0, 0, 0, 0, 0, 0, 0, 5 };
	static const uint8_t val[] = { 1, 0, 3, 'o', 'l', 'd',
	    4, 10, 0, 0, 2, 0, 0, 0, 0,		/* from 10.0.0.2 */
	    4, 10, 0, 0, 1, 0, 0, 0, 0,		/* to 10.0.0.1 */
	    0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3 };
	struct store_host h;

	raw_host_load(key, sizeof(key), val, sizeof(val), &h);
	CU_ASSERT_EQUAL(h.sh_id, 5);
	CU_ASSERT_EQUAL(h.sh_addr.sa_bytes[3], 2);
	CU_ASSERT_EQUAL(h.sh_nlocal, 1);
	CU_ASSERT_EQUAL(h.sh_local[0].sa_bytes[3], 1);
	CU_ASSERT_EQUAL(h.sh_state, 7);
	CU_ASSERT_EQUAL(h.sh_flags, STORE_HOST_MONITORED);
	CU_ASSERT_EQUAL(h.sh_epoch, 3);
	CU_ASSERT_EQUAL(h.sh_notify_since, 0);
	store_close(st);
	st = NULL;
}

/*
 * A version 2 host value (one server address, length 0 for none) still
 * loads: one address, or none.
 */
static void
test_hosts_v2(void)
{
	static const uint8_t key[] = { 0, 0, 0, 0, 0, 0, 0, 6 };
	static const uint8_t val[] = { 2, 0, 3, 'o', 'l', 'd',
	    4, 10, 0, 0, 2, 0, 0, 0, 0,		/* from 10.0.0.2 */
	    0, 0, 0, 0, 0,			/* to: not known */
	    0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3,
	    0, 0, 0, 0, 0x6a, 0xb0, 0x1c, 0x00 };
	static const uint8_t bad3[] = { 3, 0, 3, 'o', 'l', 'd',
	    4, 10, 0, 0, 2, 0, 0, 0, 0,
	    STORE_LOCAL_MAX + 1,
	    0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3,
	    0, 0, 0, 0, 0, 0, 0, 0 };
	struct store_host h;
	char err[512] = "";

	raw_host_load(key, sizeof(key), val, sizeof(val), &h);
	CU_ASSERT_EQUAL(h.sh_id, 6);
	CU_ASSERT_EQUAL(h.sh_nlocal, 0);
	CU_ASSERT_EQUAL(h.sh_state, 7);
	CU_ASSERT_EQUAL(h.sh_notify_since, 0x6ab01c00);
	/* Version 3 with more server addresses than it may have: refused. */
	CU_ASSERT_EQUAL(store_test_put_raw(st, STORE_TEST_HOSTS, key,
	    sizeof(key), bad3, sizeof(bad3)), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(store_hosts_load(st, v1_host_cb, &h, err,
	    sizeof(err)), STORE_CORRUPT);
	CU_ASSERT(strstr(err, "too many server addresses") != NULL);
	store_close(st);
	st = NULL;
}

/* Refused: id 0, name too long, no name, bad address length. */
static void
test_hosts_invalid(void)
{
	static char longname[STORE_NAME_MAX + 2];
	struct store_host bad;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	memset(longname, 'n', STORE_NAME_MAX + 1);
	bad = host(1, "one", 4, 0);
	bad.sh_id = 0;
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	CU_ASSERT_EQUAL(store_del_host(st, 0), STORE_INVAL);
	bad = host(3, longname, 0, 0);
	CU_ASSERT_EQUAL(strlen(longname), STORE_NAME_MAX + 1);
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	bad.sh_name = NULL;
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	bad = host(1, "one", 4, 0);
	bad.sh_addr.sa_len = 5;
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	bad = host(1, "one", 4, 0);
	bad.sh_local[0].sa_len = 6;
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	bad = host(1, "one", 4, 0);
	bad.sh_nlocal = 2;	/* the second has length 0 */
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	bad = host(1, "one", 4, 0);
	bad.sh_nlocal = STORE_LOCAL_MAX + 1;
	CU_ASSERT_EQUAL(store_put_host(st, &bad), STORE_INVAL);
	CU_ASSERT(!store_pending(st));
	store_close(st);
	st = NULL;
}

static void
test_marks(void)
{
	struct store_info si;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_token(st, 100), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 7), STORE_OK);
	CU_ASSERT_EQUAL(store_put_epoch(st, 4), STORE_OK);
	/* Staged, not committed: store_info shows the committed values. */
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_token, 0);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 50), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 2), STORE_OK);
	CU_ASSERT_EQUAL(store_put_epoch(st, 3), STORE_OK);
	CU_ASSERT(!store_pending(st));
	CU_ASSERT_EQUAL(store_put_token(st, 101), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 99), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/*
	 * An aborted turn goes back to the marks sealed before it, not to
	 * those of the open: lower values still stage nothing.
	 */
	CU_ASSERT_EQUAL(store_put_token(st, 200), STORE_OK);
	store_abort(st);
	CU_ASSERT_EQUAL(store_put_token(st, 60), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 3), STORE_OK);
	CU_ASSERT_EQUAL(store_put_epoch(st, 2), STORE_OK);
	CU_ASSERT(!store_pending(st));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/*
	 * Nor do the aborted turn's marks stay: values below them but above
	 * the sealed ones are staged, and stored.  (Kept, a fencing token
	 * under the aborted one was never stored, and handed out again
	 * after a restart.)
	 */
	CU_ASSERT_EQUAL(store_put_token(st, 300), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 30), STORE_OK);
	CU_ASSERT_EQUAL(store_put_epoch(st, 30), STORE_OK);
	store_abort(st);
	CU_ASSERT_EQUAL(store_put_token(st, 150), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 8), STORE_OK);
	CU_ASSERT_EQUAL(store_put_epoch(st, 5), STORE_OK);
	CU_ASSERT(store_pending(st));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_SYNC);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_token, 150);
	CU_ASSERT_EQUAL(si.si_next_host, 8);
	CU_ASSERT_EQUAL(si.si_epoch, 5);
	store_close(st);
	st = NULL;
}

static void
test_uncommitted(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 0, true, 1);
	struct lk_record b = stt_lock(2, 1, "o", "f", 0, 0, true, 2);
	struct lk_record bad = a;
	struct store_host h = host(5, "h5", 4, 0);
	struct stt_snap ss;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 9), STORE_OK);
	store_abort(st);
	CU_ASSERT(!store_pending(st));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_abort(st);
	/* An invalid call mid-turn leaves the turn as it was. */
	CU_ASSERT_EQUAL(store_put_record(st, &b), STORE_OK);
	bad.rc_fh = NULL;
	CU_ASSERT_EQUAL(store_put_record(st, &bad), STORE_INVAL);
	CU_ASSERT(store_pending(st));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/* Staged, then closed without a commit. */
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 6), STORE_OK);
	reopen(STORE_SYNC);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 1);
	CU_ASSERT(ss.ss_nrecs == 1 && stt_rec_equal(&ss.ss_recs[0], &b));
	CU_ASSERT_EQUAL(ss.ss_nhosts, 0);
	CU_ASSERT_EQUAL(ss.ss_token, 0);
	CU_ASSERT_EQUAL(ss.ss_next_host, 1);
	stt_snap_free(&ss);
	store_close(st);
	st = NULL;
}

static void
test_none(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 0, true, 1);
	struct store_host h = host(5, "h5", 4, 0);
	struct lk_result res;
	struct stt_snap ss;

	fresh();
	st = stt_open_ok(dir, STORE_NONE);
	memset(&res, 0, sizeof(res));
	res.rs_added = &a;
	res.rs_nadded = 1;
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_del_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_apply(st, &res), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 10), STORE_OK);
	CU_ASSERT(!store_pending(st));
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	CU_ASSERT(store_pending(st));
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_NONE);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	CU_ASSERT_EQUAL(ss.ss_nhosts, 1);
	CU_ASSERT_EQUAL(ss.ss_token, 0);
	stt_snap_free(&ss);

	/*
	 * Records an earlier run under log (or sync) stored are dropped at
	 * an open under none: kept, they came back at every start under
	 * none (its deletes are not staged), and again, long stale, after a
	 * switch back (found by review).  Hosts stay.
	 */
	reopen(STORE_LOG);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_NONE);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	CU_ASSERT_EQUAL(ss.ss_nhosts, 1);
	stt_snap_free(&ss);
	reopen(STORE_LOG);
	CU_ASSERT_EQUAL(stt_snap_take(st, &ss), STORE_OK);
	CU_ASSERT_EQUAL(ss.ss_nrecs, 0);
	stt_snap_free(&ss);
	store_close(st);
	st = NULL;
}

static void
test_counters(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 0, true, 1);
	struct store_info si;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 1), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_commits, 1);
	CU_ASSERT_EQUAL(si.si_flushes, 1);
	CU_ASSERT_EQUAL(si.si_puts, 2);
	CU_ASSERT_EQUAL(si.si_dels, 0);
	reopen(STORE_LOG);
	CU_ASSERT_EQUAL(store_del_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_commits, 1);
	CU_ASSERT_EQUAL(si.si_flushes, 0);
	CU_ASSERT_EQUAL(si.si_dels, 1);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	store_require_flush(st);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/* The flush request ends with its turn. */
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_info(st, &si);
	CU_ASSERT_EQUAL(si.si_commits, 3);
	CU_ASSERT_EQUAL(si.si_flushes, 1);
	CU_ASSERT(si.si_open_ms < 10000);
	store_close(st);
	st = NULL;
}

static int
stop_cb(const struct lk_record *rc, void *arg)
{
	(void)rc;
	return ++*(int *)arg == 2;
}

static int
count_rec_cb(const struct lk_record *rc, void *arg)
{
	(void)rc;
	++*(int *)arg;
	return 0;
}

static int
count_host_cb(const struct store_host *h, void *arg)
{
	(void)h;
	++*(int *)arg;
	return 0;
}

/* Stage a raw pair, commit, reopen, expect a load to say want. */
static void
corrupt_one(enum store_test_db db, const void *k, size_t klen,
    const void *v, size_t vlen, const char *want)
{
	enum store_status s;
	char err[512] = "";
	int n = 0;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_test_put_raw(st, db, k, klen, v, vlen),
	    STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	reopen(STORE_SYNC);
	if (db == STORE_TEST_HOSTS)
		s = store_hosts_load(st, count_host_cb, &n, err, sizeof(err));
	else
		s = store_records_load(st, count_rec_cb, &n, err, sizeof(err));
	CU_ASSERT_EQUAL(s, STORE_CORRUPT);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	if (strstr(err, want) == NULL)
		fprintf(stderr, "\nerr: %s\n", err);
	store_close(st);
	st = NULL;
}

/* meta.db's `name' := v[vlen]: the next open refuses the store, saying want. */
static void
meta_refused(const char *name, const void *v, size_t vlen, const char *want)
{
	struct store *bad = NULL;
	struct store_config cf;
	char err[512] = "";

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_test_put_raw(st, STORE_TEST_META, name,
	    strlen(name), v, vlen), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	store_close(st);
	st = NULL;
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	CU_ASSERT_EQUAL(store_open(&cf, &bad, err, sizeof(err)), STORE_CORRUPT);
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	if (strstr(err, want) == NULL)
		fprintf(stderr, "\nerr: %s\n", err);
}

static void
test_corrupt(void)
{
	/* host 1, svid 0 (biased), oh "", fh "f", start 0 */
	static const uint8_t lkey[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0, 0,
	    0, 0, 0, 1, 'f', 0, 0, 0, 0, 0, 0, 0, 0 };
	uint8_t val[26] = { 7 };
	static const uint8_t skey[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
	    'f' };
	static const uint8_t hkey[] = { 0, 0, 0, 0, 0, 0, 0, 9 };
	static const uint8_t fmt[] = { 1, 0, 0, 0, 0, 0, 0, 0, 3 };

	corrupt_one(STORE_TEST_LOCKS, lkey, sizeof(lkey), val, sizeof(val),
	    "unknown record version");
	val[0] = 1;
	corrupt_one(STORE_TEST_LOCKS, lkey, sizeof(lkey), val, 20,
	    "wrong length");
	corrupt_one(STORE_TEST_LOCKS, lkey, sizeof(lkey) - 1, val, 26,
	    "key");
	corrupt_one(STORE_TEST_SHARES, skey, sizeof(skey), val, 26,
	    "shares.db");
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), val, 3,
	    "bad address");
	/*
	 * An epoch past LK_EPOCH_MAX (bytes 18-25 of a lock value, 3-10 of
	 * a share's): lockcore refuses to load it, and nlmd took that
	 * refusal for a conflict and deleted the record with a warning that
	 * blamed another lock.
	 */
	memset(val, 0, sizeof(val));
	val[0] = 1;
	val[21] = 1;
	corrupt_one(STORE_TEST_LOCKS, lkey, sizeof(lkey), val, 26,
	    "out of bounds");
	memset(val, 0, sizeof(val));
	val[0] = 1;
	val[6] = 1;
	corrupt_one(STORE_TEST_SHARES, skey, sizeof(skey), val, 11,
	    "out of bounds");
	/*
	 * A mode neither shared (0) nor exclusive (1), byte 9 of a lock
	 * value: version 1 has no check to catch it.
	 */
	memset(val, 0, sizeof(val));
	val[0] = 1;
	val[9] = 2;
	corrupt_one(STORE_TEST_LOCKS, lkey, sizeof(lkey), val, 26,
	    "out of bounds");
	/* A share's deny mask (byte 2) with a bit of no mode in it. */
	memset(val, 0, sizeof(val));
	val[0] = 1;
	val[2] = 4;
	corrupt_one(STORE_TEST_SHARES, skey, sizeof(skey), val, 11,
	    "out of bounds");
	/*
	 * A meta value longer than any (a damaged one): refused as one that
	 * does not decode.  It used to read as an I/O error ("cannot read
	 * meta.db: DB_BUFFER_SMALL"), which sent the operator to the disk.
	 */
	{
		static uint8_t big[8192] = { 1 };

		meta_refused("epoch", big, sizeof(big), "does not decode");
	}
	/* A newer format: refused at open with a clear message. */
	meta_refused("format", fmt, sizeof(fmt), "newer");
}

/*
 * Keys and values that do not decode, each alone in a store: refused
 * (STORE_CORRUPT), saying why.  A key one byte longer than its fields (a
 * lock's of version 1, which has no check, or a share's), a host value
 * with a byte after its last field, a host name with a NUL in it, a
 * server address of length 0 in a version 3 host value, a store format
 * of 0.  None of these is checked by a test elsewhere: a decoder that
 * let them through loaded them as records.
 */
static void
test_corrupt_shapes(void)
{
	/* test_corrupt's keys, one byte longer */
	static const uint8_t lkey[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0, 0,
	    0, 0, 0, 1, 'f', 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t skey[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
	    'f', 0 };
	static const uint8_t hkey[] = { 0, 0, 0, 0, 0, 0, 0, 9 };
	static const uint8_t fmt0[9] = { 1 };
	uint8_t lval[26] = { 1 }, sval[11] = { 1, LK_SHARE_R };
	/*
	 * Version 3, name "old", no address (bytes 6-10), n (byte 11),
	 * then state, flags, epoch, notify-since: 36 bytes when n is 0.
	 */
	uint8_t hval[41] = { 3, 0, 3, 'o', 'l', 'd' };
	struct store_host h;

	corrupt_one(STORE_TEST_LOCKS, lkey, sizeof(lkey), lval, sizeof(lval),
	    "key has the wrong length");
	corrupt_one(STORE_TEST_SHARES, skey, sizeof(skey), sval, sizeof(sval),
	    "bad owner or file handle in key");
	/* 36 bytes load; 37 do not. */
	raw_host_load(hkey, sizeof(hkey), hval, 36, &h);
	CU_ASSERT_EQUAL(h.sh_id, 9);
	store_close(st);
	st = NULL;
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), hval, 37,
	    "value has the wrong length for its version");
	hval[4] = '\0';
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), hval, 36,
	    "bad host name");
	hval[4] = 'l';
	/* One server address, length 0 (byte 12), scope 0. */
	hval[11] = 1;
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), hval, 41,
	    "bad server address");
	meta_refused("format", fmt0, sizeof(fmt0), "does not decode");
}

/*
 * Host keys and values out of range, each alone in a store: refused
 * (STORE_CORRUPT), saying why.  A host id of 0 (never given out), a key
 * of 9 bytes, an address of length 5 (the client's, or one of ours: only
 * 0, 4 and 16 exist), a name of STORE_NAME_MAX + 1 bytes.  No other test
 * stored one: a decoder that let them through loaded a host that cannot
 * exist, an address of bytes that are not one (an address's room is 16
 * bytes), or a name longer than the room the load copies it into.
 */
static void
test_hosts_corrupt(void)
{
	static const uint8_t key0[8], key9[9] = { 0, 0, 0, 0, 0, 0, 0, 9, 0 };
	static const uint8_t hkey[] = { 0, 0, 0, 0, 0, 0, 0, 9 };
	/* Version 3, a name of n bytes (bytes 3 on), no address: 33 + n. */
	static uint8_t big[33 + STORE_NAME_MAX + 1];
	/* test_corrupt_shapes' 36 bytes: version 3, "old", no address */
	uint8_t hval[36] = { 3, 0, 3, 'o', 'l', 'd' };
	/* The same, the address (bytes 6-15) of length 5. */
	uint8_t from5[41] = { 3, 0, 3, 'o', 'l', 'd', 5, 10, 0, 0, 2, 1 };
	/* The same, one server address (bytes 12-24) of length 8. */
	uint8_t to8[49] = { 3, 0, 3, 'o', 'l', 'd', 0, 0, 0, 0, 0, 1, 8 };

	corrupt_one(STORE_TEST_HOSTS, key0, sizeof(key0), hval, sizeof(hval),
	    "bad host id in key");
	corrupt_one(STORE_TEST_HOSTS, key9, sizeof(key9), hval, sizeof(hval),
	    "bad host id in key");
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), from5, sizeof(from5),
	    "bad address");
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), to8, sizeof(to8),
	    "bad server address");
	/* One byte more than test_hosts' longest name, which loads. */
	big[0] = 3;
	big[1] = (STORE_NAME_MAX + 1) >> 8;
	big[2] = (STORE_NAME_MAX + 1) & 0xff;
	memset(big + 3, 'n', STORE_NAME_MAX + 1);
	corrupt_one(STORE_TEST_HOSTS, hkey, sizeof(hkey), big, sizeof(big),
	    "bad host name");
}

/*
 * A lock's value ends in a check of its key and value (version 2): every
 * single damaged bit of either is refused at the load, where a version 1
 * record read a damaged length or token as a lock.  Version 1 values
 * still load, unchecked.
 */
static void
test_lock_check(void)
{
	struct lk_record rc = stt_lock(3, -7, "owner", "file", 4096, 100,
	    true, 77), got;
	uint8_t key[STORE_TEST_KEY_ROOM], val[STORE_TEST_VAL_ROOM];
	size_t klen, vlen, i;
	unsigned bit, passed = 0;
	const char *why;

	store_test_enc_lock(&rc, key, &klen, val, &vlen);
	CU_ASSERT_EQUAL(vlen, 30);
	CU_ASSERT_EQUAL(val[0], 2);
	why = store_test_dec_lock(key, klen, val, vlen, &got);
	CU_ASSERT_PTR_NULL(why);
	CU_ASSERT_EQUAL(got.rc_host, 3);
	CU_ASSERT_EQUAL(got.rc_svid, -7);
	CU_ASSERT_EQUAL(got.rc_start, 4096);
	CU_ASSERT_EQUAL(got.rc_len, 100);
	CU_ASSERT(got.rc_excl);
	CU_ASSERT_EQUAL(got.rc_token, 77);
	for (i = 0; i < klen + vlen; i++)
		for (bit = 0; bit < 8; bit++) {
			uint8_t *b = i < klen ? &key[i] : &val[i - klen];

			*b ^= (uint8_t)(1u << bit);
			if (store_test_dec_lock(key, klen, val, vlen,
			    &got) == NULL) {
				passed++;
				fprintf(stderr, "\nbyte %zu bit %u flipped: "
				    "loaded\n", i, bit);
			}
			*b ^= (uint8_t)(1u << bit);
		}
	CU_ASSERT_EQUAL(passed, 0);
	/* Through the load: the reason in the message. */
	val[5] ^= 0x10;
	corrupt_one(STORE_TEST_LOCKS, key, klen, val, vlen,
	    "its check does not match its bytes: the record is damaged");
	val[5] ^= 0x10;
	/* Version 1: the first 26 bytes, no check; read as they are. */
	val[0] = 1;
	val[5] ^= 0x10;
	CU_ASSERT_PTR_NULL(store_test_dec_lock(key, klen, val, 26, &got));
	CU_ASSERT_EQUAL(got.rc_len, 100 + ((uint64_t)0x10 << 24));
	CU_ASSERT_PTR_NOT_NULL(store_test_dec_lock(key, klen, val, 30, &got));
}

static void
test_load_stop(void)
{
	struct lk_record a = stt_lock(1, 1, "o", "f", 0, 0, true, 1);
	struct lk_record b = stt_lock(1, 1, "o", "g", 0, 0, true, 1);
	char err[256];
	int n = 0;

	fresh();
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &b), STORE_OK);
	/* Not while a turn is pending. */
	CU_ASSERT_EQUAL(store_records_load(st, stop_cb, &n, err, sizeof(err)),
	    STORE_INVAL);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	CU_ASSERT_EQUAL(store_records_load(st, stop_cb, &n, err, sizeof(err)),
	    STORE_INVAL);
	CU_ASSERT_EQUAL(n, 2);
	store_close(st);
	st = NULL;
}

/*
 * meta.db gone (deleted, or left out of a restore) while hosts.db and
 * locks.db still hold records: not a new store.  Taken for one, it got
 * next host id 1, token 0 and epoch 0 again, and the next hosts took the
 * ids of stored ones (their locks with them).  Refused instead.
 */
static void
test_meta_lost(void)
{
	struct lk_record a = stt_lock(3, 1, "o", "f", 0, 0, true, 9);
	struct store_host h = host(3, "three", 4, 0);
	struct store *bad = NULL;
	struct store_config cf;
	struct store_info si;
	char err[512] = "", path[PATH_MAX];
	enum store_status s;

	fresh();
	CU_ASSERT_EQUAL_FATAL(stt_open(dir, STORE_LOG, 1, &st), STORE_OK);
	CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
	CU_ASSERT_EQUAL(store_put_next_host(st, 4), STORE_OK);
	CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
	CU_ASSERT_EQUAL(store_put_token(st, 9), STORE_OK);
	CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
	/* Log files go (as they do in a store that runs for a while). */
	CU_ASSERT_FATAL(stt_churn(st, 5));
	CU_ASSERT_EQUAL_FATAL(stt_ckp_wait(st, 6, 2), 0);
	store_close(st);
	st = NULL;
	snprintf(path, sizeof(path), "%s/log.%010lu", dir, 1ul);
	CU_ASSERT_FATAL(access(path, F_OK) == -1);
	snprintf(path, sizeof(path), "%s/meta.db", dir);
	CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	s = store_open(&cf, &bad, err, sizeof(err));
	if (s == STORE_OK) {
		store_info(bad, &si);
		printf("\n  opened anew: next host %llu, token %llu ",
		    (unsigned long long)si.si_next_host,
		    (unsigned long long)si.si_token);
		store_close(bad);
		bad = NULL;
	}
	CU_ASSERT_EQUAL(s, STORE_CORRUPT);
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "meta.db"));
	if (s != STORE_OK && strstr(err, "meta.db") == NULL)
		fprintf(stderr, "\nstore_open: %s\n", err);
}

/* Rename dir/from to dir/to; 0 or -1. */
static int
move_file(const char *from, const char *to)
{
	char a[PATH_MAX], b[PATH_MAX];

	snprintf(a, sizeof(a), "%s/%s", dir, from);
	snprintf(b, sizeof(b), "%s/%s", dir, to);
	return rename(a, b);
}

static bool
file_exists(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/*
 * hosts.db, locks.db or shares.db gone (deleted, left out of a restore)
 * while meta.db has its format: Berkeley DB would create the file anew,
 * empty, and the store opened without the hosts, locks or shares it had
 * acknowledged.  Refused, naming the file, and nothing is created: put
 * back, the file opens with everything in it.
 */
static void
test_db_lost(void)
{
	static const char *const name[] = { "hosts.db", "locks.db",
	    "shares.db" };
	struct lk_record a = stt_lock(3, 1, "o", "f", 0, 0, true, 9);
	struct lk_record b = stt_share(3, "o", "f", LK_SHARE_R, 0);
	struct store_host h = host(3, "three", 4, 0);
	struct store *bad;
	struct store_config cf;
	struct stt_snap ss;
	char err[512];
	enum store_status s;
	size_t i;

	for (i = 0; i < sizeof(name) / sizeof(name[0]); i++) {
		fresh();
		st = stt_open_ok(dir, STORE_SYNC);
		CU_ASSERT_EQUAL(store_put_host(st, &h), STORE_OK);
		CU_ASSERT_EQUAL(store_put_next_host(st, 4), STORE_OK);
		CU_ASSERT_EQUAL(store_put_record(st, &a), STORE_OK);
		CU_ASSERT_EQUAL(store_put_record(st, &b), STORE_OK);
		CU_ASSERT_EQUAL(store_commit(st), STORE_OK);
		store_close(st);
		st = NULL;
		CU_ASSERT_EQUAL_FATAL(move_file(name[i], "aside"), 0);
		memset(&cf, 0, sizeof(cf));
		cf.sc_dir = dir;
		bad = NULL;
		err[0] = '\0';
		s = store_open(&cf, &bad, err, sizeof(err));
		if (s == STORE_OK) {
			CU_ASSERT_EQUAL(stt_snap_take(bad, &ss), STORE_OK);
			printf("\n  %s lost, opened with %zu hosts, %zu "
			    "records ", name[i], ss.ss_nhosts, ss.ss_nrecs);
			stt_snap_free(&ss);
			store_close(bad);
			bad = NULL;
		}
		CU_ASSERT_EQUAL(s, STORE_CORRUPT);
		CU_ASSERT_PTR_NULL(bad);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, name[i]));
		if (s != STORE_OK && strstr(err, name[i]) == NULL)
			fprintf(stderr, "\nstore_open: %s\n", err);
		CU_ASSERT(!file_exists(name[i]));
		/* Put back, it is all there. */
		if (file_exists(name[i]))
			CU_ASSERT_EQUAL_FATAL(move_file(name[i], "new"), 0);
		CU_ASSERT_EQUAL_FATAL(move_file("aside", name[i]), 0);
		stt_snap_dir(dir, &ss);
		CU_ASSERT_EQUAL(ss.ss_nhosts, 1);
		CU_ASSERT_EQUAL(ss.ss_nrecs, 2);
		CU_ASSERT_EQUAL(ss.ss_next_host, 4);
		stt_snap_free(&ss);
	}
}

/*
 * Berkeley DB creates the cache's region file small and extends it as
 * pages are cached (writing only the last page of each extension); the
 * holes before are mapped, and on a full file system the first touch of
 * one was a SIGBUS: nlmd died without a word, exit status 135, seen with
 * the cache growing under a fold.  The open allocates the room the
 * regions may grow into: the blocks of the __db.* files, beyond their
 * sizes, hold at least the cache's worth (16 MiB by default), and those
 * of __db.001 the most its region may grow to.  (Skipped
 * where the file system cannot allocate beyond a file's end.)
 */
static void
test_regions_reserved(void)
{
	char path[PATH_MAX];
	unsigned long long alloc = 0, size = 0;
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "%s/probe", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 ||
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096) == -1) {
		if (fd != -1)
			close(fd);
		(void)unlink(path);
		printf("\n    skipped: no fallocate here ");
		return;
	}
	close(fd);
	(void)unlink(path);
	st = stt_open_ok(dir, STORE_SYNC);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "__db.", 5) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &sb) == 0) {
			alloc += (unsigned long long)sb.st_blocks * 512;
			size += (unsigned long long)sb.st_size;
		}
	}
	closedir(d);
	CU_ASSERT(alloc >= size + (15ull << 20));
	if (alloc < size + (15ull << 20))
		printf("\n    region files: %llu bytes, %llu allocated ",
		    size, alloc);
	/*
	 * The environment's main region (__db.001) grows too, as the lock
	 * table fills under a large fold (17 -> 36 MB at 80,000 locks):
	 * its blocks cover the most it may grow to.
	 */
	snprintf(path, sizeof(path), "%s/__db.001", dir);
	CU_ASSERT_FATAL(stat(path, &sb) == 0);
	CU_ASSERT((unsigned long long)sb.st_blocks * 512 >=
	    store_test_main_region_max(st));
	if ((unsigned long long)sb.st_blocks * 512 <
	    store_test_main_region_max(st))
		printf("\n    __db.001: %llu bytes allocated, may grow to %llu ",
		    (unsigned long long)sb.st_blocks * 512,
		    store_test_main_region_max(st));
}

/*
 * fallocate() as the store calls it, for the whole test binary: the C
 * library's unless a test arms fa_errno; then it fails with that errno,
 * and the length asked for is noted.
 */
static int fa_errno;
static long long fa_len;

int
fallocate(int fd, int mode, off_t off, off_t len)
{
	static int (*real)(int, int, off_t, off_t);

	if (fa_errno != 0) {
		fa_len = (long long)len;
		errno = fa_errno;
		return -1;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fallocate");
	return real(fd, mode, off, len);
}

/* Open with a cache of cache_mib MiB while fallocate fails with e. */
static enum store_status
open_fa_fail(int e, size_t cache_mib, char *err, size_t errlen)
{
	struct store_config cf;
	enum store_status s;

	fresh();
	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	cf.sc_cache_bytes = cache_mib << 20;
	err[0] = '\0';
	fa_len = 0;
	fa_errno = e;
	s = store_open(&cf, &st, err, errlen);
	fa_errno = 0;
	return s;
}

/*
 * A file system that cannot allocate beyond a file's end (EOPNOTSUPP:
 * NFSv3, ext4 without extents, ZFS before 2.2) gets no reservation and
 * the open goes on, as before.
 */
static void
test_regions_unsupported(void)
{
	char err[2048];

	CU_ASSERT_EQUAL(open_fa_fail(EOPNOTSUPP, 0, err, sizeof(err)),
	    STORE_OK);
	CU_ASSERT(fa_len > 0);
	store_close(st);
	st = NULL;
}

/*
 * A file system without room for the cache's region fails the open, and
 * the message says how much that region takes: it follows store-cache-mib
 * (256 MiB of cache, 322 MiB of room; 1 GiB, 1,025 MiB), and "about 75 MiB at
 * the default cache size" alone leaves an operator with a larger cache
 * and hundreds of MB free wondering what is full.
 */
static void
test_regions_nospace(void)
{
	char err[2048], want[64];

	CU_ASSERT_NOT_EQUAL(open_fa_fail(ENOSPC, 256, err, sizeof(err)),
	    STORE_OK);
	CU_ASSERT_PTR_NULL(st);
	CU_ASSERT(fa_len > (256ll << 20));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(ENOSPC)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is full"));
	snprintf(want, sizeof(want), "%lld MiB", (fa_len + (1 << 20) - 1) >>
	    20);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	if (strstr(err, want) == NULL)
		printf("\n    no \"%s\" in: %s ", want, err);
}

int
stt_register_basic(void)
{
	CU_pSuite s = CU_add_suite("store basics", setup, teardown);

	if (s == NULL ||
	    !CU_add_test(s, "open and create", test_open_create) ||
	    !CU_add_test(s, "the region files' room is allocated at open",
	    test_regions_reserved) ||
	    !CU_add_test(s, "no fallocate there: the open goes on",
	    test_regions_unsupported) ||
	    !CU_add_test(s, "no room for the cache's region: how much it takes",
	    test_regions_nospace) ||
	    !CU_add_test(s, "epochs", test_epoch) ||
	    !CU_add_test(s, "lock and share records", test_records) ||
	    !CU_add_test(s, "records that cannot be stored",
	    test_records_invalid) ||
	    !CU_add_test(s, "delete and apply", test_del_apply) ||
	    !CU_add_test(s, "hosts", test_hosts) ||
	    !CU_add_test(s, "version 1 host records", test_hosts_v1) ||
	    !CU_add_test(s, "version 2 host records", test_hosts_v2) ||
	    !CU_add_test(s, "hosts that cannot be stored", test_hosts_invalid) ||
	    !CU_add_test(s, "high-water marks", test_marks) ||
	    !CU_add_test(s, "uncommitted turns", test_uncommitted) ||
	    !CU_add_test(s, "STORE_NONE", test_none) ||
	    !CU_add_test(s, "counters", test_counters) ||
	    !CU_add_test(s, "corrupt records, newer format", test_corrupt) ||
	    !CU_add_test(s, "keys and values of the wrong shape",
	    test_corrupt_shapes) ||
	    !CU_add_test(s, "host keys and values out of range",
	    test_hosts_corrupt) ||
	    !CU_add_test(s, "lock values carry a check", test_lock_check) ||
	    !CU_add_test(s, "load stopped by the caller", test_load_stop) ||
	    !CU_add_test(s, "meta.db lost, records kept", test_meta_lost) ||
	    !CU_add_test(s, "hosts.db, locks.db or shares.db lost",
	    test_db_lost))
		return -1;
	return 0;
}
