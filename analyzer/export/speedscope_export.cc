#include "analyzer/export/speedscope_export.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {
namespace {

struct TimedSample {
  uint64_t time;
  uint32_t stack;  // index into the interned stacks
  uint64_t weight;
};

struct ThreadSamples {
  uint32_t pid = 0;
  std::vector<TimedSample> samples;
};

}  // namespace

SpeedscopeStats writeSpeedscope(Trace& trace, std::ostream& out) {
  const format::Header& header = trace.header();
  bool nanoseconds =
      header.options.sample_event.empty() || header.options.sample_event == "cpu-clock";
  StackNamer namer(trace, FrameGrouping::kFunction);
  std::unordered_map<std::string, uint32_t> frame_index;
  nlohmann::json frames = nlohmann::json::array();
  std::vector<std::vector<uint32_t>> stacks;                      // root-first frame indexes
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> stack_index;  // (pid, stack id)
  std::map<uint32_t, ThreadSamples> threads;

  trace.forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    auto [it, inserted] = stack_index.try_emplace({s.pid, s.stack_id}, 0);
    if (inserted) {
      std::vector<std::string> names =
          namer.rootFirst(static_cast<uint32_t>(s.pid), s.stack_id, s.time);
      if (names.empty()) names.push_back("[no stack]");
      std::vector<uint32_t> indexes;
      for (const auto& name : names) {
        auto [frame, fresh] = frame_index.try_emplace(name, static_cast<uint32_t>(frames.size()));
        if (fresh) frames.push_back({{"name", name}});
        indexes.push_back(frame->second);
      }
      it->second = static_cast<uint32_t>(stacks.size());
      stacks.push_back(std::move(indexes));
    }
    ThreadSamples& thread = threads[static_cast<uint32_t>(s.tid)];
    thread.pid = static_cast<uint32_t>(s.pid);
    thread.samples.push_back({s.time, it->second, nanoseconds ? s.weight : 1});
  });

  SpeedscopeStats stats;
  nlohmann::json profiles = nlohmann::json::array();
  for (auto& [tid, thread] : threads) {
    std::stable_sort(thread.samples.begin(), thread.samples.end(),
                     [](const TimedSample& a, const TimedSample& b) { return a.time < b.time; });
    nlohmann::json samples = nlohmann::json::array();
    nlohmann::json weights = nlohmann::json::array();
    uint64_t total = 0;
    for (const TimedSample& sample : thread.samples) {
      samples.push_back(stacks[sample.stack]);
      weights.push_back(sample.weight);
      total += sample.weight;
    }
    std::string name = trace.threadName(tid, thread.samples.front().time);
    profiles.push_back(
        {{"type", "sampled"},
         {"name", (name.empty() ? "thread" : name) + " (pid " + std::to_string(thread.pid) +
                      ", tid " + std::to_string(tid) + ")"},
         {"unit", nanoseconds ? "nanoseconds" : "none"},
         {"startValue", 0},
         {"endValue", total},
         {"samples", std::move(samples)},
         {"weights", std::move(weights)}});
    stats.samples += thread.samples.size();
  }
  stats.profiles = profiles.size();
  stats.frames = frames.size();
  nlohmann::json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                        {"exporter", "incise"},
                        {"name", trace.path()},
                        {"activeProfileIndex", 0},
                        {"shared", {{"frames", std::move(frames)}}},
                        {"profiles", std::move(profiles)}};
  out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return stats;
}

}  // namespace incise::analyzer
