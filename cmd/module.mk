# cmd: main() of each program: wiring only.
INC_cmd := -I. -Icommon -Irpc -Inlm -Insm -Ilockcore -Idb -I$(O) $(PKG_CFLAGS)
NLMD_OBJS := $(O)/cmd/nlmd.o $(O)/cmd/dump.o $(O)/cmd/svcmgr.o
NLMD_LIBS := $(O)/libnsm.a $(O)/libnlm.a $(O)/librpc.a $(O)/libstore.a \
             $(O)/liblockcore.a $(O)/libcommon.a
$(O)/nlmd: $(NLMD_OBJS) $(NLMD_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(NLMD_OBJS) -Wl,--start-group $(NLMD_LIBS) \
	    -Wl,--end-group $(TIRPC_LIBS) -linih $(DB_LIBS)
BINS += $(O)/nlmd
$(NLMD_OBJS): | $(RPC_HDRS)
-include $(NLMD_OBJS:.o=.d)
