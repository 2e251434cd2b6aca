# One test per part, so a missing load balancer shows as that part skipped
# while the dispatch part (which never skips) still runs.
add_executable(test_sticky test_sticky.c)
target_link_libraries(test_sticky PRIVATE hm_flags hm_base PkgConfig::JANSSON)
target_include_directories(test_sticky PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(part dispatch caddy haproxy)
  add_test(NAME sticky_${part}
    COMMAND test_sticky $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>
            ${CMAKE_SOURCE_DIR}/docs/sticky-routing.md
            ${CMAKE_CURRENT_SOURCE_DIR}/misbehave/server.py ${part})
  set_tests_properties(sticky_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
