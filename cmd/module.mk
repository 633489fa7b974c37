# cmd: main() of each program: wiring only.
INC_cmd := -I. -Icommon -Ictl -Irpc -Inlm -Insm -Ilockcore -Idb -I$(O) $(PKG_CFLAGS)
NLMD_OBJS := $(O)/cmd/nlmd.o $(O)/cmd/dump.o $(O)/cmd/svcmgr.o
NLMD_LIBS := $(O)/libnsm.a $(O)/libnlm.a $(O)/libctl.a $(O)/librpc.a \
             $(O)/libstore.a $(O)/liblockcore.a $(O)/libcommon.a
$(O)/nlmd: $(NLMD_OBJS) $(NLMD_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(NLMD_OBJS) -Wl,--start-group $(NLMD_LIBS) \
	    -Wl,--end-group $(TIRPC_LIBS) $(DB_LIBS) -lmicrohttpd
BINS += $(O)/nlmd
$(NLMD_OBJS): | $(RPC_HDRS)
-include $(NLMD_OBJS:.o=.d)

# nlmctl: the operator's tool; the control protocol and jansson only.
NLMCTL_OBJS := $(O)/cmd/nlmctl.o
$(O)/nlmctl: $(NLMCTL_OBJS) $(O)/libctl.a $(O)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $(NLMCTL_OBJS) $(O)/libctl.a $(O)/libcommon.a \
	    -ljansson
BINS += $(O)/nlmctl
-include $(NLMCTL_OBJS:.o=.d)
