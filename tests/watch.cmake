# The server watch's samples (taken at each interval's end) and its verdict
# after the run, and the progress lines of a run waiting on a server that
# never answers (tests/test_watch.c, one test per case; the misbehave
# server plays the servers that keep or leak contexts or never answer).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(HM_WATCH_ARGS $<TARGET_FILE:hammer> ${Python3_EXECUTABLE}
                    ${CMAKE_CURRENT_SOURCE_DIR}/misbehave/server.py)
  hm_test(watch_interval SOURCES test_watch.c LIBS hm_base PkgConfig::JANSSON m util
          ARGS ${HM_WATCH_ARGS} interval TIMEOUT 300)
  foreach(c clean kept grew ctrl_c)
    add_test(NAME watch_${c} COMMAND test_watch_interval ${HM_WATCH_ARGS} ${c})
    set_tests_properties(watch_${c} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  # The progress lines against a server that never answers: line mode, and
  # the live line on a pty.
  foreach(c lines live)
    add_test(NAME progress_never_answers_${c} COMMAND test_watch_interval ${HM_WATCH_ARGS} ${c})
    set_tests_properties(progress_never_answers_${c} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
else()
  add_test(NAME watch_python3
           COMMAND sh -c "echo 'SKIP: python3 not found (apt-get install python3)'; exit 77")
  set_tests_properties(watch_python3 PROPERTIES SKIP_RETURN_CODE 77)
endif()

# What an SSE stream's head and end mean to both followers (unit).
hm_test(sse_end SOURCES test_sse_end.c LIBS hm_load)

# The one SSE follower (a tab's EventSource, the hammer model's observers)
# against a scripted server, on both engines.
hm_engine_test(event_source SOURCES test_event_source.c LIBS hm_load)
