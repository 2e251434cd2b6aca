# Client-side php-via protocol pieces: URLs, the cookie jar, page scraping.
hm_test(url SOURCES test_url.c LIBS hm_proto)
hm_test(cookie SOURCES test_cookie.c LIBS hm_proto)
hm_test(via_html SOURCES test_via_html.c LIBS hm_proto)
