# Client-side protocol pieces: URLs, the cookie jar, page scraping, client
# connections (hm_http_conn against scripted servers, on both backends).
hm_test(url SOURCES test_url.c LIBS hm_proto)
hm_test(cookie SOURCES test_cookie.c LIBS hm_proto)
hm_test(via_html SOURCES test_via_html.c LIBS hm_proto)
hm_engine_test(http_client SOURCES test_http_client.c LIBS hm_proto)
# The same exchanges without a coroutine (hm_http_conn_start): same reports.
foreach(backend io_uring epoll)
  add_test(NAME http_client_async_${backend} COMMAND test_http_client ${backend} async)
  set_tests_properties(http_client_async_${backend} PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT ${HM_TEST_TIMEOUT})
endforeach()
