#include "clients/cli/progress.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace argus::cli {
namespace {

v1::JobEvent TuneEvent() {
  v1::JobEvent ev;
  ev.set_job_id("j-0123456789abcdef");
  ev.set_state(v1::JOB_STATE_RUNNING);
  ev.mutable_job()->mutable_spec()->set_kind(v1::JOB_KIND_TUNE);
  ev.mutable_job()->set_deadline_unix_ms(1);
  ev.set_elapsed_ms(75'400);
  ev.set_remaining_ms(288'900);
  v1::TuneProgress* t = ev.mutable_tune();
  t->set_tried(7);
  t->set_max_candidates(16);
  t->set_verified(5);
  t->set_rejected(2);
  t->set_in_flight(1);
  t->set_best_ratio(1.2345);
  return ev;
}

std::string Captured(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

TEST_CASE("the plain progress line of a tune job has every count", "[progress]") {
  CHECK(ProgressLine(TuneEvent()) ==
        "progress job=j-0123456789abcdef state=RUNNING tried=7/16 verified=5 rejected=2 "
        "in_flight=1 best=1.234 elapsed_s=75 candidates_left=9 remaining_s=288");
}

TEST_CASE("a probe job's line counts tasks and has no remaining time without a deadline",
          "[progress]") {
  v1::JobEvent ev;
  ev.set_job_id("j-1");
  ev.set_state(v1::JOB_STATE_QUEUED);
  ev.mutable_job()->mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
  ev.set_tasks_total(3);
  ev.set_tasks_done(1);
  ev.set_tasks_failed(1);
  ev.set_elapsed_ms(999);
  CHECK(ProgressLine(ev) == "progress job=j-1 state=QUEUED tasks=1/3 failed=1 elapsed_s=0");
}

TEST_CASE("the terminal bar fits the width and shows best, time and budget", "[progress]") {
  std::string bar = ProgressBar(TuneEvent(), 120);
  CHECK(bar.size() <= 120);
  CHECK(bar.find("j-01234567 RUNNING [") == 0);
  CHECK(bar.find("7/16 cand: 5 verified, 2 rejected, 1 running | best 1.234x") !=
        std::string::npos);
  CHECK(bar.find("| 1:15, left 9 cand / 4:48") != std::string::npos);
  // 7 of 16 in a bar of w columns: floor(7 * w / 16) filled.
  size_t open = bar.find('['), close = bar.find(']');
  int w = static_cast<int>(close - open - 1);
  CHECK(w >= 10);
  CHECK(std::count(bar.begin(), bar.end(), '#') == 7 * w / 16);
  CHECK(ProgressBar(TuneEvent(), 40).size() <= 40);  // narrow: no bar, cut
}

TEST_CASE("Progress rewrites one line on a tty and prints lines otherwise", "[progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    Progress p(false, /*tty=*/false, f);
    p.Update(TuneEvent());
    p.Update(TuneEvent());  // unchanged: not repeated
    v1::JobEvent ev = TuneEvent();
    ev.mutable_tune()->set_tried(8);
    p.Update(ev);
  }
  std::string lines = Captured(f);
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 2);
  CHECK(lines.find("tried=8/16") != std::string::npos);
  std::fclose(f);

  f = std::tmpfile();
  {
    Progress p(false, /*tty=*/true, f);
    p.Update(TuneEvent());
    p.Update(TuneEvent());
  }
  std::string tty = Captured(f);
  CHECK(tty.find("\r\033[K") == 0);
  CHECK(std::count(tty.begin(), tty.end(), '\n') == 1);  // only the final newline
  std::fclose(f);

  f = std::tmpfile();
  {
    Progress quiet(true, true, f);
    quiet.Update(TuneEvent());
  }
  CHECK(Captured(f).empty());
  std::fclose(f);
}

}  // namespace
}  // namespace argus::cli
