/* Helpers for tests that run hammer and bench_app as real processes:
 * spawn with captured output, wait with a timeout, read JSON results. */
#ifndef HM_RUN_UTIL_H
#define HM_RUN_UTIL_H

#include "hm_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct proc {
    pid_t pid;
    int out_fd; /* stdout+stderr of the child */
    char out[65536];
    size_t out_len;
} proc;

/* Starts argv with stdout and stderr captured. */
static inline void proc_start(proc *p, char *const argv[])
{
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    p->out_len = 0;
    p->out[0] = 0;
    p->pid = fork();
    ASSERT(p->pid >= 0);
    if (p->pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        perror("execv");
        _exit(127);
    }
    close(fds[1]);
    p->out_fd = fds[0];
}

/* Reads available output for up to ms milliseconds. */
static inline void proc_read(proc *p, int ms)
{
    struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
    while (poll(&pfd, 1, ms) == 1) {
        if (p->out_len + 1 >= sizeof(p->out)) break;
        ssize_t n = read(p->out_fd, p->out + p->out_len, sizeof(p->out) - 1 - p->out_len);
        if (n <= 0) break;
        p->out_len += (size_t)n;
        p->out[p->out_len] = 0;
        ms = 0;
    }
}

/* Waits up to timeout_s for the child; returns its exit code (or 128+sig). */
static inline int proc_wait(proc *p, int timeout_s)
{
    time_t end = time(NULL) + timeout_s;
    int status = 0;
    for (;;) {
        proc_read(p, 50);
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == p->pid) break;
        if (time(NULL) > end) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &status, 0);
            fprintf(stderr, "child timed out; output:\n%s\n", p->out);
            HM_FAIL_("process did not finish within %d s", timeout_s);
        }
    }
    proc_read(p, 0);
    close(p->out_fd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Reads the child's output until it holds `text`, or the child closes its
 * output (it exited). No time bound of its own: how long a server takes to
 * start on a busy machine is not what a test checks, and a child that
 * hangs is caught by the test's ctest TIMEOUT. Returns whether text came. */
static inline bool proc_wait_output(proc *p, const char *text)
{
    struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
    while (!strstr(p->out, text)) {
        if (p->out_len + 1 >= sizeof(p->out)) return false;
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        ssize_t n = read(p->out_fd, p->out + p->out_len, sizeof(p->out) - 1 - p->out_len);
        if (n <= 0) return false;
        p->out_len += (size_t)n;
        p->out[p->out_len] = 0;
    }
    return true;
}

/* Waits until a TCP connect to 127.0.0.1:port succeeds, or process pid
 * exits (it is not reaped). No time bound of its own, as above. Returns
 * whether the port answered. */
static inline bool wait_port(int port, pid_t pid)
{
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
        close(fd);
        if (ok) return true;
        siginfo_t si = {0};
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            return false;
        usleep(20000);
    }
}

/* Runs argv to completion; returns the exit code, output in p->out. */
static inline int proc_run(proc *p, char *const argv[], int timeout_s)
{
    proc_start(p, argv);
    return proc_wait(p, timeout_s);
}

static inline json_t *load_json(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j) HM_FAIL_("cannot load %s: %s (line %d)", path, err.text, err.line);
    return j;
}

/* The whole file, NUL-terminated; the caller frees it. Fails the test
 * when the file cannot be read. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) HM_FAIL_("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ASSERT(s);
    ASSERT_EQ(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* The element of doc's array `array` whose string `field` is `value` (a
 * run of a profile, a step row by name); fails the test when none is. */
static inline json_t *json_row(json_t *doc, const char *array, const char *field, const char *value)
{
    size_t i;
    json_t *el;
    json_array_foreach(json_object_get(doc, array), i, el)
    {
        const char *s = json_string_value(json_object_get(el, field));
        if (s && !strcmp(s, value)) return el;
    }
    HM_FAIL_("no %s element with %s '%s'", array, field, value);
}

/* Integer at a dotted path like "actions.ok" (-1 when missing). */
static inline long long json_int_at(json_t *root, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", dotted);
    json_t *cur = root;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = json_object_get(cur, tok);
    if (json_is_integer(cur)) return json_integer_value(cur);
    if (json_is_true(cur)) return 1;
    if (json_is_false(cur)) return 0;
    return -1;
}

/* Writes a printf-formatted file (a server's configuration). */
static inline void write_file(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void write_file(const char *path, const char *fmt, ...)
{
    FILE *f = fopen(path, "w");
    ASSERT(f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

/* The first of n consecutive free loopback ports (bench_app --processes N
 * listens on port .. port + N - 1), bound then released. Below the
 * ephemeral range: a port the kernel handed out could be taken, before
 * the server binds it, as the source port of one of the thousands of
 * connections the tests beside make (a sticky run makes 2,000). The pick
 * is seeded per process, so tests started together do not try the same
 * ports in the same order. */
static inline int free_port_run(int n)
{
    static unsigned seed;
    if (!seed) seed = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^ 1u;
    for (int tries = 0; tries < 50; tries++) {
        int base = 20000 + (int)((unsigned)rand_r(&seed) % 12000);
        bool ok = true;
        for (int i = 0; i < n && ok; i++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(base + i))};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
            close(fd);
        }
        if (ok) return base;
    }
    HM_FAIL_("no run of %d free ports", n);
}

/* A free loopback TCP port, as free_port_run(1) picks it. */
static inline int free_port(void)
{
    return free_port_run(1);
}

/* The path `command -v tool` finds, into path; false when none. */
static inline bool find_tool(const char *tool, char *path, size_t cap)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s 2>/dev/null", tool);
    FILE *f = popen(cmd, "r");
    if (!f) return false;
    bool found = fgets(path, (int)cap, f) != NULL;
    pclose(f);
    if (!found) return false;
    path[strcspn(path, "\n")] = '\0';
    return path[0] == '/';
}

/* Servers a test started, killed at exit (atexit(kill_started)) so none
 * is left behind, also when an assertion ends the test. */
#define MAX_STARTED 8
static pid_t tracked_pids[MAX_STARTED] __attribute__((unused));
static int n_tracked __attribute__((unused));

static inline void kill_started(void)
{
    for (int i = 0; i < n_tracked; i++)
        if (tracked_pids[i] > 0) kill(tracked_pids[i], SIGKILL);
}

static inline void track(pid_t pid)
{
    if (n_tracked < MAX_STARTED) tracked_pids[n_tracked++] = pid;
}

static inline void untrack(pid_t pid)
{
    for (int i = 0; i < n_tracked; i++)
        if (tracked_pids[i] == pid) tracked_pids[i] = 0;
}

/* Skips the test (77) when hammer cannot run on engine here (io_uring
 * where the kernel lacks it). */
static inline void skip_unless_engine(const char *hammer, const char *engine)
{
    char *argv[] = {(char *)hammer, "--engine", (char *)engine, "--version", NULL};
    proc p;
    if (proc_run(&p, argv, 30) != 0) HM_SKIP("engine %s is not available here: %s", engine, p.out);
}

/* A throwaway CA and a certificate for 127.0.0.1 and localhost
 * (scripts/gen-test-cert.sh) in a new directory /tmp/hammer-TAG-XXXXXX;
 * the test skips (77) when they cannot be made. */
typedef struct test_certs {
    char dir[256], ca[300], cert[300], key[300];
} test_certs;

static inline void test_certs_make(test_certs *c, const char *script, const char *tag)
{
    snprintf(c->dir, sizeof(c->dir), "/tmp/hammer-%s-XXXXXX", tag);
    ASSERT(mkdtemp(c->dir));
    char *argv[] = {"/bin/sh", (char *)script, c->dir, NULL};
    proc p;
    if (proc_run(&p, argv, 60) != 0)
        HM_SKIP("cannot make test certificates (is openssl installed?): %s", p.out);
    snprintf(c->ca, sizeof(c->ca), "%s/ca.pem", c->dir);
    snprintf(c->cert, sizeof(c->cert), "%s/server.pem", c->dir);
    snprintf(c->key, sizeof(c->key), "%s/server.key", c->dir);
}

/* Removes the directory test_certs_make made, with what the test wrote
 * there; a failed test leaves it, to be looked at. */
static inline void test_certs_remove(const test_certs *c)
{
    char *argv[] = {"/bin/rm", "-rf", (char *)c->dir, NULL};
    proc p;
    proc_run(&p, argv, 30);
}

/* A TCP socket listening on 127.0.0.1 at a port the kernel picked. */
static inline int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ASSERT(fd >= 0);
    ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ASSERT_EQ(listen(fd, 16), 0);
    socklen_t sl = sizeof(sa);
    ASSERT_EQ(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

#endif
