// safe_fs against the tricks a job user can play in a directory root works in.
#include "plugin/common/safe_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace pmixcpp;

namespace {

class SafeFs : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/pmixcpp-safefs-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top = tmpl;
        auto d = safe_fs::dir::open_trusted(top);
        ASSERT_TRUE(d.ok()) << d.status().message();
        base = std::move(d.value());
        // A "victim" outside the directory, standing for a root-owned file.
        victim = top + "/victim";
        std::ofstream(victim) << "precious";
    }
    void TearDown() override { std::filesystem::remove_all(top); }
    std::string read(const std::string &p) {
        std::ifstream f(p);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }
    std::string top, victim;
    safe_fs::dir base;
};

TEST_F(SafeFs, NewFilesNeverFollowAPlantedLink) {
    auto d = base.make_subdir("step", 0700);
    ASSERT_TRUE(d.ok());
    ASSERT_EQ(symlink(victim.c_str(), (d->path() + "/jobdata").c_str()), 0);
    std::vector<uint8_t> bytes{'x', 'y'};
    Status st = d->write_new_file("jobdata", bytes, 0400, getuid(), getgid());
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(read(victim), "precious");
    // A temporary name the attacker guessed does not help either: replace_file picks a random one.
    ASSERT_EQ(symlink(victim.c_str(), (d->path() + "/.modex.tmp").c_str()), 0);
    ASSERT_TRUE(d->replace_file("modex", bytes, 0400, getuid(), getgid()).ok());
    EXPECT_EQ(read(victim), "precious");
    EXPECT_EQ(read(d->path() + "/modex"), "xy");
    struct stat s {};
    ASSERT_EQ(lstat((d->path() + "/modex").c_str(), &s), 0);
    EXPECT_EQ(s.st_mode & 0777, 0400u);
}

TEST_F(SafeFs, SubdirectoriesAreNotFollowedThroughLinks) {
    ASSERT_EQ(symlink(top.c_str(), (top + "/ln").c_str()), 0);
    auto d = base.open_subdir("ln", static_cast<uid_t>(-1));
    EXPECT_FALSE(d.ok());
    EXPECT_FALSE(base.make_subdir("../x", 0700).ok());
    EXPECT_FALSE(base.make_subdir("ln", 0700).ok()) << "an existing name is never reused";
    auto u1 = base.make_unique_subdir("p.", 0711);
    auto u2 = base.make_unique_subdir("p.", 0711);
    ASSERT_TRUE(u1.ok() && u2.ok());
    EXPECT_NE(u1->path(), u2->path());
}

TEST_F(SafeFs, RemoveBeneathStaysBeneath) {
    auto d = base.make_subdir("user", 0700);
    ASSERT_TRUE(d.ok());
    std::string outside = top + "/outside";
    ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
    std::ofstream(outside + "/file") << "keep";
    ASSERT_EQ(symlink(outside.c_str(), (d->path() + "/via").c_str()), 0);
    // Through a linked component: not resolved.
    EXPECT_FALSE(d->remove_beneath("via/file").ok());
    EXPECT_EQ(read(outside + "/file"), "keep");
    // ".." anywhere: refused.
    EXPECT_FALSE(d->remove_beneath("../outside").ok());
    EXPECT_FALSE(d->remove_beneath("a/../../outside").ok());
    EXPECT_FALSE(d->remove_beneath("/etc").ok());
    EXPECT_TRUE(std::filesystem::exists(outside + "/file"));
    // The link itself is removed as a link.
    EXPECT_TRUE(d->remove_beneath("via").ok());
    EXPECT_FALSE(std::filesystem::exists(d->path() + "/via"));
    EXPECT_TRUE(std::filesystem::exists(outside + "/file"));
    // A real tree below is removed, a link inside it only as a link.
    ASSERT_TRUE(std::filesystem::create_directories(d->path() + "/a/b/c"));
    ASSERT_EQ(symlink(outside.c_str(), (d->path() + "/a/b/c/out").c_str()), 0);
    EXPECT_TRUE(d->remove_beneath("a").ok());
    EXPECT_FALSE(std::filesystem::exists(d->path() + "/a"));
    EXPECT_TRUE(std::filesystem::exists(outside + "/file"));
    EXPECT_TRUE(d->remove_beneath("never/was").ok()) << "absent is fine";
}

TEST_F(SafeFs, LexicallyInside) {
    std::string rel;
    EXPECT_TRUE(safe_fs::lexically_inside("/s/user/x/y", "/s/user", &rel));
    EXPECT_EQ(rel, "x/y");
    EXPECT_TRUE(safe_fs::lexically_inside("/s/user/./x//", "/s/user/", &rel));
    EXPECT_EQ(rel, "x/");
    EXPECT_TRUE(safe_fs::lexically_inside("/s/user", "/s/user", &rel));
    EXPECT_EQ(rel, "");
    EXPECT_FALSE(safe_fs::lexically_inside("/s/user/../etc", "/s/user", &rel));
    EXPECT_FALSE(safe_fs::lexically_inside("/s/user/x/../../etc", "/s/user", &rel));
    EXPECT_FALSE(safe_fs::lexically_inside("/s/username", "/s/user", &rel));
    EXPECT_FALSE(safe_fs::lexically_inside("relative", "/s/user", &rel));
}

TEST_F(SafeFs, DeepTreesEnd) {
    auto d = base.make_subdir("deep", 0700);
    ASSERT_TRUE(d.ok());
    std::string p = d->path();
    for (int i = 0; i < 300; ++i) {
        p += "/d";
        ASSERT_EQ(mkdir(p.c_str(), 0700), 0);
    }
    ASSERT_EQ(symlink(victim.c_str(), (p + "/link").c_str()), 0);
    Status st = base.remove("deep");
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_FALSE(std::filesystem::exists(top + "/deep")) << "a deep tree is removed all the same";
    EXPECT_EQ(read(victim), "precious");
}

TEST_F(SafeFs, RemovalKeepsWhatOtherUsersOwn) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (entries of two other users)";
    const uid_t job = 65534, other = 1;
    // The step root (root's) with the user's directory; the job moved in a directory of its own
    // that holds another user's private subtree and a file of that user.
    auto root = base.make_subdir("steproot", 0711);
    ASSERT_TRUE(root.ok());
    auto user = root->make_subdir("user", 0700);
    ASSERT_TRUE(user.ok());
    ASSERT_TRUE(user->chown_self(job, job, 0700).ok());
    const std::string moved = user->path() + "/moved";
    ASSERT_TRUE(std::filesystem::create_directories(moved + "/theirs/deeper"));
    std::ofstream(moved + "/mine") << "x";
    std::ofstream(moved + "/theirs/deeper/secret") << "precious";
    std::ofstream(moved + "/their-file") << "precious";
    for (const char *p : {"", "/mine"}) ASSERT_EQ(lchown((moved + p).c_str(), job, job), 0);
    for (const char *p : {"/theirs", "/theirs/deeper", "/theirs/deeper/secret", "/their-file"})
        ASSERT_EQ(lchown((moved + p).c_str(), other, other), 0);
    ASSERT_EQ(chmod((moved + "/theirs").c_str(), 0700), 0);
    std::ofstream(user->path() + "/plain") << "x";
    ASSERT_EQ(lchown((user->path() + "/plain").c_str(), job, job), 0);

    // A clean-up registration of the other user's directory: kept.
    Status st = user->remove_beneath("moved/theirs", job);
    EXPECT_EQ(st.code(), PMIX_ERR_NO_PERMISSIONS) << st.message();
    EXPECT_EQ(read(moved + "/theirs/deeper/secret"), "precious");
    // The end of the step: the user's entries go, the other user's stay, and so do the
    // directories that hold them.
    st = base.remove("steproot", job);
    EXPECT_EQ(st.code(), PMIX_ERR_NO_PERMISSIONS) << st.message();
    EXPECT_NE(st.message().find("kept 2 entries"), std::string::npos) << st.message();
    EXPECT_EQ(read(moved + "/theirs/deeper/secret"), "precious");
    EXPECT_EQ(read(moved + "/their-file"), "precious");
    EXPECT_FALSE(std::filesystem::exists(moved + "/mine"));
    EXPECT_FALSE(std::filesystem::exists(user->path() + "/plain"));
    // Without an owner (the administrator's own trees): everything.
    EXPECT_TRUE(base.remove("steproot").ok());
    EXPECT_FALSE(std::filesystem::exists(top + "/steproot"));
}

}  // namespace
