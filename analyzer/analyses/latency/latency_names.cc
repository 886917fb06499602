#include "analyzer/analyses/latency/latency_names.h"

#include "format/event_kinds.h"

namespace incise::analyzer {
namespace {

constexpr unsigned kMinorBits = 20;  // the kernel's dev_t

}  // namespace

LatencyNames::LatencyNames(const format::Metadata& metadata) {
  for (const format::LatencyProbe& probe : metadata.latency_probes)
    probes_[{probe.source, probe.id}] = probe;  // a later name wins
}

std::string LatencyNames::name(uint64_t source, uint64_t probe, uint64_t detail) const {
  auto it = probes_.find({source, probe});
  std::string base;
  if (it != probes_.end() && !it->second.name.empty()) {
    base = it->second.name;
    if (it->second.offset != 0) base += "+" + std::to_string(it->second.offset);
  } else {
    switch (static_cast<format::LatencySource>(source)) {
      case format::LatencySource::kFunction:
        base = "function " + std::to_string(probe);
        break;
      case format::LatencySource::kSyscall:
        base = "syscall " + std::to_string(probe);
        break;
      case format::LatencySource::kBlockIo:
        base = "device " + std::to_string(probe >> kMinorBits) + ":" +
               std::to_string(probe & ((1u << kMinorBits) - 1));
        break;
      case format::LatencySource::kIoUring:
        base = "io_uring op " + std::to_string(probe);
        break;
      default:
        base = std::string(format::latencySourceName(source)) + " " + std::to_string(probe);
    }
  }
  if (source == static_cast<uint64_t>(format::LatencySource::kBlockIo))
    base += " " + std::string(format::blockOpName(detail));
  return base;
}

std::string LatencyNames::object(uint64_t source, uint64_t probe) const {
  auto it = probes_.find({source, probe});
  return it == probes_.end() ? std::string() : it->second.object;
}

}  // namespace incise::analyzer
