// clients/cli/progress.h: live progress of a job for `argus watch`,
// `argus tune` and `argus submit --wait`.
//
// On a terminal it is one bar rewritten in place (stderr); otherwise one
// plain `key=value` line per event, so that scripts and tests can parse it:
//
//   progress job=j-… state=RUNNING tried=7/16 verified=5 rejected=2 in_flight=1
//            best=1.234 elapsed_s=12 candidates_left=9 remaining_s=288
//
// (one line; probe jobs show tasks=DONE/TOTAL failed=N instead of the
// candidate counts). The counts come from JobEvent.tune, which the server
// fills from the planner's progress summary.
//
// Thread safety: a Progress is used from one thread.
#ifndef ARGUS_CLIENTS_CLI_PROGRESS_H_
#define ARGUS_CLIENTS_CLI_PROGRESS_H_

#include <cstdio>
#include <string>

#include "argus/v1/jobs.pb.h"

namespace argus::cli {

// The plain line of an event (no trailing newline).
std::string ProgressLine(const v1::JobEvent& ev);
// The terminal bar of an event, at most `width` columns (no newline).
std::string ProgressBar(const v1::JobEvent& ev, int width);

class Progress {
 public:
  // quiet: print nothing. tty: bar instead of lines (default: stderr is a terminal).
  explicit Progress(bool quiet);
  Progress(bool quiet, bool tty, std::FILE* out);
  ~Progress() { Done(); }
  void Update(const v1::JobEvent& ev);
  // Prints `text` on stdout above the bar (the bar is cleared and redrawn).
  void Above(const std::string& text);
  // Ends the bar's line.
  void Done();

 private:
  void Draw();
  bool quiet_, tty_;
  std::FILE* out_;
  bool dirty_ = false;
  std::string bar_, last_line_;
};

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_PROGRESS_H_
