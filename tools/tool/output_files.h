// The host tool's files on disk: every output path checked before anything is
// read or written, and the outputs written all or none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinyattn_tool {

// A path as the command line gave it, with the option that named it.
struct NamedPath {
  std::string flag;  // "--out", "--q", ...
  std::string path;
};

// Checks the outputs before anything is read or written: each one's folder
// exists, is a folder and is writable; the destination is absent or a
// regular file (not a folder, a device, a pipe or a broken link); no two
// outputs and no output and input name one file. "Same file" compares the
// canonical path (the folder's realpath joined with the last component, so
// a.npy, ./a.npy and dir/../a.npy meet) and, for files that exist, their
// device and inode (hard and symbolic links). Inputs are compared as far as
// they resolve; whether they can be read is the reader's business. On
// failure *error is one line naming the option(s).
bool check_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs, std::string* error);

struct OutputFile {
  std::string path;  // as given: a symbolic link to a regular file is written through
  std::vector<uint8_t> bytes;
};

// Writes every file or none: each to a temporary file in its destination's
// folder (mode as the destination's, or 0666 less the umask for a new file),
// then, once every one is written and closed, renames them into place. If a
// temporary cannot be created or written, every temporary is removed and no
// destination is touched. Each rename replaces one destination atomically;
// one fails only if a destination changed after check_paths (say, it became
// a folder), and then the files renamed before it stay.
bool write_all_or_none(const std::vector<OutputFile>& files, std::string* error);

}  // namespace tinyattn_tool
