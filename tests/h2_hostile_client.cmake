# hammer --http2 against hostile h2c servers (tests/test_cli_h2_hostile.c),
# on each engine: every misbehaviour ends in time, counted by kind, with
# its reason, where and the frame that showed it (docs/http2.md, "Hostile
# servers").
add_executable(test_cli_h2_hostile test_cli_h2_hostile.c h2_test_server.c)
target_link_libraries(test_cli_h2_hostile PRIVATE hm_flags hm_base PkgConfig::JANSSON
  PkgConfig::NGHTTP2)
target_include_directories(test_cli_h2_hostile PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(engine io_uring epoll)
  add_test(NAME cli_h2_hostile_${engine}
    COMMAND test_cli_h2_hostile $<TARGET_FILE:hammer> ${engine})
  set_tests_properties(cli_h2_hostile_${engine} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
