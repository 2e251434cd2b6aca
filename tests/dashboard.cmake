# deploy/prometheus/consoles/hammer.html in a real Prometheus scraping a
# short hammer run: the page renders that run's figures (skips without the
# prometheus binary).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME metrics_console
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_prometheus_console.py
                   $<TARGET_FILE:hammer> ${PROJECT_SOURCE_DIR}/deploy/prometheus/consoles)
  set_tests_properties(metrics_console PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
