# --metrics-listen as Prometheus users run it: scrapers served on their own
# (a drip, the connection cap, the whole-request deadline), --metrics-linger,
# docs/metrics.md's list against a real scrape, and deploy/prometheus's
# config, rules and rule tests through promtool.
add_executable(test_metrics_serve test_metrics_serve.c)
target_link_libraries(test_metrics_serve PRIVATE hm_flags hm_base PkgConfig::JANSSON Threads::Threads)
target_include_directories(test_metrics_serve PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(mode drip cap linger fields)
  add_test(NAME metrics_${mode} COMMAND test_metrics_serve $<TARGET_FILE:hammer> ${mode})
  set_tests_properties(metrics_${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
endforeach()
add_test(NAME metrics_doc COMMAND test_metrics_serve $<TARGET_FILE:hammer> doc
         ${PROJECT_SOURCE_DIR}/docs/metrics.md ${PROJECT_SOURCE_DIR}/deploy/prometheus)
set_tests_properties(metrics_doc PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
add_test(NAME metrics_promtool_rules
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_metrics_promtool.sh ${PROJECT_SOURCE_DIR}/deploy/prometheus)
set_tests_properties(metrics_promtool_rules PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
