# cmd: main() of each program: wiring only.
INC_cmd := -I. -Icommon -Irpc -Inlm -Insm -Ilockcore -I$(O) $(PKG_CFLAGS)
NLMD_LIBS := $(O)/libnsm.a $(O)/libnlm.a $(O)/librpc.a $(O)/liblockcore.a \
             $(O)/libcommon.a
$(O)/nlmd: $(O)/cmd/nlmd.o $(NLMD_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(O)/cmd/nlmd.o -Wl,--start-group $(NLMD_LIBS) \
	    -Wl,--end-group $(TIRPC_LIBS) -linih
BINS += $(O)/nlmd
$(O)/cmd/nlmd.o: | $(RPC_HDRS)
-include $(O)/cmd/nlmd.d
