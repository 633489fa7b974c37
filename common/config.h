/*
 * config.h - nlmd's settings: defaults, the config file, command-line
 * overrides.
 *
 * The file uses the INI dialect of /etc/nfs.conf ("[section]", "key =
 * value", '#' or ';' comments); nlmd reads section [nlmd].  Every key can
 * also be given on the command line as --key=value, which wins over the
 * file.  Unknown keys and bad values are errors with the file and line.
 *
 * PRECEDENCE: command line > nlmd's own file (CONFIG_DEFAULT_FILE or -c)
 * > /etc/nfs.conf ([nlmd], then [lockd] port / udp-port and [statd] port
 * for the two ports) > built-in defaults.  The caller applies them in the
 * reverse order: config_defaults(), config_load_nfs(), config_load(),
 * config_set() per option.
 */
#ifndef NLMD_COMMON_CONFIG_H
#define NLMD_COMMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define CONFIG_DEFAULT_FILE	"/etc/nlmd/nlmd.conf"
#define CONFIG_SECTION		"nlmd"
/* nfs-utils' file, read first; the variable overrides its name ("": none). */
#define CONFIG_NFS_FILE		"/etc/nfs.conf"
#define CONFIG_NFS_ENV		"NLMD_NFS_CONF"
#define CONFIG_MAX_KEYS		64

enum config_callbacks {
	CONFIG_CB_MSG,		/* GRANTED_MSG, answered by GRANTED_RES */
	CONFIG_CB_SYNC,		/* synchronous GRANTED */
	CONFIG_CB_BOTH,		/* GRANTED_MSG, falling back to GRANTED */
	CONFIG_CB_OFF		/* never call back: clients re-poll */
};

enum config_durability {
	CONFIG_DURABILITY_SYNC,	/* every turn's commit flushed to disk */
	CONFIG_DURABILITY_LOG,	/* written to the OS: survives kill -9 */
	CONFIG_DURABILITY_NONE	/* locks not stored (benchmarks) */
};

enum config_reclaim {
	CONFIG_RECLAIM_CONFLICT,	/* refuse what another host held */
	CONFIG_RECLAIM_STRICT,		/* only what is on record */
	CONFIG_RECLAIM_OFF		/* as Linux: any reclaim in grace */
};

/* Where a setting's value came from (--print-config says it). */
enum config_from {
	CONFIG_FROM_DEFAULT,		/* built in */
	CONFIG_FROM_CMDLINE,		/* config_set(): --key=value */
	CONFIG_FROM_FILE,		/* config_load(): nlmd's own file */
	CONFIG_FROM_NFSCONF		/* config_load_nfs(): nfs.conf */
};

struct config_origin {
	int		 co_from;	/* enum config_from */
	unsigned	 co_line;	/* FILE, NFSCONF: line in co_file */
	const char	*co_file;	/* FILE, NFSCONF: the file (kept for
					   the life of the process) */
	const char	*co_what;	/* NFSCONF: "[nlmd]", "[lockd] port",
					   "[lockd] udp-port", "[statd] port" */
};

/* Enum settings are stored as int (config.c writes them through int *). */
struct config {
	char		state_dir[4096];	/* state-directory */
	char		bind_addr[256];		/* bind-address; "" = any */
	unsigned	nlm_port;		/* nlm-port (udp+tcp) */
	unsigned	nsm_port;		/* nsm-port (udp+tcp) */
	int		rpcbind;		/* rpcbind: register or not */
	int		verbose;		/* verbose: debug level */
	int		foreground;		/* not from the file: -F */
	size_t		max_record;		/* max-record-size (bytes) */
	size_t		max_backlog;		/* max-commit-backlog (bytes) */
	unsigned	max_connections;	/* max-connections */
	unsigned	max_conns_per_addr;	/* max-connections-per-address */
	unsigned	conn_idle_sec;		/* connection-idle-timeout */
	int		callbacks;		/* enum config_callbacks */
	unsigned	cb_retry_min_ms;	/* callback-retry-min-ms */
	unsigned	cb_retry_max_ms;	/* callback-retry-max-ms */
	unsigned	cb_give_up_sec;		/* callback-give-up (0 never) */
	unsigned	cb_max_per_host;	/* callback-max-per-host */
	unsigned	max_locks_per_host;	/* max-locks-per-host */
	unsigned	max_waiters_per_host;	/* max-waiters-per-host */
	unsigned	max_waiters_per_owner;	/* max-waiters-per-owner */
	unsigned	max_locks;		/* max-locks (all hosts) */
	unsigned	max_hosts;		/* max-hosts */
	unsigned	max_hosts_per_addr;	/* max-hosts-per-address */
	unsigned	max_waiters;		/* max-waiters (all hosts) */
	unsigned	max_shares;		/* max-shares (all hosts) */
	unsigned	max_shares_per_host;	/* max-shares-per-host */
	unsigned	max_name;		/* max-name-length */
	unsigned	max_fh;			/* max-fh-length */
	unsigned	max_oh;			/* max-oh-length */
	int		durability;		/* enum config_durability */
	unsigned	grace_sec;		/* grace-period */
	int		reclaim_check;		/* enum config_reclaim */
	unsigned	checkpoint_sec;		/* checkpoint-interval */
	unsigned	store_cache_mib;	/* store-cache-mib */
	char		notify_name[256];	/* notify-name; "" = address */
	unsigned	notify_give_up_sec;	/* notify-give-up */
	unsigned	host_idle_sec;		/* host-idle */
	char		control_socket[108];	/* control-socket; "" = none */
	char		control_group[64];	/* control-group; "" = root */
	char		metrics_addr[128];	/* metrics-address; "" = off */
	char		user[256];		/* user: run as it after start (as
						   root); "" = stay */
	/* Per key, in config_keys() order. */
	struct config_origin origin[CONFIG_MAX_KEYS];
};

/* Fill `c' with the documented defaults. */
void	config_defaults(struct config *c);

/*
 * Set `key' (a name listed in config.h comments) to `value', as the
 * command line does (its origin becomes CONFIG_FROM_CMDLINE).  CM_OK, or
 * with a message in err[errlen] CM_NOTFOUND (unknown key) or CM_INVALID
 * (bad or out-of-range value).  `c' is unchanged on error.
 */
enum cm_status config_set(struct config *c, const char *key, const char *value,
	    char *err, size_t errlen);

/*
 * Read section [nlmd] of `path' into `c' (origins: CONFIG_FROM_FILE with
 * the line).  Values follow nfs.conf(5) as nfs-utils reads it: quotes
 * removed, an unquoted value ends at '#' or ';'.  A missing file is not an
 * error when `optional' is non-zero.  Keys of other sections are not
 * applied: each such section gets a warning ("path:line: ..."), one
 * '\n'-terminated line added to what warn[warnlen] holds (warn may be
 * NULL).  CM_OK, or with "path:line: reason" in err[errlen] CM_INVALID
 * (syntax, unknown key, bad value, not a file) or what opening the file
 * failed with; `c' is unchanged on error.
 */
enum cm_status config_load(struct config *c, const char *path, int optional,
	    char *warn, size_t warnlen, char *err, size_t errlen);

/*
 * The nfs.conf to read: $NLMD_NFS_CONF if set (NULL when it is empty: no
 * nfs.conf at all), else CONFIG_NFS_FILE.
 */
const char *config_nfs_path(void);

/*
 * Read nfs-utils' configuration: `path' (missing: fine), then the
 * *.conf files of `path'.d in version order, in the nfs.conf(5) format
 * (see nfsconf.h: includes are followed, other programs' sections and
 * keys are ignored).  Section [nlmd] works as in nlmd's own file (unknown keys and
 * malformed lines are errors).  [lockd] port (or, without it, [lockd]
 * udp-port: nlmd serves UDP and TCP on one port; a warning when both are
 * set and differ) becomes nlm-port, and [statd] port nsm-port, unless
 * [nlmd] sets those.  Origins: CONFIG_FROM_NFSCONF.  Warnings go to
 * warn[warnlen], one '\n'-terminated line each.  CM_OK, or a status (as
 * nfsconf_read()) with "file:line: reason" in err[errlen]; `c' is
 * unchanged on error.
 */
enum cm_status config_load_nfs(struct config *c, const char *path, char *warn,
	    size_t warnlen, char *err, size_t errlen);

/*
 * What no single key can say: settings that contradict each other
 * (callback-retry-max-ms below callback-retry-min-ms).  CM_OK, or
 * CM_INVALID with the keys and where each was set in err[errlen].  Call
 * once every source is applied.
 */
enum cm_status config_check(const struct config *c, char *err, size_t errlen);

/*
 * Copy into `c' every setting that `from' got from the command line, with
 * its origin: what a start with the same command line over the files read
 * into `c' would run with (SIGHUP rereads the files into a fresh config).
 */
void	config_keep_cmdline(struct config *c, const struct config *from);

/* Where `key' got its value; NULL for an unknown key. */
const struct config_origin *config_origin(const struct config *c,
	    const char *key);

/*
 * Where `key' got its value, for messages that name the setting to
 * change: "default", "from command line", "from FILE:LINE", "from
 * FILE:LINE [lockd] port".  Returns buf.
 */
const char *config_where(const struct config *c, const char *key, char *buf,
	    size_t len);

/*
 * Write every key with its current value, as a config file would, each
 * followed by a comment saying where the value came from ("# default",
 * "# from command line", "# from FILE:LINE", "# from FILE:LINE [lockd]
 * port"); config_load() reads the lines back.
 */
void	config_dump(const struct config *c, void (*out)(const char *line,
	    void *arg), void *arg);

/* Name of every key, NULL-terminated, for --help and getopt tables. */
const char *const *config_keys(void);

#endif
