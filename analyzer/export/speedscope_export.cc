#include "analyzer/export/speedscope_export.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analyzer/model/stack_namer.h"
#include "analyzer/render/json_output.h"

namespace incise::analyzer {
namespace {

std::string quoted(const std::string& text) {
  return jsonQuoted(text);
}

// All that is kept of a sample until its thread's profile is written.
struct TimedSample {
  uint64_t time;
  uint64_t weight;
  uint32_t stack;  // index into Stacks
};

struct ThreadSamples {
  uint32_t pid = 0;
  std::vector<TimedSample> samples;
};

// Distinct call paths as speedscope writes them ("[3,0,7]", root first), and
// the frame names they index: speedscope's frame index is the name id, and
// (pid, stack id, goroutine) keys that name the same path share one text. A
// sample of a Go program's goroutine has "[goroutine N]" as its root frame,
// the one place a speedscope sample can carry it.
class Stacks {
 public:
  explicit Stacks(Trace& trace) : namer_(trace, FrameGrouping::kFunction) {}

  uint32_t indexOf(uint32_t pid, uint64_t stack_id, uint64_t goid, uint64_t time) {
    auto [it, inserted] = index_.try_emplace({pid, stack_id, goid}, 0);
    if (!inserted) return it->second;
    std::span<const NameId> ids = namer_.rootFirst(pid, stack_id, time);
    NameId no_stack[1] = {};
    if (ids.empty()) {
      no_stack[0] = namer_.names().intern("[no stack]");
      ids = no_stack;
    }
    std::string text = "[";
    if (goid != 0)
      text += std::to_string(namer_.names().intern("[goroutine " + std::to_string(goid) + "]"));
    for (NameId id : ids) {
      if (text.size() > 1) text += ',';
      text += std::to_string(id);
    }
    text += ']';
    auto [known, fresh] = text_index_.try_emplace(std::move(text), 0);
    if (fresh) {
      known->second = static_cast<uint32_t>(texts_.size());
      texts_.push_back(&known->first);
    }
    it->second = known->second;
    return it->second;
  }
  const std::string& text(uint32_t index) const { return *texts_[index]; }
  const NameTable& frames() const { return namer_.names(); }

 private:
  StackNamer namer_;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint32_t> index_;  // (pid, stack id, goid)
  std::unordered_map<std::string, uint32_t> text_index_;
  std::vector<const std::string*> texts_;  // keys of text_index_, which do not move
};

void writeProfile(Trace& trace, uint32_t tid, ThreadSamples& thread, const Stacks& stacks,
                  bool nanoseconds, std::ostream& out) {
  std::stable_sort(thread.samples.begin(), thread.samples.end(),
                   [](const TimedSample& a, const TimedSample& b) { return a.time < b.time; });
  uint64_t total = 0;
  for (const TimedSample& sample : thread.samples) total += sample.weight;
  std::string name = trace.threadName(tid, thread.samples.front().time);
  out << "{\"type\":\"sampled\",\"name\":"
      << quoted((name.empty() ? "thread" : name) + " (pid " + std::to_string(thread.pid) +
                ", tid " + std::to_string(tid) + ")")
      << ",\"unit\":\"" << (nanoseconds ? "nanoseconds" : "none")
      << "\",\"startValue\":0,\"endValue\":" << total << ",\n\"samples\":[";
  for (size_t i = 0; i < thread.samples.size(); ++i) {
    out << (i ? "," : "") << stacks.text(thread.samples[i].stack);
  }
  out << "],\n\"weights\":[";
  for (size_t i = 0; i < thread.samples.size(); ++i) {
    out << (i ? "," : "") << thread.samples[i].weight;
  }
  out << "]}";
}

// The profile speedscope opens on: the thread with the most weight (the
// lowest tid of equals), counted in the order profiles are written.
size_t busiestProfile(const std::map<uint32_t, ThreadSamples>& threads) {
  size_t index = 0, busiest = 0;
  uint64_t most = 0;
  for (const auto& [tid, thread] : threads) {
    uint64_t weight = 0;
    for (const TimedSample& sample : thread.samples) weight += sample.weight;
    if (weight > most) {
      most = weight;
      busiest = index;
    }
    ++index;
  }
  return busiest;
}

}  // namespace

SpeedscopeStats writeSpeedscope(Trace& trace, std::ostream& out) {
  const format::Header& header = trace.header();
  bool nanoseconds = format::sampleEventIsClock(header.options);
  Stacks stacks(trace);
  std::map<uint32_t, ThreadSamples> threads;
  trace.forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    uint32_t stack = stacks.indexOf(static_cast<uint32_t>(s.pid), s.stack_id, s.goid, s.time);
    ThreadSamples& thread = threads[static_cast<uint32_t>(s.tid)];
    thread.pid = static_cast<uint32_t>(s.pid);
    // A clock's period is ns; another event's, the events the sample stands for.
    thread.samples.push_back({s.time, s.weight, stack});
  });

  // Profiles first, each thread's samples released once written; the frame
  // table last, as it is complete only now (JSON does not care about order).
  SpeedscopeStats stats;
  out << "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
      << "\"exporter\":\"incise\",\"name\":" << quoted(trace.path())
      << ",\"activeProfileIndex\":" << busiestProfile(threads) << ",\n\"profiles\":[\n";
  for (auto& [tid, thread] : threads) {
    if (stats.profiles++ != 0) out << ",\n";
    writeProfile(trace, tid, thread, stacks, nanoseconds, out);
    stats.samples += thread.samples.size();
    thread.samples = {};
  }
  out << "\n],\n\"shared\":{\"frames\":[";
  const NameTable& frames = stacks.frames();
  for (NameId id = 0; id < frames.size(); ++id) {
    out << (id ? ",\n" : "\n") << "{\"name\":" << quoted(frames.name(id)) << "}";
  }
  out << "]}}\n";
  stats.frames = frames.size();
  return stats;
}

}  // namespace incise::analyzer
