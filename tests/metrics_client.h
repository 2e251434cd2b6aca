/* What the tests of --metrics-listen share: a GET of the endpoint over
 * loopback, a sample's value in the exposition, and a hammer started with
 * the endpoint on a free port. Header-only, like run_util.h. */
#ifndef HM_TESTS_METRICS_CLIENT_H
#define HM_TESTS_METRICS_CLIENT_H

#include "run_util.h"

#include <stdint.h>
#include <string.h>

static inline int metrics_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) HM_FAIL_("connect to %d failed", port);
    return fd;
}

/* GET path from 127.0.0.1:port (with an Accept header unless NULL); the
 * whole answer (head and body) into buf, however long it takes (a hang is
 * the ctest TIMEOUT's). */
static inline size_t metrics_get(int port, const char *path, const char *accept, char *buf,
                                 size_t cap)
{
    int fd = metrics_connect(port);
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s\r\n", path,
                     accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
    ASSERT_EQ(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = 0;
    close(fd);
    return len;
}

/* The value of the sample line that starts with `sample ` (-1 if none). */
static inline double metrics_value(const char *text, const char *sample)
{
    char needle[256];
    snprintf(needle, sizeof(needle), "\n%s ", sample);
    const char *p = strstr(text, needle);
    return p ? atof(p + strlen(needle)) : -1;
}

/* Starts hammer with the endpoint on a free port (extra: the rest of the
 * command line, NULL-terminated); returns that port. */
static inline int metrics_start_hammer(proc *p, const char *hammer, char **extra)
{
    char *argv[40] = {(char *)hammer, "--metrics-listen", "127.0.0.1:0"};
    int n = 3;
    for (int i = 0; extra[i] && n < 39; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    proc_start(p, argv);
    if (!proc_wait_output(p, "path /metrics")) HM_FAIL_("hammer ended before serving:\n%s", p->out);
    const char *at = strstr(p->out, "metrics on port ");
    if (!at) HM_FAIL_("hammer did not say where its metrics are:\n%s", p->out);
    return atoi(at + 16);
}

#endif
