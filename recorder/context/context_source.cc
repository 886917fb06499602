// The context source: see context_source.h.
#include "recorder/context/context_source.h"

#include <bpf/bpf.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "bpf/context.h"
#include "recorder/context/context_locations.h"
#include "recorder/context/context_maps.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/metadata/mapping_table.h"
#include "recorder/probes/go_target_executables.h"
#include "recorder/ring_poller.h"
#include "recorder/target_filter.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "context";
// Polls (100 ms apart) a process is asked again while its loader or a
// library it names may still come.
constexpr int kLocateAttempts = 30;

// A process's library named by NAME=BIN:SYMBOL may come with dlopen at any
// time: its variable's module id exists only once it is loaded, so a new
// mapping of that library asks again (MappingObserver, from the kernel's
// mmap records).
class ContextSource final : public Source, public MappingObserver {
 public:
  explicit ContextSource(const RecordConfig& config)
      : specs_(config.contexts),
        created_(ContextMaps::recording().create(static_cast<uint32_t>(config.contexts.size()),
                                                 ringBytesFor(config, 1))) {}

  ~ContextSource() override {
    if (mappings_) mappings_->unsubscribe(this);
  }

  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override { return nullptr; }
  bool required() const override { return true; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    INCISE_RETURN_IF_ERROR(created_);
    filter_ = &filter;
    follow_command_ = config.target_kind == TargetKind::kCommand;
    if (config.target_kind != TargetKind::kCommand && config.target_kind != TargetKind::kPids) {
      running_ = processesThatMayHaveThem(config);
      quiet_ = true;
      return Status::ok();
    }
    // The variable must be in the program recorded: a typo is an error now,
    // not a recording without context.
    const std::vector<TargetExecutable> targets = targetExecutables(config);
    if (follow_command_ && !targets.empty()) command_executable_ = targets[0].path;
    for (const ContextSpec& spec : specs_) {
      if (!spec.binary.empty()) {
        if (spec.binary.find('/') != std::string::npos)
          INCISE_RETURN_IF_ERROR(contextVariableSize(spec.binary, spec).status());
        continue;
      }
      Status first = Status::ok();
      bool found = false;
      for (const TargetExecutable& target : targets) {
        Result<uint8_t> size = contextVariableSize(target.path, spec);
        found |= static_cast<bool>(size);
        if (!size && first) first = size.status();
      }
      if (!found && !first) return first;
    }
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    const ContextMaps& maps = ContextMaps::recording();
    drops_ = DropCounter(maps.dropsFd());
    INCISE_RETURN_IF_ERROR(poller.add(maps.eventsFd(), &ContextSource::onRecord, this));
    if (!running_.empty()) {
      // -a, --cgroup: the processes running now whose executable defines them;
      // one look each (there may be many), no notes for the others.
      for (uint32_t pid : running_) {
        ContextLocations found = locateContexts(pid, specs_);
        if (found.any()) bpf_map_update_elem(maps.processesFd(), &pid, &found.where, BPF_ANY);
      }
    } else if (!follow_command_) {
      for (uint32_t pid : filter_->pids()) locate(pid, kLocateAttempts);
    } else if (!command_executable_.empty()) {
      // `-- CMD`: the child has not exec'd yet, and the recorder sees its
      // exec only at a later poll: the executable's variables are placed
      // from its file now, read once the child runs that file.
      ContextLocations seeded = locateInExecutable(command_executable_, specs_);
      for (uint32_t pid : filter_->pids()) {
        if (seeded.any()) bpf_map_update_elem(maps.processesFd(), &pid, &seeded.where, BPF_ANY);
      }
    }
    sink.processes().addExecListener([this](uint32_t pid) { locate(pid, kLocateAttempts); });
    for (const ContextSpec& spec : specs_) {
      if (!spec.binary.empty() && !mappings_) {
        mappings_ = &sink.processes().mappings();
        mappings_->subscribe(this);
      }
    }
    sink.processes().addExitListener([this](uint32_t pid) { forget(pid); });
    return Status::ok();
  }

  void pollLost(EventSink& sink) override {
    drops_.poll(sink);
    std::map<uint32_t, int> again;
    again.swap(pending_);
    for (const auto& [pid, attempts] : again) locate(pid, attempts);
  }

  void onMap(const ExecutableMapping& mapping) override {
    if (!incomplete_.count(mapping.pid) || pending_.count(mapping.pid)) return;
    for (const ContextSpec& spec : specs_) {
      if (namesMappedObject(spec, mapping.object->path)) {
        locate(mapping.pid, kLocateAttempts);
        return;
      }
    }
  }

  void finish(EventSink& sink) override {
    // Whatever is still missing when recording stops was never found.
    for (const auto& [pid, notes] : last_missing_) noteMissing(notes);
    last_missing_.clear();
    pending_.clear();
    drops_.poll(sink);
  }

 private:
  // -a, --cgroup: the processes running now whose executable defines every
  // context that names no object (all of them, when each names one).
  std::vector<uint32_t> processesThatMayHaveThem(const RecordConfig& config) const {
    std::vector<uint32_t> pids;
    for (const TargetExecutable& target : targetExecutables(config)) {
      bool defines = true;
      for (const ContextSpec& spec : specs_) {
        if (spec.binary.empty())
          defines &= static_cast<bool>(contextVariableSize(target.path, spec));
      }
      if (defines) pids.insert(pids.end(), target.pids.begin(), target.pids.end());
    }
    return pids;
  }

  static int onRecord(void* context, void* data, size_t size) {
    static_cast<ContextSource*>(context)->decode(data, size);
    return 0;
  }

  void decode(const void* data, size_t size) {
    if (size < sizeof(context_event)) return;
    const auto* e = static_cast<const context_event*>(data);
    if (e->header.type != EVENT_CONTEXT || e->slot >= specs_.size()) return;
    sink_->append(format::ContextChange{.time = e->header.time,
                                        .pid = e->header.pid,
                                        .tid = e->header.tid,
                                        .slot = e->slot,
                                        .value = e->value,
                                        .since = e->since,
                                        .value_high = e->value_high});
  }

  // Puts `pid`'s locations into the map; asks again at the next poll while
  // a slot may still be found and attempts remain, else notes what is missing.
  void locate(uint32_t pid, int attempts) {
    ContextLocations found = locateContexts(pid, specs_);
    const int fd = ContextMaps::recording().processesFd();
    if (found.any())
      bpf_map_update_elem(fd, &pid, &found.where, BPF_ANY);
    else
      bpf_map_delete_elem(fd, &pid);
    if (found.missing.empty())
      incomplete_.erase(pid);
    else
      incomplete_.insert(pid);
    if (found.retry && attempts > 1) {
      pending_[pid] = attempts - 1;
      last_missing_[pid] = std::move(found.missing);
      return;
    }
    if (quiet_ || found.missing.empty()) {
      last_missing_.erase(pid);
      return;
    }
    // A library it names may still be opened: say what is missing once the
    // process exits or the recording ends.
    if (mappings_) {
      last_missing_[pid] = std::move(found.missing);
      return;
    }
    last_missing_.erase(pid);
    noteMissing(found.missing);
  }

  void noteMissing(const std::vector<std::string>& notes) {
    for (const std::string& note : notes) sink_->addNote(note + ": recorded without that context");
  }

  void forget(uint32_t pid) {
    bpf_map_delete_elem(ContextMaps::recording().processesFd(), &pid);
    pending_.erase(pid);
    incomplete_.erase(pid);
    if (auto missing = last_missing_.find(pid); missing != last_missing_.end() && !quiet_)
      noteMissing(missing->second);
    last_missing_.erase(pid);
  }

  std::vector<ContextSpec> specs_;
  Status created_;
  TargetFilter* filter_ = nullptr;
  bool follow_command_ = false;
  std::string command_executable_;  // `-- CMD`'s program, as execvp finds it
  std::vector<uint32_t> running_;   // -a, --cgroup: processes to locate at attach
  bool quiet_ = false;              // -a, --cgroup: most processes lack the variables; no note each
  EventSink* sink_ = nullptr;
  DropCounter drops_;
  std::map<uint32_t, int> pending_;  // pid -> attempts left
  std::map<uint32_t, std::vector<std::string>> last_missing_;
  std::set<uint32_t> incomplete_;     // processes with a variable not found (yet)
  MappingTable* mappings_ = nullptr;  // subscribed: a context names a library
};

}  // namespace

std::unique_ptr<Source> makeContextSource(const RecordConfig& config) {
  return std::make_unique<ContextSource>(config);
}

}  // namespace incise::recorder
