# tests/fuzz: libFuzzer harnesses under ASan and UBSan (Debian's clang).
#   fuzz-nlmxdr    the in-place NLM decoder (nlm/nlm_xdr.c) against rpcgen's
#   fuzz-recmark   TCP record marking in rpc/srv_tcp.c, over a Unix socket
#   fuzz-dispatch  whole NLM and NSM calls through the server's dispatch, the
#                  rpcgen dispatchers, nlm/ and nsm/ into lockcore, over the
#                  fake store; lk_table_check() after every turn
#   fuzz-ctl       control requests (nlmctl's protocol) through the control
#                  server and the commands of nlm/nlm_ctl.c, over a Unix
#                  socket, to a service over the fake store
# Everything is built in the variant BUILD=fuzz (build/fuzz/, clang, every
# library instrumented).  `make fuzz' runs each harness FUZZ_SECONDS
# (default 600); tools/test.sh runs tests/fuzz/run.sh short (20 s each),
# which first replays the committed corpus and crash regressions.
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES := nlmxdr recmark dispatch ctl

ifeq ($(BUILD),fuzz)
CC        := clang
FUZZ_SAN  := -O1 -fno-omit-frame-pointer \
             -fsanitize=fuzzer-no-link,address,undefined \
             -fno-sanitize-recover=all
# clang finds more under -Wformat=2 than gcc (a va_list helper in log.c);
# the debug and asan builds (gcc) keep the strict check.
FUZZ_WARN := -Wno-format-nonliteral
CFLAGS_STRICT += $(FUZZ_SAN) $(FUZZ_WARN)
CFLAGS_GEN    += $(FUZZ_SAN)
LDFLAGS   += -fsanitize=address,undefined
FUZZ_LD   := -fsanitize=fuzzer,address,undefined
FUZZ_BINS := $(patsubst %,$(O)/fuzz/fuzz-%,$(FUZZ_HARNESSES))

$(O)/fuzz/fuzz-nlmxdr: $(O)/tests/fuzz/fuzz_nlmxdr.o $(O)/nlm/nlm_xdr.o \
    $(O)/rpc/nlm_prot_xdr.o $(O)/rpc/xdrname.o
	@mkdir -p $(@D)
	$(CC) $(FUZZ_LD) -o $@ $^ $(TIRPC_LIBS)

# fuzz_recmark.c reaches the server transport's internals through
# rpc/srv_impl.h; the real sender.
$(O)/fuzz/fuzz-recmark: $(O)/tests/fuzz/fuzz_recmark.o $(O)/librpc.a \
    $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(FUZZ_LD) -o $@ $^ $(TIRPC_LIBS)

# fuzz_dispatch.c defines the two sending functions (nothing leaves the
# process); its definitions come before librpc.a, so rpcsend.o is never
# pulled from it.  fz_service.c: the service both it and fuzz_ctl.c run.
FUZZ_DISP_LIBS := $(O)/libnsm.a $(O)/libnlm.a $(O)/libctl.a $(O)/librpc.a \
    $(O)/liblockcore.a $(O)/libcommon.a
FUZZ_SVC_OBJS := $(O)/tests/fuzz/fz_service.o $(O)/tests/fakes/store_fake.o
$(O)/fuzz/fuzz-dispatch: $(O)/tests/fuzz/fuzz_dispatch.o $(FUZZ_SVC_OBJS) \
    $(FUZZ_DISP_LIBS)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_LD) -o $@ $(O)/tests/fuzz/fuzz_dispatch.o \
	    $(FUZZ_SVC_OBJS) -Wl,--start-group $(FUZZ_DISP_LIBS) \
	    -Wl,--end-group $(TIRPC_LIBS)

# fuzz_ctl.c: the same libraries and sending functions as fuzz_dispatch.c,
# the real control server (libctl.a) on a Unix socket.
$(O)/fuzz/fuzz-ctl: $(O)/tests/fuzz/fuzz_ctl.o $(FUZZ_SVC_OBJS) \
    $(FUZZ_DISP_LIBS)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_LD) -o $@ $(O)/tests/fuzz/fuzz_ctl.o \
	    $(FUZZ_SVC_OBJS) -Wl,--start-group $(FUZZ_DISP_LIBS) \
	    -Wl,--end-group $(TIRPC_LIBS)

FUZZ_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard tests/fuzz/*.c))
$(FUZZ_OBJS): | $(RPC_HDRS)
-include $(FUZZ_OBJS:.o=.d)

fuzz-bins: $(FUZZ_BINS)
else
fuzz-bins:
	@$(MAKE) --no-print-directory BUILD=fuzz fuzz-bins
endif

# Each harness for FUZZ_SECONDS, after replaying its corpus.
fuzz: fuzz-bins
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh long

.PHONY: fuzz fuzz-bins
