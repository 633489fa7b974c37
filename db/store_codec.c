/*
 * store_codec.c - the on-disk format of nlmd's store: encoding and
 * decoding of every key and value.  This comment is the format spec.
 *
 * ENVIRONMENT
 *   A Berkeley DB 5.3 transactional environment in the state directory:
 *   region files __db.001 ... (rebuilt by recovery at every open), log
 *   files log.0000000001 ... (16 MiB each; those no checkpoint needs and
 *   that hold no journal record not yet folded are removed), and four
 *   btree databases, one file each, opened with the default (bytewise,
 *   memcmp) key order:
 *     meta.db    store-wide values
 *     hosts.db   one record per host
 *     locks.db   one record per granted lock
 *     shares.db  one record per share reservation
 *   The four are created in one transaction, meta.db last: a meta.db
 *   without one of the other three means that one was lost, and
 *   store_open() refuses the store (STORE_CORRUPT) before recovery.
 *   Committed turns not yet folded into those four are journal records
 *   in the log (below).  Nothing else in the directory belongs to the
 *   store.
 *
 * ENCODING
 *   u8, u16, u32, u64  unsigned, big-endian (most significant byte first).
 *   i32 (host state)   two's complement, stored as its u32 bit pattern.
 *   svid               the i32 svid plus 2^31, as u32: the bytewise key
 *                      order is then the numeric order of svids.
 *   bytes16            u16 length n, then n bytes.
 *   addr               u8 length n (0: none, 4: IPv4, 16: IPv6), n bytes
 *                      (network order, as in struct in_addr/in6_addr),
 *                      u32 IPv6 scope id (0 otherwise).
 *   Every value begins with a u8 record version.  This code writes version
 *   1 (STORE_REC_V1), except host values, which are version 3
 *   (STORE_REC_V3; versions 1 and 2 host values are still read), and lock
 *   values, version 2 (STORE_REC_V2; version 1 still read); it refuses to
 *   load any other (STORE_CORRUPT).  A value must have exactly the length
 *   its version defines.
 *
 * meta.db
 *   key: ASCII name without NUL; value: u8 version 1, u64.
 *     "format"    store format, 2 (STORE_FORMAT).  store_open() refuses a
 *                 larger number (STORE_CORRUPT): a newer nlmd wrote it.
 *                 Format 1 kept the journal in journal0.db and
 *                 journal1.db (below); store_open() folds them, removes
 *                 them and writes 2, in one transaction.
 *     "epoch"     the current epoch (0 before the first start)
 *     "token"     fencing-token high-water mark
 *     "nexthost"  next host id to give out (starts at 1)
 *     "journal"   the LSN of the last journal record folded into the
 *                 databases, as file number << 32 | offset; written with
 *                 each fold, in its transaction (absent before the
 *                 first: then every journal record in the log counts)
 *     "locks"     the number of records in locks.db, and
 *     "shares"    in shares.db: written when the store is created (0),
 *                 and in every transaction that changes that database
 *                 (the fold's, store_compact.c; the drop under
 *                 durability none, store.c), as it leaves it.  A load
 *                 that walks another number of records refuses the
 *                 store (STORE_CORRUPT, store_load.c).  Absent in a
 *                 store an earlier nlmd wrote: the first load stores
 *                 the numbers it walked.
 *   The first four and the counts are written when the store is
 *   created, in one transaction.  A meta.db without "format" is a new
 *   store only while all four databases are empty; otherwise
 *   store_open() refuses it (STORE_CORRUPT).
 *
 * hosts.db
 *   key:   u64 host id (never 0)
 *   value: u8 version 3, bytes16 caller name (0..1024 bytes, no NUL),
 *          addr requests come from, u8 n (0..STORE_LOCAL_MAX, 4), then
 *          n addrs of ours it talked to (none of length 0; oldest
 *          first), i32 NSM state, u32 flags (STORE_HOST_*), u64 epoch
 *          first written, u64 notify-since (Unix time in seconds since
 *          which an SM_NOTIFY to this host is owed and unanswered; 0:
 *          none).
 *          Version 2 has exactly one addr of ours in place of n and the
 *          list (length 0: none known); version 1 (written by the first
 *          persistent nlmd) is version 2 without notify-since, which
 *          then reads as 0.
 *
 * locks.db (lockcore's unique key of a lock)
 *   key:   u64 host, svid, bytes16 owner handle (0..1024 bytes),
 *          bytes16 file handle (1..1024 bytes), u64 start
 *   value: u8 version 2, u64 len (0: through UINT64_MAX), u8 exclusive
 *          (0/1), u64 fencing token, u64 epoch (at most LK_EPOCH_MAX,
 *          2^32 - 1: lockcore keeps 32 bits), u32 check.  30 bytes.
 *          The check is the low 32 bits of SipHash-1-3 (lockcore's
 *          lk_siphash, key of 16 zero bytes) of the value's first 26
 *          bytes under the tweak h, where h is the same hash of the key
 *          under the tweak 0.  locks.db has no page checksums (store.c,
 *          store_db_open()): a damaged byte in a record's key or value
 *          fails the check at the load (STORE_CORRUPT), where a
 *          damaged length or token would otherwise read as a lock; a
 *          damaged link between pages, which hides records, fails the
 *          load's count (meta "locks").
 *          Version 1 (nlmd before 2026-12-07) is the first 26 bytes
 *          without the check; such records are read unchecked, and
 *          rewritten as version 2 after the load of the start that
 *          finds them (store_locks_upgrade(), store_compact.c).
 *
 * shares.db (lockcore's unique key of a share reservation)
 *   key:   u64 host, bytes16 owner handle, bytes16 file handle
 *   value: u8 version 1, u8 access mask, u8 deny mask (LK_SHARE_R = 1,
 *          LK_SHARE_W = 2), u64 epoch (at most LK_EPOCH_MAX).  11 bytes.
 *
 * The journal (see store_commit.c and store_compact.c)
 *   One log record per commit, written with DB_ENV->log_put outside any
 *   transaction: Berkeley DB's record header in the host's order (u32
 *   type STORE_LOGREC = DB_user_BEGIN + 0x4e4c, u32 transaction id 0,
 *   DB_LSN of the previous record 0/0), then the entry:
 *          u8 version 1, then the turns' operations in order, each:
 *          u8 database (0 meta, 1 hosts, 2 locks, 3 shares), u8 kind
 *          (1 put, 0 delete), u16 key length, u32 value length (0 for a
 *          delete), the key, the value -- exactly as they are to be
 *          stored in that database (the formats above).
 *   A commit of more than STORE_LOGREC_MAX (1 MiB) is written as several
 *   records: the first byte of the entry is then 2 (first part), 3 (a
 *   middle part) or 4 (the last part) instead of the version, and the
 *   parts' operations are the commit's, in order.  The parts of one
 *   commit follow each other among our records; a commit counts once its
 *   last part is read (parts without their last, which a crash left, are
 *   never applied).  An entry whose first byte is none of 1-4 fails the
 *   fold, and with it the open.
 *   What the store holds is the four databases with every commit in the
 *   journal after meta "journal" applied in log order.  Berkeley DB's own tools
 *   show them as application-specific records (db5.3_printlog) and pass
 *   over them (db5.3_recover).
 *
 * journal0.db, journal1.db (format 1 only; read once, then removed)
 *   key:   u64 sequence number of the last turn the entry carries
 *   value: an entry as above.  Applied in sequence order (the entries of
 *          both databases together).
 *
 * Whether a record is reclaimable is not stored: it follows from its
 * epoch, and the caller decides.
 */
#include "store_impl.h"

#include <string.h>

#define SVID_BIAS	2147483648LL	/* 2^31 */
#define U32_RANGE	4294967296LL	/* 2^32 */
#define LOCK_VAL_LEN_V1	26
#define LOCK_VAL_LEN	30	/* version 2: the check after version 1's */
#define SHARE_VAL_LEN	11
#define META_VAL_LEN	9

/* Writers: store at p, return the byte after. */
static uint8_t *
put_u8(uint8_t *p, uint8_t v)
{
	*p = v;
	return p + 1;
}

static uint8_t *
put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *
put_u32(uint8_t *p, uint32_t v)
{
	p = put_u16(p, (uint16_t)(v >> 16));
	return put_u16(p, (uint16_t)v);
}

static uint8_t *
put_u64(uint8_t *p, uint64_t v)
{
	p = put_u32(p, (uint32_t)(v >> 32));
	return put_u32(p, (uint32_t)v);
}

/* bytes16; n was checked against the limits by the caller. */
static uint8_t *
put_bytes16(uint8_t *p, const void *src, size_t n)
{
	p = put_u16(p, (uint16_t)n);
	if (n > 0)
		memcpy(p, src, n);
	return p + n;
}

static uint8_t *
put_addr(uint8_t *p, const struct store_addr *a)
{
	p = put_u8(p, a->sa_len);
	memcpy(p, a->sa_bytes, a->sa_len);
	return put_u32(p + a->sa_len, a->sa_scope);
}

static uint32_t
svid_enc(int32_t svid)
{
	return (uint32_t)((int64_t)svid + SVID_BIAS);
}

/* A bounded reader: any overrun sets rd_bad and yields zeros. */
struct store_rd {
	const uint8_t	*rd_p;
	size_t		 rd_left;
	bool		 rd_bad;
};

static void
rd_init(struct store_rd *rd, const void *p, size_t n)
{
	rd->rd_p = p;
	rd->rd_left = n;
	rd->rd_bad = false;
}

/* n bytes from the reader, or NULL (and rd_bad) if fewer are left. */
static const uint8_t *
get_n(struct store_rd *rd, size_t n)
{
	const uint8_t *p = rd->rd_p;

	if (rd->rd_bad || n > rd->rd_left) {
		rd->rd_bad = true;
		return NULL;
	}
	rd->rd_p += n;
	rd->rd_left -= n;
	return p;
}

static uint64_t
get_uint(struct store_rd *rd, size_t n)
{
	const uint8_t *p = get_n(rd, n);
	uint64_t v = 0;
	size_t i;

	for (i = 0; p != NULL && i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint8_t
get_u8(struct store_rd *rd)
{
	return (uint8_t)get_uint(rd, 1);
}

static uint32_t
get_u32(struct store_rd *rd)
{
	return (uint32_t)get_uint(rd, 4);
}

static uint64_t
get_u64(struct store_rd *rd)
{
	return get_uint(rd, 8);
}

/* bytes16 of at most max bytes; *np gets the length. */
static const uint8_t *
get_bytes16(struct store_rd *rd, size_t max, size_t *np)
{
	size_t n = (size_t)get_uint(rd, 2);

	*np = n;
	if (n > max) {
		rd->rd_bad = true;
		return NULL;
	}
	return get_n(rd, n);
}

static bool
get_addr(struct store_rd *rd, struct store_addr *a)
{
	const uint8_t *p;

	memset(a, 0, sizeof(*a));
	a->sa_len = get_u8(rd);
	if (a->sa_len != 0 && a->sa_len != 4 && a->sa_len != 16)
		return false;
	if ((p = get_n(rd, a->sa_len)) != NULL)
		memcpy(a->sa_bytes, p, a->sa_len);
	a->sa_scope = get_u32(rd);
	return !rd->rd_bad;
}

static int32_t
svid_dec(uint32_t v)
{
	return (int32_t)((int64_t)v - SVID_BIAS);
}

static int32_t
i32_dec(uint32_t v)
{
	return v < SVID_BIAS ? (int32_t)v : (int32_t)((int64_t)v - U32_RANGE);
}

/* Did the reader consume exactly everything without overrun? */
static bool
rd_done(const struct store_rd *rd)
{
	return !rd->rd_bad && rd->rd_left == 0;
}

/* Check the version byte of a value of exactly `len' bytes. */
static const char *
rd_version(struct store_rd *rd, size_t len)
{
	if (rd->rd_left == 0)
		return "empty value";
	if (get_u8(rd) != STORE_REC_V1)
		return "unknown record version";
	if (rd->rd_left != len - 1)
		return "value has the wrong length for its version";
	return NULL;
}

bool
store_record_ok(const struct lk_record *rc)
{
	if (rc == NULL || rc->rc_fhlen == 0 || rc->rc_fhlen > LK_FH_MAX ||
	    rc->rc_fh == NULL || rc->rc_ohlen > LK_OH_MAX ||
	    (rc->rc_ohlen > 0 && rc->rc_oh == NULL) ||
	    rc->rc_epoch > LK_EPOCH_MAX)
		return false;
	if (rc->rc_kind == LK_REC_SHARE)
		return (rc->rc_access & ~(LK_SHARE_R | LK_SHARE_W)) == 0 &&
		    (rc->rc_deny & ~(LK_SHARE_R | LK_SHARE_W)) == 0;
	if (rc->rc_kind != LK_REC_LOCK || rc->rc_excl > 1)
		return false;
	/* The last byte, start + len - 1, must not pass UINT64_MAX. */
	return rc->rc_len == 0 || rc->rc_start <= UINT64_MAX - (rc->rc_len - 1);
}

bool
store_host_ok(const struct store_host *h)
{
	size_t i;

	if (h == NULL || h->sh_id == 0 || h->sh_name == NULL ||
	    strnlen(h->sh_name, STORE_NAME_MAX + 1) > STORE_NAME_MAX ||
	    h->sh_nlocal > STORE_LOCAL_MAX)
		return false;
	if (h->sh_addr.sa_len != 0 && h->sh_addr.sa_len != 4 &&
	    h->sh_addr.sa_len != 16)
		return false;
	for (i = 0; i < h->sh_nlocal; i++)
		if (h->sh_local[i].sa_len != 4 && h->sh_local[i].sa_len != 16)
			return false;
	return true;
}

size_t
store_enc_jop(uint8_t *buf, const struct store_op *op)
{
	uint8_t *p = buf;

	p = put_u8(p, op->op_dbi);
	p = put_u8(p, op->op_put);
	p = put_u16(p, op->op_klen);
	p = put_u32(p, op->op_vlen);
	memcpy(p, op + 1, (size_t)op->op_klen + op->op_vlen);
	return (size_t)(p - buf) + op->op_klen + op->op_vlen;
}

const char *
store_dec_jop(const void *v, size_t vlen, size_t *offp, struct store_op *op,
    const uint8_t **datap)
{
	struct store_rd rd;
	size_t n;

	rd_init(&rd, (const uint8_t *)v + *offp, vlen - *offp);
	op->op_dbi = get_u8(&rd);
	op->op_put = get_u8(&rd);
	op->op_klen = (uint16_t)get_uint(&rd, 2);
	op->op_vlen = get_u32(&rd);
	if (rd.rd_bad || op->op_dbi > STORE_DBI_SHARES || op->op_put > 1 ||
	    op->op_klen == 0 || op->op_klen > STORE_KEY_MAX ||
	    op->op_vlen > STORE_VAL_MAX || (!op->op_put && op->op_vlen != 0))
		return "bad operation header";
	n = (size_t)op->op_klen + op->op_vlen;
	if ((*datap = get_n(&rd, n)) == NULL)
		return "operation runs past the entry";
	*offp = vlen - rd.rd_left;
	return NULL;
}

size_t
store_enc_u64key(uint8_t *buf, uint64_t v)
{
	return (size_t)(put_u64(buf, v) - buf);
}

size_t
store_enc_meta(uint8_t *buf, uint64_t v)
{
	return (size_t)(put_u64(put_u8(buf, STORE_REC_V1), v) - buf);
}

size_t
store_enc_lock_key(uint8_t *buf, const struct lk_record *rc)
{
	uint8_t *p = buf;

	p = put_u64(p, rc->rc_host);
	p = put_u32(p, svid_enc(rc->rc_svid));
	p = put_bytes16(p, rc->rc_oh, rc->rc_ohlen);
	p = put_bytes16(p, rc->rc_fh, rc->rc_fhlen);
	p = put_u64(p, rc->rc_start);
	return (size_t)(p - buf);
}

/*
 * The check of a lock record (key k, value v of at least LOCK_VAL_LEN_V1
 * bytes): see "locks.db" above.
 */
static uint32_t
lock_check(const void *k, size_t klen, const void *v)
{
	static const uint8_t zero[LK_HASH_KEY_LEN];

	return (uint32_t)lk_siphash(zero, lk_siphash(zero, 0, k, klen), v,
	    LOCK_VAL_LEN_V1);
}

size_t
store_enc_lock_val(uint8_t *buf, const struct lk_record *rc,
    const uint8_t *key, size_t klen)
{
	uint8_t *p = buf;

	p = put_u8(p, STORE_REC_V2);
	p = put_u64(p, rc->rc_len);
	p = put_u8(p, rc->rc_excl);
	p = put_u64(p, rc->rc_token);
	p = put_u64(p, rc->rc_epoch);
	p = put_u32(p, lock_check(key, klen, buf));
	return (size_t)(p - buf);
}

size_t
store_enc_share_key(uint8_t *buf, const struct lk_record *rc)
{
	uint8_t *p = buf;

	p = put_u64(p, rc->rc_host);
	p = put_bytes16(p, rc->rc_oh, rc->rc_ohlen);
	p = put_bytes16(p, rc->rc_fh, rc->rc_fhlen);
	return (size_t)(p - buf);
}

size_t
store_enc_share_val(uint8_t *buf, const struct lk_record *rc)
{
	uint8_t *p = buf;

	p = put_u8(p, STORE_REC_V1);
	p = put_u8(p, rc->rc_access);
	p = put_u8(p, rc->rc_deny);
	p = put_u64(p, rc->rc_epoch);
	return (size_t)(p - buf);
}

size_t
store_enc_host_val(uint8_t *buf, const struct store_host *h)
{
	uint8_t *p = buf;
	unsigned i;

	p = put_u8(p, STORE_REC_V3);
	p = put_bytes16(p, h->sh_name, strlen(h->sh_name));
	p = put_addr(p, &h->sh_addr);
	p = put_u8(p, (uint8_t)h->sh_nlocal);
	for (i = 0; i < h->sh_nlocal; i++)
		p = put_addr(p, &h->sh_local[i]);
	p = put_u32(p, (uint32_t)h->sh_state);
	p = put_u32(p, h->sh_flags);
	p = put_u64(p, h->sh_epoch);
	p = put_u64(p, h->sh_notify_since);
	return (size_t)(p - buf);
}

const char *
store_dec_meta(const void *v, size_t vlen, uint64_t *out)
{
	struct store_rd rd;
	const char *why;

	rd_init(&rd, v, vlen);
	if ((why = rd_version(&rd, META_VAL_LEN)) != NULL)
		return why;
	*out = get_u64(&rd);
	return NULL;
}

/* The owner and file handles of a lock or share key. */
static bool
dec_handles(struct store_rd *rd, struct lk_record *rc)
{
	rc->rc_oh = get_bytes16(rd, LK_OH_MAX, &rc->rc_ohlen);
	rc->rc_fh = get_bytes16(rd, LK_FH_MAX, &rc->rc_fhlen);
	return !rd->rd_bad && rc->rc_fhlen > 0;
}

const char *
store_dec_lock(const void *k, size_t klen, const void *v, size_t vlen,
    struct lk_record *rc)
{
	struct store_rd rd;
	uint8_t version;

	memset(rc, 0, sizeof(*rc));
	rc->rc_kind = LK_REC_LOCK;
	rd_init(&rd, k, klen);
	rc->rc_host = get_u64(&rd);
	rc->rc_svid = svid_dec(get_u32(&rd));
	if (!dec_handles(&rd, rc))
		return "bad owner or file handle in key";
	rc->rc_start = get_u64(&rd);
	if (!rd_done(&rd))
		return "key has the wrong length";
	rd_init(&rd, v, vlen);
	if (vlen == 0)
		return "empty value";
	version = get_u8(&rd);
	if (version != STORE_REC_V1 && version != STORE_REC_V2)
		return "unknown record version";
	if (vlen != (version == STORE_REC_V1 ? LOCK_VAL_LEN_V1 :
	    LOCK_VAL_LEN))
		return "value has the wrong length for its version";
	rc->rc_len = get_u64(&rd);
	rc->rc_excl = get_u8(&rd);
	rc->rc_token = get_u64(&rd);
	rc->rc_epoch = get_u64(&rd);
	if (version == STORE_REC_V2 && get_u32(&rd) != lock_check(k, klen, v))
		return "its check does not match its bytes: the record is "
		    "damaged";
	return store_record_ok(rc) ? NULL : "lock range, mode or epoch out of bounds";
}

size_t
store_lock_upgrade(uint8_t *buf, const void *k, size_t klen, const void *v,
    size_t vlen)
{
	struct lk_record rc;

	/* 26 bytes that decode: version 1, whose decoding loses nothing. */
	if (vlen != LOCK_VAL_LEN_V1 || store_dec_lock(k, klen, v, vlen,
	    &rc) != NULL)
		return 0;
	return store_enc_lock_val(buf, &rc, k, klen);
}

const char *
store_dec_share(const void *k, size_t klen, const void *v, size_t vlen,
    struct lk_record *rc)
{
	struct store_rd rd;
	const char *why;

	memset(rc, 0, sizeof(*rc));
	rc->rc_kind = LK_REC_SHARE;
	rd_init(&rd, k, klen);
	rc->rc_host = get_u64(&rd);
	if (!dec_handles(&rd, rc) || !rd_done(&rd))
		return "bad owner or file handle in key";
	rd_init(&rd, v, vlen);
	if ((why = rd_version(&rd, SHARE_VAL_LEN)) != NULL)
		return why;
	rc->rc_access = get_u8(&rd);
	rc->rc_deny = get_u8(&rd);
	rc->rc_epoch = get_u64(&rd);
	return store_record_ok(rc) ? NULL : "share masks or epoch out of bounds";
}

const char *
store_dec_host(const void *k, size_t klen, const void *v, size_t vlen,
    struct store_host *h, char *name)
{
	struct store_rd rd;
	const uint8_t *p;
	uint8_t version;
	size_t n, i;

	memset(h, 0, sizeof(*h));
	rd_init(&rd, k, klen);
	h->sh_id = get_u64(&rd);
	if (!rd_done(&rd) || h->sh_id == 0)
		return "bad host id in key";
	rd_init(&rd, v, vlen);
	if (vlen == 0)
		return "empty value";
	version = get_u8(&rd);
	if (version != STORE_REC_V1 && version != STORE_REC_V2 &&
	    version != STORE_REC_V3)
		return "unknown record version";
	if ((p = get_bytes16(&rd, STORE_NAME_MAX, &n)) == NULL ||
	    memchr(p, '\0', n) != NULL)
		return "bad host name";
	memcpy(name, p, n);
	name[n] = '\0';
	h->sh_name = name;
	if (!get_addr(&rd, &h->sh_addr))
		return "bad address";
	if (version >= STORE_REC_V3) {
		if ((h->sh_nlocal = get_u8(&rd)) > STORE_LOCAL_MAX)
			return "too many server addresses";
		for (i = 0; i < h->sh_nlocal; i++)
			if (!get_addr(&rd, &h->sh_local[i]) ||
			    h->sh_local[i].sa_len == 0)
				return "bad server address";
	} else {
		if (!get_addr(&rd, &h->sh_local[0]))
			return "bad address";
		h->sh_nlocal = h->sh_local[0].sa_len != 0;
	}
	h->sh_state = i32_dec(get_u32(&rd));
	h->sh_flags = get_u32(&rd);
	h->sh_epoch = get_u64(&rd);
	if (version >= STORE_REC_V2)
		h->sh_notify_since = get_u64(&rd);
	if (!rd_done(&rd))
		return "value has the wrong length for its version";
	return NULL;
}
