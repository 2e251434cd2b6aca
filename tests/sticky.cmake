hm_test(sticky SOURCES test_sticky.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 600)
