#include "recorder/sources/latency_output.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstddef>
#include <vector>

#include "bpf/latency.h"
#include "recorder/event_sink.h"

namespace incise::recorder {

static_assert(LATENCY_FUNCTION == static_cast<int>(format::LatencySource::kFunction));
static_assert(LATENCY_SYSCALL == static_cast<int>(format::LatencySource::kSyscall));
static_assert(LATENCY_BLOCK_IO == static_cast<int>(format::LatencySource::kBlockIo));
static_assert(LATENCY_IO_URING == static_cast<int>(format::LatencySource::kIoUring));
static_assert(LOST_LATENCY == static_cast<int>(format::LostSource::kLatency));
static_assert(LOST_LATENCY < LOST_SOURCE_SLOTS);

void addLatencyProbes(EventSink& sink, std::vector<format::LatencyProbe> probes) {
  if (probes.empty()) return;
  format::MetadataDelta delta;
  delta.time = monotonicNowNs();
  delta.latency_probes = std::move(probes);
  sink.writer().addMetadata(std::move(delta));
}

void LatencyOutput::bind(EventSink& sink, const LatencyMaps& maps, Namer namer) {
  sink_ = &sink;
  maps_ = maps;
  namer_ = std::move(namer);
  current_start_ = monotonicNowNs();
}

int LatencyOutput::onRecord(void* context, void* data, size_t size) {
  static_cast<LatencyOutput*>(context)->decode(data, size);
  return 0;
}

void LatencyOutput::decode(const void* data, size_t size) {
  constexpr size_t kFixed = offsetof(latency_event, stack.frames);
  if (size < kFixed) return;
  const auto* e = static_cast<const latency_event*>(data);
  if (e->header.type != EVENT_LATENCY) return;
  if (e->stack.kernel_count > MAX_STACK_DEPTH || e->stack.user_count > MAX_STACK_DEPTH) return;
  size_t frames = size_t{e->stack.kernel_count} + e->stack.user_count;
  if (kFixed + frames * sizeof(uint64_t) > size) return;
  nameOnce(e->source, e->probe);
  sink_->processes().noteThread(e->header.pid, e->header.tid, e->header.time);
  sink_->append(format::Latency{.time = e->header.time,
                                .duration = e->duration,
                                .cpu = e->header.cpu,
                                .pid = e->header.pid,
                                .tid = e->header.tid,
                                .source = e->source,
                                .probe = e->probe,
                                .stack_id = sink_->internStack(e->header.pid, e->stack),
                                .weight = e->weight,
                                .bytes = e->bytes,
                                .error = e->error,
                                .detail = e->detail});
}

void LatencyOutput::nameOnce(uint32_t source, uint64_t probe) {
  if (!namer_ || !named_.insert(probe).second) return;
  if (std::optional<format::LatencyProbe> name = namer_(probe)) {
    name->source = static_cast<uint8_t>(source);
    name->id = probe;
    addLatencyProbes(*sink_, {*name});
  }
}

void LatencyOutput::poll(EventSink& sink) {
  if (!maps_.aggregate || !maps_.generation) return;
  uint64_t now = monotonicNowNs();
  if (previous_pending_) drain(sink, current_ ^ 1, previous_start_, current_start_);
  // Flip: new counts go to the other generation from now on; the one just
  // left is drained at the next flush, when nothing can still be adding to it.
  previous_start_ = current_start_;
  current_start_ = now;
  current_ ^= 1;
  __atomic_store_n(maps_.generation, current_, __ATOMIC_SEQ_CST);
  previous_pending_ = true;
}

void LatencyOutput::finish(EventSink& sink) {
  if (!maps_.aggregate || !maps_.generation) return;
  uint64_t now = monotonicNowNs();
  if (previous_pending_) drain(sink, current_ ^ 1, previous_start_, current_start_);
  drain(sink, current_, current_start_, now);
  previous_pending_ = false;
}

uint64_t LatencyOutput::stackOf(EventSink& sink, uint64_t hash) {
  if (hash == 0) return 0;
  if (auto it = stack_ids_.find(hash); it != stack_ids_.end()) return it->second;
  latency_stack stack{};
  uint64_t id = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(maps_.stacks), &hash, &stack) == 0 &&
      stack.user_count <= MAX_STACK_DEPTH) {
    const auto* frames = reinterpret_cast<const uint64_t*>(stack.frames);
    id = sink.internStack(stack.pid, std::span<const uint64_t>(frames, stack.user_count), 0);
  }
  stack_ids_[hash] = id;
  return id;
}

void LatencyOutput::drain(EventSink& sink, uint32_t generation, uint64_t start, uint64_t end) {
  int fd = bpf_map__fd(maps_.hists);
  std::vector<latency_hist_key> keys;
  latency_hist_key key{}, next{};
  const void* previous = nullptr;
  while (bpf_map_get_next_key(fd, previous, &next) == 0) {
    if (next.generation == generation) keys.push_back(next);
    key = next;
    previous = &key;
  }
  for (const latency_hist_key& k : keys) {
    latency_hist hist{};
    if (bpf_map_lookup_elem(fd, &k, &hist) != 0) continue;
    bpf_map_delete_elem(fd, &k);
    nameOnce(k.source, k.probe);
    uint64_t stack_id = stackOf(sink, k.stack_hash);
    size_t highest = 0;
    for (size_t b = 0; b < LATENCY_BUCKETS; ++b)
      if (hist.count[b] != 0) highest = b;
    for (size_t b = 0; b < LATENCY_BUCKETS; ++b) {
      if (hist.count[b] == 0) continue;
      sink.append(format::LatencyHistogram{.time = start,
                                           .end_time = end,
                                           .pid = k.pid,
                                           .source = k.source,
                                           .probe = k.probe,
                                           .stack_id = stack_id,
                                           .bucket = b,
                                           .count = hist.count[b],
                                           .total_ns = hist.total_ns[b],
                                           .max_ns = b == highest ? hist.max_ns : 0,
                                           .weight = maps_.weight});
    }
  }
}

}  // namespace incise::recorder
