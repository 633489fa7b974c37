/*
 * dump.c - see dump.h.
 *
 * Output, one record per line, fields as key=value (byte strings in hex,
 * addresses in presentation form):
 *   epoch N
 *   token-high-water N
 *   next-host-id N
 *   host id=N name=S addr=A local=A state=N monitored=yes|no epoch=N
 *        notify-since=N
 *   lock host=N svid=N oh=HEX fh=HEX start=N len=N mode=exclusive|shared
 *        token=N epoch=N
 *   share host=N oh=HEX fh=HEX access=N deny=N epoch=N
 * (a host, a lock is one line).  S, the client's caller_name, is one field
 * as nlmctl shows it (ctl_vis(): "a b" is a\040b, the empty name "-"):
 * a name with a space or a newline cannot shift the fields or forge a
 * line.  Locks come before shares, each in key order.
 */
#include "dump.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "netaddr.h"
#include "privdrop.h"
#include "statedir.h"
#include "store.h"

static void
dump_hex(FILE *out, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	if (n == 0)
		fputc('-', out);
	for (i = 0; i < n; i++)
		fprintf(out, "%02x", b[i]);
}

/* A link-local address with its interface, as nlmctl shows it. */
static const char *
dump_addr(const struct store_addr *sa, char *buf, size_t len)
{
	struct sockaddr_in6 s6;

	if (sa->sa_len == 4)
		return inet_ntop(AF_INET, sa->sa_bytes, buf, (socklen_t)len);
	if (sa->sa_len != 16)
		return "-";
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	memcpy(&s6.sin6_addr, sa->sa_bytes, sizeof(s6.sin6_addr));
	s6.sin6_scope_id = sa->sa_scope;
	return addr_str_scoped((const struct sockaddr *)&s6, buf, len);
}

static int
dump_host(const struct store_host *h, void *arg)
{
	char a[64], l[STORE_LOCAL_MAX * 64];
	char name[CTL_VIS_MAX(STORE_NAME_MAX)];
	FILE *out = arg;
	size_t n = 0;
	unsigned i;

	/* local=ADDR[,ADDR...], or '-' when none is known. */
	l[0] = '\0';
	for (i = 0; i < h->sh_nlocal; i++) {
		if (i > 0)
			l[n++] = ',';
		dump_addr(&h->sh_local[i], l + n, 64 - 1);
		n += strlen(l + n);
	}
	fprintf(out, "host id=%" PRIu64 " name=%s addr=%s local=%s state=%"
	    PRId32 " monitored=%s epoch=%" PRIu64 " notify-since=%" PRIu64
	    "\n", h->sh_id, ctl_vis(h->sh_name, name, sizeof(name)) ==
	    (size_t)-1 ? "?" : name, dump_addr(&h->sh_addr, a, sizeof(a)),
	    n > 0 ? l : "-", h->sh_state,
	    (h->sh_flags & STORE_HOST_MONITORED) ? "yes" : "no", h->sh_epoch,
	    h->sh_notify_since);
	return 0;
}

static int
dump_record(const struct lk_record *rc, void *arg)
{
	FILE *out = arg;

	if (rc->rc_kind == LK_REC_LOCK) {
		fprintf(out, "lock host=%" PRIu64 " svid=%" PRId32 " oh=",
		    rc->rc_host, rc->rc_svid);
		dump_hex(out, rc->rc_oh, rc->rc_ohlen);
		fputs(" fh=", out);
		dump_hex(out, rc->rc_fh, rc->rc_fhlen);
		fprintf(out, " start=%" PRIu64 " len=%" PRIu64 " mode=%s token=%"
		    PRIu64 " epoch=%" PRIu64 "\n", rc->rc_start, rc->rc_len,
		    rc->rc_excl ? "exclusive" : "shared", rc->rc_token,
		    rc->rc_epoch);
		return 0;
	}
	fprintf(out, "share host=%" PRIu64 " oh=", rc->rc_host);
	dump_hex(out, rc->rc_oh, rc->rc_ohlen);
	fputs(" fh=", out);
	dump_hex(out, rc->rc_fh, rc->rc_fhlen);
	fprintf(out, " access=%u deny=%u epoch=%" PRIu64 "\n", rc->rc_access,
	    rc->rc_deny, rc->rc_epoch);
	return 0;
}

int
dump_state(const struct config *conf, FILE *out)
{
	struct store_config sc;
	struct store_info si;
	struct store *st = NULL;
	struct stat sb;
	char err[2048], path[4200];
	int fd, rc = -1;

	/* Never create a store where there is none. */
	snprintf(path, sizeof(path), "%s/meta.db", conf->state_dir);
	if (access(path, F_OK) == -1) {
		fprintf(stderr, "nlmd: no store in %s (%s)\n", conf->state_dir,
		    strerror(errno));
		return -1;
	}
	/*
	 * Root dumping a directory that nlmd's user owns (the README's
	 * example): the open rebuilds Berkeley DB's region files, and may
	 * start a log file, which would be root's, mode 0600 -- and the next
	 * start as that user refuses the store.  So the dump runs as the
	 * directory's owner.
	 */
	if (geteuid() == 0 && stat(conf->state_dir, &sb) == 0 &&
	    sb.st_uid != 0 && priv_drop(sb.st_uid, sb.st_gid, err,
	    sizeof(err)) != CM_OK) {
		fprintf(stderr, "nlmd: running as %s's owner (uid %u): %s\n",
		    conf->state_dir, (unsigned)sb.st_uid, err);
		return -1;
	}
	if (statedir_lock(conf->state_dir, &fd, err, sizeof(err)) != CM_OK) {
		fprintf(stderr, "nlmd: %s\n", err);
		return -1;
	}
	memset(&sc, 0, sizeof(sc));
	sc.sc_dir = conf->state_dir;
	if (store_open(&sc, &st, err, sizeof(err)) != STORE_OK)
		goto out;
	store_info(st, &si);
	fprintf(out, "epoch %" PRIu64 "\ntoken-high-water %" PRIu64
	    "\nnext-host-id %" PRIu64 "\n", si.si_epoch, si.si_token,
	    si.si_next_host);
	if (store_hosts_load(st, dump_host, out, err, sizeof(err)) !=
	    STORE_OK ||
	    store_records_load(st, dump_record, out, err, sizeof(err)) !=
	    STORE_OK)
		goto out;
	/*
	 * A dump not all written (a full disk, a closed pipe) is no dump:
	 * it exited 0, and a script took what it got for all of it.
	 */
	if (fflush(out) == EOF || ferror(out)) {
		snprintf(err, sizeof(err), "writing the dump: %s",
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (rc == -1)
		fprintf(stderr, "nlmd: store in %s: %s\n", conf->state_dir, err);
	store_close(st);
	close(fd);
	return rc;
}
