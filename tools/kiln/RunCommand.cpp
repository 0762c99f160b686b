//===- RunCommand.cpp - `kiln run model.so --input x=x.npy ...` -----------===//
//
// Loads an artifact through the runtime's C API, runs it on tensors read
// from .npy / .pb files, writes the outputs as .npy and compares them with
// expected outputs (max abs and relative error, and numpy's allclose rule
// |got - want| <= atol + rtol * |want|).
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"
#include "tools/kiln/Arguments.h"
#include "compiler/Driver/Driver.h"
#include "tools/kiln/Commands.h"
#include "tools/kiln/ModelInput.h"
#include "tools/kiln/TensorFiles.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>

namespace kiln::cli {

static const char *kRunUsage =
    "usage: kiln run <model.so|model.onnx|model.mlir|model.mlirbc> --input NAME=FILE...\n"
    "                [options]\n\n"
    "Runs a compiled model on tensors from .npy or ONNX .pb files (a model file\n"
    "is compiled first, for this CPU, into a temporary folder).\n"
    "  --input NAME=FILE      an input (NAME may be left out for a single input,\n"
    "                         or be @I for the I-th input)\n"
    "  --expected NAME=FILE   compare output NAME with FILE\n"
    "  --atol A, --rtol R     tolerance: |got - want| <= A + R * |want|\n"
    "                         (defaults 1e-7 and 1e-3, ONNX's rule)\n"
    "  --max-relative-error E fail when max abs error / max |want| exceeds E\n"
    "                         (the measure for models whose outputs are tiny)\n"
    "  --output-dir DIR       write every output as DIR/NAME.npy\n"
    "  --dump NODE,...        (a model file) also write these model nodes' results\n"
    "                         as DIR/NODE.npy (DIR: --output-dir, default kiln-dump),\n"
    "                         saying which kernel computes each\n";

/// Compiles the model file `path` into `dir`/model.so with `nodes` as
/// extra outputs; prints why not and returns "" on failure.
static std::string compileForRun(const std::string &path, const std::vector<std::string> &nodes,
                                 llvm::StringRef dir) {
  ModelInput model;
  model.path = path;
  auto source = model.source();
  if (!source) {
    llvm::errs() << "kiln run: " << llvm::toString(source.takeError()) << "\n";
    return "";
  }
  driver::CompileOptions options;
  options.outputPath = (dir + "/model.so").str();
  options.extraOutputs = nodes;
  auto summary = driver::compile(**source, options);
  if (!summary) {
    llvm::errs() << "kiln run: " << llvm::toString(summary.takeError()) << "\n";
    return "";
  }
  return options.outputPath;
}

/// "kernel #k (kind, with its other nodes)" of the report that computes
/// model node `node`.
static std::string kernelOf(kiln_model *model, llvm::StringRef node) {
  auto parsed = llvm::json::parse(kiln_model_report(model) ? kiln_model_report(model) : "");
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return "no kernel report";
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *kernels = root ? root->getArray("kernels") : nullptr;
  for (size_t k = 0; kernels && k < kernels->size(); ++k) {
    const llvm::json::Object *kernel = (*kernels)[k].getAsObject();
    const llvm::json::Array *ops = kernel ? kernel->getArray("ops") : nullptr;
    if (!ops || llvm::none_of(*ops, [&](const llvm::json::Value &v) {
          return v.getAsString() == node;
        }))
      continue;
    std::string text = "kernel #" + std::to_string(k) + " (" +
                       kernel->getString("kind").value_or("kernel").str();
    std::string others;
    for (const llvm::json::Value &v : *ops)
      if (auto name = v.getAsString(); name && *name != node)
        others += (others.empty() ? "" : ", ") + name->str();
    return text + (others.empty() ? "" : ", with " + others) + ")";
  }
  return "no kernel (folded at compile time)";
}

int runRun(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath, outputDir;
  std::vector<std::string> dumpNodes;
  std::vector<std::pair<std::string, std::string>> inputs, expected;
  double atol = 1e-7, rtol = 1e-3, maxRelative = -1;
  for (ArgumentCursor cursor(args); !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    auto value = [&](llvm::StringRef flag) { return cursor.value(flag); };
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kRunUsage;
      return 0;
    }
    if (auto v = value("--input"))
      inputs.push_back(splitNameFile(*v));
    else if (auto v = value("--expected"))
      expected.push_back(splitNameFile(*v));
    else if (auto v = value("--output-dir"))
      outputDir = *v;
    else if (auto v = value("--dump")) {
      llvm::SmallVector<llvm::StringRef> names;
      llvm::StringRef(*v).split(names, ',', -1, false);
      for (llvm::StringRef n : names)
        dumpNodes.push_back(n.str());
    }
    else if (auto v = value("--atol"))
      atol = std::atof(v->c_str());
    else if (auto v = value("--rtol"))
      rtol = std::atof(v->c_str());
    else if (auto v = value("--max-relative-error"))
      maxRelative = std::atof(v->c_str());
    else if (!arg.starts_with("-") && modelPath.empty())
      modelPath = arg.str();
    else {
      llvm::errs() << "kiln run: unexpected argument '" << arg << "'\n\n" << kRunUsage;
      return 2;
    }
  }
  if (modelPath.empty()) {
    llvm::errs() << kRunUsage;
    return 2;
  }
  // A model file is compiled first (with the dumped nodes as outputs).
  llvm::StringRef ext = llvm::sys::path::extension(modelPath);
  bool modelFile = ext == ".onnx" || ext == ".mlir" || ext == ".mlirbc";
  if (!dumpNodes.empty() && !modelFile) {
    llvm::errs() << "kiln run: --dump needs the model (.onnx, .mlir or .mlirbc), not an artifact: "
                    "a compiled model keeps no intermediate tensors (fusion keeps most out of "
                    "memory), so Kiln compiles the model again with those nodes as outputs\n";
    return 2;
  }
  if (!dumpNodes.empty() && outputDir.empty())
    outputDir = "kiln-dump";
  llvm::SmallString<128> work;
  llvm::scope_exit removeWork([&] {
    if (!work.empty())
      llvm::sys::fs::remove_directories(work);
  });
  std::string artifactPath = modelPath;
  if (modelFile) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-run", work)) {
      llvm::errs() << "kiln run: cannot create a temporary folder: " << ec.message() << "\n";
      return 1;
    }
    artifactPath = compileForRun(modelPath, dumpNodes, work);
    if (artifactPath.empty())
      return 1;
  }
  ModelHandle loaded = loadArtifact("run", artifactPath);
  if (!loaded)
    return 1;
  kiln_model *model = loaded.get();
  // The inputs the caller gives (a training step's parameters are the
  // session's).
  std::vector<uint32_t> inputIndex = callerInputs(model);
  uint32_t numInputs = static_cast<uint32_t>(inputIndex.size());
  std::vector<HostTensor> hostInputs(numInputs);
  std::vector<bool> given(numInputs, false);
  for (auto &[name, file] : inputs) {
    uint32_t index = numInputs;
    for (uint32_t i = 0; i < numInputs; ++i)
      if (name == kiln_model_input(model, inputIndex[i])->name || (name.empty() && numInputs == 1) ||
          name == "@" + std::to_string(i))
        index = i;
    if (index == numInputs) {
      llvm::errs() << "kiln run: the model has no input named '" << name << "'; its inputs are:";
      for (uint32_t i = 0; i < numInputs; ++i)
        llvm::errs() << " " << kiln_model_input(model, inputIndex[i])->name;
      llvm::errs() << "\n";
      return 1;
    }
    auto tensor = readTensor(file);
    if (!tensor) {
      llvm::errs() << "kiln run: " << llvm::toString(tensor.takeError()) << "\n";
      return 1;
    }
    if (tensor->dtype == KILN_DTYPE_U16 && kiln_model_input(model, inputIndex[index])->dtype == KILN_DTYPE_BF16)
      tensor->dtype = KILN_DTYPE_BF16; // ONNX's test data stores bfloat16 bits as uint16
    hostInputs[index] = std::move(*tensor);
    given[index] = true;
  }
  std::vector<kiln_tensor> runInputs(numInputs);
  for (uint32_t i = 0; i < numInputs; ++i) {
    if (!given[i]) {
      llvm::errs() << "kiln run: input '" << kiln_model_input(model, inputIndex[i])->name
                   << "' is not given (--input " << kiln_model_input(model, inputIndex[i])->name
                   << "=FILE)\n";
      return 1;
    }
    if (hostInputs[i].dims.size() > KILN_MAX_RANK) {
      llvm::errs() << "kiln run: input rank too large\n";
      return 1;
    }
    if (hostInputs[i].dtype == KILN_DTYPE_STRING)
      hostInputs[i].pointStrings();
    runInputs[i].data = hostInputs[i].bytes.data();
    runInputs[i].dtype = hostInputs[i].dtype;
    runInputs[i].rank = static_cast<int32_t>(hostInputs[i].dims.size());
    for (size_t d = 0; d < hostInputs[i].dims.size(); ++d)
      runInputs[i].dims[d] = hostInputs[i].dims[d];
  }
  kiln_session *session = nullptr;
  if (kiln_session_create(model, &session) != KILN_OK) {
    llvm::errs() << "kiln run: " << kiln_last_error() << "\n";
    return 1;
  }
  llvm::scope_exit freeSession([&] { kiln_session_free(session); });
  auto start = std::chrono::steady_clock::now();
  kiln_status status = kiln_session_run(session, runInputs.data(), numInputs);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (status != KILN_OK) {
    llvm::errs() << "kiln run: " << kiln_status_name(status) << ": " << kiln_last_error() << "\n";
    return 1;
  }
  llvm::outs() << "ran " << modelPath << " in " << llvm::format("%.2f", ms) << " ms\n";
  bool allMatch = true;
  for (uint32_t i = 0; i < kiln_model_num_outputs(model); ++i) {
    kiln_tensor out;
    if (kiln_session_output(session, i, &out) != KILN_OK) {
      llvm::errs() << "kiln run: " << kiln_last_error() << "\n";
      return 1;
    }
    std::string name = kiln_model_output(model, i)->name;
    int64_t count = 1;
    llvm::outs() << "output " << name << ": " << kiln_dtype_name(out.dtype) << " [";
    for (int32_t d = 0; d < out.rank; ++d) {
      llvm::outs() << (d ? ", " : "") << out.dims[d];
      count *= out.dims[d];
    }
    llvm::outs() << "]";
    if (!outputDir.empty() && out.dtype == KILN_DTYPE_STRING) {
      llvm::errs() << "\nkiln run: output '" << name
                   << "' holds strings, which --output-dir does not write (.npy)\n";
      return 1;
    }
    if (!outputDir.empty()) {
      HostTensor t;
      t.dtype = out.dtype;
      t.dims.assign(out.dims, out.dims + out.rank);
      const char *bytes = static_cast<const char *>(out.data);
      t.bytes.assign(bytes, bytes + count * kiln_dtype_size(out.dtype));
      llvm::sys::fs::create_directories(outputDir);
      llvm::SmallString<256> file(outputDir);
      std::string safe = name;
      for (char &c : safe)
        if (c == '/' || c == '\\')
          c = '_';
      llvm::sys::path::append(file, safe + ".npy");
      if (llvm::Error e = writeNpy(file, t)) {
        llvm::errs() << "\nkiln run: " << llvm::toString(std::move(e)) << "\n";
        return 1;
      }
    }
    for (auto &[want, file] : expected) {
      if (!(want == name || (want.empty() && kiln_model_num_outputs(model) == 1) ||
            want == "@" + std::to_string(i)))
        continue;
      auto reference = readTensor(file);
      if (!reference) {
        llvm::errs() << "\nkiln run: " << llvm::toString(reference.takeError()) << "\n";
        return 1;
      }
      if (reference->dtype == KILN_DTYPE_U16 && out.dtype == KILN_DTYPE_BF16)
        reference->dtype = KILN_DTYPE_BF16; // bfloat16 bits stored as uint16
      if (reference->numElements() != count ||
          reference->dims != std::vector<int64_t>(out.dims, out.dims + out.rank)) {
        llvm::outs() << "  MISMATCH: expected dims differ\n";
        allMatch = false;
        continue;
      }
      if (out.dtype == KILN_DTYPE_STRING || reference->dtype == KILN_DTYPE_STRING) {
        // Strings match exactly.
        int64_t bad = 0, first = -1;
        for (int64_t k = 0; k < count; ++k) {
          const char *g = nullptr;
          if (out.dtype == KILN_DTYPE_STRING)
            std::memcpy(&g, static_cast<const char *>(out.data) + k * sizeof(g), sizeof(g));
          bool same = g && reference->dtype == KILN_DTYPE_STRING &&
                      reference->strings[k] == g;
          if (!same && bad++ == 0)
            first = k;
        }
        if (bad) {
          llvm::outs() << "  MISMATCH: " << bad << " of " << count << " strings differ";
          if (out.dtype == KILN_DTYPE_STRING && reference->dtype == KILN_DTYPE_STRING) {
            const char *g;
            std::memcpy(&g, static_cast<const char *>(out.data) + first * sizeof(g), sizeof(g));
            llvm::outs() << " (element " << first << ": '" << (g ? g : "(null)") << "', expected '"
                         << reference->strings[first] << "')";
          } else {
            llvm::outs() << " (one holds strings, the other numbers)";
          }
        } else {
          llvm::outs() << "  all " << count << " strings match";
        }
        allMatch &= bad == 0;
        continue;
      }
      double maxAbs = 0, maxRef = 0;
      int64_t bad = 0;
      for (int64_t k = 0; k < count; ++k) {
        double g = elementAsDouble(out.dtype, out.data, k);
        double w = elementAsDouble(*reference, k);
        double err = std::fabs(g - w);
        // NaN matches NaN and an infinity the same infinity; any other
        // pairing with a NaN or an infinity is a mismatch (the tolerance
        // of a NaN or infinite reference would otherwise admit anything).
        bool nanSame = std::isnan(g) && std::isnan(w);
        bool infSame = std::isinf(g) && g == w;
        bool special = !std::isfinite(g) || !std::isfinite(w);
        if (nanSame || infSame)
          err = 0;
        else if (special)
          err = INFINITY;
        maxAbs = std::max(maxAbs, err);
        if (std::isfinite(w))
          maxRef = std::max(maxRef, std::fabs(w));
        if (err > atol + rtol * std::fabs(w) || (special && err != 0))
          ++bad;
      }
      double rel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
      llvm::outs() << "  max abs error " << llvm::format("%.3g", maxAbs) << ", relative "
                   << llvm::format("%.3g", rel);
      if (maxRelative >= 0) {
        // Judged by the relative error alone.
        bool ok = rel <= maxRelative;
        llvm::outs() << (ok ? ", within " : ", MISMATCH: above ") << maxRelative;
        allMatch &= ok;
      } else {
        llvm::outs() << (bad ? ", MISMATCH: " : ", within tolerance");
        if (bad)
          llvm::outs() << bad << " of " << count << " elements outside atol " << atol
                       << " + rtol " << rtol;
        allMatch &= bad == 0;
      }
    }
    llvm::outs() << "\n";
  }
  for (const std::string &node : dumpNodes)
    llvm::outs() << "dumped " << node << " (" << kernelOf(model, node) << ")\n";
  return allMatch ? 0 : 1;
}

} // namespace kiln::cli
