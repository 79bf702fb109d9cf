#include "tests/security/secrets.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/subprocess.h"

namespace argus::security {

std::string TempDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("argus-sec-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::unique_ptr<grpc::ClientContext> Ctx() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return ctx;
}

void PrintRefused(const std::string& what, const grpc::Status& st) {
  std::printf("  refused %-28s %d %s\n", what.c_str(), st.error_code(), st.error_message().c_str());
}

namespace {

std::string Openssl(const std::vector<std::string>& args) {
  ProcessOptions opt;
  opt.argv = {"/usr/bin/openssl"};
  opt.argv.insert(opt.argv.end(), args.begin(), args.end());
  opt.timeout = std::chrono::seconds(30);
  auto r = RunWithTimeout(opt);
  if (!r.ok()) return std::string(r.status().message());
  if (r->end != ProcessResult::End::kExited || r->exit_code != 0) {
    return "openssl " + args[0] + " failed: " + r->stderr_text;
  }
  return "";
}

// A key and a certificate for `cn`, signed by ca/ca_key (self-signed when empty).
std::string Cert(const std::string& dir, const std::string& name, const std::string& cn,
                 const std::string& ca, const std::string& ca_key, const std::string& ext) {
  std::string key = dir + "/" + name + ".key", crt = dir + "/" + name + ".crt";
  if (ca.empty()) {
    return Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=" + cn,
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign"});
  }
  std::string csr = dir + "/" + name + ".csr", extfile = dir + "/" + name + ".ext";
  std::ofstream(extfile) << ext << "\n";
  if (auto e = Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + cn});
      !e.empty()) {
    return e;
  }
  return Openssl({"x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                  "-out", crt, "-days", "2", "-extfile", extfile});
}

}  // namespace

std::string WriteSecret(const std::string& dir, const std::string& name,
                        const std::string& content) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << content << "\n";
  chmod(path.c_str(), 0600);
  return path;
}

std::string MakePki(const std::string& dir, Pki* p) {
  if (access("/usr/bin/openssl", X_OK) != 0) return "openssl is not installed (/usr/bin/openssl)";
  const std::string server_ext =
      "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth";
  const std::string client_ext = "extendedKeyUsage=clientAuth";
  for (auto e : {Cert(dir, "ca", "argus-test-ca", "", "", ""),
                 Cert(dir, "server", "localhost", dir + "/ca.crt", dir + "/ca.key", server_ext),
                 Cert(dir, "client", "argus-worker", dir + "/ca.crt", dir + "/ca.key", client_ext),
                 Cert(dir, "rogue-ca", "someone-else", "", "", ""),
                 Cert(dir, "rogue", "argus-worker", dir + "/rogue-ca.crt", dir + "/rogue-ca.key",
                      client_ext)}) {
    if (!e.empty()) return e;
  }
  p->ca = dir + "/ca.crt";
  p->server_cert = dir + "/server.crt";
  p->server_key = dir + "/server.key";
  p->client_cert = dir + "/client.crt";
  p->client_key = dir + "/client.key";
  p->rogue_ca = dir + "/rogue-ca.crt";
  p->rogue_cert = dir + "/rogue.crt";
  p->rogue_key = dir + "/rogue.key";
  return "";
}

}  // namespace argus::security
