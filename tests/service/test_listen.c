/*
 * test_listen.c - the transport's listeners (rpc/rpcsrv.c, the accept
 * path of rpc/srv_tcp.c): accepting when descriptors run out; who may
 * bind beside the UDP listeners.
 *
 * The TCP listener here is a Unix socket in the abstract namespace (as
 * in tests/fuzz/fuzz_recmark.c), served by onc_tcp_accept() through the
 * transport's private header; no network namespace is needed for it.
 * The loop runs on the real clock: the tests count its turns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"

#include "srv_impl.h"

#include "svctest.h"

static struct {
	struct ev_loop	*loop;
	struct onc_srv	*rs;
	struct onc_listener rl;
	int		 lfd;
	struct sockaddr_un lsa;
	socklen_t	 lsalen;
} tl;

/* A loop and a server with small limits, no listener yet. */
static void
tl_new(void)
{
	struct onc_srv_limits lim;

	memset(&tl, 0, sizeof(tl));
	CU_ASSERT_PTR_NOT_NULL_FATAL(tl.loop = ev_loop_new());
	memset(&lim, 0, sizeof(lim));
	lim.max_record = 4096;
	lim.max_conns = 16;
	lim.idle_sec = 600;
	CU_ASSERT_PTR_NOT_NULL_FATAL(tl.rs = onc_srv_new(tl.loop, &lim));
}

static void
tl_start(void)
{
	tl_new();
	tl.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(tl.lfd != -1);
	tl.lsa.sun_family = AF_UNIX;
	tl.lsalen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)snprintf(tl.lsa.sun_path + 1, sizeof(tl.lsa.sun_path) - 1,
	    "nlmd-test-listen-%d", (int)getpid()));
	CU_ASSERT_FATAL(bind(tl.lfd, (struct sockaddr *)&tl.lsa, tl.lsalen) ==
	    0);
	CU_ASSERT_FATAL(listen(tl.lfd, 64) == 0);
	tl.rl.rl_fd = tl.lfd;
	tl.rl.rl_family = AF_UNIX;
	tl.rl.rl_xport = ONC_TCP;
	tl.rl.rl_srv = tl.rs;
	CU_ASSERT_FATAL(ev_fd_add(tl.loop, tl.lfd, EV_READ, onc_tcp_accept,
	    &tl.rl) == 0);
}

static void
tl_stop(void)
{
	ev_timer_cancel(tl.loop, &tl.rl.rl_pause);
	ev_fd_del(tl.loop, tl.lfd);
	close(tl.lfd);
	onc_srv_free(tl.rs);
	ev_loop_free(tl.loop);
}

/*
 * Out of descriptors (EMFILE; the unit used to leave RLIMIT_NOFILE at
 * systemd's 1024 while max-connections defaults to 4096): accept4()
 * fails, the connection stays in the backlog, the listener stays
 * readable.  Watched all along, every turn called accept4() again and
 * logged "accept: Too many open files": the loop never slept.  Counted:
 * turns in 200 ms of ev_run_once(loop, 20) with nothing else to do, and
 * the log lines.  Then descriptors come back: the waiting client is
 * accepted within a pause (100 ms).
 */
static void
test_accept_emfile(void)
{
	struct rlimit old, low;
	int fds[1100], nfds = 0, cfd, saved, i, c;
	unsigned turns = 0, lines = 0;
	uint64_t t0;
	FILE *log;

	tl_start();
	cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(cfd != -1);
	CU_ASSERT_FATAL(connect(cfd, (struct sockaddr *)&tl.lsa, tl.lsalen) ==
	    0);				/* waits in the backlog */
	CU_ASSERT_PTR_NOT_NULL_FATAL(log = tmpfile());
	saved = dup(2);
	CU_ASSERT_FATAL(saved != -1);
	CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = 1024;
	CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &low) == 0);
	(void)dup2(fileno(log), 2);
	while (nfds < (int)(sizeof(fds) / sizeof(fds[0])) &&
	    (fds[nfds] = dup(0)) != -1)
		nfds++;
	CU_ASSERT(errno == EMFILE);
	t0 = tests_now_ms();
	while (tests_now_ms() - t0 < 200) {
		(void)ev_run_once(tl.loop, 20);
		turns++;
	}
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_open, 0);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	(void)dup2(saved, 2);
	close(saved);
	(void)setrlimit(RLIMIT_NOFILE, &old);
	rewind(log);
	while ((c = fgetc(log)) != EOF)
		lines += c == '\n';
	fclose(log);
	printf("\n    out of descriptors: %u turns, %u log lines in 200 ms, "
	    "%llu pauses ", turns, lines,
	    (unsigned long long)tl.rs->rs_stats.accept_paused);
	CU_ASSERT(turns <= 50);
	CU_ASSERT(lines <= 10);
	CU_ASSERT(tl.rs->rs_stats.accept_paused >= 1);
	CU_ASSERT(tl.rs->rs_stats.accept_paused <= 5);

	/*
	 * Descriptors again: the client is served after the pause, 100 ms
	 * at most from here.  Waited for up to 2 s, well before the first
	 * sweep (5 s), the only other timer: 500 ms left a test binary
	 * stalled for 400 ms (make test runs three side by side on two
	 * CPUs) failing with the listener right.
	 */
	t0 = tests_now_ms();
	while (tl.rs->rs_stats.conns_open == 0 && tests_now_ms() - t0 < 2000)
		(void)ev_run_once(tl.loop, 20);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_open, 1);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_total, 1);
	close(cfd);
	tl_stop();
}

/*
 * nlmd's UDP listeners were bound with SO_REUSEADDR (rpc/rpcsrv.c
 * onc_sock_open), and for UDP that lets any other socket that sets it
 * too bind the same port, whoever owns it.  A local user without
 * privilege binds the port on a more specific address (127.0.0.1, or
 * the host's own) and Linux delivers the datagrams sent there to that
 * socket, not to nlmd: lock requests, SM_NOTIFY, answered by whoever
 * listens.  (The default ports, 4045 and 32765, are unprivileged.)  The
 * child, as "nobody", tries; its exit status: 0 refused, 1 bound, 2
 * bound and it received the call meant for nlmd.
 */
static void
test_udp_port_owned(void)
{
	/* A NULL call to 100021 v4 with AUTH_NONE (RFC 5531). */
	const uint32_t call[10] = {
		htonl(1), htonl(0), htonl(2), htonl(100021), htonl(4),
		htonl(0), 0, 0, 0, 0,
	};
	struct sockaddr_in a;
	struct passwd *pw;
	unsigned port;
	char err[256], b;
	int p[2], st, fd;
	pid_t pid;

	if (ts_skip())
		return;
	if (geteuid() != 0 || (pw = getpwnam("nobody")) == NULL) {
		printf("\n    SKIPPED: needs root and a user \"nobody\"\n");
		return;
	}
	tl_new();
	CU_ASSERT_FATAL(onc_srv_listen(tl.rs, NULL, 0, &port, err,
	    sizeof(err)) == ONC_OK);
	CU_ASSERT_FATAL(pipe(p) == 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((pid = fork()) == 0) {
		int one = 1, r = 0;
		struct timeval tv = { 1, 0 };
		uint8_t in[128];

		if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
			_exit(9);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
		    sizeof(one));
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			r = 1;
		(void)write(p[1], "x", 1);
		if (r == 1 && recv(fd, in, sizeof(in), 0) > 0)
			r = 2;
		_exit(r);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_FATAL(read(p[0], &b, 1) == 1);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CU_ASSERT(sendto(fd, call, sizeof(call), 0, (struct sockaddr *)&a,
	    sizeof(a)) == (ssize_t)sizeof(call));
	CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
	printf("\n    a user's bind of 127.0.0.1:%u beside nlmd's: %s ", port,
	    WEXITSTATUS(st) == 0 ? "refused" : WEXITSTATUS(st) == 1 ?
	    "bound" : WEXITSTATUS(st) == 2 ? "bound, and it took the call" :
	    "child failed");
	CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);
	/* And the call reached nlmd's socket. */
	(void)ev_run_once(tl.loop, 100);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.noprog, 1);
	close(fd);
	close(p[0]);
	close(p[1]);
	onc_srv_free(tl.rs);
	ev_loop_free(tl.loop);
}

/*
 * A call sent to a broadcast address (127.255.255.255 on lo here; a
 * subnet's on a LAN) is answered like any other.  IP_PKTINFO gives two
 * addresses: ipi_addr, the destination in the header (the broadcast
 * address), and ipi_spec_dst, the local address it reached.  The reply
 * used to be sent from ipi_addr, which the kernel refuses as a source
 * (EINVAL): no reply, counted in udp_send_fail.  Linux's own RPC server
 * (svc_udp_get_dest_4) and libtirpc's answer from ipi_spec_dst.
 */
static void
test_udp_broadcast_answered(void)
{
	const uint32_t call[10] = {
		htonl(7), htonl(0), htonl(2), htonl(100021), htonl(4),
		htonl(0), 0, 0, 0, 0,
	};
	struct sockaddr_in a;
	struct timeval tv = { 1, 0 };
	uint32_t in[16];
	unsigned port;
	char err[256];
	int fd, one = 1;
	ssize_t n;

	if (ts_skip())
		return;
	tl_new();
	CU_ASSERT_FATAL(onc_srv_listen(tl.rs, NULL, 0, &port, err,
	    sizeof(err)) == ONC_OK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT(setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one,
	    sizeof(one)) == 0);
	CU_ASSERT(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(0x7fffffff);	/* 127.255.255.255 */
	CU_ASSERT_FATAL(sendto(fd, call, sizeof(call), 0,
	    (struct sockaddr *)&a, sizeof(a)) == (ssize_t)sizeof(call));
	(void)ev_run_once(tl.loop, 100);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.noprog, 1);
	onc_srv_seal(tl.rs, 1);
	onc_srv_release(tl.rs, 1);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.udp_send_fail, 0);
	n = recv(fd, in, sizeof(in), 0);
	/* xid 7, REPLY, MSG_ACCEPTED, AUTH_NONE 0, PROG_UNAVAIL */
	CU_ASSERT_EQUAL(n, 24);
	if (n >= 24) {
		CU_ASSERT_EQUAL(ntohl(in[0]), 7);
		CU_ASSERT_EQUAL(ntohl(in[5]), PROG_UNAVAIL);
	}
	close(fd);
	onc_srv_free(tl.rs);
	ev_loop_free(tl.loop);
}

/*
 * Two veth pairs in the test's own network namespace (it goes with the
 * process), their far ends up with the same link-local address fe80::9
 * (no duplicate detection: usable at once): two peers of that address on
 * two links.  The near ends have fe80::8, a source for what is sent
 * back across the link.  0, or -1 (the links are gone again) when `ip'
 * or veth is missing.
 */
static int
tl_links_up(void)
{
	if (system("ip link add nlmt-a0 type veth peer name nlmt-a1 && "
	    "ip link add nlmt-b0 type veth peer name nlmt-b1 && "
	    "ip link set nlmt-a0 up && ip link set nlmt-a1 up && "
	    "ip link set nlmt-b0 up && ip link set nlmt-b1 up && "
	    "ip addr add fe80::9/64 dev nlmt-a1 nodad && "
	    "ip addr add fe80::9/64 dev nlmt-b1 nodad && "
	    "ip addr add fe80::8/64 dev nlmt-a0 nodad && "
	    "ip addr add fe80::8/64 dev nlmt-b0 nodad") == 0)
		return 0;
	(void)system("ip link del nlmt-a0 2>/dev/null; "
	    "ip link del nlmt-b0 2>/dev/null");
	return -1;
}

static void
tl_links_down(void)
{
	CU_ASSERT(system("ip link del nlmt-a0 && ip link del nlmt-b0") == 0);
}

/* A TCP connection from fe80::9 on link `ifname' to itself, port `port'. */
static int
tl_connect_ll(const char *ifname, unsigned port)
{
	struct sockaddr_in6 a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	CU_ASSERT_FATAL(inet_pton(AF_INET6, "fe80::9", &a.sin6_addr) == 1);
	CU_ASSERT_FATAL((a.sin6_scope_id = if_nametoindex(ifname)) != 0);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	a.sin6_port = htons((uint16_t)port);
	CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	return fd;
}

/*
 * max-connections-per-address 1, and a peer fe80::9 on each of two links:
 * two machines, one connection each.  The per-address count was keyed
 * by the address alone: the second link's peer was refused (reset) for
 * the first one's connection.  A second connection from the first link
 * is still refused.
 */
static void
test_conns_per_addr_link_local(void)
{
	struct onc_srv_limits lim;
	unsigned port;
	char err[256];
	int fa, fb, fa2, i;

	if (ts_skip())
		return;
	if (tl_links_up() == -1) {
		tests_skip("no veth links (ip link add ... type veth)");
		return;
	}
	memset(&tl, 0, sizeof(tl));
	CU_ASSERT_PTR_NOT_NULL_FATAL(tl.loop = ev_loop_new());
	memset(&lim, 0, sizeof(lim));
	lim.max_record = 4096;
	lim.max_conns = 16;
	lim.max_conns_per_addr = 1;
	lim.idle_sec = 600;
	CU_ASSERT_PTR_NOT_NULL_FATAL(tl.rs = onc_srv_new(tl.loop, &lim));
	CU_ASSERT_FATAL(onc_srv_listen(tl.rs, NULL, 0, &port, err,
	    sizeof(err)) == ONC_OK);
	fa = tl_connect_ll("nlmt-a1", port);
	fb = tl_connect_ll("nlmt-b1", port);
	for (i = 0; i < 5 && tl.rs->rs_stats.conns_open +
	    tl.rs->rs_stats.conns_refused < 2; i++)
		(void)ev_run_once(tl.loop, 100);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_open, 2);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_refused, 0);
	fa2 = tl_connect_ll("nlmt-a1", port);
	for (i = 0; i < 5 && tl.rs->rs_stats.conns_open +
	    tl.rs->rs_stats.conns_refused < 3; i++)
		(void)ev_run_once(tl.loop, 100);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_open, 2);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_refused, 1);
	close(fa);
	close(fb);
	close(fa2);
	onc_srv_free(tl.rs);
	ev_loop_free(tl.loop);
	tl_links_down();
}

/*
 * A call sent to an IPv6 multicast group (ff02::1 on a veth link, looped
 * back to this host and heard on the link's other end too) is answered,
 * from a unicast source.  IPV6_PKTINFO gives only the header's
 * destination, the group; the reply used to be sent from it, which the
 * kernel refuses (EINVAL): no reply, counted in udp_send_fail (and with
 * ip_nonlocal_bind it would have left with a group as its source).
 */
static void
test_udp_multicast_answered(void)
{
	const uint32_t call[10] = {
		htonl(7), htonl(0), htonl(2), htonl(100021), htonl(4),
		htonl(0), 0, 0, 0, 0,
	};
	struct sockaddr_in6 a, from;
	struct timeval tv = { 1, 0 };
	socklen_t fl = sizeof(from);
	uint32_t in[16];
	unsigned port, ifi;
	char err[256];
	int fd, i;
	ssize_t n;

	if (ts_skip())
		return;
	if (tl_links_up() == -1) {
		tests_skip("no veth links (ip link add ... type veth)");
		return;
	}
	tl_new();
	CU_ASSERT_FATAL(onc_srv_listen(tl.rs, NULL, 0, &port, err,
	    sizeof(err)) == ONC_OK);
	CU_ASSERT_FATAL((ifi = if_nametoindex("nlmt-a1")) != 0);
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT(setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifi,
	    sizeof(ifi)) == 0);
	CU_ASSERT(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == 0);
	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_port = htons((uint16_t)port);
	a.sin6_scope_id = ifi;
	CU_ASSERT_FATAL(inet_pton(AF_INET6, "ff02::1", &a.sin6_addr) == 1);
	CU_ASSERT_FATAL(sendto(fd, call, sizeof(call), 0,
	    (struct sockaddr *)&a, sizeof(a)) == (ssize_t)sizeof(call));
	for (i = 0; i < 5 && tl.rs->rs_stats.noprog == 0; i++)
		(void)ev_run_once(tl.loop, 100);
	(void)ev_run_once(tl.loop, 20);		/* the link's copy */
	CU_ASSERT(tl.rs->rs_stats.noprog >= 1);
	onc_srv_seal(tl.rs, 1);
	onc_srv_release(tl.rs, 1);
	CU_ASSERT_EQUAL(tl.rs->rs_stats.udp_send_fail, 0);
	n = recvfrom(fd, in, sizeof(in), 0, (struct sockaddr *)&from, &fl);
	/* xid 7, REPLY, MSG_ACCEPTED, AUTH_NONE 0, PROG_UNAVAIL */
	CU_ASSERT_EQUAL(n, 24);
	if (n >= 24) {
		CU_ASSERT_EQUAL(ntohl(in[0]), 7);
		CU_ASSERT_EQUAL(ntohl(in[5]), PROG_UNAVAIL);
		CU_ASSERT_FALSE(IN6_IS_ADDR_MULTICAST(&from.sin6_addr));
	}
	close(fd);
	onc_srv_free(tl.rs);
	ev_loop_free(tl.loop);
	tl_links_down();
}

/*
 * bind-address fe80::9%nlmt-a1 (and the same by the interface's index):
 * a link-local address is bound with its interface and served; an
 * interface the host lacks is refused by name.  onc_make_addr() passed
 * the whole string to inet_pton(), which refused it ("not a numeric
 * address"), and without the scope bind() refuses a link-local address
 * (EINVAL): nlmd could not listen on one.
 */
static void
test_listen_link_local(void)
{
	char err[256], ix[48];
	unsigned port;
	int fd, i, round;

	if (ts_skip())
		return;
	if (tl_links_up() == -1) {
		tests_skip("no veth links (ip link add ... type veth)");
		return;
	}
	snprintf(ix, sizeof(ix), "fe80::9%%%u", if_nametoindex("nlmt-a1"));
	for (round = 0; round < 2; round++) {
		tl_new();
		err[0] = '\0';
		CU_ASSERT_EQUAL(onc_srv_listen(tl.rs, round == 0 ?
		    "fe80::9%nlmt-a1" : ix, 0, &port, err, sizeof(err)),
		    ONC_OK);
		if (err[0] != '\0')
			fprintf(stderr, "listen: %s\n", err);
		CU_ASSERT_EQUAL(tl.rs->rs_nlis, 2);	/* TCP and UDP, v6 */
		fd = tl_connect_ll("nlmt-a1", port);
		for (i = 0; i < 5 && tl.rs->rs_stats.conns_open < 1; i++)
			(void)ev_run_once(tl.loop, 100);
		CU_ASSERT_EQUAL(tl.rs->rs_stats.conns_open, 1);
		close(fd);
		onc_srv_free(tl.rs);
		ev_loop_free(tl.loop);
	}
	tl_new();
	CU_ASSERT_EQUAL(onc_srv_listen(tl.rs, "fe80::9%nlmt-none", 0, &port,
	    err, sizeof(err)), ONC_BADADDR);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no interface 'nlmt-none'"));
	CU_ASSERT_EQUAL(onc_srv_listen(tl.rs, "fe80::9%999999", 0, &port,
	    err, sizeof(err)), ONC_BADADDR);
	CU_ASSERT_EQUAL(tl.rs->rs_nlis, 0);
	onc_srv_free(tl.rs);
	ev_loop_free(tl.loop);
	tl_links_down();
}

/*
 * Listening on port 0: the kernel picks a free TCP port and the UDP
 * sockets take the same number, which a UDP socket may hold already (the
 * daemon's own outgoing ones, or any process's).  Until 2026-12-06 the
 * listen then failed (EADDRINUSE: a daemon with nlm-port = 0 did not
 * start, and test harnesses flaked); now it tries another port.  Here
 * the namespace's ephemeral range is two ports and a UDP socket holds
 * the one Linux's bind(0) tries first (the parity opposite to the
 * range's low end; the other parity it leaves to connect()): every
 * listen must end on the other one (before, every one failed).
 */
static void
test_listen_port0_inuse(void)
{
	struct sockaddr_in a;
	char range[64], err[256];
	unsigned port, ok = 0, i;
	FILE *f;
	int fd;

	if (ts_skip())
		return;
	memset(range, 0, sizeof(range));
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(
	    "/proc/sys/net/ipv4/ip_local_port_range", "r+"));
	CU_ASSERT_FATAL(fgets(range, sizeof(range), f) != NULL);
	rewind(f);
	fprintf(f, "40000 40001\n");
	CU_ASSERT_FATAL(fflush(f) == 0);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(40001);
	CU_ASSERT_FATAL(fd != -1 && bind(fd, (struct sockaddr *)&a,
	    sizeof(a)) == 0);
	for (i = 0; i < 20; i++) {
		tl_new();
		port = 0;
		err[0] = '\0';
		if (onc_srv_listen(tl.rs, NULL, 0, &port, err, sizeof(err)) ==
		    ONC_OK && port == 40000)
			ok++;
		else if (ok == i)
			printf("\n    listen %u: port %u, %s ", i, port, err);
		onc_srv_free(tl.rs);
		ev_loop_free(tl.loop);
	}
	close(fd);
	rewind(f);
	fputs(range, f);
	fclose(f);
	CU_ASSERT_EQUAL(ok, 20);
}

/*
 * Another process holds the IPv6 TCP port (a socket of its own bound to
 * [::]:port, IPv6 only).  Until 2026-12-06 the listen took any failure
 * of the IPv6 TCP socket to mean a host without IPv6 and went on with
 * IPv4 alone: nlmd started, and IPv6 clients had no lock service, with
 * one warning as the only sign.  It must fail and say which socket.
 * With the IPv4 TCP port held instead it failed already; it still does.
 */
static void
test_listen_v6_inuse(void)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	struct sockaddr_storage ss;
	socklen_t sl;
	char err[256];
	unsigned port, bound;
	int fd, one = 1, v6;

	if (ts_skip())
		return;
	for (v6 = 1; v6 >= 0; v6--) {
		fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
		CU_ASSERT_FATAL(fd != -1);
		if (v6) {
			CU_ASSERT_FATAL(setsockopt(fd, IPPROTO_IPV6,
			    IPV6_V6ONLY, &one, sizeof(one)) == 0);
			memset(&a6, 0, sizeof(a6));
			a6.sin6_family = AF_INET6;
			a6.sin6_addr = in6addr_any;
			CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a6,
			    sizeof(a6)) == 0);
		} else {
			memset(&a4, 0, sizeof(a4));
			a4.sin_family = AF_INET;
			CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a4,
			    sizeof(a4)) == 0);
		}
		CU_ASSERT_FATAL(listen(fd, 1) == 0);
		sl = sizeof(ss);
		CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&ss,
		    &sl) == 0);
		port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port);
		tl_new();
		err[0] = '\0';
		bound = 0;
		CU_ASSERT_NOT_EQUAL(onc_srv_listen(tl.rs, NULL, port, &bound,
		    err, sizeof(err)), ONC_OK);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "Address already in use"));
		CU_ASSERT_PTR_NOT_NULL(strstr(err, v6 ? "tcp [::]" :
		    "tcp 0.0.0.0"));
		if (strstr(err, "in use") == NULL)
			printf("\n    v%d port %u held: listen said '%s' ",
			    v6 ? 6 : 4, port, err);
		onc_srv_free(tl.rs);
		ev_loop_free(tl.loop);
		close(fd);
	}
}

/*
 * A host without IPv6 (socket(AF_INET6, ...) fails with EAFNOSUPPORT,
 * here by a seccomp filter in a child process): the listen goes on with
 * IPv4 alone, as before the change above.  The child says by its exit
 * status: 0 IPv4 only, 1 the listen failed, 2 it has IPv6 after all,
 * 3 the filter could not be set.
 */
static void
test_listen_no_ipv6(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	char err[256];
	unsigned bound;
	pid_t pid;
	int status, rc;

	if (ts_skip())
		return;
	CU_ASSERT_FATAL((pid = fork()) != -1);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
			_exit(3);
		tl_new();
		err[0] = '\0';
		if (onc_srv_listen(tl.rs, NULL, 0, &bound, err,
		    sizeof(err)) != ONC_OK) {
			printf("\n    listen: %s ", err);
			_exit(1);
		}
		rc = onc_srv_has_family(tl.rs, AF_INET6) ? 2 :
		    !onc_srv_has_family(tl.rs, AF_INET);
		_exit(rc);
	}
	CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
	CU_ASSERT(WIFEXITED(status));
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
}

int
ts_register_listen(void)
{
	CU_pSuite s = CU_add_suite("transport: listeners", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "out of descriptors: the loop still sleeps",
	    test_accept_emfile) == NULL ||
	    CU_add_test(s, "port 0 taken by a UDP socket: another port",
	    test_listen_port0_inuse) == NULL ||
	    CU_add_test(s, "the IPv6 TCP port held: no listening on v4 alone",
	    test_listen_v6_inuse) == NULL ||
	    CU_add_test(s, "a host without IPv6: listening on v4 alone",
	    test_listen_no_ipv6) == NULL ||
	    CU_add_test(s, "nlmd's UDP port is its own",
	    test_udp_port_owned) == NULL ||
	    CU_add_test(s, "a call to a broadcast address is answered",
	    test_udp_broadcast_answered) == NULL ||
	    CU_add_test(s, "link-local peers on two links: a connection "
	    "budget each", test_conns_per_addr_link_local) == NULL ||
	    CU_add_test(s, "a call to an IPv6 multicast group is answered "
	    "from a unicast address", test_udp_multicast_answered) == NULL ||
	    CU_add_test(s, "a link-local bind address with its interface",
	    test_listen_link_local) == NULL)
		return -1;
	return 0;
}
