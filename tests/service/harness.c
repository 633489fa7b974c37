/*
 * harness.c - the NLM service over a fake store and a fake sender:
 * the set-up the tests of tests/service/ share (see svctest.h).
 *
 * The real NLM service, transport, lock core and event loop run in this
 * process; db/ is replaced by tests/fakes/store_fake.c and the two sending
 * functions by tests/fakes/send_fake.c, which records, at every send, how
 * many staged operations were not yet committed (a violation when > 0) and
 * lets a test look at the store at that very moment.  Requests are real
 * datagrams (and one TCP connection) on loopback; the "client host" is
 * this process too: a fake rpcbind on 127.0.0.1:111 answers nlmd's port
 * look-ups with the port of a socket that receives the callbacks (NLM)
 * or of one that receives SM_NOTIFY (the status program).  Port
 * 111 needs a network namespace of our own, made at suite start (root);
 * without one the suite is skipped with the reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include <CUnit/CUnit.h>

#include "ev.h"
#include "lockcore.h"
#include "log.h"
#include "netaddr.h"
#include "nlm.h"
#include "nsm.h"
#include "rpc/nlm_prot.h"
#include "rpc/sm_inter.h"
#include "rpcout.h"
#include "rpcsrv.h"
#include "sbuf.h"
#include "store.h"
#include "tests/fakes/fakes.h"
#include "tests/runner.h"
#include "svctest.h"

#define LO	"127.0.0.1"

/*
 * How long the harness waits for a datagram from the service, and after
 * which it judges that none came.  The loop runs in this thread: what a
 * turn sent was sent before the wait begins, so the wait covers only the
 * kernel's delivery on loopback (later when its softirq is deferred to
 * ksoftirqd under load).  A drain that waits for nothing more costs one
 * such wait.
 */
#define TS_WAIT_MS	50

static int st_ns_ok;		/* our own network namespace */
static const char *st_skip_why = "";
static uint64_t st_clock;	/* the loop's clock, ms */

static struct ev_loop *loop;
static struct onc_srv *srv;
static struct onc_out *clnt;
static unsigned srv_port;
static int rpcb_fd = -1;	/* fake rpcbind, 127.0.0.1:111 */
static int cb_fd = -1;		/* the client's NLM: callbacks, _RES */
static int cli_fd = -1;		/* requests (UDP) */
static int sm_fd = -1;		/* the client's status monitor */
static char st_sm_from[64];	/* source of the last SM_NOTIFY */
static char st_rpcb_from[64];	/* source of the last GETPORT */
static uint32_t st_xid = 1000;
static bool st_sm_registered = true;
static bool st_nlm_registered = true;
static unsigned st_rpcb_verf;	/* verifier bytes in rpcbind's answers */
static unsigned st_lookups[2];	/* GETPORT answered: NLM, NSM */
static const struct lk_allocator *st_lk_alloc;
static size_t st_turn_changes;
static size_t st_max_hosts = 1000;
static size_t st_max_hosts_per_addr = 1000;
static char st_notify_name[256];	/* notify-name; "": the address */
static unsigned st_cb_retry_min_ms = 1000, st_cb_retry_max_ms = 8000;
static unsigned st_notify_give_up = 86400;
/* state_dir of nsm_init(): where an old nlmd's nsm-state may be. */
static char st_state_dir[256] = "/nonexistent/nlmd-test";

/* ---- plumbing ---- */

static uint64_t
st_now(void)
{
	return st_clock;
}

static void
st_hook(struct ev_loop *l, void *arg)
{
	(void)l;
	nlm_turn_end(arg);
}

static int
st_udp(uint16_t port)
{
	struct sockaddr_in a;
	int fd;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0)) == -1)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, LO, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint16_t
st_port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);

	getsockname(fd, (struct sockaddr *)&a, &l);
	return ntohs(a.sin_port);
}

static int
st_lo_up(void)
{
	struct ifreq ifr;
	int fd, rc;

	if ((fd = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	if (rc == 0)
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
	return rc;
}

int
ts_namespace(void)
{
	if (getuid() != 0) {
		st_skip_why = "not root: cannot make a network namespace";
		return 0;
	}
	if (unshare(CLONE_NEWNET) == -1 || st_lo_up() == -1) {
		st_skip_why = "unshare(CLONE_NEWNET) failed";
		return 0;
	}
	st_ns_ok = 1;
	return 1;
}

const char *
ts_skip_reason(void)
{
	return st_ns_ok ? NULL : st_skip_why;
}

/* ts_lk_failing: the C library's, or NULL while ts_lk_fail(true). */
static bool st_lk_fail;
static unsigned long st_lk_refused;

static void *
st_lk_malloc(size_t size, void *arg)
{
	(void)arg;
	if (st_lk_fail) {
		st_lk_refused++;
		return NULL;
	}
	return malloc(size);
}

static void *
st_lk_realloc(void *p, size_t size, void *arg)
{
	(void)arg;
	if (st_lk_fail) {
		st_lk_refused++;
		return NULL;
	}
	return realloc(p, size);
}

static void
st_lk_free(void *p, void *arg)
{
	(void)arg;
	free(p);
}

const struct lk_allocator ts_lk_failing = { st_lk_malloc, st_lk_realloc,
    st_lk_free, NULL };

void
ts_lk_fail(bool on)
{
	st_lk_fail = on;
}

unsigned long
ts_lk_refused(void)
{
	return st_lk_refused;
}

/*
 * calloc() and realloc() of the server's objects go through these
 * (test-service is linked with -Wl,--wrap=calloc -Wl,--wrap=realloc):
 * each fails once, for the next request of the size armed (of any size
 * when SIZE_MAX is).
 */
void	*__real_calloc(size_t, size_t);
void	*__wrap_calloc(size_t, size_t);
void	*__real_realloc(void *, size_t);
void	*__wrap_realloc(void *, size_t);
static size_t st_calloc_fail;
static size_t st_realloc_fail;
static size_t st_realloc_failed;
static bool st_alloc_keep;
static unsigned long st_alloc_refused;

void *
__wrap_calloc(size_t n, size_t size)
{
	if (st_calloc_fail != 0 && n == 1 && (size == st_calloc_fail ||
	    st_calloc_fail == SIZE_MAX)) {
		if (!st_alloc_keep)
			st_calloc_fail = 0;
		st_alloc_refused++;
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t size)
{
	if (st_realloc_fail != 0 && (size == st_realloc_fail ||
	    st_realloc_fail == SIZE_MAX)) {
		if (!st_alloc_keep)
			st_realloc_fail = 0;
		st_alloc_refused++;
		st_realloc_failed = size;
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, size);
}

void
ts_calloc_fail(size_t size)
{
	st_calloc_fail = size;
}

bool
ts_calloc_armed(void)
{
	return st_calloc_fail != 0;
}

void
ts_realloc_fail(size_t size)
{
	st_realloc_fail = size;
}

bool
ts_realloc_armed(void)
{
	return st_realloc_fail != 0;
}

size_t
ts_realloc_failed(void)
{
	return st_realloc_failed;
}

/*
 * malloc() of the server's objects goes through this (test-service is
 * linked with -Wl,--wrap=malloc): the next of the size armed fails, of
 * any size when SIZE_MAX is.
 */
void	*__real_malloc(size_t);
void	*__wrap_malloc(size_t);
static size_t st_malloc_fail;

void *
__wrap_malloc(size_t size)
{
	if (st_malloc_fail != 0 && (size == st_malloc_fail ||
	    st_malloc_fail == SIZE_MAX)) {
		if (!st_alloc_keep)
			st_malloc_fail = 0;
		st_alloc_refused++;
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(size);
}

void
ts_malloc_fail(size_t size)
{
	st_malloc_fail = size;
}

bool
ts_malloc_armed(void)
{
	return st_malloc_fail != 0;
}

void
ts_alloc_keep(bool on)
{
	st_alloc_keep = on;
}

unsigned long
ts_alloc_refused(void)
{
	return st_alloc_refused;
}

/*
 * getsockopt() of the server goes through this (test-service is linked
 * with -Wl,--wrap=getsockopt): the next SO_PEERCRED fails once armed;
 * the next SO_PEERGROUPS that succeeds is made to fail once armed (one
 * that fails, ERANGE for a short buffer, is left alone: the retry with
 * a buffer large enough is the one that fails).
 */
int	__real_getsockopt(int, int, int, void *, socklen_t *);
int	__wrap_getsockopt(int, int, int, void *, socklen_t *);
static int st_peercred_fail;
static int st_peergroups_fail;

int
__wrap_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	int rc;

	if (st_peercred_fail != 0 && level == SOL_SOCKET &&
	    name == SO_PEERCRED) {
		errno = st_peercred_fail;
		st_peercred_fail = 0;
		return -1;
	}
	rc = __real_getsockopt(fd, level, name, val, len);
	if (rc == 0 && st_peergroups_fail != 0 && level == SOL_SOCKET &&
	    name == SO_PEERGROUPS) {
		errno = st_peergroups_fail;
		st_peergroups_fail = 0;
		return -1;
	}
	return rc;
}

void
ts_peergroups_fail(int err)
{
	st_peergroups_fail = err;
}

bool
ts_peergroups_armed(void)
{
	return st_peergroups_fail != 0;
}

void
ts_peercred_fail(int err)
{
	st_peercred_fail = err;
}

bool
ts_peercred_armed(void)
{
	return st_peercred_fail != 0;
}

void
ts_accepted(struct rpc_msg *rep, uint32_t xid, xdrproc_t proc, void *res)
{
	memset(rep, 0, sizeof(*rep));
	rep->rm_xid = xid;
	rep->rm_direction = REPLY;
	rep->rm_reply.rp_stat = MSG_ACCEPTED;
	rep->acpted_rply.ar_verf = _null_auth;
	rep->acpted_rply.ar_stat = SUCCESS;
	rep->acpted_rply.ar_results.where = (caddr_t)res;
	rep->acpted_rply.ar_results.proc = proc;
}

bool
ts_skip(void)
{
	if (ts_skip_reason() == NULL)
		return false;
	tests_skip(ts_skip_reason());
	return true;
}

/* Start everything, with the fake store holding what a test preloaded. */
/*
 * What nlmd logs (stderr) goes to st_log.f while st_log.saved != -1:
 * ts_log_begin() to ts_log_end().
 */
static struct {
	FILE			*f;
	int			 saved;
	unsigned long long	 ms;
} st_log = { NULL, -1, 0 };

static unsigned long long
st_log_clock(void)
{
	return st_log.ms += LOG_RL_WINDOW_MS;
}

/*
 * Stop a capture: stderr and the rate limiters' clock as they were.  The
 * file is left open for the caller to read and close.
 */
static void
st_log_stop(void)
{
	fflush(stderr);
	log_rl_set_clock(NULL);
	if (st_log.saved != -1) {
		(void)dup2(st_log.saved, STDERR_FILENO);
		close(st_log.saved);
		st_log.saved = -1;
	}
}

/*
 * A capture a test left open (a fatal assertion between ts_log_begin()
 * and ts_log_end()): its lines back to stderr, or the rest of the binary
 * would log into a file nobody reads.
 */
static void
st_log_abandoned(void)
{
	char buf[4096];
	size_t n;

	if (st_log.f == NULL)
		return;
	st_log_stop();
	rewind(st_log.f);
	while ((n = fread(buf, 1, sizeof(buf), st_log.f)) > 0)
		(void)fwrite(buf, 1, n, stderr);
	fclose(st_log.f);
	st_log.f = NULL;
}

void
ts_log_begin(void)
{
	st_log_abandoned();
	fflush(stderr);
	CU_ASSERT_FATAL((st_log.f = tmpfile()) != NULL);
	st_log.ms = tests_now_ms();
	log_rl_set_clock(st_log_clock);
	st_log.saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(st_log.saved != -1 &&
	    dup2(fileno(st_log.f), STDERR_FILENO) != -1);
}

void
ts_log_end(char *buf, size_t len)
{
	size_t n;

	st_log_stop();
	buf[0] = '\0';
	if (st_log.f == NULL)
		return;
	rewind(st_log.f);
	n = fread(buf, 1, len - 1, st_log.f);
	buf[n] = '\0';
	fclose(st_log.f);
	st_log.f = NULL;
	fputs(buf, stderr);
}

void
ts_start(enum nlm_cbmode cbmode, unsigned give_up_sec)
{
	char err[1024];

	CU_ASSERT_FATAL(ts_start_try(cbmode, give_up_sec, err,
	    sizeof(err)) == 0);
}

int
ts_start_try(enum nlm_cbmode cbmode, unsigned give_up_sec, char *ierr,
    size_t ierrlen)
{
	struct onc_srv_limits lim;
	struct nlm_config nc;
	uint64_t epoch;
	char err[256];

	/*
	 * A test whose fatal assertion failed never reached its ts_stop():
	 * stop what it left, or every later test failed here too, hiding
	 * which one had failed.  Likewise its ts_log_end(): what nlmd logs
	 * goes to stderr again (every test that makes nlmd log starts here).
	 */
	if (loop != NULL)
		ts_stop();
	st_log_abandoned();
	st_clock = 1000000;
	st_rpcb_verf = 0;
	st_nlm_registered = true;
	ev_set_clock(st_now);
	/*
	 * Every due timer runs in the turn it is due, however long the
	 * callbacks take on a busy machine: the tests count turns on the
	 * fake clock (a timer put off to the next turn moved its phase by
	 * the test's step, and a grace drain came 500 ms late, once in CI).
	 */
	ev_set_timers_turn_us(0);
	loop = ev_loop_new();
	memset(&lim, 0, sizeof(lim));
	lim.max_record = 65536;
	lim.max_conns = 64;
	lim.idle_sec = 600;
	srv = onc_srv_new(loop, &lim);
	clnt = onc_out_new(loop, 0, err, sizeof(err));
	CU_ASSERT_FATAL(srv != NULL && clnt != NULL);
	/* As nlmd does: the NSM begins the epoch (and SM_SIMU_CRASH's). */
	if (nsm_init(st_state_dir, fake_store(), &epoch, ierr, ierrlen) != 0) {
		onc_srv_free(srv);
		onc_out_free(clnt);
		ev_loop_free(loop);
		loop = NULL;
		srv = NULL;
		clnt = NULL;
		ev_set_clock(NULL);
		ev_set_timers_turn_us(EV_TIMERS_TURN_US);
		return -1;
	}
	memset(&nc, 0, sizeof(nc));
	nc.nc_max_name = 255;
	nc.nc_max_fh = 1024;
	nc.nc_max_oh = 1024;
	nc.nc_max_hosts = st_max_hosts;
	nc.nc_max_hosts_per_addr = st_max_hosts_per_addr;
	nc.nc_cbmode = cbmode;
	nc.nc_cb_retry_min_ms = st_cb_retry_min_ms;
	nc.nc_cb_retry_max_ms = st_cb_retry_max_ms;
	nc.nc_cb_give_up_sec = give_up_sec;
	nc.nc_cb_max_per_host = 100;
	nc.nc_epoch = epoch;
	nc.nc_grace_sec = 90;
	nc.nc_reclaim_check = LK_RECLAIM_CONFLICT;
	nc.nc_nsm_state = nsm_state();
	nc.nc_notify_give_up_sec = st_notify_give_up;
	nc.nc_host_idle_sec = 600;
	nc.nc_lk_alloc = st_lk_alloc;
	nc.nc_turn_changes = st_turn_changes;
	snprintf(nc.nc_notify_name, sizeof(nc.nc_notify_name), "%s",
	    st_notify_name);
	if (nlm_init(loop, clnt, fake_store(), &nc, ierr, ierrlen) != 0) {
		onc_srv_free(srv);
		onc_out_free(clnt);
		ev_loop_free(loop);
		loop = NULL;
		srv = NULL;
		clnt = NULL;
		ev_set_clock(NULL);
		ev_set_timers_turn_us(EV_TIMERS_TURN_US);
		return -1;
	}
	CU_ASSERT_FATAL(nlm_register(srv) == ONC_OK);
	CU_ASSERT_FATAL(nsm_register(srv) == ONC_OK);
	CU_ASSERT_FATAL(onc_srv_listen(srv, LO, 0, &srv_port, err,
	    sizeof(err)) == ONC_OK);
	ev_set_beforesleep(loop, st_hook, srv);
	rpcb_fd = st_udp(PMAPPORT);
	cb_fd = st_udp(0);
	cli_fd = st_udp(0);
	sm_fd = st_udp(0);
	CU_ASSERT_FATAL(rpcb_fd != -1 && cb_fd != -1 && cli_fd != -1 &&
	    sm_fd != -1);
	/* The load and grace start of nlm_init() are a turn of their own. */
	nlm_turn_end(srv);
	fake_send_reset();
	return 0;
}

void
ts_lk_alloc(const struct lk_allocator *al)
{
	st_lk_alloc = al;
}

void
ts_max_hosts(size_t n)
{
	st_max_hosts = n;
}

void
ts_max_hosts_per_addr(size_t n)
{
	st_max_hosts_per_addr = n;
}

void
ts_notify_name(const char *name)
{
	snprintf(st_notify_name, sizeof(st_notify_name), "%s", name);
}

void
ts_state_dir(const char *dir)
{
	snprintf(st_state_dir, sizeof(st_state_dir), "%s",
	    dir != NULL ? dir : "/nonexistent/nlmd-test");
}

void
ts_turn_changes(size_t n)
{
	st_turn_changes = n;
}

void
ts_cb_retry(unsigned min_ms, unsigned max_ms)
{
	st_cb_retry_min_ms = min_ms;
	st_cb_retry_max_ms = max_ms;
}

void
ts_notify_give_up(unsigned sec)
{
	st_notify_give_up = sec;
}

void
ts_stop(void)
{
	nlm_shutdown();
	onc_srv_free(srv);
	onc_out_free(clnt);
	ev_loop_free(loop);
	loop = NULL;
	srv = NULL;
	clnt = NULL;
	close(rpcb_fd);
	close(cb_fd);
	close(cli_fd);
	close(sm_fd);
	rpcb_fd = cb_fd = cli_fd = sm_fd = -1;
	fake_send_hook(NULL);
	ev_set_clock(NULL);
	ev_set_timers_turn_us(EV_TIMERS_TURN_US);
}

void
ts_advance(uint64_t ms)
{
	st_clock += ms;
}

/*
 * Answer one PMAP GETPORT on the fake rpcbind: the callback socket for
 * NLM, the status-monitor socket for NSM (0, "not registered", when
 * ts_nlm_registered(false) or ts_sm_registered(false)).
 */
static int
st_rpcb_serve(void)
{
	uint8_t buf[2048], out[256 + MAX_AUTH_BYTES];
	char verf[MAX_AUTH_BYTES];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	struct rpc_msg call, rep;
	struct pmap pm;
	u_long port;
	ssize_t n;
	XDR x;

	n = recvfrom(rpcb_fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
	    &fl);
	if (n <= 0)
		return 0;
	memset(&call, 0, sizeof(call));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	if (!xdr_callmsg(&x, &call) || !xdr_pmap(&x, &pm))
		return 1;
	st_lookups[pm.pm_prog == SM_PROG]++;
	(void)addr_str((const struct sockaddr *)&from, 0, st_rpcb_from,
	    sizeof(st_rpcb_from));
	if (pm.pm_prog == SM_PROG)
		port = st_sm_registered ? st_port_of(sm_fd) : 0;
	else
		port = st_nlm_registered ? st_port_of(cb_fd) : 0;
	memset(&rep, 0, sizeof(rep));
	rep.rm_xid = call.rm_xid;
	rep.rm_direction = REPLY;
	rep.rm_reply.rp_stat = MSG_ACCEPTED;
	rep.acpted_rply.ar_verf = _null_auth;
	if (st_rpcb_verf > 0) {
		memset(verf, 0xa5, sizeof(verf));
		rep.acpted_rply.ar_verf.oa_flavor = AUTH_SHORT;
		rep.acpted_rply.ar_verf.oa_base = verf;
		rep.acpted_rply.ar_verf.oa_length = st_rpcb_verf;
	}
	rep.acpted_rply.ar_stat = SUCCESS;
	rep.acpted_rply.ar_results.where = (caddr_t)&port;
	rep.acpted_rply.ar_results.proc = XDRPROC(xdr_u_long);
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(rpcb_fd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&from, fl);
	return 1;
}

struct ev_loop *
ts_loop(void)
{
	return loop;
}

struct onc_srv *
ts_srv(void)
{
	return srv;
}

void
ts_turn(void)
{
	(void)ev_run_once(loop, 0);
}

/*
 * Run the loop (and the fake rpcbind) until nothing happens for a bit:
 * three rounds in a row with nothing for the fake rpcbind, each round
 * waiting 1 ms at most for the loop's events (its timers follow the fake
 * clock: real time only lets the kernel deliver).
 */
void
ts_pump(void)
{
	int i, idle = 0;

	for (i = 0; i < 200 && idle < 3; i++) {
		struct pollfd p = { rpcb_fd, POLLIN, 0 };

		(void)ev_run_once(loop, 1);
		if (poll(&p, 1, 0) == 1 && st_rpcb_serve())
			idle = 0;
		else
			idle++;
	}
}

static size_t
st_enc_call_prog(uint8_t *buf, size_t cap, uint32_t xid, uint32_t prog,
    uint32_t vers, uint32_t proc, xdrproc_t xargs, const void *args)
{
	struct rpc_msg m;
	size_t len = 0;
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = prog;
	m.rm_call.cb_vers = vers;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	if (xdr_callmsg(&x, &m) && xargs(&x, (void *)(uintptr_t)args))
		len = xdr_getpos(&x);
	xdr_destroy(&x);
	return len;
}

static size_t
st_enc_call_vers(uint8_t *buf, size_t cap, uint32_t xid, uint32_t vers,
    uint32_t proc, xdrproc_t xargs, const void *args)
{
	return st_enc_call_prog(buf, cap, xid, NLM_PROG, vers, proc, xargs,
	    args);
}

static size_t
st_enc_call(uint8_t *buf, size_t cap, uint32_t xid, uint32_t proc,
    xdrproc_t xargs, const void *args)
{
	return st_enc_call_vers(buf, cap, xid, NLM4_VERS, proc, xargs, args);
}

/* Send an NLM v4 call over UDP; returns its xid. */
uint32_t
ts_send(uint32_t proc, xdrproc_t xargs, const void *args)
{
	return ts_send_vers(NLM4_VERS, proc, xargs, args);
}

/* Send an NLM call of version vers over UDP; returns its xid. */
uint32_t
ts_send_vers(uint32_t vers, uint32_t proc, xdrproc_t xargs, const void *args)
{
	return ts_send_prog(NLM_PROG, vers, proc, xargs, args);
}

uint32_t
ts_send_prog(uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xargs,
    const void *args)
{
	return ts_send_prog_fd(cli_fd, prog, vers, proc, xargs, args);
}

uint32_t
ts_send_from(const char *src, uint32_t proc, xdrproc_t xargs,
    const void *args)
{
	return ts_send_prog_from(src, NLM_PROG, NLM4_VERS, proc, xargs, args);
}

uint32_t
ts_send_prog_from(const char *src, uint32_t prog, uint32_t vers,
    uint32_t proc, xdrproc_t xargs, const void *args)
{
	struct sockaddr_in a;
	uint32_t xid;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CU_ASSERT_FATAL(fd != -1);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	inet_pton(AF_INET, src, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1) {
		close(fd);
		CU_FAIL_FATAL("cannot bind the other address");
	}
	xid = ts_send_prog_fd(fd, prog, vers, proc, xargs, args);
	close(fd);
	return xid;
}

int
ts_priv_socket(void)
{
	uint16_t port;
	int fd;

	for (port = 1023; port >= 600; port--)
		if ((fd = st_udp(port)) != -1)
			return fd;
	return -1;
}

uint32_t
ts_send_prog_fd(int fd, uint32_t prog, uint32_t vers, uint32_t proc,
    xdrproc_t xargs, const void *args)
{
	struct sockaddr_in a;
	uint8_t buf[4096];
	uint32_t xid = ++st_xid;
	size_t len = st_enc_call_prog(buf, sizeof(buf), xid, prog, vers, proc,
	    xargs, args);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)srv_port);
	inet_pton(AF_INET, LO, &a.sin_addr);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT(sendto(fd, buf, len, 0, (struct sockaddr *)&a,
	    sizeof(a)) == (ssize_t)len);
	return xid;
}

/* A TCP connection to the server (the loop accepts it at its next turn). */
int
ts_tcp_connect(void)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)srv_port);
	inet_pton(AF_INET, LO, &a.sin_addr);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	return fd;
}

/* Append an NLM v4 call as one record (mark, message) to buf; its xid. */
uint32_t
ts_tcp_record(uint8_t *buf, size_t cap, size_t *lenp, uint32_t proc,
    xdrproc_t xargs, const void *args)
{
	uint32_t mark;
	size_t len;

	CU_ASSERT_FATAL(cap - *lenp > 4);
	len = st_enc_call(buf + *lenp + 4, cap - *lenp - 4, ++st_xid, proc,
	    xargs, args);
	CU_ASSERT_FATAL(len > 0);
	mark = htonl(0x80000000u | (uint32_t)len);
	memcpy(buf + *lenp, &mark, 4);
	*lenp += 4 + len;
	return st_xid;
}

/* A TCP connection to the server and one call on it; returns the fd. */
int
ts_send_tcp(uint32_t proc, xdrproc_t xargs, const void *args,
    uint32_t *xidp)
{
	uint8_t buf[4096];
	size_t len = 0;
	int fd = ts_tcp_connect();

	*xidp = ts_tcp_record(buf, sizeof(buf), &len, proc, xargs, args);
	CU_ASSERT(write(fd, buf, len) == (ssize_t)len);
	return fd;
}

ssize_t
ts_recv(void *buf, size_t cap)
{
	struct pollfd p = { cli_fd, POLLIN, 0 };

	if (poll(&p, 1, TS_WAIT_MS) != 1)
		return -1;
	return recv(cli_fd, buf, cap, 0);
}

int
ts_recv_result(xdrproc_t xres, void *res)
{
	return ts_recv_result_fd(cli_fd, xres, res);
}

int
ts_recv_result_fd(int fd, xdrproc_t xres, void *res)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint8_t buf[4096];
	struct rpc_msg m;
	ssize_t n;
	XDR x;
	int ok;

	if (poll(&p, 1, TS_WAIT_MS) != 1 ||
	    (n = recv(fd, buf, sizeof(buf), 0)) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.acpted_rply.ar_results.where = (caddr_t)res;
	m.acpted_rply.ar_results.proc = xres;
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	ok = xdr_replymsg(&x, &m) && m.rm_reply.rp_stat == MSG_ACCEPTED &&
	    m.acpted_rply.ar_stat == SUCCESS;
	xdr_destroy(&x);
	return ok ? 0 : -1;
}

int
ts_drain(void)
{
	uint8_t buf[4096];
	int n = 0;

	while (recv(cli_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/* Read one nlm4_res reply from fd (UDP, or TCP with stream set). */
int
ts_reply(int fd, bool stream, nlm4_res *res)
{
	uint8_t buf[4096];
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;
	size_t off = stream ? 4 : 0;

	if (fd == -1)
		fd = cli_fd;
	p.fd = fd;
	memset(res, 0, sizeof(*res));
	if (poll(&p, 1, TS_WAIT_MS) != 1 ||
	    (n = recv(fd, buf, sizeof(buf), 0)) <= (ssize_t)off)
		return -1;
	return ts_decode_reply(buf + off, (size_t)n - off, NULL, res);
}

int
ts_decode_reply(const uint8_t *buf, size_t len, uint32_t *xidp,
    nlm4_res *res)
{
	struct rpc_msg m;
	XDR x;
	int ok;

	memset(&m, 0, sizeof(m));
	memset(res, 0, sizeof(*res));
	m.acpted_rply.ar_results.where = (caddr_t)res;
	m.acpted_rply.ar_results.proc = XDRPROC(xdr_nlm4_res);
	xdrmem_create(&x, (char *)(uintptr_t)buf, (u_int)len, XDR_DECODE);
	ok = xdr_replymsg(&x, &m);
	xdr_destroy(&x);
	if (ok && xidp != NULL)
		*xidp = m.rm_xid;
	return ok ? 0 : -1;
}

/* Read one call arriving at the client's NLM; returns its procedure. */
int
ts_callback(nlm4_testargs *args, nlm4_res *res)
{
	uint8_t buf[4096];
	struct rpc_msg m;
	struct pollfd p = { cb_fd, POLLIN, 0 };
	ssize_t n;
	XDR x;
	int proc = -1;

	if (poll(&p, 1, TS_WAIT_MS) != 1 ||
	    (n = recv(cb_fd, buf, sizeof(buf), 0)) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	if (xdr_callmsg(&x, &m)) {
		proc = (int)m.rm_call.cb_proc;
		if (proc == NLMPROC4_GRANTED_MSG && args != NULL) {
			memset(args, 0, sizeof(*args));
			if (!xdr_nlm4_testargs(&x, args))
				proc = -1;
		} else if (proc == NLMPROC4_LOCK_RES && res != NULL) {
			memset(res, 0, sizeof(*res));
			if (!xdr_nlm4_res(&x, res))
				proc = -1;
		}
	}
	xdr_destroy(&x);
	return proc;
}

/*
 * Take the next call at the client's NLM and answer it with an nlm4_res
 * of status `st' (its cookie echoed), as a client answers a synchronous
 * GRANTED.  Its procedure, -1 when none came.
 */
int
ts_callback_answer(nlm4_stats st)
{
	struct ts_call c;
	int proc;

	if ((proc = ts_callback_take(&c)) != -1)
		ts_callback_reply(&c, st);
	return proc;
}

int
ts_callback_take(struct ts_call *c)
{
	uint8_t buf[4096];
	struct pollfd p = { cb_fd, POLLIN, 0 };
	struct rpc_msg m;
	ssize_t n;
	XDR x;

	memset(c, 0, sizeof(*c));
	c->tc_fromlen = sizeof(c->tc_from);
	if (poll(&p, 1, TS_WAIT_MS) != 1 || (n = recvfrom(cb_fd, buf, sizeof(buf), 0,
	    (struct sockaddr *)&c->tc_from, &c->tc_fromlen)) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	if (!xdr_callmsg(&x, &m) || !xdr_nlm4_testargs(&x, &c->tc_args)) {
		xdr_destroy(&x);
		xdr_free(XDRPROC(xdr_nlm4_testargs), (char *)&c->tc_args);
		memset(c, 0, sizeof(*c));
		return -1;
	}
	xdr_destroy(&x);
	c->tc_xid = m.rm_xid;
	c->tc_proc = (int)m.rm_call.cb_proc;
	return c->tc_proc;
}

void
ts_callback_reply(struct ts_call *c, nlm4_stats st)
{
	uint8_t out[1024];
	struct rpc_msg rep;
	nlm4_res res;
	XDR x;

	memset(&res, 0, sizeof(res));
	res.cookie = c->tc_args.cookie;
	res.stat.stat = st;
	ts_accepted(&rep, c->tc_xid, XDRPROC(xdr_nlm4_res), &res);
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(cb_fd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&c->tc_from, c->tc_fromlen);
	xdr_destroy(&x);
	xdr_free(XDRPROC(xdr_nlm4_testargs), (char *)&c->tc_args);
	memset(c, 0, sizeof(*c));
}

/*
 * Take the next call at the client's NLM and reply to it with an empty
 * (void) result, as a client's NLM replies to a GRANTED_MSG before its
 * GRANTED_RES; its arguments in *args (free with
 * xdr_free(xdr_nlm4_testargs)).  Its procedure, -1 when none came.
 */
int
ts_callback_void(nlm4_testargs *args)
{
	uint8_t buf[4096], out[1024];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct pollfd p = { cb_fd, POLLIN, 0 };
	struct rpc_msg m, rep;
	ssize_t n;
	XDR x;
	int proc = -1;

	memset(args, 0, sizeof(*args));
	if (poll(&p, 1, TS_WAIT_MS) != 1 || (n = recvfrom(cb_fd, buf, sizeof(buf), 0,
	    (struct sockaddr *)&from, &fl)) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	if (!xdr_callmsg(&x, &m) || !xdr_nlm4_testargs(&x, args)) {
		xdr_destroy(&x);
		return -1;
	}
	proc = (int)m.rm_call.cb_proc;
	ts_accepted(&rep, m.rm_xid, XDRPROC(xdr_void), NULL);
	xdr_destroy(&x);
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(cb_fd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&from, fl);
	xdr_destroy(&x);
	return proc;
}

/*
 * Take the next call at the client's NLM, whatever its arguments, and
 * reply to it with an accepted reply of status `st' (SUCCESS: an empty,
 * void result); its procedure, -1 when none came.
 */
int
ts_callback_status(enum accept_stat st)
{
	uint8_t buf[4096], out[1024];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct pollfd p = { cb_fd, POLLIN, 0 };
	struct rpc_msg m, rep;
	ssize_t n;
	XDR x;
	bool ok;

	if (poll(&p, 1, TS_WAIT_MS) != 1 || (n = recvfrom(cb_fd, buf,
	    sizeof(buf), 0, (struct sockaddr *)&from, &fl)) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	ok = xdr_callmsg(&x, &m);
	xdr_destroy(&x);
	if (!ok)
		return -1;
	ts_accepted(&rep, m.rm_xid, XDRPROC(xdr_void), NULL);
	rep.acpted_rply.ar_stat = st;
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(cb_fd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&from, fl);
	xdr_destroy(&x);
	return (int)m.rm_call.cb_proc;
}

/*
 * Take the next call at the client's NLM, whatever its arguments, and
 * reply to it with an empty (void) result, as Linux lockd answers a _RES;
 * its procedure, -1 when none came.
 */
int
ts_callback_ack(void)
{
	return ts_callback_status(SUCCESS);
}

/*
 * The next call at the client's NLM, unanswered, as it came: its bytes in
 * buf[0..cap), their number returned (-1: none came).
 */
ssize_t
ts_callback_raw(void *buf, size_t cap)
{
	struct pollfd p = { cb_fd, POLLIN, 0 };

	if (poll(&p, 1, TS_WAIT_MS) != 1)
		return -1;
	return recv(cb_fd, buf, cap, 0);
}

/*
 * Take the next call at the client's NLM as a version 1/3 GRANTED and
 * answer it with an nlm_res of status `st' (its cookie echoed); its
 * version in *vers.  Its procedure, -1 when none came.
 */
int
ts_callback_answer_v1(nlm_stats st, uint32_t *vers)
{
	uint8_t buf[4096], out[1024];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct pollfd p = { cb_fd, POLLIN, 0 };
	struct rpc_msg m, rep;
	nlm_testargs a;
	nlm_res res;
	ssize_t n;
	XDR x;
	bool ok;

	if (poll(&p, 1, TS_WAIT_MS) != 1 || (n = recvfrom(cb_fd, buf,
	    sizeof(buf), 0, (struct sockaddr *)&from, &fl)) <= 0)
		return -1;
	memset(&m, 0, sizeof(m));
	memset(&a, 0, sizeof(a));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	ok = xdr_callmsg(&x, &m) && xdr_nlm_testargs(&x, &a);
	xdr_destroy(&x);
	if (!ok) {
		xdr_free(XDRPROC(xdr_nlm_testargs), (char *)&a);
		return -1;
	}
	*vers = m.rm_call.cb_vers;
	memset(&res, 0, sizeof(res));
	res.cookie = a.cookie;
	res.stat.stat = st;
	ts_accepted(&rep, m.rm_xid, XDRPROC(xdr_nlm_res), &res);
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(cb_fd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&from, fl);
	xdr_destroy(&x);
	xdr_free(XDRPROC(xdr_nlm_testargs), (char *)&a);
	return (int)m.rm_call.cb_proc;
}

/* No more calls waiting at the client's NLM? */
bool
ts_no_callback(void)
{
	struct pollfd p = { cb_fd, POLLIN, 0 };

	return poll(&p, 1, TS_WAIT_MS) == 0;
}

uint16_t
ts_cb_port(void)
{
	return st_port_of(cb_fd);
}

void
ts_cb_rebind(void)
{
	int fd = st_udp(0);

	CU_ASSERT_FATAL(fd != -1);
	close(cb_fd);
	cb_fd = fd;
}

unsigned
ts_nlm_lookups(void)
{
	return st_lookups[0];
}

uint16_t
ts_cli_port(void)
{
	return st_port_of(cli_fd);
}

/* ---- the client's status monitor ---- */

struct onc_out *
ts_clnt(void)
{
	return clnt;
}

void
ts_rpcb_verifier(unsigned len)
{
	st_rpcb_verf = len < MAX_AUTH_BYTES ? len : MAX_AUTH_BYTES;
}

void
ts_nlm_registered(bool on)
{
	st_nlm_registered = on;
}

void
ts_sm_registered(bool on)
{
	st_sm_registered = on;
}

uint16_t
ts_sm_port(void)
{
	return (uint16_t)st_port_of(sm_fd);
}

unsigned
ts_sm_lookups(void)
{
	return st_lookups[1];
}

const char *
ts_sm_notify_from(void)
{
	return st_sm_from;
}

const char *
ts_rpcb_from(void)
{
	return st_rpcb_from;
}

int
ts_sm_notify(struct stat_chge *sc, bool answer)
{
	uint8_t buf[2048], out[256];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct rpc_msg call, rep;
	ssize_t n;
	XDR x;
	int ok;

	n = recvfrom(sm_fd, buf, sizeof(buf), MSG_DONTWAIT,
	    (struct sockaddr *)&from, &fl);
	if (n <= 0)
		return -1;
	memset(&call, 0, sizeof(call));
	memset(sc, 0, sizeof(*sc));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	ok = xdr_callmsg(&x, &call) && call.rm_call.cb_prog == SM_PROG &&
	    call.rm_call.cb_vers == SM_VERS &&
	    call.rm_call.cb_proc == SM_NOTIFY && xdr_stat_chge(&x, sc);
	xdr_destroy(&x);
	if (!ok)
		return -1;
	(void)addr_str((const struct sockaddr *)&from, 0, st_sm_from,
	    sizeof(st_sm_from));
	if (!answer)
		return 0;
	ts_accepted(&rep, call.rm_xid, XDRPROC(xdr_void), NULL);
	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (xdr_replymsg(&x, &rep))
		(void)sendto(sm_fd, out, xdr_getpos(&x), 0,
		    (struct sockaddr *)&from, fl);
	xdr_destroy(&x);
	return 0;
}

unsigned
ts_notified(const char *name, int32_t state)
{
	struct sockaddr_in lo;
	unsigned n;

	memset(&lo, 0, sizeof(lo));
	lo.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
	n = nlm_host_notified(name, state, (struct sockaddr *)&lo,
	    sizeof(lo), NULL);
	ts_pump();
	return n;
}

/*
 * The value of one series of nlm_metrics()'s exposition, e.g.
 * `nlmd_host_restarts_total{how="free_all"}'; -1 when it is not there.
 */
double
ts_metric(const char *series)
{
	struct sbuf sb;
	const char *p;
	char key[128];
	double v = -1;

	/* Not the first line: that is a HELP line. */
	snprintf(key, sizeof(key), "\n%s ", series);
	memset(&sb, 0, sizeof(sb));
	nlm_metrics(&sb);
	if (sb.sb_buf != NULL && (p = strstr(sb.sb_buf, key)) != NULL)
		v = strtod(p + strlen(key), NULL);
	sbuf_free(&sb);
	return v;
}
