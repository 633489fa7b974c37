/*
 * statedir.h - the daemon's state directory and its single-owner lock.
 *
 * The directory is created if missing (mode 0700; missing directories
 * above it 0755, so that the user nlmd drops to gets through them).
 * "nlmd.lock" inside it is held with flock() for the life of the process
 * and holds our pid, so a second daemon on the same directory refuses to
 * start and says which process owns it.
 */
#ifndef NLMD_COMMON_STATEDIR_H
#define NLMD_COMMON_STATEDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "status.h"

/*
 * Create `path' if needed and take its lock.  CM_OK with the lock's fd in
 * *fdp (keep it open), or with a reason in err[errlen] and *fdp -1:
 * CM_BUSY (another nlmd holds it), CM_INVALID (no usable name), or what
 * creating or opening failed with.
 */
enum cm_status	statedir_lock(const char *path, int *fdp, char *err,
		    size_t errlen);

/* Rewrite our pid into the lock file (after daemonising). */
void	statedir_write_pid(int fd);

/*
 * Does everything directly in `path' belong to nlmd: the lock file, the
 * store's files (Berkeley DB's __db.* and log.*, *.db, DB_CONFIG), a
 * legacy nsm-state, a file system's lost+found?  Call it before
 * statedir_chown() gives the directory away, so that a state directory
 * named by mistake (/var/lib, /srv, /tmp) costs no one their files.
 * CM_OK (a missing `path' too: statedir_lock() makes it empty), or with
 * "PATH/NAME is not one of nlmd's files" in err[errlen] CM_INVALID, or
 * what opening it failed with.
 */
enum cm_status	statedir_check_own(const char *path, char *err,
		    size_t errlen);

/*
 * Give `path' and everything directly in it (the state directory is flat;
 * symbolic links are left alone) to uid:gid, so that nlmd can go on using
 * it after dropping root.  CM_OK, or a status with a reason in err[errlen].
 */
enum cm_status	statedir_chown(const char *path, uid_t uid, gid_t gid,
		    char *err, size_t errlen);

#endif
