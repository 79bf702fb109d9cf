// tests/reliability/full_disk.h: a store on a disk that fills up and frees
// space on command, for argus-server processes started by a harness, without
// root (full_disk_shim.cc is preloaded into the server).
//
// Thread safety: one per test, used from the test's thread.
#ifndef ARGUS_TESTS_RELIABILITY_FULL_DISK_H_
#define ARGUS_TESTS_RELIABILITY_FULL_DISK_H_

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/e2e/harness.h"

namespace argus::reliability {

class FullDisk {
 public:
  // Every server `h` starts from now on sees the disk of db().
  explicit FullDisk(e2e::Harness* h) : dir_(h->dir() + "/disk"), flag_(h->dir() + "/disk-full") {
    std::filesystem::create_directories(dir_);
    h->server_env = {std::string("LD_PRELOAD=") + ARGUS_FULL_DISK_SHIM,
                     "ARGUS_FULL_DISK_DIR=" + dir_, "ARGUS_FULL_DISK_FLAG=" + flag_};
  }
  // The store's file: pass `--db` db() to the server.
  std::string db() const { return dir_ + "/argus.db"; }
  // From now on every write to the store fails with ENOSPC...
  void Fill() { std::ofstream(flag_).put('1'); }
  // ...until space comes back.
  void Free() { std::filesystem::remove(flag_); }

 private:
  std::string dir_, flag_;
};

}  // namespace argus::reliability

#endif  // ARGUS_TESTS_RELIABILITY_FULL_DISK_H_
