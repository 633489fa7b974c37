/*
 * test_ctlsrv.c - the control socket's server side (ctl/ctlsrv.c) on a
 * real event loop and a Unix socket in a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"

#include "ctlsrv.h"
#include "ev.h"

int	ctl_register_srv(void);

static bool cs_ready;

static bool
cs_is_ready(void *arg)
{
	(void)arg;
	return cs_ready;
}

/* A command whose answer is held, as release's is until its commit. */
static void
cs_cmd_hold(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	(void)rq;
	(void)arg;
	ctl_hold(c, cs_is_ready, NULL);
}

static bool
cs_never(void *arg)
{
	(void)arg;
	return false;
}

/* A hold that never ends (a commit still to come at the stop). */
static void
cs_cmd_holdlong(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	(void)rq;
	(void)arg;
	ctl_hold(c, cs_never, NULL);
}

/* A long answer: 64 pieces of 1,000 lines, as a dump of many locks. */
static bool
cs_fill_big(struct ctl_conn *c, void *state)
{
	int *left = state, i;

	if (*left == 0)
		return false;
	(*left)--;
	for (i = 0; i < 1000; i++)
		ctl_raw(c, "line %d of a long answer, as a dump of locks", i);
	return true;
}

static void
cs_cmd_big(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	int *left = malloc(sizeof(*left));

	(void)rq;
	(void)arg;
	if (left == NULL) {
		ctl_error(c, "out of memory");
		return;
	}
	*left = 64;
	ctl_produce(c, cs_fill_big, left, free);
}

/*
 * A walk that finds nothing to list, piece after piece: status --host
 * of a host with nothing in a table of millions of records.
 */
static bool
cs_fill_empty(struct ctl_conn *c, void *state)
{
	(void)c;
	(void)state;
	return true;
}

static void
cs_cmd_walk(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	(void)rq;
	(void)arg;
	ctl_produce(c, cs_fill_empty, NULL, NULL);
}

/*
 * A producer that fails once its first piece is out: an error, too late
 * for an error line (a release whose second piece finds no memory).
 */
static bool
cs_fill_late(struct ctl_conn *c, void *state)
{
	int *pieces = state;

	if ((*pieces)++ == 0) {
		ctl_raw(c, "line 1");
		return true;
	}
	ctl_error(c, "too late");
	return false;
}

static void
cs_cmd_late(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	int *pieces = calloc(1, sizeof(*pieces));

	(void)rq;
	(void)arg;
	if (pieces == NULL) {
		ctl_error(c, "out of memory");
		return;
	}
	ctl_produce(c, cs_fill_late, pieces, free);
}

/* Times cs_cmd_echoerr() ran. */
static unsigned cs_echoerr_runs;

/*
 * Refused, naming what was asked: release's "no host named NAME".  It
 * takes host= and the flag dry-run=.
 */
static const char *const cs_echoerr_keys[] = { "host", "dry-run", NULL };
static const char *const cs_echoerr_flags[] = { "dry-run", NULL };

static void
cs_cmd_echoerr(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	const char *v = ctl_req_get(rq, "host");

	(void)arg;
	cs_echoerr_runs++;
	ctl_error(c, "no host named %s", v != NULL ? v : "");
}

/* The test's server: a loop, the socket in a temporary directory. */
struct cs_srv {
	struct ev_loop	*loop;
	struct ctl_srv	*srv;
	struct sockaddr_un sun;
	char		 dir[32];
};

static void	cs_start_group(struct cs_srv *, long);

static void
cs_start(struct cs_srv *cs)
{
	cs_start_group(cs, -1);
}

static void
cs_start_group(struct cs_srv *cs, long group)
{
	char err[256];

	memset(cs, 0, sizeof(*cs));
	snprintf(cs->dir, sizeof(cs->dir), "/tmp/nlmd-ctlsrv-XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(cs->dir));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs->loop = ev_loop_new());
	cs->sun.sun_family = AF_UNIX;
	snprintf(cs->sun.sun_path, sizeof(cs->sun.sun_path), "%s/ctl.sock",
	    cs->dir);
	cs->srv = ctl_srv_new(cs->loop, cs->sun.sun_path, group, err,
	    sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs->srv);
	CU_ASSERT_FATAL(ctl_srv_command(cs->srv, "hold", NULL, NULL,
	    cs_cmd_hold, NULL) == 0);
	CU_ASSERT_FATAL(ctl_srv_command(cs->srv, "big", NULL, NULL,
	    cs_cmd_big, NULL) == 0);
	CU_ASSERT_FATAL(ctl_srv_command(cs->srv, "holdlong", NULL, NULL,
	    cs_cmd_holdlong, NULL) == 0);
	CU_ASSERT_FATAL(ctl_srv_command(cs->srv, "echoerr", cs_echoerr_keys,
	    cs_echoerr_flags, cs_cmd_echoerr, NULL) == 0);
	CU_ASSERT_FATAL(ctl_srv_command(cs->srv, "walk", NULL, NULL,
	    cs_cmd_walk, NULL) == 0);
	CU_ASSERT_FATAL(ctl_srv_command(cs->srv, "late", NULL, NULL,
	    cs_cmd_late, NULL) == 0);
}

static void
cs_stop(struct cs_srv *cs)
{
	ctl_srv_free(cs->srv);
	ev_loop_free(cs->loop);
	(void)rmdir(cs->dir);
}

static int
cs_connect(struct cs_srv *cs)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&cs->sun,
	    sizeof(cs->sun)) == 0);
	return fd;
}

/* Turns of ev_run_once(loop, wait_ms) in `ms' milliseconds. */
static unsigned
cs_turns(struct cs_srv *cs, unsigned ms, int wait_ms)
{
	unsigned turns = 0;
	uint64_t t0 = tests_now_ms();

	while (tests_now_ms() - t0 < ms) {
		(void)ev_run_once(cs->loop, wait_ms);
		turns++;
	}
	return turns;
}

/* The answer at fd once the loop served it (500 ms at most). */
static void
cs_answer(struct cs_srv *cs, int fd, char *buf, size_t cap)
{
	uint64_t t0 = tests_now_ms();
	size_t got = 0;
	ssize_t n;

	while (tests_now_ms() - t0 < 500) {
		(void)ev_run_once(cs->loop, 10);
		while ((n = recv(fd, buf + got, cap - 1 - got,
		    MSG_DONTWAIT)) > 0)
			got += (size_t)n;
		if (n == 0)
			break;
	}
	buf[got] = '\0';
}

/*
 * nlmctl sends its request and shuts down its sending side (cmd/nlmctl.c).
 * While the answer is held, conn_flush() means to stop watching the
 * descriptor (ev_fd_set(loop, fd, 0)) and poll the hold every 5 ms; but
 * ev_fd_set() refused 0, the descriptor stayed watched for reading, the
 * end of the stream kept it readable, and the loop never slept until
 * the hold ended.  Counted: turns in 100 ms of ev_run_once(loop, 50).
 */
static void
test_hold_sleeps(void)
{
	struct cs_srv cs;
	const char *req = "nlmctl 1 hold\n";
	char buf[256];
	unsigned turns;
	int fd;

	cs_ready = false;
	cs_start(&cs);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) ==
	    (ssize_t)strlen(req));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);

	turns = cs_turns(&cs, 100, 50);
	printf("\n    held answer: %u turns in 100 ms ", turns);
	CU_ASSERT(turns <= 100);	/* a 5 ms poll: some 20 */

	/* The hold ends: the answer comes, then the end of the stream. */
	cs_ready = true;
	cs_answer(&cs, fd, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	close(fd);
	cs_stop(&cs);
}

/*
 * The same when nlmctl is gone (killed) during the hold: the socket is
 * hung up, which epoll reports whatever it was asked to watch.  After the
 * hold the answer finds no reader and the connection is closed.
 */
static void
test_hold_reader_gone(void)
{
	struct cs_srv cs;
	const char *req = "nlmctl 1 hold\n";
	unsigned turns;
	int fd;

	cs_ready = false;
	cs_start(&cs);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) ==
	    (ssize_t)strlen(req));
	(void)ev_run_once(cs.loop, 0);		/* accepted */
	(void)ev_run_once(cs.loop, 0);		/* request read: held */
	close(fd);
	turns = cs_turns(&cs, 100, 50);
	printf("\n    held answer, reader gone: %u turns in 100 ms ", turns);
	CU_ASSERT(turns <= 100);
	cs_ready = true;
	(void)cs_turns(&cs, 20, 10);
	cs_stop(&cs);
}

/*
 * The daemon stops: it commits its last turns, then frees the control
 * server.  An answer held for one of those commits (a release) goes out
 * then; it was closed unsent, and nlmctl reported a failure for a release
 * that had happened.  One still held is cut off (no end line).
 */
static void
test_hold_at_stop(void)
{
	struct cs_srv cs;
	const char *req = "nlmctl 1 hold\n", *req2 = "nlmctl 1 holdlong\n";
	char buf[256];
	ssize_t n;
	size_t got = 0;
	int fd, fd2;

	cs_ready = false;
	cs_start(&cs);
	fd = cs_connect(&cs);
	fd2 = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) ==
	    (ssize_t)strlen(req));
	CU_ASSERT_FATAL(send(fd2, req2, strlen(req2), 0) ==
	    (ssize_t)strlen(req2));
	(void)cs_turns(&cs, 30, 5);		/* accepted, read: held */
	cs_ready = true;			/* the stop's drain */
	cs_stop(&cs);
	while ((n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	got = 0;
	while ((n = recv(fd2, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	CU_ASSERT_PTR_NULL(strstr(buf, " end "));
	close(fd);
	close(fd2);
}

/*
 * Out of descriptors: accept4() fails with EMFILE, nlmctl's connection
 * stays in the backlog and the socket readable.  srv_accept() returned
 * at once and was called again every turn: the loop never slept.
 * Counted: turns in 200 ms of ev_run_once(loop, 20), and the log lines.
 * Once descriptors are back, nlmctl is answered.
 */
static void
test_accept_emfile(void)
{
	struct cs_srv cs;
	struct rlimit old, low;
	const char *req = "nlmctl 1 hold\n";
	int fds[1100], nfds = 0, fd, saved, i, c;
	unsigned turns, lines = 0;
	char buf[256];
	FILE *log;

	cs_ready = true;
	cs_start(&cs);
	fd = cs_connect(&cs);		/* waits in the backlog */
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) ==
	    (ssize_t)strlen(req));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
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
	turns = cs_turns(&cs, 200, 20);
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
	    (unsigned long long)ctl_srv_accept_paused(cs.srv));
	CU_ASSERT(turns <= 50);
	CU_ASSERT(lines <= 10);
	CU_ASSERT(ctl_srv_accept_paused(cs.srv) >= 1);
	CU_ASSERT(ctl_srv_accept_paused(cs.srv) <= 5);

	/* Descriptors again: accepted after the pause, and answered. */
	cs_answer(&cs, fd, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	close(fd);
	cs_stop(&cs);
}

/*
 * control-group: a process of uid 65534 (nobody) in group CS_GID as a
 * supplementary group (setgroups(), as newgrp or a login would give it)
 * is let in, and so is one whose own group it is (no supplementary
 * group: SO_PEERGROUPS does not list it; found by mutation, without the
 * check of the peer's gid every test passed), and one that has it last
 * of 100 groups (more than peer_allowed()'s first buffer takes: found by
 * mutation, without the retry after ERANGE every test passed); without
 * it, refused.  The
 * group is one no user database lists, so only the process's own
 * credentials (SO_PEERCRED, SO_PEERGROUPS) can tell: until 2026-11-28
 * nlmd asked the databases (getpwuid_r(), getgrouplist()), which could
 * hold the loop on a network name service, and refused this process.  In
 * a child per case; root only.
 */
#define CS_GID	47113

/* How the child is in CS_GID (cs_as_nobody()). */
#define CS_NOT_IN	0	/* not at all */
#define CS_SUPPL	1	/* a supplementary group */
#define CS_PRIMARY	2	/* its group (no supplementary one) */
#define CS_MANY		3	/* the last of 100 supplementary groups */

/* The child's answer: 0 let in, 1 refused, 2 neither, 3 setup failed. */
static int
cs_as_nobody(struct cs_srv *cs, int how)
{
	gid_t g[100];
	int fd, i, status = 0;
	char buf[256];
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		const char *req = "nlmctl 1 hold\n";

		for (i = 0; i < 99; i++)
			g[i] = (gid_t)(CS_GID + 1 + i);
		g[how == CS_MANY ? 99 : 0] = CS_GID;
		if (setgroups(how == CS_MANY ? 100 : how == CS_SUPPL ? 1 : 0,
		    how == CS_MANY ? g : &g[0]) == -1 ||
		    setgid(how == CS_PRIMARY ? CS_GID : 65534) == -1 ||
		    setuid(65534) == -1 ||
		    (fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    connect(fd, (struct sockaddr *)&cs->sun,
		    sizeof(cs->sun)) == -1)
			_exit(3);
		/* A refusal may close the socket before the request. */
		(void)send(fd, req, strlen(req), MSG_NOSIGNAL);
		(void)shutdown(fd, SHUT_WR);
		while (got < sizeof(buf) - 1 &&
		    (n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
			got += (size_t)n;
		buf[got] = '\0';
		if (strcmp(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n") == 0)
			_exit(0);
		_exit(strstr(buf, "permission denied") != NULL ? 1 : 2);
	}
	CU_ASSERT_FATAL(pid > 0);
	while (waitpid(pid, &status, WNOHANG) == 0)
		(void)ev_run_once(cs->loop, 10);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

static void
test_control_group(void)
{
	struct cs_srv cs;
	struct stat sb;
	int in, prim, many, out;

	if (geteuid() != 0) {
		tests_skip("control-group needs root (setuid)");
		return;
	}
	cs_ready = true;
	cs_start_group(&cs, CS_GID);
	/*
	 * The socket is the group's, whatever group root runs with (found by
	 * mutation: without the lchown() every test passed, the tests' group
	 * being root's own).
	 */
	CU_ASSERT_FATAL(lstat(cs.sun.sun_path, &sb) == 0);
	CU_ASSERT_EQUAL(sb.st_gid, CS_GID);
	CU_ASSERT_EQUAL(sb.st_mode & 07777, 0660);
	/* Anyone reaches the socket: nlmd's own check is what is tested. */
	CU_ASSERT_FATAL(chmod(cs.dir, 0755) == 0);
	CU_ASSERT_FATAL(chmod(cs.sun.sun_path, 0666) == 0);
	in = cs_as_nobody(&cs, CS_SUPPL);
	prim = cs_as_nobody(&cs, CS_PRIMARY);
	many = cs_as_nobody(&cs, CS_MANY);
	out = cs_as_nobody(&cs, CS_NOT_IN);
	printf("\n    uid 65534 in group %d: %s; of group %d: %s; not in it: "
	    "%s ", CS_GID, in == 0 ? "let in" : in == 1 ? "refused" : "error",
	    CS_GID, prim == 0 ? "let in" : prim == 1 ? "refused" : "error",
	    out == 0 ? "let in" : out == 1 ? "refused" : "error");
	printf("\n    the last of 100 groups: %s ", many == 0 ? "let in" :
	    many == 1 ? "refused" : "error");
	CU_ASSERT_EQUAL(in, 0);
	CU_ASSERT_EQUAL(prim, 0);
	CU_ASSERT_EQUAL(many, 0);
	CU_ASSERT_EQUAL(out, 1);
	cs_stop(&cs);
}

/*
 * Without control-group only root may use the socket: a process of uid
 * 65534, whatever groups it has, is refused even when the socket is
 * opened to everyone (found by mutation: with peer_allowed() letting
 * anyone in when no group is configured, every unit test passed).  Root
 * only.
 */
static void
test_no_group_root_only(void)
{
	struct cs_srv cs;
	int suppl, prim;

	if (geteuid() != 0) {
		tests_skip("another uid needs root (setuid)");
		return;
	}
	cs_ready = true;
	cs_start(&cs);
	CU_ASSERT_FATAL(chmod(cs.dir, 0755) == 0);
	CU_ASSERT_FATAL(chmod(cs.sun.sun_path, 0666) == 0);
	suppl = cs_as_nobody(&cs, CS_SUPPL);
	prim = cs_as_nobody(&cs, CS_PRIMARY);
	printf("\n    uid 65534, no control-group: %s ", suppl == 0 || prim == 0 ?
	    "let in" : suppl == 1 && prim == 1 ? "refused" : "error");
	CU_ASSERT_EQUAL(suppl, 1);
	CU_ASSERT_EQUAL(prim, 1);
	cs_stop(&cs);
}

static uint64_t cs_clock_ms;

static uint64_t
cs_clock(void)
{
	return cs_clock_ms;
}

/*
 * Sixteen readers that never read a long answer take every place.
 * Before, a seventeenth nlmctl was closed at once, and so was every one
 * after it, until nlmd restarted.  Now, once those have taken nothing
 * for 10 s, a newcomer takes the place of one of them and is answered;
 * before that it is still turned away (a slow reader is not cut off
 * while nobody needs its place).
 */
static void
test_stalled_readers(void)
{
	const char *big = "nlmctl 1 big\n", *hold = "nlmctl 1 hold\n";
	struct cs_srv cs;
	int fds[16], fd, i;
	char buf[256];

	cs_ready = true;
	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	for (i = 0; i < 16; i++) {
		fds[i] = cs_connect(&cs);
		CU_ASSERT_FATAL(send(fds[i], big, strlen(big), 0) ==
		    (ssize_t)strlen(big));
		(void)ev_run_once(cs.loop, 0);
		(void)ev_run_once(cs.loop, 0);
	}
	(void)cs_turns(&cs, 50, 5);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), MSG_NOSIGNAL) ==
	    (ssize_t)strlen(hold));
	cs_answer(&cs, fd, buf, sizeof(buf));
	/* No place yet: told so. */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "nlmctl 1 error busy"));
	close(fd);
	cs_clock_ms += 10000;
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), 0) ==
	    (ssize_t)strlen(hold));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
	cs_answer(&cs, fd, buf, sizeof(buf));
	printf("\n    seventeenth nlmctl after 10 s of 16 stalled readers: "
	    "%s ", buf[0] != '\0' ? "answered" : "closed");
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	close(fd);
	for (i = 0; i < 16; i++)
		close(fds[i]);
	(void)cs_turns(&cs, 20, 5);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * Sixteen answers whose walks find nothing to list for more than 10 s
 * (status --host of a host with nothing, in a huge table): their readers
 * have taken all there was, and each walk goes on, a piece a turn.  They
 * counted as stalled -- no bytes out for 10 s -- and a newcomer took the
 * place of one of them, cutting its answer off.  A piece produced is
 * progress: the newcomer is told the places are taken.
 */
static void
test_empty_pieces_not_stalled(void)
{
	const char *walk = "nlmctl 1 walk\n", *hold = "nlmctl 1 hold\n";
	struct cs_srv cs;
	int fds[16], fd, i;
	char buf[256];

	cs_ready = true;
	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	for (i = 0; i < 16; i++) {
		fds[i] = cs_connect(&cs);
		CU_ASSERT_FATAL(send(fds[i], walk, strlen(walk), 0) ==
		    (ssize_t)strlen(walk));
		(void)ev_run_once(cs.loop, 0);
		(void)ev_run_once(cs.loop, 0);
	}
	/* 11 s of turns, every walk a piece a turn. */
	for (i = 0; i < 110; i++) {
		cs_clock_ms += 100;
		(void)ev_run_once(cs.loop, 0);
	}
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), MSG_NOSIGNAL) ==
	    (ssize_t)strlen(hold));
	cs_answer(&cs, fd, buf, sizeof(buf));
	printf("\n    seventeenth nlmctl beside 16 walks listing nothing for "
	    "11 s: %s ", strstr(buf, "busy") != NULL ? "told busy" :
	    "took a walk's place");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "nlmctl 1 error busy"));
	close(fd);
	/* Every walk still going: its reader has had nothing, not EOF. */
	for (i = 0; i < 16; i++) {
		CU_ASSERT(recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) > 0);
		CU_ASSERT(recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) == -1 &&
		    errno == EAGAIN);
		close(fds[i]);
	}
	(void)cs_turns(&cs, 20, 5);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * Sixteen clients that connect and never send a request (a script stuck
 * before its write, a member of control-group that keeps connecting)
 * took every place: a newcomer was closed at once without a word
 * (nlmctl: "closed the connection without an answer"), for 10 s after
 * each of them, and for good if they reconnected.  nlmctl writes its
 * request as soon as it is connected: one that has sent none for a
 * second gives its place to a newcomer, and a newcomer that finds no
 * place is told so.
 */
static void
test_silent_clients(void)
{
	const char *hold = "nlmctl 1 hold\n";
	struct cs_srv cs;
	int fds[16], fd, i;
	char buf[256];

	cs_ready = true;
	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	for (i = 0; i < 16; i++) {
		fds[i] = cs_connect(&cs);
		(void)ev_run_once(cs.loop, 0);
	}
	(void)cs_turns(&cs, 20, 5);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), MSG_NOSIGNAL) ==
	    (ssize_t)strlen(hold));
	cs_answer(&cs, fd, buf, sizeof(buf));
	printf("\n    seventeenth nlmctl beside 16 silent clients: %s ",
	    buf[0] != '\0' ? buf : "closed without a word");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "nlmctl 1 error "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "places taken"));
	close(fd);
	cs_clock_ms += 1000;
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), 0) ==
	    (ssize_t)strlen(hold));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
	cs_answer(&cs, fd, buf, sizeof(buf));
	printf("\n    ... once they have been silent for 1 s: %s ",
	    buf[0] != '\0' ? "answered" : "closed");
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	close(fd);
	for (i = 0; i < 16; i++)
		close(fds[i]);
	(void)cs_turns(&cs, 20, 5);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * All places taken by clients that have sent no request for a second:
 * one that may not use the socket takes none of their places (it is
 * closed, and they stay); only an allowed newcomer does (found by
 * mutation: a refused peer that evicted a stalled one passed every
 * test).  Root only.
 */
static void
test_refused_takes_no_place(void)
{
	struct cs_srv cs;
	int fds[16], i, got, open_left = 0;
	char c;

	if (geteuid() != 0) {
		tests_skip("another uid needs root (setuid)");
		return;
	}
	cs_ready = true;
	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	CU_ASSERT_FATAL(chmod(cs.dir, 0755) == 0);
	CU_ASSERT_FATAL(chmod(cs.sun.sun_path, 0666) == 0);
	for (i = 0; i < 16; i++) {
		fds[i] = cs_connect(&cs);
		(void)ev_run_once(cs.loop, 0);
	}
	cs_clock_ms += 1000;
	got = cs_as_nobody(&cs, CS_NOT_IN);
	for (i = 0; i < 16; i++) {
		if (recv(fds[i], &c, 1, MSG_DONTWAIT) == -1 && errno == EAGAIN)
			open_left++;
		close(fds[i]);
	}
	printf("\n    uid 65534 beside 16 silent clients: %s, %d of them "
	    "left ", got == 0 ? "let in" : got == 1 ? "took a place" :
	    "closed", open_left);
	CU_ASSERT_EQUAL(got, 2);
	CU_ASSERT_EQUAL(open_left, 16);
	(void)cs_turns(&cs, 20, 5);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * Answers held for their commits (releases waiting for the disk) are
 * not stalled, however long the commit takes: a newcomer finding all
 * places taken by them is told so, and each held answer goes out whole
 * once its commit is made (found by mutation: with held answers counted
 * stalled after 10 s, a newcomer cut one off and every test passed).
 */
static void
test_held_not_stalled(void)
{
	const char *hold = "nlmctl 1 hold\n";
	struct cs_srv cs;
	int fds[16], fd, i, whole = 0;
	char buf[256];
	size_t got;
	ssize_t n;

	cs_ready = false;
	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	for (i = 0; i < 16; i++) {
		fds[i] = cs_connect(&cs);
		CU_ASSERT_FATAL(send(fds[i], hold, strlen(hold), 0) ==
		    (ssize_t)strlen(hold));
		CU_ASSERT_FATAL(shutdown(fds[i], SHUT_WR) == 0);
		(void)ev_run_once(cs.loop, 0);
		(void)ev_run_once(cs.loop, 0);
	}
	/* The commits take 11 s. */
	for (i = 0; i < 110; i++) {
		cs_clock_ms += 100;
		(void)ev_run_once(cs.loop, 0);
	}
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), MSG_NOSIGNAL) ==
	    (ssize_t)strlen(hold));
	cs_answer(&cs, fd, buf, sizeof(buf));
	printf("\n    seventeenth nlmctl beside 16 answers held 11 s: %s ",
	    strstr(buf, "busy") != NULL ? "told busy" : "took a place");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "nlmctl 1 error busy"));
	close(fd);
	cs_ready = true;
	for (i = 0; i < 10; i++) {
		cs_clock_ms += 5;
		(void)ev_run_once(cs.loop, 0);
	}
	for (i = 0; i < 16; i++) {
		got = 0;
		while ((n = recv(fds[i], buf + got, sizeof(buf) - 1 - got,
		    MSG_DONTWAIT)) > 0)
			got += (size_t)n;
		buf[got] = '\0';
		whole += strcmp(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n") == 0;
		close(fds[i]);
	}
	printf("%d of 16 held answers whole ", whole);
	CU_ASSERT_EQUAL(whole, 16);
	(void)cs_turns(&cs, 20, 5);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * A newcomer takes the place of the client stalled longest, not of one
 * that has just become stalled (found by mutation: taking the most
 * recent passed every test).  Sixteen silent clients connect 100 ms
 * apart; once all have been silent a second, the first one goes.
 */
static void
test_longest_stalled_goes(void)
{
	const char *hold = "nlmctl 1 hold\n";
	struct cs_srv cs;
	int fds[16], fd, i, gone = -1, ngone = 0;
	char buf[256];

	cs_ready = true;
	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	for (i = 0; i < 16; i++) {
		fds[i] = cs_connect(&cs);
		(void)ev_run_once(cs.loop, 0);
		cs_clock_ms += 100;
	}
	cs_clock_ms += 1000;
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, hold, strlen(hold), 0) ==
	    (ssize_t)strlen(hold));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
	cs_answer(&cs, fd, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	close(fd);
	for (i = 0; i < 16; i++) {
		if (recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) == 0) {
			gone = i;
			ngone++;
		}
		close(fds[i]);
	}
	printf("\n    the newcomer took the place of client %d ", gone);
	CU_ASSERT_EQUAL(ngone, 1);
	CU_ASSERT_EQUAL(gone, 0);
	(void)cs_turns(&cs, 20, 5);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * A client that has not sent its whole request in CTL_REQ_TIMEOUT_MS
 * (10 s) is closed, even when nobody needs its place (found by
 * mutation: without the timer every test passed).  Not a millisecond
 * before.
 */
static void
test_request_timeout(void)
{
	const char *part = "nlmctl 1 ho";
	struct cs_srv cs;
	char c;
	int fd;

	cs_clock_ms = 1000000;
	ev_set_clock(cs_clock);
	cs_start(&cs);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, part, strlen(part), 0) ==
	    (ssize_t)strlen(part));
	(void)ev_run_once(cs.loop, 0);
	(void)ev_run_once(cs.loop, 0);
	cs_clock_ms += 9999;
	(void)ev_run_once(cs.loop, 0);
	CU_ASSERT(recv(fd, &c, 1, MSG_DONTWAIT) == -1 && errno == EAGAIN);
	cs_clock_ms += 1;
	(void)ev_run_once(cs.loop, 0);
	CU_ASSERT_EQUAL(recv(fd, &c, 1, MSG_DONTWAIT), 0);
	close(fd);
	cs_stop(&cs);
	ev_set_clock(NULL);
}

/*
 * What the server reads of a request is bounded: CTL_REQ_MAX bytes
 * without a newline are refused with an error line (found by mutation:
 * with the bound tested as "more than", a request of exactly that many
 * bytes was closed without a word and every test passed); a NUL byte in
 * a request is refused and the command never runs (found by mutation:
 * without that check "host=a\0b" ran the command for host "a").
 */
static void
test_request_bounds(void)
{
	static const char nul[] = "nlmctl 1 echoerr host=a\0b\n";
	char req[CTL_REQ_MAX], buf[256];
	struct cs_srv cs;
	unsigned runs;
	int fd;

	cs_start(&cs);
	memset(req, 'a', sizeof(req));
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, sizeof(req), 0) == (ssize_t)sizeof(req));
	cs_answer(&cs, fd, buf, sizeof(buf));
	close(fd);
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 error request longer than "
	    "4096 bytes\n");

	runs = cs_echoerr_runs;
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, nul, sizeof(nul) - 1, 0) ==
	    (ssize_t)sizeof(nul) - 1);
	cs_answer(&cs, fd, buf, sizeof(buf));
	close(fd);
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 error request contains a NUL "
	    "byte\n");
	CU_ASSERT_EQUAL(cs_echoerr_runs, runs);
	cs_stop(&cs);
}

/*
 * The socket path of a running server, or a file that is no socket: a
 * second server refuses it, and the first keeps answering (before, the
 * path was unlinked whatever it was: a second nlmd with another state
 * directory silently took the first one's control socket, and a
 * mistyped control-socket could delete a file).  A socket nobody listens
 * on (left by a crash) is taken over.
 */
static void
test_path_taken(void)
{
	const char *req = "nlmctl 1 hold\n";
	struct ctl_srv *second;
	struct cs_srv cs;
	char err[256] = "", buf[256], file[300];
	struct stat sb;
	int fd;

	cs_ready = true;
	cs_start(&cs);
	second = ctl_srv_new(cs.loop, cs.sun.sun_path, -1, err, sizeof(err));
	printf("\n    second server on the path: %s ", second == NULL ? err :
	    "started");
	CU_ASSERT_PTR_NULL(second);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "listens on it"));
	ctl_srv_free(second);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
	cs_answer(&cs, fd, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nnlmctl 1 end 0\n");
	close(fd);

	snprintf(file, sizeof(file), "%s/not-a-socket", cs.dir);
	CU_ASSERT_FATAL((fd = open(file, O_CREAT | O_WRONLY, 0600)) != -1);
	close(fd);
	second = ctl_srv_new(cs.loop, file, -1, err, sizeof(err));
	CU_ASSERT_PTR_NULL(second);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a socket"));
	CU_ASSERT(stat(file, &sb) == 0 && S_ISREG(sb.st_mode));
	ctl_srv_free(second);
	(void)unlink(file);

	/* Stale: bound, never listened on. */
	snprintf(file, sizeof(file), "%s/stale.sock", cs.dir);
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		CU_ASSERT_FATAL(strlen(file) < sizeof(sun.sun_path));
		memcpy(sun.sun_path, file, strlen(file) + 1);
		CU_ASSERT_FATAL((fd = socket(AF_UNIX, SOCK_STREAM, 0)) != -1);
		CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sun,
		    sizeof(sun)) == 0);
		close(fd);
	}
	second = ctl_srv_new(cs.loop, file, -1, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL(second);
	ctl_srv_free(second);
	cs_stop(&cs);
}

/*
 * The socket is made with its mode -- 0600, 0660 with control-group, its
 * group that one -- whatever the process umask, which is left as it was.
 * (It was chmod()ed and chown()ed by name after bind(), which follows a
 * link another user put in its place meanwhile: not shown here, a race.)
 */
static void
test_socket_mode(void)
{
	struct cs_srv cs;
	struct stat sb;
	mode_t omask;

	omask = umask(0);
	cs_start(&cs);
	CU_ASSERT_EQUAL(umask(0), 0);
	CU_ASSERT_FATAL(lstat(cs.sun.sun_path, &sb) == 0);
	CU_ASSERT(S_ISSOCK(sb.st_mode));
	CU_ASSERT_EQUAL(sb.st_mode & 07777, 0600);
	cs_stop(&cs);
	(void)umask(022);
	cs_start_group(&cs, (long)getgid());
	CU_ASSERT_EQUAL(umask(022), 022);
	CU_ASSERT_FATAL(lstat(cs.sun.sun_path, &sb) == 0);
	CU_ASSERT_EQUAL(sb.st_mode & 07777, 0660);
	CU_ASSERT_EQUAL(sb.st_gid, getgid());
	cs_stop(&cs);
	(void)umask(omask);
}

/*
 * A server that goes away removes its own socket only: one whose path was
 * removed (by hand) and taken by a second server leaves the second one's
 * socket in place (before, ctl_srv_free() unlinked the path whatever was
 * there now).
 */
static void
test_free_not_others(void)
{
	struct ctl_srv *second;
	struct cs_srv cs;
	char err[256] = "";
	struct stat sb;
	int fd;

	cs_start(&cs);
	CU_ASSERT_FATAL(unlink(cs.sun.sun_path) == 0);
	second = ctl_srv_new(cs.loop, cs.sun.sun_path, -1, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(second);
	ctl_srv_free(cs.srv);
	cs.srv = NULL;
	CU_ASSERT(lstat(cs.sun.sun_path, &sb) == 0 && S_ISSOCK(sb.st_mode));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd != -1);
	printf("\n    the second server after the first went: %s ",
	    connect(fd, (struct sockaddr *)&cs.sun, sizeof(cs.sun)) == 0 ?
	    "reachable" : strerror(errno));
	close(fd);
	ctl_srv_free(second);
	CU_ASSERT(lstat(cs.sun.sun_path, &sb) == -1 && errno == ENOENT);
	cs_stop(&cs);
}

/*
 * Another user's control socket, in a directory both may write (no
 * sticky bit): the probe's connect() fails with EACCES, which was taken
 * for "nobody listens" -- the socket was unlinked and taken over (found
 * by review).  In a child as uid 65534; root only.
 */
static void
test_path_other_user(void)
{
	struct cs_srv cs;
	struct stat before, after;
	int status = 0;
	pid_t pid;

	if (geteuid() != 0) {
		tests_skip("another user's socket needs root (setuid)");
		return;
	}
	cs_ready = true;
	cs_start(&cs);
	CU_ASSERT_FATAL(chmod(cs.dir, 0777) == 0);
	CU_ASSERT_FATAL(lstat(cs.sun.sun_path, &before) == 0);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		struct ev_loop *loop;
		struct ctl_srv *s;
		char err[256] = "";

		if (setgid(65534) == -1 || setuid(65534) == -1 ||
		    (loop = ev_loop_new()) == NULL)
			_exit(3);
		s = ctl_srv_new(loop, cs.sun.sun_path, -1, err, sizeof(err));
		_exit(s == NULL && strstr(err, "not removed") != NULL ? 0 : 1);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(lstat(cs.sun.sun_path, &after) == 0 &&
	    after.st_ino == before.st_ino);
	printf("\n    uid 65534 at root's socket: %s ", WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 ? "refused" : "took it over");
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_FATAL(chmod(cs.dir, 0700) == 0);
	cs_stop(&cs);
}

/*
 * The error line is one line, whatever the request named: a value is
 * percent-decoded, so "host=x%0Anlmctl%201%20end%200" is a name holding a
 * newline, and release's "no host named x" went out as an error line
 * followed by a forged "nlmctl 1 end 0" (and a terminal escape in a name
 * reached the operator's terminal as it was).  Control characters are
 * written \ooo, as ctl_vis() does.
 */
static void
test_error_one_line(void)
{
	struct cs_srv cs;
	const char *req = "nlmctl 1 echoerr host=x%0Anlmctl%201%20end%200"
	    "%1B%5B2J%09%7Fy\n";
	char buf[256];
	int fd;

	cs_start(&cs);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	cs_answer(&cs, fd, buf, sizeof(buf));
	printf("\n    %s", buf);
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 error no host named "
	    "x\\012nlmctl 1 end 0\\033[2J\\011\\177y\n");
	close(fd);
	cs_stop(&cs);
}

/*
 * An error once part of the answer is out is too late for an error line:
 * the reader gets what was sent, then the end of the stream, with no end
 * line (and no error line) -- it must not take what it got for all of
 * it.  Found by mutation: every test passed when ctl_error() wrote its
 * line after the body anyway, and when conn_flush() kept such a
 * connection open (it was never closed: nlmctl waited, and the loop
 * woke every turn to write nothing).
 */
static void
test_error_too_late(void)
{
	const char *req = "nlmctl 1 late\n";
	struct cs_srv cs;
	char buf[256];
	int fd;

	cs_start(&cs);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	CU_ASSERT_FATAL(shutdown(fd, SHUT_WR) == 0);
	cs_answer(&cs, fd, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 ok\nline 1\n");
	/* Closed: cs_answer() stopped at the end of the stream. */
	CU_ASSERT_EQUAL(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 0);
	close(fd);
	cs_stop(&cs);
}

/*
 * The server checks a request's arguments against what its command was
 * registered with, before the command runs: an argument it does not take
 * (a typo: "dryrun=1", or any argument to a command that takes none), or
 * a flag not 0 or 1 ("dry-run=yes"), is an error line and the command
 * never sees the request; what it takes reaches it.
 */
static void
test_args_checked(void)
{
	static const struct {
		const char	*req;
		const char	*answer;
		unsigned	 runs;	/* times the command ran: 0 or 1 */
	} t[] = {
		{ "nlmctl 1 echoerr host=a dryrun=1\n",
		  "nlmctl 1 error echoerr: unknown argument dryrun\n", 0 },
		{ "nlmctl 1 echoerr host=a dry-run=yes\n",
		  "nlmctl 1 error echoerr: dry-run: 0 or 1\n", 0 },
		{ "nlmctl 1 walk host=a\n",
		  "nlmctl 1 error walk: unknown argument host\n", 0 },
		{ "nlmctl 1 echoerr host=a dry-run=1\n",
		  "nlmctl 1 error no host named a\n", 1 },
		{ "nlmctl 1 echoerr\n", "nlmctl 1 error no host named \n", 1 },
	};
	struct cs_srv cs;
	char buf[256];
	unsigned runs;
	size_t i;
	int fd;

	cs_start(&cs);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		runs = cs_echoerr_runs;
		fd = cs_connect(&cs);
		CU_ASSERT_FATAL(send(fd, t[i].req, strlen(t[i].req), 0) ==
		    (ssize_t)strlen(t[i].req));
		cs_answer(&cs, fd, buf, sizeof(buf));
		close(fd);
		CU_ASSERT_STRING_EQUAL(buf, t[i].answer);
		CU_ASSERT_EQUAL(cs_echoerr_runs - runs, t[i].runs);
	}
	cs_stop(&cs);
}

/* Descriptors this process has open. */
static unsigned
cs_nfds(void)
{
	char path[64];
	unsigned n = 0;
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/*
 * A command the server does not have: an error line naming it, and the
 * connection closed.  No unit test had sent one (the coverage build).
 */
static void
test_unknown_command(void)
{
	const char *req = "nlmctl 1 frobnicate host=a\n";
	struct cs_srv cs;
	char buf[256];
	int fd;

	cs_start(&cs);
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	cs_answer(&cs, fd, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 error unknown command "
	    "'frobnicate'\n");
	CU_ASSERT_EQUAL(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 0);
	close(fd);
	cs_stop(&cs);
}

/*
 * nlmctl gone (killed) in the middle of a long answer: the next write
 * finds no reader, and the connection is closed, its descriptor given
 * back, its place free.  Kept, each such client cost a descriptor and one
 * of the CTL_MAX_CONNS places.
 */
static void
test_reader_gone_mid_answer(void)
{
	const char *req = "nlmctl 1 big\n";
	struct cs_srv cs;
	unsigned before;
	int fd, i;

	cs_start(&cs);
	before = cs_nfds();
	fd = cs_connect(&cs);
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	(void)ev_run_once(cs.loop, 0);		/* accepted */
	(void)ev_run_once(cs.loop, 0);		/* a first piece sent */
	CU_ASSERT_EQUAL_FATAL(cs_nfds(), before + 2);
	close(fd);
	for (i = 0; i < 20 && cs_nfds() != before; i++)
		(void)ev_run_once(cs.loop, 10);
	CU_ASSERT_EQUAL(cs_nfds(), before);
	/* The place is free again: a request is answered. */
	fd = cs_connect(&cs);
	req = "nlmctl 1 echoerr host=b\n";
	CU_ASSERT_FATAL(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	{
		char buf[256];

		cs_answer(&cs, fd, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, "nlmctl 1 error no host named b\n");
	}
	close(fd);
	cs_stop(&cs);
}

/*
 * A control socket that cannot be made: not an absolute path, or too
 * long; its directory cannot be made (under a file); it cannot be bound
 * (its directory a file).  Each is refused with a message naming the
 * path, and leaves no descriptor open and no socket behind.  No unit
 * test had reached these (the coverage build): nlmd's start refused
 * with them.
 */
static void
test_new_refused(void)
{
	char dir[32], file[64], path[160], err[512], longp[200];
	struct ev_loop *loop;
	unsigned before;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-ctlsrv-XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/file", dir);
	CU_ASSERT_FATAL((fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC,
	    0600)) != -1);
	close(fd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(loop = ev_loop_new());
	before = cs_nfds();

	err[0] = '\0';
	CU_ASSERT_PTR_NULL(ctl_srv_new(loop, "run/ctl.sock", -1, err,
	    sizeof(err)));
	printf("\n    %s", err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "control-socket run/ctl.sock: not "
	    "an absolute path"));
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	err[0] = '\0';
	CU_ASSERT_PTR_NULL(ctl_srv_new(loop, longp, -1, err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an absolute path of at most "
	    "107 bytes"));

	snprintf(path, sizeof(path), "%s/sub/ctl.sock", file);
	err[0] = '\0';
	CU_ASSERT_PTR_NULL(ctl_srv_new(loop, path, -1, err, sizeof(err)));
	printf("\n    %s", err);
	CU_ASSERT(strncmp(err, "control socket directory ", 25) == 0 &&
	    strstr(err, "/file/sub: Not a directory") != NULL);

	snprintf(path, sizeof(path), "%s/ctl.sock", file);
	err[0] = '\0';
	CU_ASSERT_PTR_NULL(ctl_srv_new(loop, path, -1, err, sizeof(err)));
	printf("\n    %s ", err);
	CU_ASSERT(strncmp(err, "control socket ", 15) == 0 &&
	    strstr(err, "/file/ctl.sock: Not a directory") != NULL);

	CU_ASSERT_EQUAL(cs_nfds(), before);
	ev_loop_free(loop);
	CU_ASSERT(unlink(file) == 0);
	CU_ASSERT(rmdir(dir) == 0);
}

int
ctl_register_srv(void)
{
	CU_pSuite s = CU_add_suite("control socket server", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "a held answer lets the loop sleep",
	    test_hold_sleeps) == NULL ||
	    CU_add_test(s, "... and when its reader went away",
	    test_hold_reader_gone) == NULL ||
	    CU_add_test(s, "a held answer whose commit the stop made is sent",
	    test_hold_at_stop) == NULL ||
	    CU_add_test(s, "out of descriptors: the loop still sleeps",
	    test_accept_emfile) == NULL ||
	    CU_add_test(s, "control-group: the peer's own groups",
	    test_control_group) == NULL ||
	    CU_add_test(s, "no control-group: root only",
	    test_no_group_root_only) == NULL ||
	    CU_add_test(s, "stalled readers give up their places",
	    test_stalled_readers) == NULL ||
	    CU_add_test(s, "walks that list nothing keep their places",
	    test_empty_pieces_not_stalled) == NULL ||
	    CU_add_test(s, "clients that send no request give up their places",
	    test_silent_clients) == NULL ||
	    CU_add_test(s, "a refused peer takes no stalled one's place",
	    test_refused_takes_no_place) == NULL ||
	    CU_add_test(s, "held answers keep their places",
	    test_held_not_stalled) == NULL ||
	    CU_add_test(s, "the client stalled longest gives up its place",
	    test_longest_stalled_goes) == NULL ||
	    CU_add_test(s, "a request not sent in 10 s: closed",
	    test_request_timeout) == NULL ||
	    CU_add_test(s, "a request's length and bytes are bounded",
	    test_request_bounds) == NULL ||
	    CU_add_test(s, "a path in use is not taken over",
	    test_path_taken) == NULL ||
	    CU_add_test(s, "another user's socket is not taken over",
	    test_path_other_user) == NULL ||
	    CU_add_test(s, "a server gone removes its own socket only",
	    test_free_not_others) == NULL ||
	    CU_add_test(s, "an error is one line, whatever it names",
	    test_error_one_line) == NULL ||
	    CU_add_test(s, "an error after the answer began cuts it off",
	    test_error_too_late) == NULL ||
	    CU_add_test(s, "the socket's mode whatever the umask",
	    test_socket_mode) == NULL ||
	    CU_add_test(s, "arguments a command does not take are refused",
	    test_args_checked) == NULL ||
	    CU_add_test(s, "an unknown command: an error line",
	    test_unknown_command) == NULL ||
	    CU_add_test(s, "a reader gone before a long answer: closed, its "
	    "descriptor given back", test_reader_gone_mid_answer) == NULL ||
	    CU_add_test(s, "a socket that cannot be made: refused, saying "
	    "why, nothing left open", test_new_refused) == NULL)
		return -1;
	return 0;
}
