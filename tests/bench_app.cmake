# bench_app end to end: a forked server, plain blocking sockets as clients.
hm_test(bench_app SOURCES test_bench_app.c LIBS hm_benchapp hm_proto TIMEOUT 60)
