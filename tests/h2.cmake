# HTTP/2 (issue 17): hammer's client against a misbehaving h2c server of the
# test's own (h2_test_server.c, nghttp2) and bench_app over TLS.
# bench_app's own HTTP/2 is tested in bench_app.cmake (bench_app_h2*).
hm_engine_test(h2_client SOURCES test_h2_client.c h2_test_server.c LIBS ba_test_client
  TIMEOUT 120)
# hammer --http2 end to end, one test per part so a missing peer shows as
# that part skipped: every php-via scenario in both load models over h2c
# (embedded) and h2 (TLS), through Caddy, sticky through Caddy, get against
# nghttpd.
add_executable(test_cli_h2 test_cli_h2.c h2_test_server.c)
target_link_libraries(test_cli_h2 PRIVATE hm_flags hm_base PkgConfig::JANSSON PkgConfig::NGHTTP2)
target_include_directories(test_cli_h2 PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(part embedded tls caddy sticky nghttpd misbehave)
  add_test(NAME cli_h2_${part}
    COMMAND test_cli_h2 $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>
      ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh $<TARGET_FILE:hammer_plugin_double_click>
      ${part})
  set_tests_properties(cli_h2_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
# The response parser filled by pushed fields (what h2_client.c gives it).
hm_test(http1_push SOURCES test_http1_push.c LIBS hm_proto)
