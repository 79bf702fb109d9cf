// tests/e2e/proc_stats.h: what a process costs, read from /proc, for tests
// that print the CPU time or thread count of a server they attack.
//
// Thread safety: pure functions over /proc.
#ifndef ARGUS_TESTS_E2E_PROC_STATS_H_
#define ARGUS_TESTS_E2E_PROC_STATS_H_

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace argus::e2e {

// CPU seconds (user + system) the process has used so far.
inline double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream rest(stat.substr(paren + 2));  // fields 3.. after "pid (comm) "
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Threads of the process (/proc/PID/task), -1 when it is gone.
inline int Threads(pid_t pid) {
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

}  // namespace argus::e2e

#endif  // ARGUS_TESTS_E2E_PROC_STATS_H_
