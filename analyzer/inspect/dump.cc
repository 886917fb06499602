// `incise dump FILE [--kind K] [--limit N] [--json]`: the rows themselves,
// as a table with the column names of format/event_kinds.h, or JSON lines.
// `--kind stacks` lists the stack table, `--kind metadata` the metadata.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/cli/command_line.h"
#include "analyzer/inspect/inspect.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/terminal_text.h"
#include "format/reader.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

using nlohmann::json;

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

struct DumpOptions {
  uint64_t limit = 0;  // 0 = all
  bool json = false;
};

// Prints up to `limit` rows of one kind; returns false on an unreadable chunk.
bool dumpKind(const format::Reader& reader, const format::KindSpec& spec, const DumpOptions& o,
              std::ostream& out, std::ostream& err) {
  uint64_t printed = 0;
  bool header_done = false;
  bool ok = true;
  for (const auto& ref : reader.chunks(spec.kind)) {
    if (o.limit && printed >= o.limit) break;
    auto chunk = reader.readChunk(ref, format::ColumnSet::all());
    if (!chunk) {
      err << "incise dump: " << terminalText(chunk.error().message()) << "\n";
      ok = false;
      continue;
    }
    if (!o.json && !header_done) {
      out << "# " << spec.name << " (" << spec.doc << ")\n";
      for (uint16_t c = 0; c < spec.column_count; ++c) {
        // A space between columns: a name or value wider than its column
        // (releaser_stack_id, a 64-bit address) still stands apart.
        if (c != 0) out << ' ';
        out << std::setw(c == 0 ? 20 : 14) << spec.columns[c].name;
      }
      out << "\n";
      header_done = true;
    }
    for (size_t i = 0; i < chunk->rows() && !(o.limit && printed >= o.limit); ++i, ++printed) {
      if (o.json) {
        json row = {{"kind", spec.name}};
        for (uint16_t c = 0; c < spec.column_count; ++c) {
          auto column = chunk->column(c);
          row[std::string(spec.columns[c].name)] = i < column.size() ? column[i] : 0;
        }
        out << jsonLine(row) << "\n";
        continue;
      }
      for (uint16_t c = 0; c < spec.column_count; ++c) {
        auto column = chunk->column(c);
        std::string_view name = spec.columns[c].name;
        uint64_t v = i < column.size() ? column[i] : 0;
        if (c != 0) out << ' ';
        out << std::setw(c == 0 ? 20 : 14) << (name == "address" ? hex(v) : std::to_string(v));
      }
      out << "\n";
    }
  }
  if (!o.json && header_done) out << "\n";
  return ok;
}

void dumpStacks(const format::Reader& reader, const DumpOptions& o, std::ostream& out) {
  const format::StackTable& stacks = reader.stacks();
  for (uint64_t id = 1; id <= stacks.maxId() && !(o.limit && id > o.limit); ++id) {
    auto frames = stacks.frames(id);
    if (o.json) {
      json j = {{"stack_id", id}, {"frames", json::array()}};
      for (uint64_t f : frames) j["frames"].push_back(hex(f));
      out << jsonLine(j) << "\n";
      continue;
    }
    out << std::setw(8) << id << " ";
    for (uint64_t f : frames) out << " " << hex(f) << (format::isKernelAddress(f) ? "k" : "");
    out << "\n";
  }
}

void dumpMetadata(const format::Reader& reader, const DumpOptions& o, std::ostream& out) {
  const format::Metadata& m = reader.metadata();
  std::vector<json> items;
  for (const auto& p : m.processes) {
    items.push_back({{"type", "process"},
                     {"pid", p.pid},
                     {"ppid", p.ppid},
                     {"comm", p.comm},
                     {"cmdline", p.cmdline},
                     {"time", p.time}});
  }
  for (const auto& t : m.threads) {
    items.push_back(
        {{"type", "thread"}, {"tid", t.tid}, {"pid", t.pid}, {"comm", t.comm}, {"time", t.time}});
  }
  for (const auto& map : m.mappings) {
    items.push_back({{"type", "mapping"},
                     {"pid", map.pid},
                     {"start", hex(map.start)},
                     {"end", hex(map.end)},
                     {"offset", hex(map.file_offset)},
                     {"path", map.path},
                     {"prot", map.prot},
                     {"time", map.time}});
  }
  for (const auto& obj : m.objects) {
    items.push_back({{"type", "object"},
                     {"path", obj.path},
                     {"symbols", obj.symbols.size()},
                     {"segments", obj.segments.size()},
                     {"build_id_bytes", obj.build_id.size()}});
  }
  for (const auto& k : m.kernel_symbols) {
    items.push_back({{"type", "kernel_symbol"},
                     {"address", hex(k.address)},
                     {"name", k.name},
                     {"module", k.module}});
  }
  for (const auto& p : m.perf_maps) {
    items.push_back(
        {{"type", "perf_map"}, {"pid", p.pid}, {"time", p.time}, {"entries", p.entries.size()}});
  }
  for (const auto& n : m.notes) items.push_back({{"type", "note"}, {"text", n}});
  for (size_t i = 0; i < items.size() && !(o.limit && i >= o.limit); ++i) {
    if (o.json) {
      out << jsonLine(items[i]) << "\n";
      continue;
    }
    out << std::left << std::setw(14) << items[i]["type"].get<std::string>() << std::right;
    for (const auto& [key, value] : items[i].items()) {
      if (key != "type") {
        out << " " << key << "="
            << terminalText(value.is_string() ? value.get<std::string>() : jsonLine(value));
      }
    }
    out << "\n";
  }
}

std::string kindNames() {
  std::string names;
  for (auto kind : format::kAllEventKinds) names += std::string(format::kindName(kind)) + ", ";
  return names + "stacks, metadata";
}

}  // namespace

int dump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  SharedOptions shared = storedFileOptions(/*json=*/true);
  shared.json_help = "print JSON lines, one object per row";
  CommandLine cli(
      {.name = "dump",
       .summary = "Prints the rows of a trace as stored: one table per event kind, columns named\n"
                  "as in the event model (times in ns of the header's clock, stack ids into the\n"
                  "stack table). --kind stacks prints the stack table (leaf first, k = kernel),\n"
                  "--kind metadata the processes, threads, mappings and symbols.",
       .examples = "  incise dump app.trace --kind cpu_sample --limit 20\n"
                   "  incise dump app.trace --kind lock --json --limit 0 | jq .tid\n"
                   "  incise dump app.trace --kind stacks\n"},
      shared, out, err);
  cli.extra().add_options()(
      "kind,k", po::value<std::string>(),
      ("what to print: " + kindNames() + " (default: every event kind)").c_str())(
      "limit,n", po::value<uint64_t>()->default_value(100), "rows per kind; 0 prints all");
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  const po::variables_map& values = cli.values();
  DumpOptions o{values["limit"].as<uint64_t>(), cli.options().json};
  std::string kind = values.count("kind") ? values["kind"].as<std::string>() : "";
  const format::KindSpec* spec = kind.empty() ? nullptr : format::kindSpecByName(kind);
  if (!kind.empty() && spec == nullptr && kind != "stacks" && kind != "metadata") {
    return cli.usageError("unknown kind '" + kind + "'; known: " + kindNames());
  }
  auto reader = format::Reader::open(cli.options().file);
  if (!reader) {
    err << "incise dump: " << terminalText(reader.error().message()) << "\n";
    return 1;
  }
  cli.warnIfSalvaged(**reader);
  if (kind == "stacks") {
    dumpStacks(**reader, o, out);
    return 0;
  }
  if (kind == "metadata") {
    dumpMetadata(**reader, o, out);
    return 0;
  }
  bool ok = true;
  for (auto k : format::kAllEventKinds) {
    if (spec != nullptr && spec->kind != k) continue;
    ok &= dumpKind(**reader, *format::kindSpec(k), o, out, err);
  }
  return ok ? 0 : 1;
}

int runDump(const std::vector<std::string>& args) {
  return dump(args, std::cout, std::cerr);
}

}  // namespace incise::analyzer
