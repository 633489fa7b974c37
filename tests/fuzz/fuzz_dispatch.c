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
#include "tests/fuzz/fz_service.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FZ_MAXMSG	0x3fff

static const struct fz_peer fz_peers[8] = {
	{ AF_INET, "127.0.0.1", 700, 0 },	/* root on this host */
	{ AF_INET, "127.0.0.1", 40000, 0 },
	{ AF_INET, "10.0.0.1", 900, 0 },
	{ AF_INET, "10.0.0.2", 41000, 0 },
	{ AF_INET6, "::1", 800, 0 },
	{ AF_INET6, "::ffff:127.0.0.1", 600, 0 },
	{ AF_INET6, "fd00::1", 1000, 0 },
	{ AF_INET, "192.168.1.1", 1023, 0 },
};

/* The input's configuration byte. */
static uint8_t fz_conf;

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

/* The service as the input's configuration byte says. */
static void
fz_start(void)
{
	struct nlm_config nc;

	fz_svc_config(&nc);
	nc.nc_cbmode = (enum nlm_cbmode)(fz_conf & 3);
	nc.nc_cb_give_up_sec = (fz_conf & 4) ? 30 : 0;
	nc.nc_reclaim_check = (fz_conf >> 3) % 3;
	fz_svc_start(&nc);
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
	onc_out_input(fzs.clnt, &fz_calls[i].dst, buf, len);
	free(buf);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_svc_init();
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
	fz_conf = data[0];
	fzs.clock = 1000000;
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
			fz_svc_stop();
			fz_start();
		}
	}
	/* Let grace, callbacks and notifications run out. */
	fz_turn(100000);
	fz_turn(100000);
	fz_svc_stop();
	return 0;
}

size_t
onc_send_many(int fd, const struct onc_dgram *d, size_t n, size_t *nfull)
{
	return onc_send_each(fd, d, n, nfull, onc_send_from);
}
