// options.h: the tiny command-line parser shared by the bundled workloads.
//
// Workloads are inputs to the recorder's tests and benchmarks, so they stay
// dependency-free (no Boost) and their options are few: unsigned integers,
// decimals, strings and flags, written `--name VALUE` or `--name=VALUE`.
// `--help` prints the usage to stdout and exits 0; a bad option prints a
// message naming it plus the usage to stderr and exits 2.
//
// Example:
//   std::uint64_t threads = 4;
//   incise::workloads::Options options("lock_story", "Threads contend on one mutex.",
//                                      "lock_story --threads 4 --seconds 2");
//   options.add("threads", "worker threads", threads);
//   options.parse_or_exit(argc, argv);
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

namespace incise::workloads {

class Options {
 public:
  Options(std::string_view program, std::string_view summary, std::string_view example)
      : program_(program), summary_(summary), example_(example) {}

  void add(std::string_view name, std::string_view help, std::uint64_t& value) {
    entries_.push_back({std::string(name), std::string(help), &value, false});
  }
  void add(std::string_view name, std::string_view help, double& value) {
    entries_.push_back({std::string(name), std::string(help), &value, false});
  }
  void add(std::string_view name, std::string_view help, std::string& value) {
    entries_.push_back({std::string(name), std::string(help), &value, false});
  }
  void add_flag(std::string_view name, std::string_view help, bool& value) {
    entries_.push_back({std::string(name), std::string(help), &value, false});
  }
  // Hidden options are parsed but not shown by --help (internal roles such as
  // a re-executed child).
  void add_hidden(std::string_view name, std::string& value) {
    entries_.push_back({std::string(name), "", &value, true});
  }

  void parse_or_exit(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string_view arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        print_usage(stdout);
        std::exit(0);
      }
      if (arg.substr(0, 2) != "--") fail("unexpected argument '" + std::string(arg) + "'");
      arg.remove_prefix(2);
      std::string_view name = arg;
      std::string_view text;
      bool has_inline_value = false;
      if (auto eq = arg.find('='); eq != std::string_view::npos) {
        name = arg.substr(0, eq);
        text = arg.substr(eq + 1);
        has_inline_value = true;
      }
      Entry* entry = find(name);
      if (entry == nullptr) fail("unknown option --" + std::string(name));
      if (auto* flag = std::get_if<bool*>(&entry->target)) {
        if (has_inline_value) fail("option --" + entry->name + " takes no value");
        **flag = true;
        continue;
      }
      if (!has_inline_value) {
        if (i + 1 >= argc) fail("option --" + entry->name + " needs a value");
        text = argv[++i];
      }
      store(*entry, text);
    }
  }

 private:
  using Target = std::variant<std::uint64_t*, double*, std::string*, bool*>;
  struct Entry {
    std::string name;
    std::string help;
    Target target;
    bool hidden;
  };

  Entry* find(std::string_view name) {
    for (Entry& entry : entries_) {
      if (entry.name == name) return &entry;
    }
    return nullptr;
  }

  void store(Entry& entry, std::string_view text) {
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (auto* integer = std::get_if<std::uint64_t*>(&entry.target)) {
      auto [end, error] = std::from_chars(first, last, **integer);
      if (error != std::errc() || end != last || text.empty()) {
        fail("option --" + entry.name + " needs an unsigned integer, got '" + std::string(text) +
             "'");
      }
    } else if (auto* decimal = std::get_if<double*>(&entry.target)) {
      auto [end, error] = std::from_chars(first, last, **decimal);
      if (error != std::errc() || end != last || text.empty() || **decimal < 0) {
        fail("option --" + entry.name + " needs a non-negative number, got '" + std::string(text) +
             "'");
      }
    } else if (auto* string = std::get_if<std::string*>(&entry.target)) {
      **string = std::string(text);
    }
  }

  static std::string default_text(const Target& target) {
    if (auto* integer = std::get_if<std::uint64_t*>(&target)) return std::to_string(**integer);
    if (auto* decimal = std::get_if<double*>(&target)) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%g", **decimal);
      return buffer;
    }
    if (auto* string = std::get_if<std::string*>(&target)) return "'" + **string + "'";
    return "off";
  }

  void print_usage(std::FILE* out) const {
    std::fprintf(out, "usage: %s [options]\n%s\n\noptions:\n", program_.c_str(), summary_.c_str());
    for (const Entry& entry : entries_) {
      if (entry.hidden) continue;
      std::string left = "--" + entry.name;
      if (std::holds_alternative<std::uint64_t*>(entry.target)) left += " N";
      if (std::holds_alternative<double*>(entry.target)) left += " X";
      if (std::holds_alternative<std::string*>(entry.target)) left += " TEXT";
      std::fprintf(out, "  %-22s %s (default %s)\n", left.c_str(), entry.help.c_str(),
                   default_text(entry.target).c_str());
    }
    std::fprintf(out, "  %-22s %s\n\nexample:\n  %s\n", "--help", "this text", example_.c_str());
  }

  [[noreturn]] void fail(const std::string& message) const {
    std::fprintf(stderr, "%s: %s\n", program_.c_str(), message.c_str());
    print_usage(stderr);
    std::exit(2);
  }

  std::string program_;
  std::string summary_;
  std::string example_;
  std::vector<Entry> entries_;
};

}  // namespace incise::workloads
