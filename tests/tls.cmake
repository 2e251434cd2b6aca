hm_test(tls SOURCES test_tls.c LIBS hm_engine PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${CMAKE_SOURCE_DIR}/scripts/gen-test-cert.sh TIMEOUT 600)
