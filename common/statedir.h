/*
 * statedir.h - the daemon's state directory and its single-owner lock.
 *
 * The directory is created if missing (mode 0700).  "nlmd.lock" inside it
 * is held with flock() for the life of the process and holds our pid, so a
 * second daemon on the same directory refuses to start and says which
 * process owns it.
 */
#ifndef NLMD_COMMON_STATEDIR_H
#define NLMD_COMMON_STATEDIR_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Create `path' if needed and take its lock.  Returns the lock fd (keep it
 * open), or -1 with a reason in err[errlen].
 */
int	statedir_lock(const char *path, char *err, size_t errlen);

/* Rewrite our pid into the lock file (after daemonising). */
void	statedir_write_pid(int fd);

/*
 * Give `path' and everything directly in it (the state directory is flat;
 * symbolic links are left alone) to uid:gid, so that nlmd can go on using
 * it after dropping root.  Returns 0, or -1 with a reason in err[errlen].
 */
int	statedir_chown(const char *path, uid_t uid, gid_t gid, char *err,
	    size_t errlen);

#endif
