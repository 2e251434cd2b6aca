# bench_app end to end: a forked server, plain blocking sockets as clients
# (OpenSSL ones for HTTPS, which also makes the test's certificates);
# hm_scenarios for hammer's own table check, SQLite to inspect the database,
# zlib for session dispatch's crc32; the executable for --processes.
hm_test(bench_app SOURCES test_bench_app.c
  LIBS hm_benchapp hm_proto hm_scenarios PkgConfig::SQLITE PkgConfig::ZLIB PkgConfig::OPENSSL
  ARGS $<TARGET_FILE:bench_app> TIMEOUT 60)
# bench_app's PHP/OpenSwoole compatibility layer on its own: no server.
hm_test(php_compat SOURCES test_php_compat.c LIBS hm_benchapp)
