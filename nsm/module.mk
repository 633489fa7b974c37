# nsm: the status monitor.  Sees generated types, common, the transport and
# the NLM service's public header.
INC_nsm   := -I. -Insm -Inlm -Ictl -Icommon -Irpc -Idb -Ilockcore -I$(O) $(PKG_CFLAGS)
NSM_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard nsm/*.c))
$(O)/libnsm.a: $(NSM_OBJS)
	rm -f $@ && ar rcs $@ $^
$(NSM_OBJS): | $(RPC_HDRS)
-include $(NSM_OBJS:.o=.d)
