#include "analyzer/archive/archive_add.h"
#include "base/unique_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "analyzer/archive/trace_id.h"
#include "analyzer/diff/trace_facts.h"
#include "analyzer/render/salvage_notice.h"
#include "format/block_io.h"
#include "format/reader.h"

namespace incise::analyzer {
namespace {

constexpr size_t kCopyBlock = 1 << 20;

std::string errnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

struct CopiedFile {
  std::string temp_path;
  std::string id;
};

// Copies `source` into a fresh temporary file in `dir`, fsynced, hashing the bytes.
Result<CopiedFile> copyIntoDirectory(const std::string& source, const std::string& dir) {
  UniqueFd in(open(source.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) return Error(errnoText("cannot open", source));
  std::string pattern = dir + "/.add-XXXXXX.tmp";
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  UniqueFd out(mkstemps(temp.data(), 4));
  if (!out) return Error(errnoText("cannot create a temporary file in", dir));
  CopiedFile copied{temp.data(), ""};
  auto fail = [&](Error error) {
    unlink(copied.temp_path.c_str());
    return error;
  };
  TraceIdHasher hasher;
  std::vector<uint8_t> buffer(kCopyBlock);
  for (;;) {
    ssize_t n = read(in.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(Error(errnoText("cannot read", source)));
    if (n == 0) break;
    hasher.update(buffer.data(), static_cast<size_t>(n));
    Status written = format::writeAll(
        out.get(), format::ByteSpan(buffer.data(), static_cast<size_t>(n)), copied.temp_path);
    if (!written) return fail(written.error());
  }
  copied.id = hasher.hex();
  // mkstemps made it 0600; a trace stays private in the archive too.
  if (fsync(out.get()) != 0) {
    return fail(Error(errnoText("fsync", copied.temp_path)));
  }
  return copied;
}

// Holds an exclusive flock on DIR/.lock for its lifetime.
class ArchiveLock {
 public:
  static Result<ArchiveLock> take(const std::string& dir) {
    std::string path = dir + "/.lock";
    UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return Error(errnoText("cannot open", path));
    while (flock(fd.get(), LOCK_EX) != 0) {
      if (errno != EINTR) return Error(errnoText("cannot lock", path));
    }
    return ArchiveLock(std::move(fd));
  }

 private:
  explicit ArchiveLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing it releases the flock
};

uint64_t wallNowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

Result<std::pair<std::string, std::string>> parseTag(const std::string& text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return Error("tag '" + text + "': expected KEY=VALUE");
  }
  return std::pair{text.substr(0, equals), text.substr(equals + 1)};
}

Result<AddResult> addToArchive(const std::string& dir, const std::string& trace_path,
                               const std::map<std::string, std::string>& tags,
                               const SaveHook& hook) {
  auto reader = format::Reader::open(trace_path);
  if (!reader) return reader.error().context(trace_path);
  TraceFacts facts = traceFactsOf(**reader);
  std::optional<std::string> salvage_notice = salvageNotice(trace_path, (*reader)->recovery());
  reader = Error("closed");  // the copy below reads the file again

  // Traces hold command lines, paths and symbols: the archive is private.
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error(errnoText("cannot create archive directory", dir));
  }
  INCISE_RETURN_IF_ERROR(ArchiveLock::take(dir));
  INCISE_ASSIGN_OR_RETURN(auto entries, loadArchiveIndex(dir));

  auto copied = copyIntoDirectory(trace_path, dir);
  if (!copied) return copied.error();
  if (hook) hook("copied");
  for (ArchiveEntry& existing : entries) {
    if (existing.id != copied->id) continue;
    unlink(copied->temp_path.c_str());
    AddResult result{existing, true, salvage_notice};
    bool changed = false;
    for (const auto& [key, value] : tags) {
      changed |= existing.tags[key] != value;
      existing.tags[key] = value;
    }
    result.entry = existing;
    if (changed) {
      if (Status saved = saveArchiveIndex(dir, entries, hook); !saved) return saved.error();
    }
    return result;
  }

  ArchiveEntry entry;
  entry.id = copied->id;
  entry.file = copied->id + ".trace";
  entry.host = facts.host;
  entry.kernel = facts.kernel;
  entry.command = facts.command;
  entry.build_ids = facts.build_ids;
  entry.start_wall_ns = facts.start_wall_ns;
  entry.duration_ns = facts.duration_ns;
  entry.samples = facts.samples;
  entry.added_wall_ns = wallNowNs();
  entry.tags = tags;
  std::string final_path = dir + "/" + entry.file;
  if (rename(copied->temp_path.c_str(), final_path.c_str()) != 0) {
    Error error(errnoText("cannot rename " + copied->temp_path + " to", final_path));
    unlink(copied->temp_path.c_str());
    return error;
  }
  if (Status synced = syncDirectory(dir); !synced) return synced.error();
  if (hook) hook("trace renamed");

  entries.push_back(entry);
  if (Status saved = saveArchiveIndex(dir, entries, hook); !saved) return saved.error();
  return AddResult{entry, false, salvage_notice};
}

}  // namespace incise::analyzer
