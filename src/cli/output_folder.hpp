#pragma once
// The --out folder of `sweep` and `merge`, held for one run: created when missing, locked against
// a second run into it, and on the way out unlocked and, when this run created it and left
// nothing in it (a refusal or a stop before writing), removed again.
#include <string>
#include <vector>

namespace saltation::cli {

class OutputFolder {
 public:
  // Creates `dir` (and missing parents) and takes its lock, DIR/.saltation.lock, created
  // exclusively and holding this process's id. IoError naming `dir` when it cannot be created,
  // or when a running process holds the lock (the message gives its pid). A lock whose process
  // is gone (killed) is taken over.
  explicit OutputFolder(std::string dir);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  static constexpr const char* kLockName = ".saltation.lock";

 private:
  void remove_created_if_empty() const;

  std::string dir_, lock_;
  std::vector<std::string> created_;  // folders this run created, deepest first
};

}  // namespace saltation::cli
