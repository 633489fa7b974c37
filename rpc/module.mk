# rpc: our .x files, the code rpcgen makes from them (into $(O)/rpc, never
# into the tree), and the transport (listeners, record marking, dispatch,
# outbound calls).  Only rpc/, nlm/ and nsm/ may include the generated headers.
RPC_X     := rpc/nlm_prot.x rpc/sm_inter.x
RPC_HDRS  := $(patsubst %.x,$(O)/%.h,$(RPC_X))
RPC_GEN_C := $(patsubst %.x,$(O)/%_xdr.c,$(RPC_X)) $(patsubst %.x,$(O)/%_svc.c,$(RPC_X))
RPC_GEN_O := $(RPC_GEN_C:.c=.o)
INC_rpc   := -I. -Irpc -Icommon -I$(O) $(PKG_CFLAGS)
RPC_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard rpc/*.c))

$(O)/rpc/%.h: rpc/%.x
	@mkdir -p $(@D)
	rm -f $@ && $(RPCGEN) -M -h -o $@ $<
$(O)/rpc/%_xdr.c: rpc/%.x $(O)/rpc/%.h
	rm -f $@ && $(RPCGEN) -M -c -o $@ $<
$(O)/rpc/%_svc.c: rpc/%.x $(O)/rpc/%.h
	rm -f $@ && $(RPCGEN) -M -m -o $@ $<
$(O)/rpc/%_xdr.o: $(O)/rpc/%_xdr.c
	$(CC) $(CFLAGS_GEN) -c $< -o $@
$(O)/rpc/%_svc.o: $(O)/rpc/%_svc.c
	$(CC) $(CFLAGS_GEN) -c $< -o $@

$(O)/librpc.a: $(RPC_GEN_O) $(RPC_OBJS)
	rm -f $@ && ar rcs $@ $^
$(RPC_OBJS): | $(RPC_HDRS)
-include $(RPC_OBJS:.o=.d) $(RPC_GEN_O:.o=.d)
.SECONDARY: $(RPC_GEN_C) $(RPC_HDRS)
