hm_engine_test(engine_coro SOURCES test_engine_coro.c LIBS hm_engine)
hm_engine_test(engine_sync SOURCES test_engine_sync.c LIBS hm_engine)
hm_engine_test(engine_echo SOURCES test_engine_echo.c LIBS hm_engine)
hm_engine_test(engine_threads SOURCES test_engine_threads.c LIBS hm_engine)
hm_engine_test(engine_interrupt SOURCES test_engine_interrupt.c LIBS hm_engine)
hm_engine_test(engine_views SOURCES test_engine_views.c LIBS hm_engine)
hm_engine_test(engine_callbacks SOURCES test_engine_callbacks.c LIBS hm_engine)
hm_engine_test(engine_cancel SOURCES test_engine_cancel.c LIBS hm_engine)
hm_engine_test(engine_latch SOURCES test_engine_latch.c LIBS hm_engine)
hm_engine_test(engine_post_end SOURCES test_engine_post_end.c LIBS hm_engine)
hm_engine_test(engine_stacks SOURCES test_engine_stacks.c LIBS hm_engine)

# The io_uring fallbacks, each on the tests that exercise I/O: what a
# kernel without the feature (or with it switched off) runs. Every
# combination also passes with the features on (the tests above).
set(HM_URING_FALLBACKS
  "readiness:bufring"
  "nomultishot:recv_multishot"
  "noinc:bufring_inc"
  "oldest:defer_taskrun,coop_taskrun,cqsize,ring_fd,files,cqe_skip,bufring"
  "coop:defer_taskrun")
foreach(test engine_echo engine_views engine_callbacks)
  foreach(variant ${HM_URING_FALLBACKS})
    string(REPLACE ":" ";" parts ${variant})
    list(GET parts 0 vname)
    list(GET parts 1 disable)
    add_test(NAME ${test}_io_uring_${vname} COMMAND test_${test} io_uring)
    set_tests_properties(${test}_io_uring_${vname} PROPERTIES SKIP_RETURN_CODE 77
      TIMEOUT ${HM_TEST_TIMEOUT} ENVIRONMENT "HAMMER_ENGINE_DISABLE=${disable}")
  endforeach()
endforeach()
add_test(NAME engine_stacks_io_uring_mprotect COMMAND test_engine_stacks io_uring)
set_tests_properties(engine_stacks_io_uring_mprotect PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT ${HM_TEST_TIMEOUT} ENVIRONMENT "HAMMER_ENGINE_DISABLE=guard_madvise")
hm_engine_test(engine_loop_stack SOURCES test_engine_loop_stack.c LIBS hm_engine)
