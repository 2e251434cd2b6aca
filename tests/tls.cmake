hm_test(tls SOURCES test_tls.c LIBS hm_engine PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh TIMEOUT 600)
# A TLS 1.2 server that asks to renegotiate: refused, counted with its
# reason, never a silent resend.
hm_test(tls_renegotiation SOURCES test_tls_renegotiation.c LIBS hm_engine PkgConfig::JANSSON
        PkgConfig::OPENSSL ARGS $<TARGET_FILE:hammer> ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh
        TIMEOUT 300)
