# The live view's latency histogram on a terminal too short for every
# bucket: its rows still add up to every sample (tests/liveview/run.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME liveview_histogram
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/liveview/run.py
                   --hammer $<TARGET_FILE:hammer> histogram)
  set_tests_properties(liveview_histogram PROPERTIES LABELS liveview SKIP_RETURN_CODE 77
                       TIMEOUT 180)
endif()
