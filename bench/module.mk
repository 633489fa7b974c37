# bench/lkbench: in-process lockcore benchmark (make BUILD=release bench).
# Links only liblockcore.a: it measures the library, nothing else.  It
# includes "lockcore/lockcore.h", so -I. (shared with bench/nlmbench.mk,
# which may also set INC_bench) is all it needs.
INC_bench += -I.
$(O)/lkbench: $(O)/bench/lkbench.o $(O)/liblockcore.a
	$(CC) $(LDFLAGS) -o $@ $^
BENCHES += $(O)/lkbench
-include $(O)/bench/lkbench.d
# bench/hashflood: handles colliding under the old fixed hash vs random.
$(O)/hashflood: $(O)/bench/hashflood.o $(O)/liblockcore.a
	$(CC) $(LDFLAGS) -o $@ $^
BENCHES += $(O)/hashflood
-include $(O)/bench/hashflood.d
# bench/waitbench: the cost of queued requests in lockcore.
$(O)/waitbench: $(O)/bench/waitbench.o $(O)/liblockcore.a
	$(CC) $(LDFLAGS) -o $@ $^
BENCHES += $(O)/waitbench
-include $(O)/bench/waitbench.d
# bench/echosrv: the do-nothing RPC server make bench-compare measures
# nlmd against (the floor of one receive and one send per call); with -U
# the same over io_uring (liburing, for tools/bench-uring.sh).
$(O)/echosrv: $(O)/bench/echosrv.o
	$(CC) $(LDFLAGS) -o $@ $^ -luring
BENCHES += $(O)/echosrv
-include $(O)/bench/echosrv.d
