#include "analyzer/diff/diff_flame_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace incise::analyzer {
namespace {

uint64_t partsPerMillion(uint64_t weight, uint64_t total) {
  if (total == 0) return 0;
  return static_cast<uint64_t>(std::llround(
      static_cast<double>(weight) * DiffFlameGraph::kPartsPerMillion / static_cast<double>(total)));
}

std::string percentText(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", 100 * share);
  return buffer;
}

}  // namespace

DiffFlameGraph::PrefixWeights DiffFlameGraph::prefixWeights(const FoldedStacks& folded) {
  PrefixWeights weights;
  for (const auto& [path, weight] : folded.paths()) {
    for (size_t end = path.find(';');; end = path.find(';', end + 1)) {
      weights[path.substr(0, end)] += weight;
      if (end == std::string::npos) break;
    }
  }
  return weights;
}

double DiffFlameGraph::shareOf(const PrefixWeights& weights, uint64_t total,
                               const std::string& path) {
  auto found = weights.find(path);
  if (found == weights.end() || total == 0) return 0;
  return static_cast<double>(found->second) / static_cast<double>(total);
}

DiffFlameGraph::DiffFlameGraph(const FoldedStacks& base, const FoldedStacks& next)
    : base_(prefixWeights(base)),
      next_(prefixWeights(next)),
      base_total_(base.total()),
      new_total_(next.total()) {
  std::map<std::string, uint64_t> widths;
  for (const auto& [path, weight] : base.paths()) {
    widths[path] = partsPerMillion(weight, base_total_);
  }
  for (const auto& [path, weight] : next.paths()) {
    uint64_t& width = widths[path];
    width = std::max(width, partsPerMillion(weight, new_total_));
  }
  for (const auto& [path, width] : widths) combined_.add(FoldedStacks::split(path), width);
  for (const auto& [path, weight] : base_)
    max_change_ = std::max(max_change_, std::abs(change(path)));
  for (const auto& [path, weight] : next_)
    max_change_ = std::max(max_change_, std::abs(change(path)));
}

FrameStyle DiffFlameGraph::style(const std::string& path) const {
  double before = baseShare(path), after = newShare(path), delta = after - before;
  // 0 (white) .. 1 (full red or blue); a change under 0.1% of either trace stays white.
  double strength = max_change_ > 0 && std::abs(delta) >= 0.001 ? std::abs(delta) / max_change_ : 0;
  int fade = 255 - static_cast<int>(std::lround(200 * strength));
  char fill[48];
  if (delta > 0) {
    std::snprintf(fill, sizeof fill, "rgb(255,%d,%d)", fade, fade);
  } else {
    std::snprintf(fill, sizeof fill, "rgb(%d,%d,255)", fade, fade);
  }
  char change_text[32];
  std::snprintf(change_text, sizeof change_text, "%+.2f pp", 100 * delta);
  return {fill, "base " + percentText(before) + " -> new " + percentText(after) + " (" +
                    change_text + ")"};
}

FlameGraphOptions DiffFlameGraph::styled(FlameGraphOptions options) const {
  options.unit = "ppm (larger share of the two)";
  options.style = [this](const std::string& path) { return style(path); };
  return options;
}

void DiffFlameGraph::writeHtml(FlameGraphOptions options, std::ostream& out) const {
  writeFlameGraphHtml(combined_, styled(std::move(options)), out);
}

void DiffFlameGraph::writeSvg(FlameGraphOptions options, std::ostream& out) const {
  writeFlameGraphSvg(combined_, styled(std::move(options)), out);
}

}  // namespace incise::analyzer
