/*
 * statedir.c - see statedir.h.
 */
#include "statedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * mkdir -p: the state directory 0700, the directories above it that we
 * create 0755 whatever the umask.  The user nlmd drops to must get
 * through those: the store opens files by name after the drop (its next
 * log file), and under a parent made 0700 for root Berkeley DB panicked
 * at the first log switch.
 */
static enum cm_status
statedir_mkdirs(const char *path, char *err, size_t errlen)
{
	char buf[4096];
	size_t i, n = strlen(path);
	int last;

	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen, "state directory name is empty or too long");
		return CM_INVALID;
	}
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		last = path[i] == '\0' || path[i + strspn(path + i, "/")] ==
		    '\0';
		buf[i] = '\0';
		if (mkdir(buf, last ? 0700 : 0755) == 0) {
			if (!last && chmod(buf, 0755) == -1) {
				snprintf(err, errlen, "cannot make %s 0755: %s",
				    buf, strerror(errno));
				return cm_status_of_errno(errno);
			}
		} else if (errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", buf,
			    strerror(errno));
			return cm_status_of_errno(errno);
		}
		buf[i] = path[i];
	}
	return CM_OK;
}

enum cm_status
statedir_lock(const char *path, int *fdp, char *err, size_t errlen)
{
	char lockpath[4200], pidbuf[32];
	enum cm_status s;
	struct stat st;
	ssize_t n;
	int fd;

	*fdp = -1;
	if ((s = statedir_mkdirs(path, err, errlen)) != CM_OK)
		return s;
	snprintf(lockpath, sizeof(lockpath), "%s/nlmd.lock", path);
	/*
	 * The directory belongs to `user' after a drop, and the
	 * next start runs as root: what is named nlmd.lock must be a file
	 * of its own, never a link to one we would truncate.
	 */
	if ((fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK, 0600)) == -1) {
		int e = errno;

		/* As the store says it (db/store.c): what to do about it. */
		snprintf(err, errlen, "cannot open %s: %s%s", lockpath,
		    strerror(e), e == EACCES || e == EPERM ? " -- give the "
		    "state directory (mode 0700) and its files (0600) to the "
		    "user nlmd starts as, then start nlmd again" : e == EROFS ?
		    " -- the file system is read-only: make it writable, "
		    "then start nlmd again" : "");
		return cm_status_of_errno(e);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1) {
		snprintf(err, errlen, "%s is not a plain file of its own; "
		    "refusing to start", lockpath);
		close(fd);
		return CM_INVALID;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		int e = errno;

		n = pread(fd, pidbuf, sizeof(pidbuf) - 1, 0);
		pidbuf[n > 0 ? n : 0] = '\0';
		pidbuf[strcspn(pidbuf, "\n")] = '\0';
		if (e == EWOULDBLOCK)
			snprintf(err, errlen, "state directory %s is in use by "
			    "another nlmd (pid %s); refusing to start", path,
			    pidbuf[0] ? pidbuf : "unknown");
		else
			snprintf(err, errlen, "cannot lock %s: %s", lockpath,
			    strerror(e));
		close(fd);
		return e == EWOULDBLOCK ? CM_BUSY : cm_status_of_errno(e);
	}
	statedir_write_pid(fd);
	*fdp = fd;
	return CM_OK;
}

void
statedir_write_pid(int fd)
{
	char buf[32];
	int n;

	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, buf, (size_t)n, 0);
}

/* A name nlmd (or Berkeley DB for it) keeps in a state directory. */
static int
statedir_is_ours(const char *name)
{
	static const char *const names[] = { "nlmd.lock", "nsm-state",
	    "DB_CONFIG", "lost+found" };
	static const char *const prefixes[] = { "__db.", "log." };
	size_t i, n = strlen(name);

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return n > 3 && strcmp(name + n - 3, ".db") == 0;
}

enum cm_status
statedir_check_own(const char *path, char *err, size_t errlen)
{
	struct dirent *de;
	DIR *dir;
	int e;

	if ((dir = opendir(path)) == NULL) {
		if (errno == ENOENT)
			return CM_OK;
		e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return cm_status_of_errno(e);
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    statedir_is_ours(de->d_name))
			continue;
		snprintf(err, errlen, "%s/%s is not one of nlmd's files", path,
		    de->d_name);
		closedir(dir);
		return CM_INVALID;
	}
	closedir(dir);
	return CM_OK;
}

/* chown one entry (not through a symbolic link) unless it is already. */
static int
statedir_chown_one(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (S_ISLNK(st.st_mode) || (st.st_uid == uid && st.st_gid == gid))
		return 0;
	return fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW);
}

enum cm_status
statedir_chown(const char *path, uid_t uid, gid_t gid, char *err,
    size_t errlen)
{
	struct dirent *de;
	DIR *dir;
	int fd, e;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (dir = fdopendir(fd)) == NULL) {
		e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		if (fd != -1)
			close(fd);
		return cm_status_of_errno(e);
	}
	if (fchown(fd, uid, gid) == -1) {
		e = errno;
		snprintf(err, errlen, "cannot give %s to uid %u: %s", path,
		    (unsigned)uid, strerror(e));
		closedir(dir);
		return cm_status_of_errno(e);
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (statedir_chown_one(fd, de->d_name, uid, gid) == -1) {
			e = errno;
			snprintf(err, errlen, "cannot give %s/%s to uid %u: %s",
			    path, de->d_name, (unsigned)uid, strerror(e));
			closedir(dir);
			return cm_status_of_errno(e);
		}
	}
	closedir(dir);
	return CM_OK;
}
