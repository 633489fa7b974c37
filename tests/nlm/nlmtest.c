/*
 * nlmtest.c - integration tests of every NLM procedure against a running
 * nlmd, from a client host (network namespace) of its own.  See nlmt.h and
 * tests/integration/test_nlm.sh, which sets up the hosts and runs
 *
 *   nlmtest --group main|sync|off|both --srv A --srv2 A2 --cli C1 --cli C2
 *           [--srv6 A6 --cli6 C6] [--srvll L%IF --clill L%IF] [--port N]
 *           [--retry-min MS --retry-max MS]
 *
 * once per nlmd callback mode:
 *   main   --callbacks=msg (the default): every procedure of every version,
 *          conflicts, the GRANTED_MSG/GRANTED_RES cycle, retransmission and
 *          backoff, CANCEL/grant races, _MSG -> _RES, FREE_ALL, SHARE,
 *          32-bit range edges, limits, deadlock, FIFO; IPv6 (callbacks
 *          found through RPCB GETADDR) when --srv6/--cli6 are given,
 *          over link-local addresses when --srvll/--clill are.
 *   sync   --callbacks=sync --callback-give-up=2: synchronous GRANTED.
 *   off    --callbacks=off: no callback; the client's re-poll collects.
 *   both   --callbacks=both: GRANTED_MSG and GRANTED alternate.
 *
 * Host A is (first client address, "hosta"), host B (second, "hostb").
 * Every test uses its own file handle and cleans up after itself, so that
 * no callback is left retransmitting when the next one starts.
 */
#include "nlmt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <rpc/pmap_clnt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HA	"hosta"
#define HB	"hostb"
#define U64MAX	UINT64_MAX

static unsigned retry_min = 100, retry_max = 800;

/* Clients of the two hosts, by version and transport. */
static CLIENT *a4, *b4, *b4s2, *a4t, *b4t, *a1, *b1, *a3, *b3;

static struct t_lk
LK(const char *name, const char *fh, const char *oh, int32_t svid,
    uint64_t off, uint64_t len)
{
	struct t_lk k = { name, fh, oh, svid, off, len };

	return k;
}

/* The whole file for an owner (for clean-up). */
static struct t_lk
ALL(const struct t_lk *k)
{
	return LK(k->name, k->fh, k->oh, k->svid, 0, 0);
}

/*
 * Wait for a GRANTED (proc 5) or GRANTED_MSG (10) of version vers and
 * check that it describes k exactly, comes over UDP from srv, and carries
 * an 8-byte cookie.
 */
static struct t_cb *
expect_grant(int vers, int proc, const struct t_lk *k, bool excl,
    const char *srv, const char *what)
{
	struct t_cb *r = cb_wait(vers, proc, 3000);

	t_check(r != NULL, "%s: %s v%d callback arrives", what,
	    proc == 5 ? "GRANTED" : "GRANTED_MSG", vers);
	if (r == NULL)
		return NULL;
	t_check(strcmp(r->from, srv) == 0,
	    "%s: callback comes from the server address the client used "
	    "(want %s, got %s)", what, srv, r->from);
	t_eq(r->cookielen, 8, "%s: callback cookie is 8 bytes", what);
	t_check(!r->tcp, "%s: callback over UDP", what);
	t_check(r->svid == k->svid && r->off == k->off && r->len == k->len &&
	    r->excl == excl && r->fhlen == strlen(k->fh) &&
	    memcmp(r->fh, k->fh, r->fhlen) == 0 &&
	    r->ohlen == strlen(k->oh) && memcmp(r->oh, k->oh, r->ohlen) == 0,
	    "%s: callback echoes the request (svid %d off %llu len %llu "
	    "excl %d; got svid %d off %llu len %llu excl %d)", what, k->svid,
	    (unsigned long long)k->off, (unsigned long long)k->len, excl,
	    r->svid, (unsigned long long)r->off, (unsigned long long)r->len,
	    r->excl);
	return r;
}

/* No callback at all for ms milliseconds (after letting in-flight land). */
static bool
quiet_for(unsigned ms)
{
	t_sleep_ms(30);
	cb_flush();
	t_sleep_ms(ms);
	return cb_count(0, -1) == 0;
}

static void
cleanup_host(CLIENT *c, const char *name)
{
	(void)l4_free_all(c, name, 0);
}

/* ---- basics ---- */

static void
test_basics(void)
{
	CLIENT *c;
	uint8_t buf[64];

	t_eq(t_null(a4), RPC_SUCCESS, "NULL v4/udp");
	t_eq(t_null(a4t), RPC_SUCCESS, "NULL v4/tcp");
	t_eq(t_null(a1), RPC_SUCCESS, "NULL v1/udp");
	t_eq(t_null(a3), RPC_SUCCESS, "NULL v3/udp");
	c = t_clnt(tcfg.cli[0], tcfg.srv, 2, false);
	t_eq(t_null(c), RPC_PROGVERSMISMATCH, "version 2 -> PROG_MISMATCH");
	t_clnt_free(c);
	c = t_clnt(tcfg.cli[0], tcfg.srv, 5, true);
	t_eq(t_null(c), RPC_PROGVERSMISMATCH, "version 5 -> PROG_MISMATCH");
	t_clnt_free(c);
	memset(buf, 0, sizeof(buf));
	t_eq(t_raw(a1, 20, buf, sizeof(buf)), RPC_PROCUNAVAIL,
	    "v1 SHARE (proc 20) -> PROC_UNAVAIL");
	t_eq(t_raw(a1, 23, buf, sizeof(buf)), RPC_PROCUNAVAIL,
	    "v1 FREE_ALL (proc 23) -> PROC_UNAVAIL");
	t_eq(t_raw(a4, 17, buf, sizeof(buf)), RPC_PROCUNAVAIL,
	    "v4 proc 17 -> PROC_UNAVAIL");
	t_eq(t_raw(a3, 24, buf, sizeof(buf)), RPC_PROCUNAVAIL,
	    "v3 proc 24 -> PROC_UNAVAIL");
}

/* ---- conflicts between owners, on one host and across hosts ---- */

static void
test_conflicts(void)
{
	struct t_lk A1 = LK(HA, "f-conf", "oh-a1", 1, 0, 100);
	struct t_lk A2 = LK(HA, "f-conf", "oh-a2", 2, 0, 100);
	struct t_lk A2n = LK(HA, "f-conf", "oh-a2", 2, 100, 50);
	struct t_lk B1 = LK(HB, "f-conf", "oh-b1", 1, 50, 10);
	struct t_lk AatB = LK(HA, "f-conf", "oh-a1", 1, 50, 10);
	struct t_lk Bsame = LK(HB, "f-conf", "oh-a1", 1, 50, 10);
	struct t_lk A0 = LK(HA, "f-conf", "oh-a1", 0, 200, 10);
	struct t_lk A0o = LK(HA, "f-conf", "oh-zz", 0, 200, 10);
	struct t_lk A1b = LK(HA, "f-conf", "oh-a1", 1, 200, 10);
	struct t_holder ho;
	struct t_lk k;

	t_eq(l4_lock(a4, &A1, true, false, 0), NLM4_GRANTED,
	    "LOCK exclusive [0,100) by owner (A,1,oh-a1)");
	t_eq(l4_test(a4, &A2, true, &ho), NLM4_DENIED,
	    "TEST by another owner of the same host -> DENIED");
	t_check(ho.excl && ho.svid == 1 && ho.ohlen == 5 &&
	    memcmp(ho.oh, "oh-a1", 5) == 0 && ho.off == 0 && ho.len == 100,
	    "TEST holder is {exclusive, svid 1, oh-a1, 0, 100} (got excl %d "
	    "svid %d off %llu len %llu)", ho.excl, ho.svid,
	    (unsigned long long)ho.off, (unsigned long long)ho.len);
	t_eq(l4_test(a4, &A1, true, NULL), NLM4_GRANTED,
	    "TEST by the holder itself -> GRANTED");
	t_eq(l4_test(a4, &A2, false, NULL), NLM4_DENIED,
	    "shared TEST against an exclusive lock -> DENIED");
	t_eq(l4_lock(a4, &A2, true, false, 0), NLM4_DENIED,
	    "non-blocking LOCK by another owner of the same host -> DENIED");
	t_eq(l4_lock(a4, &A2n, true, false, 0), NLM4_GRANTED,
	    "adjacent range [100,150) -> GRANTED (no overlap)");
	t_eq(l4_lock(b4, &B1, true, false, 0), NLM4_DENIED,
	    "LOCK from another host (other address, other name) -> DENIED");
	t_eq(l4_test(b4, &B1, false, &ho), NLM4_DENIED,
	    "TEST from another host -> DENIED");
	t_check(ho.svid == 1 && ho.off == 0 && ho.len == 100,
	    "TEST from another host reports the holder");
	t_eq(l4_lock(b4, &AatB, true, false, 0), NLM4_DENIED,
	    "same caller_name/svid/oh from another address is another host");
	t_eq(l4_lock(b4, &Bsame, true, false, 0), NLM4_DENIED,
	    "same svid/oh under another host -> another owner");
	t_eq(l4_lock(a4, &A0, true, false, 0), NLM4_GRANTED,
	    "svid 0 is a valid owner");
	t_eq(l4_lock(a4, &A1b, true, false, 0), NLM4_DENIED,
	    "same oh, svid 1 vs 0 -> different owners conflict");
	t_eq(l4_lock(a4, &A0o, true, false, 0), NLM4_DENIED,
	    "same svid 0, other oh -> different owners conflict");
	k = ALL(&A1);
	t_eq(l4_unlock(a4, &k), NLM4_GRANTED, "UNLOCK whole file");
	k = ALL(&A0);
	(void)l4_unlock(a4, &k);
	k = ALL(&A2);
	(void)l4_unlock(a4, &k);
	t_eq(l4_lock(b4, &B1, true, false, 0), NLM4_GRANTED,
	    "after UNLOCK the other host gets the range");
	k = ALL(&B1);
	(void)l4_unlock(b4, &k);

	/* Shared locks. */
	{
		struct t_lk S1 = LK(HA, "f-shr", "oh-s1", 11, 0, 100);
		struct t_lk S2 = LK(HB, "f-shr", "oh-s2", 12, 50, 50);
		struct t_lk S3 = LK(HA, "f-shr", "oh-s3", 13, 0, 10);

		t_eq(l4_lock(a4, &S1, false, false, 0), NLM4_GRANTED,
		    "shared LOCK by owner 1");
		t_eq(l4_lock(b4, &S2, false, false, 0), NLM4_GRANTED,
		    "overlapping shared LOCK by another host -> GRANTED");
		t_eq(l4_lock(a4, &S3, true, false, 0), NLM4_DENIED,
		    "exclusive LOCK over shared locks -> DENIED");
		t_eq(l4_test(a4, &S3, true, &ho), NLM4_DENIED,
		    "exclusive TEST over shared locks -> DENIED");
		t_check(!ho.excl && ho.svid == 11,
		    "holder of a shared lock is reported non-exclusive");
		t_eq(l4_test(a4, &S3, false, NULL), NLM4_GRANTED,
		    "shared TEST over shared locks -> GRANTED");
		k = ALL(&S1);
		(void)l4_unlock(a4, &k);
		k = ALL(&S2);
		(void)l4_unlock(b4, &k);
	}
}

/* ---- POSIX merge, split, upgrade, downgrade ---- */

static void
test_posix(void)
{
	struct t_lk P = LK(HA, "f-posix", "oh-p", 21, 0, 100);
	struct t_lk Q = LK(HB, "f-posix", "oh-q", 22, 10, 1);
	struct t_holder ho;
	struct t_lk k;

	t_eq(l4_lock(a4, &P, false, false, 0), NLM4_GRANTED, "shared [0,100)");
	t_eq(l4_lock(a4, &P, true, false, 0), NLM4_GRANTED,
	    "upgrade to exclusive by the same owner");
	t_eq(l4_test(b4, &Q, false, &ho), NLM4_DENIED,
	    "other owner sees the upgrade");
	t_check(ho.excl && ho.off == 0 && ho.len == 100,
	    "holder after upgrade is exclusive [0,100)");
	k = LK(HA, "f-posix", "oh-p", 21, 40, 20);
	t_eq(l4_unlock(a4, &k), NLM4_GRANTED, "UNLOCK [40,60) splits");
	k = LK(HB, "f-posix", "oh-q", 22, 40, 20);
	t_eq(l4_lock(b4, &k, true, false, 0), NLM4_GRANTED,
	    "other owner locks the hole [40,60)");
	k = LK(HB, "f-posix", "oh-q", 22, 0, 10);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED, "left piece still held");
	t_check(ho.off == 0 && ho.len == 40 && ho.svid == 21,
	    "left piece is [0,40) (got %llu+%llu)",
	    (unsigned long long)ho.off, (unsigned long long)ho.len);
	k = LK(HB, "f-posix", "oh-q", 22, 90, 1);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED, "right piece still held");
	t_check(ho.off == 60 && ho.len == 40,
	    "right piece is [60,100) (got %llu+%llu)",
	    (unsigned long long)ho.off, (unsigned long long)ho.len);
	k = LK(HB, "f-posix", "oh-q", 22, 0, 0);
	(void)l4_unlock(b4, &k);
	k = LK(HA, "f-posix", "oh-p", 21, 100, 100);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "LOCK [100,200) touching [60,100)");
	k = LK(HB, "f-posix", "oh-q", 22, 150, 1);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED, "merged range held");
	t_check(ho.off == 60 && ho.len == 140,
	    "touching locks merged into [60,200) (got %llu+%llu)",
	    (unsigned long long)ho.off, (unsigned long long)ho.len);
	k = LK(HA, "f-posix", "oh-p", 21, 0, 0);
	t_eq(l4_lock(a4, &k, false, false, 0), NLM4_GRANTED,
	    "downgrade: shared lock over the whole file");
	k = LK(HB, "f-posix", "oh-q", 22, 10, 1);
	t_eq(l4_test(b4, &k, false, NULL), NLM4_GRANTED,
	    "after downgrade a shared TEST passes");
	k = LK(HB, "f-posix", "oh-q", 22, 1000, 1);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED,
	    "after downgrade an exclusive TEST fails");
	t_check(!ho.excl && ho.off == 0 && ho.len == 0,
	    "holder is shared [0,EOF) reported with len 0");
	k = ALL(&P);
	(void)l4_unlock(a4, &k);
	k = LK(HB, "f-posix", "oh-q", 22, 0, 0);
	t_eq(l4_test(b4, &k, true, NULL), NLM4_GRANTED,
	    "whole-file UNLOCK leaves nothing");
}

/* ---- ranges: to EOF, FBIG, UNLOCK of nothing, GRANTED to us ---- */

static void
test_ranges(void)
{
	struct t_lk E = LK(HA, "f-eof", "oh-e", 31, 1000, 0);
	struct t_lk F = LK(HB, "f-eof", "oh-f", 32, 1ull << 50, 1);
	struct t_holder ho;
	struct t_lk k;

	t_eq(l4_lock(a4, &E, true, false, 0), NLM4_GRANTED, "LOCK [1000,EOF)");
	t_eq(l4_test(b4, &F, true, &ho), NLM4_DENIED, "EOF lock covers 2^50");
	t_check(ho.off == 1000 && ho.len == 0,
	    "holder to EOF reported with len 0 (got %llu+%llu)",
	    (unsigned long long)ho.off, (unsigned long long)ho.len);
	k = LK(HB, "f-eof", "oh-f", 32, 0, 1000);
	t_eq(l4_lock(b4, &k, true, false, 0), NLM4_GRANTED,
	    "[0,1000) below it is free");
	k = LK(HA, "f-big", "oh-e", 31, U64MAX, 2);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FBIG,
	    "LOCK offset UINT64_MAX len 2 -> FBIG");
	t_eq(l4_test(a4, &k, true, NULL), NLM4_FBIG,
	    "TEST offset UINT64_MAX len 2 -> FBIG");
	k = LK(HA, "f-big", "oh-e", 31, 1ull << 63, (1ull << 63) + 1);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FBIG,
	    "LOCK 2^63 + (2^63+1) -> FBIG");
	k = LK(HA, "f-big", "oh-e", 31, U64MAX, 1);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "LOCK of the last byte (UINT64_MAX, 1) -> GRANTED");
	k = LK(HB, "f-big", "oh-f", 32, U64MAX - 1, 2);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED, "last byte held");
	t_check(ho.off == U64MAX && ho.len == 0,
	    "lock ending at UINT64_MAX reported with len 0");
	k = LK(HA, "f-big", "oh-e", 31, 1ull << 63, 1ull << 63);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "LOCK 2^63 + 2^63 (ends at UINT64_MAX) -> GRANTED");
	k = LK(HA, "f-big", "oh-e", 31, 0, 0);
	(void)l4_unlock(a4, &k);
	k = ALL(&E);
	(void)l4_unlock(a4, &k);
	k = ALL(&F);
	(void)l4_unlock(b4, &k);

	k = LK("nobody", "f-none", "oh", 1, 0, 10);
	t_eq(l4_unlock(a4, &k), NLM4_GRANTED, "UNLOCK by an unknown host -> "
	    "GRANTED");
	k = LK(HA, "f-none", "oh-x", 1, 0, 10);
	t_eq(l4_unlock(a4, &k), NLM4_GRANTED, "UNLOCK of nothing -> GRANTED");
	t_eq(l4_granted(a4, &k, true), NLM4_DENIED,
	    "GRANTED sent to nlmd -> DENIED");
	t_eq(l1_granted(a1, &k, true), nlm_denied,
	    "v1 GRANTED sent to nlmd -> nlm_denied");
	t_eq(l1_granted(a3, &k, true), nlm_denied,
	    "v3 GRANTED sent to nlmd -> nlm_denied");
}

/* ---- cookies ---- */

static void
test_cookies(void)
{
	struct t_lk k = LK(HA, "f-cookie", "oh-c", 41, 0, 10);
	static uint8_t big[1024], echo[1024];
	const uint8_t odd[7] = { 0, 0xff, 1, 0x80, 0, 0, 7 };
	unsigned elen;
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	t_eq(l4_lock_cookie(a4, &k, "", 0, echo, &elen), NLM4_GRANTED,
	    "LOCK with a zero-length cookie");
	t_eq(elen, 0, "zero-length cookie echoed as zero-length");
	t_eq(l4_lock_cookie(a4, &k, big, sizeof(big), echo, &elen),
	    NLM4_GRANTED, "LOCK with a 1024-byte cookie");
	t_check(elen == sizeof(big) && memcmp(echo, big, elen) == 0,
	    "1024-byte cookie echoed byte for byte");
	t_eq(l4_lock_cookie(a4, &k, odd, sizeof(odd), echo, &elen),
	    NLM4_GRANTED, "LOCK with a 7-byte cookie");
	t_check(elen == sizeof(odd) && memcmp(echo, odd, elen) == 0,
	    "7-byte cookie with zero and high bytes echoed exactly");
	k = ALL(&k);
	(void)l4_unlock(a4, &k);
}

/* ---- limits and bad input ---- */

static void
test_limits(void)
{
	static char n255[256], n256[257], oh1024[1025], fh1024[1025];
	struct t_lk held = LK(HA, "f-lim", "oh-l", 51, 0, 10);
	struct t_lk k;
	uint8_t buf[8192];
	size_t n, i;
	int st;

	memset(n255, 'x', 255);
	memset(n256, 'y', 256);
	memset(oh1024, 'o', 1024);
	memset(fh1024, 'f', 1024);
	t_eq(l4_lock(a4, &held, true, false, 0), NLM4_GRANTED,
	    "a lock to survive the bad input");
	k = LK(n255, "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "caller_name of 255 bytes accepted");
	(void)l4_unlock(a4, &k);
	k = LK(n256, "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FAILED,
	    "caller_name of 256 bytes -> FAILED");
	t_eq(l4_test(a4, &k, true, NULL), NLM4_FAILED,
	    "TEST with caller_name of 256 bytes -> FAILED");
	t_eq(l1_lock(a1, &k, true, false, 0), nlm_denied_nolocks,
	    "v1 LOCK with caller_name of 256 bytes -> nlm_denied_nolocks");
	k = LK("bad/name", "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FAILED,
	    "caller_name with '/' -> FAILED");
	k = LK("bad\001name", "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FAILED,
	    "caller_name with a control character -> FAILED");
	k = LK("bad\tname", "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_unlock(a4, &k), NLM4_FAILED,
	    "UNLOCK with a non-printable caller_name -> FAILED");
	k = LK("bad\177name", "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FAILED,
	    "caller_name with DEL (0x7f) -> FAILED");
	k = LK("caf\303\251", "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_FAILED,
	    "caller_name with bytes over 0x7e (UTF-8) -> FAILED");
	k = LK(" ~sp!ce", "f-lim2", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "caller_name of printable ASCII, space and '~' included, accepted");
	(void)l4_unlock(a4, &k);
	k = LK(HA, "", "oh", 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_STALE_FH,
	    "zero-length file handle -> STALE_FH");
	t_eq(l4_test(a4, &k, true, NULL), NLM4_STALE_FH,
	    "TEST with zero-length file handle -> STALE_FH");
	t_eq(l4_cancel(a4, &k, true, true), NLM4_STALE_FH,
	    "CANCEL with zero-length file handle -> STALE_FH");
	t_eq(l1_lock(a1, &k, true, false, 0), nlm_denied_nolocks,
	    "v1 zero-length file handle -> nlm_denied_nolocks");
	k = LK(HA, fh1024, oh1024, 1, 0, 10);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "1024-byte file handle and owner handle accepted");
	(void)l4_unlock(a4, &k);

	n = t_enc_lock4(buf, sizeof(buf), 4, 5, 4, 4);
	t_eq(t_raw(a4, NLMPROC4_LOCK, buf, n), RPC_SUCCESS,
	    "hand-encoded LOCK arguments are well formed");
	k = LK("nnnnn", "ffff", "oooo", 7, 0, 10);
	(void)l4_unlock(a4, &k);
	n = t_enc_lock4(buf, sizeof(buf), 1025, 5, 4, 4);
	t_eq(t_raw(a4, NLMPROC4_LOCK, buf, n), RPC_CANTDECODEARGS,
	    "cookie of 1025 bytes -> GARBAGE_ARGS");
	n = t_enc_lock4(buf, sizeof(buf), 4, 1025, 4, 4);
	t_eq(t_raw(a4, NLMPROC4_LOCK, buf, n), RPC_CANTDECODEARGS,
	    "caller_name of 1025 bytes -> GARBAGE_ARGS");
	n = t_enc_lock4(buf, sizeof(buf), 4, 5, 1025, 4);
	t_eq(t_raw(a4, NLMPROC4_LOCK, buf, n), RPC_CANTDECODEARGS,
	    "file handle of 1025 bytes -> GARBAGE_ARGS");
	n = t_enc_lock4(buf, sizeof(buf), 4, 5, 4, 1025);
	t_eq(t_raw(a4t, NLMPROC4_LOCK, buf, n), RPC_CANTDECODEARGS,
	    "owner handle of 1025 bytes (TCP) -> GARBAGE_ARGS");
	t_eq(t_null(a4), RPC_SUCCESS, "server answers after bad input");
	k = LK(HB, "f-lim", "oh-z", 52, 0, 10);
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "state untouched by bad input");
	k = ALL(&held);
	(void)l4_unlock(a4, &k);

	/* max-locks-per-host (nlmd started with 50). */
	for (i = 0, st = NLM4_GRANTED; i < 50 && st == NLM4_GRANTED; i++) {
		k = LK("limhost", "f-many", "oh", 1, i * 10, 1);
		st = l4_lock(a4, &k, true, false, 0);
	}
	t_eq(st, NLM4_GRANTED, "50 locks for one host granted");
	k = LK("limhost", "f-many", "oh", 1, 1000, 1);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_DENIED_NOLOCKS,
	    "51st lock over max-locks-per-host -> DENIED_NOLOCKS");
	k = LK("limhost", "f-many", "oh", 1, 0, 0);
	(void)l4_unlock(a4, &k);
	t_eq(l4_lock(a4, &k, true, false, 0), NLM4_GRANTED,
	    "after UNLOCK the host may lock again");
	cleanup_host(a4, "limhost");
}

/* ---- deadlock ---- */

/*
 * A downgrade that closes a cycle (lockcore.h): Y waits for X's lock on
 * f-dl4; on f-dl3, X holds [0,30] exclusive and waits for [20,40] behind
 * Z's exclusive byte 40, and Y waits for [0,40] shared behind X and Z
 * (it waits for X's lock, so X is not held behind it).  X's shared LOCK
 * of [0,30] ends that: Y's older request now holds X's back, and Y waits
 * for X on f-dl4.  The server drops X's queued request, and X sending it
 * again gets DEADLCK (before: BLOCKED, for ever).  (Until 2026-12-06 this
 * took one file, X downgrading [20,30] only; X's exclusive [0,19] in Y's
 * range now lets X past Y.)
 */
static void
test_deadlock_downgrade(void)
{
	struct t_lk XG = LK(HA, "f-dl4", "oh-dx", 43, 0, 1);
	struct t_lk YG = LK(HB, "f-dl4", "oh-dy", 44, 0, 1);
	struct t_lk X = LK(HA, "f-dl3", "oh-dx", 43, 0, 31);
	struct t_lk XW = LK(HA, "f-dl3", "oh-dx", 43, 20, 21);
	struct t_lk Y = LK(HB, "f-dl3", "oh-dy", 44, 0, 41);
	struct t_lk Z = LK(HB, "f-dl3", "oh-dz", 45, 40, 1);

	t_eq(l4_lock(a4, &XG, true, false, 0), NLM4_GRANTED,
	    "downgrade cycle: X locks the other file");
	t_eq(l4_lock(b4, &YG, true, true, 0), NLM4_BLOCKED,
	    "downgrade cycle: Y waits for it");
	t_eq(l4_lock(a4, &X, true, false, 0), NLM4_GRANTED,
	    "downgrade cycle: X locks [0,30]");
	t_eq(l4_lock(b4, &Z, true, false, 0), NLM4_GRANTED,
	    "downgrade cycle: Z locks byte 40");
	t_eq(l4_lock(b4, &Y, false, true, 0), NLM4_BLOCKED,
	    "downgrade cycle: Y waits for [0,40] shared");
	t_eq(l4_lock(a4, &XW, true, true, 0), NLM4_BLOCKED,
	    "downgrade cycle: X waits for [20,40]");
	t_eq(l4_lock(a4, &X, false, false, 0), NLM4_GRANTED,
	    "downgrade cycle: X downgrades [0,30]");
	t_eq(l4_lock(a4, &XW, true, true, 0), NLM4_DEADLCK,
	    "downgrade cycle: X's request sent again -> DEADLCK");
	/* Y gives up first, so that nothing gets granted. */
	t_eq(l4_cancel(b4, &Y, false, true), NLM4_GRANTED,
	    "downgrade cycle: Y cancels");
	t_eq(l4_cancel(b4, &YG, true, true), NLM4_GRANTED,
	    "downgrade cycle: Y cancels the other");
	t_eq(l4_unlock(b4, &Z), NLM4_GRANTED, "downgrade cycle: Z unlocks");
	t_eq(l4_unlock(a4, &X), NLM4_GRANTED, "downgrade cycle: X unlocks");
	t_eq(l4_unlock(a4, &XG), NLM4_GRANTED,
	    "downgrade cycle: X unlocks the other file");
	t_check(quiet_for(300), "downgrade cycle: no callback");
}

static void
test_deadlock(void)
{
	struct t_lk DA1 = LK(HA, "f-dl1", "oh-da", 41, 0, 10);
	struct t_lk DA2 = LK(HA, "f-dl2", "oh-da", 41, 0, 10);
	struct t_lk DB1 = LK(HB, "f-dl1", "oh-db", 42, 0, 10);
	struct t_lk DB2 = LK(HB, "f-dl2", "oh-db", 42, 0, 10);

	t_eq(l4_lock(a4, &DA1, true, false, 0), NLM4_GRANTED, "A locks file 1");
	t_eq(l4_lock(b4, &DB2, true, false, 0), NLM4_GRANTED, "B locks file 2");
	t_eq(l4_lock(a4, &DA2, true, true, 0), NLM4_BLOCKED,
	    "A waits for file 2");
	t_eq(l4_lock(b4, &DB1, true, true, 0), NLM4_DEADLCK,
	    "B waiting for file 1 would deadlock -> DEADLCK");
	t_eq(l1_lock(b1, &DB1, true, true, 0), nlm_denied,
	    "the same in v1 -> nlm_denied");
	t_eq(l1_lock(b3, &DB1, true, true, 0), nlm_denied,
	    "the same in v3 -> nlm_denied");
	t_eq(l4_lock(b4, &DB1, true, false, 0), NLM4_DENIED,
	    "non-blocking instead -> DENIED");
	/* A's waiter first, so that nothing gets granted. */
	t_eq(l4_unlock(a4, &DA2), NLM4_GRANTED, "A's UNLOCK cancels its wait");
	t_eq(l4_unlock(b4, &DB2), NLM4_GRANTED, "B unlocks file 2");
	t_check(quiet_for(300), "no callback after a cancelled wait");
	(void)l4_unlock(a4, &DA1);
	test_deadlock_downgrade();
}

/* ---- the GRANTED_MSG / GRANTED_RES cycle ---- */

static void
test_block_cycle(CLIENT *ha, CLIENT *hb, const char *srv, const char *what)
{
	struct t_lk H = LK(HA, "f-blk", "oh-h", 51, 0, 100);
	struct t_lk W = LK(HB, "f-blk", "oh-w", 52, 5, 100);
	struct t_holder ho;
	struct t_cb *r;
	uint8_t cookie[8];

	cb_flush();
	t_eq(l4_lock(ha, &H, true, false, 0), NLM4_GRANTED, "%s: A locks", what);
	t_eq(l4_lock(hb, &W, true, true, 0), NLM4_BLOCKED,
	    "%s: B's blocking LOCK -> BLOCKED", what);
	t_eq(l4_lock(hb, &W, true, true, 0), NLM4_BLOCKED,
	    "%s: B re-sends the blocked LOCK -> BLOCKED again", what);
	t_check(cb_count(0, -1) == 0, "%s: no callback while A holds", what);
	t_eq(l4_unlock(ha, &H), NLM4_GRANTED, "%s: A unlocks", what);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, srv, what);
	if (r == NULL)
		goto out;
	memcpy(cookie, r->cookie, 8);
	t_eq(l4_granted_res(hb, cookie, 8, NLM4_GRANTED), RPC_SUCCESS,
	    "%s: B sends GRANTED_RES", what);
	t_check(quiet_for(700), "%s: no retransmission after GRANTED_RES",
	    what);
	t_eq(l4_test(ha, &H, true, &ho), NLM4_DENIED, "%s: B holds it", what);
	t_check(ho.svid == 52 && ho.off == 5 && ho.len == 100,
	    "%s: holder is B's lock", what);
	t_eq(l4_lock(hb, &W, true, true, 0), NLM4_GRANTED,
	    "%s: B's LOCK once granted -> GRANTED", what);
	t_eq(l4_unlock(hb, &W), NLM4_GRANTED, "%s: B unlocks", what);
	t_check(quiet_for(300), "%s: no second grant: not queued twice", what);
	t_eq(l4_lock(ha, &H, true, false, 0), NLM4_GRANTED,
	    "%s: A locks again", what);
out:
	(void)l4_unlock(ha, &H);
	(void)l4_unlock(hb, &W);
}

static void
test_res_denied(void)
{
	struct t_lk H = LK(HA, "f-rd", "oh-h", 53, 0, 10);
	struct t_lk W = LK(HB, "f-rd", "oh-w", 54, 0, 10);
	struct t_cb *r;
	uint64_t t0;
	int st;

	cb_flush();
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "res-denied: B waits");
	(void)l4_unlock(a4, &H);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, tcfg.srv,
	    "res-denied");
	if (r == NULL)
		return;
	t_eq(l4_granted_res(b4, r->cookie, 8, NLM4_DENIED), RPC_SUCCESS,
	    "res-denied: B answers GRANTED_RES DENIED");
	t0 = t_now_ms();
	while ((st = l4_test(a4, &H, true, NULL)) != NLM4_GRANTED &&
	    t_now_ms() - t0 < 1000)
		t_sleep_ms(20);
	t_eq(st, NLM4_GRANTED, "res-denied: the refused lock is released");
	t_check(quiet_for(500), "res-denied: no more callbacks");
	(void)l4_unlock(b4, &W);
}

static void
test_res_grace(void)
{
	struct t_lk H = LK(HA, "f-rg", "oh-h", 55, 0, 10);
	struct t_lk W = LK(HB, "f-rg", "oh-w", 56, 0, 10);
	struct t_cb *r, *r2;

	cb_flush();
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "res-grace: B waits");
	(void)l4_unlock(a4, &H);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, tcfg.srv,
	    "res-grace");
	if (r == NULL)
		return;
	(void)l4_granted_res(b4, r->cookie, 8, NLM4_DENIED_GRACE_PERIOD);
	t_sleep_ms(20);
	cb_flush();
	r2 = cb_wait(4, NLMPROC4_GRANTED_MSG, 2000);
	t_check(r2 != NULL && r2->cookielen == 8 &&
	    memcmp(r2->cookie, r->cookie, 8) == 0,
	    "res-grace: DENIED_GRACE_PERIOD -> nlmd keeps retrying, same "
	    "cookie");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED,
	    "res-grace: the lock stays granted to B meanwhile");
	(void)l4_granted_res(b4, r->cookie, 8, NLM4_GRANTED);
	t_check(quiet_for(1000), "res-grace: GRANTED_RES GRANTED stops it");
	(void)l4_unlock(b4, &W);
}

/*
 * Our receiver replies to every GRANTED_MSG, as a Linux client's lockd
 * does before its GRANTED_RES: a copy taken is sent again only after
 * callback-retry-max-ms (nlm_grant.c grant_sent(); the backoff of copies
 * nobody replied to is in tests/service), so that a GRANTED_RES on its
 * way comes first.  The sends are counted over 2.75 times retry_max from
 * the first one seen: they come 0, 1 and 2 times retry_max after it, each
 * retransmission later by however late its timer ran on a loaded machine
 * (600 ms in all here), a fourth no sooner than 3 times.  (Counted over
 * 2.25 times retry_max from the unlock's answer, a third send late by
 * 200 ms in all was not counted: "2 sends", with nlmd right.)
 */
static void
test_retransmit(void)
{
	struct t_lk H = LK(HA, "f-rt", "oh-h", 57, 0, 10);
	struct t_lk W = LK(HB, "f-rt", "oh-w", 58, 0, 10);
	struct t_cb *r[16];
	uint8_t bad[8];
	uint64_t iv[16], end, span = retry_max * 2 + retry_max * 3 / 4;
	int n, i;
	bool same = true, waited = true;

	cb_flush();
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "retransmit: B waits");
	(void)l4_unlock(a4, &H);
	n = (r[0] = cb_wait(4, NLMPROC4_GRANTED_MSG, retry_max)) != NULL;
	end = n > 0 ? r[0]->t_ms + span : 0;
	for (; n > 0 && n < 16 && t_now_ms() < end; n++) {
		r[n] = cb_wait(4, NLMPROC4_GRANTED_MSG,
		    (unsigned)(end - t_now_ms()));
		if (r[n] == NULL)
			break;
	}
	t_check(n == 3, "retransmit: GRANTED_MSG resent while unacknowledged "
	    "(%d sends in %llu ms from the first)", n,
	    (unsigned long long)span);
	if (n < 2)
		goto out;
	for (i = 1; i < n; i++) {
		iv[i - 1] = r[i]->t_ms - r[i - 1]->t_ms;
		if (memcmp(r[i]->cookie, r[0]->cookie, 8) != 0)
			same = false;
		if (iv[i - 1] + 30 < retry_max || iv[i - 1] > retry_max + 400)
			waited = false;
	}
	t_check(same, "retransmit: every retransmission carries the same "
	    "cookie");
	t_note("retransmit intervals (ms): %llu %llu",
	    (unsigned long long)iv[0], (unsigned long long)(n > 2 ? iv[1] : 0));
	t_check(waited, "retransmit: a copy the client took is sent again "
	    "after about callback-retry-max-ms, not at the backoff step");
	memset(bad, 0x5a, sizeof(bad));
	(void)l4_granted_res(b4, bad, 8, NLM4_GRANTED);
	(void)l4_granted_res(b4, r[0]->cookie, 4, NLM4_GRANTED);
	(void)l4_granted_res(a4, r[0]->cookie, 8, NLM4_GRANTED);
	t_sleep_ms(20);
	cb_flush();
	t_check(cb_wait(4, NLMPROC4_GRANTED_MSG, retry_max + 500) != NULL,
	    "retransmit: GRANTED_RES with a wrong cookie, a truncated cookie "
	    "or from another host is ignored");
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_GRANTED,
	    "retransmit: B's re-sent LOCK -> GRANTED (acknowledges)");
	t_check(quiet_for(retry_max + 400),
	    "retransmit: the re-sent LOCK stopped the retransmissions");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED,
	    "retransmit: B still holds the lock");
out:
	(void)l4_unlock(b4, &W);
	(void)l4_unlock(a4, &H);
}

/* ---- CANCEL, and CANCEL/UNLOCK racing a grant ---- */

static void
test_cancel(void)
{
	struct t_lk H = LK(HA, "f-can", "oh-h", 61, 0, 10);
	struct t_lk W = LK(HB, "f-can", "oh-w", 62, 0, 10);
	struct t_lk N = LK("nobody2", "f-can", "oh-n", 1, 0, 10);
	struct t_cb *r;
	uint8_t cookie[8];

	cb_flush();
	t_eq(l4_cancel(b4, &N, true, true), NLM4_DENIED,
	    "CANCEL from an unknown host -> DENIED");
	t_eq(l4_cancel(b4, &W, true, true), NLM4_DENIED,
	    "CANCEL of nothing -> DENIED");
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "cancel: B waits");
	t_eq(l4_cancel(b4, &W, false, true), NLM4_DENIED,
	    "CANCEL with another mode than the wait -> DENIED");
	t_eq(l4_cancel(b4, &W, true, true), NLM4_GRANTED,
	    "CANCEL of the waiter -> GRANTED");
	t_eq(l4_cancel(b4, &W, true, true), NLM4_DENIED,
	    "second CANCEL -> DENIED");
	(void)l4_unlock(a4, &H);
	t_check(quiet_for(400), "cancel: no callback for a cancelled wait");
	t_eq(l4_lock(a4, &H, true, false, 0), NLM4_GRANTED,
	    "cancel: A can lock again");

	/* Granted, callback sent, not yet acknowledged: CANCEL releases. */
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "race: B waits");
	(void)l4_unlock(a4, &H);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, tcfg.srv,
	    "cancel race");
	if (r != NULL)
		memcpy(cookie, r->cookie, 8);
	t_eq(l4_cancel(b4, &W, true, true), NLM4_GRANTED,
	    "race: CANCEL after the grant, before GRANTED_RES -> GRANTED");
	t_eq(l4_lock(a4, &H, true, false, 0), NLM4_GRANTED,
	    "race: the cancelled grant was released");
	if (r != NULL)
		(void)l4_granted_res(b4, cookie, 8, NLM4_GRANTED);
	t_eq(l4_test(b4, &W, true, NULL), NLM4_DENIED,
	    "race: a late GRANTED_RES does not bring the lock back");
	t_check(quiet_for(400), "race: no callback after the cancel");

	/* The same with UNLOCK instead of CANCEL. */
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "race2: B waits");
	(void)l4_unlock(a4, &H);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, tcfg.srv,
	    "unlock race");
	t_eq(l4_unlock(b4, &W), NLM4_GRANTED,
	    "race2: UNLOCK after the grant, before GRANTED_RES");
	t_eq(l4_lock(a4, &H, true, false, 0), NLM4_GRANTED,
	    "race2: the unlocked grant was released");
	t_check(quiet_for(400), "race2: no callback after the unlock");

	/* UNLOCK of a waiting range cancels the wait. */
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "unlock-wait: B waits");
	t_eq(l4_unlock(b4, &W), NLM4_GRANTED,
	    "unlock-wait: B's UNLOCK of its waiting range -> GRANTED");
	(void)l4_unlock(a4, &H);
	t_check(quiet_for(400), "unlock-wait: UNLOCK cancelled the wait");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_GRANTED,
	    "unlock-wait: nobody holds the range");
}

/* ---- FIFO: no barging past an older waiter ---- */

static void
test_fifo(void)
{
	struct t_lk X = LK(HA, "f-fifo", "oh-x", 71, 0, 10);
	struct t_lk W1 = LK(HB, "f-fifo", "oh-w1", 72, 0, 10);
	struct t_lk W2 = LK(HA, "f-fifo", "oh-w2", 73, 0, 10);
	struct t_lk XE = LK(HA, "f-fifo", "oh-x", 71, 50, 10);
	struct t_lk W3 = LK(HB, "f-fifo", "oh-w1", 72, 0, 100);
	struct t_cb *r;

	cb_flush();
	t_eq(l4_lock(a4, &X, false, false, 0), NLM4_GRANTED, "fifo: X shared");
	t_eq(l4_lock(b4, &W1, true, true, 0), NLM4_BLOCKED,
	    "fifo: W1 exclusive waits");
	t_eq(l4_lock(a4, &W2, false, false, 0), NLM4_DENIED,
	    "fifo: W2 shared non-blocking does not barge past W1 -> DENIED");
	t_eq(l4_test(a4, &W2, false, NULL), NLM4_DENIED,
	    "fifo: TEST answers as the non-blocking LOCK");
	t_eq(l4_lock(a4, &W2, false, true, 0), NLM4_BLOCKED,
	    "fifo: W2 shared blocking queues behind W1");
	(void)l4_unlock(a4, &X);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W1, true, tcfg.srv,
	    "fifo W1");
	t_check(r != NULL && r->svid == 72, "fifo: the older waiter W1 is "
	    "granted first");
	if (r != NULL)
		(void)l4_granted_res(b4, r->cookie, 8, NLM4_GRANTED);
	t_check(quiet_for(300), "fifo: W2 not granted while W1 holds");
	(void)l4_unlock(b4, &W1);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W2, false, tcfg.srv,
	    "fifo W2");
	if (r != NULL)
		(void)l4_granted_res(a4, r->cookie, 8, NLM4_GRANTED);
	(void)l4_unlock(a4, &W2);
	t_check(quiet_for(200), "fifo: done");

	/*
	 * A reader upgrades while a writer waits for it: granted, as a local
	 * fcntl() grants it (before: DEADLCK, W1 being older).
	 */
	t_eq(l4_lock(a4, &X, false, false, 0), NLM4_GRANTED,
	    "fifo upgrade: X shared");
	t_eq(l4_lock(b4, &W1, true, true, 0), NLM4_BLOCKED,
	    "fifo upgrade: W1 exclusive waits for X");
	t_eq(l4_lock(a4, &X, true, true, 0), NLM4_GRANTED,
	    "fifo upgrade: X's upgrade is not held behind W1 -> GRANTED");
	(void)l4_unlock(a4, &X);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W1, true, tcfg.srv,
	    "fifo upgrade W1");
	if (r != NULL)
		(void)l4_granted_res(b4, r->cookie, 8, NLM4_GRANTED);
	(void)l4_unlock(b4, &W1);
	t_check(quiet_for(200), "fifo upgrade: done");

	/*
	 * So is a write lock of the reader's on other bytes of the writer's
	 * range: the writer waits for the read lock all the same (before
	 * 2026-12-06: DEADLCK).
	 */
	t_eq(l4_lock(a4, &X, false, false, 0), NLM4_GRANTED,
	    "fifo elsewhere: X shared [0,9]");
	t_eq(l4_lock(b4, &W3, true, true, 0), NLM4_BLOCKED,
	    "fifo elsewhere: W3 exclusive [0,99] waits for X");
	t_eq(l4_lock(a4, &XE, true, true, 0), NLM4_GRANTED,
	    "fifo elsewhere: X's [50,59] exclusive is not held behind W3 "
	    "-> GRANTED");
	(void)l4_unlock(a4, &X);
	t_check(quiet_for(200), "fifo elsewhere: W3 still waits for [50,59]");
	(void)l4_unlock(a4, &XE);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W3, true, tcfg.srv,
	    "fifo elsewhere W3");
	if (r != NULL)
		(void)l4_granted_res(b4, r->cookie, 8, NLM4_GRANTED);
	(void)l4_unlock(b4, &W3);
	t_check(quiet_for(200), "fifo elsewhere: done");
}

/* ---- _MSG procedures and _RES delivery ---- */

static void
no_stray(CLIENT *c, const char *what)
{
	char b[64];
	ssize_t n;

	n = recv(t_clnt_fd(c), b, sizeof(b), MSG_DONTWAIT | MSG_PEEK);
	t_check(n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK),
	    "%s: nothing sent back to the request's source port", what);
}

static struct t_cb *
expect_res_from(const char *srv, int vers, int proc, const void *cookie,
    unsigned clen, int stat, const char *what)
{
	struct t_cb *r = cb_wait(vers, proc, 3000);

	t_check(r != NULL, "%s: _RES (proc %d v%d) arrives at the client's "
	    "registered NLM port", what, proc, vers);
	if (r == NULL)
		return NULL;
	t_check(cookie == NULL || (r->cookielen == clen &&
	    memcmp(r->cookie, cookie, clen) == 0), "%s: cookie echoed", what);
	t_eq(r->stat, stat, "%s: status", what);
	t_check(strcmp(r->from, srv) == 0 && !r->tcp,
	    "%s: sent over UDP from the server address (%s)", what, r->from);
	return r;
}

static struct t_cb *
expect_res(int vers, int proc, const void *cookie, unsigned clen, int stat,
    const char *what)
{
	return expect_res_from(tcfg.srv, vers, proc, cookie, clen, stat, what);
}

static void
test_msg(void)
{
	struct t_lk M = LK(HB, "f-msg", "oh-m", 81, 0, 10);
	struct t_lk K = LK(HA, "f-msg", "oh-k", 82, 5, 1);
	struct t_lk K2 = LK(HA, "f-msg", "oh-k", 82, 20, 1);
	struct t_lk V = LK(HA, "f-msg1", "oh-v", 83, 0, 10);
	CLIENT *cm = t_clnt(tcfg.cli[0], tcfg.srv, NLM4_VERS, false);
	struct t_cb *r;
	struct t_lk k;
	uint8_t ck[6] = { 'm', 's', 'g', 0, 1, 2 };
	nlm4_res r4;
	nlm4_testres tr4;
	nlm_res r1;

	cb_flush();
	(void)l4_lock(b4, &M, true, false, 0);
	t_eq(l4_msg(cm, NLMPROC4_TEST_MSG, &K, true, false, ck, 6),
	    RPC_SUCCESS, "TEST_MSG answered with a void reply");
	r = expect_res(4, NLMPROC4_TEST_RES, ck, 6, NLM4_DENIED, "TEST_MSG");
	if (r != NULL)
		t_check(r->holder.svid == 81 && r->holder.excl &&
		    r->holder.off == 0 && r->holder.len == 10,
		    "TEST_RES carries the holder");
	no_stray(cm, "TEST_MSG");
	t_eq(l4_msg(cm, NLMPROC4_LOCK_MSG, &K, true, false, ck, 6),
	    RPC_SUCCESS, "LOCK_MSG (conflicting) -> void reply");
	expect_res(4, NLMPROC4_LOCK_RES, ck, 6, NLM4_DENIED, "LOCK_MSG denied");
	t_eq(l4_msg(cm, NLMPROC4_LOCK_MSG, &K2, true, false, ck, 6),
	    RPC_SUCCESS, "LOCK_MSG (free range)");
	expect_res(4, NLMPROC4_LOCK_RES, ck, 6, NLM4_GRANTED,
	    "LOCK_MSG granted");
	t_eq(l4_msg(cm, NLMPROC4_LOCK_MSG, &K, true, true, ck, 0),
	    RPC_SUCCESS, "LOCK_MSG blocking, zero-length cookie");
	expect_res(4, NLMPROC4_LOCK_RES, "", 0, NLM4_BLOCKED,
	    "LOCK_MSG blocked");
	(void)l4_unlock(b4, &M);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &K, true, tcfg.srv,
	    "LOCK_MSG then grant");
	if (r != NULL)
		(void)l4_granted_res(cm, r->cookie, 8, NLM4_GRANTED);
	t_eq(l4_msg(cm, NLMPROC4_UNLOCK_MSG, &K, true, false, ck, 3),
	    RPC_SUCCESS, "UNLOCK_MSG");
	expect_res(4, NLMPROC4_UNLOCK_RES, ck, 3, NLM4_GRANTED, "UNLOCK_MSG");
	k = LK(HB, "f-msg", "oh-m", 81, 20, 1);
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "UNLOCK_MSG was range-exact: K2 still held");
	t_eq(l4_msg(cm, NLMPROC4_CANCEL_MSG, &K, true, true, ck, 6),
	    RPC_SUCCESS, "CANCEL_MSG of nothing");
	expect_res(4, NLMPROC4_CANCEL_RES, ck, 6, NLM4_DENIED, "CANCEL_MSG");
	t_eq(l4_msg(cm, NLMPROC4_GRANTED_MSG, &K, true, false, ck, 6),
	    RPC_SUCCESS, "GRANTED_MSG sent to nlmd");
	expect_res(4, NLMPROC4_GRANTED_RES, ck, 6, NLM4_DENIED,
	    "GRANTED_MSG to nlmd");
	no_stray(cm, "all _MSG");
	t_eq(l4_msg(a4t, NLMPROC4_UNLOCK_MSG, &K2, true, false, ck, 6),
	    RPC_SUCCESS, "UNLOCK_MSG over TCP");
	expect_res(4, NLMPROC4_UNLOCK_RES, ck, 6, NLM4_GRANTED,
	    "UNLOCK_MSG over TCP (reply by UDP)");

	/* v1 and v3: the _RES goes to the client's NLM of that version. */
	t_eq(l1_msg(a1, NLMPROC_LOCK_MSG, &V, true, false), RPC_SUCCESS,
	    "v1 LOCK_MSG");
	expect_res(1, NLMPROC_LOCK_RES, NULL, 0, nlm_granted, "v1 LOCK_MSG");
	t_eq(l1_msg(b3, NLMPROC_TEST_MSG, &V, true, false), RPC_SUCCESS,
	    "v3 TEST_MSG");
	r = expect_res(3, NLMPROC_TEST_RES, NULL, 0, nlm_denied, "v3 TEST_MSG");
	if (r != NULL)
		t_check(r->holder.svid == 83 && r->holder.len == 10,
		    "v3 TEST_RES carries the holder");
	t_eq(l1_msg(a3, NLMPROC_UNLOCK_MSG, &V, true, false), RPC_SUCCESS,
	    "v3 UNLOCK_MSG");
	expect_res(3, NLMPROC_UNLOCK_RES, NULL, 0, nlm_granted,
	    "v3 UNLOCK_MSG");
	t_eq(l1_msg(a1, NLMPROC_TEST_MSG, &V, true, false), RPC_SUCCESS,
	    "v1 TEST_MSG");
	expect_res(1, NLMPROC_TEST_RES, NULL, 0, nlm_granted, "v1 TEST_MSG");

	/* _RES procedures sent to nlmd are accepted (void reply). */
	memset(&r4, 0, sizeof(r4));
	memset(&tr4, 0, sizeof(tr4));
	memset(&r1, 0, sizeof(r1));
	t_eq(nlmproc4_test_res_4(&tr4, NULL, a4), RPC_SUCCESS,
	    "TEST_RES to nlmd accepted");
	t_eq(nlmproc4_lock_res_4(&r4, NULL, a4), RPC_SUCCESS,
	    "LOCK_RES to nlmd accepted");
	t_eq(nlmproc4_cancel_res_4(&r4, NULL, a4), RPC_SUCCESS,
	    "CANCEL_RES to nlmd accepted");
	t_eq(nlmproc4_unlock_res_4(&r4, NULL, a4), RPC_SUCCESS,
	    "UNLOCK_RES to nlmd accepted");
	t_eq(nlmproc4_granted_res_4(&r4, NULL, a4), RPC_SUCCESS,
	    "GRANTED_RES matching nothing accepted");
	t_eq(nlmproc_lock_res_1(&r1, NULL, a1), RPC_SUCCESS,
	    "v1 LOCK_RES to nlmd accepted");
	t_eq(nlmproc_granted_res_3(&r1, NULL, a3), RPC_SUCCESS,
	    "v3 GRANTED_RES to nlmd accepted");
	t_check(quiet_for(200), "_MSG: nothing left over");
	t_clnt_free(cm);
}

/* ---- FREE_ALL, NM_LOCK, SM_NOTIFY from afar, NSM state ---- */

static void
test_free_all(void)
{
	struct t_lk F1 = LK("fahost", "f-fa", "oh-f1", 91, 0, 10);
	struct t_lk F2 = LK("fahost", "f-fa", "oh-f2", 92, 20, 10);
	struct t_lk F3 = LK("fahost2", "f-fa", "oh-f3", 93, 40, 10);
	struct t_lk O = LK(HB, "f-fa", "oh-o", 94, 0, 10);
	struct t_lk k;

	t_eq(l4_lock(a4, &F1, true, false, 0), NLM4_GRANTED,
	    "fahost@A locks");
	t_eq(l4_free_all(b4, "fahost", 0), RPC_SUCCESS,
	    "FREE_ALL fahost sent from B's address");
	t_eq(l4_test(b4, &O, true, NULL), NLM4_DENIED,
	    "FREE_ALL from a foreign address releases nothing");
	t_eq(l4_lock(b4, &F2, true, false, 0), NLM4_GRANTED,
	    "fahost@B (same name, other address) locks");
	t_eq(l4_lock(a4, &F3, true, false, 0), NLM4_GRANTED,
	    "fahost2@A locks");
	t_eq(l4_free_all(a4, "fahost", 0), RPC_SUCCESS,
	    "FREE_ALL fahost from A's address");
	t_eq(l4_test(b4, &O, true, NULL), NLM4_GRANTED,
	    "FREE_ALL released fahost@A");
	k = O;
	k.off = 20;
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "FREE_ALL kept fahost@B (other address)");
	k.off = 40;
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "FREE_ALL kept fahost2@A (other name)");
	t_eq(l1_free_all(b3, "fahost", 0), RPC_SUCCESS, "v3 FREE_ALL from B");
	k.off = 20;
	t_eq(l4_test(b4, &k, true, NULL), NLM4_GRANTED,
	    "v3 FREE_ALL released fahost@B");
	t_eq(l4_free_all(a4, "bad/name", 0), RPC_SUCCESS,
	    "FREE_ALL with a bad name is answered");
	cleanup_host(a4, "fahost2");
	k.off = 40;
	t_eq(l4_test(b4, &k, true, NULL), NLM4_GRANTED, "fahost2 released");
}

static void
test_nm_lock(void)
{
	struct t_lk N1 = LK(HA, "f-nm", "oh-n1", 101, 0, 10);
	struct t_lk N2 = LK(HB, "f-nm", "oh-n2", 102, 5, 10);
	struct t_lk N3 = LK(HB, "f-nm", "oh-n3", 103, 20, 10);
	struct t_lk k;

	t_eq(l4_nm_lock(a4, &N1, true, false), NLM4_GRANTED, "NM_LOCK v4");
	t_eq(l4_nm_lock(b4, &N2, true, false), NLM4_DENIED,
	    "conflicting NM_LOCK v4 -> DENIED");
	t_eq(l1_nm_lock(b3, &N3, true, false), nlm_granted, "NM_LOCK v3");
	k = N3;
	k.oh = "oh-other";
	t_eq(l1_nm_lock(a3, &k, true, false), nlm_denied,
	    "conflicting NM_LOCK v3 -> nlm_denied");
	t_eq(l4_test(b4, &N2, true, NULL), NLM4_DENIED,
	    "NM_LOCK'ed range shows in TEST");
	(void)l4_unlock(a4, &N1);
	(void)l1_unlock(b3, &N3);
	t_eq(l4_test(b4, &N2, true, NULL), NLM4_GRANTED, "NM locks unlocked");
}

static void
test_sm_notify(void)
{
	struct t_lk H = LK(HA, "f-smn", "oh-h", 111, 0, 10);
	struct t_lk O = LK(HB, "f-smn", "oh-o", 112, 0, 10);
	nlm_sm_status s;

	(void)l4_lock(a4, &H, true, false, 0);
	memset(&s, 0, sizeof(s));
	s.mon_name = (char *)HA;
	s.state = 7;
	t_eq(nlmproc4_sm_notify_4(&s, NULL, a4), RPC_SUCCESS,
	    "private SM_NOTIFY (proc 16) from a remote host is answered");
	t_eq(l4_test(b4, &O, true, NULL), NLM4_DENIED,
	    "... and ignored: the host's locks stay");
	(void)l4_unlock(a4, &H);
}

static void
test_nsm_state(void)
{
	struct t_lk S1 = LK("sthost", "f-st", "oh-s", 121, 0, 10);
	struct t_lk S2 = LK("sthost", "f-st", "oh-s", 121, 20, 10);
	struct t_lk S3 = LK("sthost", "f-st2", "oh-s", 121, 0, 10);
	struct t_lk S4 = LK("sthost", "f-st3", "oh-s", 121, 0, 10);
	struct t_lk O = LK(HB, "f-st", "oh-o", 122, 0, 10);
	struct t_lk k;

	t_eq(l4_lock(a4, &S1, true, false, 3), NLM4_GRANTED, "state 3: lock 1");
	t_eq(l4_lock(a4, &S2, true, false, 3), NLM4_GRANTED, "state 3: lock 2");
	t_eq(l4_test(b4, &O, true, NULL), NLM4_DENIED, "state 3 locks held");
	t_eq(l4_lock(a4, &S3, true, false, 5), NLM4_GRANTED,
	    "LOCK with NSM state 5");
	t_eq(l4_test(b4, &O, true, NULL), NLM4_GRANTED,
	    "state change released the host's older lock 1");
	k = O;
	k.off = 20;
	t_eq(l4_test(b4, &k, true, NULL), NLM4_GRANTED,
	    "state change released the host's older lock 2");
	k = O;
	k.fh = "f-st2";
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "the new lock is held");
	t_eq(l4_lock(a4, &S4, true, false, 0), NLM4_GRANTED,
	    "LOCK with state 0 (unknown)");
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "state 0 does not count as a reboot");
	t_eq(l4_lock(a4, &S1, true, false, 5), NLM4_GRANTED,
	    "same state 5 again");
	t_eq(l4_test(b4, &k, true, NULL), NLM4_DENIED,
	    "an unchanged state releases nothing");
	cleanup_host(a4, "sthost");
}

/* ---- SHARE / UNSHARE ---- */

static void
test_share(void)
{
	struct t_lk SA = LK(HA, "f-sh", "oh-sa", 0, 0, 0);
	struct t_lk SB = LK(HB, "f-sh", "oh-sb", 0, 0, 0);
	struct t_lk SC = LK(HA, "f-sh", "oh-sc", 0, 0, 0);
	struct t_lk SN = LK("nobody3", "f-sh", "oh-n", 0, 0, 0);
	struct t_lk V = LK(HB, "f-sh3", "oh-v", 0, 0, 0);
	struct t_lk V2 = LK(HA, "f-sh3", "oh-v2", 0, 0, 0);
	uint8_t buf[64];

	t_eq(l4_share(a4, &SA, fsm_DW, fsa_R), NLM4_GRANTED,
	    "SHARE read, deny write");
	t_eq(l4_share(b4, &SB, fsm_DN, fsa_W), NLM4_DENIED,
	    "SHARE write against deny-write -> DENIED");
	t_eq(l4_share(b4, &SB, fsm_DN, fsa_R), NLM4_GRANTED,
	    "SHARE read, deny none -> GRANTED");
	t_eq(l4_share(a4, &SC, fsm_DR, fsa_NONE), NLM4_DENIED,
	    "deny-read against readers -> DENIED");
	t_eq(l4_share(a4, &SC, fsm_DN, fsa_RW), NLM4_DENIED,
	    "read-write against deny-write -> DENIED");
	t_eq(l4_share(a4, &SC, fsm_DN, fsa_NONE), NLM4_GRANTED,
	    "access none, deny none -> GRANTED");
	t_eq(l4_unshare(a4, &SA, fsm_DW, fsa_R), NLM4_GRANTED, "UNSHARE");
	t_eq(l4_share(b4, &SB, fsm_DN, fsa_RW), NLM4_GRANTED,
	    "after UNSHARE, write access -> GRANTED (replaces B's share)");
	t_eq(l4_share(a4, &SA, fsm_DN, fsa_R), NLM4_GRANTED,
	    "read, deny none alongside -> GRANTED");
	t_eq(l4_share(a4, &SA, fsm_DW, fsa_R), NLM4_DENIED,
	    "deny-write against a writer -> DENIED");
	t_eq(l4_unshare(a4, &SN, fsm_DN, fsa_R), NLM4_GRANTED,
	    "UNSHARE of nothing -> GRANTED");
	t_eq(l4_share(a4, &SN, 4, fsa_R), NLM4_FAILED,
	    "fsh_mode 4 -> FAILED");
	t_eq(l4_share(a4, &SN, fsm_DN, 5), NLM4_FAILED,
	    "fsh_access 5 -> FAILED");
	(void)l4_unshare(a4, &SA, 0, 0);
	(void)l4_unshare(a4, &SC, 0, 0);
	(void)l4_unshare(b4, &SB, 0, 0);
	t_eq(l4_share(a4, &SC, fsm_DRW, fsa_RW), NLM4_GRANTED,
	    "all unshared: exclusive share -> GRANTED");
	(void)l4_unshare(a4, &SC, 0, 0);

	t_eq(l1_share(b3, &V, fsm_DRW, fsa_R), nlm_granted, "v3 SHARE");
	t_eq(l1_share(a3, &V2, fsm_DN, fsa_R), nlm_denied,
	    "v3 SHARE conflict -> nlm_denied");
	t_eq(l1_unshare(b3, &V, 0, 0), nlm_granted, "v3 UNSHARE");
	t_eq(l1_share(a3, &V2, fsm_DN, fsa_R), nlm_granted,
	    "v3 SHARE after UNSHARE");
	(void)l1_unshare(a3, &V2, 0, 0);
	memset(buf, 0, sizeof(buf));
	t_eq(t_raw(b1, 21, buf, sizeof(buf)), RPC_PROCUNAVAIL,
	    "v1 UNSHARE (proc 21) -> PROC_UNAVAIL");
}

/* ---- versions 1 and 3: 32-bit ranges ---- */

static void
test_v1_ranges(void)
{
	struct t_lk V = LK(HA, "f-32", "oh-v", 131, 0x7fffffff, 1);
	struct t_lk O = LK(HB, "f-32", "oh-o", 132, 0x7fffffff, 1);
	struct t_holder ho;
	struct t_lk k;

	t_eq(l1_lock(a1, &V, true, false, 0), nlm_granted,
	    "v1 LOCK at offset 0x7fffffff");
	t_eq(l4_test(b4, &O, true, NULL), NLM4_DENIED,
	    "v4 TEST sees the v1 lock at 0x7fffffff");
	k = V;
	k.off = 0x80000000u;
	t_eq(l1_lock(a1, &k, true, false, 0), nlm_denied_nolocks,
	    "v1 LOCK at offset 0x80000000 -> nlm_denied_nolocks");
	t_eq(l1_test(a1, &k, true, NULL), nlm_denied_nolocks,
	    "v1 TEST at offset 0x80000000 -> nlm_denied_nolocks");
	t_eq(l1_unlock(a1, &k), nlm_granted,
	    "v1 UNLOCK at offset 0x80000000 -> nlm_granted");
	t_eq(l1_cancel(a1, &k, true, true), nlm_denied,
	    "v1 CANCEL at offset 0x80000000 -> nlm_denied");
	k.off = 0xffffffffu;
	t_eq(l1_lock(a3, &k, true, false, 0), nlm_denied_nolocks,
	    "v3 LOCK at offset 0xffffffff -> nlm_denied_nolocks");
	k.off = 0;
	t_eq(l1_cancel(a3, &k, true, true), nlm_denied,
	    "v3 CANCEL of nothing -> nlm_denied");
	k = ALL(&V);
	(void)l1_unlock(a1, &k);
	t_eq(l4_test(b4, &O, true, NULL), NLM4_GRANTED,
	    "v1 UNLOCK with len 0 released it");

	k = LK(HA, "f-32", "oh-v", 131, 0x10, 0);
	t_eq(l1_lock(a1, &k, true, false, 0), nlm_granted,
	    "v1 LOCK 0x10 len 0");
	k = LK(HB, "f-32", "oh-o", 132, 1ull << 40, 1);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED,
	    "v1 len 0 means to EOF (2^40 covered)");
	t_check(ho.off == 0x10 && ho.len == 0, "v4 holder of it: 0x10 len 0");
	k = ALL(&V);
	(void)l1_unlock(a1, &k);

	k = LK(HA, "f-32", "oh-v", 131, 0x70000000, 0x20000000);
	t_eq(l1_lock(a3, &k, true, false, 0), nlm_granted,
	    "v3 LOCK 0x70000000 len 0x20000000 (end past 0x7fffffff)");
	k = LK(HB, "f-32", "oh-o", 132, 1ull << 33, 1);
	t_eq(l4_test(b4, &k, true, &ho), NLM4_DENIED,
	    "an end past 0x7fffffff means to EOF");
	t_check(ho.off == 0x70000000 && ho.len == 0,
	    "v4 holder: 0x70000000 len 0 (got %llu+%llu)",
	    (unsigned long long)ho.off, (unsigned long long)ho.len);
	k = ALL(&V);
	(void)l1_unlock(a3, &k);
	k = LK(HA, "f-32", "oh-v", 131, 0x70000000, 0x0fffffff);
	t_eq(l1_lock(a1, &k, true, false, 0), nlm_granted,
	    "v1 LOCK ending exactly at 0x7ffffffe");
	k = LK(HB, "f-32", "oh-o", 132, 0x7fffffff, 1);
	t_eq(l4_test(b4, &k, true, NULL), NLM4_GRANTED,
	    "... is not to EOF: 0x7fffffff free");
	k = ALL(&V);
	(void)l1_unlock(a1, &k);

	/* Holders that do not fit 32 bits. */
	k = LK(HB, "f-32c", "oh-o", 132, 1ull << 33, 10);
	(void)l4_lock(b4, &k, true, false, 0);
	k = LK(HA, "f-32c", "oh-v", 131, 0, 0);
	t_eq(l1_test(a1, &k, true, &ho), nlm_denied,
	    "v1 TEST against a lock at 2^33");
	t_check(ho.off == 0x7fffffff && ho.len == 0 && ho.svid == 132,
	    "v1 holder offset clamped to 0x7fffffff, to EOF (got 0x%llx "
	    "len %llu)", (unsigned long long)ho.off,
	    (unsigned long long)ho.len);
	k = LK(HB, "f-32c2", "oh-o", 132, 0x100, 1ull << 40);
	(void)l4_lock(b4, &k, true, false, 0);
	k = LK(HA, "f-32c2", "oh-v", 131, 0, 0);
	t_eq(l1_test(a3, &k, true, &ho), nlm_denied,
	    "v3 TEST against 0x100 len 2^40");
	t_check(ho.off == 0x100 && ho.len == 0,
	    "v3 holder past 0x7fffffff reported to EOF (got 0x%llx)",
	    (unsigned long long)ho.len);
	k = LK(HB, "f-32c3", "oh-o", 132, 0x100, 0);
	(void)l4_lock(b4, &k, true, false, 0);
	k = LK(HA, "f-32c3", "oh-v", 131, 0, 0);
	t_eq(l1_test(a1, &k, true, &ho), nlm_denied,
	    "v1 TEST against a lock to EOF");
	t_check(ho.off == 0x100 && ho.len == 0,
	    "v1 holder to EOF reported with len 0");
	k = LK(HB, "f-32c", "oh-o", 132, 0, 0);
	(void)l4_unlock(b4, &k);
	k.fh = "f-32c2";
	(void)l4_unlock(b4, &k);
	k.fh = "f-32c3";
	(void)l4_unlock(b4, &k);

	/* One owner across versions. */
	k = LK(HA, "f-32x", "oh-v", 131, 0, 10);
	t_eq(l1_lock(a1, &k, true, false, 0), nlm_granted, "v1 lock");
	t_eq(l4_test(a4, &k, true, NULL), NLM4_GRANTED,
	    "v4 TEST by the same owner -> GRANTED (one owner across versions)");
	k = ALL(&k);
	t_eq(l4_unlock(a4, &k), NLM4_GRANTED, "v4 UNLOCK of a v1 lock");
	k = LK(HB, "f-32x", "oh-o", 132, 0, 10);
	t_eq(l1_test(b1, &k, true, NULL), nlm_granted, "it is gone");
}

/* ---- 32-bit GRANTED_MSG echoes the 32-bit request ---- */

static void
test_v1_callback(void)
{
	struct t_lk H = LK(HA, "f-32cb", "oh-h", 141, 0, 0);
	struct t_lk W1 = LK(HB, "f-32cb", "oh-w1", 142, 0x10, 0);
	struct t_lk W3 = LK(HB, "f-32cb", "oh-w3", 143, 0x70000000, 0x20000000);
	struct t_cb *r;

	cb_flush();
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l1_lock(b1, &W1, true, true, 0), nlm_blocked,
	    "v1 blocking LOCK -> nlm_blocked");
	(void)l4_unlock(a4, &H);
	r = expect_grant(1, NLMPROC_GRANTED_MSG, &W1, true, tcfg.srv,
	    "v1 callback");
	if (r != NULL) {
		t_eq(r->vers, 1, "v1 callback uses NLM version 1");
		t_eq(l1_granted_res(b1, r->cookie, 8, nlm_granted),
		    RPC_SUCCESS, "v1 GRANTED_RES");
	}
	t_check(quiet_for(400), "v1 GRANTED_RES stops the callback");
	t_eq(l1_unlock(b1, &W1), nlm_granted, "v1 unlock");

	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l1_lock(b3, &W3, true, true, 0), nlm_blocked,
	    "v3 blocking LOCK 0x70000000+0x20000000 -> nlm_blocked");
	(void)l4_unlock(a4, &H);
	r = expect_grant(3, NLMPROC_GRANTED_MSG, &W3, true, tcfg.srv,
	    "v3 callback");
	if (r != NULL)
		(void)l1_granted_res(b3, r->cookie, 8, nlm_granted);
	t_check(quiet_for(400), "v3 GRANTED_RES stops the callback");
	(void)l1_unlock(b3, &W3);
}

/* ---- reclaim outside grace; whole-file UNLOCK of a waiter; late NLM ---- */

static void
test_reclaim(void)
{
	struct t_lk R = LK(HA, "f-recl", "oh-r", 191, 0, 10);
	struct t_lk O = LK(HB, "f-recl", "oh-o", 192, 0, 10);

	/*
	 * nlmd is long past any grace period here.  Linux and Ganesha
	 * answer a reclaim outside grace DENIED_GRACE_PERIOD (research:
	 * anchors-features.md 1.4, "deny (Linux behaviour) unless the lock
	 * is in our persisted table for that host"); nothing was persisted.
	 */
	t_eq(l4_lock_reclaim(a4, &R, true), NLM4_DENIED_GRACE_PERIOD,
	    "reclaim LOCK outside grace -> DENIED_GRACE_PERIOD");
	if (l4_test(b4, &O, true, NULL) != NLM4_GRANTED)
		(void)l4_unlock(a4, &R);
}

static void
test_unlock_all_cancels_wait(void)
{
	struct t_lk H = LK(HA, "f-uaw", "oh-h", 193, 0, 0);
	struct t_lk W = LK(HB, "f-uaw", "oh-w", 194, 5, 5);
	struct t_lk Wall = LK(HB, "f-uaw", "oh-w", 194, 0, 0);
	struct t_cb *r;

	cb_flush();
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "uaw: B waits");
	t_eq(l4_unlock(b4, &Wall), NLM4_GRANTED,
	    "uaw: B unlocks the whole file (as a client does on close)");
	(void)l4_unlock(a4, &H);
	r = cb_wait(4, NLMPROC4_GRANTED_MSG, 500);
	t_check(r == NULL, "uaw: a whole-file UNLOCK cancels the owner's "
	    "wait on a sub-range (no GRANTED_MSG)");
	if (r != NULL)
		(void)l4_granted_res(b4, r->cookie, 8, NLM4_DENIED);
	(void)l4_unlock(b4, &Wall);
	t_check(quiet_for(300), "uaw: quiet");
}

static void
test_late_registration(void)
{
	struct t_lk H = LK(HA, "f-late", "oh-h", 195, 0, 10);
	struct t_lk W = LK(HB, "f-late", "oh-w", 196, 0, 10);
	struct t_cb *r;

	cb_flush();
	/*
	 * nlmd caches a client's NLM port (for minutes) once found, so this
	 * must run before any callback to host B's address.
	 */
	t_check(cb_register(false),
	    "late: client NLM unregistered from the client's rpcbind");
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "late: B waits");
	(void)l4_unlock(a4, &H);
	t_check(quiet_for(1200), "late: no callback while nothing is "
	    "registered");
	t_check(cb_register(true), "late: registered again");
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, tcfg.srv,
	    "late registration");
	if (r != NULL)
		(void)l4_granted_res(b4, r->cookie, 8, NLM4_GRANTED);
	t_check(quiet_for(retry_max + 200), "late: acknowledged");
	(void)l4_unlock(b4, &W);
}

/* ---- IPv6: callbacks through RPCB GETADDR on the client's address ---- */

static void
test_ipv6(void)
{
	struct t_lk H = LK(HA, "f-v6", "oh-h", 181, 0, 10);
	struct t_lk W = LK(HA, "f-v6", "oh-w6", 182, 0, 10);
	uint8_t ck[4] = { 6, 6, 6, 6 };
	struct t_holder ho;
	struct t_cb *r;
	CLIENT *c6, *c6t;

	if (tcfg.srv6 == NULL || tcfg.cli6 == NULL) {
		t_note("no IPv6 addresses given: IPv6 tests skipped");
		return;
	}
	c6 = t_clnt(tcfg.cli6, tcfg.srv6, NLM4_VERS, false);
	c6t = t_clnt(tcfg.cli6, tcfg.srv6, NLM4_VERS, true);
	cb_flush();
	t_eq(t_null(c6), RPC_SUCCESS, "v6: NULL over udp6");
	t_eq(t_null(c6t), RPC_SUCCESS, "v6: NULL over tcp6");
	t_eq(l4_lock(a4, &H, true, false, 0), NLM4_GRANTED, "v6: A locks (v4)");
	t_eq(l4_lock(c6, &W, true, true, 0), NLM4_BLOCKED,
	    "v6: same caller_name from an IPv6 address is another host");
	(void)l4_unlock(a4, &H);
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, tcfg.srv6, "v6");
	if (r != NULL)
		t_eq(l4_granted_res(c6, r->cookie, 8, NLM4_GRANTED),
		    RPC_SUCCESS, "v6: GRANTED_RES over udp6");
	t_check(quiet_for(400), "v6: acknowledged");
	t_eq(l4_test(a4, &H, true, &ho), NLM4_DENIED, "v6: IPv6 host holds it");
	t_check(ho.svid == 182, "v6: holder is the IPv6 host's owner");
	t_eq(l4_msg(c6t, NLMPROC4_UNLOCK_MSG, &W, true, false, ck, 4),
	    RPC_SUCCESS, "v6: UNLOCK_MSG over tcp6");
	expect_res_from(tcfg.srv6, 4, NLMPROC4_UNLOCK_RES, ck, 4, NLM4_GRANTED,
	    "v6 UNLOCK_MSG");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_GRANTED, "v6: unlocked");
	t_eq(l4_free_all(c6, HA, 0), RPC_SUCCESS, "v6: FREE_ALL over udp6");
	t_clnt_free(c6);
	t_clnt_free(c6t);
}

/*
 * IPv6 link-local: host "hostll" reaches the server's fe80:: address over
 * UDP and over TCP.  The server address it used is one (the interface
 * kept with it either way: test_nlm.sh reads nlmctl status), the blocked
 * lock's GRANTED_MSG comes back from it, over the link.
 */
static void
test_ipv6_ll(void)
{
	struct t_lk U = LK("hostll", "f-ll", "oh-u", 191, 0, 10);
	struct t_lk T = LK("hostll", "f-ll", "oh-t", 192, 20, 10);
	struct t_lk W = LK("hostll", "f-ll", "oh-w", 193, 0, 10);
	char srv[INET6_ADDRSTRLEN + 1];
	struct t_cb *r;
	CLIENT *c, *ct;

	if (tcfg.srvll == NULL || tcfg.clill == NULL) {
		t_note("no link-local addresses given: those tests skipped");
		return;
	}
	/* Callbacks are reported without the interface. */
	snprintf(srv, sizeof(srv), "%.*s", (int)strcspn(tcfg.srvll, "%"),
	    tcfg.srvll);
	c = t_clnt(tcfg.clill, tcfg.srvll, NLM4_VERS, false);
	ct = t_clnt(tcfg.clill, tcfg.srvll, NLM4_VERS, true);
	cb_flush();
	t_eq(t_null(c), RPC_SUCCESS, "link-local: NULL over udp6");
	t_eq(t_null(ct), RPC_SUCCESS, "link-local: NULL over tcp6");
	t_eq(l4_lock(c, &U, true, false, 0), NLM4_GRANTED,
	    "link-local: LOCK over udp6");
	t_eq(l4_lock(ct, &T, true, false, 0), NLM4_GRANTED,
	    "link-local: LOCK over tcp6");
	t_eq(l4_lock(c, &W, true, true, 0), NLM4_BLOCKED,
	    "link-local: a blocking LOCK behind the first waits");
	t_eq(l4_unlock(c, &U), NLM4_GRANTED, "link-local: UNLOCK over udp6");
	r = expect_grant(4, NLMPROC4_GRANTED_MSG, &W, true, srv, "link-local");
	if (r != NULL)
		t_eq(l4_granted_res(c, r->cookie, 8, NLM4_GRANTED),
		    RPC_SUCCESS, "link-local: GRANTED_RES over udp6");
	t_check(quiet_for(400), "link-local: acknowledged");
	t_eq(l4_unlock(ct, &T), NLM4_GRANTED, "link-local: UNLOCK over tcp6");
	t_eq(l4_unlock(c, &W), NLM4_GRANTED, "link-local: UNLOCK the waiter's");
	t_clnt_free(c);
	t_clnt_free(ct);
}

/* ---- groups ---- */

static void
group_main(void)
{
	/* First: nlmd has not cached the port of host B's NLM yet. */
	test_late_registration();
	test_basics();
	test_conflicts();
	test_posix();
	test_ranges();
	test_cookies();
	test_limits();
	test_deadlock();
	test_block_cycle(a4, b4s2, tcfg.srv2, "cycle");
	test_block_cycle(a4t, b4t, tcfg.srv, "cycle/tcp");
	test_res_denied();
	test_res_grace();
	test_retransmit();
	test_cancel();
	test_fifo();
	test_msg();
	test_free_all();
	test_nm_lock();
	test_sm_notify();
	test_nsm_state();
	test_share();
	test_v1_ranges();
	test_v1_callback();
	test_ipv6();
	test_ipv6_ll();
	test_unlock_all_cancels_wait();
	test_reclaim();
}

/* Synchronous GRANTED (proc 5): its reply status is the answer. */
static void
group_sync(void)
{
	struct t_lk H = LK(HA, "f-sync", "oh-h", 151, 0, 10);
	struct t_lk W = LK(HB, "f-sync", "oh-w", 152, 0, 10);
	struct t_cb *r;
	uint64_t t0;
	int st, n;

	cb_flush();
	cb_set_sync_reply(NLM4_GRANTED);
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "sync: B waits");
	(void)l4_unlock(a4, &H);
	expect_grant(4, NLMPROC4_GRANTED, &W, true, tcfg.srv, "sync");
	t_check(quiet_for(500), "sync: reply GRANTED confirms, no resend");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED, "sync: B holds it");
	(void)l4_unlock(b4, &W);

	cb_set_sync_reply(NLM4_DENIED);
	(void)l4_lock(a4, &H, true, false, 0);
	(void)l4_lock(b4, &W, true, true, 0);
	(void)l4_unlock(a4, &H);
	expect_grant(4, NLMPROC4_GRANTED, &W, true, tcfg.srv, "sync denied");
	t0 = t_now_ms();
	while ((st = l4_test(a4, &H, true, NULL)) != NLM4_GRANTED &&
	    t_now_ms() - t0 < 1000)
		t_sleep_ms(20);
	t_eq(st, NLM4_GRANTED, "sync: reply DENIED releases the lock");
	t_check(quiet_for(400), "sync: no resend after DENIED");
	(void)l4_unlock(b4, &W);

	cb_set_sync_reply(NLM4_DENIED_GRACE_PERIOD);
	(void)l4_lock(a4, &H, true, false, 0);
	(void)l4_lock(b4, &W, true, true, 0);
	(void)l4_unlock(a4, &H);
	r = expect_grant(4, NLMPROC4_GRANTED, &W, true, tcfg.srv, "sync grace");
	t_sleep_ms(700);
	n = cb_count(4, NLMPROC4_GRANTED);
	t_check(n >= 2, "sync: DENIED_GRACE_PERIOD -> retried (%d more in "
	    "0.7 s)", n);
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED,
	    "sync: lock kept while the client is in grace");
	cb_set_sync_reply(NLM4_GRANTED);
	t_sleep_ms(600);
	t_check(quiet_for(600), "sync: a GRANTED reply ends the retries");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED, "sync: B holds it");
	(void)l4_unlock(b4, &W);

	/* callback-give-up=2: a grant never acknowledged is released. */
	cb_set_sync_reply(NLM4_DENIED_GRACE_PERIOD);
	(void)l4_lock(a4, &H, true, false, 0);
	(void)l4_lock(b4, &W, true, true, 0);
	(void)l4_unlock(a4, &H);
	t0 = t_now_ms();
	r = cb_wait(4, NLMPROC4_GRANTED, 2000);
	t_check(r != NULL, "give-up: callbacks start");
	while ((st = l4_test(a4, &H, true, NULL)) != NLM4_GRANTED &&
	    t_now_ms() - t0 < 5000)
		t_sleep_ms(50);
	t_eq(st, NLM4_GRANTED, "give-up: released after callback-give-up");
	t_check(t_now_ms() - t0 >= 1500, "give-up: not before ~2 s (%llu ms)",
	    (unsigned long long)(t_now_ms() - t0));
	t_check(quiet_for(500), "give-up: callbacks stopped");
	cb_set_sync_reply(NLM4_GRANTED);
	(void)l4_unlock(b4, &W);

	/* v1 synchronous GRANTED. */
	{
		struct t_lk W1 = LK(HB, "f-sync", "oh-w1", 153, 0, 0x10);

		(void)l4_lock(a4, &H, true, false, 0);
		t_eq(l1_lock(b1, &W1, true, true, 0), nlm_blocked,
		    "sync v1: B waits");
		(void)l4_unlock(a4, &H);
		expect_grant(1, NLMPROC_GRANTED, &W1, true, tcfg.srv,
		    "sync v1");
		t_check(quiet_for(400), "sync v1: confirmed by the reply");
		(void)l1_unlock(b1, &W1);
	}
}

/* No callbacks: the client finds out by polling. */
static void
group_off(void)
{
	struct t_lk H = LK(HA, "f-off", "oh-h", 161, 0, 10);
	struct t_lk W = LK(HB, "f-off", "oh-w", 162, 0, 10);

	cb_flush();
	(void)l4_lock(a4, &H, true, false, 0);
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_BLOCKED, "off: B waits");
	(void)l4_unlock(a4, &H);
	t_check(quiet_for(800), "off: no callback is sent");
	t_eq(l4_lock(b4, &W, true, true, 0), NLM4_GRANTED,
	    "off: B's re-poll -> GRANTED");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED, "off: B holds it");
	(void)l4_unlock(b4, &W);
	(void)l4_lock(a4, &H, true, false, 0);
	(void)l4_lock(b4, &W, true, true, 0);
	(void)l4_unlock(a4, &H);
	t_eq(l4_cancel(b4, &W, true, true), NLM4_GRANTED,
	    "off: CANCEL of the uncollected grant -> GRANTED");
	t_eq(l4_lock(a4, &H, true, false, 0), NLM4_GRANTED,
	    "off: cancelled grant released");

	/*
	 * A waiter on a sub-range whose owner then unlocks the whole file
	 * (a client closing the file) must not be granted that range later:
	 * with no callback nobody would ever collect or refuse it.
	 */
	{
		struct t_lk Ws = LK(HB, "f-off", "oh-w", 162, 2, 3);
		struct t_lk Wall = LK(HB, "f-off", "oh-w", 162, 0, 0);

		t_eq(l4_lock(b4, &Ws, true, true, 0), NLM4_BLOCKED,
		    "off: B waits on [2,5)");
		t_eq(l4_unlock(b4, &Wall), NLM4_GRANTED,
		    "off: B unlocks the whole file");
		(void)l4_unlock(a4, &H);
		t_eq(l4_lock(a4, &H, true, false, 0), NLM4_GRANTED,
		    "off: after B's whole-file UNLOCK, A can lock again "
		    "(nothing granted to B's abandoned wait)");
		(void)l4_unlock(b4, &Wall);
	}
	(void)l4_unlock(a4, &H);
}

/* GRANTED_MSG and GRANTED alternate. */
static void
group_both(void)
{
	struct t_lk H = LK(HA, "f-both", "oh-h", 171, 0, 10);
	struct t_lk W = LK(HB, "f-both", "oh-w", 172, 0, 10);
	struct t_cb *r[4];
	int i, n = 0;

	cb_flush();
	cb_set_sync_reply(NLM4_DENIED_GRACE_PERIOD);
	(void)l4_lock(a4, &H, true, false, 0);
	(void)l4_lock(b4, &W, true, true, 0);
	(void)l4_unlock(a4, &H);
	for (i = 0; i < 4; i++)
		if ((r[i] = cb_wait(4, -1, 2000)) != NULL)
			n++;
	t_eq(n, 4, "both: four callbacks");
	if (n == 4) {
		t_check(r[0]->proc == 10 && r[1]->proc == 5 &&
		    r[2]->proc == 10 && r[3]->proc == 5,
		    "both: GRANTED_MSG, GRANTED, GRANTED_MSG, GRANTED (got %d "
		    "%d %d %d)", r[0]->proc, r[1]->proc, r[2]->proc,
		    r[3]->proc);
		t_check(memcmp(r[0]->cookie, r[1]->cookie, 8) == 0,
		    "both: one cookie for the grant");
		(void)l4_granted_res(b4, r[0]->cookie, 8, NLM4_GRANTED);
	}
	t_check(quiet_for(500), "both: GRANTED_RES stops it");
	t_eq(l4_test(a4, &H, true, NULL), NLM4_DENIED, "both: B holds it");
	cb_set_sync_reply(NLM4_GRANTED);
	(void)l4_unlock(b4, &W);
}

static void
usage(void)
{
	fprintf(stderr, "usage: nlmtest --group main|sync|off|both|"
	    "grace-hold|grace-conflict|grace-strict|grace-none --srv A "
	    "--srv2 A2 --cli C1 --cli C2 [--srv6 A6 --cli6 C6] "
	    "[--srvll L%%IF --clill L%%IF] [--port N] "
	    "[--retry-min MS] [--retry-max MS] [--grace SEC]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *group = "main";
	int i, ncli = 0, rc;
	unsigned grace_sec = 5;
	bool keep = false;
	struct sockaddr_in sa;

	tcfg.port = 0;
	for (i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--group") == 0)
			group = argv[++i];
		else if (strcmp(argv[i], "--srv") == 0)
			tcfg.srv = argv[++i];
		else if (strcmp(argv[i], "--srv2") == 0)
			tcfg.srv2 = argv[++i];
		else if (strcmp(argv[i], "--cli") == 0 && ncli < 2)
			tcfg.cli[ncli++] = argv[++i];
		else if (strcmp(argv[i], "--srv6") == 0)
			tcfg.srv6 = argv[++i];
		else if (strcmp(argv[i], "--cli6") == 0)
			tcfg.cli6 = argv[++i];
		else if (strcmp(argv[i], "--srvll") == 0)
			tcfg.srvll = argv[++i];
		else if (strcmp(argv[i], "--clill") == 0)
			tcfg.clill = argv[++i];
		else if (strcmp(argv[i], "--port") == 0)
			tcfg.port = (uint16_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--retry-min") == 0)
			retry_min = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--retry-max") == 0)
			retry_max = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--grace") == 0)
			grace_sec = (unsigned)atoi(argv[++i]);
		else
			usage();
	}
	if (tcfg.srv == NULL || tcfg.srv2 == NULL || ncli != 2)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (tcfg.port == 0) {
		/* Find nlmd through the server's rpcbind, as a client does. */
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		inet_pton(AF_INET, tcfg.srv, &sa.sin_addr);
		tcfg.port = pmap_getport(&sa, NLM_PROG, NLM4_VERS, IPPROTO_UDP);
		t_check(tcfg.port != 0, "server's rpcbind knows nlockmgr v4/udp");
		if (tcfg.port == 0)
			return t_summary("nlm");
	}
	if (cb_start() == -1) {
		t_check(false, "callback receiver registered with the client "
		    "host's rpcbind");
		return t_summary("nlm");
	}
	t_note("group %s: nlmd %s:%u (and %s), clients %s %s, receiver "
	    "udp/%u udp6/%u", group, tcfg.srv, tcfg.port, tcfg.srv2,
	    tcfg.cli[0], tcfg.cli[1], cb_udp_port(), cb_udp6_port());
	a4 = t_clnt(tcfg.cli[0], tcfg.srv, NLM4_VERS, false);
	b4 = t_clnt(tcfg.cli[1], tcfg.srv, NLM4_VERS, false);
	b4s2 = t_clnt(tcfg.cli[1], tcfg.srv2, NLM4_VERS, false);
	a4t = t_clnt(tcfg.cli[0], tcfg.srv, NLM4_VERS, true);
	b4t = t_clnt(tcfg.cli[1], tcfg.srv, NLM4_VERS, true);
	a1 = t_clnt(tcfg.cli[0], tcfg.srv, NLM_VERS, false);
	b1 = t_clnt(tcfg.cli[1], tcfg.srv, NLM_VERS, false);
	a3 = t_clnt(tcfg.cli[0], tcfg.srv, NLM_VERSX, false);
	b3 = t_clnt(tcfg.cli[1], tcfg.srv, NLM_VERSX, false);

	if (strcmp(group, "main") == 0)
		group_main();
	else if (strcmp(group, "sync") == 0)
		group_sync();
	else if (strcmp(group, "off") == 0)
		group_off();
	else if (strcmp(group, "both") == 0)
		group_both();
	else if (strcmp(group, "grace-hold") == 0)
		keep = group_grace_hold(a4, b4);
	else if (strcmp(group, "grace-conflict") == 0)
		keep = group_grace_conflict(a4, b4, grace_sec);
	else if (strcmp(group, "grace-strict") == 0)
		keep = group_grace_strict(a4, b4);
	else if (strcmp(group, "grace-none") == 0)
		keep = group_grace_none(a4, b4);
	else
		usage();

	/* The grace groups leave their locks for the next start of nlmd. */
	if (!keep) {
		cleanup_host(a4, HA);
		cleanup_host(b4, HB);
	}
	t_cookie_summary();
	cb_stop();
	rc = t_summary("nlm");
	t_clnt_free(a4);
	t_clnt_free(b4);
	t_clnt_free(b4s2);
	t_clnt_free(a4t);
	t_clnt_free(b4t);
	t_clnt_free(a1);
	t_clnt_free(b1);
	t_clnt_free(a3);
	t_clnt_free(b3);
	return rc;
}
