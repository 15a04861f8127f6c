#include "plugin/common/step_env.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>

using namespace pmixcpp;

namespace {
step_info sample_step() {
    step_info s;
    s.job_id = 12;
    s.step_id = 3;
    s.nspace = make_namespace(12, 3);
    s.uid = getuid();
    s.gid = getgid();
    s.ntasks = 4;
    s.node_names = {"n1", "n2"};
    s.node_ranks = {{0, 1}, {2, 3}};
    s.node_id = 1;
    return s;
}

std::string env_value(const env_list &env, const std::string &key) {
    for (const auto &[k, v] : env)
        if (k == key) return v;
    return "<unset>";
}
}  // namespace

TEST(StepEnv, NamespaceName) { EXPECT_EQ(make_namespace(12, 3), "slurm.12.3"); }

// MPI_UNIVERSE_SIZE is what the allocation can hold, not the step's size: spawn needs room.
TEST(StepEnv, UniverseFromAllocationCpus) {
    EXPECT_EQ(universe_from_cpus("4(x2)", 1, 4), 8u);
    EXPECT_EQ(universe_from_cpus("6(x2),2", 1, 4), 14u);
    EXPECT_EQ(universe_from_cpus("6(x2),2", 2, 4), 7u);
    EXPECT_EQ(universe_from_cpus("64", 1, 4), 64u);
    EXPECT_EQ(universe_from_cpus("1(x2)", 1, 4), 4u);  // never below the step's tasks
    EXPECT_EQ(universe_from_cpus("", 1, 4), 4u);
    EXPECT_EQ(universe_from_cpus("4(y2)", 1, 4), 4u);
    EXPECT_EQ(universe_from_cpus("4(x2", 1, 4), 4u);
    EXPECT_EQ(universe_from_cpus("a", 1, 3), 3u);
    EXPECT_EQ(universe_from_cpus("99999999999(x99999999999)", 1, 3) >= 3u, true);
}

TEST(StepEnv, PrepareAndRemoveStepDir) {
    char tmpl[] = "/tmp/pmixcpp-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    step_info s = sample_step();
    ASSERT_TRUE(prepare_step_dir(s, tmpl).ok());
    const std::string prefix = std::string(tmpl) + "/pmixcpp.12.3.";
    ASSERT_EQ(s.step_root.compare(0, prefix.size(), prefix), 0) << s.step_root;
    EXPECT_EQ(s.step_root.size(), prefix.size() + 6) << "an unpredictable suffix";
    EXPECT_EQ(s.step_dir, s.step_root + "/user");
    EXPECT_EQ(s.server_socket, s.step_root + "/server.sock");
    struct stat st {};
    ASSERT_EQ(lstat(s.step_root.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0711u);
    EXPECT_EQ(st.st_uid, geteuid());
    ASSERT_EQ(lstat(s.step_dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_EQ(st.st_uid, s.uid);
    // The process directories are the client library's to make, as the user, when asked for.
    for (uint32_t r : {0u, 2u, 3u}) EXPECT_NE(lstat((s.step_dir + "/rank." + std::to_string(r)).c_str(), &st), 0) << r;

    // Two steps with the same ids never share a directory.
    step_info again = sample_step();
    ASSERT_TRUE(prepare_step_dir(again, tmpl).ok());
    EXPECT_NE(again.step_root, s.step_root);
    remove_step_dir(again);

    // Whatever the job left (links to the outside included) goes, and only that.
    std::string outside = std::string(tmpl) + "/outside";
    ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
    ASSERT_EQ(close(open((outside + "/keep").c_str(), O_CREAT | O_WRONLY, 0600)), 0);
    ASSERT_EQ(symlink(outside.c_str(), (s.step_dir + "/link").c_str()), 0);
    ASSERT_EQ(mkdir((s.step_dir + "/rank.2").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((s.step_dir + "/rank.2/deep").c_str(), 0700), 0);
    ASSERT_EQ(symlink((outside + "/keep").c_str(), (s.step_dir + "/rank.2/deep/file").c_str()), 0);
    remove_step_dir(s);
    EXPECT_NE(lstat(s.step_root.c_str(), &st), 0);
    EXPECT_EQ(lstat((outside + "/keep").c_str(), &st), 0) << "a link was followed";
    std::filesystem::remove_all(tmpl);
}

TEST(StepEnv, PrepareRefusesAnUntrustedBase) {
    char tmpl[] = "/tmp/pmixcpp-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    step_info s = sample_step();
    // Writable by others without the sticky bit: anyone could swap entries.
    ASSERT_EQ(chmod(tmpl, 0777), 0);
    Status st = prepare_step_dir(s, tmpl);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("writable by other users"), std::string::npos) << st.message();
    ASSERT_EQ(chmod(tmpl, 01777), 0);  // like /tmp: fine
    EXPECT_TRUE(prepare_step_dir(s, tmpl).ok());
    remove_step_dir(s);
    if (geteuid() == 0) {
        // Owned by another user: refused.
        ASSERT_EQ(chmod(tmpl, 0755), 0);
        ASSERT_EQ(chown(tmpl, 65534, 65534), 0);
        step_info t = sample_step();
        st = prepare_step_dir(t, tmpl);
        EXPECT_FALSE(st.ok());
        EXPECT_NE(st.message().find("owned by uid 65534"), std::string::npos) << st.message();
        EXPECT_TRUE(t.step_dir.empty());
    }
    std::filesystem::remove_all(tmpl);
}

TEST(StepEnv, PrepareFailsClearly) {
    step_info s = sample_step();
    Status st = prepare_step_dir(s, "/nonexistent/base");
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("/nonexistent/base: No such file or directory"), std::string::npos) << st.message();
    EXPECT_TRUE(s.step_dir.empty()) << "no side effect on failure";
    EXPECT_FALSE(prepare_step_dir(s, "relative").ok());
    EXPECT_FALSE(prepare_step_dir(s, "/etc/passwd").ok());
    std::string long_base = "/tmp/" + std::string(120, 'x');
    EXPECT_NE(prepare_step_dir(s, long_base).message().find("longer than"), std::string::npos);
}

TEST(StepEnv, RandomTokensDiffer) {
    std::set<std::string> seen;
    for (int i = 0; i < 50; ++i) {
        auto t = random_token();
        ASSERT_TRUE(t.ok());
        EXPECT_EQ(t->size(), 32u);
        EXPECT_EQ(t->find_first_not_of("0123456789abcdef"), std::string::npos);
        seen.insert(t.value());
    }
    EXPECT_EQ(seen.size(), 50u);
}

TEST(StepEnv, TaskEnvironment) {
    step_info s = sample_step();
    s.step_dir = "/tmp/x/pmixcpp.0.12.3";
    s.server_socket = s.step_dir + "/server.sock";
    s.client_token = "abc";
    plugin_config cfg;
    env_list env = step_task_env(s, cfg, "/opt/pmixcpp/lib/pmixcpp", "/usr/lib/foo");
    EXPECT_EQ(env_value(env, "PMIX_NAMESPACE"), "slurm.12.3");
    EXPECT_EQ(env_value(env, "PMIXCPP_SERVER_URI"), "unix:/tmp/x/pmixcpp.0.12.3/server.sock");
    EXPECT_EQ(env_value(env, "PMIXCPP_CLIENT_TOKEN"), "abc");
    EXPECT_EQ(env_value(env, "LD_LIBRARY_PATH"), "/opt/pmixcpp/lib/pmixcpp:/usr/lib/foo");
    EXPECT_EQ(env_value(env, "OMPI_MCA_btl_vader_backing_directory"), s.step_dir);
    EXPECT_EQ(env_value(env, "OMPI_MCA_btl_sm_backing_directory"), s.step_dir);
    EXPECT_EQ(env_value(env, "PMIXCPP_DEBUG"), "<unset>");
    cfg.client_lib = client_lib_mode::native;
    cfg.debug = 3;
    env = step_task_env(s, cfg, "/opt/pmixcpp/lib/pmixcpp", "");
    EXPECT_EQ(env_value(env, "LD_LIBRARY_PATH"), "<unset>");
    EXPECT_EQ(env_value(env, "PMIXCPP_DEBUG"), "verbose");
    cfg.client_lib = client_lib_mode::ours;
    env = step_task_env(s, cfg, "/opt/pmixcpp/lib/pmixcpp", "");
    EXPECT_EQ(env_value(env, "LD_LIBRARY_PATH"), "/opt/pmixcpp/lib/pmixcpp");

    // OpenPMIx's own clients: every URI names the port on loopback, the server nspace has no dot.
    env_list n = native_task_env(s, 41234);
    for (const char *v : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"})
        EXPECT_EQ(env_value(n, v), "slurm-12-3-server.0;tcp4://127.0.0.1:41234") << v;
    EXPECT_EQ(env_value(n, "PMIX_SERVER_URI51"), "<unset>");
    EXPECT_EQ(env_value(n, "PMIX_GDS_MODULE"), "hash");
    EXPECT_EQ(env_value(n, "PMIX_SECURITY_MODE"), "native");
    EXPECT_EQ(env_value(n, "PMIX_BFROP_BUFFER_TYPE"), "PMIX_BFROP_BUFFER_NON_DESC");
    EXPECT_EQ(env_value(n, "PMIX_HOSTNAME"), s.node_name());
    EXPECT_EQ(env_value(n, "PMIX_SERVER_TMPDIR"), s.step_dir);

    env_list t = task_env(s, 3, 1);
    EXPECT_EQ(env_value(t, "PMIX_RANK"), "3");
    EXPECT_EQ(env_value(t, "PMIXCPP_LOCAL_RANK"), "1");
}

namespace {
// `fn` in a child process with the ids of `uid`:`gid` (as Slurm's task hook runs: real, effective
// and saved ids all the user's); its Status comes back over a pipe as "<code> <message>".
std::pair<pmix_status_t, std::string> run_as(uid_t uid, gid_t gid, const std::function<Status()> &fn) {
    int p[2];
    if (pipe(p) != 0) return {PMIX_ERROR, "pipe"};
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        std::string out;
        if (getuid() != uid && (setgroups(0, nullptr) != 0 || setresgid(gid, gid, gid) != 0 ||
                                setresuid(uid, uid, uid) != 0)) {
            out = std::to_string(PMIX_ERROR) + " cannot become uid " + std::to_string(uid);
        } else {
            Status st = fn();
            out = std::to_string(st.code()) + " " + st.message();
        }
        (void)!write(p[1], out.data(), out.size());
        _exit(0);
    }
    close(p[1]);
    std::string got;
    char buf[512];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    size_t sp = got.find(' ');
    if (sp == std::string::npos) return {PMIX_ERROR, "no answer from the child: " + got};
    return {static_cast<pmix_status_t>(std::stoi(got.substr(0, sp))), got.substr(sp + 1)};
}
}  // namespace

// The process directory is made by the task as the job's user (Slurm's task hook runs as the
// user): 0700, the user's. What the user placed at its name beforehand is used only if it is a
// directory of the user's; a link (to anywhere) or a file is refused without being followed, and
// the task would not start. Never made by another uid (root) in the user's directory.
TEST(StepEnv, ProcessDirectoryMadeByTheTaskAsTheUser) {
    char tmpl[] = "/tmp/pmixcpp-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    ASSERT_EQ(chmod(tmpl, 0755), 0);  // the user reaches its directory by path (as on a node)
    const bool root = geteuid() == 0;
    step_info s = sample_step();
    if (root) {
        s.uid = 65534;  // nobody
        s.gid = 65534;
    }
    ASSERT_TRUE(prepare_step_dir(s, tmpl).ok());
    auto as_user = [&](uint32_t rank) { return run_as(s.uid, s.gid, [&] { return make_proc_dir(s, rank); }); };
    struct stat st {};

    // Fresh: made, the user's, 0700 (whatever the umask).
    mode_t old_mask = umask(0777);
    auto made = as_user(0);
    umask(old_mask);
    EXPECT_EQ(made.first, PMIX_SUCCESS) << made.second;
    EXPECT_EQ(proc_dir(s, 0), s.step_dir + "/rank.0");
    ASSERT_EQ(lstat(proc_dir(s, 0).c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_uid, s.uid);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    // Again (the same rank's directory there already, the user's): fine.
    EXPECT_EQ(as_user(0).first, PMIX_SUCCESS);

    // The user made it beforehand, 0755: used, and made 0700.
    auto user_mkdir = run_as(s.uid, s.gid, [&]() -> Status {
        if (mkdir(proc_dir(s, 1).c_str(), 0755) != 0 || chmod(proc_dir(s, 1).c_str(), 0755) != 0)
            return Status(PMIX_ERROR, "mkdir");
        return Status::success();
    });
    ASSERT_EQ(user_mkdir.first, PMIX_SUCCESS) << user_mkdir.second;
    EXPECT_EQ(as_user(1).first, PMIX_SUCCESS);
    ASSERT_EQ(lstat(proc_dir(s, 1).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);

    // The attack: the user plants a link at the name, to a directory of its own elsewhere (or
    // anywhere). Refused, not followed: the link stays a link, its target is not touched.
    const std::string target = std::string(tmpl) + "/elsewhere";
    ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
    ASSERT_EQ(chown(target.c_str(), s.uid, s.gid), 0);
    auto plant = run_as(s.uid, s.gid, [&]() -> Status {
        if (symlink(target.c_str(), proc_dir(s, 2).c_str()) != 0) return Status(PMIX_ERROR, "symlink");
        int fd = open(proc_dir(s, 3).c_str(), O_CREAT | O_WRONLY | O_EXCL, 0600);
        if (fd < 0) return Status(PMIX_ERROR, "create");
        close(fd);
        return Status::success();
    });
    ASSERT_EQ(plant.first, PMIX_SUCCESS) << plant.second;
    auto link = as_user(2);
    EXPECT_EQ(link.first, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_NE(link.second.find("is not a directory (a symbolic link)"), std::string::npos) << link.second;
    ASSERT_EQ(lstat(proc_dir(s, 2).c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    ASSERT_EQ(stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u) << "the link's target is not made 0700";
    auto file = as_user(3);
    EXPECT_EQ(file.first, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_NE(file.second.find("is not a directory (a file"), std::string::npos) << file.second;

    if (root) {
        // A directory of another user's at the name (only root could put one there): refused.
        ASSERT_EQ(mkdir(proc_dir(s, 4).c_str(), 0700), 0);
        auto other = as_user(4);
        EXPECT_EQ(other.first, PMIX_ERR_NO_PERMISSIONS);
        EXPECT_NE(other.second.find("owned by uid 0"), std::string::npos) << other.second;
        EXPECT_EQ(rmdir(proc_dir(s, 4).c_str()), 0);
        // Root itself (slurmstepd outside the task) makes nothing in the user's directory.
        Status st5 = make_proc_dir(s, 5);
        EXPECT_EQ(st5.code(), PMIX_ERR_NO_PERMISSIONS) << st5.message();
        EXPECT_NE(lstat(proc_dir(s, 5).c_str(), &st), 0);
    }
    remove_step_dir(s);
    EXPECT_EQ(rmdir(target.c_str()), 0);
    EXPECT_EQ(rmdir(tmpl), 0);
}
