# bench_app end to end, one executable per behaviour, each against servers
# of its own: forked hm_bench_app_run() children (or the executable, for
# --processes), talked to with blocking sockets, OpenSSL for HTTPS (which
# also makes the test's certificates). The shared client and php-via steps
# are bench_app_client.c / bench_app_steps.c (bench_app_client.h);
# h2_test_client.c, a blocking HTTP/2 client on libnghttp2 for --http2;
# hm_scenarios for hammer's own table check, SQLite to inspect the
# database, zlib for session dispatch's crc32, libbrotlidec to decode
# --brotli answers.
add_library(ba_test_client STATIC bench_app_client.c bench_app_steps.c h2_test_client.c)
target_link_libraries(ba_test_client PUBLIC hm_flags hm_benchapp hm_proto hm_scenarios
  PkgConfig::SQLITE PkgConfig::ZLIB PkgConfig::OPENSSL PkgConfig::BROTLIDEC PkgConfig::NGHTTP2)
target_include_directories(ba_test_client PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})

# bench_app_NAME from test_bench_app_NAME.c. PER_BACKEND: registered as
# bench_app_NAME_io_uring and bench_app_NAME_epoll (argv[1]); EXE: argv[1]
# is the bench_app executable; TIMEOUT: seconds (default 60).
function(ba_test name)
  cmake_parse_arguments(T "PER_BACKEND;EXE" "TIMEOUT" "" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  set(args "")
  if(T_EXE)
    set(args $<TARGET_FILE:bench_app>)
  endif()
  if(T_PER_BACKEND)
    add_executable(test_bench_app_${name} test_bench_app_${name}.c)
    target_link_libraries(test_bench_app_${name} PRIVATE ba_test_client)
    foreach(backend io_uring epoll)
      add_test(NAME bench_app_${name}_${backend} COMMAND test_bench_app_${name} ${backend})
      set_tests_properties(bench_app_${name}_${backend} PROPERTIES SKIP_RETURN_CODE 77
        TIMEOUT ${T_TIMEOUT})
    endforeach()
  else()
    hm_test(bench_app_${name} SOURCES test_bench_app_${name}.c LIBS ba_test_client
      ARGS ${args} TIMEOUT ${T_TIMEOUT})
  endif()
endfunction()

ba_test(pages PER_BACKEND)       # contexts per GET, the session cookie, HEAD, 404
ba_test(actions PER_BACKEND)     # action outcomes in order, signal sources, devMode
ba_test(sse PER_BACKEND)         # stream headers, sync, patches, 400/reload/403, reconnect
ba_test(queue PER_BACKEND TIMEOUT 300) # one patch per action; a blocked writer's queue
                                       # of 50 drops the oldest; --sse-poll-ms
ba_test(cleanup PER_BACKEND)     # cleanup after SSE and /_session/close, deferred
ba_test(http PER_BACKEND)        # malformed, 431, 413, pipelining, 100-continue, idle
ba_test(limits PER_BACKEND)      # the header deadline, the signal value cap (413)
ba_test(lifecycle PER_BACKEND)   # bad options, EADDRINUSE, SIGTERM with streams open
ba_test(workloads PER_BACKEND)   # /bench/cpu, /bench/io overlap, /bench/spreadsheet
ba_test(live_sheet PER_BACKEND)  # /examples/spreadsheet: tables, navigate, string casts
ba_test(database)                # default / explicit / existing spreadsheet database
ba_test(dispatch_session)        # --workers 4: crc32(cookie) % 4, SSE via the reactor
ba_test(dispatch_stream)         # --workers 4: request k to worker k % 4
ba_test(dispatch_fd)             # --workers 4: connection id % 4
ba_test(reactor)                 # the reactor's framing and its SIGTERM
ba_test(processes EXE)           # --processes 2
ba_test(tls PER_BACKEND)         # HTTPS requests, framing, SSE
ba_test(tls_resume PER_BACKEND)  # TLS 1.3 / 1.2 tickets, 1.2 session ids
ba_test(tls_clients PER_BACKEND) # non-TLS and unacceptable clients; SIGTERM
ba_test(tls_options EXE)         # bad certificate / key pairs refused
ba_test(tls_workers)             # TLS at the reactor with --workers 2
ba_test(tls_processes EXE)       # --processes 2 with TLS
ba_test(brotli)                  # --brotli: pages, SSE flushed per event, what stays plain
ba_test(h2 PER_BACKEND)          # --http2: h2c and h2 (ALPN), a tab on one connection, flow
                                 # control, limits, resets, the stop; refused with --workers 2
ba_test(h2_peers)                # --http2 against h2load and curl (skipped without them)
# The p99/p50 of one hammer run on the io_uring and the epoll server.
hm_test(bench_app_fairness SOURCES test_bench_app_fairness.c LIBS ba_test_client
  ARGS $<TARGET_FILE:hammer> TIMEOUT 600)
set_tests_properties(bench_app_fairness PROPERTIES RUN_SERIAL TRUE) # no other test's load
# The answers to requests captured from real php-via v0.12.0, byte for byte.
hm_test(bench_app_wire SOURCES test_bench_app_wire.c LIBS ba_test_client
  ARGS ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/php-via-0.12.0 TIMEOUT 60)

# bench_app's PHP/OpenSwoole compatibility layer on its own: no server.
hm_test(php_compat SOURCES test_php_compat.c LIBS hm_benchapp)
