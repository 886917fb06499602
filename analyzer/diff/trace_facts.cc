#include "analyzer/diff/trace_facts.h"

namespace incise::analyzer {

double TraceFacts::sampleRate() const {
  return duration_ns == 0 ? 0
                          : static_cast<double>(samples) * 1e9 / static_cast<double>(duration_ns);
}

TraceFacts traceFactsOf(const format::Reader& reader) {
  const format::Header& header = reader.header();
  TraceFacts facts;
  facts.host = header.host;
  facts.kernel = header.kernel_release;
  facts.command = header.command_line;
  facts.start_wall_ns = header.start_wall_ns;
  uint64_t end = reader.endTime();
  facts.duration_ns = end > header.start_mono_ns ? end - header.start_mono_ns : 0;
  facts.sample_hz = header.options.sample_frequency_hz;
  facts.samples = reader.rows(format::EventKind::kCpuSample);
  facts.allocation_samples = reader.rows(format::EventKind::kAlloc);
  facts.alloc_sample_bytes = header.options.alloc_sample_bytes;
  for (const format::ObjectSymbols& object : reader.metadata().objects) {
    if (object.build_id.empty()) {
      facts.unidentified_objects.insert(object.path);
    } else {
      facts.build_ids[object.path] = hexBytes(object.build_id);
    }
  }
  return facts;
}

std::string commandText(const std::vector<std::string>& command) {
  if (command.empty()) return "(system-wide)";
  std::string text;
  for (const auto& arg : command) {
    if (!text.empty()) text += ' ';
    text += arg;
  }
  return text;
}

std::string utcTimeText(uint64_t wall_ns) {
  return utcText(wall_ns, "%Y-%m-%d %H:%M:%SZ");
}

}  // namespace incise::analyzer
