// argus: the command-line client. See `argus --help` and docs/cli.md.
#include "clients/cli/commands.h"

int main(int argc, char** argv) { return argus::cli::Main(argc, argv); }
