#include "analyzer/archive/archive_selector.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "analyzer/diff/trace_facts.h"
#include "options/number_option.h"

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

// Ages are bounded so that a huge one cannot wrap: a century is plenty.
constexpr uint64_t kMaxAgeSeconds = 100ull * 365 * 86400;

uint64_t secondsPer(char unit) {
  return unit == 'd' ? 86400 : unit == 'h' ? 3600 : 60;
}

// A point in time for before=/after=, as ns since the epoch: a UTC date
// "2024-05-01", a date and time "2024-05-01T12:30" or "2024-05-01T12:30:15",
// or an age "7d", "12h", "30m" (that long before now).
Result<uint64_t> timeOf(const std::string& key, const std::string& text) {
  char unit = text.empty() ? 0 : text.back();
  if (unit == 'd' || unit == 'h' || unit == 'm') {
    Result<uint64_t> amount =
        options::parseWholeNumber(key + "=", std::string_view(text).substr(0, text.size() - 1),
                                  {.max = kMaxAgeSeconds / secondsPer(unit),
                                   .unit = unit == 'd'   ? "days"
                                           : unit == 'h' ? "hours"
                                                         : "minutes"});
    if (!amount) return amount.error();
    auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    uint64_t ago = *amount * secondsPer(unit) * 1'000'000'000;
    return static_cast<uint64_t>(now) > ago ? static_cast<uint64_t>(now) - ago : 0;
  }
  const Error not_a_time(key + "='" + text +
                         "' is not a UTC date (2024-05-01, 2024-05-01T12:30[:15]) or an age (7d, "
                         "12h, 30m)");
  std::tm parts{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
  int fields = std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &used);
  if (fields != 3 || !std::isdigit(static_cast<unsigned char>(text[0]))) return not_a_time;
  if (static_cast<size_t>(used) != text.size()) {
    int more = 0;
    const char* rest = text.c_str() + used;
    if (std::sscanf(rest, "T%2d:%2d%n", &hour, &minute, &more) != 2) return not_a_time;
    rest += more;
    if (*rest == ':' && std::sscanf(rest, ":%2d%n", &second, &more) == 1) rest += more;
    if (*rest != '\0') return not_a_time;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60 || year < 1970) {
    return not_a_time;
  }
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  std::time_t seconds = timegm(&parts);
  if (seconds < 0) return not_a_time;
  return static_cast<uint64_t>(seconds) * 1'000'000'000;
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
  if (key == "before" || key == "after") {
    Result<uint64_t> when = timeOf(key, value);  // checked by parseSelector
    return when && (key == "before" ? e.start_wall_ns < *when : e.start_wall_ns >= *when);
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
      std::string key = term.substr(0, equals), value = term.substr(equals + 1);
      if (key == "before" || key == "after") {
        if (Result<uint64_t> when = timeOf(key, value); !when) {
          return when.error().context("selector '" + text + "'");
        }
      }
      selector.terms.emplace_back(std::move(key), std::move(value));
    } else if (isHex(term)) {
      selector.terms.emplace_back("id", term);
    } else {
      return Error("selector '" + text + "': '" + term +
                   "' is not latest, an id or KEY=VALUE (host=, cmd=, kernel=, build-id=, before=, "
                   "after=, a tag)");
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
