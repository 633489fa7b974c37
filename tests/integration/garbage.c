/*
 * garbage.c - raw ONC RPC packet sender for the integration tests: well
 * formed calls with chosen defects, random bytes, broken TCP framing.
 *
 * It builds every message by hand on plain sockets (no libtirpc), so what
 * it checks does not depend on our .x files or our transport code.  Each
 * subcommand states what it expects; the exit status is 0 when nlmd did
 * exactly that, 1 otherwise (with the reason on stderr), 2 on usage errors.
 *
 *   garbage call [-t|-u] [-r RPCVERS] [-f FLAVOR] [-c CREDLEN] [-a HEX]
 *                [-A NRANDOM] [-T NTRAIL] [-D] HOST PORT PROG VERS PROC EXPECT
 *       EXPECT: success | garbage_args | proc_unavail | prog_unavail |
 *               prog_mismatch:LO-HI | rpc_mismatch | auth_error | none
 *   garbage udp-random HOST PORT COUNT     random datagrams: no reply
 *   garbage tcp-random HOST PORT COUNT     random streams: no reply
 *   garbage tcp-garbage-record HOST PORT PROG VERS
 *       a well framed record whose body is not an RPC call: no reply, and
 *       the connection either closes or still answers a NULL call
 *   garbage tcp-oversize HOST PORT PROG VERS MAXREC
 *       records over MAXREC (one huge fragment, one fragment of MAXREC+1,
 *       fragments adding up past MAXREC) close the connection; a record of
 *       exactly MAXREC bytes is answered
 *   garbage tcp-pipeline HOST PORT PROG VERS COUNT SECONDS
 *       COUNT NULL calls sent back to back on one connection, as fast as
 *       it takes them, while reading: each must be answered (SUCCESS)
 *       exactly once within SECONDS, and the connection never closed
 *   garbage tcp-half HOST PORT PROG VERS
 *       a half-sent record and a half-sent record mark stay open while new
 *       TCP and UDP NULL calls answer at once; the half record, completed,
 *       is answered too
 *
 * Wire format (RFC 5531): a call is xid, CALL(0), rpcvers(2), prog, vers,
 * proc, cred {flavor, opaque<400>}, verf {flavor, opaque<400>}, args; a
 * reply is xid, REPLY(1), then MSG_ACCEPTED(0) verf accept_stat [...] or
 * MSG_DENIED(1) reject_stat [...].  On TCP each record is a sequence of
 * fragments, each preceded by a 4-byte big-endian mark: bit 31 = last
 * fragment, bits 0-30 = fragment length.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXMSG		(1u << 21)
#define REPLY_WAIT_MS	3000
#define SILENCE_MS	300
#define PROMPT_MS	500

enum expect_kind {
	X_SUCCESS, X_GARBAGE_ARGS, X_PROC_UNAVAIL, X_PROG_UNAVAIL,
	X_PROG_MISMATCH, X_RPC_MISMATCH, X_AUTH_ERROR, X_NONE
};

struct expect {
	enum expect_kind kind;
	uint32_t	 lo, hi;
};

struct target {
	struct sockaddr_storage ss;
	socklen_t	 sl;
	char		 name[128];
};

/* A message being built, network byte order. */
struct buf {
	uint8_t		*b;
	size_t		 len;
	size_t		 cap;
};

static uint32_t rng_state = 0x9e3779b9u;
static int quiet;		/* no line per reply (tcp-pipeline) */

static uint32_t
rng(void)
{
	/* xorshift32: reproducible garbage, seeded from the command line. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static void	fail(const char *, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "garbage: FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void
usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of garbage.c\n");
	exit(2);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
buf_reserve(struct buf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	while (b->cap < b->len + n)
		b->cap = b->cap ? b->cap * 2 : 256;
	if ((b->b = realloc(b->b, b->cap)) == NULL) {
		perror("realloc");
		exit(2);
	}
}

static void
put32(struct buf *b, uint32_t v)
{
	uint32_t n = htonl(v);

	buf_reserve(b, 4);
	memcpy(b->b + b->len, &n, 4);
	b->len += 4;
}

static void
put_bytes(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->b + b->len, p, n);
	b->len += n;
}

static void
put_random(struct buf *b, size_t n)
{
	size_t i;

	buf_reserve(b, n);
	for (i = 0; i < n; i++)
		b->b[b->len + i] = (uint8_t)rng();
	b->len += n;
}

static unsigned long
num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (*s == '\0' || *end != '\0' || errno != 0) {
		fprintf(stderr, "garbage: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

static void
target_parse(struct target *t, const char *host, const char *port)
{
	struct addrinfo hints, *ai;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0) {
		fprintf(stderr, "garbage: %s: %s\n", host, gai_strerror(rc));
		exit(2);
	}
	memcpy(&t->ss, ai->ai_addr, ai->ai_addrlen);
	t->sl = ai->ai_addrlen;
	snprintf(t->name, sizeof(t->name), "%s%s%s:%s",
	    ai->ai_family == AF_INET6 ? "[" : "", host,
	    ai->ai_family == AF_INET6 ? "]" : "", port);
	freeaddrinfo(ai);
}

static int
sock_open(const struct target *t, int type)
{
	int fd;

	if ((fd = socket(t->ss.ss_family, type | SOCK_CLOEXEC, 0)) == -1)
		fail("socket: %s", strerror(errno));
	if (connect(fd, (const struct sockaddr *)&t->ss, t->sl) == -1)
		fail("connect %s: %s", t->name, strerror(errno));
	return fd;
}

static void
send_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = send(fd, p, n, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			fail("send: %s", strerror(errno));
		}
		p += w;
		n -= (size_t)w;
	}
}

/*
 * Like send_all, but the peer closing on us is a possible (expected)
 * outcome: returns -1 instead of failing.
 */
static int
send_maybe(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = send(fd, p, n, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Wait up to ms for fd to be readable: 1 readable, 0 timeout. */
static int
wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ms() + (uint64_t)ms;
	int rc;

	for (;;) {
		uint64_t now = now_ms();

		if (now >= end)
			return 0;
		rc = poll(&pfd, 1, (int)(end - now));
		if (rc == -1 && errno == EINTR)
			continue;
		if (rc == -1)
			fail("poll: %s", strerror(errno));
		return rc > 0;
	}
}

struct callopts {
	uint32_t	 rpcvers;
	uint32_t	 flavor;
	uint32_t	 credlen;	/* announced cred length */
	int		 direction;	/* 0 CALL, 1 REPLY */
	const char	*hexargs;
	size_t		 nrandom;	/* random argument bytes */
	size_t		 ntrail;	/* zero bytes after the args */
};

static void
callopts_init(struct callopts *o)
{
	memset(o, 0, sizeof(*o));
	o->rpcvers = 2;
}

/* Build a call message (no record mark) into `b'. */
static void
build_call(struct buf *b, uint32_t xid, uint32_t prog, uint32_t vers,
    uint32_t proc, const struct callopts *o)
{
	const char *h;

	put32(b, xid);
	put32(b, (uint32_t)o->direction);
	put32(b, o->rpcvers);
	put32(b, prog);
	put32(b, vers);
	put32(b, proc);
	put32(b, o->flavor);
	put32(b, o->credlen);
	/* Body only when it is of a sane size: a lie is the point. */
	if (o->credlen <= 4096)
		put_random(b, (o->credlen + 3) & ~3u);
	put32(b, 0);
	put32(b, 0);
	for (h = o->hexargs; h != NULL && h[0] && h[1]; h += 2) {
		char two[3] = { h[0], h[1], 0 };
		uint8_t byte = (uint8_t)strtoul(two, NULL, 16);

		put_bytes(b, &byte, 1);
	}
	put_random(b, o->nrandom);
	buf_reserve(b, o->ntrail);
	memset(b->b + b->len, 0, o->ntrail);
	b->len += o->ntrail;
}

/* Prefix the message in `m' with one last-fragment mark into `rec'. */
static void
build_record(struct buf *rec, const struct buf *m)
{
	put32(rec, 0x80000000u | (uint32_t)m->len);
	put_bytes(rec, m->b, m->len);
}

static uint32_t
get32(const uint8_t *p, size_t len, size_t *off)
{
	uint32_t v;

	if (*off + 4 > len)
		fail("reply truncated at byte %zu of %zu", *off, len);
	memcpy(&v, p + *off, 4);
	*off += 4;
	return ntohl(v);
}

static const char *const accept_names[] = {
	"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL",
	"GARBAGE_ARGS", "SYSTEM_ERR"
};

/* Check a reply message against `x'; fail() on mismatch. */
static void
check_reply(const uint8_t *p, size_t len, uint32_t xid, const struct expect *x)
{
	size_t off = 0;
	uint32_t v, stat, lo, hi;
	char got[128];

	if ((v = get32(p, len, &off)) != xid)
		fail("reply xid %08x, sent %08x", v, xid);
	if ((v = get32(p, len, &off)) != 1)
		fail("reply direction %u, not REPLY", v);
	if (get32(p, len, &off) == 0) {
		(void)get32(p, len, &off);
		v = get32(p, len, &off);
		if (v > 400)
			fail("reply verifier length %u", v);
		off += (v + 3) & ~3u;
		stat = get32(p, len, &off);
		lo = hi = 0;
		if (stat == 2) {
			lo = get32(p, len, &off);
			hi = get32(p, len, &off);
		}
		snprintf(got, sizeof(got), "MSG_ACCEPTED %s (%u) %u-%u",
		    stat < 6 ? accept_names[stat] : "?", stat, lo, hi);
		if ((x->kind == X_SUCCESS && stat == 0) ||
		    (x->kind == X_PROG_UNAVAIL && stat == 1) ||
		    (x->kind == X_PROG_MISMATCH && stat == 2 && lo == x->lo &&
		    hi == x->hi) ||
		    (x->kind == X_PROC_UNAVAIL && stat == 3) ||
		    (x->kind == X_GARBAGE_ARGS && stat == 4))
			goto ok;
	} else {
		stat = get32(p, len, &off);
		if (stat == 0) {
			lo = get32(p, len, &off);
			hi = get32(p, len, &off);
			snprintf(got, sizeof(got), "MSG_DENIED RPC_MISMATCH "
			    "%u-%u", lo, hi);
			if (x->kind == X_RPC_MISMATCH && lo == 2 && hi == 2)
				goto ok;
		} else {
			v = get32(p, len, &off);
			snprintf(got, sizeof(got), "MSG_DENIED AUTH_ERROR %u",
			    v);
			if (x->kind == X_AUTH_ERROR && stat == 1)
				goto ok;
		}
	}
	fail("unexpected reply: %s", got);
ok:
	if (!quiet)
		printf("reply: %s\n", got);
}

/*
 * Read exactly n bytes before `end' (now_ms() scale).  Returns 1 when
 * done, 0 when the time ran out before the first byte, -1 when the peer
 * closed before the first byte.  Anything partial is a failure.
 */
static int
read_exact(int fd, uint8_t *p, size_t n, uint64_t end, int started)
{
	size_t have = 0;
	ssize_t r;

	while (have < n) {
		uint64_t now = now_ms();

		if (now >= end || !wait_readable(fd, (int)(end - now))) {
			if (started || have > 0)
				fail("reply record incomplete");
			return 0;
		}
		r = recv(fd, p + have, n - have, 0);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == 0 || (r == -1 && errno == ECONNRESET)) {
			if (started || have > 0)
				fail("connection closed inside a reply record");
			return -1;
		}
		if (r == -1)
			fail("recv: %s", strerror(errno));
		have += (size_t)r;
	}
	return 1;
}

/*
 * Read one TCP record within `ms'.  Returns its length (body in `out'),
 * 0 if nothing arrived in time, -1 if the connection was closed before a
 * byte of a record arrived.
 */
static long
tcp_read_record(int fd, int ms, struct buf *out)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	int started = 0, rc;
	uint32_t mark;
	size_t flen;

	out->len = 0;
	for (;;) {
		if ((rc = read_exact(fd, (uint8_t *)&mark, 4, end,
		    started)) != 1)
			return rc;
		started = 1;
		mark = ntohl(mark);
		flen = mark & 0x7fffffffu;
		if (out->len + flen > MAXMSG)
			fail("reply record over %u bytes", MAXMSG);
		buf_reserve(out, flen);
		if (flen > 0)
			(void)read_exact(fd, out->b + out->len, flen, end, 1);
		out->len += flen;
		if (mark & 0x80000000u)
			return (long)out->len;
	}
}

static int
expect_parse(const char *s, struct expect *x)
{
	static const struct {
		const char *name;
		enum expect_kind kind;
	} names[] = {
		{ "success", X_SUCCESS }, { "garbage_args", X_GARBAGE_ARGS },
		{ "proc_unavail", X_PROC_UNAVAIL },
		{ "prog_unavail", X_PROG_UNAVAIL },
		{ "rpc_mismatch", X_RPC_MISMATCH },
		{ "auth_error", X_AUTH_ERROR }, { "none", X_NONE },
	};
	size_t i;
	unsigned lo, hi;

	memset(x, 0, sizeof(*x));
	if (sscanf(s, "prog_mismatch:%u-%u", &lo, &hi) == 2) {
		x->kind = X_PROG_MISMATCH;
		x->lo = lo;
		x->hi = hi;
		return 0;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			x->kind = names[i].kind;
			return 0;
		}
	return -1;
}

/* One call on UDP; check the answer (or the silence). */
static void
udp_call(const struct target *t, uint32_t prog, uint32_t vers, uint32_t proc,
    const struct callopts *o, const struct expect *x)
{
	struct buf m = { 0 };
	uint8_t *rbuf = malloc(65536);
	uint32_t xid = rng();
	int fd = sock_open(t, SOCK_DGRAM);
	ssize_t n;

	build_call(&m, xid, prog, vers, proc, o);
	send_all(fd, m.b, m.len);
	if (!wait_readable(fd, x->kind == X_NONE ? SILENCE_MS : REPLY_WAIT_MS)) {
		if (x->kind != X_NONE)
			fail("no UDP reply from %s in %d ms", t->name,
			    REPLY_WAIT_MS);
		printf("no reply (as expected)\n");
		goto out;
	}
	if ((n = recv(fd, rbuf, 65536, 0)) == -1)
		fail("UDP recv from %s: %s", t->name, strerror(errno));
	if (x->kind == X_NONE)
		fail("a %zd-byte reply came to a message that deserves none",
		    n);
	check_reply(rbuf, (size_t)n, xid, x);
out:
	close(fd);
	free(m.b);
	free(rbuf);
}

/* One call on an open TCP connection; check the answer. */
static void
tcp_call_fd(int fd, const char *name, uint32_t prog, uint32_t vers,
    uint32_t proc, const struct callopts *o, const struct expect *x)
{
	struct buf m = { 0 }, rec = { 0 }, r = { 0 };
	uint32_t xid = rng();
	long n;

	build_call(&m, xid, prog, vers, proc, o);
	build_record(&rec, &m);
	if (send_maybe(fd, rec.b, rec.len) == -1 && x->kind != X_NONE)
		fail("send to %s: %s", name, strerror(errno));
	n = tcp_read_record(fd, x->kind == X_NONE ? SILENCE_MS :
	    REPLY_WAIT_MS, &r);
	if (n == 0 && x->kind != X_NONE)
		fail("no TCP reply from %s in %d ms", name, REPLY_WAIT_MS);
	if (n == -1 && x->kind != X_NONE)
		fail("%s closed the connection instead of replying", name);
	if (n > 0 && x->kind == X_NONE)
		fail("a %ld-byte reply came to a message that deserves none",
		    n);
	if (n > 0)
		check_reply(r.b, (size_t)n, xid, x);
	else
		printf("no reply (as expected%s)\n", n < 0 ? ", closed" : "");
	free(m.b);
	free(rec.b);
	free(r.b);
}

static void
tcp_null(const struct target *t, uint32_t prog, uint32_t vers)
{
	struct callopts o;
	struct expect x = { X_SUCCESS, 0, 0 };
	int fd = sock_open(t, SOCK_STREAM);

	callopts_init(&o);
	tcp_call_fd(fd, t->name, prog, vers, 0, &o, &x);
	close(fd);
}

static void
udp_null(const struct target *t, uint32_t prog, uint32_t vers)
{
	struct callopts o;
	struct expect x = { X_SUCCESS, 0, 0 };

	callopts_init(&o);
	udp_call(t, prog, vers, 0, &o, &x);
}

static int
cmd_call(int argc, char **argv)
{
	struct callopts o;
	struct target t;
	struct expect x;
	int c, tcp = 0;

	callopts_init(&o);
	while ((c = getopt(argc, argv, "tur:f:c:a:A:T:D")) != -1)
		switch (c) {
		case 't': tcp = 1; break;
		case 'u': tcp = 0; break;
		case 'r': o.rpcvers = (uint32_t)num(optarg); break;
		case 'f': o.flavor = (uint32_t)num(optarg); break;
		case 'c': o.credlen = (uint32_t)num(optarg); break;
		case 'a': o.hexargs = optarg; break;
		case 'A': o.nrandom = num(optarg); break;
		case 'T': o.ntrail = num(optarg); break;
		case 'D': o.direction = 1; break;
		default: usage();
		}
	argc -= optind;
	argv += optind;
	if (argc != 6 || expect_parse(argv[5], &x) == -1)
		usage();
	target_parse(&t, argv[0], argv[1]);
	if (tcp) {
		int fd = sock_open(&t, SOCK_STREAM);

		tcp_call_fd(fd, t.name, (uint32_t)num(argv[2]),
		    (uint32_t)num(argv[3]), (uint32_t)num(argv[4]), &o, &x);
		close(fd);
	} else
		udp_call(&t, (uint32_t)num(argv[2]), (uint32_t)num(argv[3]),
		    (uint32_t)num(argv[4]), &o, &x);
	return 0;
}

static int
cmd_udp_random(char **argv)
{
	static const size_t sizes[] = { 0, 1, 3, 4, 7, 8, 24, 39, 40, 41,
	    44, 100, 512, 1400, 8192, 65000 };
	struct target t;
	unsigned long i, count = num(argv[2]), mismatch = 0;
	uint8_t *b = malloc(65536);
	int fd;

	target_parse(&t, argv[0], argv[1]);
	fd = sock_open(&t, SOCK_DGRAM);
	for (i = 0; i < count; i++) {
		size_t n = i < sizeof(sizes) / sizeof(sizes[0]) ? sizes[i] :
		    rng() % 2048, k;

		for (k = 0; k < n; k++)
			b[k] = (uint8_t)rng();
		/* Word 1 (direction) 0 = CALL: the header parser's worst case. */
		if (n >= 8 && i % 2 == 0)
			memset(b + 4, 0, 4);
		if (send(fd, b, n, 0) == -1 && errno != ECONNREFUSED)
			fail("send: %s", strerror(errno));
	}
	/*
	 * A datagram that looks like a CALL of an RPC version other than 2
	 * is owed MSG_DENIED/RPC_MISMATCH (RFC 5531); anything else is
	 * garbage and must go unanswered.
	 */
	while (wait_readable(fd, SILENCE_MS)) {
		ssize_t n = recv(fd, b, 65536, 0);
		uint32_t w[4];

		if (n == -1 && errno == ECONNREFUSED)
			fail("%s: port unreachable (is nlmd gone?)", t.name);
		if (n < 16)
			fail("%s answered random bytes (%zd bytes)", t.name, n);
		memcpy(w, b, sizeof(w));
		if (ntohl(w[1]) != 1 || ntohl(w[2]) != 1 || ntohl(w[3]) != 0)
			fail("%s answered random bytes with something other "
			    "than RPC_MISMATCH", t.name);
		mismatch++;
	}
	printf("%lu random datagrams to %s: no reply but %lu RPC_MISMATCH\n",
	    count, t.name, mismatch);
	close(fd);
	free(b);
	return 0;
}

static int
cmd_tcp_random(char **argv)
{
	struct target t;
	unsigned long i, count = num(argv[2]);
	struct buf r = { 0 };

	target_parse(&t, argv[0], argv[1]);
	for (i = 0; i < count; i++) {
		struct buf b = { 0 };
		int fd = sock_open(&t, SOCK_STREAM);

		put_random(&b, 1 + rng() % 4096);
		(void)send_maybe(fd, b.b, b.len);
		if (tcp_read_record(fd, i + 1 == count ? SILENCE_MS : 20,
		    &r) > 0)
			fail("%s answered a random stream", t.name);
		close(fd);
		free(b.b);
	}
	printf("%lu random streams to %s: no reply\n", count, t.name);
	free(r.b);
	return 0;
}

static int
cmd_tcp_garbage_record(char **argv)
{
	struct target t;
	struct buf m = { 0 }, rec = { 0 }, r = { 0 };
	uint32_t prog = (uint32_t)num(argv[2]), vers = (uint32_t)num(argv[3]);
	struct callopts o;
	struct expect x = { X_SUCCESS, 0, 0 };
	long n;
	int fd;

	target_parse(&t, argv[0], argv[1]);
	fd = sock_open(&t, SOCK_STREAM);
	/* 64 random bytes whose direction word is neither CALL nor REPLY. */
	put_random(&m, 64);
	m.b[4] = m.b[5] = m.b[6] = 0;
	m.b[7] = 7;
	build_record(&rec, &m);
	send_all(fd, rec.b, rec.len);
	n = tcp_read_record(fd, SILENCE_MS, &r);
	if (n > 0)
		fail("%s answered a garbage record", t.name);
	if (n == 0) {
		/* Still open: it must keep serving this connection. */
		callopts_init(&o);
		tcp_call_fd(fd, t.name, prog, vers, 0, &o, &x);
	} else
		printf("connection closed after the garbage record\n");
	close(fd);
	tcp_null(&t, prog, vers);
	free(m.b);
	free(rec.b);
	free(r.b);
	return 0;
}

/* Send `data' on a fresh connection and expect nlmd to close it. */
static void
expect_closed(const struct target *t, const char *what, const struct buf *data,
    size_t extra_random)
{
	struct buf junk = { 0 }, r = { 0 };
	int fd = sock_open(t, SOCK_STREAM);
	long n;

	(void)send_maybe(fd, data->b, data->len);
	if (extra_random > 0) {
		put_random(&junk, extra_random);
		(void)send_maybe(fd, junk.b, junk.len);
	}
	n = tcp_read_record(fd, REPLY_WAIT_MS, &r);
	if (n >= 0)
		fail("%s: %s: connection %s", t->name, what,
		    n == 0 ? "still open" : "answered");
	printf("%s: connection closed\n", what);
	close(fd);
	free(junk.b);
	free(r.b);
}

static int
cmd_tcp_oversize(char **argv)
{
	struct target t;
	uint32_t prog = (uint32_t)num(argv[2]), vers = (uint32_t)num(argv[3]);
	size_t maxrec = num(argv[4]);
	struct buf b = { 0 }, m = { 0 }, rec = { 0 }, r = { 0 };
	struct callopts o;
	struct expect x = { X_SUCCESS, 0, 0 };
	int fd;

	target_parse(&t, argv[0], argv[1]);
	put32(&b, 0xffffffffu);
	expect_closed(&t, "mark announcing 2^31-1 bytes", &b, 0);
	b.len = 0;
	put32(&b, 0x80000000u | (uint32_t)(maxrec + 1));
	expect_closed(&t, "one fragment of max-record-size + 1", &b, 1000);
	b.len = 0;
	put32(&b, (uint32_t)(maxrec / 2 + 1));
	put_random(&b, maxrec / 2 + 1);
	put32(&b, 0x80000000u | (uint32_t)(maxrec / 2 + 1));
	expect_closed(&t, "two fragments adding up past max-record-size", &b,
	    100);
	b.len = 0;
	/* Many empty non-last fragments, then past the limit. */
	for (size_t i = 0; i < 1000; i++)
		put32(&b, 0);
	put32(&b, 0x80000000u | (uint32_t)(maxrec + 1));
	expect_closed(&t, "empty fragments then an oversize one", &b, 10);

	/* The boundary: a NULL call padded to exactly max-record-size. */
	callopts_init(&o);
	build_call(&m, 0x4e4c4d44, prog, vers, 0, &o);
	if (m.len > maxrec)
		usage();
	buf_reserve(&m, maxrec - m.len);
	memset(m.b + m.len, 0, maxrec - m.len);
	m.len = maxrec;
	/* ... split in two fragments, to exercise reassembly as well. */
	put32(&rec, (uint32_t)(maxrec / 2));
	put_bytes(&rec, m.b, maxrec / 2);
	put32(&rec, 0x80000000u | (uint32_t)(maxrec - maxrec / 2));
	put_bytes(&rec, m.b + maxrec / 2, maxrec - maxrec / 2);
	fd = sock_open(&t, SOCK_STREAM);
	send_all(fd, rec.b, rec.len);
	if (tcp_read_record(fd, REPLY_WAIT_MS, &r) <= 0)
		fail("%s: record of exactly %zu bytes not answered", t.name,
		    maxrec);
	check_reply(r.b, r.len, 0x4e4c4d44, &x);
	/* And the connection is still good for a normal call. */
	tcp_call_fd(fd, t.name, prog, vers, 0, &o, &x);
	close(fd);
	printf("record of exactly %zu bytes answered\n", maxrec);
	free(b.b);
	free(m.b);
	free(rec.b);
	free(r.b);
	return 0;
}

static void
expect_prompt(const struct target *t, uint32_t prog, uint32_t vers,
    const char *why)
{
	uint64_t t0 = now_ms(), dt;

	tcp_null(t, prog, vers);
	udp_null(t, prog, vers);
	dt = now_ms() - t0;
	if (dt > PROMPT_MS)
		fail("NULL calls took %llu ms %s", (unsigned long long)dt,
		    why);
	printf("NULL over tcp+udp answered in %llu ms %s\n",
	    (unsigned long long)dt, why);
}

static int
cmd_tcp_half(char **argv)
{
	struct target t;
	uint32_t prog = (uint32_t)num(argv[2]), vers = (uint32_t)num(argv[3]);
	struct buf m = { 0 }, rec = { 0 }, r = { 0 };
	struct callopts o;
	struct expect x = { X_SUCCESS, 0, 0 };
	size_t half;
	int a, b;

	target_parse(&t, argv[0], argv[1]);
	callopts_init(&o);
	o.ntrail = 200;
	build_call(&m, 0x48414c46, prog, vers, 0, &o);
	build_record(&rec, &m);
	half = rec.len / 2;
	a = sock_open(&t, SOCK_STREAM);
	send_all(a, rec.b, half);
	b = sock_open(&t, SOCK_STREAM);
	send_all(b, rec.b, 2);
	usleep(100 * 1000);
	expect_prompt(&t, prog, vers, "with a half-sent record pending");
	usleep(200 * 1000);
	expect_prompt(&t, prog, vers, "still");
	if (tcp_read_record(a, 50, &r) != 0)
		fail("half-sent record got an answer or closed");
	send_all(a, rec.b + half, rec.len - half);
	if (tcp_read_record(a, REPLY_WAIT_MS, &r) <= 0)
		fail("completed record not answered");
	check_reply(r.b, r.len, 0x48414c46, &x);
	printf("half-sent record answered once completed\n");
	close(a);
	close(b);
	free(m.b);
	free(rec.b);
	free(r.b);
	return 0;
}

/*
 * tcp-pipeline: COUNT NULL calls (xids base .. base + COUNT - 1) on one
 * connection, sent as the socket takes them while replies are read.
 */
static int
cmd_tcp_pipeline(char **argv)
{
	struct target t;
	struct callopts o;
	struct expect x = { X_SUCCESS, 0, 0 };
	struct buf out = { 0 }, in = { 0 }, m = { 0 };
	uint32_t prog = (uint32_t)num(argv[2]), vers = (uint32_t)num(argv[3]);
	uint32_t count = (uint32_t)num(argv[4]), base = rng() & 0x7fffffffu;
	uint64_t start = now_ms(), end = start + 1000 * num(argv[5]);
	uint8_t *seen;
	size_t sent = 0;
	uint32_t i, got = 0;
	int fd;

	quiet = 1;
	target_parse(&t, argv[0], argv[1]);
	if (count == 0 || (seen = calloc(count, 1)) == NULL)
		fail("bad count");
	callopts_init(&o);
	for (i = 0; i < count; i++) {
		m.len = 0;
		build_call(&m, base + i, prog, vers, 0, &o);
		build_record(&out, &m);
	}
	fd = sock_open(&t, SOCK_STREAM);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1)
		fail("fcntl: %s", strerror(errno));
	while (got < count) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		ssize_t n;

		if (now >= end)
			fail("%u of %u calls answered in %llu s (%zu of %zu "
			    "bytes sent)", got, count,
			    (unsigned long long)num(argv[5]), sent, out.len);
		if (sent < out.len)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, (int)(end - now)) == -1) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		if ((pfd.revents & POLLOUT) && sent < out.len) {
			n = send(fd, out.b + sent, out.len - sent,
			    MSG_NOSIGNAL);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				fail("send after %zu bytes: %s", sent,
				    strerror(errno));
			if (n > 0)
				sent += (size_t)n;
		}
		if (!(pfd.revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		buf_reserve(&in, 65536);
		n = recv(fd, in.b + in.len, 65536, 0);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			fail("connection %s after %u of %u answers",
			    n == 0 ? "closed" : strerror(errno), got, count);
		if (n < 0)
			continue;
		in.len += (size_t)n;
		/* Whole one-fragment records: what nlmd sends. */
		for (;;) {
			size_t off = 0, flen;
			uint32_t mark, xid;

			if (in.len < 4)
				break;
			mark = get32(in.b, in.len, &off);
			flen = mark & 0x7fffffffu;
			if (!(mark & 0x80000000u))
				fail("a reply in several fragments");
			if (in.len < 4 + flen)
				break;
			off = 4;
			xid = get32(in.b, 4 + flen, &off);
			if (xid - base >= count)
				fail("reply to xid %u, not one of ours", xid);
			if (seen[xid - base]++)
				fail("xid %u answered twice", xid);
			check_reply(in.b + 4, flen, xid, &x);
			got++;
			memmove(in.b, in.b + 4 + flen, in.len - 4 - flen);
			in.len -= 4 + flen;
		}
	}
	printf("tcp-pipeline: %u calls answered once each in %llu ms\n",
	    count, (unsigned long long)(now_ms() - start));
	close(fd);
	free(seen);
	free(out.b);
	free(in.b);
	free(m.b);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *seed = getenv("GARBAGE_SEED");

	if (seed != NULL)
		rng_state = (uint32_t)num(seed) | 1;
	else
		rng_state ^= (uint32_t)getpid() << 7 | 1;
	printf("garbage: seed %u\n", rng_state);
	if (argc < 2)
		usage();
	argc--;
	argv++;
	if (strcmp(argv[0], "call") == 0)
		return cmd_call(argc, argv);
	if (strcmp(argv[0], "udp-random") == 0 && argc == 4)
		return cmd_udp_random(argv + 1);
	if (strcmp(argv[0], "tcp-random") == 0 && argc == 4)
		return cmd_tcp_random(argv + 1);
	if (strcmp(argv[0], "tcp-garbage-record") == 0 && argc == 5)
		return cmd_tcp_garbage_record(argv + 1);
	if (strcmp(argv[0], "tcp-oversize") == 0 && argc == 6)
		return cmd_tcp_oversize(argv + 1);
	if (strcmp(argv[0], "tcp-pipeline") == 0 && argc == 7)
		return cmd_tcp_pipeline(argv + 1);
	if (strcmp(argv[0], "tcp-half") == 0 && argc == 5)
		return cmd_tcp_half(argv + 1);
	usage();
}
