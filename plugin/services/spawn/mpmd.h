// Several apps in one spawned step (PMIx_Spawn with napps > 1, MPI_Comm_spawn_multiple).
//
// Slurm runs one command line per step. The spawn launcher therefore starts the step with our
// small exec helper `pmixcpp-mpmd` as the command and hands it the table of apps in the variable
// PMIXCPP_MPMD_APPS (hex of the encoding below; srun exports it to every task). Each task's
// helper picks the app of its rank (SLURM_PROCID), adds that app's environment, changes to its
// directory and execs its command: ranks are numbered through the apps in order, as the
// standard asks. The step's servers learn the app sizes from PMIXCPP_SPAWN_APP_SIZES ("2,3") and
// publish PMIX_APPNUM, PMIX_APP_RANK, PMIX_APPLDR, PMIX_APP_SIZE, PMIX_JOB_NUM_APPS from it.
//
// Encoding: u32 magic "PXMA", u32 count, then per app: u32 first rank, u32 nprocs, str cmd,
// u32 argc + str each, u32 envc + str each (KEY=VALUE), str cwd ("" = the step's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"

namespace pmixcpp::spawn {

inline constexpr const char *kMpmdAppsEnv = "PMIXCPP_MPMD_APPS";
inline constexpr const char *kAppSizesEnv = "PMIXCPP_SPAWN_APP_SIZES";
inline constexpr const char *kMpmdExecName = "pmixcpp-mpmd";
// One environment string may hold at most 128 KiB (Linux MAX_ARG_STRLEN); the table must fit.
inline constexpr size_t kMaxMpmdEnvBytes = 120 * 1024;

struct mpmd_app {
    uint32_t first_rank = 0;
    uint32_t nprocs = 0;
    std::string cmd;
    std::vector<std::string> argv;  // argv[0] included
    std::vector<std::string> env;   // KEY=VALUE, added to the task's environment
    std::string cwd;
};

// The value of PMIXCPP_MPMD_APPS; PMIX_ERR_BAD_PARAM when the apps do not fit in one variable.
Result<std::string> encode_mpmd(const std::vector<mpmd_app> &apps);
// PMIX_ERR_UNPACK_FAILURE for anything but a well-formed table whose apps cover the ranks
// 0..N-1 in order.
Status decode_mpmd(std::string_view hex, std::vector<mpmd_app> *apps);
// The app running `rank`, or nullptr.
const mpmd_app *app_of_rank(const std::vector<mpmd_app> &apps, uint32_t rank);

// "2,3" -> {2, 3}; an empty vector for a missing or malformed value (one app then).
std::vector<uint32_t> parse_app_sizes(std::string_view s);

}  // namespace pmixcpp::spawn

namespace pmixcpp::spawn {

// srun --multi-prog: the apps of a step from the text of Slurm's configuration file (what
// slurmstepd receives as the step's second argument). Each line "<ranks> <program> [args]" that
// names at least one rank not named before is an app, numbered in line order; <ranks> is "*"
// (every rank not named before) or a list of N and N-M; '#' starts a comment, a trailing '\'
// continues a line. PMIX_ERR_BAD_PARAM when a rank is out of range or named by no line.
struct multi_prog_apps {
    std::vector<uint32_t> app_of_rank;
    std::vector<std::string> argv;  // each app's command line as written ("%t"/"%o" unexpanded)
};
Result<multi_prog_apps> parse_multi_prog(std::string_view text, uint32_t ntasks);

}  // namespace pmixcpp::spawn
