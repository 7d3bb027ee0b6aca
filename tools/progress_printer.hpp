// Live progress for tune: one redrawn status line on a terminal, one line per
// candidate otherwise, nothing with --quiet. Writes to stderr so that --json
// output on stdout stays clean.
#pragma once

#include "tuner.hpp"

namespace kforge::cli {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet);
  void operator()(const TuneEvent& e);

 private:
  bool quiet_;
  bool tty_;
};

}  // namespace kforge::cli
