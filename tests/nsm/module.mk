# tests/nsm: the peer of nlmd's status monitor for
# tests/integration/test_nsm.sh (run there, not by `make check').
#   nsmpeer  a client that locks and notifies, a callback receiver for
#            rpc.statd, a stand-in status monitor, a silent port; built
#            on libtirpc and the generated XDR routines.
NSMT_BIN := $(O)/tests/nsm/nsmpeer

$(O)/tests/nsm/nsmpeer.o: | $(RPC_HDRS)
$(NSMT_BIN): $(O)/tests/nsm/nsmpeer.o $(O)/rpc/nlm_prot_xdr.o \
    $(O)/rpc/sm_inter_xdr.o $(O)/rpc/xdrname.o
	$(CC) $(LDFLAGS) -o $@ $^ $(TIRPC_LIBS)

nsm-itest-bins: $(NSMT_BIN)
.PHONY: nsm-itest-bins
-include $(O)/tests/nsm/nsmpeer.d
