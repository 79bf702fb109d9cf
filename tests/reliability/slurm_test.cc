// A real Slurm run: munged, slurmctld and slurmd started here as a one-node
// cluster (4 GRES GPUs backed by /dev/null), argus-workers launched by
// deploy/slurm/argus-workers.sbatch as a job array against a real
// argus-server with tokens; a batch completes across them; the array is
// cancelled mid-batch and every result a worker reported is in the store.
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "argus/v1/jobs.grpc.pb.h"
#include "gpu_worker/dial.h"
#include "tests/e2e/harness.h"
#include "tests/reliability/store_count.h"
#include "tests/security/secrets.h"

namespace argus::reliability {
namespace {

using e2e::Harness;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

std::string Missing() {
  for (const char* p : {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
                        "/usr/bin/sbatch", "/usr/bin/scancel", "/usr/bin/sinfo"}) {
    if (access(p, X_OK) != 0) {
      return std::string(p) + " is not installed (Debian packages slurm-wlm and munge)";
    }
  }
  if (geteuid() != 0) return "slurmd must run as root to launch jobs, and this test is not root";
  return "";
}

std::string ReadAll(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A one-node Slurm cluster under `dir`, torn down on destruction.
class Cluster {
 public:
  explicit Cluster(std::string dir) : dir_(std::move(dir)) {}
  ~Cluster() {
    Slurm({"/usr/bin/scancel", "--user=root"});
    slurmd_.Kill(SIGTERM);
    slurmctld_.Kill(SIGTERM);
    munged_.Kill(SIGTERM);
  }
  std::string conf() const { return dir_ + "/slurm.conf"; }

  void Start() {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    node_ = host;
    std::filesystem::create_directories(dir_ + "/state");
    std::filesystem::create_directories(dir_ + "/spool");
    std::string key = security::WriteSecret(dir_, "munge.key", std::string(64, 'k') + node_);
    auto m = Child::Start({"/usr/sbin/munged", "-F", "--force", "--key-file=" + key,
                           "--socket=" + dir_ + "/munge.sock", "--pid-file=" + dir_ + "/munged.pid",
                           "--log-file=" + dir_ + "/munged.log", "--seed-file=" + dir_ + "/seed"},
                          dir_ + "/munged.out");
    REQUIRE(m.ok());
    munged_ = std::move(*m);
    REQUIRE(
        Harness::WaitFor([&] { return std::filesystem::exists(dir_ + "/munge.sock"); }, 10'000));
    for (int i = 0; i < 4; ++i) {
      std::filesystem::create_symlink("/dev/null", dir_ + "/gpu" + std::to_string(i));
    }
    std::ofstream(dir_ + "/gres.conf")
        << "NodeName=" << node_ << " Name=gpu File=" << dir_ << "/gpu[0-3]\n";
    std::ofstream c(conf());
    c << "ClusterName=argustest\nSlurmctldHost=" << node_ << "(127.0.0.1)\n"
      << "SlurmUser=root\nSlurmdUser=root\nSlurmctldPort=" << FreePort()
      << "\nSlurmdPort=" << FreePort() << "\nAuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << dir_ << "/munge.sock\n"
      << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
      << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_
      << "/slurmd.pid\nSlurmctldLogFile=" << dir_ << "/slurmctld.log\nSlurmdLogFile=" << dir_
      << "/slurmd.log\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
      << "SlurmdParameters=config_overrides\nGresTypes=gpu\nMpiDefault=none\n"
      << "SwitchType=switch/none\nReturnToService=2\nKillWait=5\n"
      << "NodeName=" << node_ << " NodeAddr=127.0.0.1 CPUs=8 RealMemory=8000 Gres=gpu:4 "
      << "State=UNKNOWN\nPartitionName=debug Nodes=" << node_
      << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n";
    c.close();
    auto ctld =
        Child::Start({"/usr/sbin/slurmctld", "-D", "-i", "-f", conf()}, dir_ + "/slurmctld.out");
    REQUIRE(ctld.ok());
    slurmctld_ = std::move(*ctld);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto d =
        Child::Start({"/usr/sbin/slurmd", "-D", "-f", conf(), "-N", node_}, dir_ + "/slurmd.out");
    REQUIRE(d.ok());
    slurmd_ = std::move(*d);
    bool idle = Harness::WaitFor(
        [&] {
          return Slurm({"/usr/bin/sinfo", "-h", "-o", "%T"}).find("idle") == 0;
        },
        30'000);
    INFO("slurmctld log:\n"
         << ReadAll(dir_ + "/slurmctld.log") << "\nslurmd log:\n"
         << ReadAll(dir_ + "/slurmd.log"));
    REQUIRE(idle);
  }

  // Runs a Slurm client command against this cluster; returns its stdout.
  std::string Slurm(std::vector<std::string> argv, std::vector<std::string> env = {}) {
    ProcessOptions p;
    p.argv = std::move(argv);
    p.extra_env = std::move(env);
    p.extra_env.push_back("SLURM_CONF=" + conf());
    p.timeout = std::chrono::seconds(20);
    auto r = RunWithTimeout(p);
    if (!r.ok()) return "";
    return r->stdout_text + r->stderr_text;
  }

 private:
  std::string dir_, node_;
  Child munged_, slurmctld_, slurmd_;
};

TEST_CASE("slurm: a job array of workers runs a batch, scancel mid-batch loses no result",
          "[slurm]") {
  if (std::string why = Missing(); !why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  Harness h;
  const std::string client = "client-" + std::string(32, 'c'),
                    worker = "worker-" + std::string(32, 'w');
  std::string ct = security::WriteSecret(h.dir(), "client.token", client);
  std::string wt = security::WriteSecret(h.dir(), "worker.token", worker);
  h.StartServer({"--token_file", ct, "--worker_token_file", wt, "--heartbeat_ms", "200",
                 "--lease_ms", "1500", "--max_jobs_per_client", "0"});
  Cluster cluster(h.dir() + "/slurm");
  cluster.Start();

  worker::DialOptions d;
  d.token = client;
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), d));
  auto ctx = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return c;
  };
  auto alive = [&] {
    v1::ListWorkersResponse resp;
    if (!jobs->ListWorkers(ctx().get(), {}, &resp).ok()) return -1;
    int n = 0;
    for (const auto& w : resp.workers()) n += w.alive();
    return n;
  };
  auto submit = [&](int n) {
    for (int i = 0; i < n; ++i) {
      v1::SubmitJobRequest req;
      req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
      req.mutable_spec()->set_probe_workers(1);
      v1::SubmitJobResponse resp;
      REQUIRE(jobs->SubmitJob(ctx().get(), req, &resp).ok());
    }
  };
  std::string logs = h.dir() + "/slurm";
  std::vector<std::string> env = {
      "ARGUS_SERVER=" + h.address(), "ARGUS_BIN=" + std::string(ARGUS_BINARY_DIR) + "/bin",
      "ARGUS_WORKER_TOKEN_FILE=" + wt, "ARGUS_WORKER_FLAGS=--task_delay_ms 100 --log_level info",
      "ARGUS_DEVICE="};  // no GPU here: interpreter workers, no --device
  std::string out =
      cluster.Slurm({"/usr/bin/sbatch", "--array=0-3", "--cpus-per-task=1", "--mem=64M",
                     "--output=" + logs + "/worker-%a.log", "--chdir=" + logs,
                     std::string(ARGUS_SOURCE_DIR) + "/deploy/slurm/argus-workers.sbatch"},
                    env);
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("Submitted batch job ([0-9]+)")));
  std::string array = m[1];
  bool up = Harness::WaitFor([&] { return alive() == 4; }, 60'000);
  INFO("sbatch: " << out << "\nworker 0 log:\n" << ReadAll(logs + "/worker-0.log"));
  REQUIRE(up);

  // A first batch completes across the array.
  submit(40);
  const std::string done = "SELECT COUNT(*) FROM tasks WHERE state = 'done'";
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), done) == 40; }, 60'000));
  int64_t served = Count(h.db(), "SELECT COUNT(DISTINCT worker_id) FROM tasks");
  std::printf("figure: slurm array %s: 4 workers registered; batch of 40 done by %lld of them\n",
              array.c_str(), (long long)served);
  CHECK(served >= 2);

  // A second batch; cancel the array in the middle of it.
  submit(200);
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), done) >= 80; }, 60'000));
  cluster.Slurm({"/usr/bin/scancel", array});
  REQUIRE(Harness::WaitFor(
      [&] {
        return cluster.Slurm({"/usr/bin/squeue", "-h", "-j", array}).empty();
      },
      60'000));
  REQUIRE(Harness::WaitFor([&] { return alive() == 0; }, 10'000));
  int64_t done_after = Count(h.db(), done);
  // Every result a worker says it reported must be in the store, as done.
  std::set<std::string> reported;
  std::regex line("task (t-[0-9a-f]+) reported \\(ok\\)");
  for (int i = 0; i < 4; ++i) {
    std::string log = ReadAll(logs + "/worker-" + std::to_string(i) + ".log");
    for (std::sregex_iterator it(log.begin(), log.end(), line), e; it != e; ++it) {
      reported.insert((*it)[1]);
    }
  }
  int lost = 0;
  for (const auto& t : reported) {
    lost +=
        Count(h.db(), "SELECT COUNT(*) FROM tasks WHERE state = 'done' AND id = '" + t + "'") != 1;
  }
  std::printf(
      "figure: scancel after %lld of 240 tasks done; workers logged %zu reported results, "
      "%d missing from the store; %lld tasks left queued or leased\n",
      (long long)done_after, reported.size(), lost,
      (long long)Count(h.db(),
                       "SELECT COUNT(*) FROM tasks WHERE state IN "
                       "('queued','leased')"));
  CHECK(done_after < 240);  // really mid-batch
  // A worker can be killed after the server committed its result and before
  // it logged "reported": the store may hold more than the logs, never less.
  CHECK(static_cast<int64_t>(reported.size()) <= done_after);
  CHECK(lost == 0);
}

}  // namespace
}  // namespace argus::reliability
