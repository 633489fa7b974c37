# ctl: the control socket (protocol, nlmd's server, shared by nlmctl).
# Knows the event loop and the log (common/), nothing of the protocols.
INC_ctl   := -Ictl -Icommon
CTL_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard ctl/*.c))
$(O)/libctl.a: $(CTL_OBJS)
	rm -f $@ && ar rcs $@ $^
-include $(CTL_OBJS:.o=.d)
