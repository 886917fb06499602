#include "analyzer/archive/archive_index.h"
#include "base/unique_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "format/block_io.h"

namespace incise::analyzer {
namespace {

constexpr int kIndexVersion = 1;

std::string errnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

template <typename T>
Result<T> field(const nlohmann::json& json, const char* name) {
  auto found = json.find(name);
  if (found == json.end()) return Error(std::string("missing \"") + name + "\"");
  try {
    return found->get<T>();
  } catch (const nlohmann::json::exception& e) {
    return Error(std::string("\"") + name + "\": " + e.what());
  }
}

}  // namespace

nlohmann::json entryJson(const ArchiveEntry& e) {
  return {{"id", e.id},
          {"file", e.file},
          {"host", e.host},
          {"kernel", e.kernel},
          {"command", e.command},
          {"build_ids", e.build_ids},
          {"start_wall_ns", e.start_wall_ns},
          {"duration_ns", e.duration_ns},
          {"samples", e.samples},
          {"added_wall_ns", e.added_wall_ns},
          {"tags", e.tags}};
}

Result<ArchiveEntry> entryFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Error("an entry is not a JSON object");
  ArchiveEntry e;
  INCISE_ASSIGN_OR_RETURN(auto id, field<std::string>(json, "id"));
  e.id = id;
  auto file = field<std::string>(json, "file");
  if (!file) return file.error().context("entry " + e.id);
  e.file = *file;
  if (e.file.empty() || e.file.find('/') != std::string::npos || e.file[0] == '.') {
    return Error("entry " + e.id + ": file name '" + e.file + "' is not a plain file name");
  }
  // The rest is descriptive: tolerate it missing (an older or hand-edited index).
  e.host = json.value("host", "");
  e.kernel = json.value("kernel", "");
  try {
    e.command = json.value("command", std::vector<std::string>{});
    e.build_ids = json.value("build_ids", std::map<std::string, std::string>{});
    e.start_wall_ns = json.value("start_wall_ns", uint64_t{0});
    e.duration_ns = json.value("duration_ns", uint64_t{0});
    e.samples = json.value("samples", uint64_t{0});
    e.added_wall_ns = json.value("added_wall_ns", uint64_t{0});
    e.tags = json.value("tags", std::map<std::string, std::string>{});
  } catch (const nlohmann::json::exception& ex) {
    return Error("entry " + e.id + ": " + ex.what());
  }
  return e;
}

Result<std::vector<ArchiveEntry>> loadArchiveIndex(const std::string& dir) {
  std::string path = dir + "/" + kArchiveIndexName;
  std::ifstream in(path);
  if (!in) {
    if (access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
      if (access(dir.c_str(), F_OK) != 0) return Error(errnoText("cannot open archive", dir));
      return std::vector<ArchiveEntry>{};
    }
    return Error(errnoText("cannot read", path));
  }
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Error(path + ": not a JSON archive index");
  if (doc.value("format", "") != "incise-archive") {
    return Error(path + ": not an incise archive index (\"format\" is not \"incise-archive\")");
  }
  if (doc.value("version", 0) > kIndexVersion) {
    return Error(path + ": index version " + std::to_string(doc.value("version", 0)) +
                 " is newer than this incise understands (" + std::to_string(kIndexVersion) + ")");
  }
  auto traces = doc.find("traces");
  if (traces == doc.end() || !traces->is_array()) return Error(path + ": no \"traces\" list");
  std::vector<ArchiveEntry> entries;
  for (const auto& json : *traces) {
    auto entry = entryFromJson(json);
    if (!entry) return entry.error().context(path);
    entries.push_back(entry.take());
  }
  return entries;
}

Status syncDirectory(const std::string& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Error(errnoText("cannot open directory", dir));
  int rc = fsync(fd.get());
  if (rc != 0) return Error(errnoText("fsync", dir));
  return Status::ok();
}

Status replaceFileAtomically(const std::string& dir, const std::string& name,
                             const std::string& bytes, const SaveHook& hook) {
  std::string pattern = dir + "/." + name + ".tmp-XXXXXX";
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  UniqueFd fd(mkstemp(temp.data()));
  if (!fd) return Error(errnoText("cannot create a temporary file in", dir));
  std::string temp_path = temp.data();
  auto fail = [&](Error error) {
    unlink(temp_path.c_str());
    return Status(std::move(error));
  };
  format::ByteSpan span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (Status written = format::writeAll(fd.get(), span, temp_path); !written)
    return fail(written.error());
  // mkstemp made it 0600: the index names the traces' hosts and commands.
  if (fsync(fd.get()) != 0) return fail(Error(errnoText("fsync", temp_path)));
  fd.reset();
  if (hook) hook("written");
  std::string path = dir + "/" + name;
  if (rename(temp_path.c_str(), path.c_str()) != 0) {
    Error error(errnoText("cannot rename " + temp_path + " to", path));
    unlink(temp_path.c_str());
    return error;
  }
  if (hook) hook("renamed");
  return syncDirectory(dir);
}

Status saveArchiveIndex(const std::string& dir, const std::vector<ArchiveEntry>& entries,
                        const SaveHook& hook) {
  nlohmann::json traces = nlohmann::json::array();
  for (const ArchiveEntry& e : entries) traces.push_back(entryJson(e));
  nlohmann::json doc = {
      {"format", "incise-archive"}, {"version", kIndexVersion}, {"traces", traces}};
  return replaceFileAtomically(
      dir, kArchiveIndexName,
      doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", hook);
}

}  // namespace incise::analyzer
