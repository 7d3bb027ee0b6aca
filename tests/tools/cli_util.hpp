// Runs the kforge CLI as a child process and captures its output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "tests/test_util.hpp"

namespace kforge::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `kforge ARGS` through the shell; stdout and stderr captured separately.
inline CommandResult run_kforge(const std::string& args) {
  TempDir tmp;
  const std::string err_file = tmp.file("stderr");
  const std::string cmd = std::string(KFORGE_CLI) + " " + args + " 2>" + err_file;
  CommandResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_file);
  return r;
}

}  // namespace kforge::test
