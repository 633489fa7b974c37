# nlm: the NLM service.  Sees generated types, lockcore, common and the
# RPC transport; never Berkeley DB.
INC_nlm   := -I. -Inlm -Ictl -Icommon -Ilockcore -Irpc -Idb -I$(O) $(PKG_CFLAGS)
NLM_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard nlm/*.c))
$(O)/libnlm.a: $(NLM_OBJS)
	rm -f $@ && ar rcs $@ $^
$(NLM_OBJS): | $(RPC_HDRS)
-include $(NLM_OBJS:.o=.d)
