#pragma once

#include <string_view>

namespace tarde {

// Crash points are named places where the process can be told to die at once
// (_exit, no cleanup, no flush), so that tests and tarde-crash can prove that
// a kill at exactly that instant loses nothing that was acknowledged. They are
// armed by the environment variable TARDE_CRASH_AT="NAME[:COUNT]": the COUNT-th
// time (default 1) execution reaches NAME, the process exits with status
// kCrashExitStatus. Unarmed, a crash point costs one branch.
//
// Names in use: commit.before_write, commit.after_write, timer.after_fire,
// reserve.after_hand_out, recovery.after_repair,
// wheel.after_page, reconcile.after_slice.
inline constexpr int kCrashExitStatus = 86;

// Called by TARDE_CRASH_POINT; exits when `name` is armed and its count is
// reached. Thread-safe.
void crash_point(std::string_view name);

}  // namespace tarde

#define TARDE_CRASH_POINT(name) ::tarde::crash_point(name)
