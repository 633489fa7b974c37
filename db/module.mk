# db: the Berkeley DB store (prefix store_).  The only code that includes
# <db.h>.  Sees lockcore's public header (its record type, its keyed hash:
# link liblockcore.a after libstore.a) and itself.
INC_db    := -Idb -Ilockcore
DB_OBJS   := $(patsubst %.c,$(O)/%.o,$(wildcard db/*.c))
DB_LIBS   := -ldb-5.3 -lpthread
$(O)/libstore.a: $(DB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
-include $(DB_OBJS:.o=.d)

# bench/storebench: the store benchmark (make BUILD=release bench).  Its
# own compile rule: it needs -Idb -Ilockcore, and INC_bench is owned by
# bench/*.mk.
ifneq ($(wildcard bench/storebench.c),)
$(O)/bench/storebench.o: bench/storebench.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STRICT) -Idb -Ilockcore -c $< -o $@
$(O)/storebench: $(O)/bench/storebench.o $(O)/libstore.a $(O)/liblockcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(DB_LIBS)
BENCHES += $(O)/storebench
-include $(O)/bench/storebench.d
endif
