// Opt-in signals as PMIx events (mpi.conf PMIxCppSignalEvents, handed to the tasks as
// PMIXCPP_SIGNAL_EVENTS). Slurm 22.05 tells slurmstepd's MPI plugin nothing of `scancel
// --signal`, `--signal=<sig>@<time>` or the SIGTERM of a cancellation: they reach the tasks only.
// So the client library, at the first PMIx_Init, installs a handler for each listed signal whose
// disposition is still SIG_DFL (never over the application's own handler or SIG_IGN). The
// handler writes the signal number to a pipe (async-signal-safe, nothing else); a thread of ours
// (started with the first event handler that wants a signal's event, not at PMIx_Init) reads it
// and hands it to the progress thread, which runs a local event:
//   TERM, INT, HUP, QUIT        -> PMIX_ERR_JOB_CANCELED
//   USR1, USR2, ALRM, XCPU, ... -> PMIX_JCTRL_PREEMPT_ALERT
// source {our nspace, PMIX_RANK_UNDEF}, infos PMIX_EVENT_NON_DEFAULT (default handlers, e.g.
// OpenMPI's, which abort, never see it), PMIX_EVENT_AFFECTED_PROC (us), "pmixcpp.signal" (int,
// the signal number), PMIX_EVENT_TEXT_MESSAGE ("received SIGUSR1").
// If no handler of the application is registered for that event, the signal handler itself
// restores the original disposition and raises the signal again at once (async-signal-safe), so
// the process behaves exactly as without pmixcpp (a TERM still terminates, with no delay in which
// peers could see it die first). Whether a handler wants a signal's event is recomputed at every
// (de)registration. With a handler, the application owns the signal.
// A child forked without exec gets the original dispositions back (pthread_atfork).
#pragma once

#include "status.h"

namespace pmixcpp::client {

class Client;

inline constexpr const char *kSignalKey = "pmixcpp.signal";

// At the first PMIx_Init, once `c` is connected. Nothing when PMIXCPP_SIGNAL_EVENTS is unset,
// empty or "none"; a bad list is logged and ignored.
void install_signal_events(Client &c);
// At the last PMIx_Finalize, before `c` goes: original dispositions back, the thread joined.
void remove_signal_events();

// The event code a signal becomes.
int signal_event_code(int sig);

// After every event handler (de)registration: which installed signals some handler wants.
void update_signal_interest(Client &c);

// events.cc: the handlers the event for `sig` would run (empty: nobody wants it); and, on the
// progress thread, run it through them (false: no handler took it).
bool signal_event_wanted(Client &c, int sig);
bool run_signal_event(Client &c, int sig);

}  // namespace pmixcpp::client
