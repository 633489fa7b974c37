/*
 * libnfs_null.c - NULL call to NLM v4 or NSM v1 through libnfs, an RPC
 * implementation that is not ours (nor libtirpc's), for the integration
 * tests.
 *
 *   libnfs_null HOST nlm4|nsm1 [PORT]
 *
 * Without PORT the port is looked up with libnfs' own portmapper client
 * (rpc_connect_program_async); with PORT it connects there directly.
 * libnfs speaks TCP.  Exit status 0 when the NULL call succeeded within
 * 5 seconds, 1 otherwise (reason on stderr), 2 on usage errors.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nlm.h>
#include <nfsc/libnfs-raw-nsm.h>

#define DEADLINE_MS	5000

struct state {
	int		 is_nsm;
	int		 done;		/* 1 success, -1 failure */
	char		 why[256];
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
null_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct state *st = priv;

	(void)rpc;
	if (status == RPC_STATUS_SUCCESS) {
		st->done = 1;
		return;
	}
	snprintf(st->why, sizeof(st->why), "NULL call: status %d: %s", status,
	    status == RPC_STATUS_ERROR && data != NULL ? (char *)data : "");
	st->done = -1;
}

static void
connect_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	struct state *st = priv;
	int rc;

	if (status != RPC_STATUS_SUCCESS) {
		snprintf(st->why, sizeof(st->why), "connect: status %d: %s",
		    status, data != NULL ? (char *)data : "");
		st->done = -1;
		return;
	}
	rc = st->is_nsm ? rpc_nsm1_null_async(rpc, null_cb, st) :
	    rpc_nlm4_null_async(rpc, null_cb, st);
	if (rc != 0) {
		snprintf(st->why, sizeof(st->why), "cannot send NULL: %s",
		    rpc_get_error(rpc));
		st->done = -1;
	}
}

int
main(int argc, char **argv)
{
	struct rpc_context *rpc;
	struct state st;
	uint32_t prog, vers;
	uint64_t end;
	int rc;

	if (argc < 3 || argc > 4 || (strcmp(argv[2], "nlm4") != 0 &&
	    strcmp(argv[2], "nsm1") != 0)) {
		fprintf(stderr, "usage: libnfs_null HOST nlm4|nsm1 [PORT]\n");
		return 2;
	}
	memset(&st, 0, sizeof(st));
	st.is_nsm = strcmp(argv[2], "nsm1") == 0;
	prog = st.is_nsm ? NSM_PROGRAM : NLM_PROGRAM;
	vers = st.is_nsm ? NSM_V1 : NLM_V4;
	if ((rpc = rpc_init_context()) == NULL) {
		fprintf(stderr, "libnfs_null: rpc_init_context failed\n");
		return 1;
	}
	if (argc == 4)
		rc = rpc_connect_port_async(rpc, argv[1], atoi(argv[3]),
		    (int)prog, (int)vers, connect_cb, &st);
	else
		rc = rpc_connect_program_async(rpc, argv[1], (int)prog,
		    (int)vers, connect_cb, &st);
	if (rc != 0) {
		fprintf(stderr, "libnfs_null: connect %s: %s\n", argv[1],
		    rpc_get_error(rpc));
		rpc_destroy_context(rpc);
		return 1;
	}
	end = now_ms() + DEADLINE_MS;
	while (st.done == 0 && now_ms() < end) {
		struct pollfd pfd;

		pfd.fd = rpc_get_fd(rpc);
		pfd.events = (short)rpc_which_events(rpc);
		pfd.revents = 0;
		if (poll(&pfd, 1, 100) < 0)
			break;
		if (rpc_service(rpc, pfd.revents) < 0) {
			snprintf(st.why, sizeof(st.why), "rpc_service: %s",
			    rpc_get_error(rpc));
			st.done = -1;
		}
	}
	if (st.done == 0)
		snprintf(st.why, sizeof(st.why), "no answer in %d ms",
		    DEADLINE_MS);
	rpc_destroy_context(rpc);
	if (st.done != 1) {
		fprintf(stderr, "libnfs_null: %s %s: %s\n", argv[1], argv[2],
		    st.why);
		return 1;
	}
	printf("libnfs: %s %s NULL ok\n", argv[1], argv[2]);
	return 0;
}
