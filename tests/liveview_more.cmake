# More of the live view on a real terminal (tests/liveview/run.py): the
# latency histogram on a terminal too short for every bucket (its rows
# still add up to every sample), and Ctrl-C typed on the terminal.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(c histogram ctrl_c)
    add_test(NAME liveview_${c}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/liveview/run.py
                     --hammer $<TARGET_FILE:hammer> ${c})
    set_tests_properties(liveview_${c} PROPERTIES LABELS liveview SKIP_RETURN_CODE 77
                         TIMEOUT 180)
  endforeach()
endif()
