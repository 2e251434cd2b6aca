hm_engine_test(engine_coro SOURCES test_engine_coro.c LIBS hm_engine)
hm_engine_test(engine_sync SOURCES test_engine_sync.c LIBS hm_engine)
hm_engine_test(engine_echo SOURCES test_engine_echo.c LIBS hm_engine)
hm_engine_test(engine_threads SOURCES test_engine_threads.c LIBS hm_engine)
