//===- kiln.hpp - a C++ wrapper over the Kiln runtime's C API ---*- C++ -*-===//
//
// Header-only, over kiln.h: owning handles, exceptions instead of status
// codes, and tensors built from typed pointers. Sessions keep their model
// alive, so a model may go out of scope before its sessions do.
//
//   kiln::Model model = kiln::Model::load("resnet18.so");
//   kiln::Session session(model);
//   std::vector<float> image(1 * 3 * 224 * 224);
//   session.run({kiln::tensor(image.data(), {1, 3, 224, 224})});
//   kiln_tensor logits = session.output(0); // valid until the next run
//
// Every failure throws kiln::Error, which carries the kiln_status and the
// runtime's message.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KILN_HPP
#define KILN_KILN_HPP

#include "kiln/kiln.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {

/// A failed runtime call: the status and kiln_last_error()'s message.
class Error : public std::runtime_error {
public:
  Error(kiln_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  kiln_status status() const { return status_; }

private:
  kiln_status status_;
};

namespace detail {
inline void check(kiln_status status) {
  if (status != KILN_OK)
    throw Error(status, std::string(kiln_status_name(status)) + ": " + kiln_last_error());
}

template <typename T> struct DtypeOf;
#define KILN_DTYPE_OF(type, value)                                             \
  template <> struct DtypeOf<type> {                                           \
    static constexpr kiln_dtype dtype = value;                                 \
  };
KILN_DTYPE_OF(float, KILN_DTYPE_F32)
KILN_DTYPE_OF(double, KILN_DTYPE_F64)
KILN_DTYPE_OF(int64_t, KILN_DTYPE_I64)
KILN_DTYPE_OF(int32_t, KILN_DTYPE_I32)
KILN_DTYPE_OF(int16_t, KILN_DTYPE_I16)
KILN_DTYPE_OF(int8_t, KILN_DTYPE_I8)
KILN_DTYPE_OF(uint8_t, KILN_DTYPE_U8)
KILN_DTYPE_OF(uint16_t, KILN_DTYPE_U16)
KILN_DTYPE_OF(uint32_t, KILN_DTYPE_U32)
KILN_DTYPE_OF(uint64_t, KILN_DTYPE_U64)
KILN_DTYPE_OF(bool, KILN_DTYPE_BOOL)
#undef KILN_DTYPE_OF
} // namespace detail

/// A tensor over caller-owned data of any dtype (f16 / bf16 as raw bits).
inline kiln_tensor tensor(void *data, kiln_dtype dtype, const std::vector<int64_t> &dims) {
  if (dims.size() > KILN_MAX_RANK)
    throw Error(KILN_ERROR_SHAPE, "a tensor has at most " + std::to_string(KILN_MAX_RANK) +
                                      " dims, got " + std::to_string(dims.size()));
  kiln_tensor t = {};
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    t.dims[d] = dims[d];
  return t;
}

/// A tensor over caller-owned elements of type T; the dtype follows T.
template <typename T>
kiln_tensor tensor(T *data, const std::vector<int64_t> &dims) {
  return tensor(static_cast<void *>(data), detail::DtypeOf<T>::dtype, dims);
}

/// An input or output as the model declares it (-1 for a dynamic dim).
struct TensorInfo {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> dims;
};

/// A loaded model, shared by its sessions.
class Model {
public:
  /// Opens a compiled model (shared library).
  static Model load(const std::string &path) {
    kiln_model *model = nullptr;
    detail::check(kiln_model_load(path.c_str(), &model));
    return Model(model);
  }
  /// Opens a compiled model only if its file's SHA-256 is `sha256`
  /// (kiln_model_load_verified); throws kiln::Error otherwise.
  static Model loadVerified(const std::string &path, const std::string &sha256) {
    kiln_model *model = nullptr;
    detail::check(kiln_model_load_verified(path.c_str(), sha256.c_str(), &model));
    return Model(model);
  }
  /// Wraps a model linked into the program (`&kiln_model_descriptor`).
  static Model fromAbi(const kiln_model_v1 *abi) {
    kiln_model *model = nullptr;
    detail::check(kiln_model_from_abi(abi, &model));
    return Model(model);
  }

  size_t numInputs() const { return kiln_model_num_inputs(get()); }
  size_t numOutputs() const { return kiln_model_num_outputs(get()); }
  TensorInfo input(size_t i) const { return info(kiln_model_input(get(), index(i, numInputs()))); }
  TensorInfo output(size_t i) const {
    return info(kiln_model_output(get(), index(i, numOutputs())));
  }
  std::string contentHash() const { return kiln_model_content_hash(get()); }
  std::string device() const { return kiln_model_device(get()); }
  std::string target() const { return kiln_model_target(get()); }
  std::string requiredFeatures() const { return kiln_model_required_features(get()); }
  /// Bytes each session reserves for the planned arena.
  uint64_t arenaBytes() const { return kiln_model_arena_bytes(get()); }
  /// The largest batch the model accepts (`kiln compile --max-batch`), 0 if any.
  uint64_t maxBatch() const { return kiln_model_max_batch(get()); }
  /// Whether input i is a parameter the session owns (`--train`).
  bool inputIsParameter(size_t i) const {
    return kiln_model_input_is_parameter(get(), index(i, numInputs())) != 0;
  }
  /// A training step's inference entry (kiln_model_inference); throws if
  /// the model has none. It keeps this model alive.
  Model inference() const {
    kiln_model *entry = kiln_model_inference(get());
    if (!entry)
      throw Error(KILN_ERROR_INVALID_ARGUMENT,
                  "the model has no inference entry (only kiln compile --train artifacts do)");
    return Model(std::shared_ptr<kiln_model>(model_, entry));
  }
  kiln_model *get() const { return model_.get(); }

private:
  explicit Model(std::shared_ptr<kiln_model> model) : model_(std::move(model)) {}
  explicit Model(kiln_model *model) : model_(model, kiln_model_free) {}
  static uint32_t index(size_t i, size_t count) {
    if (i >= count)
      throw Error(KILN_ERROR_INVALID_ARGUMENT, "index " + std::to_string(i) +
                                                   " out of range (the model has " +
                                                   std::to_string(count) + ")");
    return static_cast<uint32_t>(i);
  }
  static TensorInfo info(const kiln_model_tensor *t) {
    return {t->name, static_cast<kiln_dtype>(t->dtype), std::vector<int64_t>(t->dims, t->dims + t->rank)};
  }
  std::shared_ptr<kiln_model> model_;
  friend class Session;
};

/// Session options (see kiln_session_options).
struct SessionOptions {
  int32_t numThreads = 0;                   // 0: all cores
  const kiln_allocator *allocator = nullptr; // nullptr: the C library
};

/// One session: used by one thread at a time; sessions run concurrently.
class Session {
public:
  explicit Session(const Model &model, const SessionOptions &options = {})
      : model_(model.model_) {
    kiln_session_options c = {};
    c.num_threads = options.numThreads;
    c.allocator = options.allocator;
    kiln_session *session = nullptr;
    detail::check(kiln_session_create_with_options(model_.get(), &c, &session));
    session_.reset(session);
  }

  /// Runs on the inputs, in the model's input order.
  void run(const std::vector<kiln_tensor> &inputs) {
    detail::check(kiln_session_run(session_.get(), inputs.data(), inputs.size()));
  }
  /// Output i of the last run; its data stays valid until the next run.
  kiln_tensor output(uint32_t i) const {
    kiln_tensor t;
    detail::check(kiln_session_output(session_.get(), i, &t));
    return t;
  }
  /// Output i is written into `buffer` (caller-owned) after every run.
  void bindOutput(uint32_t i, const kiln_tensor &buffer) {
    detail::check(kiln_session_bind_output(session_.get(), i, &buffer));
  }
  /// Output i goes back to runtime-owned storage (see output()).
  void unbindOutput(uint32_t i) {
    detail::check(kiln_session_bind_output(session_.get(), i, nullptr));
  }
  /// A buffer the session owns for input i at `dims` (on a GPU pinned
  /// memory a run copies without staging it; kiln_session_input_buffer):
  /// write the input into it and pass it to run().
  kiln_tensor inputBuffer(uint32_t i, const std::vector<int64_t> &dims) {
    kiln_tensor t;
    if (dims.size() > KILN_MAX_RANK)
      throw Error(KILN_ERROR_SHAPE, "more dims than KILN_MAX_RANK");
    detail::check(kiln_session_input_buffer(session_.get(), i, dims.data(), &t));
    return t;
  }
  /// A training session's parameter or optimiser state `name`: a
  /// writable view, valid while the session lives (on a GPU, of the
  /// parameter's host copy, refreshed by each call).
  kiln_tensor parameter(const std::string &name) {
    kiln_tensor t;
    detail::check(kiln_session_parameter(session_.get(), name.c_str(), &t));
    return t;
  }
  /// A session of the inference entry computing with this training
  /// session's current parameters (kiln_session_create_inference).
  Session inference() {
    kiln_session *session = nullptr;
    detail::check(kiln_session_create_inference(session_.get(), nullptr, &session));
    return Session(std::shared_ptr<kiln_model>(model_, kiln_model_inference(model_.get())),
                   session);
  }
  /// Checkpoints of the session-owned tensors (kiln_session_save_state).
  void saveState(const std::string &path) const {
    detail::check(kiln_session_save_state(session_.get(), path.c_str()));
  }
  void loadState(const std::string &path) {
    detail::check(kiln_session_load_state(session_.get(), path.c_str()));
  }
  kiln_memory_stats memoryStats() const {
    kiln_memory_stats stats;
    detail::check(kiln_session_memory_stats(session_.get(), &stats));
    return stats;
  }
  /// A GPU session's launches, bytes copied and replay overhead (all zero
  /// on the CPU; kiln_session_device_stats).
  kiln_device_stats deviceStats() const {
    kiln_device_stats stats;
    detail::check(kiln_session_device_stats(session_.get(), &stats));
    return stats;
  }
  /// A CPU session's runs on its thread count and on half of it while
  /// another process holds a core (kiln_session_thread_stats).
  kiln_thread_stats threadStats() const {
    kiln_thread_stats stats;
    detail::check(kiln_session_thread_stats(session_.get(), &stats));
    return stats;
  }
  /// false: every later run on the session's own thread count
  /// (kiln_session_set_adaptive_threads).
  void setAdaptiveThreads(bool enabled) {
    detail::check(kiln_session_set_adaptive_threads(session_.get(), enabled ? 1 : 0));
  }
  /// What ran each library call at its last run: the kernel (the
  /// report's numbering; KILN_KERNEL_END before it ran) and the library's
  /// implementation (kiln_session_library_call_info).
  std::vector<kiln_library_call_info> libraryCalls() const {
    std::vector<kiln_library_call_info> calls(kiln_model_library_call_count(model_.get()));
    for (uint32_t i = 0; i < calls.size(); ++i)
      detail::check(kiln_session_library_call_info(session_.get(), i, &calls[i]));
    return calls;
  }
  kiln_session *get() const { return session_.get(); }

private:
  Session(std::shared_ptr<kiln_model> model, kiln_session *session)
      : model_(std::move(model)), session_(session) {}
  struct Free {
    void operator()(kiln_session *s) const { kiln_session_free(s); }
  };
  std::shared_ptr<kiln_model> model_; // outlives the session
  std::unique_ptr<kiln_session, Free> session_;
};

} // namespace kiln

#endif // KILN_KILN_HPP
