// The interactive mode of tarde-cli: a `tarde> ` prompt that takes the
// one-shot commands (`get TX`, `reserve q --wait 2s`), a friendly
// `enqueue QUEUE TX [--flags] payload text...`, and raw protocol lines
// (`RESPOND TX 1 SUCCESS`, `ENQUEUE q TX 5` followed by 5 payload bytes).
#include <unistd.h>

#include <charconv>
#include <iostream>

#include "tools/cli/cli.h"

namespace tarde::cli {
namespace {

// A token of a shell line and where it starts, so that the rest of the line
// can be taken verbatim as a payload.
struct Token {
  std::string text;
  size_t offset = 0;
};

std::vector<Token> tokenize(const std::string& line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    size_t end = line.find_first_of(" \t", i);
    if (end == std::string::npos) end = line.size();
    tokens.push_back({line.substr(i, end - i), i});
    i = end;
  }
  return tokens;
}

// `enqueue QUEUE TX [--flag [value] ...] [payload text...]`: the flags right
// after TX are taken as flags, everything after them is the payload.
Result<Request> friendly_enqueue(const std::string& line, const std::vector<Token>& tokens) {
  std::vector<std::string> args;
  size_t i = 0;
  for (; i < tokens.size() && i < 3; ++i) args.push_back(tokens[i].text);
  while (i < tokens.size() && tokens[i].text.rfind("--", 0) == 0 && tokens[i].text.size() > 2) {
    const std::string& flag = tokens[i].text;
    args.push_back(flag);
    const bool inline_value = flag.find('=') != std::string::npos;
    ++i;
    if (!inline_value && flag_takes_value(flag.substr(2)) && i < tokens.size()) {
      args.push_back(tokens[i++].text);
    }
  }
  if (i < tokens.size()) {
    args.push_back("--payload");
    args.push_back(line.substr(tokens[i].offset));
  }
  auto invocation = parse_argv(args);
  if (!invocation.is_ok()) return invocation.status();
  return build_request(invocation.value());
}

// A raw `ENQUEUE ... <bytes>` line: the payload is the next <bytes> bytes of
// input, then the rest of that line.
Result<Request> raw_enqueue(const std::string& line, const std::vector<Token>& tokens) {
  const std::string& count = tokens.back().text;
  size_t bytes = 0;
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), bytes);
  if (tokens.size() < 2 || ec != std::errc() || end != count.data() + count.size()) {
    return Request{line, std::nullopt};  // let the server say what is wrong
  }
  std::string payload(bytes, '\0');
  std::cin.read(payload.data(), static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(std::cin.gcount()) != bytes) {
    return Status::invalid_argument("input ended before the " + count + " payload bytes");
  }
  std::string rest;
  std::getline(std::cin, rest);
  return Request{line.substr(0, tokens.back().offset), payload};
}

Result<Request> shell_request(const std::string& line) {
  const std::vector<Token> tokens = tokenize(line);
  const std::string& word = tokens.front().text;
  if (word == "enqueue") return friendly_enqueue(line, tokens);
  if (is_command(word)) {
    std::vector<std::string> args;
    for (const Token& token : tokens) args.push_back(token.text);
    auto invocation = parse_argv(args);
    if (!invocation.is_ok()) return invocation.status();
    return build_request(invocation.value());
  }
  if (word == "ENQUEUE") return raw_enqueue(line, tokens);
  return Request{line, std::nullopt};
}

std::string trimmed(std::string line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  const size_t start = line.find_first_not_of(" \t");
  return start == std::string::npos ? std::string() : line.substr(start);
}

}  // namespace

int run_shell(client::Client& client, const GlobalOptions& options) {
  const bool interactive = isatty(STDIN_FILENO) == 1;
  if (interactive)
    std::cout << "connected to " << options.host << ':' << options.port
              << "; type help for the commands, quit to leave\n";
  std::string line;
  while (true) {
    std::cout << "tarde> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    line = trimmed(line);
    if (line.empty()) continue;
    if (line == "help" || line == "?") {
      std::cout << shell_help_text();
      continue;
    }
    if (line == "quit" || line == "exit") line = "QUIT";
    auto request = shell_request(line);
    if (!request.is_ok()) {
      std::cerr << "tarde-cli: " << request.status().message() << '\n';
      continue;
    }
    auto reply = client.call(request.value().line, request.value().payload);
    if (!reply.is_ok()) {
      std::cerr << "tarde-cli: " << reply.status().message() << '\n';
      return kExitError;
    }
    render(reply.value(), options.raw, now_epoch_ms(), std::cout, std::cerr);
    if (reply.value().kind == client::ReplyKind::kBye) return kExitOk;
    if (!client.is_open()) {
      std::cerr << "tarde-cli: the server closed the connection\n";
      return kExitError;
    }
  }
  if (interactive) std::cout << '\n';
  return kExitOk;
}

}  // namespace tarde::cli
