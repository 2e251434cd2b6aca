# Hostile TLS peers (tests/tls_peer.h: a scripted server in a child)
# against hammer on each engine, one test per peer and engine,
# hostile_tls_PEER_ENGINE: a stalled handshake (at the probe, and after
# it), garbage for a ServerHello,
# close_notify mid-response, one byte per record within and past --timeout,
# an unasked answer in a record of its own behind each answer,
# an expired and a wrong-host certificate (test_hostile_tls.c names each);
# and a TLS 1.2 server that asks to renegotiate, refused, counted with its
# reason, never a silent resend (tls_renegotiation_ENGINE). The coding and
# SSE framing peers are misbehave cases.
set(HM_GEN_CERT ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh)
foreach(t hostile_tls tls_renegotiation)
  add_executable(test_${t} test_${t}.c)
  target_link_libraries(test_${t} PRIVATE hm_flags PkgConfig::JANSSON PkgConfig::OPENSSL)
  target_include_directories(test_${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endforeach()
foreach(engine io_uring epoll)
  foreach(peer stall stall_late garbage cut drip drip_slow extra_record expired wrong_host)
    add_test(NAME hostile_tls_${peer}_${engine}
             COMMAND test_hostile_tls $<TARGET_FILE:hammer> ${HM_GEN_CERT} ${engine} ${peer})
    set_tests_properties(hostile_tls_${peer}_${engine} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
  endforeach()
  add_test(NAME tls_renegotiation_${engine}
           COMMAND test_tls_renegotiation $<TARGET_FILE:hammer> ${HM_GEN_CERT} ${engine})
  set_tests_properties(tls_renegotiation_${engine} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
