/*
 * config.h - nlmd's settings: defaults, the config file, command-line
 * overrides.
 *
 * The file uses the INI dialect of /etc/nfs.conf ("[section]", "key =
 * value", '#' or ';' comments); nlmd reads section [nlmd].  Every key can
 * also be given on the command line as --key=value, which wins over the
 * file.  Unknown keys and bad values are errors with the file and line.
 */
#ifndef NLMD_COMMON_CONFIG_H
#define NLMD_COMMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_DEFAULT_FILE	"/etc/nlmd/nlmd.conf"
#define CONFIG_SECTION		"nlmd"

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
	unsigned	max_connections;	/* max-connections */
	unsigned	conn_idle_sec;		/* connection-idle-timeout */
	int		callbacks;		/* enum config_callbacks */
	unsigned	cb_retry_min_ms;	/* callback-retry-min-ms */
	unsigned	cb_retry_max_ms;	/* callback-retry-max-ms */
	unsigned	cb_give_up_sec;		/* callback-give-up (0 never) */
	unsigned	cb_max_per_host;	/* callback-max-per-host */
	unsigned	max_locks_per_host;	/* max-locks-per-host */
	unsigned	max_waiters_per_host;	/* max-waiters-per-host */
	unsigned	max_locks;		/* max-locks (all hosts) */
	unsigned	max_hosts;		/* max-hosts */
	unsigned	max_name;		/* max-name-length */
	unsigned	max_fh;			/* max-fh-length */
	unsigned	max_oh;			/* max-oh-length */
	int		durability;		/* enum config_durability */
	unsigned	grace_sec;		/* grace-period */
	int		reclaim_check;		/* enum config_reclaim */
	unsigned	checkpoint_sec;		/* checkpoint-interval */
	char		notify_name[256];	/* notify-name; "" = address */
	unsigned	notify_give_up_sec;	/* notify-give-up */
	unsigned	host_idle_sec;		/* host-idle */
	char		control_socket[108];	/* control-socket; "" = none */
	char		control_group[64];	/* control-group; "" = root */
	char		metrics_addr[128];	/* metrics-address; "" = off */
};

/* Fill `c' with the documented defaults. */
void	config_defaults(struct config *c);

/*
 * Set `key' (a name listed in config.h comments) to `value'.  Returns 0,
 * or -1 with a message in err[errlen] (unknown key, bad or out-of-range
 * value).  `c' is unchanged on error.
 */
int	config_set(struct config *c, const char *key, const char *value,
	    char *err, size_t errlen);

/*
 * Read section [nlmd] of `path' into `c'.  A missing file is not an error
 * when `optional' is non-zero.  Returns 0, or -1 with "path:line: reason"
 * in err[errlen].
 */
int	config_load(struct config *c, const char *path, int optional,
	    char *err, size_t errlen);

/* Write every key with its current value, as a config file would. */
void	config_dump(const struct config *c, void (*out)(const char *line,
	    void *arg), void *arg);

/* Name of every key, NULL-terminated, for --help and getopt tables. */
const char *const *config_keys(void);

#endif
