/*
 * test_ctl.c - the control protocol's codec (ctl/ctl.c): request
 * parsing, percent-encoding both ways, hex, names as table fields.
 */
#include "tests/runner.h"

#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "ctl.h"

static void
test_parse(void)
{
	struct ctl_req rq;
	char err[128], line[256];

	snprintf(line, sizeof(line), "nlmctl 1 status locks=1 host=a%%20b");
	CU_ASSERT_EQUAL(ctl_req_parse(line, &rq, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(rq.cr_cmd, "status");
	CU_ASSERT_EQUAL(rq.cr_nargs, 2);
	CU_ASSERT_STRING_EQUAL(ctl_req_get(&rq, "locks"), "1");
	CU_ASSERT_STRING_EQUAL(ctl_req_get(&rq, "host"), "a b");
	CU_ASSERT_PTR_NULL(ctl_req_get(&rq, "fh"));

	snprintf(line, sizeof(line), "nlmctl 1 grace-end");
	CU_ASSERT_EQUAL(ctl_req_parse(line, &rq, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(rq.cr_cmd, "grace-end");
	CU_ASSERT_EQUAL(rq.cr_nargs, 0);
}

static void
test_parse_bad(void)
{
	static const char *const bad[] = {
		"", "hello", "nlmctl", "nlmctl 1", "nlmctl 2 status",
		"nlmctl 1 Status", "nlmctl 1 status x", "nlmctl 1 status =1",
		"nlmctl 1 status a=%zz", "nlmctl 1 status a=%4",
		"nlmctl 1 st4tus",
		/* A NUL would cut the value: not host "a", nor "" */
		"nlmctl 1 release host=a%00b", "nlmctl 1 release host=%00",
		"nlmctl 1 s a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10 k=11 l=12 "
		"m=13 n=14 o=15 p=16 q=17",
		/* Which would count? */
		"nlmctl 1 release dry-run=0 host=a dry-run=1",
		"nlmctl 1 status host=a host=b",
	};
	struct ctl_req rq;
	char err[128], line[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "%s", bad[i]);
		err[0] = '\0';
		CU_ASSERT_EQUAL(ctl_req_parse(line, &rq, err, sizeof(err)), -1);
		CU_ASSERT(err[0] != '\0');
	}
}

/*
 * The errors say which: too many arguments (16 distinct keys are fine,
 * a 17th is not), a key given twice.
 */
static void
test_parse_why(void)
{
	struct ctl_req rq;
	char err[128], line[512];

	snprintf(line, sizeof(line), "nlmctl 1 s a=1 b=2 c=3 d=4 e=5 f=6 "
	    "g=7 h=8 i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16");
	CU_ASSERT_EQUAL(ctl_req_parse(line, &rq, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(rq.cr_nargs, 16);
	snprintf(line, sizeof(line), "nlmctl 1 s a=1 b=2 c=3 d=4 e=5 f=6 "
	    "g=7 h=8 i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16 q=17");
	CU_ASSERT_EQUAL(ctl_req_parse(line, &rq, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, "too many arguments");
	snprintf(line, sizeof(line), "nlmctl 1 release dry-run=0 host=a "
	    "dry-run=1");
	CU_ASSERT_EQUAL(ctl_req_parse(line, &rq, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, "argument dry-run given twice");
}

/*
 * A command's own check: only its keys, its flags 0 or 1; none at all
 * with NULL.  (A typo, "dryrun=1", or "dry-run=yes" was taken as a real
 * release.)
 */
static void
test_req_check(void)
{
	static const char *const keys[] = { "host", "dry-run", NULL };
	static const char *const flags[] = { "dry-run", NULL };
	static const struct {
		const char	*line;
		const char	*err;	/* NULL: accepted */
	} t[] = {
		{ "nlmctl 1 release host=a", NULL },
		{ "nlmctl 1 release host=a dry-run=1", NULL },
		{ "nlmctl 1 release dry-run=0 host=a", NULL },
		{ "nlmctl 1 release", NULL },
		{ "nlmctl 1 release host=a dryrun=1",
		    "release: unknown argument dryrun" },
		{ "nlmctl 1 release host=a dry-run=yes",
		    "release: dry-run: 0 or 1" },
		{ "nlmctl 1 release host=a dry-run=",
		    "release: dry-run: 0 or 1" },
	};
	struct ctl_req rq;
	char err[128], line[256];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(line, sizeof(line), "%s", t[i].line);
		CU_ASSERT_EQUAL_FATAL(ctl_req_parse(line, &rq, err,
		    sizeof(err)), 0);
		err[0] = '\0';
		if (t[i].err == NULL) {
			CU_ASSERT_EQUAL(ctl_req_check(&rq, keys, flags, err,
			    sizeof(err)), 0);
		} else {
			CU_ASSERT_EQUAL(ctl_req_check(&rq, keys, flags, err,
			    sizeof(err)), -1);
			CU_ASSERT_STRING_EQUAL(err, t[i].err);
		}
	}
	snprintf(line, sizeof(line), "nlmctl 1 grace-end now=1");
	CU_ASSERT_EQUAL_FATAL(ctl_req_parse(line, &rq, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ctl_req_check(&rq, NULL, NULL, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, "grace-end: unknown argument now");
	snprintf(line, sizeof(line), "nlmctl 1 grace-end");
	CU_ASSERT_EQUAL_FATAL(ctl_req_parse(line, &rq, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ctl_req_check(&rq, NULL, NULL, err, sizeof(err)), 0);
}

static void
test_encode(void)
{
	char enc[64], all[256];
	size_t n, i;

	n = ctl_enc("a b\t=%\n", 7, enc, sizeof(enc));
	CU_ASSERT_EQUAL(n, strlen("a%20b%09%3D%25%0A"));
	CU_ASSERT_STRING_EQUAL(enc, "a%20b%09%3D%25%0A");
	CU_ASSERT_EQUAL(ctl_dec(enc), 7);
	CU_ASSERT_EQUAL(memcmp(enc, "a b\t=%\n", 7), 0);
	/* Every byte survives the round trip. */
	for (i = 0; i < 255; i++)
		all[i] = (char)(i + 1);
	{
		char big[1024];

		n = ctl_enc(all, 255, big, sizeof(big));
		CU_ASSERT(n != (size_t)-1);
		CU_ASSERT(strchr(big, '\t') == NULL && strchr(big, ' ') ==
		    NULL && strchr(big, '=') == NULL);
		CU_ASSERT_EQUAL(ctl_dec(big), 255);
		CU_ASSERT_EQUAL(memcmp(big, all, 255), 0);
	}
	/* Too small a buffer: refused, not cut. */
	CU_ASSERT_EQUAL(ctl_enc("abc", 3, enc, 3), (size_t)-1);
	CU_ASSERT_EQUAL(ctl_enc(" ", 1, enc, 3), (size_t)-1);
	snprintf(enc, sizeof(enc), "%%g0");
	CU_ASSERT_EQUAL(ctl_dec(enc), (size_t)-1);
}

static void
test_hex(void)
{
	uint8_t b[4];
	char h[16];

	ctl_hex("\x00\xab\xff", 3, h, sizeof(h));
	CU_ASSERT_STRING_EQUAL(h, "00abff");
	CU_ASSERT_EQUAL(ctl_unhex("00ABff", b, sizeof(b)), 3);
	CU_ASSERT(b[0] == 0 && b[1] == 0xab && b[2] == 0xff);
	CU_ASSERT_EQUAL(ctl_unhex("abc", b, sizeof(b)), -1);
	CU_ASSERT_EQUAL(ctl_unhex("zz", b, sizeof(b)), -1);
	CU_ASSERT_EQUAL(ctl_unhex("0011223344", b, sizeof(b)), -1);
	/* Output cut at the buffer, always terminated. */
	ctl_hex("\x01\x02\x03\x04", 4, h, 5);
	CU_ASSERT_STRING_EQUAL(h, "0102");
}

/*
 * A host name as a field of nlmctl's tables: one field, whatever the
 * client chose (a space or a newline in a name moved every column after
 * it, or began a row of its own), never a placeholder, never the same
 * field for two names.
 */
static void
test_vis(void)
{
	static const struct {
		const char	*in;
		const char	*out;
	} v[] = {
		{ "client1.example", "client1.example" },
		{ "a b", "a\\040b" },
		{ "x\n1 evil 10.0.0.9", "x\\0121\\040evil\\04010.0.0.9" },
		{ "\t\033[31m", "\\011\\033[31m" },
		{ "back\\slash", "back\\134slash" },
		{ "\\040", "\\134040" },
		{ "\xff\x80", "\\377\\200" },
		{ "", "-" },
		{ "-", "\\055" },
		{ "?", "\\077" },
		{ "--", "--" },
		{ "-?", "-?" },
	};
	char out[64], all[256], big[CTL_VIS_MAX(255)];
	size_t i, n;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		n = ctl_vis(v[i].in, out, sizeof(out));
		CU_ASSERT_STRING_EQUAL(out, v[i].out);
		CU_ASSERT_EQUAL(n, strlen(v[i].out));
	}
	/* Every byte: printable, no space, no backslash but escapes. */
	for (i = 0; i < 255; i++)
		all[i] = (char)(i + 1);
	all[255] = '\0';
	n = ctl_vis(all, big, sizeof(big));
	CU_ASSERT(n != (size_t)-1 && n < sizeof(big));
	for (i = 0; i < n; i++)
		CU_ASSERT(big[i] > 0x20 && big[i] < 0x7f);
	/* Too small a buffer: refused, not cut. */
	CU_ASSERT_EQUAL(ctl_vis("abc", out, 3), (size_t)-1);
	CU_ASSERT_EQUAL(ctl_vis(" ", out, 4), (size_t)-1);
	CU_ASSERT_EQUAL(ctl_vis("", out, 1), (size_t)-1);
	CU_ASSERT_EQUAL(ctl_vis(" ", out, CTL_VIS_MAX(1)), 4);
}

int	ctl_register_srv(void);
int	ctl_register_nlmctl(void);
int	ctl_register_httpmetrics(void);

int
tests_register(void)
{
	CU_pSuite s = CU_add_suite("control protocol codec", NULL, NULL);

	if (s == NULL ||
	    CU_add_test(s, "requests", test_parse) == NULL ||
	    CU_add_test(s, "refusals say why", test_parse_why) == NULL ||
	    CU_add_test(s, "a command's arguments checked", test_req_check) ==
	    NULL ||
	    CU_add_test(s, "bad requests are refused", test_parse_bad) ==
	    NULL ||
	    CU_add_test(s, "percent-encoding", test_encode) == NULL ||
	    CU_add_test(s, "hex", test_hex) == NULL ||
	    CU_add_test(s, "host names as table fields", test_vis) == NULL ||
	    ctl_register_srv() != 0 || ctl_register_nlmctl() != 0 ||
	    ctl_register_httpmetrics() != 0)
		return -1;
	return 0;
}
