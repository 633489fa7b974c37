/*
 * test_notify.c - the notifier over the fake store: at every start each
 * stored host is owed an SM_NOTIFY; the debt is committed before the
 * notification leaves; an answer settles it; without one it is sent
 * again 1, 2, 4 ... s apart; it survives a restart with its first time,
 * and is given up after notify-give-up.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ev.h"
#include "lockcore.h"
#include "nlm.h"
#include "nlm_impl.h"
#include "nsm.h"
#include "rpc/nlm_prot.h"
#include "rpc/sm_inter.h"
#include "store.h"
#include "svctest.h"
#include "tests/fakes/fakes.h"

#define HID	3

/* Stored hosts HID.. at 127.0.0.1 that talked to us at 127.0.0.1. */
static void
n_preload_n(uint64_t since, unsigned n)
{
	struct store_host sh;
	char name[32];
	unsigned i;

	fake_store_reset();
	fake_send_reset();
	for (i = 0; i < n; i++) {
		memset(&sh, 0, sizeof(sh));
		sh.sh_id = HID + i;
		snprintf(name, sizeof(name), "client%u", i);
		sh.sh_name = name;
		sh.sh_addr.sa_len = 4;
		inet_pton(AF_INET, "127.0.0.1", sh.sh_addr.sa_bytes);
		sh.sh_nlocal = 1;
		sh.sh_local[0].sa_len = 4;
		inet_pton(AF_INET, "127.0.0.1", sh.sh_local[0].sa_bytes);
		sh.sh_flags = STORE_HOST_MONITORED;
		sh.sh_state = 5;
		sh.sh_epoch = 1;
		sh.sh_notify_since = since;
		CU_ASSERT(store_put_host(fake_store(), &sh) == STORE_OK);
	}
	CU_ASSERT(store_put_next_host(fake_store(), HID + n) == STORE_OK);
	CU_ASSERT(store_commit(fake_store()) == STORE_OK);
}

static void
n_preload(uint64_t since)
{
	n_preload_n(since, 1);
}

/*
 * The wall clock's seconds as nlmd reads them (CLOCK_REALTIME).  Not
 * time(): Linux's reads a coarse clock that, in the milliseconds after
 * a second begins, can still give the one before -- a second behind an
 * n_since() stored a moment earlier (test_notify_since_future failed
 * once in about 20 runs; 0.8 % of pairs of reads here).
 */
static uint64_t
n_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

/* lo := 127.0.0.1, port 0: where the harness's clients call from. */
static void
n_lo4(struct sockaddr_in *lo)
{
	memset(lo, 0, sizeof(*lo));
	lo->sin_family = AF_INET;
	CU_ASSERT_EQUAL(inet_pton(AF_INET, "127.0.0.1", &lo->sin_addr), 1);
}

static uint64_t
n_since(void)
{
	struct store_host sh;

	if (!fake_store_host(HID, &sh))
		return UINT64_MAX;
	return sh.sh_notify_since;
}

/* The next SM_NOTIFY, checked; true when one came. */
static bool
n_notify(bool answer)
{
	struct stat_chge sc;

	if (ts_sm_notify(&sc, answer) != 0)
		return false;
	CU_ASSERT_STRING_EQUAL(sc.mon_name, "127.0.0.1");
	CU_ASSERT_EQUAL(sc.state, (int32_t)(2 * fake_store_epoch() - 1));
	xdr_free(XDRPROC(xdr_stat_chge), (char *)&sc);
	return true;
}

/* Every datagram to the status monitor left with nothing uncommitted. */
static void
n_check_sends(unsigned want)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < fake_sends(); i++) {
		const struct fake_send *f = fake_send_get(i);

		if (f->fs_stream || f->fs_dport != ts_sm_port())
			continue;
		n++;
		CU_ASSERT_EQUAL(f->fs_uncommitted, 0);
		CU_ASSERT_EQUAL(f->fs_staged, 0);
	}
	CU_ASSERT_EQUAL(n, want);
}

/*
 * Two attempts with the client's statd not listening: sent, neither given
 * up nor settled.
 */
static void
n_unanswered_kept(const struct nlm_counters *c)
{
	ts_advance(1000);
	ts_pump();
	ts_advance(2000);
	ts_pump();
	CU_ASSERT(c->notify_sent >= 2);
	CU_ASSERT_EQUAL(c->notify_given_up, 0);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
}

/*
 * The client's statd listens: the next attempt is answered, the debt
 * settled; then the server stops.
 */
static void
n_answered_end(const struct nlm_counters *c)
{
	ts_sm_registered(true);
	ts_advance(4000);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(n_since(), 0);
	ts_stop();
}

static void
test_notify_answered(void)
{
	const struct nlm_counters *c;
	uint64_t t0 = n_wall();

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(true);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	/* The debt is committed (ts_start ends the first turn). */
	CU_ASSERT(n_since() >= t0 && n_since() <= t0 + 5);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_sent, 1);
	ts_advance(10000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	n_check_sends(1);
	ts_stop();
}

/*
 * Two stored hosts at one address: client0 sent LOCKs (monitored),
 * client1 only NM_LOCK or SHARE -- it runs no status monitor -- and an
 * earlier start stored a debt to it.  Only client0 is notified; client1's
 * debt is settled.  Before, client1 was notified too and, never
 * answering, kept owed (and in the host table) until notify-give-up.
 */
static void
test_notify_monitored_only(void)
{
	const struct nlm_counters *c;
	struct store_host sh;

	if (ts_skip())
		return;
	n_preload_n(0, 2);
	CU_ASSERT_FATAL(fake_store_host(HID + 1, &sh));
	sh.sh_flags = 0;
	sh.sh_notify_since = n_wall() - 60;
	CU_ASSERT(store_put_host(fake_store(), &sh) == STORE_OK);
	CU_ASSERT(store_commit(fake_store()) == STORE_OK);
	ts_sm_registered(true);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(c->notify_started, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	CU_ASSERT(n_since() != 0);
	CU_ASSERT(fake_store_host(HID + 1, &sh) && sh.sh_notify_since == 0);
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT(!n_notify(false));
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(n_since(), 0);
	ts_advance(10000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	n_check_sends(1);
	/* Owing nothing, both leave once idle. */
	ts_advance(661 * 1000);
	ts_pump();
	CU_ASSERT_EQUAL(c->hosts, 0);
	ts_stop();
}

/*
 * A host that reached us through two of our addresses (it mounted from
 * both, and monitors each under its own name): one SM_NOTIFY per address,
 * each from that address and naming it, an unanswered one passing the
 * turn to the other; the debt is settled when both are answered, and a
 * restart in between owes both again.
 */
/* Stored host HID that talked to us at the n IPv4 addresses addrs[]. */
static void
n_preload_locals(const char *const *addrs, unsigned n)
{
	struct store_host sh;
	unsigned i;

	n_preload(0);
	CU_ASSERT_FATAL(fake_store_host(HID, &sh));
	sh.sh_nlocal = n;
	for (i = 0; i < n; i++) {
		sh.sh_local[i] = sh.sh_local[0];
		inet_pton(AF_INET, addrs[i], sh.sh_local[i].sa_bytes);
	}
	CU_ASSERT(store_put_host(fake_store(), &sh) == STORE_OK);
	CU_ASSERT(store_commit(fake_store()) == STORE_OK);
}

/* Start over the preloaded store, the status program known; counters. */
static const struct nlm_counters *
n_start(void)
{
	ts_sm_registered(true);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	ts_pump();
	return nlm_get_counters();
}

/* The next SM_NOTIFY must name `name' and come from it. */
static bool
n_notify_as(const char *name, bool answer)
{
	struct stat_chge sc;

	if (ts_sm_notify(&sc, answer) != 0)
		return false;
	CU_ASSERT_STRING_EQUAL(sc.mon_name, name);
	CU_ASSERT_STRING_EQUAL(ts_sm_notify_from(), name);
	CU_ASSERT_EQUAL(sc.state, (int32_t)(2 * fake_store_epoch() - 1));
	xdr_free(XDRPROC(xdr_stat_chge), (char *)&sc);
	return true;
}

static void
test_notify_two_addresses(void)
{
	const struct nlm_counters *c;
	struct store_host sh;

	static const char *const two[] = { "127.0.0.1", "127.0.0.2" };

	if (ts_skip())
		return;
	n_preload_locals(two, 2);
	c = n_start();
	CU_ASSERT(fake_store_host(HID, &sh) && sh.sh_nlocal == 2);
	/*
	 * The first, unanswered: the next attempt is the second's turn; its
	 * answer brings the first's again at once.
	 */
	CU_ASSERT(n_notify_as("127.0.0.1", false));
	CU_ASSERT(!n_notify_as("127.0.0.2", false));
	ts_advance(1000);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.2", true));
	ts_pump();
	ts_pump();
	CU_ASSERT(n_since() != 0);	/* 127.0.0.1 is still owed */
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	CU_ASSERT(n_notify_as("127.0.0.1", false));
	ts_stop();

	/* A restart: both owed again, in order. */
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.1", true));
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.2", true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_sent, 2);
	ts_advance(10000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	/* The record keeps both addresses. */
	CU_ASSERT(fake_store_host(HID, &sh) && sh.sh_nlocal == 2);
	ts_stop();
}

/*
 * The status monitor's port is looked up from the server address the
 * host is notified from, as the notification itself leaves from it: a
 * client that mounted 127.0.0.2 only is asked by 127.0.0.2 (a client
 * may accept its rpcbind's callers by address, and a multi-homed
 * server's default route may not reach it).  The look-up leaving from
 * whatever address the kernel chose (peer_lookup() without the send's
 * local address) survived every test (mutation testing).
 */
static void
test_notify_lookup_from(void)
{
	static const char *const other[] = { "127.0.0.2" };
	unsigned lookups;

	if (ts_skip())
		return;
	n_preload_locals(other, 1);
	lookups = ts_sm_lookups();
	(void)n_start();
	CU_ASSERT_EQUAL(ts_sm_lookups() - lookups, 1);
	CU_ASSERT_STRING_EQUAL(ts_rpcb_from(), "127.0.0.2");
	CU_ASSERT(n_notify_as("127.0.0.2", true));
	ts_stop();
}

/*
 * Two server addresses, the first told only at the third attempt (after
 * 1 s and 2 s without an answer): the second's notification starts over
 * from the first delay -- sent at once, and, unanswered, again a second
 * later, not after the 4 s the first had reached.  notify_done() going on
 * to the next address with the delay of the last survived every test
 * (mutation testing).
 */
static void
test_notify_next_address_delay(void)
{
	const struct nlm_counters *c;

	static const char *const two[] = { "127.0.0.1", "127.0.0.2" };

	if (ts_skip())
		return;
	n_preload_locals(two, 2);
	c = n_start();
	CU_ASSERT(n_notify_as("127.0.0.1", false));
	ts_advance(1000);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.2", false));
	ts_advance(2000);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.1", true));
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.2", false));
	ts_advance(999);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_advance(1);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify_as("127.0.0.2", true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	ts_stop();
}

/*
 * A host that used four of our addresses: while it is being notified it
 * reaches us through a fifth, and the oldest of the four gives way in its
 * record.  The notification under way goes on through the four it was
 * owed at the start, none skipped: before, it walked the record by index,
 * and after the shift went on with 127.0.0.3 -- 127.0.0.2 was never told.
 */
static void
test_notify_addresses_shift(void)
{
	const struct nlm_counters *c;
	struct store_host sh;
	static const char *const four[] = { "127.0.0.1", "127.0.0.2",
	    "127.0.0.3", "127.0.0.4" };
	struct sockaddr_in cli, five;
	char want[16];
	unsigned i;

	if (ts_skip())
		return;
	n_preload_locals(four, 4);
	c = n_start();
	CU_ASSERT(n_notify_as("127.0.0.1", true));
	/* Before its answer is read: a request through 127.0.0.5. */
	memset(&cli, 0, sizeof(cli));
	cli.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &cli.sin_addr);
	five = cli;
	inet_pton(AF_INET, "127.0.0.5", &five.sin_addr);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_get((struct sockaddr_storage *)&cli,
	    sizeof(cli), "client0", (struct sockaddr_storage *)&five,
	    sizeof(five), true));
	for (i = 2; i <= 4; i++) {
		ts_pump();
		ts_pump();
		snprintf(want, sizeof(want), "127.0.0.%u", i);
		CU_ASSERT(n_notify_as(want, true));
	}
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_sent, 4);
	/* The record keeps the four it used last. */
	CU_ASSERT(fake_store_host(HID, &sh) && sh.sh_nlocal == 4);
	ts_stop();
}

/* A request from client0 at 127.0.0.1 reaching us at `ours'. */
static void
n_reach(const char *ours)
{
	struct sockaddr_in cli, local;

	memset(&cli, 0, sizeof(cli));
	cli.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &cli.sin_addr);
	local = cli;
	inet_pton(AF_INET, ours, &local.sin_addr);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_get((struct sockaddr_storage *)&cli,
	    sizeof(cli), "client0", (struct sockaddr_storage *)&local,
	    sizeof(local), true));
	ts_pump();
}

/* The host's stored server addresses, in order, as "a b c d". */
static void
n_locals(char *buf, size_t len)
{
	struct store_host sh;
	char a[INET_ADDRSTRLEN];
	size_t off = 0;
	unsigned i;

	buf[0] = '\0';
	CU_ASSERT_FATAL(fake_store_host(HID, &sh));
	for (i = 0; i < sh.sh_nlocal && off < len; i++) {
		inet_ntop(AF_INET, sh.sh_local[i].sa_bytes, a, sizeof(a));
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    i > 0 ? " " : "", a);
	}
}

/*
 * A host that used four of our addresses, past the limit: the one it used
 * least recently gives way, not the first it ever used.  After a restart
 * none has been used yet: those it has not used since go first, oldest
 * first.  Before, the oldest always went, however busy: a client that
 * mounted from 127.0.0.1 first and kept using it lost it from its record
 * when it touched a fifth address, and was not told of our next restart
 * there.
 */
static void
test_local_lru(void)
{
	static const char *const four[] = { "127.0.0.1", "127.0.0.2",
	    "127.0.0.3", "127.0.0.4" };
	struct stat_chge sc;
	char got[80];

	if (ts_skip())
		return;
	n_preload_locals(four, 4);
	(void)n_start();
	while (ts_sm_notify(&sc, true) == 0) {
		xdr_free(XDRPROC(xdr_stat_chge), (char *)&sc);
		ts_pump();
		ts_pump();
	}
	n_reach("127.0.0.1");
	n_reach("127.0.0.5");
	n_locals(got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "127.0.0.1 127.0.0.3 127.0.0.4 127.0.0.5");
	/* Now used in turn .3, .1, .5, .4: .6 takes .3's place. */
	ts_advance(1000);
	n_reach("127.0.0.3");
	ts_advance(1000);
	n_reach("127.0.0.1");
	ts_advance(1000);
	n_reach("127.0.0.5");
	ts_advance(1000);
	n_reach("127.0.0.4");
	ts_advance(1000);
	n_reach("127.0.0.6");
	n_locals(got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "127.0.0.1 127.0.0.4 127.0.0.5 127.0.0.6");
	ts_stop();
}

/*
 * A host whose record names first a server address that is no longer
 * ours (10.9.9.9: renumbered, or a floating address moved away; the
 * kernel refuses to send from it), then 127.0.0.1.  The notification
 * through 127.0.0.1 goes out at the next attempt, a second after the
 * first failed, and is answered; the one through 10.9.9.9 stays owed.
 * Before, every attempt went to 10.9.9.9 until notify-give-up (a day):
 * 127.0.0.1 was never told, the client never reclaimed what it took
 * through it.
 */
static void
test_notify_address_gone(void)
{
	const struct nlm_counters *c;
	static const char *const gone[] = { "10.9.9.9", "127.0.0.1" };
	unsigned i;
	bool told = false;

	if (ts_skip())
		return;
	n_preload_locals(gone, 2);
	c = n_start();
	CU_ASSERT(!n_notify(false));	/* 10.9.9.9's could not go */
	for (i = 0; i < 8 && !told; i++) {
		ts_advance(1000);
		ts_pump();
		ts_pump();
		told = n_notify_as("127.0.0.1", true);
	}
	CU_ASSERT(told);
	CU_ASSERT(i <= 1);
	ts_pump();
	CU_ASSERT(n_since() != 0);	/* 10.9.9.9 is still owed */
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	CU_ASSERT_EQUAL(c->notify_acked, 0);
	ts_stop();
}

/*
 * The same with notify-name set: one notification, naming us by that
 * name, owed to the host, whichever of our addresses it leaves from.  The
 * record names 127.0.0.1, then 10.9.9.9 (no longer ours), the last one
 * the host used: the first attempt from it cannot go, the next goes from
 * 127.0.0.1 and, answered, settles the debt.  Before, every attempt went
 * from 10.9.9.9 until notify-give-up: the client was never told.
 */
static void
test_notify_name_address_gone(void)
{
	static const char *const gone[] = { "127.0.0.1", "10.9.9.9" };
	const struct nlm_counters *c;
	struct stat_chge sc;
	unsigned i;
	bool told = false;

	if (ts_skip())
		return;
	n_preload_locals(gone, 2);
	ts_notify_name("server.example");
	c = n_start();
	for (i = 0; i < 8 && !told; i++) {
		if (ts_sm_notify(&sc, true) == 0) {
			CU_ASSERT_STRING_EQUAL(sc.mon_name, "server.example");
			CU_ASSERT_STRING_EQUAL(ts_sm_notify_from(),
			    "127.0.0.1");
			xdr_free(XDRPROC(xdr_stat_chge), (char *)&sc);
			told = true;
			break;
		}
		ts_advance(1000 << i);
		ts_pump();
		ts_pump();
	}
	ts_notify_name("");
	CU_ASSERT(told);
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	ts_stop();
}

static void
test_notify_backoff(void)
{
	const struct nlm_counters *c;
	uint64_t since;
	int32_t state;
	unsigned i, lookups;
	static const unsigned gap[] = { 1000, 2000, 4000, 8000 };

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(true);
	lookups = ts_sm_lookups();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	since = n_since();
	ts_pump();
	CU_ASSERT(n_notify(false));
	for (i = 0; i < 4; i++) {
		/* Not before the delay... */
		ts_advance(gap[i] - 1);
		ts_pump();
		CU_ASSERT(!n_notify(false));
		/* ...and at once after it. */
		ts_advance(1);
		ts_pump();
		ts_pump();
		CU_ASSERT(n_notify(false));
	}
	CU_ASSERT_EQUAL(c->notify_sent, 5);
	/*
	 * The port was looked up, cached, forgotten after three unanswered
	 * calls in a row (it may have changed) and looked up again.
	 */
	CU_ASSERT_EQUAL(ts_sm_lookups() - lookups, 2);
	CU_ASSERT_EQUAL(n_since(), since);
	n_check_sends(5);
	ts_stop();
	/* A restart: still owed, since the same time, with the new state. */
	state = (int32_t)(2 * fake_store_epoch() - 1);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT((int32_t)(2 * fake_store_epoch() - 1) > state);
	CU_ASSERT_EQUAL(n_since(), since);
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	n_check_sends(1);
	ts_stop();
}

/*
 * No memory for the notifier when the debt begins (at a start): the debt
 * stays stored and the idle sweep, a minute later, takes it up.  Before,
 * it waited for the next start of nlmd: the client was not told to
 * reclaim in this one.
 */
static void
test_notify_nomem(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(true);
	fake_send_reset();
	ts_calloc_fail(sizeof(struct nlm_notifier));
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT(!ts_calloc_armed());	/* it was asked for */
	ts_calloc_fail(0);
	c = nlm_get_counters();
	CU_ASSERT(n_since() != 0);
	CU_ASSERT_EQUAL(c->notify_started, 0);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_advance(59999);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	/* The sweep. */
	ts_advance(1);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_started, 1);
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	n_check_sends(1);
	ts_stop();
}

static void
n_timer_noop(struct ev_loop *loop, void *arg)
{
	(void)loop;
	(void)arg;
}

/*
 * A restart (SM_SIMU_CRASH) out of memory for the SM_NOTIFY call, and for
 * the growth of the loop's timer heap: the attempt counts as lost and the
 * next one is scheduled, a second later, as after any loss -- a timer
 * armed while the heap cannot grow waits on a list beside it.  Before,
 * arming failed: the notifier was then neither in flight nor scheduled,
 * and only the idle sweep sent it, a minute later.
 */
static void
test_notify_call_nomem(void)
{
	static struct ev_timer fill[4096];
	const struct nlm_counters *c;
	struct nlm_host *h;
	uint64_t e;
	size_t i, n;

	if (ts_skip())
		return;
	n_preload(0);
	c = n_start();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	/* Timers fill the loop's heap, whose growth then fails. */
	ts_realloc_fail(SIZE_MAX);
	for (n = 0; n < 4096 && ts_realloc_armed(); n++)
		ev_timer_set(ts_loop(), &fill[n], 3600 * 1000, n_timer_noop,
		    NULL);
	CU_ASSERT_FATAL(!ts_realloc_armed());
	CU_ASSERT(ev_timer_armed(&fill[n - 1]));	/* all the same */
	e = fake_store_epoch() + 1;
	CU_ASSERT(store_put_epoch(fake_store(), e) == STORE_OK);
	/* The call: its arguments, mon_name "127.0.0.1" and state, 20 bytes. */
	ts_calloc_fail(sizeof(struct nlm_send) + 20);
	nlm_set_epoch(e, (int32_t)(2 * e - 1));
	CU_ASSERT(!ts_calloc_armed());
	ts_calloc_fail(0);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	h = nlm_host_named("client0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h->h_notify);
	CU_ASSERT(h->h_notify->nt_send == NULL &&
	    ev_timer_armed(&h->h_notify->nt_timer));
	ts_pump();
	CU_ASSERT(n_since() != 0);
	CU_ASSERT(!n_notify(false));
	ts_advance(999);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_advance(1);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT_EQUAL(c->notify_started, 2);
	CU_ASSERT_EQUAL(c->notify_acked, 2);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	for (i = 0; i < n; i++)
		ev_timer_cancel(ts_loop(), &fill[i]);
	ts_stop();
}

/*
 * A host that holds nothing and owes us no answer but is owed an
 * SM_NOTIFY, its status monitor silent for longer than host-idle: the
 * idle sweep keeps it (and its record, which carries the debt) until it
 * is told or the debt given up.  Forgotten, the notifier went with it and
 * the client never learnt to reclaim.
 */
static void
test_notify_owed_not_swept(void)
{
	const struct nlm_counters *c;
	struct store_host sh;
	unsigned i;

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(true);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	/* Eleven minutes unanswered: the sweep passes it eleven times. */
	for (i = 0; i < 66; i++) {
		ts_advance(10000);
		ts_pump();
		while (n_notify(false))
			;
	}
	CU_ASSERT_EQUAL(c->hosts, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	CU_ASSERT(fake_store_host(HID, &sh) && sh.sh_notify_since != 0);
	/* Answered at last: settled, then forgotten once idle. */
	for (i = 0; i < 61 && c->notify_acked == 0; i++) {
		ts_advance(1000);
		ts_pump();
		if (n_notify(true))
			ts_pump();
	}
	CU_ASSERT_EQUAL(c->notify_acked, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(n_since(), 0);
	ts_advance(661 * 1000);
	ts_pump();
	CU_ASSERT_EQUAL(c->hosts, 0);
	ts_stop();
}

/* rpcbind does not know the status program: retried, then given up. */
static void
test_notify_give_up(void)
{
	const struct nlm_counters *c;
	uint64_t old = n_wall() - 86400 + 3;

	if (ts_skip())
		return;
	n_preload(old);
	ts_sm_registered(false);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(n_since(), old);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	CU_ASSERT_EQUAL(c->notify_given_up, 0);
	/* Every attempt fails at once; the give-up time is wall-clock. */
	while (c->notify_given_up == 0 && n_wall() < old + 86400 + 5) {
		ts_advance(1000);
		ts_pump();
	}
	CU_ASSERT_EQUAL(c->notify_given_up, 1);
	CU_ASSERT(c->notify_sent >= 2);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(n_since(), 0);
	ts_sm_registered(true);
	ts_advance(120000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_stop();
}

/*
 * notify-give-up is a boundary the debt reaches, not one it must pass: an
 * attempt left unanswered once it has been owed notify-give-up seconds
 * (7 here) gives it up, counted and logged; one left unanswered a second
 * before is retried.  Owed from this start (nothing stored before), the
 * time owed is the loop's clock alone.  The first attempt's look-up times
 * out at 6.999 s (no rpcbind answer yet): owed 6 s, a second attempt;
 * rpcbind then answers it "not registered" at 7.000 s: given up.  With
 * `>' for `>=' (notify_done()) that second attempt was retried too.
 */
static void
test_notify_give_up_boundary(void)
{
	const struct nlm_counters *c;
	char log[4096];

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(false);
	ts_notify_give_up(7);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(c->notify_sent, 1);
	/* Turns that do not answer the look-up: it times out. */
	ts_advance(6999);
	ts_turn();
	ts_turn();
	CU_ASSERT_EQUAL(c->notify_given_up, 0);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	CU_ASSERT_EQUAL(c->notify_sent, 2);
	ts_advance(1);
	ts_log_begin();
	ts_pump();
	ts_log_end(log, sizeof(log));
	CU_ASSERT_EQUAL(c->notify_given_up, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_sent, 2);
	CU_ASSERT(strstr(log, "(2 attempts); giving up (notify-give-up 7 s)")
	    != NULL);
	CU_ASSERT_EQUAL(n_since(), 0);
	ts_notify_give_up(86400);
	ts_stop();
}

/*
 * A debt whose stored start lies ahead of the clock (recorded by an
 * earlier start under a clock that was ahead, stepped back since, e.g. by
 * NTP at boot): counted as owed from now, not given up at the first
 * unanswered attempt (the unsigned now - since wrapped), and the client is
 * still notified.
 */
static void
test_notify_since_future(void)
{
	const struct nlm_counters *c;
	uint64_t ahead = n_wall() + 3600;

	if (ts_skip())
		return;
	n_preload(ahead);
	ts_sm_registered(false);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT(n_since() <= n_wall());
	ts_pump();
	n_unanswered_kept(c);
	n_answered_end(c);
}

/*
 * The wall clock stepped forward after the debt began: a server without
 * a working RTC boots in the past, nlmd starts and stores the debt's
 * start under that clock, then NTP or chrony steps it forward by more than
 * notify-give-up.  The debt has been owed a few seconds, not days: it is
 * not given up at the first unanswered attempt (the client would never be
 * told to reclaim), and its stored start moves with the clock so that
 * the next start does not give it up either.  (Simulated: the start
 * moved back two days under the notifier, as the step makes it seem, in
 * its record and in the store.)  Before, the give-up read the wall clock
 * alone (found by review); moved in memory only, the stored start was
 * the one it had been, and notify_owed_sec() not restaging a start
 * behind the time counted survived every test (mutation testing).
 */
static void
test_notify_clock_forward(void)
{
	const struct nlm_counters *c;
	struct store_host sh;
	struct nlm_host *h;

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(false);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	ts_pump();
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	h = nlm_host_named("client0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	h->h_notify_since = n_wall() - 2 * 86400;
	/* Stored so too: the start was stored under the clock of then. */
	CU_ASSERT_FATAL(fake_store_host(HID, &sh));
	sh.sh_notify_since = h->h_notify_since;
	CU_ASSERT(store_put_host(fake_store(), &sh) == STORE_OK);
	CU_ASSERT(store_commit(fake_store()) == STORE_OK);
	n_unanswered_kept(c);
	CU_ASSERT(n_since() + 60 >= n_wall());
	n_answered_end(c);
}

/* 40 hosts at one address: 16 in flight at a time, the rest in turn. */
static void
test_notify_paced(void)
{
	const struct nlm_counters *c;
	unsigned round[4] = { 0 }, i;

	if (ts_skip())
		return;
	n_preload_n(0, 40);
	ts_sm_registered(true);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(c->notify_pending, 40);
	for (i = 0; i < 4; i++) {
		ts_pump();
		while (n_notify(true))
			round[i]++;
	}
	ts_pump();
	CU_ASSERT_EQUAL(round[0], 16);
	CU_ASSERT_EQUAL(round[1], 16);
	CU_ASSERT_EQUAL(round[2], 8);
	CU_ASSERT_EQUAL(round[3], 0);
	CU_ASSERT_EQUAL(c->notify_acked, 40);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_sent, 40);
	ts_stop();
}

/*
 * The idle sweep (nlm_notify_resume(), for each host it keeps) finds
 * notifications waiting for a slot at their address: they are neither
 * in flight nor scheduled, but queued, and stay as they are.  20 hosts
 * at one address: 16 in flight, 4 queued; each host taken up, the last
 * first (the sweep goes in hash order, not in the queue's); then the
 * client answers: every host told, each once.  nlm_notify_resume()
 * ignoring the queue survived every test (mutation testing): a queued
 * notification was queued again, which cut off the ones behind it or
 * looped the queue on itself -- hosts never told to reclaim, or one told
 * over and over.
 */
static void
test_notify_resume_queued(void)
{
	const struct nlm_counters *c;
	struct nlm_host *h;
	char name[32];
	unsigned i, n = 0, rounds, each;

	if (ts_skip())
		return;
	n_preload_n(0, 20);
	ts_sm_registered(true);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	ts_pump();
	while (n_notify(false))
		n++;
	CU_ASSERT_EQUAL(n, 16);
	for (i = 20; i-- > 0;) {
		snprintf(name, sizeof(name), "client%u", i);
		h = nlm_host_named(name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h);
		nlm_notify_resume(h);
	}
	ts_pump();
	CU_ASSERT(!n_notify(false));
	CU_ASSERT_EQUAL(c->notify_sent, 16);
	for (rounds = 0; rounds < 8 && c->notify_acked < 20; rounds++) {
		ts_advance(1000);
		ts_pump();
		ts_pump();
		for (each = 0; each < 40 && n_notify(true); each++)
			ts_pump();
	}
	CU_ASSERT_EQUAL(c->notify_acked, 20);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_sent, 36);
	ts_stop();
}

/*
 * A restart while notifying (SM_SIMU_CRASH: a new epoch and state): the
 * new state's notifications replace the old ones.  17 hosts at one
 * address: 16 in flight, one queued; after the restart 16 of the new
 * state go out at once, in the slots the old ones gave back, and from
 * then on only the new state is sent: the old notifications never come
 * back.  Answered, all 17 are told.  notify_one() not stopping the old
 * notifier, or nlm_notify_stop() not giving back its slot, survived
 * every test (mutation testing): the old state was sent on, or the
 * address's slots stayed taken and nothing more left for it.
 */
static void
test_notify_superseded(void)
{
	const struct nlm_counters *c;
	unsigned n = 0, rounds, each;
	uint64_t e;

	if (ts_skip())
		return;
	n_preload_n(0, 17);
	ts_sm_registered(true);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	ts_pump();
	while (n_notify(false))
		n++;
	CU_ASSERT_EQUAL(n, 16);
	e = fake_store_epoch() + 1;
	CU_ASSERT(store_put_epoch(fake_store(), e) == STORE_OK);
	nlm_set_epoch(e, (int32_t)(2 * e - 1));
	ts_pump();
	/* n_notify() checks the state: the new one. */
	n = 0;
	while (n_notify(false))
		n++;
	CU_ASSERT_EQUAL(n, 16);
	CU_ASSERT_EQUAL(c->notify_pending, 17);
	for (rounds = 0; rounds < 8 && c->notify_acked < 17; rounds++) {
		ts_advance(1000);
		ts_pump();
		ts_pump();
		for (each = 0; each < 40 && n_notify(true); each++)
			ts_pump();
	}
	CU_ASSERT_EQUAL(c->notify_acked, 17);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	ts_advance(120000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_stop();
}

/*
 * The notification queued last at an address stops being owed (its host
 * tells us it restarted), then another queues behind those still
 * waiting: the queue's tail moved back to the one before it, and every
 * host left is told, each once.  21 hosts at one address, no memory for
 * the first one's notifier at the start: 16 in flight, 4 queued; the
 * last of those leaves; the first is taken up again (the idle sweep's
 * nlm_notify_resume()) and queues.  addr_unqueue() not moving the tail
 * back survived every test (mutation testing): the newcomer was linked
 * behind the freed notifier (a use after free), never reached from the
 * head, and its host never told.
 */
static void
test_notify_unqueue_last(void)
{
	const struct nlm_counters *c;
	struct store_host sh;
	struct nlm_host *h, *first = NULL;
	char name[32], gone[32];
	uint64_t gone_id;
	unsigned i, n = 0, answered = 0, rounds, each;

	if (ts_skip())
		return;
	n_preload_n(0, 21);
	ts_sm_registered(true);
	fake_send_reset();
	ts_calloc_fail(sizeof(struct nlm_notifier));
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT(!ts_calloc_armed());
	ts_calloc_fail(0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(c->notify_pending, 20);
	ts_pump();
	while (n_notify(false))
		n++;
	CU_ASSERT_EQUAL(n, 16);
	for (i = 0; i < 21; i++) {
		snprintf(name, sizeof(name), "client%u", i);
		h = nlm_host_named(name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h);
		if (h->h_notify == NULL)
			first = h;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(first);
	CU_ASSERT_PTR_NOT_NULL_FATAL(first->h_ag->ac_nqtail);
	h = first->h_ag->ac_nqtail->nt_host;
	CU_ASSERT_PTR_NOT_NULL_FATAL(h->h_ag->ac_nqhead);
	CU_ASSERT(h->h_ag->ac_nqhead->nt_host != h);
	snprintf(gone, sizeof(gone), "%s", h->h_name);
	gone_id = h->h_id;
	CU_ASSERT_EQUAL(ts_notified(gone, 9), 1);
	CU_ASSERT_EQUAL(c->hosts, 20);
	CU_ASSERT_EQUAL(c->notify_pending, 19);
	CU_ASSERT_PTR_NULL(nlm_host_named(gone));
	nlm_notify_resume(first);
	CU_ASSERT_EQUAL(c->notify_pending, 20);
	CU_ASSERT(first->h_notify != NULL && first->h_notify->nt_queued);
	for (rounds = 0; rounds < 8 && c->notify_acked < 20; rounds++) {
		ts_advance(1000);
		ts_pump();
		ts_pump();
		for (each = 0; each < 40 && n_notify(true); each++) {
			answered++;
			ts_pump();
		}
	}
	CU_ASSERT_EQUAL(answered, 20);
	CU_ASSERT_EQUAL(c->notify_acked, 20);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	/* Every debt settled; the one that left, with its record. */
	for (i = 0; i < 21; i++)
		CU_ASSERT(HID + i == gone_id ? !fake_store_host(HID + i, &sh) :
		    fake_store_host(HID + i, &sh) && sh.sh_notify_since == 0);
	ts_advance(120000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_stop();
}

/*
 * A notification that waited for a slot, then got one, and whose attempt
 * could be neither made nor followed by a scheduled one (out of memory):
 * the idle sweep sends it, as any other left so.  17 hosts at one
 * address: 16 attempts waiting for the status program's port, one
 * queued; one of the 16 hosts tells us it restarted and leaves, the
 * queued one takes its slot with no memory for the call nor for the
 * timer of the next attempt.  addr_release() not clearing nt_queued
 * survived every test (mutation testing): the notification still seemed
 * queued, the sweep passed it by every minute, and the client was never
 * told to reclaim.
 */
static void
test_notify_dequeued_nomem(void)
{
	const struct nlm_counters *c;
	struct store_host sh;
	struct nlm_host *h, *queued = NULL, *slot = NULL;
	struct nlm_notifier *nt;
	struct sockaddr_in lo;
	char name[32];
	uint64_t qid;
	size_t i;
	unsigned answered = 0;

	if (ts_skip())
		return;
	n_preload_n(0, 17);
	ts_sm_registered(true);
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	for (i = 0; i < 17; i++) {
		snprintf(name, sizeof(name), "client%zu", i);
		h = nlm_host_named(name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h->h_notify);
		if (h->h_notify->nt_queued)
			queued = h;
		else if (slot == NULL)
			slot = h;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(queued);
	CU_ASSERT_PTR_NOT_NULL_FATAL(slot);
	qid = queued->h_id;
	n_lo4(&lo);
	/* The call: its arguments, mon_name "127.0.0.1" and state, 20 bytes. */
	ts_calloc_fail(sizeof(struct nlm_send) + 20);
	/* Its name copied: the host goes in the call. */
	snprintf(name, sizeof(name), "%s", slot->h_name);
	CU_ASSERT_EQUAL(nlm_host_notified(name, 9, (struct sockaddr *)&lo,
	    sizeof(lo), NULL), 1);
	CU_ASSERT(!ts_calloc_armed());
	ts_calloc_fail(0);
	/* Neither in flight nor queued: scheduled. */
	nt = queued->h_notify;
	CU_ASSERT_PTR_NOT_NULL_FATAL(nt);
	CU_ASSERT(nt->nt_send == NULL && !nt->nt_slot && !nt->nt_queued &&
	    ev_timer_armed(&nt->nt_timer));
	CU_ASSERT_EQUAL(c->notify_pending, 16);
	CU_ASSERT(fake_store_host(qid, &sh) && sh.sh_notify_since != 0);
	/* The 15 others, answered. */
	ts_pump();
	while (n_notify(true)) {
		answered++;
		ts_pump();
	}
	CU_ASSERT_EQUAL(answered, 15);
	CU_ASSERT_EQUAL(c->notify_acked, 15);
	/* A second after its attempt, well before the sweep. */
	ts_advance(999);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_advance(1);
	ts_pump();
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	CU_ASSERT_EQUAL(c->notify_acked, 16);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT(fake_store_host(qid, &sh) && sh.sh_notify_since == 0);
	ts_stop();
}

/* Hosts queued at their address after one in flight, in table order. */
static void
n_queued_after_slot(struct nlm_host *h, void *arg)
{
	unsigned *n = arg;

	if (h->h_notify == NULL)
		return;
	if (h->h_notify->nt_slot && n[0] == 0)
		n[0] = 1;
	else if (h->h_notify->nt_queued && n[0] != 0)
		n[1]++;
}

/*
 * nlmd stops with notifications in flight and others queued behind them
 * at one address: the notifiers are freed, and none queued starts as the
 * one before it gives back its slot.  20 hosts at one address, 16 in
 * flight, 4 queued; the host table is walked in the order the slots were
 * taken, so each queued notifier is freed after one in flight.
 * addr_release() not checking notify_closing survived every test
 * (mutation testing): each in flight freed started a call from a queued
 * notifier that was about to be freed, after the shutdown began.
 */
static void
test_notify_shutdown_queued(void)
{
	const struct nlm_counters *c;
	unsigned n = 0, order[2] = { 0, 0 };
	uint64_t calls;
	size_t sends;

	if (ts_skip())
		return;
	n_preload_n(0, 20);
	ts_sm_registered(true);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	ts_pump();
	while (n_notify(false))
		n++;
	CU_ASSERT_EQUAL(n, 16);
	CU_ASSERT_EQUAL(c->notify_pending, 20);
	nlm_host_foreach(n_queued_after_slot, order);
	CU_ASSERT_EQUAL(order[1], 4);
	calls = onc_out_stats(ts_clnt())->calls;
	sends = fake_sends();
	nlm_shutdown();
	/* The outgoing client outlives the service (ts_stop()). */
	CU_ASSERT_EQUAL(onc_out_stats(ts_clnt())->calls, calls);
	CU_ASSERT_EQUAL(onc_out_stats(ts_clnt())->pending, 0);
	CU_ASSERT_EQUAL(fake_sends(), sends);
	ts_stop();
}

/*
 * A non-blocking exclusive LOCK of [0, 1) of fh by (who, svid, "oh"),
 * carrying NSM state `state'.
 */
static uint32_t
n_lock_bst(const char *who, const char *fh, int svid, int32_t state,
    bool block)
{
	nlm4_lockargs a;
	nlm4_res r;
	char oh[] = "oh";
	uint32_t st;

	memset(&a, 0, sizeof(a));
	a.exclusive = true;
	a.block = block;
	a.state = state;
	a.alock.caller_name = (char *)who;
	a.alock.fh.nlm_netobj_len = (u_int)strlen(fh);
	a.alock.fh.nlm_netobj_val = (char *)fh;
	a.alock.oh.nlm_netobj_len = 2;
	a.alock.oh.nlm_netobj_val = oh;
	a.alock.svid = svid;
	a.alock.l_len = 1;
	(void)ts_send(NLMPROC4_LOCK, XDRPROC(xdr_nlm4_lockargs), &a);
	ts_pump();
	memset(&r, 0, sizeof(r));
	if (ts_reply(-1, false, &r) != 0)
		return 99;
	st = (uint32_t)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return st;
}

static uint32_t
n_lock_st(const char *who, const char *fh, int svid, int32_t state)
{
	return n_lock_bst(who, fh, svid, state, false);
}

static uint32_t
n_lock_as(const char *who, const char *fh, int svid)
{
	return n_lock_st(who, fh, svid, 0);
}

/* An UNLOCK of [0, 1) of fh by (who, svid, "oh"). */
static uint32_t
n_unlock_as(const char *who, const char *fh, int svid)
{
	nlm4_unlockargs a;
	nlm4_res r;
	char oh[] = "oh";
	uint32_t st;

	memset(&a, 0, sizeof(a));
	a.alock.caller_name = (char *)who;
	a.alock.fh.nlm_netobj_len = (u_int)strlen(fh);
	a.alock.fh.nlm_netobj_val = (char *)fh;
	a.alock.oh.nlm_netobj_len = 2;
	a.alock.oh.nlm_netobj_val = oh;
	a.alock.svid = svid;
	a.alock.l_len = 1;
	(void)ts_send(NLMPROC4_UNLOCK, XDRPROC(xdr_nlm4_unlockargs), &a);
	ts_pump();
	memset(&r, 0, sizeof(r));
	if (ts_reply(-1, false, &r) != 0)
		return 99;
	st = (uint32_t)r.stat.stat;
	xdr_free(XDRPROC(xdr_nlm4_res), (char *)&r);
	return st;
}

/* Is [0, 1) of fh held by (any host, svid, "oh") in the store? */
static bool
n_held(const char *fh, int svid)
{
	return fake_store_has_lock(0, svid, "oh", 2, fh, strlen(fh), 0, 1,
	    true);
}


/*
 * 3,000 stored hosts (the host table starts with 1,024 buckets and grows):
 * all come back, all are owed a notification, and a LOCK from one of them
 * finds it (its stored id), not a new host.
 */
static void
test_many_hosts(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	n_preload_n(0, 3000);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(c->hosts, 3000);
	CU_ASSERT_EQUAL(c->notify_pending, 3000);
	CU_ASSERT_EQUAL(n_lock_as("client2999", "fh", 7), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->hosts, 3000);
	CU_ASSERT(fake_store_has_lock(HID + 2999, 7, "oh", 2, "fh", 2, 0, 1,
	    true));
	ts_stop();
}

/* in6 := addr%scope, port 0. */
static struct sockaddr_storage *
n_in6(struct sockaddr_in6 *in6, const char *addr, uint32_t scope)
{
	memset(in6, 0, sizeof(*in6));
	in6->sin6_family = AF_INET6;
	CU_ASSERT_EQUAL(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
	in6->sin6_scope_id = scope;
	return (struct sockaddr_storage *)(void *)in6;
}

/*
 * nlm_host_by_id() (the operator's release finds its hosts by id, a
 * piece at a time) through the id index: 10 hosts restored from the
 * store (ids 3-12), 3,000 new ones (the index grows from 1,024 buckets
 * twice), each found by its id; a third of the new ones forgotten, those
 * not found any more, the others still; 100 more, found too.  It used to
 * walk every host for each look-up.
 */
static void
test_host_by_id(void)
{
	enum { NH = 3000, NMORE = 100 };
	static uint64_t ids[NH + NMORE];
	static struct nlm_host *hs[NH + NMORE];
	struct sockaddr_in in;
	char name[32], addr[32];
	uint64_t top = 0;
	int i;

	if (ts_skip())
		return;
	ts_max_hosts(2 * (NH + NMORE));
	n_preload_n(0, 10);
	ts_start(NLM_CB_MSG, 0);
	for (i = 0; i < 10; i++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(nlm_host_by_id(HID + i));
		snprintf(name, sizeof(name), "client%d", i);
		CU_ASSERT_STRING_EQUAL(nlm_host_by_id(HID + i)->h_name, name);
	}
	for (i = 0; i < NH + NMORE; i++) {
		if (i == NH)	/* a third forgotten, then 100 more */
			for (int k = 0; k < NH; k += 3) {
				nlm_host_forget(hs[k]);
				hs[k] = NULL;
			}
		memset(&in, 0, sizeof(in));
		in.sin_family = AF_INET;
		snprintf(addr, sizeof(addr), "10.%d.%d.%d", i / 62500,
		    i / 250 % 250, i % 250 + 1);
		CU_ASSERT_EQUAL_FATAL(inet_pton(AF_INET, addr, &in.sin_addr),
		    1);
		snprintf(name, sizeof(name), "idx%d", i);
		hs[i] = nlm_host_get((struct sockaddr_storage *)&in,
		    sizeof(in), name, NULL, 0, true);
		CU_ASSERT_PTR_NOT_NULL_FATAL(hs[i]);
		ids[i] = hs[i]->h_id;
		top = ids[i] > top ? ids[i] : top;
	}
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 10 + NH + NMORE - NH / 3);
	CU_ASSERT_EQUAL(ids[0], HID + 10);
	for (i = 0; i < NH + NMORE; i++)
		CU_ASSERT_PTR_EQUAL(nlm_host_by_id(ids[i]), hs[i]);
	CU_ASSERT_PTR_NULL(nlm_host_by_id(0));
	CU_ASSERT_PTR_NULL(nlm_host_by_id(top + 1));
	CU_ASSERT_PTR_NULL(nlm_host_by_id(top + 1 + 4096));
	ts_stop();
	ts_max_hosts(1000);
}

/*
 * The local status monitor's word that a host name restarted (procedure
 * 16, nlm_host_rebooted) with four hosts of that name (four addresses),
 * 20 locks each, a turn's budget of 8: the call releases a first piece of
 * the first host only, the others go to the release timer, a piece a
 * turn, and every host is forgotten at its release's end.  Before, the
 * call released a first piece of every host of the name, all in that one
 * turn: with hundreds of hosts of a name, hundreds of turns' budgets.
 * (Review.)
 */
static void
test_rebooted_many_hosts(void)
{
	enum { NH = 4, NL = 20 };
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct sockaddr_in in;
	struct nlm_host *h;
	char addr[32];
	size_t left;
	int k, i;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_turn_changes(8);
	ts_start(NLM_CB_MSG, 0);
	for (k = 0; k < NH; k++) {
		memset(&in, 0, sizeof(in));
		in.sin_family = AF_INET;
		snprintf(addr, sizeof(addr), "10.0.0.%d", k + 1);
		inet_pton(AF_INET, addr, &in.sin_addr);
		h = nlm_host_get((struct sockaddr_storage *)&in, sizeof(in),
		    "multi", NULL, 0, true);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h);
		for (i = 0; i < NL; i++) {
			memset(&rq, 0, sizeof(rq));
			rq.rq_host = h->h_id;
			rq.rq_svid = 1;
			rq.rq_oh = "own";
			rq.rq_ohlen = 3;
			rq.rq_fh = "m";
			rq.rq_fhlen = 1;
			rq.rq_start = (uint64_t)(k * 100 + 2 * i);
			rq.rq_len = 1;
			rq.rq_excl = true;
			CU_ASSERT_FATAL(lk_lock(nlm->n_table, &rq, 1000,
			    &res) == LK_GRANTED);
			nlm_apply(res);
		}
	}
	ts_pump();
	CU_ASSERT_EQUAL_FATAL(fake_store_nlocks(), NH * NL);
	CU_ASSERT_EQUAL(nlm_host_rebooted("multi", 0), NH);
	ts_turn();	/* the call's changes committed, one timer piece */
	left = fake_store_nlocks();
	printf("\n    %d hosts of a name, %d locks each: %zu left after the "
	    "call and one turn ", NH, NL, left);
	CU_ASSERT(left >= NH * NL - 2 * 8);
	for (i = 0; i < 100 && fake_store_nlocks() > 0; i++)
		ts_turn();
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	ts_pump();
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	ts_stop();
	ts_turn_changes(0);
}

/*
 * The id index beyond consecutive ids (review probe): hosts restored with
 * ids far apart, several of them in one bucket of the index (ids 1,024
 * and 2,048 apart), one at 2^62; each found, ids between them not; a new
 * host takes the id after the largest; a restored host in the middle of
 * a chain forgotten, then the others; two new ones swept while idle: none
 * found any more (ASan: no stale pointer in the index), the rest still.
 */
static void
test_host_by_id_sparse(void)
{
	static const uint64_t ids[] = { 3, 3 + 1024, 3 + 2048, 3 + 4096,
	    (1ULL << 32), (1ULL << 32) + 1024, (1ULL << 62) };
	enum { N = sizeof(ids) / sizeof(ids[0]) };
	struct store_host sh;
	struct sockaddr_in in;
	struct nlm_host *h, *g;
	char name[32];
	size_t i;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	for (i = 0; i < N; i++) {
		memset(&sh, 0, sizeof(sh));
		sh.sh_id = ids[i];
		snprintf(name, sizeof(name), "sparse%zu", i);
		sh.sh_name = name;
		sh.sh_addr.sa_len = 4;
		inet_pton(AF_INET, "127.0.0.1", sh.sh_addr.sa_bytes);
		CU_ASSERT(store_put_host(fake_store(), &sh) == STORE_OK);
	}
	CU_ASSERT(store_put_next_host(fake_store(), 4) == STORE_OK);
	CU_ASSERT(store_commit(fake_store()) == STORE_OK);
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, N);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "sparse%zu", i);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h = nlm_host_by_id(ids[i]));
		CU_ASSERT_STRING_EQUAL(h->h_name, name);
		CU_ASSERT_PTR_NULL(nlm_host_by_id(ids[i] + 1));
		CU_ASSERT_PTR_NULL(nlm_host_by_id(ids[i] + 1024 * 1024));
	}
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
	h = nlm_host_get((struct sockaddr_storage *)&in, sizeof(in), "new1",
	    NULL, 0, true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(h->h_id, (1ULL << 62) + 1);
	CU_ASSERT_PTR_EQUAL(nlm_host_by_id((1ULL << 62) + 1), h);
	/* A restored host in the middle of a chain, forgotten. */
	nlm_host_forget(nlm_host_by_id(3 + 1024));
	CU_ASSERT_PTR_NULL(nlm_host_by_id(3 + 1024));
	for (i = 0; i < N; i++)
		if (ids[i] != 3 + 1024)
			CU_ASSERT_PTR_NOT_NULL(nlm_host_by_id(ids[i]));
	/* The restored ones forgotten; the new one and a second swept. */
	for (i = 0; i < N; i++)
		if ((g = nlm_host_by_id(ids[i])) != NULL)
			nlm_host_forget(g);
	inet_pton(AF_INET, "10.1.2.4", &in.sin_addr);
	g = nlm_host_get((struct sockaddr_storage *)&in, sizeof(in), "new2",
	    NULL, 0, true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(g->h_id, (1ULL << 62) + 2);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2);
	ts_advance(661 * 1000);
	ts_pump();
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT_PTR_NULL(nlm_host_by_id((1ULL << 62) + 1));
	CU_ASSERT_PTR_NULL(nlm_host_by_id((1ULL << 62) + 2));
	for (i = 0; i < N; i++)
		CU_ASSERT_PTR_NULL(nlm_host_by_id(ids[i]));
	ts_stop();
}

/*
 * A link-local address is one machine per link: "ll" at fe80::1 through
 * interface 2 and through interface 3 are two hosts (before, one: a
 * GRANTED for the second went out on the first's link), each found again
 * with its own scope.  A scope not known (0, as an address given without
 * one) finds the first.  A global address is one host whatever the
 * scope.  nlm_addr_equal() itself, both ways.
 */
static void
test_host_link_local(void)
{
	struct sockaddr_in6 a, b, c, d;
	struct sockaddr_storage *pa, *pb, *pc;
	struct nlm_host *h2, *h3;
	const struct nlm_counters *cn;

	if (ts_skip())
		return;
	n_preload_n(0, 0);
	ts_start(NLM_CB_MSG, 0);
	cn = nlm_get_counters();
	pa = n_in6(&a, "fe80::1", 2);
	pb = n_in6(&b, "fe80::1", 3);
	pc = n_in6(&c, "fe80::1", 0);
	h2 = nlm_host_get(pa, sizeof(a), "ll", pa, sizeof(a), true);
	h3 = nlm_host_get(pb, sizeof(b), "ll", pb, sizeof(b), true);
	CU_ASSERT_PTR_NOT_NULL(h2);
	CU_ASSERT_PTR_NOT_NULL(h3);
	CU_ASSERT(h2 != h3 || h2 == NULL);
	CU_ASSERT_EQUAL(cn->hosts, 2);
	CU_ASSERT_PTR_EQUAL(nlm_host_find(pa, "ll"), h2);
	CU_ASSERT_PTR_EQUAL(nlm_host_find(pb, "ll"), h3);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_find(pc, "ll"));
	CU_ASSERT_FALSE(nlm_addr_equal(pa, pb));
	CU_ASSERT_FALSE(nlm_addr_equal(pb, pa));
	CU_ASSERT_TRUE(nlm_addr_equal(pa, pc));
	CU_ASSERT_TRUE(nlm_addr_equal(pc, pb));
	/* Global: the scope does not count. */
	pa = n_in6(&a, "2001:db8::1", 2);
	pb = n_in6(&b, "2001:db8::1", 3);
	CU_ASSERT_TRUE(nlm_addr_equal(pa, pb));
	h2 = nlm_host_get(pa, sizeof(a), "gl", pa, sizeof(a), true);
	CU_ASSERT_PTR_NOT_NULL(h2);
	CU_ASSERT_PTR_EQUAL(nlm_host_get(pb, sizeof(b), "gl", pb, sizeof(b),
	    true), h2);
	CU_ASSERT_EQUAL(cn->hosts, 3);
	/* Another address on the same link: another host. */
	CU_ASSERT_FALSE(nlm_addr_equal(n_in6(&c, "fe80::1", 2),
	    n_in6(&d, "fe80::2", 2)));
	ts_stop();
}

/*
 * Incoming SM_NOTIFY by the indexes (no scan of all hosts): 40 hosts at
 * 127.0.0.1 with state 5.  Its own name and state 5: unchanged.  Its own
 * name, state 7: that host only.  A name known only elsewhere: nothing.
 * Another address: nothing.  A name unknown anywhere: nothing while the
 * address has several hosts (which one restarted?), the host when it is
 * the only one there (its status monitor's name).
 */
static void
test_notified_index(void)
{
	struct sockaddr_in lo, other;
	char name[32];
	unsigned same, i;

	if (ts_skip())
		return;
	n_preload_n(0, 40);
	ts_start(NLM_CB_MSG, 0);
	n_lo4(&lo);
	other = lo;
	inet_pton(AF_INET, "127.0.0.2", &other.sin_addr);
	same = 0;
	CU_ASSERT_EQUAL(nlm_host_notified("client3", 5, (struct sockaddr *)&lo,
	    sizeof(lo), &same), 0);
	CU_ASSERT_EQUAL(same, 1);
	CU_ASSERT_EQUAL(nlm_host_notified("client3", 7, (struct sockaddr *)&lo,
	    sizeof(lo), NULL), 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 39);
	CU_ASSERT_EQUAL(nlm_host_notified("client4", 7,
	    (struct sockaddr *)&other, sizeof(other), NULL), 0);
	CU_ASSERT_EQUAL(nlm_host_notified("statd-name", 7,
	    (struct sockaddr *)&other, sizeof(other), NULL), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 39);
	CU_ASSERT_EQUAL(nlm_host_notified("statd-name", 7,
	    (struct sockaddr *)&lo, sizeof(lo), NULL), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 39);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_ambiguous, 1);
	for (i = 0; i < 39; i++) {
		snprintf(name, sizeof(name), "client%u", i);
		if (i != 3)
			CU_ASSERT_EQUAL(nlm_host_notified(name, 7,
			    (struct sockaddr *)&lo, sizeof(lo), NULL), 1);
	}
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	/* Alone there now, but "statd-name" is not a form of "client39". */
	CU_ASSERT_EQUAL(nlm_host_notified("statd-name", 7,
	    (struct sockaddr *)&lo, sizeof(lo), NULL), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_unmatched, 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	/* The sender's address is (sm-notify -v with an address). */
	CU_ASSERT_EQUAL(nlm_host_notified("127.0.0.1", 7,
	    (struct sockaddr *)&lo, sizeof(lo), NULL), 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	ts_stop();
}

/*
 * The host memo (the host each source last found): every request here
 * comes from one socket, so two names share a slot and must stay two
 * hosts; a host that goes (SM_NOTIFY: it restarted) is not found through
 * the memo afterwards (ASan would see the freed host), its name comes back
 * as a new host.
 */
static void
test_host_memo(void)
{
	const struct nlm_counters *c;
	struct sockaddr_in lo;

	if (ts_skip())
		return;
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(n_lock_as("memo-b", "memo-fh", 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("memo-c", "memo-fh", 3), NLM4_DENIED);
	CU_ASSERT_EQUAL(n_lock_as("memo-b", "memo-fh", 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("memo-c", "memo-fh", 3), NLM4_DENIED);
	CU_ASSERT_EQUAL(c->hosts, 2);
	n_lo4(&lo);
	CU_ASSERT_EQUAL(nlm_host_notified("memo-b", 9, (struct sockaddr *)&lo,
	    sizeof(lo), NULL), 1);
	CU_ASSERT_EQUAL(c->hosts, 1);
	CU_ASSERT_EQUAL(n_lock_as("memo-c", "memo-fh", 3), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("memo-b", "memo-fh", 3), NLM4_DENIED);
	CU_ASSERT_EQUAL(c->hosts, 2);
	ts_stop();
}

/*
 * Two client machines behind one address (NAT): "natc" locked once and let
 * go, and host-idle later the sweep forgot it; "natd" holds a lock.  natc
 * reboots and its status monitor sends SM_NOTIFY(natc).  natc is a name
 * forgotten here, not a status monitor's other name: nothing is released
 * (before, every host at the address was, and natd lost its lock without
 * knowing: "nate" was granted it).
 */
static void
test_notify_gone_swept(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_as("natc", "fc", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_unlock_as("natc", "fc", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("natd", "fd", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2);
	/* host-idle (600 s) passes; the sweep (every 60 s) forgets natc. */
	ts_advance(661 * 1000);
	ts_pump();
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_gone, 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(n_lock_as("nate", "fd", 3), NLM4_DENIED);
	ts_stop();
}

/*
 * The same SM_NOTIFY twice (sm-notify re-sends when the answer is lost,
 * and sends one per monitor entry): the first releases natc, the second
 * finds natc gone and releases nothing -- not natd.
 */
static void
test_notify_gone_resent(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_as("natc", "fc", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("natd", "fd", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 1);
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_gone, 1);
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	ts_stop();
}

/*
 * The same SM_NOTIFY twice for a host with a grant in flight: "natc" waits
 * behind "natd", natd lets go, natc's GRANTED_MSG is unanswered when natc
 * restarts.  The first notification releases natc, the grant with its
 * lock, and natc leaves; the second is a re-send: nothing more is
 * released and it is counted as such, not as a second release.
 */
static void
test_notify_resent_grant_in_flight(void)
{
	nlm4_testargs ta;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_as("natd", "fd", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_bst("natc", "fd", 1, 0, true), NLM4_BLOCKED);
	CU_ASSERT_EQUAL(n_unlock_as("natd", "fd", 2), NLM4_GRANTED);
	memset(&ta, 0, sizeof(ta));
	CU_ASSERT_EQUAL(ts_callback(&ta, NULL), NLMPROC4_GRANTED_MSG);
	xdr_free(XDRPROC(xdr_nlm4_testargs), (char *)&ta);
	CU_ASSERT(n_held("fd", 1));
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 1);
	CU_ASSERT(!n_held("fd", 1));
	/* The grant went with the lock: natc is gone, not kept for it. */
	CU_ASSERT_EQUAL(nlm_get_counters()->cb_inflight, 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_gone, 1);
	CU_ASSERT(!n_held("fd", 1));
	/* A later restart of natc is a new one. */
	CU_ASSERT_EQUAL(n_lock_st("natc", "fc", 1, 9), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("natc", 11), 1);
	CU_ASSERT(!n_held("fc", 1));
	ts_stop();
}

/*
 * Two client machines behind one address (NAT): "c2.example.com" and
 * "natd", each holding a lock.  c2 reboots; nfs-utils' sm-notify sends
 * SM_NOTIFY with the name it was monitored under, and once that is
 * answered the same cut at its first dot: "c2".  The first releases c2;
 * the second names no host, and natd is now the only one at the
 * address -- but "c2" is no form of "natd": natd keeps its lock (before,
 * natd was released and "nate" granted its lock).  Likewise a name never
 * seen, with natd alone there.
 */
static void
test_notify_short_name_neighbour(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("c2.example.com", "fc", 1, 7),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("natd", "fd", 2, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("c2.example.com", 9), 1);
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT_EQUAL(ts_notified("c2", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_unmatched, 1);
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_unmatched, 2);
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(n_lock_as("nate", "fd", 3), NLM4_DENIED);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2);	/* natd, nate */
	ts_stop();
}

/*
 * The forms of a caller_name a status monitor may go by, each with the
 * host alone at the address: the name but for case, the full name for a
 * short one, the short for a full one (above: test_notify_other_name),
 * the sender's address.  Not: another full name with the same first
 * label, a short name that only begins the other's first label, another
 * address, an empty name for one with an empty first label.
 * nlm_name_other_form() without its `lm == lc' (a short name the first
 * letters of the other's first label: "client" released
 * client2.example.org) or without its `lm > 0' ("" released .client)
 * survived every test (mutation testing).
 */
static void
test_notify_name_forms(void)
{
	static const struct {
		const char	*caller;
		const char	*mon;
		unsigned	 released;
	} t[] = {
		{ "client", "CLIENT", 1 },
		{ "client", "client.example.org", 1 },
		{ "Client.Example.Org", "client", 1 },
		{ "client", "127.0.0.1", 1 },
		{ "client.a.org", "client.b.org", 0 },
		{ "client", "127.0.0.2", 0 },
		{ "client", "clientx", 0 },
		{ "client", ".client", 0 },
		{ "client2.example.org", "client", 0 },
		{ "client.example.org", "cli", 0 },
		{ ".client", "", 0 },
	};
	size_t i;

	if (ts_skip())
		return;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fake_store_reset();
		fake_send_reset();
		ts_start(NLM_CB_MSG, 0);
		CU_ASSERT_EQUAL(n_lock_st(t[i].caller, "fc", 1, 5),
		    NLM4_GRANTED);
		if (ts_notified(t[i].mon, 9) != t[i].released)
			printf("\n    caller %s, SM_NOTIFY %s: not %s ",
			    t[i].caller, t[i].mon, t[i].released ?
			    "released" : "kept");
		CU_ASSERT_EQUAL(n_held("fc", 1), !t[i].released);
		CU_ASSERT_EQUAL(nlm_get_counters()->notify_unmatched,
		    !t[i].released);
		ts_stop();
	}
}

/* An SM_NOTIFY (name, state) from 127.0.0.1 through the NSM, pumped. */
static void
n_sm_notify(const char *name, int32_t state)
{
	struct stat_chge sc;

	sc.mon_name = (char *)name;
	sc.state = state;
	(void)ts_send_prog(SM_PROG, SM_VERS, SM_NOTIFY,
	    XDRPROC(xdr_stat_chge), &sc);
	ts_pump();
	(void)ts_drain();
}

/*
 * The NSM takes an SM_NOTIFY for every name the NLM takes as a
 * caller_name: a host named ".hidden" (a leading dot) or "" is released
 * by an SM_NOTIFY naming it.  Before, the NSM refused both (rpc.statd's
 * rule for names that become file names; ours never do), and such a
 * host was released only by a LOCK with a new state or by FREE_ALL.  A
 * name that neither is nor has the form of one the NLM takes (longer than
 * max-name-length up to its first dot, not an address) is refused before
 * any look-up; the full name of a short caller_name is not, nor is a
 * caller_name of max-name-length: nlm_notify_name_ok() refusing one
 * (`<' for `<='), its host never released by its SM_NOTIFY, survived
 * every test (mutation testing).
 */
static void
test_notify_name_rules(void)
{
	const struct nsm_stats *ns = nsm_get_stats();
	char big[301];
	uint64_t unknown, released = ns->notify_released;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st(".hidden", "nr1", 1, 3), NLM4_GRANTED);
	n_sm_notify(".hidden", 5);
	CU_ASSERT(!n_held("nr1", 1));
	CU_ASSERT_EQUAL(n_lock_st("", "nr2", 1, 3), NLM4_GRANTED);
	n_sm_notify("", 5);
	CU_ASSERT(!n_held("nr2", 1));
	/* 255 bytes, no dot: a caller_name of max-name-length. */
	memset(big, 'b', 255);
	big[255] = '\0';
	CU_ASSERT_EQUAL(n_lock_st(big, "nr4", 1, 3), NLM4_GRANTED);
	n_sm_notify(big, 5);
	CU_ASSERT(!n_held("nr4", 1));
	/* 300 bytes, no dot: no caller_name (255 at most) nor form of one. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	unknown = ns->notify_unknown;
	n_sm_notify(big, 5);
	CU_ASSERT_EQUAL(ns->notify_unknown, unknown);
	/* "c9.aaa...": the full name of the one host at the address. */
	CU_ASSERT_EQUAL(n_lock_st("c9", "nr3", 1, 3), NLM4_GRANTED);
	memcpy(big, "c9.", 3);
	n_sm_notify(big, 5);
	CU_ASSERT(!n_held("nr3", 1));
	CU_ASSERT_EQUAL(ns->notify_released - released, 4);
	ts_stop();
}

/*
 * The NSM hands the NLM the state the SM_NOTIFY carries: one with the
 * NSM state the host's LOCKs carried (a restart it came back from: what
 * it holds was taken since) releases nothing and is counted unchanged;
 * one with a new state releases the host.
 */
static void
test_notify_nsm_state(void)
{
	const struct nsm_stats *ns = nsm_get_stats();
	uint64_t unchanged = ns->notify_unchanged;
	uint64_t released = ns->notify_released;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("ns1", "ns1f", 1, 7), NLM4_GRANTED);
	n_sm_notify("ns1", 7);
	CU_ASSERT(n_held("ns1f", 1));
	CU_ASSERT_EQUAL(ns->notify_unchanged - unchanged, 1);
	CU_ASSERT_EQUAL(ns->notify_released, released);
	n_sm_notify("ns1", 9);
	CU_ASSERT(!n_held("ns1f", 1));
	CU_ASSERT_EQUAL(ns->notify_released - released, 1);
	ts_stop();
}

/*
 * The NSM matches an SM_NOTIFY by the address it came from, not the one
 * it was sent to: "ws" naming itself from 127.0.0.2 (another machine;
 * our address is 127.0.0.1 either way) releases nothing of the host "ws"
 * at 127.0.0.1; from 127.0.0.1 it does.
 */
static void
test_notify_nsm_sender(void)
{
	const struct nsm_stats *ns = nsm_get_stats();
	uint64_t unknown = ns->notify_unknown;
	struct stat_chge sc;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("ws", "wsf", 1, 3), NLM4_GRANTED);
	sc.mon_name = (char *)"ws";
	sc.state = 5;
	(void)ts_send_prog_from("127.0.0.2", SM_PROG, SM_VERS, SM_NOTIFY,
	    XDRPROC(xdr_stat_chge), &sc);
	ts_pump();
	CU_ASSERT(n_held("wsf", 1));
	CU_ASSERT_EQUAL(ns->notify_unknown - unknown, 1);
	n_sm_notify("ws", 5);
	CU_ASSERT(!n_held("wsf", 1));
	ts_stop();
}

/*
 * A name never seen, from an address with two hosts: one of them may be
 * its machine under its status monitor's name, but nothing says which --
 * neither is released.
 */
static void
test_notify_ambiguous(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_as("natc", "fc", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("natd", "fd", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("statd-name", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_ambiguous, 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2);
	CU_ASSERT(n_held("fc", 1));
	CU_ASSERT(n_held("fd", 2));
	ts_stop();
}

/*
 * A name never seen that is another form of one host's caller_name (its
 * full name; the sender's address is a form of every name there), from
 * an address with two hosts: the form is not proof that that one
 * restarted rather than its neighbour under a name of its own status
 * monitor -- neither is released.
 */
static void
test_notify_ambiguous_form(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_as("natd", "fd", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("natc", "fc", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("natc.example.org", 9), 0);
	CU_ASSERT_EQUAL(ts_notified("127.0.0.1", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_ambiguous, 2);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2);
	CU_ASSERT(n_held("fc", 1));
	CU_ASSERT(n_held("fd", 2));
	ts_stop();
}

/* A FREE_ALL (name, state 9) from src, pumped, its reply drained. */
static void
n_free_all_from(const char *src, const char *name)
{
	nlm4_notify fa;

	memset(&fa, 0, sizeof(fa));
	fa.name = (char *)name;
	fa.state = 9;
	(void)ts_send_from(src, NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify),
	    &fa);
	ts_pump();
	(void)ts_drain();
}

/*
 * FREE_ALL names a host, but anyone can send a name: from an address the
 * host never used it releases nothing (refused, counted); from the host's
 * own address it releases that host, not its neighbour there.
 */
static void
test_free_all_other_address(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(n_lock_st("fahost", "fc", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("natd", "fd", 2, 5), NLM4_GRANTED);
	n_free_all_from("127.0.0.2", "fahost");
	CU_ASSERT(n_held("fc", 1));
	CU_ASSERT_EQUAL(c->free_all, 0);
	CU_ASSERT_EQUAL(c->free_all_refused, 1);
	CU_ASSERT_EQUAL(c->hosts, 2);
	n_free_all_from("127.0.0.1", "fahost");
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(c->free_all, 1);
	CU_ASSERT_EQUAL(c->free_all_refused, 1);
	CU_ASSERT_EQUAL(c->hosts, 1);
	ts_stop();
}

/*
 * A status monitor that goes by another name than its lock manager's
 * caller_name (an address, a short name for a full one), at an address
 * with one host: that host restarted, released.
 */
static void
test_notify_other_name(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_as("client.example.org", "fc", 1),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("client", 9), 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT(!n_held("fc", 1));
	ts_stop();
}

/*
 * An SM_NOTIFY naming a host we know at another address only, sent from
 * an address whose one host goes by a longer form of that name: someone
 * speaks for the known host from an address it never used, and the form
 * is no reason to take it for the host there -- nothing is released,
 * neither here nor there.
 */
static void
test_notify_name_elsewhere(void)
{
	nlm4_lockargs a;
	char oh[] = "oh";

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	memset(&a, 0, sizeof(a));
	a.exclusive = true;
	a.alock.caller_name = "client";
	a.alock.fh.nlm_netobj_len = 2;
	a.alock.fh.nlm_netobj_val = "fe";
	a.alock.oh.nlm_netobj_len = 2;
	a.alock.oh.nlm_netobj_val = oh;
	a.alock.svid = 3;
	a.alock.l_len = 1;
	(void)ts_send_from("127.0.0.2", NLMPROC4_LOCK,
	    XDRPROC(xdr_nlm4_lockargs), &a);
	ts_pump();
	CU_ASSERT_FATAL(n_held("fe", 3));
	CU_ASSERT_EQUAL(n_lock_as("client.example.org", "fc", 1),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("client", 9), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 2);
	CU_ASSERT(n_held("fc", 1));
	CU_ASSERT(n_held("fe", 3));
	ts_stop();
}

/*
 * The status monitor's other name, re-sent (sm-notify sends again when
 * the answer is lost, and once for each of our addresses it monitors):
 * the first releases the one host at the address; by the second a
 * neighbour has come to that address ("natd", NAT), alone there.  The
 * second is about the host released already, not about natd: natd keeps
 * its lock.  A later restart of that client (a new state) is still
 * matched by the same name.
 */
static void
test_notify_other_name_resent(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("client.example.org", "fc", 1, 5),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("client", 9), 1);
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT_EQUAL(n_lock_as("natd", "fd", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("client", 9), 0);
	CU_ASSERT(n_held("fd", 2));
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
	CU_ASSERT_EQUAL(nlm_get_counters()->notify_gone, 1);
	/* natd leaves; the client locks again and restarts again. */
	CU_ASSERT_EQUAL(ts_notified("natd", 3), 1);
	CU_ASSERT_EQUAL(n_lock_st("client.example.org", "fc", 1, 9),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("client", 11), 1);
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	ts_stop();
}

/* An NM_LOCK of [0, 1) of fh by (who, svid, "oh"): no NSM state. */
static void
n_nm_lock(const char *who, const char *fh, int svid)
{
	nlm4_lockargs a;
	char oh[] = "oh";

	memset(&a, 0, sizeof(a));
	a.exclusive = true;
	a.alock.caller_name = (char *)who;
	a.alock.fh.nlm_netobj_len = (u_int)strlen(fh);
	a.alock.fh.nlm_netobj_val = (char *)fh;
	a.alock.oh.nlm_netobj_len = 2;
	a.alock.oh.nlm_netobj_val = oh;
	a.alock.svid = svid;
	a.alock.l_len = 1;
	(void)ts_send(NLMPROC4_NM_LOCK, XDRPROC(xdr_nlm4_lockargs), &a);
	ts_pump();
	(void)ts_drain();
}

/*
 * One restart of a client, told under its two names (sm-notify sends the
 * full name, then the name cut at its first dot; either may be re-sent):
 * acted on under one, it is the same restart under the other.  The
 * client comes back in between with NM_LOCK only (no NSM state to tell
 * it from the host that restarted): the notification under the other
 * name, the same state, leaves it and its lock alone.  Before, a
 * notification was known as acted on only under the name it came with,
 * and released the host that had come back.  A later restart (a new
 * state) is acted on.
 */
static void
test_notify_resent_other_name(void)
{
	static const char *const first[] = { "c2.example.com", "c2" };
	static const char *const then[] = { "c2", "c2.example.com" };
	size_t i;

	if (ts_skip())
		return;
	for (i = 0; i < 2; i++) {
		fake_store_reset();
		fake_send_reset();
		ts_start(NLM_CB_MSG, 0);
		CU_ASSERT_EQUAL(n_lock_st("c2", "fc", 1, 7), NLM4_GRANTED);
		CU_ASSERT_EQUAL(ts_notified(first[i], 9), 1);
		CU_ASSERT(!n_held("fc", 1));
		n_nm_lock("c2", "fc", 2);
		CU_ASSERT_FATAL(n_held("fc", 2));
		CU_ASSERT_EQUAL(ts_notified(then[i], 9), 0);
		CU_ASSERT(n_held("fc", 2));
		CU_ASSERT_EQUAL(ts_notified(first[i], 9), 0);
		CU_ASSERT(n_held("fc", 2));
		CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
		/* Its next restart. */
		CU_ASSERT_EQUAL(ts_notified(then[i], 11), 1);
		CU_ASSERT(!n_held("fc", 2));
		ts_stop();
	}
}

/*
 * The lock table out of memory when a host that restarted is to be
 * released (SM_NOTIFY, FREE_ALL, a LOCK with a new NSM state): nothing was
 * released, so the host stays, with its record, its state and its locks,
 * and a later notification releases it.  Before, it was forgotten and its
 * record deleted while its locks stayed in the table and the store under
 * an id nothing could release; a LOCK took the new state, so the
 * notification that followed found nothing to do.
 */
static void
test_release_nomem(void)
{
	const struct nlm_counters *c;
	struct sockaddr_in lo;
	nlm4_notify fa;
	uint8_t buf[512];
	char fh[32];
	int i;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_lk_alloc(&ts_lk_failing);
	ts_start(NLM_CB_MSG, 0);
	ts_lk_alloc(NULL);
	c = nlm_get_counters();
	/* 40 locks: releasing them needs more room than a LOCK reserved. */
	for (i = 0; i < 40; i++) {
		snprintf(fh, sizeof(fh), "nomem%d", i);
		CU_ASSERT_EQUAL(n_lock_st("nomem", fh, 1, 5), NLM4_GRANTED);
	}
	n_lo4(&lo);
	ts_lk_fail(true);
	CU_ASSERT_EQUAL(nlm_host_notified("nomem", 9, (struct sockaddr *)&lo,
	    sizeof(lo), NULL), 0);
	ts_lk_fail(false);
	ts_pump();
	CU_ASSERT_EQUAL(c->hosts, 1);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 1);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 40);
	CU_ASSERT(n_held("nomem0", 1));
	/* FREE_ALL, the whole turn short of memory: the same. */
	memset(&fa, 0, sizeof(fa));
	fa.name = "nomem";
	fa.state = 9;
	ts_lk_fail(true);
	(void)ts_send(NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify), &fa);
	ts_pump();
	ts_lk_fail(false);
	ts_pump();
	CU_ASSERT(ts_recv(buf, sizeof(buf)) > 0);	/* its (void) reply */
	CU_ASSERT_EQUAL(c->hosts, 1);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 1);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 40);
	/* A LOCK with the new state: refused, the old state kept. */
	ts_lk_fail(true);
	CU_ASSERT_EQUAL(n_lock_st("nomem", "nomem-new", 1, 9),
	    NLM4_DENIED_NOLOCKS);
	ts_lk_fail(false);
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nlocks(), 40);
	/* Three tries of one release: one that failed. */
	CU_ASSERT_EQUAL(c->release_failed, 1);
	/* Memory again: the re-sent SM_NOTIFY releases it all. */
	CU_ASSERT_EQUAL(ts_notified("nomem", 9), 1);
	CU_ASSERT_EQUAL(c->hosts, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(n_lock_as("other", "nomem0", 2), NLM4_GRANTED);
	ts_stop();
}


/*
 * A host released in pieces whose later piece finds the lock table out
 * of memory: the release timer tries again every second until memory
 * is back, and that is one release that failed, as
 * nlmd_host_release_failed_total says ("releases ... that ran out of
 * memory").  Before, every try counted: five seconds without memory
 * made it five (found by review).
 */
static void
test_release_pieces_nomem_once(void)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct sockaddr_in lo;
	struct nlm_host *h;
	uint64_t i;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_lk_alloc(&ts_lk_failing);
	/* Pieces of 1,000: the table's vectors grown for one are freed. */
	ts_turn_changes(1000);
	ts_start(NLM_CB_MSG, 0);
	ts_lk_alloc(NULL);
	n_lo4(&lo);
	h = nlm_host_get((struct sockaddr_storage *)&lo, sizeof(lo),
	    "pieces", NULL, 0, true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	for (i = 0; i < 3000; i++) {
		memset(&rq, 0, sizeof(rq));
		rq.rq_host = h->h_id;
		rq.rq_svid = 1;
		rq.rq_oh = "own";
		rq.rq_ohlen = 3;
		rq.rq_fh = "p";
		rq.rq_fhlen = 1;
		rq.rq_start = 2 * i;
		rq.rq_len = 1;
		rq.rq_excl = true;
		CU_ASSERT_FATAL(lk_lock(nlm->n_table, &rq, 1000, &res) ==
		    LK_GRANTED);
		nlm_apply(res);
	}
	ts_pump();
	CU_ASSERT_EQUAL(nlm_host_notified("pieces", 9, (struct sockaddr *)&lo,
	    sizeof(lo), NULL), 1);
	/* The first piece went with the call; the rest: no memory, 5 s. */
	ts_lk_fail(true);
	for (i = 0; i < 5; i++) {
		ts_advance(1000);
		ts_turn();
	}
	ts_lk_fail(false);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 2000);
	for (i = 0; i < 10 && fake_store_nlocks() > 0; i++) {
		ts_advance(1000);
		ts_turn();
	}
	ts_pump();
	printf("\n    release_failed after 5 s without memory: %llu ",
	    (unsigned long long)nlm_get_counters()->release_failed);
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	CU_ASSERT_EQUAL(nlm_get_counters()->release_failed, 1);
	CU_ASSERT(ts_metric("nlmd_host_release_failed_total") == 1);
	ts_stop();
	ts_turn_changes(0);
}

/*
 * Started: host "pieces" at 127.0.0.1, monitored (a LOCK), holding 3,001
 * locks (a release takes pieces of 1,000), then owed an SM_NOTIFY by a
 * restart (nlm_set_epoch()), with no memory for its notifier when
 * `nomem'.  The lock table fails while ts_lk_fail(true).  Stop with
 * ts_stop(), then ts_turn_changes(0).
 */
static struct nlm_host *
n_pieces_owed(bool nomem)
{
	const struct lk_result *res;
	struct lk_lockreq rq;
	struct nlm_host *h;
	uint64_t e, i;

	fake_store_reset();
	fake_send_reset();
	ts_sm_registered(true);
	ts_lk_alloc(&ts_lk_failing);
	ts_turn_changes(1000);
	ts_start(NLM_CB_MSG, 0);
	ts_lk_alloc(NULL);
	CU_ASSERT_EQUAL(n_lock_st("pieces", "p0", 2, 5), NLM4_GRANTED);
	h = nlm_host_named("pieces");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT(h->h_monitored);
	for (i = 0; i < 3000; i++) {
		memset(&rq, 0, sizeof(rq));
		rq.rq_host = h->h_id;
		rq.rq_svid = 1;
		rq.rq_oh = "own";
		rq.rq_ohlen = 3;
		rq.rq_fh = "p";
		rq.rq_fhlen = 1;
		rq.rq_start = 2 * i;
		rq.rq_len = 1;
		rq.rq_excl = true;
		CU_ASSERT_FATAL(lk_lock(nlm->n_table, &rq, 1000, &res) ==
		    LK_GRANTED);
		nlm_apply(res);
	}
	ts_pump();
	e = fake_store_epoch() + 1;
	CU_ASSERT(store_put_epoch(fake_store(), e) == STORE_OK);
	if (nomem)
		ts_calloc_fail(sizeof(struct nlm_notifier));
	nlm_set_epoch(e, (int32_t)(2 * e - 1));
	CU_ASSERT(!ts_calloc_armed());
	ts_calloc_fail(0);
	CU_ASSERT(h->h_notify_since != 0);
	return h;
}

/* Host "pieces" at 127.0.0.1 tells us it restarted (state 9). */
static void
n_pieces_restarted(void)
{
	struct sockaddr_in lo;

	n_lo4(&lo);
	CU_ASSERT_EQUAL(nlm_host_notified("pieces", 9, (struct sockaddr *)&lo,
	    sizeof(lo), NULL), 1);
}

/*
 * A host owed our SM_NOTIFY, unanswered (its statd not listening: it is
 * rebooting), comes back and sends a LOCK with a new NSM state.  It
 * restarted since it held what it held here: nothing of before our start
 * is left on it to reclaim, so the debt is settled, stored, and no
 * SM_NOTIFY follows -- one sent now would make it reclaim the lock it
 * was just granted, as after its own SM_NOTIFY or FREE_ALL, which
 * settle the debt by forgetting the host.  A LOCK with the state it had
 * settles nothing.  Before, the notifier went on: the client was told of
 * our restart at its next attempt.
 */
static void
test_notify_lock_new_state(void)
{
	const struct nlm_counters *c;
	uint64_t reboots;
	unsigned i, n = 0;

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(false);
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	ts_pump();
	n_unanswered_kept(c);
	reboots = c->reboots;
	/* The state it was stored with: still owed. */
	CU_ASSERT_EQUAL(n_lock_st("client0", "ls-f", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->reboots, reboots);
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	CU_ASSERT(n_since() != 0);
	/* A new one: it restarted; settled, stored, nothing more sent. */
	CU_ASSERT_EQUAL(n_lock_st("client0", "ls-g", 1, 7), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->reboots - reboots, 1);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(n_since(), 0);
	CU_ASSERT(n_held("ls-g", 1));
	ts_sm_registered(true);
	for (i = 0; i < 120; i++) {
		ts_advance(1000);
		ts_pump();
		while (n_notify(true))
			n++;
	}
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(c->notify_acked, 0);
	CU_ASSERT_EQUAL(c->notify_given_up, 0);
	CU_ASSERT(n_held("ls-g", 1));
	ts_stop();
}

/*
 * A host owed an SM_NOTIFY that could not be made (no memory for the
 * notifier at a restart) tells us it restarted, and its release goes in
 * pieces, out of memory long enough for the idle sweep to pass by: the
 * sweep sends it nothing (it told us itself; it leaves when released),
 * and nothing is sent once it has gone.  nlm_notify_resume() not
 * skipping a host being released to be forgotten (h_rel_forget) survived
 * every test (mutation testing): the sweep made a notifier and told the
 * client that had just restarted of our restart.
 */
static void
test_notify_resume_releasing(void)
{
	const struct nlm_counters *c;
	struct nlm_host *h;
	uint64_t i, started;
	unsigned lookups;

	if (ts_skip())
		return;
	h = n_pieces_owed(true);
	c = nlm_get_counters();
	ts_pump();
	CU_ASSERT_PTR_NULL(h->h_notify);
	started = c->notify_started;
	lookups = ts_sm_lookups();
	n_pieces_restarted();
	CU_ASSERT(h->h_rel_forget);
	/* The rest of the release: no memory past the sweep (60 s). */
	ts_lk_fail(true);
	for (i = 0; i < 61; i++) {
		ts_advance(1000);
		ts_turn();
	}
	ts_pump();
	CU_ASSERT(!n_notify(false));
	CU_ASSERT_EQUAL(c->notify_started, started);
	CU_ASSERT_EQUAL(ts_sm_lookups(), lookups);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_named("pieces"));
	CU_ASSERT(fake_store_nlocks() > 0);
	ts_lk_fail(false);
	for (i = 0; i < 10 && fake_store_nlocks() > 0; i++) {
		ts_advance(1000);
		ts_turn();
	}
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(c->hosts, 0);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_started, started);
	ts_advance(120000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_stop();
	ts_turn_changes(0);
}

/*
 * A host being told of our restart, unanswered, tells us it restarted
 * itself, and its release goes in pieces (out of memory for 20 s): its
 * SM_NOTIFY stops when the release begins, as when the release takes one
 * piece -- a host that told us it restarted is owed no notification
 * (nlm_notify.c), and the idle sweep already starts none for it
 * (nlm_notify_resume()).  Before, the notifier went on until the last
 * piece: the client that had just restarted was told of our restart at
 * 1, 3, 7 and 15 s (found while testing that sweep).
 */
static void
test_notify_stopped_releasing(void)
{
	const struct nlm_counters *c;
	struct nlm_host *h;
	unsigned i, n = 0;

	if (ts_skip())
		return;
	h = n_pieces_owed(false);
	c = nlm_get_counters();
	ts_pump();
	CU_ASSERT(n_notify(false));
	CU_ASSERT_EQUAL(c->notify_pending, 1);
	n_pieces_restarted();
	CU_ASSERT(h->h_rel_forget);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	ts_lk_fail(true);
	for (i = 0; i < 20; i++) {
		ts_advance(1000);
		ts_pump();
		while (n_notify(false))
			n++;
	}
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT(fake_store_nlocks() > 0);
	ts_lk_fail(false);
	for (i = 0; i < 10 && fake_store_nlocks() > 0; i++) {
		ts_advance(1000);
		ts_turn();
	}
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nlocks(), 0);
	CU_ASSERT_EQUAL(c->hosts, 0);
	CU_ASSERT_EQUAL(c->notify_pending, 0);
	CU_ASSERT_EQUAL(c->notify_acked, 0);
	ts_advance(120000);
	ts_pump();
	CU_ASSERT(!n_notify(false));
	ts_stop();
	ts_turn_changes(0);
}

/* Procedure 16 (name, state) from the IPv4 address src, port `port'. */
static void
n_proc16_from(const char *src, uint16_t port, const char *name,
    int32_t state)
{
	struct sockaddr_in *lo;
	struct nlm_ctx cx;
	nlm_sm_status s;

	memset(&cx, 0, sizeof(cx));
	cx.cx_vers = NLM4_VERS;
	cx.cx_proc = NLMPROC4_SM_NOTIFY;
	lo = (struct sockaddr_in *)&cx.cx_peer;
	lo->sin_family = AF_INET;
	lo->sin_port = htons(port);
	inet_pton(AF_INET, src, &lo->sin_addr);
	cx.cx_peerlen = sizeof(*lo);
	memset(&s, 0, sizeof(s));
	s.mon_name = (char *)(uintptr_t)name;
	s.state = state;
	nlm_proc_sm_notify(&cx, &s);
	ts_pump();
}

/* Procedure 16 (a status monitor on this host relays a restart). */
static void
n_proc16(const char *name, int32_t state)
{
	n_proc16_from("127.0.0.1", 700, name, state);
}

/*
 * Procedure 16 is believed only from a status monitor on this host: a
 * loopback address and a privileged port.  From another address, from
 * an unprivileged port, or naming a host with a name nlmd would never
 * have taken, it releases nothing and is counted refused.  No test sent
 * one that way: nlm_proc_sm_notify() without its addr_local_privileged()
 * check -- any machine's datagram releasing any client's locks --
 * survived every test (mutation testing).
 */
static void
test_proc16_refused(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(n_lock_st("p16-r", "p16-fr", 1, 5), NLM4_GRANTED);
	n_proc16_from("10.1.2.3", 700, "p16-r", 7);
	n_proc16_from("127.0.0.1", 40000, "p16-r", 7);
	n_proc16_from("127.0.0.1", 700, "p16/r", 7);
	CU_ASSERT(n_held("p16-fr", 1));
	CU_ASSERT_EQUAL(c->sm_notify_refused, 3);
	CU_ASSERT_EQUAL(c->sm_notify, 0);
	n_proc16("p16-r", 7);
	CU_ASSERT(!n_held("p16-fr", 1));
	CU_ASSERT_EQUAL(c->sm_notify_refused, 3);
	CU_ASSERT_EQUAL(c->sm_notify, 1);
	ts_stop();
}

#define N_RESTARTS(how)	ts_metric("nlmd_host_restarts_total{how=\"" how "\"}")

/*
 * nlmd_host_restarts_total counts the client restarts nlmd acted on, by
 * how it learnt of them: a host released, not a message received.  The
 * SM_NOTIFY a client's sm-notify sends to nlmd's own status monitor --
 * how nlmd, in rpc.statd's place, learns of most restarts -- was not
 * counted at all (found by review), and a procedure-16 notification was
 * counted whether it released a host or named none.
 */
static void
test_restarts_counted(void)
{
	nlm4_notify fa;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("rs-a", "rs-fa", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("rs-b", "rs-fb", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("rs-c", "rs-fc", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("rs-d", "rs-fd", 1, 5), NLM4_GRANTED);
	/* SM_NOTIFY to our status monitor; re-sent, it releases nothing. */
	CU_ASSERT_EQUAL(ts_notified("rs-a", 9), 1);
	CU_ASSERT(N_RESTARTS("sm_notify") == 1);
	CU_ASSERT_EQUAL(ts_notified("rs-a", 9), 0);
	CU_ASSERT(N_RESTARTS("sm_notify") == 1);
	/* Procedure 16: a name held by no host, then rs-b's. */
	n_proc16("nobody-here", 9);
	CU_ASSERT(N_RESTARTS("local_statd") == 0);
	n_proc16("rs-b", 9);
	CU_ASSERT(!n_held("rs-fb", 1));
	CU_ASSERT(N_RESTARTS("local_statd") == 1);
	/* A LOCK with a new NSM state, and FREE_ALL, as before. */
	CU_ASSERT_EQUAL(n_lock_st("rs-c", "rs-fc2", 1, 7), NLM4_GRANTED);
	CU_ASSERT(!n_held("rs-fc", 1));
	CU_ASSERT(N_RESTARTS("nsm_state") == 1);
	memset(&fa, 0, sizeof(fa));
	fa.name = (char *)(uintptr_t)"rs-d";
	fa.state = 9;
	(void)ts_send(NLMPROC4_FREE_ALL, XDRPROC(xdr_nlm4_notify), &fa);
	ts_pump();
	CU_ASSERT(!n_held("rs-fd", 1));
	CU_ASSERT(N_RESTARTS("free_all") == 1);
	CU_ASSERT(N_RESTARTS("sm_notify") == 1);
	CU_ASSERT(N_RESTARTS("local_statd") == 1);
	ts_stop();
}

/*
 * A host that first came with NM_LOCK (or SHARE) and then sends a LOCK
 * asks from then on to be monitored: at the next start it is owed an
 * SM_NOTIFY (notify_one()), the one word that tells its status monitor
 * to have the locks reclaimed.  That flag reaches the disk before the
 * LOCK is answered, whatever the durability, as a new host's first
 * record does: under `durability = log' a power loss could otherwise
 * keep the host's record unmonitored while the client believes it holds
 * the lock -- the lock lost, and the client never told to reclaim it.
 * Before, the flag was only staged (found by review).
 */
static void
test_monitored_flushed(void)
{
	struct store_host sh;
	nlm4_lockargs a;
	char oh[] = "oh";
	uint64_t f0;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	memset(&a, 0, sizeof(a));
	a.exclusive = true;
	a.state = 5;
	a.alock.caller_name = (char *)"mf-a";
	a.alock.fh.nlm_netobj_len = 5;
	a.alock.fh.nlm_netobj_val = (char *)"mf-f0";
	a.alock.oh.nlm_netobj_len = 2;
	a.alock.oh.nlm_netobj_val = oh;
	a.alock.svid = 1;
	a.alock.l_len = 1;
	(void)ts_send(NLMPROC4_NM_LOCK, XDRPROC(xdr_nlm4_lockargs), &a);
	ts_pump();
	(void)ts_drain();
	CU_ASSERT_FATAL(n_held("mf-f0", 1));
	CU_ASSERT_FATAL(fake_store_host(nlm_host_named("mf-a")->h_id, &sh));
	CU_ASSERT_EQUAL(sh.sh_flags & STORE_HOST_MONITORED, 0);
	f0 = fake_store_flushes();
	CU_ASSERT(f0 >= 1);			/* its first record */
	CU_ASSERT_EQUAL(n_lock_st("mf-a", "mf-f1", 1, 5), NLM4_GRANTED);
	CU_ASSERT_FATAL(fake_store_host(nlm_host_named("mf-a")->h_id, &sh));
	CU_ASSERT(sh.sh_flags & STORE_HOST_MONITORED);
	CU_ASSERT_EQUAL(fake_store_flushes(), f0 + 1);
	/* Monitored already: nothing more to flush. */
	CU_ASSERT_EQUAL(n_lock_st("mf-a", "mf-f2", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(fake_store_flushes(), f0 + 1);
	ts_stop();
}

/*
 * A server address new to a host is where it is owed an SM_NOTIFY of its
 * own at the next start (a client monitors each address it mounted
 * from): the record that names it reaches the disk before the request is
 * answered, whatever the durability, as the host's first record and its
 * monitored flag do.  Under `durability = log' a power loss could
 * otherwise bring the host back without it -- the client never told to
 * reclaim what it took through that address.  An address known already
 * costs no flush, and so does a new one of a host not monitored (owed no
 * SM_NOTIFY; its first LOCK flushes the whole record).  Before, the new
 * address was only staged.
 */
static void
test_local_flushed(void)
{
	struct sockaddr_in cli, local;
	struct nlm_host *h;
	uint64_t f0;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	memset(&cli, 0, sizeof(cli));
	cli.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &cli.sin_addr);
	local = cli;
	CU_ASSERT_PTR_NOT_NULL_FATAL(h = nlm_host_get(
	    (struct sockaddr_storage *)&cli, sizeof(cli), "lf-a",
	    (struct sockaddr_storage *)&local, sizeof(local), true));
	h->h_monitored = true;		/* it sent a LOCK */
	ts_pump();
	f0 = fake_store_flushes();
	CU_ASSERT(f0 >= 1);			/* its first record */
	/* The same address again: nothing to flush. */
	CU_ASSERT_PTR_NOT_NULL(nlm_host_get((struct sockaddr_storage *)&cli,
	    sizeof(cli), "lf-a", (struct sockaddr_storage *)&local,
	    sizeof(local), true));
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_flushes(), f0);
	/* Another of ours: flushed. */
	inet_pton(AF_INET, "127.0.0.2", &local.sin_addr);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_get((struct sockaddr_storage *)&cli,
	    sizeof(cli), "lf-a", (struct sockaddr_storage *)&local,
	    sizeof(local), true));
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_flushes(), f0 + 1);
	/* Not monitored: staged only. */
	h->h_monitored = false;
	inet_pton(AF_INET, "127.0.0.3", &local.sin_addr);
	CU_ASSERT_PTR_NOT_NULL(nlm_host_get((struct sockaddr_storage *)&cli,
	    sizeof(cli), "lf-a", (struct sockaddr_storage *)&local,
	    sizeof(local), true));
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_flushes(), f0 + 1);
	ts_stop();
}

/*
 * The NSM state a host's LOCKs carried is in its record and comes back
 * with it at our restart: an SM_NOTIFY re-sent for the restart it locked
 * under since releases nothing of what it holds (to be reclaimed in
 * grace), one with a new state releases it.  Had the state been lost,
 * the first released the locks the client still holds and is about to
 * reclaim, and a LOCK with a new state released nothing.
 */
static void
test_host_state_restored(void)
{
	struct store_host sh;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("client", "fc", 1, 5), NLM4_GRANTED);
	ts_stop();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_FATAL(nlm_host_named("client") != NULL);
	CU_ASSERT(fake_store_host(nlm_host_named("client")->h_id, &sh) &&
	    sh.sh_state == 5);
	CU_ASSERT_EQUAL(nlm_host_named("client")->h_state, 5);
	CU_ASSERT_EQUAL(ts_notified("client", 5), 0);
	CU_ASSERT(n_held("fc", 1));
	CU_ASSERT_EQUAL(ts_notified("client", 7), 1);
	CU_ASSERT(!n_held("fc", 1));
	ts_stop();
}

/*
 * Host ids are never reused, even when the store's next-id mark is not
 * above the hosts it holds (here a host of id 1 and no mark at all, as
 * a store that never recorded one): the restored ids count too, and a
 * new host gets the next one.  Given the stored host's id, its FREE_ALL
 * released the stored host's lock with its own.  nlm_host_restore()
 * raising the mark past an id above it only (`>' for `>=') survived
 * every test (mutation testing).
 */
static void
test_host_restored_id_not_reused(void)
{
	struct store_host sh;
	struct lk_record rc;
	struct nlm_host *h;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	memset(&sh, 0, sizeof(sh));
	sh.sh_id = 1;
	sh.sh_name = "stored";
	sh.sh_addr.sa_len = 4;
	inet_pton(AF_INET, "127.0.0.1", sh.sh_addr.sa_bytes);
	sh.sh_flags = STORE_HOST_MONITORED;
	sh.sh_state = 5;
	sh.sh_epoch = 1;
	memset(&rc, 0, sizeof(rc));
	rc.rc_kind = LK_REC_LOCK;
	rc.rc_host = 1;
	rc.rc_svid = 1;
	rc.rc_oh = "oh";
	rc.rc_ohlen = 2;
	rc.rc_fh = "fs";
	rc.rc_fhlen = 2;
	rc.rc_len = 1;
	rc.rc_excl = 1;
	rc.rc_token = 1;
	rc.rc_epoch = 1;
	CU_ASSERT_FATAL(store_put_host(fake_store(), &sh) == STORE_OK);
	CU_ASSERT_FATAL(store_put_record(fake_store(), &rc) == STORE_OK);
	CU_ASSERT_FATAL(store_commit(fake_store()) == STORE_OK);
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("newcomer", "fn", 2, 5), NLM4_GRANTED);
	CU_ASSERT_FATAL((h = nlm_host_named("newcomer")) != NULL);
	CU_ASSERT_EQUAL(h->h_id, 2);
	CU_ASSERT_PTR_EQUAL(nlm_host_by_id(1), nlm_host_named("stored"));
	n_free_all_from("127.0.0.1", "newcomer");
	CU_ASSERT(!n_held("fn", 2));
	CU_ASSERT(n_held("fs", 1));
	ts_stop();
}

/*
 * A LOCK with a new NSM state (the client restarted, its SM_NOTIFY lost)
 * releases what the host held and stores the new state: after our
 * restart an SM_NOTIFY of that restart, re-sent, releases nothing of
 * what the host took since.  Had the record kept the first state, it
 * released the locks the client is about to reclaim.
 */
static void
test_host_new_state_stored(void)
{
	struct store_host sh;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("client", "fc", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("client", "fg", 1, 7), NLM4_GRANTED);
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT_FATAL(nlm_host_named("client") != NULL);
	CU_ASSERT(fake_store_host(nlm_host_named("client")->h_id, &sh) &&
	    sh.sh_state == 7);
	ts_stop();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(ts_notified("client", 7), 0);
	CU_ASSERT(n_held("fg", 1));
	ts_stop();
}

/*
 * An SM_NOTIFY re-sent after its host came back and locked with the state
 * it names: the state on record is that one -- a repeated notification,
 * counted as unchanged (nlm.h), not as one about a host gone; the lock
 * taken since is kept either way.
 */
static void
test_notify_resent_unchanged(void)
{
	const struct nlm_counters *c;
	struct sockaddr_in lo;
	unsigned same = 0;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(n_lock_st("natc", "fc", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("natc", 9), 1);
	CU_ASSERT_EQUAL(n_lock_st("natc", "fc", 1, 9), NLM4_GRANTED);
	n_lo4(&lo);
	CU_ASSERT_EQUAL(nlm_host_notified("natc", 9, (struct sockaddr *)&lo,
	    sizeof(lo), &same), 0);
	ts_pump();
	CU_ASSERT_EQUAL(same, 1);
	CU_ASSERT_EQUAL(c->notify_gone, 0);
	CU_ASSERT(n_held("fc", 1));
	ts_stop();
}

/*
 * An SM_NOTIFY from ::ffff:127.0.0.1 (an IPv4 sender seen through an
 * IPv6 socket that takes IPv4 too) is from 127.0.0.1: hosts are keyed by
 * the address with its IPv4-mapped form undone, and it releases the host
 * there.  nlm_host_notified() without its addr_unmap() survived every
 * test (mutation testing): the host was not found, its locks kept.
 */
static void
test_notify_v4_mapped(void)
{
	struct sockaddr_in6 m;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("mapped", "fc", 1, 5), NLM4_GRANTED);
	(void)n_in6(&m, "::ffff:127.0.0.1", 0);
	CU_ASSERT_EQUAL(nlm_host_notified("mapped", 9, (struct sockaddr *)&m,
	    sizeof(m), NULL), 1);
	ts_pump();
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	ts_stop();
}

/*
 * The same restart told under the host's caller_name, then under its
 * short form (sm-notify sends both), the host back in between with a
 * LOCK carrying the state they name: the second is counted as unchanged,
 * as the host's own name re-sent would be, not as one about a host gone;
 * the lock is kept.  nlm_host_unnamed() taking it for a re-sent
 * notification whatever the host's state (without `h->h_state !=
 * state') survived every test (mutation testing).
 */
static void
test_notify_other_name_unchanged(void)
{
	const struct nlm_counters *c;
	struct sockaddr_in lo;
	unsigned same = 0;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(n_lock_st("natc.example.org", "fc", 1, 5),
	    NLM4_GRANTED);
	CU_ASSERT_EQUAL(ts_notified("natc.example.org", 9), 1);
	CU_ASSERT(!n_held("fc", 1));
	CU_ASSERT_EQUAL(n_lock_st("natc.example.org", "fc", 1, 9),
	    NLM4_GRANTED);
	n_lo4(&lo);
	CU_ASSERT_EQUAL(nlm_host_notified("natc", 9, (struct sockaddr *)&lo,
	    sizeof(lo), &same), 0);
	ts_pump();
	CU_ASSERT_EQUAL(same, 1);
	CU_ASSERT_EQUAL(c->notify_gone, 0);
	CU_ASSERT(n_held("fc", 1));
	ts_stop();
}

/*
 * Procedure 16 carries the state the client restarted into, as SM_NOTIFY
 * does.  A host that sent a LOCK with that state already came back after
 * that restart (its LOCK released what it held before: nlm_host_monitor())
 * and what it holds now it was granted since; a procedure 16 re-sent (its
 * answer lost) or late, after the client locked again, must not release
 * it.  Linux lockd compares the state the same way (nlm_host_rebooted(),
 * next_host_state()).  Before, procedure 16 released every host of the
 * name whatever the state (found by review).
 */
static void
test_proc16_state(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	/* Restarted into 7, locked again before the notification came. */
	CU_ASSERT_EQUAL(n_lock_st("p16-a", "p16-fa", 1, 5), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_st("p16-a", "p16-fa2", 1, 7), NLM4_GRANTED);
	CU_ASSERT(!n_held("p16-fa", 1));
	n_proc16("p16-a", 7);
	CU_ASSERT(n_held("p16-fa2", 1));
	CU_ASSERT(N_RESTARTS("local_statd") == 0);
	/* Restarted into 9: released; re-sent after it locked again: kept. */
	n_proc16("p16-a", 9);
	CU_ASSERT(!n_held("p16-fa2", 1));
	CU_ASSERT(N_RESTARTS("local_statd") == 1);
	CU_ASSERT_EQUAL(n_lock_st("p16-a", "p16-fa3", 1, 9), NLM4_GRANTED);
	n_proc16("p16-a", 9);
	CU_ASSERT(n_held("p16-fa3", 1));
	CU_ASSERT(N_RESTARTS("local_statd") == 1);
	/* Its next restart, into 11: released. */
	n_proc16("p16-a", 11);
	CU_ASSERT(!n_held("p16-fa3", 1));
	CU_ASSERT(N_RESTARTS("local_statd") == 2);
	ts_stop();
}

/*
 * What test_proc16_state leaves out: procedure 16 with state 0 (a status
 * monitor that names no state) releases a host whatever state its LOCKs
 * carried, and a host whose LOCKs carried no state (h_state never set)
 * is released by a procedure 16 of any state -- the state comparison
 * keeps only a host that locked under the very state named.
 */
static void
test_proc16_state_unset(void)
{
	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_EQUAL(n_lock_st("p16-z", "p16-fz", 1, 7), NLM4_GRANTED);
	n_proc16("p16-z", 0);
	CU_ASSERT(!n_held("p16-fz", 1));
	CU_ASSERT_EQUAL(n_lock_st("p16-u", "p16-fu", 1, 0), NLM4_GRANTED);
	n_proc16("p16-u", 7);
	CU_ASSERT(!n_held("p16-fu", 1));
	CU_ASSERT(N_RESTARTS("local_statd") == 2);
	ts_stop();
}

/*
 * The names "c<N>" a cursor walk met, in order (earlier tests' hosts come
 * back from the fake store: not counted).
 */
struct n_walk {
	char		 names[64][16];
	size_t		 n;
};

static void
n_walk_cb(struct nlm_host *h, void *arg)
{
	struct n_walk *w = arg;

	if (w->n < 64 && h->h_name[0] == 'c' && h->h_name[1] >= '0' &&
	    h->h_name[1] <= '9')
		snprintf(w->names[w->n++], sizeof(w->names[0]), "%s",
		    h->h_name);
}

static bool
n_walked(const struct n_walk *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->names[i], name) == 0)
			return true;
	return false;
}

/*
 * The status dump lists hosts a piece per turn through a cursor in the
 * list of hosts (before, all in one turn: 100,000 hosts held the loop
 * 230 ms).  Between pieces hosts come and go: one freed right after the
 * cursor and one before it, one added; two cursors at once.  Every host
 * there all along is met once, in the order they came, the one freed
 * before being reached is not, the new one is; under ASan nothing
 * touches freed memory.
 */
static void
test_host_cursor(void)
{
	struct nlm_host *cur, *cur2;
	struct n_walk w, w2;
	char name[16], fh[16];
	size_t i;

	if (ts_skip())
		return;
	ts_start(NLM_CB_MSG, 0);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "c%zu", i);
		snprintf(fh, sizeof(fh), "fcur%zu", i);
		CU_ASSERT_EQUAL(n_lock_as(name, fh, (int)i), NLM4_GRANTED);
	}
	memset(&w, 0, sizeof(w));
	memset(&w2, 0, sizeof(w2));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cur = nlm_host_cursor_new());
	CU_ASSERT_PTR_NOT_NULL_FATAL(cur2 = nlm_host_cursor_new());
	/* Past the hosts before c0, then three and four of ours. */
	while (w.n < 3)
		CU_ASSERT_FATAL(nlm_host_cursor_next(cur, 1, n_walk_cb, &w) ==
		    1);
	while (w2.n < 4)
		CU_ASSERT_FATAL(nlm_host_cursor_next(cur2, 1, n_walk_cb,
		    &w2) == 1);
	/* c3 is right after cur, c1 behind it; both go (and are freed). */
	CU_ASSERT_EQUAL(ts_notified("c3", 5), 1);
	CU_ASSERT_EQUAL(ts_notified("c1", 5), 1);
	CU_ASSERT_EQUAL(n_lock_as("c10", "fcur10", 10), NLM4_GRANTED);
	CU_ASSERT_EQUAL(nlm_host_cursor_next(cur, 2, n_walk_cb, &w), 2);
	CU_ASSERT_STRING_EQUAL(w.names[3], "c4");
	while (nlm_host_cursor_next(cur, 2, n_walk_cb, &w) > 0)
		continue;
	CU_ASSERT_EQUAL(nlm_host_cursor_next(cur, 2, n_walk_cb, &w), 0);
	CU_ASSERT_EQUAL(w.n, 10);	/* c0-c2, c4-c10 */
	CU_ASSERT_STRING_EQUAL(w.names[0], "c0");
	CU_ASSERT_STRING_EQUAL(w.names[2], "c2");
	CU_ASSERT_STRING_EQUAL(w.names[3], "c4");
	CU_ASSERT_STRING_EQUAL(w.names[9], "c10");
	CU_ASSERT_FALSE(n_walked(&w, "c3"));
	nlm_host_cursor_free(cur);
	/* The second cursor had passed c3: it goes on from c4. */
	while (nlm_host_cursor_next(cur2, 3, n_walk_cb, &w2) > 0)
		continue;
	CU_ASSERT_EQUAL(w2.n, 11);	/* c0-c3, c4-c10 */
	CU_ASSERT_STRING_EQUAL(w2.names[4], "c4");
	CU_ASSERT_STRING_EQUAL(w2.names[10], "c10");
	/* One left out at shutdown is taken off the list, freed after. */
	ts_stop();
	nlm_host_cursor_free(cur2);
}

/*
 * An nsm_init() over the fresh fake store with the nsm-state file of an
 * earlier nlmd holding `line' (NULL: no file) in a directory of its
 * own; its return, the epoch in *epochp; *kept: the file is still there.
 */
static int
n_nsm_init(const char *line, uint64_t *epochp, bool *kept)
{
	char dir[] = "/tmp/nlmd-nsm.XXXXXX", path[64], err[256];
	FILE *f;
	int rc;

	*epochp = 0;
	if (mkdtemp(dir) == NULL) {
		CU_FAIL("mkdtemp");
		return -2;
	}
	snprintf(path, sizeof(path), "%s/nsm-state", dir);
	if (line != NULL) {
		CU_ASSERT_FATAL((f = fopen(path, "w")) != NULL);
		fputs(line, f);
		fclose(f);
	}
	err[0] = '\0';
	rc = nsm_init(dir, fake_store(), epochp, err, sizeof(err));
	/* A refusal names the file. */
	if (rc != 0)
		CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	*kept = access(path, F_OK) == 0;
	(void)unlink(path);
	(void)rmdir(dir);
	return rc;
}

/*
 * The nsm-state file of an nlmd from before persistence is migrated once,
 * into a new store: the first epoch's state number moves past the one it
 * held (41: 43), the largest a state number allows included (2^31 - 5:
 * 2^31 - 3, epoch 2^30 - 1), and the file is removed.  A file that holds
 * no state number, or one past that, is refused on a new store and kept
 * (the operator decides); on a store that has its epoch already it is
 * stale and only removed.  None of this had a unit test: the epoch not
 * moved past the old state (`/ 2' for `/ 2 + 1': a client told the state
 * it saw before a restart would reclaim nothing), trailing bytes taken,
 * the bound off by one, or a stale file refusing a start, survived every
 * test (mutation testing).
 */
static void
test_nsm_state_migrated(void)
{
	uint64_t e;
	bool kept;

	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init(NULL, &e, &kept), 0);
	CU_ASSERT_EQUAL(e, 1);
	CU_ASSERT_EQUAL(nsm_state(), 1);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("41\n", &e, &kept), 0);
	CU_ASSERT_EQUAL(nsm_state(), 43);
	CU_ASSERT_EQUAL(e, 22);
	CU_ASSERT(!kept);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("42", &e, &kept), 0);
	CU_ASSERT_EQUAL(nsm_state(), 43);
	CU_ASSERT(!kept);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("2147483643\n", &e, &kept), 0);
	CU_ASSERT_EQUAL(e, 1073741823);
	CU_ASSERT_EQUAL(nsm_state(), 2147483645);
	CU_ASSERT(!kept);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("2147483644\n", &e, &kept), -1);
	CU_ASSERT(kept);
	CU_ASSERT_EQUAL(fake_store_epoch(), 0);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("41x\n", &e, &kept), -1);
	CU_ASSERT(kept);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("", &e, &kept), -1);
	CU_ASSERT(kept);
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init("-3\n", &e, &kept), -1);
	CU_ASSERT(kept);
	/* A store with its epoch: the file is stale, whatever it holds. */
	fake_store_reset();
	CU_ASSERT_EQUAL(n_nsm_init(NULL, &e, &kept), 0);
	CU_ASSERT_EQUAL(n_nsm_init("garbage\n", &e, &kept), 0);
	CU_ASSERT_EQUAL(e, 2);
	CU_ASSERT_EQUAL(nsm_state(), 3);
	CU_ASSERT(!kept);
	CU_ASSERT_EQUAL(n_nsm_init("99\n", &e, &kept), 0);
	CU_ASSERT_EQUAL(e, 3);
	CU_ASSERT(!kept);
	fake_store_reset();
}

/* The NSM call proc from the socket fd; its sm_stat_res, -1 if none. */
static int
n_sm_call(int fd, uint32_t proc, xdrproc_t xargs, const void *args,
    xdrproc_t xres, void *res)
{
	(void)ts_send_prog_fd(fd, SM_PROG, SM_VERS, proc, xargs, args);
	ts_pump();
	return ts_recv_result_fd(fd, xres, res);
}

/* Every reply to the port of fd left with nothing uncommitted. */
static unsigned
n_replies_committed(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	unsigned n = 0;
	size_t i;

	getsockname(fd, (struct sockaddr *)&a, &l);
	for (i = 0; i < fake_sends(); i++) {
		const struct fake_send *f = fake_send_get(i);

		if (f->fs_stream || f->fs_dport != ntohs(a.sin_port))
			continue;
		n++;
		CU_ASSERT_EQUAL(f->fs_uncommitted, 0);
		CU_ASSERT_EQUAL(f->fs_staged, 0);
	}
	return n;
}

/*
 * SM_SIMU_CRASH from a privileged port on this host is a restart: a new
 * epoch, committed and flushed before the answer leaves, the state
 * number 2 higher, the NLM's epoch moved with it (its monitored hosts
 * told the new state).  From an unprivileged port it is refused and
 * changes nothing.  At the last epoch whose state number fits an int32
 * there is no restart left: nothing changes.  Only test_nsm.sh (a real
 * nlmd, no epoch or flush seen) covered this: its local-only check
 * dropped, the flush or the NLM's new epoch left out, or the last
 * restart refused one early (`>=' for `>'), survived every unit test
 * (mutation testing).
 */
static void
test_nsm_simu_crash(void)
{
	const struct nsm_stats *ns = nsm_get_stats();
	uint64_t e, flushes, refused = ns->refused;
	sm_stat_res r;
	sm_name sn;
	int fd;

	if (ts_skip())
		return;
	n_preload(0);
	ts_sm_registered(true);
	ts_start(NLM_CB_MSG, 0);
	e = fake_store_epoch();
	CU_ASSERT_EQUAL(nlm_get_epoch(), e);
	CU_ASSERT_EQUAL(nsm_state(), (int32_t)(2 * e - 1));
	ts_pump();
	CU_ASSERT(n_notify(true));
	ts_pump();
	/* From the harness's unprivileged port: refused. */
	(void)ts_send_prog(SM_PROG, SM_VERS, SM_SIMU_CRASH,
	    XDRPROC(xdr_void), NULL);
	ts_pump();
	(void)ts_drain();
	CU_ASSERT_EQUAL(ns->refused - refused, 1);
	CU_ASSERT_EQUAL(fake_store_epoch(), e);
	CU_ASSERT_EQUAL(nlm_get_epoch(), e);
	CU_ASSERT_EQUAL(nsm_state(), (int32_t)(2 * e - 1));
	CU_ASSERT(!n_notify(true));
	/* From a privileged one: a restart. */
	CU_ASSERT_FATAL((fd = ts_priv_socket()) != -1);
	fake_send_reset();
	flushes = fake_store_flushes();
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_SIMU_CRASH, XDRPROC(xdr_void), NULL,
	    XDRPROC(xdr_void), NULL), 0);
	CU_ASSERT_EQUAL(n_replies_committed(fd), 1);
	CU_ASSERT_EQUAL(fake_store_epoch(), e + 1);
	CU_ASSERT_EQUAL(fake_store_flushes(), flushes + 1);
	CU_ASSERT_EQUAL(nlm_get_epoch(), e + 1);
	CU_ASSERT_EQUAL(nsm_state(), (int32_t)(2 * e + 1));
	CU_ASSERT_EQUAL(ns->refused - refused, 1);
	/* n_notify() checks the state: the new one. */
	CU_ASSERT(n_notify(true));
	memset(&r, 0, sizeof(r));
	sn.mon_name = (char *)"x";
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_STAT, XDRPROC(xdr_sm_name), &sn,
	    XDRPROC(xdr_sm_stat_res), &r), 0);
	CU_ASSERT_EQUAL(r.state, (int32_t)(2 * e + 1));
	close(fd);
	ts_stop();
}

/*
 * The last restart: nlmd started at epoch 2^30 - 2 (an old nsm-state of
 * 2^31 - 7) takes one SM_SIMU_CRASH, to 2^30 - 1 (state 2^31 - 3), and
 * no more: the state number would not fit an int32.
 */
static void
test_nsm_simu_crash_last(void)
{
	char dir[] = "/tmp/nlmd-nsm.XXXXXX", path[64];
	uint64_t e;
	FILE *f;
	int fd;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/nsm-state", dir);
	CU_ASSERT_FATAL((f = fopen(path, "w")) != NULL);
	fputs("2147483641\n", f);
	fclose(f);
	ts_state_dir(dir);
	ts_start(NLM_CB_MSG, 0);
	ts_state_dir(NULL);
	/* Removed by nsm_init(); not left behind if it was not. */
	(void)unlink(path);
	(void)rmdir(dir);
	e = fake_store_epoch();
	CU_ASSERT_EQUAL(e, 1073741822);
	CU_ASSERT_EQUAL(nsm_state(), 2147483643);
	CU_ASSERT_FATAL((fd = ts_priv_socket()) != -1);
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_SIMU_CRASH, XDRPROC(xdr_void), NULL,
	    XDRPROC(xdr_void), NULL), 0);
	CU_ASSERT_EQUAL(fake_store_epoch(), e + 1);
	CU_ASSERT_EQUAL(nlm_get_epoch(), e + 1);
	CU_ASSERT_EQUAL(nsm_state(), 2147483645);
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_SIMU_CRASH, XDRPROC(xdr_void), NULL,
	    XDRPROC(xdr_void), NULL), 0);
	CU_ASSERT_EQUAL(fake_store_epoch(), e + 1);
	CU_ASSERT_EQUAL(nlm_get_epoch(), e + 1);
	CU_ASSERT_EQUAL(nsm_state(), 2147483645);
	close(fd);
	ts_stop();
	fake_store_reset();
}

/*
 * SM_STAT and SM_MON answer stat_fail (nlmd monitors for no one) with
 * our state number; SM_UNMON and SM_UNMON_ALL answer the state number,
 * and are counted refused unless they come from a privileged port on
 * this host.
 */
static void
test_nsm_local_procs(void)
{
	const struct nsm_stats *ns = nsm_get_stats();
	uint64_t refused = ns->refused;
	sm_stat_res r;
	sm_name sn;
	sm_stat s;
	mon m;
	mon_id mi;
	my_id me;
	int fd, st;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	st = nsm_state();
	CU_ASSERT(st > 0);
	CU_ASSERT_FATAL((fd = ts_priv_socket()) != -1);
	memset(&me, 0, sizeof(me));
	me.my_name = (char *)"localhost";
	me.my_prog = NLM_PROG;
	me.my_vers = NLM4_VERS;
	me.my_proc = 16;
	memset(&mi, 0, sizeof(mi));
	mi.mon_name = (char *)"client";
	mi.my_id = me;
	memset(&m, 0, sizeof(m));
	m.mon_id = mi;
	memset(&r, 0, sizeof(r));
	sn.mon_name = (char *)"client";
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_STAT, XDRPROC(xdr_sm_name), &sn,
	    XDRPROC(xdr_sm_stat_res), &r), 0);
	CU_ASSERT_EQUAL(r.res_stat, stat_fail);
	CU_ASSERT_EQUAL(r.state, st);
	memset(&r, 0, sizeof(r));
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_MON, XDRPROC(xdr_mon), &m,
	    XDRPROC(xdr_sm_stat_res), &r), 0);
	CU_ASSERT_EQUAL(r.res_stat, stat_fail);
	CU_ASSERT_EQUAL(r.state, st);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_UNMON, XDRPROC(xdr_mon_id), &mi,
	    XDRPROC(xdr_sm_stat), &s), 0);
	CU_ASSERT_EQUAL(s.state, st);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(n_sm_call(fd, SM_UNMON_ALL, XDRPROC(xdr_my_id), &me,
	    XDRPROC(xdr_sm_stat), &s), 0);
	CU_ASSERT_EQUAL(s.state, st);
	CU_ASSERT_EQUAL(ns->refused, refused);
	close(fd);
	/* From the harness's unprivileged port: answered, counted refused. */
	memset(&s, 0, sizeof(s));
	(void)ts_send_prog(SM_PROG, SM_VERS, SM_UNMON, XDRPROC(xdr_mon_id),
	    &mi);
	ts_pump();
	CU_ASSERT_EQUAL(ts_recv_result(XDRPROC(xdr_sm_stat), &s), 0);
	CU_ASSERT_EQUAL(s.state, st);
	(void)ts_send_prog(SM_PROG, SM_VERS, SM_UNMON_ALL, XDRPROC(xdr_my_id),
	    &me);
	ts_pump();
	CU_ASSERT_EQUAL(ts_recv_result(XDRPROC(xdr_sm_stat), &s), 0);
	CU_ASSERT_EQUAL(s.state, st);
	CU_ASSERT_EQUAL(ns->refused - refused, 2);
	ts_stop();
}

/* A new host (name, 10.0.0.last), made if it can be: nlm_host_get(). */
static struct nlm_host *
n_host_at(const char *name, unsigned last)
{
	struct sockaddr_in in;

	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(0x0a000000 + last);
	return nlm_host_get((struct sockaddr_storage *)&in, sizeof(in), name,
	    NULL, 0, true);
}

/*
 * Three hosts of one caller_name at three addresses; the one in the
 * middle of its name's list, then the oldest (the last), restart
 * (SM_NOTIFY from each one's address): each goes, and the name's list
 * still leads to exactly the others -- proc 16 for the name releases
 * the one left, and the name is gone with it.  No test had taken a host
 * out of its name's list other than at its head (the coverage build);
 * a list broken there sends a later FREE_ALL, SM_NOTIFY or proc 16 to
 * a freed host (ASan) or past a live one.
 */
static void
test_host_name_list(void)
{
	struct sockaddr_in in;
	struct nlm_host *h;
	unsigned n;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n_host_at("same", 1));
	CU_ASSERT_PTR_NOT_NULL_FATAL(n_host_at("same", 2));
	CU_ASSERT_PTR_NOT_NULL_FATAL(n_host_at("same", 3));
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 3);
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(0x0a000002);
	CU_ASSERT_EQUAL(nlm_host_notified("same", 7, (struct sockaddr *)&in,
	    sizeof(in), NULL), 1);
	for (n = 0, h = nlm_host_named("same"); h != NULL; h = h->h_nnext) {
		CU_ASSERT_STRING_EQUAL(h->h_name, "same");
		CU_ASSERT(h->h_addr.ss_family == AF_INET);
		CU_ASSERT(((struct sockaddr_in *)&h->h_addr)->sin_addr.s_addr !=
		    htonl(0x0a000002));
		n++;
	}
	CU_ASSERT_EQUAL(n, 2);
	in.sin_addr.s_addr = htonl(0x0a000001);
	CU_ASSERT_EQUAL(nlm_host_notified("same", 7, (struct sockaddr *)&in,
	    sizeof(in), NULL), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h = nlm_host_named("same"));
	CU_ASSERT_PTR_NULL(h->h_nnext);
	CU_ASSERT_EQUAL(((struct sockaddr_in *)&h->h_addr)->sin_addr.s_addr,
	    htonl(0x0a000003));
	CU_ASSERT_EQUAL(nlm_host_rebooted("same", 7), 1);
	CU_ASSERT_PTR_NULL(nlm_host_named("same"));
	CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 0);
	ts_pump();
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	ts_stop();
}

/*
 * A new host whose name's index entry cannot be allocated is refused
 * (DENIED_NOLOCKS), no host, no record, and the entry just made for its
 * address goes again; at an address that has a host already, that
 * entry stays, the host there served.  The next LOCK of the name is
 * granted.  No test had run the branch (the coverage build).
 */
static void
test_host_name_nomem(void)
{
	const struct nlm_counters *c;

	if (ts_skip())
		return;
	fake_store_reset();
	fake_send_reset();
	ts_start(NLM_CB_MSG, 0);
	c = nlm_get_counters();
	CU_ASSERT_EQUAL(nlm->n_naddrs, 0);
	/* Its address new: the address's entry is undone. */
	ts_calloc_fail(sizeof(struct nlm_namegroup));
	CU_ASSERT_EQUAL(n_lock_as("hostN", "fn", 1), NLM4_DENIED_NOLOCKS);
	CU_ASSERT(!ts_calloc_armed());		/* it was asked for */
	ts_calloc_fail(0);
	CU_ASSERT_EQUAL(c->hosts, 0);
	CU_ASSERT_EQUAL(nlm->n_naddrs, 0);
	CU_ASSERT_EQUAL(nlm->n_nnames, 0);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 0);
	CU_ASSERT_EQUAL(n_lock_as("hostA", "fa", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(nlm->n_naddrs, 1);
	/* Its address has hostA: the entry stays, hostA's. */
	ts_calloc_fail(sizeof(struct nlm_namegroup));
	CU_ASSERT_EQUAL(n_lock_as("hostN", "fn", 2), NLM4_DENIED_NOLOCKS);
	CU_ASSERT(!ts_calloc_armed());
	ts_calloc_fail(0);
	CU_ASSERT_EQUAL(c->hosts, 1);
	CU_ASSERT_EQUAL(nlm->n_naddrs, 1);
	CU_ASSERT_EQUAL(nlm->n_nnames, 1);
	CU_ASSERT_PTR_NULL(nlm_host_named("hostN"));
	CU_ASSERT_EQUAL(n_unlock_as("hostA", "fa", 1), NLM4_GRANTED);
	CU_ASSERT_EQUAL(n_lock_as("hostN", "fn", 2), NLM4_GRANTED);
	CU_ASSERT_EQUAL(c->hosts, 2);
	CU_ASSERT_EQUAL(nlm->n_naddrs, 1);
	CU_ASSERT_EQUAL(fake_store_nhosts(), 2);
	CU_ASSERT(n_held("fn", 2));
	ts_stop();
}

/*
 * A stored host (monitored, owed an SM_NOTIFY at this start) and its lock
 * at the first start: out of memory for the host (its struct, then its
 * address's entry in the index), the start is refused with a message,
 * the store untouched; the next start restores it, its lock loaded for
 * it, its SM_NOTIFY sent.  Before, a failed allocation of the host was
 * passed over in silence (nlm_host_restore() returned -1, the load went
 * on): nlmd started without the host, sent it no SM_NOTIFY, so its
 * client never reclaimed, and the lock it held was dropped at the end of
 * grace; a failed index entry was a fatalx() in the middle of the load.
 */
static void
test_host_restore_nomem(void)
{
	static const size_t sizes[] = { sizeof(struct nlm_host),
	    sizeof(struct nlm_addrcount) };
	struct store_host sh;
	struct lk_record rc;
	struct stat_chge sc;
	char err[512];
	size_t i;

	if (ts_skip())
		return;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n_preload(0);
		memset(&rc, 0, sizeof(rc));
		rc.rc_kind = LK_REC_LOCK;
		rc.rc_host = HID;
		rc.rc_svid = 1;
		rc.rc_oh = "oh";
		rc.rc_ohlen = 2;
		rc.rc_fh = "fr";
		rc.rc_fhlen = 2;
		rc.rc_len = 1;
		rc.rc_excl = 1;
		rc.rc_token = 1;
		rc.rc_epoch = 1;
		CU_ASSERT_FATAL(store_put_record(fake_store(), &rc) ==
		    STORE_OK);
		CU_ASSERT_FATAL(store_commit(fake_store()) == STORE_OK);
		err[0] = '\0';
		ts_calloc_fail(sizes[i]);
		CU_ASSERT_EQUAL(ts_start_try(NLM_CB_MSG, 0, err, sizeof(err)),
		    -1);
		CU_ASSERT(!ts_calloc_armed());	/* it was asked for */
		ts_calloc_fail(0);
		printf("\n    %s ", err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "stored host 3 (client0): "
		    "out of memory"));
		CU_ASSERT_EQUAL(fake_store_nhosts(), 1);
		CU_ASSERT(n_held("fr", 1));
		CU_ASSERT(fake_store_host(HID, &sh) && sh.sh_notify_since ==
		    0);
		/* Memory again: the host, its lock, its notification. */
		ts_start(NLM_CB_MSG, 0);
		CU_ASSERT_EQUAL(nlm_get_counters()->hosts, 1);
		CU_ASSERT_EQUAL(nlm_get_counters()->loaded_locks, 1);
		CU_ASSERT_PTR_NOT_NULL(nlm_host_by_id(HID));
		ts_pump();
		CU_ASSERT_EQUAL_FATAL(ts_sm_notify(&sc, true), 0);
		xdr_free(XDRPROC(xdr_stat_chge), (char *)&sc);
		ts_stop();
	}
}

int
ts_register_notify(void)
{
	CU_pSuite s = CU_add_suite("service: SM_NOTIFY to the monitor list",
	    NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "owed, committed, sent, answered",
	    test_notify_answered) == NULL ||
	    CU_add_test(s, "only monitored hosts are notified",
	    test_notify_monitored_only) == NULL ||
	    CU_add_test(s, "two server addresses: one SM_NOTIFY each, from "
	    "it and naming it", test_notify_two_addresses) == NULL ||
	    CU_add_test(s, "the status monitor's port is looked up from the "
	    "address notified from", test_notify_lookup_from) == NULL ||
	    CU_add_test(s, "an address told late: the next one's from the "
	    "first delay", test_notify_next_address_delay) == NULL ||
	    CU_add_test(s, "four server addresses, a fifth used meanwhile: "
	    "none of the four skipped", test_notify_addresses_shift) == NULL ||
	    CU_add_test(s, "a fifth server address: the least recently used "
	    "gives way", test_local_lru) == NULL ||
	    CU_add_test(s, "a server address no longer ours: the others are "
	    "told all the same", test_notify_address_gone) == NULL ||
	    CU_add_test(s, "notify-name, the last address no longer ours: "
	    "told from another", test_notify_name_address_gone) == NULL ||
	    CU_add_test(s, "unanswered: 1, 2, 4, 8 s; survives a restart",
	    test_notify_backoff) == NULL ||
	    CU_add_test(s, "no memory for the notifier at a start: sent at "
	    "the next sweep", test_notify_nomem) == NULL ||
	    CU_add_test(s, "no memory for the call: the next attempt a "
	    "second later, its timer armed with none", test_notify_call_nomem)
	    == NULL ||
	    CU_add_test(s, "no status program: given up after notify-give-up",
	    test_notify_give_up) == NULL ||
	    CU_add_test(s, "unanswered at notify-give-up: given up; a second "
	    "before: retried", test_notify_give_up_boundary) == NULL ||
	    CU_add_test(s, "owed an SM_NOTIFY past host-idle: not swept",
	    test_notify_owed_not_swept) == NULL ||
	    CU_add_test(s, "owed since a time ahead of the clock: from now, "
	    "not given up", test_notify_since_future) == NULL ||
	    CU_add_test(s, "the clock stepped forward past notify-give-up: "
	    "not given up", test_notify_clock_forward) == NULL ||
	    CU_add_test(s, "one address: 16 in flight, the rest in turn",
	    test_notify_paced) == NULL ||
	    CU_add_test(s, "the idle sweep leaves queued notifications "
	    "queued", test_notify_resume_queued) == NULL ||
	    CU_add_test(s, "a restart while notifying: the new state "
	    "replaces the old", test_notify_superseded) == NULL ||
	    CU_add_test(s, "the last queued notification leaves: the queue's "
	    "tail moves back", test_notify_unqueue_last) == NULL ||
	    CU_add_test(s, "a notification dequeued, then out of memory for "
	    "the call: sent a second later", test_notify_dequeued_nomem) ==
	    NULL ||
	    CU_add_test(s, "stopped with notifications queued: none starts",
	    test_notify_shutdown_queued) == NULL ||
	    CU_add_test(s, "3,000 hosts: the host table grows, all found",
	    test_many_hosts) == NULL ||
	    CU_add_test(s, "link-local addresses: one host per link",
	    test_host_link_local) == NULL ||
	    CU_add_test(s, "SM_NOTIFY by address and name, no scan",
	    test_notified_index) == NULL ||
	    CU_add_test(s, "the host memo: a shared slot, a host gone",
	    test_host_memo) == NULL ||
	    CU_add_test(s, "SM_NOTIFY of a host swept while idle: its "
	    "neighbour kept", test_notify_gone_swept) == NULL ||
	    CU_add_test(s, "a re-sent SM_NOTIFY: its neighbour kept",
	    test_notify_gone_resent) == NULL ||
	    CU_add_test(s, "a re-sent SM_NOTIFY, a grant in flight: released "
	    "once", test_notify_resent_grant_in_flight) == NULL ||
	    CU_add_test(s, "a name unknown, two hosts at the address: none "
	    "released", test_notify_ambiguous) == NULL ||
	    CU_add_test(s, "FREE_ALL from another address: nothing released",
	    test_free_all_other_address) == NULL ||
	    CU_add_test(s, "another form of one name, two hosts at the "
	    "address: none released", test_notify_ambiguous_form) == NULL ||
	    CU_add_test(s, "SM_NOTIFY re-sent with a neighbour's short name: "
	    "the one host left at the address kept",
	    test_notify_short_name_neighbour) == NULL ||
	    CU_add_test(s, "SM_NOTIFY: the forms of a caller_name that release "
	    "the host alone at the address", test_notify_name_forms) == NULL ||
	    CU_add_test(s, "SM_NOTIFY through the NSM: every name a caller_name "
	    "can be", test_notify_name_rules) == NULL ||
	    CU_add_test(s, "SM_NOTIFY through the NSM: the client's state, "
	    "an unchanged one ignored", test_notify_nsm_state) == NULL ||
	    CU_add_test(s, "SM_NOTIFY through the NSM: matched by the "
	    "sender's address", test_notify_nsm_sender) == NULL ||
	    CU_add_test(s, "a status monitor's other name: the one host at "
	    "its address", test_notify_other_name) == NULL ||
	    CU_add_test(s, "a name known at another address only: the "
	    "host here that goes by a form of it kept",
	    test_notify_name_elsewhere) == NULL ||
	    CU_add_test(s, "a status monitor's other name, re-sent: the "
	    "neighbour that came since kept",
	    test_notify_other_name_resent) == NULL ||
	    CU_add_test(s, "a restart told under two names, the host back "
	    "with NM_LOCK: released once", test_notify_resent_other_name) ==
	    NULL ||
	    CU_add_test(s, "no memory to release a host: kept, released "
	    "later", test_release_nomem) == NULL ||
	    CU_add_test(s, "a release in pieces out of memory fails once, "
	    "however often it is tried", test_release_pieces_nomem_once) ==
	    NULL ||
	    CU_add_test(s, "a host released in pieces past the sweep: not "
	    "notified", test_notify_resume_releasing) == NULL ||
	    CU_add_test(s, "a host released in pieces: its SM_NOTIFY stops "
	    "at the first", test_notify_stopped_releasing) == NULL ||
	    CU_add_test(s, "a LOCK with a new NSM state settles the SM_NOTIFY "
	    "owed", test_notify_lock_new_state) == NULL ||
	    CU_add_test(s, "a host cursor: hosts come and go between pieces",
	    test_host_cursor) == NULL ||
	    CU_add_test(s, "hosts found by id, 3,000 of them, a third "
	    "forgotten", test_host_by_id) == NULL ||
	    CU_add_test(s, "hosts found by id: ids far apart, swept, "
	    "forgotten", test_host_by_id_sparse) == NULL ||
	    CU_add_test(s, "procedure 16 for a name of four hosts: a piece "
	    "in its turn, the rest the timer's", test_rebooted_many_hosts) ==
	    NULL ||
	    CU_add_test(s, "a host monitored from its first LOCK: flushed "
	    "before the answer", test_monitored_flushed) == NULL ||
	    CU_add_test(s, "a server address new to a host: flushed "
	    "before it is answered", test_local_flushed) == NULL ||
	    CU_add_test(s, "a host's NSM state survives our restart",
	    test_host_state_restored) == NULL ||
	    CU_add_test(s, "a new NSM state seen in a LOCK is stored",
	    test_host_new_state_stored) == NULL ||
	    CU_add_test(s, "a restored host's id is never given again",
	    test_host_restored_id_not_reused) == NULL ||
	    CU_add_test(s, "SM_NOTIFY re-sent after the host locked with "
	    "its state: unchanged", test_notify_resent_unchanged) == NULL ||
	    CU_add_test(s, "SM_NOTIFY from an IPv4-mapped address: the host "
	    "at the IPv4 one", test_notify_v4_mapped) == NULL ||
	    CU_add_test(s, "SM_NOTIFY re-sent under another name after the "
	    "host locked with its state: unchanged",
	    test_notify_other_name_unchanged) == NULL ||
	    CU_add_test(s, "procedure 16 with the state a host locked "
	    "under since: kept", test_proc16_state) == NULL ||
	    CU_add_test(s, "procedure 16 from elsewhere releases nothing",
	    test_proc16_refused) == NULL ||
	    CU_add_test(s, "procedure 16 with state 0, or for a host that "
	    "named none: released", test_proc16_state_unset) == NULL ||
	    CU_add_test(s, "client restarts are counted when acted on, "
	    "SM_NOTIFY too", test_restarts_counted) == NULL ||
	    CU_add_test(s, "an old nsm-state file: migrated once into a new "
	    "store, past its state", test_nsm_state_migrated) == NULL ||
	    CU_add_test(s, "SM_SIMU_CRASH from a privileged local port: a new "
	    "epoch, flushed before the answer", test_nsm_simu_crash) == NULL ||
	    CU_add_test(s, "SM_SIMU_CRASH at the last state number: none "
	    "past it", test_nsm_simu_crash_last) == NULL ||
	    CU_add_test(s, "SM_STAT, SM_MON, SM_UNMON, SM_UNMON_ALL: their "
	    "answers, local-only ones counted", test_nsm_local_procs) == NULL ||
	    CU_add_test(s, "hosts of one name: the middle one and the last "
	    "go, the list leads to the rest", test_host_name_list) == NULL ||
	    CU_add_test(s, "no memory for a new host's name entry: refused, "
	    "its address's entry undone", test_host_name_nomem) == NULL ||
	    CU_add_test(s, "no memory for a stored host at the start: "
	    "refused, not started without it", test_host_restore_nomem) ==
	    NULL)
		return -1;
	return 0;
}
