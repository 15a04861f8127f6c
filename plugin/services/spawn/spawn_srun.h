// PMIx_Spawn as a new Slurm step of the same job. Three pieces, none of them Slurm-specific:
//  - the request slurmstepd sends to srun's agent (service spawn of plugin/agent/proto/): the
//    parent proc and the client's spawn payload;
//  - spawn_plan: the srun command line and environment for the apps and their infos;
//  - spawn_launcher (in srun, as the user): runs `srun --jobid=<job> --mpi=pmixcpp ...`, learns
//    the new step's namespace from the child srun's plugin (through an inherited pipe named by
//    PMIXCPP_SPAWN_REPORT_FD) and answers; a failure before the step exists comes back as a status.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../../common/workers.h"
#include "../../agent/proto/agent_proto.h"
#include "../../agent/proto/responder.h"
#include "status.h"
#include "wire/messages.h"

namespace pmixcpp::spawn {

inline constexpr uint32_t kSpawnMagic = 0x50535850;  // "PXSP"
// Set in the child srun's environment by the launcher.
inline constexpr const char *kReportFdEnv = "PMIXCPP_SPAWN_REPORT_FD";
inline constexpr const char *kParentEnv = "PMIXCPP_SPAWN_PARENT";  // "<nspace>:<rank>"
// Set by the parent's server in a spawn of one app: the parent step's size (its process sets
// across both steps, plugin/server/groups.h).
inline constexpr const char *kParentSizeEnv = "PMIXCPP_SPAWN_PARENT_SIZE";
// Set beside it when the parent step has other spawned steps still running: their namespaces
// and sizes, "<nspace>:<size>[,<nspace>:<size>...]" in the order they were spawned (members of
// the union set between the parent and the child, plugin/server/groups.h).
inline constexpr const char *kPeersEnv = "PMIXCPP_SPAWN_PEERS";
// How long the launcher waits for the new step to exist.
inline constexpr int kStepStartTimeoutSec = 120;

struct agent_spawn_request {
    std::string parent_nspace;
    uint32_t parent_rank = 0;
    wire::spawn_request request;
};
struct agent_spawn_reply {
    int32_t status = 0;
    std::string message;
    std::string nspace;
};

// Watch a spawned step (magic "PXSW"): `u32 magic, str child nspace`; answered when that step's
// srun ends, as an agent::reply whose body is `i32 exit code` of the child srun (status
// PMIX_ERR_NOT_FOUND: not a step this srun spawned).
inline constexpr uint32_t kWatchMagic = 0x57535850;
Result<std::vector<uint8_t>> encode_watch(const std::string &child_nspace);
bool is_watch_body(std::span<const uint8_t> body);

Result<std::vector<uint8_t>> encode_request(const agent_spawn_request &r);
bool is_spawn_body(std::span<const uint8_t> body);
Status decode_request(std::span<const uint8_t> body, agent_spawn_request *r);
// The spawn reply as the agent's one reply (agent_proto.h): status, message, body = the nspace.
agent::reply to_reply(const agent_spawn_reply &r);
Status from_reply(const agent::reply &in, agent_spawn_reply *r);

// What to run: srun's argv (argv[0] = "srun") and the variables to set in its environment (they
// reach the children, srun exporting its environment).
// Several apps become one step whose command is pmixcpp-mpmd (mpmd.h).
struct spawn_plan {
    struct exe_check {
        std::string cmd;   // an app's command, checked before srun runs
        std::string cwd;   // where a relative command is looked for ("" = srun's directory)
        std::string path;  // the PATH it is looked up in ("" = srun's)
    };
    std::vector<std::string> argv;
    std::vector<std::string> env;  // KEY=VALUE
    std::vector<exe_check> exes;   // one per app
    // One host per rank when apps name their own hosts: srun's SLURM_HOSTFILE with
    // --distribution=arbitrary (empty: srun places the ranks).
    std::vector<std::string> rank_hosts;
    uint32_t job_id = 0;           // the Slurm job the step runs in
    bool child_sep = false;        // PMIX_SPAWN_CHILD_SEP: the step outlives its parent step
};
// PMIX_SPAWN_TARGET (or PMIX_ALLOC_ID) of a spawn: the Slurm job of that allocation, or an error
// status (PMIX_ERR_BAD_PARAM for an allocation the caller may not use).
using alloc_resolver = std::function<Result<uint32_t>(const std::string &alloc_id)>;
// Infos of the job apply to every app; an app's own infos (PMIX_WDIR, PMIX_SET_ENVAR,
// PMIX_PREFIX, PMIX_HOST) to that app only. PMIX_ERR_NOT_SUPPORTED: a required attribute Slurm
// cannot honour;
// PMIX_ERR_BAD_PARAM: a malformed one, or a target allocation `resolve` refuses (no resolver:
// every target is refused). Optional unknown attributes are ignored.
Result<spawn_plan> plan_spawn(const agent_spawn_request &r, uint32_t job_id, const alloc_resolver &resolve = {});

// "slurm.<job>.<step>" -> job, step; false for any other name.
bool parse_step_nspace(const std::string &nspace, uint32_t *job, uint32_t *step);

// The command resolved like execvp would (PATH of `path_env`), or PMIX_ERR_JOB_EXE_NOT_FOUND.
Result<std::string> resolve_exe(const std::string &cmd, const std::string &cwd, const std::string &path_env);

// Times of spawn_launcher::end_children(), in milliseconds.
struct child_end_times {
    int settle_ms = 1000;  // children that are finishing anyway end without a signal
    int term_ms = 3000;    // SIGTERM, then SIGKILL after this
    int kill_ms = 5000;    // SIGKILL of the step, then of the child srun itself after this
};

// srun side: one thread per request (bounded), answers on the request's connection.
class spawn_launcher {
public:
    // Signal a spawned step (job, step) with the user's authority (Slurm: slurm_kill_job_step).
    using step_killer = std::function<void(uint32_t job, uint32_t step, int sig)>;
    using end_times = child_end_times;
    explicit spawn_launcher(uint32_t job_id, alloc_resolver resolve = {}, step_killer kill = {},
                            end_times t = end_times())
        : _job_id(job_id), _resolve(std::move(resolve)), _kill(std::move(kill)), _times(t) {}
    // The parent step is over (every task ended): end_children(), then wait until every child
    // srun ended (a parent srun outlives its spawned steps, so the allocation is not given up
    // under them: separated ones end on their own or with the job), then join the threads.
    ~spawn_launcher();
    // Takes the call (answered through `answer`) and the body of a spawn request
    // (service spawn) or of a watch (service spawn_watch).
    void submit(agent::responder answer, std::vector<uint8_t> body);
    void submit_watch(agent::responder answer, std::vector<uint8_t> body);
    // Terminate the spawned steps still running that were not spawned with
    // PMIX_SPAWN_CHILD_SEP=true, as the standard asks when the parent job ends: after `settle_ms`
    // SIGTERM to the step, after `term_ms` SIGKILL, after `kill_ms` SIGKILL to its srun.
    // Returns how many steps had to be signalled.
    size_t end_children();

private:
    struct child {
        int pid = -1;
        uint32_t job = 0, step = 0;
        bool separate = false;  // PMIX_SPAWN_CHILD_SEP
    };
    void start(agent::responder answer, std::vector<uint8_t> body, bool is_watch);
    void handle(agent::responder answer, std::vector<uint8_t> body);
    void watch(agent::responder answer, std::vector<uint8_t> body);
    agent_spawn_reply launch(const agent_spawn_request &r);
    std::vector<std::pair<std::string, child>> linked_children();  // under _mutex

    uint32_t _job_id;
    alloc_resolver _resolve;
    step_killer _kill;
    end_times _times;
    std::mutex _mutex;
    std::condition_variable _ended_cv;
    std::map<std::string, child> _running;  // child nspace -> its srun and step
    std::map<std::string, int> _ended;      // child nspace -> exit code of its srun
    // Declared last, closed first (the destructor): their threads use everything above.
    bounded_workers _requests{kServiceThreads};  // spawn requests
    bounded_workers _watchers{kServiceThreads};  // watches (PXSW), answered when their step ends
    bounded_workers _reapers{kServiceThreads};   // one per child srun, until it ends
};

}  // namespace pmixcpp::spawn
