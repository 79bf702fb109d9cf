// base/version.h: the release of Argus these binaries are (what `--version`
// prints and workers report in their inventory).
//
// Thread safety: constants.
#ifndef ARGUS_BASE_VERSION_H_
#define ARGUS_BASE_VERSION_H_

namespace argus {

inline constexpr char kArgusVersion[] = "0.1.0";

}  // namespace argus

#endif  // ARGUS_BASE_VERSION_H_
