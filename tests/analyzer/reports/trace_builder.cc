#include "tests/analyzer/reports/trace_builder.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <random>

namespace incise::analyzer::testing {
namespace {

constexpr uint64_t kFirstModuleBase = 0x400000;
constexpr uint64_t kModuleSpacing = 0x1000000;
constexpr uint64_t kKernelBase = 0xffffffff81000000ull;
constexpr uint32_t kReadExecute = 5;  // PF_R | PF_X, and PROT_READ | PROT_EXEC
constexpr uint16_t kElfDyn = 3;

format::Header makeHeader(const std::string& lock_mode = "off", bool sched_recorded = true) {
  format::Header header;
  header.options.lock_mode = lock_mode;
  header.host = "testhost";
  header.kernel_release = "6.0-test";
  header.start_mono_ns = TraceBuilder::kStartNs;
  header.start_wall_ns = 1'700'000'000'000'000'000ull;
  header.cpu_count = 2;
  header.recorder_version = "trace_builder";
  header.options.sample_frequency_hz = 999;
  header.options.sched_enabled = sched_recorded;
  return header;
}

Result<std::string> makeTempPath() {
  const char* dir = getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/incise-test-XXXXXX.trace";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  int fd = mkstemps(buffer.data(), 6);
  if (fd < 0) return Error("mkstemps " + pattern + " failed");
  close(fd);
  return std::string(buffer.data());
}

}  // namespace

TraceBuilder::TraceBuilder() = default;

TraceBuilder::~TraceBuilder() {
  if (!path_.empty()) unlink(path_.c_str());
}

uint64_t TraceBuilder::function(const std::string& name, const std::string& module) {
  if (auto it = functions_.find(name); it != functions_.end()) return it->second;
  auto [it, inserted] = modules_.try_emplace(module);
  Module& m = it->second;
  if (inserted) {
    m.base = kFirstModuleBase + kModuleSpacing * (modules_.size() - 1);
    m.next = m.base;
  }
  uint64_t address = m.next;
  m.symbols.push_back(format::Symbol{address, kFunctionSize, name});
  m.next += kFunctionSize;
  functions_[name] = address;
  return address;
}

uint64_t TraceBuilder::kernelFunction(const std::string& name) {
  if (auto it = functions_.find(name); it != functions_.end()) return it->second;
  uint64_t address = kKernelBase + kFunctionSize * kernel_symbols_.size();
  kernel_symbols_.push_back(format::KernelSymbol{address, name, ""});
  functions_[name] = address;
  return address;
}

uint64_t TraceBuilder::frameAddress(const std::string& name) {
  return function(name) + kFrameOffset;
}

uint64_t TraceBuilder::stack(const std::vector<std::string>& leaf_first) {
  std::vector<uint64_t> frames;
  for (const auto& name : leaf_first) frames.push_back(frameAddress(name));
  return rawStack(frames);
}

uint64_t TraceBuilder::rawStack(const std::vector<uint64_t>& leaf_first) {
  if (leaf_first.empty()) return 0;
  stacks_.push_back(leaf_first);
  return stacks_.size();
}

void TraceBuilder::thread(uint32_t tid, const std::string& comm, uint32_t pid, uint64_t time) {
  threads_.push_back(format::Thread{tid, pid, comm, kStartNs + time});
}

void TraceBuilder::process(uint32_t pid, const std::string& comm, uint64_t time) {
  processes_.push_back(format::Process{pid, 0, comm, {comm}, kStartNs + time});
}

uint32_t TraceBuilder::pidOfThread(uint32_t tid) const {
  if (tid == 0) return 0;
  for (const auto& t : threads_) {
    if (t.tid == tid) return t.pid;
  }
  if (auto it = unnamed_.find(tid); it != unnamed_.end()) return it->second;
  return kPid;
}

void TraceBuilder::sample(uint64_t time, uint32_t tid, uint64_t stack, uint32_t cpu,
                          uint64_t weight, uint32_t pid, uint64_t goid) {
  touch(time);
  format::CpuSample row{kStartNs + time, cpu, pid, tid, stack, weight};
  row.goid = goid;
  samples_.push_back(row);
}

void TraceBuilder::countedSample(uint64_t time, uint32_t tid, uint64_t stack,
                                 const std::vector<uint64_t>& counts) {
  sample(time, tid, stack);
  format::CpuSample& row = samples_.back();
  uint64_t* slots[] = {&row.counter0, &row.counter1, &row.counter2, &row.counter3};
  for (size_t i = 0; i < counts.size() && i < 4; ++i) *slots[i] = counts[i];
}

void TraceBuilder::sched(uint64_t time, uint32_t cpu, uint32_t prev_tid, uint64_t prev_state,
                         uint32_t next_tid, uint64_t prev_stack) {
  touch(time);
  switches_.push_back({kStartNs + time, cpu, pidOfThread(prev_tid), prev_tid, prev_state,
                       pidOfThread(next_tid), next_tid, prev_stack});
}

void TraceBuilder::wakeup(uint64_t time, uint32_t waker_tid, uint32_t wakee_tid,
                          uint32_t target_cpu, uint64_t stack, uint32_t cpu) {
  touch(time);
  wakeups_.push_back({kStartNs + time, cpu, target_cpu, pidOfThread(waker_tid), waker_tid,
                      pidOfThread(wakee_tid), wakee_tid, stack});
}

void TraceBuilder::lock(uint32_t tid, uint64_t address, uint64_t request, uint64_t acquired,
                        uint64_t release, uint64_t stack, uint64_t flags, uint32_t releaser_tid,
                        format::LockKind kind) {
  touch(std::max({request, acquired, release}));
  locks_.push_back({kStartNs + request, kStartNs + acquired, release ? kStartNs + release : 0,
                    pidOfThread(tid), tid, address, static_cast<uint64_t>(kind), flags, stack,
                    releaser_tid});
}

void TraceBuilder::fault(uint64_t time, uint32_t tid, uint64_t address, uint64_t stack,
                         uint32_t cpu) {
  touch(time);
  faults_.push_back({kStartNs + time, cpu, pidOfThread(tid), tid, address, stack});
}

void TraceBuilder::allocation(uint64_t time, uint32_t tid, uint64_t address, uint64_t size,
                              uint64_t weight, uint64_t stack) {
  touch(time);
  allocations_.push_back({.time = kStartNs + time,
                          .pid = pidOfThread(tid),
                          .tid = tid,
                          .address = address,
                          .size = size,
                          .weight = weight,
                          .stack_id = stack});
}

void TraceBuilder::freed(uint64_t time, uint32_t tid, uint64_t address) {
  touch(time);
  frees_.push_back(
      {.time = kStartNs + time, .pid = pidOfThread(tid), .tid = tid, .address = address});
}

void TraceBuilder::latency(uint64_t time, uint32_t tid, format::LatencySource source,
                           uint64_t probe, uint64_t duration, uint64_t stack) {
  touch(time + duration);
  latencies_.push_back({.time = kStartNs + time,
                        .duration = duration,
                        .pid = pidOfThread(tid),
                        .tid = tid,
                        .source = static_cast<uint64_t>(source),
                        .probe = probe,
                        .stack_id = stack,
                        .weight = 1});
}

void TraceBuilder::latencyBucket(uint64_t time, uint64_t end_time, uint32_t pid,
                                 format::LatencySource source, uint64_t probe, uint64_t bucket,
                                 uint64_t count, uint64_t total_ns, uint64_t max_ns) {
  touch(end_time);
  latency_buckets_.push_back({.time = kStartNs + time,
                              .end_time = kStartNs + end_time,
                              .pid = pid,
                              .source = static_cast<uint64_t>(source),
                              .probe = probe,
                              .bucket = bucket,
                              .count = count,
                              .total_ns = total_ns,
                              .max_ns = max_ns,
                              .weight = 1});
}

void TraceBuilder::latencyProbe(format::LatencySource source, uint64_t probe,
                                const std::string& name) {
  latency_probes_.push_back({.source = static_cast<uint8_t>(source), .id = probe, .name = name});
}

void TraceBuilder::lost(uint64_t time, format::LostSource source, uint64_t count) {
  touch(time);
  lost_.push_back({kStartNs + time, static_cast<uint64_t>(source), count});
}

void TraceBuilder::processEvent(uint64_t time, format::ProcessEventType type, uint32_t pid,
                                uint32_t tid, uint64_t peer_pid, uint64_t peer_tid) {
  touch(time);
  process_events_.push_back(
      {kStartNs + time, static_cast<uint64_t>(type), pid, tid, peer_pid, peer_tid});
}

void TraceBuilder::context(const std::string& name, const std::string& symbol) {
  contexts_.push_back({.name = name, .object = "", .symbol = symbol});
}

void TraceBuilder::contextChange(uint64_t time, uint32_t tid, uint64_t slot, uint64_t value,
                                 uint64_t since) {
  touch(time);
  context_changes_.push_back({.time = kStartNs + time,
                              .pid = pidOfThread(tid),
                              .tid = tid,
                              .slot = slot,
                              .value = value,
                              .since = since == 0 ? 0 : kStartNs + since});
}

Result<std::string> TraceBuilder::write() {
  if (!path_.empty()) return path_;
  auto path = makeTempPath();
  if (!path) return path.error();
  path_ = *path;

  format::WriterOptions options;
  options.rows_per_chunk = rows_per_chunk_;
  options.background = false;
  format::Header header = makeHeader(lock_mode_, sched_recorded_);
  header.options.target = target_;
  header.options.contexts = contexts_;
  header.options.sample_event = sample_event_;
  header.options.counters = counters_;
  header.options.alloc_sample_bytes = alloc_sample_bytes_;
  auto writer = format::Writer::create(path_, header, options);
  if (!writer) return writer.error();
  format::Writer& w = **writer;

  format::MetadataDelta delta;
  delta.time = kStartNs;
  delta.processes = processes_;
  if (std::none_of(processes_.begin(), processes_.end(),
                   [](const format::Process& p) { return p.pid == kPid; })) {
    delta.processes.push_back(format::Process{kPid, 1, "app", {"/fake/app"}, kStartNs});
  }
  delta.threads = threads_;
  delta.kernel_symbols = kernel_symbols_;
  delta.latency_probes = latency_probes_;
  for (const auto& [name, module] : modules_) {
    uint64_t size = std::max<uint64_t>(module.next - module.base, kFunctionSize);
    format::ObjectSymbols object;
    object.path = "/fake/" + name;
    object.build_id = "build-id-" + name;
    object.symbols = module.symbols;
    object.segments.push_back(format::Segment{module.base, module.base, size, size, kReadExecute});
    object.elf_type = kElfDyn;
    delta.objects.push_back(object);
    delta.mappings.push_back(format::Mapping{kPid, module.base, module.base + size, module.base,
                                             object.path, object.build_id, kReadExecute, kStartNs});
  }
  w.addMetadata(std::move(delta));

  // Builder handles are 1-based indexes; the writer assigns its own ids.
  std::vector<uint64_t> ids(stacks_.size() + 1, 0);
  for (size_t i = 0; i < stacks_.size(); ++i) ids[i + 1] = w.internStack(stacks_[i]);
  auto id = [&](uint64_t handle) { return handle < ids.size() ? ids[handle] : 0; };

  for (auto row : samples_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (auto row : switches_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (auto row : wakeups_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (auto row : locks_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (auto row : faults_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (auto row : latencies_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (auto row : allocations_) {
    row.stack_id = id(row.stack_id);
    w.append(row);
  }
  for (const auto& row : frees_) w.append(row);
  for (const auto& row : latency_buckets_) w.append(row);
  for (const auto& row : lost_) w.append(row);
  for (const auto& row : process_events_) w.append(row);
  for (const auto& row : context_changes_) w.append(row);

  uint64_t end = kStartNs + (end_ != 0 ? end_ : last_time_ + 1);
  INCISE_RETURN_IF_ERROR(w.close(end));
  return path_;
}

Status writeSyntheticProfile(const std::string& path, const SyntheticProfile& profile) {
  format::Header header = makeHeader();
  if (profile.samples_per_request != 0)
    header.options.contexts.push_back({.name = "req", .symbol = "request_id"});
  auto writer = format::Writer::create(path, header, {});
  if (!writer) return writer.error();
  format::Writer& w = **writer;

  // One module with `functions` symbols, mapped so runtime == vaddr.
  format::MetadataDelta delta;
  delta.time = TraceBuilder::kStartNs;
  delta.processes.push_back(format::Process{TraceBuilder::kPid, 1, "synthetic", {}, delta.time});
  format::ObjectSymbols object;
  object.path = "/fake/synthetic";
  object.build_id = "build-id-synthetic";
  object.elf_type = kElfDyn;
  for (uint32_t f = 0; f < profile.functions; ++f) {
    object.symbols.push_back(format::Symbol{kFirstModuleBase + f * TraceBuilder::kFunctionSize,
                                            TraceBuilder::kFunctionSize,
                                            "fn_" + std::to_string(f)});
  }
  uint64_t size = uint64_t{profile.functions} * TraceBuilder::kFunctionSize;
  object.segments.push_back(
      format::Segment{kFirstModuleBase, kFirstModuleBase, size, size, kReadExecute});
  delta.mappings.push_back(format::Mapping{TraceBuilder::kPid, kFirstModuleBase,
                                           kFirstModuleBase + size, kFirstModuleBase, object.path,
                                           object.build_id, kReadExecute, delta.time});
  delta.objects.push_back(std::move(object));
  for (uint32_t t = 0; t < profile.threads; ++t) {
    uint32_t tid = TraceBuilder::kPid + 1 + t;
    delta.threads.push_back(
        format::Thread{tid, TraceBuilder::kPid, "worker-" + std::to_string(t), delta.time});
  }
  w.addMetadata(std::move(delta));

  std::mt19937_64 random(42);
  std::vector<uint64_t> stack_ids;
  for (uint32_t s = 0; s < profile.distinct_stacks; ++s) {
    std::vector<uint64_t> frames;
    for (uint32_t d = 0; d < profile.depth; ++d) {
      // Shared roots (low depth → few functions), varied leaves, like real programs.
      uint32_t choices = std::max<uint32_t>(1, std::min(profile.functions, (d + 1) * (d + 1) * 4));
      uint64_t f = random() % choices;
      frames.push_back(kFirstModuleBase + f * TraceBuilder::kFunctionSize +
                       TraceBuilder::kFrameOffset);
    }
    std::reverse(frames.begin(), frames.end());  // leaf first
    stack_ids.push_back(w.internStack(frames));
  }
  // Zipf-ish: pick a uniform u in (0,1] and use u^3 so low indexes are hot.
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  constexpr uint64_t kPeriodNs = 1'001'001;  // 999 Hz
  uint64_t next_request = 1;
  std::vector<uint64_t> last_read(profile.threads, 0);
  for (uint64_t i = 0; i < profile.samples; ++i) {
    double u = unit(random);
    size_t s =
        std::min<size_t>(stack_ids.size() - 1, static_cast<size_t>(u * u * u * stack_ids.size()));
    uint32_t t = static_cast<uint32_t>(i % profile.threads);
    uint64_t time = TraceBuilder::kStartNs + (i / profile.threads) * kPeriodNs;
    const uint64_t nth = i / profile.threads;  // this thread's sample number
    if (profile.samples_per_request != 0 && nth % profile.samples_per_request == 0) {
      // Every other stretch is between requests (0).
      const bool serving = (nth / profile.samples_per_request) % 2 == 1;
      w.append(format::ContextChange{.time = time - 1,
                                     .pid = TraceBuilder::kPid,
                                     .tid = TraceBuilder::kPid + 1 + t,
                                     .slot = 0,
                                     .value = serving ? next_request++ : 0,
                                     .since = last_read[t]});
    }
    last_read[t] = time - 1;
    w.append(format::CpuSample{time, t % 2, TraceBuilder::kPid, TraceBuilder::kPid + 1 + t,
                               stack_ids[s], kPeriodNs});
  }
  uint64_t end = TraceBuilder::kStartNs + (profile.samples / profile.threads + 1) * kPeriodNs;
  return w.close(end);
}

}  // namespace incise::analyzer::testing
