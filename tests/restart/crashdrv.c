/*
 * crashdrv.c - main() of crashdrv (see crashdrv.h): options, the commands
 * on stdin, the phases, and the check report on stdout.
 *
 *   crashdrv --srv ADDR --cli ADDR --port NLM_PORT --dir DIR
 *            [--clients 16] [--slots 8] [--timeout-ms 1500]
 *            [--wait-ms 3000] [--first-ms 30000] [--impatient 20]
 *            [--drop-callbacks 10] [--seed N]
 *
 * Commands, one a line; each answer ends with an "ok ..." line:
 *   down   nlmd is being stopped or killed now: stop issuing requests,
 *          let the ones in flight end (answered, or failed: then
 *          uncertain), check the pair members against each other, write
 *          DIR/model.N (N counts `down' and `quit'), answer "ok down".
 *   up     nlmd is back (or starting): wait until it answers, VERIFY
 *          (verify.c), answer "ok up", resume the load.
 *   quit   (or end of input) stop, report, write the last model file,
 *          print "crashdrv: N passed, M failed"; exit 0 if M is 0.
 * The load starts at once ("ok start").  Output lines are "PASS: ...",
 * "FAIL: ...", "# note" and "ok ..."; every client logs each reply it got
 * to DIR/client-NN.log.
 */
#include "crashdrv.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

uint64_t
rs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
rs_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
rs_deadline(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

void
rs_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void
out_v(const char *prefix, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&out_mu);
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

void
rs_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_v("", fmt, ap);
	va_end(ap);
}

void
rs_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_v("# ", fmt, ap);
	va_end(ap);
}

void
rs_check(struct rs_drv *d, bool ok, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&d->d_mu);
	if (ok)
		d->d_npass++;
	else
		d->d_nfail++;
	pthread_mutex_unlock(&d->d_mu);
	va_start(ap, fmt);
	out_v(ok ? "PASS: " : "FAIL: ", fmt, ap);
	va_end(ap);
}

void
rs_tally(struct rs_drv *d, enum rs_tally_id id, bool ok, const char *fmt,
    ...)
{
	char buf[512];
	va_list ap;
	int cycle;

	pthread_mutex_lock(&d->d_mu);
	d->d_tally[id].t_n++;
	d->d_tally[id].t_bad += !ok;
	cycle = d->d_cycle;
	pthread_mutex_unlock(&d->d_mu);
	if (ok)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rs_note("cycle %d: %s", cycle, buf);
}

static void
usage(void)
{
	fprintf(stderr, "usage: crashdrv --srv ADDR --cli ADDR --port PORT "
	    "--dir DIR [--clients N] [--slots N]\n"
	    "                [--timeout-ms MS] [--wait-ms MS] [--first-ms MS] "
	    "[--impatient PCT]\n"
	    "                [--drop-callbacks PCT] [--seed N]\n");
	exit(2);
}

/* A number in [lo, hi], or usage(). */
static unsigned long long
opt_num(const char *s, unsigned long long lo, unsigned long long hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		usage();
	return v;
}

static void
parse_args(struct rs_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "srv", required_argument, NULL, 's' },
		{ "cli", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "dir", required_argument, NULL, 'd' },
		{ "clients", required_argument, NULL, 'n' },
		{ "slots", required_argument, NULL, 'l' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "wait-ms", required_argument, NULL, 'w' },
		{ "first-ms", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 'r' },
		{ "impatient", required_argument, NULL, 'i' },
		{ "drop-callbacks", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	*o = (struct rs_opts){ NULL, NULL, 0, 16, 8, 1500, 3000, 30000, 20,
	    10, rs_wall_ms(), NULL };
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		switch (ch) {
		case 's': o->o_srv = optarg; break;
		case 'c': o->o_cli = optarg; break;
		case 'p': o->o_port = (uint16_t)opt_num(optarg, 1, 65535); break;
		case 'd': o->o_dir = optarg; break;
		case 'n': o->o_nclients = (int)opt_num(optarg, 1,
		    RS_MAXCLIENTS); break;
		case 'l': o->o_nslots = (int)opt_num(optarg, 1, RS_MAXSLOTS);
		    break;
		case 't': o->o_timeout_ms = (unsigned)opt_num(optarg, 100,
		    60000); break;
		case 'w': o->o_wait_ms = (unsigned)opt_num(optarg, 100, 60000);
		    break;
		case 'f': o->o_first_ms = (unsigned)opt_num(optarg, 100,
		    600000); break;
		case 'r': o->o_seed = opt_num(optarg, 0, UINT64_MAX); break;
		case 'i': o->o_impatient = (unsigned)opt_num(optarg, 0, 100);
		    break;
		case 'x': o->o_drop = (unsigned)opt_num(optarg, 0, 90); break;
		default: usage();
		}
	if (optind != argc || o->o_srv == NULL || o->o_cli == NULL ||
	    o->o_port == 0 || o->o_dir == NULL)
		usage();
}

/* Stop the load: every client parked, every call ended. */
static void
drv_pause(struct rs_drv *d)
{
	int i;

	pthread_mutex_lock(&d->d_mu);
	if (d->d_phase == RS_RUN)
		d->d_phase = RS_PAUSE;
	pthread_cond_broadcast(&d->d_cv);
	for (i = 0; i < d->d_opt.o_nclients; i++)
		while (!d->d_cl[i].c_parked)
			pthread_cond_wait(&d->d_cv, &d->d_mu);
	pthread_mutex_unlock(&d->d_mu);
}

static void
drv_resume(struct rs_drv *d)
{
	int i;

	for (i = 0; i < d->d_opt.o_nclients; i++)
		d->d_cl[i].c_ops = 0;
	pthread_mutex_lock(&d->d_mu);
	d->d_phase = RS_RUN;
	pthread_cond_broadcast(&d->d_cv);
	pthread_mutex_unlock(&d->d_mu);
}

/* After a pause: what the window of load did, and the model's state. */
static void
drv_window(struct rs_drv *d, const char *what)
{
	unsigned unsure = 0, m;
	uint64_t ops = 0;
	int i, s, f;

	for (i = 0; i < d->d_opt.o_nclients; i++) {
		ops += d->d_cl[i].c_ops;
		for (s = 0; s < d->d_opt.o_nslots; s++) {
			m = d->d_cl[i].c_slot[s];
			unsure += (m & (m - 1)) != 0;
		}
		for (f = 0; f < 2; f++) {
			m = d->d_cl[i].c_share[f];
			unsure += (m & (m - 1)) != 0;
		}
	}
	if (d->d_windows++ == 0 || ops < d->d_min_window_ops)
		d->d_min_window_ops = ops;
	rs_note("%s: %" PRIu64 " requests answered since the load resumed; "
	    "%u locks or shares uncertain", what, ops, unsure);
}

static void
cmd_down(struct rs_drv *d)
{
	char what[64];

	drv_pause(d);
	d->d_cycle++;
	snprintf(what, sizeof(what), "cycle %d (down)", d->d_cycle);
	drv_window(d, what);
	rs_exclusion_check(d, RT_EXCLUSION);
	rs_tally_report(d, what);
	rs_model_write(d);
	rs_out("ok down");
}

static void
cmd_up(struct rs_drv *d)
{
	char what[64];
	int i;

	drv_pause(d);
	/*
	 * Fresh sockets for every call from here on.  TCP streams died with
	 * the old nlmd; a UDP socket may hold errors from while nlmd was
	 * away (ICMP port or host unreachable for the retransmissions of a
	 * call that had already given up: libtirpc sets IP_RECVERR, and its
	 * next call on that socket would fail at once with the queued error,
	 * one per retransmission; after a power cut test_powercut.sh saw
	 * ten calls in a row fail so).
	 */
	for (i = 0; i < d->d_opt.o_nclients; i++)
		rs_conn_close(&d->d_cl[i].c_conn);
	rs_conn_close(&d->d_probe);
	rs_conn_close(&d->d_first);
	rs_verify(d);
	snprintf(what, sizeof(what), "cycle %d (up)", d->d_cycle);
	rs_exclusion_check(d, RT_EXCLUSION);
	rs_tally_report(d, what);
	drv_resume(d);
	rs_out("ok up");
}

/* Every handle's counters, summed. */
static void
drv_sum(struct rs_drv *d, struct rs_conn *sum)
{
	const struct rs_conn *cn;
	int i, j;

	memset(sum, 0, sizeof(*sum));
	for (i = -2; i < d->d_opt.o_nclients; i++) {
		cn = i == -2 ? &d->d_probe : i == -1 ? &d->d_first :
		    &d->d_cl[i].c_conn;
		for (j = 0; j < RS_NSTAT; j++)
			sum->cn_stat[j] += cn->cn_stat[j];
		sum->cn_noreply += cn->cn_noreply;
		sum->cn_cookie_bad += cn->cn_cookie_bad;
		sum->cn_reclaims += cn->cn_reclaims;
	}
}

static void
drv_report(struct rs_drv *d)
{
	struct rs_conn t;
	uint64_t replies = 0;
	int j;

	/* The receiver still runs: its counters are read under d_mu. */
	pthread_mutex_lock(&d->d_mu);
	drv_sum(d, &t);
	for (j = 0; j < RS_NSTAT; j++)
		replies += t.cn_stat[j];
	rs_note("replies: %" PRIu64 " (GRANTED %" PRIu64 ", DENIED %" PRIu64
	    ", BLOCKED %" PRIu64 ", DENIED_GRACE_PERIOD %" PRIu64 ", DEADLCK %"
	    PRIu64 "), no reply: %" PRIu64, replies, t.cn_stat[0],
	    t.cn_stat[1], t.cn_stat[3], t.cn_stat[4], t.cn_stat[5],
	    t.cn_noreply);
	rs_note("load: %" PRIu64 " BLOCKED, %" PRIu64 " granted by callback, %"
	    PRIu64 " by a re-sent LOCK, %" PRIu64 " given up, %" PRIu64
	    " grace retries", d->d_blocked, d->d_cb_matched,
	    d->d_resend_grants, d->d_giveups, d->d_grace_retries);
	rs_note("receiver: %" PRIu64 " GRANTED_MSG (%" PRIu64 " ignored on "
	    "purpose, %" PRIu64 " repeated, %" PRIu64 " answered DENIED)",
	    d->d_cb_msgs, d->d_cb_dropped, d->d_cb_repeat, d->d_cb_refused);
	pthread_mutex_unlock(&d->d_mu);
	/* For the capture checks of test_restart.sh. */
	rs_out("# wire: reclaim-calls=%" PRIu64 " grace-replies=%" PRIu64
	    " granted-msgs=%" PRIu64, t.cn_reclaims, t.cn_stat[4],
	    d->d_cb_msgs);
	rs_check(d, t.cn_cookie_bad == 0 && replies > 0, "every reply echoed "
	    "its cookie (%" PRIu64 " replies, %" PRIu64 " did not)", replies,
	    t.cn_cookie_bad);
	rs_check(d, d->d_cb_matched > 0, "blocked LOCKs were granted through "
	    "GRANTED_MSG callbacks (%" PRIu64 ")", d->d_cb_matched);
	rs_check(d, d->d_cb_unconfirmed == 0, "every callback grant was "
	    "confirmed by the re-sent LOCK (%" PRIu64 " confirmed, %" PRIu64
	    " not)", d->d_cb_confirmed, d->d_cb_unconfirmed);
	rs_check(d, d->d_windows > 0 && d->d_min_window_ops > 0, "the load "
	    "made progress in every window (fewest answers: %" PRIu64 ")",
	    d->d_min_window_ops);
}

static int
cmd_quit(struct rs_drv *d)
{
	drv_pause(d);
	drv_window(d, "quit");
	rs_exclusion_check(d, RT_EXCLUSION);
	rs_tally_report(d, "quit");
	rs_model_write(d);
	drv_report(d);
	pthread_mutex_lock(&d->d_mu);
	d->d_phase = RS_QUIT;
	pthread_cond_broadcast(&d->d_cv);
	pthread_mutex_unlock(&d->d_mu);
	rs_clients_join(d);
	rs_receiver_stop();
	rs_out("crashdrv: %d passed, %d failed", d->d_npass, d->d_nfail);
	return d->d_nfail == 0 ? 0 : 1;
}

static int
command_loop(struct rs_drv *d)
{
	char line[256];
	size_t n;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (strcmp(line, "down") == 0)
			cmd_down(d);
		else if (strcmp(line, "up") == 0)
			cmd_up(d);
		else if (strcmp(line, "quit") == 0)
			break;
		else if (n > 0)
			rs_note("unknown command: %s", line);
	}
	return cmd_quit(d);
}

static void
drv_init(struct rs_drv *d)
{
	pthread_condattr_t ca;

	d->d_t0 = rs_now_ms();
	pthread_mutex_init(&d->d_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->d_cv, &ca);
	pthread_condattr_destroy(&ca);
	rs_wire_init(d->d_opt.o_srv, d->d_opt.o_cli, d->d_opt.o_port);
	rs_conn_init(&d->d_probe, false, d->d_opt.o_timeout_ms, 250,
	    0x52520000u);
	rs_conn_init(&d->d_first, false, 500, 10, 0x52500000u);
	d->d_phase = RS_RUN;
}

int
main(int argc, char **argv)
{
	/* Large: not on the stack. */
	static struct rs_drv drv;
	int rc;

	parse_args(&drv.d_opt, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A TCP handle writing to a dead nlmd must fail, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	drv_init(&drv);
	if (rs_receiver_start(&drv) == -1 || rs_clients_start(&drv) == -1)
		return 2;
	rs_out("ok start: %d clients (%d on TCP), %d slots, seed %" PRIu64,
	    drv.d_opt.o_nclients, drv.d_opt.o_nclients / 2, drv.d_opt.o_nslots,
	    drv.d_opt.o_seed);
	rc = command_loop(&drv);
	/*
	 * Leave without exit()'s clean-up: the receiver thread is still in
	 * svc_run() and may still log a late callback.  Every stream
	 * (stdout, stderr, the clients' logs) is flushed under its lock.
	 */
	fflush(NULL);
	_exit(rc);
}
