hm_test(tls SOURCES test_tls.c LIBS hm_engine PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh TIMEOUT 600)
# The TLS 1.3 suites hammer offers, in a browser's order (tests/tls_peer.h).
hm_test(tls_suites SOURCES test_tls_suites.c LIBS PkgConfig::JANSSON PkgConfig::OPENSSL
        ARGS $<TARGET_FILE:hammer> ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh TIMEOUT 120)
