# lockcore: protocol-free lock manager.  Sees only the C library and itself.
INC_lockcore  := -Ilockcore
LOCKCORE_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard lockcore/*.c))
$(O)/liblockcore.a: $(LOCKCORE_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
-include $(LOCKCORE_OBJS:.o=.d)
