#include "base/file_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace argus {
namespace {

std::string TempLockPath() {
  char tmpl[] = "/tmp/argus-lock-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return std::string(tmpl) + "/gpu.run.lock";
}

using Mode = FileLock::Mode;
using Wait = FileLock::Wait;

TEST_CASE("an exclusive file lock keeps others out until it is released", "[base][lock]") {
  const std::string path = TempLockPath();
  auto a = FileLock::Acquire(path, Mode::kExclusive, Wait::kNo);
  REQUIRE(a.ok());
  CHECK(a->held());
  auto b = FileLock::Acquire(path, Mode::kExclusive, Wait::kNo);
  REQUIRE_FALSE(b.ok());
  CHECK(std::string(b.status().message()) == path + " is locked");
  CHECK_FALSE(FileLock::Acquire(path, Mode::kShared, Wait::kNo).ok());
  { FileLock gone = std::move(*a); }
  CHECK(FileLock::Acquire(path, Mode::kExclusive, Wait::kNo).ok());
  // Shared holders coexist.
  auto s1 = FileLock::Acquire(path, Mode::kShared, Wait::kNo);
  auto s2 = FileLock::Acquire(path, Mode::kShared, Wait::kNo);
  CHECK((s1.ok() && s2.ok()));
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_CASE("a waiting file lock is granted when the holder lets go", "[base][lock]") {
  const std::string path = TempLockPath();
  auto holder = FileLock::Acquire(path, Mode::kExclusive, Wait::kNo);
  REQUIRE(holder.ok());
  std::atomic<bool> released{false}, granted{false}, granted_after_release{false};
  std::thread waiter([&] {
    auto w = FileLock::Acquire(path, Mode::kExclusive, Wait::kYes);
    granted_after_release = w.ok() && released.load();
    granted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(granted.load());
  released = true;
  *holder = FileLock();
  waiter.join();
  CHECK(granted_after_release.load());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_CASE("a child started under a file lock does not keep it", "[base][lock]") {
  const std::string path = TempLockPath();
  auto lock = FileLock::Acquire(path, Mode::kExclusive, Wait::kNo);
  REQUIRE(lock.ok());
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execlp("sleep", "sleep", "5", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until exec the child shares the lock's open file; after it, O_CLOEXEC
  // has closed it there.
  for (int i = 0; i < 500; ++i) {
    std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "sleep") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *lock = FileLock();  // the parent lets go while the child still runs
  CHECK(FileLock::Acquire(path, Mode::kExclusive, Wait::kNo).ok());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_CASE("a lock file that cannot be created is a clear error", "[base][lock]") {
  auto l = FileLock::Acquire("/nonexistent-dir/x.lock", Mode::kExclusive, Wait::kNo);
  REQUIRE_FALSE(l.ok());
  CHECK(
      std::string(l.status().message()).find("cannot open the lock file /nonexistent-dir/x.lock") !=
      std::string::npos);
}

}  // namespace
}  // namespace argus
