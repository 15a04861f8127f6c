// pmixcpp-mpmd: the command of a spawned step that runs several apps (plugin/services/spawn/mpmd.h).
// Picks this task's app by SLURM_PROCID from PMIXCPP_MPMD_APPS, adds the app's environment,
// changes to its directory and execs its command. Any failure is one line on stderr and exit
// status 127 (as a shell reports a command it cannot run).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpmd.h"

using namespace pmixcpp;

namespace {

[[noreturn]] void die(const std::string &what) {
    fprintf(stderr, "pmixcpp-mpmd: %s\n", what.c_str());
    _exit(127);
}

}  // namespace

int main() {
    const char *table = getenv(spawn::kMpmdAppsEnv);
    const char *procid = getenv("SLURM_PROCID");
    if (table == nullptr) die(std::string(spawn::kMpmdAppsEnv) + " is not set (this runs only as a spawned step)");
    if (procid == nullptr || *procid == '\0') die("SLURM_PROCID is not set");
    char *end = nullptr;
    errno = 0;
    unsigned long rank = strtoul(procid, &end, 10);
    if (errno != 0 || *end != '\0' || rank > UINT32_MAX) die(std::string("bad SLURM_PROCID ") + procid);

    std::vector<spawn::mpmd_app> apps;
    if (Status st = spawn::decode_mpmd(table, &apps); !st.ok()) die("bad app table: " + st.message());
    const spawn::mpmd_app *app = spawn::app_of_rank(apps, static_cast<uint32_t>(rank));
    if (app == nullptr) die("no app for rank " + std::string(procid));

    unsetenv(spawn::kMpmdAppsEnv);  // the app has no use for the others' command lines
    for (const auto &e : app->env) {
        auto eq = e.find('=');
        if (eq == std::string::npos || eq == 0) die("bad environment entry \"" + e + "\"");
        if (setenv(e.substr(0, eq).c_str(), e.c_str() + eq + 1, 1) != 0)
            die("setenv " + e.substr(0, eq) + ": " + strerror(errno));
    }
    if (!app->cwd.empty() && chdir(app->cwd.c_str()) != 0)
        die("chdir " + app->cwd + ": " + strerror(errno));

    std::vector<char *> argv;
    std::string argv0 = app->argv.empty() ? app->cmd : app->argv[0];
    argv.push_back(argv0.data());
    std::vector<std::string> rest(app->argv.size() > 1 ? app->argv.begin() + 1 : app->argv.end(), app->argv.end());
    for (auto &a : rest) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(app->cmd.c_str(), argv.data());
    die("exec " + app->cmd + ": " + strerror(errno));
}
