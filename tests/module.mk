# Unit tests: one CUnit binary per module, sharing tests/runner.c.
# $(call unit_test,<module>,<libraries>,<extra ldlibs>)
INC_tests := -I. -Ilockcore -Icommon -Ictl -Inlm -Irpc -I$(O) $(PKG_CFLAGS)
define unit_test
TEST_$(1)_OBJS := $(O)/tests/runner.o $$(patsubst %.c,$(O)/%.o,$$(wildcard tests/$(1)/*.c))
$(O)/tests/test-$(1): $$(TEST_$(1)_OBJS) $(2)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ -lcunit $(3)
-include $$(TEST_$(1)_OBJS:.o=.d)
TESTS += $(O)/tests/test-$(1)
endef
$(eval $(call unit_test,lockcore,$(O)/liblockcore.a,))
# test_ev.c makes the loop's realloc() fail: __wrap_realloc.
COMMON_WRAP := -Wl,--wrap=realloc
$(eval $(call unit_test,common,$(O)/libcommon.a,$(COMMON_WRAP)))
$(eval $(call unit_test,ctl,$(O)/libctl.a $(O)/libcommon.a,-lmicrohttpd))
# test_nlmctl.c runs the nlmctl built beside it.
$(O)/tests/test-ctl: | $(O)/nlmctl
$(eval $(call unit_test,nlmxdr,$(O)/nlm/nlm_xdr.o $(O)/rpc/nlm_prot_xdr.o $(O)/rpc/sm_inter_xdr.o $(O)/rpc/xdrname.o,$(TIRPC_LIBS)))
$(TEST_nlmxdr_OBJS): | $(RPC_HDRS)
INC_tests += -Idb -Insm
# test_fault.c makes the store's realloc() and calloc() fail:
# __wrap_realloc, __wrap_calloc.
STORE_WRAP := -Wl,--wrap=realloc -Wl,--wrap=calloc
$(eval $(call unit_test,store,$(O)/libstore.a $(O)/liblockcore.a,$(DB_LIBS) $(STORE_WRAP)))
# test_dump.c runs the nlmd built beside it.
$(O)/tests/test-store: | $(O)/nlmd
# The NLM service (and the NSM's procedures beside it) over fakes:
# tests/fakes/ replaces db/ (store_fake.o) and
# the two sending functions of rpc/ (send_fake.o, linked before librpc.a).
# The libraries refer to each other (rpcgen's dispatchers in librpc call
# the handlers in libnlm): a link group.  calloc() and realloc() of our
# objects go through the tests' __wrap_calloc and __wrap_realloc
# (harness.c: ts_calloc_fail(), ts_realloc_fail(), allocation failures),
# malloc() through __wrap_malloc (ts_malloc_fail()), getsockopt()
# through __wrap_getsockopt (ts_peercred_fail(), ts_peergroups_fail()).
SVC_FAKES := $(O)/tests/fakes/store_fake.o $(O)/tests/fakes/send_fake.o
# cmd/svcmgr.c (what nlmd tells systemd) over the service: test_svcmgr.c.
SVC_CMD   := $(O)/cmd/svcmgr.o
SVC_LIBS  := $(O)/libnsm.a $(O)/libnlm.a $(O)/libctl.a $(O)/librpc.a \
    $(O)/liblockcore.a $(O)/libcommon.a
TEST_service_OBJS := $(O)/tests/runner.o \
    $(patsubst %.c,$(O)/%.o,$(wildcard tests/service/*.c))
$(O)/tests/test-service: $(TEST_service_OBJS) $(SVC_FAKES) $(SVC_CMD) \
    $(SVC_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(TEST_service_OBJS) $(SVC_FAKES) $(SVC_CMD) \
	    -Wl,--start-group $(SVC_LIBS) -Wl,--end-group -lcunit $(TIRPC_LIBS) \
	    -Wl,--wrap=calloc -Wl,--wrap=realloc -Wl,--wrap=malloc \
	    -Wl,--wrap=getsockopt
TESTS += $(O)/tests/test-service
$(TEST_service_OBJS) $(SVC_FAKES): | $(RPC_HDRS)
-include $(TEST_service_OBJS:.o=.d) $(SVC_FAKES:.o=.d)
