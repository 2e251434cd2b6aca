# The server watch's samples (taken at each interval's end) and its verdict
# after the run (tests/test_watch.c, one test per case; the misbehave
# server plays the servers that keep or leak contexts).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(HM_WATCH_ARGS $<TARGET_FILE:hammer> ${Python3_EXECUTABLE}
                    ${CMAKE_CURRENT_SOURCE_DIR}/misbehave/server.py)
  hm_test(watch_interval SOURCES test_watch.c LIBS hm_base PkgConfig::JANSSON m
          ARGS ${HM_WATCH_ARGS} interval TIMEOUT 300)
  foreach(c clean kept grew ctrl_c)
    add_test(NAME watch_${c} COMMAND test_watch_interval ${HM_WATCH_ARGS} ${c})
    set_tests_properties(watch_${c} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()
