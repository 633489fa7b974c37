/*
 * test_nlmxdr.c - the in-place NLMv4 argument decoders and the nlm4_res
 * encoder (nlm/nlm_xdr.c) against rpcgen's routines from the same .x file.
 *
 * Random arguments are encoded with the rpcgen encoder; both decoders must
 * then agree field by field.  Every truncation of a valid message must
 * fail in both.  Over-long fields must fail.  An embedded NUL in
 * caller_name is refused by both (rpcgen's through our xdr_nlm_name()),
 * as in every other name of every version and of the status monitor.
 * Bool words other than 0 and 1 read the same in both.  Random results
 * encode to the same bytes with both encoders, into any buffer, aligned or
 * not, or fail in both when they do not fit.
 */
#include "tests/runner.h"

#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "nlm_impl.h"
#include "rpc/sm_inter.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static char bytes[4][1100];
static char name[1100];

static void
rnd_netobj(nlm_netobj *o, int which, u_int max)
{
	u_int i, n = (u_int)(rnd() % (max + 1));

	for (i = 0; i < n; i++)
		bytes[which][i] = (char)rnd();
	o->nlm_netobj_len = n;
	o->nlm_netobj_val = n > 0 ? bytes[which] : NULL;
}

static void
rnd_lock(nlm4_lock *l)
{
	size_t i, n = rnd() % 70;

	/* Sometimes the longest name allowed, padding-free lengths too. */
	if (rnd() % 8 == 0)
		n = LM_MAXSTRLEN;
	for (i = 0; i < n; i++)
		name[i] = (char)('a' + rnd() % 26);
	name[n] = '\0';
	l->caller_name = name;
	rnd_netobj(&l->fh, 1, rnd() % 4 == 0 ? MAXNETOBJ_SZ : 64);
	rnd_netobj(&l->oh, 2, rnd() % 4 == 0 ? MAXNETOBJ_SZ : 40);
	l->svid = (int)rnd();
	l->l_offset = rnd();
	l->l_len = rnd() % 3 == 0 ? 0 : rnd();
}

static int
netobj_eq(const nlm_netobj *a, const nlm_netobj *b)
{
	return a->nlm_netobj_len == b->nlm_netobj_len &&
	    (a->nlm_netobj_len == 0 || memcmp(a->nlm_netobj_val,
	    b->nlm_netobj_val, a->nlm_netobj_len) == 0);
}

static int
lock_eq(const nlm4_lock *a, const nlm4_lock *b)
{
	return strcmp(a->caller_name, b->caller_name) == 0 &&
	    netobj_eq(&a->fh, &b->fh) && netobj_eq(&a->oh, &b->oh) &&
	    a->svid == b->svid && a->l_offset == b->l_offset &&
	    a->l_len == b->l_len;
}

static size_t
encode(xdrproc_t proc, void *args, char *buf, size_t len)
{
	XDR x;
	size_t n;

	xdrmem_create(&x, buf, (u_int)len, XDR_ENCODE);
	CU_ASSERT_FATAL(proc(&x, args));
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

static bool_t
decode(xdrproc_t proc, void *args, char *buf, size_t len)
{
	XDR x;
	bool_t ok;

	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	ok = proc(&x, args);
	xdr_destroy(&x);
	return ok;
}

static void
free_ref(xdrproc_t proc, void *args)
{
	xdr_free(proc, args);
}

/* Every strict prefix of a valid message fails with both decoders. */
static void
check_truncations(xdrproc_t ref, xdrproc_t fast, const char *wire,
    size_t len, size_t argsize)
{
	char buf[4096];
	union { nlm4_lockargs l; nlm4_unlockargs u; nlm4_testargs t;
	    nlm4_cancargs c; } a, b;
	size_t cut;

	CU_ASSERT_FATAL(argsize <= sizeof(a));
	for (cut = 0; cut < len; cut++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		memcpy(buf, wire, len);
		CU_ASSERT_FALSE(decode(ref, &a, buf, cut));
		free_ref(ref, &a);
		memcpy(buf, wire, len);
		CU_ASSERT_FALSE(decode(fast, &b, buf, cut));
	}
}

static void
test_lockargs(void)
{
	char wire[4096], copy[4096];
	int i;

	for (i = 0; i < 2000; i++) {
		nlm4_lockargs in, a, b;
		size_t n;

		memset(&in, 0, sizeof(in));
		rnd_netobj(&in.cookie, 0, rnd() % 2 ? 8 : MAXNETOBJ_SZ);
		in.block = (bool_t)(rnd() % 2);
		in.exclusive = (bool_t)(rnd() % 2);
		rnd_lock(&in.alock);
		in.reclaim = (bool_t)(rnd() % 2);
		in.state = (int)rnd();
		n = encode(XDRPROC(xdr_nlm4_lockargs), &in, wire, sizeof(wire));
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(xdr_nlm4_lockargs), &a, copy, n));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(nlm_xdr_lockargs), &b, copy, n));
		CU_ASSERT(netobj_eq(&a.cookie, &b.cookie));
		CU_ASSERT(a.block == b.block && a.exclusive == b.exclusive &&
		    a.reclaim == b.reclaim && a.state == b.state);
		CU_ASSERT(lock_eq(&a.alock, &b.alock));
		CU_ASSERT(lock_eq(&in.alock, &b.alock));
		free_ref(XDRPROC(xdr_nlm4_lockargs), &a);
		if (i < 40)
			check_truncations(XDRPROC(xdr_nlm4_lockargs),
			    XDRPROC(nlm_xdr_lockargs), wire, n, sizeof(a));
	}
}

static void
test_other_args(void)
{
	char wire[4096], copy[4096];
	int i;

	for (i = 0; i < 1000; i++) {
		nlm4_unlockargs u, ua, ub;
		nlm4_testargs t, ta, tb;
		nlm4_cancargs c, ca, cb;
		size_t n;

		memset(&u, 0, sizeof(u));
		rnd_netobj(&u.cookie, 0, 16);
		rnd_lock(&u.alock);
		n = encode(XDRPROC(xdr_nlm4_unlockargs), &u, wire, sizeof(wire));
		memset(&ua, 0, sizeof(ua));
		memset(&ub, 0, sizeof(ub));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(xdr_nlm4_unlockargs), &ua, copy, n));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(nlm_xdr_unlockargs), &ub, copy, n));
		CU_ASSERT(netobj_eq(&ua.cookie, &ub.cookie) &&
		    lock_eq(&ua.alock, &ub.alock));
		free_ref(XDRPROC(xdr_nlm4_unlockargs), &ua);
		if (i < 20)
			check_truncations(XDRPROC(xdr_nlm4_unlockargs),
			    XDRPROC(nlm_xdr_unlockargs), wire, n, sizeof(ua));

		memset(&t, 0, sizeof(t));
		rnd_netobj(&t.cookie, 0, 16);
		t.exclusive = (bool_t)(rnd() % 2);
		rnd_lock(&t.alock);
		n = encode(XDRPROC(xdr_nlm4_testargs), &t, wire, sizeof(wire));
		memset(&ta, 0, sizeof(ta));
		memset(&tb, 0, sizeof(tb));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(xdr_nlm4_testargs), &ta, copy, n));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(nlm_xdr_testargs), &tb, copy, n));
		CU_ASSERT(netobj_eq(&ta.cookie, &tb.cookie) &&
		    ta.exclusive == tb.exclusive && lock_eq(&ta.alock, &tb.alock));
		free_ref(XDRPROC(xdr_nlm4_testargs), &ta);
		if (i < 20)
			check_truncations(XDRPROC(xdr_nlm4_testargs),
			    XDRPROC(nlm_xdr_testargs), wire, n, sizeof(ta));

		memset(&c, 0, sizeof(c));
		rnd_netobj(&c.cookie, 0, 16);
		c.block = (bool_t)(rnd() % 2);
		c.exclusive = (bool_t)(rnd() % 2);
		rnd_lock(&c.alock);
		n = encode(XDRPROC(xdr_nlm4_cancargs), &c, wire, sizeof(wire));
		memset(&ca, 0, sizeof(ca));
		memset(&cb, 0, sizeof(cb));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(xdr_nlm4_cancargs), &ca, copy, n));
		memcpy(copy, wire, n);
		CU_ASSERT_FATAL(decode(XDRPROC(nlm_xdr_cancargs), &cb, copy, n));
		CU_ASSERT(netobj_eq(&ca.cookie, &cb.cookie) &&
		    ca.block == cb.block && ca.exclusive == cb.exclusive &&
		    lock_eq(&ca.alock, &cb.alock));
		free_ref(XDRPROC(xdr_nlm4_cancargs), &ca);
		if (i < 20)
			check_truncations(XDRPROC(xdr_nlm4_cancargs),
			    XDRPROC(nlm_xdr_cancargs), wire, n, sizeof(ca));
	}
}

/* A bool word of 2 or 0xffffffff is TRUE to both decoders. */
static void
test_bools(void)
{
	static const uint32_t odd[] = { 2, 0x80000000u, 0xffffffffu };
	char wire[4096], copy[4096];
	nlm4_lockargs in, a, b;
	size_t n, i, w, off;
	uint32_t v;

	memset(&in, 0, sizeof(in));
	rnd_netobj(&in.cookie, 0, 8);
	rnd_lock(&in.alock);
	n = encode(XDRPROC(xdr_nlm4_lockargs), &in, wire, sizeof(wire));
	/* block, exclusive after the cookie; reclaim 8 bytes from the end */
	off = 4 + ((in.cookie.nlm_netobj_len + 3) & ~3u);
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		for (w = 0; w < 3; w++) {
			memcpy(copy, wire, n);
			v = htonl(odd[i]);
			memcpy(copy + (w < 2 ? off + 4 * w : n - 8), &v, 4);
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			memcpy(wire + 2048, copy, n);
			CU_ASSERT_FATAL(decode(XDRPROC(xdr_nlm4_lockargs), &a,
			    wire + 2048, n));
			CU_ASSERT_FATAL(decode(XDRPROC(nlm_xdr_lockargs), &b,
			    copy, n));
			CU_ASSERT(a.block == b.block &&
			    a.exclusive == b.exclusive &&
			    a.reclaim == b.reclaim);
			CU_ASSERT((w == 0 ? b.block : w == 1 ? b.exclusive :
			    b.reclaim) == TRUE);
			free_ref(XDRPROC(xdr_nlm4_lockargs), &a);
		}
}

/* nlm_xdr_res writes what xdr_nlm4_res writes, or fails where it fails. */
static void
test_res(void)
{
	static uint32_t ref[300], fast[300];
	int i;

	for (i = 0; i < 3000; i++) {
		nlm4_res r;
		size_t room, shift = i % 7 == 0 ? 1 : 0;
		bool_t okr, okf;
		u_int nr = 0, nf = 0;
		XDR x;

		memset(&r, 0, sizeof(r));
		rnd_netobj(&r.cookie, 0, i % 50 == 0 ? MAXNETOBJ_SZ + 8 : 40);
		r.stat.stat = (nlm4_stats)(rnd() % 9);
		/* Mostly room enough, sometimes a few bytes short. */
		room = 4 + ((r.cookie.nlm_netobj_len + 3) & ~3u) + 4;
		if (i % 5 == 0)
			room -= rnd() % room;
		if (room > sizeof(ref) - 4)
			room = sizeof(ref) - 4;
		memset(ref, 0xa5, sizeof(ref));
		memset(fast, 0x5a, sizeof(fast));
		xdrmem_create(&x, (char *)ref + shift, (u_int)room, XDR_ENCODE);
		if ((okr = xdr_nlm4_res(&x, &r)))
			nr = xdr_getpos(&x);
		xdr_destroy(&x);
		xdrmem_create(&x, (char *)fast + shift, (u_int)room,
		    XDR_ENCODE);
		if ((okf = nlm_xdr_res(&x, &r)))
			nf = xdr_getpos(&x);
		xdr_destroy(&x);
		CU_ASSERT(okr == okf);
		CU_ASSERT(okr == (r.cookie.nlm_netobj_len <= MAXNETOBJ_SZ &&
		    room >= 8 + ((r.cookie.nlm_netobj_len + 3) & ~3u)));
		CU_ASSERT(nr == nf);
		if (okr && okf)
			CU_ASSERT(memcmp((char *)ref + shift,
			    (char *)fast + shift, nr) == 0);
	}
}

/* Lengths over the .x bounds, and an embedded NUL, are refused. */
static void
test_refusals(void)
{
	char wire[4096];
	nlm4_lockargs in, b;
	size_t n;
	uint32_t big = htonl(MAXNETOBJ_SZ + 1);

	memset(&in, 0, sizeof(in));
	in.alock.caller_name = (char *)"abcd";
	n = encode(XDRPROC(xdr_nlm4_lockargs), &in, wire, sizeof(wire));
	/* cookie length word first: make it 1025. */
	memcpy(wire, &big, 4);
	memset(&b, 0, sizeof(b));
	CU_ASSERT_FALSE(decode(XDRPROC(nlm_xdr_lockargs), &b, wire, n));
	/* caller_name length (after cookie, block, exclusive) over 1024. */
	n = encode(XDRPROC(xdr_nlm4_lockargs), &in, wire, sizeof(wire));
	big = htonl(LM_MAXSTRLEN + 1);
	memcpy(wire + 12, &big, 4);
	CU_ASSERT_FALSE(decode(XDRPROC(nlm_xdr_lockargs), &b, wire, n));
	/* "ab\0d": ours refuses, rpcgen's would read "ab". */
	n = encode(XDRPROC(xdr_nlm4_lockargs), &in, wire, sizeof(wire));
	wire[16 + 2] = '\0';
	CU_ASSERT_FALSE(decode(XDRPROC(nlm_xdr_lockargs), &b, wire, n));
	/*
	 * File handle, then owner handle (their length words after the
	 * name "abcd"), of 1024 bytes and of 1025, the bytes there: the
	 * bound refuses, not running out.
	 */
	for (n = 20; n <= 24; n += 4) {
		memset(wire, 0, sizeof(wire));
		(void)encode(XDRPROC(xdr_nlm4_lockargs), &in, wire,
		    sizeof(wire));
		big = htonl(MAXNETOBJ_SZ);
		memcpy(wire + n, &big, 4);
		CU_ASSERT_TRUE(decode(XDRPROC(nlm_xdr_lockargs), &b, wire,
		    sizeof(wire)));
		memset(wire, 0, sizeof(wire));
		(void)encode(XDRPROC(xdr_nlm4_lockargs), &in, wire,
		    sizeof(wire));
		big = htonl(MAXNETOBJ_SZ + 1);
		memcpy(wire + n, &big, 4);
		CU_ASSERT_FALSE(decode(XDRPROC(nlm_xdr_lockargs), &b, wire,
		    sizeof(wire)));
	}
	/*
	 * caller_name of 1024 bytes and of 1025, the bytes there (not
	 * NULs, which are refused for themselves): the bound refuses, not
	 * running out.  No test failed when the bound was LM_MAXSTRLEN + 1
	 * (mutation testing, 2026-12-07).
	 */
	{
		static char nm[LM_MAXSTRLEN + 1], big1[4096];

		memset(nm, 'm', LM_MAXSTRLEN);
		in.alock.caller_name = nm;
		n = encode(XDRPROC(xdr_nlm4_lockargs), &in, wire, sizeof(wire));
		memcpy(big1, wire, n);
		CU_ASSERT_TRUE(decode(XDRPROC(nlm_xdr_lockargs), &b, big1, n));
		memcpy(big1, wire, 16);
		big = htonl(LM_MAXSTRLEN + 1);
		memcpy(big1 + 12, &big, 4);
		memset(big1 + 16, 'm', LM_MAXSTRLEN + 1);
		memset(big1 + 16 + LM_MAXSTRLEN + 1, 0, 3);
		memcpy(big1 + 16 + LM_MAXSTRLEN + 4, wire + 16 + LM_MAXSTRLEN,
		    n - 16 - LM_MAXSTRLEN);
		CU_ASSERT_FALSE(decode(XDRPROC(nlm_xdr_lockargs), &b, big1,
		    n + 4));
	}
}

/*
 * Where `nm' is in wire[0..n): the offset of its bytes (after the
 * length word); the test fails if it is not there.
 */
static size_t
name_at(const char *wire, size_t n, const char *nm)
{
	size_t k = strlen(nm), i;

	for (i = 4; i + k <= n; i++)
		if (memcmp(wire + i, nm, k) == 0)
			return i;
	CU_FAIL_FATAL("name not in the encoding");
	return 0;
}

/*
 * Every name of every argument, of every version and of the status
 * monitor, decodes through xdr_nlm_name()/xdr_sm_hostname() (rpc/
 * xdrname.c): as sent, and refused when it holds a NUL or is longer
 * than the bound.  Before, rpcgen's xdr_string() read "ab\0defg" as
 * "ab" (a v1 LOCK, a SHARE, a FREE_ALL, an SM_NOTIFY named another host
 * than the one sent), and only the in-place v4 decoders refused it.
 */
static void
test_names(void)
{
	static char max[LM_MAXSTRLEN + 1];
	nlm_lockargs l1;
	nlm_shareargs sh1;
	nlm4_shareargs sh4;
	nlm_notify nf1;
	nlm4_notify nf4;
	nlm_sm_status sms;
	stat_chge sc;
	mon mo;
#define NAME_ARG(proc, a, f)	{ XDRPROC(proc), &a, sizeof(a), &a.f }
	struct {
		xdrproc_t	 proc;
		void		*args;
		size_t		 size;
		char		**field;
	} t[] = {
		NAME_ARG(xdr_nlm_lockargs, l1, alock.caller_name),
		NAME_ARG(xdr_nlm_shareargs, sh1, share.caller_name),
		NAME_ARG(xdr_nlm4_shareargs, sh4, share.caller_name),
		NAME_ARG(xdr_nlm_notify, nf1, name),
		NAME_ARG(xdr_nlm4_notify, nf4, name),
		NAME_ARG(xdr_nlm_sm_status, sms, mon_name),
		NAME_ARG(xdr_stat_chge, sc, mon_name),
		NAME_ARG(xdr_mon, mo, mon_id.mon_name),
		NAME_ARG(xdr_mon, mo, mon_id.my_id.my_name)
	};
#undef NAME_ARG
	union { nlm_lockargs l1; nlm_shareargs sh1; nlm4_shareargs sh4;
	    nlm_notify nf1; nlm4_notify nf4; nlm_sm_status sms;
	    stat_chge sc; mon mo; } d;
	char wire[4096], copy[4096], inbuf[16];
	uint32_t w;
	size_t i, n, at;

	memset(max, 'm', LM_MAXSTRLEN);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(t[i].args, 0, t[i].size);
		if (t[i].args == (void *)&mo) {
			mo.mon_id.mon_name = (char *)"other-1";
			mo.mon_id.my_id.my_name = (char *)"other-2";
		}
		*t[i].field = (char *)"abcdefg";
		n = encode(t[i].proc, t[i].args, wire, sizeof(wire));
		at = name_at(wire, n, "abcdefg");
		/* As sent: the name comes back, also into a given buffer. */
		memcpy(copy, wire, n);
		memset(&d, 0, sizeof(d));
		CU_ASSERT_FATAL(decode(t[i].proc, &d, copy, n));
		CU_ASSERT_STRING_EQUAL(*(char **)(void *)((char *)&d +
		    ((char *)t[i].field - (char *)t[i].args)), "abcdefg");
		free_ref(t[i].proc, &d);
		/* A NUL inside: refused, nothing left allocated (ASan). */
		memcpy(copy, wire, n);
		copy[at + 2] = '\0';
		memset(&d, 0, sizeof(d));
		CU_ASSERT_FALSE(decode(t[i].proc, &d, copy, n));
		free_ref(t[i].proc, &d);
		/* A NUL last: refused too ("abcdef\0" is not "abcdef"). */
		memcpy(copy, wire, n);
		copy[at + 6] = '\0';
		memset(&d, 0, sizeof(d));
		CU_ASSERT_FALSE(decode(t[i].proc, &d, copy, n));
		free_ref(t[i].proc, &d);
		/* Longer than the bound (the length word says so): refused. */
		memcpy(copy, wire, n);
		w = htonl(LM_MAXSTRLEN + 1);
		memcpy(copy + at - 4, &w, 4);
		memset(&d, 0, sizeof(d));
		CU_ASSERT_FALSE(decode(t[i].proc, &d, copy, n));
		free_ref(t[i].proc, &d);
		/* The bound itself: taken. */
		*t[i].field = max;
		n = encode(t[i].proc, t[i].args, wire, sizeof(wire));
		memset(&d, 0, sizeof(d));
		CU_ASSERT(decode(t[i].proc, &d, wire, n));
		free_ref(t[i].proc, &d);
		/*
		 * A byte over it, every byte there (padded, the rest of the
		 * arguments after it): refused.  The length word alone over
		 * the bound, above, is refused by its missing bytes whatever
		 * the bound: no test failed when onc_xdr_name() took names of
		 * any length (mutation testing, 2026-12-07).
		 */
		at = name_at(wire, n, max);
		memcpy(copy, wire, at);
		w = htonl(LM_MAXSTRLEN + 1);
		memcpy(copy + at - 4, &w, 4);
		memset(copy + at, 'm', LM_MAXSTRLEN + 1);
		memset(copy + at + LM_MAXSTRLEN + 1, 0, 3);
		memcpy(copy + at + LM_MAXSTRLEN + 4, wire + at + LM_MAXSTRLEN,
		    n - at - LM_MAXSTRLEN);
		memset(&d, 0, sizeof(d));
		CU_ASSERT_FALSE(decode(t[i].proc, &d, copy, n + 4));
		free_ref(t[i].proc, &d);
	}
	/*
	 * Into a buffer the caller gives, as xdr_string() does; a name
	 * refused there leaves the buffer the caller's (no test failed
	 * when the refusal freed it: mutation testing, 2026-12-07).
	 */
	{
		char *p = inbuf;
		XDR x;

		nf4.name = (char *)"abcdefg";
		n = encode(XDRPROC(xdr_nlm4_notify), &nf4, wire, sizeof(wire));
		xdrmem_create(&x, wire, (u_int)n, XDR_DECODE);
		CU_ASSERT(xdr_nlm_name(&x, &p));
		CU_ASSERT(p == inbuf);
		CU_ASSERT_STRING_EQUAL(inbuf, "abcdefg");
		xdr_destroy(&x);
		at = name_at(wire, n, "abcdefg");
		wire[at + 2] = '\0';
		xdrmem_create(&x, wire, (u_int)n, XDR_DECODE);
		CU_ASSERT_FALSE(xdr_nlm_name(&x, &p));
		CU_ASSERT(p == inbuf);
		xdr_destroy(&x);
	}
}

int
tests_register(void)
{
	CU_pSuite s = CU_add_suite("nlm in-place XDR", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "lockargs agree with rpcgen", test_lockargs) == NULL ||
	    CU_add_test(s, "unlock/test/cancel args agree",
	    test_other_args) == NULL ||
	    CU_add_test(s, "over-long and NUL refused", test_refusals) == NULL ||
	    CU_add_test(s, "every name of every version: NUL and over-long "
	    "refused", test_names) == NULL ||
	    CU_add_test(s, "bool words other than 0/1", test_bools) == NULL ||
	    CU_add_test(s, "nlm4_res encodes as rpcgen's", test_res) == NULL)
		return -1;
	return 0;
}
