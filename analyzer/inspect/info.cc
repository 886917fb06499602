// `incise info FILE [--json]`: what is in a trace — who recorded it, how,
// how long, rows per kind, lost events, processes, where the bytes go, and
// whether the file had to be salvaged.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>

#include "analyzer/cli/command_line.h"
#include "analyzer/inspect/inspect.h"
#include "analyzer/inspect/trace_summary.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {
namespace {

using nlohmann::json;

// Words from the trace, escaped for the terminal, space-separated.
std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + terminalText(w);
  return out;
}

// A command line as the process shows it: programs that rewrite their argv
// in place (PostgreSQL's "postgres: checkpointer", sendmail, nginx) leave
// the rest of the old argument area as NULs, which /proc/PID/cmdline splits
// into empty arguments; trailing ones are dropped.
void dropTrailingEmptyArguments(std::vector<std::string>& cmdline) {
  while (!cmdline.empty() && cmdline.back().empty()) cmdline.pop_back();
}

// The recorder describes a process again when it execs, renames itself or is
// seen at the end of the run (by then /proc may give an empty command line).
// One entry per life: a record of the same pid and name extends the previous
// one, and the last non-empty command line wins.
std::vector<format::Process> processLives(std::vector<format::Process> records) {
  std::stable_sort(records.begin(), records.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  std::vector<format::Process> lives;
  std::map<uint32_t, size_t> latest;  // pid -> index in lives
  for (format::Process& record : records) {
    dropTrailingEmptyArguments(record.cmdline);
    auto it = latest.find(record.pid);
    if (it != latest.end() && lives[it->second].comm == record.comm) {
      if (!record.cmdline.empty()) lives[it->second].cmdline = std::move(record.cmdline);
      continue;
    }
    latest[record.pid] = lives.size();
    lives.push_back(std::move(record));
  }
  return lives;
}

double ratio(uint64_t raw, uint64_t stored) {
  return stored ? double(raw) / double(stored) : 0.0;
}

uint64_t durationNs(const format::Reader& reader) {
  uint64_t start = reader.header().start_mono_ns;
  return reader.endTime() > start ? reader.endTime() - start : 0;
}

json infoJson(const format::Reader& reader, const TraceSummary& s) {
  const format::Header& h = reader.header();
  json j;
  j["format"] = std::to_string(h.format_major) + "." + std::to_string(h.format_minor);
  j["host"] = h.host;
  j["kernel"] = h.kernel_release;
  j["boot_id"] = h.boot_id;
  j["clock"] = h.clock_source;
  j["start_wall_ns"] = h.start_wall_ns;
  j["start_mono_ns"] = h.start_mono_ns;
  j["end_mono_ns"] = reader.endTime();
  j["duration_ns"] = durationNs(reader);
  j["command_line"] = h.command_line;
  j["recorder_version"] = h.recorder_version;
  j["cpu_count"] = h.cpu_count;
  j["options"] = {{"sample_frequency_hz", h.options.sample_frequency_hz},
                  {"sample_event", h.options.sample_event},
                  {"sample_period", h.options.sample_period},
                  {"counters", h.options.counters},
                  {"stack_mode", h.options.stack_mode},
                  {"lock_mode", h.options.lock_mode},
                  {"sched", h.options.sched_enabled},
                  {"page_faults", h.options.page_faults_enabled},
                  {"alloc_sample_bytes", h.options.alloc_sample_bytes},
                  {"target", h.options.target},
                  {"lock_probes", h.options.lock_probes}};
  j["kinds"] = json::array();
  for (const auto& k : s.kinds) {
    json kind = {{"kind", format::kindName(k.kind)},
                 {"rows", k.rows},
                 {"chunks", k.chunks},
                 {"bytes", k.block_bytes},
                 {"columns", json::array()}};
    for (const auto& c : k.columns) {
      kind["columns"].push_back({{"name", c.name},
                                 {"encoding", storedEncodingNames(c)},
                                 {"raw_bytes", c.raw_bytes},
                                 {"stored_bytes", c.stored_bytes}});
    }
    j["kinds"].push_back(kind);
  }
  j["lost"] = json::object();
  std::map<std::string, uint64_t> lost;  // sources this build does not know share "unknown"
  for (const auto& [source, count] : s.lost_by_source) {
    lost[std::string(format::lostSourceName(source))] += count;
  }
  for (const auto& [name, count] : lost) j["lost"][name] = count;
  j["stacks"] = {{"count", reader.stacks().size()},
                 {"chunks", s.stack_chunks},
                 {"bytes", s.stack_block_bytes}};
  j["processes"] = json::array();
  for (const auto& p : processLives(reader.metadata().processes)) {
    j["processes"].push_back(
        {{"pid", p.pid}, {"ppid", p.ppid}, {"comm", p.comm}, {"cmdline", p.cmdline}});
  }
  j["metadata"] = {{"blocks", s.metadata_blocks},
                   {"bytes", s.metadata_bytes},
                   {"threads", reader.metadata().threads.size()},
                   {"mappings", reader.metadata().mappings.size()},
                   {"objects", reader.metadata().objects.size()},
                   {"kernel_symbols", reader.metadata().kernel_symbols.size()},
                   {"notes", reader.metadata().notes}};
  j["file_bytes"] = reader.recovery().file_size;
  j["raw_column_bytes"] = s.raw_column_bytes;
  j["stored_column_bytes"] = s.stored_column_bytes;
  j["compression_ratio"] = ratio(s.raw_column_bytes, s.stored_column_bytes);
  j["recovery"] = recoveryJson(reader.recovery());
  j["errors"] = s.errors;
  return j;
}

void printInfo(std::ostream& out, const format::Reader& reader, const TraceSummary& s) {
  const format::Header& h = reader.header();
  const format::RecordOptions& o = h.options;
  out << "host:        " << terminalText(h.host) << " (kernel " << terminalText(h.kernel_release)
      << ", " << h.cpu_count << " cpus)\n"
      << "started:     " << utcText(h.start_wall_ns, "%Y-%m-%d %H:%M:%S UTC") << "\n"
      << "duration:    " << std::fixed << std::setprecision(3) << durationNs(reader) / 1e9 << " s\n"
      << "command:     " << joined(h.command_line) << "\n"
      << "recorder:    " << terminalText(h.recorder_version) << ", format " << h.format_major << "."
      << h.format_minor << "\n"
      << "options:     "
      << terminalText(o.sample_event +
                      (o.sample_period != 0
                           ? " every " + std::to_string(o.sample_period)
                           : " @ " + std::to_string(o.sample_frequency_hz) + " Hz") +
                      (o.counters.empty() ? "" : ", counters " + joined(o.counters)) + ", stacks " +
                      o.stack_mode + ", locks " + o.lock_mode)
      << ", sched " << (o.sched_enabled ? "on" : "off") << ", page faults "
      << (o.page_faults_enabled ? "on" : "off")
      << (o.alloc_sample_bytes ? ", alloc every " + std::to_string(o.alloc_sample_bytes) + " B"
                               : "")
      << (o.target.empty() ? "" : ", target " + terminalText(o.target)) << "\n";
  for (const auto& probe : o.lock_probes) out << "lock probe:  " << terminalText(probe) << "\n";
  for (const auto& note : reader.metadata().notes) {
    out << "note:        " << terminalText(note) << "\n";
  }

  out << "\nevents:\n";
  out << "  " << std::left << std::setw(16) << "kind" << std::right << std::setw(12) << "rows"
      << std::setw(8) << "chunks" << std::setw(14) << "bytes" << std::setw(10) << "B/row"
      << "\n";
  for (const auto& k : s.kinds) {
    out << "  " << std::left << std::setw(16) << format::kindName(k.kind) << std::right
        << std::setw(12) << k.rows << std::setw(8) << k.chunks << std::setw(14) << k.block_bytes
        << std::setw(10) << std::setprecision(2) << (k.rows ? double(k.block_bytes) / k.rows : 0.0)
        << "\n";
  }
  out << "  " << std::left << std::setw(16) << "stack table" << std::right << std::setw(12)
      << reader.stacks().size() << std::setw(8) << s.stack_chunks << std::setw(14)
      << s.stack_block_bytes << "\n";
  out << "  " << std::left << std::setw(16) << "metadata" << std::right << std::setw(12)
      << s.metadata_blocks << std::setw(8) << "" << std::setw(14) << s.metadata_bytes << "\n";

  out << "\nlost events:";
  if (s.lost_by_source.empty()) out << " none";
  out << "\n";
  for (const auto& [source, count] : s.lost_by_source) {
    out << "  " << std::left << std::setw(16) << format::lostSourceName(source) << std::right
        << count << "\n";
  }

  const std::vector<format::Process> processes = processLives(reader.metadata().processes);
  out << "\nprocesses: " << processes.size() << "\n";
  for (size_t i = 0; i < processes.size() && i < 20; ++i) {
    out << "  " << std::setw(8) << processes[i].pid << "  " << terminalText(processes[i].comm)
        << "  " << joined(processes[i].cmdline) << "\n";
  }
  if (processes.size() > 20)
    out << "  ... " << processes.size() - 20 << " more (--json lists all)\n";

  out << "\ncolumns (raw = encoded, stored = after zstd):\n";
  for (const auto& k : s.kinds) {
    for (const auto& c : k.columns) {
      out << "  " << std::left << std::setw(28)
          << (std::string(format::kindName(k.kind)) + "." + c.name) << std::setw(22)
          << storedEncodingNames(c) << std::right << std::setw(12) << c.raw_bytes << " -> "
          << std::setw(12) << c.stored_bytes << "\n";
    }
  }
  out << "\nfile: " << reader.recovery().file_size << " bytes; columns " << s.raw_column_bytes
      << " -> " << s.stored_column_bytes << " bytes (compression " << std::setprecision(2)
      << ratio(s.raw_column_bytes, s.stored_column_bytes) << "x)\n";
  printRecovery(out, reader.recovery());
  for (const auto& e : s.errors) out << "unreadable: " << terminalText(e) << "\n";
}

}  // namespace

int info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cli(
      {.name = "info",
       .summary =
           "Shows what a trace holds: host, kernel, start time, the recorder's command line\n"
           "and options, duration, rows per event kind, lost events per source, processes,\n"
           "bytes per kind and per column with the compression ratio, and what was salvaged\n"
           "if the file was damaged or cut short.",
       .examples = "  incise info app.trace\n"
                   "  incise info app.trace --json | jq .kinds\n"},
      storedFileOptions(/*json=*/true), out, err);
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  auto reader = format::Reader::open(cli.options().file);
  if (!reader) {
    err << "incise info: " << terminalText(reader.error().message()) << "\n";
    return 1;
  }
  TraceSummary summary = summarize(**reader);
  if (cli.options().json) {
    writeJson(out, infoJson(**reader, summary));
  } else {
    printInfo(out, **reader, summary);
  }
  return 0;
}

int runInfo(const std::vector<std::string>& args) {
  return info(args, std::cout, std::cerr);
}

}  // namespace incise::analyzer
