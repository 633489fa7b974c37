/*
 * nfsconf.h - reading files in the format of /etc/nfs.conf (nfs.conf(5)),
 * as nfs-utils reads them.
 *
 * FORMAT.  "[section]" starts a section ("[name "arg"]" a section with an
 * argument: its name is then the whole text between the brackets, which
 * matches no plain name); "key = value" assigns.  Leading and trailing
 * blanks are ignored, and so are blanks around '='.  A line whose first
 * non-blank character is '#' or ';' is a comment, and so is the rest of an
 * unquoted value from the first '#' or ';' on.  A value in double or
 * single quotes is what lies between them.  An assignment whose value is
 * empty is ignored, but one whose value is an empty pair of quotes is
 * handed on with value "" (nfs-utils ignores both: callbacks ignore ""
 * in other programs' sections; nlmd's own keys take it as "set this
 * string empty").  A line ending in '\' continues on the next.
 * "include = FILE" reads FILE in place (relative names are relative to the
 * including file's directory; a leading '-' means a missing FILE is
 * fine); the included file starts in the including line's section, and
 * sections it opens end with it.  Not supported: "$name" values taken from
 * the environment (read literally).
 */
#ifndef NLMD_COMMON_NFSCONF_H
#define NLMD_COMMON_NFSCONF_H

#include <stddef.h>

#include "status.h"

/* The longest section name passed to a callback, its NUL included. */
#define NFSCONF_SECTION_MAX	256

/*
 * Called for every assignment, in order: `file' and `line' say where it
 * was written, `section' is the section it is in ("" before the first
 * one; cut to NFSCONF_SECTION_MAX - 1 bytes), `key' and `value' are as described above.  For a line that is
 * neither a comment, a section nor an assignment, `key' is NULL and
 * `value' the line.  Return 0 to go on, or -1 to stop the read (with a
 * reason in err[errlen]).
 */
typedef int	nfsconf_cb(void *arg, const char *file, unsigned line,
		    const char *section, const char *key, const char *value,
		    char *err, size_t errlen);

/*
 * Read `path' (and what it includes), calling `cb' for each line that
 * matters.  A missing `path' is not an error when `optional' is non-zero;
 * a missing non-optional include is a warning: "file:line: ..." appended
 * to warn[warnlen] (one line each, '\n'-terminated; warn may be NULL).
 * CM_OK, or a status with a reason in err[errlen]: what opening or
 * reading a file failed with, CM_NOMEM, CM_INVALID (includes nested over
 * 10 deep, or the callback's reason).
 */
enum cm_status	nfsconf_read(const char *path, int optional, nfsconf_cb *cb,
		    void *arg, char *warn, size_t warnlen, char *err,
		    size_t errlen);

#endif
