hm_test(cli_soak SOURCES test_cli_soak.c LIBS hm_stats PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
