# The consistency suite (tests/consistency/run_path.py): the same work
# through every path — built-in scenario or its flow, hammer or browser
# model, HTTP/1.1 or HTTP/2, plain or TLS, with or without a bench_app
# restart — must give the same accounting. One ctest per path, named for
# it (consistency_counter_flow_browser_h2_tls_restart), label
# "consistency" (ctest -L consistency runs them alone).
find_package(Python3 COMPONENTS Interpreter)
set(HM_CONSISTENCY_DIR ${CMAKE_CURRENT_SOURCE_DIR}/consistency)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${HM_CONSISTENCY_DIR}/run_path.py)
if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${HM_CONSISTENCY_DIR}/run_path.py --list
                  OUTPUT_VARIABLE HM_CONSISTENCY_PATHS OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE HM_CONSISTENCY_RC)
  if(NOT HM_CONSISTENCY_RC EQUAL 0)
    message(FATAL_ERROR "tests/consistency/run_path.py --list failed")
  endif()
  string(REPLACE "\n" ";" HM_CONSISTENCY_PATHS "${HM_CONSISTENCY_PATHS}")
  foreach(p ${HM_CONSISTENCY_PATHS})
    add_test(NAME consistency_${p}
             COMMAND ${Python3_EXECUTABLE} ${HM_CONSISTENCY_DIR}/run_path.py
                     --hammer $<TARGET_FILE:hammer> --bench-app $<TARGET_FILE:bench_app>
                     --certs-script ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh
                     --examples ${CMAKE_SOURCE_DIR}/examples/flows
                     --data ${CMAKE_SOURCE_DIR}/tests/data
                     --misbehave ${CMAKE_SOURCE_DIR}/tests/misbehave ${p})
    set_tests_properties(consistency_${p} PROPERTIES LABELS consistency SKIP_RETURN_CODE 77
                         TIMEOUT 180)
  endforeach()
else()
  add_test(NAME consistency_python3
           COMMAND sh -c "echo 'SKIP: python3 not found (apt-get install python3)'; exit 77")
  set_tests_properties(consistency_python3 PROPERTIES LABELS consistency SKIP_RETURN_CODE 77)
endif()
