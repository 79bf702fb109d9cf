#include "clients/cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace argus::cli {
namespace {

std::string State(v1::JobState s) {
  std::string n = v1::JobState_Name(s);
  return n.substr(std::string("JOB_STATE_").size());
}

bool IsTune(const v1::JobEvent& ev) { return ev.job().spec().kind() == v1::JOB_KIND_TUNE; }

// m:ss, or h:mm:ss past an hour.
std::string Clock(int64_t ms) {
  int64_t s = std::max<int64_t>(0, ms) / 1000;
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

int TerminalWidth(std::FILE* out) {
  winsize ws{};
  if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 100;
}

}  // namespace

std::string ProgressLine(const v1::JobEvent& ev) {
  std::string line = absl::StrCat("progress job=", ev.job_id(), " state=", State(ev.state()));
  if (IsTune(ev)) {
    const v1::TuneProgress& t = ev.tune();
    absl::StrAppend(&line, " tried=", t.tried(), "/", t.max_candidates(),
                    " verified=", t.verified(), " rejected=", t.rejected(),
                    " in_flight=", t.in_flight(), absl::StrFormat(" best=%.3f", t.best_ratio()));
  } else {
    absl::StrAppend(&line, " tasks=", ev.tasks_done(), "/", ev.tasks_total(),
                    " failed=", ev.tasks_failed());
  }
  absl::StrAppend(&line, " elapsed_s=", ev.elapsed_ms() / 1000);
  if (IsTune(ev)) {
    absl::StrAppend(
        &line, " candidates_left=", std::max(0, ev.tune().max_candidates() - ev.tune().tried()));
  }
  if (ev.job().deadline_unix_ms() > 0)
    absl::StrAppend(&line, " remaining_s=", ev.remaining_ms() / 1000);
  return line;
}

std::string ProgressBar(const v1::JobEvent& ev, int width) {
  std::string id = ev.job_id().size() > 10 ? ev.job_id().substr(0, 10) : ev.job_id();
  int done = 0, total = 0;
  std::string counts;
  if (IsTune(ev)) {
    const v1::TuneProgress& t = ev.tune();
    done = t.tried();
    total = t.max_candidates();
    counts = absl::StrFormat("%d/%d cand: %d verified, %d rejected", t.tried(), t.max_candidates(),
                             t.verified(), t.rejected());
    if (t.in_flight()) absl::StrAppend(&counts, ", ", t.in_flight(), " running");
    absl::StrAppend(&counts, t.best_ratio() > 0 ? absl::StrFormat(" | best %.3fx", t.best_ratio())
                                                : std::string(" | best -"));
  } else {
    done = ev.tasks_done() + ev.tasks_failed();
    total = ev.tasks_total();
    counts = absl::StrFormat("%d/%d tasks", ev.tasks_done(), ev.tasks_total());
    if (ev.tasks_failed())
      absl::StrAppend(&counts, absl::StrFormat(", %d failed", ev.tasks_failed()));
  }
  std::string times = absl::StrCat(" | ", Clock(ev.elapsed_ms()));
  if (IsTune(ev)) {
    absl::StrAppend(&times, ", left ", std::max(0, total - done), " cand");
    if (ev.job().deadline_unix_ms() > 0) absl::StrAppend(&times, " / ", Clock(ev.remaining_ms()));
  } else if (ev.job().deadline_unix_ms() > 0) {
    absl::StrAppend(&times, ", ", Clock(ev.remaining_ms()), " left");
  }
  std::string head = absl::StrCat(id, " ", State(ev.state()), " ");
  std::string tail = absl::StrCat(" ", counts, times);
  // The bar takes what is left, between 10 and 30 columns.
  int bar_w = std::clamp(width - static_cast<int>(head.size() + tail.size()) - 2, 0, 30);
  std::string bar;
  if (bar_w >= 10) {
    int filled = total > 0 ? std::min(bar_w, done * bar_w / total) : 0;
    bar = absl::StrCat("[", std::string(filled, '#'), std::string(bar_w - filled, '.'), "]");
  }
  std::string line = absl::StrCat(head, bar, tail);
  if (static_cast<int>(line.size()) > width) line.resize(std::max(0, width - 1));
  return line;
}

Progress::Progress(bool quiet) : Progress(quiet, isatty(2), stderr) {}

Progress::Progress(bool quiet, bool tty, std::FILE* out) : quiet_(quiet), tty_(tty), out_(out) {}

void Progress::Update(const v1::JobEvent& ev) {
  if (quiet_) return;
  if (tty_) {
    bar_ = ProgressBar(ev, TerminalWidth(out_));
    Draw();
    return;
  }
  std::string line = ProgressLine(ev);
  if (line == last_line_) return;
  last_line_ = line;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::Draw() {
  std::fprintf(out_, "\r\033[K%s", bar_.c_str());
  std::fflush(out_);
  dirty_ = true;
}

void Progress::Above(const std::string& text) {
  if (tty_ && dirty_ && !quiet_) std::fprintf(out_, "\r\033[K");
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (tty_ && dirty_ && !quiet_) Draw();
}

void Progress::Done() {
  if (dirty_) std::fprintf(out_, "\n");
  dirty_ = false;
}

}  // namespace argus::cli
