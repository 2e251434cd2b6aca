# Issue 11: hammer against a scripted misbehaving server (tests/misbehave/
# server.py) and against a bench_app that is killed, stopped and restarted.
# One test per case (run_case.py --list), run by `make check` and `make
# check-asan`; they carry the label "misbehave", so `make check-misbehave`
# (ctest -L misbehave) runs them alone.
find_package(Python3 COMPONENTS Interpreter)
set(HM_MISBEHAVE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/misbehave)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${HM_MISBEHAVE_DIR}/run_case.py)
if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${HM_MISBEHAVE_DIR}/run_case.py --list
                  OUTPUT_VARIABLE HM_MISBEHAVE_CASES OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE HM_MISBEHAVE_RC)
  if(NOT HM_MISBEHAVE_RC EQUAL 0)
    message(FATAL_ERROR "tests/misbehave/run_case.py --list failed")
  endif()
  string(REPLACE "\n" ";" HM_MISBEHAVE_CASES "${HM_MISBEHAVE_CASES}")
  set(HM_MISBEHAVE_FLAGS "")
  if(HAMMER_SANITIZE)
    set(HM_MISBEHAVE_FLAGS --sanitized)
  endif()
  foreach(c ${HM_MISBEHAVE_CASES})
    add_test(NAME misbehave_${c}
             COMMAND ${Python3_EXECUTABLE} ${HM_MISBEHAVE_DIR}/run_case.py
                     --hammer $<TARGET_FILE:hammer> --bench-app $<TARGET_FILE:bench_app>
                     ${HM_MISBEHAVE_FLAGS} ${c})
    set_tests_properties(misbehave_${c} PROPERTIES LABELS misbehave SKIP_RETURN_CODE 77
                         TIMEOUT 120)
    # Cases that stream hundreds of MB through loopback take both cores.
    if(c MATCHES "endless_body|50mb")
      set_tests_properties(misbehave_${c} PROPERTIES PROCESSORS 2)
    endif()
  endforeach()
else()
  # python3 is in scripts/deps.sh; without it, say so instead of passing.
  add_test(NAME misbehave_python3
           COMMAND sh -c "echo 'SKIP: python3 not found (apt-get install python3)'; exit 77")
  set_tests_properties(misbehave_python3 PROPERTIES LABELS misbehave SKIP_RETURN_CODE 77)
endif()
