# Helpers for the integration tests (tests/integration/*.sh): stand-alone
# programs built into $(O)/tests/.  They use plain sockets or libnfs, never
# our own rpc/ code, so what they check is independent of it.
# Guarded: the test script may also name this file with -f.
ifndef ITEST_HELPERS
ITEST_HELPERS := $(O)/tests/garbage $(O)/tests/libnfs_null \
    $(O)/tests/notifyrecv

$(O)/tests/garbage: $(O)/tests/integration/garbage.o
	$(CC) $(LDFLAGS) -o $@ $^

$(O)/tests/libnfs_null: $(O)/tests/integration/libnfs_null.o
	$(CC) $(LDFLAGS) -o $@ $^ -lnfs

$(O)/tests/notifyrecv: $(O)/tests/integration/notifyrecv.o
	$(CC) $(LDFLAGS) -o $@ $^

-include $(O)/tests/integration/garbage.d $(O)/tests/integration/notifyrecv.d $(O)/tests/integration/libnfs_null.d

itest-helpers: $(ITEST_HELPERS)
.PHONY: itest-helpers
endif
