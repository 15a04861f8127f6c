// File work that root (slurmstepd) does on behalf of a job, in directories a user may be able to
// write. Every operation is relative to a directory file descriptor that was verified when it was
// opened (a real directory, the expected owner, not writable by others unless sticky), uses
// O_NOFOLLOW|O_EXCL|O_CLOEXEC, changes ownership and mode on descriptors (fchown/fchmod), and never
// follows a symbolic link: a path a user can influence is resolved with
// openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), never with root's path walk.
//
// The step's layout built from these (plugin/common/step_env.h):
//   <base>/pmixcpp.<job>.<step>.<random>/      root-owned, 0711: nobody but root creates entries
//       server.sock, jobdata                     created by root, owned by the user, read by tasks
//       user/                                    the user's step directory (0700, owned by the user)
//           rank.<r>/ ...                        everything in here is the user's (made by the tasks)
// Removing the tree at the end walks descriptors (fdopendir + unlinkat), so a symlink or a
// renamed directory planted by the user is removed as a link, never followed.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::safe_fs {

// No owner check: every entry is removed.
inline constexpr uid_t kAnyOwner = static_cast<uid_t>(-1);

// An owned file descriptor.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : _fd(fd) {}
    ~unique_fd() { reset(); }
    unique_fd(unique_fd &&o) noexcept : _fd(o._fd) { o._fd = -1; }
    unique_fd &operator=(unique_fd &&o) noexcept;
    unique_fd(const unique_fd &) = delete;
    unique_fd &operator=(const unique_fd &) = delete;
    int get() const { return _fd; }
    int release() {
        int fd = _fd;
        _fd = -1;
        return fd;
    }
    void reset(int fd = -1);

private:
    int _fd = -1;
};

// An open, verified directory. Moves only.
class dir {
public:
    dir() = default;

    // An administrator's directory (e.g. the step directory base): opened following the
    // administrator's path, then checked: a directory, owned by root (or by the caller's euid),
    // and writable by group or others only if it has the sticky bit (as /tmp).
    static Result<dir> open_trusted(const std::string &path);

    // A new directory `<prefix><6 random characters>` in `parent`, created with mode 0700 by the
    // caller (never an existing one: the name is unpredictable and mkdirat fails on EEXIST), then
    // given `mode`. Returns it opened and verified.
    Result<dir> make_unique_subdir(const std::string &prefix, mode_t mode) const;

    // A new directory `name` in this one (EEXIST is an error), opened without following links.
    Result<dir> make_subdir(const std::string &name, mode_t mode) const;

    // An existing subdirectory, opened without following links and checked to be owned by `owner`
    // (or by anyone when owner is (uid_t)-1).
    Result<dir> open_subdir(const std::string &name, uid_t owner) const;

    // A new regular file `name` (O_CREAT|O_EXCL|O_NOFOLLOW), open for writing.
    Result<unique_fd> create_file(const std::string &name, mode_t mode) const;

    // Write `bytes` to a new file `name` (which must not exist), owned by uid:gid with `mode`
    // (set on the descriptor once written). On failure nothing is left behind.
    Status write_new_file(const std::string &name, std::span<const uint8_t> bytes, mode_t mode, uid_t uid,
                          gid_t gid) const;

    // Replace `name` atomically with a file of `bytes` (written under a fresh temporary name,
    // then renamed over `name`).
    Status replace_file(const std::string &name, std::span<const uint8_t> bytes, mode_t mode, uid_t uid,
                        gid_t gid) const;

    // Ownership of an entry of this directory, never through a link (AT_SYMLINK_NOFOLLOW).
    Status chown_entry(const std::string &name, uid_t uid, gid_t gid) const;
    // Ownership and mode of this directory itself (on its descriptor).
    Status chown_self(uid_t uid, gid_t gid, mode_t mode) const;

    // Remove the entry `name` (a file, a link, or a whole directory tree) without following any
    // link; stays on this directory's file system. ENOENT is success. With an `owner`, only that
    // uid's entries are removed (`name` itself may also be the caller's): another user's entry is
    // kept and another user's directory never entered, checked on the opened descriptor (a
    // directory the job moved into its step directory may hold other users' private subtrees);
    // what was kept makes the result PMIX_ERR_NO_PERMISSIONS "kept N entries ...".
    Status remove(const std::string &name, uid_t owner = kAnyOwner) const;

    // Resolve `relpath` (relative, no "..", no links in any component, not escaping this
    // directory: openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) and remove what it names, only
    // `owner`'s entries when one is given (as remove).
    Status remove_beneath(const std::string &relpath, uid_t owner = kAnyOwner) const;

    bool valid() const { return _fd.get() >= 0; }
    int fd() const { return _fd.get(); }
    const std::string &path() const { return _path; }

private:
    dir(unique_fd fd, std::string path) : _fd(std::move(fd)), _path(std::move(path)) {}
    static Result<dir> verify(unique_fd fd, std::string path, uid_t owner, bool allow_sticky_shared);

    unique_fd _fd;
    std::string _path;
};

// Remove a whole tree below the directory `parent_fd`, entry `name`, without following links and
// without leaving `dev` (the file system of the tree's top). At most 64 descriptors are held at
// once: deeper subtrees are moved up to the tree's top and removed from there. ENOENT is success.
// `owner` and `top_may_be_callers`: as dir::remove (the top entry may be the caller's own).
Status remove_tree_at(int parent_fd, const std::string &name, dev_t dev, uid_t owner = kAnyOwner,
                      bool top_may_be_callers = true);

// True if `path` is `top` or lies below it, comparing normalized paths; a path with a ".."
// component is never inside. `rel` receives the part below `top` ("" for `top` itself).
bool lexically_inside(const std::string &path, const std::string &top, std::string *rel);

}  // namespace pmixcpp::safe_fs
