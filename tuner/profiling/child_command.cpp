// run_command and find_on_path: fork, exec, wait with a deadline.
#include "tuner/profiling/child_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace kforge {

Result<CommandOutcome> run_command(const std::vector<std::string>& argv, const std::string& output_file,
                                   double timeout_s) {
  if (argv.empty()) return Error::internal("run_command: no command");
  const int out = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return Error::bad_input(output_file + ": cannot open for writing: " + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(out);
    return Error::internal(std::string("run_command: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a timeout ends what it started too
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    if (dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    usleep(20000);
  CommandOutcome o;
  if (r == 0) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::ostringstream how;
    how << "killed after the " << timeout_s << " s timeout";
    o.how = how.str();
    return o;
  }
  if (WIFEXITED(status)) {
    o.exited = true;
    o.exit_code = WEXITSTATUS(status);
    o.how = "exited with status " + std::to_string(o.exit_code);
  } else if (WIFSIGNALED(status)) {
    o.how = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return o;
}

std::optional<std::string> find_on_path(const std::string& name, const char* path) {
  if (!path) path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

}  // namespace kforge
