/* Process-wide interrupts (Ctrl-C): a level that only rises, raised from a
 * signal handler, and what each loop does when it sees a new level. The
 * eventfds exist only to wake loops blocked in their poll; each is written
 * once (when its level is reached) and never read, so a backend watches it
 * edge-triggered (epoll) or with a one-shot poll (io_uring). */
#include "engine/internal.h"

#include <sys/eventfd.h>
#include <unistd.h>

_Atomic int hm__intr_level;
int hm__intr_fd[2] = {-1, -1};

int hm_interrupt_init(void)
{
    for (int i = 0; i < 2; i++) {
        if (hm__intr_fd[i] >= 0) continue;
        int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (fd < 0) return -errno;
        hm__intr_fd[i] = fd;
    }
    return 0;
}

void hm_interrupt_raise(hm_interrupt_level level)
{
    int saved_errno = errno; /* a signal handler must leave errno alone */
    int old = atomic_load(&hm__intr_level);
    while (old < (int)level && !atomic_compare_exchange_weak(&hm__intr_level, &old, (int)level)) {
    }
    for (int l = old + 1; l <= (int)level; l++) {
        int fd = hm__intr_fd[l - 1];
        uint64_t one = 1;
        if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
            /* nothing to do: loops still see the level at their next turn */
        }
    }
    errno = saved_errno;
}

hm_interrupt_level hm_interrupt_current(void)
{
    return (hm_interrupt_level)atomic_load(&hm__intr_level);
}

void hm__loop_interrupted(hm_loop *loop, int level)
{
    loop->intr_seen = level;
    bool abort = level >= HM_INTERRUPT_ABORT || (level >= HM_INTERRUPT_STOP && loop->stop_aborts);
    if (abort) loop->aborted = true;
    /* Cancelling only makes coroutines ready; the live list is unchanged. */
    for (hm_coro *co = loop->live_head; co; co = co->live_next)
        if (co->state == HM__CORO_SUSPENDED && co->op && (abort || co->op->soft))
            hm_coro_cancel(co);
}
