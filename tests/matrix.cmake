hm_test(matrix SOURCES test_matrix.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${PROJECT_SOURCE_DIR}/examples/matrix.ini
        TIMEOUT 600)
hm_test(matrix_profiles SOURCES test_matrix_profiles.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${PROJECT_SOURCE_DIR}/examples/php-via.ini
        TIMEOUT 600)
hm_test(matrix_listener SOURCES test_matrix_listener.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)
