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
# Where a response can end at a read piece's end: 2 KiB provided buffers
# (no incremental consumption) and readiness reads, besides the default.
foreach(variant "noinc:bufring_inc" "readiness:bufring")
  string(REPLACE ":" ";" parts ${variant})
  list(GET parts 0 vname)
  list(GET parts 1 disable)
  foreach(driver sync async)
    add_test(NAME http_client_${driver}_io_uring_${vname} COMMAND test_http_client io_uring ${driver})
    set_tests_properties(http_client_${driver}_io_uring_${vname} PROPERTIES SKIP_RETURN_CODE 77
      TIMEOUT ${HM_TEST_TIMEOUT} ENVIRONMENT "HAMMER_ENGINE_DISABLE=${disable}")
  endforeach()
endforeach()
