#include "tools/dump/backups.h"

#include <nlohmann/json.hpp>

#include "storage/backups.h"
#include "tools/dump/output.h"

namespace tarde::tools {

Result<DumpOutput> list_backups_output(const std::string& backup_dir, bool json) {
  auto listed = storage::list_backups(backup_dir, /*verify=*/true);
  if (!listed.is_ok()) return listed.status();
  Rows rows({"id", "created_at", "bytes", "files", "verified", "problem"});
  DumpOutput out;
  for (const storage::BackupEntry& entry : listed.value()) {
    rows.add({number(static_cast<uint64_t>(entry.id)), text(iso_time(entry.created_at_s * 1000)),
              number(entry.size_bytes), number(static_cast<uint64_t>(entry.files)),
              text(entry.verified ? "yes" : "NO"),
              text(entry.problem.empty() ? "-" : entry.problem)});
    if (!entry.verified) out.problems = true;
  }
  if (json) {
    out.text = json_output(rows.json());
    return out;
  }
  out.text = rows.table();
  out.text += "(" + std::to_string(rows.size()) +
              (rows.size() == 1 ? " backup in " : " backups in ") + backup_dir + ")\n";
  return out;
}

Result<std::string> restore_output(const std::string& backup_dir, uint32_t id,
                                   const std::string& target) {
  auto restored = storage::restore_backup(backup_dir, id, target);
  if (!restored.is_ok()) return restored.status();
  const storage::RestoreReport& report = restored.value();
  return "restored backup " + std::to_string(report.id) + " of " + backup_dir + " into " + target +
         ": " + std::to_string(report.files) + " files, " + std::to_string(report.size_bytes) +
         " bytes, checksums verified, in " + std::to_string(report.took_ms) +
         " ms\n"
         "next: tarde-dump " +
         target + " check, then tarde serve --data " + target + "\n";
}

}  // namespace tarde::tools
