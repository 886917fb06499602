// Field-by-field conversion between metadata.h and trace.capnp.
#include "format/metadata_codec.h"

#include "format/capnp_message.h"
#include "format/symbol_table_blob.h"
#include "schemas/trace.capnp.h"

namespace incise::format {
namespace {

kj::ArrayPtr<const kj::byte> dataOf(const std::string& s) {
  return kj::ArrayPtr<const kj::byte>(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}
std::string fromData(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}
std::string fromText(capnp::Text::Reader t) {
  return std::string(t.cStr(), t.size());
}

void setTextList(capnp::List<capnp::Text>::Builder list, const std::vector<std::string>& v) {
  for (size_t i = 0; i < v.size(); ++i) list.set(i, v[i]);
}
std::vector<std::string> textList(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (auto t : list) out.push_back(fromText(t));
  return out;
}

// Builds a capnp list from a vector, one element at a time through `fill`.
template <typename ListBuilder, typename T, typename Fill>
void fillList(ListBuilder list, const std::vector<T>& items, Fill fill) {
  for (size_t i = 0; i < items.size(); ++i) fill(list[i], items[i]);
}
template <typename T, typename ListReader, typename Convert>
std::vector<T> readList(ListReader list, Convert convert) {
  std::vector<T> out;
  out.reserve(list.size());
  for (auto item : list) out.push_back(convert(item));
  return out;
}

}  // namespace

std::string encodeHeader(const Header& h) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::Header>();
  b.setFormatMajor(h.format_major);
  b.setFormatMinor(h.format_minor);
  b.setHost(h.host);
  b.setKernelRelease(h.kernel_release);
  b.setBootId(h.boot_id);
  b.setClockSource(h.clock_source);
  b.setStartWallNs(h.start_wall_ns);
  b.setStartMonoNs(h.start_mono_ns);
  setTextList(b.initCommandLine(h.command_line.size()), h.command_line);
  auto o = b.initOptions();
  o.setSampleFrequencyHz(h.options.sample_frequency_hz);
  o.setStackMode(h.options.stack_mode);
  o.setLockMode(h.options.lock_mode);
  o.setSchedEnabled(h.options.sched_enabled);
  o.setPageFaultsEnabled(h.options.page_faults_enabled);
  o.setTarget(h.options.target);
  setTextList(o.initLockProbes(h.options.lock_probes.size()), h.options.lock_probes);
  o.setDwarfStackBytes(h.options.dwarf_stack_bytes);
  o.setSampleEvent(h.options.sample_event);
  setTextList(o.initLatencyTraces(h.options.latency_traces.size()), h.options.latency_traces);
  o.setLatencySyscalls(h.options.latency_syscalls);
  o.setLatencyBlockIo(h.options.latency_block_io);
  o.setLatencyIoUring(h.options.latency_io_uring);
  o.setLatencyAggregate(h.options.latency_aggregate);
  o.setLatencySample(h.options.latency_sample);
  fillList(o.initContexts(h.options.contexts.size()), h.options.contexts,
           [](auto c, const ContextVariable& v) {
             c.setName(v.name);
             c.setObject(v.object);
             c.setSymbol(v.symbol);
             c.setReading(v.reading);
           });
  o.setSamplePeriod(h.options.sample_period);
  setTextList(o.initCounters(h.options.counters.size()), h.options.counters);
  o.setAllocSampleBytes(h.options.alloc_sample_bytes);
  b.setRecorderVersion(h.recorder_version);
  b.setCpuCount(h.cpu_count);
  b.setPageSize(h.page_size);
  return flattenMessage(message);
}

Result<Header> decodeHeader(codecs::ByteSpan bytes, const ReaderOptions& options) {
  return readMessage(bytes, options, [](capnp::MessageReader& message) {
    auto r = message.getRoot<schema::Header>();
    Header h;
    h.format_major = r.getFormatMajor();
    h.format_minor = r.getFormatMinor();
    h.host = fromText(r.getHost());
    h.kernel_release = fromText(r.getKernelRelease());
    h.boot_id = fromText(r.getBootId());
    h.clock_source = fromText(r.getClockSource());
    h.start_wall_ns = r.getStartWallNs();
    h.start_mono_ns = r.getStartMonoNs();
    h.command_line = textList(r.getCommandLine());
    auto o = r.getOptions();
    h.options.sample_frequency_hz = o.getSampleFrequencyHz();
    h.options.stack_mode = fromText(o.getStackMode());
    h.options.lock_mode = fromText(o.getLockMode());
    h.options.sched_enabled = o.getSchedEnabled();
    h.options.page_faults_enabled = o.getPageFaultsEnabled();
    h.options.target = fromText(o.getTarget());
    h.options.lock_probes = textList(o.getLockProbes());
    h.options.dwarf_stack_bytes = o.getDwarfStackBytes();
    h.options.sample_event = fromText(o.getSampleEvent());
    h.options.latency_traces = textList(o.getLatencyTraces());
    h.options.latency_syscalls = fromText(o.getLatencySyscalls());
    h.options.latency_block_io = o.getLatencyBlockIo();
    h.options.latency_io_uring = o.getLatencyIoUring();
    h.options.latency_aggregate = o.getLatencyAggregate();
    h.options.latency_sample = o.getLatencySample();
    h.options.contexts = readList<ContextVariable>(o.getContexts(), [](auto c) {
      return ContextVariable{fromText(c.getName()), fromText(c.getObject()),
                             fromText(c.getSymbol()), fromText(c.getReading())};
    });
    h.options.sample_period = o.getSamplePeriod();
    h.options.counters = textList(o.getCounters());
    h.options.alloc_sample_bytes = o.getAllocSampleBytes();
    h.recorder_version = fromText(r.getRecorderVersion());
    h.cpu_count = r.getCpuCount();
    h.page_size = r.getPageSize();
    return h;
  });
}

std::string encodeMetadata(const MetadataDelta& d) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::MetadataDelta>();
  b.setTime(d.time);
  fillList(b.initProcesses(d.processes.size()), d.processes, [](auto o, const Process& p) {
    o.setPid(p.pid);
    o.setPpid(p.ppid);
    o.setComm(p.comm);
    setTextList(o.initCmdline(p.cmdline.size()), p.cmdline);
    o.setTime(p.time);
  });
  fillList(b.initThreads(d.threads.size()), d.threads, [](auto o, const Thread& t) {
    o.setTid(t.tid);
    o.setPid(t.pid);
    o.setComm(t.comm);
    o.setTime(t.time);
  });
  fillList(b.initMappings(d.mappings.size()), d.mappings, [](auto o, const Mapping& m) {
    o.setPid(m.pid);
    o.setStart(m.start);
    o.setEnd(m.end);
    o.setFileOffset(m.file_offset);
    o.setPath(m.path);
    o.setBuildId(dataOf(m.build_id));
    o.setProt(m.prot);
    o.setTime(m.time);
  });
  fillList(b.initObjects(d.objects.size()), d.objects, [](auto o, const ObjectSymbols& s) {
    o.setBuildId(dataOf(s.build_id));
    o.setPath(s.path);
    if (!s.symbols.empty()) o.setSymbolTable(dataOf(encodeSymbols(s.symbols)));
    fillList(o.initSegments(s.segments.size()), s.segments, [](auto g, const Segment& seg) {
      g.setVaddr(seg.vaddr);
      g.setFileOffset(seg.file_offset);
      g.setFileSize(seg.file_size);
      g.setMemSize(seg.mem_size);
      g.setFlags(seg.flags);
    });
    o.setElfType(s.elf_type);
    o.setDebugLink(s.debug_link);
    o.setEhFrame(dataOf(s.eh_frame));
    o.setEhFrameHdr(dataOf(s.eh_frame_hdr));
    o.setEhFrameVaddr(s.eh_frame_vaddr);
    o.setEhFrameHdrVaddr(s.eh_frame_hdr_vaddr);
  });
  if (!d.kernel_symbols.empty())
    b.setKernelSymbolTable(dataOf(encodeKernelSymbols(d.kernel_symbols)));
  fillList(b.initPerfMaps(d.perf_maps.size()), d.perf_maps, [](auto o, const PerfMapSnapshot& s) {
    o.setPid(s.pid);
    o.setTime(s.time);
    fillList(o.initEntries(s.entries.size()), s.entries, [](auto e, const PerfMapEntry& entry) {
      e.setStart(entry.start);
      e.setSize(entry.size);
      e.setName(entry.name);
    });
  });
  setTextList(b.initNotes(d.notes.size()), d.notes);
  fillList(b.initLatencyProbes(d.latency_probes.size()), d.latency_probes,
           [](auto o, const LatencyProbe& p) {
             o.setSource(p.source);
             o.setId(p.id);
             o.setName(p.name);
             o.setObject(p.object);
             o.setOffset(p.offset);
             o.setIsGo(p.is_go);
           });
  return flattenMessage(message);
}

namespace {

// A 2.0 symbol blob, after whatever the list held (older files fill only the list).
template <typename T>
Status appendBlob(std::vector<T>& into, capnp::Data::Reader blob,
                  Result<std::vector<T>> (*decode)(codecs::ByteSpan)) {
  if (blob.size() == 0) return Status::ok();
  INCISE_ASSIGN_OR_RETURN(std::vector<T> symbols,
                          decode(codecs::ByteSpan(blob.begin(), blob.size())));
  for (T& s : symbols) into.push_back(std::move(s));
  return Status::ok();
}

}  // namespace

Result<MetadataDelta> decodeMetadata(codecs::ByteSpan bytes, const ReaderOptions& options) {
  auto decoded =
      readMessage(bytes, options, [](capnp::MessageReader& message) -> Result<MetadataDelta> {
        auto r = message.getRoot<schema::MetadataDelta>();
        MetadataDelta d;
        d.time = r.getTime();
        d.processes = readList<Process>(r.getProcesses(), [](auto p) {
          return Process{p.getPid(), p.getPpid(), fromText(p.getComm()), textList(p.getCmdline()),
                         p.getTime()};
        });
        d.threads = readList<Thread>(r.getThreads(), [](auto t) {
          return Thread{t.getTid(), t.getPid(), fromText(t.getComm()), t.getTime()};
        });
        d.mappings = readList<Mapping>(r.getMappings(), [](auto m) {
          return Mapping{m.getPid(),
                         m.getStart(),
                         m.getEnd(),
                         m.getFileOffset(),
                         fromText(m.getPath()),
                         fromData(m.getBuildId()),
                         m.getProt(),
                         m.getTime()};
        });
        Status symbols_read = Status::ok();
        d.objects = readList<ObjectSymbols>(r.getObjects(), [&](auto o) {
          ObjectSymbols s;
          s.build_id = fromData(o.getBuildId());
          s.path = fromText(o.getPath());
          s.symbols = readList<Symbol>(o.getSymbols(), [](auto y) {
            return Symbol{y.getAddress(), y.getSize(), fromText(y.getName())};
          });
          Status blob = appendBlob(s.symbols, o.getSymbolTable(), &decodeSymbols);
          if (!blob && symbols_read) symbols_read = blob.error().context(s.path);
          s.segments = readList<Segment>(o.getSegments(), [](auto g) {
            return Segment{g.getVaddr(), g.getFileOffset(), g.getFileSize(), g.getMemSize(),
                           g.getFlags()};
          });
          s.elf_type = o.getElfType();
          s.debug_link = fromText(o.getDebugLink());
          s.eh_frame = fromData(o.getEhFrame());
          s.eh_frame_hdr = fromData(o.getEhFrameHdr());
          s.eh_frame_vaddr = o.getEhFrameVaddr();
          s.eh_frame_hdr_vaddr = o.getEhFrameHdrVaddr();
          return s;
        });
        INCISE_RETURN_IF_ERROR(symbols_read);
        d.kernel_symbols = readList<KernelSymbol>(r.getKernelSymbols(), [](auto k) {
          return KernelSymbol{k.getAddress(), fromText(k.getName()), fromText(k.getModule())};
        });
        INCISE_RETURN_IF_ERROR(
            appendBlob(d.kernel_symbols, r.getKernelSymbolTable(), &decodeKernelSymbols));
        d.perf_maps = readList<PerfMapSnapshot>(r.getPerfMaps(), [](auto s) {
          PerfMapSnapshot snap{s.getPid(), s.getTime(), {}};
          snap.entries = readList<PerfMapEntry>(s.getEntries(), [](auto e) {
            return PerfMapEntry{e.getStart(), e.getSize(), fromText(e.getName())};
          });
          return snap;
        });
        d.notes = textList(r.getNotes());
        d.latency_probes = readList<LatencyProbe>(r.getLatencyProbes(), [](auto p) {
          return LatencyProbe{p.getSource(),           p.getId(),     fromText(p.getName()),
                              fromText(p.getObject()), p.getOffset(), p.getIsGo()};
        });
        return d;
      });
  if (!decoded) return decoded.error();
  if (!*decoded) return decoded->error();  // a symbol blob that does not decode
  return decoded->take();
}

namespace {
template <typename T>
void appendAll(std::vector<T>& into, std::vector<T>&& from) {
  if (into.empty()) {
    into = std::move(from);
    return;
  }
  into.insert(into.end(), std::make_move_iterator(from.begin()),
              std::make_move_iterator(from.end()));
}
}  // namespace

void mergeMetadata(Metadata& into, MetadataDelta&& d) {
  if (into.empty() && into.time == 0) into.time = d.time;
  appendAll(into.processes, std::move(d.processes));
  appendAll(into.threads, std::move(d.threads));
  appendAll(into.mappings, std::move(d.mappings));
  appendAll(into.objects, std::move(d.objects));
  appendAll(into.kernel_symbols, std::move(d.kernel_symbols));
  appendAll(into.perf_maps, std::move(d.perf_maps));
  appendAll(into.notes, std::move(d.notes));
  appendAll(into.latency_probes, std::move(d.latency_probes));
}

}  // namespace incise::format
