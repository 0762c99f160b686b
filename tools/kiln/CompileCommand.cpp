//===- CompileCommand.cpp - `kiln compile model.onnx -o model.so` ---------===//
//
// Reads the flags, hands the model to the compile driver (compiler/Driver)
// and prints what it did. `--verify` then runs the artifact.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "kiln/kiln_model_abi.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"
#include "tools/kiln/ModelInput.h"
#include "tools/kiln/Progress.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace kiln::cli {

static void printCompileUsage(llvm::raw_ostream &os) {
  os << "usage: kiln compile <model.onnx|model.mlir|model.mlirbc> -o <model.so|model.a|model.o>\n"
        "                    [options]\n\n"
        "Compiles the model (ONNX, or kiln IR from `kiln import`) and writes the\n"
        "artifact and its C header (same name, .h).\n"
        "  --target=NAME        the backend: ";
  std::vector<std::string> names = registeredBackendNames();
  for (size_t i = 0; i < names.size(); ++i)
    os << (i ? ", " : "") << names[i] << (names[i] == "cpu" ? " (default)" : "");
  os << "\n"
        "  --cpu=NAME           target CPU: host (default), x86-64, x86-64-v3, ...\n"
        "  --gpu=sm_XY[,..]     --target=cuda: the GPUs (default sm_80,sm_90; may be\n"
        "                       given several times): a cubin each, PTX for later GPUs\n"
        "  --block-size=N       --target=cuda: threads a block of generated kernels (256)\n"
        "  --emulate-gpu        --target=cuda: a CPU artifact of the loop nests as mapped\n"
        "                       onto GPU blocks and threads (no libraries), to check them\n"
        "  --allow-nondeterministic  --target=cuda: the runtime may pick cuDNN algorithms\n"
        "                       whose results vary from run to run (default: only\n"
        "                       deterministic ones)\n"
        "  --no-libraries       generate every convolution and matmul instead of\n"
        "                       calling the target's library (oneDNN)\n"
        "  --report             print the memory plan and the kernels' summary\n"
        "  --quiet, -q          print nothing but errors (no progress, no summary)\n"
        "  --train              compile the training step: forward, loss, backward and\n"
        "                       the optimiser's update (docs/Training.md), with\n"
        "  --loss=L             cross-entropy (default; target: class indices) or mse\n"
        "  --optimizer=O        sgd(lr=..,momentum=..,weight_decay=..) (default\n"
        "                       sgd(lr=0.01)) or adam(lr=..,beta1=..,beta2=..,eps=..,\n"
        "                       weight_decay=..)\n"
        "  --grad-accum=N       update every N-th step with the mean of N steps'\n"
        "                       gradients\n"
        "  --clip-grad-norm=X   scale gradients to a global L2 norm of at most X\n"
        "  --trainable=REGEX    the initializers trained, by name (default: all float\n"
        "                       initializers of rank >= 1)\n"
        "  --train-batch=N      the step's batch when the model's is dynamic\n"
        "  --batch-norm-momentum=M  running statistics' update, PyTorch's convention\n"
        "                       (default 0.1)\n"
        "  --remat              recompute cheap elementwise forward values in the\n"
        "                       backward pass instead of saving them\n"
        "  --dropout-seed=S     dropout k draws its masks with seed S + k (default 0)\n"
     << kModelInputUsage
     << "  --max-batch=N        plan memory for batches up to N (dim 0 of dynamic\n"
        "                       inputs): buffers that grow with the batch join the\n"
        "                       arena; the runtime refuses larger batches\n"
        "  --batch-buckets=B,.. batches (dim 0 of dynamic inputs, at most 8) a\n"
        "                       session prepares its library calls for when it\n"
        "                       is created (default: 1); others at their first run\n"
        "  --conv-post-ops=0|1  convolution epilogues as oneDNN post-ops (1, the\n"
        "                       default) or generated after each call (0)\n"
        "  --conv-layout=L      nhwc (default): activations between oneDNN\n"
        "                       convolutions stay channels-last; nchw: each\n"
        "                       convolution reorders its input and output\n"
        "  --prepack=0|1        1 (default, --cpu=host): constant weights stored in\n"
        "                       oneDNN's layout for this host; 0: plain, packed\n"
        "                       when a session is created\n"
        "  --no-fuse            skip fusion (kiln-fuse and the linalg phase's\n"
        "                       elementwise fusion): every op its own kernel\n"
        "  --compile-to=PHASE   print the IR after PHASE ("
     << phaseNames()
     << ";\n"
        "                       llvm = codegen on cpu) instead of writing an artifact\n"
        "  --verify=DIR         then run the artifact on DIR/input_*.pb (or .npy)\n"
        "                       and compare with DIR/output_*.pb; fail beyond the\n"
        "                       tolerance (--atol, --rtol as for kiln run)\n";
}

/// `kiln run` arguments that check `artifact` on the data set in `dir`,
/// matching files to tensors by position (input_0 is the first input).
static std::vector<std::string> verifyArguments(const std::string &artifact,
                                                const std::string &dir) {
  std::vector<std::string> runArgs = {artifact};
  for (const char *kind : {"input", "output"}) {
    for (size_t i = 0;; ++i) {
      std::string base = dir + "/" + kind + "_" + std::to_string(i);
      std::string file;
      for (const char *ext : {".pb", ".npy"})
        if (llvm::sys::fs::exists(base + ext))
          file = base + ext;
      if (file.empty())
        break;
      runArgs.push_back(std::string(kind) == "input" ? "--input" : "--expected");
      runArgs.push_back("@" + std::to_string(i) + "=" + file);
    }
  }
  return runArgs;
}

/// `text` as an integer > 0 into `out`; else says so for `flag`.
static bool positiveInteger(llvm::StringRef flag, llvm::StringRef text, int64_t &out) {
  if (!text.getAsInteger(10, out) && out > 0)
    return true;
  llvm::errs() << "kiln compile: " << flag << " takes a positive integer, got '" << text << "'\n";
  return false;
}

/// `text` as a number in (lo, hi] (lo itself too when `withLo`) into
/// `out`; else says so for `flag` with `what`.
static bool numberIn(llvm::StringRef flag, llvm::StringRef text, double lo, bool withLo,
                     double hi, llvm::StringRef what, double &out) {
  double v = 0;
  if (!text.getAsDouble(v) && (v > lo || (withLo && v == lo)) && v <= hi) {
    out = v;
    return true;
  }
  llvm::errs() << "kiln compile: " << flag << " takes " << what << ", got '" << text << "'\n";
  return false;
}

int runCompile(llvm::ArrayRef<llvm::StringRef> args) {
  driver::CompileOptions options;
  ModelInput model;
  bool report = false, quiet = false;
  std::string verifyDir, atol, rtol;
  int exitCode = 0;
  // Training options imply --train.
  auto train = [&]() -> autodiff::TrainOptions & {
    if (!options.train)
      options.train.emplace();
    return *options.train;
  };
  for (ArgumentCursor cursor(args); !cursor.done() && exitCode == 0; cursor.next()) {
    llvm::StringRef arg = cursor.current();
    auto value = [&](llvm::StringRef flag) { return cursor.value(flag); };
    if (arg == "--help" || arg == "-h") {
      printCompileUsage(llvm::outs());
      return 0;
    }
    if (auto v = value("--compile-to")) {
      options.stopAfter = parsePhase(*v);
      if (!options.stopAfter) {
        llvm::errs() << "kiln compile: unknown phase '" << *v << "' (" << phaseNames()
                     << ")\n";
        return 2;
      }
    } else if (auto v = value("--target")) {
      options.target = *v;
    } else if (auto v = value("--verify")) {
      verifyDir = *v;
    } else if (auto v = value("--atol")) {
      atol = *v;
    } else if (auto v = value("--rtol")) {
      rtol = *v;
    } else if (arg == "--no-libraries") {
      options.targetOptions.libraries = false;
    } else if (arg == "--conv-post-ops") {
      options.targetOptions.settings["conv-post-ops"] = "1";
    } else if (auto v = value("--conv-post-ops")) {
      options.targetOptions.settings["conv-post-ops"] = *v;
    } else if (auto v = value("--conv-layout")) {
      options.targetOptions.settings["conv-layout"] = *v;
    } else if (auto v = value("--prepack")) {
      options.targetOptions.settings["prepack"] = *v;
    } else if (arg == "--no-fuse") {
      options.fuse = false;
    } else if (auto v = value("--max-batch")) {
      if (!positiveInteger("--max-batch", *v, options.maxBatch))
        return 2;
    } else if (auto v = value("--batch-buckets")) {
      llvm::SmallVector<llvm::StringRef> parts;
      llvm::StringRef(*v).split(parts, ',');
      options.batchBuckets.clear();
      for (llvm::StringRef part : parts) {
        int64_t b = 0;
        if (part.trim().getAsInteger(10, b) || b <= 0) {
          llvm::errs() << "kiln compile: --batch-buckets takes positive integers separated by "
                          "commas, got '"
                       << *v << "'\n";
          return 2;
        }
        if (!llvm::is_contained(options.batchBuckets, b))
          options.batchBuckets.push_back(b);
      }
      if (options.batchBuckets.size() > KILN_MAX_BATCH_BUCKETS) {
        llvm::errs() << "kiln compile: --batch-buckets takes at most " << KILN_MAX_BATCH_BUCKETS
                     << " batches, got " << options.batchBuckets.size() << "\n";
        return 2;
      }
    } else if (arg == "--report") {
      report = true;
    } else if (arg == "--quiet" || arg == "-q") {
      quiet = true;
    } else if (arg == "--train") {
      if (!options.train)
        options.train.emplace();
    } else if (auto v = value("--loss")) {
      train().loss = *v;
    } else if (auto v = value("--optimizer")) {
      if (llvm::Error e = autodiff::parseOptimizer(*v, train())) {
        llvm::errs() << "kiln compile: " << llvm::toString(std::move(e)) << "\n";
        return 2;
      }
    } else if (auto v = value("--clip-grad-norm")) {
      if (!numberIn("--clip-grad-norm", *v, 0, false, HUGE_VAL, "a positive number",
                    train().clipGradNorm))
        return 2;
    } else if (auto v = value("--trainable")) {
      train().trainable = *v;
    } else if (auto v = value("--grad-accum")) {
      if (!positiveInteger("--grad-accum", *v, train().gradAccum))
        return 2;
    } else if (auto v = value("--batch-norm-momentum")) {
      if (!numberIn("--batch-norm-momentum", *v, 0, true, 1, "a number in [0, 1]",
                    train().batchNormMomentum))
        return 2;
    } else if (arg == "--remat") {
      train().remat = true;
    } else if (auto v = value("--dropout-seed")) {
      int64_t seed = 0;
      if (llvm::StringRef(*v).getAsInteger(10, seed) || seed < 0) {
        llvm::errs() << "kiln compile: --dropout-seed takes a non-negative integer, got '" << *v
                     << "'\n";
        return 2;
      }
      train().dropoutSeed = seed;
    } else if (auto v = value("--train-batch")) {
      if (!positiveInteger("--train-batch", *v, train().batch))
        return 2;
    } else if (auto v = value("--cpu")) {
      options.targetOptions.settings["cpu"] = *v;
    } else if (auto v = value("--gpu")) {
      // Several --gpu add up: a cubin for each.
      std::string &gpus = options.targetOptions.settings["gpu"];
      gpus += (gpus.empty() ? "" : ",") + *v;
    } else if (auto v = value("--block-size")) {
      options.targetOptions.settings["block-size"] = *v;
    } else if (arg == "--emulate-gpu") {
      options.targetOptions.settings["emulate"] = "1";
    } else if (arg == "--allow-nondeterministic") {
      options.targetOptions.settings["allow-nondeterministic"] = "1";
    } else if (auto v = value("-o")) {
      options.outputPath = *v;
    } else if (!model.consume(cursor, "compile", exitCode)) {
      llvm::errs() << "kiln compile: unexpected argument '" << arg << "'\n\n";
      printCompileUsage(llvm::errs());
      return 2;
    }
  }
  if (exitCode != 0)
    return exitCode;
  if (model.path.empty() || (options.outputPath.empty() && !options.stopAfter)) {
    printCompileUsage(llvm::errs());
    return 2;
  }
  model.training = options.train.has_value();
  auto source = model.source();
  if (!source) {
    llvm::errs() << "kiln compile: " << llvm::toString(source.takeError()) << "\n";
    return 2;
  }
  // Progress only when an artifact is written (--compile-to prints IR).
  Progress progress("compile", std::size(driver::compileSteps),
                    quiet || options.stopAfter.has_value());
  options.onStep = [&](size_t i) { progress.step(i, driver::compileSteps[i]); };
  auto summary = driver::compile(**source, options);
  progress.finish();
  if (!summary) {
    llvm::errs() << "kiln compile: " << llvm::toString(summary.takeError()) << "\n";
    return 1;
  }
  if (options.stopAfter)
    return 0;
  if (quiet && !report && verifyDir.empty())
    return 0;
  llvm::outs() << "compiled " << model.path << " -> " << options.outputPath << " (target "
               << summary->target << ", hash " << summary->contentHash.substr(0, 16) << ")\n";
  // The file's own hash, to record and check before loading it
  // (`kiln verify-artifact --expect-hash`, kiln_model_load_verified).
  if (auto fileHash = sha256OfFile(options.outputPath))
    llvm::outs() << "sha256 " << *fileHash << "  " << options.outputPath << "\n";
  else
    llvm::consumeError(fileHash.takeError());
  for (const std::string &note : summary->notes)
    llvm::outs() << note << "\n";
  if (report)
    llvm::outs() << summary->report;
  if (verifyDir.empty())
    return 0;
  std::vector<std::string> runArgs = verifyArguments(options.outputPath, verifyDir);
  if (!atol.empty())
    runArgs.insert(runArgs.end(), {"--atol", atol});
  if (!rtol.empty())
    runArgs.insert(runArgs.end(), {"--rtol", rtol});
  std::vector<llvm::StringRef> refs(runArgs.begin(), runArgs.end());
  int rc = runRun(refs);
  if (rc != 0)
    llvm::errs() << "kiln compile: --verify failed for " << options.outputPath << "\n";
  return rc;
}

} // namespace kiln::cli
