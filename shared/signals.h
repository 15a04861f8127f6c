// The signals PMIxCppSignalEvents may name (shared/plugin_config.cc validates the list, the
// client library parses it at PMIx_Init: client/events_signals.cc). No I/O, no state.
#pragma once

#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp {

// "USR1,USR2,TERM": comma-separated names, case-insensitive, with or without "SIG"; "" or "none"
// = no signal. Accepted: HUP INT QUIT ALRM TERM USR1 USR2 XCPU (whose default action ends the
// process) and CONT URG WINCH (ignored by default). Duplicates are dropped; order is kept.
Result<std::vector<int>> parse_signal_list(const std::string &list);

// "USR1" for SIGUSR1; nullptr for a signal not in the accepted set.
const char *signal_short_name(int sig);

// The signal's default action ends the process (so re-raising it after restoring SIG_DFL does).
bool signal_default_terminates(int sig);

}  // namespace pmixcpp
