/*
 * nlmt_grace.c - the grace period as a client sees it, across restarts of
 * nlmd (tests/integration/test_nlm.sh runs the groups in this order, each
 * against the same state directory):
 *
 *   grace-hold      hosts A and B take locks and a share, and leave them;
 *   (kill -9, restart with reclaim-check=conflict and a short grace)
 *   grace-conflict  a new LOCK that conflicts with nothing stored is
 *                   granted at once, one that does is told to wait (also
 *                   when blocking), TEST names the stored holder, a
 *                   reclaim of another host's range is refused, the
 *                   owners' reclaims are granted, what nobody reclaims
 *                   is released at the deadline, a reclaim after grace
 *                   is refused;
 *   (kill -9, restart with reclaim-check=strict and a long grace)
 *   grace-strict    only what is on record is reclaimable; grace ends
 *                   as soon as the last record is reclaimed;
 *   (SIGTERM with nothing held, restart)
 *   grace-none      no grace at all: the first LOCK is granted.
 */
#include "nlmt.h"

#include <string.h>

#define HA	"hosta"
#define HB	"hostb"
#define GF	"g-file"

static struct t_lk
GK(const char *name, const char *fh, const char *oh, int32_t svid,
    uint64_t off, uint64_t len)
{
	struct t_lk k = { name, fh, oh, svid, off, len };

	return k;
}

/* What A and B hold when nlmd is killed the first time. */
#define A_EX	GK(HA, GF, "oh-ga", 301, 0, 10)
#define A_SH	GK(HA, GF, "oh-ga", 301, 100, 10)
#define A_SHR	GK(HA, "g-share", "oh-gs", 0, 0, 0)
#define B_EX	GK(HB, GF, "oh-gb", 302, 20, 10)
#define B_LATE	GK(HB, "g-late", "oh-gl", 303, 0, 10)

bool
group_grace_hold(CLIENT *a4, CLIENT *b4)
{
	struct t_lk a = A_EX, as = A_SH, sh = A_SHR, b = B_EX, late = B_LATE;

	t_eq(l4_lock(a4, &a, true, false, 7), NLM4_GRANTED,
	    "hold: A exclusive [0,10)");
	t_eq(l4_lock(a4, &as, false, false, 7), NLM4_GRANTED,
	    "hold: A shared [100,110)");
	t_eq(l4_share(a4, &sh, fsm_DW, fsa_RW), NLM4_GRANTED,
	    "hold: A share (rw, deny write)");
	t_eq(l4_lock(b4, &b, true, false, 9), NLM4_GRANTED,
	    "hold: B exclusive [20,30)");
	t_eq(l4_lock(b4, &late, true, false, 9), NLM4_GRANTED,
	    "hold: B exclusive on g-late (never reclaimed)");
	return true;
}

bool
group_grace_conflict(CLIENT *a4, CLIENT *b4, unsigned grace_sec)
{
	struct t_lk a = A_EX, as = A_SH, sh = A_SHR, b = B_EX, late = B_LATE;
	struct t_lk k, mine;
	struct t_holder ho;
	uint64_t t0 = t_now_ms(), t;
	int st;

	k = GK(HB, GF, "oh-gb", 302, 40, 10);
	t = t_now_ms();
	t_eq(l4_lock(b4, &k, true, false, 9), NLM4_GRANTED,
	    "grace: B's new LOCK that conflicts with nothing stored is granted");
	t_check(t_now_ms() - t < 1000, "grace: ... at once (%llu ms)",
	    (unsigned long long)(t_now_ms() - t));
	k = GK(HB, GF, "oh-gb", 302, 0, 5);
	t_eq(l4_lock(b4, &k, true, false, 9), NLM4_DENIED_GRACE_PERIOD,
	    "grace: B's LOCK over A's stored lock -> DENIED_GRACE_PERIOD");
	k.off = 5;
	t_eq(l4_lock(b4, &k, true, true, 9), NLM4_DENIED_GRACE_PERIOD,
	    "grace: ... also when blocking (not queued)");
	k = GK(HB, GF, "oh-gb", 302, 0, 5);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED,
	    "grace: TEST answers normally");
	t_check(ho.svid == 301 && ho.excl && ho.off == 0 && ho.len == 10,
	    "grace: TEST names A's stored lock as the holder (svid %d "
	    "%llu+%llu)", ho.svid, (unsigned long long)ho.off,
	    (unsigned long long)ho.len);
	k = GK(HB, GF, "oh-gb", 302, 105, 1);
	t_eq(l4_lock(b4, &k, false, false, 9), NLM4_GRANTED,
	    "grace: shared LOCK over A's stored shared lock is granted");
	k = GK(HB, GF, "oh-gb", 302, 0, 10);
	t_eq(l4_lock_reclaim(b4, &k, true), NLM4_DENIED,
	    "grace: B's reclaim of A's range is refused (reclaim-check "
	    "conflict)");
	t_eq(l4_lock_reclaim(a4, &a, true), NLM4_GRANTED,
	    "grace: A reclaims its exclusive lock");
	t_eq(l4_lock_reclaim(a4, &as, false), NLM4_GRANTED,
	    "grace: A reclaims its shared lock");
	t_eq(l4_share_reclaim(a4, &sh, fsm_DW, fsa_RW), NLM4_GRANTED,
	    "grace: A reclaims its share");
	t_eq(l4_lock_reclaim(b4, &b, true), NLM4_GRANTED,
	    "grace: B reclaims [20,30)");
	k = GK(HA, "g-new", "oh-ga", 301, 300, 10);
	t_eq(l4_lock_reclaim(a4, &k, true), NLM4_GRANTED,
	    "grace: a reclaim of a range nobody held is granted (conflict)");
	(void)l4_unlock(a4, &k);
	/* B's g-late is never reclaimed: held back until the deadline. */
	mine = GK(HA, "g-late", "oh-ga", 301, 0, 5);
	t_eq(l4_lock(a4, &mine, true, false, 7), NLM4_DENIED_GRACE_PERIOD,
	    "grace: LOCK over the unreclaimed g-late -> DENIED_GRACE_PERIOD");
	while ((st = l4_lock(a4, &mine, true, false, 7)) ==
	    NLM4_DENIED_GRACE_PERIOD && t_now_ms() - t0 < grace_sec * 1000 +
	    5000)
		t_sleep_ms(200);
	t = t_now_ms() - t0;
	t_eq(st, NLM4_GRANTED, "grace: after the deadline g-late is free");
	t_check(t + 1500 >= grace_sec * 1000,
	    "grace: ... not before the deadline (%llu ms of %u s)",
	    (unsigned long long)t, grace_sec);
	k = GK(HA, "g-new", "oh-ga", 301, 300, 10);
	t_eq(l4_lock_reclaim(a4, &k, true), NLM4_DENIED_GRACE_PERIOD,
	    "after grace: a reclaim -> DENIED_GRACE_PERIOD");
	t_eq(l4_lock_reclaim(a4, &a, true), NLM4_GRANTED,
	    "after grace: a reclaim of what A holds (re-sent) -> GRANTED");
	(void)l4_unlock(a4, &mine);
	(void)late;
	k = GK(HB, GF, "oh-gb", 302, 105, 1);
	(void)l4_unlock(b4, &k);
	return true;
}

bool
group_grace_strict(CLIENT *a4, CLIENT *b4)
{
	struct t_lk a = A_EX, as = A_SH, sh = A_SHR, b = B_EX, k, free60;
	uint64_t t0 = t_now_ms();

	k = GK(HA, GF, "oh-ga", 301, 0, 20);
	t_eq(l4_lock_reclaim(a4, &k, true), NLM4_DENIED,
	    "strict: reclaim of more than was held -> DENIED");
	k = GK(HA, GF, "oh-ga", 301, 100, 10);
	t_eq(l4_lock_reclaim(a4, &k, true), NLM4_DENIED,
	    "strict: exclusive reclaim of a shared record -> DENIED");
	k = GK(HB, GF, "oh-gb", 302, 60, 10);
	t_eq(l4_lock_reclaim(b4, &k, true), NLM4_DENIED,
	    "strict: reclaim of a free range not on record -> DENIED");
	k = GK(HB, GF, "oh-other", 304, 20, 10);
	t_eq(l4_lock_reclaim(b4, &k, true), NLM4_DENIED,
	    "strict: another owner of the same host cannot reclaim it");
	t_eq(l4_lock_reclaim(a4, &as, false), NLM4_GRANTED,
	    "strict: A reclaims its shared lock");
	t_eq(l4_lock_reclaim(a4, &a, true), NLM4_GRANTED,
	    "strict: A reclaims its exclusive lock");
	t_eq(l4_share_reclaim(a4, &sh, fsm_DW, fsa_RW), NLM4_GRANTED,
	    "strict: A reclaims its share");
	k = GK(HB, GF, "oh-gb", 302, 40, 10);
	t_eq(l4_lock_reclaim(b4, &k, true), NLM4_GRANTED,
	    "strict: B reclaims [40,50) (granted in the last grace)");
	/* The last record: grace ends with this reclaim's turn. */
	t_eq(l4_lock_reclaim(b4, &b, true), NLM4_GRANTED,
	    "strict: B reclaims [20,30), the last record");
	free60 = GK(HB, GF, "oh-gb", 302, 60, 10);
	t_eq(l4_lock_reclaim(b4, &free60, true), NLM4_DENIED_GRACE_PERIOD,
	    "strict: grace over once everything is reclaimed");
	t_eq(l4_lock_reclaim(b4, &b, true), NLM4_GRANTED,
	    "strict: the last reclaim re-sent after grace ended -> GRANTED");
	t_check(t_now_ms() - t0 < 5000, "strict: grace ended early (%llu ms "
	    "after the first reclaim; the deadline was 60 s)",
	    (unsigned long long)(t_now_ms() - t0));
	/* Leave nothing held: the next start has no grace. */
	(void)l4_unlock(a4, &a);
	(void)l4_unlock(a4, &as);
	(void)l4_unshare(a4, &sh, fsm_DW, fsa_RW);
	(void)l4_unlock(b4, &b);
	(void)l4_unlock(b4, &k);
	return false;
}

bool
group_grace_none(CLIENT *a4, CLIENT *b4)
{
	struct t_lk a = A_EX;
	uint64_t t = t_now_ms();

	(void)b4;
	t_eq(l4_lock(a4, &a, true, false, 7), NLM4_GRANTED,
	    "no grace after a clean stop with nothing held: LOCK granted");
	t_check(t_now_ms() - t < 1000, "no grace: ... at once");
	t_eq(l4_lock_reclaim(a4, &a, true), NLM4_GRANTED,
	    "no grace: a reclaim of what A holds -> GRANTED, no change");
	(void)l4_unlock(a4, &a);
	t_eq(l4_lock_reclaim(a4, &a, true), NLM4_DENIED_GRACE_PERIOD,
	    "no grace: a reclaim -> DENIED_GRACE_PERIOD");
	return false;
}
