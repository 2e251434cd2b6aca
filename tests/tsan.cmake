# Where threads meet, for make check-tsan (its TSAN_TESTS regex names
# engine_* and threads_*); they pass in every build.
hm_engine_test(engine_ring_reuse SOURCES test_engine_ring_reuse.c LIBS hm_engine)
hm_test(threads_spreadsheet SOURCES test_threads_spreadsheet.c LIBS PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>)
hm_test(threads_interval_recorder SOURCES test_threads_interval_recorder.c LIBS hm_stats)
