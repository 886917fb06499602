// Writes the trace_reader seed corpus: a few small valid traces (every event
// kind, metadata, stacks; one closed, one cut short like a killed recorder),
// each as "mode byte + trace" in both modes (see fuzz_entries.h).
//
//   build/fuzz/incise_make_seed_corpus fuzz/corpus/trace_reader
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "format/writer.h"

namespace {

using namespace incise;

format::Header seedHeader() {
  format::Header h;
  h.host = "seed";
  h.kernel_release = "6.1";
  h.command_line = {"incise-record", "-F", "99"};
  h.options.sample_frequency_hz = 99;
  h.options.lock_probes = {"a:b:c"};
  h.cpu_count = 2;
  h.page_size = 4096;
  return h;
}

format::MetadataDelta seedMetadata(uint64_t time) {
  format::MetadataDelta d;
  d.time = time;
  d.processes.push_back({42, 1, "app", {"./app", "-x"}, time});
  d.threads.push_back({43, 42, "worker", time});
  d.mappings.push_back({42, 0x400000, 0x401000, 0, "/usr/bin/app", "\x01\x02", 5, time});
  format::ObjectSymbols object;
  object.build_id = "\x01\x02";
  object.path = "/usr/bin/app";
  object.symbols = {{0x400100, 32, "main"}, {0x400200, 0, "helper"}};
  object.segments = {{0x400000, 0, 0x1000, 0x1000, 5}};
  object.debug_link = "app.debug";
  d.objects.push_back(object);
  d.kernel_symbols.push_back({0xffffffff81000000, "do_syscall_64", ""});
  d.perf_maps.push_back({42, time, {{0x7f0000001000, 64, "LazyCompile:foo"}}});
  d.notes.push_back("seed");
  return d;
}

// `rows` rows of every kind, a metadata block every `rows_per_flush` rows.
Status writeSeed(const std::string& path, int rows, bool close) {
  format::WriterOptions options;
  options.rows_per_chunk = 8;
  options.background = false;
  auto writer = format::Writer::create(path, seedHeader(), options);
  if (!writer) return writer.error();
  format::Writer& w = **writer;
  uint64_t time = 1000;
  for (int i = 0; i < rows; ++i) {
    uint64_t frames[] = {0xffffffff81000010, 0x400110 + uint64_t(i % 3), 0x400210};
    uint64_t stack = w.internStack(std::span<const uint64_t>(frames, 1 + i % 3));
    auto pid = uint64_t{42};
    w.append(format::CpuSample{.time = time,
                               .cpu = uint64_t(i % 2),
                               .pid = pid,
                               .tid = 43,
                               .stack_id = stack,
                               .weight = 10101010});
    w.append(format::SchedSwitch{.time = time + 1,
                                 .prev_pid = pid,
                                 .prev_tid = 43,
                                 .prev_state = uint64_t(i % 2),
                                 .stack_id = stack});
    w.append(format::Wakeup{
        .time = time + 2, .cpu = 1, .wakee_pid = pid, .wakee_tid = 43, .stack_id = stack});
    w.append(format::LockInterval{.time = time + 3,
                                  .acquired_time = time + 5,
                                  .release_time = time + 9,
                                  .pid = pid,
                                  .tid = 43,
                                  .address = 0x7ffd0000,
                                  .lock_kind = 1,
                                  .stack_id = stack});
    w.append(format::PageFault{
        .time = time + 4, .pid = pid, .tid = 43, .address = 0x601000, .stack_id = stack});
    w.append(format::ProcessEvent{.time = time + 5, .event = 3, .pid = pid, .tid = 43});
    w.append(format::Lost{.time = time + 6, .source = 1, .count = uint64_t(i)});
    time += 997;
    if (i % 10 == 9) {
      w.addMetadata(seedMetadata(time));
      INCISE_RETURN_IF_ERROR(w.flush());
    }
  }
  if (close) return w.close(time);
  return w.flush();
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: incise_make_seed_corpus OUT_DIR\n"
                 "  example: incise_make_seed_corpus fuzz/corpus/trace_reader\n";
    return 2;
  }
  std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  struct Seed {
    const char* name;
    int rows;
    bool close;
  };
  for (Seed seed : {Seed{"closed", 20, true}, Seed{"killed", 20, false}, Seed{"tiny", 1, true}}) {
    std::string path = (out / "tmp.trace").string();
    Status written = writeSeed(path, seed.rows, seed.close);
    if (!written) {
      std::cerr << "incise_make_seed_corpus: " << written.message() << "\n";
      return 1;
    }
    std::string trace = readAll(path);
    std::filesystem::remove(path);
    for (char mode : {'\0', '\1'}) {
      std::ofstream file(out / (std::string(seed.name) + (mode ? "-fixsums" : "-raw")),
                         std::ios::binary | std::ios::trunc);
      file << mode << trace;
    }
  }
  return 0;
}
