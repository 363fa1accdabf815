#include "tool/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tinyattn_tool {
namespace {

// "dir/name" -> {"dir", "name"}, "name" -> {".", "name"}, "/name" -> {"/", "name"};
// a path ending in '/' has an empty name.
struct Split {
  std::string dir, name;
};

Split split_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// realpath(3) as a string; empty when the path does not resolve.
std::string real_path(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (!real) return {};
  std::string out = real;
  std::free(real);
  return out;
}

// What a path names on disk, as far as it resolves.
struct Identity {
  std::string canonical;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

bool same_file(const Identity& a, const Identity& b) {
  return a.canonical == b.canonical || (a.exists && b.exists && a.dev == b.dev && a.ino == b.ino);
}

std::string quoted(const NamedPath& p) { return p.flag + " '" + p.path + "'"; }

bool resolve_output(const NamedPath& out, Identity* id, std::string* error) {
  const Split s = split_path(out.path);
  if (s.name.empty() || s.name == "." || s.name == "..") {
    *error = quoted(out) + " names a folder, not a file";
    return false;
  }
  struct stat dir_stat;
  if (stat(s.dir.c_str(), &dir_stat) != 0) {
    *error = quoted(out) + ": its folder '" + s.dir + "' " +
             (errno == ENOENT ? std::string("does not exist") : std::string("cannot be read: ") + std::strerror(errno));
    return false;
  }
  if (!S_ISDIR(dir_stat.st_mode)) {
    *error = quoted(out) + ": '" + s.dir + "' is not a folder";
    return false;
  }
  const std::string dir = real_path(s.dir);
  if (dir.empty()) {
    *error = quoted(out) + ": its folder '" + s.dir + "' does not resolve: " + std::strerror(errno);
    return false;
  }
  id->canonical = join(dir, s.name);
  struct stat link_stat;
  if (lstat(out.path.c_str(), &link_stat) != 0) {
    if (errno != ENOENT) {
      *error = quoted(out) + ": " + std::strerror(errno);
      return false;
    }
    link_stat.st_mode = 0;
  }
  std::string write_dir = s.dir;  // where the temporary goes
  if (link_stat.st_mode != 0) {
    struct stat st;
    if (stat(out.path.c_str(), &st) != 0) {
      *error = quoted(out) + " is a broken symbolic link";
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      *error = quoted(out) + " is a folder, not a file";
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      *error = quoted(out) + " is not a regular file (a device, pipe or socket cannot be replaced)";
      return false;
    }
    id->exists = true;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    if (S_ISLNK(link_stat.st_mode)) {
      id->canonical = real_path(out.path);
      write_dir = split_path(id->canonical).dir;
    }
  }
  if (access(write_dir.c_str(), W_OK) != 0) {
    *error = quoted(out) + ": the folder '" + write_dir + "' is not writable: " + std::strerror(errno);
    return false;
  }
  return true;
}

Identity resolve_input(const std::string& path) {
  Identity id;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.canonical = real_path(path);
  }
  if (id.canonical.empty()) {
    const Split s = split_path(path);
    const std::string dir = real_path(s.dir);
    id.canonical = dir.empty() ? path : join(dir, s.name);
  }
  return id;
}

mode_t current_umask() {
  const mode_t mask = umask(0);
  umask(mask);
  return mask;
}

bool write_fd(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

bool check_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs, std::string* error) {
  std::vector<Identity> out_ids(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!resolve_output(outputs[i], &out_ids[i], error)) return false;
    for (size_t j = 0; j < i; ++j)
      if (same_file(out_ids[i], out_ids[j])) {
        *error = quoted(outputs[j]) + " and " + quoted(outputs[i]) + " name the same file";
        return false;
      }
  }
  for (const NamedPath& in : inputs) {
    const Identity in_id = resolve_input(in.path);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (same_file(out_ids[i], in_id)) {
        *error = quoted(outputs[i]) + " would overwrite the input " + quoted(in);
        return false;
      }
  }
  return true;
}

bool write_all_or_none(const std::vector<OutputFile>& files, std::string* error) {
  struct Pending {
    std::string temp, dest;
  };
  std::vector<Pending> pending;
  const auto discard = [&](size_t from) {
    for (size_t i = from; i < pending.size(); ++i) unlink(pending[i].temp.c_str());
  };
  const mode_t umask_bits = current_umask();
  for (const OutputFile& f : files) {
    std::string dest = f.path;
    struct stat st;
    if (lstat(dest.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) dest = real_path(f.path);
    const bool exists = !dest.empty() && stat(dest.c_str(), &st) == 0;
    if (dest.empty() || (exists && !S_ISREG(st.st_mode))) {
      *error = f.path + ": not a regular file any more";
      discard(0);
      return false;
    }
    const std::string dir = split_path(dest).dir;
    std::string name = join(dir, ".tinyattn-XXXXXX");
    const int fd = mkstemp(&name[0]);
    if (fd < 0) {
      *error = f.path + ": cannot create a temporary file in '" + dir + "': " + std::strerror(errno);
      discard(0);
      return false;
    }
    pending.push_back({name, dest});
    const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~umask_bits);
    const bool written = write_fd(fd, f.bytes) && fchmod(fd, mode) == 0;
    const int write_errno = errno;
    if (close(fd) != 0 || !written) {
      *error = f.path + ": write failed: " + std::strerror(written ? errno : write_errno);
      discard(0);
      return false;
    }
  }
  for (size_t i = 0; i < pending.size(); ++i)
    if (rename(pending[i].temp.c_str(), pending[i].dest.c_str()) != 0) {
      *error = files[i].path + ": cannot move the written file into place: " + std::strerror(errno);
      discard(i);
      return false;
    }
  return true;
}

}  // namespace tinyattn_tool
