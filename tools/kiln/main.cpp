//===- main.cpp - the kiln command ----------------------------------------===//

#include "backends/Registration.h"
#include "tools/kiln/Commands.h"

int main(int argc, char **argv) {
  kiln::registerAllBackends();
  return kiln::cli::runKiln(argc, argv);
}
