/*
 * privdrop.h - giving up root: nlmd started as root outside systemd binds
 * its sockets, opens its store and then runs as the configured `user'
 * (OpenBSD's lesson: do the privileged work first, then drop for good).
 */
#ifndef NLMD_COMMON_PRIVDROP_H
#define NLMD_COMMON_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

#include "status.h"

/*
 * Look `name' up in the user database: its uid and primary gid.  CM_OK,
 * or with a reason in err[errlen] CM_NOTFOUND (no such user) or what the
 * lookup's error maps to.
 */
enum cm_status	priv_user_lookup(const char *name, uid_t *uid, gid_t *gid,
		    char *err, size_t errlen);

/* Look group `name' up: its gid.  As priv_user_lookup(). */
enum cm_status	priv_group_lookup(const char *name, gid_t *gid, char *err,
		    size_t errlen);

/*
 * Become `uid' with `gid' as the only group (setgroups, setgid, setuid:
 * real, effective and saved ids, every thread of the process), and check
 * that root cannot be regained.  CM_OK, or with a reason in err[errlen]
 * CM_DENIED (root could be regained, or a call was refused) or another
 * status; on failure the caller must not go on (some ids may have
 * changed).
 */
enum cm_status	priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * Can `uid', with `gid' as its only group (what priv_drop() leaves), get
 * through every directory above `path' (search permission)?  A child
 * process drops to them and tries, so the answer is the kernel's (modes,
 * ACLs, security modules), and the caller changes nothing.  It forks:
 * call it while the process has one thread.  CM_OK, or with a reason in
 * err[errlen] CM_DENIED ("DIR: why", DIR the first directory that stops
 * them; or why the child could not drop), or what forking failed with.
 */
enum cm_status	priv_path_check(uid_t uid, gid_t gid, const char *path,
		    char *err, size_t errlen);

#endif
