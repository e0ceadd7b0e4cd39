#include "tools/crash/journal_reader.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace tarde::crash {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

Result<OpKind> op_kind(const std::string& word) {
  if (word == "ENQUEUE") return OpKind::kEnqueue;
  if (word == "SENT") return OpKind::kSent;
  if (word == "RESPOND") return OpKind::kRespond;
  if (word == "RELEASE") return OpKind::kRelease;
  if (word == "RESOLVE") return OpKind::kResolve;
  if (word == "GET") return OpKind::kGet;
  return Status::invalid_argument("unknown call " + word);
}

uint64_t life_of(const std::string& op_id) { return std::stoull(op_id.substr(0, op_id.find('.'))); }

}  // namespace

Status read_journal(const std::string& path, const std::map<uint64_t, int64_t>& death_us,
                    Recorder& recorder) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error("cannot read the journal " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, Op> open;  // calls begun, by op id
  std::vector<std::string> order;  // op ids in the order they began
  size_t start = 0;
  uint64_t line_number = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // cut short by a kill
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::vector<std::string> f = split_tabs(line);
    auto bad = [&] {
      return Status::invalid_argument("journal line " + std::to_string(line_number) + ": " + line);
    };
    try {
      if (f[0] == "P" && f.size() == 7) {
        TxPlan plan;
        plan.queue = f[2];
        plan.max_attempts = static_cast<uint32_t>(std::stoul(f[3]));
        plan.sent = f[4] == "1";
        plan.delay_ms = std::stoll(f[5]);
        plan.payload = f[6];
        recorder.plan(f[1], plan);
      } else if (f[0] == "B" && f.size() == 9) {
        auto kind = op_kind(f[2]);
        if (!kind.is_ok()) return bad();
        Op op;
        op.kind = kind.value();
        op.tx_id = f[3];
        op.attempt = static_cast<uint32_t>(std::stoul(f[4]));
        op.word = f[5] == "-" ? "" : f[5];
        op.deliberate = f[6] == "1";
        op.client = std::stoi(f[7]);
        op.send_us = std::stoll(f[8]);
        op.outcome = OpOutcome::kPending;
        auto death = death_us.find(life_of(f[1]));
        op.recv_us = death == death_us.end() ? op.send_us : death->second;
        op.error = "the embedding program was killed before the call returned";
        open[f[1]] = op;
        order.push_back(f[1]);
      } else if (f[0] == "E" && f.size() == 5) {
        auto it = open.find(f[1]);
        if (it == open.end()) return bad();
        Op& op = it->second;
        op.recv_us = std::stoll(f[3]);
        if (f[2] == "R") {
          auto summary = client::parse_summary(f[4]);
          if (!summary.is_ok()) return bad();
          op.outcome = OpOutcome::kReplied;
          op.summary = summary.value();
          op.error.clear();
        } else {
          op.outcome = OpOutcome::kError;
          op.error = f[4];
        }
      } else if (f[0] == "H" && f.size() == 9) {
        HandOut h;
        h.tx_id = f[1];
        h.attempt = static_cast<uint32_t>(std::stoul(f[2]));
        h.deliveries = static_cast<uint32_t>(std::stoul(f[3]));
        h.key = f[4];
        h.client = std::stoi(f[5]);
        h.reserve_send_us = std::stoll(f[6]);
        h.recv_us = std::stoll(f[7]);
        h.payload = f[8];
        recorder.hand_out(h);
      } else {
        return bad();
      }
    } catch (const std::exception&) {  // std::stoull and friends on a bad number
      return bad();
    }
  }
  for (const std::string& id : order) recorder.op(open[id]);
  return Status::ok();
}

}  // namespace tarde::crash
