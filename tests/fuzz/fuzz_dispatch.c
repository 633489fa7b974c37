/*
 * fuzz_dispatch.c - libFuzzer: whole NLM and NSM call messages through
 * the real server path, without the network.
 *
 * The transport's private header (rpc/srv_impl.h: onc_dispatch()) is the seam:
 * each message goes through the server's header checks and in-place decoders,
 * the rpcgen dispatchers of NLM v1/v3/v4 and NSM, nlm/ and nsm/ into lockcore,
 * with db/ replaced by tests/fakes/store_fake.c. The two sending functions of
 * rpc/rpcsend.h are defined here and send nothing: every datagram the server
 * would send (replies, _RES, GRANTED callbacks, rpcbind look-ups, SM_NOTIFY)
 * must be a decodable RPC message and leave only after what it reports is
 * committed.  The outgoing client's two UDP sockets are made (onc_out_new) but
 * never written to; as root they live in a network namespace of this process.
 *
 * Input: one configuration byte (callback mode, reclaim check), then
 * messages, each [length: 2 bytes, big-endian, 14 bits][flags: 1 byte]
 * [the message], the last one possibly short.  Flags: bits 0-2 the source
 * address (local privileged ports, unprivileged, remote, IPv6, mapped);
 * bit 3 ends the turn after it (commit, timers, replies); bits 4-5 both
 * set: restart the service after it (new epoch, locks come back
 * reclaimable, grace); bits 6-7 how far the clock moves when that turn
 * ends (0, 100 ms, 5 s, 100 s).  The last message ends a turn too, and
 * then the clock moves twice 100 s (grace, callbacks and notifications
 * run out) before the service stops.  Bits 4-5 = 01: the message is not
 * a call to the server but a reply to one of the server's own outbound
 * calls (GRANTED and GRANTED_MSG callbacks, _RES, rpcbind look-ups,
 * SM_NOTIFY): bits 0-2 pick one of the last eight sent (0 the newest), its
 * xid is written over the message's first four bytes and it arrives from
 * the address that call went to, as the peer's answer would (once that
 * call is answered, given up or cancelled, rpcout ignores it like any
 * stray datagram).  After every turn lk_table_check() must hold.  Each request
 * buffer is
 * freed right after its dispatch: anything the service kept pointing into
 * it is a use after free.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockcore.h"
#include "nlm.h"
#include "nsm.h"
#include "rpcout.h"
#include "srv_impl.h"
#include "store.h"
#include "tests/fakes/fakes.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FZ_CHECK(c)	do {						\
	if (!(c)) {							\
		fprintf(stderr, "fuzz_dispatch: %s:%d: %s\n", __FILE__,	\
		    __LINE__, #c);					\
		abort();						\
	}								\
} while (0)

#define FZ_MAXMSG	0x3fff

struct fz_peer {
	int		 fam;
	const char	*addr;
	uint16_t	 port;
};

static const struct fz_peer fz_peers[8] = {
	{ AF_INET, "127.0.0.1", 700 },		/* root on this host */
	{ AF_INET, "127.0.0.1", 40000 },
	{ AF_INET, "10.0.0.1", 900 },
	{ AF_INET, "10.0.0.2", 41000 },
	{ AF_INET6, "::1", 800 },
	{ AF_INET6, "::ffff:127.0.0.1", 600 },
	{ AF_INET6, "fd00::1", 1000 },
	{ AF_INET, "192.168.1.1", 1023 },
};

static struct {
	struct ev_loop	*loop;
	struct onc_srv	*srv;
	struct onc_out	*clnt;
	uint64_t	 clock;
	uint8_t		 conf;
	char		 dir[64];
	bool		 up;
} fz;

/* ---- the sending functions of rpc/rpcsend.h: nothing leaves ---- */

enum onc_status onc_send_from(int, const void *, size_t,
	    const struct sockaddr_storage *, socklen_t,
	    const struct sockaddr_storage *);
ssize_t	onc_stream_send(int, const void *, size_t);
size_t	onc_send_many(int, const struct onc_dgram *, size_t, size_t *);

/* The last outbound calls sent (xid and destination), newest last. */
#define FZ_NCALLS	8
static struct {
	uint32_t		xid;
	struct sockaddr_storage	dst;
} fz_calls[FZ_NCALLS];
static size_t fz_ncalls;

static void
fz_note_call(const void *buf, const struct sockaddr_storage *dst)
{
	uint32_t xid;
	size_t i;

	memcpy(&xid, buf, 4);
	for (i = 0; i < fz_ncalls; i++)
		if (fz_calls[i].xid == xid)
			break;
	if (i == fz_ncalls && fz_ncalls < FZ_NCALLS)
		fz_ncalls++;
	else if (i == fz_ncalls)
		i = 0;	/* full: the oldest goes */
	memmove(&fz_calls[i], &fz_calls[i + 1],
	    (fz_ncalls - 1 - i) * sizeof(fz_calls[0]));
	fz_calls[fz_ncalls - 1].xid = xid;
	fz_calls[fz_ncalls - 1].dst = *dst;
}

/* Outbound calls sent so far in this input (FNV-1a of their bytes). */
#define FZ_MAXSENT	1024
static uint64_t fz_sent[FZ_MAXSENT];
static size_t fz_nsent;

/* Was this very call sent before (a retransmission)?  Remember it. */
static bool
fz_resent(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	for (i = 0; i < fz_nsent; i++)
		if (fz_sent[i] == h)
			return true;
	if (fz_nsent < FZ_MAXSENT)
		fz_sent[fz_nsent++] = h;
	return false;
}

/*
 * A call or a reply, decodable; sent only when what it reports is
 * committed: nothing staged or uncommitted at its first transmission (a
 * timer's retransmission of an earlier call may go out mid-turn).
 */
static void
fz_check_sent(const void *buf, size_t len)
{
	struct rpc_msg m;
	char credbuf[MAX_AUTH_BYTES], verfbuf[MAX_AUTH_BYTES];
	XDR x;
	bool_t ok;

	FZ_CHECK(len >= 12 && len <= UDP_MAXMSG);
	if (ntohl(((const uint32_t *)buf)[1]) != CALL || !fz_resent(buf, len))
		FZ_CHECK(fake_store_staged() == 0 &&
		    fake_store_uncommitted() == 0);
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)(uintptr_t)buf, (u_int)len, XDR_DECODE);
	m.rm_call.cb_cred.oa_base = credbuf;
	m.rm_call.cb_verf.oa_base = verfbuf;
	if (ntohl(((const uint32_t *)buf)[1]) == CALL)
		ok = xdr_callmsg(&x, &m);
	else {
		m.acpted_rply.ar_results.where = NULL;
		m.acpted_rply.ar_results.proc = XDRPROC(xdr_void);
		ok = xdr_replymsg(&x, &m);
	}
	xdr_destroy(&x);
	FZ_CHECK(ok);
}

enum onc_status
onc_send_from(int fd, const void *buf, size_t len,
    const struct sockaddr_storage *dst, socklen_t dstlen,
    const struct sockaddr_storage *src)
{
	(void)fd;
	(void)dstlen;
	(void)src;
	fz_check_sent(buf, len);
	if (ntohl(((const uint32_t *)buf)[1]) == CALL)
		fz_note_call(buf, dst);
	return ONC_OK;
}

ssize_t
onc_stream_send(int fd, const void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	return (ssize_t)len;
}

/* ---- the service ---- */

static uint64_t
fz_now(void)
{
	return fz.clock;
}

static void
fz_hook(struct ev_loop *l, void *arg)
{
	(void)l;
	nlm_turn_end(arg);
}

static void
fz_check_table(void)
{
	FZ_CHECK(lk_table_check(nlm_get_table()) == LK_OK);
}

static void
fz_start(void)
{
	struct onc_srv_limits lim;
	struct nlm_config nc;
	uint64_t epoch;
	char err[256];

	fz.loop = ev_loop_new();
	memset(&lim, 0, sizeof(lim));
	lim.max_record = 65536;
	lim.max_conns = 16;
	lim.idle_sec = 600;
	fz.srv = onc_srv_new(fz.loop, &lim);
	fz.clnt = onc_out_new(fz.loop, 0, err, sizeof(err));
	FZ_CHECK(fz.loop != NULL && fz.srv != NULL && fz.clnt != NULL);
	FZ_CHECK(nsm_init(fz.dir, fake_store(), &epoch, err,
	    sizeof(err)) == 0);
	/* Small limits, so that inputs reach them. */
	memset(&nc, 0, sizeof(nc));
	nc.nc_max_name = 255;
	nc.nc_max_fh = 1024;
	nc.nc_max_oh = 1024;
	nc.nc_max_hosts = 16;
	nc.nc_cbmode = (enum nlm_cbmode)(fz.conf & 3);
	nc.nc_cb_retry_min_ms = 1000;
	nc.nc_cb_retry_max_ms = 8000;
	nc.nc_cb_give_up_sec = (fz.conf & 4) ? 30 : 0;
	nc.nc_cb_max_per_host = 4;
	nc.nc_max_locks = 256;
	nc.nc_max_locks_per_host = 64;
	nc.nc_max_waiters_per_host = 16;
	nc.nc_epoch = epoch;
	nc.nc_grace_sec = 90;
	nc.nc_reclaim_check = (fz.conf >> 3) % 3;
	nc.nc_nsm_state = nsm_state();
	nc.nc_notify_give_up_sec = 600;
	nc.nc_host_idle_sec = 600;
	if (nlm_init(fz.loop, fz.clnt, fake_store(), &nc, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "fuzz_dispatch: nlm_init: %s\n", err);
		abort();
	}
	FZ_CHECK(nlm_register(fz.srv) == ONC_OK &&
	    nsm_register(fz.srv) == ONC_OK);
	ev_set_beforesleep(fz.loop, fz_hook, fz.srv);
	/* The load and grace start of nlm_init() are a turn of their own. */
	nlm_turn_end(fz.srv);
	fz_check_table();
	fz.up = true;
}

static void
fz_stop(void)
{
	if (!fz.up)
		return;
	nlm_drain();
	nlm_shutdown();
	onc_srv_free(fz.srv);
	onc_out_free(fz.clnt);
	ev_loop_free(fz.loop);
	fz.up = false;
}

/* One turn of the loop: fd events, timers, then the turn's end. */
static void
fz_turn(uint64_t advance_ms)
{
	fz.clock += advance_ms;
	(void)ev_run_once(fz.loop, 0);
	fz_check_table();
}

static void
fz_peer_addr(const struct fz_peer *p, struct onc_call *rc)
{
	memset(&rc->rc_peer, 0, sizeof(rc->rc_peer));
	memset(&rc->rc_local, 0, sizeof(rc->rc_local));
	if (p->fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&rc->rc_peer;
		struct sockaddr_in *l = (struct sockaddr_in *)&rc->rc_local;

		s->sin_family = l->sin_family = AF_INET;
		s->sin_port = htons(p->port);
		FZ_CHECK(inet_pton(AF_INET, p->addr, &s->sin_addr) == 1);
		l->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rc->rc_peerlen = rc->rc_locallen = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&rc->rc_peer;
		struct sockaddr_in6 *l = (struct sockaddr_in6 *)&rc->rc_local;

		s->sin6_family = l->sin6_family = AF_INET6;
		s->sin6_port = htons(p->port);
		FZ_CHECK(inet_pton(AF_INET6, p->addr, &s->sin6_addr) == 1);
		l->sin6_addr = in6addr_loopback;
		rc->rc_peerlen = rc->rc_locallen = sizeof(*s);
	}
}

/* A datagram from peer p, in a buffer of its own, freed right after. */
static void
fz_dispatch(const uint8_t *msg, size_t len, const struct fz_peer *p)
{
	struct onc_ctx cx;
	uint8_t *buf;

	FZ_CHECK((buf = malloc(len ? len : 1)) != NULL);
	memcpy(buf, msg, len);
	memset(&cx, 0, sizeof(cx));
	cx.cx_call.rc_xport = ONC_UDP;
	fz_peer_addr(p, &cx.cx_call);
	cx.cx_call.rc_srv = fz.srv;
	cx.cx_fd = -1;
	onc_dispatch(&cx, buf, len);
	free(buf);
}

/*
 * An answer to outbound call `k' (0: the newest sent) from where that
 * call went, in a buffer of its own, freed right after.  Nothing sent
 * yet: nothing to answer.
 */
static void
fz_answer(const uint8_t *msg, size_t len, unsigned k)
{
	uint8_t *buf;
	size_t i;

	if (fz_ncalls == 0)
		return;
	i = fz_ncalls - 1 - k % fz_ncalls;
	FZ_CHECK((buf = malloc(len >= 4 ? len : 4)) != NULL);
	memcpy(buf, msg, len);
	memcpy(buf, &fz_calls[i].xid, 4);
	onc_out_input(fz.clnt, &fz_calls[i].dst, buf, len);
	free(buf);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* As root, a network namespace of our own for the client sockets. */
	if (getuid() == 0)
		(void)unshare(CLONE_NEWNET);
	snprintf(fz.dir, sizeof(fz.dir), "/tmp/nlmd-fuzz.XXXXXX");
	FZ_CHECK(mkdtemp(fz.dir) != NULL);
	/* nsm_init() only looks for a legacy state file there. */
	FZ_CHECK(rmdir(fz.dir) == 0);
	ev_set_clock(fz_now);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 1, len;
	uint8_t flags;

	if (size < 1)
		return 0;
	fake_store_reset();
	fz_nsent = 0;
	fz_ncalls = 0;
	fz.conf = data[0];
	fz.clock = 1000000;
	fz_start();
	while (off + 3 <= size) {
		len = ((size_t)data[off] << 8 | data[off + 1]) & FZ_MAXMSG;
		flags = data[off + 2];
		off += 3;
		if (len > size - off)
			len = size - off;
		if ((flags & 0x30) == 0x10)
			fz_answer(data + off, len, flags & 7);
		else
			fz_dispatch(data + off, len, &fz_peers[flags & 7]);
		off += len;
		if ((flags & 8) || off + 3 > size) {
			static const uint64_t adv[4] = { 0, 100, 5000,
			    100000 };

			fz_turn(adv[flags >> 6]);
		}
		if ((flags & 0x30) == 0x30) {
			fz_stop();
			fz_start();
		}
	}
	/* Let grace, callbacks and notifications run out. */
	fz_turn(100000);
	fz_turn(100000);
	fz_stop();
	return 0;
}

size_t
onc_send_many(int fd, const struct onc_dgram *d, size_t n, size_t *nfull)
{
	return onc_send_each(fd, d, n, nfull, onc_send_from);
}
