# tests/restart: crashdrv, the load and verification driver of
# tests/integration/test_restart.sh and tools/bench-restart.sh (not run by
# `make check').  NLM v4 clients on rpcgen client stubs of rpc/nlm_prot.x,
# generated here into $(O)/tests/restart/ (never into the tree), and a
# callback receiver.
# Guarded: test_restart.sh also names this file with -f, so the same
# command works whether or not GNUmakefile includes it.
ifndef RST_DIR
RST_DIR   := $(O)/tests/restart
RST_CLNT  := $(RST_DIR)/nlm_prot_clnt.c
RST_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard tests/restart/*.c))

$(RST_CLNT): rpc/nlm_prot.x $(O)/rpc/nlm_prot.h
	@mkdir -p $(@D)
	rm -f $@ && $(RPCGEN) -M -l -o $@ rpc/nlm_prot.x
$(RST_DIR)/nlm_prot_clnt.o: $(RST_CLNT)
	$(CC) $(CFLAGS_GEN) -c $< -o $@
$(RST_OBJS): | $(RPC_HDRS)
$(RST_DIR)/crashdrv: $(RST_OBJS) $(RST_DIR)/nlm_prot_clnt.o \
    $(O)/rpc/nlm_prot_xdr.o $(O)/rpc/xdrname.o
	$(CC) $(LDFLAGS) -o $@ $^ $(TIRPC_LIBS) -lpthread

restart-itest-bins: $(RST_DIR)/crashdrv
.PHONY: restart-itest-bins
.SECONDARY: $(RST_CLNT)
-include $(RST_OBJS:.o=.d)
endif
