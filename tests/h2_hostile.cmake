# bench_app --http2 against hostile h2c clients scripted with raw frames
# (test_bench_app_h2_hostile.c): a flood of streams past the limit nobody
# reads, rapid reset, a dripped preface (these three over h2 with TLS too),
# a header block left open, a body that never comes, SSE subscribers that
# never read, HPACK abuse. Each asserts the
# hostile connection's end (GOAWAY code, deadline), the server's peak RSS
# under its bound, and a plain client served meanwhile.
ba_test(h2_hostile PER_BACKEND TIMEOUT 300)
