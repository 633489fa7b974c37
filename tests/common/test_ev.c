/*
 * test_ev.c - common/ev.c: descriptor callbacks, timers (ordering, cancel,
 * re-arm) on a fake clock, the before-sleep hook, ev_run/ev_stop.
 *
 * Timers are driven by ev_set_clock(): the tests move `fake_now' and call
 * ev_run_once(loop, 0), so nothing depends on real time passing -- but
 * for the last two, which take the monotonic clock (20-50 ms of it) and
 * a signal.
 * Descriptors are pipes, which are ready (or not) immediately.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ct.h"
#include "ev.h"

static uint64_t fake_now;

/*
 * realloc() of the code under test goes through this (test-common is
 * linked with -Wl,--wrap=realloc): failing while realloc_fails is set.
 */
void	*__real_realloc(void *, size_t);
void	*__wrap_realloc(void *, size_t);
static bool realloc_fails;
static unsigned realloc_failed;
static unsigned realloc_after;		/* done, after one failed */

void *
__wrap_realloc(void *p, size_t size)
{
	if (realloc_fails) {
		realloc_failed++;
		errno = ENOMEM;
		return NULL;
	}
	if (realloc_failed > 0)
		realloc_after++;
	return __real_realloc(p, size);
}

static uint64_t
fake_clock(void)
{
	return fake_now;
}

static struct ev_loop *loop;

static int
ev_suite_init(void)
{
	fake_now = 1000000;
	ev_set_clock(fake_clock);
	return 0;
}

static int
ev_suite_clean(void)
{
	ev_set_clock(NULL);
	return 0;
}

static void
setup(void)
{
	fake_now = 1000000;
	loop = ev_loop_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
}

static void
teardown(void)
{
	ev_loop_free(loop);
	loop = NULL;
}

/* ---- a trace of what ran, in order ---- */

static char trace[256];

static void
trace_add(char c)
{
	size_t n = strlen(trace);

	if (n + 1 < sizeof(trace)) {
		trace[n] = c;
		trace[n + 1] = '\0';
	}
}

/* ---- descriptors ---- */

struct fdrec {
	int	calls;
	int	fd;
	int	events;
	void	*arg;
};

static void
rec_cb(struct ev_loop *l, int fd, int events, void *arg)
{
	struct fdrec *r = arg;

	(void)l;
	r->calls++;
	r->fd = fd;
	r->events = events;
	r->arg = arg;
	trace_add('F');
}

static void
test_loop_free_null(void)
{
	ev_loop_free(NULL);
	CU_PASS("ev_loop_free(NULL) is a no-op");
}

static void
test_fd_read(void)
{
	struct fdrec r = { 0 };
	int p[2];

	setup();
	CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
	CU_ASSERT(ev_fd_add(loop, p[0], EV_READ, rec_cb, &r) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 0);
	CU_ASSERT(write(p[1], "x", 1) == 1);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.fd, p[0]);
	CU_ASSERT_EQUAL(r.events, EV_READ);
	CU_ASSERT_PTR_EQUAL(r.arg, &r);
	/* Level-triggered: still readable, called again. */
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 2);
	/* Deleted: never again, even though still readable. */
	ev_fd_del(loop, p[0]);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 2);
	/* Deleting twice, or an fd never added, is harmless. */
	ev_fd_del(loop, p[0]);
	ev_fd_del(loop, p[1]);
	ev_fd_del(loop, 100000);
	ev_fd_del(loop, -1);
	close(p[0]);
	close(p[1]);
	teardown();
}

/*
 * A full turn (ev_turn_full): the ready descriptors not yet served wait,
 * and are served first in the next turn, once each; timers and the hook
 * run as usual; a deferred descriptor deleted and its number registered
 * again is not served for the old registration.
 */
#define FULL_N	4
static int full_order[3 * FULL_N], full_n;
static int full_fill = -1;	/* the descriptor whose call fills the turn */

static void
full_cb(struct ev_loop *el, int fd, int events, void *arg)
{
	(void)events;
	(void)arg;
	if (full_n < 3 * FULL_N)
		full_order[full_n++] = fd;
	if (fd == full_fill)
		ev_turn_full(el);
}

static int full_hooks;

static void
full_hook(struct ev_loop *el, void *arg)
{
	(void)el;
	(void)arg;
	full_hooks++;
}

static void
test_fd_turn_full(void)
{
	int p[FULL_N][2], i, first, served[FULL_N], q[2];

	setup();
	ev_set_beforesleep(loop, full_hook, NULL);
	full_hooks = 0;
	for (i = 0; i < FULL_N; i++) {
		CU_ASSERT_FATAL(pipe2(p[i], O_NONBLOCK) == 0);
		CU_ASSERT(ev_fd_add(loop, p[i][0], EV_READ, full_cb, NULL) ==
		    0);
		CU_ASSERT(write(p[i][1], "x", 1) == 1);
	}
	/* Whichever epoll reports first fills the turn: it alone is served. */
	full_n = 0;
	full_fill = -2;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(full_n, FULL_N);	/* not full: all of them */
	first = full_order[0];
	full_n = 0;
	full_fill = first;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(full_n, 1);
	CU_ASSERT_EQUAL(full_order[0], first);
	CU_ASSERT(!ev_turn_full_p(loop) || full_n == 1);
	CU_ASSERT_EQUAL(full_hooks, 2);
	/* Next turn: the other three first, each once, then `first'. */
	full_n = 0;
	full_fill = -2;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(full_n, FULL_N);
	memset(served, 0, sizeof(served));
	for (i = 0; i < full_n; i++) {
		int j;

		for (j = 0; j < FULL_N; j++)
			if (full_order[i] == p[j][0])
				served[j]++;
		if (i < FULL_N - 1)
			CU_ASSERT(full_order[i] != first);
	}
	CU_ASSERT_EQUAL(full_order[FULL_N - 1], first);
	for (i = 0; i < FULL_N; i++)
		CU_ASSERT_EQUAL(served[i], 1);
	CU_ASSERT(!ev_turn_full_p(loop));
	/*
	 * Deferred, then deleted and its number taken by another registration
	 * (a pipe opened again): the new one is served as epoll reports it,
	 * not for the old one's deferral.
	 */
	full_n = 0;
	full_fill = -2;
	for (i = 0; i < FULL_N; i++) {
		ev_fd_del(loop, p[i][0]);
		CU_ASSERT(ev_fd_add(loop, p[i][0], EV_READ, full_cb, NULL) ==
		    0);
	}
	full_fill = p[0][0];
	/* Only p[0] is ready now; the others are drained. */
	for (i = 1; i < FULL_N; i++) {
		char c;

		CU_ASSERT(read(p[i][0], &c, 1) == 1);
	}
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(full_n, 1);
	full_fill = -2;
	/* Make p[1] ready and full again on p[0]: p[1] deferred... */
	CU_ASSERT(write(p[1][1], "y", 1) == 1);
	full_n = 0;
	full_fill = p[0][0];
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	/* ...unless epoll put it first; then there is nothing to defer. */
	if (full_n == 1 && full_order[0] == p[0][0]) {
		int n1 = p[1][0];

		ev_fd_del(loop, n1);
		close(n1);
		close(p[1][1]);
		CU_ASSERT_FATAL(pipe2(q, O_NONBLOCK) == 0);
		CU_ASSERT_EQUAL(q[0], n1);	/* the lowest free number */
		CU_ASSERT(ev_fd_add(loop, q[0], EV_READ, full_cb, NULL) == 0);
		full_n = 0;
		full_fill = -2;
		CU_ASSERT(ev_run_once(loop, 0) == 0);
		/* p[0] (still ready) only: q[0] is not ready, not served. */
		for (i = 0; i < full_n; i++)
			CU_ASSERT(full_order[i] != q[0]);
		p[1][0] = q[0];
		p[1][1] = q[1];
	}
	for (i = 0; i < FULL_N; i++) {
		ev_fd_del(loop, p[i][0]);
		close(p[i][0]);
		close(p[i][1]);
	}
	ev_set_beforesleep(loop, NULL, NULL);
	teardown();
}

static void
test_fd_write_and_set(void)
{
	struct fdrec r = { 0 };
	int p[2];

	setup();
	CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
	/* The write end of an empty pipe is writable at once. */
	CU_ASSERT(ev_fd_add(loop, p[1], EV_WRITE, rec_cb, &r) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.events, EV_WRITE);
	/* Switch to read: a write end never becomes readable. */
	CU_ASSERT(ev_fd_set(loop, p[1], EV_READ) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	/* Same events again is a no-op that succeeds. */
	CU_ASSERT(ev_fd_set(loop, p[1], EV_READ) == 0);
	CU_ASSERT(ev_fd_set(loop, p[1], EV_READ | EV_WRITE) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 2);
	CU_ASSERT_EQUAL(r.events, EV_WRITE);
	/* Re-adding replaces the registration (callback and arg). */
	{
		struct fdrec r2 = { 0 };

		CU_ASSERT(ev_fd_add(loop, p[1], EV_WRITE, rec_cb, &r2) == 0);
		CU_ASSERT(ev_run_once(loop, 0) == 0);
		CU_ASSERT_EQUAL(r.calls, 2);
		CU_ASSERT_EQUAL(r2.calls, 1);
	}
	ev_fd_del(loop, p[1]);
	close(p[0]);
	close(p[1]);
	teardown();
}

static void
test_fd_errors(void)
{
	struct fdrec r = { 0 };
	int p[2];

	setup();
	CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
	errno = 0;
	CU_ASSERT(ev_fd_add(loop, -1, EV_READ, rec_cb, &r) == -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	errno = 0;
	CU_ASSERT(ev_fd_add(loop, p[0], 0, rec_cb, &r) == -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	/* ev_fd_set on an fd that is not watched. */
	errno = 0;
	CU_ASSERT(ev_fd_set(loop, p[0], EV_READ) == -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT(ev_fd_set(loop, 100000, EV_READ) == -1);
	CU_ASSERT(ev_fd_set(loop, -1, EV_READ) == -1);
	CU_ASSERT(ev_fd_add(loop, p[0], EV_READ, rec_cb, &r) == 0);
	/* A closed descriptor: epoll refuses, the call reports it. */
	CU_ASSERT(ev_fd_add(loop, 999, EV_READ, rec_cb, &r) == -1);
	ev_fd_del(loop, p[0]);
	close(p[0]);
	close(p[1]);
	teardown();
}

/*
 * Events 0: registered, watched for nothing -- not even the hang-up that
 * epoll reports whatever it is asked for -- until events are set again,
 * with the same callback.  (ctl/ctlsrv.c holds an answer so while its
 * client's socket is readable: the client shut down its sending side.)
 */
static void
test_fd_pause(void)
{
	struct fdrec r = { 0 };
	int sv[2];

	setup();
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv) == 0);
	CU_ASSERT(ev_fd_add(loop, sv[0], EV_READ, rec_cb, &r) == 0);
	CU_ASSERT(write(sv[1], "x", 1) == 1);
	CU_ASSERT(ev_fd_set(loop, sv[0], 0) == 0);
	CU_ASSERT(ev_fd_set(loop, sv[0], 0) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 0);
	/* The peer hangs up: still nothing while paused. */
	close(sv[1]);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT(ev_fd_set(loop, sv[0], EV_WRITE) == 0);
	CU_ASSERT(ev_fd_set(loop, sv[0], 0) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 0);
	/* Watched again: the same callback and argument. */
	CU_ASSERT(ev_fd_set(loop, sv[0], EV_READ) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.fd, sv[0]);
	CU_ASSERT_PTR_EQUAL(r.arg, &r);
	/* Paused, then deleted: no longer registered. */
	CU_ASSERT(ev_fd_set(loop, sv[0], 0) == 0);
	ev_fd_del(loop, sv[0]);
	errno = 0;
	CU_ASSERT(ev_fd_set(loop, sv[0], EV_READ) == -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	/* Paused, then added again: watched (epoll ADD, not MOD). */
	CU_ASSERT(ev_fd_add(loop, sv[0], EV_READ, rec_cb, &r) == 0);
	CU_ASSERT(ev_fd_set(loop, sv[0], 0) == 0);
	CU_ASSERT(ev_fd_add(loop, sv[0], EV_READ, rec_cb, &r) == 0);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 2);
	ev_fd_del(loop, sv[0]);
	close(sv[0]);
	teardown();
}

/*
 * A pipe whose writer closed, drained: epoll reports EPOLLHUP alone (no
 * EPOLLIN).  A reader is called, with EV_READ only -- what it asked for
 * -- and reads the end of file; not called, it would never learn of it
 * while the loop woke for the hang-up every turn.
 */
static void
test_fd_hangup(void)
{
	struct fdrec r = { 0 };
	int p[2];

	setup();
	CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
	CU_ASSERT(ev_fd_add(loop, p[0], EV_READ, rec_cb, &r) == 0);
	close(p[1]);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.events, EV_READ);
	ev_fd_del(loop, p[0]);
	close(p[0]);
	teardown();
}

static void
test_fd_high_number(void)
{
	struct fdrec r = { 0 };
	int p[2], hi;

	setup();
	CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
	/* Far past the initial table: the table grows. */
	hi = dup2(p[0], 700);
	CU_ASSERT_FATAL(hi == 700);
	CU_ASSERT(ev_fd_add(loop, hi, EV_READ, rec_cb, &r) == 0);
	CU_ASSERT(write(p[1], "x", 1) == 1);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.fd, 700);
	ev_fd_del(loop, hi);
	close(hi);
	close(p[0]);
	close(p[1]);
	teardown();
}

/* Two ready fds whose callbacks each delete the other: one call only. */
struct pair {
	int	fds[2];
	int	calls;
};

static void
del_other_cb(struct ev_loop *l, int fd, int events, void *arg)
{
	struct pair *pr = arg;

	(void)events;
	pr->calls++;
	ev_fd_del(l, fd == pr->fds[0] ? pr->fds[1] : pr->fds[0]);
}

static void
test_fd_del_in_callback(void)
{
	struct pair pr;
	int a[2], b[2];

	setup();
	CU_ASSERT_FATAL(pipe2(a, O_NONBLOCK) == 0);
	CU_ASSERT_FATAL(pipe2(b, O_NONBLOCK) == 0);
	memset(&pr, 0, sizeof(pr));
	pr.fds[0] = a[0];
	pr.fds[1] = b[0];
	CU_ASSERT(ev_fd_add(loop, a[0], EV_READ, del_other_cb, &pr) == 0);
	CU_ASSERT(ev_fd_add(loop, b[0], EV_READ, del_other_cb, &pr) == 0);
	CU_ASSERT(write(a[1], "x", 1) == 1);
	CU_ASSERT(write(b[1], "x", 1) == 1);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(pr.calls, 1);
	ev_fd_del(loop, a[0]);
	ev_fd_del(loop, b[0]);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	teardown();
}

/*
 * Two ready fds; the first callback deletes and closes the other and
 * opens a pipe that gets its number, registered afresh: the new
 * registration has nothing to read, and the readiness epoll reported in
 * this turn was the closed descriptor's.
 */
struct reuse {
	int		fds[2];		/* read ends watched first */
	int		calls;
	int		nfd[2];		/* the new pipe */
	struct fdrec	rec;
};

static void
reuse_cb(struct ev_loop *l, int fd, int events, void *arg)
{
	struct reuse *ru = arg;
	int other = fd == ru->fds[0] ? ru->fds[1] : ru->fds[0];

	(void)events;
	if (ru->calls++ > 0)
		return;
	ev_fd_del(l, other);
	CU_ASSERT(close(other) == 0);
	CU_ASSERT_FATAL(pipe2(ru->nfd, O_NONBLOCK) == 0);
	CU_ASSERT_EQUAL(ru->nfd[0], other);
	CU_ASSERT(ev_fd_add(l, ru->nfd[0], EV_READ, rec_cb, &ru->rec) == 0);
}

static void
test_fd_reused_in_turn(void)
{
	struct reuse ru;
	int a[2], b[2];

	setup();
	memset(&ru, 0, sizeof(ru));
	CU_ASSERT_FATAL(pipe2(a, O_NONBLOCK) == 0);
	CU_ASSERT_FATAL(pipe2(b, O_NONBLOCK) == 0);
	ru.fds[0] = a[0];
	ru.fds[1] = b[0];
	CU_ASSERT(ev_fd_add(loop, a[0], EV_READ, reuse_cb, &ru) == 0);
	CU_ASSERT(ev_fd_add(loop, b[0], EV_READ, reuse_cb, &ru) == 0);
	CU_ASSERT(write(a[1], "x", 1) == 1);
	CU_ASSERT(write(b[1], "x", 1) == 1);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(ru.calls, 1);
	/* Not called with the closed descriptor's readiness. */
	CU_ASSERT_EQUAL(ru.rec.calls, 0);
	/* Its own readiness reaches it. */
	CU_ASSERT(write(ru.nfd[1], "y", 1) == 1);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(ru.rec.calls, 1);
	CU_ASSERT_EQUAL(ru.rec.fd, ru.nfd[0]);
	ev_fd_del(loop, a[0]);
	ev_fd_del(loop, ru.nfd[0]);
	close(a[0]);
	close(a[1]);
	close(b[1]);
	close(ru.nfd[0]);
	close(ru.nfd[1]);
	teardown();
}

/* ---- timers ---- */

struct tmrec {
	char	name;
	int	calls;
	uint64_t fired_at;
};

static void
tm_cb(struct ev_loop *l, void *arg)
{
	struct tmrec *r = arg;

	(void)l;
	r->calls++;
	r->fired_at = ev_now_ms();
	trace_add(r->name);
}

static void
test_clock(void)
{
	struct timespec ts;
	uint64_t mono, a, b;

	fake_now = 42;
	CU_ASSERT_EQUAL(ev_now_ms(), 42);
	ev_set_clock(NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	a = ev_now_ms();
	b = ev_now_ms();
	CU_ASSERT(a >= mono && a - mono < 1000);
	CU_ASSERT(b >= a);
	ev_set_clock(fake_clock);
	CU_ASSERT_EQUAL(ev_now_ms(), 42);
}

static void
test_timer_order(void)
{
	struct ev_timer t[3];
	struct tmrec r[3] = { { 'a', 0, 0 }, { 'b', 0, 0 }, { 'c', 0, 0 } };

	setup();
	memset(t, 0, sizeof(t));
	trace[0] = '\0';
	ev_timer_set(loop, &t[0], 30, tm_cb, &r[0]);
	ev_timer_set(loop, &t[1], 10, tm_cb, &r[1]);
	ev_timer_set(loop, &t[2], 20, tm_cb, &r[2]);
	CU_ASSERT(ev_timer_armed(&t[0]) && ev_timer_armed(&t[1]) &&
	    ev_timer_armed(&t[2]));
	/* Nothing is due yet. */
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	fake_now += 9;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_STRING_EQUAL(trace, "");
	/* Exactly due fires (when <= now). */
	fake_now += 1;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_STRING_EQUAL(trace, "b");
	CU_ASSERT(!ev_timer_armed(&t[1]));
	/* Both overdue ones fire in one turn, earliest first. */
	fake_now += 100;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_STRING_EQUAL(trace, "bca");
	CU_ASSERT(r[0].calls == 1 && r[1].calls == 1 && r[2].calls == 1);
	CU_ASSERT(!ev_timer_armed(&t[0]) && !ev_timer_armed(&t[2]));
	/* One-shot: nothing more. */
	fake_now += 1000;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_STRING_EQUAL(trace, "bca");
	teardown();
}

/* A delay past the clock's end does not wrap round to "due now". */
static void
test_timer_far(void)
{
	struct ev_timer t;
	struct tmrec r = { 'z', 0, 0 };

	setup();
	memset(&t, 0, sizeof(t));
	trace[0] = '\0';
	fake_now += 1000;
	ev_timer_set(loop, &t, UINT64_MAX - 10, tm_cb, &r);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	fake_now += 100000;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 0);
	CU_ASSERT(ev_timer_armed(&t));
	ev_timer_cancel(loop, &t);
	teardown();
}

static void
test_timer_cancel(void)
{
	struct ev_timer t[4];
	struct tmrec r[4] = { { 'a', 0, 0 }, { 'b', 0, 0 }, { 'c', 0, 0 },
	    { 'd', 0, 0 } };
	int i;

	setup();
	memset(t, 0, sizeof(t));
	trace[0] = '\0';
	/* Cancel of a never-armed (zeroed) timer is harmless. */
	ev_timer_cancel(loop, &t[0]);
	ev_timer_cancel(loop, NULL);
	CU_ASSERT(!ev_timer_armed(&t[0]));
	for (i = 0; i < 4; i++)
		ev_timer_set(loop, &t[i], (uint64_t)(10 * (i + 1)), tm_cb,
		    &r[i]);
	/* Cancel the root, a middle one, the last slot. */
	ev_timer_cancel(loop, &t[0]);
	ev_timer_cancel(loop, &t[2]);
	ev_timer_cancel(loop, &t[2]);
	CU_ASSERT(!ev_timer_armed(&t[0]) && !ev_timer_armed(&t[2]));
	CU_ASSERT(ev_timer_armed(&t[1]) && ev_timer_armed(&t[3]));
	fake_now += 1000;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_STRING_EQUAL(trace, "bd");
	teardown();
}

static void
test_timer_rearm(void)
{
	struct ev_timer t;
	struct tmrec r = { 'a', 0, 0 };

	setup();
	memset(&t, 0, sizeof(t));
	trace[0] = '\0';
	ev_timer_set(loop, &t, 10, tm_cb, &r);
	/* Re-arming moves it: later ... */
	ev_timer_set(loop, &t, 50, tm_cb, &r);
	fake_now += 20;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 0);
	fake_now += 30;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.fired_at, 1000050);
	/* ... or earlier; and once fired it can be armed again. */
	ev_timer_set(loop, &t, 100, tm_cb, &r);
	ev_timer_set(loop, &t, 5, tm_cb, &r);
	fake_now += 5;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 2);
	fake_now += 1000;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(r.calls, 2);
	teardown();
}

/* A periodic timer: the callback re-arms itself. */
struct periodic {
	struct ev_timer	t;
	int		calls;
	int		max;
};

static void
periodic_cb(struct ev_loop *l, void *arg)
{
	struct periodic *p = arg;

	if (++p->calls < p->max)
		ev_timer_set(l, &p->t, 10, periodic_cb, p);
}

static void
test_timer_periodic(void)
{
	struct periodic p;
	int i;

	setup();
	memset(&p, 0, sizeof(p));
	p.max = 3;
	ev_timer_set(loop, &p.t, 10, periodic_cb, &p);
	for (i = 0; i < 10; i++) {
		fake_now += 10;
		CU_ASSERT(ev_run_once(loop, 0) == 0);
		CU_ASSERT_EQUAL(p.calls, i < 3 ? i + 1 : 3);
	}
	CU_ASSERT(!ev_timer_armed(&p.t));
	teardown();
}

/* A timer that re-arms itself with delay 0, and counts. */
static void
again_cb(struct ev_loop *l, void *arg)
{
	struct periodic *p = arg;

	p->calls++;
	ev_timer_set(l, &p->t, 0, again_cb, p);
}

/*
 * A timer re-armed with delay 0 from its own callback runs once per
 * turn, however many other timers are armed; and one turn runs at most
 * 1,024 due timers, the rest in the next turns without waiting.
 */
static void
test_timer_turn_bounds(void)
{
	static struct ev_timer many[3000];
	static struct tmrec rec[3000];
	struct periodic p;
	int i, calls, prev, turns;

	setup();
	memset(&p, 0, sizeof(p));
	memset(many, 0, sizeof(many));
	memset(rec, 0, sizeof(rec));
	for (i = 0; i < 3000; i++) {
		rec[i].name = 'x';
		ev_timer_set(loop, &many[i], 1000, tm_cb, &rec[i]);
	}
	ev_timer_set(loop, &p.t, 0, again_cb, &p);
	for (i = 1; i <= 3; i++) {
		CU_ASSERT(ev_run_once(loop, 0) == 0);
		CU_ASSERT_EQUAL(p.calls, i);
	}
	trace[0] = '\0';
	fake_now += 1000;
	for (i = 0, calls = 0; i < 3000; i++)
		calls += rec[i].calls;
	CU_ASSERT_EQUAL(calls, 0);
	CU_ASSERT(ev_run_once(loop, -1) == 0);
	for (i = 0, calls = 0; i < 3000; i++)
		calls += rec[i].calls;
	CU_ASSERT(calls <= 1024);
	CU_ASSERT(calls > 0);
	/*
	 * The rest are due: these turns do not sleep (timeout -1), each
	 * runs some (fewer than 1,024 when they take over a millisecond).
	 */
	for (turns = 0; calls < 3000 && turns < 3000; turns++) {
		prev = calls;
		CU_ASSERT(ev_run_once(loop, -1) == 0);
		for (i = 0, calls = 0; i < 3000; i++)
			calls += rec[i].calls;
		CU_ASSERT(calls > prev);
		CU_ASSERT(calls - prev <= 1024);
	}
	for (i = 0; i < 3000; i++)
		CU_ASSERT(rec[i].calls <= 1);
	CU_ASSERT_EQUAL(calls, 3000);
	ev_timer_cancel(loop, &p.t);
	teardown();
}

/* A timer whose callback takes 300 us of real time. */
static void
slow_cb(struct ev_loop *l, void *arg)
{
	int *calls = arg;
	uint64_t t0 = ev_monotonic_us();

	(void)l;
	(*calls)++;
	while (ev_monotonic_us() - t0 < 300)
		continue;
}

/*
 * Due timers stop running once a turn spent a millisecond on them (the
 * check follows each callback): twenty slow ones take several turns of at
 * most four each, none of which sleeps.
 */
static void
test_timer_turn_time(void)
{
	static struct ev_timer slow[20];
	int i, calls = 0, prev, turns;

	setup();
	memset(slow, 0, sizeof(slow));
	for (i = 0; i < 20; i++)
		ev_timer_set(loop, &slow[i], 10, slow_cb, &calls);
	fake_now += 10;
	for (turns = 0; calls < 20 && turns < 20; turns++) {
		prev = calls;
		CU_ASSERT(ev_run_once(loop, -1) == 0);
		CU_ASSERT(calls > prev);
		CU_ASSERT(calls - prev <= 4);
	}
	CU_ASSERT_EQUAL(calls, 20);
	CU_ASSERT(turns >= 5);
	teardown();
}

/* A callback cancels a timer that is also due in the same turn. */
struct canceller {
	struct ev_timer	*victim;
	int		 calls;
};

static void
cancel_cb(struct ev_loop *l, void *arg)
{
	struct canceller *c = arg;

	c->calls++;
	ev_timer_cancel(l, c->victim);
}

static void
test_timer_cancel_from_callback(void)
{
	struct ev_timer t1, t2;
	struct tmrec r = { 'v', 0, 0 };
	struct canceller c;

	setup();
	memset(&t1, 0, sizeof(t1));
	memset(&t2, 0, sizeof(t2));
	c.victim = &t2;
	c.calls = 0;
	ev_timer_set(loop, &t1, 10, cancel_cb, &c);
	ev_timer_set(loop, &t2, 20, tm_cb, &r);
	fake_now += 100;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(r.calls, 0);
	teardown();
}

/*
 * HOW IT WORKS: a model check of the heap.  Arm N timers at random
 * delays, cancel and re-arm random ones, then advance the clock in random
 * steps; every armed timer must fire exactly once, in non-decreasing
 * expiry order, never before its time, and cancelled ones never.
 */
#define NT	500

struct mtimer {
	struct ev_timer	t;
	uint64_t	when;		/* expected expiry, 0 if not armed */
	int		calls;
};

static uint64_t model_last;
static int model_bad;

static void
model_cb(struct ev_loop *l, void *arg)
{
	struct mtimer *m = arg;

	(void)l;
	m->calls++;
	if (m->when == 0 || m->when > ev_now_ms() || m->when < model_last)
		model_bad++;
	model_last = m->when;
	m->when = 0;
}

static void
test_timer_model(void)
{
	static struct mtimer m[NT];
	unsigned seed = 12345;
	int i, round, armed = 0, fired = 0;

	setup();
	memset(m, 0, sizeof(m));
	model_last = 0;
	model_bad = 0;
	srand(seed);
	for (i = 0; i < NT; i++) {
		uint64_t d = (uint64_t)(rand() % 1000);

		ev_timer_set(loop, &m[i].t, d, model_cb, &m[i]);
		m[i].when = fake_now + d;
	}
	for (i = 0; i < NT; i++) {
		int k = rand() % NT;

		if (rand() % 2) {
			ev_timer_cancel(loop, &m[k].t);
			m[k].when = 0;
		} else {
			uint64_t d = (uint64_t)(rand() % 1000);

			ev_timer_set(loop, &m[k].t, d, model_cb, &m[k]);
			m[k].when = fake_now + d;
		}
	}
	for (i = 0; i < NT; i++) {
		armed += m[i].when != 0;
		CU_ASSERT_EQUAL(ev_timer_armed(&m[i].t), m[i].when != 0);
	}
	for (round = 0; round < 200; round++) {
		fake_now += (uint64_t)(rand() % 10);
		CU_ASSERT(ev_run_once(loop, 0) == 0);
	}
	fake_now += 1000;
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	for (i = 0; i < NT; i++) {
		CU_ASSERT(m[i].calls <= 1);
		fired += m[i].calls;
		CU_ASSERT(!ev_timer_armed(&m[i].t));
	}
	CU_ASSERT_EQUAL(fired, armed);
	CU_ASSERT_EQUAL(model_bad, 0);
	teardown();
}

/*
 * The exact order, against a model that keeps every timer in an array
 * and scans it: the earliest expiry first, equal expiries in arming
 * order, only timers armed before the turn's run began, at most
 * EV_TIMERS_PER_TURN (1024) a turn.  Thousands of timers on few distinct
 * expiries (ties everywhere), cancelled and re-armed at random between
 * turns, and, from their callbacks, re-armed (delay 0 included) or
 * cancelling another timer, wherever it sits in the loop's heap.
 */
#define OM_N		3000
#define OM_PER_TURN	1024

static struct {
	struct ev_timer	 t[OM_N];
	/* the model */
	bool		 armed[OM_N];
	uint64_t	 when[OM_N];
	uint64_t	 seq[OM_N];
	uint64_t	 seqs;
	unsigned	 fired[OM_N];
	/* what the loop called, in order */
	unsigned	 got[4 * OM_N];
	size_t		 ngot;
	int		 overflow;
} om;

static void	om_cb(struct ev_loop *, void *);

static void
om_arm(unsigned i, uint64_t delay, bool real)
{
	om.armed[i] = true;
	om.when[i] = fake_now + delay;
	om.seq[i] = ++om.seqs;
	if (real)
		ev_timer_set(loop, &om.t[i], delay, om_cb,
		    (void *)(uintptr_t)i);
}

static void
om_cancel(unsigned i, bool real)
{
	om.armed[i] = false;
	if (real)
		ev_timer_cancel(loop, &om.t[i]);
}

/* What a callback does, the same in the loop and in the model. */
static void
om_fire(unsigned i, bool real)
{
	om.fired[i]++;
	if (i % 7 == 0 && om.fired[i] < 3)
		om_arm(i, i % 3, real);
	if (i % 11 == 0)
		om_cancel((i * 7 + 1) % OM_N, real);
}

static void
om_cb(struct ev_loop *l, void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;

	(void)l;
	if (om.ngot < sizeof(om.got) / sizeof(om.got[0]))
		om.got[om.ngot++] = i;
	else
		om.overflow++;
	om.armed[i] = false;
	om_fire(i, true);
}

/* One turn of the model: the timers it fires, in order, into want. */
static size_t
om_model_turn(unsigned *want, size_t max)
{
	uint64_t limit = om.seqs;
	size_t n = 0;
	unsigned i, best;

	while (n < OM_PER_TURN && n < max) {
		best = OM_N;
		for (i = 0; i < OM_N; i++)
			if (om.armed[i] && om.when[i] <= fake_now &&
			    om.seq[i] <= limit && (best == OM_N ||
			    om.when[i] < om.when[best] ||
			    (om.when[i] == om.when[best] &&
			    om.seq[i] < om.seq[best])))
				best = i;
		if (best == OM_N)
			break;
		om.armed[best] = false;
		want[n++] = best;
		om_fire(best, false);
	}
	return n;
}

static void
om_run(bool oom)
{
	static unsigned want[4 * OM_N];
	static bool armed_save[OM_N];
	static uint64_t when_save[OM_N], seq_save[OM_N];
	static unsigned fired_save[OM_N];
	unsigned seed = 20261207, i;
	uint64_t seqs_save;
	size_t nwant, k, mismatches = 0, fired = 0;
	int round, op, bad_armed = 0;
	struct ev_timer late;
	struct tmrec r = { 0 };

	setup();
	ev_set_timers_turn_us(0);	/* the count bounds a turn, not time */
	memset(&om, 0, sizeof(om));
	memset(&late, 0, sizeof(late));
	realloc_failed = realloc_after = 0;
	realloc_fails = oom;		/* the heap cannot even begin */
	/* Armed throughout: what waits for the heap is never all fired. */
	ev_timer_set(loop, &late, 3600 * 1000, tm_cb, &r);
	for (i = 0; i < OM_N; i++)
		om_arm(i, (uint64_t)(rand_r(&seed) % 64), true);
	for (round = 0; round < 300; round++) {
		/* Out of memory now and then: it grows, or it does not. */
		if (oom && round % 20 == 0)
			realloc_fails = rand_r(&seed) % 2 == 0;
		for (op = 0; op < 40; op++) {
			i = (unsigned)rand_r(&seed) % OM_N;
			if (rand_r(&seed) % 3 == 0)
				om_cancel(i, true);
			else
				om_arm(i, (uint64_t)(rand_r(&seed) % 64), true);
		}
		fake_now += (uint64_t)(rand_r(&seed) % 8);
		/*
		 * The model's turn on a copy (its callbacks change the model
		 * as the loop's will), then the loop's on the original.
		 */
		memcpy(armed_save, om.armed, sizeof(armed_save));
		memcpy(when_save, om.when, sizeof(when_save));
		memcpy(seq_save, om.seq, sizeof(seq_save));
		memcpy(fired_save, om.fired, sizeof(fired_save));
		seqs_save = om.seqs;
		nwant = om_model_turn(want, sizeof(want) / sizeof(want[0]));
		memcpy(om.armed, armed_save, sizeof(armed_save));
		memcpy(om.when, when_save, sizeof(when_save));
		memcpy(om.seq, seq_save, sizeof(seq_save));
		memcpy(om.fired, fired_save, sizeof(fired_save));
		om.seqs = seqs_save;
		om.ngot = 0;
		CU_ASSERT(ev_run_once(loop, 0) == 0);
		if (om.ngot != nwant)
			mismatches++;
		for (k = 0; k < nwant && k < om.ngot; k++)
			if (om.got[k] != want[k])
				mismatches++;
		fired += om.ngot;
		for (i = 0; i < OM_N; i++)
			if ((ev_timer_armed(&om.t[i]) != 0) != om.armed[i])
				bad_armed++;
	}
	realloc_fails = false;
	CU_ASSERT_EQUAL(mismatches, 0);
	CU_ASSERT_EQUAL(bad_armed, 0);
	CU_ASSERT(oom ? realloc_failed > 0 : realloc_failed == 0);
	/* Memory back, the heap grew again (and took in those waiting). */
	CU_ASSERT(!oom || realloc_after > 0);
	CU_ASSERT_EQUAL(om.overflow, 0);
	/* Full turns happened (the bound), and most timers fired. */
	CU_ASSERT(fired > OM_N);
	/* The rest, then none left. */
	for (round = 0; round < 100; round++) {
		fake_now += 64;
		CU_ASSERT(ev_run_once(loop, 0) == 0);
	}
	for (i = 0; i < OM_N; i++)
		CU_ASSERT(!ev_timer_armed(&om.t[i]));
	CU_ASSERT(ev_timer_armed(&late) && r.calls == 0);
	ev_timer_cancel(loop, &late);
	ev_set_timers_turn_us(EV_TIMERS_TURN_US);
	teardown();
}

static void
test_timer_exact_order(void)
{
	om_run(false);
}

/*
 * The same while the heap's array cannot grow, in stretches: timers armed
 * then wait on a list, and the loop's order is the same.  (Before, arming
 * failed: ev_timer_set returned -1 and its callers gave up or exited.)
 */
static void
test_timer_exact_order_nomem(void)
{
	om_run(true);
}

/* ---- before-sleep hook, ev_run/ev_stop ---- */

static int hook_calls;

static void
hook_cb(struct ev_loop *l, void *arg)
{
	(void)l;
	CU_ASSERT_PTR_EQUAL(arg, &hook_calls);
	hook_calls++;
	trace_add('H');
}

static void
tm_trace_cb(struct ev_loop *l, void *arg)
{
	(void)l;
	(void)arg;
	trace_add('T');
}

static void
test_hook_order(void)
{
	struct fdrec r = { 0 };
	struct ev_timer t;
	int p[2];

	setup();
	memset(&t, 0, sizeof(t));
	CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
	hook_calls = 0;
	trace[0] = '\0';
	ev_set_beforesleep(loop, hook_cb, &hook_calls);
	/* Runs on every turn, even an idle one. */
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(hook_calls, 1);
	CU_ASSERT_STRING_EQUAL(trace, "H");
	/* After fd callbacks and timers of the same turn. */
	CU_ASSERT(ev_fd_add(loop, p[0], EV_READ, rec_cb, &r) == 0);
	ev_timer_set(loop, &t, 0, tm_trace_cb, NULL);
	CU_ASSERT(write(p[1], "x", 1) == 1);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_STRING_EQUAL(trace, "HFTH");
	/* Removed with NULL. */
	ev_set_beforesleep(loop, NULL, NULL);
	CU_ASSERT(ev_run_once(loop, 0) == 0);
	CU_ASSERT_EQUAL(hook_calls, 2);
	ev_fd_del(loop, p[0]);
	close(p[0]);
	close(p[1]);
	teardown();
}

static int run_turns;

static void
stop_hook(struct ev_loop *l, void *arg)
{
	(void)arg;
	if (++run_turns == 3)
		ev_stop(l);
}

static void
stop_timer_cb(struct ev_loop *l, void *arg)
{
	(void)arg;
	ev_stop(l);
}

static void
test_run_stop(void)
{
	struct ev_timer t;

	setup();
	memset(&t, 0, sizeof(t));
	/* A due timer stops the loop: ev_run returns 0 after that turn. */
	ev_timer_set(loop, &t, 0, stop_timer_cb, NULL);
	CU_ASSERT(ev_run(loop) == 0);
	CU_ASSERT(!ev_timer_armed(&t));
	/* ev_run clears an earlier stop; the hook stops it on turn 3. */
	run_turns = 0;
	ev_set_beforesleep(loop, stop_hook, NULL);
	ev_timer_set(loop, &t, 0, tm_trace_cb, NULL);
	ev_stop(loop);
	{
		/* Keep every turn short: a readable pipe. */
		struct fdrec r = { 0 };
		int p[2];

		CU_ASSERT_FATAL(pipe2(p, O_NONBLOCK) == 0);
		CU_ASSERT(write(p[1], "x", 1) == 1);
		CU_ASSERT(ev_fd_add(loop, p[0], EV_READ, rec_cb, &r) == 0);
		CU_ASSERT(ev_run(loop) == 0);
		CU_ASSERT_EQUAL(run_turns, 3);
		CU_ASSERT_EQUAL(r.calls, 3);
		ev_fd_del(loop, p[0]);
		close(p[0]);
		close(p[1]);
	}
	teardown();
}

/* A timer in the (fake) future bounds the wait but does not fire early. */
static void
test_wait_bounded(void)
{
	struct ev_timer t;
	struct tmrec r = { 'a', 0, 0 };

	setup();
	memset(&t, 0, sizeof(t));
	ev_timer_set(loop, &t, 20, tm_cb, &r);
	/* Real 20 ms pass inside epoll_wait; the fake clock does not move. */
	CU_ASSERT(ev_run_once(loop, -1) == 0);
	CU_ASSERT_EQUAL(r.calls, 0);
	fake_now += 20;
	CU_ASSERT(ev_run_once(loop, -1) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	teardown();
}

/*
 * On the real clock: a timer whose expiry bounded the wait fires in the
 * turn that wait ends (the turn's time is read after waking; read before
 * sleeping, it is earlier than the expiry, and the timer fired a turn
 * late), and outside a turn ev_now_ms() reads the clock again, not the
 * last turn's time.
 */
static void
test_real_clock(void)
{
	struct timespec ms30 = { 0, 30 * 1000000L };
	struct ev_timer t;
	struct tmrec r = { 'r', 0, 0 };
	uint64_t a, b;

	setup();
	memset(&t, 0, sizeof(t));
	ev_set_clock(NULL);
	a = ev_now_ms();
	ev_timer_set(loop, &t, 20, tm_cb, &r);
	CU_ASSERT(ev_run_once(loop, -1) == 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT(r.fired_at >= a + 20);
	CU_ASSERT(!ev_timer_armed(&t));
	a = ev_now_ms();
	CU_ASSERT(nanosleep(&ms30, NULL) == 0);
	b = ev_now_ms();
	CU_ASSERT(b >= a + 30);
	ev_set_clock(fake_clock);
	teardown();
}

static void
alarm_cb(int sig)
{
	(void)sig;
}

/*
 * A signal that interrupts the wait -- one with a handler, or with none
 * a stop and SIGCONT (signal(7): epoll_wait fails with EINTR either way)
 * -- is no failure of the loop: the turn runs on and ev_run_once returns
 * 0.  A -1 ends ev_run, and nlmd with it (exit status 1).
 */
static void
test_wait_interrupted(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	struct sigaction sa, old;
	uint64_t t0;

	setup();
	hook_calls = 0;
	ev_set_beforesleep(loop, hook_cb, &hook_calls);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alarm_cb;
	sigemptyset(&sa.sa_mask);
	CU_ASSERT_FATAL(sigaction(SIGALRM, &sa, &old) == 0);
	CU_ASSERT_FATAL(setitimer(ITIMER_REAL, &it, NULL) == 0);
	/* Nothing to wake it but the signal, 20 ms on. */
	t0 = ev_monotonic_us();
	CU_ASSERT(ev_run_once(loop, 5000) == 0);
	CU_ASSERT(ev_monotonic_us() - t0 < 2000000);
	CU_ASSERT_EQUAL(hook_calls, 1);
	CU_ASSERT(sigaction(SIGALRM, &old, NULL) == 0);
	teardown();
}

int
ct_register_ev(void)
{
	CU_pSuite s;

	s = CU_add_suite("ev", ev_suite_init, ev_suite_clean);
	if (s == NULL ||
	    CU_add_test(s, "loop_free(NULL)", test_loop_free_null) == NULL ||
	    CU_add_test(s, "fd read, level, del", test_fd_read) == NULL ||
	    CU_add_test(s, "a full turn: the rest served first next turn",
	    test_fd_turn_full) == NULL ||
	    CU_add_test(s, "fd write, ev_fd_set, re-add",
	    test_fd_write_and_set) == NULL ||
	    CU_add_test(s, "fd argument errors", test_fd_errors) == NULL ||
	    CU_add_test(s, "fd watched for nothing (events 0)",
	    test_fd_pause) == NULL ||
	    CU_add_test(s, "fd hung up: a reader is called, with EV_READ",
	    test_fd_hangup) == NULL ||
	    CU_add_test(s, "fd table growth", test_fd_high_number) == NULL ||
	    CU_add_test(s, "fd deleted by another callback in the same turn",
	    test_fd_del_in_callback) == NULL ||
	    CU_add_test(s, "fd number reused by a callback in the same turn",
	    test_fd_reused_in_turn) == NULL ||
	    CU_add_test(s, "clock: fake and monotonic", test_clock) == NULL ||
	    CU_add_test(s, "timers fire in expiry order",
	    test_timer_order) == NULL ||
	    CU_add_test(s, "timer: a delay past the clock's end never fires",
	    test_timer_far) == NULL ||
	    CU_add_test(s, "timer cancel", test_timer_cancel) == NULL ||
	    CU_add_test(s, "timer re-arm moves it", test_timer_rearm) == NULL ||
	    CU_add_test(s, "periodic timer", test_timer_periodic) == NULL ||
	    CU_add_test(s, "timers run per turn: a millisecond at most",
	    test_timer_turn_time) == NULL ||
	    CU_add_test(s, "timers run per turn: bounded, re-armed next turn",
	    test_timer_turn_bounds) == NULL ||
	    CU_add_test(s, "timer cancelled by an earlier callback",
	    test_timer_cancel_from_callback) == NULL ||
	    CU_add_test(s, "timer heap model check", test_timer_model) == NULL ||
	    CU_add_test(s, "timers fire in the exact order of a scanned model",
	    test_timer_exact_order) == NULL ||
	    CU_add_test(s, "... and so while the heap cannot grow at times",
	    test_timer_exact_order_nomem) == NULL ||
	    CU_add_test(s, "before-sleep hook order", test_hook_order) == NULL ||
	    CU_add_test(s, "ev_run / ev_stop", test_run_stop) == NULL ||
	    CU_add_test(s, "wait bounded by next timer",
	    test_wait_bounded) == NULL ||
	    CU_add_test(s, "real clock: the turn's time is read after the wait",
	    test_real_clock) == NULL ||
	    CU_add_test(s, "a signal interrupting the wait is no failure",
	    test_wait_interrupted) == NULL)
		return -1;
	return 0;
}
