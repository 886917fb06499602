#include "analyzer/diff/comparability.h"

#include <algorithm>
#include <cstdio>
#include <map>

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

std::string pathList(const std::vector<std::string>& paths) {
  std::string text;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) text += (i ? ", " : "") + paths[i];
  if (paths.size() > 3) text += " and " + std::to_string(paths.size() - 3) + " more";
  return text;
}

// Every object path a trace recorded, with its build-id or "" when it had none.
std::map<std::string, std::string> objectsOf(const TraceFacts& facts) {
  std::map<std::string, std::string> objects = facts.build_ids;
  for (const std::string& path : facts.unidentified_objects) objects.try_emplace(path, "");
  return objects;
}

constexpr const char* kByName = "functions matched by name; addresses are not compared";

void compareBuildIds(const TraceFacts& base, const TraceFacts& next,
                     std::vector<ComparabilityNote>& notes) {
  std::map<std::string, std::string> base_objects = objectsOf(base), new_objects = objectsOf(next);
  if (base.build_ids.empty() || next.build_ids.empty()) {
    // Without build-ids on one side, equal paths prove nothing: say so instead
    // of implying the binaries are the same.
    const char* which = base.build_ids.empty() && next.build_ids.empty() ? "either trace"
                        : base.build_ids.empty()                         ? "base"
                                                                         : "new";
    notes.push_back({"build-id",
                     std::string("no build-ids in ") + which +
                         ": cannot tell whether the binaries are the same",
                     kByName});
    return;
  }
  std::vector<std::string> only_base, only_new, unknown;
  for (const auto& [path, id] : base_objects) {
    auto found = new_objects.find(path);
    if (found == new_objects.end()) {
      only_base.push_back(path);
    } else if (id.empty() || found->second.empty()) {
      unknown.push_back(path);
    } else if (found->second != id) {
      notes.push_back({"build-id",
                       path + " is a different binary: build-id " + shortId(id) + " in base, " +
                           shortId(found->second) + " in new",
                       kByName});
    }
  }
  for (const auto& [path, id] : new_objects) {
    if (!base_objects.count(path)) only_new.push_back(path);
  }
  if (!unknown.empty()) {
    notes.push_back(
        {"build-id",
         "no build-id for " + pathList(unknown) + ": cannot tell whether it is the same binary",
         kByName});
  }
  if (!only_base.empty()) {
    notes.push_back({"objects", "only in base: " + pathList(only_base),
                     "their functions show as gone (new share 0)"});
  }
  if (!only_new.empty()) {
    notes.push_back({"objects", "only in new: " + pathList(only_new),
                     "their functions show as new (base share 0)"});
  }
}

void compareAllocations(const TraceFacts& base, const TraceFacts& next,
                        std::vector<ComparabilityNote>& notes) {
  if (base.allocation_samples == 0 && next.allocation_samples == 0) return;
  if (base.allocation_samples == 0 || next.allocation_samples == 0) {
    const bool only_new = base.allocation_samples == 0;
    notes.push_back(
        {"allocations",
         std::string("sampled allocations (--alloc) only in ") + (only_new ? "new" : "base"),
         std::string("its allocation sites show as ") +
             (only_new ? "new (base 0)" : "gone (new 0)")});
    return;
  }
  if (base.alloc_sample_bytes != next.alloc_sample_bytes && base.alloc_sample_bytes != 0 &&
      next.alloc_sample_bytes != 0) {
    notes.push_back({"allocations",
                     "allocations sampled once per " + formatBytes(base.alloc_sample_bytes) +
                         " in base, " + formatBytes(next.alloc_sample_bytes) + " in new",
                     "both estimated in bytes and allocations, so they compare; the rarer "
                     "sampling is the rougher"});
  }
  if (std::min(base.allocation_samples, next.allocation_samples) < kFewSamples) {
    notes.push_back({"allocations",
                     "few allocation samples: " + std::to_string(base.allocation_samples) +
                         " in base, " + std::to_string(next.allocation_samples) + " in new",
                     "a site's bytes have a relative error of about 1/sqrt(its samples)"});
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
  compareAllocations(base, next, notes);
  return notes;
}

}  // namespace incise::analyzer
