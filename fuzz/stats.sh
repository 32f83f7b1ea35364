#!/usr/bin/env bash
# Sums libFuzzer's final stats over the logs that fuzz/run.sh wrote (fuzz/artifacts/logs/):
# per target, the runs, executions (stat::number_of_executed_units), seconds (libFuzzer's "Done N runs
# in S second(s)"; for a run that stopped on a finding, from the log's start time in its name to its
# last write, build included) and the runs that ended on a finding.
# Exits non-zero when no run executed anything (e.g. cargo-fuzz was missing).
set -euo pipefail
logs="$(dirname "$0")/artifacts/logs"
if [ ! -d "$logs" ]; then
  echo "fuzz/stats.sh: no logs in $logs; run fuzz/run.sh first (it needs cargo-fuzz)" >&2
  exit 1
fi
cd "$logs"
total=0
printf '%-15s %5s %14s %8s %9s\n' target runs executions seconds findings
for target in type_parser value_decoder literal_parser lz4_body frame_stream npy_header vecs_readers hdf5_reader \
  message_body protocol_stream inspect capture vector_kernel; do
  runs=0 execs=0 seconds=0 findings=0
  for log in "$target"-*.log; do
    [ -e "$log" ] || continue
    stamp=${log#"$target"-}; stamp=${stamp%.log}
    start=$(date -u -d "${stamp:0:4}-${stamp:4:2}-${stamp:6:2} ${stamp:9:2}:${stamp:11:2}:${stamp:13:2}" +%s)
    end=$(stat -c %Y "$log")
    units=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    done_seconds=$(grep -o 'runs in [0-9]* second' "$log" | grep -o '[0-9]*' | tail -1 || true)
    runs=$((runs + 1)) execs=$((execs + ${units:-0})) seconds=$((seconds + ${done_seconds:-$((end - start))}))
    if grep -q 'ERROR: libFuzzer' "$log"; then findings=$((findings + 1)); fi
  done
  printf '%-15s %5d %14d %8d %9d\n' "$target" "$runs" "$execs" "$seconds" "$findings"
  total=$((total + execs))
done
if [ "$total" -eq 0 ]; then
  echo "fuzz/stats.sh: the logs record no executions; is cargo-fuzz installed (cargo install cargo-fuzz --locked)?" >&2
  exit 1
fi
