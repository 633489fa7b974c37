/*
 * config.c - see config.h.
 *
 * One table describes every key: its name, type, where it lives in struct
 * config and its bounds.  The file loaders and the command line all go
 * through config_set_from(), so they cannot disagree.  Both files are read
 * by nfsconf_read() (nfsconf.h), in nfs.conf(5)'s dialect as nfs-utils
 * reads it.
 *
 * Every key has an origin (struct config_origin) that the loaders and
 * config_set() keep up to date; the file names they point to are kept in
 * a small table for the life of the process (config_intern()).
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "netaddr.h"
#include "nfsconf.h"

enum config_type { CT_STR, CT_UINT, CT_SIZE, CT_BOOL, CT_ENUM };

struct config_key {
	const char	*ck_name;
	enum config_type ck_type;
	size_t		 ck_off;
	size_t		 ck_size;	/* CT_STR: buffer size */
	unsigned long long ck_min;
	unsigned long long ck_max;
	const char *const *ck_names;	/* CT_ENUM: value names, by value */
	/* CT_STR: is a non-empty value usable?  NULL: any is. */
	bool		(*ck_check)(const char *value);
	const char	*ck_form;	/* ... what it must be, for errors */
};

#define KEY_STR(n, f)	{ n, CT_STR, offsetof(struct config, f), \
	sizeof(((struct config *)0)->f), 0, 0, NULL, NULL, NULL }
#define KEY_UINT(n, f, lo, hi) { n, CT_UINT, offsetof(struct config, f), 0, \
	lo, hi, NULL, NULL, NULL }
#define KEY_SIZE(n, f, lo, hi) { n, CT_SIZE, offsetof(struct config, f), 0, \
	lo, hi, NULL, NULL, NULL }
#define KEY_BOOL(n, f)	{ n, CT_BOOL, offsetof(struct config, f), 0, 0, 1, \
	NULL, NULL, NULL }
/*
 * A string that nlmd parses when it starts: checked here, so that a bad
 * one is refused with its file and line (and by --print-config and
 * SIGHUP), not at start only.
 */
#define KEY_CHECKED(n, f, check, form) { n, CT_STR, \
	offsetof(struct config, f), sizeof(((struct config *)0)->f), 0, 0, \
	NULL, check, form }
/* An enum field; `names' is NULL-terminated, index = value. */
#define KEY_ENUM(n, f, names) { n, CT_ENUM, offsetof(struct config, f), 0, \
	0, 0, names, NULL, NULL }

static const char *const callbacks_names[] = { "msg", "sync", "both", "off",
	NULL };
static const char *const durability_names[] = { "sync", "log", "none",
	NULL };
static const char *const reclaim_names[] = { "conflict", "strict", "off",
	NULL };

/*
 * bind-address: a numeric IPv4 or IPv6 address (rpc/rpcsrv.c); an IPv6
 * link-local one only with its interface, "fe80::1%eth0" (a name or an
 * index: whether it exists is found when nlmd listens), as bind() takes
 * no link-local address without one.
 */
static bool
config_is_addr(const char *v)
{
	struct in6_addr a6;
	struct in_addr a4;
	const char *scope;

	return inet_pton(AF_INET, v, &a4) == 1 ||
	    (addr_parse6(v, &a6, &scope) == 0 &&
	    (scope[0] != '\0' || !IN6_IS_ADDR_LINKLOCAL(&a6)));
}

/* metrics-address: ctl/httpmetrics.c's form. */
static bool
config_is_addr_port(const char *v)
{
	struct sockaddr_storage ss;

	return addr_parse_port(v, &ss) == 0;
}

/*
 * control-socket: ctl/ctlsrv.c binds it as it is, and refused a relative
 * one only after the store was open (an epoch spent, exit status 1).
 * The field's size (sun_path's) bounds its length.
 */
static bool
config_is_abs_path(const char *v)
{
	return v[0] == '/';
}

/*
 * Must config_dump() put v in quotes for config_load() to read it back?
 * Empty (an empty assignment is ignored), a comment character, a quote
 * first (it would be taken for quotes), blanks at either end (trimmed).
 */
static bool
config_str_needs_quotes(const char *v)
{
	size_t n = strlen(v);

	return n == 0 || strpbrk(v, "#;") != NULL || v[0] == '"' ||
	    v[0] == '\'' || v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' ||
	    v[n - 1] == '\t';
}

/*
 * Can config_dump() write v on a line config_load() reads back as v?
 * Not with a line break, nor with both quote characters when it needs
 * quotes: a quoted value ends at its first closing quote.
 */
static bool
config_str_writable(const char *v)
{
	if (strpbrk(v, "\n\r") != NULL)
		return false;
	return !config_str_needs_quotes(v) || strchr(v, '"') == NULL ||
	    strchr(v, '\'') == NULL;
}

static const struct config_key config_table[] = {
	KEY_STR("state-directory", state_dir),
	KEY_CHECKED("bind-address", bind_addr, config_is_addr,
	    "not an IPv4 or IPv6 address (no host name; a link-local one "
	    "with its interface: fe80::1%eth0)"),
	KEY_UINT("nlm-port", nlm_port, 0, 65535),
	KEY_UINT("nsm-port", nsm_port, 0, 65535),
	KEY_BOOL("rpcbind", rpcbind),
	KEY_UINT("verbose", verbose, 0, 9),
	KEY_SIZE("max-record-size", max_record, 1024, 1 << 20),
	KEY_SIZE("max-commit-backlog", max_backlog, 65536, 1 << 30),
	KEY_UINT("max-connections", max_connections, 1, 1000000),
	KEY_UINT("max-connections-per-address", max_conns_per_addr, 1, 1000000),
	KEY_UINT("connection-idle-timeout", conn_idle_sec, 1, 86400),
	KEY_ENUM("callbacks", callbacks, callbacks_names),
	KEY_UINT("callback-retry-min-ms", cb_retry_min_ms, 10, 3600000),
	KEY_UINT("callback-retry-max-ms", cb_retry_max_ms, 10, 3600000),
	KEY_UINT("callback-give-up", cb_give_up_sec, 0, 30 * 86400),
	KEY_UINT("callback-max-per-host", cb_max_per_host, 1, 1000000),
	KEY_UINT("max-locks-per-host", max_locks_per_host, 1, 100000000),
	KEY_UINT("max-waiters-per-host", max_waiters_per_host, 1, 100000000),
	KEY_UINT("max-waiters-per-owner", max_waiters_per_owner, 1, 100000000),
	KEY_UINT("max-locks", max_locks, 1, 1000000000),
	KEY_UINT("max-waiters", max_waiters, 1, 100000000),
	KEY_UINT("max-shares", max_shares, 1, 100000000),
	KEY_UINT("max-shares-per-host", max_shares_per_host, 1, 100000000),
	KEY_UINT("max-hosts-per-address", max_hosts_per_addr, 1, 10000000),
	KEY_UINT("max-hosts", max_hosts, 1, 10000000),
	KEY_UINT("max-name-length", max_name, 1, 1024),
	KEY_UINT("max-fh-length", max_fh, 1, 1024),
	KEY_UINT("max-oh-length", max_oh, 1, 1024),
	KEY_ENUM("durability", durability, durability_names),
	KEY_UINT("grace-period", grace_sec, 0, 86400),
	KEY_ENUM("reclaim-check", reclaim_check, reclaim_names),
	KEY_UINT("checkpoint-interval", checkpoint_sec, 1, 86400),
	KEY_UINT("store-cache-mib", store_cache_mib, 4, 65536),
	KEY_STR("notify-name", notify_name),
	KEY_UINT("notify-give-up", notify_give_up_sec, 1, 30 * 86400),
	KEY_UINT("host-idle", host_idle_sec, 1, 30 * 86400),
	KEY_CHECKED("control-socket", control_socket, config_is_abs_path,
	    "not an absolute path"),
	KEY_STR("control-group", control_group),
	KEY_CHECKED("metrics-address", metrics_addr, config_is_addr_port,
	    "not ADDRESS:PORT (127.0.0.1:9464, [::1]:9464, :9464)"),
	KEY_STR("user", user),
};
#define NKEYS	(sizeof(config_table) / sizeof(config_table[0]))
_Static_assert(NKEYS <= CONFIG_MAX_KEYS, "raise CONFIG_MAX_KEYS");

/* File names that origins point to: a handful, kept until exit. */
#define NINTERN	64
static const char *config_interned[NINTERN];

static const char *
config_intern(const char *path)
{
	size_t i;

	for (i = 0; i < NINTERN && config_interned[i] != NULL; i++)
		if (strcmp(config_interned[i], path) == 0)
			return config_interned[i];
	if (i == NINTERN || (config_interned[i] = strdup(path)) == NULL)
		return "(a file)";
	return config_interned[i];
}

void
config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/nlmd");
	c->nlm_port = 4045;
	/*
	 * Not 662, the port many statd setups use: it lies in 600-1023, the
	 * range bindresvport() hands out to any local RPC client, so nlmd
	 * could find it taken at start.  32765 is below Linux's ephemeral
	 * range (32768-60999) and is the statd port Debian's NFS firewall
	 * advice uses.
	 */
	c->nsm_port = 32765;
	c->rpcbind = 1;
	c->max_record = 64 * 1024;
	c->max_backlog = 2 * 1024 * 1024;
	c->max_connections = 4096;
	c->max_conns_per_addr = 64;
	c->conn_idle_sec = 600;
	c->callbacks = CONFIG_CB_MSG;
	c->cb_retry_min_ms = 1000;
	c->cb_retry_max_ms = 60000;
	c->cb_give_up_sec = 0;
	c->cb_max_per_host = 1024;
	c->max_locks_per_host = 1000000;
	c->max_waiters_per_host = 100000;
	/*
	 * An owner is a process on a client: its blocked requests are its
	 * threads blocked in F_SETLKW.  Each look-up of one walks the
	 * owner's list of them (lockcore.h, LIMITS).
	 */
	c->max_waiters_per_owner = 4096;
	c->max_locks = 10000000;
	c->max_waiters = 1000000;
	c->max_shares = 1000000;
	c->max_shares_per_host = 100000;
	/*
	 * Distinct caller_names one source address may bring: enough for
	 * the containers behind a NAT, too few for one peer cycling names to
	 * fill max-hosts and lock every new host out.
	 */
	c->max_hosts_per_addr = 256;
	c->max_hosts = 100000;
	c->max_name = 255;
	c->max_fh = 1024;
	c->max_oh = 1024;
	c->durability = CONFIG_DURABILITY_SYNC;
	c->grace_sec = 90;
	c->reclaim_check = CONFIG_RECLAIM_CONFLICT;
	c->checkpoint_sec = 30;
	c->store_cache_mib = 16;
	c->notify_give_up_sec = 86400;
	c->host_idle_sec = 600;
	snprintf(c->control_socket, sizeof(c->control_socket),
	    "/run/nlmd/nlmd.sock");
}

static const struct config_key *
config_find(const char *key)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(config_table[i].ck_name, key) == 0)
			return &config_table[i];
	return NULL;
}

static int
config_parse_uint(const struct config_key *k, const char *value,
    unsigned long long *out, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	/*
	 * Digits only, as "4045 " is refused: strtoull() skips blanks and
	 * takes a sign, and " -1" (a quoted value, or --key=" -1") wrapped
	 * around, refused as 18446744073709551615 or, far enough below zero,
	 * accepted as a small number.
	 */
	errno = 0;
	v = strtoull(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0) {
		snprintf(err, errlen, "%s: '%s' is not a number", k->ck_name,
		    value);
		return -1;
	}
	if (v < k->ck_min || v > k->ck_max) {
		snprintf(err, errlen, "%s: %llu is outside [%llu, %llu]",
		    k->ck_name, v, k->ck_min, k->ck_max);
		return -1;
	}
	*out = v;
	return 0;
}

static int
config_parse_enum(const struct config_key *k, const char *value, int *out,
    char *err, size_t errlen)
{
	char all[256];
	size_t i, n = 0;

	for (i = 0; k->ck_names[i] != NULL; i++)
		if (strcasecmp(value, k->ck_names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	all[0] = '\0';
	for (i = 0; k->ck_names[i] != NULL && n < sizeof(all); i++)
		n += (size_t)snprintf(all + n, sizeof(all) - n, "%s%s",
		    i > 0 ? ", " : "", k->ck_names[i]);
	snprintf(err, errlen, "%s: '%s' is not one of %s", k->ck_name, value,
	    all);
	return -1;
}

static int
config_parse_bool(const struct config_key *k, const char *value, int *out,
    char *err, size_t errlen)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "off" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(value, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	snprintf(err, errlen, "%s: '%s' is not yes or no", k->ck_name, value);
	return -1;
}

static int
config_store(struct config *c, const struct config_key *k, const char *value,
    char *err, size_t errlen)
{
	char *field = (char *)c + k->ck_off;
	unsigned long long v;
	int iv;

	switch (k->ck_type) {
	case CT_STR:
		if (strlen(value) >= k->ck_size) {
			snprintf(err, errlen, "%s: value too long", k->ck_name);
			return -1;
		}
		if (!config_str_writable(value)) {
			snprintf(err, errlen, "%s: a line break, or both quote "
			    "characters in a value that needs quotes: it could "
			    "not be written back (--print-config)", k->ck_name);
			return -1;
		}
		if (k->ck_check != NULL && value[0] != '\0' &&
		    !k->ck_check(value)) {
			snprintf(err, errlen, "%s: '%s' is %s", k->ck_name,
			    value, k->ck_form);
			return -1;
		}
		memcpy(field, value, strlen(value) + 1);
		return 0;
	case CT_UINT:
	case CT_SIZE:
		if (config_parse_uint(k, value, &v, err, errlen) == -1)
			return -1;
		if (k->ck_type == CT_UINT)
			*(unsigned *)(void *)field = (unsigned)v;
		else
			*(size_t *)(void *)field = (size_t)v;
		return 0;
	case CT_BOOL:
		if (config_parse_bool(k, value, &iv, err, errlen) == -1)
			return -1;
		*(int *)(void *)field = iv;
		return 0;
	case CT_ENUM:
		if (config_parse_enum(k, value, &iv, err, errlen) == -1)
			return -1;
		*(int *)(void *)field = iv;
		return 0;
	}
	snprintf(err, errlen, "%s: internal error", k->ck_name);
	return -1;
}

/* Set `key' and record where the value came from. */
static enum cm_status
config_set_from(struct config *c, const char *key, const char *value,
    const struct config_origin *from, char *err, size_t errlen)
{
	const struct config_key *k;

	if ((k = config_find(key)) == NULL) {
		snprintf(err, errlen, "unknown setting '%s'", key);
		return CM_NOTFOUND;
	}
	if (config_store(c, k, value, err, errlen) == -1)
		return CM_INVALID;
	c->origin[k - config_table] = *from;
	return CM_OK;
}

enum cm_status
config_set(struct config *c, const char *key, const char *value, char *err,
    size_t errlen)
{
	static const struct config_origin cmdline = { CONFIG_FROM_CMDLINE, 0,
	    NULL, NULL };

	return config_set_from(c, key, value, &cmdline, err, errlen);
}

void
config_keep_cmdline(struct config *c, const struct config *from)
{
	const struct config_key *k;
	size_t i, len;

	for (i = 0; i < NKEYS; i++) {
		if (from->origin[i].co_from != CONFIG_FROM_CMDLINE)
			continue;
		k = &config_table[i];
		switch (k->ck_type) {
		case CT_STR:
			len = k->ck_size;
			break;
		case CT_UINT:
			len = sizeof(unsigned);
			break;
		case CT_SIZE:
			len = sizeof(size_t);
			break;
		default:	/* CT_BOOL, CT_ENUM: int */
			len = sizeof(int);
			break;
		}
		memcpy((char *)c + k->ck_off, (const char *)from + k->ck_off,
		    len);
		c->origin[i] = from->origin[i];
	}
}

const struct config_origin *
config_origin(const struct config *c, const char *key)
{
	const struct config_key *k = config_find(key);

	return k == NULL ? NULL : &c->origin[k - config_table];
}

struct config_ctx {
	struct config	 cc_conf;
	char		*cc_warn;	/* config_load()'s warnings, or NULL */
	size_t		 cc_warnlen;
	/* The last other section warned about, in the file named. */
	char		 cc_skipped[NFSCONF_SECTION_MAX];
	const char	*cc_skipfile;
};

static void	config_warn(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/*
 * One line of nlmd's own file (nfsconf_read() has unquoted the value and
 * dropped empty assignments, as nfs-utils does).  Unlike nfs.conf, a
 * malformed line anywhere is an error: the whole file is ours.
 */
static int
config_file_cb(void *arg, const char *file, unsigned line,
    const char *section, const char *key, const char *value, char *err,
    size_t errlen)
{
	struct config_ctx *ctx = arg;
	/* The file it is written in, an included one too. */
	struct config_origin from = { CONFIG_FROM_FILE, line,
	    config_intern(file), NULL };
	char why[256];

	if (key == NULL) {
		snprintf(err, errlen, "%s:%u: syntax error", file, line);
		return -1;
	}
	if (*section == '\0') {
		snprintf(err, errlen, "%s:%u: %s outside a section (nlmd reads "
		    "[%s])", file, line, key, CONFIG_SECTION);
		return -1;
	}
	if (strcasecmp(section, CONFIG_SECTION) != 0) {
		/*
		 * Our own file is read for [nlmd] alone: settings put under
		 * a misspelled header ([nlm]) or nfs-utils' ([lockd]) would
		 * be left at their defaults without a word.  One warning at
		 * the first key of each such section.
		 */
		if (ctx->cc_skipfile != from.co_file ||
		    strcmp(ctx->cc_skipped, section) != 0) {
			snprintf(ctx->cc_skipped, sizeof(ctx->cc_skipped),
			    "%s", section);
			ctx->cc_skipfile = from.co_file;
			config_warn(ctx->cc_warn, ctx->cc_warnlen, "%s:%u: "
			    "section [%s] ignored: nlmd reads only [%s] "
			    "here (%s not set)\n", file, line, section,
			    CONFIG_SECTION, key);
		}
		return 0;
	}
	if (config_set_from(&ctx->cc_conf, key, value, &from, why,
	    sizeof(why)) != CM_OK) {
		snprintf(err, errlen, "%s:%u: %s", file, line, why);
		return -1;
	}
	return 0;
}

/*
 * Read with nfsconf_read(), not inih: libinih as distributions build it
 * cuts values at " ;" even inside quotes, reads lines of at most 200
 * bytes (the rest became a "line" of its own), and goes on after an error,
 * so the reason reported was the last one's and the line the first one's.
 */
enum cm_status
config_load(struct config *c, const char *path, int optional, char *warn,
    size_t warnlen, char *err, size_t errlen)
{
	struct config_ctx ctx;
	struct stat st;
	enum cm_status s;
	char incl[1024];

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a file", path);
		return CM_INVALID;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.cc_conf = *c;
	ctx.cc_warn = warn;
	ctx.cc_warnlen = warnlen;
	incl[0] = '\0';
	if ((s = nfsconf_read(path, optional, config_file_cb, &ctx, incl,
	    sizeof(incl), err, errlen)) != CM_OK)
		return s;
	/*
	 * A missing include (not "-FILE") is only a warning in nfs.conf, as
	 * nfs-utils has it; in our own file it is an error: the settings
	 * meant to be there would be silently not set.
	 */
	if (incl[0] != '\0') {
		snprintf(err, errlen, "%.*s", (int)strcspn(incl, "\n"), incl);
		return CM_INVALID;
	}
	*c = ctx.cc_conf;
	return CM_OK;
}

/*
 * NFS.CONF (HOW IT WORKS).  nfsconf_read() hands us every assignment of
 * nfs.conf and what it includes, with its section.  [nlmd] is applied at
 * once, through config_set_from() (unknown keys and malformed lines are
 * errors, as in our own file).  [lockd] port, [lockd] udp-port and
 * [statd] port are only noted (checked as port numbers: a wrong one is an
 * error, since it would silently move a port the firewall expects); when
 * every file is read they become nlm-port and nsm-port, unless [nlmd] set
 * those.  Everything else belongs to other programs and is ignored.
 */
struct config_port {
	int		 cp_set;
	unsigned	 cp_port;
	unsigned	 cp_line;
	const char	*cp_file;	/* interned */
};

struct config_nfs_ctx {
	struct config		 cn_conf;
	struct config_port	 cn_lockd;	/* [lockd] port */
	struct config_port	 cn_lockd_udp;	/* [lockd] udp-port */
	struct config_port	 cn_statd;	/* [statd] port */
};

static int
config_nfs_port(struct config_port *p, const char *file, unsigned line,
    const char *what, const char *value, char *err, size_t errlen)
{
	const struct config_key port = { what, CT_UINT, 0, 0, 0, 65535,
	    NULL, NULL, NULL };
	unsigned long long v;
	char why[256];

	if (config_parse_uint(&port, value, &v, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s:%u: %s", file, line, why);
		return -1;
	}
	p->cp_set = 1;
	p->cp_port = (unsigned)v;
	p->cp_line = line;
	p->cp_file = config_intern(file);
	return 0;
}

static int
config_nfs_cb(void *arg, const char *file, unsigned line, const char *section,
    const char *key, const char *value, char *err, size_t errlen)
{
	struct config_nfs_ctx *cn = arg;
	struct config_origin from = { CONFIG_FROM_NFSCONF, line,
	    config_intern(file), "[" CONFIG_SECTION "]" };
	char why[256];

	if (strcasecmp(section, CONFIG_SECTION) == 0) {
		if (key == NULL) {
			snprintf(err, errlen, "%s:%u: syntax error", file,
			    line);
			return -1;
		}
		if (config_set_from(&cn->cn_conf, key, value, &from, why,
		    sizeof(why)) != CM_OK) {
			snprintf(err, errlen, "%s:%u: %s", file, line, why);
			return -1;
		}
		return 0;
	}
	/* nfs-utils ignores an empty value, quoted or not. */
	if (key == NULL || value[0] == '\0')
		return 0;
	if (strcasecmp(section, "lockd") == 0 && strcasecmp(key, "port") == 0)
		return config_nfs_port(&cn->cn_lockd, file, line,
		    "[lockd] port", value, err, errlen);
	if (strcasecmp(section, "lockd") == 0 &&
	    strcasecmp(key, "udp-port") == 0)
		return config_nfs_port(&cn->cn_lockd_udp, file, line,
		    "[lockd] udp-port", value, err, errlen);
	if (strcasecmp(section, "statd") == 0 && strcasecmp(key, "port") == 0)
		return config_nfs_port(&cn->cn_statd, file, line,
		    "[statd] port", value, err, errlen);
	return 0;
}

/* Set `key' to port `p' unless [nlmd] in nfs.conf set it. */
static void
config_nfs_apply(struct config *c, const char *key,
    const struct config_port *p, const char *what)
{
	const struct config_key *k = config_find(key);
	struct config_origin from = { CONFIG_FROM_NFSCONF, p->cp_line,
	    p->cp_file, what };

	if (!p->cp_set || c->origin[k - config_table].co_from ==
	    CONFIG_FROM_NFSCONF)
		return;
	*(unsigned *)(void *)((char *)c + k->ck_off) = p->cp_port;
	c->origin[k - config_table] = from;
}

static void
config_warn(char *warn, size_t warnlen, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (warn == NULL || (n = strlen(warn)) >= warnlen)
		return;
	va_start(ap, fmt);
	vsnprintf(warn + n, warnlen - n, fmt, ap);
	va_end(ap);
}

static int
config_conf_d(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 5 &&
	    strcmp(de->d_name + n - 5, ".conf") == 0;
}

/*
 * path, then path.d/ *.conf in version order (as nfs-utils).  A path.d
 * that cannot be read is an error, as an nfs.conf that cannot be read
 * is: skipped, its [lockd] port (one a firewall expects) was silently
 * not applied.  What is there but not a file (a directory named x.conf)
 * is passed over, as nfs-utils does, not an error that stops nlmd.
 */
static enum cm_status
config_nfs_files(struct config_nfs_ctx *cn, const char *path, char *warn,
    size_t warnlen, char *err, size_t errlen)
{
	struct dirent **names = NULL;
	char dir[4096], file[8192];
	enum cm_status s;
	struct stat st;
	int i, n;

	if ((s = nfsconf_read(path, 1, config_nfs_cb, cn, warn, warnlen, err,
	    errlen)) != CM_OK)
		return s;
	snprintf(dir, sizeof(dir), "%s.d", path);
	if ((n = scandir(dir, &names, config_conf_d, versionsort)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return CM_OK;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return cm_status_of_errno(errno);
	}
	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir, names[i]->d_name);
		if (s == CM_OK && (stat(file, &st) == -1 || S_ISREG(st.st_mode)))
			s = nfsconf_read(file, 1, config_nfs_cb, cn, warn,
			    warnlen, err, errlen);
		free(names[i]);
	}
	free(names);
	return s;
}

enum cm_status
config_load_nfs(struct config *c, const char *path, char *warn,
    size_t warnlen, char *err, size_t errlen)
{
	struct config_nfs_ctx cn;
	const struct config_port *nlm;
	enum cm_status s;

	memset(&cn, 0, sizeof(cn));
	cn.cn_conf = *c;
	if ((s = config_nfs_files(&cn, path, warn, warnlen, err, errlen)) !=
	    CM_OK)
		return s;
	/* One port serves UDP and TCP: port, else udp-port. */
	nlm = cn.cn_lockd.cp_set ? &cn.cn_lockd : &cn.cn_lockd_udp;
	config_nfs_apply(&cn.cn_conf, "nlm-port", nlm, nlm == &cn.cn_lockd ?
	    "[lockd] port" : "[lockd] udp-port");
	if (cn.cn_lockd.cp_set && cn.cn_lockd_udp.cp_set &&
	    cn.cn_lockd.cp_port != cn.cn_lockd_udp.cp_port)
		config_warn(warn, warnlen, "%s:%u: [lockd] port = %u and "
		    "udp-port = %u (%s:%u) differ; nlmd serves UDP and TCP on "
		    "one port and takes port (nlm-port in [nlmd] decides)\n",
		    cn.cn_lockd.cp_file, cn.cn_lockd.cp_line,
		    cn.cn_lockd.cp_port, cn.cn_lockd_udp.cp_port,
		    cn.cn_lockd_udp.cp_file, cn.cn_lockd_udp.cp_line);
	config_nfs_apply(&cn.cn_conf, "nsm-port", &cn.cn_statd,
	    "[statd] port");
	*c = cn.cn_conf;
	return CM_OK;
}

const char *
config_nfs_path(void)
{
	const char *p = getenv(CONFIG_NFS_ENV);

	if (p == NULL)
		return CONFIG_NFS_FILE;
	return p[0] == '\0' ? NULL : p;
}

/*
 * A string value as config_load() reads it back: in quotes only when it
 * needs them (config_str_needs_quotes()), in the kind it does not hold
 * (config_store() refused a value that holds both and needs them).
 */
static void
config_format_str(const char *name, const char *v, char *buf, size_t len)
{
	char q = strchr(v, '"') != NULL ? '\'' : '"';

	if (config_str_needs_quotes(v))
		snprintf(buf, len, "%s = %c%s%c", name, q, v, q);
	else
		snprintf(buf, len, "%s = %s", name, v);
}

static void
config_format(const struct config *c, const struct config_key *k, char *buf,
    size_t len)
{
	const char *field = (const char *)c + k->ck_off;

	switch (k->ck_type) {
	case CT_STR:
		config_format_str(k->ck_name, field, buf, len);
		break;
	case CT_UINT:
		snprintf(buf, len, "%s = %u", k->ck_name,
		    *(const unsigned *)(const void *)field);
		break;
	case CT_SIZE:
		snprintf(buf, len, "%s = %zu", k->ck_name,
		    *(const size_t *)(const void *)field);
		break;
	case CT_BOOL:
		snprintf(buf, len, "%s = %s", k->ck_name,
		    *(const int *)(const void *)field ? "yes" : "no");
		break;
	case CT_ENUM:
		snprintf(buf, len, "%s = %s", k->ck_name,
		    k->ck_names[*(const int *)(const void *)field]);
		break;
	}
}

static void
config_format_origin(const struct config_origin *o, char *buf, size_t len)
{
	switch (o->co_from) {
	case CONFIG_FROM_CMDLINE:
		snprintf(buf, len, "# from command line");
		break;
	case CONFIG_FROM_FILE:
		snprintf(buf, len, "# from %s:%u", o->co_file, o->co_line);
		break;
	case CONFIG_FROM_NFSCONF:
		snprintf(buf, len, "# from %s:%u %s", o->co_file, o->co_line,
		    o->co_what);
		break;
	default:
		snprintf(buf, len, "# default");
		break;
	}
}

const char *
config_where(const struct config *c, const char *key, char *buf, size_t len)
{
	const struct config_origin *o = config_origin(c, key);
	char from[4200];

	if (o == NULL) {
		snprintf(buf, len, "(unknown setting)");
		return buf;
	}
	config_format_origin(o, from, sizeof(from));
	snprintf(buf, len, "%s", from + 2);	/* without "# " */
	return buf;
}

enum cm_status
config_check(const struct config *c, char *err, size_t errlen)
{
	char a[4200], b[4200];

	if (c->cb_retry_max_ms < c->cb_retry_min_ms) {
		config_format_origin(config_origin(c, "callback-retry-min-ms"),
		    a, sizeof(a));
		config_format_origin(config_origin(c, "callback-retry-max-ms"),
		    b, sizeof(b));
		snprintf(err, errlen, "callback-retry-max-ms %u is below "
		    "callback-retry-min-ms %u (%s; %s)",
		    (unsigned)c->cb_retry_max_ms, (unsigned)c->cb_retry_min_ms,
		    b + 2, a + 2);
		return CM_INVALID;
	}
	return CM_OK;
}

void
config_dump(const struct config *c, void (*out)(const char *, void *),
    void *arg)
{
	char line[4200], from[4200], both[8500];
	size_t i;

	out("[" CONFIG_SECTION "]", arg);
	for (i = 0; i < NKEYS; i++) {
		config_format(c, &config_table[i], line, sizeof(line));
		config_format_origin(&c->origin[i], from, sizeof(from));
		snprintf(both, sizeof(both), "%s  %s", line, from);
		out(both, arg);
	}
}

const char *const *
config_keys(void)
{
	static const char *names[NKEYS + 1];
	size_t i;

	for (i = 0; i < NKEYS; i++)
		names[i] = config_table[i].ck_name;
	names[NKEYS] = NULL;
	return names;
}
