/*
 * fuzz_nlmxdr.c - libFuzzer: the in-place NLMv4 argument decoders
 * (nlm/nlm_xdr.c) against rpcgen's decoders of the same .x file.
 *
 * Input: one byte choosing the argument type (lockargs, unlockargs,
 * testargs, cancargs: the four nlmd decodes in place: bits 0-1) and the
 * form of the rest (bit 2).  Raw: the rest is what both decoders get.
 * Framed: the rest is four lengths (cookie, caller_name, fh, oh: 16 bits
 * each, of which 11 count: 0-2047, past the bounds but not so far that
 * copying the message costs more than decoding it) and a pool of bytes; the harness lays out the arguments with those
 * lengths, the data and the padding (not necessarily zero) taken from the
 * pool, so that lengths around the bounds are one mutation away while
 * everything after them stays in place.  Each decoder gets its own copy
 * of the message (ours writes a NUL into its buffer).  They must agree:
 *   - both fail; or
 *   - both succeed with equal fields, ours pointing only into its buffer,
 *     every length within the .x bounds.
 * (A caller_name holding a NUL is refused by both: rpcgen's calls our
 * xdr_nlm_name(), rpc/xdrname.c.)
 * Anything else aborts, as does any memory error under ASan/UBSan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlm_impl.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

enum { A_LOCK, A_UNLOCK, A_TEST, A_CANC, A_N };

union fz_args {
	nlm4_lockargs	l;
	nlm4_unlockargs	u;
	nlm4_testargs	t;
	nlm4_cancargs	c;
};

struct fz_type {
	xdrproc_t	 ref;
	xdrproc_t	 fast;
	unsigned	 words;		/* u_int fields between cookie and
					   caller_name */
};

static const struct fz_type *
fz_type(unsigned which)
{
	static struct fz_type t[A_N];

	if (t[0].ref == NULL) {
		t[A_LOCK] = (struct fz_type){ XDRPROC(xdr_nlm4_lockargs),
		    XDRPROC(nlm_xdr_lockargs), 2 };
		t[A_UNLOCK] = (struct fz_type){ XDRPROC(xdr_nlm4_unlockargs),
		    XDRPROC(nlm_xdr_unlockargs), 0 };
		t[A_TEST] = (struct fz_type){ XDRPROC(xdr_nlm4_testargs),
		    XDRPROC(nlm_xdr_testargs), 1 };
		t[A_CANC] = (struct fz_type){ XDRPROC(xdr_nlm4_cancargs),
		    XDRPROC(nlm_xdr_cancargs), 2 };
	}
	return &t[which];
}

#define FZ_CHECK(c)	do {						\
	if (!(c)) {							\
		fprintf(stderr, "fuzz_nlmxdr: %s:%d: %s\n", __FILE__,	\
		    __LINE__, #c);					\
		abort();						\
	}								\
} while (0)

static bool_t
fz_decode(xdrproc_t proc, void *args, uint8_t *buf, size_t len)
{
	XDR x;
	bool_t ok;

	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	ok = proc(&x, args);
	xdr_destroy(&x);
	return ok;
}

static void
fz_netobj_eq(const nlm_netobj *a, const nlm_netobj *b, const uint8_t *buf,
    size_t len)
{
	FZ_CHECK(a->nlm_netobj_len == b->nlm_netobj_len);
	FZ_CHECK(b->nlm_netobj_len <= MAXNETOBJ_SZ);
	if (b->nlm_netobj_len == 0)
		return;
	FZ_CHECK((const uint8_t *)b->nlm_netobj_val >= buf &&
	    (const uint8_t *)b->nlm_netobj_val + b->nlm_netobj_len <=
	    buf + len);
	FZ_CHECK(memcmp(a->nlm_netobj_val, b->nlm_netobj_val,
	    b->nlm_netobj_len) == 0);
}

static void
fz_lock_eq(const nlm4_lock *a, const nlm4_lock *b, const uint8_t *buf,
    size_t len)
{
	size_t n;

	FZ_CHECK(b->caller_name != NULL);
	FZ_CHECK((const uint8_t *)b->caller_name >= buf &&
	    (const uint8_t *)b->caller_name < buf + len);
	n = strnlen(b->caller_name, (size_t)(buf + len -
	    (const uint8_t *)b->caller_name));
	FZ_CHECK((const uint8_t *)b->caller_name + n < buf + len);
	FZ_CHECK(n <= LM_MAXSTRLEN);
	FZ_CHECK(strcmp(a->caller_name, b->caller_name) == 0);
	fz_netobj_eq(&a->fh, &b->fh, buf, len);
	fz_netobj_eq(&a->oh, &b->oh, buf, len);
	FZ_CHECK(a->svid == b->svid);
	FZ_CHECK(a->l_offset == b->l_offset && a->l_len == b->l_len);
}

static void
fz_compare(unsigned which, const union fz_args *a, const union fz_args *b,
    const uint8_t *buf, size_t len)
{
	switch (which) {
	case A_LOCK:
		fz_netobj_eq(&a->l.cookie, &b->l.cookie, buf, len);
		FZ_CHECK(a->l.block == b->l.block);
		FZ_CHECK(a->l.exclusive == b->l.exclusive);
		fz_lock_eq(&a->l.alock, &b->l.alock, buf, len);
		FZ_CHECK(a->l.reclaim == b->l.reclaim);
		FZ_CHECK(a->l.state == b->l.state);
		break;
	case A_UNLOCK:
		fz_netobj_eq(&a->u.cookie, &b->u.cookie, buf, len);
		fz_lock_eq(&a->u.alock, &b->u.alock, buf, len);
		break;
	case A_TEST:
		fz_netobj_eq(&a->t.cookie, &b->t.cookie, buf, len);
		FZ_CHECK(a->t.exclusive == b->t.exclusive);
		fz_lock_eq(&a->t.alock, &b->t.alock, buf, len);
		break;
	default:
		fz_netobj_eq(&a->c.cookie, &b->c.cookie, buf, len);
		FZ_CHECK(a->c.block == b->c.block);
		FZ_CHECK(a->c.exclusive == b->c.exclusive);
		fz_lock_eq(&a->c.alock, &b->c.alock, buf, len);
		break;
	}
}

/* Framed form: bytes taken from the pool in turn (0 when it is empty). */
struct fz_pool {
	const uint8_t	*p;
	size_t		 n, i;
	uint8_t		*out;
	size_t		 len, cap;
};

static void
fz_put(struct fz_pool *fp, const uint8_t *b, size_t n)
{
	size_t k;

	if (n > fp->cap - fp->len)
		n = fp->cap - fp->len;
	if (b != NULL) {
		memcpy(fp->out + fp->len, b, n);
		fp->len += n;
		return;
	}
	if (fp->n == 0) {
		memset(fp->out + fp->len, 0, n);
		fp->len += n;
		return;
	}
	/* In runs: the pool's bytes from where the last call stopped. */
	while (n > 0) {
		k = fp->n - fp->i;
		if (k > n)
			k = n;
		memcpy(fp->out + fp->len, fp->p + fp->i, k);
		fp->len += k;
		fp->i = (fp->i + k) % fp->n;
		n -= k;
	}
}

static void
fz_put_word(struct fz_pool *fp, uint32_t v)
{
	uint8_t w[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v };

	fz_put(fp, w, 4);
}

/* A length word, then len bytes and the padding, from the pool. */
static void
fz_put_opaque(struct fz_pool *fp, uint32_t len)
{
	fz_put_word(fp, len);
	fz_put(fp, NULL, (len + 3u) & ~3u);
}

/* Lay out arguments of type `which' from lengths and a pool. */
static size_t
fz_frame(unsigned which, const uint8_t *d, size_t n, uint8_t *out,
    size_t cap)
{
	struct fz_pool fp = { d + 8, n - 8, 0, out, 0, cap };
	const struct fz_type *ty = fz_type(which);
	uint32_t len[4];
	unsigned i;

	for (i = 0; i < 4; i++)
		len[i] = ((uint32_t)d[2 * i] << 8 | d[2 * i + 1]) & 0x7ff;
	fz_put_opaque(&fp, len[0]);			/* cookie */
	fz_put(&fp, NULL, 4 * ty->words);		/* block, exclusive */
	fz_put_opaque(&fp, len[1]);			/* caller_name */
	fz_put_opaque(&fp, len[2]);			/* fh */
	fz_put_opaque(&fp, len[3]);			/* oh */
	fz_put(&fp, NULL, 4 + 8 + 8);			/* svid, l_offset, l_len */
	if (which == A_LOCK)
		fz_put(&fp, NULL, 8);			/* reclaim, state */
	return fp.len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t framed[4 * 2052 + 64];
	const struct fz_type *ty;
	union fz_args a, b;
	uint8_t *ref, *fast;
	unsigned which;
	bool_t ok_ref, ok_fast;

	if (size < 1)
		return 0;
	which = data[0] % A_N;
	ty = fz_type(which);
	if ((data[0] & 4) && size >= 9) {
		size = fz_frame(which, data + 1, size - 1, framed,
		    sizeof(framed));
		data = framed;
	} else {
		data++;
		size--;
	}
	/* Exact-size copies: ASan sees any read past the message. */
	ref = malloc(size ? size : 1);
	fast = malloc(size ? size : 1);
	FZ_CHECK(ref != NULL && fast != NULL);
	memcpy(ref, data, size);
	memcpy(fast, data, size);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ok_ref = fz_decode(ty->ref, &a, ref, size);
	ok_fast = fz_decode(ty->fast, &b, fast, size);
	FZ_CHECK(ok_ref == ok_fast);
	if (ok_ref)
		fz_compare(which, &a, &b, fast, size);
	xdr_free(ty->ref, &a);
	free(ref);
	free(fast);
	return 0;
}
