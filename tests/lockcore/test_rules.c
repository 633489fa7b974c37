/*
 * test_rules.c - ranges, conflicts, POSIX merge/split/upgrade/downgrade,
 * TEST, fencing tokens, argument checks.
 */
#include "lktest.h"

#include <string.h>

#include <CUnit/CUnit.h>

#define OA	1, 100, "ownerA"
#define OB	2, 200, "ownerB"
#define OC	3, 300, "ownerC"
#define EX	true
#define SH	false
#define NB	false
#define BL	true

static struct lk_table *t;

static int
setup(void)
{
	return (t = lk_table_new(NULL)) == NULL;
}

static int
teardown(void)
{
	lk_table_destroy(t);
	t = NULL;
	return 0;
}

/* Each test starts from an empty table. */
static void
reset(void)
{
	lk_table_destroy(t);
	t = lk_table_new(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
}

static void
test_range_edges(void)
{
	reset();
	/* start + len - 1 == UINT64_MAX fits; one more does not. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", UINT64_MAX, 1, EX, NB),
	    NULL), LK_GRANTED);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", UINT64_MAX, 0, EX));
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", UINT64_MAX, 2, EX, NB),
	    NULL), LK_RANGE);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 2, UINT64_MAX, EX, NB),
	    NULL), LK_RANGE);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "f", 5, UINT64_MAX, EX, NB)),
	    LK_RANGE);
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OA, "f", 3, UINT64_MAX, EX, NB)),
	    LK_RANGE);
	/* 1 + UINT64_MAX - 1 == UINT64_MAX: reported as len 0. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "g", 1, UINT64_MAX, EX, NB),
	    NULL), LK_GRANTED);
	CU_ASSERT_TRUE(lt_has(t, OB, "g", 1, 0, EX));
	/* [0, UINT64_MAX - 1] is len UINT64_MAX. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "h", 0, UINT64_MAX, EX, NB),
	    NULL), LK_GRANTED);
	CU_ASSERT_TRUE(lt_has(t, OB, "h", 0, UINT64_MAX, EX));
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "h", UINT64_MAX, 0, EX, NB),
	    NULL), LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "h", UINT64_MAX - 1, 1, EX, NB),
	    NULL), LK_DENIED);
	/* Nothing changed by the refusals. */
	CU_ASSERT_EQUAL(lt_res->rs_nadded + lt_res->rs_nremoved, 0);
}

static void
test_len0_to_eof(void)
{
	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 1000, 0, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "f", UINT64_MAX, 1, SH, NB)),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_start, 1000);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_len, 0);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "f", 0, 1000, EX, NB)),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "f", 0, 1001, EX, NB)),
	    LK_DENIED);
	/* Unlock the last byte only: [1000, UINT64_MAX - 1] stays. */
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OA, "f", UINT64_MAX, 1, EX, NB)),
	    LK_OK);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 1000, UINT64_MAX - 1000, EX));
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "f", UINT64_MAX, 0, EX, NB)),
	    LK_GRANTED);
	/* Whole file: start 0 len 0. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "g", 0, 0, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "g", 12345, 1, EX, NB)),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "g", 12345, 1, SH, NB)),
	    LK_GRANTED);
}

static void
test_touching(void)
{
	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 10, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 10, 10, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 9, 1, SH, NB), NULL),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 1);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 19, 2, SH, NB), NULL),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 2);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 20, 5, EX, NB), NULL),
	    LK_GRANTED);
	/* Other files are independent. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f2", 0, 0, EX, NB), NULL),
	    LK_GRANTED);
}

static void
test_shared(void)
{
	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 100, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 50, 100, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 99, 1, EX, NB), NULL),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 150, 1, EX, NB), NULL),
	    LK_GRANTED);
}

static void
test_holder(void)
{
	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 10, 20, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL_FATAL(lt_test(t, lt_req(OB, "f", 0, 11, SH, NB)),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_kind, LK_REC_LOCK);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 1);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_svid, 100);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_ohlen, 6);
	CU_ASSERT_EQUAL(memcmp(lt_res->rs_holder.rc_oh, "ownerA", 6), 0);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_start, 10);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_len, 20);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_excl, 1);
	CU_ASSERT_FALSE(lt_res->rs_holder_waiting);
	/* TEST by the holder itself is granted and changes nothing. */
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OA, "f", 0, 0, EX, NB)),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "nofile", 0, 0, EX, NB)),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 1);
	/*
	 * Of several conflicting locks, the first in file order (lk_test()),
	 * for TEST and a denied LOCK alike, whatever the order of taking.
	 */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 40, 10, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OC, "f", 0, 5, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL_FATAL(lt_test(t, lt_req(OB, "f", 0, 0, EX, NB)),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 3);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_start, 0);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_len, 5);
	CU_ASSERT_EQUAL_FATAL(lt_test(t, lt_req(OB, "f", 5, 100, EX, NB)),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 1);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_start, 10);
	CU_ASSERT_EQUAL_FATAL(lt_lock(t, lt_req(OB, "f", 3, 40, EX, NB),
	    NULL), LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 3);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_start, 0);
	CU_ASSERT_EQUAL(lt_res->rs_nadded + lt_res->rs_nremoved, 0);
}

static void
test_merge(void)
{
	uint64_t t1, t2;

	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 10, EX, NB), NULL),
	    LK_GRANTED);
	t1 = lt_res->rs_token;
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 20, 10, EX, NB), NULL),
	    LK_GRANTED);
	/* Touching on both sides: one record [0, 30). */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 10, 10, EX, NB), NULL),
	    LK_GRANTED);
	t2 = lt_res->rs_token;
	CU_ASSERT_TRUE(t2 > t1);
	CU_ASSERT_EQUAL(lt_res->rs_nadded, 1);
	CU_ASSERT_EQUAL(lt_res->rs_nremoved, 2);
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 1);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 0, 30, EX));
	CU_ASSERT_EQUAL(lt_token(t, OA, "f", 0, 30, EX), t2);
	/* Covered already: idempotent, same token, no change. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 5, 20, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_res->rs_token, t2);
	CU_ASSERT_EQUAL(lt_res->rs_nadded + lt_res->rs_nremoved, 0);
	/* Overlapping growth: new token. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 25, 10, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_TRUE(lt_res->rs_token > t2);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 0, 35, EX));
	/* Other mode touching: no merge. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 35, 5, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 2);
}

static void
test_split(void)
{
	uint64_t tok;

	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 100, EX, NB), NULL),
	    LK_GRANTED);
	tok = lt_res->rs_token;
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OA, "f", 40, 20, EX, NB)), LK_OK);
	CU_ASSERT_EQUAL(lt_res->rs_nremoved, 1);
	CU_ASSERT_EQUAL(lt_res->rs_nadded, 2);
	CU_ASSERT_EQUAL(lt_token(t, OA, "f", 0, 40, EX), tok);
	CU_ASSERT_EQUAL(lt_token(t, OA, "f", 60, 40, EX), tok);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 40, 20, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 39, 1, EX, NB), NULL),
	    LK_DENIED);
	/* Unlock of what nobody holds, and of other owners' ranges. */
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OC, "f", 0, 0, EX, NB)), LK_OK);
	CU_ASSERT_EQUAL(lt_res->rs_nadded + lt_res->rs_nremoved, 0);
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OC, "nofile", 0, 0, EX, NB)),
	    LK_OK);
	/* Unlock spanning several records and holes. */
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OA, "f", 10, 80, EX, NB)), LK_OK);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 0, 10, EX));
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 90, 10, EX));
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 2);
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(OA, "f", 0, 0, EX, NB)), LK_OK);
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 0);
}

static void
test_upgrade_fails(void)
{
	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 100, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 50, 10, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 100, EX, NB), NULL),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_nadded + lt_res->rs_nremoved, 0);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_host, 2);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 0, 100, SH));
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 1);
	/* An upgrade of the part nobody else holds works, and splits. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 10, 10, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 0, 10, SH));
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 10, 10, EX));
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 20, 80, SH));
	CU_ASSERT_EQUAL(lt_res->rs_nremoved, 1);
	CU_ASSERT_EQUAL(lt_res->rs_nadded, 3);
	/* Downgrade back merges the three pieces into one. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 10, 10, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_TRUE(lt_has(t, OA, "f", 0, 100, SH));
	CU_ASSERT_EQUAL(lt_nlocks(t, OA, "f"), 1);
}

static void
test_svid0(void)
{
	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(1, 0, "oh", "f", 0, 10, EX, NB),
	    NULL), LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(1, 0, "oh", "f", 0, 20, EX, NB),
	    NULL), LK_GRANTED);
	CU_ASSERT_EQUAL(lt_nlocks(t, 1, 0, "oh", "f"), 1);
	/* Same host and oh, svid 1: another owner. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(1, 1, "oh", "f", 5, 1, SH, NB),
	    NULL), LK_DENIED);
	CU_ASSERT_EQUAL(lt_res->rs_holder.rc_svid, 0);
	/* Same svid and oh on another host: another owner. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(2, 0, "oh", "f", 5, 1, SH, NB),
	    NULL), LK_DENIED);
	/* Empty oh is a valid owner handle, distinct from "oh". */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(1, 0, "", "f", 5, 1, SH, NB),
	    NULL), LK_DENIED);
	CU_ASSERT_EQUAL(lt_unlock(t, lt_req(1, 0, "oh", "f", 0, 0, EX, NB)),
	    LK_OK);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(1, 0, "", "f", 5, 1, SH, NB),
	    NULL), LK_GRANTED);
}

static void
test_tokens(void)
{
	struct lk_config cf;
	struct lk_counts ct;
	uint64_t prev;
	int i;

	lk_table_destroy(t);
	lk_config_init(&cf);
	cf.cf_token_seed = 1000000;
	t = lk_table_new(&cf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 1, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_res->rs_token, 1000001);
	CU_ASSERT_EQUAL(lt_res->rs_added[0].rc_token, 1000001);
	prev = lt_res->rs_token;
	for (i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 10 + (uint64_t)i,
		    1, i % 2 == 0, NB), NULL), LK_GRANTED);
		CU_ASSERT_TRUE(lt_res->rs_token > prev);
		prev = lt_res->rs_token;
	}
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_last_token, prev);
	reset();
}

static void
test_inval(void)
{
	struct lk_lockreq rq;
	char big[LK_FH_MAX + 2];

	reset();
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rq = lt_req(OA, big, 0, 1, EX, NB);
	CU_ASSERT_EQUAL(lt_lock(t, rq, NULL), LK_INVAL);
	rq.rq_fhlen = LK_FH_MAX;
	CU_ASSERT_EQUAL(lt_lock(t, rq, NULL), LK_GRANTED);
	rq = lt_req(1, 1, big, "f", 0, 1, EX, NB);
	CU_ASSERT_EQUAL(lt_lock(t, rq, NULL), LK_INVAL);
	rq.rq_ohlen = LK_OH_MAX;
	CU_ASSERT_EQUAL(lt_lock(t, rq, NULL), LK_GRANTED);
	rq = lt_req(OA, "", 0, 1, EX, NB);
	CU_ASSERT_EQUAL(lt_lock(t, rq, NULL), LK_INVAL);
	CU_ASSERT_EQUAL(lt_test(t, rq), LK_INVAL);
	CU_ASSERT_EQUAL(lt_unlock(t, rq), LK_INVAL);
	CU_ASSERT_EQUAL(lt_cancel(t, rq), LK_INVAL);
	CU_ASSERT_STRING_EQUAL(lk_strerror(LK_RANGE), "range beyond 2^64");
	CU_ASSERT_PTR_NOT_NULL(lk_strerror((enum lk_status)99));
	lk_table_destroy(NULL);
}

/*
 * The decision counters nlmctl status and the metrics report
 * (nlmd_lock_decisions_total): each LOCK counts once, by its answer; a
 * TEST counts nothing.  No test counted a denial (found by mutation
 * testing: lk_lock_conflict() not counting LK_DENIED passed them all).
 */
static void
test_decision_counts(void)
{
	static int u1, u2;
	struct lk_counts ct;

	reset();
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 0, 10, EX, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 5, 1, SH, NB), NULL),
	    LK_DENIED);
	CU_ASSERT_EQUAL(lt_test(t, lt_req(OB, "f", 5, 1, SH, NB)), LK_DENIED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 20, 1, SH, NB), NULL),
	    LK_GRANTED);
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OB, "f", 5, 1, SH, BL), &u1),
	    LK_BLOCKED);
	/* OA waiting for OB's byte 20 closes a cycle. */
	CU_ASSERT_EQUAL(lt_lock(t, lt_req(OA, "f", 20, 1, EX, BL), &u2),
	    LK_DEADLOCK);
	lk_table_counts(t, &ct);
	CU_ASSERT_EQUAL(ct.ct_granted, 2);
	CU_ASSERT_EQUAL(ct.ct_denied, 1);
	CU_ASSERT_EQUAL(ct.ct_blocked, 1);
	CU_ASSERT_EQUAL(ct.ct_deadlocks, 1);
	CU_ASSERT_EQUAL(ct.ct_grace_denied, 0);
}

/*
 * Ranges anywhere in the 64-bit space, against a model of segments.  The
 * model test (test_model.c) runs in two spaces, bytes 0..64 and the last
 * 64 bytes, never both in one table: no lock there starts below 2^63 and
 * another above it, so a signed or 32-bit comparison of starts or ends
 * (tree order, touching, overlap) would pass it.  Here every start and
 * end is one of a few points around 2^31, 2^32, 2^63 and 2^64, and the
 * model keeps, per owner, the mode of each segment between consecutive
 * points (no ranges, no merging): LOCK, UNLOCK and TEST are decided per
 * segment, the table's records must be the model's maximal runs, and a
 * holder must hold all of the range reported for it, exactly.
 */
#define WP_NPT	15
#define WP_NSEG	(2 * WP_NPT)
#define WP_NO	4

static const uint64_t wp_pts[WP_NPT] = { 0, 1, 1000, 0x7ffffffe,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
	0x7ffffffffffffffeull, 0x7fffffffffffffffull, 0x8000000000000000ull,
	0x8000000000000001ull, UINT64_MAX - 2, UINT64_MAX - 1, UINT64_MAX };

struct wp_owner {
	uint64_t	 host;
	int32_t		 svid;
	const char	*oh;
};

static const struct wp_owner wp_owners[WP_NO] = {
	{ 1, 1, "a" }, { 1, 2, "a" }, { 2, 1, "a" }, { 2, 1, "b" },
};

struct wp_model {
	uint64_t	 b[WP_NSEG];	/* segment starts, ascending */
	int		 nb;
	uint8_t		 held[WP_NSEG][WP_NO];	/* 0 none, 1 shared, 2 excl */
	int		 bad;		/* records not as the model says */
};

static int
wp_seg(const struct wp_model *m, uint64_t x)
{
	int i;

	for (i = m->nb - 1; i > 0 && m->b[i] > x; i--)
		continue;
	return i;
}

static uint64_t
wp_seg_end(const struct wp_model *m, int i)
{
	return i + 1 < m->nb ? m->b[i + 1] - 1 : UINT64_MAX;
}

static int
wp_owner_of(const struct lk_record *rc)
{
	int i;

	for (i = 0; i < WP_NO; i++)
		if (rc->rc_host == wp_owners[i].host &&
		    rc->rc_svid == wp_owners[i].svid &&
		    rc->rc_ohlen == strlen(wp_owners[i].oh) &&
		    memcmp(rc->rc_oh, wp_owners[i].oh, rc->rc_ohlen) == 0)
			return i;
	return -1;
}

static uint64_t
wp_rec_end(const struct lk_record *rc)
{
	return rc->rc_len == 0 ? UINT64_MAX : rc->rc_start + (rc->rc_len - 1);
}

/* Does the model have exactly rc as a maximal run of its owner? */
static bool
wp_is_run(const struct wp_model *m, const struct lk_record *rc)
{
	int o = wp_owner_of(rc), i, s, e;
	uint8_t mode = rc->rc_excl ? 2 : 1;

	if (o < 0)
		return false;
	s = wp_seg(m, rc->rc_start);
	e = wp_seg(m, wp_rec_end(rc));
	if (m->b[s] != rc->rc_start || wp_seg_end(m, e) != wp_rec_end(rc) ||
	    (s > 0 && m->held[s - 1][o] == mode) ||
	    (e + 1 < m->nb && m->held[e + 1][o] == mode))
		return false;
	for (i = s; i <= e; i++)
		if (m->held[i][o] != mode)
			return false;
	return true;
}

static int
wp_rec_cb(const struct lk_record *rc, void *arg)
{
	struct wp_model *m = arg;

	m->bad += !wp_is_run(m, rc);
	return 0;
}

/* The table's records are the model's runs, all of them. */
static void
wp_compare(struct wp_model *m)
{
	size_t runs = 0, n = 0;
	int i, o;

	for (o = 0; o < WP_NO; o++)
		for (i = 0; i < m->nb; i++)
			runs += m->held[i][o] != 0 &&
			    (i == 0 || m->held[i - 1][o] != m->held[i][o]);
	for (o = 0; o < WP_NO; o++)
		n += lt_nlocks(t, wp_owners[o].host, wp_owners[o].svid,
		    wp_owners[o].oh, "f");
	m->bad = 0;
	lk_lock_foreach(t, wp_rec_cb, m);
	CU_ASSERT_EQUAL(m->bad, 0);
	CU_ASSERT_EQUAL(n, runs);
}

static void
test_wide_points(void)
{
	struct wp_model m;
	struct lk_lockreq rq;
	uint64_t rng = lt_seed(20260331), s, e, len;
	unsigned long step, steps = lt_long() ? 2000000 : 20000;
	enum lk_status st;
	bool ex, conflict;
	int i, k, o, p, op, ss, se;

	reset();
	memset(&m, 0, sizeof(m));
	for (i = 0; i < WP_NPT; i++) {
		m.b[m.nb++] = wp_pts[i];
		if (wp_pts[i] != UINT64_MAX && (i + 1 == WP_NPT ||
		    wp_pts[i + 1] != wp_pts[i] + 1))
			m.b[m.nb++] = wp_pts[i] + 1;
	}
	for (step = 0; step < steps && !CU_get_number_of_failures(); step++) {
		o = (int)(lt_rand(&rng) % WP_NO);
		op = (int)(lt_rand(&rng) % 10);
		s = wp_pts[lt_rand(&rng) % WP_NPT];
		e = wp_pts[lt_rand(&rng) % WP_NPT];
		if (s > e) {
			len = s;
			s = e;
			e = len;
		}
		len = e == UINT64_MAX && lt_rand(&rng) % 2 == 0 ? 0 :
		    e - s + 1;	/* [0, UINT64_MAX]: 0 too */
		ex = lt_rand(&rng) % 2 == 0;
		rq = lt_req(wp_owners[o].host, wp_owners[o].svid,
		    wp_owners[o].oh, "f", s, len, ex, NB);
		ss = wp_seg(&m, s);
		se = wp_seg(&m, e);
		conflict = false;
		for (k = ss; k <= se; k++)
			for (p = 0; p < WP_NO; p++)
				conflict |= p != o && m.held[k][p] != 0 &&
				    (ex || m.held[k][p] == 2);
		if (op < 3) {
			CU_ASSERT_EQUAL(lt_unlock(t, rq), LK_OK);
			for (k = ss; k <= se; k++)
				m.held[k][o] = 0;
			wp_compare(&m);
			continue;
		}
		st = op < 7 ? lt_lock(t, rq, NULL) : lt_test(t, rq);
		CU_ASSERT_EQUAL(st, conflict ? LK_DENIED : LK_GRANTED);
		if (conflict) {
			const struct lk_record *h = &lt_res->rs_holder;

			/* Another owner's lock, all of it, in the way. */
			CU_ASSERT_TRUE(wp_is_run(&m, h));
			CU_ASSERT(wp_owner_of(h) != o && h->rc_start <= e &&
			    wp_rec_end(h) >= s && (ex || h->rc_excl));
		} else if (op < 7)
			for (k = ss; k <= se; k++)
				m.held[k][o] = ex ? 2 : 1;
		wp_compare(&m);
	}
}

int
lt_register_rules(void)
{
	CU_pSuite s = CU_add_suite("lockcore rules", setup, teardown);

	if (s == NULL ||
	    !CU_add_test(s, "range edges (UINT64_MAX)", test_range_edges) ||
	    !CU_add_test(s, "len 0 is to end of file", test_len0_to_eof) ||
	    !CU_add_test(s, "touching ranges do not overlap", test_touching) ||
	    !CU_add_test(s, "shared locks coexist", test_shared) ||
	    !CU_add_test(s, "TEST reports one holder", test_holder) ||
	    !CU_add_test(s, "merge and tokens", test_merge) ||
	    !CU_add_test(s, "unlock in the middle splits", test_split) ||
	    !CU_add_test(s, "failed upgrade changes nothing",
	    test_upgrade_fails) ||
	    !CU_add_test(s, "svid 0 and owner identity", test_svid0) ||
	    !CU_add_test(s, "fencing tokens seeded, increasing", test_tokens) ||
	    !CU_add_test(s, "invalid arguments", test_inval) ||
	    !CU_add_test(s, "decision counters", test_decision_counts) ||
	    !CU_add_test(s, "ranges across 2^31, 2^32 and 2^63 vs segments",
	    test_wide_points))
		return -1;
	return 0;
}
