// The differential flame graph of `incise diff`: one graph of both traces'
// on-CPU call paths, drawn by the shared flame renderer with a FrameStyler.
//
// Widths: each path weighs the larger of its two shares (parts per million
// of its own trace's samples), so paths that vanished stay visible.
// Colours: the change in the frame's share (new - base), red = grew,
// blue = shrank, grey = unchanged (under 0.1 point), saturation relative to
// the largest change in the graph. Tooltips and the search give each
// trace's own share (of its own samples) and the change, never a share of
// the drawn width, which adds the larger of two shares and so can reach 200%.
//
//   DiffFlameGraph graph(base.on_cpu, next.on_cpu);
//   graph.writeHtml({.title = "base.trace -> new.trace"}, out);
//   graph.change("main;parse");   // +0.125: parse's share grew 12.5 points
#pragma once

#include <ostream>
#include <string>
#include <unordered_map>

#include "analyzer/render/flame_graph.h"
#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {

class DiffFlameGraph {
 public:
  static constexpr uint64_t kPartsPerMillion = 1'000'000;

  DiffFlameGraph(const FoldedStacks& base, const FoldedStacks& next);

  // Share of each trace's total (0..1) under a root-first path prefix.
  double baseShare(const std::string& path) const { return shareOf(base_, base_total_, path); }
  double newShare(const std::string& path) const { return shareOf(next_, new_total_, path); }
  double change(const std::string& path) const { return newShare(path) - baseShare(path); }

  const FoldedStacks& combined() const { return combined_; }
  FrameStyle style(const std::string& path) const;

  void writeHtml(FlameGraphOptions options, std::ostream& out) const;
  void writeSvg(FlameGraphOptions options, std::ostream& out) const;

 private:
  using PrefixWeights = std::unordered_map<std::string, uint64_t>;
  static PrefixWeights prefixWeights(const FoldedStacks& folded);
  static uint64_t weightOf(const PrefixWeights& weights, const std::string& path);
  static double shareOf(const PrefixWeights& weights, uint64_t total, const std::string& path);
  FlameGraphOptions styled(FlameGraphOptions options) const;

  PrefixWeights base_, next_;
  uint64_t base_total_ = 0, new_total_ = 0;
  double max_change_ = 0;
  FoldedStacks combined_;
};

}  // namespace incise::analyzer
