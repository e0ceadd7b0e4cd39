// `tarde-cli`: the human client of tarde. Parses the command line, connects,
// sends one command (or runs the interactive shell) and prints the reply for
// people, with an exit status scripts can branch on (tools/cli/cli.h).
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "clients/cpp/client.h"
#include "tools/cli/cli.h"

namespace {

using tarde::Result;
using tarde::Status;
namespace cli = tarde::cli;

int usage_error(const std::string& message) {
  std::cerr << "tarde-cli: " << message;
  if (message.find("--help") == std::string::npos) std::cerr << " (see tarde-cli --help)";
  std::cerr << '\n';
  return cli::kExitUsage;
}

Result<std::string> read_token(const std::string& path) {
  std::ifstream in(path);
  std::string token;
  if (!in || !std::getline(in, token)) return Status::invalid_argument("cannot read " + path);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return Status::invalid_argument("the token file " + path + " is empty");
  return token;
}

int run(const std::vector<std::string>& args) {
  auto parsed = cli::parse_argv(args);
  if (!parsed.is_ok()) return usage_error(parsed.status().message());
  const cli::Invocation& inv = parsed.value();
  if (inv.global.help) {
    std::cout << cli::usage_text();
    return cli::kExitOk;
  }
  const bool shell = inv.words.empty() || inv.words[0] == "shell";
  if (shell && inv.words.size() > 1) return usage_error("shell takes no arguments");
  if (shell && !inv.flags.empty())
    return usage_error("--" + inv.flags[0].first + " needs a command");
  std::optional<cli::Request> request;
  if (!shell) {
    auto built = cli::build_request(inv);
    if (!built.is_ok()) return usage_error(built.status().message());
    request = std::move(built).value();
  }
  tarde::client::ClientOptions options;
  options.timeout = inv.global.timeout;
  if (!inv.global.token_file.empty()) {
    auto token = read_token(inv.global.token_file);
    if (!token.is_ok()) return usage_error("--token-file: " + token.status().message());
    options.auth_token = token.value();
  }
  auto client = tarde::client::Client::connect(inv.global.host, inv.global.port, options);
  if (!client.is_ok()) {
    std::cerr << "tarde-cli: " << client.status().message() << '\n';
    return cli::kExitError;
  }
  if (shell) return cli::run_shell(*client.value(), inv.global);
  auto reply = client.value()->call(request->line, request->payload);
  if (!reply.is_ok()) {
    std::cerr << "tarde-cli: " << reply.status().message() << '\n';
    return cli::kExitError;
  }
  return cli::render(reply.value(), inv.global.raw, cli::now_epoch_ms(), std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "tarde-cli: " << e.what() << '\n';
    return cli::kExitError;
  }
}
