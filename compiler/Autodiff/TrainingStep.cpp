//===- TrainingStep.cpp - forward, loss, backward and update as one step --===//

#include "compiler/Autodiff/TrainingStep.h"

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

#include <cstring>

using namespace mlir;

namespace kiln::autodiff {

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error parseOptimizer(llvm::StringRef spec, TrainOptions &options) {
  auto [name, rest] = spec.split('(');
  name = name.trim();
  if (name != "sgd" && name != "adam")
    return error("--optimizer takes sgd(...) or adam(...), got '" + spec + "'");
  options.optimizer = name.str();
  if (rest.empty())
    return llvm::Error::success();
  if (!rest.consume_back(")"))
    return error("--optimizer: missing ')' in '" + spec + "'");
  llvm::SmallVector<llvm::StringRef> settings;
  rest.split(settings, ',', -1, false);
  for (llvm::StringRef setting : settings) {
    auto [key, value] = setting.split('=');
    key = key.trim();
    double v = 0;
    if (value.trim().getAsDouble(v))
      return error("--optimizer: '" + setting + "' is not key=number");
    double *slot = key == "lr"             ? &options.lr
                   : key == "weight_decay" ? &options.weightDecay
                   : name == "sgd" && key == "momentum" ? &options.momentum
                   : name == "adam" && key == "beta1"   ? &options.beta1
                   : name == "adam" && key == "beta2"   ? &options.beta2
                   : name == "adam" && key == "eps"     ? &options.eps
                                                        : nullptr;
    if (!slot)
      return error("--optimizer: " + name + " has no setting '" + key + "' (" +
                   (name == "sgd" ? "lr, momentum, weight_decay"
                                  : "lr, beta1, beta2, eps, weight_decay") +
                   ")");
    *slot = v;
  }
  return llvm::Error::success();
}

/// The model node name a location carries, if any.
static std::string nodeName(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// A constant's bytes, row-major (splats expanded).
static std::optional<std::vector<char>> constantBytes(ConstantOp op) {
  RankedTensorType type = typeOf(op.getResult());
  size_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  size_t bytes = type.getNumElements() * elementBytes;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytes)
      return std::nullopt;
    return std::vector<char>(blob->getData().begin(), blob->getData().end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  std::vector<char> out(bytes);
  if (dense.isSplat()) {
    for (size_t i = 0; i < bytes; i += elementBytes)
      std::memcpy(out.data() + i, raw.data(), elementBytes);
  } else {
    if (raw.size() != bytes)
      return std::nullopt;
    std::memcpy(out.data(), raw.data(), bytes);
  }
  return out;
}

static DictionaryAttr named(MLIRContext *context, llvm::StringRef name) {
  return DictionaryAttr::get(
      context, {NamedAttribute(StringAttr::get(context, KilnDialect::NameAttrHelper::getNameStr()),
                               StringAttr::get(context, name))});
}

namespace {
/// Lifts initializers into session-owned arguments of `main`, naming them
/// the same way for the training step and its inference entry (so that
/// the two bind by name).
struct Lifter {
  func::FuncOp f;
  Block &body;
  llvm::StringSet<> names;
  std::vector<StepState> states;

  explicit Lifter(func::FuncOp f) : f(f), body(f.getBody().front()) {
    for (BlockArgument arg : body.getArguments())
      if (auto name = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     KilnDialect::NameAttrHelper::getNameStr()))
        names.insert(name.str());
  }

  /// A new session-owned argument `name` (made unique) starting from
  /// `initial`.
  BlockArgument add(Type type, std::string name, std::vector<char> initial, Location loc) {
    while (!names.insert(name).second)
      name += "_";
    unsigned index = f.getNumArguments();
    (void)f.insertArgument(index, type, named(f.getContext(), name), loc);
    StepState state;
    state.input = index;
    state.name = name;
    state.initial = std::move(initial);
    states.push_back(std::move(state));
    return body.getArgument(index);
  }

  /// A batch normalisation's running statistic (`constant`, its operand):
  /// an argument that replaces it in `op`.
  llvm::Expected<BlockArgument> statistic(BatchNormOp op, Value operand, const char *suffix) {
    auto constant = operand.getDefiningOp<ConstantOp>();
    if (!constant)
      return error("--train: a batch normalisation's running " + std::string(suffix) +
                   " is not an initializer");
    std::optional<std::vector<char>> bytes = constantBytes(constant);
    if (!bytes)
      return error("--train: cannot read a batch normalisation's running statistics");
    std::string name = nodeName(constant.getLoc());
    if (name.empty())
      name = "batch_norm." + std::string(suffix);
    BlockArgument running = add(constant.getType(), name, std::move(*bytes), constant.getLoc());
    operand.replaceUsesWithIf(running, [&](OpOperand &use) { return use.getOwner() == op; });
    if (constant->use_empty())
      constant.erase();
    return running;
  }

  /// The trainable initializers (`--trainable`) become arguments (the
  /// parameters); returns their argument numbers.
  llvm::Expected<llvm::SmallVector<int64_t>> parameters(const std::string &pattern) {
    llvm::Regex trainable("^(" + pattern + ")$");
    std::string regexError;
    if (!trainable.isValid(regexError))
      return error("--trainable: " + regexError);
    llvm::SmallVector<int64_t> paramArgs;
    // The importer folds some ops on initializers (a convolution's bias
    // reshaped to [C, 1, 1]) into new constants, leaving the initializer
    // itself unused: such a copy (the same bytes, another shape) becomes a
    // reshape of the parameter.
    auto foldedCopies = [&](ConstantOp initializer, const std::vector<char> &bytes) {
      llvm::SmallVector<ConstantOp> copies;
      for (Operation &other : body)
        if (auto copy = dyn_cast<ConstantOp>(other))
          if (copy != initializer && !copy->use_empty() && isDifferentiable(copy.getResult()) &&
              typeOf(copy.getResult()).getNumElements() ==
                  typeOf(initializer.getResult()).getNumElements() &&
              typeOf(copy.getResult()).getElementType() ==
                  typeOf(initializer.getResult()).getElementType() &&
              constantBytes(copy) == bytes)
            copies.push_back(copy);
      return copies;
    };
    for (Operation &op : llvm::make_early_inc_range(body)) {
      auto constant = dyn_cast<ConstantOp>(op);
      if (!constant || !isDifferentiable(constant.getResult()) ||
          typeOf(constant.getResult()).getRank() == 0)
        continue;
      std::string name = nodeName(constant.getLoc());
      if (name.empty() || !trainable.match(name))
        continue;
      std::optional<std::vector<char>> bytes = constantBytes(constant);
      if (!bytes)
        return error("--train: cannot read the value of initializer '" + name + "'");
      llvm::SmallVector<ConstantOp> copies;
      if (constant->use_empty()) {
        copies = foldedCopies(constant, *bytes);
        if (copies.empty()) {
          constant.erase(); // an initializer nothing reads
          continue;
        }
      }
      BlockArgument param =
          add(constant.getType(), name, std::move(*bytes), constant.getLoc());
      constant.getResult().replaceAllUsesWith(param);
      for (ConstantOp copy : copies) {
        OpBuilder at(copy);
        RankedTensorType type = typeOf(copy.getResult());
        copy.getResult().replaceAllUsesWith(
            ReshapeOp::create(at, copy.getLoc(), type, param,
                              at.getDenseI64ArrayAttr(type.getShape()))
                .getResult());
        copy.erase();
      }
      constant.erase();
      paramArgs.push_back(param.getArgNumber());
    }
    if (paramArgs.empty())
      return error("--train: no initializer matches --trainable='" + pattern +
                   "' (float initializers of rank >= 1, by name)");
    return paramArgs;
  }
};
} // namespace

llvm::Expected<std::vector<StepState>> buildInferenceEntry(ModuleOp module,
                                                           const TrainOptions &options) {
  auto f = module.lookupSymbol<func::FuncOp>("main");
  if (!f)
    return error("--train: the model has no main function");
  Lifter lift(f);
  // In the training step's order: the batch norms' running statistics,
  // then the parameters.
  llvm::SmallVector<BatchNormOp> norms;
  f.walk([&](BatchNormOp op) { norms.push_back(op); });
  for (BatchNormOp op : norms)
    for (auto [operand, suffix] : {std::pair{op.getMean(), "mean"}, {op.getVariance(), "var"}})
      if (auto running = lift.statistic(op, operand, suffix); !running)
        return running.takeError();
  if (auto params = lift.parameters(options.trainable); !params)
    return params.takeError();
  for (StepState &state : lift.states)
    state.output = StepState::readOnly;
  return std::move(lift.states);
}

llvm::Expected<std::vector<StepState>> buildTrainingStep(ModuleOp module,
                                                         const TrainOptions &options) {
  MLIRContext *context = module.getContext();
  auto f = module.lookupSymbol<func::FuncOp>("main");
  if (!f)
    return error("--train: the model has no main function");
  Block &body = f.getBody().front();

  // A fixed batch, then static shapes everywhere.
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.hasStaticShape())
      continue;
    llvm::SmallVector<int64_t> shape(type.getShape());
    for (size_t d = 0; d < shape.size(); ++d)
      if (ShapedType::isDynamic(shape[d])) {
        if (d != 0 || options.batch <= 0)
          return error("--train needs static shapes: input " + std::to_string(arg.getArgNumber()) +
                       " has a dynamic dim " + std::to_string(d) +
                       (d == 0 ? " (give the batch with --train-batch N)" : ""));
        shape[d] = options.batch;
      }
    arg.setType(RankedTensorType::get(shape, type.getElementType()));
  }
  f.setType(FunctionType::get(context, body.getArgumentTypes(), f.getResultTypes()));
  {
    PassManager pm(context);
    pm.addPass(createInferShapes());
    if (failed(pm.run(module)))
      return error("--train: shape inference failed (see above)");
  }

  // The loss of output 0.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value y = ret->getOperand(0);
  RankedTensorType yType = typeOf(y);
  if (!yType.hasStaticShape() || !isa<FloatType>(yType.getElementType()))
    return error("--train: output 0 must be a float tensor of static shape");
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  Type f32 = yType.getElementType();
  Value target;
  Value loss;
  unsigned targetIndex = f.getNumArguments();
  if (options.loss == "cross-entropy") {
    if (yType.getRank() != 2)
      return error("--loss=cross-entropy takes output 0 as [batch, classes] logits");
    int64_t n = yType.getDimSize(0), classes = yType.getDimSize(1);
    Value logProbs;
    if (auto softmax = y.getDefiningOp<SoftmaxOp>())
      logProbs = LogSoftmaxOp::create(b, loc, softmax.getInput(), softmax.getAxisAttr());
    else if (y.getDefiningOp<LogSoftmaxOp>())
      logProbs = y;
    else
      logProbs = LogSoftmaxOp::create(b, loc, y, b.getI64IntegerAttr(1));
    auto targetType = RankedTensorType::get({n}, b.getI64Type());
    (void)f.insertArgument(targetIndex, targetType, named(context, "target"), loc);
    target = body.getArgument(targetIndex);
    Value column = ReshapeOp::create(b, loc, RankedTensorType::get({n, 1}, b.getI64Type()), target,
                                     b.getDenseI64ArrayAttr({n, 1}));
    llvm::SmallVector<APInt> range;
    for (int64_t c = 0; c < classes; ++c)
      range.push_back(APInt(64, c));
    Value iota = ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({1, classes}, b.getI64Type()), range));
    Value oneHot = CastOp::create(b, loc, yType,
                                  CompareOp::create(b, loc, ComparePredicate::eq, column, iota));
    Value picked = ReduceSumOp::create(b, loc, MulOp::create(b, loc, logProbs, oneHot),
                                       b.getDenseI64ArrayAttr({0, 1}), b.getBoolAttr(false));
    loss = MulOp::create(b, loc, picked, scalar(b, loc, f32, -1.0 / n));
  } else if (options.loss == "mse") {
    (void)f.insertArgument(targetIndex, yType, named(context, "target"), loc);
    target = body.getArgument(targetIndex);
    Value diff = SubOp::create(b, loc, y, target);
    llvm::SmallVector<int64_t> all;
    for (int64_t d = 0; d < yType.getRank(); ++d)
      all.push_back(d);
    loss = ReduceMeanOp::create(b, loc, MulOp::create(b, loc, diff, diff),
                                b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
  } else {
    return error("--loss takes cross-entropy or mse, got '" + options.loss + "'");
  }

  // Batch normalisation in training form: the batch's statistics
  // normalise; the running statistics become session-owned state updated
  // by the step (not trained).
  llvm::SmallVector<std::pair<Value, std::string>> updates; // value, result name
  Lifter lift(f);
  llvm::SmallVector<BatchNormOp> norms;
  body.walk([&](BatchNormOp op) { norms.push_back(op); });
  for (BatchNormOp op : norms) {
    OpBuilder at(op);
    Location nloc = op.getLoc();
    Value x = op.getInput();
    RankedTensorType xt = typeOf(x);
    int64_t rank = xt.getRank(), channels = xt.getDimSize(1);
    int64_t count = xt.getNumElements() / channels;
    llvm::SmallVector<int64_t> axes = {0}, channelShape = {channels};
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    llvm::SmallVector<int64_t> broadcastShape(rank, 1);
    broadcastShape[1] = channels;
    auto axesAttr = at.getDenseI64ArrayAttr(axes);
    auto sc = [&](double v) { return scalar(at, nloc, xt.getElementType(), v); };
    Value mean = ReduceMeanOp::create(at, nloc, x, axesAttr, at.getBoolAttr(true));
    Value centered = SubOp::create(at, nloc, x, mean);
    Value var = ReduceMeanOp::create(at, nloc, MulOp::create(at, nloc, centered, centered),
                                     axesAttr, at.getBoolAttr(true));
    Value inv = RsqrtOp::create(at, nloc, AddOp::create(at, nloc, var,
                                                        sc(op.getEpsilon().convertToDouble())));
    auto toBroadcast = [&](Value v) {
      auto type = RankedTensorType::get(broadcastShape, typeOf(v).getElementType());
      return ReshapeOp::create(at, nloc, type, v, at.getDenseI64ArrayAttr(broadcastShape))
          .getResult();
    };
    Value y = AddOp::create(at, nloc,
                            MulOp::create(at, nloc, MulOp::create(at, nloc, centered, inv),
                                          toBroadcast(op.getScale())),
                            toBroadcast(op.getBias()));
    // The running statistics: state, updated with the batch's (the
    // variance unbiased), never differentiated.
    double m = options.batchNormMomentum;
    auto toChannels = [&](Value v) {
      auto type = RankedTensorType::get(channelShape, typeOf(v).getElementType());
      return ReshapeOp::create(at, nloc, type, v, at.getDenseI64ArrayAttr(channelShape))
          .getResult();
    };
    for (auto [operand, batchValue, suffix] :
         {std::tuple{op.getMean(), toChannels(mean), "mean"},
          std::tuple{op.getVariance(),
                     toChannels(MulOp::create(at, nloc, var,
                                              sc(count > 1 ? double(count) / (count - 1) : 1.0))),
                     "var"}}) {
      auto running = lift.statistic(op, operand, suffix);
      if (!running)
        return running.takeError();
      Value next = AddOp::create(at, nloc, MulOp::create(at, nloc, *running, sc(1 - m)),
                                 MulOp::create(at, nloc, batchValue, sc(m)));
      // Not on the loss's path: no gradient reaches the update.
      updates.push_back({next, "updated:" + lift.states.back().name});
    }
    op.getResult().replaceAllUsesWith(y);
    op.erase();
  }

  // Dropout in training form: a mask from a counter-based generator whose
  // counter (`dropout.step`, session-owned) advances every step; dropout k
  // (in the model's order) uses seed --dropout-seed + k.
  llvm::SmallVector<DropoutOp> drops;
  body.walk([&](DropoutOp op) { drops.push_back(op); });
  if (!drops.empty()) {
    auto counterType = RankedTensorType::get({}, b.getI64Type());
    Value counter = lift.add(counterType, "dropout.step", std::vector<char>(8, 0), loc);
    OpBuilder at(ret);
    Value one = ConstantOp::create(
        at, loc, DenseElementsAttr::get(counterType, at.getI64IntegerAttr(1).getValue()));
    updates.push_back({AddOp::create(at, loc, counter, one), "updated:dropout.step"});
    for (auto [k, op] : llvm::enumerate(drops)) {
      OpBuilder here(op);
      Location dloc = op.getLoc();
      RankedTensorType xt = typeOf(op.getInput());
      double ratio = op.getRatio().convertToDouble();
      Value u = RandomUniformOp::create(
          here, dloc, RankedTensorType::get(xt.getShape(), here.getF32Type()), counter,
          here.getI64IntegerAttr(options.dropoutSeed + static_cast<int64_t>(k)),
          here.getDenseI64ArrayAttr(xt.getShape()));
      Value keep = CompareOp::create(here, dloc, ComparePredicate::ge, u,
                                     scalar(here, dloc, here.getF32Type(), ratio));
      Value mask = MulOp::create(here, dloc, CastOp::create(here, dloc, xt, keep),
                                 scalar(here, dloc, xt.getElementType(), 1.0 / (1.0 - ratio)));
      op.getResult().replaceAllUsesWith(
          MulOp::create(here, dloc, op.getInput(), mask).getResult());
      op.erase();
    }
  }

  // Trainable initializers become arguments (the parameters).
  auto lifted = lift.parameters(options.trainable);
  if (!lifted)
    return lifted.takeError();
  llvm::SmallVector<int64_t> paramArgs = std::move(*lifted);

  // The loss is the one result; the gradients of the parameters follow it.
  ret->setOperands(ValueRange{loss});
  while (f.getNumResults() > 0)
    (void)f.eraseResult(0);
  (void)f.insertResult(0, loss.getType(), named(context, "loss"));
  if (failed(differentiate(f, paramArgs)))
    return error("--train: differentiating the model failed (see above)");

  // The step's cotangent is 1.
  unsigned seed = f.getNumArguments() - 1;
  {
    OpBuilder start(&body, body.begin());
    Value one = scalar(start, loc, f32, 1.0);
    body.getArgument(seed).replaceAllUsesWith(one);
    (void)f.eraseArgument(seed);
  }

  ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  llvm::SmallVector<Value> grads(ret->getOperands().drop_front());
  auto c = [&](double v) { return scalar(b, loc, f32, v); };
  // The optimiser's state: one more session-owned argument per buffer.
  auto addState = [&](RankedTensorType type, const std::string &name) -> Value {
    return lift.add(type, name,
                    std::vector<char>(type.getNumElements() *
                                      ((type.getElementTypeBitWidth() + 7) / 8)),
                    loc);
  };
  auto nameOf = [&](unsigned arg) {
    return f.getArgAttrOfType<StringAttr>(arg, KilnDialect::NameAttrHelper::getNameStr()).str();
  };
  // What a step that does not update (gradient accumulation) keeps: the
  // value each updated parameter and optimiser buffer had.
  llvm::StringMap<Value> before;
  for (int64_t arg : paramArgs)
    before["updated:" + nameOf(arg)] = body.getArgument(arg);
  // Gradient accumulation: the gradients add up in session-owned buffers;
  // every N-th step updates with their mean and clears them.
  Value boundary;
  if (options.gradAccum > 1) {
    Value count = addState(RankedTensorType::get({}, f32), "grad_accum.count");
    Value countNext = AddOp::create(b, loc, count, c(1.0));
    boundary = CompareOp::create(b, loc, ComparePredicate::ge, countNext,
                                 c(static_cast<double>(options.gradAccum)));
    Value zero = c(0.0);
    updates.push_back({SelectOp::create(b, loc, boundary, zero, countNext),
                       "updated:grad_accum.count"});
    for (auto [k, arg] : llvm::enumerate(paramArgs)) {
      Value acc = addState(typeOf(grads[k]), nameOf(arg) + ".grad_accum");
      Value accNext = AddOp::create(b, loc, acc, grads[k]);
      updates.push_back({SelectOp::create(b, loc, boundary,
                                          filled(b, loc, typeOf(accNext), 0.0), accNext),
                         "updated:" + nameOf(arg) + ".grad_accum"});
      grads[k] = MulOp::create(b, loc, accNext, c(1.0 / options.gradAccum));
    }
  }
  // Gradient clipping: one scale for all, from the global L2 norm.
  if (options.clipGradNorm > 0) {
    Value total;
    for (Value g : grads) {
      llvm::SmallVector<int64_t> all;
      for (int64_t d = 0; d < typeOf(g).getRank(); ++d)
        all.push_back(d);
      Value sq = ReduceSumOp::create(b, loc, MulOp::create(b, loc, g, g),
                                     b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
      total = total ? Value(AddOp::create(b, loc, total, sq)) : sq;
    }
    Value norm = SqrtOp::create(b, loc, total);
    Value coef = DivOp::create(b, loc, c(options.clipGradNorm), AddOp::create(b, loc, norm, c(1e-6)));
    Value scale = MinOp::create(b, loc, coef, c(1.0));
    for (Value &g : grads)
      g = MulOp::create(b, loc, g, scale);
  }

  Value step, stepNext, bc1, bc2;
  if (options.optimizer == "adam") {
    step = addState(RankedTensorType::get({}, f32), "adam.step");
    before["updated:adam.step"] = step;
    stepNext = AddOp::create(b, loc, step, c(1.0));
    bc1 = SubOp::create(b, loc, c(1.0), PowOp::create(b, loc, c(options.beta1), stepNext));
    bc2 = SubOp::create(b, loc, c(1.0), PowOp::create(b, loc, c(options.beta2), stepNext));
  }
  for (auto [k, arg] : llvm::enumerate(paramArgs)) {
    Value p = body.getArgument(arg);
    Value g = grads[k];
    std::string name = nameOf(arg);
    if (options.weightDecay != 0)
      g = AddOp::create(b, loc, g, MulOp::create(b, loc, p, c(options.weightDecay)));
    Value next;
    if (options.optimizer == "sgd") {
      if (options.momentum != 0) {
        Value buf = addState(typeOf(p), name + ".momentum");
        before["updated:" + name + ".momentum"] = buf;
        Value bufNext = AddOp::create(b, loc, MulOp::create(b, loc, buf, c(options.momentum)), g);
        updates.push_back({bufNext, "updated:" + name + ".momentum"});
        g = bufNext;
      }
      next = SubOp::create(b, loc, p, MulOp::create(b, loc, g, c(options.lr)));
    } else {
      Value m = addState(typeOf(p), name + ".adam_m");
      Value v = addState(typeOf(p), name + ".adam_v");
      before["updated:" + name + ".adam_m"] = m;
      before["updated:" + name + ".adam_v"] = v;
      Value mNext = AddOp::create(b, loc, MulOp::create(b, loc, m, c(options.beta1)),
                                  MulOp::create(b, loc, g, c(1 - options.beta1)));
      Value vNext = AddOp::create(b, loc, MulOp::create(b, loc, v, c(options.beta2)),
                                  MulOp::create(b, loc, MulOp::create(b, loc, g, g),
                                                c(1 - options.beta2)));
      updates.push_back({mNext, "updated:" + name + ".adam_m"});
      updates.push_back({vNext, "updated:" + name + ".adam_v"});
      Value denom = AddOp::create(b, loc, SqrtOp::create(b, loc, DivOp::create(b, loc, vNext, bc2)),
                                  c(options.eps));
      Value stepSize = DivOp::create(b, loc, c(options.lr), bc1);
      next = SubOp::create(b, loc, p,
                           MulOp::create(b, loc, stepSize, DivOp::create(b, loc, mNext, denom)));
    }
    updates.push_back({next, "updated:" + name});
  }
  if (stepNext)
    updates.push_back({stepNext, "updated:adam.step"});
  // Between accumulation boundaries parameters and optimiser state stay.
  if (boundary)
    for (auto &[value, name] : updates)
      if (Value old = before.lookup(name))
        value = SelectOp::create(b, loc, boundary, value, old);

  // Results: the loss, then each session-owned argument's update, in the
  // order of `states` (parameters first, then optimiser state).
  llvm::SmallVector<Value> results = {ret->getOperand(0)};
  while (f.getNumResults() > 1)
    (void)f.eraseResult(1);
  llvm::StringMap<Value> byName;
  for (auto &[value, name] : updates)
    byName[name] = value;
  for (StepState &state : lift.states) {
    std::string name = "updated:" + nameOf(state.input);
    Value update = byName.lookup(name);
    if (!update)
      return error("--train: internal error: no update for '" + nameOf(state.input) + "'");
    state.output = f.getNumResults();
    (void)f.insertResult(state.output, update.getType(), named(context, name));
    results.push_back(update);
  }
  ret->setOperands(results);
  return std::move(lift.states);
}

} // namespace kiln::autodiff
