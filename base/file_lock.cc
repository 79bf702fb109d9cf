#include "base/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace argus {

FileLock::FileLock(FileLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

absl::StatusOr<FileLock> FileLock::Acquire(const std::string& path, Mode mode, Wait wait) {
  FileLock lock;
  lock.path_ = path;
  lock.fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock.fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open the lock file ", path, ": ", std::strerror(errno)));
  }
  int op = mode == Mode::kShared ? LOCK_SH : LOCK_EX;
  if (wait == Wait::kNo) op |= LOCK_NB;
  int rc;
  do {
    rc = flock(lock.fd_, op);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == EWOULDBLOCK) return absl::UnavailableError(absl::StrCat(path, " is locked"));
    return absl::FailedPreconditionError(
        absl::StrCat("cannot lock ", path, ": ", std::strerror(errno)));
  }
  return lock;
}

}  // namespace argus
