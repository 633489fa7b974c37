/*
 * nlmd.c - main() of the lock server: read the configuration, open the
 * state directory and the store, begin the epoch, wire the services to
 * the transport (the NLM service loads the stored state before any
 * listener opens) and run the loop.  No protocol logic lives here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpcout.h"
#include "config.h"
#include "ctlsrv.h"
#include "dump.h"
#include "httpmetrics.h"
#include "sbuf.h"
#include "ev.h"
#include "log.h"
#include "nlm.h"
#include "nsm.h"
#include "privdrop.h"
#include "rpcreg.h"
#include "rpcsrv.h"
#include "statedir.h"
#include "store.h"
#include "svcmgr.h"

#define NLM_PROGRAM	100021
#define NSM_PROGRAM	100024

struct nlmd {
	struct config	 conf;
	const char	*cfile;		/* configuration file */
	int		 cfile_optional;
	int		 cli_verbose;	/* -d given: keep it over reloads */
	struct ev_loop	*loop;
	struct onc_srv	*srv;
	struct onc_out	*clnt;
	struct store	*store;
	uint64_t	 epoch;
	int		 sigfd;
	int		 lockfd;
	unsigned	 nlm_port;
	unsigned	 nsm_port;
	int		 registered;
	struct svcmgr	*mgr;		/* systemd notification; NULL: none */
	int		 drop;		/* root, `user' set: drop after start */
	uid_t		 run_uid;	/* `user' */
	gid_t		 run_gid;	/* its primary group */
	char		 conf_warn[1024]; /* from reading the files; logged */
	struct ctl_srv	*ctl;
	struct http_metrics *http;
	long		 ctl_gid;	/* control-group's (-1: root only) */
	int		 readyfd;	/* background: tell the parent (-1) */
};

static void
usage(FILE *f)
{
	const char *const *k;

	fprintf(f, "usage: nlmd [-Fdh] [-c file] [-s state-dir] [-p nlm-port] "
	    "[--no-rpcbind] [--KEY=VALUE ...]\n"
	    "  -F, --foreground     stay in the foreground, log to stderr\n"
	    "  -d, --debug          more logging (repeat for more)\n"
	    "  -c, --config FILE    configuration (default %s)\n"
	    "  -s, --state-directory DIR\n"
	    "                       state directory\n"
	    "  -p, --port PORT      NLM port (udp and tcp)\n"
	    "      --no-rpcbind     do not register with rpcbind\n"
	    "      --print-config   print the effective configuration, exit\n"
	    "      --dump-state     print what the state directory holds "
	    "(the daemon must\n"
	    "                       not be running), exit\n"
	    "Settings, highest first: options, the file, %s ([nlmd], "
	    "[lockd] port,\n"
	    "[statd] port; $%s names another, empty: none), built-in.\n"
	    "Every setting of section [nlmd] of the configuration file can be "
	    "given as --KEY=VALUE:\n ", CONFIG_DEFAULT_FILE, CONFIG_NFS_FILE,
	    CONFIG_NFS_ENV);
	for (k = config_keys(); *k != NULL; k++)
		fprintf(f, " %s", *k);
	fprintf(f, "\n");
}

/*
 * The configuration files, lowest precedence first: the built-in
 * defaults, nfs-utils' nfs.conf ([nlmd], and [lockd] and [statd] for the
 * ports; $NLMD_NFS_CONF names another file, or none when empty), nlmd's
 * own file.  The command line comes on top (parse_args).
 */
static enum cm_status
load_config_files(struct config *c, const char *cfile, int optional,
    char *warn, size_t warnlen, char *err, size_t errlen)
{
	const char *nfs = config_nfs_path();
	enum cm_status s;

	config_defaults(c);
	warn[0] = '\0';
	if (nfs != NULL && (s = config_load_nfs(c, nfs, warn, warnlen, err,
	    errlen)) != CM_OK)
		return s;
	return config_load(c, cfile, optional, warn, warnlen, err, errlen);
}

/* Each '\n'-terminated line of `warn' as a warning (log or stderr). */
static void
log_config_warnings(const char *warn, int to_stderr)
{
	const char *p, *e;

	for (p = warn; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		e = p + strcspn(p, "\n");
		if (to_stderr)
			fprintf(stderr, "nlmd: warning: %.*s\n", (int)(e - p), p);
		else
			log_warnx("%.*s", (int)(e - p), p);
	}
}

static void
print_line(const char *line, void *arg)
{
	fprintf(arg, "%s\n", line);
}

/* Two passes: -c first (the file), then every flag over it. */
static void
parse_args(struct nlmd *d, int argc, char **argv)
{
	static const char shortopts[] = "Fdhc:s:p:";
	static char cfile_abs[PATH_MAX];
	struct option opts[64];
	const char *const *k;
	const char *cfile = CONFIG_DEFAULT_FILE;
	int optional = 1, n = 0, c, idx, print = 0, dump = 0;
	char err[512];

	memset(opts, 0, sizeof(opts));
	opts[n++] = (struct option){ "foreground", no_argument, NULL, 'F' };
	opts[n++] = (struct option){ "debug", no_argument, NULL, 'd' };
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[n++] = (struct option){ "config", required_argument, NULL, 'c' };
	opts[n++] = (struct option){ "port", required_argument, NULL, 'p' };
	opts[n++] = (struct option){ "no-rpcbind", no_argument, NULL, 'R' };
	opts[n++] = (struct option){ "print-config", no_argument, NULL, 'P' };
	opts[n++] = (struct option){ "dump-state", no_argument, NULL, 'D' };
	for (k = config_keys(); *k != NULL && n < 62; k++)
		opts[n++] = (struct option){ *k, required_argument, NULL, 0 };
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1)
		if (c == 'c') {
			cfile = optarg;
			optional = 0;
		} else if (c == 'h') {
			/* Before the files: help whatever they say. */
			usage(stdout);
			exit(0);
		} else if (c == '?') {
			usage(stderr);
			exit(2);
		}
	if (load_config_files(&d->conf, cfile, optional, d->conf_warn,
	    sizeof(d->conf_warn), err, sizeof(err)) != CM_OK) {
		fprintf(stderr, "nlmd: %s\n", err);
		exit(2);
	}
	/* SIGHUP rereads it after daemonize() moved to /: no relative name. */
	if (cfile[0] != '/') {
		if (realpath(cfile, cfile_abs) == NULL) {
			fprintf(stderr, "nlmd: %s: %s\n", cfile,
			    strerror(errno));
			exit(2);
		}
		cfile = cfile_abs;
	}
	d->cfile = cfile;
	d->cfile_optional = optional;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, opts, &idx)) != -1) {
		const char *key = NULL, *val = optarg;
		char level[16];

		switch (c) {
		case 'F': d->conf.foreground = 1; break;
		case 'd':
			/* A setting of verbose: --print-config says so. */
			snprintf(level, sizeof(level), "%d",
			    d->conf.verbose < 9 ? d->conf.verbose + 1 : 9);
			key = "verbose";
			val = level;
			d->cli_verbose = 1;
			break;
		case 'h': usage(stdout); exit(0);
		case 'c': break;
		case 's': key = "state-directory"; break;
		case 'p': key = "nlm-port"; break;
		case 'R': key = "rpcbind"; val = "no"; break;
		case 'P': print = 1; break;
		case 'D': dump = 1; break;
		case 0:
			key = opts[idx].name;
			/* The command line wins over the file after SIGHUP too. */
			if (strcmp(key, "verbose") == 0)
				d->cli_verbose = 1;
			break;
		default: usage(stderr); exit(2);
		}
		if (key != NULL &&
		    config_set(&d->conf, key, val, err, sizeof(err)) != CM_OK) {
			fprintf(stderr, "nlmd: %s\n", err);
			exit(2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
	if (config_check(&d->conf, err, sizeof(err)) != CM_OK) {
		fprintf(stderr, "nlmd: %s\n", err);
		exit(2);
	}
	if (print) {
		log_config_warnings(d->conf_warn, 1);
		config_dump(&d->conf, print_line, stdout);
		/* Not all written (a full disk, a closed pipe): no success. */
		if (fflush(stdout) == EOF || ferror(stdout)) {
			fprintf(stderr, "nlmd: writing the configuration: "
			    "%s\n", strerror(errno));
			exit(1);
		}
		exit(0);
	}
	if (dump)
		exit(dump_state(&d->conf, stdout) == 0 ? 0 : 1);
}

/*
 * SIGHUP: read the configuration file again.  The log level applies at
 * once (unless -d fixed it); settings that shape sockets, the lock table
 * or the state directory take effect at the next start.
 */
static void
reload(struct nlmd *d)
{
	struct config c;
	char err[512], warn[1024];

	if (load_config_files(&c, d->cfile, d->cfile_optional, warn,
	    sizeof(warn), err, sizeof(err)) != CM_OK) {
		log_warnx("SIGHUP: %s; keeping the running configuration", err);
		return;
	}
	log_config_warnings(warn, 0);
	/*
	 * The command line still wins over the files: check what the next
	 * start would run with, not the files alone (a --callback-retry-min-ms
	 * under the file's maximum was refused against the default minimum).
	 */
	config_keep_cmdline(&c, &d->conf);
	/* A file the next start would refuse applies in no part now. */
	if (config_check(&c, err, sizeof(err)) != CM_OK) {
		log_warnx("SIGHUP: %s: the next start will refuse it; keeping "
		    "the running configuration (verbose = %d)", err,
		    d->conf.verbose);
		return;
	}
	if (!d->cli_verbose) {
		log_setverbose(c.verbose);
		d->conf.verbose = c.verbose;
	}
	log_info("SIGHUP: %s reread: verbose = %d now; other settings at "
	    "the next start", d->cfile, d->conf.verbose);
}

static void
on_signal(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct signalfd_siginfo si;

	(void)events;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(arg);
			continue;
		}
		log_info("signal %u: shutting down", si.ssi_signo);
		ev_stop(loop);
	}
}

/* The end of every turn: commit, then let the turn's messages out. */
static void
before_sleep(struct ev_loop *loop, void *arg)
{
	struct nlmd *d = arg;

	(void)loop;
	nlm_turn_end(d->srv);
	svcmgr_turn(d->mgr);
}

static void
nlm_config_from(const struct config *c, struct nlm_config *nc)
{
	memset(nc, 0, sizeof(*nc));
	nc->nc_max_name = c->max_name;
	nc->nc_max_fh = c->max_fh;
	nc->nc_max_oh = c->max_oh;
	nc->nc_max_hosts = c->max_hosts;
	nc->nc_cbmode = (enum nlm_cbmode)c->callbacks;
	nc->nc_cb_retry_min_ms = c->cb_retry_min_ms;
	nc->nc_cb_retry_max_ms = c->cb_retry_max_ms;
	nc->nc_cb_give_up_sec = c->cb_give_up_sec;
	nc->nc_cb_max_per_host = c->cb_max_per_host;
	nc->nc_max_locks = c->max_locks;
	nc->nc_max_locks_per_host = c->max_locks_per_host;
	nc->nc_max_waiters_per_host = c->max_waiters_per_host;
	nc->nc_max_waiters_per_owner = c->max_waiters_per_owner;
	nc->nc_max_waiters = c->max_waiters;
	nc->nc_max_shares = c->max_shares;
	nc->nc_max_shares_per_host = c->max_shares_per_host;
	nc->nc_max_hosts_per_addr = c->max_hosts_per_addr;
	nc->nc_grace_sec = c->grace_sec;
	snprintf(nc->nc_notify_name, sizeof(nc->nc_notify_name), "%s",
	    c->notify_name);
	nc->nc_notify_give_up_sec = c->notify_give_up_sec;
	nc->nc_host_idle_sec = c->host_idle_sec;
	switch (c->reclaim_check) {
	case CONFIG_RECLAIM_STRICT:
		nc->nc_reclaim_check = LK_RECLAIM_STRICT;
		break;
	case CONFIG_RECLAIM_OFF:
		nc->nc_reclaim_check = LK_RECLAIM_OFF;
		break;
	default:
		nc->nc_reclaim_check = LK_RECLAIM_CONFLICT;
		break;
	}
}

static const char *
durability_name(int d)
{
	return d == CONFIG_DURABILITY_LOG ? "log" :
	    d == CONFIG_DURABILITY_NONE ? "none" : "sync";
}

/*
 * The room the store's log may need beyond what it holds: its next 16 MiB
 * file while the current one is still kept (README, "The state
 * directory").
 */
#define STORE_ROOM_MIB	32

/*
 * Less room than that left where the store lives: said at start, where
 * it can still be made, rather than only when the file system fills and
 * nlmd stops.
 */
static void
check_store_room(const char *dir)
{
	struct statvfs sv;
	unsigned long long mib;

	if (statvfs(dir, &sv) == -1 || sv.f_blocks == 0)
		return;
	mib = (unsigned long long)sv.f_bavail * sv.f_frsize >> 20;
	if (mib < STORE_ROOM_MIB)
		log_warnx("state directory %s: %llu MiB free on its file "
		    "system, less than the %u MiB the store's log may need "
		    "(16 MiB files, two at times): when it fills, nlmd stops "
		    "(see README, \"The state directory\")", dir, mib,
		    STORE_ROOM_MIB);
}

/*
 * Berkeley DB maps its region files (__db.*) from the state directory.  A
 * page of one that the file system cannot back -- a hole, the file
 * system full -- is a SIGBUS at its first touch, and nlmd died without a
 * word (exit status 135).  The store allocates what it knows to grow
 * (store_regions_reserve()); should another SIGBUS come, it is said
 * before the signal takes its course (the default action, re-raised:
 * the status and any core stay as they were).  Only write(2) here; the
 * message is made beforehand.  With the log on syslog (no -F), stderr
 * may lead nowhere.
 */
static char	sigbus_msg[PATH_MAX + 256];
static size_t	sigbus_len;

static void
on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (write(STDERR_FILENO, sigbus_msg, sigbus_len) == -1)
		sigbus_len = 0;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
setup_sigbus(const char *dir)
{
	struct sigaction sa;
	int n;

	n = snprintf(sigbus_msg, sizeof(sigbus_msg), "nlmd: SIGBUS: a page "
	    "of a mapped file could not be had -- is the file system of "
	    "the state directory %s full? (Berkeley DB maps its __db.* "
	    "files there); nlmd stops, the store recovers at the next "
	    "start\n", dir);
	sigbus_len = n < 0 ? 0 : (size_t)n < sizeof(sigbus_msg) ?
	    (size_t)n : sizeof(sigbus_msg) - 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) == -1)
		log_warn("sigaction SIGBUS");
}

/*
 * Open the store (recovering it), then begin this start's epoch (the NSM
 * state number follows from it).  Anything wrong here is fatal: nlmd
 * never serves without its state.
 */
static void
setup_store(struct nlmd *d)
{
	struct store_config sc;
	struct store_info si;
	char err[2048];

	setup_sigbus(d->conf.state_dir);
	memset(&sc, 0, sizeof(sc));
	sc.sc_dir = d->conf.state_dir;
	sc.sc_durability = d->conf.durability == CONFIG_DURABILITY_LOG ?
	    STORE_LOG : d->conf.durability == CONFIG_DURABILITY_NONE ?
	    STORE_NONE : STORE_SYNC;
	sc.sc_checkpoint_sec = d->conf.checkpoint_sec;
	sc.sc_cache_bytes = (size_t)d->conf.store_cache_mib << 20;
	if (store_open(&sc, &d->store, err, sizeof(err)) != STORE_OK)
		fatalx("store in %s: %s", d->conf.state_dir, err);
	if (nsm_init(d->conf.state_dir, d->store, &d->epoch, err,
	    sizeof(err)) == -1)
		fatalx("%s", err);
	store_info(d->store, &si);
	log_info("store %s: %s, opened and recovered in %llu ms (environment "
	    "and recovery %llu ms, journal fold %llu ms); epoch %llu",
	    d->conf.state_dir, si.si_created ? "created" : "found",
	    (unsigned long long)si.si_open_ms,
	    (unsigned long long)si.si_recover_ms,
	    (unsigned long long)si.si_fold_ms, (unsigned long long)d->epoch);
	check_store_room(d->conf.state_dir);
}

/*
 * Descriptors nlmd needs besides its TCP connections: listeners, the
 * store's files and logs, outgoing-call sockets, the control socket and
 * its 16 clients, the metrics endpoint and its 16, epoll, signalfd.
 */
#define NOFILE_RESERVE	256

/*
 * Every TCP connection is a descriptor.  Raise the soft limit on open
 * files (often 1,024) to max-connections plus NOFILE_RESERVE, as far as
 * the hard limit allows; short of that, say so: past the limit clients
 * wait in the backlog while accepting pauses (rpc/srv_tcp.c), and the
 * store may find no descriptor for its next log file.
 */
static void
setup_nofile(const struct nlmd *d)
{
	rlim_t need = (rlim_t)d->conf.max_connections + NOFILE_RESERVE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_warn("getrlimit");
		return;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ?
	    rl.rlim_max : need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_warn("setrlimit");
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need)
		log_warnx("open files limited to %llu: under max-connections "
		    "(%u) plus %u for the rest; raise the limit (LimitNOFILE=, "
		    "ulimit -n) or lower max-connections",
		    (unsigned long long)rl.rlim_cur,
		    d->conf.max_connections, NOFILE_RESERVE);
}

/*
 * SIGHUP is held from the first instruction: one that came while the
 * store loads (a million locks take a second) or the sockets open took
 * the default action and ended nlmd.  The signalfd reports it once the
 * loop runs, which then rereads the files.  SIGTERM and SIGINT keep
 * their default action until then: stopping a start half done is a
 * crash the store recovers from, and an operator's ^C works at once.
 */
static void
block_sighup(void)
{
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) == -1)
		fatal("sigprocmask");
}

static void
setup_signals(struct nlmd *d)
{
	sigset_t ss;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) == -1 ||
	    (d->sigfd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("signalfd");
	if (ev_fd_add(d->loop, d->sigfd, EV_READ, on_signal, d) == -1)
		fatal("event loop");
}

static void
setup_network(struct nlmd *d)
{
	const struct nlm_counters *ct;
	struct onc_srv_limits lim;
	struct nlm_config nc;
	struct store_info si;
	enum onc_status s;
	char err[2048], where[4200];
	uint64_t t0;

	memset(&lim, 0, sizeof(lim));
	lim.max_record = d->conf.max_record;
	/*
	 * A connection's queue holds twice the backlog at least: reading
	 * stops before the server's own delay could fill it (rpcsrv.h).
	 */
	lim.max_held = d->conf.max_backlog;
	lim.max_outq = 2 * d->conf.max_backlog > 4 * 1024 * 1024 ?
	    2 * d->conf.max_backlog : 4 * 1024 * 1024;
	lim.max_conns = d->conf.max_connections;
	lim.max_conns_per_addr = d->conf.max_conns_per_addr;
	lim.idle_sec = d->conf.conn_idle_sec;
	if ((d->srv = onc_srv_new(d->loop, &lim)) == NULL)
		fatalx("out of memory");
	if ((d->clnt = onc_out_new(d->loop, 0, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	nlm_config_from(&d->conf, &nc);
	nc.nc_epoch = d->epoch;
	nc.nc_nsm_state = nsm_state();
	/* No client may guess where its handles land in our hash tables. */
	if (getrandom(nc.nc_hash_key, sizeof(nc.nc_hash_key), 0) !=
	    (ssize_t)sizeof(nc.nc_hash_key))
		fatal("getrandom");
	t0 = ev_now_ms();
	if (nlm_init(d->loop, d->clnt, d->store, &nc, err, sizeof(err)) == -1)
		fatalx("%s", err);
	ct = nlm_get_counters();
	log_info("loaded %llu hosts, %llu locks, %llu shares in %llu ms",
	    (unsigned long long)ct->loaded_hosts,
	    (unsigned long long)ct->loaded_locks,
	    (unsigned long long)ct->loaded_shares,
	    (unsigned long long)(ev_now_ms() - t0));
	/*
	 * Records an older nlmd wrote load without their check until they
	 * are rewritten: all of them now, behind the serving.
	 */
	store_info(d->store, &si);
	if (si.si_locks_v1 > 0) {
		log_info("store: %llu lock records of version 1 (without the "
		    "check that refuses a damaged one): rewriting them as "
		    "version 2 in the background",
		    (unsigned long long)si.si_locks_v1);
		store_locks_upgrade(d->store);
	}
	if ((s = nlm_register(d->srv)) != ONC_OK ||
	    (s = nsm_register(d->srv)) != ONC_OK)
		fatalx("cannot add programs: %s", onc_strerror(s));
	/*
	 * Say where the port was set: one from nfs.conf's [lockd] port, or
	 * from the command line, is not in the file the message sent the
	 * operator to.
	 */
	if ((s = onc_srv_listen(d->srv, d->conf.bind_addr, d->conf.nlm_port,
	    &d->nlm_port, err, sizeof(err))) == ONC_BADADDR)
		fatalx("bind-address %s: %s", config_where(&d->conf,
		    "bind-address", where, sizeof(where)), err);
	if (s != ONC_OK)
		fatalx("NLM listener: %s (port %u, nlm-port %s: choose another "
		    "with nlm-port in %s or --nlm-port)", err, d->conf.nlm_port,
		    config_where(&d->conf, "nlm-port", where, sizeof(where)),
		    d->cfile);
	if (d->conf.nsm_port != d->conf.nlm_port || d->conf.nsm_port == 0) {
		if (onc_srv_listen(d->srv, d->conf.bind_addr, d->conf.nsm_port,
		    &d->nsm_port, err, sizeof(err)) != ONC_OK)
			fatalx("NSM listener: %s (port %u, nsm-port %s: choose "
			    "another with nsm-port in %s or --nsm-port)", err,
			    d->conf.nsm_port, config_where(&d->conf, "nsm-port",
			    where, sizeof(where)), d->cfile);
	} else
		d->nsm_port = d->nlm_port;
}

static void
rpcbind_unset_all(void)
{
	onc_rpcb_unset(NLM_PROGRAM, 1);
	onc_rpcb_unset(NLM_PROGRAM, 3);
	onc_rpcb_unset(NLM_PROGRAM, 4);
	onc_rpcb_unset(NSM_PROGRAM, 1);
}

static void
rpcbind_register(struct nlmd *d)
{
	static const uint32_t vers[] = { 1, 3, 4 };
	int v4 = onc_srv_has_family(d->srv, AF_INET);
	int v6 = onc_srv_has_family(d->srv, AF_INET6);
	char err[512];
	size_t i;

	if (!d->conf.rpcbind)
		return;
	for (i = 0; i < 3; i++)
		if (onc_rpcb_set(NLM_PROGRAM, vers[i], d->nlm_port, v4, v6, err,
		    sizeof(err)) != ONC_OK)
			goto fail;
	if (onc_rpcb_set(NSM_PROGRAM, 1, d->nsm_port, v4, v6, err,
	    sizeof(err)) != ONC_OK)
		goto fail;
	d->registered = 1;
	return;
fail:
	rpcbind_unset_all();
	fatalx("%s", err);
}

/*
 * `user' set: look it up now, so that a missing user stops nlmd before it
 * touches anything, and decide whether to drop to it.  Only root can; a
 * process that already runs as that user (systemd's User=) has nothing to
 * do.
 */
static void
setup_user(struct nlmd *d)
{
	char err[512];

	if (d->conf.user[0] == '\0')
		return;
	if (priv_user_lookup(d->conf.user, &d->run_uid, &d->run_gid, err,
	    sizeof(err)) != CM_OK)
		fatalx("%s", err);
	if (geteuid() == d->run_uid)
		return;
	if (geteuid() != 0)
		fatalx("user = %s: nlmd runs as uid %u, not as root, and cannot "
		    "become uid %u", d->conf.user, (unsigned)geteuid(),
		    (unsigned)d->run_uid);
	d->drop = 1;
}

/*
 * Started as root with `user' set, once the sockets are bound and the
 * store is open: give the state directory to the user and become it for
 * good.  Registering with rpcbind comes after: rpcbind lets only the owner
 * of a registration (or root) remove it, and the owner is whoever
 * registered through its local socket, so registrations made as root
 * could not be removed at exit.  What an earlier process registered is
 * removed here, while we are still root.  Files the store creates after
 * the chown are created by the user; one a store thread created in
 * between is already open, and the next start (as root) chowns it.
 */
static void
drop_privileges(struct nlmd *d)
{
	char err[512];

	if (!d->drop)
		return;
	if (d->conf.rpcbind)
		rpcbind_unset_all();
	if (statedir_chown(d->conf.state_dir, d->run_uid, d->run_gid, err,
	    sizeof(err)) != CM_OK)
		fatalx("%s (needed to run as user %s)", err, d->conf.user);
	if (priv_drop(d->run_uid, d->run_gid, err, sizeof(err)) != CM_OK)
		fatalx("dropping privileges to user %s: %s", d->conf.user, err);
	log_info("running as user %s (uid %u, gid %u)", d->conf.user,
	    (unsigned)d->run_uid, (unsigned)d->run_gid);
}

/* The whole exposition: the NLM service's and the status monitor's. */
static void
metrics_text(struct sbuf *sb, void *arg)
{
	const struct nlmd *d = arg;
	const struct onc_srv_stats *rs = onc_srv_stats(d->srv);

	nlm_metrics(sb);
	nsm_metrics(sb);
	sbuf_printf(sb, "# HELP nlmd_rpc_messages_total RPC messages the "
	    "transport received, by outcome.\n"
	    "# TYPE nlmd_rpc_messages_total counter\n"
	    "nlmd_rpc_messages_total{outcome=\"dispatched\"} %llu\n"
	    "nlmd_rpc_messages_total{outcome=\"garbage\"} %llu\n"
	    "nlmd_rpc_messages_total{outcome=\"no_program\"} %llu\n"
	    "nlmd_rpc_messages_total{outcome=\"bad_auth\"} %llu\n"
	    "# HELP nlmd_tcp_connections Open TCP connections.\n"
	    "# TYPE nlmd_tcp_connections gauge\n"
	    "nlmd_tcp_connections %llu\n"
	    "# HELP nlmd_tcp_connections_total TCP connections, by what became "
	    "of them.\n"
	    "# TYPE nlmd_tcp_connections_total counter\n"
	    "nlmd_tcp_connections_total{event=\"accepted\"} %llu\n"
	    "nlmd_tcp_connections_total{event=\"refused\"} %llu\n"
	    "nlmd_tcp_connections_total{event=\"closed_oversize\"} %llu\n"
	    "nlmd_tcp_connections_total{event=\"closed_slow\"} %llu\n"
	    "nlmd_tcp_connections_total{event=\"closed_idle\"} %llu\n"
	    "# HELP nlmd_accept_paused_total Times a listener stopped "
	    "accepting for 100 ms: no descriptor, memory or epoll watch "
	    "left.\n"
	    "# TYPE nlmd_accept_paused_total counter\n"
	    "nlmd_accept_paused_total{socket=\"tcp\"} %llu\n"
	    "nlmd_accept_paused_total{socket=\"control\"} %llu\n"
	    "# HELP nlmd_udp_replies_lost_total UDP replies not sent: the "
	    "kernel refused them, or the socket buffer was full.\n"
	    "# TYPE nlmd_udp_replies_lost_total counter\n"
	    "nlmd_udp_replies_lost_total{reason=\"refused\"} %llu\n"
	    "nlmd_udp_replies_lost_total{reason=\"buffer_full\"} %llu\n"
	    "# HELP nlmd_replies_held_bytes Reply bytes waiting for the "
	    "commit of their turn.\n"
	    "# TYPE nlmd_replies_held_bytes gauge\n"
	    "nlmd_replies_held_bytes %llu\n"
	    "# HELP nlmd_input_paused_total Times nlmd stopped reading "
	    "requests: more reply bytes than it holds waited for commits.\n"
	    "# TYPE nlmd_input_paused_total counter\n"
	    "nlmd_input_paused_total %llu\n"
	    "# HELP nlmd_input_paused_seconds_total Time spent not reading "
	    "requests for that reason.\n"
	    "# TYPE nlmd_input_paused_seconds_total counter\n"
	    "nlmd_input_paused_seconds_total %.3f\n",
	    (unsigned long long)rs->calls, (unsigned long long)rs->garbage,
	    (unsigned long long)rs->noprog, (unsigned long long)rs->badauth,
	    (unsigned long long)rs->conns_open,
	    (unsigned long long)rs->conns_total,
	    (unsigned long long)rs->conns_refused,
	    (unsigned long long)rs->oversize,
	    (unsigned long long)rs->conns_slow,
	    (unsigned long long)rs->conns_idle,
	    (unsigned long long)rs->accept_paused,
	    (unsigned long long)ctl_srv_accept_paused(d->ctl),
	    (unsigned long long)rs->udp_send_fail,
	    (unsigned long long)rs->udp_send_full,
	    (unsigned long long)rs->held,
	    (unsigned long long)rs->input_paused,
	    (double)(rs->input_paused_ms + nlm_input_paused_ms()) / 1000);
}

/* `metrics' on the control socket: the same text, line by line. */
static void
ctl_metrics(struct ctl_conn *c, const struct ctl_req *rq, void *arg)
{
	struct sbuf sb;
	char *line, *save = NULL;

	(void)rq;
	memset(&sb, 0, sizeof(sb));
	metrics_text(&sb, arg);
	if (sb.sb_failed || sb.sb_buf == NULL) {
		ctl_error(c, "out of memory");
		sbuf_free(&sb);
		return;
	}
	for (line = strtok_r(sb.sb_buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		ctl_raw(c, "%s", line);
	sbuf_free(&sb);
}

/*
 * The operator's control socket (nlmctl).  Opened after the listeners,
 * before the loop runs; an empty control-socket setting means none.
 */
/*
 * Settings only the system can judge (a group's name, an address's
 * form), before anything changes: a start refused for them must not
 * cost an epoch (the store opens after this).
 */
/*
 * Before anything is opened: another lock manager or status monitor
 * registered with rpcbind that answers (the kernel's lockd or rpc.statd
 * of an NFS client on this host, Ganesha's rpc.statd, another nlmd) would
 * lose its registration to ours -- as root nlmd removes what is registered
 * before it registers -- and keep none after we stop.  Refuse instead.
 * One nobody answers (its server gone, an nlmd killed with -9) is ours to
 * replace, as is one at our own fixed port.
 */
/*
 * Who else registers nlockmgr.  Beside NFS-Ganesha the likeliest is
 * Ganesha's own NLM (on by default; Debian's package starts Ganesha at
 * boot): the message named only the kernel's lockd.
 */
#define NLM_SUSPECTS	"the kernel's lockd, NFS-Ganesha's own NLM " \
	"(Enable_NLM = false in NFS_CORE_PARAM turns it off)"

static void
check_registrations(struct nlmd *d)
{
	static const struct {
		uint32_t	 prog, vers;
		const char	*name, *who;
	} progs[] = {
		{ NLM_PROGRAM, 4, "nlockmgr", NLM_SUSPECTS },
		{ NLM_PROGRAM, 3, "nlockmgr", NLM_SUSPECTS },
		{ NLM_PROGRAM, 1, "nlockmgr", NLM_SUSPECTS },
		{ NSM_PROGRAM, 1, "status", "rpc.statd" },
	};
	char where[64];
	size_t i;

	if (!d->conf.rpcbind)
		return;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (onc_rpcb_live(progs[i].prog, progs[i].vers,
		    progs[i].prog == NLM_PROGRAM ? d->conf.nlm_port :
		    d->conf.nsm_port, where, sizeof(where)))
			fatalx("%s (%u v%u) is registered with rpcbind by a "
			    "server that answers (%s): %s, or another nlmd? "
			    "nlmd would take its registration over; stop it "
			    "first (see rpcinfo -p), or run with --rpcbind=no",
			    progs[i].name, progs[i].prog, progs[i].vers, where,
			    progs[i].who);
}

static void
check_settings(struct nlmd *d)
{
	char err[512];
	gid_t gid;

	d->ctl_gid = -1;
	if (d->conf.control_socket[0] != '\0' &&
	    d->conf.control_group[0] != '\0') {
		if (priv_group_lookup(d->conf.control_group, &gid, err,
		    sizeof(err)) != CM_OK)
			fatalx("control-group: %s", err);
		d->ctl_gid = (long)gid;
	}
	if (d->conf.metrics_addr[0] != '\0' &&
	    http_metrics_check(d->conf.metrics_addr, err, sizeof(err)) == -1)
		fatalx("%s", err);
	check_registrations(d);
}

/*
 * Into the background as daemon(3) does (a child in a new session, in /,
 * standard descriptors on /dev/null), except that the caller waits: it
 * exits 0 once the child is ready (daemon_ready()), or with the child's
 * status when the child ends before that -- an nlmd that did not start
 * is not a success (its reason is in the system log).
 */
static void
daemonize(struct nlmd *d)
{
	int p[2], fd, status;
	pid_t pid;
	ssize_t n;
	char c;

	if (pipe2(p, O_CLOEXEC) == -1)
		fatal("pipe");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid > 0) {
		close(p[1]);
		while ((n = read(p[0], &c, 1)) == -1 && errno == EINTR)
			continue;
		if (n == 1)
			_exit(0);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			continue;
		fprintf(stderr, "nlmd: did not start in the background "
		    "(exit status %d): see the system log, or run with -F\n",
		    WIFEXITED(status) ? WEXITSTATUS(status) : 128 +
		    WTERMSIG(status));
		_exit(WIFEXITED(status) && WEXITSTATUS(status) != 0 ?
		    WEXITSTATUS(status) : 1);
	}
	close(p[0]);
	d->readyfd = p[1];
	log_init("nlmd", 0, d->conf.verbose);
	if (setsid() == -1)
		fatal("setsid");
	if (chdir("/") == -1)
		fatal("chdir /");
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		fatal("/dev/null");
	if (dup2(fd, STDIN_FILENO) == -1 || dup2(fd, STDOUT_FILENO) == -1 ||
	    dup2(fd, STDERR_FILENO) == -1)
		fatal("dup2");
	if (fd > STDERR_FILENO)
		close(fd);
}

/* Serving: the caller of a background start may go. */
static void
daemon_ready(struct nlmd *d)
{
	if (d->readyfd == -1)
		return;
	if (write(d->readyfd, "r", 1) != 1)
		log_warn("telling the starting process we are ready");
	close(d->readyfd);
	d->readyfd = -1;
}

static void
setup_control(struct nlmd *d)
{
	char err[512];
	long gid = d->ctl_gid;

	if (d->conf.control_socket[0] == '\0')
		return;
	if ((d->ctl = ctl_srv_new(d->loop, d->conf.control_socket, gid, err,
	    sizeof(err))) == NULL)
		fatalx("%s (set control-socket, or --control-socket, to "
		    "another path, or to nothing for none)", err);
	if (nlm_ctl_register(d->ctl, durability_name(d->conf.durability)) ==
	    -1 || ctl_srv_command(d->ctl, "metrics", NULL, NULL, ctl_metrics,
	    d) == -1)
		fatalx("out of memory");
}

/* GET /metrics over HTTP, when metrics-address is set. */
static void
setup_metrics(struct nlmd *d)
{
	char err[512];

	if (d->conf.metrics_addr[0] == '\0')
		return;
	if ((d->http = http_metrics_new(d->loop, d->conf.metrics_addr,
	    metrics_text, d, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	/* The port listened on: with port 0 the kernel chose it. */
	log_info("metrics at http://%.*s:%u/metrics",
	    (int)(strrchr(d->conf.metrics_addr, ':') - d->conf.metrics_addr),
	    d->conf.metrics_addr, http_metrics_port(d->http));
}

static void
log_store_stats(const struct store *st)
{
	uint64_t h[EV_TURN_BUCKETS + 1], n = 0, over1 = 0, over10 = 0;
	struct store_info si;
	unsigned i;

	store_info(st, &si);
	log_info("store: %llu commits, %llu flushed to disk, %llu records "
	    "written, %llu deleted, %llu checkpoints",
	    (unsigned long long)si.si_commits,
	    (unsigned long long)si.si_flushes, (unsigned long long)si.si_puts,
	    (unsigned long long)si.si_dels,
	    (unsigned long long)si.si_checkpoints);
	if (si.si_locks_v1 > 0)
		log_info("store: %llu of %llu lock records of version 1 "
		    "rewritten as version 2%s",
		    (unsigned long long)si.si_locks_upgraded,
		    (unsigned long long)si.si_locks_v1, si.si_upgrading ?
		    " so far; the next start rewrites the rest" : "");
	(void)ev_turn_hist(h);
	for (i = 0; i <= EV_TURN_BUCKETS; i++) {
		n += h[i];
		if (i == EV_TURN_BUCKETS || ev_turn_bounds_us[i] >= 2500)
			over1 += h[i];
		if (i == EV_TURN_BUCKETS || ev_turn_bounds_us[i] >= 25000)
			over10 += h[i];
	}
	log_info("longest loop turn: %.3f ms; %llu turns, %llu over 1 ms, "
	    "%llu over 10 ms", (double)ev_turn_max_us() / 1000,
	    (unsigned long long)n, (unsigned long long)over1,
	    (unsigned long long)over10);
}

/*
 * An existing state directory is taken as it is; one that others may
 * write is said so: whoever can write it can change the locks and hosts
 * nlmd restores at its next start (as root, before any privilege drop).
 */
static void
state_dir_check_mode(const struct nlmd *d)
{
	struct stat sb;

	if (stat(d->conf.state_dir, &sb) == 0 &&
	    (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		log_warnx("state directory %s is writable by %s (mode %04o): "
		    "whoever can write it can change what nlmd restores at "
		    "its next start; chmod go-w it", d->conf.state_dir,
		    (sb.st_mode & S_IWOTH) != 0 ? "everybody" : "its group",
		    (unsigned)(sb.st_mode & 07777));
}

/* The state directory exists (statedir_lock made it): its full name. */
static void
state_dir_absolute(struct nlmd *d)
{
	char *abs;

	if ((abs = realpath(d->conf.state_dir, NULL)) == NULL)
		fatal("state directory %s", d->conf.state_dir);
	if (strlen(abs) >= sizeof(d->conf.state_dir))
		fatalx("state directory %s: full name too long", abs);
	memcpy(d->conf.state_dir, abs, strlen(abs) + 1);
	free(abs);
}

/*
 * Started as root to drop to `user', nlmd gives the state directory and
 * everything directly in it to the user (drop_privileges()).  Named by
 * mistake (-s /var/lib), that gave away other programs' files and
 * directories: refuse a directory that holds anything not nlmd's, before
 * the lock file or the store is put in it.
 */
static void
state_dir_check_own(const struct nlmd *d)
{
	char err[4400];

	if (d->drop && statedir_check_own(d->conf.state_dir, err,
	    sizeof(err)) != CM_OK)
		fatalx("state directory: %s; nlmd would give it to user %s "
		    "with the directory: name a directory of nlmd's own "
		    "(state-directory)", err, d->conf.user);
}

/*
 * Started as root to drop to `user': after the drop the store opens files
 * in the state directory by name (a log file, a database), so the user
 * must get through every directory above it.  Under one it could not,
 * nlmd served and then stopped at its first commit, Berkeley DB saying
 * only that the store needed recovery.  Asked before the store opens, so
 * that the refusal costs no epoch and gives nothing away.
 */
static void
state_dir_check_user(const struct nlmd *d)
{
	char err[4300];

	if (d->drop && priv_path_check(d->run_uid, d->run_gid,
	    d->conf.state_dir, err, sizeof(err)) != CM_OK)
		fatalx("state directory %s: user %s cannot get to it: %s; "
		    "every directory above it must let that user through "
		    "(search permission, chmod o+x, or its group)",
		    d->conf.state_dir, d->conf.user, err);
}

/*
 * glibc's malloc raises its mmap and trim thresholds each time a large
 * block is freed (up to 32 and 64 MiB), and a thread's arena hands back
 * only the pages inside its free chunks (malloc_trim), never its top:
 * after a million locks were released, the compactor's arena kept 17-33
 * MiB resident for good (bench/RESULTS.md, 2026-12-05 evening).  Fixed
 * thresholds stop that: a block of 4 MiB or more (what the store frees
 * after use, STORE_KEEP_BYTES) is a mapping of its own, unmapped when
 * freed, and a free top of more than 4 MiB goes back at once.  Nothing on
 * the request path allocates that much.  (The ASan and TSan builds use
 * their sanitizer's allocator, which these settings do not govern.)
 */
static void
malloc_setup(void)
{
	(void)mallopt(M_MMAP_THRESHOLD, 4 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 4 << 20);
}

int
main(int argc, char **argv)
{
	struct nlmd d;
	char err[512];
	bool loop_failed = false;

	malloc_setup();
	memset(&d, 0, sizeof(d));
	d.readyfd = -1;
	/*
	 * From the start: the check of rpcbind's registrations before the
	 * store opens already talks TCP through libtirpc, whose writes do
	 * not pass MSG_NOSIGNAL -- a peer gone at the wrong moment killed
	 * nlmd there.  (setup_signals() sets it again, harmlessly.)
	 */
	signal(SIGPIPE, SIG_IGN);
	block_sighup();
	parse_args(&d, argc, argv);
	/* To the terminal until in the background (daemonize()): syslog. */
	log_init("nlmd", 1, d.conf.verbose);
	log_config_warnings(d.conf_warn, 0);
	setup_user(&d);
	state_dir_check_own(&d);
	if (statedir_lock(d.conf.state_dir, &d.lockfd, err, sizeof(err)) !=
	    CM_OK)
		fatalx("%s", err);
	state_dir_check_mode(&d);
	/*
	 * daemonize() moves to /, and the store, the NSM state and the chown
	 * after a drop open the directory by name: a relative one would be
	 * looked for under / (and the store fail to open) in the background.
	 */
	if (d.conf.state_dir[0] != '/')
		state_dir_absolute(&d);
	/* One thread still: it forks. */
	state_dir_check_user(&d);
	/*
	 * Into the background before the store opens: its handles and its
	 * checkpoint thread must belong to the process that uses them.
	 * (Errors from here on go to syslog; under systemd use -F.)
	 */
	check_settings(&d);
	if (!d.conf.foreground) {
		daemonize(&d);
		statedir_write_pid(d.lockfd);
	}
	setup_nofile(&d);
	if ((d.loop = ev_loop_new()) == NULL)
		fatal("event loop");
	d.mgr = svcmgr_new(d.loop);
	setup_store(&d);
	setup_network(&d);
	setup_signals(&d);
	/* As root still (if started so): /run/nlmd, a metrics port. */
	setup_control(&d);
	setup_metrics(&d);
	drop_privileges(&d);
	rpcbind_register(&d);
	ev_set_beforesleep(d.loop, before_sleep, &d);
	/*
	 * What nlm_init() staged -- the SM_NOTIFYs owed, stored records it
	 * dropped -- is sealed now, as at the end of a turn: else, with
	 * nothing to read, it waited for the first turn, which under
	 * durability log or none (no committer thread to wake the loop)
	 * was the first timer's, 2 s on, out of the clients' grace.
	 */
	before_sleep(d.loop, &d);
	log_info("nlmd ready: NLM (100021 v1,3,4) on port %u, NSM (100024 v1) "
	    "on port %u, udp+tcp%s%s, state %s, durability %s, epoch %llu, "
	    "NSM state %d%s", d.nlm_port, d.nsm_port,
	    d.conf.bind_addr[0] != '\0' ? ", on " : "",
	    d.conf.bind_addr[0] != '\0' ? d.conf.bind_addr :
	    onc_srv_has_family(d.srv, AF_INET6) ? ", IPv4+IPv6" : ", IPv4",
	    d.conf.state_dir, durability_name(d.conf.durability),
	    (unsigned long long)d.epoch, nsm_state(),
	    d.registered ? ", registered with rpcbind" : ", not registered");
	svcmgr_ready(d.mgr);
	daemon_ready(&d);
	if (ev_run(d.loop) == -1) {
		/*
		 * Not a stop anyone asked for: shut down as cleanly as a
		 * signal would (what was decided is committed), but exit 1, so
		 * that Restart=on-failure starts nlmd again.
		 */
		log_warn("event loop");
		loop_failed = true;
	}
	svcmgr_stopping(d.mgr);
	http_metrics_free(d.http);
	if (d.registered)
		rpcbind_unset_all();
	/* The last turns' commits, then what they answered. */
	nlm_drain();
	/* After the drain: an operator's release it committed is answered. */
	ctl_srv_free(d.ctl);
	nlm_shutdown();
	onc_srv_free(d.srv);
	onc_out_free(d.clnt);
	log_store_stats(d.store);
	store_close(d.store);
	svcmgr_free(d.mgr);
	ev_loop_free(d.loop);
	close(d.sigfd);
	close(d.lockfd);
	log_info(loop_failed ? "stopped: the event loop failed" : "stopped");
	return loop_failed ? 1 : 0;
}
