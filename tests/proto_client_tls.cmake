# hm_http_conn over https on the socket's callback reader (TLS as a
# filter): handshakes, reuse, resumption, the words of a failed handshake.
add_executable(test_http_client_tls test_http_client_tls.c)
target_link_libraries(test_http_client_tls PRIVATE hm_flags hm_proto)
target_include_directories(test_http_client_tls PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(backend io_uring epoll)
  add_test(NAME http_client_tls_${backend}
    COMMAND test_http_client_tls ${backend} ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh)
  set_tests_properties(http_client_tls_${backend} PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT ${HM_TEST_TIMEOUT})
endforeach()
