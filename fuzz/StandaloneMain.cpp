//===- StandaloneMain.cpp - run a fuzz target without libFuzzer -----------===//
//
// The ordinary build (GCC, no libFuzzer) links each fuzz target with this
// driver, so that `make test` replays the seed corpus and the crash
// regressions through every target and then a fixed number of inputs
// mutated from them, deterministically (the same inputs every run):
//
//   fuzz-X [-runs=N] [-seed=S] [-dict=FILE] [-max_len=L] PATH...
//
// PATHs are files or folders (read recursively). Mutations: set, flip,
// insert or erase bytes, duplicate a range, splice two corpus files, insert
// a dictionary token (libFuzzer's dictionary format). A crash ends the
// process with its signal after writing the input to ./crash-input and
// naming where it came from; a run that ends prints "1 passed, 0 failed".
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

namespace {

using Bytes = std::vector<uint8_t>;

struct Input {
  std::string origin;
  Bytes bytes;
};

// What is running now, for the crash handler.
const Bytes *current;
char currentOrigin[512];

void onCrash(int sig) {
  // Only async-signal-safe calls.
  int fd = ::creat("crash-input", 0644);
  if (fd >= 0 && current) {
    ssize_t ignored = ::write(fd, current->data(), current->size());
    (void)ignored;
    ::close(fd);
  }
  const char head[] = "fuzz driver: crash on the input from ";
  ssize_t ignored = ::write(2, head, sizeof head - 1);
  ignored = ::write(2, currentOrigin, strlen(currentOrigin));
  const char tail[] = " (written to ./crash-input)\n";
  ignored = ::write(2, tail, sizeof tail - 1);
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool readFile(const std::string &path, Bytes &out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  uint8_t buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    out.insert(out.end(), buffer, buffer + n);
  std::fclose(f);
  return true;
}

void collect(const std::string &path, std::vector<Input> &inputs, size_t maxLen) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "fuzz driver: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  if (S_ISDIR(st.st_mode)) {
    DIR *dir = ::opendir(path.c_str());
    std::vector<std::string> names;
    while (dirent *entry = dir ? ::readdir(dir) : nullptr)
      if (entry->d_name[0] != '.')
        names.push_back(entry->d_name);
    if (dir)
      ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const std::string &name : names)
      collect(path + "/" + name, inputs, maxLen);
    return;
  }
  Input input{path, {}};
  if (readFile(path, input.bytes) && input.bytes.size() <= maxLen)
    inputs.push_back(std::move(input));
}

// libFuzzer's dictionary format: name="value" lines, \xNN and \\ escapes.
std::vector<Bytes> readDictionary(const std::string &path) {
  std::vector<Bytes> tokens;
  Bytes text;
  if (!readFile(path, text)) {
    std::fprintf(stderr, "fuzz driver: cannot read the dictionary %s\n", path.c_str());
    std::exit(2);
  }
  std::string all(text.begin(), text.end());
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find('\n', at);
    std::string line = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? all.size() : end + 1;
    size_t open = line.find('"'), close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open)
      continue;
    Bytes token;
    for (size_t i = open + 1; i < close; ++i) {
      if (line[i] == '\\' && i + 1 < close && line[i + 1] == 'x' && i + 3 < close) {
        token.push_back(static_cast<uint8_t>(std::strtoul(line.substr(i + 2, 2).c_str(), nullptr, 16)));
        i += 3;
      } else if (line[i] == '\\' && i + 1 < close) {
        token.push_back(static_cast<uint8_t>(line[++i]));
      } else {
        token.push_back(static_cast<uint8_t>(line[i]));
      }
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

struct Random {
  uint64_t state;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  size_t below(size_t n) { return n ? next() % n : 0; }
};

Bytes mutate(const std::vector<Input> &corpus, const std::vector<Bytes> &dictionary,
             Random &random, size_t maxLen) {
  Bytes out = corpus[random.below(corpus.size())].bytes;
  int steps = 1 + static_cast<int>(random.below(4));
  for (int s = 0; s < steps; ++s) {
    size_t at = random.below(out.size() + 1);
    switch (random.below(7)) {
    case 0: // set a byte
      if (!out.empty())
        out[random.below(out.size())] = static_cast<uint8_t>(random.next());
      break;
    case 1: // flip a bit
      if (!out.empty())
        out[random.below(out.size())] ^= static_cast<uint8_t>(1u << random.below(8));
      break;
    case 2: // insert bytes
      out.insert(out.begin() + at, 1 + random.below(8), static_cast<uint8_t>(random.next()));
      break;
    case 3: // erase a range
      if (at < out.size())
        out.erase(out.begin() + at, out.begin() + at + 1 + random.below(std::min<size_t>(16, out.size() - at)));
      break;
    case 4: { // duplicate a range
      if (out.empty())
        break;
      size_t from = random.below(out.size()), n = 1 + random.below(std::min<size_t>(64, out.size() - from));
      Bytes range(out.begin() + from, out.begin() + from + n);
      out.insert(out.begin() + at, range.begin(), range.end());
      break;
    }
    case 5: { // splice with another input
      const Bytes &other = corpus[random.below(corpus.size())].bytes;
      size_t from = random.below(other.size() + 1);
      out.resize(at);
      out.insert(out.end(), other.begin() + from, other.end());
      break;
    }
    default: // a dictionary token
      if (!dictionary.empty()) {
        const Bytes &token = dictionary[random.below(dictionary.size())];
        out.insert(out.begin() + at, token.begin(), token.end());
      }
      break;
    }
  }
  if (out.size() > maxLen)
    out.resize(maxLen);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  long runs = 0;
  uint64_t seed = 1;
  size_t maxLen = 1 << 20;
  std::string dictionaryPath;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("-runs=", 0) == 0)
      runs = std::atol(arg.c_str() + 6);
    else if (arg.rfind("-seed=", 0) == 0)
      seed = std::strtoull(arg.c_str() + 6, nullptr, 10);
    else if (arg.rfind("-dict=", 0) == 0)
      dictionaryPath = arg.substr(6);
    else if (arg.rfind("-max_len=", 0) == 0)
      maxLen = std::strtoull(arg.c_str() + 9, nullptr, 10);
    else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "fuzz driver: unknown option %s\n", arg.c_str());
      return 2;
    } else
      paths.push_back(arg);
  }
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<Input> corpus;
  for (const std::string &path : paths)
    collect(path, corpus, maxLen);
  std::vector<Bytes> dictionary;
  if (!dictionaryPath.empty())
    dictionary = readDictionary(dictionaryPath);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(sig, onCrash);

  for (const Input &input : corpus) {
    current = &input.bytes;
    std::snprintf(currentOrigin, sizeof currentOrigin, "%s", input.origin.c_str());
    LLVMFuzzerTestOneInput(input.bytes.data(), input.bytes.size());
  }
  Random random{seed * 0x9E3779B97F4A7C15ull + 1};
  if (corpus.empty())
    corpus.push_back({"(empty input)", {}});
  for (long r = 0; r < runs; ++r) {
    Bytes bytes = mutate(corpus, dictionary, random, maxLen);
    current = &bytes;
    std::snprintf(currentOrigin, sizeof currentOrigin, "mutation %ld (-seed=%llu)", r,
                  static_cast<unsigned long long>(seed));
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("%s: %zu corpus inputs and %ld mutated inputs, no crash\n", argv[0],
              corpus.size(), runs);
  std::printf("1 passed, 0 failed\n");
  return 0;
}
