/*
 * suites.c - the store test binary's suites (see tests/runner.h).
 */
#include "tests/runner.h"

#include "stt.h"

int
tests_register(void)
{
	if (stt_register_basic() != 0 || stt_register_fault() != 0 ||
	    stt_register_durable() != 0 || stt_register_commit() != 0 ||
	    stt_register_journal() != 0 ||
	    stt_register_syncfail() != 0 || stt_register_writefail() != 0 ||
	    stt_register_cut() != 0 ||
	    stt_register_damage() != 0 || stt_register_dump() != 0)
		return -1;
	return 0;
}
