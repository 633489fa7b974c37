/*
 * test_nlmctl.c - the nlmctl program (cmd/nlmctl.c) against a scripted
 * server: a Unix socket in a temporary directory that reads the request
 * and answers with the bytes a test gives, as nlmd would.  nlmctl is the
 * one built beside this binary (build/<kind>/nlmctl).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	int	status;		/* its exit status; -1: killed */
};

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
 * that answers `answer' (alen bytes) and closes.  False when it could not
 * be run (the test is then skipped).
 */
static bool
nc_run(const char *const *argv, const char *answer, size_t alen,
    struct nc_run *r)
{
	char prog[PATH_MAX + 16], dir[] = "/tmp/nlmd-nlmctl-XXXXXX";
	const char *args[32];
	struct sockaddr_un sun;
	int lfd, cfd, out[2], st;
	size_t n = 0, i, got;
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
	args[n++] = prog;
	args[n++] = "-s";
	args[n++] = sun.sun_path;
	for (i = 0; argv[i] != NULL && n < 31; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		(void)dup2(out[1], 1);
		(void)dup2(devnull, 2);
		execv(prog, (char *const *)(uintptr_t)args);
		_exit(127);
	}
	CU_ASSERT_FATAL(pid > 0);
	close(out[1]);
	/* The request: up to its newline (nlmctl shuts down after it). */
	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	CU_ASSERT_FATAL(cfd != -1);
	got = 0;
	while (got < sizeof(r->req) - 1 && (k = recv(cfd, r->req + got,
	    sizeof(r->req) - 1 - got, 0)) > 0)
		got += (size_t)k;
	r->req[got] = '\0';
	CU_ASSERT(send(cfd, answer, alen, MSG_NOSIGNAL) == (ssize_t)alen);
	close(cfd);
	close(lfd);
	got = 0;
	while (got < sizeof(r->out) - 1 && (k = read(out[0], r->out + got,
	    sizeof(r->out) - 1 - got)) > 0)
		got += (size_t)k;
	r->out[got] = '\0';
	close(out[0]);
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
	    test_json_names_distinct) == NULL)
		return -1;
	return 0;
}
