# bench: nlmbench, the NLM load generator.  It encodes and decodes NLM v4
# by hand (independent of the XDR nlmd is built from) and links nothing of
# ours.  Build: make BUILD=release bench  ->  build/release/nlmbench
INC_bench := -I.
$(O)/nlmbench: $(O)/bench/nlmbench.o
	$(CC) $(LDFLAGS) -pthread -o $@ $^
BENCHES += $(O)/nlmbench
# Explicit as well: `bench: $(BENCHES)' in GNUmakefile is expanded before
# this fragment when it is given with a second -f.
bench: $(O)/nlmbench
-include $(O)/bench/nlmbench.d
