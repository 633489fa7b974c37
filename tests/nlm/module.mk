# tests/nlm: integration tests of the NLM service against a running nlmd
# (run by tests/integration/test_nlm.sh, not by `make check').
#   nlmtest       our client, built on rpcgen client stubs of rpc/nlm_prot.x
#                 (generated here into $(O)/tests/nlm/, never committed),
#                 plus a callback receiver.
#   libnfs_flows  the key flows through libnfs's independent NLM XDR.
NLMT_DIR   := $(O)/tests/nlm
NLMT_CLNT  := $(NLMT_DIR)/nlm_prot_clnt.c
NLMT_OBJS  := $(NLMT_DIR)/nlmtest.o $(NLMT_DIR)/nlmt_wire.o \
              $(NLMT_DIR)/nlmt_grace.o
NLMT_BINS  := $(NLMT_DIR)/nlmtest $(NLMT_DIR)/libnfs_flows

$(NLMT_CLNT): rpc/nlm_prot.x $(O)/rpc/nlm_prot.h
	@mkdir -p $(@D)
	rm -f $@ && $(RPCGEN) -M -l -o $@ rpc/nlm_prot.x
$(NLMT_DIR)/nlm_prot_clnt.o: $(NLMT_CLNT)
	$(CC) $(CFLAGS_GEN) -c $< -o $@
$(NLMT_OBJS): | $(RPC_HDRS)
$(NLMT_DIR)/nlmtest: $(NLMT_OBJS) $(NLMT_DIR)/nlm_prot_clnt.o \
    $(O)/rpc/nlm_prot_xdr.o $(O)/rpc/xdrname.o
	$(CC) $(LDFLAGS) -o $@ $^ $(TIRPC_LIBS) -lpthread
$(NLMT_DIR)/libnfs_flows: $(NLMT_DIR)/libnfs_flows.o
	$(CC) $(LDFLAGS) -o $@ $^ -lnfs

nlm-itest-bins: $(NLMT_BINS)
.PHONY: nlm-itest-bins
.SECONDARY: $(NLMT_CLNT)
-include $(NLMT_OBJS:.o=.d) $(NLMT_DIR)/libnfs_flows.d
