# Scale-out (issue 14): merging runs' documents.
add_executable(test_merge test_merge.c)
target_link_libraries(test_merge PRIVATE hm_flags hm_stats)
target_include_directories(test_merge PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(behaviour exact self refuse generic passes)
  add_test(NAME merge_${behaviour} COMMAND test_merge ${behaviour})
  set_tests_properties(merge_${behaviour} PROPERTIES TIMEOUT 60)
endforeach()

