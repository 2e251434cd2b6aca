hm_test(cli_soak SOURCES test_cli_soak.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> TIMEOUT 300)
