#include "cli/output_folder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "saltation/errors.hpp"

namespace saltation::cli {

namespace fs = std::filesystem;

namespace {

// The pid a lock file names, or 0 when it names none (being written, or garbage).
long lock_holder(const std::string& lock) {
  std::ifstream in(lock);
  long pid = 0;
  return in >> pid && pid > 0 ? pid : 0;
}

bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

OutputFolder::OutputFolder(std::string dir) : dir_(std::move(dir)), lock_((fs::path(dir_) / kLockName).string()) {
  std::error_code error;
  if (fs::exists(dir_, error) && !fs::is_directory(dir_, error))
    throw IoError(dir_, "exists and is not a folder: choose another --out");
  for (fs::path p = fs::absolute(dir_, error); !p.empty() && !fs::exists(p, error); p = p.parent_path()) {
    created_.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir_, error);
  if (error || !fs::is_directory(dir_)) {
    remove_created_if_empty();
    throw IoError(dir_, "cannot create the output folder: " + (error ? error.message() : std::string("not a folder")));
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(lock_.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      const bool written = ::write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size());
      ::close(fd);
      if (written) return;
      ::unlink(lock_.c_str());
      break;
    }
    if (errno != EEXIST) break;
    const long holder = lock_holder(lock_);
    if (holder == 0 || process_alive(holder)) {
      remove_created_if_empty();
      throw IoError(dir_, "is in use by another saltation run (" +
                              (holder ? "pid " + std::to_string(holder) : std::string("pid not yet written")) +
                              ", lock file " + lock_ + "): wait for it to finish or choose another --out");
    }
    ::unlink(lock_.c_str());  // its process is gone: a stale lock
  }
  const int err = errno;
  remove_created_if_empty();
  throw IoError(lock_, std::string("cannot create the output folder's lock file: ") + std::strerror(err));
}

OutputFolder::~OutputFolder() {
  ::unlink(lock_.c_str());
  remove_created_if_empty();
}

void OutputFolder::remove_created_if_empty() const {
  std::error_code error;
  for (const std::string& dir : created_)
    if (!fs::remove(dir, error)) return;  // not empty (or gone): it and its parents stay
}

}  // namespace saltation::cli
