#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/wire/tokens.h"
#include "storage/records.h"

namespace tarde::net {

// The setting names CONFIG accepts, in the order CONFIG replies list them.
extern const std::vector<std::string_view> kConfigNames;

// Applies CONFIG's name=value options to `config`. Returns the first problem
// as an ArgError (BAD_ARGUMENT) and leaves `config` untouched then.
std::optional<ArgError> apply_config_options(
    const std::vector<std::pair<std::string_view, std::string_view>>& options,
    storage::QueueConfig* config);

// Every setting of `config` as CONFIG's name=value pairs, in kConfigNames'
// order, then `paused` (shown, but set only by PAUSE and RESUME), with
// values in their wire form ("2h", "1.6", "1").
std::vector<std::pair<std::string, std::string>> config_values(const storage::QueueConfig& config);

}  // namespace tarde::net
