# Unit tests: one CUnit binary per module, sharing tests/runner.c.
# $(call unit_test,<module>,<libraries>,<extra ldlibs>)
INC_tests := -I. -Ilockcore -Icommon -Inlm -Irpc -I$(O) $(PKG_CFLAGS)
define unit_test
TEST_$(1)_OBJS := $(O)/tests/runner.o $$(patsubst %.c,$(O)/%.o,$$(wildcard tests/$(1)/*.c))
$(O)/tests/test-$(1): $$(TEST_$(1)_OBJS) $(2)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ -lcunit $(3)
-include $$(TEST_$(1)_OBJS:.o=.d)
TESTS += $(O)/tests/test-$(1)
endef
$(eval $(call unit_test,lockcore,$(O)/liblockcore.a,))
$(eval $(call unit_test,common,$(O)/libcommon.a,-linih))
$(eval $(call unit_test,nlmxdr,$(O)/nlm/nlm_xdr.o $(O)/rpc/nlm_prot_xdr.o,$(TIRPC_LIBS)))
$(TEST_nlmxdr_OBJS): | $(RPC_HDRS)
INC_tests += -Idb
$(eval $(call unit_test,store,$(O)/libstore.a,$(DB_LIBS)))
