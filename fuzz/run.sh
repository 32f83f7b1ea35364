#!/usr/bin/env bash
# Runs one fuzz target for a number of seconds with the options this project uses, from the repo root:
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer options...]
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); RUSTC_BOOTSTRAP=1 lets it use stable Rust. The
# log, ending with libFuzzer's final stats, goes to fuzz/artifacts/logs/TARGET-<UTC time>.log. Exits
# non-zero when cargo-fuzz is missing, the build fails, or libFuzzer stops on a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz/run.sh: cargo-fuzz is not installed; install it with: cargo install cargo-fuzz --locked" >&2
  exit 1
fi
target=$1 seconds=$2
shift 2
case $target in
  lz4_body | frame_stream | capture | protocol_stream | tls) max_len=65540 ;;
  inspect) max_len=131072 ;;
  npy_header | vecs_readers | neighbors) max_len=8192 ;;
  hdf5_reader | columnar_readers) max_len=16384 ;;
  value_decoder) max_len=1024 ;;
  *) max_len=4096 ;;
esac
# A 128 KiB inspect input may inflate to 20 MB of frames, decoded twice and explained (about 2 s).
timeout=5
[ "$target" = inspect ] && timeout=30
mkdir -p "fuzz/corpus/$target" fuzz/artifacts/logs
# A target's dictionary; inspect reads captures too, so it also gets capture's.
dicts=("fuzz/dicts/$target.dict")
[ "$target" = inspect ] && dicts=(fuzz/dicts/capture.dict fuzz/dicts/inspect.dict)
dict=()
if [ -f "${dicts[-1]}" ]; then
  cat "${dicts[@]}" >"fuzz/artifacts/$target.dict"
  dict=("-dict=fuzz/artifacts/$target.dict")
fi
log="fuzz/artifacts/logs/$target-$(date -u +%Y%m%dT%H%M%S).log"
# -s none: no sanitizer (safe Rust; debug assertions and overflow checks stay on). The targets'
# global allocator aborts on any single allocation above 64 MiB; -rss_limit_mb bounds the total.
RUSTC_BOOTSTRAP=1 cargo fuzz run -s none --fuzz-dir fuzz "$target" "fuzz/corpus/$target" -- \
  -max_total_time="$seconds" -max_len="$max_len" -timeout="$timeout" -rss_limit_mb=128 \
  -print_final_stats=1 "${dict[@]}" "$@" 2>&1 | tee "$log" | grep -E "^(#[0-9]+.*(pulse|DONE)|==|SUMMARY|Done|stat::|.*panicked|thread)" || true
status=${PIPESTATUS[0]}
echo "log: $log"
if [ "$status" -ne 0 ]; then
  if grep -q 'stat::number_of_executed_units' "$log"; then
    echo "fuzz/run.sh: $target stopped on a finding (exit $status); see $log" >&2
  else
    echo "fuzz/run.sh: cargo fuzz failed before fuzzing (exit $status); see $log" >&2
  fi
  exit "$status"
fi
