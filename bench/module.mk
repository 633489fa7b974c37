# bench/lkbench: in-process lockcore benchmark (make bench).  Links only
# liblockcore.a: it measures the library, nothing else.
INC_bench := -Ilockcore
$(O)/lkbench: $(O)/bench/lkbench.o $(O)/liblockcore.a
	$(CC) $(LDFLAGS) -o $@ $^
BENCHES += $(O)/lkbench
-include $(O)/bench/lkbench.d
