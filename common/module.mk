# common: event loop, logging, config, small utilities; no protocol knowledge.
INC_common   := -Icommon
COMMON_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard common/*.c))
$(O)/libcommon.a: $(COMMON_OBJS)
	rm -f $@ && ar rcs $@ $^
-include $(COMMON_OBJS:.o=.d)
