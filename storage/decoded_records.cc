#include "storage/decoded_records.h"

#include <functional>

namespace tarde::storage {

size_t DecodedRecords::slot_of(std::string_view tx_id) {
  return std::hash<std::string_view>{}(tx_id) & (kSlots - 1);
}

const TxRecord* DecodedRecords::find(std::string_view tx_id, std::string_view bytes) const {
  if (slots_.empty()) return nullptr;
  const Slot& slot = slots_[slot_of(tx_id)];
  if (slot.bytes.empty() || slot.bytes != bytes || slot.record.tx_id != tx_id) return nullptr;
  return &slot.record;
}

void DecodedRecords::remember(std::string_view bytes, const TxRecord& record) {
  if (bytes.empty() || bytes.size() > kRecordBytesMax) return;
  if (slots_.empty()) slots_.resize(kSlots);
  Slot& slot = slots_[slot_of(record.tx_id)];
  slot.bytes.assign(bytes);
  slot.record = record;
}

}  // namespace tarde::storage
