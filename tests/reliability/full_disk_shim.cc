// A full disk for one directory, switched on and off while a process runs,
// without root: preloaded (LD_PRELOAD) into argus-server, it makes every
// write to a file under $ARGUS_FULL_DISK_DIR fail with ENOSPC while the file
// $ARGUS_FULL_DISK_FLAG exists, as a full file system does. SQLite sees the
// same errno it would see on a real full disk (SQLITE_FULL). Reads, and
// writes anywhere else, are untouched.
//
// Thread safety: the wrappers are reentrant; the real functions are looked
// up once (dlsym is thread-safe).
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

namespace {

bool DiskFull(int fd) {
  const char* flag = getenv("ARGUS_FULL_DISK_FLAG");
  const char* dir = getenv("ARGUS_FULL_DISK_DIR");
  if (!flag || !dir || access(flag, F_OK) != 0) return false;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return strncmp(path, dir, strlen(dir)) == 0;
}

template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = Real<ssize_t (*)(int, const void*, size_t)>("write");
  if (DiskFull(fd)) return errno = ENOSPC, -1;
  return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  static auto real = Real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  if (DiskFull(fd)) return errno = ENOSPC, -1;
  return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  static auto real = Real<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  if (DiskFull(fd)) return errno = ENOSPC, -1;
  return real(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  static auto real = Real<ssize_t (*)(int, const struct iovec*, int)>("writev");
  if (DiskFull(fd)) return errno = ENOSPC, -1;
  return real(fd, iov, count);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  static auto real = Real<int (*)(int, int, off_t, off_t)>("fallocate");
  if (DiskFull(fd)) return errno = ENOSPC, -1;
  return real(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len) {
  static auto real = Real<int (*)(int, off_t, off_t)>("posix_fallocate");
  if (DiskFull(fd)) return ENOSPC;
  return real(fd, off, len);
}

}  // extern "C"
