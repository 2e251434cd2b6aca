hm_test(cli_scenarios SOURCES test_cli_scenarios.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:hammer_plugin_double_click> TIMEOUT 600)
