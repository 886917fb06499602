#include "analyzer/archive/archive_selector.h"

#include <algorithm>

#include "analyzer/diff/trace_facts.h"

namespace incise::analyzer {
namespace {

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool isHex(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

std::string programName(const std::vector<std::string>& command) {
  if (command.empty()) return "";
  const std::string& program = command.front();
  size_t slash = program.rfind('/');
  return slash == std::string::npos ? program : program.substr(slash + 1);
}

bool termMatches(const std::string& key, const std::string& value, const ArchiveEntry& e) {
  if (key == "id") return startsWith(e.id, value);
  if (key == "host") return e.host == value;
  if (key == "kernel") return e.kernel == value;
  if (key == "cmd") return programName(e.command) == value || commandText(e.command) == value;
  if (key == "build-id") {
    return std::any_of(e.build_ids.begin(), e.build_ids.end(),
                       [&](const auto& object) { return startsWith(object.second, value); });
  }
  auto tag = e.tags.find(key);
  return tag != e.tags.end() && tag->second == value;
}

bool startedBefore(const ArchiveEntry* a, const ArchiveEntry* b) {
  if (a->start_wall_ns != b->start_wall_ns) return a->start_wall_ns < b->start_wall_ns;
  return a->added_wall_ns < b->added_wall_ns;
}

}  // namespace

Result<Selector> parseSelector(const std::string& text) {
  Selector selector;
  selector.text = text;
  if (text.empty()) return Error("empty selector");
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string term = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (term == "latest") {
      selector.latest = true;
    } else if (size_t equals = term.find('='); equals != std::string::npos && equals != 0) {
      selector.terms.emplace_back(term.substr(0, equals), term.substr(equals + 1));
    } else if (isHex(term)) {
      selector.terms.emplace_back("id", term);
    } else {
      return Error("selector '" + text + "': '" + term +
                   "' is not latest, an id or KEY=VALUE (host=, cmd=, kernel=, build-id=, a tag)");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return selector;
}

bool matchesSelector(const Selector& selector, const ArchiveEntry& entry) {
  return std::all_of(selector.terms.begin(), selector.terms.end(),
                     [&](const auto& term) { return termMatches(term.first, term.second, entry); });
}

std::vector<const ArchiveEntry*> selectEntries(const std::vector<ArchiveEntry>& entries,
                                               const Selector& selector) {
  std::vector<const ArchiveEntry*> matched;
  for (const ArchiveEntry& entry : entries) {
    if (matchesSelector(selector, entry)) matched.push_back(&entry);
  }
  std::stable_sort(matched.begin(), matched.end(), startedBefore);
  return matched;
}

Result<Resolution> resolveSelector(const std::vector<ArchiveEntry>& entries,
                                   const Selector& selector) {
  std::vector<const ArchiveEntry*> matched = selectEntries(entries, selector);
  if (matched.empty()) {
    return Error("selector '" + selector.text + "' matches none of the " +
                 std::to_string(entries.size()) + " archived traces");
  }
  Resolution resolution{matched.back(), matched.size(), ""};
  if (matched.size() > 1) {
    resolution.note = "'" + selector.text + "' matched " + std::to_string(matched.size()) +
                      " traces; using the latest, " + resolution.entry->id + " (started " +
                      utcTimeText(resolution.entry->start_wall_ns) + ")";
  }
  return resolution;
}

}  // namespace incise::analyzer
