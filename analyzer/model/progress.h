// ProgressBar: a one-line bar on stderr for work that takes a while.
//
// It stays silent unless stderr is a terminal and the work has already run
// for about a second, so quick reports and pipes never see it. Redraws at
// most ten times a second; the line is cleared when the bar is destroyed.
// Not thread-safe: advance it from one thread (the chunk decoder does so from
// the thread that delivers chunks in order).
//
//   ProgressBar bar("decoding", total_rows);
//   for (...) bar.advance(chunk.rows());
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace incise::analyzer {

class ProgressBar {
 public:
  // `enabled` = false silences the bar regardless of the terminal.
  ProgressBar(std::string label, uint64_t total, bool enabled = true);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance(uint64_t units);
  uint64_t done() const { return done_; }
  // The bar as drawn, e.g. "decoding [#####.....]  50%"; public for tests.
  static std::string format(const std::string& label, uint64_t done, uint64_t total, int width);

 private:
  void draw();

  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace incise::analyzer
