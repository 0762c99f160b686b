//===- ExportWeightsCommand.cpp - `kiln export-weights` -------------------===//
//
// Writes trained values back into the ONNX model they came from: the
// tensors of a checkpoint (kiln_session_save_state: a training session's
// parameters, optimiser state and running statistics) replace the
// initializers of the same names, each checked for its element type and
// dims; the other tensors (optimiser state) are skipped and counted. The
// result is the model as given with new weights: compile it for
// inference, or train on from it.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "frontends/onnx/ModelLoader.h"
#include "onnx/onnx.pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <map>

namespace kiln::cli {

static void printExportUsage(llvm::raw_ostream &os) {
  os << "usage: kiln export-weights <model.onnx> <checkpoint> -o <out.onnx> [--inference]\n\n"
        "Writes a copy of the ONNX model (the one given to `kiln compile --train`)\n"
        "whose initializers hold the values of the checkpoint's tensors of the\n"
        "same names (a checkpoint: kiln_session_save_state, session.save_state in\n"
        "Python). Element types and dims must match; checkpoint tensors that name\n"
        "no initializer (optimiser state) are skipped.\n"
        "  --inference  also switch nodes exported in training mode to inference:\n"
        "               Dropout's training_mode input and BatchNormalization's\n"
        "               training_mode attribute (with its unread statistics\n"
        "               outputs) are removed\n";
}

/// Dropout and BatchNormalization nodes in training mode switched to
/// inference; returns how many, or -1 (with a message) when a node's
/// training-only output is read.
static int64_t switchToInference(onnx::GraphProto &graph) {
  int64_t switched = 0;
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    if (node.op_type() == "Dropout" && node.input_size() > 2) {
      node.mutable_input()->DeleteSubrange(2, node.input_size() - 2);
      ++switched;
    } else if (node.op_type() == "BatchNormalization") {
      auto *attributes = node.mutable_attribute();
      for (int i = 0; i < attributes->size(); ++i)
        if ((*attributes)[i].name() == "training_mode" && (*attributes)[i].i() != 0) {
          attributes->DeleteSubrange(i, 1);
          ++switched;
          break;
        }
    } else {
      continue;
    }
    // Outputs past the first (a mask, running statistics) are training's.
    for (int i = node.output_size() - 1; i >= 1; --i) {
      if (onnx_frontend::isRead(graph, node.output(i))) {
        llvm::errs() << "kiln export-weights: --inference: output '" << node.output(i)
                     << "' of " << node.op_type() << " node '" << node.name()
                     << "' is read; it exists only in training\n";
        return -1;
      }
      node.mutable_output()->RemoveLast();
    }
  }
  return switched;
}

/// The ONNX element type of a kiln dtype, or 0.
static int onnxType(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32: return onnx::TensorProto::FLOAT;
  case KILN_DTYPE_F64: return onnx::TensorProto::DOUBLE;
  case KILN_DTYPE_F16: return onnx::TensorProto::FLOAT16;
  case KILN_DTYPE_BF16: return onnx::TensorProto::BFLOAT16;
  case KILN_DTYPE_I64: return onnx::TensorProto::INT64;
  case KILN_DTYPE_I32: return onnx::TensorProto::INT32;
  default: return 0;
  }
}

int runExportWeights(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath, checkpointPath, outPath;
  bool inference = false;
  ArgumentCursor cursor(args);
  for (; !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    if (arg == "--help" || arg == "-h") {
      printExportUsage(llvm::outs());
      return 0;
    }
    if (arg == "--inference") {
      inference = true;
    } else if (auto v = cursor.value("-o")) {
      outPath = *v;
    } else if (!arg.starts_with("-") && modelPath.empty()) {
      modelPath = arg.str();
    } else if (!arg.starts_with("-") && checkpointPath.empty()) {
      checkpointPath = arg.str();
    } else {
      llvm::errs() << "kiln export-weights: unexpected argument '" << arg << "'\n\n";
      printExportUsage(llvm::errs());
      return 2;
    }
  }
  if (modelPath.empty() || checkpointPath.empty() || outPath.empty()) {
    printExportUsage(llvm::errs());
    return 2;
  }
  auto loaded = onnx_frontend::loadModel(modelPath);
  if (!loaded) {
    llvm::errs() << "kiln export-weights: " << llvm::toString(loaded.takeError()) << "\n";
    return 1;
  }
  kiln_checkpoint *checkpoint = nullptr;
  if (kiln_checkpoint_open(checkpointPath.c_str(), &checkpoint) != KILN_OK) {
    llvm::errs() << "kiln export-weights: " << kiln_last_error() << "\n";
    return 1;
  }
  std::unique_ptr<kiln_checkpoint, void (*)(kiln_checkpoint *)> owned(checkpoint,
                                                                       kiln_checkpoint_free);
  std::map<std::string, kiln_tensor> tensors;
  for (uint32_t i = 0; i < kiln_checkpoint_count(checkpoint); ++i) {
    const char *name;
    kiln_tensor t;
    (void)kiln_checkpoint_tensor(checkpoint, i, &name, &t);
    tensors[name] = t;
  }
  onnx::GraphProto *graph = loaded->proto->mutable_graph();
  size_t written = 0, external = 0;
  for (onnx::TensorProto &initializer : *graph->mutable_initializer()) {
    auto found = tensors.find(initializer.name());
    if (found == tensors.end()) {
      external += initializer.data_location() == onnx::TensorProto::EXTERNAL;
      continue;
    }
    const kiln_tensor &t = found->second;
    bool same = onnxType(t.dtype) == initializer.data_type() &&
                t.rank == initializer.dims_size();
    for (int32_t d = 0; same && d < t.rank; ++d)
      same = t.dims[d] == initializer.dims(d);
    if (!same) {
      llvm::errs() << "kiln export-weights: checkpoint tensor '" << found->first << "' ("
                   << kiln_dtype_name(t.dtype) << ", " << t.rank
                   << " dims) does not match the model's initializer of that name\n";
      return 1;
    }
    size_t bytes = kiln_dtype_size(t.dtype);
    for (int32_t d = 0; d < t.rank; ++d)
      bytes *= static_cast<size_t>(t.dims[d]);
    // The value inline, whatever form it had (typed fields, external data).
    std::vector<int64_t> dims(initializer.dims().begin(), initializer.dims().end());
    std::string name = initializer.name();
    int type = initializer.data_type();
    initializer.Clear();
    initializer.set_name(name);
    initializer.set_data_type(type);
    for (int64_t d : dims)
      initializer.add_dims(d);
    initializer.set_raw_data(t.data, bytes);
    tensors.erase(found);
    ++written;
  }
  if (written == 0) {
    llvm::errs() << "kiln export-weights: no tensor of '" << checkpointPath
                 << "' names an initializer of '" << modelPath
                 << "' (was the checkpoint saved from this model's training step?)\n";
    return 1;
  }
  // Initializers left in external files are found next to the model.
  if (external) {
    llvm::SmallString<256> from(modelPath), to(outPath);
    llvm::sys::fs::make_absolute(from);
    llvm::sys::fs::make_absolute(to);
    if (llvm::sys::path::parent_path(from) != llvm::sys::path::parent_path(to))
      llvm::errs() << "kiln export-weights: warning: " << external
                   << " initializers stay in external data files, which the output finds "
                      "only in the model's folder\n";
  }
  int64_t switched = 0;
  if (inference && (switched = switchToInference(*graph)) < 0)
    return 1;
  std::string partial = outPath + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out || !loaded->proto->SerializeToOstream(&out) || !out.flush()) {
      llvm::sys::fs::remove(partial);
      llvm::errs() << "kiln export-weights: cannot write '" << outPath << "'\n";
      return 1;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(partial, outPath)) {
    llvm::sys::fs::remove(partial);
    llvm::errs() << "kiln export-weights: cannot write '" << outPath << "': " << ec.message()
                 << "\n";
    return 1;
  }
  llvm::outs() << "wrote " << outPath << ": " << written << " initializers from "
               << checkpointPath << " (" << tensors.size()
               << " checkpoint tensors name no initializer: optimiser state)";
  if (inference)
    llvm::outs() << "; " << switched << " nodes switched from training to inference";
  llvm::outs() << "\n";
  return 0;
}

} // namespace kiln::cli
