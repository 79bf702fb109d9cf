// base/data_dir.h: where an Argus program finds its runtime data: the
// knowledge base (kb/techniques/, kb/templates/) and the DSL reference
// (docs/dsl.md), laid out the same way in an install and in the source tree.
//
// DataDir() answers, first match wins:
//   1. the value of --data_dir, in programs that declare it
//      (DeclareDataDirFlag: every daemon and every argus verb);
//   2. $ARGUS_DATA_DIR;
//   3. <directory of the executable>/../share/argus, if that is a directory
//      (`cmake --install` puts the binaries in PREFIX/bin and the data in
//      PREFIX/share/argus);
//   4. the source tree the program was built from.
// docs/deploy.md describes the install.
//
// Thread safety: declare and parse the flag before starting threads; DataDir()
// may then be called from any thread.
#ifndef ARGUS_BASE_DATA_DIR_H_
#define ARGUS_BASE_DATA_DIR_H_

#include <string>

#include "base/flags.h"

namespace argus {

// Declares --data_dir on `flags`; its value, when given, is DataDir().
void DeclareDataDirFlag(FlagSet& flags);

// The directory that holds kb/ and docs/dsl.md (see above).
std::string DataDir();

}  // namespace argus

#endif  // ARGUS_BASE_DATA_DIR_H_
