//===- main.cpp - the kiln command ----------------------------------------===//

#include "tools/kiln/Commands.h"

int main(int argc, char **argv) { return kiln::cli::runKiln(argc, argv); }
