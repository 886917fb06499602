// ProcessImage: see process_image.h.
#include "recorder/metadata/process_image.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace incise::recorder {
namespace {

// A /proc file of any size (maps of a big process run to megabytes).
bool readWhole(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

bool hexField(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

bool decimalField(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 10);
  return ec == std::errc() && end == text.data() + text.size();
}

// The next space-separated field of `line` from `at`.
std::string_view nextField(std::string_view line, size_t& at) {
  while (at < line.size() && line[at] == ' ') ++at;
  size_t start = at;
  while (at < line.size() && line[at] != ' ') ++at;
  return line.substr(start, at - start);
}

}  // namespace

bool ExecMapping::deleted() const {
  constexpr std::string_view kDeleted = " (deleted)";
  return path.size() > kDeleted.size() &&
         std::string_view(path).substr(path.size() - kDeleted.size()) == kDeleted;
}

// "7f2c1a000000-7f2c1a1c6000 r-xp 00028000 fe:01 1837 /usr/lib/x86_64-linux-gnu/libc.so.6"
bool parseExecMapping(std::string_view line, ExecMapping& out, bool& executable) {
  size_t at = 0;
  std::string_view range = nextField(line, at);
  std::string_view perms = nextField(line, at);
  std::string_view offset = nextField(line, at);
  std::string_view device = nextField(line, at);
  std::string_view inode = nextField(line, at);
  size_t dash = range.find('-');
  size_t colon = device.find(':');
  uint64_t major = 0, minor = 0;
  if (dash == std::string_view::npos || colon == std::string_view::npos || perms.size() < 4 ||
      !hexField(range.substr(0, dash), out.start) || !hexField(range.substr(dash + 1), out.end) ||
      !hexField(offset, out.offset) || !hexField(device.substr(0, colon), major) ||
      !hexField(device.substr(colon + 1), minor) || !decimalField(inode, out.inode) ||
      out.end <= out.start)
    return false;
  while (at < line.size() && line[at] == ' ') ++at;
  out.path = std::string(line.substr(at));
  out.device = out.inode != 0 ? makedev(major, minor) : 0;
  executable = perms[2] == 'x';
  return true;
}

uint64_t parseStartStack(std::string_view stat_line) {
  // "pid (comm) state ppid ...": comm may hold spaces and ')'; startstack is
  // field 28, the 26th after the closing parenthesis.
  size_t paren = stat_line.rfind(')');
  if (paren == std::string_view::npos) return 0;
  size_t at = paren + 1;
  std::string_view field;
  for (int i = 0; i < 26; ++i) field = nextField(stat_line, at);
  uint64_t value = 0;
  return decimalField(field, value) ? value : 0;
}

Result<ProcessImage> readProcessImage(const std::string& proc_root, uint32_t pid) {
  std::string dir = proc_root + "/" + std::to_string(pid);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string stat_before, maps, stat_after;
    if (!readWhole(dir + "/stat", stat_before) || !readWhole(dir + "/maps", maps) ||
        !readWhole(dir + "/stat", stat_after) || stat_before.empty())
      return Error("process " + std::to_string(pid) + " is gone");
    ProcessImage image;
    image.start_stack = parseStartStack(stat_before);
    if (image.start_stack != parseStartStack(stat_after)) continue;  // exec'd meanwhile
    std::string_view text = maps;
    while (!text.empty()) {
      size_t newline = text.find('\n');
      std::string_view line = text.substr(0, newline);
      text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
      ExecMapping mapping;
      bool executable = false;
      if (parseExecMapping(line, mapping, executable) && executable)
        image.mappings.push_back(std::move(mapping));
    }
    std::sort(image.mappings.begin(), image.mappings.end(),
              [](const ExecMapping& a, const ExecMapping& b) { return a.start < b.start; });
    return image;
  }
  return Error("process " + std::to_string(pid) + " keeps changing its image");
}

}  // namespace incise::recorder
