/*
 * locktest.c - fcntl() lock scenarios run by the Linux NFSv3 client in the
 * e2e guest.  Built static on the host and put into the guest's initramfs.
 *
 * HOW IT WORKS
 * The guest mounts one export twice: A (-a, default /mnt/a) and B (-b,
 * default /mnt/b, mounted with nosharecache so it has inodes of its own).
 * The Linux client answers some questions from its own per-inode lock table
 * without asking the server (F_GETLK; conflicts between two processes on the
 * same inode are found locally before any NLM call is made).  Every check
 * that the *server* must answer is therefore made through the other mount:
 * a holder locks through A, checkers and waiters come through B.  Each
 * checker is a fresh process, hence a fresh lock owner (a new NLM svid).
 *
 * Each scenario runs in its own process group under a watchdog: without a
 * working NLM server the client does not fail a lock call, it retries for
 * ever, so a hung call must fail its scenario, not the whole suite.
 *
 * Output (stdout, line-buffered, parsed by run.sh):
 *   LT: PLAN <scenario> <scenario> ...
 *   LT: ok <scenario>: <what was checked>
 *   LT: not ok <scenario>: <what was expected and what happened>
 *   LT: PASS <scenario> (<seconds> s)
 *   LT: FAIL <scenario> (<seconds> s): <reason>
 *   LT: DONE passed=<n> failed=<m>
 * Exit status: 0 when every scenario passed, 1 otherwise, 2 on usage errors.
 *
 * Usage: locktest [-a DIR] [-b DIR] list | all | SCENARIO...
 *        locktest [-a DIR] [-b DIR] [-o DIR] [-c CTLDIR] [-s STATD_PID]
 *            [-g SECONDS] restart TAG  (see "server restart" below)
 *        locktest list-restart
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS 20000
/* The wake-up of a blocked F_SETLKW must come from the GRANTED callback. */
#define WAKEUP_LIMIT_S 1.0
/* Long enough for a blocked LOCK to have reached the server under TCG. */
#define SETTLE_MS 3000

#define CONTEND_PROCS 20
#define CONTEND_ROUNDS 50

static const char *dir_a = "/mnt/a";
static const char *dir_b = "/mnt/b";
/* The export through the server's second address (restart; -o). */
static const char *dir_o = NULL;

/* Name and failure count of the scenario this process belongs to. */
static const char *cur = "-";
static int nfail;

/*
 * The restart program (see "server restart" below) counts its checks per
 * phase, in memory shared with its watchdog, so that a phase cut short by
 * the watchdog is still reported.
 */
struct phase {
	const char *name;
	const char *what;
	int nok, nbad;
	int done;		/* its last check was made */
	double t0, t1;		/* first and last check (CLOCK_MONOTONIC) */
};
static struct phase *cur_phase;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
msleep(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void __attribute__((format(printf, 2, 0)))
report(const char *verdict, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	printf("LT: %s %s: %s\n", verdict, cur, buf);
	fflush(stdout);
}

static void __attribute__((format(printf, 1, 2)))
ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("ok", fmt, ap);
	va_end(ap);
	if (cur_phase != NULL) {
		if (cur_phase->nok + cur_phase->nbad == 0)
			cur_phase->t0 = now();
		cur_phase->nok++;
		cur_phase->t1 = now();
	}
}

static void __attribute__((format(printf, 1, 2)))
bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("not ok", fmt, ap);
	va_end(ap);
	nfail++;
	if (cur_phase != NULL) {
		if (cur_phase->nok + cur_phase->nbad == 0)
			cur_phase->t0 = now();
		cur_phase->nbad++;
		cur_phase->t1 = now();
	}
}

static const char *
tname(int type)
{
	switch (type) {
	case F_RDLCK:
		return "F_RDLCK";
	case F_WRLCK:
		return "F_WRLCK";
	case F_UNLCK:
		return "F_UNLCK";
	}
	return "F_???";
}

static const char *
ename(int err)
{
	return err == 0 ? "granted" : strerror(err);
}

/* "[start,+len)" with len 0 meaning "to end of file". */
static const char *
rng(char *buf, size_t sz, int64_t start, int64_t len)
{
	if (len == 0)
		snprintf(buf, sz, "[%" PRId64 ",EOF)", start);
	else
		snprintf(buf, sz, "[%" PRId64 ",+%" PRId64 ")", start, len);
	return buf;
}

#define RNG(s, l) rng((char[64]){0}, 64, (s), (l))

static void
path_of(char *buf, size_t sz, const char *dir, const char *file)
{
	snprintf(buf, sz, "%s/%s", dir, file);
}

static int
open_in(const char *dir, const char *file, int flags)
{
	char p[512];
	int fd;

	path_of(p, sizeof(p), dir, file);
	fd = open(p, O_RDWR | flags, 0666);
	if (fd == -1)
		bad("open %s: %s", p, strerror(errno));
	return fd;
}

/* One fcntl lock call; returns 0 or the errno it failed with. */
static int
lk(int fd, int cmd, int type, int64_t start, int64_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = (short)type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)start;
	fl.l_len = (off_t)len;
	return fcntl(fd, cmd, &fl) == 0 ? 0 : errno;
}

/* Check one lock call made by this process. */
static int
my_lock(int fd, int cmd, int type, int64_t start, int64_t len,
    int want, const char *what)
{
	int err = lk(fd, cmd, type, start, len);

	if (err == want || (want == EAGAIN && err == EACCES))
		ok("%s: %s %s %s", what,
		    cmd == F_SETLKW ? "F_SETLKW" : "F_SETLK", tname(type),
		    err ? ename(err) : (type == F_UNLCK ? "done" : "granted"));
	else
		bad("%s: %s %s %s: want %s, got %s", what,
		    cmd == F_SETLKW ? "F_SETLKW" : "F_SETLK", tname(type),
		    RNG(start, len), ename(want), ename(err));
	return err;
}

/* ---- helper processes ------------------------------------------------- */

static ssize_t
read_full(int fd, void *buf, size_t n, int timeout_ms)
{
	size_t got = 0;
	double deadline = now() + timeout_ms / 1000.0;

	while (got < n) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int left = (int)((deadline - now()) * 1000);
		ssize_t r;

		if (left < 0)
			left = 0;
		r = poll(&pfd, 1, left);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return (ssize_t)got;
		r = read(fd, (char *)buf + got, n - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void
write_full(int fd, const void *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf = (const char *)buf + w;
		n -= (size_t)w;
	}
}

static void
reap(pid_t pid, int timeout_ms)
{
	double deadline = now() + timeout_ms / 1000.0;

	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (now() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		msleep(10);
	}
}

struct probe_res {
	int err;
	struct flock fl;
};

/*
 * Make one lock call from a fresh process through mount B.  A granted
 * F_SETLK probe releases its lock explicitly before it exits.  Returns 0
 * when the call completed (result in *res), -1 when it hung or the helper
 * died.
 */
static int
probe(const char *file, int cmd, int type, int64_t start, int64_t len,
    struct probe_res *res)
{
	int p[2];
	pid_t pid;
	ssize_t n;

	if (pipe(p) == -1)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		struct probe_res r;
		char path[512];
		int fd;

		close(p[0]);
		memset(&r, 0, sizeof(r));
		path_of(path, sizeof(path), dir_b, file);
		fd = open(path, O_RDWR);
		if (fd == -1) {
			r.err = errno;
			r.fl.l_type = -1;
		} else {
			r.fl.l_type = (short)type;
			r.fl.l_whence = SEEK_SET;
			r.fl.l_start = (off_t)start;
			r.fl.l_len = (off_t)len;
			r.err = fcntl(fd, cmd, &r.fl) == 0 ? 0 : errno;
			if (cmd != F_GETLK && r.err == 0)
				lk(fd, F_SETLK, F_UNLCK, start, len);
		}
		write_full(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	n = read_full(p[0], res, sizeof(*res), PROBE_TIMEOUT_MS);
	close(p[0]);
	reap(pid, 2000);
	return n == (ssize_t)sizeof(*res) ? 0 : -1;
}

/* Another process (through B) tries F_SETLK; want 0 or EAGAIN. */
static void
expect_setlk(const char *file, int type, int64_t start, int64_t len,
    int want, const char *what)
{
	struct probe_res r;

	if (probe(file, F_SETLK, type, start, len, &r) == -1) {
		bad("%s: other process F_SETLK %s %s hung or died", what,
		    tname(type), RNG(start, len));
		return;
	}
	if (r.err == EACCES)
		r.err = EAGAIN;
	if (r.err == want)
		ok("%s: other process (mount B) F_SETLK %s %s: %s", what,
		    tname(type), RNG(start, len), ename(r.err));
	else
		bad("%s: other process (mount B) F_SETLK %s %s: want %s, got %s",
		    what, tname(type), RNG(start, len), ename(want),
		    ename(r.err));
}

/* As expect_setlk(.., 0, ..) but allow up to timeout_ms for it to hold. */
static void
expect_free_within(const char *file, int type, int64_t start, int64_t len,
    int timeout_ms, const char *what)
{
	double t0 = now(), deadline = t0 + timeout_ms / 1000.0;
	struct probe_res r;

	for (;;) {
		if (probe(file, F_SETLK, type, start, len, &r) == -1) {
			bad("%s: other process F_SETLK hung or died", what);
			return;
		}
		if (r.err == 0) {
			ok("%s: other process (mount B) F_SETLK %s %s granted "
			   "after %.3f s", what, tname(type), RNG(start, len),
			    now() - t0);
			return;
		}
		if (now() > deadline)
			break;
		msleep(200);
	}
	bad("%s: other process (mount B) F_SETLK %s %s still %s after %d ms",
	    what, tname(type), RNG(start, len), ename(r.err), timeout_ms);
}

/*
 * Another process (through B) asks F_GETLK; want_type F_UNLCK means "no
 * conflict", otherwise the reported holder must have this type and range.
 * want_remote also requires l_pid < 0: the Linux client reports a remote
 * holder as -svid (svid 0 was burnt at start).
 */
static void
expect_getlk(const char *file, int type, int64_t start, int64_t len,
    int want_type, int64_t want_start, int64_t want_len, const char *what)
{
	struct probe_res r;
	const struct flock *f = &r.fl;

	if (probe(file, F_GETLK, type, start, len, &r) == -1) {
		bad("%s: other process F_GETLK hung or died", what);
		return;
	}
	if (r.err != 0) {
		bad("%s: F_GETLK %s %s failed: %s", what, tname(type),
		    RNG(start, len), strerror(r.err));
		return;
	}
	if (want_type == F_UNLCK) {
		if (f->l_type == F_UNLCK)
			ok("%s: other process (mount B) F_GETLK %s %s: F_UNLCK",
			    what, tname(type), RNG(start, len));
		else
			bad("%s: other process (mount B) F_GETLK %s %s: want "
			    "F_UNLCK, got %s %s l_pid=%d", what, tname(type),
			    RNG(start, len), tname(f->l_type),
			    RNG(f->l_start, f->l_len), (int)f->l_pid);
		return;
	}
	if (f->l_type == want_type && f->l_start == want_start &&
	    f->l_len == want_len && f->l_pid < 0)
		ok("%s: other process (mount B) F_GETLK %s %s reports holder "
		   "%s %s l_pid=%d", what, tname(type), RNG(start, len),
		    tname(f->l_type), RNG(f->l_start, f->l_len),
		    (int)f->l_pid);
	else
		bad("%s: other process (mount B) F_GETLK %s %s: want holder %s "
		    "%s l_pid<0, got %s %s l_pid=%d", what, tname(type),
		    RNG(start, len), tname(want_type),
		    RNG(want_start, want_len), tname(f->l_type),
		    RNG(f->l_start, f->l_len), (int)f->l_pid);
}

/*
 * A helper process that takes one lock (F_SETLK or F_SETLKW), reports when
 * the call returned, holds the lock until told to release it, then unlocks
 * explicitly and exits.
 */
struct locker {
	pid_t pid;
	int from;		/* reports: struct locker_msg */
	int to;			/* commands: one byte = release */
	int done;		/* result received */
	int err;		/* result of the lock call */
	double t;		/* CLOCK_MONOTONIC when the call returned */
	int64_t start, len;
};

struct locker_msg {
	int err;
	double t;
};

static int
locker_start(struct locker *l, const char *dir, const char *file, int cmd,
    int type, int64_t start, int64_t len)
{
	int up[2], down[2];

	memset(l, 0, sizeof(*l));
	l->start = start;
	l->len = len;
	if (pipe(up) == -1)
		return -1;
	if (pipe(down) == -1) {
		close(up[0]);
		close(up[1]);
		return -1;
	}
	fflush(stdout);
	l->pid = fork();
	if (l->pid == -1)
		return -1;
	if (l->pid == 0) {
		struct locker_msg m = {0, 0};
		char c;
		int fd;

		close(up[0]);
		close(down[1]);
		fd = open_in(dir, file, 0);
		m.err = fd == -1 ? errno : lk(fd, cmd, type, start, len);
		m.t = now();
		write_full(up[1], &m, sizeof(m));
		if (read_full(down[0], &c, 1, 600000) == 1 && m.err == 0) {
			m.err = lk(fd, F_SETLK, F_UNLCK, start, len);
			m.t = now();
			write_full(up[1], &m, sizeof(m));
		}
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	l->from = up[0];
	l->to = down[1];
	return 0;
}

/* Wait up to timeout_ms for the lock call to return; 1 = it returned. */
static int
locker_wait(struct locker *l, int timeout_ms)
{
	struct locker_msg m;

	if (l->done)
		return 1;
	if (read_full(l->from, &m, sizeof(m), timeout_ms) != sizeof(m))
		return 0;
	l->done = 1;
	l->err = m.err;
	l->t = m.t;
	return 1;
}

/* Tell the helper to unlock and exit; returns the unlock's errno. */
static int
locker_release(struct locker *l)
{
	struct locker_msg m = {-1, 0};

	if (l->pid <= 0)
		return -1;
	write_full(l->to, "r", 1);
	if (l->done && l->err == 0 &&
	    read_full(l->from, &m, sizeof(m), PROBE_TIMEOUT_MS) != sizeof(m))
		m.err = -1;
	close(l->to);
	close(l->from);
	kill(l->pid, SIGKILL);
	reap(l->pid, 2000);
	l->pid = 0;
	return l->done && l->err == 0 ? m.err : 0;
}

/* ---- scenarios ---------------------------------------------------------- */

static int
create_file(const char *file)
{
	return open_in(dir_a, file, O_CREAT | O_TRUNC);
}

/* F_SETLK is granted, re-granted to the same owner, and released. */
static void
sc_grant(void)
{
	const char *f = "lt-grant";
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "lock [0,100)");
	expect_setlk(f, F_WRLCK, 0, 100, EAGAIN, "the lock is held on the server");
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "same owner locks the same range again");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 100, 0, "unlock [0,100)");
	expect_setlk(f, F_WRLCK, 0, 100, 0, "after the unlock the range is free");
	close(fd);
}

/* Conflicting F_SETLK from other processes gets EAGAIN. */
static void
sc_conflict(void)
{
	const char *f = "lt-conflict";
	struct locker other;
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "holder locks [0,100)");
	expect_setlk(f, F_WRLCK, 50, 10, EAGAIN, "overlapping write lock");
	expect_setlk(f, F_RDLCK, 99, 1, EAGAIN, "read lock on the last byte");
	expect_setlk(f, F_WRLCK, 100, 10, 0, "adjacent range [100,110)");
	/* The same conflict through the same mount (answered by the client
	 * itself or the server; either way it must be refused). */
	if (locker_start(&other, dir_a, f, F_SETLK, F_WRLCK, 10, 10) == 0) {
		if (!locker_wait(&other, PROBE_TIMEOUT_MS))
			bad("other process on mount A: F_SETLK hung");
		else if (other.err == EAGAIN || other.err == EACCES)
			ok("other process on mount A: F_SETLK [10,20) %s",
			    ename(other.err));
		else
			bad("other process on mount A: F_SETLK [10,20): want "
			    "EAGAIN, got %s", ename(other.err));
		locker_release(&other);
	}
	my_lock(fd, F_SETLK, F_UNLCK, 0, 100, 0, "holder unlocks");
	close(fd);
}

/* F_GETLK through the second mount reports the real holder. */
static void
sc_getlk(void)
{
	const char *f = "lt-getlk";
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 10, 100, 0, "holder write-locks [10,110)");
	my_lock(fd, F_SETLK, F_RDLCK, 500, 10, 0, "holder read-locks [500,510)");
	expect_getlk(f, F_WRLCK, 0, 200, F_WRLCK, 10, 100, "write holder");
	expect_getlk(f, F_RDLCK, 109, 1, F_WRLCK, 10, 100, "write holder, probe on its last byte");
	expect_getlk(f, F_WRLCK, 110, 100, F_UNLCK, 0, 0, "free range after the holder");
	expect_getlk(f, F_WRLCK, 505, 1, F_RDLCK, 500, 10, "read holder");
	expect_getlk(f, F_RDLCK, 500, 10, F_UNLCK, 0, 0, "read probe vs read holder");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 0, 0, "holder unlocks everything");
	expect_getlk(f, F_WRLCK, 0, 0, F_UNLCK, 0, 0, "after the unlock");
	close(fd);
}

/* A blocked F_SETLKW is woken by the GRANTED callback within 1 s. */
static void
sc_wakeup(void)
{
	const char *f = "lt-wakeup";
	struct locker w;
	double t_unlock, lat;
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "holder locks [0,100)");
	if (locker_start(&w, dir_b, f, F_SETLKW, F_WRLCK, 0, 100) == -1) {
		bad("fork: %s", strerror(errno));
		return;
	}
	if (locker_wait(&w, SETTLE_MS)) {
		bad("waiter's F_SETLKW returned (%s) while the lock was held",
		    ename(w.err));
		locker_release(&w);
		return;
	}
	ok("waiter (mount B) still blocked in F_SETLKW after %d ms", SETTLE_MS);
	t_unlock = now();
	my_lock(fd, F_SETLK, F_UNLCK, 0, 100, 0, "holder unlocks");
	/* Long enough to see the client's 30 s re-poll when callbacks fail. */
	if (!locker_wait(&w, 35000)) {
		bad("waiter not woken within 35 s of the unlock");
	} else if (w.err != 0) {
		bad("waiter's F_SETLKW failed: %s", ename(w.err));
	} else {
		lat = w.t - t_unlock;
		if (lat < WAKEUP_LIMIT_S)
			ok("blocked F_SETLKW woken %.3f s after the unlock "
			   "(limit %.1f s)", lat, WAKEUP_LIMIT_S);
		else
			bad("blocked F_SETLKW woken %.3f s after the unlock: "
			    "over %.1f s, so not by a GRANTED callback", lat,
			    WAKEUP_LIMIT_S);
		printf("LT: wakeup-latency %.3f\n", lat);
	}
	expect_setlk(f, F_WRLCK, 0, 1, EAGAIN, "the woken waiter holds the lock");
	if (locker_release(&w) != 0)
		bad("waiter's unlock failed");
	close(fd);
}

/*
 * One process, two threads, one lock owner: a thread waits in F_SETLKW
 * for a range another process holds while the other thread tries F_SETLK
 * on the same range.  The kernel sends the second as a non-blocking LOCK
 * of the owner that already waits: it must be refused (EAGAIN), and the
 * waiter still woken by its callback once the holder unlocks.  (nlmd up
 * to 2026-11-27 answered that LOCK BLOCKED and lost the waiter's callback
 * record; the unlock then crashed the server.)
 */
struct so_wait {
	int fd;
	int err;
	double t;
	atomic_int done;	/* err and t are set (read by the other thread) */
	int64_t start, len;	/* the range it waits for, write-locked */
};

static void *
so_waiter(void *arg)
{
	struct so_wait *w = arg;

	w->err = lk(w->fd, F_SETLKW, F_WRLCK, w->start, w->len);
	w->t = now();
	atomic_store(&w->done, 1);
	return NULL;
}

static void
sc_sameowner(void)
{
	const char *f = "lt-sameowner";
	struct locker_msg m;
	int up[2], down[2];
	double t_unlock;
	pid_t pid;
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "holder locks [0,100)");
	if (pipe(up) == -1) {
		bad("pipe: %s", strerror(errno));
		close(fd);
		return;
	}
	if (pipe(down) == -1) {
		bad("pipe: %s", strerror(errno));
		close(up[0]);
		close(up[1]);
		close(fd);
		return;
	}
	fflush(stdout);
	if ((pid = fork()) == -1) {
		bad("fork: %s", strerror(errno));
		close(fd);
		return;
	}
	if (pid == 0) {
		struct so_wait w = { -1, -1, 0, 0, 0, 100 };
		pthread_t th;
		char c;

		close(up[0]);
		close(down[1]);
		if ((w.fd = open_in(dir_b, f, 0)) == -1 ||
		    pthread_create(&th, NULL, so_waiter, &w) != 0)
			_exit(1);
		usleep(SETTLE_MS * 1000);
		/* 1: the other thread's F_SETLK (-2: the wait ended first). */
		m.err = atomic_load(&w.done) ? -2 :
		    lk(w.fd, F_SETLK, F_WRLCK, 0, 100);
		m.t = now();
		write_full(up[1], &m, sizeof(m));
		/* 2: the waiting thread's F_SETLKW. */
		pthread_join(th, NULL);
		m.err = w.err;
		m.t = w.t;
		write_full(up[1], &m, sizeof(m));
		if (read_full(down[0], &c, 1, 600000) == 1 && w.err == 0)
			(void)lk(w.fd, F_SETLK, F_UNLCK, 0, 100);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read_full(up[0], &m, sizeof(m), SETTLE_MS + PROBE_TIMEOUT_MS) !=
	    sizeof(m))
		bad("the second thread's F_SETLK did not return");
	else if (m.err == -2)
		bad("the waiting thread's F_SETLKW returned while the lock was "
		    "held");
	else if (m.err != EAGAIN)
		bad("F_SETLK beside the same owner's F_SETLKW: %s, expected "
		    "EAGAIN", ename(m.err));
	else
		ok("F_SETLK of the owner that waits in F_SETLKW (other "
		   "thread): EAGAIN");
	t_unlock = now();
	my_lock(fd, F_SETLK, F_UNLCK, 0, 100, 0, "holder unlocks");
	if (read_full(up[0], &m, sizeof(m), 35000) != sizeof(m))
		bad("the waiting thread not woken within 35 s of the unlock");
	else if (m.err != 0)
		bad("the waiting thread's F_SETLKW failed: %s", ename(m.err));
	else if (m.t - t_unlock < WAKEUP_LIMIT_S)
		ok("the waiting thread woken %.3f s after the unlock",
		   m.t - t_unlock);
	else
		bad("the waiting thread woken %.3f s after the unlock: over "
		    "%.1f s, so not by a GRANTED callback", m.t - t_unlock,
		    WAKEUP_LIMIT_S);
	expect_setlk(f, F_WRLCK, 0, 1, EAGAIN, "the woken thread's process "
	    "holds the lock");
	write_full(down[1], "r", 1);
	close(down[1]);
	close(up[0]);
	kill(pid, SIGKILL);
	reap(pid, 2000);
	close(fd);
}

/*
 * Deadlock detection is the server's: X (this process) holds byte 0 and
 * waits (another thread, F_SETLKW through A) for byte 1, which Y (a child
 * through B) holds; Y's F_SETLKW for byte 0 would close the cycle and
 * must fail with EDEADLK (NLM4_DEADLCK) instead of waiting for ever.  The
 * client finds no cycle itself: the two mounts are two inodes, and a
 * request waiting for the server is not in its own lock lists.  Once Y
 * exits, X's waiting thread (so_waiter, see sc_sameowner) is granted.
 */
static void
sc_deadlock(void)
{
	const char *f = "lt-deadlock";
	struct so_wait w = { -1, -1, 0, 0, 1, 1 };
	struct locker_msg m;
	int up[2], down[2];
	double t_exit;
	pthread_t th;
	pid_t pid;
	int i, fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 1, 0, "X locks byte 0");
	if (pipe(up) == -1 || pipe(down) == -1) {
		bad("pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	if ((pid = fork()) == -1) {
		bad("fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		char c;
		int yfd;

		close(up[0]);
		close(down[1]);
		if ((yfd = open_in(dir_b, f, 0)) == -1)
			_exit(1);
		m.err = lk(yfd, F_SETLK, F_WRLCK, 1, 1);
		m.t = now();
		write_full(up[1], &m, sizeof(m));
		if (m.err != 0 || read_full(down[0], &c, 1, 60000) != 1)
			_exit(1);
		m.err = lk(yfd, F_SETLKW, F_WRLCK, 0, 1);
		m.t = now();
		write_full(up[1], &m, sizeof(m));
		(void)read_full(down[0], &c, 1, 600000);
		_exit(0);		/* the exit releases byte 1 */
	}
	close(up[1]);
	close(down[0]);
	if (read_full(up[0], &m, sizeof(m), PROBE_TIMEOUT_MS) != sizeof(m) ||
	    m.err != 0) {
		bad("Y (mount B) could not lock byte 1");
		goto out;
	}
	ok("Y (mount B) locks byte 1: F_SETLK granted");
	w.fd = fd;
	if (pthread_create(&th, NULL, so_waiter, &w) != 0) {
		bad("pthread_create failed");
		goto out;
	}
	msleep(SETTLE_MS);
	if (atomic_load(&w.done)) {
		bad("X's F_SETLKW for byte 1 returned (%s) while Y held it",
		    ename(w.err));
		goto out;
	}
	ok("X (other thread, mount A) waits in F_SETLKW for byte 1");
	write_full(down[1], "g", 1);
	if (read_full(up[0], &m, sizeof(m), PROBE_TIMEOUT_MS) != sizeof(m))
		bad("Y's F_SETLKW for byte 0 still waits after %d ms: the "
		    "cycle was not refused", PROBE_TIMEOUT_MS);
	else if (m.err != EDEADLK)
		bad("Y's F_SETLKW for byte 0: want EDEADLK, got %s",
		    ename(m.err));
	else
		ok("Y's F_SETLKW for byte 0, closing the cycle: EDEADLK");
	t_exit = now();
	write_full(down[1], "r", 1);
	reap(pid, 5000);
	pid = -1;
	for (i = 0; i < 350 && !atomic_load(&w.done); i++)
		msleep(100);
	if (!atomic_load(&w.done))
		bad("X's waiting thread not granted within 35 s of Y's exit");
	else if (w.err != 0)
		bad("X's F_SETLKW for byte 1 failed: %s", ename(w.err));
	else {
		ok("X's waiting thread granted byte 1 %.3f s after Y's exit",
		    w.t - t_exit);
		pthread_join(th, NULL);
	}
	expect_setlk(f, F_WRLCK, 0, 2, EAGAIN, "X holds bytes 0 and 1");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 2, 0, "X unlocks");
out:
	close(down[1]);
	close(up[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		reap(pid, 2000);
	}
	close(fd);
}

/* Unlocking the middle splits a lock; relocking it merges the pieces. */
static void
sc_splitmerge(void)
{
	const char *f = "lt-split";
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "lock [0,100)");
	my_lock(fd, F_SETLK, F_UNLCK, 40, 20, 0, "unlock [40,60)");
	expect_setlk(f, F_WRLCK, 40, 20, 0, "the hole [40,60) is free");
	expect_setlk(f, F_WRLCK, 39, 1, EAGAIN, "byte 39 still held");
	expect_setlk(f, F_WRLCK, 60, 1, EAGAIN, "byte 60 still held");
	expect_getlk(f, F_WRLCK, 0, 40, F_WRLCK, 0, 40, "left piece");
	expect_getlk(f, F_WRLCK, 60, 40, F_WRLCK, 60, 40, "right piece");
	my_lock(fd, F_SETLK, F_WRLCK, 40, 20, 0, "relock [40,60)");
	expect_setlk(f, F_WRLCK, 45, 1, EAGAIN, "byte 45 held again");
	expect_getlk(f, F_WRLCK, 0, 100, F_WRLCK, 0, 100, "pieces merged into one lock");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 100, 0, "unlock [0,100)");
	expect_setlk(f, F_WRLCK, 0, 100, 0, "everything free");
	/* Adjacent locks of one owner merge too. */
	my_lock(fd, F_SETLK, F_WRLCK, 200, 10, 0, "lock [200,210)");
	my_lock(fd, F_SETLK, F_WRLCK, 210, 10, 0, "lock adjacent [210,220)");
	expect_getlk(f, F_RDLCK, 215, 1, F_WRLCK, 200, 20, "adjacent locks merged");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 0, 0, "unlock all");
	close(fd);
}

/* A read lock is upgraded (partly, then wholly) and downgraded again. */
static void
sc_upgrade(void)
{
	const char *f = "lt-upgrade";
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_RDLCK, 0, 100, 0, "read-lock [0,100)");
	expect_setlk(f, F_RDLCK, 0, 10, 0, "another reader fits");
	expect_setlk(f, F_WRLCK, 0, 10, EAGAIN, "a writer does not");
	expect_getlk(f, F_WRLCK, 0, 100, F_RDLCK, 0, 100, "holder is a reader");
	my_lock(fd, F_SETLK, F_WRLCK, 20, 10, 0, "upgrade [20,30) to write");
	expect_setlk(f, F_RDLCK, 0, 10, 0, "reader fits in [0,10)");
	expect_setlk(f, F_RDLCK, 20, 10, EAGAIN, "reader refused in [20,30)");
	expect_setlk(f, F_RDLCK, 30, 70, 0, "reader fits in [30,100)");
	expect_getlk(f, F_RDLCK, 0, 100, F_WRLCK, 20, 10, "the written part");
	my_lock(fd, F_SETLK, F_WRLCK, 0, 100, 0, "upgrade all of [0,100)");
	expect_setlk(f, F_RDLCK, 0, 10, EAGAIN, "reader refused in [0,10)");
	expect_getlk(f, F_RDLCK, 50, 1, F_WRLCK, 0, 100, "upgraded lock is one write lock");
	my_lock(fd, F_SETLK, F_RDLCK, 0, 100, 0, "downgrade [0,100) to read");
	expect_setlk(f, F_RDLCK, 0, 100, 0, "reader fits again");
	expect_setlk(f, F_WRLCK, 0, 1, EAGAIN, "writer still refused");
	expect_getlk(f, F_WRLCK, 0, 100, F_RDLCK, 0, 100, "downgraded lock");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 100, 0, "unlock");
	expect_setlk(f, F_WRLCK, 0, 100, 0, "free after unlock");
	close(fd);
}

/* Readers coexist; a writer waits until the last of them unlocks. */
static void
sc_shared(void)
{
	const char *f = "lt-shared";
	struct locker r[3], w;
	int fd = create_file(f), i, n = 3, started = 0;
	double t_last = 0;

	if (fd == -1)
		return;
	close(fd);
	for (i = 0; i < n; i++) {
		if (locker_start(&r[i], dir_a, f, F_SETLK, F_RDLCK, 0, 100))
			break;
		started++;
		if (!locker_wait(&r[i], PROBE_TIMEOUT_MS) || r[i].err)
			bad("reader %d (mount A): F_SETLK F_RDLCK [0,100): %s",
			    i + 1, r[i].done ? ename(r[i].err) : "hung");
		else
			ok("reader %d (mount A): F_SETLK F_RDLCK [0,100) granted",
			    i + 1);
	}
	expect_setlk(f, F_RDLCK, 0, 100, 0, "a fourth reader (mount B) fits");
	expect_setlk(f, F_WRLCK, 0, 100, EAGAIN, "a writer (mount B) is refused");
	if (locker_start(&w, dir_b, f, F_SETLKW, F_WRLCK, 0, 100) == -1)
		goto out;
	if (locker_wait(&w, SETTLE_MS)) {
		bad("writer's F_SETLKW returned (%s) while 3 readers hold",
		    ename(w.err));
		goto out_w;
	}
	ok("writer (mount B) blocked in F_SETLKW while 3 readers hold");
	for (i = 0; i < started; i++) {
		t_last = now();
		if (locker_release(&r[i]) != 0)
			bad("reader %d: unlock failed", i + 1);
		if (i + 1 < started) {
			if (locker_wait(&w, 1000))
				bad("writer granted (%s) after only %d of %d "
				    "readers unlocked", ename(w.err), i + 1,
				    started);
			else
				ok("writer still blocked after %d of %d readers "
				   "unlocked", i + 1, started);
		}
	}
	if (!locker_wait(&w, 10000))
		bad("writer not granted within 10 s of the last reader's unlock");
	else if (w.err != 0)
		bad("writer's F_SETLKW failed: %s", ename(w.err));
	else
		ok("writer granted %.3f s after the last reader unlocked",
		    w.t - t_last);
	expect_setlk(f, F_RDLCK, 0, 1, EAGAIN, "the writer holds the lock");
out_w:
	locker_release(&w);
out:
	for (i = 0; i < started; i++)
		locker_release(&r[i]);
}

/* close() of any descriptor of the file, exit and SIGKILL release locks. */
static void
sc_release(void)
{
	const char *f = "lt-release";
	struct locker l;
	int fd = create_file(f), fd2;

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 0, 10, 0, "lock [0,10)");
	expect_setlk(f, F_WRLCK, 0, 10, EAGAIN, "held before close");
	fd2 = open_in(dir_a, f, 0);
	if (fd2 != -1)
		close(fd2);
	expect_free_within(f, F_WRLCK, 0, 10, 5000,
	    "close() of a second descriptor released the lock (POSIX)");
	my_lock(fd, F_SETLK, F_WRLCK, 0, 10, 0, "lock [0,10) again");
	expect_setlk(f, F_WRLCK, 0, 10, EAGAIN, "held before close");
	close(fd);
	expect_free_within(f, F_WRLCK, 0, 10, 5000, "close() released the lock");

	/* Exit without unlocking. */
	if (locker_start(&l, dir_a, f, F_SETLK, F_WRLCK, 20, 10) == 0) {
		if (!locker_wait(&l, PROBE_TIMEOUT_MS) || l.err)
			bad("helper's lock [20,30) failed");
		expect_setlk(f, F_WRLCK, 20, 10, EAGAIN, "helper holds [20,30)");
		close(l.to);	/* EOF: the helper exits without unlocking */
		reap(l.pid, PROBE_TIMEOUT_MS);
		close(l.from);
		expect_free_within(f, F_WRLCK, 20, 10, 5000,
		    "exit() released the helper's lock");
	}
	/* Killed with SIGKILL while holding. */
	if (locker_start(&l, dir_a, f, F_SETLK, F_WRLCK, 40, 10) == 0) {
		if (!locker_wait(&l, PROBE_TIMEOUT_MS) || l.err)
			bad("helper's lock [40,50) failed");
		expect_setlk(f, F_WRLCK, 40, 10, EAGAIN, "helper holds [40,50)");
		kill(l.pid, SIGKILL);
		reap(l.pid, PROBE_TIMEOUT_MS);
		close(l.to);
		close(l.from);
		expect_free_within(f, F_WRLCK, 40, 10, 5000,
		    "SIGKILL released the helper's lock");
	}
}

/* Child of sc_contend: ROUNDS x (F_SETLKW, read, increment, write, unlock). */
static int
contend_child(const char *dir, const char *file)
{
	int fd = open_in(dir, file, 0), i, err;
	uint32_t v;

	if (fd == -1)
		return 2;
	for (i = 0; i < CONTEND_ROUNDS; i++) {
		err = lk(fd, F_SETLKW, F_WRLCK, 0, 4);
		if (err) {
			bad("%s round %d: F_SETLKW: %s", dir, i, strerror(err));
			return 1;
		}
		if (pread(fd, &v, sizeof(v), 0) != sizeof(v)) {
			bad("%s round %d: short read", dir, i);
			return 1;
		}
		v++;
		if (pwrite(fd, &v, sizeof(v), 0) != sizeof(v)) {
			bad("%s round %d: write: %s", dir, i, strerror(errno));
			return 1;
		}
		err = lk(fd, F_SETLK, F_UNLCK, 0, 4);
		if (err) {
			bad("%s round %d: unlock: %s", dir, i, strerror(err));
			return 1;
		}
	}
	close(fd);
	return 0;
}

/* Many processes on both mounts increment a counter under the lock. */
static void
sc_contend(void)
{
	const char *f = "lt-contend";
	pid_t pids[CONTEND_PROCS];
	uint32_t v = 0;
	int fd = create_file(f), i, st, failed = 0;
	double t0;

	if (fd == -1)
		return;
	if (pwrite(fd, &v, sizeof(v), 0) != sizeof(v) || fsync(fd) == -1) {
		bad("initialising the counter: %s", strerror(errno));
		return;
	}
	close(fd);
	t0 = now();
	fflush(stdout);
	for (i = 0; i < CONTEND_PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(contend_child(i % 2 ? dir_b : dir_a, f));
		if (pids[i] == -1) {
			bad("fork: %s", strerror(errno));
			pids[i] = 0;
		}
	}
	for (i = 0; i < CONTEND_PROCS; i++)
		if (pids[i] > 0 && (waitpid(pids[i], &st, 0) == -1 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0))
			failed++;
	if (failed)
		bad("%d of %d processes failed", failed, CONTEND_PROCS);
	fd = open_in(dir_a, f, 0);
	if (fd == -1)
		return;
	if (lk(fd, F_SETLKW, F_RDLCK, 0, 4) != 0 ||
	    pread(fd, &v, sizeof(v), 0) != sizeof(v))
		bad("reading the final count failed");
	else if (v == CONTEND_PROCS * CONTEND_ROUNDS)
		ok("%d processes (both mounts) x %d F_SETLKW cycles: count %u "
		   "exact in %.1f s", CONTEND_PROCS, CONTEND_ROUNDS, v,
		    now() - t0);
	else
		bad("%d processes x %d cycles: count %u, want %d (lost "
		    "updates: the lock did not exclude)", CONTEND_PROCS,
		    CONTEND_ROUNDS, v, CONTEND_PROCS * CONTEND_ROUNDS);
	close(fd);
}

/* A lock beyond 2^32 is a different lock from its 32-bit alias. */
static void
sc_bigoffset(void)
{
	const char *f = "lt-bigoff";
	const int64_t big = ((int64_t)1 << 32) + 4096;
	const int64_t huge = ((int64_t)1 << 40) + 8;
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, big, 100, 0, "lock [2^32+4096,+100)");
	expect_setlk(f, F_WRLCK, big + 50, 1, EAGAIN, "conflict at 2^32+4146");
	expect_getlk(f, F_WRLCK, big + 99, 1, F_WRLCK, big, 100, "holder above 2^32");
	expect_setlk(f, F_WRLCK, 4096, 100, 0, "the 32-bit alias [4096,+100) is free");
	expect_setlk(f, F_WRLCK, big + 100, 1, 0, "the byte after it is free");
	my_lock(fd, F_SETLK, F_RDLCK, huge, 1, 0, "read-lock one byte at 2^40+8");
	expect_getlk(f, F_WRLCK, huge, 1, F_RDLCK, huge, 1, "holder at 2^40+8");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 0, 0, "unlock all");
	expect_setlk(f, F_WRLCK, big, 100, 0, "free after unlock");
	close(fd);
}

/* l_len == 0 locks to the end of the file, however large it grows. */
static void
sc_toeof(void)
{
	const char *f = "lt-toeof";
	int fd = create_file(f);

	if (fd == -1)
		return;
	my_lock(fd, F_SETLK, F_WRLCK, 1000, 0, 0, "lock [1000,EOF)");
	expect_setlk(f, F_WRLCK, 999, 1, 0, "byte 999 free");
	expect_setlk(f, F_WRLCK, (int64_t)1 << 40, 1, EAGAIN, "byte 2^40 held");
	expect_getlk(f, F_WRLCK, 5000, 1, F_WRLCK, 1000, 0, "holder reported to EOF");
	my_lock(fd, F_SETLK, F_UNLCK, 2000, 0, 0, "unlock [2000,EOF)");
	expect_setlk(f, F_WRLCK, 2000, 0, 0, "[2000,EOF) free");
	expect_getlk(f, F_WRLCK, 0, 0, F_WRLCK, 1000, 1000, "what is left is [1000,2000)");
	my_lock(fd, F_SETLK, F_UNLCK, 0, 0, 0, "unlock all");
	close(fd);
}

struct scenario {
	const char *name;
	void (*fn)(void);
	int timeout_s;
	const char *what;
};

static const struct scenario scenarios[] = {
	{"grant", sc_grant, 60, "F_SETLK granted, held, released"},
	{"conflict", sc_conflict, 60, "conflicting F_SETLK gets EAGAIN"},
	{"getlk", sc_getlk, 60, "F_GETLK via mount B reports the holder"},
	{"wakeup", sc_wakeup, 60, "blocked F_SETLKW woken within 1 s"},
	{"sameowner", sc_sameowner, 90, "F_SETLK beside the same process's F_SETLKW"},
	{"splitmerge", sc_splitmerge, 60, "split [0,100) by unlocking [40,60), merge"},
	{"upgrade", sc_upgrade, 60, "upgrade and downgrade"},
	{"shared", sc_shared, 60, "readers coexist, writer waits for all"},
	{"release", sc_release, 60, "close(), exit and SIGKILL release"},
	{"bigoffset", sc_bigoffset, 60, "locks beyond 2^32"},
	{"toeof", sc_toeof, 60, "l_len 0 locks to end of file"},
	{"deadlock", sc_deadlock, 90, "EDEADLK where a lock would close a cycle"},
	/* Last: without GRANTED callbacks it runs into its timeout. */
	{"contend", sc_contend, 90, "20 processes x 50 F_SETLKW cycles"},
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* ---- server restart ------------------------------------------------------
 *
 * "locktest [-c CTL] [-s STATD_PID] [-g SECONDS] restart TAG" is the guest's
 * half of a server-restart boot (run.sh, modes restart-kill and
 * restart-term).  The host restarts the lock server twice while this runs;
 * the two halves meet through the console (this prints "E2E: WAIT
 * TAG-restartN" when the host must restart the server) and through flag
 * files the host creates on the export (".e2e-flag-TAG-restartedN" once the
 * new server is ready, ".e2e-flag-TAG-graceN" once its grace period is
 * over), read through CTL, a mount that caches no lookups.
 *
 * One holder process holds four locks across both restarts:
 *   A  TAG-f1 [0,100)   write  (mount A)
 *   B  TAG-f1 [200,300) read   (mount A)
 *   C  TAG-f2 [0,EOF)   write  (mount A)
 *   D  TAG-f3 [0,10)    write  (mount O: the same export through the
 *                               server's second address, -o)
 * The kernel monitors each server address under its own name, so D is
 * reclaimed only if the server tells the guest of its restart under the
 * second address too.
 * Restart 1 is left alone: the server's SM_NOTIFY reaches the guest's
 * rpc.statd, the kernel reclaims A, B, C and D, and a waiter W1 (mount B)
 * that was blocked on C when the server went down is granted C once the
 * holder releases it.  Restart 2 happens with rpc.statd stopped (SIGSTOP):
 * the notification waits in its socket, nothing is reclaimed, so the
 * server is certainly in grace when a second waiter W2 (mount B) asks for
 * A; then statd is continued, A and B are reclaimed, and W2 is granted A
 * once the holder releases it.
 *
 * Output: the usual "LT: ok|not ok PHASE: ..." lines, then one
 * "LT: PASS|FAIL PHASE (...)" line per phase ("locktest list-restart").
 */

/* A grant after a release must come from the GRANTED callback, not from
 * the client's 30 s re-poll (run.sh checks the callback on the wire). */
#define RESTART_GRANT_LIMIT_MS 5000

enum {
	PH_HOLD, PH_HELD1, PH_ACROSS, PH_GRACEW, PH_HELD2, PH_NPHASES
};

static const struct phase phase_init[PH_NPHASES] = {
	{"hold", "holder takes A, B, C (mount A) and D (mount O, the server's "
	    "second address); refused to another process before the restart",
	    0, 0, 0, 0, 0},
	{"held-again1", "after restart 1 and its grace: A, B, C, D refused to "
	    "another process (reclaimed), readers still fit in B", 0, 0, 0, 0, 0},
	{"waiter-across", "F_SETLKW (mount B) blocked on C when the server "
	    "went down is granted C after the restart once the holder releases "
	    "it", 0, 0, 0, 0, 0},
	{"grace-waiter", "F_SETLKW (mount B) on A issued in grace (statd "
	    "paused: nothing reclaimed yet) waits, and is granted once the "
	    "holder releases A", 0, 0, 0, 0, 0},
	{"held-again2", "after restart 2 (statd continued) and its grace: A, "
	    "B and D refused to another process", 0, 0, 0, 0, 0},
};

static const char *ctl_dir = "/mnt/ctl";
static pid_t statd_pid;
static int grace_wait_s = 120;
static struct phase *phases;

static void
phase(int i)
{
	cur_phase = &phases[i];
	cur = phases[i].name;
}

static void
phase_done(int i)
{
	phases[i].done = 1;
}

/* The holder: one process that locks and unlocks on command (F_SETLK). */
struct holder {
	pid_t pid;
	int to, from;
};

struct hcmd {
	int file;		/* 0: TAG-f1, 1: TAG-f2, 2: TAG-f3; -1: exit */
	int type;
	int64_t start, len;
};

static int
holder_start(struct holder *h, const char *f1, const char *f2,
    const char *f3)
{
	int up[2], down[2];

	if (pipe(up) == -1 || pipe(down) == -1)
		return -1;
	fflush(stdout);
	h->pid = fork();
	if (h->pid == -1)
		return -1;
	if (h->pid == 0) {
		struct hcmd c;
		int fd[3], err;

		close(up[0]);
		close(down[1]);
		fd[0] = open_in(dir_a, f1, O_CREAT | O_TRUNC);
		fd[1] = open_in(dir_a, f2, O_CREAT | O_TRUNC);
		fd[2] = open_in(dir_o != NULL ? dir_o : dir_a, f3,
		    O_CREAT | O_TRUNC);
		while (read_full(down[0], &c, sizeof(c), 3600 * 1000) ==
		    sizeof(c) && c.file >= 0 && c.file <= 2) {
			err = fd[c.file] == -1 ? EBADF :
			    lk(fd[c.file], F_SETLK, c.type, c.start, c.len);
			write_full(up[1], &err, sizeof(err));
		}
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	h->to = down[1];
	h->from = up[0];
	return 0;
}

/* One F_SETLK by the holder; checked like my_lock(). */
static void
holder_lock(struct holder *h, int file, int type, int64_t start,
    int64_t len, const char *what)
{
	struct hcmd c = {file, type, start, len};
	int err = -1;

	write_full(h->to, &c, sizeof(c));
	if (read_full(h->from, &err, sizeof(err), PROBE_TIMEOUT_MS) !=
	    sizeof(err))
		bad("%s: holder's F_SETLK %s %s hung", what, tname(type),
		    RNG(start, len));
	else if (err != 0)
		bad("%s: holder's F_SETLK %s %s: %s", what, tname(type),
		    RNG(start, len), ename(err));
	else
		ok("%s: holder (mount A) F_SETLK %s %s %s", what, tname(type),
		    RNG(start, len), type == F_UNLCK ? "done" : "granted");
}

static void
holder_stop(struct holder *h)
{
	struct hcmd c = {-1, 0, 0, 0};

	if (h->pid <= 0)
		return;
	write_full(h->to, &c, sizeof(c));
	close(h->to);
	close(h->from);
	reap(h->pid, 5000);
	h->pid = 0;
}

/* Wait for the host's flag TAG-name; prints what the host wrote in it. */
static int
wait_flag(const char *tag, const char *name, int timeout_s)
{
	char p[512], buf[256];
	double t0 = now();
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/.e2e-flag-%s-%s", ctl_dir, tag, name);
	while ((fd = open(p, O_RDONLY)) == -1) {
		if (now() - t0 > timeout_s) {
			bad("no word from the host (%s) within %d s", p,
			    timeout_s);
			return -1;
		}
		msleep(100);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("LT: info host %s-%s after %.1f s: %s\n", tag, name,
	    now() - t0, buf);
	return 0;
}

static void
host_restart(const char *tag, int round)
{
	printf("E2E: WAIT %s-restart%d\n", tag, round);
	fflush(stdout);
}

/* The waiter w must still be blocked (checked for wait_ms). */
static int
still_blocked(struct locker *w, int wait_ms, const char *what)
{
	if (locker_wait(w, wait_ms)) {
		bad("%s: the waiter's F_SETLKW returned (%s) while the lock was "
		    "held", what, ename(w->err));
		return 0;
	}
	ok("%s: the waiter (mount B) is still blocked in F_SETLKW", what);
	return 1;
}

/* The holder releases what w waits for: w must get it, by a callback. */
static void
granted_after_release(struct holder *h, struct locker *w, int file,
    int64_t start, int64_t len, const char *fname)
{
	double t;

	t = now();
	holder_lock(h, file, F_UNLCK, start, len, "the holder releases it");
	if (!locker_wait(w, RESTART_GRANT_LIMIT_MS))
		bad("the waiter was not granted within %d ms of the release",
		    RESTART_GRANT_LIMIT_MS);
	else if (w->err != 0)
		bad("the waiter's F_SETLKW failed: %s", ename(w->err));
	else {
		ok("the waiter was granted %.3f s after the holder's release",
		    w->t - t);
		printf("LT: info %s grant-latency %.3f\n", cur, w->t - t);
	}
	expect_setlk(fname, F_WRLCK, start, 1, EAGAIN,
	    "the granted waiter holds it");
	if (w->done && w->err == 0 && locker_release(w) != 0)
		bad("the waiter's unlock failed");
}

static void
restart_body(const char *tag)
{
	char f1[128], f2[128], f3[128];
	struct holder h = {0, -1, -1};
	struct locker w1, w2;
	int have_w1 = 0, have_w2 = 0;

	snprintf(f1, sizeof(f1), "%s-f1", tag);
	snprintf(f2, sizeof(f2), "%s-f2", tag);
	snprintf(f3, sizeof(f3), "%s-f3", tag);

	phase(PH_HOLD);
	if (dir_o == NULL)
		bad("no mount through the server's second address (-o): D "
		    "is taken through mount A");
	if (holder_start(&h, f1, f2, f3) == -1) {
		bad("fork: %s", strerror(errno));
		return;
	}
	holder_lock(&h, 0, F_WRLCK, 0, 100, "A");
	holder_lock(&h, 0, F_RDLCK, 200, 100, "B");
	holder_lock(&h, 1, F_WRLCK, 0, 0, "C");
	holder_lock(&h, 2, F_WRLCK, 0, 10, "D (mount O)");
	expect_setlk(f1, F_WRLCK, 50, 10, EAGAIN, "A held");
	expect_setlk(f1, F_WRLCK, 250, 10, EAGAIN, "B held");
	expect_setlk(f2, F_WRLCK, 1000, 10, EAGAIN, "C held");
	expect_setlk(f3, F_WRLCK, 5, 1, EAGAIN, "D held");
	phase_done(PH_HOLD);

	phase(PH_ACROSS);
	if (locker_start(&w1, dir_b, f2, F_SETLKW, F_WRLCK, 0, 10) == 0) {
		have_w1 = 1;
		still_blocked(&w1, SETTLE_MS, "W1 on C before the restart");
	} else
		bad("fork: %s", strerror(errno));

	/* Restart 1: nothing in the way of the notification. */
	phase(PH_HELD1);
	host_restart(tag, 1);
	if (wait_flag(tag, "restarted1", 60) == 0)
		wait_flag(tag, "grace1", grace_wait_s);
	expect_setlk(f1, F_WRLCK, 50, 10, EAGAIN, "A reclaimed");
	expect_setlk(f1, F_RDLCK, 250, 10, 0, "a reader fits in B");
	expect_setlk(f1, F_WRLCK, 250, 10, EAGAIN, "B reclaimed");
	expect_setlk(f2, F_WRLCK, 1000, 10, EAGAIN, "C reclaimed");
	expect_setlk(f3, F_WRLCK, 5, 1, EAGAIN,
	    "D reclaimed (notified under the second address)");
	phase_done(PH_HELD1);

	phase(PH_ACROSS);
	if (have_w1 && still_blocked(&w1, 0, "W1 after the restart"))
		granted_after_release(&h, &w1, 1, 0, 0, f2);
	else if (have_w1)
		locker_release(&w1);
	phase_done(PH_ACROSS);

	/* Restart 2: statd stopped, so the server is in grace for sure. */
	phase(PH_GRACEW);
	if (statd_pid <= 0 || kill(statd_pid, SIGSTOP) == -1)
		bad("cannot stop rpc.statd (pid %d): %s", (int)statd_pid,
		    strerror(errno));
	else
		ok("rpc.statd (pid %d) stopped: the server's SM_NOTIFY will "
		   "wait in its socket", (int)statd_pid);
	host_restart(tag, 2);
	if (wait_flag(tag, "restarted2", 60) == 0 &&
	    locker_start(&w2, dir_b, f1, F_SETLKW, F_WRLCK, 0, 100) == 0) {
		have_w2 = 1;
		still_blocked(&w2, SETTLE_MS, "W2 on A, issued in grace");
	}
	if (statd_pid > 0 && kill(statd_pid, SIGCONT) == 0)
		printf("LT: info rpc.statd continued\n");
	phase(PH_HELD2);
	wait_flag(tag, "grace2", grace_wait_s);
	expect_setlk(f1, F_WRLCK, 50, 10, EAGAIN, "A reclaimed");
	expect_setlk(f1, F_WRLCK, 250, 10, EAGAIN, "B reclaimed");
	expect_setlk(f3, F_WRLCK, 5, 1, EAGAIN,
	    "D reclaimed (notified under the second address)");
	phase_done(PH_HELD2);
	phase(PH_GRACEW);
	if (have_w2 && still_blocked(&w2, 500, "W2 after grace"))
		granted_after_release(&h, &w2, 0, 0, 100, f1);
	else if (have_w2)
		locker_release(&w2);
	phase_done(PH_GRACEW);

	cur_phase = NULL;
	cur = tag;
	holder_lock(&h, 0, F_UNLCK, 0, 0, "clean-up");
	holder_lock(&h, 1, F_UNLCK, 0, 0, "clean-up");
	holder_lock(&h, 2, F_UNLCK, 0, 0, "clean-up");
	holder_stop(&h);
}

/* Run restart_body under a watchdog; print one verdict per phase. */
static int
restart_run(const char *tag)
{
	/* Below the boot's limit in run.sh (150 + 2 * grace_wait_s + 60). */
	double t0 = now(), deadline = t0 + 180 + 2 * grace_wait_s;
	int i, st, passed = 0, timed_out = 0;
	pid_t pid;

	phases = mmap(NULL, sizeof(phase_init), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (phases == MAP_FAILED) {
		printf("LT: FAIL %s (0.0 s): mmap: %s\n", tag, strerror(errno));
		return 1;
	}
	memcpy(phases, phase_init, sizeof(phase_init));
	printf("LT: PLAN");
	for (i = 0; i < PH_NPHASES; i++)
		printf(" %s", phases[i].name);
	printf("\n");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		restart_body(tag);
		fflush(stdout);
		_exit(0);
	}
	setpgid(pid, pid);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			timed_out = 1;
			break;
		}
		msleep(50);
	}
	kill(-pid, SIGKILL);
	if (statd_pid > 0)
		kill(statd_pid, SIGCONT);
	for (i = 0; i < PH_NPHASES; i++) {
		const struct phase *p = &phases[i];
		double d = p->nok + p->nbad ? p->t1 - p->t0 : 0;

		if (p->nbad == 0 && p->nok > 0 && p->done) {
			printf("LT: PASS %s (%.1f s)\n", p->name, d);
			passed++;
		} else if (p->nbad > 0)
			printf("LT: FAIL %s (%.1f s): %d of %d checks failed\n",
			    p->name, d, p->nbad, p->nok + p->nbad);
		else if (p->nok > 0)
			printf("LT: FAIL %s (%.1f s): cut short%s\n", p->name, d,
			    timed_out ? " by the watchdog" : "");
		else
			printf("LT: FAIL %s (0.0 s): not reached%s\n", p->name,
			    timed_out ? " (the watchdog fired)" : "");
	}
	printf("LT: DONE passed=%d failed=%d\n", passed, PH_NPHASES - passed);
	return passed == PH_NPHASES ? 0 : 1;
}

/*
 * Lock and unlock once with a throw-away owner, so that svid 0 is used up
 * (a holder with svid 0 would be reported as l_pid 0).  This is also the
 * first lock call of the run: when it hangs or fails, no NLM server is
 * answering and every scenario would only run into its timeout.
 * Returns NULL when the call worked, else the reason.
 */
static const char *
first_lock(void)
{
	static char why[128];
	pid_t pid;
	int p[2], err = -1;

	if (pipe(p) == -1)
		return "pipe failed";
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open_in(dir_a, "lt-burn", O_CREAT);

		close(p[0]);
		err = fd == -1 ? errno : lk(fd, F_SETLK, F_WRLCK, 0, 1);
		if (err == 0)
			err = lk(fd, F_SETLK, F_UNLCK, 0, 1);
		write_full(p[1], &err, sizeof(err));
		_exit(0);
	}
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return "fork failed";
	}
	if (read_full(p[0], &err, sizeof(err), PROBE_TIMEOUT_MS) != sizeof(err)) {
		snprintf(why, sizeof(why), "the first F_SETLK hung for %d s "
		    "(no NLM server answering?)", PROBE_TIMEOUT_MS / 1000);
		err = -1;
	} else if (err != 0) {
		snprintf(why, sizeof(why), "the first F_SETLK failed: %s",
		    strerror(err));
	}
	close(p[0]);
	reap(pid, 1000);
	return err == 0 ? NULL : why;
}

/* Run one scenario in its own process group under a watchdog. */
static int
run_scenario(const struct scenario *s)
{
	double t0 = now(), deadline = t0 + s->timeout_s;
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == -1) {
		printf("LT: FAIL %s (0.0 s): fork: %s\n", s->name,
		    strerror(errno));
		return 0;
	}
	if (pid == 0) {
		setpgid(0, 0);
		cur = s->name;
		nfail = 0;
		s->fn();
		fflush(stdout);
		_exit(nfail ? 1 : 0);
	}
	setpgid(pid, pid);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			printf("LT: FAIL %s (%.1f s): timed out after %d s (a "
			    "lock call hung)\n", s->name, now() - t0,
			    s->timeout_s);
			return 0;
		}
		msleep(20);
	}
	/* Helpers left behind by a failing scenario must not linger. */
	kill(-pid, SIGKILL);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		printf("LT: PASS %s (%.1f s)\n", s->name, now() - t0);
		return 1;
	}
	printf("LT: FAIL %s (%.1f s): %s\n", s->name, now() - t0,
	    WIFEXITED(st) ? "checks failed" : "scenario process crashed");
	return 0;
}

static const struct scenario *
find(const char *name)
{
	size_t i;

	for (i = 0; i < NSCEN; i++)
		if (strcmp(scenarios[i].name, name) == 0)
			return &scenarios[i];
	return NULL;
}

static int
usage(void)
{
	fprintf(stderr, "usage: locktest [-a DIR] [-b DIR] list | all | "
	    "SCENARIO...\n"
	    "       locktest [-a DIR] [-b DIR] [-o DIR] [-c CTLDIR] "
	    "[-s STATD_PID] [-g SECONDS] restart TAG\n"
	    "       locktest list-restart\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const struct scenario *plan[NSCEN * 4];
	size_t n = 0, i;
	int c, passed = 0;
	const char *why;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "a:b:c:g:o:s:")) != -1) {
		if (c == 'a')
			dir_a = optarg;
		else if (c == 'b')
			dir_b = optarg;
		else if (c == 'o')
			dir_o = optarg;
		else if (c == 'c')
			ctl_dir = optarg;
		else if (c == 'g')
			grace_wait_s = atoi(optarg);
		else if (c == 's')
			statd_pid = (pid_t)atoi(optarg);
		else
			return usage();
	}
	if (optind >= argc)
		return usage();
	if (strcmp(argv[optind], "list-restart") == 0) {
		for (i = 0; i < PH_NPHASES; i++)
			printf("%s\t%s\n", phase_init[i].name,
			    phase_init[i].what);
		return 0;
	}
	if (strcmp(argv[optind], "restart") == 0) {
		if (optind + 2 != argc)
			return usage();
		signal(SIGPIPE, SIG_IGN);
		return restart_run(argv[optind + 1]);
	}
	if (strcmp(argv[optind], "list") == 0) {
		for (i = 0; i < NSCEN; i++)
			printf("%s\t%s\n", scenarios[i].name, scenarios[i].what);
		return 0;
	}
	for (; optind < argc && n < NSCEN * 4; optind++) {
		if (strcmp(argv[optind], "all") == 0) {
			for (i = 0; i < NSCEN && n < NSCEN * 4; i++)
				plan[n++] = &scenarios[i];
		} else if ((plan[n] = find(argv[optind])) != NULL) {
			n++;
		} else {
			fprintf(stderr, "locktest: unknown scenario %s\n",
			    argv[optind]);
			return usage();
		}
	}
	signal(SIGPIPE, SIG_IGN);
	printf("LT: PLAN");
	for (i = 0; i < n; i++)
		printf(" %s", plan[i]->name);
	printf("\n");
	why = first_lock();
	for (i = 0; i < n; i++) {
		if (why == NULL)
			passed += run_scenario(plan[i]);
		else
			printf("LT: FAIL %s (0.0 s): not run: %s\n",
			    plan[i]->name, why);
	}
	printf("LT: DONE passed=%d failed=%d\n", passed, (int)n - passed);
	return passed == (int)n ? 0 : 1;
}
