hm_test(cli_counter SOURCES test_cli_counter.c LIBS hm_engine PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
# Option combinations a scenario's capabilities rule out (no server needed).
hm_test(cli_usage SOURCES test_cli_usage.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:hammer_plugin_double_click> TIMEOUT 120)
# Interval lines, --interval-json and the JSON series add up to the summary.
hm_test(cli_intervals SOURCES test_cli_intervals.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
