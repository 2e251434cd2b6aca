# The live view (src/cli/live_view.c) on a real terminal: hammer in a
# detached tmux session, its screen read with capture-pane (tests/liveview/
# run.py; it exits 77 when tmux is missing).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(c screen stalled failures pipe)
    add_test(NAME liveview_${c}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/liveview/run.py
                     --hammer $<TARGET_FILE:hammer> ${c})
    set_tests_properties(liveview_${c} PROPERTIES LABELS liveview SKIP_RETURN_CODE 77
                         TIMEOUT 180)
  endforeach()
endif()
