#include "safe_fs.h"
#include "sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

namespace pmixcpp::safe_fs {

namespace {

constexpr int kMaxDepth = 64;     // descriptors held at once while removing a tree
constexpr int kMaxPasses = 4096;  // listings of one directory while removing it


std::string join(const std::string &dir, const std::string &name) { return dir + "/" + name; }

// A single path component: not empty, not "." or "..", no slash.
bool plain_name(const std::string &name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

Result<std::string> random_suffix(size_t n) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char raw[32];
    if (n > sizeof(raw)) n = sizeof(raw);
    PMIXCPP_RETURN_IF_ERROR(random_bytes(raw, n));
    std::string out;
    for (size_t i = 0; i < n; ++i) out.push_back(alphabet[raw[i] % (sizeof(alphabet) - 1)]);
    return out;
}

// Write all of `bytes` to `fd` (retrying short writes and EINTR); `what` names it in the error.
Status write_all(int fd, std::span<const uint8_t> bytes, const std::string &what) {
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return sys_error("write " + what, n < 0 ? errno : EIO);
        off += static_cast<size_t>(n);
    }
    return Status::success();
}

// openat2 beneath `dirfd`, never through a link; falls back to a component walk where the kernel
// has no openat2 (before 5.6).
int open_beneath(int dirfd, const std::string &rel, int flags) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof(how));
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    // Component by component: every intermediate one a directory opened with O_NOFOLLOW.
    std::filesystem::path p(rel);
    int cur = dup(dirfd);
    if (cur < 0) return -1;
    auto it = p.begin();
    while (it != p.end()) {
        std::string comp = it->native();
        ++it;
        if (!plain_name(comp)) {
            close(cur);
            errno = EXDEV;
            return -1;
        }
        int next = openat(cur, comp.c_str(), (it == p.end() ? flags : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        close(cur);
        if (next < 0) {
            errno = err;
            return -1;
        }
        cur = next;
    }
    return cur;
}

}  // namespace

unique_fd &unique_fd::operator=(unique_fd &&o) noexcept {
    if (this != &o) {
        reset();
        _fd = o._fd;
        o._fd = -1;
    }
    return *this;
}

void unique_fd::reset(int fd) {
    if (_fd >= 0) ::close(_fd);
    _fd = fd;
}

Result<dir> dir::verify(unique_fd fd, std::string path, uid_t owner, bool allow_sticky_shared) {
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return sys_error("stat " + path);
    if (!S_ISDIR(st.st_mode)) return Status(PMIX_ERR_BAD_PARAM, path + " is not a directory");
    if (owner != static_cast<uid_t>(-1) && st.st_uid != owner)
        return Status(PMIX_ERR_NO_PERMISSIONS, path + " is owned by uid " + std::to_string(st.st_uid) + ", not " +
                                                   std::to_string(owner));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(allow_sticky_shared && (st.st_mode & S_ISVTX))) {
        char mode[8];
        snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return Status(PMIX_ERR_NO_PERMISSIONS, path + " is writable by other users (mode " + mode + ")");
    }
    return dir(std::move(fd), std::move(path));
}

Result<dir> dir::open_trusted(const std::string &path) {
    if (path.empty() || path[0] != '/')
        return Status(PMIX_ERR_BAD_PARAM, "'" + path + "' is not an absolute path");
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return sys_error(path);
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return sys_error("stat " + path);
    // Root's or our own; a directory of another user could be changed under us.
    uid_t owner = st.st_uid == 0 ? 0 : geteuid();
    return verify(std::move(fd), path, owner, /*allow_sticky_shared=*/true);
}

Result<dir> dir::make_unique_subdir(const std::string &prefix, mode_t mode) const {
    for (int attempt = 0; attempt < 16; ++attempt) {
        PMIXCPP_ASSIGN_OR_RETURN(auto suffix, random_suffix(6));
        auto d = make_subdir(prefix + suffix, mode);
        if (d.ok() || d.status().code() != PMIX_ERR_EXISTS) return d;
    }
    return Status(PMIX_ERR_EXISTS, "no free directory name " + join(_path, prefix) + "XXXXXX");
}

Result<dir> dir::make_subdir(const std::string &name, mode_t mode) const {
    if (!plain_name(name)) return Status(PMIX_ERR_BAD_PARAM, "bad directory name '" + name + "'");
    if (mkdirat(fd(), name.c_str(), 0700) != 0) {
        int err = errno;
        Status s = sys_error("mkdir " + join(_path, name), err);
        return err == EEXIST ? Status(PMIX_ERR_EXISTS, s.message()) : s;
    }
    auto d = open_subdir(name, geteuid());
    PMIXCPP_RETURN_IF_ERROR(d);
    if (fchmod(d->fd(), mode) != 0) {
        Status s = sys_error("chmod " + d->path());
        (void)remove(name);  // best effort: the chmod failure is what the caller must hear
        return s;
    }
    return d;
}

Result<dir> dir::open_subdir(const std::string &name, uid_t owner) const {
    if (!plain_name(name)) return Status(PMIX_ERR_BAD_PARAM, "bad directory name '" + name + "'");
    unique_fd sub(openat(fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub.get() < 0) return sys_error("open " + join(_path, name));
    return verify(std::move(sub), join(_path, name), owner, /*allow_sticky_shared=*/false);
}

Result<unique_fd> dir::create_file(const std::string &name, mode_t mode) const {
    if (!plain_name(name)) return Status(PMIX_ERR_BAD_PARAM, "bad file name '" + name + "'");
    unique_fd f(openat(fd(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (f.get() < 0) return sys_error("create " + join(_path, name));
    return f;
}

Status dir::write_new_file(const std::string &name, std::span<const uint8_t> bytes, mode_t mode, uid_t uid,
                           gid_t gid) const {
    auto f = create_file(name, 0600);
    PMIXCPP_RETURN_IF_ERROR(f);
    Status s = write_all(f->get(), bytes, join(_path, name));
    if (s.ok() && fchown(f->get(), uid, gid) != 0) s = sys_error("chown " + join(_path, name));
    if (s.ok() && fchmod(f->get(), mode) != 0) s = sys_error("chmod " + join(_path, name));
    if (s.ok() && ::close(f->release()) != 0) s = sys_error("close " + join(_path, name));
    if (!s.ok()) unlinkat(fd(), name.c_str(), 0);
    return s;
}

Status dir::replace_file(const std::string &name, std::span<const uint8_t> bytes, mode_t mode, uid_t uid,
                         gid_t gid) const {
    if (!plain_name(name)) return Status(PMIX_ERR_BAD_PARAM, "bad file name '" + name + "'");
    PMIXCPP_ASSIGN_OR_RETURN(auto suffix, random_suffix(8));
    const std::string tmp = "." + name + "." + suffix;
    PMIXCPP_RETURN_IF_ERROR(write_new_file(tmp, bytes, mode, uid, gid));
    if (renameat(fd(), tmp.c_str(), fd(), name.c_str()) != 0) {
        Status s = sys_error("rename " + join(_path, tmp) + " to " + name);
        unlinkat(fd(), tmp.c_str(), 0);
        return s;
    }
    return Status::success();
}

Status dir::chown_entry(const std::string &name, uid_t uid, gid_t gid) const {
    if (!plain_name(name)) return Status(PMIX_ERR_BAD_PARAM, "bad name '" + name + "'");
    if (fchownat(fd(), name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) return sys_error("chown " + join(_path, name));
    return Status::success();
}

Status dir::chown_self(uid_t uid, gid_t gid, mode_t mode) const {
    if (fchown(fd(), uid, gid) != 0) return sys_error("chown " + _path);
    if (fchmod(fd(), mode) != 0) return sys_error("chmod " + _path);
    return Status::success();
}

Status dir::remove(const std::string &name, uid_t owner) const {
    if (!plain_name(name)) return Status(PMIX_ERR_BAD_PARAM, "bad name '" + name + "'");
    struct stat st {};
    if (fstat(fd(), &st) != 0) return sys_error("stat " + _path);
    return remove_tree_at(fd(), name, st.st_dev, owner);
}

Status dir::remove_beneath(const std::string &relpath, uid_t owner) const {
    std::filesystem::path p = std::filesystem::path(relpath).lexically_normal();
    if (p.empty() || p.is_absolute() || relpath.find("..") != std::string::npos)
        return Status(PMIX_ERR_BAD_PARAM, "'" + relpath + "' is not a plain path below " + _path);
    std::string leaf = p.filename().native();
    if (leaf.empty()) {  // "a/b/" -> "b"
        p = p.parent_path();
        leaf = p.filename().native();
    }
    if (!plain_name(leaf)) return Status(PMIX_ERR_BAD_PARAM, "'" + relpath + "' names no entry");
    std::string parent = p.parent_path().native();
    unique_fd pfd(parent.empty() ? dup(fd()) : open_beneath(fd(), parent, O_RDONLY | O_DIRECTORY));
    if (pfd.get() < 0) {
        if (errno == ENOENT) return Status::success();
        return sys_error("resolve " + join(_path, parent) + " (links and '..' are not followed)");
    }
    struct stat st {};
    if (fstat(fd(), &st) != 0) return sys_error("stat " + _path);
    return remove_tree_at(pfd.get(), leaf, st.st_dev, owner, /*top_may_be_callers=*/false);
}

namespace {

struct removal {
    dev_t dev;
    uid_t owner;              // kAnyOwner: every entry
    bool top_may_be_callers;  // the tree's top entry may be the caller's (root's step root)
    std::set<std::pair<dev_t, ino_t>> kept;  // entries of other owners, left where they are
};

// Whether the entry with `st` may be removed (or descended into): the owner's, or the caller's
// own top. Counts what is kept.
bool removable(removal &r, const struct stat &st, int depth) {
    if (r.owner == kAnyOwner || st.st_uid == r.owner) return true;
    if (depth == 0 && r.top_may_be_callers && st.st_uid == geteuid()) return true;
    r.kept.emplace(st.st_dev, st.st_ino);  // (seen again on each pass of its directory)
    return false;
}

// remove_tree_at, with the descriptor of the tree's top once below it (-1 at the top itself).
// `*stays`: the entry is still there afterwards because it is, or holds, what is kept.
Status remove_tree_below(int parent_fd, const std::string &name, removal &r, int depth, int top_fd, bool *stays) {
    *stays = false;
    if (r.owner != kAnyOwner) {
        // Another user's entry (in a directory the job moved in, say) is never removed, and a
        // directory of another user never entered: its owner decides what happens to it.
        struct stat st {};
        if (fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return errno == ENOENT ? Status::success() : sys_error("stat " + name);
        if (!removable(r, st, depth)) {
            *stays = true;
            return Status::success();
        }
    }
    if (unlinkat(parent_fd, name.c_str(), 0) == 0 || errno == ENOENT) return Status::success();
    if (errno != EISDIR && errno != EPERM) return sys_error("unlink " + name);
    if (depth >= kMaxDepth && top_fd >= 0) {
        // Too deep to hold a descriptor per level: move the subtree up to the top of the tree
        // being removed, whose listing is read again until it is empty.
        static std::atomic<uint64_t> moved{0};
        const std::string up = ".pmixcpp-deep." + std::to_string(moved++);
        if (renameat(parent_fd, name.c_str(), top_fd, up.c_str()) != 0) return sys_error("move up " + name);
        return Status::success();
    }
    int sub = openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
        if (errno == ENOENT) return Status::success();
        return sys_error("open " + name);
    }
    struct stat st {};
    if (fstat(sub, &st) != 0 || st.st_dev != r.dev) {
        ::close(sub);
        return Status(PMIX_ERR_BAD_PARAM, name + " is on another file system: not removed");
    }
    // Checked again on the descriptor: a directory swapped in since the check above is the one
    // opened, and it is entered only if it is the owner's.
    if (!removable(r, st, depth)) {
        ::close(sub);
        *stays = true;
        return Status::success();
    }
    DIR *d = fdopendir(sub);  // owns `sub` from here
    if (!d) {
        Status s = sys_error("opendir " + name);
        ::close(sub);
        return s;
    }
    const int top = top_fd >= 0 ? top_fd : dirfd(d);
    Status first = Status::success();
    // Read the listing again until it is empty, or holds only what stays: entries removed while
    // reading, and subtrees moved up to the top, are seen on the next pass.
    size_t left = 0;
    for (int pass = 0; pass < kMaxPasses; ++pass) {
        std::vector<std::string> names;
        rewinddir(d);
        while (dirent *e = readdir(d)) {
            std::string n = e->d_name;
            if (n != "." && n != "..") names.push_back(std::move(n));
        }
        left = 0;
        if (names.empty()) break;
        for (const auto &n : names) {
            bool kept = false;
            Status s = remove_tree_below(dirfd(d), n, r, depth + 1, top, &kept);
            if (!s.ok() && first.ok()) first = s.with_context(name);
            if (kept) ++left;
        }
        if (!first.ok() || left == names.size()) break;
    }
    closedir(d);
    if (unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        if (errno == ENOTEMPTY && left > 0) *stays = true;
        else if (first.ok()) first = sys_error("rmdir " + name);
    }
    return first;
}

}  // namespace

Status remove_tree_at(int parent_fd, const std::string &name, dev_t dev, uid_t owner, bool top_may_be_callers) {
    removal r{dev, owner, top_may_be_callers, {}};
    bool stays = false;
    Status st = remove_tree_below(parent_fd, name, r, 0, -1, &stays);
    if (st.ok() && !r.kept.empty())
        return Status(PMIX_ERR_NO_PERMISSIONS, "kept " + std::to_string(r.kept.size()) + " entr" +
                                                   (r.kept.size() == 1 ? "y" : "ies") + " of " + name +
                                                   " not owned by uid " + std::to_string(owner));
    return st;
}

bool lexically_inside(const std::string &path, const std::string &top, std::string *rel) {
    namespace fs = std::filesystem;
    fs::path p(path), t(top);
    if (!p.is_absolute() || !t.is_absolute()) return false;
    for (const auto &c : p)
        if (c == "..") return false;
    p = p.lexically_normal();
    t = t.lexically_normal();
    fs::path r = p.lexically_relative(t);
    if (r.empty()) return false;
    if (r.native() == ".") {
        if (rel) rel->clear();
        return true;
    }
    if (*r.begin() == "..") return false;
    if (rel) *rel = r.native();
    return true;
}

}  // namespace pmixcpp::safe_fs
