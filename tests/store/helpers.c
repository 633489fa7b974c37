/*
 * helpers.c - see stt.h.
 */
#include "stt.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "store_test.h"

char *
stt_dir_new(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/test-store.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp") == -1)
		return NULL;
	if (mkdtemp(dir) == NULL) {
		free(dir);
		return NULL;
	}
	return dir;
}

static int
stt_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void
stt_dir_free(char *dir)
{
	if (dir == NULL)
		return;
	/* Also called from suite clean-ups, where CUnit asserts abort. */
	if (nftw(dir, stt_rm, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "\ncannot remove %s\n", dir);
	free(dir);
}

/* Close a test's store and remove its directory (a suite's clean-up). */
void
stt_drop(char **dirp, struct store **stp)
{
	store_close(*stp);
	*stp = NULL;
	stt_dir_free(*dirp);
	*dirp = NULL;
}

/* Drop the test's store and directory; a fresh, empty directory. */
void
stt_fresh(char **dirp, struct store **stp)
{
	stt_drop(dirp, stp);
	*dirp = stt_dir_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(*dirp);
}

enum store_status
stt_open(const char *dir, enum store_durability d, unsigned ckp,
    struct store **stp)
{
	struct store_config cf;
	enum store_status s;
	char err[512];

	memset(&cf, 0, sizeof(cf));
	cf.sc_dir = dir;
	cf.sc_durability = d;
	cf.sc_checkpoint_sec = ckp;
	err[0] = '\0';
	s = store_open(&cf, stp, err, sizeof(err));
	if (s != STORE_OK)
		fprintf(stderr, "\nstore_open(%s): %s: %s\n", dir,
		    store_strerror(s), err);
	return s;
}

struct store *
stt_open_ok(const char *dir, enum store_durability d)
{
	struct store *st = NULL;

	CU_ASSERT_FATAL(stt_open(dir, d, 0, &st) == STORE_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	return st;
}

struct lk_record
stt_lock(uint64_t host, int32_t svid, const char *oh, const char *fh,
    uint64_t start, uint64_t len, bool excl, uint64_t token)
{
	struct lk_record rc;

	memset(&rc, 0, sizeof(rc));
	rc.rc_kind = LK_REC_LOCK;
	rc.rc_host = host;
	rc.rc_svid = svid;
	rc.rc_oh = oh;
	rc.rc_ohlen = strlen(oh);
	rc.rc_fh = fh;
	rc.rc_fhlen = strlen(fh);
	rc.rc_start = start;
	rc.rc_len = len;
	rc.rc_excl = excl;
	rc.rc_token = token;
	rc.rc_epoch = 1;
	return rc;
}

struct lk_record
stt_share(uint64_t host, const char *oh, const char *fh, uint8_t access,
    uint8_t deny)
{
	struct lk_record rc;

	memset(&rc, 0, sizeof(rc));
	rc.rc_kind = LK_REC_SHARE;
	rc.rc_host = host;
	rc.rc_oh = oh;
	rc.rc_ohlen = strlen(oh);
	rc.rc_fh = fh;
	rc.rc_fhlen = strlen(fh);
	rc.rc_access = access;
	rc.rc_deny = deny;
	rc.rc_epoch = 1;
	return rc;
}

static void *
stt_dup(const void *p, size_t n)
{
	void *q = malloc(n > 0 ? n : 1);

	if (q != NULL && n > 0)
		memcpy(q, p, n);
	return q;
}

static int
stt_rec_cb(const struct lk_record *rc, void *arg)
{
	struct stt_snap *ss = arg;
	struct lk_record *v, *c;

	if (ss->ss_nrecs == ss->ss_reccap) {
		ss->ss_reccap = ss->ss_reccap * 2 + 16;
		v = realloc(ss->ss_recs, ss->ss_reccap * sizeof(*v));
		if (v == NULL)
			return -1;
		ss->ss_recs = v;
	}
	c = &ss->ss_recs[ss->ss_nrecs];
	*c = *rc;
	c->rc_oh = stt_dup(rc->rc_oh, rc->rc_ohlen);
	c->rc_fh = stt_dup(rc->rc_fh, rc->rc_fhlen);
	ss->ss_nrecs++;
	return c->rc_oh == NULL || c->rc_fh == NULL ? -1 : 0;
}

static int
stt_host_cb(const struct store_host *h, void *arg)
{
	struct stt_snap *ss = arg;
	struct store_host *v;

	if (ss->ss_nhosts == ss->ss_hostcap) {
		ss->ss_hostcap = ss->ss_hostcap * 2 + 16;
		v = realloc(ss->ss_hosts, ss->ss_hostcap * sizeof(*v));
		if (v == NULL)
			return -1;
		ss->ss_hosts = v;
	}
	v = ss->ss_hosts;
	v[ss->ss_nhosts] = *h;
	v[ss->ss_nhosts].sh_name = strdup(h->sh_name);
	ss->ss_nhosts++;
	return v[ss->ss_nhosts - 1].sh_name == NULL ? -1 : 0;
}

enum store_status
stt_snap_take(struct store *st, struct stt_snap *ss)
{
	struct store_info si;
	enum store_status s;
	char err[512];

	memset(ss, 0, sizeof(*ss));
	store_info(st, &si);
	ss->ss_epoch = si.si_epoch;
	ss->ss_token = si.si_token;
	ss->ss_next_host = si.si_next_host;
	if ((s = store_hosts_load(st, stt_host_cb, ss, err, sizeof(err))) !=
	    STORE_OK)
		return s;
	return store_records_load(st, stt_rec_cb, ss, err, sizeof(err));
}

void
stt_snap_free(struct stt_snap *ss)
{
	size_t i;

	for (i = 0; i < ss->ss_nrecs; i++) {
		free((void *)(uintptr_t)ss->ss_recs[i].rc_oh);
		free((void *)(uintptr_t)ss->ss_recs[i].rc_fh);
	}
	for (i = 0; i < ss->ss_nhosts; i++)
		free((void *)(uintptr_t)ss->ss_hosts[i].sh_name);
	free(ss->ss_recs);
	free(ss->ss_hosts);
	memset(ss, 0, sizeof(*ss));
}

void
stt_nrec_check(struct store *st, const struct stt_snap *ss)
{
	uint64_t n[2] = { 0, 0 }, locks = 0, shares = 0;
	bool known[2];
	size_t i;

	for (i = 0; i < ss->ss_nrecs; i++)
		if (ss->ss_recs[i].rc_kind == LK_REC_LOCK)
			n[0]++;
		else
			n[1]++;
	known[0] = store_test_nrec(st, 0, &locks);
	known[1] = store_test_nrec(st, 1, &shares);
	CU_ASSERT(known[0] && known[1]);
	CU_ASSERT_EQUAL(locks, n[0]);
	CU_ASSERT_EQUAL(shares, n[1]);
	if (!known[0] || !known[1] || locks != n[0] || shares != n[1])
		fprintf(stderr, "\nmeta.db counts %s%llu locks and %s%llu "
		    "shares, the load found %llu and %llu\n",
		    known[0] ? "" : "(none) ", (unsigned long long)locks,
		    known[1] ? "" : "(none) ", (unsigned long long)shares,
		    (unsigned long long)n[0], (unsigned long long)n[1]);
}

void
stt_snap_dir(const char *dir, struct stt_snap *ss)
{
	struct store *st = stt_open_ok(dir, STORE_SYNC);

	CU_ASSERT_EQUAL(stt_snap_take(st, ss), STORE_OK);
	stt_nrec_check(st, ss);
	store_close(st);
}

bool
stt_rec_equal(const struct lk_record *a, const struct lk_record *b)
{
	return a->rc_kind == b->rc_kind && a->rc_host == b->rc_host &&
	    a->rc_ohlen == b->rc_ohlen && a->rc_fhlen == b->rc_fhlen &&
	    (a->rc_ohlen == 0 || memcmp(a->rc_oh, b->rc_oh, a->rc_ohlen) ==
	    0) && memcmp(a->rc_fh, b->rc_fh, a->rc_fhlen) == 0 &&
	    a->rc_epoch == b->rc_epoch && a->rc_reclaim == b->rc_reclaim &&
	    (a->rc_kind == LK_REC_SHARE ?
	    a->rc_access == b->rc_access && a->rc_deny == b->rc_deny :
	    a->rc_svid == b->rc_svid && a->rc_start == b->rc_start &&
	    a->rc_len == b->rc_len && a->rc_excl == b->rc_excl &&
	    a->rc_token == b->rc_token);
}

static bool
stt_addr_equal(const struct store_addr *a, const struct store_addr *b)
{
	return a->sa_len == b->sa_len && a->sa_scope == b->sa_scope &&
	    memcmp(a->sa_bytes, b->sa_bytes, a->sa_len) == 0;
}

bool
stt_host_equal(const struct store_host *a, const struct store_host *b)
{
	unsigned i;

	if (a->sh_nlocal != b->sh_nlocal)
		return false;
	for (i = 0; i < a->sh_nlocal; i++)
		if (!stt_addr_equal(&a->sh_local[i], &b->sh_local[i]))
			return false;
	return a->sh_id == b->sh_id && strcmp(a->sh_name, b->sh_name) == 0 &&
	    stt_addr_equal(&a->sh_addr, &b->sh_addr) &&
	    a->sh_state == b->sh_state && a->sh_flags == b->sh_flags &&
	    a->sh_epoch == b->sh_epoch &&
	    a->sh_notify_since == b->sh_notify_since;
}

bool
stt_snap_equal(const struct stt_snap *a, const struct stt_snap *b)
{
	size_t i;

	if (a->ss_nrecs != b->ss_nrecs || a->ss_nhosts != b->ss_nhosts ||
	    a->ss_epoch != b->ss_epoch || a->ss_token != b->ss_token ||
	    a->ss_next_host != b->ss_next_host)
		return false;
	for (i = 0; i < a->ss_nrecs; i++)
		if (!stt_rec_equal(&a->ss_recs[i], &b->ss_recs[i]))
			return false;
	for (i = 0; i < a->ss_nhosts; i++)
		if (!stt_host_equal(&a->ss_hosts[i], &b->ss_hosts[i]))
			return false;
	return true;
}

size_t
stt_nlogs(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "log.", 4) == 0)
			n++;
	closedir(d);
	return n;
}

bool
stt_long(void)
{
	const char *s = getenv("NLMD_TEST_LONG");

	return s != NULL && *s != '\0' && strcmp(s, "0") != 0;
}

double
stt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool
stt_churn(struct store *cst, uint64_t host)
{
	static char fh[LK_FH_MAX + 1], oh[LK_OH_MAX + 1];
	struct lk_record rc;
	enum store_status s;
	unsigned t, i;

	memset(fh, 'f', LK_FH_MAX);
	memset(oh, 'o', LK_OH_MAX);
	for (t = 0; t < 2500; t++) {
		for (i = 0; i < 16; i++) {
			rc = stt_lock(host, (int32_t)i, oh, fh, 0, 0, true, t);
			s = t % 2 == 0 ? store_put_record(cst, &rc) :
			    store_del_record(cst, &rc);
			if (s != STORE_OK)
				return false;
		}
		if (store_commit(cst) != STORE_OK)
			return false;
	}
	return true;
}

int
stt_ckp_wait(struct store *cst, uint64_t host, unsigned n)
{
	struct store_info si;
	struct lk_record rc;
	uint64_t n0;
	double t0 = stt_now();

	store_info(cst, &si);
	n0 = si.si_checkpoints;
	rc = stt_lock(host, 1, "owner", "file", 0, 0, true, 1);
	do {
		usleep(100000);
		if (store_put_record(cst, &rc) != STORE_OK ||
		    store_commit(cst) != STORE_OK ||
		    store_del_record(cst, &rc) != STORE_OK ||
		    store_commit(cst) != STORE_OK)
			return -1;
		store_info(cst, &si);
	} while (si.si_checkpoints < n0 + n && stt_now() - t0 < 30);
	return si.si_checkpoints < n0 + n ? -2 : 0;
}

void
stt_run_killed(void (*child)(void))
{
	pid_t pid;
	int status;

	if ((pid = fork()) == 0)
		child();
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	if (WIFEXITED(status))
		fprintf(stderr, "\nchild exited %d\n", WEXITSTATUS(status));
}
