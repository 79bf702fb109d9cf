// tests/security/secrets.h: token files and openssl-made certificates for
// the security and reliability tests.
//
// MakePki runs the real openssl binary to make a CA, a server certificate
// for 127.0.0.1/localhost, a client certificate signed by the CA, and a
// second, unrelated CA with its own client certificate (which a server
// doing mTLS must refuse).
//
// Thread safety: functions write only under the directory they are given.
#ifndef ARGUS_TESTS_SECURITY_SECRETS_H_
#define ARGUS_TESTS_SECURITY_SECRETS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace argus::security {

// A fresh directory under the system's temp directory.
std::string TempDir();

// A client context with a 5 s deadline.
std::unique_ptr<grpc::ClientContext> Ctx();

// Prints "  refused WHAT CODE MESSAGE", the line each refusal test shows.
void PrintRefused(const std::string& what, const grpc::Status& st);

// Writes `content` to dir/name with mode 0600; returns the path.
std::string WriteSecret(const std::string& dir, const std::string& name,
                        const std::string& content);

struct Pki {
  std::string ca, server_cert, server_key, client_cert, client_key;
  std::string rogue_ca, rogue_cert, rogue_key;
};
// Empty error string on success; else why openssl failed.
std::string MakePki(const std::string& dir, Pki* pki);

}  // namespace argus::security

#endif  // ARGUS_TESTS_SECURITY_SECRETS_H_
