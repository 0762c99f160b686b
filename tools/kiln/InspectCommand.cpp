//===- InspectCommand.cpp - `kiln inspect model.so` -----------------------===//
//
// Shows an artifact's compile report (kiln_model_report): the memory plan
// with an SVG timeline of the arena, and the kernels with the model's nodes
// fused into each.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace kiln::cli {

static const char *kInspectUsage =
    "usage: kiln inspect <model.so> [--memory] [--svg FILE] [--kernels] [--inference]\n\n"
    "Shows what the compiler decided for a compiled model (both parts without\n"
    "flags).\n"
    "  --memory     the arena: its size, the liveness lower bound (most bytes\n"
    "               live at once), the naive sum of all intermediates\n"
    "  --svg FILE   and a timeline of the arena (each buffer a rectangle over\n"
    "               its lifetime and bytes) to open in a browser\n"
    "  --kernels    each kernel with the model's nodes in it (a training\n"
    "               step's backward kernels marked [backward])\n"
    "  --inference  a training step's inference entry instead of the step\n";

static std::string kib(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f KiB", bytes / 1024.0);
  return s;
}

/// The arena as an SVG: time (schedule position) across, offset down.
static std::string timelineSvg(const llvm::json::Object &report) {
  const int width = 1000, height = 600, margin = 40;
  int64_t positions = std::max<int64_t>(1, report.getInteger("positions").value_or(1));
  int64_t arena = std::max<int64_t>(1, report.getInteger("arena_bytes").value_or(1));
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width + 2 * margin
     << "\" height=\"" << height + 2 * margin << "\">\n"
     << "<title>Kiln arena: " << kib(arena) << ", lower bound "
     << kib(report.getInteger("lower_bound").value_or(0)) << "</title>\n"
     << "<rect x=\"" << margin << "\" y=\"" << margin << "\" width=\"" << width
     << "\" height=\"" << height << "\" fill=\"none\" stroke=\"black\"/>\n"
     << "<text x=\"" << margin << "\" y=\"" << margin - 10 << "\" font-size=\"14\">arena "
     << kib(arena) << " (offset down, schedule position across)</text>\n";
  // A training step: where its backward pass starts; the buffers live
  // across it (saved activations) are outlined in red.
  int64_t backwardFrom = report.getInteger("backward_from").value_or(-1);
  if (backwardFrom >= 0) {
    double x = margin + width * double(backwardFrom) / positions;
    os << llvm::format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" ", x, margin, x,
                       margin + height)
       << "stroke=\"red\" stroke-dasharray=\"4\"><title>the backward pass starts</title></line>\n";
  }
  if (const llvm::json::Array *buffers = report.getArray("buffers")) {
    int index = 0;
    for (const llvm::json::Value &b : *buffers) {
      const llvm::json::Array *f = b.getAsArray();
      if (!f || f->size() != 4)
        continue;
      int64_t offset = (*f)[0].getAsInteger().value_or(0), size = (*f)[1].getAsInteger().value_or(0);
      int64_t first = (*f)[2].getAsInteger().value_or(0), last = (*f)[3].getAsInteger().value_or(0);
      double x = margin + width * double(first) / positions;
      double w = std::max(1.0, width * double(last + 1 - first) / positions);
      double y = margin + height * double(offset) / arena;
      double h = std::max(1.0, height * double(size) / arena);
      bool saved = backwardFrom >= 0 && first < backwardFrom && last >= backwardFrom;
      os << llvm::format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" ", x, y, w, h)
         << "fill=\"hsl(" << (index * 47) % 360 << ",60%,60%)\" stroke=\""
         << (saved ? "red\" stroke-width=\"1.5\">" : "black\" stroke-width=\"0.3\">")
         << "<title>buffer " << index << ": " << size << " bytes at offset " << offset
         << ", live " << first << ".." << last
         << (saved ? ", saved for the backward pass" : "") << "</title></rect>\n";
      ++index;
    }
  }
  os << "</svg>\n";
  return s;
}

int runInspect(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath, svgPath;
  bool memory = false, kernels = false, inference = false;
  for (ArgumentCursor cursor(args); !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kInspectUsage;
      return 0;
    }
    if (arg == "--memory") {
      memory = true;
    } else if (arg == "--kernels") {
      kernels = true;
    } else if (arg == "--inference") {
      inference = true;
    } else if (auto v = cursor.value("--svg")) {
      svgPath = *v;
      memory = true;
    } else if (!arg.starts_with("-") && modelPath.empty()) {
      modelPath = arg.str();
    } else {
      llvm::errs() << "kiln inspect: unexpected argument '" << arg << "'\n\n" << kInspectUsage;
      return 2;
    }
  }
  if (modelPath.empty()) {
    llvm::errs() << kInspectUsage;
    return 2;
  }
  if (!memory && !kernels)
    memory = kernels = true;
  ModelHandle loaded = loadArtifact("inspect", modelPath);
  if (!loaded)
    return 1;
  kiln_model *model = loaded.get();
  kiln_model *entry = kiln_model_inference(model);
  if (inference) {
    if (!entry) {
      llvm::errs() << "kiln inspect: " << modelPath
                   << " has no inference entry (only kiln compile --train artifacts do)\n";
      return 1;
    }
    std::swap(model, entry);
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(kiln_model_report(model));
  const llvm::json::Object *report = parsed ? parsed->getAsObject() : nullptr;
  if (!report) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    llvm::errs() << "kiln inspect: " << modelPath << " has no readable compile report\n";
    return 1;
  }
  llvm::outs() << "device " << kiln_model_device(model) << ", target "
               << kiln_model_target(model) << "\n  needs processor features: "
               << (*kiln_model_required_features(model) ? kiln_model_required_features(model)
                                                         : "none")
               << "\n";
  if (entry) {
    uint32_t owned = 0, inputs = kiln_model_num_inputs(model);
    for (uint32_t i = 0; i < inputs; ++i)
      owned += kiln_model_input_is_parameter(model, i);
    llvm::outs() << (inference ? "the inference entry of a training step: "
                               : "a training step (kiln compile --train): ")
                 << owned << " of its " << inputs
                 << " inputs are session-owned; the artifact's "
                 << (inference ? "training step" : "inference entry") << ": kiln inspect "
                 << (inference ? "" : "--inference ") << modelPath << "\n";
  }
  if (memory) {
    int64_t arena = report->getInteger("arena_bytes").value_or(0);
    int64_t bound = report->getInteger("lower_bound").value_or(0);
    int64_t naive = report->getInteger("naive_bytes").value_or(0);
    llvm::outs() << "memory: arena " << kib(arena) << " for "
                 << report->getInteger("planned").value_or(0) << " buffers\n"
                 << "  liveness lower bound " << kib(bound);
    if (bound > 0)
      llvm::outs() << llvm::format(" (arena is %.1f%% above it)", 100.0 * (arena - bound) / bound);
    llvm::outs() << "\n  naive sum " << kib(naive) << "\n  "
                 << report->getInteger("in_place").value_or(0)
                 << " buffers written in place of a dead operand\n";
    bool cpu = llvm::StringRef(kiln_model_device(model)) == "cpu";
    if (uint64_t stack = kiln_model_stack_bytes(model))
      llvm::outs() << "  stack: at most " << kib(static_cast<int64_t>(stack))
                   << " per run in generated code (its largest frame and its row "
                      "temporaries; "
                   << (cpu ? "oneDNN's frames" : "the GPU libraries' host frames")
                   << " come on top)\n";
    uint32_t numBuckets = 0;
    const uint64_t *buckets = kiln_model_batch_buckets(model, &numBuckets);
    if (numBuckets) {
      llvm::outs() << "  library calls prepared at session creation for batches ";
      for (uint32_t i = 0; i < numBuckets; ++i)
        llvm::outs() << (i ? ", " : "") << buckets[i];
      llvm::outs() << "\n";
    }
    if (int64_t maxBatch = report->getInteger("max_batch").value_or(0))
      llvm::outs() << "  " << report->getInteger("bounded").value_or(0)
                   << " buffers with dynamic dims, sized for batches up to " << maxBatch << "\n";
    llvm::outs() << "  " << report->getInteger("unplanned").value_or(0)
                 << " buffers with unbounded dynamic dims or escaping come from the "
                    "runtime's pool\n";
    if (auto saved = report->getInteger("saved_bytes"))
      llvm::outs() << "  saved for the backward pass: "
                   << report->getInteger("saved_buffers").value_or(0) << " buffers, "
                   << kib(*saved) << " (live from the forward into the backward)\n";
    if (!svgPath.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream svg(svgPath, ec, llvm::sys::fs::OF_None);
      if (ec) {
        llvm::errs() << "kiln inspect: cannot write '" << svgPath << "': " << ec.message() << "\n";
        return 1;
      }
      svg << timelineSvg(*report);
      llvm::outs() << "  timeline written to " << svgPath << "\n";
    }
  }
  if (kernels) {
    const llvm::json::Array *list = report->getArray("kernels");
    llvm::outs() << "kernels: " << (list ? list->size() : 0) << "\n";
    for (size_t i = 0; list && i < list->size(); ++i) {
      const llvm::json::Object *k = (*list)[i].getAsObject();
      if (!k)
        continue;
      llvm::outs() << "  " << i << ": " << k->getString("kind").value_or("?");
      if (k->getBoolean("backward").value_or(false))
        llvm::outs() << " [backward]";
      if (const llvm::json::Array *ops = k->getArray("ops")) {
        llvm::outs() << " <- ";
        for (size_t j = 0; j < ops->size(); ++j)
          llvm::outs() << (j ? ", " : "") << (*ops)[j].getAsString().value_or("?");
      }
      llvm::outs() << "\n";
    }
    // The backend's count of the code (a CUDA artifact's device code also
    // has the kernels that copy or fill buffers between the model's).
    if (std::optional<llvm::StringRef> code = report->getString("code"))
      llvm::outs() << "code: " << code->drop_front(code->starts_with("kernels: ") ? 9 : 0)
                   << "\n";
    // How the library calls' weights reach the library.
    uint32_t prepacked = 0, plain = 0, varying = 0, calls = kiln_model_library_call_count(model);
    for (uint32_t i = 0; i < calls; ++i) {
      const kiln_library_call *call = kiln_model_library_call(model, i);
      // Pools and concats have no weights.
      if (!call || (call->kind != KILN_LIBRARY_CONV && call->kind != KILN_LIBRARY_MATMUL))
        continue;
      if (call->weights_layout)
        ++prepacked;
      else if (call->weights)
        ++plain;
      else
        ++varying;
    }
    // (How oneDNN takes weights: the CPU's; a GPU's calls read them as they are.)
    if (prepacked + plain + varying && llvm::StringRef(kiln_model_device(model)) == "cpu")
      llvm::outs() << "weights: " << prepacked
                   << " prepacked in the library's layout at compile time (used in place when "
                      "this host's library picks the same layout, repacked once otherwise), "
                   << plain
                   << " constant and stored plain (a session packs them if its library "
                      "wants another layout), "
                   << varying << " computed at run time\n";
  }
  return 0;
}

} // namespace kiln::cli
