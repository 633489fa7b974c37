/*
 * privdrop.c - see privdrop.h.
 *
 * glibc applies setgroups(), setgid() and setuid() to every thread of the
 * process (the store's committer and checkpoint threads already run when
 * nlmd drops), so no thread keeps root.
 */
#include "privdrop.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The buffer getpwnam_r() and getgrnam_r() fill: ERANGE means too small
 * -- a group of a few hundred members, or a long line read before the
 * one asked for -- so it doubles, up to PRIV_BUF_MAX.
 */
#define PRIV_BUF_MAX	(4u << 20)

/*
 * Look `name' up among the users (group false: its uid and gid) or the
 * groups (its gid).  0 (*found: whether it exists) or an errno.
 */
static int
priv_getent(bool group, const char *name, uid_t *uid, gid_t *gid,
    bool *found)
{
	struct passwd pw, *pwr = NULL;
	struct group gr, *grr = NULL;
	char *buf = NULL, *nb;
	size_t len = 4096;
	int e;

	for (;;) {
		if ((nb = realloc(buf, len)) == NULL) {
			e = ENOMEM;
			break;
		}
		buf = nb;
		e = group ? getgrnam_r(name, &gr, buf, len, &grr) :
		    getpwnam_r(name, &pw, buf, len, &pwr);
		if (e != ERANGE || len >= PRIV_BUF_MAX)
			break;
		len *= 2;
	}
	*found = e == 0 && (group ? grr != NULL : pwr != NULL);
	if (*found && group)
		*gid = gr.gr_gid;
	else if (*found) {
		*uid = pw.pw_uid;
		*gid = pw.pw_gid;
	}
	free(buf);
	return e;
}

enum cm_status
priv_user_lookup(const char *name, uid_t *uid, gid_t *gid, char *err,
    size_t errlen)
{
	bool found;
	int e;

	if ((e = priv_getent(false, name, uid, gid, &found)) != 0) {
		snprintf(err, errlen, "user '%s': cannot look it up: %s", name,
		    strerror(e));
		return cm_status_of_errno(e);
	}
	if (!found) {
		snprintf(err, errlen, "user '%s' (setting `user') does not "
		    "exist; create it (see init/nlmd.sysusers.conf) or leave "
		    "`user' empty", name);
		return CM_NOTFOUND;
	}
	return CM_OK;
}

enum cm_status
priv_group_lookup(const char *name, gid_t *gid, char *err, size_t errlen)
{
	uid_t uid;
	bool found;
	int e;

	if ((e = priv_getent(true, name, &uid, gid, &found)) != 0) {
		snprintf(err, errlen, "group '%s': cannot look it up: %s", name,
		    strerror(e));
		return cm_status_of_errno(e);
	}
	if (!found) {
		snprintf(err, errlen, "group '%s': no such group", name);
		return CM_NOTFOUND;
	}
	return CM_OK;
}

enum cm_status
priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	if (setgroups(1, &gid) == -1) {
		snprintf(err, errlen, "setgroups(%u): %s", (unsigned)gid,
		    strerror(errno));
		return cm_status_of_errno(errno);
	}
	if (setresgid(gid, gid, gid) == -1) {
		snprintf(err, errlen, "setresgid(%u): %s", (unsigned)gid,
		    strerror(errno));
		return cm_status_of_errno(errno);
	}
	if (setresuid(uid, uid, uid) == -1) {
		snprintf(err, errlen, "setresuid(%u): %s", (unsigned)uid,
		    strerror(errno));
		return cm_status_of_errno(errno);
	}
	/* Paranoia (OpenBSD): root must be gone for good. */
	if (uid != 0 && (setuid(0) != -1 || seteuid(0) != -1)) {
		snprintf(err, errlen, "could regain root after dropping to "
		    "uid %u", (unsigned)uid);
		return CM_DENIED;
	}
	return CM_OK;
}

/*
 * The child of priv_path_check(): drop, then try each directory above
 * `path' from the top (the first one refused is the one that stops the
 * user: those before it let it through), then `path' itself as the
 * store will name it (stat() needs no permission on it, only on the way
 * there, symbolic links followed).  The reason goes to `fd'; exit 0 when
 * nothing stops the user.
 */
static void
priv_path_child(int fd, uid_t uid, gid_t gid, const char *path)
{
	char dir[4096], msg[4200];
	size_t i, n = strlen(path);
	struct stat st;

	if (priv_drop(uid, gid, msg, sizeof(msg)) != CM_OK)
		goto fail;
	/* A relative name starts at the working directory. */
	if (path[0] != '/' && access(".", X_OK) == -1) {
		snprintf(msg, sizeof(msg), ".: %s", strerror(errno));
		goto fail;
	}
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n >= sizeof(dir)) {
		snprintf(msg, sizeof(msg), "%s: name too long", path);
		goto fail;
	}
	memcpy(dir, path, n);
	for (i = 1; i < n; i++) {
		if (path[i] != '/' || path[i - 1] == '/')
			continue;
		dir[i] = '\0';
		if (access(dir, X_OK) == -1) {
			snprintf(msg, sizeof(msg), "%s: %s", dir,
			    strerror(errno));
			goto fail;
		}
		dir[i] = '/';
	}
	if (stat(path, &st) == -1) {
		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(errno));
		goto fail;
	}
	_exit(0);
fail:
	(void)!write(fd, msg, strlen(msg));
	_exit(1);
}

enum cm_status
priv_path_check(uid_t uid, gid_t gid, const char *path, char *err,
    size_t errlen)
{
	size_t len = 0;
	ssize_t n = 0;
	int p[2], status = -1, e;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1) {
		e = errno;
		snprintf(err, errlen, "checking %s as uid %u: pipe: %s", path,
		    (unsigned)uid, strerror(e));
		return cm_status_of_errno(e);
	}
	if ((pid = fork()) == -1) {
		e = errno;
		snprintf(err, errlen, "checking %s as uid %u: fork: %s", path,
		    (unsigned)uid, strerror(e));
		close(p[0]);
		close(p[1]);
		return cm_status_of_errno(e);
	}
	if (pid == 0) {
		close(p[0]);
		priv_path_child(p[1], uid, gid, path);
	}
	close(p[1]);
	while (len + 1 < errlen && ((n = read(p[0], err + len,
	    errlen - 1 - len)) > 0 || (n == -1 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	if (errlen > 0)
		err[len] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return CM_OK;
	if (len == 0)
		snprintf(err, errlen, "checking %s as uid %u: the child "
		    "process failed", path, (unsigned)uid);
	return CM_DENIED;
}
