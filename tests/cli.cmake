hm_test(cli_counter SOURCES test_cli_counter.c LIBS hm_engine PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
# Option combinations a scenario's capabilities rule out (no server needed).
hm_test(cli_usage SOURCES test_cli_usage.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:hammer_plugin_double_click> TIMEOUT 120)
# Interval lines, --interval-json and the JSON series add up to the summary.
hm_test(cli_intervals SOURCES test_cli_intervals.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
# get's -m, -H and --body on the wire; status codes, bytes and transfer rate.
hm_test(cli_get SOURCES test_cli_get.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> TIMEOUT 120)
# Every JSON key is in docs/output.md and every key there is written.
hm_test(json_keys SOURCES test_json_keys.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> ${PROJECT_SOURCE_DIR}/docs/output.md
             ${PROJECT_SOURCE_DIR}/tests/misbehave/server.py $<TARGET_FILE:bench_app>
             ${PROJECT_SOURCE_DIR}/scripts/gen-test-cert.sh
             $<TARGET_FILE:hammer_plugin_double_click> TIMEOUT 300)
# --html, hammer report, --hgrm.
hm_test(cli_reports SOURCES test_cli_reports.c LIBS hm_base PkgConfig::JANSSON m
        ARGS $<TARGET_FILE:hammer> TIMEOUT 300)
# --metrics-listen: the exposition, promtool's check, a real Prometheus.
add_executable(test_cli_metrics test_cli_metrics.c)
target_link_libraries(test_cli_metrics PRIVATE hm_flags hm_base PkgConfig::JANSSON)
target_include_directories(test_cli_metrics PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(mode endpoint promtool prometheus)
  add_test(NAME metrics_${mode} COMMAND test_cli_metrics $<TARGET_FILE:hammer> ${mode})
  set_tests_properties(metrics_${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
# The HTML reports in headless Chromium: charts and series in the rendered
# DOM, figures on one line, no overflow at 1280 px or on a phone.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME report_browser
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_report_browser.py
                   $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>)
  set_tests_properties(report_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# make run: quiet build, the summary, and where the HTML report is.
add_test(NAME make_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_make_run.sh
         ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(make_run PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# README and docs link only inside the repository; README names every package.
if(Python3_Interpreter_FOUND)
  add_test(NAME docs COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_docs.py
           ${PROJECT_SOURCE_DIR})
  set_tests_properties(docs PROPERTIES TIMEOUT 60)
endif()
# The progress line's done/total and ETA; the summary's units.
hm_test(cli_progress SOURCES test_cli_progress.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> TIMEOUT 300)
# The server watch: /_health before, during and after a run (issue 12).
hm_test(server_watch SOURCES test_server_watch.c LIBS hm_base PkgConfig::JANSSON m
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
# Compressed runs against bench_app --brotli: wire and decoded bytes (issue 12).
hm_test(compressed_run SOURCES test_compressed_run.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
# A coroutine that cannot start (the engine's stack limit) ends the run with an error.
hm_test(cli_spawn_fail SOURCES test_cli_spawn_fail.c LIBS PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>
             ${PROJECT_SOURCE_DIR}/examples/flows/counter.yaml TIMEOUT 300)
# A browser VU is one coroutine touching one stack page (plain and TLS).
hm_test(vu_stack SOURCES test_vu_stack.c LIBS PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>
             ${PROJECT_SOURCE_DIR}/examples/flows/counter.yaml
             ${PROJECT_SOURCE_DIR}/scripts/gen-test-cert.sh TIMEOUT 300)
