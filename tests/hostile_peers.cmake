# Hostile TLS peers (stall, garbage, close_notify mid-response, one byte per
# record, expired and wrong-host certificates) against hammer on both
# engines; the coding and SSE framing peers are misbehave cases.
hm_test(hostile_tls SOURCES test_hostile_tls.c LIBS hm_engine PkgConfig::JANSSON
        PkgConfig::OPENSSL ARGS $<TARGET_FILE:hammer> ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh
        TIMEOUT 300)
