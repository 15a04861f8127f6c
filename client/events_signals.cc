// Signals as local PMIx events: see events_signals.h.
#include "events_signals.h"

#include <fcntl.h>
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "client.h"
#include "log.h"
#include "signals.h"

namespace pmixcpp::client {

namespace {

struct installed_signal {
    int sig = 0;
    struct sigaction original {};
};

// Read by the signal handler: fixed arrays, lock-free atomics.
constexpr int kMaxSignal = 65;
struct sigaction g_original[kMaxSignal];
std::atomic<bool> g_wanted[kMaxSignal];
static_assert(std::atomic<bool>::is_always_lock_free);

// Written before the handlers are installed, read by them: plain ints, no locks.
int g_pipe_rd = -1, g_pipe_wr = -1;
// Filled before the handlers go in, unchanged until the next install (after the reader is joined).
// Both never destroyed: a process may exit() without PMIx_Finalize while the reader runs, and the
// destructor of a joinable std::thread would then abort it instead of letting it end with its own
// exit status; the reader may still look at the list while the process winds down.
std::vector<installed_signal> &g_installed = *new std::vector<installed_signal>;
std::thread &g_reader = *new std::thread;
std::atomic<bool> g_stopping{false};  // set once the original dispositions are back
bool g_active = false;  // handlers installed (the reader starts with the first handler that wants a signal)
Client *g_client = nullptr;
std::mutex g_interest_lock;  // update_signal_interest and remove_signal_events
bool g_atfork_registered = false;

extern "C" void on_signal(int sig) {
    int saved = errno;
    if (sig > 0 && sig < kMaxSignal && !g_wanted[sig].load(std::memory_order_relaxed)) {
        // Nobody wants the event: the original disposition, now (the signal is blocked while we
        // run, so it is delivered again as soon as we return).
        if (signal_default_terminates(sig)) {
            sigaction(sig, &g_original[sig], nullptr);
            raise(sig);
        }
        errno = saved;
        return;
    }
    unsigned char b = static_cast<unsigned char>(sig);
    ssize_t n = write(g_pipe_wr, &b, 1);  // a full pipe drops it: a signal storm is one event anyway
    (void)n;
    errno = saved;
}

// In a child forked without exec there is no reader thread: give it the original dispositions.
extern "C" void restore_in_child() {
    for (const auto &s : g_installed) sigaction(s.sig, &s.original, nullptr);
}

const installed_signal *find_installed(int sig) {
    for (const auto &s : g_installed)
        if (s.sig == sig) return &s;
    return nullptr;
}

// No handler wanted it: behave as if we had never been there.
void raise_again(int sig) {
    const installed_signal *s = find_installed(sig);
    if (s == nullptr || !signal_default_terminates(sig)) return;  // default "ignore": nothing to do
    PMIXCPP_LOG_DEBUG("SIG%s: no event handler took it; raising it again", signal_short_name(sig));
    sigaction(sig, &s->original, nullptr);
    kill(getpid(), sig);  // process-directed: a thread that does not block it takes it
}

void reader_main(Client *c) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
        unsigned char b = 0;
        ssize_t n = read(g_pipe_rd, &b, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || b == 0) return;  // 0: remove_signal_events
        int sig = b;
        if (g_stopping.load()) {  // arrived just before the original disposition was back
            if (signal_default_terminates(sig) && find_installed(sig) != nullptr) kill(getpid(), sig);
            continue;
        }
        c->loop().post([c, sig] {
            if (!run_signal_event(*c, sig)) raise_again(sig);
        });
    }
}

}  // namespace

int signal_event_code(int sig) {
    switch (sig) {
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
    case SIGQUIT: return PMIX_ERR_JOB_CANCELED;
    default: return PMIX_JCTRL_PREEMPT_ALERT;
    }
}

void install_signal_events(Client &c) {
    const char *list = getenv("PMIXCPP_SIGNAL_EVENTS");
    if (list == nullptr || g_active) return;
    auto sigs = parse_signal_list(list);
    if (!sigs.ok()) {
        PMIXCPP_LOG_ERROR("PMIXCPP_SIGNAL_EVENTS=%s ignored: %s", list, sigs.status().message().c_str());
        return;
    }
    std::vector<int> wanted;
    for (int sig : sigs.value()) {
        struct sigaction cur {};
        if (sigaction(sig, nullptr, &cur) != 0) continue;
        bool dfl = !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
        if (dfl)
            wanted.push_back(sig);
        else
            PMIXCPP_LOG_DEBUG("SIG%s: the application handles or ignores it; no event", signal_short_name(sig));
    }
    if (wanted.empty()) return;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        PMIXCPP_LOG_ERROR("signal events: pipe: %m");
        return;
    }
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    g_pipe_rd = p[0];
    g_pipe_wr = p[1];
    g_client = &c;
    g_stopping = false;
    g_installed.clear();
    g_installed.reserve(wanted.size());
    std::string names;
    for (int sig : wanted) {
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        installed_signal s;
        s.sig = sig;
        if (sig >= kMaxSignal || sigaction(sig, nullptr, &s.original) != 0) continue;
        g_original[sig] = s.original;
        g_wanted[sig] = false;  // update_signal_interest sets it, once the reader runs
        if (sigaction(sig, &sa, nullptr) != 0) continue;
        g_installed.push_back(s);
        names += std::string(names.empty() ? "" : ",") + signal_short_name(sig);
    }
    g_active = true;
    if (!g_atfork_registered && pthread_atfork(nullptr, nullptr, restore_in_child) == 0) g_atfork_registered = true;
    PMIXCPP_LOG_DEBUG("signal events: %s", names.c_str());
}

void update_signal_interest(Client &c) {
    std::lock_guard<std::mutex> g(g_interest_lock);
    if (!g_active) return;
    bool any = false;
    for (const auto &s : g_installed) any = any || signal_event_wanted(c, s.sig);
    // The reader runs from the first handler that wants a signal's event on (until then a signal
    // takes its original course in the signal handler itself); it exists before any g_wanted is
    // set, so a signal written to the pipe is always read.
    if (any && !g_reader.joinable()) {
        try {
            g_reader = std::thread(reader_main, g_client);
        } catch (const std::exception &e) {
            PMIXCPP_LOG_ERROR("signal events: cannot start the thread: %s", e.what());
            return;
        }
    }
    for (const auto &s : g_installed) g_wanted[s.sig] = signal_event_wanted(c, s.sig);
}

void remove_signal_events() {
    std::lock_guard<std::mutex> g(g_interest_lock);
    if (!g_active) return;
    for (const auto &s : g_installed) {
        struct sigaction cur {};
        // Put the original back only where ours is still in place (the application may have
        // installed its own since).
        if (sigaction(s.sig, nullptr, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == on_signal)
            sigaction(s.sig, &s.original, nullptr);
        g_wanted[s.sig] = false;
    }
    g_stopping = true;
    if (g_reader.joinable()) {
        unsigned char zero = 0;
        while (write(g_pipe_wr, &zero, 1) < 0 && errno == EAGAIN) usleep(1000);  // the reader drains it
        g_reader.join();
    }
    close(g_pipe_rd);
    close(g_pipe_wr);
    g_pipe_rd = g_pipe_wr = -1;
    g_active = false;
    g_client = nullptr;
}

}  // namespace pmixcpp::client
