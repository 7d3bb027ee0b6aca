// kforge: the command-line interface. Exit codes: 0 success, 2 bad input
// (one-line error on stderr), 1 any other failure.
#include <iostream>
#include <new>

#include "build_version.hpp"
#include "commands.hpp"
#include "help_examples.hpp"
#include "worker_main.hpp"

int main(int argc, char** argv) {
  using namespace kforge;
  // The tuner's worker process (tuner/worker_runner.hpp), not a user command.
  if (argc == 3 && std::string_view(argv[1]) == "__worker") return run_tuner_worker(std::atoi(argv[2]));
  CLI::App app{"kforge: tune GPU/CPU kernel templates, store winners, look them up"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  for (int i = 0; i < argc; ++i) cli::command_line() += (i ? " " : "") + std::string(argv[i]);
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
    std::cerr << "kforge: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const ErrorException& e) {
    std::cerr << "kforge: error: " << e.error().message << "\n";
    const bool bad_input =
        e.error().code == ErrorCode::kBadInput || e.error().code == ErrorCode::kNotFound;
    return bad_input ? 2 : 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "kforge: error: out of host memory (std::bad_alloc)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kforge: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
