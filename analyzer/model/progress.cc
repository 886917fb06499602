#include "analyzer/model/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace incise::analyzer {
namespace {
constexpr auto kQuietPeriod = std::chrono::seconds(1);
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr int kBarWidth = 30;
}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      terminal_(enabled && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

std::string ProgressBar::format(const std::string& label, uint64_t done, uint64_t total,
                                int width) {
  uint64_t clamped = std::min(done, total);
  int filled = total == 0 ? width : static_cast<int>(clamped * width / total);
  int percent = total == 0 ? 100 : static_cast<int>(clamped * 100 / total);
  std::string bar =
      label + " [" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  std::string pct = std::to_string(percent) + "%";
  return bar + std::string(pct.size() < 4 ? 4 - pct.size() : 0, ' ') + pct;
}

void ProgressBar::advance(uint64_t units) {
  done_ += units;
  if (!terminal_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < kQuietPeriod || now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  draw();
}

void ProgressBar::draw() {
  std::fprintf(stderr, "\r%s", format(label_, done_, total_, kBarWidth).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace incise::analyzer
