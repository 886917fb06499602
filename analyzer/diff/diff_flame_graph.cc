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

uint64_t DiffFlameGraph::weightOf(const PrefixWeights& weights, const std::string& path) {
  auto found = weights.find(path);
  return found == weights.end() ? 0 : found->second;
}

double DiffFlameGraph::shareOf(const PrefixWeights& weights, uint64_t total,
                               const std::string& path) {
  if (total == 0) return 0;
  return static_cast<double>(weightOf(weights, path)) / static_cast<double>(total);
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
  double delta = change(path);
  // A change under 0.1 point of either trace is "unchanged": grey, visible
  // on the background. Others go from a pale to a full red (grew) or blue
  // (shrank), saturation relative to the largest change in the graph.
  if (max_change_ <= 0 || std::abs(delta) < 0.001) return {"rgb(215,215,215)", ""};
  double strength = std::abs(delta) / max_change_;
  int fade = 210 - static_cast<int>(std::lround(160 * strength));
  char fill[48];
  if (delta > 0) {
    std::snprintf(fill, sizeof fill, "rgb(255,%d,%d)", fade, fade);
  } else {
    std::snprintf(fill, sizeof fill, "rgb(%d,%d,255)", fade, fade);
  }
  return {fill, ""};
}

FlameGraphOptions DiffFlameGraph::styled(FlameGraphOptions options) const {
  options.unit = "samples";
  options.style = [this](const std::string& path) { return style(path); };
  options.comparison =
      FlameComparison{.base_total = base_total_,
                      .new_total = new_total_,
                      .weights = [this](const std::string& path) {
                        return std::pair{weightOf(base_, path), weightOf(next_, path)};
                      }};
  return options;
}

void DiffFlameGraph::writeHtml(FlameGraphOptions options, std::ostream& out) const {
  writeFlameGraphHtml(combined_, styled(std::move(options)), out);
}

void DiffFlameGraph::writeSvg(FlameGraphOptions options, std::ostream& out) const {
  writeFlameGraphSvg(combined_, styled(std::move(options)), out);
}

}  // namespace incise::analyzer
