//===- OpRegistry.cpp - the table of ONNX op importers --------------------===//

#include "frontends/onnx/OpRegistry.h"

#include <algorithm>
#include <set>

namespace kiln::onnx_frontend {

const OpRegistry &OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerActivationOps(r);
    registerMathOps(r);
    registerNNOps(r);
    registerNormalizationOps(r);
    registerReductionOps(r);
    registerShapeOps(r);
    registerIndexingOps(r);
    registerGeneratorOps(r);
    registerGatherScatterOps(r);
    registerSortOps(r);
    registerLinearAlgebraOps(r);
    registerLossOps(r);
    registerResizeOps(r);
    registerRecurrentOps(r);
    registerQuantizationOps(r);
    registerAttentionOps(r);
    registerControlFlowOps(r);
    registerSequenceOps(r);
    registerOptimizerOps(r);
    registerTextOps(r);
    registerStringOps(r);
    registerMlOps(r);
    registerTreeOps(r);
    registerPadOps(r);
    registerGridSampleOps(r);
    registerSpectralOps(r);
    registerDetectionOps(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(llvm::StringRef opType, int64_t minOpset,
                     int64_t maxOpset, NodeImportFn fn,
                     llvm::StringRef domain) {
  rows.push_back({domain.str(), opType.str(), minOpset, maxOpset, fn});
}

const OpImporter *OpRegistry::lookup(llvm::StringRef domain,
                                     llvm::StringRef opType,
                                     int64_t opset) const {
  if (domain == "ai.onnx")
    domain = "";
  for (const OpImporter &row : rows)
    if (row.domain == domain && row.opType == opType &&
        opset >= row.minOpset && opset <= row.maxOpset)
      return &row;
  return nullptr;
}

bool OpRegistry::knowsOp(llvm::StringRef domain, llvm::StringRef opType) const {
  if (domain == "ai.onnx")
    domain = "";
  return std::any_of(rows.begin(), rows.end(), [&](const OpImporter &row) {
    return row.domain == domain && row.opType == opType;
  });
}

std::string OpRegistry::describeRanges(llvm::StringRef domain,
                                       llvm::StringRef opType) const {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const OpImporter &row : rows)
    if (row.domain == domain && row.opType == opType)
      ranges.push_back({row.minOpset, row.maxOpset});
  std::sort(ranges.begin(), ranges.end());
  std::string out;
  for (auto [lo, hi] : ranges) {
    out += out.empty() ? "" : ", ";
    out += std::to_string(lo);
    out += hi == kAnyLaterOpset ? "+" : "-" + std::to_string(hi);
  }
  return out;
}

std::vector<std::string> OpRegistry::opTypes(llvm::StringRef domain) const {
  std::set<std::string> types;
  for (const OpImporter &row : rows)
    if (row.domain == domain)
      types.insert(row.opType);
  return {types.begin(), types.end()};
}

} // namespace kiln::onnx_frontend
