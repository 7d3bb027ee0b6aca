// The summary of `kforge sweep` and its exit status.
#include "tools/sweep_command.hpp"

#include <iostream>

#include "tools/cli_common.hpp"

namespace kforge::cli {

void throw_if_tasks_failed(const std::vector<TaskReport>& reports) {
  int errors = 0;
  for (const auto& r : reports) errors += r.state == TaskReport::State::kError;
  if (errors > 0) {
    throw ErrorException(Error::internal(std::to_string(errors) + " of " + std::to_string(reports.size()) +
                                         " tasks failed (see the summary); rerun to retry them"));
  }
}

void print_summary(const std::string& plan_file, const std::string& where, const std::string& db_path,
                   const std::vector<TaskReport>& reports, double total_s, bool by_rank) {
  std::vector<std::vector<std::string>> rows;
  int ran = 0, skipped = 0, errors = 0;
  for (const auto& r : reports) {
    ran += r.state == TaskReport::State::kRan;
    skipped += r.state == TaskReport::State::kSkipped;
    errors += r.state == TaskReport::State::kError;
    std::string evaluated = std::to_string(r.evaluated);
    if (r.state == TaskReport::State::kRan) evaluated += " (" + std::to_string(r.evaluated_now) + " now)";
    std::vector<std::string> row = {std::to_string(r.task->index), r.task->key,
                                    std::string(state_name(r.state))};
    if (by_rank) row.push_back(r.rank >= 0 ? std::to_string(r.rank) : "-");
    row.insert(row.end(), {r.winner ? r.winner->template_name + " " + r.winner->config
                                    : (r.state == TaskReport::State::kError ? r.error.substr(0, 100) : "-"),
                           r.winner ? fmt(r.winner->timing.median_ms) : "-", evaluated,
                           r.state == TaskReport::State::kError ? "-" : failures_text(r.failed)});
    rows.push_back(std::move(row));
  }
  std::cout << "\n"
            << plan_file << " " << where << ": " << reports.size() << " tasks, " << ran << " ran, " << skipped
            << " skipped (finished earlier), " << errors << " failed, " << fmt(total_s, 3) << " s\n";
  std::vector<std::string> header = {"task", "problem", "state"};
  if (by_rank) header.push_back("rank");
  header.insert(header.end(), {"winner", "median ms", "evaluated", "failed by status"});
  print_table(header, rows);
  std::cout << "database: " << db_path << "\n";
}

}  // namespace kforge::cli
