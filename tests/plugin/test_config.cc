#include "shared/plugin_config.h"

#include <gtest/gtest.h>

using namespace pmixcpp;

TEST(PluginConfig, DefaultsArePrintable) {
    plugin_config c;
    auto p = c.printable();
    ASSERT_EQ(p.size(), config_keys().size());
    EXPECT_EQ(p[0].first, "PMIxCppDebug");
    for (const auto &[k, v] : p) {
        EXPECT_EQ(k.rfind("PMIxCpp", 0), 0u) << k;
        EXPECT_FALSE(v.empty()) << k;
    }
    EXPECT_TRUE(c.non_default().empty());
}

TEST(PluginConfig, SetsValidValuesCaseInsensitively) {
    plugin_config c;
    ASSERT_TRUE(c.set("PMIxCppTimeout", "42").ok());
    ASSERT_TRUE(c.set("pmixcppfence", "Ring").ok());
    ASSERT_TRUE(c.set("PMIxCppEagerConnect", "yes").ok());
    ASSERT_TRUE(c.set("PMIxCppTmpDirBase", "/var/tmp").ok());
    EXPECT_EQ(c.timeout_sec, 42u);
    EXPECT_EQ(c.fence, fence_algo::ring);
    EXPECT_TRUE(c.eager_connect);
    EXPECT_EQ(c.tmpdir_base, "/var/tmp");
    auto nd = c.non_default();
    ASSERT_EQ(nd.size(), 4u);
    EXPECT_EQ(nd[0], (std::pair<std::string, std::string>("PMIxCppTimeout", "42")));
}

TEST(PluginConfig, BadValuesNameTheKeyAndChangeNothing) {
    plugin_config c;
    Status s = c.set("PMIxCppTimeout", "soon");
    EXPECT_EQ(s.code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(s.message(), "mpi.conf: PMIxCppTimeout=soon is invalid: expected an integer from 1 to 86400");
    EXPECT_EQ(c.timeout_sec, 300u);
    EXPECT_FALSE(c.set("PMIxCppTimeout", "0").ok());
    EXPECT_FALSE(c.set("PMIxCppTimeout", "100000").ok());
    EXPECT_FALSE(c.set("PMIxCppTimeout", "12x").ok());
    EXPECT_FALSE(c.set("PMIxCppTimeout", "").ok());
    EXPECT_FALSE(c.set("PMIxCppTransport", "carrier-pigeon").ok());
    EXPECT_FALSE(c.set("PMIxCppWireup", "table").ok());
    EXPECT_EQ(c.wireup, wireup_kind::automatic);
    EXPECT_FALSE(c.set("PMIxCppTmpDirBase", "relative/dir").ok());
    EXPECT_FALSE(c.set("PMIxCppUcxTls", "tcp self").ok());
    EXPECT_FALSE(c.set("PMIxCppEagerConnect", "maybe").ok());
    EXPECT_EQ(c.set("PMIxCppNoSuchKey", "1").code(), PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(c.non_default().empty());
}

TEST(PluginConfig, EnvOverrides) {
    EXPECT_EQ(env_override_name("PMIxCppTmpDirBase"), "SLURM_PMIXCPP_TMPDIRBASE");
    plugin_config c;
    ASSERT_TRUE(c.apply_env_overrides({"PATH=/bin", "SLURM_PMIXCPP_TIMEOUT=7", "SLURM_PMIXCPP_FENCE=tree"}).ok());
    EXPECT_EQ(c.timeout_sec, 7u);
    EXPECT_EQ(c.fence, fence_algo::tree);

    plugin_config d;
    Status s = d.apply_env_overrides({"SLURM_PMIXCPP_FENCE=ring", "SLURM_PMIXCPP_TIMEOUT=abc"});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("SLURM_PMIXCPP_TIMEOUT"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("PMIxCppTimeout=abc is invalid"), std::string::npos) << s.message();
    EXPECT_EQ(d.fence, fence_algo::automatic) << "a failed override leaves the config unchanged";
}

TEST(PluginConfig, AdminOnlyKeysRefuseUserOverrides) {
    EXPECT_TRUE(admin_only_key("PMIxCppTmpDirBase"));
    EXPECT_FALSE(admin_only_key("PMIxCppTimeout"));
    plugin_config c;
    ASSERT_TRUE(c.set("PMIxCppTmpDirBase", "/var/spool/pmixcpp").ok()) << "mpi.conf may set it";
    Status s = c.apply_env_overrides({"SLURM_PMIXCPP_TIMEOUT=9", "SLURM_PMIXCPP_TMPDIRBASE=/home/user/evil"});
    EXPECT_EQ(s.code(), PMIX_ERR_NO_PERMISSIONS);
    EXPECT_NE(s.message().find("SLURM_PMIXCPP_TMPDIRBASE refused: PMIxCppTmpDirBase"), std::string::npos) << s.message();
    EXPECT_EQ(c.tmpdir_base, "/var/spool/pmixcpp");
    EXPECT_EQ(c.timeout_sec, 300u) << "nothing applied when one override is refused";
}

TEST(PluginConfig, RootTransportKeysAreAdminOnly) {
    EXPECT_TRUE(admin_only_key("PMIxCppUcxTls"));
    EXPECT_TRUE(admin_only_key("PMIxCppUcxDevices"));
    plugin_config c;
    ASSERT_TRUE(c.set("PMIxCppUcxTls", "tcp").ok()) << "mpi.conf may set it";
    for (const char *var : {"SLURM_PMIXCPP_UCXTLS=posix,sysv,tcp", "SLURM_PMIXCPP_UCXDEVICES=lo"}) {
        Status s = c.apply_env_overrides({var});
        EXPECT_EQ(s.code(), PMIX_ERR_NO_PERMISSIONS) << var;
        EXPECT_NE(s.message().find("root's UCX transport"), std::string::npos) << s.message();
    }
    EXPECT_EQ(c.ucx_tls, "tcp");
    EXPECT_EQ(c.ucx_devices, "");
}

TEST(PluginConfig, SignalEventsList) {
    plugin_config c;
    EXPECT_EQ(c.signal_events, "USR1,USR2");
    ASSERT_TRUE(c.set("PMIxCppSignalEvents", "sigterm,USR1,usr1").ok());
    EXPECT_EQ(c.signal_events, "TERM,USR1");  // canonical, duplicates dropped
    ASSERT_TRUE(c.set("PMIxCppSignalEvents", "none").ok());
    EXPECT_EQ(c.signal_events, "none");
    ASSERT_TRUE(c.set("PMIxCppSignalEvents", "").ok());
    EXPECT_EQ(c.signal_events, "none");
    EXPECT_FALSE(c.set("PMIxCppSignalEvents", "USR1,KILL").ok());  // cannot be caught anyway
    EXPECT_FALSE(c.set("PMIxCppSignalEvents", "USR1,,TERM").ok());
    EXPECT_FALSE(c.set("PMIxCppSignalEvents", "10").ok());
    EXPECT_EQ(c.signal_events, "none");
    ASSERT_TRUE(c.apply_env_overrides({"SLURM_PMIXCPP_SIGNALEVENTS=USR2"}).ok());
    EXPECT_EQ(c.signal_events, "USR2");
}

TEST(PluginConfig, ProcTermEvents) {
    plugin_config c;
    EXPECT_FALSE(c.proc_term_all);  // abnormal exits only, unless asked
    ASSERT_TRUE(c.set("PMIxCppProcTermEvents", "ALL").ok());
    EXPECT_TRUE(c.proc_term_all);
    EXPECT_FALSE(c.set("PMIxCppProcTermEvents", "some").ok());
    EXPECT_TRUE(c.proc_term_all);
    ASSERT_TRUE(c.apply_env_overrides({"SLURM_PMIXCPP_PROCTERMEVENTS=abnormal"}).ok());
    EXPECT_FALSE(c.proc_term_all);
}

TEST(PluginConfig, AllocTimeout) {
    plugin_config c;
    EXPECT_EQ(c.alloc_timeout, 120u) << "an allocation request without PMIX_TIMEOUT never waits for ever by default";
    ASSERT_TRUE(c.set("PMIxCppAllocTimeout", "0").ok());  // 0: as long as Slurm keeps it pending
    EXPECT_EQ(c.alloc_timeout, 0u);
    EXPECT_FALSE(c.set("PMIxCppAllocTimeout", "-1").ok());
    EXPECT_FALSE(c.set("PMIxCppAllocTimeout", "604801").ok());  // at most a week
    EXPECT_FALSE(c.set("PMIxCppAllocTimeout", "2m").ok());
    EXPECT_EQ(c.alloc_timeout, 0u);
    EXPECT_FALSE(admin_only_key("PMIxCppAllocTimeout")) << "the user may give PMIX_TIMEOUT anyway";
    ASSERT_TRUE(c.apply_env_overrides({"SLURM_PMIXCPP_ALLOCTIMEOUT=30"}).ok());
    EXPECT_EQ(c.alloc_timeout, 30u);
}

TEST(PluginConfig, ClientLibModesAndTheOldBoolean) {
    plugin_config c;
    EXPECT_EQ(c.client_lib, client_lib_mode::both) << "default: both kinds of clients";
    for (auto [v, m] : std::vector<std::pair<const char *, client_lib_mode>>{{"ours", client_lib_mode::ours},
                                                                              {"NATIVE", client_lib_mode::native},
                                                                              {"both", client_lib_mode::both},
                                                                              {"no", client_lib_mode::native},
                                                                              {"yes", client_lib_mode::both}}) {
        ASSERT_TRUE(c.set("PMIxCppClientLib", v).ok()) << v;
        EXPECT_EQ(c.client_lib, m) << v;
    }
    Status s = c.set("PMIxCppClientLib", "mine");
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("ours, native or both"), std::string::npos) << s.message();
}

TEST(PluginConfig, ClientLibOverrideOnlyNarrows) {
    plugin_config c;  // both
    ASSERT_TRUE(c.apply_env_overrides({"SLURM_PMIXCPP_CLIENTLIB=native"}).ok());
    EXPECT_EQ(c.client_lib, client_lib_mode::native);
    plugin_config o;
    ASSERT_TRUE(o.set("PMIxCppClientLib", "ours").ok());
    for (const char *var : {"SLURM_PMIXCPP_CLIENTLIB=native", "SLURM_PMIXCPP_CLIENTLIB=both"}) {
        Status s = o.apply_env_overrides({var});
        EXPECT_EQ(s.code(), PMIX_ERR_NO_PERMISSIONS) << var;
        EXPECT_NE(s.message().find("narrow but not widen"), std::string::npos) << s.message();
        EXPECT_EQ(o.client_lib, client_lib_mode::ours);
    }
    EXPECT_TRUE(o.apply_env_overrides({"SLURM_PMIXCPP_CLIENTLIB=ours"}).ok());
}

TEST(Config, Wireup) {
    plugin_config c;
    EXPECT_EQ(c.wireup, wireup_kind::automatic);
    EXPECT_EQ(c.directory_nodes, 64u);
    ASSERT_TRUE(c.set("PMIxCppWireup", "Directory").ok());
    EXPECT_EQ(c.wireup, wireup_kind::directory);
    ASSERT_TRUE(c.set("PMIxCppWireup", "auto").ok());
    EXPECT_EQ(c.wireup, wireup_kind::automatic);
    ASSERT_TRUE(c.apply_env_overrides({"SLURM_PMIXCPP_WIREUP=directory"}).ok());
    EXPECT_EQ(c.wireup, wireup_kind::directory);
    EXPECT_FALSE(c.apply_env_overrides({"SLURM_PMIXCPP_WIREUP=nowhere"}).ok());
    EXPECT_EQ(c.wireup, wireup_kind::directory);
}

TEST(Config, DirectoryRouteBySize) {
    plugin_config c;  // auto: the rendezvous below PMIxCppDirectoryNodes, the directory route from it on
    EXPECT_FALSE(wants_directory_route(c, 2));
    EXPECT_FALSE(wants_directory_route(c, 63));
    EXPECT_TRUE(wants_directory_route(c, 64));
    EXPECT_TRUE(wants_directory_route(c, 16384));
    ASSERT_TRUE(c.apply_env_overrides({"SLURM_PMIXCPP_DIRECTORYNODES=4"}).ok());
    EXPECT_FALSE(wants_directory_route(c, 3));
    EXPECT_TRUE(wants_directory_route(c, 4));
    ASSERT_TRUE(c.set("PMIxCppWireup", "srun").ok());
    EXPECT_FALSE(wants_directory_route(c, 16384));
    ASSERT_TRUE(c.set("PMIxCppWireup", "directory").ok());
    EXPECT_TRUE(wants_directory_route(c, 2));
    EXPECT_FALSE(c.set("PMIxCppDirectoryNodes", "1").ok());
    EXPECT_FALSE(c.set("PMIxCppDirectoryNodes", "many").ok());
    EXPECT_EQ(c.directory_nodes, 4u);
}
