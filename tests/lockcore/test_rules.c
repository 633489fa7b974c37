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
	    !CU_add_test(s, "invalid arguments", test_inval))
		return -1;
	return 0;
}
