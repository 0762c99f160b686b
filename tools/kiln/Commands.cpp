//===- Commands.cpp - dispatch of `kiln <command>` ------------------------===//

#include "tools/kiln/Commands.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

static void printUsage(llvm::raw_ostream &os) {
  os << "usage: kiln <command> [options]\n\n"
        "commands:\n"
        "  check  <model.onnx>                 list inputs, outputs, opsets and\n"
        "                                      everything Kiln cannot import\n"
        "  import <model.onnx> [-o out.mlir]   write the model as kiln IR\n"
        "  ops                                 list the ONNX ops Kiln imports\n"
        "  compile <model.onnx> -o model.so    compile for this CPU\n"
        "  run <model.so> --input N=F ...      run a compiled model\n"
        "  bench <model.so> [--batch N]        time a compiled model\n"
        "  inspect <model.so> [--memory]       show its memory plan and kernels\n"
        "  export-weights <model.onnx> <checkpoint> -o out.onnx\n"
        "                                      write a training checkpoint's values\n"
        "                                      into the model's initializers\n"
        "  verify-artifact <model.so> [--expect-hash H]\n"
        "                                      check an artifact's SHA-256 without\n"
        "                                      loading it\n"
        "  --version                           Kiln's version and commit, MLIR/LLVM,\n"
        "                                      the vendor libraries, this CPU\n\n"
        "Run `kiln <command> --help` for a command's options.\n";
}

ModelHandle loadArtifact(llvm::StringRef command, const std::string &path) {
  kiln_model *model = nullptr;
  if (kiln_model_load(path.c_str(), &model) != KILN_OK) {
    llvm::errs() << "kiln " << command << ": " << kiln_last_error() << "\n";
    return ModelHandle(nullptr, kiln_model_free);
  }
  return ModelHandle(model, kiln_model_free);
}

std::vector<uint32_t> callerInputs(const kiln_model *model) {
  std::vector<uint32_t> inputs;
  for (uint32_t i = 0; i < kiln_model_num_inputs(model); ++i)
    if (!kiln_model_input_is_parameter(model, i))
      inputs.push_back(i);
  return inputs;
}

int runKiln(int argc, char **argv) {
  if (argc < 2) {
    printUsage(llvm::errs());
    return 2;
  }
  llvm::StringRef command = argv[1];
  llvm::SmallVector<llvm::StringRef> args(argv + 2, argv + argc);
  if (command == "check")
    return runCheck(args);
  if (command == "import")
    return runImport(args);
  if (command == "ops")
    return runOps(args);
  if (command == "compile")
    return runCompile(args);
  if (command == "run")
    return runRun(args);
  if (command == "bench")
    return runBench(args);
  if (command == "inspect")
    return runInspect(args);
  if (command == "verify-artifact")
    return runVerifyArtifact(args);
  if (command == "export-weights")
    return runExportWeights(args);
  if (command == "--version" || command == "version")
    return runVersion(args);
  if (command == "--help" || command == "-h" || command == "help") {
    printUsage(llvm::outs());
    return 0;
  }
  llvm::errs() << "kiln: unknown command '" << command << "'\n\n";
  printUsage(llvm::errs());
  return 2;
}

} // namespace kiln::cli
