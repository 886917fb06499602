#include "analyzer/reports/lock_report_command.h"

#include "analyzer/cli/report_output.h"
#include "analyzer/model/trace.h"
#include "analyzer/reports/report_header.h"

namespace incise::analyzer {

void ReportOutput::printHeader() const {
  printReportHeader(out_, cli_.name(), trace_);
}

nlohmann::json ReportOutput::headerJson() const {
  return reportHeaderJson(cli_.name(), trace_);
}

ReportCommand::ReportCommand(std::string name, std::string summary, std::string examples,
                             SharedOptions shared)
    : cli_(CommandHelp{.name = std::move(name),
                       .summary = std::move(summary),
                       .examples = std::move(examples)},
           std::move(shared)) {}

int ReportCommand::run(const std::vector<std::string>& args,
                       const std::function<int(Trace&, const ReportOutput&)>& report,
                       const std::function<std::string()>& check) {
  if (std::optional<int> exit = cli_.parse(args)) return *exit;
  if (check) {
    if (std::string problem = check(); !problem.empty()) return cli_.usageError(problem);
  }
  std::unique_ptr<Trace> trace = cli_.openTrace();
  if (!trace) return cli_.openFailure();
  int exit_code = 0;
  int written = writeReport(cli_, [&](std::ostream& out) {
    exit_code = report(*trace, ReportOutput(cli_, *trace, out));
  });
  return exit_code != 0 ? exit_code : written;
}

}  // namespace incise::analyzer
