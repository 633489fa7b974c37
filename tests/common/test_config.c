/*
 * test_config.c - common/config.c: documented defaults, config_set for
 * every type with its bounds and errors, config_load from temporary files
 * (sections, comments, errors with file and line), the dump round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "config.h"
#include "ct.h"

static char tmpdir[64];
static int tmpseq;

static int
config_suite_init(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nlmd-ct.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
config_suite_clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write `text' to a new file under tmpdir; its path goes to path[len]. */
static void
write_file(char *path, size_t len, const char *text)
{
	FILE *f;

	snprintf(path, len, "%s/c%d.conf", tmpdir, ++tmpseq);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void
test_defaults(void)
{
	struct config c;

	memset(&c, 0xa5, sizeof(c));
	config_defaults(&c);
	CU_ASSERT_STRING_EQUAL(c.state_dir, "/var/lib/nlmd");
	CU_ASSERT_STRING_EQUAL(c.bind_addr, "");
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
	CU_ASSERT_EQUAL(c.nsm_port, 32765);
	CU_ASSERT_EQUAL(c.rpcbind, 1);
	CU_ASSERT_EQUAL(c.verbose, 0);
	CU_ASSERT_EQUAL(c.foreground, 0);
	CU_ASSERT_EQUAL(c.max_record, 65536);
	CU_ASSERT_EQUAL(c.max_backlog, 2097152);
	CU_ASSERT_EQUAL(c.max_connections, 4096);
	CU_ASSERT_EQUAL(c.conn_idle_sec, 600);
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_MSG);
	CU_ASSERT_EQUAL(c.cb_retry_min_ms, 1000);
	CU_ASSERT_EQUAL(c.cb_retry_max_ms, 60000);
	CU_ASSERT_EQUAL(c.cb_give_up_sec, 0);
	CU_ASSERT_EQUAL(c.cb_max_per_host, 1024);
	CU_ASSERT_EQUAL(c.max_locks_per_host, 1000000);
	CU_ASSERT_EQUAL(c.max_waiters_per_host, 100000);
	CU_ASSERT_EQUAL(c.max_waiters_per_owner, 4096);
	CU_ASSERT_EQUAL(c.max_locks, 10000000);
	CU_ASSERT_EQUAL(c.max_hosts, 100000);
	CU_ASSERT_STRING_EQUAL(c.notify_name, "");
	CU_ASSERT_EQUAL(c.notify_give_up_sec, 86400);
	CU_ASSERT_EQUAL(c.host_idle_sec, 600);
	CU_ASSERT_STRING_EQUAL(c.user, "");
}

static void
dump_append(const char *line, void *arg)
{
	char *buf = arg;
	size_t n = strlen(buf);

	snprintf(buf + n, 4096 - n, "%s\n", line);
}

/*
 * Every key's default, as nlmd.conf(5) and the packaged nlmd.conf give
 * it: test_defaults() named some fields only, so a default changed in
 * config_defaults() (max-name-length = 256, checkpoint-interval,
 * store-cache-mib ...) failed no test.  A key added makes this fail
 * until its default is written here (and in the manual).
 */
static void
test_defaults_all(void)
{
	static const char want[] =
	    "[nlmd]\n"
	    "state-directory = /var/lib/nlmd  # default\n"
	    "bind-address = \"\"  # default\n"
	    "nlm-port = 4045  # default\n"
	    "nsm-port = 32765  # default\n"
	    "rpcbind = yes  # default\n"
	    "verbose = 0  # default\n"
	    "max-record-size = 65536  # default\n"
	    "max-commit-backlog = 2097152  # default\n"
	    "max-connections = 4096  # default\n"
	    "max-connections-per-address = 64  # default\n"
	    "connection-idle-timeout = 600  # default\n"
	    "callbacks = msg  # default\n"
	    "callback-retry-min-ms = 1000  # default\n"
	    "callback-retry-max-ms = 60000  # default\n"
	    "callback-give-up = 0  # default\n"
	    "callback-max-per-host = 1024  # default\n"
	    "max-locks-per-host = 1000000  # default\n"
	    "max-waiters-per-host = 100000  # default\n"
	    "max-waiters-per-owner = 4096  # default\n"
	    "max-locks = 10000000  # default\n"
	    "max-waiters = 1000000  # default\n"
	    "max-shares = 1000000  # default\n"
	    "max-shares-per-host = 100000  # default\n"
	    "max-hosts-per-address = 256  # default\n"
	    "max-hosts = 100000  # default\n"
	    "max-name-length = 255  # default\n"
	    "max-fh-length = 1024  # default\n"
	    "max-oh-length = 1024  # default\n"
	    "durability = sync  # default\n"
	    "grace-period = 90  # default\n"
	    "reclaim-check = conflict  # default\n"
	    "checkpoint-interval = 30  # default\n"
	    "store-cache-mib = 16  # default\n"
	    "notify-name = \"\"  # default\n"
	    "notify-give-up = 86400  # default\n"
	    "host-idle = 600  # default\n"
	    "control-socket = /run/nlmd/nlmd.sock  # default\n"
	    "control-group = \"\"  # default\n"
	    "metrics-address = \"\"  # default\n"
	    "user = \"\"  # default\n";
	struct config c;
	char buf[4096] = "";

	memset(&c, 0xa5, sizeof(c));
	config_defaults(&c);
	CU_ASSERT_EQUAL(c.foreground, 0);
	config_dump(&c, dump_append, buf);
	CU_ASSERT_STRING_EQUAL(buf, want);
}

/* config_set must succeed and change `c'. */
static int
set_ok(struct config *c, const char *k, const char *v)
{
	char err[256] = "";

	if (config_set(c, k, v, err, sizeof(err)) != 0) {
		fprintf(stderr, "\nconfig_set(%s, %s): %s\n", k, v, err);
		return 0;
	}
	return 1;
}

/*
 * config_set must fail, leave `c' unchanged and say why: the message
 * contains `want'.
 */
static int
set_fails(const char *k, const char *v, const char *want)
{
	struct config c, before;
	char err[256] = "";

	config_defaults(&c);
	before = c;
	if (config_set(&c, k, v, err, sizeof(err)) == CM_OK)
		return 0;
	if (memcmp(&c, &before, sizeof(c)) != 0)
		return 0;
	if (strstr(err, want) == NULL) {
		fprintf(stderr, "\nconfig_set(%s, %s): '%s' lacks '%s'\n", k,
		    v, err, want);
		return 0;
	}
	return 1;
}

static void
test_set_types(void)
{
	struct config c;

	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "state-directory", "/srv/nlmd"));
	CU_ASSERT_STRING_EQUAL(c.state_dir, "/srv/nlmd");
	CU_ASSERT(set_ok(&c, "bind-address", "::1"));
	CU_ASSERT_STRING_EQUAL(c.bind_addr, "::1");
	CU_ASSERT(set_ok(&c, "bind-address", ""));
	CU_ASSERT_STRING_EQUAL(c.bind_addr, "");
	CU_ASSERT(set_ok(&c, "nlm-port", "40045"));
	CU_ASSERT_EQUAL(c.nlm_port, 40045);
	CU_ASSERT(set_ok(&c, "max-record-size", "4096"));
	CU_ASSERT_EQUAL(c.max_record, 4096);
	CU_ASSERT(set_ok(&c, "callback-give-up", "0"));
	CU_ASSERT_EQUAL(c.cb_give_up_sec, 0);
	CU_ASSERT(set_ok(&c, "max-locks", "1000000000"));
	CU_ASSERT_EQUAL(c.max_locks, 1000000000);
}

static void
test_set_bool(void)
{
	static const char *const yes[] = { "1", "yes", "YES", "y", "true",
	    "True", "on", "ON" };
	static const char *const no[] = { "0", "no", "No", "n", "false",
	    "FALSE", "off", "Off" };
	struct config c;
	size_t i;

	config_defaults(&c);
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		c.rpcbind = 0;
		CU_ASSERT(set_ok(&c, "rpcbind", yes[i]));
		CU_ASSERT_EQUAL(c.rpcbind, 1);
		CU_ASSERT(set_ok(&c, "rpcbind", no[i]));
		CU_ASSERT_EQUAL(c.rpcbind, 0);
	}
	CU_ASSERT(set_fails("rpcbind", "perhaps", "rpcbind"));
	CU_ASSERT(set_fails("rpcbind", "", "rpcbind"));
	CU_ASSERT(set_fails("rpcbind", "2", "rpcbind"));
	CU_ASSERT(set_fails("rpcbind", "yes ", "rpcbind"));
}

static void
test_set_callbacks(void)
{
	struct config c;

	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "callbacks", "sync"));
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_SYNC);
	CU_ASSERT(set_ok(&c, "callbacks", "BOTH"));
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_BOTH);
	CU_ASSERT(set_ok(&c, "callbacks", "off"));
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_OFF);
	CU_ASSERT(set_ok(&c, "callbacks", "msg"));
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_MSG);
	CU_ASSERT(set_fails("callbacks", "async", "msg, sync, both, off"));
	CU_ASSERT(set_fails("callbacks", "", "callbacks"));
}

static void
test_set_persistence(void)
{
	struct config c;

	config_defaults(&c);
	CU_ASSERT_EQUAL(c.durability, CONFIG_DURABILITY_SYNC);
	CU_ASSERT_EQUAL(c.grace_sec, 90);
	CU_ASSERT_EQUAL(c.reclaim_check, CONFIG_RECLAIM_CONFLICT);
	CU_ASSERT(set_ok(&c, "durability", "log"));
	CU_ASSERT_EQUAL(c.durability, CONFIG_DURABILITY_LOG);
	CU_ASSERT(set_ok(&c, "durability", "NONE"));
	CU_ASSERT_EQUAL(c.durability, CONFIG_DURABILITY_NONE);
	CU_ASSERT(set_ok(&c, "durability", "sync"));
	CU_ASSERT_EQUAL(c.durability, CONFIG_DURABILITY_SYNC);
	CU_ASSERT(set_fails("durability", "fsync", "sync, log, none"));
	CU_ASSERT(set_ok(&c, "reclaim-check", "strict"));
	CU_ASSERT_EQUAL(c.reclaim_check, CONFIG_RECLAIM_STRICT);
	CU_ASSERT(set_ok(&c, "reclaim-check", "off"));
	CU_ASSERT_EQUAL(c.reclaim_check, CONFIG_RECLAIM_OFF);
	CU_ASSERT(set_ok(&c, "reclaim-check", "conflict"));
	CU_ASSERT_EQUAL(c.reclaim_check, CONFIG_RECLAIM_CONFLICT);
	CU_ASSERT(set_fails("reclaim-check", "lax", "conflict, strict, off"));
	CU_ASSERT(set_ok(&c, "grace-period", "0"));
	CU_ASSERT_EQUAL(c.grace_sec, 0);
}

static void
test_set_errors(void)
{
	char err[256];
	struct config c;

	CU_ASSERT(set_fails("no-such-key", "1", "no-such-key"));
	CU_ASSERT(set_fails("", "1", "unknown setting"));
	/* Keys are exact: no case folding, no underscores. */
	CU_ASSERT(set_fails("NLM-PORT", "1", "NLM-PORT"));
	CU_ASSERT(set_fails("nlm_port", "1", "nlm_port"));
	/* Not numbers. */
	CU_ASSERT(set_fails("nlm-port", "", "not a number"));
	CU_ASSERT(set_fails("nlm-port", "12x", "not a number"));
	CU_ASSERT(set_fails("nlm-port", "0x10", "not a number"));
	CU_ASSERT(set_fails("nlm-port", "-1", "not a number"));
	CU_ASSERT(set_fails("nlm-port", "4045 ", "not a number"));
	/* Signs and blanks strtoull() takes: " -1" wrapped around. */
	CU_ASSERT(set_fails("grace-period", " -1", "not a number"));
	CU_ASSERT(set_fails("grace-period", " -0", "not a number"));
	CU_ASSERT(set_fails("nlm-port", "\t-18446744073709547521",
	    "not a number"));
	CU_ASSERT(set_fails("nlm-port", " 4045", "not a number"));
	CU_ASSERT(set_fails("nlm-port", "+4045", "not a number"));
	CU_ASSERT(set_fails("max-locks", "99999999999999999999999",
	    "not a number"));
	/* Strings that do not fit. */
	{
		char big[5000];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		CU_ASSERT(set_fails("state-directory", big, "too long"));
		big[300] = '\0';
		CU_ASSERT(set_fails("bind-address", big, "too long"));
	}
	/* A tiny error buffer truncates, never overflows. */
	config_defaults(&c);
	memset(err, 'Z', sizeof(err));
	CU_ASSERT(config_set(&c, "no-such-key", "1", err, 4) == CM_NOTFOUND);
	CU_ASSERT_EQUAL(err[3], '\0');
	CU_ASSERT_EQUAL(err[4], 'Z');
}

/* Every bounded key: the bounds are accepted, one beyond is refused. */
static void
test_set_bounds(void)
{
	static const struct {
		const char *key, *lo, *hi, *below, *above;
	} b[] = {
		{ "nlm-port", "0", "65535", NULL, "65536" },
		{ "nsm-port", "0", "65535", NULL, "65536" },
		{ "verbose", "0", "9", NULL, "10" },
		{ "max-record-size", "1024", "1048576", "1023", "1048577" },
		{ "max-commit-backlog", "65536", "1073741824", "65535",
		    "1073741825" },
		{ "max-connections", "1", "1000000", "0", "1000001" },
		{ "connection-idle-timeout", "1", "86400", "0", "86401" },
		{ "callback-retry-min-ms", "10", "3600000", "9", "3600001" },
		{ "callback-retry-max-ms", "10", "3600000", "9", "3600001" },
		{ "callback-give-up", "0", "2592000", NULL, "2592001" },
		{ "callback-max-per-host", "1", "1000000", "0", "1000001" },
		{ "max-locks-per-host", "1", "100000000", "0", "100000001" },
		{ "max-waiters-per-host", "1", "100000000", "0", "100000001" },
		{ "max-waiters-per-owner", "1", "100000000", "0", "100000001" },
		{ "max-locks", "1", "1000000000", "0", "1000000001" },
		{ "max-hosts", "1", "10000000", "0", "10000001" },
		{ "grace-period", "0", "86400", NULL, "86401" },
		{ "checkpoint-interval", "1", "86400", "0", "86401" },
		{ "store-cache-mib", "4", "65536", "3", "65537" },
		{ "max-connections-per-address", "1", "1000000", "0",
		    "1000001" },
		{ "max-waiters", "1", "100000000", "0", "100000001" },
		{ "max-shares", "1", "100000000", "0", "100000001" },
		{ "max-shares-per-host", "1", "100000000", "0", "100000001" },
		{ "max-hosts-per-address", "1", "10000000", "0", "10000001" },
		{ "max-name-length", "1", "1024", "0", "1025" },
		{ "max-fh-length", "1", "1024", "0", "1025" },
		{ "max-oh-length", "1", "1024", "0", "1025" },
		{ "notify-give-up", "1", "2592000", "0", "2592001" },
		{ "host-idle", "1", "2592000", "0", "2592001" },
	};
	const char *const *k;
	char err[256];
	struct config c;
	size_t i;

	/*
	 * Every number nlmd.conf(5) gives a range is in the table: ten of
	 * them were not, so a bound of theirs could move (max-name-length
	 * = 0 taken, every caller name then refused) with no test failing.
	 */
	for (k = config_keys(); *k != NULL; k++) {
		config_defaults(&c);
		if (config_set(&c, *k, "x", err, sizeof(err)) == CM_OK ||
		    strstr(err, "not a number") == NULL)
			continue;
		for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
			if (strcmp(b[i].key, *k) == 0)
				break;
		if (i == sizeof(b) / sizeof(b[0])) {
			fprintf(stderr, "\n%s: no bounds tested\n", *k);
			CU_FAIL("a number whose bounds are not tested");
		}
	}
	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		config_defaults(&c);
		CU_ASSERT(set_ok(&c, b[i].key, b[i].lo));
		CU_ASSERT(set_ok(&c, b[i].key, b[i].hi));
		if (b[i].below != NULL)
			CU_ASSERT(set_fails(b[i].key, b[i].below, "outside"));
		CU_ASSERT(set_fails(b[i].key, b[i].above, "outside"));
		/* Well past 32 bits must not wrap into range. */
		CU_ASSERT(set_fails(b[i].key, "4294967296", "outside"));
		CU_ASSERT(set_fails(b[i].key, "4294967297", "outside"));
	}
}

static void
test_load_file(void)
{
	struct config c;
	char path[256], err[512] = "", warn[1024] = "", want[1024];

	write_file(path, sizeof(path),
	    "# nfs.conf dialect\n"
	    "[general]\n"
	    "nlm-port = 1\n"
	    "pipefs-directory = /run/rpc_pipefs\n"
	    "\n"
	    "[nlmd]\n"
	    "; comment\n"
	    "nlm-port = 40045\n"
	    "nsm-port=40662\n"
	    "rpcbind\t=   no  \n"
	    "callbacks = both\n"
	    "state-directory = /srv/my nlmd\n"
	    "max-record-size = 4096\n"
	    "max-record-size = 8192\n"
	    "[lockd]\n"
	    "port = 4001\n");
	config_defaults(&c);
	CU_ASSERT_EQUAL_FATAL(config_load(&c, path, 0, warn, sizeof(warn),
	    err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 40045);
	CU_ASSERT_EQUAL(c.nsm_port, 40662);
	CU_ASSERT_EQUAL(c.rpcbind, 0);
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_BOTH);
	CU_ASSERT_STRING_EQUAL(c.state_dir, "/srv/my nlmd");
	/* The last of a repeated key wins. */
	CU_ASSERT_EQUAL(c.max_record, 8192);
	/* Untouched keys keep what they had. */
	CU_ASSERT_EQUAL(c.max_hosts, 100000);
	/*
	 * The other sections are not applied, and each is said once, at its
	 * first key (a misspelled [nlmd] left every setting at its default
	 * without a word).
	 */
	snprintf(want, sizeof(want), "%s:3: section [general] ignored: nlmd "
	    "reads only [nlmd] here (nlm-port not set)\n"
	    "%s:16: section [lockd] ignored: nlmd reads only [nlmd] here "
	    "(port not set)\n", path, path);
	CU_ASSERT_STRING_EQUAL(warn, want);
}

/*
 * A long section name is warned about once too, at its first key (with
 * 63 bytes kept of it, every key of a section of 64 or more repeated the
 * warning).
 */
static void
test_load_long_section(void)
{
	struct config c;
	char path[256], err[512] = "", warn[2048] = "", want[1024];
	char name[201], text[512];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text), "[%s]\na = 1\nb = 2\nc = 3\n"
	    "[nlmd]\nnlm-port = 40045\n", name);
	write_file(path, sizeof(path), text);
	config_defaults(&c);
	CU_ASSERT_EQUAL_FATAL(config_load(&c, path, 0, warn, sizeof(warn),
	    err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 40045);
	snprintf(want, sizeof(want), "%s:2: section [%s] ignored: nlmd "
	    "reads only [nlmd] here (a not set)\n", path, name);
	CU_ASSERT_STRING_EQUAL(warn, want);
}

static void
test_load_empty_and_missing(void)
{
	struct config c, before;
	char path[256], err[512] = "";

	config_defaults(&c);
	before = c;
	write_file(path, sizeof(path), "");
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT(memcmp(&c, &before, sizeof(c)) == 0);
	/* Missing and optional: fine, nothing changes. */
	snprintf(path, sizeof(path), "%s/nonexistent.conf", tmpdir);
	CU_ASSERT(config_load(&c, path, 1, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT(memcmp(&c, &before, sizeof(c)) == 0);
	/* Missing and asked for: an error naming the file. */
	err[0] = '\0';
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == CM_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
}

/* A bad file fails, names file (and line), and changes nothing at all. */
static void
load_fails(const char *text, const char *want1, const char *want2)
{
	struct config c, before;
	char path[256], err[512] = "";

	config_defaults(&c);
	before = c;
	write_file(path, sizeof(path), text);
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == CM_INVALID);
	CU_ASSERT(memcmp(&c, &before, sizeof(c)) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	if (strstr(err, want1) == NULL || strstr(err, want2) == NULL) {
		fprintf(stderr, "\nerror '%s' lacks '%s' or '%s'\n", err,
		    want1, want2);
		CU_FAIL("error message");
	}
}

/*
 * metrics-address and bind-address are addresses nlmd parses at start:
 * a value it cannot use was taken by the files, --print-config and
 * SIGHUP, and stopped nlmd only at start (exit status 1, no file nor
 * line), where nlmd.conf(5) promises exit status 2 naming both.
 */
static void
test_set_addresses(void)
{
	static const char *const bad_scopes[] = { "fe80::1%", "fe80::1%a%b",
	    "fe80::1%0123456789abcdef", "10.0.0.1%eth0" };
	struct config c;
	size_t i;

	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "metrics-address", "127.0.0.1:9464"));
	CU_ASSERT(set_ok(&c, "metrics-address", "[::1]:9464"));
	CU_ASSERT(set_ok(&c, "metrics-address", ":9464"));
	CU_ASSERT(set_ok(&c, "metrics-address", ""));
	CU_ASSERT(set_fails("metrics-address", "localhost:9464",
	    "not ADDRESS:PORT"));
	CU_ASSERT(set_fails("metrics-address", "127.0.0.1", "ADDRESS:PORT"));
	CU_ASSERT(set_fails("metrics-address", "127.0.0.1:99999",
	    "ADDRESS:PORT"));
	CU_ASSERT(set_fails("metrics-address", "::1:9464", "ADDRESS:PORT"));
	CU_ASSERT(set_ok(&c, "bind-address", "10.0.0.1"));
	CU_ASSERT(set_ok(&c, "bind-address", "2001:db8::1"));
	/* link-local: only with its interface (bind() takes none without) */
	CU_ASSERT(set_ok(&c, "bind-address", "fe80::1%eth0"));
	CU_ASSERT_STRING_EQUAL(c.bind_addr, "fe80::1%eth0");
	CU_ASSERT(set_ok(&c, "bind-address", "fe80::1%2"));
	CU_ASSERT(set_fails("bind-address", "fe80::1",
	    "a link-local one with its interface"));
	for (i = 0; i < sizeof(bad_scopes) / sizeof(bad_scopes[0]); i++)
		CU_ASSERT(set_fails("bind-address", bad_scopes[i],
		    "not an IPv4 or IPv6 address"));
	CU_ASSERT(set_fails("bind-address", "server.example.org",
	    "not an IPv4 or IPv6 address"));
	CU_ASSERT(set_fails("bind-address", "10.0.0.1:4045",
	    "not an IPv4 or IPv6 address"));
	load_fails("[nlmd]\nnlm-port = 1\nmetrics-address = localhost:9464\n",
	    "metrics-address", ":3:");
}

/*
 * Each string key holds up to its field's size less one byte: the
 * longest value is taken whole, one byte more is refused, and nothing
 * changes.  Only values far over the size were tried, so taking one of
 * exactly the field's size (its NUL then written into the next field:
 * a state-directory of 4096 bytes would empty bind-address, a
 * control-socket of 108 bytes control-group) failed no test.
 */
#define STR_KEY(k, f, first) { k, offsetof(struct config, f), \
	sizeof(((struct config *)0)->f), first }

static void
test_set_string_lengths(void)
{
	static const struct {
		const char	*key;
		size_t		 off;
		size_t		 size;
		char		 first;	/* '/': an absolute path */
	} keys[] = {
		STR_KEY("state-directory", state_dir, '/'),
		STR_KEY("notify-name", notify_name, 'n'),
		STR_KEY("control-socket", control_socket, '/'),
		STR_KEY("control-group", control_group, 'g'),
		STR_KEY("user", user, 'u'),
	};
	char v[4200], want[80];
	struct config c, before;
	size_t i;

	/* "an absolute path of at most 107 bytes" (nlmd.conf(5)) */
	CU_ASSERT_EQUAL(keys[2].size, 108);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		CU_ASSERT_FATAL(keys[i].size < sizeof(v));
		memset(v, 'x', keys[i].size);
		v[0] = keys[i].first;
		v[keys[i].size - 1] = '\0';
		config_defaults(&c);
		CU_ASSERT(set_ok(&c, keys[i].key, v));
		CU_ASSERT_STRING_EQUAL((char *)&c + keys[i].off, v);
		before = c;
		v[keys[i].size - 1] = 'x';
		v[keys[i].size] = '\0';
		snprintf(want, sizeof(want), "%s: value too long",
		    keys[i].key);
		CU_ASSERT(set_fails(keys[i].key, v, want));
		CU_ASSERT(config_set(&c, keys[i].key, v, want,
		    sizeof(want)) == CM_INVALID);
		CU_ASSERT(memcmp(&c, &before, sizeof(c)) == 0);
	}
	/* The checked ones: too long is said as such. */
	memset(v, '1', 300);
	v[256] = '\0';
	CU_ASSERT(set_fails("bind-address", v, "bind-address: value too "
	    "long"));
	v[128] = '\0';
	CU_ASSERT(set_fails("metrics-address", v, "metrics-address: value "
	    "too long"));
}

/*
 * control-socket must be an absolute path (ctl/ctlsrv.c): a relative one
 * was taken by the files, --print-config and SIGHUP, and refused only
 * once the store was open -- a start that spent an epoch and exited 1.
 */
static void
test_set_control_socket(void)
{
	struct config c;

	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "control-socket", "/run/nlmd/other.sock"));
	CU_ASSERT(set_ok(&c, "control-socket", ""));
	CU_ASSERT(set_fails("control-socket", "nlmd.sock",
	    "not an absolute path"));
	CU_ASSERT(set_fails("control-socket", "run/nlmd.sock",
	    "not an absolute path"));
	load_fails("[nlmd]\nverbose = 1\ncontrol-socket = ./nlmd.sock\n",
	    "control-socket", ":3:");
}

static void
test_load_errors(void)
{
	/* The good line before the bad one is not applied either. */
	load_fails("[nlmd]\nnlm-port = 1\nbogus = 2\n", "bogus", ":3:");
	load_fails("[nlmd]\nnlm-port = 1\nnsm-port = 70000\n", "nsm-port",
	    ":3:");
	load_fails("[nlmd]\nmax-record-size = 1k\n", "max-record-size",
	    ":2:");
	load_fails("[nlmd]\nnlm-port = 1\nthis is not ini\n", ":3:",
	    "syntax error");
	load_fails("[nlmd\nnlm-port = 1\n", ":1:", "syntax error");
}

/*
 * nfs.conf(5): "Leading and trailing spaces and tab
 * are ignored ... Single and double quotes surrounding the assigned value
 * are also removed.  If the resulting string is empty, the whole
 * assignment is ignored."  inih, with its default INI_ALLOW_MULTILINE,
 * takes an indented line for the continuation of the previous value.
 */
static void
test_bug_indented(void)
{
	struct config c;
	char path[256], err[512] = "";

	write_file(path, sizeof(path),
	    "[nlmd]\nnlm-port = 1\n  nsm-port = 2\n\tverbose = 3\n");
	config_defaults(&c);
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT_EQUAL(c.nlm_port, 1);
	CU_ASSERT_EQUAL(c.nsm_port, 2);
	CU_ASSERT_EQUAL(c.verbose, 3);
}

static void
test_bug_quotes(void)
{
	struct config c;
	char path[256], err[512] = "";

	write_file(path, sizeof(path),
	    "[nlmd]\nstate-directory = \"/srv/q\"\nbind-address = '::1'\n");
	config_defaults(&c);
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT_STRING_EQUAL(c.state_dir, "/srv/q");
	CU_ASSERT_STRING_EQUAL(c.bind_addr, "::1");
}

static void
test_bug_empty_assignment(void)
{
	struct config c;
	char path[256], err[512] = "";

	write_file(path, sizeof(path), "[nlmd]\nnlm-port =\nnsm-port = 7\n");
	config_defaults(&c);
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
	CU_ASSERT_EQUAL(c.nsm_port, 7);
}

/* fopen() of a directory succeeds; reading it fails (EISDIR). */
static void
test_bug_directory(void)
{
	struct config c;
	char err[512] = "";

	config_defaults(&c);
	CU_ASSERT(config_load(&c, tmpdir, 0, NULL, 0, err, sizeof(err)) == CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, tmpdir));
	CU_ASSERT(config_load(&c, tmpdir, 1, NULL, 0, err, sizeof(err)) == CM_INVALID);
}

/*
 * nfs.conf(5) as nfs-utils reads it: a quoted value is what lies between
 * the quotes, comment characters included.  inih (INI_INLINE_COMMENTS,
 * compiled into Debian's libinih) cut the value at " ;" first, leaving
 * '"a' -- a wrong value and no error.
 */
static void
test_bug_quoted_comment(void)
{
	struct config c;
	char path[256], err[512] = "";

	write_file(path, sizeof(path),
	    "[nlmd]\nnotify-name = \"srv ; x # y\"\n"
	    "control-group = 'g ;h'\n");
	config_defaults(&c);
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT_STRING_EQUAL(c.notify_name, "srv ; x # y");
	CU_ASSERT_STRING_EQUAL(c.control_group, "g ;h");
}

/*
 * state-directory takes up to 4095 bytes; inih read lines of at most 200,
 * so a long path was a "syntax error" on the line after it.
 */
static void
test_bug_long_line(void)
{
	struct config c;
	char path[256], err[512] = "", text[1200], dir[1001];

	memset(dir, 'd', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	snprintf(text, sizeof(text), "[nlmd]\nstate-directory = %s\n"
	    "nsm-port = 5\n", dir);
	write_file(path, sizeof(path), text);
	config_defaults(&c);
	CU_ASSERT_EQUAL(config_load(&c, path, 0, NULL, 0, err, sizeof(err)), 0);
	if (err[0] != '\0')
		fprintf(stderr, "\n%s\n", err);
	CU_ASSERT_STRING_EQUAL(c.state_dir, dir);
	CU_ASSERT_EQUAL(c.nsm_port, 5);
}

/*
 * With several bad lines the message is about the first, key and line
 * together.  inih goes on after an error and reports the first line, while
 * the reason was overwritten by the last: "nsm-port: ... (line 2)" for a
 * file whose line 2 was 'bogus = 1'.
 */
static void
test_bug_first_error(void)
{
	load_fails("[nlmd]\nbogus = 1\nnlm-port = 2\nnsm-port = 99999\n",
	    "bogus", ":2:");
	load_fails("[nlmd]\nbogus = 1\nnlm-port = 2\nnsm-port = 99999\n",
	    ":2:", "");
	load_fails("[nlmd]\nnot an assignment\nnsm-port = 99999\n",
	    "syntax error", ":2:");
	{
		struct config c;
		char path[256], err[512] = "";

		write_file(path, sizeof(path),
		    "[nlmd]\nbogus = 1\nnsm-port = 99999\n");
		config_defaults(&c);
		CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) ==
		    CM_INVALID);
		CU_ASSERT_PTR_NULL(strstr(err, "nsm-port"));
	}
}

/* Section names are not case-sensitive in nfs.conf(5), as in nfs.conf. */
static void
test_bug_section_case(void)
{
	struct config c;
	char path[256], err[512] = "";

	write_file(path, sizeof(path), "[NLMD]\nnlm-port = 7\n");
	config_defaults(&c);
	CU_ASSERT(config_load(&c, path, 0, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT_EQUAL(c.nlm_port, 7);
}

/* config_dump writes a file config_load reads back to the same struct. */
struct dumpbuf {
	FILE	*f;
	int	 lines;
};

static void
dump_line(const char *line, void *arg)
{
	struct dumpbuf *d = arg;

	fprintf(d->f, "%s\n", line);
	d->lines++;
}

static void
test_dump_roundtrip(void)
{
	struct config c, back;
	struct dumpbuf d;
	char path[256], err[512] = "";
	const char *const *k;
	int nkeys = 0;

	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "state-directory", "/srv/x"));
	CU_ASSERT(set_ok(&c, "nlm-port", "1"));
	CU_ASSERT(set_ok(&c, "rpcbind", "no"));
	CU_ASSERT(set_ok(&c, "callbacks", "off"));
	CU_ASSERT(set_ok(&c, "max-record-size", "1048576"));
	CU_ASSERT(set_ok(&c, "callback-give-up", "77"));
	/* Strings that need quotes to come back (comment characters). */
	CU_ASSERT(set_ok(&c, "notify-name", "srv#1;a"));
	CU_ASSERT(set_ok(&c, "bind-address", "::1"));
	CU_ASSERT(set_ok(&c, "user", "nobody"));
	snprintf(path, sizeof(path), "%s/dump.conf", tmpdir);
	d.f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d.f);
	d.lines = 0;
	config_dump(&c, dump_line, &d);
	fclose(d.f);
	config_defaults(&back);
	CU_ASSERT_EQUAL(config_load(&back, path, 0, NULL, 0, err, sizeof(err)), 0);
	/*
	 * Every key now comes from the file, on its line -- except empty
	 * strings: an empty assignment is ignored (nfs.conf(5)), the value
	 * stays the default's (all empty strings are defaults here).
	 */
	for (k = config_keys(); *k != NULL; k++) {
		const struct config_origin *o = config_origin(&back, *k);

		if (o->co_from == CONFIG_FROM_DEFAULT)
			continue;
		CU_ASSERT_EQUAL_FATAL(o->co_from, CONFIG_FROM_FILE);
		CU_ASSERT_EQUAL(o->co_line, (unsigned)(k - config_keys()) + 2);
		CU_ASSERT_STRING_EQUAL(o->co_file, path);
	}
	CU_ASSERT_EQUAL(config_origin(&back, "user")->co_from,
	    CONFIG_FROM_FILE);
	CU_ASSERT_EQUAL(config_origin(&back, "notify-name")->co_from,
	    CONFIG_FROM_FILE);
	/* The settings are the same; the origins differ (compared above). */
	memset(c.origin, 0, sizeof(c.origin));
	memset(back.origin, 0, sizeof(back.origin));
	CU_ASSERT(memcmp(&c, &back, sizeof(c)) == 0);
	/* One section line plus one line per key; every key settable. */
	for (k = config_keys(); *k != NULL; k++)
		nkeys++;
	CU_ASSERT_EQUAL(d.lines, nkeys + 1);
	CU_ASSERT(nkeys >= 18);
}

/*
 * "control-socket ... Empty: no control socket" (nlmd.conf(5)), and
 * --print-config's output "reads back as a configuration file"; but an
 * empty assignment is ignored (nfs.conf(5)), so no file could turn the
 * control socket off, and a dump with it off read back as the default.
 * A quoted empty value ("") sets the empty string.
 */
static void
test_bug_quoted_empty(void)
{
	struct config c, back;
	struct dumpbuf d;
	char path[256], err[512] = "";

	write_file(path, sizeof(path), "[nlmd]\ncontrol-socket = \"\"\n"
	    "notify-name = ''\nnlm-port =\n");
	config_defaults(&c);
	CU_ASSERT_STRING_EQUAL(c.control_socket, "/run/nlmd/nlmd.sock");
	CU_ASSERT(set_ok(&c, "notify-name", "x"));
	CU_ASSERT_EQUAL(config_load(&c, path, 0, NULL, 0, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(c.control_socket, "");
	CU_ASSERT_STRING_EQUAL(c.notify_name, "");
	CU_ASSERT_EQUAL(config_origin(&c, "control-socket")->co_line, 2);
	/* Unquoted and empty: still ignored. */
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
	/* A quoted empty number is no number. */
	load_fails("[nlmd]\nnlm-port = \"\"\n", "nlm-port", ":2:");
	/* The dump of an empty control-socket reads back empty. */
	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "control-socket", ""));
	snprintf(path, sizeof(path), "%s/dump-empty.conf", tmpdir);
	d.f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d.f);
	d.lines = 0;
	config_dump(&c, dump_line, &d);
	fclose(d.f);
	config_defaults(&back);
	CU_ASSERT_EQUAL(config_load(&back, path, 0, NULL, 0, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(back.control_socket, "");
}

/*
 * --print-config's output "reads back as a configuration file"
 * (nlmd.conf(5)); but a value holding both quote characters was written
 * in quotes, and read back only up to the first of them (notify-name
 * a"b'c came back a"b), and one holding a line break was written on two
 * lines, the second a syntax error.  What needs no quotes is written
 * without; what no line could carry is refused when it is set.
 */
static void
test_bug_dump_quotes(void)
{
	struct config c, back;
	struct dumpbuf d;
	char path[256], err[512] = "";

	config_defaults(&c);
	CU_ASSERT(set_ok(&c, "notify-name", "a\"b'c"));
	CU_ASSERT(set_ok(&c, "state-directory", "/srv/it's \"x\""));
	CU_ASSERT(set_ok(&c, "user", "'x"));
	/* A blank at the end only: in quotes, or trimmed on reading. */
	CU_ASSERT(set_ok(&c, "control-group", "grp "));
	snprintf(path, sizeof(path), "%s/dump-quotes.conf", tmpdir);
	d.f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d.f);
	d.lines = 0;
	config_dump(&c, dump_line, &d);
	fclose(d.f);
	config_defaults(&back);
	CU_ASSERT_EQUAL(config_load(&back, path, 0, NULL, 0, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(back.notify_name, "a\"b'c");
	CU_ASSERT_STRING_EQUAL(back.state_dir, "/srv/it's \"x\"");
	CU_ASSERT_STRING_EQUAL(back.user, "'x");
	CU_ASSERT_STRING_EQUAL(back.control_group, "grp ");
	/* No line could carry these: refused, not written back wrong. */
	CU_ASSERT(set_fails("notify-name", "'a\"", "written back"));
	CU_ASSERT(set_fails("notify-name", "a\"b'c;", "written back"));
	CU_ASSERT(set_fails("notify-name", " a\"b' ", "written back"));
	CU_ASSERT(set_fails("user", "a\nb", "written back"));
	CU_ASSERT(set_fails("control-group", "a\rb", "written back"));
}

/*
 * nlmd's own file: an include that is missing (not "-FILE") stops the
 * load, naming the line (it was ignored without a word, so the settings
 * meant to come from it were silently not set); the origin of an
 * included value is the file it is written in; an assignment before any
 * section is an error (it was dropped).
 */
static void
test_own_include_and_sections(void)
{
	struct config c, before;
	const struct config_origin *o;
	char site[256], top[256], text[600], err[512] = "";

	write_file(site, sizeof(site), "\n\n[nlmd]\ngrace-period = 30\n");
	snprintf(text, sizeof(text), "[nlmd]\ninclude = %s\n", site);
	write_file(top, sizeof(top), text);
	config_defaults(&c);
	CU_ASSERT_EQUAL_FATAL(config_load(&c, top, 0, NULL, 0, err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_EQUAL(c.grace_sec, 30);
	o = config_origin(&c, "grace-period");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_STRING_EQUAL(o->co_file, site);
	CU_ASSERT_EQUAL(o->co_line, 4);
	/* Mistyped: an error naming the line, nothing changed. */
	snprintf(text, sizeof(text), "[nlmd]\ngrace-period = 40\n"
	    "include = %s.typo\n", site);
	write_file(top, sizeof(top), text);
	config_defaults(&c);
	before = c;
	CU_ASSERT_EQUAL(config_load(&c, top, 0, NULL, 0, err, sizeof(err)),
	    CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3: include "));
	CU_ASSERT_EQUAL(c.grace_sec, before.grace_sec);
	/* "-FILE" may be missing. */
	snprintf(text, sizeof(text), "[nlmd]\ninclude = -%s.typo\n"
	    "grace-period = 40\n", site);
	write_file(top, sizeof(top), text);
	CU_ASSERT_EQUAL(config_load(&c, top, 0, NULL, 0, err, sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(c.grace_sec, 40);
	/* Before any section. */
	write_file(top, sizeof(top), "grace-period = 50\n[nlmd]\n");
	config_defaults(&c);
	CU_ASSERT_EQUAL(config_load(&c, top, 0, NULL, 0, err, sizeof(err)),
	    CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":1: grace-period outside a "
	    "section"));
	CU_ASSERT_EQUAL(c.grace_sec, before.grace_sec);
}

/* Settings that contradict each other: refused, naming both and where. */
static void
test_check(void)
{
	struct config c;
	char path[256], err[512] = "";

	config_defaults(&c);
	CU_ASSERT_EQUAL(config_check(&c, err, sizeof(err)), CM_OK);
	write_file(path, sizeof(path), "[nlmd]\ncallback-retry-min-ms = "
	    "5000\n");
	CU_ASSERT_EQUAL_FATAL(config_load(&c, path, 0, NULL, 0, err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_EQUAL(config_set(&c, "callback-retry-max-ms", "1000", err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(config_check(&c, err, sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "callback-retry-max-ms 1000 is "
	    "below callback-retry-min-ms 5000"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "from command line"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_EQUAL(config_set(&c, "callback-retry-max-ms", "5000", err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(config_check(&c, err, sizeof(err)), CM_OK);
}

/*
 * SIGHUP rereads the files into a fresh config and puts the command line
 * back over them: only what the command line set, with its origin.
 */
static void
test_keep_cmdline(void)
{
	struct config run, c;
	char path[256], err[512] = "";

	config_defaults(&run);
	CU_ASSERT_EQUAL(config_set(&run, "callback-retry-min-ms", "100", err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(config_set(&run, "control-socket", "/run/x.sock", err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(config_set(&run, "rpcbind", "no", err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_EQUAL(config_set(&run, "max-record-size", "2048", err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(config_set(&run, "durability", "log", err,
	    sizeof(err)), CM_OK);
	run.grace_sec = 7;	/* not from the command line: not kept */
	config_defaults(&c);
	write_file(path, sizeof(path), "[nlmd]\ncallback-retry-max-ms = "
	    "500\ncallback-retry-min-ms = 400\nverbose = 3\n");
	CU_ASSERT_EQUAL_FATAL(config_load(&c, path, 0, NULL, 0, err, sizeof(err)),
	    CM_OK);
	config_keep_cmdline(&c, &run);
	CU_ASSERT_EQUAL(c.cb_retry_min_ms, 100);
	CU_ASSERT_EQUAL(c.cb_retry_max_ms, 500);
	CU_ASSERT_STRING_EQUAL(c.control_socket, "/run/x.sock");
	CU_ASSERT_EQUAL(c.rpcbind, 0);
	CU_ASSERT_EQUAL(c.max_record, 2048);
	CU_ASSERT_EQUAL(c.durability, CONFIG_DURABILITY_LOG);
	CU_ASSERT_EQUAL(c.verbose, 3);
	CU_ASSERT_EQUAL(c.grace_sec, 90);
	CU_ASSERT_EQUAL(config_origin(&c, "callback-retry-min-ms")->co_from,
	    CONFIG_FROM_CMDLINE);
	CU_ASSERT_EQUAL(config_origin(&c, "callback-retry-max-ms")->co_from,
	    CONFIG_FROM_FILE);
	CU_ASSERT_EQUAL(config_check(&c, err, sizeof(err)), CM_OK);
}

/*
 * What the running configuration got from the files is what SIGHUP
 * rereads: config_keep_cmdline() must not put it back over the new
 * files.  test_keep_cmdline()'s running config had only defaults and
 * the command line, so copying every key that was not a default (the
 * files' old values too) passed it: an edited verbose, or a fixed
 * callback-retry-max-ms, would never be seen.
 */
static void
test_keep_cmdline_not_files(void)
{
	struct config run, c;
	char nfs[256], own[256], err[512] = "", warn[512] = "";

	config_defaults(&run);
	write_file(nfs, sizeof(nfs), "[lockd]\nport = 4001\n");
	write_file(own, sizeof(own), "[nlmd]\nverbose = 1\n"
	    "callback-retry-max-ms = 500\n");
	CU_ASSERT_EQUAL_FATAL(config_load_nfs(&run, nfs, warn, sizeof(warn),
	    err, sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL_FATAL(config_load(&run, own, 0, NULL, 0, err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(config_set(&run, "nsm-port", "4002", err,
	    sizeof(err)), CM_OK);
	/* The files as they are now: edited, and no nfs.conf port. */
	config_defaults(&c);
	write_file(own, sizeof(own), "[nlmd]\nverbose = 3\n");
	CU_ASSERT_EQUAL_FATAL(config_load(&c, own, 0, NULL, 0, err,
	    sizeof(err)), CM_OK);
	config_keep_cmdline(&c, &run);
	CU_ASSERT_EQUAL(c.verbose, 3);
	CU_ASSERT_EQUAL(config_origin(&c, "verbose")->co_line, 2);
	CU_ASSERT_EQUAL(c.cb_retry_max_ms, 60000);
	CU_ASSERT_EQUAL(config_origin(&c, "callback-retry-max-ms")->co_from,
	    CONFIG_FROM_DEFAULT);
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
	CU_ASSERT_EQUAL(config_origin(&c, "nlm-port")->co_from,
	    CONFIG_FROM_DEFAULT);
	/* The command line is kept. */
	CU_ASSERT_EQUAL(c.nsm_port, 4002);
	CU_ASSERT_EQUAL(config_origin(&c, "nsm-port")->co_from,
	    CONFIG_FROM_CMDLINE);
}

int
ct_register_config(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} bugs[] = {
		{ "nfs.conf: indented assignment", test_bug_indented },
		{ "nfs.conf: quoted value", test_bug_quotes },
		{ "nfs.conf: empty assignment ignored",
		    test_bug_empty_assignment },
		{ "a directory is not a config file",
		    test_bug_directory },
		{ "nlmd.conf: quoted value keeps ';' and '#'",
		    test_bug_quoted_comment },
		{ "nlmd.conf: lines over 200 bytes", test_bug_long_line },
		{ "nlmd.conf: the first bad line is the one named",
		    test_bug_first_error },
		{ "nlmd.conf: [NLMD] is [nlmd]", test_bug_section_case },
		{ "nlmd.conf: \"\" sets an empty string, dump reads back",
		    test_bug_quoted_empty },
		{ "dump: values with quotes read back, or are refused",
		    test_bug_dump_quotes },
	};
	CU_pSuite s;
	size_t i;

	s = CU_add_suite("config", config_suite_init, config_suite_clean);
	if (s == NULL ||
	    CU_add_test(s, "defaults", test_defaults) == NULL ||
	    CU_add_test(s, "defaults: every key, as nlmd.conf(5) gives it",
	    test_defaults_all) == NULL ||
	    CU_add_test(s, "set: each type", test_set_types) == NULL ||
	    CU_add_test(s, "set: booleans", test_set_bool) == NULL ||
	    CU_add_test(s, "set: callbacks", test_set_callbacks) == NULL ||
	    CU_add_test(s, "set: durability, grace, reclaim-check",
	    test_set_persistence) == NULL ||
	    CU_add_test(s, "set: errors leave config unchanged",
	    test_set_errors) == NULL ||
	    CU_add_test(s, "set: bounds of every number",
	    test_set_bounds) == NULL ||
	    CU_add_test(s, "set: addresses nlmd must parse",
	    test_set_addresses) == NULL ||
	    CU_add_test(s, "set: the longest string each key holds",
	    test_set_string_lengths) == NULL ||
	    CU_add_test(s, "set: control-socket is an absolute path",
	    test_set_control_socket) == NULL ||
	    CU_add_test(s, "load: sections, comments, spacing, repeats",
	    test_load_file) == NULL ||
	    CU_add_test(s, "load: a long section name is warned about once",
	    test_load_long_section) == NULL ||
	    CU_add_test(s, "load: empty and missing files",
	    test_load_empty_and_missing) == NULL ||
	    CU_add_test(s, "load: errors name file and line, change nothing",
	    test_load_errors) == NULL ||
	    CU_add_test(s, "dump: round trip through config_load",
	    test_dump_roundtrip) == NULL ||
	    CU_add_test(s, "load: own file's includes and sections",
	    test_own_include_and_sections) == NULL ||
	    CU_add_test(s, "check: settings that contradict each other",
	    test_check) == NULL ||
	    CU_add_test(s, "keep_cmdline: the command line over reread files",
	    test_keep_cmdline) == NULL ||
	    CU_add_test(s, "keep_cmdline: what the files set is reread, "
	    "not kept", test_keep_cmdline_not_files) == NULL)
		return -1;
	/* Once known bugs (nfs.conf(5) rules), fixed: now ordinary tests. */
	for (i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++)
		if (CU_add_test(s, bugs[i].name, bugs[i].fn) == NULL)
			return -1;
	return 0;
}
