// base/file_lock.h: advisory locks on files, held by an owning object.
//
// A FileLock is an flock(2) on a lock file, created when missing: shared or
// exclusive, taken at once or waited for. The lock belongs to the open file
// description, so it is released when the owner is destroyed or when the
// process dies (a SIGKILLed daemon leaves nothing stale), and it is not
// inherited by children (O_CLOEXEC): a runner started while the lock is held
// cannot keep it alive after its parent let go.
//
// Thread safety: a FileLock is move-only and owned by one thread. Two
// FileLocks in one process on the same path are independent locks (separate
// open file descriptions), as between processes.
#ifndef ARGUS_BASE_FILE_LOCK_H_
#define ARGUS_BASE_FILE_LOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace argus {

class FileLock {
 public:
  enum class Mode { kShared, kExclusive };
  enum class Wait { kNo, kYes };

  FileLock() = default;
  FileLock(FileLock&& o) noexcept;
  FileLock& operator=(FileLock&& o) noexcept;
  ~FileLock();

  // Locks `path`. With Wait::kNo, a lock held elsewhere in a conflicting mode
  // is Unavailable ("PATH is locked"); with Wait::kYes the call blocks until
  // it is free. Other errors (FailedPrecondition) name the file.
  static absl::StatusOr<FileLock> Acquire(const std::string& path, Mode mode, Wait wait);

  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // The open lock file (for writing the holder's pid into it); -1 if not held.
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace argus

#endif  // ARGUS_BASE_FILE_LOCK_H_
