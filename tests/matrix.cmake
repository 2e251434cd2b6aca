hm_test(matrix SOURCES test_matrix.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${PROJECT_SOURCE_DIR}/examples/matrix.ini
        TIMEOUT 600)
