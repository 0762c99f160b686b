//===- BenchCommand.cpp - `kiln bench model.so` ---------------------------===//
//
// Measures a compiled model: warm-up runs, then timed runs on one session;
// prints median and p90 latency, throughput and peak RSS. A benchmark, not a
// test: compare against other runtimes in the same run, on an idle machine.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"
#include "tools/kiln/Arguments.h"
#include "tools/kiln/Commands.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

static const char *kBenchUsage =
    "usage: kiln bench <model.so> [--batch N] [--threads T] [--runs R] [--warmup W]\n"
    "                  [--shape NAME=D0xD1x...] [--trace FILE.json] [--per-kernel[=N]]\n"
    "                  [--target=NAME] [--adaptive-threads]\n\n"
    "Times the model on synthetic inputs. Dynamic dims take --batch (dim 0,\n"
    "default 1) or 1. --threads sets the session's threads (generated loops and\n"
    "library calls share them; "
    "default: all cores).\n"
    "  --shape NAME=DIMS  the dims of input NAME (e.g. x=1x3x224x224, repeat for\n"
    "                     others): its dims known only at run time take these;\n"
    "                     dim 0, when dynamic, must be --batch\n"
    "  --trace FILE       write the timed runs as a Chrome/Perfetto trace: one\n"
    "                     slice per run and per kernel, with its model nodes\n"
    "                     and the bytes it reads and writes\n"
    "  --per-kernel[=N]   print the N kernels (default 15) that take the most time,\n"
    "                     a library call's with the implementation that ran it\n"
    "  --target=NAME      cpu or cuda: refuse an artifact compiled for another\n"
    "                     target (the artifact decides where it runs; a CUDA one\n"
    "                     also reports its CUDA Graph replays' host overhead)\n"
    "  --adaptive-threads let the session run on half its threads while that is\n"
    "                     faster (another process holds a core;\n"
    "                     kiln_session_set_adaptive_threads)\n";

namespace {
/// Kernel start times of the timed runs (kiln_session_set_kernel_hook).
struct KernelClock {
  std::vector<uint32_t> ids;
  std::vector<uint64_t> stamps;
  static uint64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static void hook(void *user, uint32_t kernel) {
    auto *clock = static_cast<KernelClock *>(user);
    clock->ids.push_back(kernel);
    clock->stamps.push_back(now());
  }
};

/// A kernel as the model's report describes it.
struct KernelInfo {
  std::string kind;
  std::vector<std::string> ops;
  int64_t bytes = 0;
  bool dynamic = false;
  /// The library's implementations that ran its calls at the timed runs
  /// ("brgconv:avx512_core"), from kiln_session_library_call_info.
  std::vector<std::string> implementations;
};

std::vector<KernelInfo> readKernels(kiln_model *model) {
  std::vector<KernelInfo> kernels;
  const char *report = kiln_model_report(model);
  auto parsed = llvm::json::parse(report ? report : "");
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return kernels;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *list = root ? root->getArray("kernels") : nullptr;
  if (!list)
    return kernels;
  for (const llvm::json::Value &v : *list) {
    const llvm::json::Object *k = v.getAsObject();
    if (!k)
      continue;
    KernelInfo info;
    info.kind = k->getString("kind").value_or("kernel").str();
    if (const llvm::json::Array *ops = k->getArray("ops"))
      for (const llvm::json::Value &op : *ops)
        if (auto name = op.getAsString())
          info.ops.push_back(name->str());
    info.bytes = k->getInteger("bytes").value_or(0);
    info.dynamic = k->getBoolean("dynamic").value_or(false);
    kernels.push_back(std::move(info));
  }
  return kernels;
}

/// Bytes kernel `k` touches at `batch` (dynamic dims are the batch's).
int64_t kernelBytes(const std::vector<KernelInfo> &kernels, uint32_t k, int64_t batch) {
  if (k >= kernels.size())
    return 0;
  return kernels[k].bytes * (kernels[k].dynamic ? batch : 1);
}

std::string kernelName(const std::vector<KernelInfo> &kernels, uint32_t k) {
  std::string name = "#" + std::to_string(k) + " ";
  if (k >= kernels.size())
    return name + "kernel";
  name += kernels[k].kind;
  for (size_t i = 0; i < kernels[k].implementations.size(); ++i)
    name += (i ? ", " : " [") + kernels[k].implementations[i];
  return kernels[k].implementations.empty() ? name : name + "]";
}

/// Adds to each kernel the implementations that ran its library calls at
/// the session's last run.
void readImplementations(kiln_model *model, kiln_session *session,
                         std::vector<KernelInfo> &kernels) {
  for (uint32_t call = 0; call < kiln_model_library_call_count(model); ++call) {
    kiln_library_call_info info;
    if (kiln_session_library_call_info(session, call, &info) != KILN_OK ||
        info.kernel >= kernels.size() || !info.implementation[0])
      continue;
    std::vector<std::string> &list = kernels[info.kernel].implementations;
    if (std::find(list.begin(), list.end(), info.implementation) == list.end())
      list.push_back(info.implementation);
  }
}

std::string opsSummary(const std::vector<std::string> &ops, size_t shown) {
  std::string text;
  for (size_t i = 0; i < ops.size() && i < shown; ++i)
    text += (i ? ", " : "") + ops[i];
  if (ops.size() > shown)
    text += ", +" + std::to_string(ops.size() - shown) + " more";
  return text;
}
} // namespace

int runBench(llvm::ArrayRef<llvm::StringRef> args) {
  std::string modelPath;
  int64_t batch = 1, runs = 20, warmup = 3, threads = 0, perKernel = 0;
  bool adaptiveThreads = false;
  std::string tracePath, target;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (ArgumentCursor cursor(args); !cursor.done(); cursor.next()) {
    llvm::StringRef arg = cursor.current();
    std::string badFlag;
    auto number = [&](llvm::StringRef flag, int64_t &out) {
      std::optional<std::string> v = cursor.value(flag);
      if (!v)
        return false;
      if (llvm::StringRef(*v).getAsInteger(10, out) || out <= 0)
        badFlag = flag.str();
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kBenchUsage;
      return 0;
    }
    if (number("--batch", batch) || number("--runs", runs) || number("--warmup", warmup) ||
        number("--threads", threads)) {
      if (!badFlag.empty()) {
        llvm::errs() << "kiln bench: " << badFlag << " takes a positive number\n";
        return 2;
      }
      continue;
    }
    if (auto v = cursor.value("--shape")) {
      auto [name, text] = llvm::StringRef(*v).split('=');
      std::vector<int64_t> dims;
      llvm::SmallVector<llvm::StringRef> parts;
      text.split(parts, 'x');
      for (llvm::StringRef part : parts) {
        int64_t d = 0;
        if (part.getAsInteger(10, d) || d < 1) {
          dims.clear();
          break;
        }
        dims.push_back(d);
      }
      if (name.empty() || dims.empty()) {
        llvm::errs() << "kiln bench: --shape takes NAME=D0xD1x..., each D a positive integer, "
                     << "got '" << *v << "'\n";
        return 2;
      }
      if (!shapes.emplace(name.str(), dims).second) {
        llvm::errs() << "kiln bench: --shape " << name << " is given twice\n";
        return 2;
      }
      continue;
    }
    if (auto v = cursor.value("--trace")) {
      tracePath = *v;
      continue;
    }
    if (auto v = cursor.value("--target")) {
      if (*v != "cpu" && *v != "cuda") {
        llvm::errs() << "kiln bench: unknown target '" << *v << "' (known: cpu, cuda)\n";
        return 2;
      }
      target = *v;
      continue;
    }
    if (arg == "--per-kernel") {
      perKernel = 15;
      continue;
    }
    if (arg == "--adaptive-threads") {
      adaptiveThreads = true;
      continue;
    }
    if (number("--per-kernel", perKernel)) {
      if (!badFlag.empty()) {
        llvm::errs() << "kiln bench: --per-kernel takes a positive number\n";
        return 2;
      }
      continue;
    }
    if (!arg.starts_with("-") && modelPath.empty()) {
      modelPath = arg.str();
      continue;
    }
    llvm::errs() << "kiln bench: unexpected argument '" << arg << "'\n\n" << kBenchUsage;
    return 2;
  }
  if (modelPath.empty()) {
    llvm::errs() << kBenchUsage;
    return 2;
  }
  ModelHandle loaded = loadArtifact("bench", modelPath);
  if (!loaded)
    return 1;
  kiln_model *model = loaded.get();
  if (!target.empty() && target != kiln_model_device(model)) {
    llvm::errs() << "kiln bench: " << modelPath << " was compiled for "
                 << kiln_model_device(model) << ", not " << target << " (kiln compile --target="
                 << target << ")\n";
    return 1;
  }
  // The inputs the caller gives (a training step's parameters are the
  // session's).
  std::vector<uint32_t> inputIndex = callerInputs(model);
  uint32_t numInputs = static_cast<uint32_t>(inputIndex.size());
  std::vector<std::vector<char>> storage(numInputs);
  std::vector<kiln_tensor> inputs(numInputs);
  // Kernel bytes scale with the batch alone: with other dims decided here,
  // they are not reported.
  bool bytesKnown = true;
  for (const auto &[name, dims] : shapes)
    if (llvm::none_of(inputIndex, [&, &name = name](uint32_t i) {
          return name == kiln_model_input(model, i)->name;
        })) {
      std::string inputNames;
      for (uint32_t i : inputIndex)
        inputNames +=
            (inputNames.empty() ? "" : ", ") + std::string(kiln_model_input(model, i)->name);
      llvm::errs() << "kiln bench: --shape names '" << name << "', which is not an input ("
                   << inputNames << ")\n";
      return 2;
    }
  for (uint32_t i = 0; i < numInputs; ++i) {
    const kiln_model_tensor *desc = kiln_model_input(model, inputIndex[i]);
    auto given = shapes.find(desc->name);
    if (given != shapes.end() && given->second.size() != static_cast<size_t>(desc->rank)) {
      llvm::errs() << "kiln bench: --shape " << desc->name << " gives "
                   << given->second.size() << " dims; the input has " << desc->rank << "\n";
      return 2;
    }
    kiln_tensor &t = inputs[i];
    t.dtype = desc->dtype;
    t.rank = desc->rank;
    int64_t count = 1;
    std::string unsized;
    for (int32_t d = 0; d < desc->rank; ++d) {
      t.dims[d] = desc->dims[d] >= 0 ? desc->dims[d] : (d == 0 ? batch : 1);
      if (given != shapes.end()) {
        int64_t want = given->second[d];
        if (desc->dims[d] >= 0 && want != desc->dims[d]) {
          llvm::errs() << "kiln bench: --shape " << desc->name << " gives dim " << d << " as "
                       << want << "; the model's is " << desc->dims[d] << "\n";
          return 2;
        }
        if (desc->dims[d] < 0 && d == 0 && want != batch) {
          llvm::errs() << "kiln bench: --shape " << desc->name << " gives dim 0 as " << want
                       << " but --batch is " << batch << " (give --batch " << want << ")\n";
          return 2;
        }
        t.dims[d] = want;
      } else if (desc->dims[d] < 0 && d > 0) {
        unsized += (unsized.empty() ? "" : ", ") + std::to_string(d);
      }
      if (desc->dims[d] < 0 && d > 0)
        bytesKnown = false;
      count *= t.dims[d];
    }
    if (!unsized.empty())
      llvm::errs() << "kiln bench: note: input '" << desc->name << "' dims " << unsized
                   << " are known only at run time and take 1 here (give them with --shape "
                   << desc->name << "=...)\n";
    // Zeros are valid for every dtype (indices included).
    storage[i].assign(count * kiln_dtype_size(desc->dtype), 0);
    t.data = storage[i].data();
  }
  kiln_session *session = nullptr;
  kiln_session_options options = {};
  options.num_threads = static_cast<int32_t>(threads);
  if (kiln_session_create_with_options(model, &options, &session) != KILN_OK) {
    llvm::errs() << "kiln bench: " << kiln_last_error() << "\n";
    return 1;
  }
  llvm::scope_exit freeSession([&] { kiln_session_free(session); });
  if (adaptiveThreads)
    kiln_session_set_adaptive_threads(session, 1);
  // Kernel times only when asked for: the hook reads the clock per kernel.
  bool profile = !tracePath.empty() || perKernel > 0;
  std::vector<KernelInfo> kernels = profile ? readKernels(model) : std::vector<KernelInfo>{};
  KernelClock clock;
  std::vector<std::pair<uint64_t, uint64_t>> runSpans; // start, end (ns)
  std::vector<size_t> runFirstStamp;                    // index into clock's
  std::vector<double> times;
  for (int64_t r = 0; r < warmup + runs; ++r) {
    bool timed = r >= warmup;
    if (profile && r == warmup) {
      clock.ids.reserve((kernels.size() + 1) * runs);
      clock.stamps.reserve((kernels.size() + 1) * runs);
      kiln_session_set_kernel_hook(session, KernelClock::hook, &clock);
    }
    if (profile && timed)
      runFirstStamp.push_back(clock.ids.size());
    uint64_t startNs = KernelClock::now();
    auto start = std::chrono::steady_clock::now();
    if (kiln_session_run(session, inputs.data(), numInputs) != KILN_OK) {
      llvm::errs() << "kiln bench: " << kiln_last_error() << "\n";
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (timed) {
      times.push_back(ms);
      if (profile)
        runSpans.push_back({startNs, KernelClock::now()});
    }
  }
  kiln_session_set_kernel_hook(session, nullptr, nullptr);
  if (profile)
    readImplementations(model, session, kernels);
  runFirstStamp.push_back(clock.ids.size());
  // Kernel k of a run lasts from its stamp to the next one (the last to
  // the run's end marker).
  struct Slice {
    uint32_t kernel;
    uint64_t begin, end;
  };
  std::vector<std::vector<Slice>> slices(runSpans.size());
  for (size_t r = 0; r < runSpans.size(); ++r)
    for (size_t i = runFirstStamp[r]; i + 1 < runFirstStamp[r + 1]; ++i)
      if (clock.ids[i] != KILN_KERNEL_END)
        slices[r].push_back({clock.ids[i], clock.stamps[i], clock.stamps[i + 1]});
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  double p90 = times[std::min(times.size() - 1, static_cast<size_t>(std::ceil(times.size() * 0.9)) - 1)];
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  kiln_memory_stats memory;
  kiln_session_memory_stats(session, &memory);
  llvm::outs() << "model " << modelPath << ", batch " << batch << ", " << runs << " runs after "
               << warmup << " warm-up\n"
               << "  median " << llvm::format("%.3f", median) << " ms, p90 "
               << llvm::format("%.3f", p90) << " ms, throughput "
               << llvm::format("%.1f", 1000.0 * batch / median) << " samples/s\n"
               << "  arena " << kiln_model_arena_bytes(model) / 1024
               << " KiB (planned); pool: peak " << memory.peak_bytes / 1024
               << " KiB in use, " << memory.reserved_bytes / 1024 << " KiB reserved in "
               << memory.heap_allocations << " blocks\n"
               << "  peak RSS " << usage.ru_maxrss / 1024 << " MiB\n";
  // A CPU session of several threads: how many runs used fewer
  // (kiln_session_thread_stats: another process held a core).
  kiln_thread_stats threadStats{};
  kiln_session_thread_stats(session, &threadStats);
  if (threadStats.threads > 1)
    llvm::outs() << "  threads " << threadStats.threads
                 << (threadStats.adaptive ? "" : " (adaptive threads off)");
  if (threadStats.threads > 1 && threadStats.adaptive)
    llvm::outs() << ", " << threadStats.reduced_runs << " of " << threadStats.runs << " runs on "
                 << threadStats.reduced_threads << " (" << threadStats.tries << " tries, "
                 << threadStats.switches << " switches)";
  if (threadStats.threads > 1)
    llvm::outs() << "\n";
  // A GPU session: how its runs were launched (the timed ones replay a
  // CUDA Graph once a bucket is captured: their median is the replay's
  // whole cost, copies of inputs and outputs included).
  kiln_device_stats device;
  if (kiln_session_device_stats(session, &device) == KILN_OK &&
      device.stream_runs + device.graph_replays > 0)
    llvm::outs() << "  GPU: " << device.stream_runs << " runs on the stream, "
                 << device.graph_captures << " CUDA Graph captures, " << device.graph_replays
                 << " replays; " << device.kernel_launches << " kernels and "
                 << device.library_calls << " library calls launched or captured, "
                 << device.device_allocations << " device allocations; "
                 << (device.bytes_to_device + 512) / 1024 << " KiB to the GPU and "
                 << (device.bytes_to_host + 512) / 1024 << " KiB back in all"
                 << (device.fallback[0] ? std::string("; ") + device.fallback : std::string())
                 << "\n";
  if (device.graph_replays > 0)
    llvm::outs() << llvm::format(
        "  GPU replays: host overhead %.2f us a replay (%.2f us of it copying inputs into "
        "pinned staging; the rest enqueueing copies and the graph launch), waiting for the GPU "
        "excluded\n",
        device.replay_host_ns / 1e3 / device.graph_replays,
        device.replay_staging_ns / 1e3 / device.graph_replays);
  kiln_library_plan_stats plans;
  if (kiln_session_library_plan_stats(session, &plans) == KILN_OK &&
      plans.cudnn_graph_plans + plans.cudnn_api_plans > 0)
    llvm::outs() << "  cuDNN: " << plans.cudnn_graph_plans << " convolution plans as fused "
                 << "graphs, " << plans.cudnn_api_plans << " through the convolution API"
                 << (plans.cudnn_fallback[0] ? std::string(" (first: ") + plans.cudnn_fallback + ")"
                                              : std::string())
                 << "\n";
  if (profile && kernels.empty())
    llvm::outs() << "  (the model's report lists no kernels: no per-kernel times)\n";
  if (perKernel > 0 && !runSpans.empty()) {
    std::vector<double> totalNs(kernels.size() + 1, 0.0);
    double runNs = 0, kernelNs = 0;
    for (size_t r = 0; r < runSpans.size(); ++r) {
      runNs += runSpans[r].second - runSpans[r].first;
      for (const Slice &s : slices[r]) {
        totalNs[std::min<size_t>(s.kernel, kernels.size())] += s.end - s.begin;
        kernelNs += s.end - s.begin;
      }
    }
    double n = static_cast<double>(runSpans.size());
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < kernels.size(); ++k)
      order.push_back(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return totalNs[a] > totalNs[b]; });
    llvm::outs() << "kernels by time (mean of " << runSpans.size() << " runs; "
                 << kernels.size() << " kernels take " << llvm::format("%.3f", kernelNs / n / 1e6)
                 << " ms of each " << llvm::format("%.3f", runNs / n / 1e6)
                 << " ms run, the rest is the runtime's and the code between kernels):\n"
                 << "   mean us  share    GB/s  kernel <- model nodes\n";
    for (size_t i = 0; i < order.size() && i < static_cast<size_t>(perKernel); ++i) {
      uint32_t k = order[i];
      double us = totalNs[k] / n / 1e3;
      double gbs = us > 0 && bytesKnown ? kernelBytes(kernels, k, batch) / (us * 1e3) : 0;
      llvm::outs() << llvm::format("%10.1f %5.1f%% ", us, 100.0 * totalNs[k] / runNs)
                   << (bytesKnown ? llvm::formatv("{0,7:f1}  ", gbs).str() : "      -  ")
                   << kernelName(kernels, k) << " <- " << opsSummary(kernels[k].ops, 2) << "\n";
    }
  }
  if (!tracePath.empty()) {
    // Chrome's trace event format (chrome://tracing, ui.perfetto.dev):
    // complete events ("X") in microseconds; kernels nest in their run.
    llvm::json::Array events;
    events.push_back(llvm::json::Object{
        {"name", "process_name"}, {"ph", "M"}, {"pid", 1},
        {"args", llvm::json::Object{{"name", "kiln bench " + modelPath}}}});
    events.push_back(llvm::json::Object{
        {"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1},
        {"args", llvm::json::Object{{"name", "session (batch " + std::to_string(batch) + ")"}}}});
    uint64_t origin = runSpans.empty() ? 0 : runSpans.front().first;
    auto us = [&](uint64_t ns) { return (ns - origin) / 1e3; };
    for (size_t r = 0; r < runSpans.size(); ++r) {
      events.push_back(llvm::json::Object{
          {"name", "run " + std::to_string(r)}, {"cat", "run"}, {"ph", "X"}, {"pid", 1},
          {"tid", 1}, {"ts", us(runSpans[r].first)},
          {"dur", (runSpans[r].second - runSpans[r].first) / 1e3},
          {"args", llvm::json::Object{{"batch", batch}}}});
      for (const Slice &s : slices[r]) {
        llvm::json::Array ops;
        if (s.kernel < kernels.size())
          for (const std::string &op : kernels[s.kernel].ops)
            ops.push_back(op);
        events.push_back(llvm::json::Object{
            {"name", kernelName(kernels, s.kernel)}, {"cat", "kernel"}, {"ph", "X"},
            {"pid", 1}, {"tid", 1}, {"ts", us(s.begin)}, {"dur", (s.end - s.begin) / 1e3},
            {"args", llvm::json::Object{{"kernel", s.kernel},
                                        {"model nodes", std::move(ops)},
                                        {"bytes", bytesKnown ? llvm::json::Value(kernelBytes(
                                                                   kernels, s.kernel, batch))
                                                             : llvm::json::Value(nullptr)}}}});
      }
    }
    std::error_code ec;
    llvm::raw_fd_ostream out(tracePath, ec);
    if (ec) {
      llvm::errs() << "kiln bench: cannot write '" << tracePath << "': " << ec.message() << "\n";
      return 1;
    }
    out << llvm::json::Value(llvm::json::Object{{"traceEvents", std::move(events)},
                                                {"displayTimeUnit", "ms"}});
    out << "\n";
    llvm::outs() << "trace: " << tracePath << " (" << runSpans.size() << " runs, "
                 << kernels.size() << " kernels each; open in ui.perfetto.dev)\n";
  }
  return 0;
}

} // namespace kiln::cli
