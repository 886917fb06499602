#include "analyzer/cli/report_output.h"

#include <cstring>
#include <fstream>
#include <iostream>

#include "analyzer/cli/command_line.h"

namespace incise::analyzer {

int writeReport(const CommandLine& cli, const std::function<void(std::ostream&)>& write) {
  const std::string& path = cli.options().output;
  if (path.empty()) {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "incise " << cli.name() << ": writing to stdout failed\n";
      return 1;
    }
    return 0;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    std::cerr << "incise " << cli.name() << ": cannot create " << path << ": "
              << std::strerror(errno) << "\n";
    return 1;
  }
  write(file);
  file.close();
  if (!file) {
    std::cerr << "incise " << cli.name() << ": writing " << path << " failed\n";
    return 1;
  }
  return 0;
}

}  // namespace incise::analyzer
