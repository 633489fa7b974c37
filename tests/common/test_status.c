/*
 * test_status.c - common/status.c: every status has its own name, and
 * errno values map to the kind a caller acts on.
 */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <string.h>

#include "ct.h"
#include "status.h"

static void
test_names(void)
{
	enum cm_status a, b;

	for (a = CM_OK; a <= CM_SYSTEM; a++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(cm_strerror(a));
		CU_ASSERT(strlen(cm_strerror(a)) > 0);
		for (b = CM_OK; b < a; b++)
			CU_ASSERT(strcmp(cm_strerror(a), cm_strerror(b)) != 0);
	}
	CU_ASSERT_STRING_EQUAL(cm_strerror((enum cm_status)99),
	    "unknown status");
}

static void
test_errno(void)
{
	CU_ASSERT_EQUAL(cm_status_of_errno(0), CM_OK);
	CU_ASSERT_EQUAL(cm_status_of_errno(ENOENT), CM_NOTFOUND);
	CU_ASSERT_EQUAL(cm_status_of_errno(EACCES), CM_DENIED);
	CU_ASSERT_EQUAL(cm_status_of_errno(EPERM), CM_DENIED);
	CU_ASSERT_EQUAL(cm_status_of_errno(ENOMEM), CM_NOMEM);
	CU_ASSERT_EQUAL(cm_status_of_errno(EWOULDBLOCK), CM_BUSY);
	CU_ASSERT_EQUAL(cm_status_of_errno(EINVAL), CM_INVALID);
	CU_ASSERT_EQUAL(cm_status_of_errno(EIO), CM_SYSTEM);
}

int
ct_register_status(void)
{
	CU_pSuite s = CU_add_suite("common/status", NULL, NULL);

	if (s == NULL || CU_add_test(s, "names", test_names) == NULL ||
	    CU_add_test(s, "errno", test_errno) == NULL)
		return -1;
	return 0;
}
