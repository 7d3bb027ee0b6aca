// Calling a user's reference library: arguments marshalled into the C ABI,
// its return value checked.
#include "runtime/libraries/library_reference.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/libraries/kforge_reference.h"

namespace kforge {

namespace {

constexpr unsigned kProbeSeconds = 30;

/// In a child process: loads `path`, looks `symbol` up, and writes what it
/// found to `fd` ("ok", or "library: <why>" / "symbol"). The parent never
/// runs the library's code.
[[noreturn]] void probe_child(int fd, const std::string& path, const std::string& symbol) {
  alarm(kProbeSeconds);
  auto report = [&](const std::string& text) {
    (void)!::write(fd, text.data(), text.size());
    ::_exit(0);
  };
  auto lib = DynamicLibrary::open("reference library", {path});
  if (!lib.ok()) report("library: " + lib.error().message);
  report(lib->symbol(symbol).ok() ? "ok" : "symbol");
  ::_exit(0);  // not reached: report() exits
}

/// What the probe of `path` said, or why it said nothing.
Result<std::string> probe(const std::string& path, const std::string& symbol) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error::internal(std::string("reference probe: pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Error::internal(std::string("reference probe: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    probe_child(fds[1], path, symbol);
  }
  ::close(fds[1]);
  std::string said;
  char buf[512];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) said.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!said.empty()) return said;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    return Error::bad_input("did not load within " + std::to_string(kProbeSeconds) + " s (a constructor that hangs)");
  if (WIFSIGNALED(status))
    return Error::bad_input(std::string("loading it was killed by signal ") + std::to_string(WTERMSIG(status)) +
                            " (" + strsignal(WTERMSIG(status)) + ")");
  return Error::bad_input("loading it ended the process (exit status " +
                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ") before it could be used");
}

}  // namespace

Result<std::shared_ptr<const LibraryReference>> LibraryReference::open(const std::string& path,
                                                                       const std::string& symbol,
                                                                       const std::string& declaration) {
  auto said = probe(path, symbol);
  if (!said.ok())
    return Error::bad_input(declaration + ": reference.library: '" + path + "': " + said.error().message);
  if (said->rfind("library: ", 0) == 0)
    return Error::bad_input(declaration + ": reference.library: '" + path + "': " + said->substr(9));
  if (*said == "symbol")
    return Error::bad_input(declaration + ": reference.symbol: '" + symbol + "' is not exported by " + path);
  std::shared_ptr<LibraryReference> r(new LibraryReference());
  r->path_ = path;
  r->symbol_ = symbol;
  r->declaration_ = declaration;
  return std::shared_ptr<const LibraryReference>(std::move(r));
}

Status LibraryReference::load() const {
  std::call_once(loaded_, [this] {
    auto lib = DynamicLibrary::open("reference library", {path_});
    if (!lib.ok()) {
      load_status_ = Error::bad_input(declaration_ + ": reference.library: '" + path_ + "': " + lib.error().message);
      return;
    }
    library_ = std::move(*lib);
    auto fn = library_.symbol(symbol_);
    if (!fn.ok()) {
      load_status_ = Error::bad_input(declaration_ + ": reference.symbol: '" + symbol_ + "' is not exported by " + path_);
      return;
    }
    fn_ = *fn;
  });
  return load_status_;
}

std::string LibraryReference::describe() const {
  return "library " + path_ + " symbol " + symbol_;
}

Status LibraryReference::compute(const Problem& p, std::vector<ReferenceArgument>& args) const {
  KF_TRY(load());
  std::vector<kforge_ref_dim> dims;
  for (const auto& [name, value] : p.dims) dims.push_back({name.c_str(), value});
  std::vector<std::string> dtypes;
  dtypes.reserve(args.size());
  std::vector<kforge_ref_arg> c_args;
  for (auto& a : args) {
    const DeclaredArgument& d = *a.declared;
    dtypes.emplace_back(dtype_name(a.dtype));
    kforge_ref_arg c{};
    c.name = d.name.c_str();
    c.type = d.type == ArgumentType::kBuffer  ? KFORGE_REF_BUFFER
             : d.type == ArgumentType::kInt32 ? KFORGE_REF_I32
                                              : KFORGE_REF_F32;
    c.role = d.role == BufferRole::kOut     ? KFORGE_REF_OUT
             : d.role == BufferRole::kInOut ? KFORGE_REF_INOUT
                                            : KFORGE_REF_IN;
    c.dtype = dtypes.back().c_str();
    c.count = d.type == ArgumentType::kBuffer ? a.data.size() : 0;
    c.data = d.type == ArgumentType::kBuffer ? a.data.data() : nullptr;
    c.value = a.value;
    c_args.push_back(c);
  }
  const std::string op = p.op, dtype(dtype_name(p.dtype));
  kforge_ref_problem problem{KFORGE_REFERENCE_ABI_VERSION,
                             op.c_str(),
                             dtype.c_str(),
                             static_cast<int>(dims.size()),
                             dims.data(),
                             static_cast<int>(c_args.size()),
                             c_args.data()};
  const int rc = reinterpret_cast<kforge_reference_fn>(fn_)(&problem);
  if (rc != 0) {
    return Error::bad_input("reference (" + describe() + ") for " + p.key() + " returned " +
                            std::to_string(rc));
  }
  return ok_status();
}

}  // namespace kforge
