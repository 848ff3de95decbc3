# The report of scripts/test, sourced by it (and by TestReportTests, which runs it on fabricated logs).
#
# failure_recap LOG: the lines of a `swift test` log that are real failures, at most 60: Swift Testing's ✘ lines (an
# issue recorded, a test, suite or run failed), XCTest's failed cases and assertions, crashes (`Fatal error`, SwiftPM's
# `error: Exited with …`) and compiler errors. Never warnings (compiler `warning:` lines, Swift Testing's ⚠ warnings
# and known issues), nor what servers under test log at their error level, nor other stages' output.
failure_recap() {
  grep -E '^[[:space:]]*✘ |^Test Case .* failed \(|\.swift:[0-9]+(:[0-9]+)?: error: |^error: |Fatal error' "$1" \
    | grep -vE 'warning:|⚠|known issue|\[ (ERROR|WARNING|CRITICAL) \]|codes\.vapor' \
    | head -n 60 || true
}

# run_summary: the run's last line from the `stages` and `statuses` arrays (one status per stage, 0 = passed), e.g.
# `chorus tests: 5 passed, 1 failed (swift tests: FAILED; browser tests: passed; …)`; returns 0 only when every stage
# passed, so the exit status and the last line agree. No stage at all (the run stopped before any) is a failure.
run_summary() {
  local passed=0 failed=0 index details summary=()
  for index in "${!stages[@]}"; do
    if [ "${statuses[$index]}" -eq 0 ]; then
      passed=$((passed + 1)); summary+=("${stages[$index]}: passed")
    else
      failed=$((failed + 1)); summary+=("${stages[$index]}: FAILED")
    fi
  done
  if [ "${#stages[@]}" -eq 0 ]; then failed=1; summary=("setup: FAILED"); fi
  details="$(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
  echo "chorus tests: $passed passed, $failed failed ($details)"
  [ "$failed" -eq 0 ]
}
