/*
 * test_nlmctl.c - the nlmctl program (cmd/nlmctl.c) against a scripted
 * server: a Unix socket in a temporary directory that reads the request
 * and answers with the bytes a test gives, as nlmd would.  nlmctl is the
 * one built beside this binary (build/<kind>/nlmctl).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/runner.h"

int	ctl_register_nlmctl(void);

/* What one run of nlmctl did. */
struct nc_run {
	char	req[4200];	/* the request it sent */
	char	out[65536];	/* its stdout */
	char	err[8192];	/* its stderr */
	int	status;		/* its exit status; -1: killed */
};

/* When not -1, nlmctl's stdout instead of the pipe (a full disk). */
static int nc_stdout = -1;

/*
 * How nlmctl is told the socket: 0 with -s; 1 in NLMCTL_SOCKET alone;
 * 2 with -s, NLMCTL_SOCKET naming another.
 */
static int nc_sock_env;

/* build/<kind>/nlmctl, from build/<kind>/tests/test-ctl. */
static bool
nc_path(char *buf, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return false;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return false;
	*slash = '\0';
	snprintf(buf, cap, "%s/../nlmctl", self);
	return access(buf, X_OK) == 0;
}

/*
 * Run nlmctl with argv (after the program and -s SOCKET) against a server
 * that answers `answer' (alen bytes) and closes; if nlmctl exits without
 * connecting, r->req is empty.  False when it could not be run (the
 * test is then skipped).
 */
static bool
nc_run(const char *const *argv, const char *answer, size_t alen,
    struct nc_run *r)
{
	char prog[PATH_MAX + 16], dir[] = "/tmp/nlmd-nlmctl-XXXXXX";
	const char *args[32];
	struct sockaddr_un sun;
	int lfd, cfd, out[2], errp[2], st;
	size_t n = 0, i, got;
	bool exited = false;
	ssize_t k;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!nc_path(prog, sizeof(prog))) {
		tests_skip("no nlmctl built beside the tests");
		return false;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/ctl.sock", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(lfd != -1);
	CU_ASSERT_FATAL(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	CU_ASSERT_FATAL(listen(lfd, 1) == 0);
	CU_ASSERT_FATAL(pipe2(out, O_CLOEXEC) == 0);
	CU_ASSERT_FATAL(pipe2(errp, O_CLOEXEC) == 0);
	args[n++] = prog;
	if (nc_sock_env != 1) {
		args[n++] = "-s";
		args[n++] = sun.sun_path;
	}
	for (i = 0; argv[i] != NULL && n < 31; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		(void)dup2(nc_stdout != -1 ? nc_stdout : out[1], 1);
		(void)dup2(errp[1], 2);
		if (nc_sock_env == 0)
			(void)unsetenv("NLMCTL_SOCKET");
		else
			(void)setenv("NLMCTL_SOCKET", nc_sock_env == 1 ?
			    sun.sun_path : "/nonexistent/nlmd.sock", 1);
		execv(prog, (char *const *)(uintptr_t)args);
		_exit(127);
	}
	CU_ASSERT_FATAL(pid > 0);
	close(out[1]);
	close(errp[1]);
	/*
	 * Its connection; none if it exits first (it went elsewhere, or
	 * gave up): then no request, and nothing to wait for below.
	 */
	for (;;) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 100) == 1)
			break;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			exited = true;
			break;
		}
	}
	/* The request: up to its newline (nlmctl shuts down after it). */
	if (!exited) {
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		CU_ASSERT_FATAL(cfd != -1);
		got = 0;
		while (got < sizeof(r->req) - 1 && (k = recv(cfd, r->req + got,
		    sizeof(r->req) - 1 - got, 0)) > 0)
			got += (size_t)k;
		r->req[got] = '\0';
		CU_ASSERT(send(cfd, answer, alen, MSG_NOSIGNAL) ==
		    (ssize_t)alen);
		close(cfd);
	}
	close(lfd);
	got = 0;
	while (got < sizeof(r->out) - 1 && (k = read(out[0], r->out + got,
	    sizeof(r->out) - 1 - got)) > 0)
		got += (size_t)k;
	r->out[got] = '\0';
	close(out[0]);
	/* Little: nlmctl's stderr is a line or two, never a full pipe. */
	got = 0;
	while (got < sizeof(r->err) - 1 && (k = read(errp[0], r->err + got,
	    sizeof(r->err) - 1 - got)) > 0)
		got += (size_t)k;
	r->err[got] = '\0';
	close(errp[0]);
	if (!exited)
		CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	(void)unlink(sun.sun_path);
	(void)rmdir(dir);
	return true;
}

static bool
nc_run_str(const char *const *argv, const char *answer, struct nc_run *r)
{
	return nc_run(argv, answer, strlen(answer), r);
}

/* The line of `out' that begins with `prefix', copied into buf. */
static bool
nc_line(const char *out, const char *prefix, char *buf, size_t cap)
{
	const char *p = out, *e;
	size_t pl = strlen(prefix);

	for (; *p != '\0'; p = *e == '\0' ? e : e + 1) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		if ((size_t)(e - p) >= pl && strncmp(p, prefix, pl) == 0 &&
		    (size_t)(e - p) < cap) {
			memcpy(buf, p, (size_t)(e - p));
			buf[e - p] = '\0';
			return true;
		}
	}
	return false;
}

/* Split a row on white space, as a script does: up to `max' fields. */
static size_t
nc_fields(char *row, char **f, size_t max)
{
	char *save = NULL, *t;
	size_t n = 0;

	for (t = strtok_r(row, " ", &save); t != NULL && n < max;
	    t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	return n;
}

#define NC_HEAD	"nlmctl 1 ok\n" \
	"host\tid=1\tname=alice\taddr=10.0.0.1\tlocal=-\tnsm-state=3\t" \
	"monitored=1\tepoch=1\tlocks=2\tshares=1\twaiters=0\treclaimable=0\t" \
	"callbacks=0\tcallbacks-waiting=0\tnotify-since=0\tidle-ms=5\n"

/*
 * An owner handle may be empty (NLM's oh is a netobj of 0 to 1,024
 * bytes; nlmd takes an empty one).  Its cell was left blank: a row split
 * on white space lost a column, and FILE, START, ... were read from the
 * wrong places (the man page: "rows split on white space keep their
 * columns").
 */
static void
test_empty_oh(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	static const char answer[] = NC_HEAD
	    "lock\thost=1\tsvid=7\toh=\tfh=66\tstart=0\tlen=10\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=0\n"
	    "share\thost=1\toh=\tfh=66\taccess=1\tdeny=0\tepoch=1\t"
	    "reclaimable=0\n"
	    "nlmctl 1 end 3\n";
	static const char *const rargv[] = { "release", "--fh", "66", NULL };
	static const char ranswer[] = "nlmctl 1 ok\n"
	    "released\tkind=lock\thost=1\tsvid=7\toh=\tfh=66\tstart=0\t"
	    "len=10\treclaimable=0\n"
	    "nlmctl 1 end 1\n";
	struct nc_run r;
	char row[512], *f[16];
	size_t n;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	printf("\n    %s ", row);
	/* KIND HOST SVID OWNER FILE START LEN MODE TOKEN EPOCH */
	n = nc_fields(row, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 10);
	CU_ASSERT_STRING_EQUAL(f[3], "-");
	CU_ASSERT_STRING_EQUAL(f[4], "66");
	CU_ASSERT_STRING_EQUAL(f[5], "0");
	CU_ASSERT_STRING_EQUAL(f[9], "1");
	CU_ASSERT_FATAL(nc_line(r.out, "share ", row, sizeof(row)));
	n = nc_fields(row, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 10);
	CU_ASSERT_STRING_EQUAL(f[3], "-");
	CU_ASSERT_STRING_EQUAL(f[4], "66");

	/* The release listing: "owner" then a value, never nothing. */
	if (!nc_run_str(rargv, ranswer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	printf("%s ", row);
	n = nc_fields(row, f, 16);
	CU_ASSERT_FATAL(n >= 9);
	CU_ASSERT_STRING_EQUAL(f[5], "owner");
	CU_ASSERT_STRING_EQUAL(f[6], "-");
	CU_ASSERT_STRING_EQUAL(f[7], "file");
	CU_ASSERT_STRING_EQUAL(f[8], "66");
}

/*
 * The owner and file handles in full.  A Linux client's owner handle is
 * "PID@NODENAME" (12 bytes and more: 24 hex digits), a file handle 28 to
 * 64 bytes; the table cut them to 18 and 24 digits without a mark, and
 * the man page has `release --owner' take the handle "as status --locks
 * shows them": the handle copied from the table named no lock, and
 * `status --locks --fh' with the file's cut handle showed no record.
 */
static void
test_handles_whole(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	static const char oh[] = "3432343240636c69656e7431";
	static const char fh[] =
	    "01000701000000000000000000000000aa01bb02cc03dd04ee05ff06";
	static const char *const rargv[] = { "release", "--fh", fh, NULL };
	char answer[1024], row[512], *f[16];
	struct nc_run r;
	size_t n;

	snprintf(answer, sizeof(answer), NC_HEAD
	    "lock\thost=1\tsvid=4242\toh=%s\tfh=%s\tstart=0\tlen=0\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=0\n"
	    "waiter\thost=1\tsvid=4243\toh=%s\tfh=%s\tstart=0\tlen=0\t"
	    "mode=shared\twaited-ms=10\tgranted=0\n"
	    "nlmctl 1 end 3\n", oh, fh, oh, fh);
	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	printf("\n    %s ", row);
	n = nc_fields(row, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 10);
	CU_ASSERT_STRING_EQUAL(f[3], oh);
	CU_ASSERT_STRING_EQUAL(f[4], fh);
	CU_ASSERT_STRING_EQUAL(f[5], "0");
	CU_ASSERT_STRING_EQUAL(f[6], "to-eof");
	CU_ASSERT_FATAL(nc_line(r.out, "waiter ", row, sizeof(row)));
	n = nc_fields(row, f, 16);
	CU_ASSERT_FATAL(n >= 8);
	CU_ASSERT_STRING_EQUAL(f[3], oh);
	CU_ASSERT_STRING_EQUAL(f[4], fh);
	CU_ASSERT_STRING_EQUAL(f[6], "to-eof");
	CU_ASSERT_STRING_EQUAL(f[7], "shared");

	snprintf(answer, sizeof(answer), "nlmctl 1 ok\n"
	    "released\tkind=lock\thost=1\tsvid=4242\toh=%s\tfh=%s\tstart=0\t"
	    "len=0\treclaimable=0\n"
	    "nlmctl 1 end 1\n", oh, fh);
	if (!nc_run_str(rargv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	n = nc_fields(row, f, 16);
	CU_ASSERT_FATAL(n >= 9);
	CU_ASSERT_STRING_EQUAL(f[6], oh);
	CU_ASSERT_STRING_EQUAL(f[8], fh);
}

/*
 * An answer is whole only with its end line and the right count: every
 * other ending exits 1 (a script must not take a part for all of it).
 * The count is digits and nothing else: strtoull() took "1x", " 1",
 * "+1" and "1\r" for 1, and "-18446744073709551615" too (it negates
 * in 64 bits).
 */
static void
test_cut_answers(void)
{
	static const char *const argv[] = { "status", NULL };
	static const char *const cut[] = {
		"",					/* nothing */
		"nlmctl 1 ok\n",			/* no end */
		"nlmctl 1 ok\nserver\tpid=1\n",
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 2\n",	/* count */
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 0\n",
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 1",	/* no \n */
		"nlmctl 1 ok\nserver\tpid=1",
		"nlmctl 1 error busy\n",
		"nlmctl 2 ok\nnlmctl 2 end 0\n",
		/* An end line whose count is not all digits, or too big. */
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 1x\n",
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 1 2\n",
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end  1\n",
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end +1\n",
		"nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 1\r\n",
		"nlmctl 1 ok\nserver\tpid=1\n"
		    "nlmctl 1 end -18446744073709551615\n",
		"nlmctl 1 ok\nnlmctl 1 end 18446744073709551616\n",
		"nlmctl 1 ok\nnlmctl 1 end \n",
	};
	struct nc_run r;
	size_t i;

	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		if (!nc_run_str(argv, cut[i], &r))
			return;
		CU_ASSERT_EQUAL(r.status, 1);
	}
	if (!nc_run_str(argv, "nlmctl 1 ok\nserver\tpid=1\nnlmctl 1 end 1\n",
	    &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 status\n");
}

/*
 * The table's MODE of a share is its access and deny ("a1/d2": access
 * read, deny write), and the NOTE of a waiter says whether it is queued
 * or granted and being called back.  (Found by mutation: access and deny
 * swapped, or the note inverted, passed every unit test: no test gave
 * nlmctl a share's modes or a granted waiter.)
 */
static void
test_share_waiter_rows(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	static const char answer[] = NC_HEAD
	    "share\thost=1\toh=aa\tfh=66\taccess=1\tdeny=2\tepoch=1\t"
	    "reclaimable=0\n"
	    "waiter\thost=1\tsvid=3\toh=bb\tfh=66\tstart=0\tlen=1\t"
	    "mode=exclusive\twaited-ms=2000\tgranted=1\n"
	    "nlmctl 1 end 3\n";
	static const char answer2[] = NC_HEAD
	    "waiter\thost=1\tsvid=4\toh=cc\tfh=66\tstart=5\tlen=1\t"
	    "mode=shared\twaited-ms=1000\tgranted=0\n"
	    "nlmctl 1 end 2\n";
	struct nc_run r;
	char row[512], *f[16];
	size_t n;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "share ", row, sizeof(row)));
	/* KIND HOST SVID OWNER FILE START LEN MODE TOKEN EPOCH */
	n = nc_fields(row, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 10);
	CU_ASSERT_STRING_EQUAL(f[7], "a1/d2");
	CU_ASSERT_FATAL(nc_line(r.out, "waiter ", row, sizeof(row)));
	CU_ASSERT_PTR_NOT_NULL(strstr(row, " granted, calling back; for "));
	CU_ASSERT_PTR_NULL(strstr(row, "queued"));

	if (!nc_run_str(argv, answer2, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "waiter ", row, sizeof(row)));
	CU_ASSERT_PTR_NOT_NULL(strstr(row, " queued for "));
	CU_ASSERT_PTR_NULL(strstr(row, "granted"));
}

/*
 * --json: a record of a host no host line named (created while the dump
 * ran) has host_name null.  It had "?", which is also the name, as sent,
 * of a host called "?" (the tables escape that one: \077).
 */
static void
test_json_unknown_host(void)
{
	static const char *const argv[] = { "--json", "status", "--locks",
	    NULL };
	static const char answer[] = "nlmctl 1 ok\n"
	    "host\tid=1\tname=?\taddr=10.0.0.1\n"
	    "lock\thost=1\tsvid=1\toh=aa\tfh=66\tstart=0\tlen=0\n"
	    "lock\thost=2\tsvid=1\toh=aa\tfh=66\tstart=0\tlen=0\n"
	    "nlmctl 1 end 3\n";
	struct nc_run r;
	const char *p;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL((p = strstr(r.out, "\"host_name\": \"?\"")) != NULL);
	CU_ASSERT(strstr(p + 1, "\"host_name\": \"?\"") == NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"host_name\": null"));
}

/*
 * --json: distinct names stay distinct strings.  A name that is not
 * UTF-8 (which JSON cannot carry) came escaped as in the tables, and a
 * valid name that is spelt like that escape came as it was: a\377 (the
 * byte 0xff) and "a\377" (a backslash, then digits) were both
 * "a\\377", two hosts a consumer could not tell apart.  A backslash is
 * now always an escape: a literal one is \134.  Valid UTF-8, spaces
 * included, is as the client sent it.
 */
static void
test_json_names_distinct(void)
{
	static const char *const argv[] = { "--json", "status", "--locks",
	    NULL };
	static const char answer[] = "nlmctl 1 ok\n"
	    "host\tid=1\tname=a%FF\taddr=10.0.0.1\n"
	    "host\tid=2\tname=a\\377\taddr=10.0.0.2\n"
	    "host\tid=3\tname=a%20b\xc3\xa9\taddr=10.0.0.3\n"
	    "host\tid=4\tname=\xc3\xa9%FF\\\taddr=10.0.0.4\n"
	    "lock\thost=2\tsvid=1\toh=aa\tfh=66\tstart=0\tlen=0\n"
	    "nlmctl 1 end 5\n";
	struct nc_run r;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"name\": \"a\\\\377\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"name\": \"a\\\\134377\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"name\": \"a b\xc3\xa9\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out,
	    "\"name\": \"\xc3\xa9\\\\377\\\\134\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out,
	    "\"host_name\": \"a\\\\134377\""));
}

#define NC_RELEASED	"nlmctl 1 ok\n" \
	"released\tkind=lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=0\t" \
	"len=10\treclaimable=0\n" \
	"released\tkind=share\thost=1\toh=bb\tfh=66\treclaimable=1\n" \
	"released\tkind=lock\thost=1\tsvid=8\toh=cc\tfh=66\tstart=5\t" \
	"len=0\treclaimable=1\n" \
	"nlmctl 1 end 3\n"

/*
 * release sends the one selector it was given, under its own key and
 * percent-encoded, and dry-run=1 with --dry-run (before the command or
 * after it); what it prints counts the locks and the shares and says
 * whether anything changed; a lock's row its range ("+eof" to the end
 * of the file) and whether it was to be reclaimed.  (Found by mutation:
 * --addr sent as host=, --dry-run not sent, locks counted as shares,
 * "released" printed for a dry run, a range to the end of the file
 * shown as its length, or "to reclaim" left out, passed every unit
 * test: none looked at a release's request or at its rows.)
 */
static void
test_release_request(void)
{
	static const struct {
		const char	*argv[6];
		const char	*req;
	} c[] = {
		{ { "release", "--host", "a b", NULL },
		    "nlmctl 1 release host=a%20b\n" },
		{ { "release", "--addr", "fe80::1%eth0", NULL },
		    "nlmctl 1 release addr=fe80::1%25eth0\n" },
		{ { "release", "--fh", "66", NULL },
		    "nlmctl 1 release fh=66\n" },
		{ { "release", "--owner", "a b:7:aa", NULL },
		    "nlmctl 1 release owner=a%20b:7:aa\n" },
		{ { "--dry-run", "release", "--fh", "66", NULL },
		    "nlmctl 1 release fh=66 dry-run=1\n" },
		{ { "release", "--fh", "66", "--dry-run", NULL },
		    "nlmctl 1 release fh=66 dry-run=1\n" },
	};
	static const char *const jargv[] = { "--json", "release", "--fh", "66",
	    NULL };
	static const char *const jdargv[] = { "--json", "--dry-run", "release",
	    "--fh", "66", NULL };
	struct nc_run r;
	char row[512];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (!nc_run_str(c[i].argv, NC_RELEASED, &r))
			return;
		CU_ASSERT_EQUAL(r.status, 0);
		CU_ASSERT_STRING_EQUAL(r.req, c[i].req);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "[0, +10)\n"));
		CU_ASSERT_PTR_NOT_NULL(strstr(r.out,
		    "[5, +eof) (to reclaim)\n"));
		CU_ASSERT(nc_line(r.out, "share ", row, sizeof(row)));
		CU_ASSERT_PTR_NOT_NULL(strstr(row, " owner bb "));
		CU_ASSERT_PTR_NOT_NULL(strstr(row, " (to reclaim)"));
		if (strstr(c[i].req, "dry-run") != NULL) {
			CU_ASSERT(nc_line(r.out, "would release", row,
			    sizeof(row)));
			CU_ASSERT_STRING_EQUAL(row, "would release (dry run, "
			    "nothing changed): 2 lock(s) and 1 share(s)");
			CU_ASSERT(!nc_line(r.out, "released", row,
			    sizeof(row)));
		} else {
			CU_ASSERT(nc_line(r.out, "released", row,
			    sizeof(row)));
			CU_ASSERT_STRING_EQUAL(row,
			    "released 2 lock(s) and 1 share(s)");
			CU_ASSERT(!nc_line(r.out, "would", row, sizeof(row)));
		}
	}
	if (!nc_run_str(jargv, NC_RELEASED, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 release fh=66\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"dry_run\": false"));
	if (!nc_run_str(jdargv, NC_RELEASED, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 release fh=66 dry-run=1\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"dry_run\": true"));
}

/*
 * A usage error exits 2 and sends nothing: release with no selector, or
 * with two (which of them would it release?), a command with a word too
 * many, a --timeout that is not 0 to 86400 seconds.  (Found by mutation:
 * release accepting two selectors, or a timeout of 86401 s, passed every
 * unit test.)
 */
static void
test_usage_errors(void)
{
	static const char *const bad[][6] = {
		{ "release", NULL },
		{ "release", "--dry-run", NULL },
		{ "release", "--host", "a", "--fh", "66", NULL },
		{ "release", "--host", "a", "--host", "b", NULL },
		{ "release", "--fh", "66", "x", NULL },
		{ "status", "x", NULL },
		{ "grace", NULL },
		{ "metrics", "x", NULL },
		{ "-t", "x", "status", NULL },
		{ "-t", "86401", "status", NULL },
		{ "-t", "-1", "status", NULL },
		{ "-t", "1x", "status", NULL },
	};
	static const char *const good[][5] = {
		{ "release", "--fh", "66", NULL },
		{ "-t", "86400", "status", NULL },
		{ "-t", "0", "status", NULL },
	};
	static const char answer[] = "nlmctl 1 ok\nnlmctl 1 end 0\n";
	struct nc_run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!nc_run_str(bad[i], answer, &r))
			return;
		CU_ASSERT_EQUAL(r.status, 2);
		CU_ASSERT_STRING_EQUAL(r.req, "");
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!nc_run_str(good[i], answer, &r))
			return;
		CU_ASSERT_EQUAL(r.status, 0);
		CU_ASSERT_STRING_NOT_EQUAL(r.req, "");
	}
}

/*
 * status sends --locks, --host and --fh, each under its own key, the
 * name percent-encoded.  (Found by mutation: --host sent under another
 * key, or locks=1 not sent, passed every unit test.)
 */
static void
test_status_request(void)
{
	static const char *const argv[] = { "status", "--locks", "--host",
	    "a b", "--fh", "66", NULL };
	struct nc_run r;

	if (!nc_run_str(argv, "nlmctl 1 ok\nnlmctl 1 end 0\n", &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req,
	    "nlmctl 1 status locks=1 host=a%20b fh=66\n");
}

/*
 * A host's row: its 12 columns, CB as "N+W" (N in flight, W waiting for
 * them) when some wait, NOTIFY "owed" while an SM_NOTIFY is owed, IDLE
 * as a duration (a minute from 60 s on).  (Found by mutation: NOTIFY
 * inverted, CB counting the waiting ones twice, or 60 s shown as "60s",
 * passed every unit test: none had a host row checked.)
 */
static void
test_host_rows(void)
{
	static const char *const argv[] = { "status", NULL };
	static const char answer[] = "nlmctl 1 ok\n"
	    "host\tid=7\tname=alice\taddr=10.0.0.1\tlocal=10.0.0.9\t"
	    "nsm-state=3\tmonitored=1\tepoch=1\tlocks=2\tshares=1\t"
	    "waiters=4\treclaimable=5\tcallbacks=3\tcallbacks-waiting=2\t"
	    "notify-since=1700000000\tidle-ms=90000\n"
	    "host\tid=8\tname=bob\taddr=10.0.0.2\tlocal=-\tnsm-state=5\t"
	    "monitored=1\tepoch=1\tlocks=0\tshares=0\twaiters=0\t"
	    "reclaimable=0\tcallbacks=1\tcallbacks-waiting=0\t"
	    "notify-since=0\tidle-ms=60999\n"
	    "nlmctl 1 end 2\n";
	static const char *const want[] = { "7", "alice", "10.0.0.1",
	    "10.0.0.9", "3", "2", "1", "4", "5", "1+2", "owed", "1m30s" };
	struct nc_run r;
	char row[512], *f[16];
	size_t n, i;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "7 ", row, sizeof(row)));
	n = nc_fields(row, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 12);
	for (i = 0; i < n; i++)
		CU_ASSERT_STRING_EQUAL(f[i], want[i]);
	CU_ASSERT_FATAL(nc_line(r.out, "8 ", row, sizeof(row)));
	n = nc_fields(row, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 12);
	CU_ASSERT_STRING_EQUAL(f[9], "1");
	CU_ASSERT_STRING_EQUAL(f[10], "-");
	CU_ASSERT_STRING_EQUAL(f[11], "1m0s");
}

/*
 * A name with control characters, a newline and a space reaches the
 * terminal escaped, in the host rows and in the rows of its records
 * alike: nothing but printable ASCII and the newlines that end rows; a
 * host no host line named is "?".  (Found by mutation: the lock rows'
 * names, or the host rows', not escaped, or an unknown host shown as
 * "-", the empty name, passed every unit test; only test_ctl.sh looked
 * at the escapes.)
 */
static void
test_names_escaped(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	static const char answer[] = "nlmctl 1 ok\n"
	    "host\tid=1\tname=a%0A9%20evil%09%1B[0m\taddr=10.0.0.1\n"
	    "lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=0\tlen=10\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=0\n"
	    "share\thost=2\toh=bb\tfh=77\taccess=1\tdeny=0\tepoch=1\t"
	    "reclaimable=0\n"
	    "nlmctl 1 end 3\n";
	static const char vis[] = "a\\0129\\040evil\\011\\033[0m";
	struct nc_run r;
	char row[512], *f[16];
	const char *p;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	for (p = r.out; *p != '\0'; p++)
		if ((*p < 0x20 || *p > 0x7e) && *p != '\n')
			break;
	CU_ASSERT_EQUAL(*p, '\0');
	CU_ASSERT_FATAL(nc_line(r.out, "1 ", row, sizeof(row)));
	CU_ASSERT_FATAL(nc_fields(row, f, 16) >= 3);
	CU_ASSERT_STRING_EQUAL(f[1], vis);
	CU_ASSERT_STRING_EQUAL(f[2], "10.0.0.1");
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	CU_ASSERT_EQUAL_FATAL(nc_fields(row, f, 16), 10);
	CU_ASSERT_STRING_EQUAL(f[1], vis);
	CU_ASSERT_STRING_EQUAL(f[4], "66");
	/* A host no host line named (created while the dump ran): "?". */
	CU_ASSERT_FATAL(nc_line(r.out, "share ", row, sizeof(row)));
	CU_ASSERT_EQUAL_FATAL(nc_fields(row, f, 16), 10);
	CU_ASSERT_STRING_EQUAL(f[1], "?");
	CU_ASSERT_STRING_EQUAL(f[4], "77");
}

/*
 * The server, grace and totals lines: commits stalled for a second or
 * more are reported (not under a second), so are requests not read,
 * grace in progress shows the
 * seconds left (rounded up) and what is to reclaim, an ended grace how
 * and what it dropped, no grace says so; no callback waiting is "none".
 * (Found by mutation: the grace test inverted, the stall reported only
 * past 1,000 ms, or "none" dropped, passed every unit test.)
 */
static void
test_server_grace_lines(void)
{
	static const char *const argv[] = { "status", NULL };
	static const char a1[] = "nlmctl 1 ok\n"
	    "server\tversion=1.0\tpid=42\tepoch=3\tnsm-state=5\tuptime=61\t"
	    "durability=sync\tcommit-stall-ms=1000\tinput-paused-ms=0\n"
	    "grace\tactive=1\tremaining-ms=2001\thosts=1\tlocks=2\t"
	    "shares=3\thow=in%20progress\tended-after-ms=0\tdropped=0\n"
	    "totals\thosts=1\tfiles=1\tlocks=2\tshares=3\twaiters=0\t"
	    "callbacks=0\tcallbacks-waiting=0\tnotifications=0\ttokens=9\n"
	    "nlmctl 1 end 3\n";
	static const char a2[] = "nlmctl 1 ok\n"
	    "server\tversion=1.0\tpid=42\tepoch=3\tnsm-state=5\tuptime=61\t"
	    "durability=sync\tcommit-stall-ms=999\tinput-paused-ms=5\n"
	    "grace\tactive=0\tremaining-ms=0\thosts=0\tlocks=0\tshares=0\t"
	    "how=deadline\tended-after-ms=5000\tdropped=2\n"
	    "totals\thosts=1\tfiles=1\tlocks=2\tshares=3\twaiters=0\t"
	    "callbacks=3\tcallbacks-waiting=1\tnotifications=0\ttokens=9\n"
	    "nlmctl 1 end 3\n";
	static const char a3[] = "nlmctl 1 ok\n"
	    "grace\tactive=0\tremaining-ms=0\thosts=0\tlocks=0\tshares=0\t"
	    "how=no%20grace\tended-after-ms=0\tdropped=0\n"
	    "nlmctl 1 end 1\n";
	struct nc_run r;
	char row[512];

	if (!nc_run_str(argv, a1, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT(nc_line(r.out, "nlmd 1.0, pid 42: epoch 3, NSM state 5, "
	    "up 1m1s, durability sync", row, sizeof(row)));
	CU_ASSERT(nc_line(r.out, "store: no commit has completed for 1 s",
	    row, sizeof(row)));
	CU_ASSERT(!nc_line(r.out, "requests:", row, sizeof(row)));
	CU_ASSERT_FATAL(nc_line(r.out, "grace:", row, sizeof(row)));
	CU_ASSERT_STRING_EQUAL(row, "grace: 3 s left; 1 host(s), 2 lock(s), "
	    "3 share(s) to reclaim");
	CU_ASSERT_FATAL(nc_line(r.out, "totals:", row, sizeof(row)));
	CU_ASSERT_PTR_NOT_NULL(strstr(row, " 0 callback(s) (none waiting "));

	if (!nc_run_str(argv, a2, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT(!nc_line(r.out, "store:", row, sizeof(row)));
	CU_ASSERT(nc_line(r.out, "requests: not read for 5 ms: ", row,
	    sizeof(row)));
	CU_ASSERT_FATAL(nc_line(r.out, "grace:", row, sizeof(row)));
	CU_ASSERT_STRING_EQUAL(row, "grace: over (deadline) after 5000 ms; "
	    "2 record(s) not reclaimed, dropped");
	CU_ASSERT_FATAL(nc_line(r.out, "totals:", row, sizeof(row)));
	CU_ASSERT_PTR_NOT_NULL(strstr(row, " 3 callback(s) (1 waiting "));

	if (!nc_run_str(argv, a3, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "grace:", row, sizeof(row)));
	CU_ASSERT_STRING_EQUAL(row, "grace: none (no grace)");
}

/*
 * A lock and a share still to be reclaimed say so in NOTE.  (Found by
 * mutation: the note of locks never written passed every unit test.)
 */
static void
test_reclaim_note(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	static const char answer[] = NC_HEAD
	    "lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=0\tlen=10\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=1\n"
	    "share\thost=1\toh=bb\tfh=66\taccess=1\tdeny=0\tepoch=1\t"
	    "reclaimable=1\n"
	    "nlmctl 1 end 3\n";
	struct nc_run r;
	char row[512], *f[16];

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	CU_ASSERT_EQUAL_FATAL(nc_fields(row, f, 16), 12);
	CU_ASSERT_STRING_EQUAL(f[10], "to");
	CU_ASSERT_STRING_EQUAL(f[11], "reclaim");
	CU_ASSERT_FATAL(nc_line(r.out, "share ", row, sizeof(row)));
	CU_ASSERT_EQUAL_FATAL(nc_fields(row, f, 16), 12);
	CU_ASSERT_STRING_EQUAL(f[11], "reclaim");
}

/*
 * --json: handles stay strings even when they are all digits, numbers
 * are integers (negative ones too), a key's '-' is '_', and a start
 * above INT64_MAX (which jansson cannot hold) is a string of its
 * digits, not a clamped number.  A name with a UTF-16 surrogate or an
 * overlong form (neither is UTF-8, JSON cannot carry them) is there,
 * the bytes written \ooo; it went missing, key and all, when
 * json_string() refused it.  (Found by mutation: handles typed as
 * numbers, a negative svid made a string, '-' kept in keys, the range
 * check of the integers dropped, or a surrogate or overlong form taken
 * for UTF-8, passed every unit test.)
 */
static void
test_json_types(void)
{
	static const char *const argv[] = { "--json", "status", "--locks",
	    NULL };
	static const char answer[] = "nlmctl 1 ok\n"
	    "host\tid=1\tname=%ED%A0%80x\taddr=10.0.0.1\n"
	    "host\tid=2\tname=%C0%80y\taddr=10.0.0.2\tnsm-state=3\n"
	    "lock\thost=1\tsvid=-2\toh=1234\tfh=5678\t"
	    "start=18446744073709551615\tlen=9223372036854775807\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=0\n"
	    "nlmctl 1 end 3\n";
	struct nc_run r;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"oh\": \"1234\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"fh\": \"5678\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out,
	    "\"start\": \"18446744073709551615\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out,
	    "\"len\": 9223372036854775807"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"svid\": -2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"nsm_state\": 3"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out,
	    "\"name\": \"\\\\355\\\\240\\\\200x\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"name\": \"\\\\300\\\\200y\""));
}

/*
 * grace end and metrics: their requests, and what they print.  (Found
 * by mutation: the dropped locks and shares swapped passed every unit
 * test.)
 */
static void
test_grace_end_metrics(void)
{
	static const char *const gargv[] = { "grace", "end", NULL };
	static const char *const margv[] = { "metrics", NULL };
	struct nc_run r;

	if (!nc_run_str(gargv, "nlmctl 1 ok\n"
	    "grace\thow=ended%20by%20the%20operator\tdropped-locks=2\t"
	    "dropped-shares=1\n"
	    "nlmctl 1 end 1\n", &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 grace-end\n");
	CU_ASSERT_STRING_EQUAL(r.out, "grace ended by the operator: 2 lock(s) "
	    "and 1 share(s) not reclaimed, dropped\n");
	if (!nc_run_str(margv, "nlmctl 1 ok\n"
	    "# TYPE nlmd_epoch gauge\n"
	    "nlmd_epoch 3\n"
	    "nlmctl 1 end 2\n", &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 metrics\n");
	CU_ASSERT_STRING_EQUAL(r.out,
	    "# TYPE nlmd_epoch gauge\nnlmd_epoch 3\n");
}

/*
 * Output that stdout did not take (a full disk) exits 1, whatever the
 * command: a script must not keep a part as the whole.  (Found by
 * mutation: status not checking its output passed every unit test.)
 */
static void
test_output_full(void)
{
	static const char *const argv[][5] = {
		{ "status", NULL },
		{ "--json", "status", NULL },
		{ "release", "--fh", "66", NULL },
		{ "grace", "end", NULL },
		{ "metrics", NULL },
	};
	static const char answer[] = "nlmctl 1 ok\n"
	    "grace\tdropped-locks=2\tdropped-shares=1\n"
	    "nlmctl 1 end 1\n";
	struct nc_run r;
	size_t i;

	if ((nc_stdout = open("/dev/full", O_WRONLY | O_CLOEXEC)) == -1) {
		tests_skip("no /dev/full");
		return;
	}
	for (i = 0; i < sizeof(argv) / sizeof(argv[0]); i++) {
		if (!nc_run_str(argv[i], i == 2 ? NC_RELEASED : answer, &r))
			break;
		CU_ASSERT_EQUAL(r.status, 1);
	}
	close(nc_stdout);
	nc_stdout = -1;
}

/*
 * A body line cut short (no newline: the connection closed in it) is not
 * shown: exit 1, and no row made of what came of it (a handle cut to
 * another file's).  (Found by mutation: taking the line without its
 * newline still exited 1, but printed the cut record first.)
 */
static void
test_cut_line_not_shown(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	static const char answer[] = NC_HEAD
	    "lock\thost=1\tsvid=7\toh=aa\tstart=0\tlen=10\tmode=exclusive\t"
	    "token=4\tepoch=1\treclaimable=0\tfh=6677";
	struct nc_run r;
	char row[512];

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 1);
	CU_ASSERT(nc_line(r.out, "1 ", row, sizeof(row)));
	CU_ASSERT(!nc_line(r.out, "lock ", row, sizeof(row)));
}

/*
 * --json status: "locks", "shares" and "waiters" are there with --locks,
 * empty on an idle server, and not without it (nlmctl(8): "With --locks
 * three more arrays follow").  (Found by mutation: the arrays made
 * with or without --locks passed every unit test; only test_ctl.sh
 * looked.)
 */
static void
test_json_arrays(void)
{
	static const char *const argv[] = { "--json", "status", NULL };
	static const char *const largv[] = { "--json", "status", "--locks",
	    NULL };
	static const char answer[] = "nlmctl 1 ok\nnlmctl 1 end 0\n";
	struct nc_run r;

	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"hosts\": []"));
	CU_ASSERT_PTR_NULL(strstr(r.out, "\"locks\""));
	CU_ASSERT_PTR_NULL(strstr(r.out, "\"shares\""));
	CU_ASSERT_PTR_NULL(strstr(r.out, "\"waiters\""));
	if (!nc_run_str(largv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"locks\": []"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"shares\": []"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"waiters\": []"));
}

/*
 * A host name longer than a row's buffer (names go to 1,024 bytes) is
 * written whole in its column, and the columns after it stay in place.
 * (Found by mutation: the name left out of the row when it was wider
 * than the buffer passed every unit test; only test_ctl.sh looked.)
 */
static void
test_long_name_row(void)
{
	static const char *const argv[] = { "status", "--locks", NULL };
	char answer[4096], name[1025], row[2048], *f[16];
	struct nc_run r;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(answer, sizeof(answer), "nlmctl 1 ok\n"
	    "host\tid=1\tname=%s\taddr=10.0.0.1\n"
	    "lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=3\tlen=10\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=0\n"
	    "nlmctl 1 end 2\n", name);
	if (!nc_run_str(argv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FATAL(nc_line(r.out, "lock ", row, sizeof(row)));
	CU_ASSERT_EQUAL_FATAL(nc_fields(row, f, 16), 10);
	CU_ASSERT_STRING_EQUAL(f[1], name);
	CU_ASSERT_STRING_EQUAL(f[4], "66");
	CU_ASSERT_STRING_EQUAL(f[5], "3");
	CU_ASSERT_STRING_EQUAL(f[9], "1");
}

/*
 * NLMCTL_SOCKET names the socket when -s does not; -s wins over it.
 * (Found by mutation: NLMCTL_SOCKET ignored passed every test: none set
 * it.)
 */
static void
test_socket_env(void)
{
	static const char *const argv[] = { "status", NULL };
	static const char answer[] = "nlmctl 1 ok\nnlmctl 1 end 0\n";
	struct nc_run r;
	bool ran;

	nc_sock_env = 1;
	ran = nc_run_str(argv, answer, &r);
	nc_sock_env = 0;
	if (!ran)
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 status\n");
	nc_sock_env = 2;
	ran = nc_run_str(argv, answer, &r);
	nc_sock_env = 0;
	if (!ran)
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.req, "nlmctl 1 status\n");
}

/*
 * What the other end sends goes to the operator's terminal only as
 * printable text: a first line that is neither "ok" nor an error of our
 * version is named as such, and control characters in it, or in an
 * error message, are written \ooo.  nlmd's own messages (printable,
 * spaces and all) are shown as they are.  (Before, the line went to
 * stderr as it came: an escape sequence reached the terminal.)
 */
static void
test_foreign_answer_shown(void)
{
	static const char *const argv[] = { "status", NULL };
	static const struct {
		const char	*answer;
		const char	*err;
	} c[] = {
		{ "nlmctl 1 error no host named a b\n",
		    "nlmctl: nlmd: no host named a b\n" },
		{ "nlmctl 1 error bad\033[2Jthing\n",
		    "nlmctl: nlmd: bad\\033[2Jthing\n" },
		{ "nlmctl 2 ok\nnlmctl 2 end 0\n",
		    "nlmctl: not an answer of nlmd's protocol 1: nlmctl 2 ok\n" },
		{ "\033]0;owned\007hello\n",
		    "nlmctl: not an answer of nlmd's protocol 1: "
		    "\\033]0;owned\\007hello\n" },
		{ "HTTP/1.1 400 Bad Request\r\n",
		    "nlmctl: not an answer of nlmd's protocol 1: "
		    "HTTP/1.1\\040400\\040Bad\\040Request\\015\n" },
	};
	char longline[600];
	struct nc_run r;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (!nc_run_str(argv, c[i].answer, &r))
			return;
		CU_ASSERT_EQUAL(r.status, 1);
		CU_ASSERT_STRING_EQUAL(r.err, c[i].err);
		CU_ASSERT_STRING_EQUAL(r.out, "");
	}
	/* Another program's long line: its first 200 bytes. */
	memset(longline, 'x', sizeof(longline) - 2);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	if (!nc_run_str(argv, longline, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 1);
	CU_ASSERT_EQUAL(strlen(r.err), strlen("nlmctl: not an answer of "
	    "nlmd's protocol 1: \n") + 200);
}

/*
 * A body line that cannot be read (a field without '=', a bad percent
 * escape) fails the answer, exit 1 with a message, as a cut one does:
 * left out quietly, a listing lacked a lock and a release reported fewer
 * records than it released, and nlmctl exited 0.  A line of a kind
 * nlmctl does not know is no such line: ignored (ctl.h).
 */
static void
test_malformed_line_fails(void)
{
	static const char *const sargv[] = { "status", "--locks", NULL };
	static const char *const jargv[] = { "--json", "status", "--locks",
	    NULL };
	static const char *const rargv[] = { "release", "--fh", "66", NULL };
	static const char *const bad[] = {
	    "lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=0\tlen=10\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=0\tnote%zz\n",
	    "lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=0\tlen=10\t"
	    "mode=exclusive\ttoken=4\tepoch=1\treclaimable=%4\n",
	};
	char answer[2048], row[512];
	struct nc_run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(answer, sizeof(answer), "%s%snlmctl 1 end 2\n",
		    NC_HEAD, bad[i]);
		if (!nc_run_str(sargv, answer, &r))
			return;
		CU_ASSERT_EQUAL(r.status, 1);
		CU_ASSERT_STRING_EQUAL(r.err, "nlmctl: 1 of the answer's 2 "
		    "lines could not be read\n");
		CU_ASSERT(!nc_line(r.out, "lock ", row, sizeof(row)));
		if (!nc_run_str(jargv, answer, &r))
			return;
		CU_ASSERT_EQUAL(r.status, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "could not be read"));
	}
	/* A release: three records released, one of them unreadable. */
	if (!nc_run_str(rargv, "nlmctl 1 ok\n"
	    "released\tkind=lock\thost=1\tsvid=7\toh=aa\tfh=66\tstart=0\t"
	    "len=10\treclaimable=0\n"
	    "released\tkind=share\thost=1\toh=bb\tfh=66\treclaimable=1\n"
	    "released\tkind=lock\thost=1\tsvid=8\toh=cc\tfh=66\tstart=5\t"
	    "len=0\treclaimable=1\tx\n"
	    "nlmctl 1 end 3\n", &r))
		return;
	CU_ASSERT_EQUAL(r.status, 1);
	CU_ASSERT_STRING_EQUAL(r.err, "nlmctl: 1 of the answer's 3 lines "
	    "could not be read\n");
	/* The same with a kind nlmctl does not know: read, and ignored. */
	snprintf(answer, sizeof(answer), "%s%snlmctl 1 end 2\n", NC_HEAD,
	    "future\tkey=1\n");
	if (!nc_run_str(sargv, answer, &r))
		return;
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.err, "");
	CU_ASSERT(nc_line(r.out, "1 ", row, sizeof(row)));
}

int
ctl_register_nlmctl(void)
{
	CU_pSuite s = CU_add_suite("nlmctl", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "an empty owner handle keeps its column",
	    test_empty_oh) == NULL ||
	    CU_add_test(s, "owner and file handles are shown whole",
	    test_handles_whole) == NULL ||
	    CU_add_test(s, "a cut answer exits 1", test_cut_answers) == NULL ||
	    CU_add_test(s, "a share's modes and a waiter's state",
	    test_share_waiter_rows) == NULL ||
	    CU_add_test(s, "--json: a host not named is null",
	    test_json_unknown_host) == NULL ||
	    CU_add_test(s, "--json: distinct names stay distinct",
	    test_json_names_distinct) == NULL ||
	    CU_add_test(s, "release sends its selector and --dry-run",
	    test_release_request) == NULL ||
	    CU_add_test(s, "usage errors exit 2", test_usage_errors) == NULL ||
	    CU_add_test(s, "status sends --locks, --host and --fh",
	    test_status_request) == NULL ||
	    CU_add_test(s, "a host row's columns", test_host_rows) == NULL ||
	    CU_add_test(s, "names are escaped in every row",
	    test_names_escaped) == NULL ||
	    CU_add_test(s, "the server, grace and totals lines",
	    test_server_grace_lines) == NULL ||
	    CU_add_test(s, "records to reclaim say so", test_reclaim_note) ==
	    NULL ||
	    CU_add_test(s, "--json: handles, numbers and odd names",
	    test_json_types) == NULL ||
	    CU_add_test(s, "grace end and metrics", test_grace_end_metrics) ==
	    NULL ||
	    CU_add_test(s, "output not written exits 1", test_output_full) ==
	    NULL ||
	    CU_add_test(s, "a cut body line is not shown",
	    test_cut_line_not_shown) == NULL ||
	    CU_add_test(s, "--json: the record arrays with --locks only",
	    test_json_arrays) == NULL ||
	    CU_add_test(s, "a name wider than a row's buffer",
	    test_long_name_row) == NULL ||
	    CU_add_test(s, "NLMCTL_SOCKET, and -s over it",
	    test_socket_env) == NULL ||
	    CU_add_test(s, "an answer not of the protocol is shown escaped",
	    test_foreign_answer_shown) == NULL ||
	    CU_add_test(s, "a body line that cannot be read fails the answer",
	    test_malformed_line_fails) == NULL)
		return -1;
	return 0;
}
