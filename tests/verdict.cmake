# The run's verdict (docs/output.md, "How to read the verdict"): checks not
# evaluated on too little successful work, the reasons of every FAIL, flow
# expectations that never ran, browser mode's action and action->patch.
add_executable(test_verdict test_verdict.c)
target_link_libraries(test_verdict PRIVATE hm_flags hm_base PkgConfig::JANSSON)
target_include_directories(test_verdict PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(part zero_ok few_ok reasons merge flow_skip patch_time)
  add_test(NAME verdict_${part}
    COMMAND test_verdict $<TARGET_FILE:hammer> ${CMAKE_CURRENT_SOURCE_DIR}/misbehave/server.py
            ${part})
  set_tests_properties(verdict_${part} PROPERTIES TIMEOUT 300)
endforeach()
