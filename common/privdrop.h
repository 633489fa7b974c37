/*
 * privdrop.h - giving up root: nlmd started as root outside systemd binds
 * its sockets, opens its store and then runs as the configured `user'
 * (OpenBSD's lesson: do the privileged work first, then drop for good).
 */
#ifndef NLMD_COMMON_PRIVDROP_H
#define NLMD_COMMON_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Look `name' up in the user database: its uid and primary gid.  Returns
 * 0, or -1 with a reason in err[errlen] (no such user, or the lookup
 * failed).
 */
int	priv_user_lookup(const char *name, uid_t *uid, gid_t *gid, char *err,
	    size_t errlen);

/*
 * Become `uid' with `gid' as the only group (setgroups, setgid, setuid:
 * real, effective and saved ids, every thread of the process), and check
 * that root cannot be regained.  Returns 0, or -1 with a reason in
 * err[errlen]; on failure the caller must not go on (some ids may have
 * changed).
 */
int	priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
