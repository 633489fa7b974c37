/*
 * privdrop.c - see privdrop.h.
 *
 * glibc applies setgroups(), setgid() and setuid() to every thread of the
 * process (the store's committer and checkpoint threads already run when
 * nlmd drops), so no thread keeps root.
 */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum cm_status
priv_user_lookup(const char *name, uid_t *uid, gid_t *gid, char *err,
    size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int e;

	e = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
	if (e != 0) {
		snprintf(err, errlen, "user '%s': cannot look it up: %s", name,
		    strerror(e));
		return cm_status_of_errno(e);
	}
	if (res == NULL) {
		snprintf(err, errlen, "user '%s' (setting `user') does not "
		    "exist; create it (see init/nlmd.sysusers.conf) or leave "
		    "`user' empty", name);
		return CM_NOTFOUND;
	}
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
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
