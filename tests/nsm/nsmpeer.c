/*
 * nsmpeer.c - the other side of nlmd's status monitor, for
 * tests/integration/test_nsm.sh: a client that locks, notifies and
 * monitors, a callback receiver for rpc.statd, a stand-in status monitor
 * that answers SM_NOTIFY, and a port that never answers.  Built on
 * libtirpc (clnt_create, svc_create); every verdict is an exit status and
 * one line on stdout.
 *
 *   nsmpeer lock SERVER NAME FH OFF LEN [STATE [reclaim|block]]
 *           NLM v4 LOCK (udp), owner "oh-NAME", svid 1: exit 0 granted,
 *           1 denied, 3 blocked, 2 anything else (printed)
 *   nsmpeer lockmsg SERVER NAME N
 *           N LOCK_MSG calls (no reply expected: the answer is a
 *           LOCK_RES call to this host's NLM), 2 ms apart
 *   nsmpeer sharemany SERVER NAME N
 *           N SHAREs (read, deny none) by host NAME on files NAME-0 ..:
 *           prints how many were granted and the first other status
 *   nsmpeer unlock SERVER NAME FH OFF LEN
 *           NLM v4 UNLOCK of that owner's range: exit 0 granted
 *   nsmpeer cbrecv SECONDS
 *           register NLM v4 (udp) with the local rpcbind and answer one
 *           synchronous GRANTED callback (granted): prints "granted NAME
 *           FH OFF LEN"
 *   nsmpeer ctlraw PATH
 *           send stdin as it is to the Unix socket PATH, print the answer
 *           (a server that answers and closes before it has read all of
 *           stdin, as nlmd does an oversized request, ends the sending:
 *           what it answered is printed all the same)
 *   nsmpeer lockmany SERVER PREFIX N FH [reclaim]
 *           hosts PREFIX0 .. PREFIX<N-1> each lock byte i of FH: exit 0
 *           when every one is granted; prints the time it took
 *   nsmpeer lockrange SERVER NAME FH N STATE
 *           host NAME (one owner) locks bytes 0, 2, .. 2(N-1) of FH with
 *           NSM state STATE: exit 0 when every one is granted
 *   nsmpeer test SERVER NAME FH OFF LEN
 *           NLM v4 TEST by a fresh owner: exit 0 free, 1 held, 2 error
 *   nsmpeer notify SERVER MON_NAME STATE
 *           SM_NOTIFY to SERVER's status monitor (through its rpcbind)
 *   nsmpeer stat SERVER
 *           SM_STAT: prints "state N" (SERVER's state number) and
 *           "res_stat succ|fail"
 *   nsmpeer simucrash SERVER
 *           SM_SIMU_CRASH to SERVER's status monitor (as root: from a
 *           reserved port)
 *   nsmpeer mon MON_NAME PROG VERS PROC
 *           SM_MON to the status monitor on 127.0.0.1: call PROG VERS
 *           PROC on this host when MON_NAME restarts; exit 0 accepted
 *   nsmpeer receive PROG VERS SECONDS [COUNT]
 *           register PROG VERS (udp) with the local rpcbind and wait for
 *           COUNT (default 1) status callbacks: prints "callback MON_NAME
 *           STATE priv PRIV" per callback
 *   nsmpeer statd COUNT SECONDS
 *           register the status program (100024 v1, udp) with the local
 *           rpcbind and answer SM_NOTIFY: prints "notify MS MON_NAME
 *           STATE" per call (MS: since start), exits after COUNT
 *   nsmpeer sink PORT SECONDS
 *           a UDP port that reads and never answers: prints "datagram MS"
 *           per datagram
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/pmap_clnt.h>

#include "rpc/nlm_prot.h"
#include "rpc/sm_inter.h"

#define XP(fn)	((xdrproc_t)(void (*)(void))(fn))

static struct timespec t_start;

static unsigned long
ms_since_start(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long)((t.tv_sec - t_start.tv_sec) * 1000 +
	    (t.tv_nsec - t_start.tv_nsec) / 1000000);
}

static CLIENT *
peer(const char *host, unsigned long prog, unsigned long vers)
{
	struct timeval tv = { 2, 0 };
	CLIENT *c;

	if ((c = clnt_create(host, prog, vers, "udp")) == NULL) {
		printf("error: %s\n", clnt_spcreateerror(host));
		exit(2);
	}
	(void)clnt_control(c, CLSET_RETRY_TIMEOUT, (char *)&tv);
	return c;
}

static const char *
nlm4_stat_name(nlm4_stats s)
{
	static const char *const n[] = { "GRANTED", "DENIED",
	    "DENIED_NOLOCKS", "BLOCKED", "DENIED_GRACE_PERIOD", "DEADLCK",
	    "ROFS", "STALE_FH", "FBIG", "FAILED" };

	return (unsigned)s < 10 ? n[s] : "?";
}

static void
lockargs(nlm4_lockargs *a, char *name, char *oh, char *fh, uint64_t off,
    uint64_t len, int state, int reclaim)
{
	memset(a, 0, sizeof(*a));
	a->exclusive = 1;
	a->alock.caller_name = name;
	a->alock.fh.nlm_netobj_len = (u_int)strlen(fh);
	a->alock.fh.nlm_netobj_val = fh;
	a->alock.oh.nlm_netobj_len = (u_int)strlen(oh);
	a->alock.oh.nlm_netobj_val = oh;
	a->alock.svid = 1;
	a->alock.l_offset = off;
	a->alock.l_len = len;
	a->reclaim = reclaim;
	a->state = state;
}

static int
do_lock(CLIENT *c, char *name, char *fh, uint64_t off, uint64_t len,
    int state, int reclaim, int quiet, int block)
{
	struct timeval tmo = { 10, 0 };
	char oh[300];
	nlm4_lockargs a;
	nlm4_res r;
	enum clnt_stat cs;

	snprintf(oh, sizeof(oh), "oh-%s", name);
	lockargs(&a, name, oh, fh, off, len, state, reclaim);
	a.block = block;
	memset(&r, 0, sizeof(r));
	cs = clnt_call(c, NLMPROC4_LOCK, XP(xdr_nlm4_lockargs), (char *)&a,
	    XP(xdr_nlm4_res), (char *)&r, tmo);
	if (cs != RPC_SUCCESS) {
		printf("error: LOCK: %s\n", clnt_sperrno(cs));
		return 2;
	}
	if (!quiet || r.stat.stat != NLM4_GRANTED)
		printf("LOCK %s [%llu,+%llu) %s: %s\n", name,
		    (unsigned long long)off, (unsigned long long)len,
		    reclaim ? "(reclaim)" : "", nlm4_stat_name(r.stat.stat));
	return r.stat.stat == NLM4_GRANTED ? 0 :
	    r.stat.stat == NLM4_DENIED ? 1 :
	    r.stat.stat == NLM4_BLOCKED ? 3 : 2;
}

static int
cmd_unlock(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	nlm4_unlockargs a;
	nlm4_lockargs la;
	nlm4_res r;
	enum clnt_stat cs;
	char oh[300];

	if (argc < 6)
		return 2;
	snprintf(oh, sizeof(oh), "oh-%s", argv[2]);
	lockargs(&la, argv[2], oh, argv[3], strtoull(argv[4], NULL, 0),
	    strtoull(argv[5], NULL, 0), 0, 0);
	memset(&a, 0, sizeof(a));
	a.alock = la.alock;
	memset(&r, 0, sizeof(r));
	cs = clnt_call(peer(argv[1], NLM_PROG, NLM4_VERS), NLMPROC4_UNLOCK,
	    XP(xdr_nlm4_unlockargs), (char *)&a, XP(xdr_nlm4_res), (char *)&r,
	    tmo);
	if (cs != RPC_SUCCESS) {
		printf("error: UNLOCK: %s\n", clnt_sperrno(cs));
		return 2;
	}
	printf("UNLOCK %s: %s\n", argv[2], nlm4_stat_name(r.stat.stat));
	return r.stat.stat == NLM4_GRANTED ? 0 : 1;
}

static int
cmd_lockmsg(int argc, char **argv)
{
	struct timeval zero = { 0, 1000 };	/* send, do not wait */
	char oh[300], fh[] = "f-msg";
	nlm4_lockargs a;
	CLIENT *c;
	int i, n;

	if (argc < 4)
		return 2;
	c = peer(argv[1], NLM_PROG, NLM4_VERS);
	n = atoi(argv[3]);
	snprintf(oh, sizeof(oh), "oh-%s", argv[2]);
	for (i = 0; i < n; i++) {
		lockargs(&a, argv[2], oh, fh, (uint64_t)i, 1, 1, 0);
		(void)clnt_call(c, NLMPROC4_LOCK_MSG, XP(xdr_nlm4_lockargs),
		    (char *)&a, XP(xdr_void), NULL, zero);
		usleep(2000);
	}
	printf("lockmsg: %d sent\n", n);
	return 0;
}

static int
cmd_sharemany(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	nlm4_shareargs a;
	nlm4_shareres r;
	enum clnt_stat cs;
	char fh[300], oh[300];
	int i, n, ok = 0, other = -1;
	CLIENT *c;

	if (argc < 4)
		return 2;
	c = peer(argv[1], NLM_PROG, NLM4_VERS);
	n = atoi(argv[3]);
	snprintf(oh, sizeof(oh), "oh-%s", argv[2]);
	for (i = 0; i < n; i++) {
		snprintf(fh, sizeof(fh), "%s-%d", argv[2], i);
		memset(&a, 0, sizeof(a));
		a.share.caller_name = argv[2];
		a.share.fh.nlm_netobj_len = (u_int)strlen(fh);
		a.share.fh.nlm_netobj_val = fh;
		a.share.oh.nlm_netobj_len = (u_int)strlen(oh);
		a.share.oh.nlm_netobj_val = oh;
		a.share.mode = fsm_DN;
		a.share.access = fsa_R;
		memset(&r, 0, sizeof(r));
		cs = clnt_call(c, NLMPROC4_SHARE, XP(xdr_nlm4_shareargs),
		    (char *)&a, XP(xdr_nlm4_shareres), (char *)&r, tmo);
		if (cs != RPC_SUCCESS) {
			printf("error: SHARE: %s\n", clnt_sperrno(cs));
			return 2;
		}
		if (r.stat == NLM4_GRANTED)
			ok++;
		else if (other == -1)
			other = (int)r.stat;
	}
	printf("sharemany: %d of %d granted%s%s\n", ok, n,
	    other >= 0 ? ", then " : "", other >= 0 ?
	    nlm4_stat_name((nlm4_stats)other) : "");
	return ok == n ? 0 : 1;
}

static int
cmd_lock(int argc, char **argv)
{
	if (argc < 6)
		return 2;
	return do_lock(peer(argv[1], NLM_PROG, NLM4_VERS), argv[2], argv[3],
	    strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0),
	    argc > 6 ? atoi(argv[6]) : 0, argc > 7 &&
	    strcmp(argv[7], "reclaim") == 0, 0, argc > 7 &&
	    strcmp(argv[7], "block") == 0);
}

static int
cmd_lockmany(int argc, char **argv)
{
	CLIENT *c;
	char name[256];
	int i, n, reclaim, bad = 0;

	if (argc < 5)
		return 2;
	c = peer(argv[1], NLM_PROG, NLM4_VERS);
	n = atoi(argv[3]);
	reclaim = argc > 5 && strcmp(argv[5], "reclaim") == 0;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", argv[2], i);
		if (do_lock(c, name, argv[4], (uint64_t)i, 1, 1, reclaim, 1, 0))
			bad++;
	}
	printf("lockmany: %d of %d granted in %lu ms\n", n - bad, n,
	    ms_since_start());
	fflush(stdout);
	return bad == 0 ? 0 : 1;
}

static int
cmd_lockrange(int argc, char **argv)
{
	CLIENT *c;
	int i, n, state, bad = 0;

	if (argc < 6)
		return 2;
	c = peer(argv[1], NLM_PROG, NLM4_VERS);
	n = atoi(argv[4]);
	state = atoi(argv[5]);
	for (i = 0; i < n; i++)
		if (do_lock(c, argv[2], argv[3], (uint64_t)i * 2, 1, state, 0,
		    1, 0))
			bad++;
	printf("lockrange: %d of %d granted in %lu ms\n", n - bad, n,
	    ms_since_start());
	fflush(stdout);
	return bad == 0 ? 0 : 1;
}

static int
cmd_test(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	nlm4_testargs a;
	nlm4_testres r;
	enum clnt_stat cs;
	char oh[] = "oh-tester";
	CLIENT *c;

	if (argc < 6)
		return 2;
	c = peer(argv[1], NLM_PROG, NLM4_VERS);
	memset(&a, 0, sizeof(a));
	a.exclusive = 1;
	a.alock.caller_name = argv[2];
	a.alock.fh.nlm_netobj_len = (u_int)strlen(argv[3]);
	a.alock.fh.nlm_netobj_val = argv[3];
	a.alock.oh.nlm_netobj_len = (u_int)strlen(oh);
	a.alock.oh.nlm_netobj_val = oh;
	a.alock.svid = 999;
	a.alock.l_offset = strtoull(argv[4], NULL, 0);
	a.alock.l_len = strtoull(argv[5], NULL, 0);
	memset(&r, 0, sizeof(r));
	cs = clnt_call(c, NLMPROC4_TEST, XP(xdr_nlm4_testargs), (char *)&a,
	    XP(xdr_nlm4_testres), (char *)&r, tmo);
	if (cs != RPC_SUCCESS) {
		printf("error: TEST: %s\n", clnt_sperrno(cs));
		return 2;
	}
	printf("TEST [%s,+%s): %s\n", argv[4], argv[5],
	    nlm4_stat_name(r.test_stat.stat));
	return r.test_stat.stat == NLM4_GRANTED ? 0 :
	    r.test_stat.stat == NLM4_DENIED ? 1 : 2;
}

static int
cmd_notify(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	struct stat_chge sc;
	enum clnt_stat cs;
	CLIENT *c;

	if (argc < 4)
		return 2;
	c = peer(argv[1], SM_PROG, SM_VERS);
	sc.mon_name = argv[2];
	sc.state = atoi(argv[3]);
	cs = clnt_call(c, SM_NOTIFY, XP(xdr_stat_chge), (char *)&sc,
	    XP(xdr_void), NULL, tmo);
	printf("SM_NOTIFY %s state %d: %s\n", sc.mon_name, sc.state,
	    clnt_sperrno(cs));
	return cs == RPC_SUCCESS ? 0 : 2;
}

static int
cmd_stat(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	struct sm_stat_res r;
	enum clnt_stat cs;
	sm_name n;

	if (argc < 2)
		return 2;
	n.mon_name = (char *)"nsmpeer";
	memset(&r, 0, sizeof(r));
	cs = clnt_call(peer(argv[1], SM_PROG, SM_VERS), SM_STAT,
	    XP(xdr_sm_name), (char *)&n, XP(xdr_sm_stat_res), (char *)&r, tmo);
	if (cs != RPC_SUCCESS) {
		printf("error: SM_STAT: %s\n", clnt_sperrno(cs));
		return 2;
	}
	printf("state %d\nres_stat %s\n", r.state,
	    r.res_stat == stat_succ ? "succ" : "fail");
	return 0;
}

static int
cmd_simucrash(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	enum clnt_stat cs;

	if (argc < 2)
		return 2;
	cs = clnt_call(peer(argv[1], SM_PROG, SM_VERS), SM_SIMU_CRASH,
	    XP(xdr_void), NULL, XP(xdr_void), NULL, tmo);
	printf("SM_SIMU_CRASH: %s\n", clnt_sperrno(cs));
	return cs == RPC_SUCCESS ? 0 : 2;
}

static int
cmd_mon(int argc, char **argv)
{
	struct timeval tmo = { 10, 0 };
	struct sm_stat_res r;
	enum clnt_stat cs;
	struct mon m;
	CLIENT *c;

	if (argc < 5)
		return 2;
	c = peer("127.0.0.1", SM_PROG, SM_VERS);
	memset(&m, 0, sizeof(m));
	m.mon_id.mon_name = argv[1];
	m.mon_id.my_id.my_name = (char *)"127.0.0.1";
	m.mon_id.my_id.my_prog = atoi(argv[2]);
	m.mon_id.my_id.my_vers = atoi(argv[3]);
	m.mon_id.my_id.my_proc = atoi(argv[4]);
	memcpy(m.priv, "nsmpeer-priv-16b", 16);
	memset(&r, 0, sizeof(r));
	cs = clnt_call(c, SM_MON, XP(xdr_mon), (char *)&m,
	    XP(xdr_sm_stat_res), (char *)&r, tmo);
	if (cs != RPC_SUCCESS) {
		printf("error: SM_MON: %s\n", clnt_sperrno(cs));
		return 2;
	}
	printf("SM_MON %s: %s, state %d\n", argv[1],
	    r.res_stat == stat_succ ? "accepted" : "refused", r.state);
	return r.res_stat == stat_succ ? 0 : 1;
}

/* ---- servers ---- */

static unsigned long srv_count, srv_want;

static void
receive_dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	struct sm_status st;

	if (rq->rq_proc == 0) {
		(void)svc_sendreply(xp, XP(xdr_void), NULL);
		return;
	}
	memset(&st, 0, sizeof(st));
	if (!svc_getargs(xp, XP(xdr_sm_status), (char *)&st)) {
		svcerr_decode(xp);
		return;
	}
	(void)svc_sendreply(xp, XP(xdr_void), NULL);
	printf("callback %s %d priv %.16s\n", st.mon_name, st.state,
	    st.priv);
	fflush(stdout);
	(void)svc_freeargs(xp, XP(xdr_sm_status), (char *)&st);
	if (++srv_count >= srv_want)
		exit(0);
}

static void
statd_dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	struct stat_chge sc;

	if (rq->rq_proc != SM_NOTIFY) {
		svcerr_noproc(xp);
		return;
	}
	memset(&sc, 0, sizeof(sc));
	if (!svc_getargs(xp, XP(xdr_stat_chge), (char *)&sc)) {
		svcerr_decode(xp);
		return;
	}
	(void)svc_sendreply(xp, XP(xdr_void), NULL);
	printf("notify %lu %s %d\n", ms_since_start(), sc.mon_name, sc.state);
	fflush(stdout);
	(void)svc_freeargs(xp, XP(xdr_stat_chge), (char *)&sc);
	if (++srv_count >= srv_want)
		exit(0);
}

static void
granted_dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	nlm4_testargs a;
	nlm4_res r;

	if (rq->rq_proc == 0) {
		(void)svc_sendreply(xp, XP(xdr_void), NULL);
		return;
	}
	if (rq->rq_proc != NLMPROC4_GRANTED) {
		svcerr_noproc(xp);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (!svc_getargs(xp, XP(xdr_nlm4_testargs), (char *)&a)) {
		svcerr_decode(xp);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.cookie = a.cookie;
	r.stat.stat = NLM4_GRANTED;
	(void)svc_sendreply(xp, XP(xdr_nlm4_res), (char *)&r);
	printf("granted %s %.*s %llu %llu\n", a.alock.caller_name,
	    (int)a.alock.fh.nlm_netobj_len, a.alock.fh.nlm_netobj_val,
	    (unsigned long long)a.alock.l_offset,
	    (unsigned long long)a.alock.l_len);
	fflush(stdout);
	exit(0);
}

static int
cmd_ctlraw(int argc, char **argv)
{
	struct sockaddr_un sun;
	char buf[65536];
	ssize_t n;
	int fd;

	if (argc < 2 || strlen(argv[1]) >= sizeof(sun.sun_path))
		return 2;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, argv[1], strlen(argv[1]));
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		perror("ctlraw");
		return 2;
	}
	/* EPIPE, not death, when the server closed first. */
	signal(SIGPIPE, SIG_IGN);
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

static void
on_alarm(int sig)
{
	(void)sig;
	printf("timeout after %lu ms (%lu calls)\n", ms_since_start(),
	    srv_count);
	fflush(stdout);
	_exit(1);
}

static int
serve(unsigned long prog, unsigned long vers,
    void (*fn)(struct svc_req *, SVCXPRT *), unsigned seconds)
{
	(void)rpcb_unset(prog, vers, NULL);
	if (svc_create(fn, prog, vers, "udp") == 0) {
		printf("error: cannot register %lu v%lu\n", prog, vers);
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm(seconds);
	printf("ready\n");
	fflush(stdout);
	svc_run();
	return 2;
}

static int
cmd_sink(int argc, char **argv)
{
	struct sockaddr_in a;
	char buf[9000];
	int fd;

	if (argc < 3)
		return 2;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)atoi(argv[1]));
	if ((fd = socket(AF_INET, SOCK_DGRAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1) {
		perror("sink");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned)atoi(argv[2]));
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (recv(fd, buf, sizeof(buf), 0) > 0) {
			printf("datagram %lu\n", ms_since_start());
			fflush(stdout);
			srv_count++;
		}
	}
}

int
main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	argc--;
	argv++;
	if (strcmp(argv[0], "lock") == 0)
		return cmd_lock(argc, argv);
	if (strcmp(argv[0], "unlock") == 0)
		return cmd_unlock(argc, argv);
	if (strcmp(argv[0], "lockmsg") == 0)
		return cmd_lockmsg(argc, argv);
	if (strcmp(argv[0], "sharemany") == 0)
		return cmd_sharemany(argc, argv);
	if (strcmp(argv[0], "cbrecv") == 0 && argc >= 2)
		return serve(NLM_PROG, NLM4_VERS, granted_dispatch,
		    (unsigned)atoi(argv[1]));
	if (strcmp(argv[0], "ctlraw") == 0)
		return cmd_ctlraw(argc, argv);
	if (strcmp(argv[0], "lockmany") == 0)
		return cmd_lockmany(argc, argv);
	if (strcmp(argv[0], "lockrange") == 0)
		return cmd_lockrange(argc, argv);
	if (strcmp(argv[0], "test") == 0)
		return cmd_test(argc, argv);
	if (strcmp(argv[0], "notify") == 0)
		return cmd_notify(argc, argv);
	if (strcmp(argv[0], "mon") == 0)
		return cmd_mon(argc, argv);
	if (strcmp(argv[0], "stat") == 0)
		return cmd_stat(argc, argv);
	if (strcmp(argv[0], "simucrash") == 0)
		return cmd_simucrash(argc, argv);
	if (strcmp(argv[0], "receive") == 0 && argc >= 4) {
		srv_want = argc >= 5 ? strtoul(argv[4], NULL, 0) : 1;
		return serve(strtoul(argv[1], NULL, 0), strtoul(argv[2], NULL,
		    0), receive_dispatch, (unsigned)atoi(argv[3]));
	}
	if (strcmp(argv[0], "statd") == 0 && argc >= 3) {
		srv_want = strtoul(argv[1], NULL, 0);
		return serve(SM_PROG, SM_VERS, statd_dispatch,
		    (unsigned)atoi(argv[2]));
	}
	if (strcmp(argv[0], "sink") == 0)
		return cmd_sink(argc, argv);
usage:
	fprintf(stderr, "usage: see the comment at the top of nsmpeer.c\n");
	return 2;
}
