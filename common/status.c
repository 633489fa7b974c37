/*
 * status.c - names of enum cm_status and the errno mapping.
 */
#include "status.h"

#include <errno.h>

const char *
cm_strerror(enum cm_status s)
{
	switch (s) {
	case CM_OK:		return "success";
	case CM_INVALID:	return "invalid";
	case CM_NOTFOUND:	return "not found";
	case CM_BUSY:		return "in use by another process";
	case CM_DENIED:		return "not permitted";
	case CM_NOMEM:		return "out of memory";
	case CM_SYSTEM:		return "system error";
	}
	return "unknown status";
}

enum cm_status
cm_status_of_errno(int e)
{
	switch (e) {
	case 0:
		return CM_OK;
	case ENOENT:
	case ENOTDIR:
		return CM_NOTFOUND;
	case EACCES:
	case EPERM:
	case EROFS:
		return CM_DENIED;
	case ENOMEM:
		return CM_NOMEM;
	case EWOULDBLOCK:
	case EBUSY:
		return CM_BUSY;
	case EINVAL:
		return CM_INVALID;
	default:
		return CM_SYSTEM;
	}
}
