/*
 * config.c - see config.h.
 *
 * One table describes every key: its name, type, where it lives in struct
 * config and its bounds.  The file loader (inih) and the command line both
 * go through config_set(), so they cannot disagree.
 *
 * nfs.conf(5) rules that inih's defaults differ from, and how we keep
 * them: leading white space is ignored (our line reader strips it, so an
 * indented line is never taken as the continuation of the previous value);
 * a value in single or double quotes loses them; an empty assignment is
 * ignored.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <ini.h>

enum config_type { CT_STR, CT_UINT, CT_SIZE, CT_BOOL, CT_ENUM };

struct config_key {
	const char	*ck_name;
	enum config_type ck_type;
	size_t		 ck_off;
	size_t		 ck_size;	/* CT_STR: buffer size */
	unsigned long long ck_min;
	unsigned long long ck_max;
	const char *const *ck_names;	/* CT_ENUM: value names, by value */
};

#define KEY_STR(n, f)	{ n, CT_STR, offsetof(struct config, f), \
	sizeof(((struct config *)0)->f), 0, 0, NULL }
#define KEY_UINT(n, f, lo, hi) { n, CT_UINT, offsetof(struct config, f), 0, \
	lo, hi, NULL }
#define KEY_SIZE(n, f, lo, hi) { n, CT_SIZE, offsetof(struct config, f), 0, \
	lo, hi, NULL }
#define KEY_BOOL(n, f)	{ n, CT_BOOL, offsetof(struct config, f), 0, 0, 1, \
	NULL }
/* An enum field; `names' is NULL-terminated, index = value. */
#define KEY_ENUM(n, f, names) { n, CT_ENUM, offsetof(struct config, f), 0, \
	0, 0, names }

static const char *const callbacks_names[] = { "msg", "sync", "both", "off",
	NULL };
static const char *const durability_names[] = { "sync", "log", "none",
	NULL };
static const char *const reclaim_names[] = { "conflict", "strict", "off",
	NULL };

static const struct config_key config_table[] = {
	KEY_STR("state-directory", state_dir),
	KEY_STR("bind-address", bind_addr),
	KEY_UINT("nlm-port", nlm_port, 0, 65535),
	KEY_UINT("nsm-port", nsm_port, 0, 65535),
	KEY_BOOL("rpcbind", rpcbind),
	KEY_UINT("verbose", verbose, 0, 9),
	KEY_SIZE("max-record-size", max_record, 1024, 1 << 20),
	KEY_UINT("max-connections", max_connections, 1, 1000000),
	KEY_UINT("connection-idle-timeout", conn_idle_sec, 1, 86400),
	KEY_ENUM("callbacks", callbacks, callbacks_names),
	KEY_UINT("callback-retry-min-ms", cb_retry_min_ms, 10, 3600000),
	KEY_UINT("callback-retry-max-ms", cb_retry_max_ms, 10, 3600000),
	KEY_UINT("callback-give-up", cb_give_up_sec, 0, 30 * 86400),
	KEY_UINT("callback-max-per-host", cb_max_per_host, 1, 1000000),
	KEY_UINT("max-locks-per-host", max_locks_per_host, 1, 100000000),
	KEY_UINT("max-waiters-per-host", max_waiters_per_host, 1, 100000000),
	KEY_UINT("max-locks", max_locks, 1, 1000000000),
	KEY_UINT("max-hosts", max_hosts, 1, 10000000),
	KEY_UINT("max-name-length", max_name, 1, 1024),
	KEY_UINT("max-fh-length", max_fh, 1, 1024),
	KEY_UINT("max-oh-length", max_oh, 1, 1024),
	KEY_ENUM("durability", durability, durability_names),
	KEY_UINT("grace-period", grace_sec, 0, 86400),
	KEY_ENUM("reclaim-check", reclaim_check, reclaim_names),
	KEY_UINT("checkpoint-interval", checkpoint_sec, 1, 86400),
	KEY_STR("notify-name", notify_name),
	KEY_UINT("notify-give-up", notify_give_up_sec, 1, 30 * 86400),
	KEY_UINT("host-idle", host_idle_sec, 1, 30 * 86400),
	KEY_STR("control-socket", control_socket),
	KEY_STR("control-group", control_group),
	KEY_STR("metrics-address", metrics_addr),
};
#define NKEYS	(sizeof(config_table) / sizeof(config_table[0]))

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
	c->max_connections = 4096;
	c->conn_idle_sec = 600;
	c->callbacks = CONFIG_CB_MSG;
	c->cb_retry_min_ms = 1000;
	c->cb_retry_max_ms = 60000;
	c->cb_give_up_sec = 0;
	c->cb_max_per_host = 1024;
	c->max_locks_per_host = 1000000;
	c->max_waiters_per_host = 100000;
	c->max_locks = 10000000;
	c->max_hosts = 100000;
	c->max_name = 255;
	c->max_fh = 1024;
	c->max_oh = 1024;
	c->durability = CONFIG_DURABILITY_SYNC;
	c->grace_sec = 90;
	c->reclaim_check = CONFIG_RECLAIM_CONFLICT;
	c->checkpoint_sec = 30;
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

	errno = 0;
	v = strtoull(value, &end, 10);
	if (value[0] == '\0' || value[0] == '-' || *end != '\0' || errno != 0) {
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

int
config_set(struct config *c, const char *key, const char *value, char *err,
    size_t errlen)
{
	const struct config_key *k;
	char *field;
	unsigned long long v;
	int iv;

	if ((k = config_find(key)) == NULL) {
		snprintf(err, errlen, "unknown setting '%s'", key);
		return -1;
	}
	field = (char *)c + k->ck_off;
	switch (k->ck_type) {
	case CT_STR:
		if (strlen(value) >= k->ck_size) {
			snprintf(err, errlen, "%s: value too long", key);
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
	snprintf(err, errlen, "%s: internal error", key);
	return -1;
}

struct config_ctx {
	struct config	 cc_conf;
	char		*cc_err;
	size_t		 cc_errlen;
	const char	*cc_path;
	int		 cc_failed;
};

/* fgets() for inih, without the leading white space of each line. */
static char *
config_read_line(char *str, int num, void *stream)
{
	char *p;

	if (fgets(str, num, stream) == NULL)
		return NULL;
	for (p = str; *p == ' ' || *p == '\t'; p++)
		;
	if (p != str)
		memmove(str, p, strlen(p) + 1);
	return str;
}

static int
config_ini_cb(void *arg, const char *section, const char *name,
    const char *value)
{
	struct config_ctx *ctx = arg;
	char why[256], unq[4096];
	size_t n = strlen(value);

	if (strcmp(section, CONFIG_SECTION) != 0 || n == 0)
		return 1;
	if (n >= 2 && (value[0] == '"' || value[0] == '\'') &&
	    value[n - 1] == value[0] && n - 2 < sizeof(unq)) {
		memcpy(unq, value + 1, n - 2);
		unq[n - 2] = '\0';
		value = unq;
	}
	if (config_set(&ctx->cc_conf, name, value, why, sizeof(why)) == -1) {
		snprintf(ctx->cc_err, ctx->cc_errlen, "%s: %s", ctx->cc_path,
		    why);
		ctx->cc_failed = 1;
		return 0;
	}
	return 1;
}

int
config_load(struct config *c, const char *path, int optional, char *err,
    size_t errlen)
{
	struct config_ctx ctx;
	struct stat st;
	FILE *f;
	int rc;

	if ((f = fopen(path, "r")) == NULL) {
		if (optional && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == -1 || S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a file", path);
		fclose(f);
		return -1;
	}
	ctx.cc_conf = *c;
	ctx.cc_err = err;
	ctx.cc_errlen = errlen;
	ctx.cc_path = path;
	ctx.cc_failed = 0;
	rc = ini_parse_stream(config_read_line, f, config_ini_cb, &ctx);
	fclose(f);
	if (rc != 0) {
		if (ctx.cc_failed) {
			/* Add the line number inih reports to our reason. */
			char reason[512];

			snprintf(reason, sizeof(reason), "%s", err);
			snprintf(err, errlen, "%s (line %d)", reason, rc);
		} else
			snprintf(err, errlen, "%s:%d: syntax error", path, rc);
		return -1;
	}
	*c = ctx.cc_conf;
	return 0;
}

static void
config_format(const struct config *c, const struct config_key *k, char *buf,
    size_t len)
{
	const char *field = (const char *)c + k->ck_off;

	switch (k->ck_type) {
	case CT_STR:
		snprintf(buf, len, "%s = %s", k->ck_name, field);
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

void
config_dump(const struct config *c, void (*out)(const char *, void *),
    void *arg)
{
	char line[4200];
	size_t i;

	out("[" CONFIG_SECTION "]", arg);
	for (i = 0; i < NKEYS; i++) {
		config_format(c, &config_table[i], line, sizeof(line));
		out(line, arg);
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
