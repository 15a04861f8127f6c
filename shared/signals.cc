#include "signals.h"

#include <signal.h>
#include <strings.h>

#include <algorithm>

namespace pmixcpp {

namespace {

struct signal_def {
    const char *name;
    int number;
    bool terminates;
};

constexpr signal_def kSignals[] = {
    {"HUP", SIGHUP, true},   {"INT", SIGINT, true},   {"QUIT", SIGQUIT, true}, {"ALRM", SIGALRM, true},
    {"TERM", SIGTERM, true}, {"USR1", SIGUSR1, true}, {"USR2", SIGUSR2, true}, {"XCPU", SIGXCPU, true},
    {"CONT", SIGCONT, false}, {"URG", SIGURG, false}, {"WINCH", SIGWINCH, false},
};

const signal_def *find_def(int sig) {
    for (const auto &d : kSignals)
        if (d.number == sig) return &d;
    return nullptr;
}

}  // namespace

Result<std::vector<int>> parse_signal_list(const std::string &list) {
    std::vector<int> out;
    if (list.empty() || strcasecmp(list.c_str(), "none") == 0) return out;
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string word = list.substr(start, comma - start);
        start = comma + 1;
        if (word.size() > 3 && strncasecmp(word.c_str(), "SIG", 3) == 0) word = word.substr(3);
        const signal_def *found = nullptr;
        for (const auto &d : kSignals)
            if (strcasecmp(word.c_str(), d.name) == 0) found = &d;
        if (found == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "unknown signal '" + word +
                                                  "' (accepted: HUP INT QUIT ALRM TERM USR1 USR2 XCPU CONT URG WINCH)");
        if (std::find(out.begin(), out.end(), found->number) == out.end()) out.push_back(found->number);
    }
    return out;
}

const char *signal_short_name(int sig) {
    const signal_def *d = find_def(sig);
    return d ? d->name : nullptr;
}

bool signal_default_terminates(int sig) {
    const signal_def *d = find_def(sig);
    return d != nullptr && d->terminates;
}

}  // namespace pmixcpp
