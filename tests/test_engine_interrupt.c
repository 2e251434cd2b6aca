/* Deadlines against a peer that always has data, fairness between the
 * coroutines of one thread, and interrupts (Ctrl-C): STOP ends sleeps and
 * waits but lets socket operations go on, ABORT ends everything (also in a
 * loop blocked in its poll, raised from another thread), and a stop_aborts
 * loop treats STOP as ABORT. The interrupt level only rises, so the parts
 * run in this order. */
#include "engine_test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define MS 1000000LL

static hm_loop_options lo;

/* A connected pair of engine sockets on the current loop. */
static void socket_pair(hm_sock **client, hm_sock **server)
{
    hm_sock *ls;
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&ls, (struct sockaddr *)&a, sizeof(a), 16), 0);
    a = loopback_addr(hm_sock_local_port(ls));
    ASSERT_EQ(hm_sock_connect(client, (struct sockaddr *)&a, sizeof(a), 0), 0);
    ASSERT_EQ(hm_sock_accept(ls, server, 0), 0);
    hm_sock_close(ls);
}

/* ---- a flooding peer -------------------------------------------------- */

typedef struct flood {
    int fd;
    atomic_bool stop, flooding;
} flood;

static void *flood_thread(void *p)
{
    flood *f = p;
    char buf[65536];
    memset(buf, 'x', sizeof(buf));
    int64_t until = hm_now_ns() + 30000 * MS; /* a hang must not outlive the test */
    atomic_store(&f->flooding, true);
    while (!atomic_load(&f->stop) && hm_now_ns() < until)
        if (write(f->fd, buf, sizeof(buf)) < 0) break;
    atomic_store(&f->flooding, false);
    return NULL;
}

static int ticks;
static bool reader_done;
static pthread_t flood_th;
static flood *flood_state;
static hm_sock *flood_server; /* closed after the flooder is joined */
static void ticker(void *arg)
{
    while (!reader_done) {
        ticks++;
        hm_coro_yield();
    }
}

static void flood_reader(void *arg)
{
    hm_sock *client, *server;
    socket_pair(&client, &server);
    static flood f;
    f = (flood){.fd = hm_sock_fd(server)};
    flood_state = &f;
    /* The flooder writes with blocking calls from its own thread. */
    int fl = fcntl(f.fd, F_GETFL);
    ASSERT_EQ(fcntl(f.fd, F_SETFL, fl & ~O_NONBLOCK), 0);
    ASSERT_EQ(pthread_create(&flood_th, NULL, flood_thread, &f), 0);
    while (!atomic_load(&f.flooding))
        hm_coro_sleep(MS);
    hm_sock_read(client, (char[1]){0}, 1, 0); /* data is there from now on */
    ticks = 0;                                /* count only while the flood is read */
    int64_t t0 = hm_now_ns();
    int64_t deadline = t0 + 100 * MS;
    char buf[16]; /* small reads never drain what the flooder keeps queued */
    ssize_t n;
    uint64_t got = 0, reads = 0, late = 0;
    for (;;) {
        int64_t before = hm_now_ns();
        n = hm_sock_read(client, buf, sizeof(buf), deadline);
        if (n <= 0) break;
        got += (uint64_t)n;
        reads++;
        late += before > deadline; /* begun after the deadline, and still served */
    }
    reader_done = true;
    bool still_flooding = atomic_load(&f.flooding);
    printf("flood: %llu reads (%llu bytes, %llu begun late), then %zd after %.1f ms; "
           "ticker ran %d times\n",
           (unsigned long long)reads, (unsigned long long)got, (unsigned long long)late, n,
           (double)(hm_now_ns() - t0) / 1e6, ticks);
    ASSERT_EQ(n, -ETIMEDOUT);
    ASSERT_GE(hm_now_ns(), deadline);
    ASSERT_EQ(late, 0);     /* the deadline is checked before every read */
    ASSERT(still_flooding); /* ended by the deadline, not by the flood running dry */
    /* The other coroutine ran at least once per HM_FAIR_OPS reads. */
    ASSERT_GE((uint64_t)ticks + 1, reads / HM_FAIR_OPS);
    atomic_store(&f.stop, true);
    /* The flooder's write fails once the close takes effect: on io_uring
     * at the loop's next turn (the socket's armed receive and registered
     * slot hold it until then), so it is joined after the loop, never
     * while blocking it. */
    hm_sock_close(client);
    flood_server = server;
}

static void test_flood_deadline_and_fairness(void)
{
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &lo), 0);
    ASSERT_EQ(hm_coro_spawn(loop, flood_reader, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(loop, ticker, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    pthread_join(flood_th, NULL);
    hm_sock_close(flood_server);
    hm_loop_destroy(loop);
}

/* ---- STOP ----------------------------------------------------------------- */

static int sleep_rc = 1, pop_rc = 1, late_sleep_rc = 1;
static ssize_t read_rc;
static hm_sock *stop_client, *stop_server;
static hm_chan *stop_chan;

static void stop_sleeper(void *arg)
{
    int64_t t0 = hm_now_ns();
    sleep_rc = hm_coro_sleep(10000 * MS);
    ASSERT_LT(hm_now_ns() - t0, 10000 * MS); /* ended by STOP, before the 10 s */
    late_sleep_rc = hm_coro_sleep(MS);       /* a sleep begun after STOP is a sleep */
}

static void stop_popper(void *arg)
{
    void *item;
    pop_rc = hm_chan_pop(stop_chan, &item, hm_now_ns() + 10000 * MS);
}

static void stop_reader(void *arg)
{
    char buf[16];
    read_rc = hm_sock_read(stop_client, buf, sizeof(buf), hm_now_ns() + 10000 * MS);
}

static void stop_raiser(void *arg)
{
    hm_coro_sleep(20 * MS);
    hm_interrupt_raise(HM_INTERRUPT_STOP);
    ASSERT_EQ(hm_interrupt_current(), HM_INTERRUPT_STOP);
    hm_coro_yield(); /* the loop acts on the level at its next turn */
    hm_coro_yield();
    ASSERT_EQ(sleep_rc, -ECANCELED);
    ASSERT_EQ(pop_rc, -ECANCELED);
    ASSERT_EQ(read_rc, 0); /* the read still waits */
    ASSERT_EQ(hm_sock_write(stop_server, "hello", 5, 0, NULL), 5);
}

static void stop_setup(void *arg)
{
    socket_pair(&stop_client, &stop_server);
    ASSERT_EQ(hm_coro_spawn(NULL, stop_sleeper, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(NULL, stop_popper, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(NULL, stop_reader, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(NULL, stop_raiser, NULL, NULL), 0);
}

static void test_stop(void)
{
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &lo), 0);
    ASSERT_EQ(hm_chan_create(&stop_chan, 1), 0);
    ASSERT_EQ(hm_coro_spawn(loop, stop_setup, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(read_rc, 5); /* the socket operation finished after STOP */
    ASSERT_EQ(late_sleep_rc, 0);
    hm_sock_close(stop_client);
    hm_sock_close(stop_server);
    hm_chan_destroy(stop_chan);
    hm_loop_destroy(loop);
}

/* A loop made for set-up steps, created after STOP: nothing waits there. */
static ssize_t setup_read_rc;
static void setup_step_connect(void *arg)
{
    hm_sock *c;
    struct sockaddr_in a = loopback_addr(1); /* never reached: the loop aborted */
    setup_read_rc = hm_sock_connect(&c, (struct sockaddr *)&a, sizeof(a), 0);
}

static void test_stop_aborts_setup_loop(void)
{
    hm_loop_options o = lo;
    o.stop_aborts = true;
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    ASSERT_EQ(hm_coro_spawn(loop, setup_step_connect, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(setup_read_rc, -ECANCELED);
    hm_loop_destroy(loop);
}

/* ---- ABORT, raised from another thread while the loop blocks in its poll -- */

static ssize_t abort_read_rc = 1, abort_after_rc = 1;
static int abort_sleep_rc = 1;
static atomic_bool abort_waiting;

static void abort_reader(void *arg)
{
    hm_sock *c, *s;
    socket_pair(&c, &s);
    char buf[16];
    atomic_store(&abort_waiting, true);
    abort_read_rc = hm_sock_read(c, buf, sizeof(buf), 0); /* no deadline, no timer */
    abort_after_rc = hm_sock_read(c, buf, sizeof(buf), 0);
    abort_sleep_rc = hm_coro_sleep(10000 * MS);
    hm_sock_close(c);
    hm_sock_close(s);
}

static void *abort_loop_thread(void *p)
{
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &lo), 0);
    ASSERT_EQ(hm_coro_spawn(loop, abort_reader, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
    return NULL;
}

static void test_abort_wakes_a_blocked_loop(void)
{
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, abort_loop_thread, NULL), 0);
    while (!atomic_load(&abort_waiting))
        usleep(1000);
    usleep(50000); /* let it block in the poll */
    hm_interrupt_raise(HM_INTERRUPT_ABORT);
    pthread_join(th, NULL);
    ASSERT_EQ(abort_read_rc, -ECANCELED);
    ASSERT_EQ(abort_after_rc, -ECANCELED);
    ASSERT_EQ(abort_sleep_rc, -ECANCELED);
}

int main(int argc, char **argv)
{
    lo = test_loop_options(argc, argv);
    ASSERT_EQ(hm_interrupt_init(), 0);
    test_flood_deadline_and_fairness();
    test_stop();
    test_stop_aborts_setup_loop();
    test_abort_wakes_a_blocked_loop();
    printf("ok\n");
    return 0;
}
