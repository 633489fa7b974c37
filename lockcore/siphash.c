/*
 * siphash.c - SipHash-1-3 (Aumasson and Bernstein's keyed hash, with one
 * compression and three finalisation rounds, as Rust and Redis use it for
 * hash tables): the hash every table keyed by client-chosen bytes uses,
 * with a key chosen at random when the table is made.  Without the key a
 * client cannot choose file or owner handles that share a bucket (hash
 * flooding); a fixed, public hash let one client make every lookup walk a
 * chain of everything it had sent.
 */
#include "lockcore.h"

#include "lk_impl.h"

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND do {							\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

static inline uint64_t
lk_le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	    (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	    (uint64_t)p[7] << 56;
}

uint64_t
lk_siphash(const uint8_t key[LK_HASH_KEY_LEN], uint64_t tweak,
    const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t k0 = lk_le64(key), k1 = lk_le64(key + 8), m, b;
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t v3 = 0x7465646279746573ULL ^ k1;
	size_t left = len;

	/*
	 * The message is the tweak (little-endian: what kind of key, the
	 * owner's host...) followed by the bytes: SipHash-1-3 of 8 + len
	 * bytes.
	 */
	v3 ^= tweak;
	SIPROUND;
	v0 ^= tweak;
	for (; left >= 8; p += 8, left -= 8) {
		m = lk_le64(p);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	/* The last 0-7 bytes, little-endian, under the length byte. */
	b = (uint64_t)(len + 8) << 56;
	switch (left) {
	case 7:
		b |= (uint64_t)p[6] << 48;
		/* FALLTHROUGH */
	case 6:
		b |= (uint64_t)p[5] << 40;
		/* FALLTHROUGH */
	case 5:
		b |= (uint64_t)p[4] << 32;
		/* FALLTHROUGH */
	case 4:
		b |= (uint64_t)p[3] << 24;
		/* FALLTHROUGH */
	case 3:
		b |= (uint64_t)p[2] << 16;
		/* FALLTHROUGH */
	case 2:
		b |= (uint64_t)p[1] << 8;
		/* FALLTHROUGH */
	case 1:
		b |= (uint64_t)p[0];
		break;
	default:
		break;
	}
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}
