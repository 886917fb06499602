#include "analyzer/export/chrome_trace_export.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/trace_lock_rows.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/analyses/summaries/trace_summaries.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/render/json_output.h"
#include "analyzer/reports/lock_report_text.h"

namespace incise::analyzer {
namespace {

std::string quoted(const std::string& text) {
  return jsonQuoted(text);
}

// The trace's "stackFrames" dictionary: a tree of call paths, each node a
// frame (name, module as category) with a link to its caller. A stack is the
// id of its leaf node, so every distinct call path prefix is written once.
class StackFrameTable {
 public:
  // The node for `name` called from `parent` (0: a root frame).
  uint64_t node(uint64_t parent, const std::string& name, const std::string& module) {
    auto [it, inserted] = ids_.try_emplace({parent, name}, nodes_.size() + 1);
    if (inserted) nodes_.push_back({parent, name, module});
    return it->second;
  }

  void write(std::ostream& out) const {
    out << "\"stackFrames\":{";
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = nodes_[i];
      out << (i ? ",\n" : "\n") << '"' << i + 1 << "\":{\"name\":" << quoted(n.name)
          << ",\"category\":" << quoted(n.module.empty() ? "?" : n.module);
      if (n.parent != 0) out << ",\"parent\":\"" << n.parent << '"';
      out << '}';
    }
    out << "}";
  }
  size_t size() const { return nodes_.size(); }

 private:
  struct Node {
    uint64_t parent;
    std::string name;
    std::string module;
  };
  std::map<std::pair<uint64_t, std::string>, uint64_t> ids_;
  std::vector<Node> nodes_;  // id - 1 -> node
};

class EventWriter {
 public:
  EventWriter(Trace& trace, std::ostream& out) : trace_(trace), out_(out) {}

  // No displayTimeUnit: older Perfetto importers take it as the unit of
  // "ts", which the format defines as µs.
  void begin() { out_ << "{\"traceEvents\":[\n"; }
  void end(const StackFrameTable& frames, const std::string& other_data) {
    out_ << "\n],\n";
    frames.write(out_);
    out_ << ",\n\"otherData\":" << other_data << "}\n";
  }

  // A complete slice or an instant; `extra` is more JSON members, starting with a comma.
  void event(const char* phase, const std::string& category, const std::string& name, uint64_t pid,
             uint64_t tid, uint64_t time, const std::string& extra) {
    event(phase, category, name, pid, tid, time, chromeTimeText(chromeTime(relative(time))), extra);
  }
  // dur is the difference of the two ends on the time grid (chromeTime), so
  // ts + dur is exactly the next slice's ts in any viewer's float64.
  void slice(const std::string& category, const std::string& name, uint64_t pid, uint64_t tid,
             uint64_t start, uint64_t end, const std::string& args = "") {
    uint64_t from = chromeTime(relative(start)), to = chromeTime(relative(end));
    if (to <= from) return;
    event("X", category, name, pid, tid, start, chromeTimeText(from),
          ",\"dur\":" + chromeTimeText(to - from) + (args.empty() ? "" : ",\"args\":" + args));
  }
  void asyncSlice(const std::string& name, uint64_t pid, uint64_t tid, uint64_t start, uint64_t end,
                  const std::string& args) {
    std::string id = ",\"id\":" + std::to_string(++async_id_);
    event("b", "lock", name, pid, tid, start, id + ",\"args\":" + args);
    event("e", "lock", name, pid, tid, end, id);
  }
  // A CPU sample: a thread-scoped instant named by its leaf (`quoted_name`,
  // already JSON), its stack by reference, and as arguments, in a Go
  // program the goroutine it ran (0: none) and the value of each context
  // its thread held (`contexts`: quoted names and values; unknown: left
  // out). The hot path, so no temporaries.
  struct ContextArgs {
    std::vector<std::string> quoted_names;
    std::vector<const ContextValueText*> texts;  // an otel id's value is written as its hex text
    std::vector<std::optional<uint64_t>> values;
  };
  void sample(const std::string& quoted_name, uint64_t pid, uint64_t tid, uint64_t time,
              uint64_t stack_node, uint64_t goid, const ContextArgs& contexts) {
    separate();
    out_ << "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu\",\"name\":" << quoted_name
         << ",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"ts\":" << chromeTimeText(chromeTime(relative(time))) << ",\"sf\":" << stack_node;
    bool args = false;
    if (goid != 0) {
      out_ << ",\"args\":{\"goroutine\":" << goid;
      args = true;
    }
    for (size_t i = 0; i < contexts.values.size(); ++i) {
      if (!contexts.values[i]) continue;
      out_ << (args ? "," : ",\"args\":{") << contexts.quoted_names[i] << ":";
      if (contexts.texts[i]->isHex())
        out_ << '"' << contexts.texts[i]->text(*contexts.values[i]) << '"';
      else
        out_ << *contexts.values[i];
      args = true;
    }
    if (args) out_ << "}";
    out_ << "}";
    seen(pid, tid, time);
  }

  // process_name and thread_name for every track that had an event; a
  // process or thread the trace never named is called by its id, so no
  // track shows blank.
  void names() {
    std::set<uint64_t> pids;
    for (const auto& [key, time] : threads_) {
      auto [pid, tid] = key;
      if (pids.insert(pid).second) {
        std::string name = trace_.processName(static_cast<uint32_t>(pid), time);
        separate();
        out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"tid\":" << pid
             << ",\"args\":{\"name\":" << quoted(name.empty() ? "pid " + std::to_string(pid) : name)
             << "}}";
      }
      std::string name = trace_.threadName(static_cast<uint32_t>(tid), time);
      separate();
      out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid
           << ",\"args\":{\"name\":" << quoted(name.empty() ? "tid " + std::to_string(tid) : name)
           << "}}";
    }
  }
  uint64_t threads() const { return threads_.size(); }

 private:
  void event(const char* phase, const std::string& category, const std::string& name, uint64_t pid,
             uint64_t tid, uint64_t time, const std::string& ts, const std::string& extra) {
    separate();
    out_ << "{\"ph\":\"" << phase << "\",\"cat\":" << quoted(category)
         << ",\"name\":" << quoted(name) << ",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"ts\":" << ts << extra << "}";
    seen(pid, tid, time);
  }
  void separate() {
    if (!first_) out_ << ",\n";
    first_ = false;
  }
  uint64_t relative(uint64_t time) const {
    return time > trace_.startTime() ? time - trace_.startTime() : 0;
  }
  void seen(uint64_t pid, uint64_t tid, uint64_t time) { threads_.try_emplace({pid, tid}, time); }

  Trace& trace_;
  std::ostream& out_;
  bool first_ = true;
  uint64_t async_id_ = 0;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> threads_;  // (pid, tid) -> first time
};

void writeStates(Trace& trace, const ChromeTraceOptions& options, EventWriter& writer,
                 ChromeTraceStats& stats) {
  ThreadStateMachine machine(RecordedThreads::of(trace), options.bystanders);
  machine.observeFrom(std::max(trace.window().start, trace.startTime()));
  machine.on_state = [&](const StateSpan& span) {
    // The thread filter as `incise sched` applies it: by the thread's
    // first event, known before any of its spans closes.
    const ThreadSchedStats& thread = machine.threads().at(span.tid);
    if (!trace.passesThread(thread.pid, span.tid, thread.first_time)) return;
    writer.slice("sched", std::string(threadStateName(span.state)), thread.pid, span.tid,
                 span.start, span.end);
    ++stats.state_slices;
  };
  replaySchedule(trace, Replay::kSwitchesAndWakeups, machine);
  machine.finish(std::min(trace.window().end, trace.endTime()));
  stats.schedule = machine.consistency();
}

// Waits and holds are written as the lock rows stream past in time order:
// waits with their row, holds with their row (mode `all`) or once the wake
// that ends them is settled (contended mode). Nothing is kept per row.
void writeLocks(Trace& trace, EventWriter& writer, ChromeTraceStats& stats) {
  streamLockRows(
      trace, {.section =
                  [&](const CriticalSection& s) {
                    std::string args = "{\"lock\":" + quoted(hexAddress(s.lock.address)) +
                                       ",\"contended\":" + (s.contended ? "true" : "false") +
                                       ",\"inferred\":" + (s.inferred ? "true" : "false") + "}";
                    writer.asyncSlice("hold " + hexAddress(s.lock.address), s.lock.pid, s.tid,
                                      s.start, s.end, args);
                    ++stats.lock_slices;
                  },
              .wait =
                  [&](const LockWait& w) {
                    std::string args = "{\"lock\":" + quoted(hexAddress(w.lock.address)) +
                                       ",\"releaser_tid\":" + std::to_string(w.releaser_tid) + "}";
                    writer.asyncSlice("wait " + hexAddress(w.lock.address), w.lock.pid, w.tid,
                                      w.start, w.end, args);
                    ++stats.lock_slices;
                  }});
}

void writeSamples(Trace& trace, EventWriter& writer, StackFrameTable& frames,
                  ChromeTraceStats& stats) {
  StackNamer functions(trace, FrameGrouping::kFunction);
  StackNamer modules(trace, FrameGrouping::kModule);
  struct NamedStack {
    std::string quoted_leaf;
    uint64_t node = 0;
  };
  std::map<std::pair<uint64_t, uint64_t>, NamedStack> named;  // (pid, stack id)
  const std::vector<ContextTimeline> timelines = readContextTimelines(trace);
  EventWriter::ContextArgs contexts;
  for (const auto& context : trace.header().options.contexts)
    contexts.quoted_names.push_back(quoted(context.name));
  contexts.values.resize(timelines.size());
  for (const ContextTimeline& timeline : timelines) contexts.texts.push_back(&timeline.text());
  trace.forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    // The idle task (tid 0, one per cpu at once) has no thread track.
    if (s.tid == 0) {
      ++stats.idle_samples;
      return;
    }
    auto [it, inserted] = named.try_emplace({s.pid, s.stack_id});
    if (inserted) {
      uint32_t pid = static_cast<uint32_t>(s.pid);
      std::span<const NameId> names = functions.rootFirst(pid, s.stack_id, s.time);
      std::span<const NameId> objects = modules.rootFirst(pid, s.stack_id, s.time);
      uint64_t node = 0;
      for (size_t i = 0; i < names.size(); ++i) {
        node = frames.node(node, functions.names().name(names[i]),
                           objects.size() == names.size() ? modules.names().name(objects[i]) : "");
      }
      if (names.empty()) node = frames.node(0, "[no stack]", "");
      it->second = {quoted(names.empty() ? "[no stack]" : functions.names().name(names.back())),
                    node};
    }
    for (size_t i = 0; i < timelines.size(); ++i)
      contexts.values[i] = timelines[i].valueAt(static_cast<uint32_t>(s.tid), s.time);
    writer.sample(it->second.quoted_leaf, s.pid, s.tid, s.time, it->second.node, s.goid, contexts);
    ++stats.samples;
  });
}

// What the reader of the export should know it is not seeing: events the
// recorder lost, switches the replay could not reconcile, and short blocks
// the recorder counted instead of writing (drawn as running).
std::string otherData(Trace& trace, const ChromeTraceStats& stats) {
  uint64_t short_blocks = 0, short_block_ns = 0;
  forEachBlockSummary(trace, [&](const format::BlockSummary& s) {
    short_blocks += s.count;
    short_block_ns += s.total_ns;
  });
  nlohmann::json lost = nlohmann::json::object();
  LossSummary losses = trace.losses();
  for (const auto& [source, count] : losses.lost_by_source) lost[source] = count;
  const ScheduleConsistency& c = stats.schedule;
  nlohmann::json data = {{"source", trace.path()},
                         {"host", trace.header().host},
                         {"exporter", "incise"},
                         {"lost_events", lost},
                         {"damaged_chunks", losses.damaged_chunks},
                         {"schedule",
                          {{"missing_switch_ins", c.missing_switch_ins},
                           {"missing_switch_outs", c.missing_switch_outs},
                           {"reordered_switches", c.reordered_switches},
                           {"bystander_threads", c.bystanders},
                           {"short_blocks_drawn_as_running", short_blocks},
                           {"short_blocks_ns", short_block_ns}}},
                         {"idle_samples_left_out", stats.idle_samples}};
  return data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

uint64_t chromeTime(uint64_t ns) {
  // 1024/1000 per ns, rounded: ns * 128 / 125.
  return ns / 125 * 128 + ((ns % 125) * 128 + 62) / 125;
}

std::string chromeTimeText(uint64_t units) {
  // units / 1024 is exact in a double; its shortest text parses back to it.
  char buffer[40];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer,
                                 static_cast<double>(units) / kChromeTimeUnitsPerMicro);
  return ec == std::errc() ? std::string(buffer, end) : std::string("0");
}

ChromeTraceStats writeChromeTrace(Trace& trace, std::ostream& out,
                                  const ChromeTraceOptions& options) {
  ChromeTraceStats stats;
  EventWriter writer(trace, out);
  StackFrameTable frames;
  writer.begin();
  writeStates(trace, options, writer, stats);
  writeLocks(trace, writer, stats);
  writeSamples(trace, writer, frames, stats);
  writer.names();
  stats.threads = writer.threads();
  stats.stack_frames = frames.size();
  writer.end(frames, otherData(trace, stats));
  return stats;
}

}  // namespace incise::analyzer
