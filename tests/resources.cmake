# Server resources in a soak: the least-squares fit and the leak rule on
# known data; soaks against bench_app with its leak switch on and off; a
# --server-pid that exits mid-run; a real process-exporter scraped by
# --server-metrics (skips without prometheus-process-exporter); --server-pid
# and --server-metrics at once, each source on its own.
hm_test(trend SOURCES test_trend.c LIBS hm_stats)
add_executable(test_cli_resources test_cli_resources.c)
target_link_libraries(test_cli_resources PRIVATE hm_flags hm_base PkgConfig::JANSSON m)
target_include_directories(test_cli_resources PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(behaviour leak_on leak_off pid_exits exporter apart)
  add_test(NAME cli_resources_${behaviour}
           COMMAND test_cli_resources $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${behaviour})
  set_tests_properties(cli_resources_${behaviour} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
