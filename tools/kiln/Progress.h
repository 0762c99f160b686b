//===- Progress.h - a command's progress on the terminal --------*- C++ -*-===//
//
// Steps of long work on standard error: on a terminal, one line redrawn
// as a bar (`[=====>    ] 4/7 plan  2.3 s`) and cleared at the end; else
// one plain line per step (`kiln compile: [4/7] plan (2.3 s)`), so logs
// show where time went. Silent when quiet.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_PROGRESS_H
#define KILN_TOOLS_KILN_PROGRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <string>
#include <unistd.h>

namespace kiln::cli {

class Progress {
public:
  Progress(llvm::StringRef command, size_t total, bool quiet)
      : command(command.str()), total(total), quiet(quiet), terminal(isatty(2)),
        start(std::chrono::steady_clock::now()) {}
  ~Progress() { finish(); }

  /// Step `index` (0-based) of `total`, named `name`, starts.
  void step(size_t index, llvm::StringRef name) {
    if (quiet)
      return;
    double seconds = elapsed();
    if (!terminal) {
      llvm::errs() << "kiln " << command << ": [" << index + 1 << "/" << total << "] " << name
                   << " (" << llvm::format("%.1f", seconds) << " s)\n";
      return;
    }
    constexpr size_t width = 24;
    size_t filled = total ? width * index / total : 0;
    std::string bar(filled, '=');
    bar += '>';
    bar.resize(width, ' ');
    llvm::errs() << "\r\033[K[" << bar << "] " << index + 1 << "/" << total << " " << name
                 << "  " << llvm::format("%.1f", seconds) << " s";
    llvm::errs().flush();
    drawn = true;
  }

  /// Clears the bar (a terminal) before the command prints its result.
  void finish() {
    if (drawn) {
      llvm::errs() << "\r\033[K";
      llvm::errs().flush();
      drawn = false;
    }
  }

private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::string command;
  size_t total;
  bool quiet, terminal, drawn = false;
  std::chrono::steady_clock::time_point start;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_PROGRESS_H
