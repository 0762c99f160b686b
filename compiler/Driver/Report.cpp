//===- Report.cpp - the compile report ------------------------------------===//

#include "compiler/Driver/Report.h"

#include "compiler/Autodiff/Backward.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace kiln::driver {

/// The model's node names a location carries (a fused location: all).
static void namesOf(Location loc, std::vector<std::string> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    // A backward op: the forward node it differentiates.
    if (name.getName() == autodiff::kBackwardMark)
      return namesOf(name.getChildLoc(), names);
    std::string n = name.getName().str();
    if (!llvm::is_contained(names, n))
      names.push_back(n);
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      namesOf(inner, names);
  }
}

/// Bytes of a tensor value (dynamic dims as 1); sets `dynamic` if any.
static int64_t bytesOf(Value v, bool &dynamic) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isIntOrFloat())
    return 0;
  int64_t n = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      dynamic = true;
    else
      n *= d;
  }
  return n;
}

llvm::json::Array listKernels(ModuleOp module, llvm::StringRef entryName,
                              const Backend &backend, const std::vector<LibraryCall> &calls,
                              bool mark) {
  llvm::json::Array kernels;
  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry)
    return kernels;
  func::FuncOp marker;
  if (mark) {
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    marker = b.create<func::FuncOp>(module.getLoc(), "kiln_kernel_begin",
                                    b.getFunctionType({b.getI32Type()}, {}));
    marker.setPrivate();
  }
  for (Operation &op : llvm::make_early_inc_range(entry.getBody().front())) {
    std::string kind;
    if (auto call = dyn_cast<LibraryCallOp>(op))
      kind = backend.libraryCallLabel(calls.at(call.getId()));
    else if (auto strings = dyn_cast<StringOp>(op))
      kind = "string function (" + strings.getKind().str() + ")";
    else if (isa<linalg::LinalgOp, tensor::PadOp>(op)) // a pad: a fill and a copy
      kind = "loop nest (" + op.getName().getStringRef().str() + ")";
    else if (isa<scf::ForallOp>(op))
      kind = "row loop (reduction kernel)";
    else
      continue;
    std::vector<std::string> names;
    namesOf(op.getLoc(), names);
    llvm::json::Array ops;
    for (const std::string &n : names)
      ops.push_back(n);
    // What it reads and writes: its operands (not the destinations a
    // destination-style op writes into: those are its results) and results.
    bool dynamic = false;
    int64_t bytes = 0;
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    // A call writing into a concatenation (kiln.output_into): its own
    // channels of the concatenation's tensor, its last operand and result.
    auto library = dyn_cast<LibraryCallOp>(op);
    bool into = library && library->hasAttr(KilnDialect::OutputIntoAttrHelper::getNameStr());
    for (OpOperand &operand : op.getOpOperands())
      if ((!dps || !dps.isDpsInit(&operand)) &&
          !(into && operand.getOperandNumber() + 1 == op.getNumOperands()))
        bytes += bytesOf(operand.get(), dynamic);
    for (Value result : op.getResults()) {
      int64_t written = bytesOf(result, dynamic);
      if (into) {
        auto whole = cast<RankedTensorType>(result.getType());
        auto weight = cast<RankedTensorType>(library.getOperands()[1].getType());
        written = written / whole.getDimSize(1) * weight.getDimSize(0);
      }
      bytes += written;
    }
    if (mark) {
      OpBuilder b(&op);
      Value index = b.create<arith::ConstantIntOp>(op.getLoc(), b.getI32Type(),
                                                   static_cast<int64_t>(kernels.size()));
      b.create<func::CallOp>(op.getLoc(), marker, ValueRange{index});
    }
    llvm::json::Object kernel{{"kind", kind}, {"ops", std::move(ops)}, {"bytes", bytes}};
    if (dynamic)
      kernel["dynamic"] = true;
    if (autodiff::isBackward(op.getLoc()))
      kernel["backward"] = true;
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

MemoryPlanSummary readMemoryPlan(ModuleOp module, llvm::StringRef entryName) {
  MemoryPlanSummary summary;
  auto entry = module.lookupSymbol(entryName);
  if (!entry)
    return summary;
  DictionaryAttr plan = KilnDialect::MemoryPlanAttrHelper(module.getContext()).getAttr(entry);
  if (!plan)
    return summary;
  auto get = [&](llvm::StringRef key) {
    auto v = plan.getAs<IntegerAttr>(key);
    return v ? v.getInt() : 0;
  };
  summary.arenaBytes = get("arena_bytes");
  summary.lowerBound = get("lower_bound");
  summary.naiveBytes = get("naive_bytes");
  summary.planned = get("planned");
  summary.unplanned = get("unplanned");
  summary.inPlace = get("in_place");
  summary.bounded = get("bounded");
  summary.maxBatch = get("max_batch");
  summary.positions = get("positions");
  if (auto buffers = plan.getAs<DenseI64ArrayAttr>("buffers"))
    summary.buffers.assign(buffers.asArrayRef().begin(), buffers.asArrayRef().end());
  summary.backwardFrom = plan.get("backward_from") ? get("backward_from") : -1;
  if (summary.backwardFrom >= 0)
    for (size_t i = 0; i + 4 <= summary.buffers.size(); i += 4)
      if (summary.buffers[i + 2] < summary.backwardFrom &&
          summary.buffers[i + 3] >= summary.backwardFrom) {
        ++summary.savedBuffers;
        summary.savedBytes += summary.buffers[i + 1];
      }
  return summary;
}

std::string buildReport(const MemoryPlanSummary &plan, llvm::json::Array kernels,
                        const std::string &code) {
  llvm::json::Array buffers;
  for (size_t i = 0; i + 4 <= plan.buffers.size(); i += 4)
    buffers.push_back(llvm::json::Array{plan.buffers[i], plan.buffers[i + 1],
                                        plan.buffers[i + 2], plan.buffers[i + 3]});
  llvm::json::Object report{{"arena_bytes", plan.arenaBytes},
                            {"lower_bound", plan.lowerBound},
                            {"naive_bytes", plan.naiveBytes},
                            {"planned", plan.planned},
                            {"unplanned", plan.unplanned},
                            {"in_place", plan.inPlace},
                            {"bounded", plan.bounded},
                            {"max_batch", plan.maxBatch},
                            {"positions", plan.positions},
                            {"buffers", std::move(buffers)},
                            {"kernels", std::move(kernels)},
                            {"code", code}};
  if (plan.backwardFrom >= 0) {
    report["backward_from"] = plan.backwardFrom;
    report["saved_buffers"] = plan.savedBuffers;
    report["saved_bytes"] = plan.savedBytes;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(report));
  return text;
}

std::string describeMemoryPlan(const MemoryPlanSummary &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto kib = [](int64_t bytes) { return llvm::format("%.1f KiB", bytes / 1024.0); };
  os << "memory: arena " << kib(plan.arenaBytes) << " for " << plan.planned
     << " buffers (liveness lower bound " << kib(plan.lowerBound) << ", naive sum "
     << kib(plan.naiveBytes) << "); " << plan.inPlace << " written in place of a dead operand";
  if (plan.maxBatch)
    os << "; " << plan.bounded << " with dynamic dims sized for batch " << plan.maxBatch;
  os << "; " << plan.unplanned
     << " buffers with unbounded dynamic dims or escaping come from the pool";
  if (plan.backwardFrom >= 0)
    os << "\n  saved for the backward pass: " << plan.savedBuffers << " buffers, "
       << kib(plan.savedBytes) << " (live from the forward into the backward)";
  return text;
}

} // namespace kiln::driver
