//===- PackChunkCalls.cpp - chunk calls -> runtime parallel_for -----------===//
//
// Implements kiln-pack-chunk-calls, the second half of running generated
// loop nests on the runtime's threads. On the LLVM dialect the arguments of
// a chunk call are plain values (memref descriptors expanded into fields),
// so they pack into one stack struct that a trampoline `(ptr, i64, i64)`
// unpacks: the one signature the runtime's parallel_for knows.
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/Passes.h"

namespace kiln::cpu {
#define GEN_PASS_DEF_PACKCHUNKCALLS
#include "backends/cpu/Passes.h.inc"
} // namespace kiln::cpu

using namespace mlir;
using namespace kiln::cpu;

namespace {

/// `chunk`'s trampoline: loads the arguments from the context and calls it.
LLVM::LLVMFuncOp buildEntry(OpBuilder &b, LLVM::LLVMFuncOp chunk,
                            LLVM::LLVMStructType context) {
  MLIRContext *ctx = b.getContext();
  Location loc = chunk.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, i64, i64});
  b.setInsertionPointAfter(chunk);
  auto entry = LLVM::LLVMFuncOp::create(b, loc, (chunk.getName() + "_entry").str(), type,
                                        LLVM::Linkage::Internal);
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  SmallVector<Value> args;
  for (auto [i, field] : llvm::enumerate(context.getBody())) {
    Value address = LLVM::GEPOp::create(b, loc, ptr, context, block->getArgument(0),
                                        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, field, address));
  }
  args.push_back(block->getArgument(1));
  args.push_back(block->getArgument(2));
  LLVM::CallOp::create(b, loc, chunk, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return entry;
}

struct PackChunkCalls : kiln::cpu::impl::PackChunkCallsBase<PackChunkCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);

    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      auto callee = call.getCallee();
      if (callee && callee->starts_with(kChunkPrefix) && !callee->ends_with("_entry"))
        calls.push_back(call);
    });
    if (calls.empty())
      return;

    OpBuilder b(ctx);
    auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelForSymbol);
    if (!parallelFor) {
      b.setInsertionPointToStart(module.getBody());
      parallelFor = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), kParallelForSymbol,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr, i64, i64}));
    }

    llvm::DenseMap<Operation *, LLVM::LLVMFuncOp> entries;
    for (LLVM::CallOp call : calls) {
      auto chunk = module.lookupSymbol<LLVM::LLVMFuncOp>(*call.getCallee());
      ValueRange args = call.getArgOperands();
      if (!chunk || args.size() < 2 || args[args.size() - 2].getType() != i64 ||
          args.back().getType() != i64) {
        call.emitError("chunk call without an (i64 begin, i64 end) range");
        return signalPassFailure();
      }
      // Chunks are reached only through their trampolines.
      chunk.setLinkage(LLVM::Linkage::Internal);
      auto context = LLVM::LLVMStructType::getLiteral(
          ctx, llvm::to_vector(args.drop_back(2).getTypes()));
      LLVM::LLVMFuncOp &entry = entries[chunk];
      if (!entry)
        entry = buildEntry(b, chunk, context);

      // The context lives in the caller's frame, allocated once on entry.
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      b.setInsertionPointToStart(&caller.getBody().front());
      Value one = LLVM::ConstantOp::create(b, call.getLoc(), i64, b.getI64IntegerAttr(1));
      Value frame = LLVM::AllocaOp::create(b, call.getLoc(), ptr, context, one);
      b.setInsertionPoint(call);
      for (auto [i, arg] : llvm::enumerate(args.drop_back(2))) {
        Value address = LLVM::GEPOp::create(b, call.getLoc(), ptr, context, frame,
                                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        LLVM::StoreOp::create(b, call.getLoc(), arg, address);
      }
      Value fn = LLVM::AddressOfOp::create(b, call.getLoc(), ptr, entry.getName());
      LLVM::CallOp::create(b, call.getLoc(), parallelFor,
                           ValueRange{fn, frame, args[args.size() - 2], args.back()});
      call.erase();
    }
  }
};

} // namespace
