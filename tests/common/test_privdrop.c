/*
 * test_privdrop.c - common/privdrop.c's user look-up and path check, and
 * common/statedir.c's statedir_chown() (as root only: giving files away
 * needs it), lock file and statedir_check_own().  The drop
 * itself is irreversible and is tested on the daemon
 * (tests/integration/test_systemd.sh).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ct.h"
#include "privdrop.h"
#include "statedir.h"

static void
test_lookup(void)
{
	uid_t uid = 1;
	gid_t gid = 1;
	char err[256] = "";

	CU_ASSERT_EQUAL(priv_user_lookup("root", &uid, &gid, err,
	    sizeof(err)), 0);
	CU_ASSERT_EQUAL(uid, 0);
	CU_ASSERT_EQUAL(gid, 0);
	CU_ASSERT_EQUAL(priv_user_lookup("no-such-user-nlmd", &uid, &gid, err,
	    sizeof(err)), CM_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no-such-user-nlmd"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "does not exist"));
}

/*
 * Groups (control-group) and users whose entries outgrow a 4 KiB lookup
 * buffer: in a child with a private mount namespace, /etc/group and
 * /etc/passwd replaced by files whose first line is over 16 KiB (a group
 * of 3,000 members; a user with a long comment), then a small group and
 * user.  glibc's lookups return ERANGE for every name after a line too
 * long for the buffer: both used to read as "no such group" (or fail).
 * The child says by its exit status which lookup went wrong (0: none).
 */
static void
test_lookup_long_lines(void)
{
	char dir[64], grp[128], pwd[128], err[256];
	pid_t pid;
	FILE *f;
	gid_t gid;
	uid_t uid;
	int status, i;

	if (getuid() != 0) {
		printf("\n    SKIPPED: a private /etc/group needs root "
		    "(mount namespace) ");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/nlmd-grp.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(grp, sizeof(grp), "%s/group", dir);
	snprintf(pwd, sizeof(pwd), "%s/passwd", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(grp, "w"));
	fprintf(f, "big:x:4000:");
	for (i = 0; i < 3000; i++)
		fprintf(f, "%smember%d", i ? "," : "", i);
	fprintf(f, "\nsmall:x:4001:\n");
	CU_ASSERT_FATAL(fclose(f) == 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(pwd, "w"));
	fprintf(f, "root:x:0:0:");
	for (i = 0; i < 2000; i++)
		fputs("comment ", f);
	fprintf(f, ":/root:/bin/sh\nsmall:x:4001:4001::/:/bin/sh\n");
	CU_ASSERT_FATAL(fclose(f) == 0);
	CU_ASSERT_FATAL((pid = fork()) != -1);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) == -1 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
		    mount(grp, "/etc/group", NULL, MS_BIND, NULL) == -1 ||
		    mount(pwd, "/etc/passwd", NULL, MS_BIND, NULL) == -1)
			_exit(9);
		if (priv_group_lookup("small", &gid, err, sizeof(err)) !=
		    CM_OK || gid != 4001)
			_exit(1);
		if (priv_group_lookup("big", &gid, err, sizeof(err)) !=
		    CM_OK || gid != 4000)
			_exit(2);
		if (priv_group_lookup("none-such", &gid, err, sizeof(err)) !=
		    CM_NOTFOUND || strstr(err, "no such group") == NULL)
			_exit(3);
		if (priv_user_lookup("small", &uid, &gid, err, sizeof(err)) !=
		    CM_OK || uid != 4001)
			_exit(4);
		if (priv_user_lookup("root", &uid, &gid, err, sizeof(err)) !=
		    CM_OK || uid != 0)
			_exit(5);
		_exit(0);
	}
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status));
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		printf("\n    lookup %d went wrong ", WEXITSTATUS(status));
	unlink(grp);
	unlink(pwd);
	rmdir(dir);
}

static void
test_chown(void)
{
	char dir[64], path[128], err[256] = "";
	struct stat st;
	int fd;

	if (getuid() != 0) {
		printf("\n    SKIPPED: statedir_chown needs root (chown) ");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/nlmd-pd.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	CU_ASSERT_FATAL((fd = open(path, O_CREAT | O_WRONLY, 0600)) != -1);
	close(fd);
	/* The user's already, not the group's: given to the group too. */
	snprintf(path, sizeof(path), "%s/g", dir);
	CU_ASSERT_FATAL((fd = open(path, O_CREAT | O_WRONLY, 0600)) != -1);
	close(fd);
	CU_ASSERT_EQUAL(chown(path, 65534, 0), 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	CU_ASSERT_EQUAL(symlink("/etc/passwd", path), 0);
	CU_ASSERT_EQUAL(statedir_chown(dir, 65534, 65533, err, sizeof(err)),
	    0);
	CU_ASSERT(stat(dir, &st) == 0 && st.st_uid == 65534 &&
	    st.st_gid == 65533);
	snprintf(path, sizeof(path), "%s/f", dir);
	CU_ASSERT(stat(path, &st) == 0 && st.st_uid == 65534 &&
	    st.st_gid == 65533);
	snprintf(path, sizeof(path), "%s/g", dir);
	CU_ASSERT(stat(path, &st) == 0 && st.st_uid == 65534 &&
	    st.st_gid == 65533);
	/* A symbolic link is left alone, and so is what it points to. */
	snprintf(path, sizeof(path), "%s/link", dir);
	CU_ASSERT(lstat(path, &st) == 0 && st.st_uid == 0);
	CU_ASSERT(stat("/etc/passwd", &st) == 0 && st.st_uid == 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
	CU_ASSERT_EQUAL(statedir_chown("/nonexistent/nlmd", 1, 1, err,
	    sizeof(err)), CM_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/nlmd"));
}

/*
 * nlmd.lock planted by plant() (symlink or link) to a file of the
 * directory's: statedir_lock() refuses it, saying `why', and the file it
 * names is left as it was.
 */
static void
lock_planted(int (*plant)(const char *, const char *), const char *why)
{
	char dir[64], path[128], victim[128], err[256] = "", buf[64];
	int fd, lfd = -1;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-ln.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	CU_ASSERT_FATAL((fd = open(victim, O_CREAT | O_WRONLY, 0600)) != -1);
	CU_ASSERT(write(fd, "precious\n", 9) == 9);
	close(fd);
	snprintf(path, sizeof(path), "%s/nlmd.lock", dir);
	CU_ASSERT_EQUAL_FATAL(plant(victim, path), 0);
	CU_ASSERT_NOT_EQUAL(statedir_lock(dir, &lfd, err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_EQUAL(lfd, -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, why));
	if (lfd != -1)
		close(lfd);
	fd = open(victim, O_RDONLY);
	n = fd == -1 ? -1 : read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CU_ASSERT_STRING_EQUAL(buf, "precious\n");
	if (fd != -1)
		close(fd);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
}

/*
 * The state directory belongs to `user' once nlmd dropped to it, and the
 * next start runs as root again: a symbolic link planted as nlmd.lock must
 * not make root truncate and write whatever it points to.
 */
static void
test_lock_symlink(void)
{
	lock_planted(symlink, "nlmd.lock");
}

/*
 * The same for a hard link: open() follows none, but truncating and
 * writing nlmd.lock would write the file it is another name of.
 */
static void
test_lock_hardlink(void)
{
	lock_planted(link, "not a plain file of its own");
}

/*
 * A FIFO planted as nlmd.lock opens (O_NONBLOCK), has one link and takes
 * a flock(), but is no file to hold the pid: refused as the links are.
 */
static void
test_lock_fifo(void)
{
	char dir[64], path[128], err[256] = "";
	struct stat st;
	int lfd = -1;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-ff.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nlmd.lock", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	CU_ASSERT_EQUAL(statedir_lock(dir, &lfd, err, sizeof(err)),
	    CM_INVALID);
	CU_ASSERT_EQUAL(lfd, -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a plain file of its own"));
	if (lfd != -1)
		close(lfd);
	CU_ASSERT(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
}

/*
 * Two nlmds on one state directory: the second is refused, naming the
 * first's pid, while the first holds the lock; once it is gone, the
 * directory is free again.
 */
static void
test_lock_busy(void)
{
	char dir[64], want[128], err[256] = "";
	int lfd = -1, lfd2 = -1;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-bz.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL_FATAL(statedir_lock(dir, &lfd, err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_EQUAL(statedir_lock(dir, &lfd2, err, sizeof(err)),
	    CM_BUSY);
	CU_ASSERT_EQUAL(lfd2, -1);
	snprintf(want, sizeof(want), "in use by another nlmd (pid %ld)",
	    (long)getpid());
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	if (lfd2 != -1)
		close(lfd2);
	close(lfd);
	CU_ASSERT_EQUAL(statedir_lock(dir, &lfd2, err, sizeof(err)), CM_OK);
	if (lfd2 != -1)
		close(lfd2);
	snprintf(want, sizeof(want), "rm -rf '%s'", dir);
	CU_ASSERT(system(want) == 0);
}

/*
 * nlmd.lock left by an earlier nlmd whose pid was longer: the new one
 * holds this pid alone.  Written over it without truncating it, the
 * old tail would stay ("99\n" over "1234567\n" reads "99\n567\n"), and
 * `kill $(cat nlmd.lock)' signal a second, unrelated process.
 * statedir_write_pid() (after daemonize()) writes over the parent's pid
 * the same way.
 */
static void
test_lock_pid(void)
{
	char dir[64], path[128], want[32], buf[64], err[256] = "";
	int fd, lfd = -1;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-pid.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nlmd.lock", dir);
	CU_ASSERT_FATAL((fd = open(path, O_CREAT | O_WRONLY, 0600)) != -1);
	CU_ASSERT(write(fd, "123456789012\n", 13) == 13);
	close(fd);
	CU_ASSERT_EQUAL(statedir_lock(dir, &lfd, err, sizeof(err)), CM_OK);
	snprintf(want, sizeof(want), "%ld\n", (long)getpid());
	fd = open(path, O_RDONLY);
	n = fd == -1 ? -1 : read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CU_ASSERT_STRING_EQUAL(buf, want);
	if (fd != -1)
		close(fd);
	if (lfd != -1)
		close(lfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
}

/*
 * The directories statedir_lock() creates above the state directory must
 * let the user nlmd drops to through: the store opens its next log file
 * by name after the drop, and under a parent made 0700 for root it could
 * not (Berkeley DB panicked at the first log switch and nlmd stopped).
 * Only the state directory itself is private.
 */
static void
test_lock_parents(void)
{
	char dir[64], path[128], err[256] = "";
	struct stat st;
	mode_t old;
	int lfd = -1;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-pm.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	/* A strict umask: what nlmd creates must not depend on it. */
	old = umask(077);
	snprintf(path, sizeof(path), "%s/a/b/state", dir);
	CU_ASSERT_EQUAL(statedir_lock(path, &lfd, err, sizeof(err)), CM_OK);
	umask(old);
	if (lfd != -1)
		close(lfd);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755);
	snprintf(path, sizeof(path), "%s/a", dir);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755);
	/* "state-directory = /x/state/": state is still the private one. */
	old = umask(077);
	snprintf(path, sizeof(path), "%s/c/state//", dir);
	CU_ASSERT_EQUAL(statedir_lock(path, &lfd, err, sizeof(err)), CM_OK);
	umask(old);
	if (lfd != -1)
		close(lfd);
	snprintf(path, sizeof(path), "%s/c/state", dir);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700);
	snprintf(path, sizeof(path), "%s/c", dir);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755);
	/*
	 * Under the usual umask (022, systemd's) too: the state directory
	 * is 0700 (README) whatever the umask lets through.
	 */
	old = umask(022);
	snprintf(path, sizeof(path), "%s/d/state", dir);
	CU_ASSERT_EQUAL(statedir_lock(path, &lfd, err, sizeof(err)), CM_OK);
	umask(old);
	if (lfd != -1)
		close(lfd);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
}

/*
 * A state directory under a directory the user nlmd drops to cannot
 * search: nlmd served, then stopped at its first commit (the store opens
 * files there by name after the drop; Berkeley DB panicked).
 * priv_path_check() finds it before anything is opened, and names the
 * directory in the way; a symbolic link is followed to where it leads.
 */
static void
test_path_check(void)
{
	char dir[64], path[160], link[160], err[512] = "";

	if (getuid() != 0) {
		printf("\n    SKIPPED: priv_path_check needs root (a drop) ");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/nlmd-pc.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/private", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/private/state", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0700), 0);
	/* As root, anything goes; as nobody, private/ is in the way. */
	CU_ASSERT_EQUAL(priv_path_check(0, 0, path, err, sizeof(err)), CM_OK);
	CU_ASSERT_EQUAL(priv_path_check(65534, 65534, path, err,
	    sizeof(err)), CM_DENIED);
	snprintf(link, sizeof(link), "%s/private: ", dir);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, link));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "Permission denied"));
	/* A trailing '/' does not make the state directory its own parent. */
	snprintf(path, sizeof(path), "%s/private/state/", dir);
	CU_ASSERT_EQUAL(priv_path_check(65534, 65534, path, err,
	    sizeof(err)), CM_DENIED);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, link));
	/* Searchable, not readable: enough.  The state directory's own mode
	 * does not matter (nlmd gives it to the user). */
	snprintf(path, sizeof(path), "%s/private", dir);
	CU_ASSERT_EQUAL(chmod(path, 0711), 0);
	snprintf(path, sizeof(path), "%s/private/state/", dir);
	CU_ASSERT_EQUAL(priv_path_check(65534, 65534, path, err,
	    sizeof(err)), CM_OK);
	/* Through a symbolic link into a directory it cannot search. */
	snprintf(path, sizeof(path), "%s/private", dir);
	CU_ASSERT_EQUAL(chmod(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/private/state", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	CU_ASSERT_EQUAL(symlink(path, link), 0);
	CU_ASSERT_EQUAL(priv_path_check(65534, 65534, link, err,
	    sizeof(err)), CM_DENIED);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, link));
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
}

/*
 * statedir_check_own(): what nlmd keeps in a state directory passes; a
 * directory named by mistake, holding anything else, does not (nlmd gave
 * it all to `user').
 */
static void
test_check_own(void)
{
	static const char *const ours[] = { "nlmd.lock", "nsm-state",
	    "DB_CONFIG", "__db.001", "log.0000000001", "meta.db",
	    "journal0.db" };
	char dir[64], path[128], err[256] = "";
	size_t i;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-co.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(statedir_check_own(dir, err, sizeof(err)), CM_OK);
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ours[i]);
		CU_ASSERT((fd = open(path, O_CREAT | O_WRONLY, 0600)) != -1);
		if (fd != -1)
			close(fd);
	}
	snprintf(path, sizeof(path), "%s/lost+found", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0700), 0);
	CU_ASSERT_EQUAL(statedir_check_own(dir, err, sizeof(err)), CM_OK);
	snprintf(path, sizeof(path), "%s/dpkg", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0755), 0);
	CU_ASSERT_EQUAL(statedir_check_own(dir, err, sizeof(err)),
	    CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_EQUAL(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/db", dir);
	CU_ASSERT((fd = open(path, O_CREAT | O_WRONLY, 0600)) != -1);
	if (fd != -1)
		close(fd);
	CU_ASSERT_EQUAL(statedir_check_own(dir, err, sizeof(err)),
	    CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/db is not one of nlmd's"));
	CU_ASSERT_EQUAL(unlink(path), 0);
	/*
	 * Berkeley DB's log files are log.NNNNNNNNNN: not every name that
	 * begins with "log" (/var/lib's logrotate, named by mistake).
	 */
	snprintf(path, sizeof(path), "%s/logrotate", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0755), 0);
	CU_ASSERT_EQUAL(statedir_check_own(dir, err, sizeof(err)),
	    CM_INVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/logrotate is not one of"));
	/* Missing: statedir_lock() will make it, empty. */
	snprintf(path, sizeof(path), "%s/new", dir);
	CU_ASSERT_EQUAL(statedir_check_own(path, err, sizeof(err)), CM_OK);
	/* Not a directory: refused, saying so, not taken for a missing one. */
	snprintf(path, sizeof(path), "%s/nsm-state", dir);
	CU_ASSERT_NOT_EQUAL(statedir_check_own(path, err, sizeof(err)),
	    CM_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "Not a directory"));
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT(system(path) == 0);
}

/*
 * A state directory nlmd's user may not write: the lock file cannot be
 * opened, and the error says what to do (as the store's own errors do),
 * not only "Permission denied".  Run as nobody (root writes anyway); a
 * user other than root owns the directory, so it is made 0555 for it.
 */
static void
test_lock_denied(void)
{
	char dir[64], err[512];
	int status, lfd = -1;
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/nlmd-sd.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL_FATAL(chmod(dir, getuid() == 0 ? 0755 : 0555), 0);
	CU_ASSERT_FATAL((pid = fork()) != -1);
	if (pid == 0) {
		if (getuid() == 0 && priv_drop(65534, 65534, err,
		    sizeof(err)) != CM_OK)
			_exit(9);
		if (statedir_lock(dir, &lfd, err, sizeof(err)) == CM_OK)
			_exit(1);
		if (strstr(err, "nlmd.lock") == NULL ||
		    strstr(err, "ermission denied") == NULL)
			_exit(2);
		if (strstr(err, "give the state directory") == NULL)
			_exit(3);
		_exit(0);
	}
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		printf("\n    state directory not writable: check %d failed ",
		    WEXITSTATUS(status));
	(void)rmdir(dir);
}

int
ct_register_privdrop(void)
{
	CU_pSuite s;

	s = CU_add_suite("privdrop", NULL, NULL);
	if (s == NULL ||
	    CU_add_test(s, "user look-up", test_lookup) == NULL ||
	    CU_add_test(s, "look-ups past lines over 4 KiB (root only)",
	    test_lookup_long_lines) == NULL ||
	    CU_add_test(s, "statedir_chown (root only)", test_chown) == NULL ||
	    CU_add_test(s, "statedir_lock: nlmd.lock a symbolic link",
	    test_lock_symlink) == NULL ||
	    CU_add_test(s, "statedir_lock: nlmd.lock a hard link",
	    test_lock_hardlink) == NULL ||
	    CU_add_test(s, "statedir_lock: nlmd.lock a FIFO",
	    test_lock_fifo) == NULL ||
	    CU_add_test(s, "statedir_lock: nlmd.lock holds this pid alone",
	    test_lock_pid) == NULL ||
	    CU_add_test(s, "statedir_lock: a directory another nlmd holds",
	    test_lock_busy) == NULL ||
	    CU_add_test(s, "statedir_lock: parents it creates 0755, itself 0700",
	    test_lock_parents) == NULL ||
	    CU_add_test(s, "statedir_lock: a directory nlmd may not write",
	    test_lock_denied) == NULL ||
	    CU_add_test(s, "priv_path_check: a directory in the user's way",
	    test_path_check) == NULL ||
	    CU_add_test(s, "statedir_check_own: nothing but nlmd's files",
	    test_check_own) == NULL)
		return -1;
	return 0;
}
