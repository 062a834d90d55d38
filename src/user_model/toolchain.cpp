#include "toolchain.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "codegen.hpp"
#include "hwy/targets.h"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/io/files.hpp"

extern char** environ;

namespace saltation::user_model {
namespace {

namespace fs = std::filesystem;

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned int k = 0; k < length; ++k) {
    s += hex[digest[k] >> 4];
    s += hex[digest[k] & 15];
  }
  return s;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::mutex g_mutex;  // the include folder, the compilers' versions and the loaded plugins
std::string g_include_dir;

bool holds_headers(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::exists(dir / "saltation" / "user_model" / "plugin.hpp", ec);
}

fs::path include_dir() {
  if (const char* env = std::getenv("SALTATION_INCLUDE_DIR"); env && *env) return env;
  if (!g_include_dir.empty()) return g_include_dir;
  return default_include_dir();
}

// kernels/ beside include/ in the source tree; saltation/kernels/ where installed.
fs::path kernels_dir(const fs::path& include) {
  std::error_code ec;
  if (fs::exists(include / "saltation" / "kernels" / "solve.cuh", ec)) return include / "saltation" / "kernels";
  return include.parent_path() / "kernels";
}

// The library's headers as one digest: a change to any of them makes a new cache key. Read once
// per folder and process (under g_mutex): every model loaded after the first reuses it.
std::string headers_digest(const fs::path& include, bool cuda) {
  static std::map<std::string, std::string> digests;
  const std::string memo = include.string() + (cuda ? "\ncuda" : "\ncpu");
  if (auto it = digests.find(memo); it != digests.end()) return it->second;
  std::vector<fs::path> files;
  std::vector<fs::path> roots{include / "saltation"};
  if (cuda) roots.push_back(kernels_dir(include));
  for (const fs::path& root : roots)
    for (const auto& entry : fs::recursive_directory_iterator(root))
      if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const fs::path& f : files)
    all += f.lexically_relative(include).string() + '\n' + sha256_hex(read_file(f)) + '\n';
  return digests[memo] = sha256_hex(all);
}

// Runs argv with stdout and stderr into `log`; returns the exit status (-1: could not start).
int run_command(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

struct Compiler {
  std::vector<std::string> command;  // the compiler and its flags, before the source and -o
  std::string identity;              // what the cache key knows of it: its command and --version
  const char* missing_help;
};

// The first lines of a compiler's log, for a message.
std::string head_of(const fs::path& log, int lines) {
  std::ifstream in(log);
  std::string line, s;
  for (int k = 0; k < lines && std::getline(in, line); ++k) s += "  " + line + "\n";
  return s;
}

std::string compiler_version(const std::string& program, const char* missing_help) {
  static std::map<std::string, std::string> versions;  // one --version per compiler and process
  if (auto it = versions.find(program); it != versions.end()) return it->second;
  const fs::path log = fs::temp_directory_path() / ("saltation-version-" + std::to_string(::getpid()) + ".txt");
  const int status = run_command({program, "--version"}, log);
  std::string version = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  if (status != 0)
    throw ToolchainError("model files need a compiler: \"" + program + "\" could not be run (" +
                         (status < 0 ? std::string("not found") : "exit " + std::to_string(status)) + "); " +
                         missing_help);
  return versions[program] = version;
}

// The flags that build a CPU plugin's SIMD lanes (cpu_lanes_static.hpp) for this CPU's best vector
// target, AVX-512 or AVX2 (none where it has neither), and keep every lane's arithmetic the scalar
// driver's: no multiply-add is fused. The target is in the cache key (the command is).
// Highway's AVX2 and AVX-512 targets also ask for AES and carry-less multiplication.
std::vector<std::string> lane_flags() {
  const std::int64_t targets = hwy::SupportedTargets();
  if (targets & HWY_AVX3) return {"-march=x86-64-v4", "-maes", "-mpclmul", "-ffp-contract=off"};
  if (targets & HWY_AVX2) return {"-march=x86-64-v3", "-maes", "-mpclmul", "-ffp-contract=off"};
  return {"-ffp-contract=off"};
}

Compiler compiler_for(Backend backend, const fs::path& include) {
  Compiler c;
  if (backend == Backend::Cuda) {
    const char* env = std::getenv("SALTATION_NVCC");
    const bool installed_default = !on_path("nvcc") && access("/usr/local/cuda/bin/nvcc", X_OK) == 0;
    const std::string nvcc = env && *env ? env : installed_default ? "/usr/local/cuda/bin/nvcc" : "nvcc";
    c.missing_help = "install the CUDA toolkit (nvcc) or point SALTATION_NVCC at it, or run on the CPU (--backend cpu)";
    const CudaDevices devices = query_cuda_devices();
    if (devices.devices.empty()) throw CudaError("no CUDA device to compile a model file for", __FILE__, __LINE__);
    const std::string arch =
        "sm_" + std::to_string(devices.devices[0].major) + std::to_string(devices.devices[0].minor);
    c.command = {nvcc,
                 "-std=c++17",
                 "-O3",
                 "-DNDEBUG",
                 "--expt-relaxed-constexpr",
                 "-arch=" + arch,
                 "-shared",
                 "-Xcompiler=-fPIC,-fopenmp",
                 "-I" + include.string(),
                 "-I" + kernels_dir(include).string(),
                 "-x",
                 "cu"};
    c.identity = compiler_version(nvcc, c.missing_help);
  } else {
    const char* env = std::getenv("CXX");
    const std::string cxx = env && *env ? env : "c++";
    c.missing_help = "install a C++17 compiler with OpenMP (e.g. apt-get install g++) or set CXX to one";
    c.command = {cxx, "-std=c++17", "-O3", "-DNDEBUG", "-fPIC", "-shared", "-fopenmp", "-Wl,-z,defs"};
    const std::vector<std::string> lanes = lane_flags();
    c.command.insert(c.command.end(), lanes.begin(), lanes.end());
    c.command.push_back("-I" + include.string());
    if (std::string(SALTATION_HWY_INCLUDE_DIR) != "/usr/include") c.command.push_back("-I" SALTATION_HWY_INCLUDE_DIR);
    c.command.insert(c.command.end(), {"-x", "c++"});
    c.identity = compiler_version(cxx, c.missing_help) + "\nhighway " SALTATION_HWY_VERSION;
  }
  for (const std::string& a : c.command) c.identity += '\n' + a;
  return c;
}

MakeDrivers open_plugin(const fs::path& library, const std::string& key, std::string& why) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: its code backs live models
  if (!handle) {
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  const auto key_of = reinterpret_cast<PluginKey>(dlsym(handle, kPluginKeySymbol));
  const auto make = reinterpret_cast<MakeDrivers>(dlsym(handle, kMakeDriversSymbol));
  if (!key_of || !make || key_of() != key) {
    why = "it is not the library of this key";
    return nullptr;
  }
  return make;
}

}  // namespace

std::string definition_digest(const ModelSpec& spec) { return sha256_hex(plugin_source(spec, "", false)); }

std::string default_include_dir() {
  for (const char* candidate : {SALTATION_SOURCE_INCLUDE_DIR, SALTATION_INSTALL_INCLUDE_DIR})
    if (holds_headers(candidate)) return candidate;
  return SALTATION_INSTALL_INCLUDE_DIR;
}

std::string cache_dir() {
  if (const char* env = std::getenv("SALTATION_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "saltation").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : fs::temp_directory_path().c_str()) / ".cache" / "saltation").string();
}

void set_include_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_include_dir = dir;
}

LoadedPlugin load_plugin(const ModelSpec& spec, Backend backend) {
  const auto start = std::chrono::steady_clock::now();
  const bool cuda = backend == Backend::Cuda;
  std::lock_guard<std::mutex> lock(g_mutex);
  const fs::path include = include_dir();
  if (!holds_headers(include))
    throw ToolchainError("model files need saltation's headers, which are not in \"" + include.string() +
                         "\": set SALTATION_INCLUDE_DIR to the folder that holds saltation/");
  const Compiler compiler = compiler_for(backend, include);
  const std::string key = sha256_hex(plugin_source(spec, "", cuda) + '\n' + headers_digest(include, cuda) + '\n' +
                                     compiler.identity + '\n' + (cuda ? "cuda" : "cpu"));
  static std::map<std::string, LoadedPlugin> loaded;
  LoadedPlugin& plugin = loaded[key];
  if (plugin.make) {
    plugin.report.cached = true;
    plugin.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return plugin;
  }
  const fs::path dir = cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw IoError(dir.string(), "cannot create the model cache folder (" + ec.message() + "); set SALTATION_CACHE_DIR");
  const fs::path library = dir / (key + ".so"), source = dir / (key + (cuda ? ".cu" : ".cpp")),
                 log = dir / (key + ".log");
  std::string command;
  for (const std::string& a : compiler.command) command += a + " ";
  command += source.string() + " -o " + library.string();
  plugin.report.library = library.string();
  plugin.report.compiler = command;
  std::string why;
  if (fs::exists(library, ec)) plugin.make = open_plugin(library, key, why);
  plugin.report.cached = plugin.make != nullptr;
  if (!plugin.make) {
    io::write_file_atomically(source.string(), plugin_source(spec, key, cuda));
    // Under g_mutex, the process id tells this build's partial library from another process's.
    const fs::path partial = io::temporary_path(library.string());
    std::vector<std::string> argv = compiler.command;
    argv.insert(argv.end(), {source.string(), "-o", partial.string()});
    const int status = run_command(argv, log);
    throw_if_interrupted();
    if (status != 0) {
      fs::remove(partial, ec);
      throw ToolchainError(
          "compiling model \"" + spec.name + "\" for the " + backend_name(backend) + " failed (" +
          (status < 0 ? std::string("the compiler could not be started") : "exit " + std::to_string(status)) + "):\n" +
          head_of(log, 20) + "the command: " + command + "\nthe whole log: " + log.string() +
          "\nplease report it with the model file: the generated source should always compile");
    }
    fs::rename(partial, library);
    plugin.make = open_plugin(library, key, why);
    if (!plugin.make) throw ToolchainError("the compiled model \"" + library.string() + "\" cannot be loaded: " + why);
  }
  plugin.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plugin;
}

}  // namespace saltation::user_model
