// Unit tests of the kiln dialect through its C++ API: building ops with
// inferred result types, verifier diagnostics, and kiln-infer-shapes run
// through a PassManager.
#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

using namespace mlir;

namespace {
struct Fixture {
  MLIRContext context;
  Fixture() {
    context.loadDialect<kiln::KilnDialect, func::FuncDialect,
                        tensor::TensorDialect>();
  }
  OwningOpRef<ModuleOp> parse(llvm::StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }
};

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}
} // namespace

TEST_CASE_METHOD(Fixture, "builders infer broadcast result types",
                 "[dialect]") {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module.getBody());
  Type f32 = builder.getF32Type();
  auto a = kiln::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(RankedTensorType::get({4, 1}, f32), 1.0f));
  auto b = kiln::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(RankedTensorType::get({3}, f32), 2.0f));
  auto sum = kiln::AddOp::create(builder, loc, a, b);
  CHECK(typeString(sum.getType()) == "tensor<4x3xf32>");
  auto cmp = kiln::CompareOp::create(builder, loc, kiln::ComparePredicate::lt,
                                     a, b);
  CHECK(typeString(cmp.getType()) == "tensor<4x3xi1>");
  CHECK(succeeded(verify(module)));
  module->erase();
}

TEST_CASE_METHOD(Fixture, "verifier reports bad shapes with a location",
                 "[dialect]") {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream os(message);
    os << diag.getLocation() << ": " << diag.str();
    return success();
  });
  auto module = parse(R"mlir(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
      %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir");
  CHECK(!module);
  CHECK(message.find("do not broadcast") != std::string::npos);
  CHECK(message.find(":3:") != std::string::npos); // the line of kiln.add
}

TEST_CASE_METHOD(Fixture, "kiln-infer-shapes refines results and signature",
                 "[dialect][pass]") {
  auto module = parse(R"mlir(
    func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
      %0 = kiln.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
      %1 = kiln.relu %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>
      return %1 : tensor<?x?xf32>
    })mlir");
  REQUIRE(module);
  PassManager pm(&context);
  pm.addPass(kiln::createInferShapes());
  REQUIRE(succeeded(pm.run(*module)));
  auto func = *module->getOps<func::FuncOp>().begin();
  CHECK(typeString(func.getFunctionType().getResult(0)) == "tensor<4x3xf32>");
  func.walk([](kiln::ReluOp relu) {
    CHECK(typeString(relu.getType()) == "tensor<4x3xf32>");
  });
}
