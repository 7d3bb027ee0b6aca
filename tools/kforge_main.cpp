// kforge: the command-line interface. Exit codes (cli_common.hpp): 0 success,
// 2 bad input (one-line error on stderr), 3 a regression (compare), 4 no
// candidate passed (tune), 1 any other failure.
#include <iostream>
#include <new>

#include "tools/commands.hpp"
#include "tools/help_examples.hpp"
#include "tuner/build_version.hpp"
#include "tuner/online_job_runner.hpp"
#include "tuner/runner_options.hpp"
#include "tuner/worker/worker_main.hpp"

int main(int argc, char** argv) {
  using namespace kforge;
  // The tuner's worker process (tuner/worker/worker_runner.hpp), not a user command.
  if (argc == 3 && std::string_view(argv[1]) == "__worker") return run_tuner_worker(std::atoi(argv[2]));
  // An online tune a program's lookup started (runtime/lookup/online_tuning.hpp).
  if (argc == 3 && std::string_view(argv[1]) == "__online-tune") {
    return run_online_job(argv[2], {self_executable().value(), "__worker"});
  }
  // One configuration launched for a counter collector (docs/profiling.md).
  if (argc >= 2 && std::string_view(argv[1]) == "__profile-launch") {
    return run_profile_launch(std::vector<std::string>(argv + 2, argv + argc));
  }
  CLI::App app{"kforge: tune GPU/CPU kernel templates, store winners, look them up"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  bool json = false;  // errors as JSON too; known before parsing, which may fail
  for (int i = 0; i < argc; ++i) {
    cli::command_line() += (i ? " " : "") + std::string(argv[i]);
    json = json || std::string_view(argv[i]) == "--json";
  }
  cli::CommonOptions options;
  cli::add_devices_command(app, options);
  cli::add_templates_command(app, options);
  cli::add_tune_command(app, options);
  cli::add_show_command(app, options);
  cli::add_lookup_command(app, options);
  cli::add_compile_command(app, options);
  cli::add_db_command(app, options);
  cli::add_export_command(app, options);
  cli::add_import_command(app, options);
  cli::add_compare_command(app, options);
  cli::add_capabilities_command(app, options);
  cli::add_report_command(app, options);
  cli::add_inspect_command(app, options);
  cli::add_sweep_command(app, options);
  cli::add_ceilings_command(app, options);
  cli::add_help_examples(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    cli::print_error(std::string(e.what()) + (json ? "" : " (see --help)"), json);
    return cli::kExitBadInput;
  } catch (const cli::ExitStatus& e) {
    return e.code;
  } catch (const ErrorException& e) {
    cli::print_error(e.error().message, json);
    return exit_code_for(e.error());
  } catch (const std::bad_alloc&) {
    cli::print_error("out of host memory (std::bad_alloc)", json);
    return cli::kExitFailure;
  } catch (const std::exception& e) {
    cli::print_error(e.what(), json);
    return cli::kExitFailure;
  }
  return 0;
}
