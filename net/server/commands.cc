#include "net/server/commands.h"

#include <algorithm>
#include <map>

#include "base/crash_point.h"
#include "net/core/config_args.h"
#include "net/server/replies.h"
#include "net/wire/tokens.h"

namespace tarde::net {
namespace {

using Handler = Action (*)(CommandContext&, const Command&);

// Replies hold at most this many events or letters unless limit= asks for
// fewer, so one command cannot build an unbounded reply.
constexpr uint64_t kListLimitMax = 100'000;
constexpr uint64_t kDeadLettersDefaultLimit = 1000;
// DEADLETTERS payload=1 stops before the letter that would take the
// payloads of one reply past this (it always holds one): a thousand
// letters of 1 MiB would otherwise make one reply of a gigabyte.
constexpr size_t kLetterPayloadBytesMax = 8 << 20;

Action reply(std::string text) {
  Action action;
  action.text = std::move(text);
  return action;
}

Action error(ErrorCode code, std::string_view message) { return reply(error_reply(code, message)); }

Action arg_error(const ArgError& e) { return error(e.code, e.message); }

Action status_error(const Status& status) {
  if (status.code() == Status::Code::kInvalidArgument) {
    return error(ErrorCode::kBadArgument, status.message());
  }
  return error(ErrorCode::kInternal, "storage failure, nothing was changed: " + status.message());
}

Action tx_result(const Result<engine::TxReply>& result) {
  if (!result.is_ok()) return status_error(result.status());
  return reply(tx_reply(result.value()));
}

#define TARDE_PARSE(var, expr) \
  auto var = (expr);           \
  if (!var.is_ok()) return arg_error(to_arg_error(var.status()))

#define TARDE_SPLIT(var, count, ...)                                              \
  const ArgsResult var##_result = split_args(command.args, count, {__VA_ARGS__}); \
  if (!var##_result.is_ok()) return arg_error(var##_result.error());              \
  const ParsedArgs& var = var##_result.value()

Action handle_enqueue(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2, "max_attempts", "base", "factor", "cap", "jitter", "strict_cap", "deadline",
              "sent", "delay");
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  TARDE_PARSE(tx_id, check_tx_id(args.positional[1]));
  engine::EnqueueArgs e;
  e.queue = queue.value();
  e.tx_id = tx_id.value();
  e.payload = command.payload.value_or("");
  storage::QueueConfig config = ctx.engine->config(e.queue);
  std::vector<std::pair<std::string_view, std::string_view>> policy_options;
  for (const auto& [name, value] : args.options) {
    if (name == "deadline") {
      TARDE_PARSE(deadline, parse_duration_ms(value, name));
      e.deadline_ms = deadline.value();
    } else if (name == "sent") {
      TARDE_PARSE(sent, parse_bool01(value, name));
      e.sent = sent.value();
    } else if (name == "delay") {
      TARDE_PARSE(delay, parse_duration_ms(value, name));
      e.delay_ms = delay.value();
    } else {
      policy_options.emplace_back(name, value);
    }
  }
  if (auto problem = apply_config_options(policy_options, &config)) return arg_error(*problem);
  const storage::RetryPolicy& p = config.policy;
  e.max_attempts = p.max_attempts;
  e.base_ms = p.base_ms;
  e.factor = p.factor;
  e.cap_ms = p.cap_ms;
  e.jitter = p.jitter;
  e.strict_cap = p.strict_cap;
  return tx_result(ctx.engine->enqueue(e));
}

// `q1,q2,...`: up to kReserveQueuesMax distinct queue names.
Result<std::vector<std::string>> parse_queue_list(std::string_view token) {
  std::vector<std::string> queues;
  size_t start = 0;
  while (true) {
    const size_t comma = token.find(',', start);
    const std::string_view name = token.substr(start, comma - start);
    auto queue = parse_queue(name);
    if (!queue.is_ok()) return queue.status();
    if (std::find(queues.begin(), queues.end(), queue.value()) != queues.end()) {
      return Status::invalid_argument("queue " + quote_token(name) + " is named twice");
    }
    if (queues.size() == engine::kReserveQueuesMax) {
      return Status::invalid_argument("RESERVE names at most " +
                                      std::to_string(engine::kReserveQueuesMax) + " queues");
    }
    queues.push_back(queue.value());
    if (comma == std::string_view::npos) return queues;
    start = comma + 1;
  }
}

Action handle_reserve(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1, "wait");
  TARDE_PARSE(queues, parse_queue_list(args.positional[0]));
  int64_t wait_ms = 0;
  if (auto wait = args.option("wait")) {
    TARDE_PARSE(parsed, parse_duration_ms(*wait, "wait"));
    wait_ms = parsed.value();
  }
  const size_t start = ctx.reserve_turn % queues.value().size();
  if (queues.value().size() > 1) ctx.reserve_turn += 1;
  auto got = ctx.engine->reserve_any(queues.value(), ctx.conn_id, start);
  if (!got.is_ok()) return status_error(got.status());
  if (got.value()) {
    Action handed = reply(hand_out_reply(*got.value()));
    handed.hand_out = true;
    return handed;
  }
  if (wait_ms == 0) return reply(empty_reply());
  Action action;
  action.kind = Action::Kind::kWait;
  action.wait_queues = std::move(queues).value();
  action.wait_ms = wait_ms;
  return action;
}

Action handle_touch(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2);
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(attempt, parse_attempt(args.positional[1]));
  return tx_result(ctx.engine->touch(ctx.conn_id, tx_id.value(), attempt.value()));
}

Action handle_pause(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1);
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  Status status = ctx.engine->pause(queue.value());
  if (!status.is_ok()) return status_error(status);
  return reply(paused_reply(queue.value(), true));
}

Action handle_resume(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1);
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  Status status = ctx.engine->resume(queue.value());
  if (!status.is_ok()) return status_error(status);
  return reply(paused_reply(queue.value(), false));
}

Action handle_sent(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2);
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(attempt, parse_attempt(args.positional[1]));
  return tx_result(ctx.engine->sent(tx_id.value(), attempt.value()));
}

Action handle_release(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2, "delay", "reason");
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(attempt, parse_attempt(args.positional[1]));
  int64_t delay_ms = 0;
  std::string reason;
  if (auto delay = args.option("delay")) {
    TARDE_PARSE(parsed, parse_duration_ms(*delay, "delay"));
    delay_ms = parsed.value();
  }
  if (auto why = args.option("reason")) {
    TARDE_PARSE(parsed, parse_reason(*why));
    reason = parsed.value();
  }
  return tx_result(
      ctx.engine->release(ctx.conn_id, tx_id.value(), attempt.value(), delay_ms, reason));
}

std::optional<engine::Answer> parse_answer(std::string_view word) {
  if (word == "SUCCESS") return engine::Answer::kSuccess;
  if (word == "CANCELLED") return engine::Answer::kCancelled;
  if (word == "TRANSIENT") return engine::Answer::kTransient;
  if (word == "REJECTED") return engine::Answer::kRejected;
  return std::nullopt;
}

Action handle_respond(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 3, "reason", "retry_after");
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(attempt, parse_attempt(args.positional[1]));
  const auto answer = parse_answer(args.positional[2]);
  if (!answer) {
    return error(ErrorCode::kBadArgument,
                 "answer must be SUCCESS, CANCELLED, TRANSIENT or REJECTED, got " +
                     quote_token(args.positional[2]));
  }
  std::string reason;
  std::optional<int64_t> retry_after_ms;
  if (auto why = args.option("reason")) {
    TARDE_PARSE(parsed, parse_reason(*why));
    reason = parsed.value();
  }
  if (auto after = args.option("retry_after")) {
    TARDE_PARSE(parsed, parse_duration_ms(*after, "retry_after"));
    retry_after_ms = parsed.value();
  }
  return tx_result(
      ctx.engine->respond(tx_id.value(), attempt.value(), *answer, reason, retry_after_ms));
}

Result<storage::TxState> parse_terminal(std::string_view word) {
  if (word == "SUCCEEDED") return storage::TxState::kSucceeded;
  if (word == "FAILED") return storage::TxState::kFailed;
  return Status::invalid_argument("state must be SUCCEEDED or FAILED, got " + quote_token(word));
}

Result<std::string> parse_optional_reason(const ParsedArgs& args, std::string_view name) {
  auto why = args.option(name);
  if (!why) return std::string();
  return parse_reason(*why, name);
}

Action handle_resolve(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2, "reason");
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(terminal, parse_terminal(args.positional[1]));
  TARDE_PARSE(reason, parse_optional_reason(args, "reason"));
  return tx_result(ctx.engine->resolve(tx_id.value(), terminal.value(), reason.value()));
}

Result<bool> parse_payload_flag(const ParsedArgs& args) {
  auto flag = args.option("payload");
  if (!flag) return false;
  return parse_bool01(*flag, "payload");
}

Action handle_get(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1, "payload");
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(with_payload, parse_payload_flag(args));
  auto found = ctx.engine->get(tx_id.value());
  if (!found.is_ok()) return status_error(found.status());
  if (!found.value()) return reply(not_found_reply(tx_id.value()));
  return reply(get_reply(*found.value(), with_payload.value()));
}

Result<uint64_t> parse_limit(const ParsedArgs& args, uint64_t fallback) {
  auto limit = args.option("limit");
  if (!limit) return fallback;
  return parse_uint(*limit, "limit", kListLimitMax, 1);
}

Action handle_history(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1, "limit");
  TARDE_PARSE(tx_id, check_tx_id(args.positional[0]));
  TARDE_PARSE(limit, parse_limit(args, 0));
  auto found = ctx.engine->get(tx_id.value());
  if (!found.is_ok()) return status_error(found.status());
  if (!found.value()) return reply(not_found_reply(tx_id.value()));
  std::vector<engine::HistoryEntry> events;
  Status status = ctx.engine->history(tx_id.value(), limit.value(), &events);
  if (!status.is_ok()) return status_error(status);
  return reply(events_reply(events));
}

// Keeps the letters whose payloads fit kLetterPayloadBytesMax (at least one).
void bound_payloads(std::vector<storage::DeadLetter>* letters) {
  size_t bytes = 0;
  for (size_t i = 0; i < letters->size(); ++i) {
    bytes += (*letters)[i].payload.size();
    if (i > 0 && bytes > kLetterPayloadBytesMax) {
      letters->resize(i);
      return;
    }
  }
}

Action handle_deadletters(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1, "limit", "payload");
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  TARDE_PARSE(limit, parse_limit(args, kDeadLettersDefaultLimit));
  TARDE_PARSE(with_payload, parse_payload_flag(args));
  std::vector<storage::DeadLetter> letters;
  Status status = ctx.engine->dead_letters(queue.value(), limit.value(), &letters);
  if (!status.is_ok()) return status_error(status);
  if (with_payload.value()) bound_payloads(&letters);
  return reply(letters_reply(letters, with_payload.value()));
}

// LIST <queue> <state> [after=<cursor>] [limit=N] [prefix=<tx_id prefix>]
// [reason=<reason>]: one page of the queue's transactions in that state.
Action handle_list(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2, "after", "limit", "prefix", "reason");
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  const std::optional<engine::ListState> state = engine::parse_list_state(args.positional[1]);
  if (!state) {
    return error(ErrorCode::kBadArgument,
                 "state must be ready, leased, in_flight, scheduled, succeeded, failed or dead, "
                 "got " +
                     quote_token(args.positional[1]));
  }
  uint64_t limit = engine::kListDefaultLimit;
  if (auto given = args.option("limit")) {
    TARDE_PARSE(parsed, parse_uint(*given, "limit", engine::kListLimitMax, 1));
    limit = parsed.value();
  }
  std::string cursor;
  if (auto after = args.option("after")) {
    if (after->size() > engine::kListCursorBytesMax) {
      return error(ErrorCode::kBadArgument, "after is not a cursor of this listing: too long");
    }
    cursor = std::string(*after);
  }
  std::string prefix;
  if (auto given = args.option("prefix")) {
    TARDE_PARSE(parsed, parse_tx_id(*given, "prefix"));
    prefix = parsed.value();
  }
  std::string reason;
  if (auto why = args.option("reason")) {
    TARDE_PARSE(parsed, parse_reason(*why));
    reason = parsed.value();
  }
  auto page = ctx.engine->list(queue.value(), *state, cursor, limit, prefix, reason);
  if (!page.is_ok()) return status_error(page.status());
  return reply(list_reply(page.value()));
}

Action handle_redrive(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2);
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  TARDE_PARSE(tx_id, check_tx_id(args.positional[1]));
  return tx_result(ctx.engine->redrive(queue.value(), tx_id.value()));
}

// The filter and limit options shared by REDRIVE_ALL and RESOLVE_ALL.
struct BulkArgs {
  engine::LetterFilter filter;
  size_t limit = engine::kBulkLimitDefault;
};

Result<BulkArgs> parse_bulk(const ParsedArgs& args) {
  BulkArgs bulk;
  if (auto prefix = args.option("prefix")) {
    auto parsed = parse_tx_id(*prefix, "prefix");
    if (!parsed.is_ok()) return parsed.status();
    bulk.filter.tx_prefix = parsed.value();
  }
  auto last_error = parse_optional_reason(args, "last_error");
  if (!last_error.is_ok()) return last_error.status();
  bulk.filter.last_error = last_error.value();
  if (auto limit = args.option("limit")) {
    auto parsed = parse_uint(*limit, "limit", engine::kBulkLimitMax, 1);
    if (!parsed.is_ok()) return parsed.status();
    bulk.limit = parsed.value();
  }
  return bulk;
}

Action handle_redrive_all(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1, "prefix", "last_error", "limit");
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  TARDE_PARSE(bulk, parse_bulk(args));
  auto changed = ctx.engine->redrive_all(queue.value(), bulk.value().filter, bulk.value().limit);
  if (!changed.is_ok()) return status_error(changed.status());
  return reply(count_reply("REDRIVEN", changed.value()));
}

Action handle_resolve_all(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 2, "prefix", "last_error", "reason", "limit");
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  TARDE_PARSE(terminal, parse_terminal(args.positional[1]));
  TARDE_PARSE(bulk, parse_bulk(args));
  TARDE_PARSE(reason, parse_optional_reason(args, "reason"));
  auto changed = ctx.engine->resolve_all(queue.value(), bulk.value().filter, terminal.value(),
                                         reason.value(), bulk.value().limit);
  if (!changed.is_ok()) return status_error(changed.status());
  return reply(count_reply("RESOLVED", changed.value()));
}

Action handle_config(CommandContext& ctx, const Command& command) {
  const ArgsResult parsed = split_args(command.args, 1, kConfigNames);
  if (!parsed.is_ok()) return arg_error(parsed.error());
  const ParsedArgs& args = parsed.value();
  TARDE_PARSE(queue, parse_queue(args.positional[0]));
  storage::QueueConfig config = ctx.engine->config(queue.value());
  if (auto problem = apply_config_options(args.options, &config)) return arg_error(*problem);
  if (!args.options.empty()) {
    Status status = ctx.engine->set_config(queue.value(), config);
    if (!status.is_ok()) return status_error(status);
  }
  return reply(config_reply(queue.value(), config));
}

Action handle_stats(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 0);
  (void)args;
  return reply(stats_reply(ctx.figures->stats_lines()));
}

Action handle_backup(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 0);
  (void)args;
  if (!ctx.backups_enabled) {
    return error(ErrorCode::kNotConfigured,
                 "BACKUP needs a backup directory: start the server with --backup-dir DIR");
  }
  Action action;
  action.kind = Action::Kind::kBackup;
  return action;
}

Action handle_ping(CommandContext&, const Command& command) {
  TARDE_SPLIT(args, 0);
  (void)args;
  return reply("PONG\r\n");
}

Action handle_auth(CommandContext& ctx, const Command& command) {
  TARDE_SPLIT(args, 1);
  if (!ctx.auth_token || !*ctx.auth_token) return reply("OK\r\n");
  if (!same_token(args.positional[0], **ctx.auth_token)) {
    return error(ErrorCode::kUnauthorized, "wrong token");
  }
  ctx.authenticated = true;
  return reply("OK\r\n");
}

Action handle_quit(CommandContext&, const Command& command) {
  TARDE_SPLIT(args, 0);
  (void)args;
  Action action = reply("BYE\r\n");
  action.close_after = true;
  return action;
}

const std::map<std::string, Handler, std::less<>>& handlers() {
  static const std::map<std::string, Handler, std::less<>> table = {
      {"ENQUEUE", handle_enqueue},
      {"RESERVE", handle_reserve},
      {"SENT", handle_sent},
      {"RELEASE", handle_release},
      {"RESPOND", handle_respond},
      {"RESOLVE", handle_resolve},
      {"GET", handle_get},
      {"HISTORY", handle_history},
      {"DEADLETTERS", handle_deadletters},
      {"LIST", handle_list},
      {"REDRIVE", handle_redrive},
      {"CONFIG", handle_config},
      {"STATS", handle_stats},
      {"PING", handle_ping},
      {"AUTH", handle_auth},
      {"QUIT", handle_quit},
      {"BACKUP", handle_backup},
      // Queue administration.
      {"TOUCH", handle_touch},
      {"PAUSE", handle_pause},
      {"RESUME", handle_resume},
      {"REDRIVE_ALL", handle_redrive_all},
      {"RESOLVE_ALL", handle_resolve_all},
  };
  return table;
}

bool needs_auth(std::string_view verb) {
  return verb != "PING" && verb != "AUTH" && verb != "QUIT";
}

}  // namespace

std::string empty_reply() { return "EMPTY\r\n"; }

std::string hand_out_reply(const engine::HandOut& hand_out) {
  TARDE_CRASH_POINT("reserve.after_hand_out");
  return request_reply(hand_out);
}

std::optional<std::string> try_reserve(CommandContext& ctx, const std::string& queue) {
  auto got = ctx.engine->reserve(queue, ctx.conn_id);
  if (!got.is_ok()) return status_error(got.status()).text;
  if (!got.value()) return std::nullopt;
  return hand_out_reply(*got.value());
}

Action dispatch(CommandContext& ctx, const Command& command) {
  const auto& table = handlers();
  auto it = table.find(command.verb);
  if (it == table.end()) {
    return error(ErrorCode::kBadCommand, "unknown command " + quote_token(command.verb));
  }
  const bool locked = ctx.auth_token && *ctx.auth_token && !ctx.authenticated;
  if (locked && needs_auth(command.verb)) {
    return error(ErrorCode::kUnauthorized, "send AUTH <token> first");
  }
  return it->second(ctx, command);
}

}  // namespace tarde::net
