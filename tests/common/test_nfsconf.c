/*
 * test_nfsconf.c - reading /etc/nfs.conf (common/nfsconf.c and
 * config_load_nfs()), and the precedence of every source of settings:
 * command line > nlmd's own file > nfs.conf > built-in, with the origin
 * config_dump() (--print-config) reports for each value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "config.h"
#include "ct.h"
#include "nfsconf.h"
#include "privdrop.h"

static char nc_dir[64];

static int
nc_suite_init(void)
{
	snprintf(nc_dir, sizeof(nc_dir), "/tmp/nlmd-nc.XXXXXX");
	return mkdtemp(nc_dir) == NULL ? -1 : 0;
}

static int
nc_suite_clean(void)
{
	char cmd[128];

	unsetenv(CONFIG_NFS_ENV);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", nc_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write `text' to nc_dir/name (directories made); path to path[len]. */
static void
put(char *path, size_t len, const char *name, const char *text)
{
	char dir[256];
	FILE *f;

	snprintf(path, len, "%s/%s", nc_dir, name);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdir(dir, 0700);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* A fresh directory name under nc_dir for one test's files. */
static const char *
sub(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", nc_dir, name);
	mkdir(buf, 0700);
	return name;
}

/* Load nfs.conf `path' over the defaults into *c; returns its status. */
static int
load_nfs(struct config *c, const char *path, char *warn, size_t warnlen,
    char *err, size_t errlen)
{
	config_defaults(c);
	warn[0] = err[0] = '\0';
	return config_load_nfs(c, path, warn, warnlen, err, errlen);
}

/* `key' came from `from', at file `file' (may be NULL: any) line `line'. */
static int
origin_is(const struct config *c, const char *key, int from,
    const char *file, unsigned line, const char *what)
{
	const struct config_origin *o = config_origin(c, key);

	if (o == NULL || o->co_from != from ||
	    (file != NULL && (o->co_file == NULL ||
	    strcmp(o->co_file, file) != 0)) ||
	    (line != 0 && o->co_line != line) ||
	    (what != NULL && (o->co_what == NULL ||
	    strcmp(o->co_what, what) != 0))) {
		fprintf(stderr, "\n%s: from %d %s:%u %s\n", key,
		    o ? o->co_from : -1, o && o->co_file ? o->co_file : "-",
		    o ? o->co_line : 0, o && o->co_what ? o->co_what : "-");
		return 0;
	}
	return 1;
}

static void
test_lockd_statd(void)
{
	struct config c;
	char path[256], warn[512], err[512];

	sub("a");
	put(path, sizeof(path), "a/nfs.conf",
	    "[general]\n"
	    "pipefs-directory = /run/rpc_pipefs\n"
	    "[lockd]\n"
	    "  port = 32803   # fixed for the firewall\n"
	    "udp-port = 32803\n"
	    "not an assignment in someone else's section\n"
	    "some-future-key = 1\n"
	    "[Statd]\n"
	    "Port = 662\n"
	    "outgoing-port = 2020\n"
	    "[mountd]\n"
	    "manage-gids = y\n");
	CU_ASSERT_EQUAL_FATAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 32803);
	CU_ASSERT_EQUAL(c.nsm_port, 662);
	CU_ASSERT(origin_is(&c, "nlm-port", CONFIG_FROM_NFSCONF, path, 4,
	    "[lockd] port"));
	CU_ASSERT(origin_is(&c, "nsm-port", CONFIG_FROM_NFSCONF, path, 9,
	    "[statd] port"));
	CU_ASSERT(origin_is(&c, "state-directory", CONFIG_FROM_DEFAULT, NULL,
	    0, NULL));
	CU_ASSERT_STRING_EQUAL(warn, "");
	/* Only udp-port: that is the port. */
	put(path, sizeof(path), "a/udp.conf", "[lockd]\nudp-port = 4001\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4001);
	CU_ASSERT(origin_is(&c, "nlm-port", CONFIG_FROM_NFSCONF, path, 2,
	    "[lockd] udp-port"));
	CU_ASSERT_EQUAL(c.nsm_port, 32765);
	/*
	 * Section and key names in any case, as nfs-utils matches them
	 * ([Statd] Port above): an [LOCKD] PORT the kernel's lockd honoured
	 * must not move nlmd to the default port.
	 */
	put(path, sizeof(path), "a/case.conf", "[LOCKD]\nPORT = 4003\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4003);
	put(path, sizeof(path), "a/case-udp.conf",
	    "[Lockd]\nUdp-Port = 4004\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4004);
	/* Both, different: port wins, with a warning naming both. */
	put(path, sizeof(path), "a/both.conf",
	    "[lockd]\nudp-port = 4001\nport = 4002\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4002);
	CU_ASSERT_PTR_NOT_NULL(strstr(warn, "port = 4002 and udp-port = 4001"));
	CU_ASSERT_PTR_NOT_NULL(strstr(warn, "differ"));
	CU_ASSERT_PTR_NOT_NULL(strstr(warn, path));
	/* Empty, quoted or not: ignored, as nfs-utils does, not an error. */
	put(path, sizeof(path), "a/empty.conf",
	    "[lockd]\nport = \"\"\nudp-port =\n[statd]\nport = ''\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
	CU_ASSERT_EQUAL(c.nsm_port, 32765);
	CU_ASSERT(origin_is(&c, "nlm-port", CONFIG_FROM_DEFAULT, NULL, 0,
	    NULL));
}

static void
test_nlmd_section(void)
{
	struct config c;
	char path[256], warn[512], err[512];

	sub("b");
	/* [nlmd] wins over [lockd] port, whatever the order. */
	put(path, sizeof(path), "b/nfs.conf",
	    "[nlmd]\n"
	    "nlm-port = 5001\n"
	    "grace-period = 30 ; short\n"
	    "state-directory = \"/srv/nlm#d\"\n"
	    "[lockd]\n"
	    "port = 4002\n"
	    "[statd]\n"
	    "port = 4003\n");
	CU_ASSERT_EQUAL_FATAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 5001);
	CU_ASSERT(origin_is(&c, "nlm-port", CONFIG_FROM_NFSCONF, path, 2,
	    "[nlmd]"));
	CU_ASSERT_EQUAL(c.grace_sec, 30);
	CU_ASSERT_STRING_EQUAL(c.state_dir, "/srv/nlm#d");
	CU_ASSERT_EQUAL(c.nsm_port, 4003);
	/* Unknown keys and malformed lines in [nlmd] are errors. */
	put(path, sizeof(path), "b/bad.conf",
	    "[lockd]\nport = 1\n[nlmd]\nnlm-port = 7\nbogus = 1\n");
	config_defaults(&c);
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":5:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bogus"));
	/* ... and nothing was applied. */
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
	put(path, sizeof(path), "b/syntax.conf", "[nlmd]\nthis is not it\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: syntax error"));
	/* A port that is not one, in [lockd]: an error naming it. */
	put(path, sizeof(path), "b/port.conf", "[lockd]\nport = 70000\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: [lockd] port"));
	/* Section arguments make other sections. */
	put(path, sizeof(path), "b/arg.conf", "[lockd \"x\"]\nport = 9\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.nlm_port, 4045);
}

static void
test_include(void)
{
	struct config c;
	char path[256], inc[256], warn[512], err[512];

	sub("c");
	put(inc, sizeof(inc), "c/ports.inc",
	    "port = 4100\n[statd]\nport = 4101\n");
	put(path, sizeof(path), "c/nfs.conf",
	    "[lockd]\n"
	    "include = ports.inc\n"
	    "udp-port = 4100\n"
	    "include = -missing-optional.inc\n"
	    "include = missing.inc\n");
	CU_ASSERT_EQUAL_FATAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	/* The include starts in [lockd]; its [statd] ends with it. */
	CU_ASSERT_EQUAL(c.nlm_port, 4100);
	CU_ASSERT(origin_is(&c, "nlm-port", CONFIG_FROM_NFSCONF, inc, 1,
	    "[lockd] port"));
	CU_ASSERT_EQUAL(c.nsm_port, 4101);
	/* udp-port after the include is in [lockd] again (no warning). */
	CU_ASSERT_PTR_NULL(strstr(warn, "differ"));
	/* Only the include that is not optional is missed. */
	CU_ASSERT_PTR_NULL(strstr(warn, "optional"));
	CU_ASSERT_PTR_NOT_NULL(strstr(warn, "nfs.conf:5: include"));
	/* A missing include that is not optional: a warning only. */
	put(path, sizeof(path), "c/nfs2.conf", "[lockd]\ninclude = gone.inc\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(warn, "nfs2.conf:2: include"));
	CU_ASSERT_PTR_NOT_NULL(strstr(warn, "gone.inc"));
	/* An include of itself: stopped, with an error. */
	put(path, sizeof(path), "c/loop.conf", "[lockd]\ninclude = loop.conf\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nested"));
}

/*
 * "includes nested over 10 deep" are refused (nfsconf.h): ten levels
 * below the file named are read, an eleventh is not.  Only an include
 * of itself was tested, which any limit stops.
 */
static void
test_include_depth(void)
{
	struct config c;
	char path[256], name[64], text[128], warn[512], err[512];
	int i;

	sub("g");
	/* g/i1.inc ... g/i11.inc, each including the next; i11 sets it. */
	for (i = 1; i <= 11; i++) {
		snprintf(name, sizeof(name), "g/i%d.inc", i);
		if (i < 11)
			snprintf(text, sizeof(text), "include = i%d.inc\n",
			    i + 1);
		else
			snprintf(text, sizeof(text), "port = 4011\n");
		put(path, sizeof(path), name, text);
	}
	/* From i2: ten levels, i2 ... i11. */
	put(path, sizeof(path), "g/ten.conf", "[lockd]\ninclude = i2.inc\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(c.nlm_port, 4011);
	/* From i1: eleven. */
	put(path, sizeof(path), "g/eleven.conf",
	    "[lockd]\ninclude = i1.inc\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "i10.inc:1: include "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nested over 10 deep"));
}

static void
test_conf_d_and_missing(void)
{
	struct config c, def;
	char path[256], d1[256], warn[512], err[512];

	sub("d");
	put(path, sizeof(path), "d/nfs.conf", "[lockd]\nport = 1000\n");
	put(d1, sizeof(d1), "d/nfs.conf.d/9-a.conf", "[lockd]\nport = 1009\n");
	put(d1, sizeof(d1), "d/nfs.conf.d/10-b.conf",
	    "[lockd]\nport = 1010\n");
	put(d1, sizeof(d1), "d/nfs.conf.d/99-c.txt", "[lockd]\nport = 1099\n");
	/*
	 * Hidden (an editor's, a package manager's): not read either, as
	 * *.conf in a shell and in nfs-utils.
	 */
	put(d1, sizeof(d1), "d/nfs.conf.d/.99-d.conf",
	    "[statd]\nport = 1098\n");
	CU_ASSERT_EQUAL_FATAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	/* Version order: 9-a, then 10-b; not *.conf: not read. */
	CU_ASSERT_EQUAL(c.nlm_port, 1010);
	CU_ASSERT_EQUAL(c.nsm_port, 32765);
	/*
	 * A bad file stops the load, naming it, though a good one follows:
	 * read on, the good one's OK would hide the error (nlmd would start
	 * without the port the firewall expects).
	 */
	put(path, sizeof(path), "d2/nfs.conf", "[lockd]\nport = 1000\n");
	put(d1, sizeof(d1), "d2/nfs.conf.d/1-a.conf", "[lockd]\nport = x\n");
	put(d1, sizeof(d1), "d2/nfs.conf.d/2-b.conf", "[statd]\nport = 7\n");
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "1-a.conf:2: [lockd] port"));
	/* No nfs.conf at all: nothing changes. */
	config_defaults(&def);
	snprintf(path, sizeof(path), "%s/d/none.conf", nc_dir);
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT(memcmp(&c, &def, sizeof(c)) == 0);
	/* The path: the variable, empty = none, else /etc/nfs.conf. */
	unsetenv(CONFIG_NFS_ENV);
	CU_ASSERT_STRING_EQUAL(config_nfs_path(), "/etc/nfs.conf");
	setenv(CONFIG_NFS_ENV, "/x/nfs.conf", 1);
	CU_ASSERT_STRING_EQUAL(config_nfs_path(), "/x/nfs.conf");
	setenv(CONFIG_NFS_ENV, "", 1);
	CU_ASSERT_PTR_NULL(config_nfs_path());
	unsetenv(CONFIG_NFS_ENV);
}

/*
 * Load nfs.conf `path' as nobody (root reads anything): it must fail
 * with CM_DENIED, the error naming `want' and "Permission denied".  0,
 * or the number of the check that failed.
 */
static int
load_nfs_denied(const char *path, const char *want)
{
	struct config c;
	char warn[512], err[512];
	pid_t pid;
	int status;

	if ((pid = fork()) == -1)
		return 8;
	if (pid == 0) {
		if (getuid() == 0 && priv_drop(65534, 65534, err,
		    sizeof(err)) != CM_OK)
			_exit(9);
		if (load_nfs(&c, path, warn, sizeof(warn), err,
		    sizeof(err)) != CM_DENIED)
			_exit(1);
		if (strstr(err, want) == NULL ||
		    strstr(err, "ermission denied") == NULL)
			_exit(2);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 7;
	return WEXITSTATUS(status);
}

/*
 * nfs.conf.d: a directory named x.conf in it is passed over (nfs-utils
 * reads regular files only), not an error that stops nlmd; a directory
 * that cannot be read is an error naming it, as an nfs.conf that cannot
 * be read is (it was skipped without a word: its [lockd] port, the one
 * the firewall expects, silently not applied).  So is one that can be
 * listed but not searched: what is in it cannot be looked at, and is no
 * more passed over than what cannot be read.
 */
static void
test_conf_d_unreadable(void)
{
	struct config c;
	char path[256], d1[256], dir[256], warn[512], err[512];
	int rc;

	sub("dd");
	put(path, sizeof(path), "dd/nfs.conf", "[lockd]\nport = 1000\n");
	put(d1, sizeof(d1), "dd/nfs.conf.d/1-a.conf", "[lockd]\nport = 1001\n");
	snprintf(dir, sizeof(dir), "%s/dd/nfs.conf.d/2-dir.conf", nc_dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL(load_nfs(&c, path, warn, sizeof(warn), err,
	    sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(c.nlm_port, 1001);
	CU_ASSERT_EQUAL(err[0], '\0');
	rmdir(dir);

	/* Unreadable: nobody reads it (root would read it anyway). */
	snprintf(dir, sizeof(dir), "%s/dd/nfs.conf.d", nc_dir);
	CU_ASSERT_EQUAL_FATAL(chmod(nc_dir, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(dir, 0), 0);
	snprintf(d1, sizeof(d1), "%s/dd", nc_dir);
	CU_ASSERT_EQUAL_FATAL(chmod(d1, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0644), 0);
	rc = load_nfs_denied(path, "nfs.conf.d");
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		printf("\n    unreadable nfs.conf.d: check %d failed ", rc);
	/* Listed, not searched: 1-a.conf is named, not passed over. */
	CU_ASSERT_EQUAL_FATAL(chmod(dir, 0444), 0);
	rc = load_nfs_denied(path, "nfs.conf.d/1-a.conf");
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		printf("\n    unsearchable nfs.conf.d: check %d failed ", rc);
	chmod(dir, 0700);
	chmod(nc_dir, 0700);
}

struct lines {
	char	buf[8192];
};

static void
collect(const char *line, void *arg)
{
	struct lines *l = arg;
	size_t n = strlen(l->buf);

	snprintf(l->buf + n, sizeof(l->buf) - n, "%s\n", line);
}

/*
 * config_where(): what a message about a port in use says of where the
 * port was set.  It named nlmd's own file whatever set the port: one
 * from nfs.conf's [lockd] port, or -p, was not where it sent the reader.
 */
static void
test_where(void)
{
	struct config c;
	char nfs[256], own[256], warn[512], err[512], buf[512];

	sub("w");
	put(nfs, sizeof(nfs), "w/nfs.conf", "[lockd]\n\nport = 4001\n");
	put(own, sizeof(own), "w/nlmd.conf", "[nlmd]\nnsm-port = 5002\n");
	CU_ASSERT_EQUAL_FATAL(load_nfs(&c, nfs, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(config_load(&c, own, 0, warn, sizeof(warn), err,
	    sizeof(err)), CM_OK);
	snprintf(err, sizeof(err), "from %s:3 [lockd] port", nfs);
	CU_ASSERT_STRING_EQUAL(config_where(&c, "nlm-port", buf, sizeof(buf)),
	    err);
	snprintf(err, sizeof(err), "from %s:2", own);
	CU_ASSERT_STRING_EQUAL(config_where(&c, "nsm-port", buf, sizeof(buf)),
	    err);
	CU_ASSERT_STRING_EQUAL(config_where(&c, "grace-period", buf,
	    sizeof(buf)), "default");
	CU_ASSERT_EQUAL(config_set(&c, "nlm-port", "4045", err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_STRING_EQUAL(config_where(&c, "nlm-port", buf, sizeof(buf)),
	    "from command line");
	CU_ASSERT_STRING_EQUAL(config_where(&c, "no-such-key", buf,
	    sizeof(buf)), "(unknown setting)");
}

/* The order nlmd applies them: defaults, nfs.conf, own file, options. */
static void
test_precedence(void)
{
	struct config c;
	struct lines out;
	char nfs[256], own[256], warn[512], err[512], want[512];

	sub("e");
	put(nfs, sizeof(nfs), "e/nfs.conf",
	    "[lockd]\nport = 4001\n[statd]\nport = 4002\n"
	    "[nlmd]\ngrace-period = 11\nhost-idle = 12\ncallbacks = sync\n");
	put(own, sizeof(own), "e/nlmd.conf",
	    "[nlmd]\n# comment\nnsm-port = 5002\nhost-idle = 22 # ours\n"
	    "callbacks = both\n");
	CU_ASSERT_EQUAL_FATAL(load_nfs(&c, nfs, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(config_load(&c, own, 0, NULL, 0, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(config_set(&c, "callbacks", "off", err,
	    sizeof(err)), 0);
	/* nfs.conf only. */
	CU_ASSERT_EQUAL(c.nlm_port, 4001);
	CU_ASSERT_EQUAL(c.grace_sec, 11);
	/* Own file over nfs.conf (its [statd] and its [nlmd]). */
	CU_ASSERT_EQUAL(c.nsm_port, 5002);
	CU_ASSERT_EQUAL(c.host_idle_sec, 22);
	CU_ASSERT(origin_is(&c, "host-idle", CONFIG_FROM_FILE, own, 4, NULL));
	/* The command line over both. */
	CU_ASSERT_EQUAL(c.callbacks, CONFIG_CB_OFF);
	CU_ASSERT(origin_is(&c, "callbacks", CONFIG_FROM_CMDLINE, NULL, 0,
	    NULL));
	/* Built in where nobody said anything. */
	CU_ASSERT_EQUAL(c.max_hosts, 100000);
	/* What --print-config prints. */
	out.buf[0] = '\0';
	config_dump(&c, collect, &out);
	snprintf(want, sizeof(want), "\nnlm-port = 4001  # from %s:2 [lockd] "
	    "port\n", nfs);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, want));
	snprintf(want, sizeof(want), "\nnsm-port = 5002  # from %s:3\n", own);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, want));
	snprintf(want, sizeof(want), "\ngrace-period = 11  # from %s:6 "
	    "[nlmd]\n", nfs);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, want));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf,
	    "\ncallbacks = off  # from command line\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf,
	    "\nmax-hosts = 100000  # default\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf,
	    "\nbind-address = \"\"  # default\n"));
}

/* The nfsconf reader alone: what the callback sees. */
struct seen {
	char	buf[2048];
};

static int
seen_cb(void *arg, const char *file, unsigned line, const char *section,
    const char *key, const char *value, char *err, size_t errlen)
{
	struct seen *s = arg;
	size_t n = strlen(s->buf);

	(void)file;
	(void)err;
	(void)errlen;
	snprintf(s->buf + n, sizeof(s->buf) - n, "%u [%s] %s=<%s>\n", line,
	    section, key ? key : "(none)", value);
	return 0;
}

static void
test_reader(void)
{
	struct seen s;
	char path[256], warn[256] = "", err[256] = "";

	sub("f");
	put(path, sizeof(path), "f/r.conf",
	    "before = 1\n"
	    "[ A ]\n"
	    "k1 = 'q # not a comment' # comment\n"
	    "k2 = two \\\n"
	    "   lines\n"
	    "k3 =\n"
	    "k4 = \"\"\n"
	    "; k5 = 5\n"
	    "# k6 = 6\n"
	    "k7 = \"open\n"
	    "[broken\n"
	    "k8 = 8\n"
	    "[B]\n"
	    "k9=9");
	s.buf[0] = '\0';
	CU_ASSERT_EQUAL(nfsconf_read(path, 0, seen_cb, &s, warn, sizeof(warn),
	    err, sizeof(err)), 0);
	if (getenv("NC_DEBUG"))
		fprintf(stderr, "%s", s.buf);
	CU_ASSERT_STRING_EQUAL(s.buf,
	    "1 [] before=<1>\n"
	    "3 [A] k1=<q # not a comment>\n"
	    "4 [A] k2=<two     lines>\n"
	    "7 [A] k4=<>\n"
	    "10 [A] (none)=<k7>\n"
	    "11 [A] (none)=<[broken>\n"
	    "12 [[] k8=<8>\n"
	    "14 [B] k9=<9>\n");
	/*
	 * A continuation on the last line, with nothing after it: the
	 * assignment still counts (dropped, a [lockd] port there silently
	 * did not apply).
	 */
	put(path, sizeof(path), "f/eof.conf", "[lockd]\nport = 4007 \\\n");
	s.buf[0] = '\0';
	CU_ASSERT_EQUAL(nfsconf_read(path, 0, seen_cb, &s, warn, sizeof(warn),
	    err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(s.buf, "2 [lockd] port=<4007>\n");
	snprintf(path, sizeof(path), "%s/f/none.conf", nc_dir);
	CU_ASSERT_EQUAL(nfsconf_read(path, 1, seen_cb, &s, warn, sizeof(warn),
	    err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(nfsconf_read(path, 0, seen_cb, &s, warn, sizeof(warn),
	    err, sizeof(err)), CM_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "none.conf"));
}

int
ct_register_nfsconf(void)
{
	CU_pSuite s;

	s = CU_add_suite("nfs.conf and precedence", nc_suite_init,
	    nc_suite_clean);
	if (s == NULL ||
	    CU_add_test(s, "reader: sections, comments, quotes, "
	    "continuations", test_reader) == NULL ||
	    CU_add_test(s, "[lockd] port/udp-port, [statd] port",
	    test_lockd_statd) == NULL ||
	    CU_add_test(s, "[nlmd] in nfs.conf", test_nlmd_section) == NULL ||
	    CU_add_test(s, "include", test_include) == NULL ||
	    CU_add_test(s, "include: ten deep, not eleven",
	    test_include_depth) == NULL ||
	    CU_add_test(s, "nfs.conf.d, no nfs.conf, NLMD_NFS_CONF",
	    test_conf_d_and_missing) == NULL ||
	    CU_add_test(s, "nfs.conf.d: unreadable, a directory in it",
	    test_conf_d_unreadable) == NULL ||
	    CU_add_test(s, "config_where: where a port was set",
	    test_where) == NULL ||
	    CU_add_test(s, "precedence and --print-config origins",
	    test_precedence) == NULL)
		return -1;
	return 0;
}
