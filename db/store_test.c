/*
 * store_test.c - see store_test.h.
 */
#include "store_test.h"

#include "store_impl.h"

enum store_status
store_test_put_raw(struct store *st, enum store_test_db which,
    const void *key, size_t klen, const void *val, size_t vlen)
{
	enum store_dbi db;

	switch (which) {
	case STORE_TEST_META:
		db = STORE_DBI_META;
		break;
	case STORE_TEST_HOSTS:
		db = STORE_DBI_HOSTS;
		break;
	case STORE_TEST_LOCKS:
		db = STORE_DBI_LOCKS;
		break;
	case STORE_TEST_SHARES:
		db = STORE_DBI_SHARES;
		break;
	default:
		return STORE_INVAL;
	}
	if (key == NULL || klen == 0 || (val == NULL && vlen > 0))
		return STORE_INVAL;
	/* store_stage() deletes on a NULL value; an empty value is a put. */
	return store_stage(st, db, key, klen, val != NULL ? val : "", vlen);
}
