#include "tests/analyzer/export/trace_event_checker.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace incise::analyzer::testing {
namespace {

using Key = std::pair<int64_t, int64_t>;  // (pid, tid)

struct Slice {
  double start, end;
  std::string name;
};

std::string keyText(const Key& key) {
  return "pid " + std::to_string(key.first) + " tid " + std::to_string(key.second);
}

bool isInteger(const nlohmann::json& value) {
  return value.is_number_integer() || value.is_number_unsigned();
}

}  // namespace

void TraceEventCheck::add(const std::string& kind, const std::string& example) {
  counts[kind] += 1;
  auto& list = examples[kind];
  if (list.size() < 3) list.push_back(example.substr(0, 300));
}

std::string TraceEventCheck::summary() const {
  std::string text = std::to_string(events) + " events, " + std::to_string(slices) + " slices, " +
                     std::to_string(samples) + " samples";
  if (counts.empty()) return text + ": no violations";
  for (const auto& [kind, count] : counts) {
    text += "\nVIOLATION " + kind + ": " + std::to_string(count);
    for (const auto& example : examples.at(kind)) text += "\n    e.g. " + example;
  }
  return text;
}

TraceEventCheck checkTraceEvents(const nlohmann::json& doc) {
  TraceEventCheck check;
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    check.add("no traceEvents array", doc.dump().substr(0, 100));
    return check;
  }
  static const std::set<std::string> kPhases = {"B", "E", "X", "i", "I", "b", "e", "n", "M",
                                                "C", "s", "t", "f", "P", "O", "N", "D"};
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& frames = doc.contains("stackFrames") ? doc["stackFrames"] : empty;
  if (!frames.is_object()) check.add("stackFrames not an object", frames.dump());
  for (const auto& [id, frame] : frames.items()) {
    if (!frame.is_object() || !frame.contains("name") || !frame["name"].is_string()) {
      check.add("stackFrame without a string name", id);
      continue;
    }
    if (frame.contains("parent")) {
      std::string parent =
          frame["parent"].is_string() ? frame["parent"].get<std::string>() : frame["parent"].dump();
      if (!frames.contains(parent)) check.add("stackFrame parent missing", id);
      // Parents come first, so links cannot loop.
      else if (std::stoull(parent) >= std::stoull(id))
        check.add("stackFrame parent loop", id);
    }
  }

  std::map<Key, std::vector<Slice>> slices;
  std::map<Key, std::vector<std::pair<double, std::string>>> open_be;
  std::map<std::pair<std::string, std::string>, std::vector<nlohmann::json>> open_async;
  std::vector<std::pair<Key, double>> samples;
  std::set<Key> tracks;
  std::set<int64_t> pids;
  std::map<Key, int> thread_names;
  std::map<int64_t, int> process_names;

  for (const auto& e : doc["traceEvents"]) {
    ++check.events;
    std::string text = e.dump();
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
      check.add("event without ph", text);
      continue;
    }
    std::string ph = e["ph"];
    if (!kPhases.count(ph)) {
      check.add("unknown ph", text);
      continue;
    }
    if (ph != "E" && (!e.contains("name") || !e["name"].is_string()))
      check.add("ph=" + ph + " without a string name", text);
    if (!e.contains("pid") || !isInteger(e["pid"])) {
      check.add("pid missing or not an integer", text);
      continue;
    }
    if (!e.contains("tid") || !isInteger(e["tid"])) {
      if (ph != "M" || e.value("name", "") == "thread_name")
        check.add("tid missing or not an integer", text);
      if (ph != "M") continue;
    }
    Key key{e["pid"].get<int64_t>(), e.contains("tid") ? e["tid"].get<int64_t>() : 0};
    if (ph == "M") {
      std::string name = e.value("name", "");
      const bool named = e.contains("args") && e["args"].is_object() &&
                         e["args"].contains("name") && e["args"]["name"].is_string() &&
                         !e["args"]["name"].get<std::string>().empty();
      if (name == "thread_name") {
        if (!named)
          check.add("thread_name without a non-empty args.name", text);
        else
          ++thread_names[key];
      } else if (name == "process_name") {
        if (!named)
          check.add("process_name without a non-empty args.name", text);
        else
          ++process_names[key.first];
      }
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      check.add("ph=" + ph + " without a numeric ts", text);
      continue;
    }
    double ts = e["ts"].get<double>();
    if (ts < 0) check.add("negative ts", text);
    tracks.insert(key);
    pids.insert(key.first);
    if (e.contains("sf") &&
        !frames.contains(e["sf"].is_string() ? e["sf"].get<std::string>() : e["sf"].dump()))
      check.add("sf names no stackFrames entry", text);
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
        check.add("X without a non-negative dur", text);
        continue;
      }
      // The end as a viewer computes it: a float64 sum.
      slices[key].push_back({ts, ts + e["dur"].get<double>(), e["name"]});
    } else if (ph == "B") {
      open_be[key].emplace_back(ts, e["name"]);
    } else if (ph == "E") {
      auto& stack = open_be[key];
      if (stack.empty()) {
        check.add("E without an open B on its thread", text);
      } else {
        slices[key].push_back({stack.back().first, ts, stack.back().second});
        stack.pop_back();
      }
    } else if (ph == "i" || ph == "I") {
      std::string scope = e.value("s", "t");
      if (scope != "t" && scope != "p" && scope != "g") check.add("instant scope not t|p|g", text);
      if (e.value("cat", "") == "cpu") samples.emplace_back(key, ts);
    } else if (ph == "b" || ph == "e") {
      if (!e.contains("cat") || !e.contains("id")) {
        check.add("async event without cat and id", text);
        continue;
      }
      auto async_key = std::pair{e["cat"].dump(), e["id"].dump()};
      auto& stack = open_async[async_key];
      if (ph == "b") {
        stack.push_back(e);
      } else if (stack.empty()) {
        check.add("async e without an open b", text);
      } else {
        const nlohmann::json& b = stack.back();
        if (b["name"] != e["name"]) check.add("async e named unlike its b", text);
        if (b["pid"] != e["pid"]) check.add("async b/e pair across processes", text);
        if (b["ts"].get<double>() > ts) check.add("async e before its b", text);
        stack.pop_back();
      }
    }
  }
  for (const auto& [key, stack] : open_be)
    for (size_t i = 0; i < stack.size(); ++i) check.add("B never closed", keyText(key));
  for (const auto& [key, stack] : open_async)
    for (size_t i = 0; i < stack.size(); ++i) check.add("async b never closed", stack[i].dump());

  // Slices of one thread nest exactly: one that starts inside another must
  // end inside it too, with no tolerance for float noise.
  std::map<Key, std::vector<std::pair<double, double>>> running;
  for (auto& [key, list] : slices) {
    check.slices += list.size();
    std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) {
      return std::tuple(a.start, b.end) < std::tuple(b.start, a.end);
    });
    std::vector<const Slice*> stack;
    for (const Slice& s : list) {
      while (!stack.empty() && stack.back()->end <= s.start) stack.pop_back();
      if (!stack.empty() && s.end > stack.back()->end) {
        char excess[64];
        std::snprintf(excess, sizeof excess, "%.9g", stack.back()->end - s.start);
        check.add("slices of one thread overlap without nesting",
                  keyText(key) + ": " + stack.back()->name + " ends " + excess + " us after " +
                      s.name + " starts at " + std::to_string(s.start));
        continue;
      }
      stack.push_back(&s);
      if (s.name == "running") running[key].emplace_back(s.start, s.end);
    }
  }
  for (const auto& [key, ts] : samples) {
    ++check.samples;
    const auto& runs = running[key];
    auto after = std::upper_bound(runs.begin(), runs.end(), std::pair{ts, 1e300});
    bool inside = after != runs.begin() && std::prev(after)->second >= ts;
    if (!inside)
      check.add("cpu sample outside every running slice of its thread",
                keyText(key) + " at " + std::to_string(ts));
  }
  for (const Key& key : tracks) {
    auto named = thread_names.find(key);
    if (named == thread_names.end())
      check.add("thread without a name", keyText(key));
    else if (named->second > 1)
      check.add("thread named twice", keyText(key));
  }
  for (int64_t pid : pids) {
    auto named = process_names.find(pid);
    if (named == process_names.end())
      check.add("process without a name", std::to_string(pid));
    else if (named->second > 1)
      check.add("process named twice", std::to_string(pid));
  }
  return check;
}

}  // namespace incise::analyzer::testing
