/* The embedded bench_app: a forked child serving on a free loopback port. */
#include "cli/embedded.h"

#include "bench_app/app.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t app_pid = -1;

/* The child: bench_app until hammer's SIGTERM (or hammer's death). */
static void run_child(hm_backend_kind backend, int workers, bool http2, int ready_fd, pid_t parent)
{
    /* Own process group: a Ctrl-C at the terminal stops hammer's sending,
     * not the server under test. Still, it must not outlive hammer. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    hm_bench_app_install_signal_handlers();
    hm_bench_app_options ao;
    hm_bench_app_defaults(&ao);
    ao.port = 0;
    ao.quiet = true;
    ao.backend = backend;
    ao.http2 = http2;  /* h2c with prior knowledge; HTTP/1.1 still served */
    if (workers > 1) { /* php-via's intended affinity */
        ao.workers = workers;
        ao.dispatch = "session";
    }
    int rc = hm_bench_app_run(&ao, ready_fd);
    _exit(rc < 0 ? 1 : 0);
}

int hm_embedded_start(hm_backend_kind backend, int workers, bool http2, char *why, size_t whylen)
{
    int fds[2];
    if (pipe(fds) < 0) {
        int e = -errno;
        snprintf(why, whylen, "cannot start the embedded bench_app: %s", hm_strerror(e));
        return e;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = -errno;
        close(fds[0]);
        close(fds[1]);
        snprintf(why, whylen, "cannot start the embedded bench_app: %s", hm_strerror(e));
        return e;
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(backend, workers, http2, fds[1], parent);
    }
    close(fds[1]);
    app_pid = pid;
    /* It writes its port once it listens. */
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    char buf[32] = {0};
    int port = -1;
    if (poll(&pfd, 1, 10000) == 1) {
        ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
        if (n > 0) port = atoi(buf);
    }
    close(fds[0]);
    if (port <= 0) {
        snprintf(why, whylen, "the embedded bench_app did not start");
        return -ECHILD;
    }
    return port;
}

pid_t hm_embedded_pid(void)
{
    return app_pid;
}

void hm_embedded_stop(void)
{
    if (app_pid <= 0) return;
    kill(app_pid, SIGTERM);
    for (int i = 0; i < 200; i++) { /* up to 2 s, then insist */
        if (waitpid(app_pid, NULL, WNOHANG) == app_pid) {
            app_pid = -1;
            return;
        }
        usleep(10000);
    }
    kill(app_pid, SIGKILL);
    waitpid(app_pid, NULL, 0);
    app_pid = -1;
}
