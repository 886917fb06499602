#include "analyzer/diff/comparability.h"

#include <algorithm>
#include <cstdio>

#include "analyzer/render/table.h"

namespace incise::analyzer {
namespace {

constexpr const char* kShares =
    "CPU compared as shares of each trace's samples, off-CPU as ns per second of trace";

std::string shortId(const std::string& hex) {
  return hex.size() > 12 ? hex.substr(0, 12) : hex;
}

std::string ratioText(double ratio) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1fx", ratio);
  return buffer;
}

// >= 1: how many times larger the larger value is; 0 when either is 0.
double ratioOf(double a, double b) {
  if (a <= 0 || b <= 0) return 0;
  return std::max(a, b) / std::min(a, b);
}

void compareBuildIds(const TraceFacts& base, const TraceFacts& next,
                     std::vector<ComparabilityNote>& notes) {
  std::vector<std::string> only_base, only_new;
  for (const auto& [path, id] : base.build_ids) {
    auto found = next.build_ids.find(path);
    if (found == next.build_ids.end()) {
      only_base.push_back(path);
    } else if (found->second != id) {
      notes.push_back({"build-id",
                       path + " is a different binary: build-id " + shortId(id) + " in base, " +
                           shortId(found->second) + " in new",
                       "functions matched by name; addresses are not compared"});
    }
  }
  for (const auto& [path, id] : next.build_ids) {
    if (!base.build_ids.count(path)) only_new.push_back(path);
  }
  auto list = [](const std::vector<std::string>& paths) {
    std::string text;
    for (size_t i = 0; i < paths.size() && i < 3; ++i) text += (i ? ", " : "") + paths[i];
    if (paths.size() > 3) text += " and " + std::to_string(paths.size() - 3) + " more";
    return text;
  };
  if (!only_base.empty()) {
    notes.push_back({"objects", "only in base: " + list(only_base),
                     "their functions show as gone (new share 0)"});
  }
  if (!only_new.empty()) {
    notes.push_back({"objects", "only in new: " + list(only_new),
                     "their functions show as new (base share 0)"});
  }
}

}  // namespace

std::vector<ComparabilityNote> assessComparability(const TraceFacts& base, const TraceFacts& next) {
  std::vector<ComparabilityNote> notes;
  compareBuildIds(base, next, notes);

  double durations =
      ratioOf(static_cast<double>(base.duration_ns), static_cast<double>(next.duration_ns));
  if (durations > kDurationRatio) {
    notes.push_back({"duration",
                     "durations differ " + ratioText(durations) + ": base " +
                         formatDurationNs(base.duration_ns) + ", new " +
                         formatDurationNs(next.duration_ns),
                     kShares});
  }
  if (base.sample_hz != next.sample_hz && base.sample_hz != 0 && next.sample_hz != 0) {
    notes.push_back({"sample-rate",
                     "sampled at " + std::to_string(base.sample_hz) + " Hz in base, " +
                         std::to_string(next.sample_hz) + " Hz in new",
                     kShares});
  } else {
    double rates = ratioOf(base.sampleRate(), next.sampleRate());
    if (rates > kRateRatio) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "achieved sample rates differ %s: %.0f/s in base, %.0f/s in new "
                    "(busier or idler machine, or lost samples)",
                    ratioText(rates).c_str(), base.sampleRate(), next.sampleRate());
      notes.push_back({"sample-rate", text, kShares});
    }
  }
  if (std::min(base.samples, next.samples) < kFewSamples) {
    notes.push_back({"samples",
                     "few CPU samples: " + std::to_string(base.samples) + " in base, " +
                         std::to_string(next.samples) + " in new",
                     "shares are shown but changes of a few percentage points may be noise"});
  }
  if (base.host != next.host) {
    notes.push_back({"host", "recorded on different hosts: " + base.host + ", " + next.host,
                     "compared as is; hardware and load may differ"});
  }
  if (base.kernel != next.kernel) {
    notes.push_back({"kernel", "different kernels: " + base.kernel + ", " + next.kernel,
                     "kernel functions matched by name"});
  }
  return notes;
}

}  // namespace incise::analyzer
