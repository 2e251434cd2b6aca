hm_test(cli_counter SOURCES test_cli_counter.c LIBS hm_engine PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
