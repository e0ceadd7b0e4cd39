#!/usr/bin/env bash
# The `package` test: builds the Debian package from BUILD_DIR (cpack, as
# scripts/package does) into a temporary directory and checks it:
#  - dpkg-deb lists the programs, man pages, unit, config file and docs;
#    conffiles names /etc/tarde/tarde.conf; Depends (dpkg-shlibdeps) names
#    the shared libraries and adduser;
#  - /etc/tarde/tarde.conf lists every flag of `tarde serve --help`;
#  - lintian reports no error;
#  - systemd-analyze verify accepts the unit, in the unpacked tree (--root);
#  - the unpacked tarde serves PING with the package's own config file
#    (data directory and port overridden on the command line, as a flag
#    overrides the file), started as the unit's ExecStart starts it;
#  - the unit's SystemCallFilter allows every system call the real server
#    makes (strace -f while it starts, recovers a WAL, serves every kind of
#    command and stops), compared with systemd-analyze syscall-filter.
#   tests/package/check_package.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: check_package.sh BUILD_DIR}" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package: FAIL: $*" >&2; exit 1; }
say() { echo "package: $*"; }

# --- the package --------------------------------------------------------------
cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/out/tarde_*_amd64.deb)
say "built $(basename "$deb"), $(stat -c %s "$deb") bytes"

dpkg-deb -c "$deb" >"$work/contents"
for path in ./usr/bin/tarde ./usr/bin/tarde-cli ./usr/bin/tarde-dump \
  ./usr/share/man/man1/tarde.1.gz ./usr/share/man/man1/tarde-cli.1.gz \
  ./usr/share/man/man1/tarde-dump.1.gz ./usr/share/man/man5/tarde.conf.5.gz \
  ./etc/tarde/tarde.conf ./lib/systemd/system/tarde.service \
  ./usr/share/doc/tarde/copyright ./usr/share/doc/tarde/changelog.Debian.gz; do
  awk '{ print $6 }' "$work/contents" | grep -qxF "$path" || fail "$path is not in the package"
done
grep -E '\./usr/bin/tarde(-cli|-dump)?$' "$work/contents" | grep -q '^-rwxr-xr-x root/root' ||
  fail "the programs are not root-owned 0755"
awk '{ print $6 }' "$work/contents" | grep -E '^\./usr/(include|lib/.*\.a$)' &&
  fail "the package holds library files; it is the server's package"
dpkg-deb -I "$deb" >"$work/info"
dpkg-deb -I "$deb" conffiles | grep -qxF /etc/tarde/tarde.conf || fail "tarde.conf is not a conffile"
depends=$(dpkg-deb -f "$deb" Depends)
say "Depends: $depends"
# RocksDB is linked in from its static archive; the compression libraries it
# calls stay shared.
for dependency in adduser libc6 'libstdc\+\+6' libsystemd0 libjemalloc2 liburing2 libsnappy1v5 \
  liblz4-1 libzstd1; do
  grep -Eq "(^|, )$dependency( |,|$)" <<<"$depends" || fail "Depends lacks $dependency"
done
grep -Eq "(^|, )librocksdb" <<<"$depends" && fail "Depends names librocksdb, which is linked in"
for script in postinst prerm postrm; do
  dpkg-deb -I "$deb" "$script" | grep -q 'tarde.service' || fail "no $script"
done
dpkg-deb -I "$deb" postinst | grep -q 'adduser --system --group' || fail "postinst makes no user"

# --- the unpacked tree: config file, unit ----------------------------------------
root="$work/root"
dpkg -x "$deb" "$root"
# The planted-bug server of the tests (tarde-planted-lost-ack) warns at
# start with this text; no packaged program may carry it. The test build
# does, so the check cannot pass by the text changing.
planted='PLANTED BUG build'
grep -qaF "$planted" "$build/bin/tarde-planted-lost-ack" || fail "the planted build lacks its marker"
for program in tarde tarde-cli tarde-dump; do
  ! grep -qaF "$planted" "$root/usr/bin/$program" || fail "usr/bin/$program is a planted-bug build"
done
conf="$root/etc/tarde/tarde.conf"
flags=$("$root/usr/bin/tarde" --help | sed -n 's/^  --\([a-z-]*\) .*/\1/p' | grep -vx config)
[ "$(wc -w <<<"$flags")" -ge 11 ] || fail "tarde --help lists too few flags: $flags"
for flag in $flags; do
  grep -Eq "^#?$flag = " "$conf" || fail "tarde.conf does not list '$flag'"
done
grep -qx 'data = /var/lib/tarde' "$conf" || fail "tarde.conf does not put the data in /var/lib/tarde"
# Each commented setting shows the default that tarde --help shows.
"$root/usr/bin/tarde" --help | awk '
  /^  --/ { if (name != "") print name "\t" text; name = $1; sub(/^--/, "", name); text = $0; next }
  /^    / { text = text " " $0; next }
  { if (name != "") print name "\t" text; name = "" }
  END { if (name != "") print name "\t" text }' |
  sed -n 's/^\([a-z-]*\)\t.*(default \([^)]*\))$/\1 \2/p' >"$work/defaults"
[ "$(wc -l <"$work/defaults")" -ge 9 ] || fail "could not read the defaults of tarde --help"
while read -r flag default; do
  [ "$flag" = data ] && continue  # the package's own value, said above
  grep -qxF "#$flag = $default" "$conf" || fail "tarde.conf does not show $flag's default $default"
done <"$work/defaults"

unit="$root/lib/systemd/system/tarde.service"
for line in Type=notify User=tarde StateDirectory=tarde Restart=on-failure \
  'ExecStart=/usr/bin/tarde serve --config /etc/tarde/tarde.conf' ProtectSystem=strict \
  NoNewPrivileges=true PrivateTmp=true 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
  SystemCallFilter=@system-service; do
  grep -qxF "$line" "$unit" || fail "the unit lacks $line"
done
# systemd-analyze verify needs the targets the unit's dependencies name and
# finds ExecStart's binary under --root; its man pages come from the package.
cp -a /lib/systemd/system/*.target "$root/lib/systemd/system/"
MANPATH="$root/usr/share/man" systemd-analyze verify --root="$root" \
  /lib/systemd/system/tarde.service >"$work/verify" 2>&1 ||
  { cat "$work/verify" >&2; fail "systemd-analyze verify refused the unit"; }
[ ! -s "$work/verify" ] || { cat "$work/verify" >&2; fail "systemd-analyze verify complained"; }
say "systemd-analyze verify: the unit is accepted"

# --- lintian -------------------------------------------------------------------------
lintian --fail-on error --tag-display-limit 0 "$deb" >"$work/lintian" 2>&1 ||
  { cat "$work/lintian" >&2; fail "lintian reports errors"; }
say "lintian: no errors; $(grep -c '^W:' "$work/lintian" || true) warnings, $(grep -c '^I:' "$work/lintian" || true) infos"
sed 's/^/package:   /' "$work/lintian"

# --- the unpacked server, started like the unit starts it ---------------------------
# Waits for the listening line of log $1 and prints the port.
port_of() {
  local port=
  for _ in $(seq 400); do
    # The server opens its log itself: it may not exist yet.
    [ -f "$1" ] && port=$(sed -n 's/.*tarde listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$1")
    [ -n "$port" ] && { echo "$port"; return 0; }
    sleep 0.05
  done
  cat "$1" >&2
  return 1
}
cli="$root/usr/bin/tarde-cli"
"$root/usr/bin/tarde" serve --config "$conf" --data "$work/data" --listen 127.0.0.1:0 \
  >"$work/serve.log" 2>&1 &
pids+=($!)
port=$(port_of "$work/serve.log") || fail "the unpacked tarde did not start"
reply=$("$cli" --port "$port" ping) || fail "PING got no answer"
say "the unpacked tarde (its own tarde.conf, --data and --listen overridden) answers: $reply"
kill -TERM "${pids[-1]}"
wait "${pids[-1]}" || fail "tarde serve did not exit 0 on SIGTERM"

# --- the system call filter, with the real binary -----------------------------------
# systemd's rule: the syscalls of @system-service, less those of @privileged
# and @resources (SystemCallFilter=~...), each set expanded recursively, plus
# those a later SystemCallFilter= names one by one.
expand() {
  systemd-analyze syscall-filter "$1" | sed -n '2,$p' | sed 's/^ *//; /^#/d; /^$/d' |
    while read -r name; do
      case "$name" in
        @*) expand "$name" ;;
        *) echo "$name" ;;
      esac
    done
}
expand @system-service | sort -u >"$work/allowed"
{ expand @privileged; expand @resources; } | sort -u >"$work/denied"
comm -23 "$work/allowed" "$work/denied" >"$work/filter"
# Then the system calls the unit allows back by name (SystemCallFilter=name ...).
sed -n 's/^SystemCallFilter=\([a-z_][a-z_0-9 ]*\)$/\1/p' "$unit" | tr ' ' '\n' >>"$work/filter"
sort -u -o "$work/filter" "$work/filter"
[ "$(wc -l <"$work/filter")" -gt 200 ] || fail "could not expand the filter's syscall sets"
for forbidden in reboot mount setrlimit swapon; do  # the sets say what they should
  ! grep -qx "$forbidden" "$work/filter" || fail "the expanded filter allows $forbidden"
done
grep -qx fdatasync "$work/filter" || fail "the expanded filter lacks fdatasync"

traced() {  # runs tarde serve under strace -f, output in $work/trace.$1
  strace -f -qq -o "$work/trace.$1" "$root/usr/bin/tarde" serve --config "$conf" \
    --data "$work/strace-data" --listen 127.0.0.1:0 >"$work/strace.$1.log" 2>&1 &
  pids+=($!)
}
# strace -o FILE PROG blocks fatal signals: SIGTERM goes to tarde, its child.
stop_traced() {
  local strace_pid=${pids[-1]} tarde_pid
  tarde_pid=$(pgrep -P "$strace_pid")
  kill -TERM "$tarde_pid"
  wait "$strace_pid"
}
traced 1
port=$(port_of "$work/strace.1.log") || fail "tarde did not start under strace"
c() { "$cli" --port "$port" --timeout 10s "$@" >/dev/null 2>&1 || true; }
c ping
c config q max_deliveries=1 lease=1s
for i in $(seq 50); do c enqueue q "TX-$i" --payload "payload $i"; done
c enqueue q TX-sent --sent
c respond TX-sent 1 CANCELLED
c enqueue q TX-late --delay 1s
c reserve q
c sent TX-2 1
c respond TX-2 1 SUCCESS
c respond TX-3 1 REJECTED
c resolve TX-4 SUCCEEDED
c get TX-1
c history TX-1
c deadletters q
c redrive q TX-1
c stats
sleep 1.5  # a timer fires
stop_traced || fail "tarde under strace did not exit 0"
# A second start recovers what the first left in the WAL (RocksDB flushes it
# to a table file on open).
traced 2
port=$(port_of "$work/strace.2.log") || fail "tarde did not restart under strace"
c get TX-1
stop_traced || fail "tarde under strace did not exit 0 after its restart"
cat "$work"/trace.* | sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' | sort -u >"$work/used"
[ "$(wc -l <"$work/used")" -gt 20 ] || fail "strace saw too few system calls"
say "system calls seen: $(tr "\n" " " <"$work/used")"
outside=$(comm -23 "$work/used" "$work/filter")
[ -z "$outside" ] || fail "the real server makes system calls the unit's filter forbids: $outside"
# MemoryDenyWriteExecute=true refuses memory both writable and executable,
# and making memory executable later: the server must do neither.
if grep -E 'mprotect\([^)]*PROT_EXEC|mmap\([^)]*PROT_WRITE\|PROT_EXEC' "$work"/trace.*; then
  fail "tarde maps writable executable memory: MemoryDenyWriteExecute would stop it"
fi
say "SystemCallFilter: all $(wc -l <"$work/used") system calls tarde made under strace are allowed" \
  "($(wc -l <"$work/filter") allowed by the unit's SystemCallFilter lines)"
say "ok"
