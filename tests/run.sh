#!/usr/bin/env bash
# Runs every cmocka test binary of the given build folders and prints one
# summary line: "N passed, M failed, K skipped".  A binary that crashes or
# exits non-zero without reporting counts as one failure.
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- build

passed=0 failed=0 skipped=0 failures=()
for dir in "$@"; do
	for bin in "$dir"/tests/test_*; do
		[ -x "$bin" ] || continue
		log=$(mktemp)
		start=${EPOCHREALTIME/./}
		"$bin" >"$log" 2>&1
		rc=$?
		ms=$(( (${EPOCHREALTIME/./} - start) / 1000 ))
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
		fi
		printf '%-40s %4d passed %3d failed %3d skipped %6d ms\n' "$bin" "$p" "$f" "$s" "$ms"
		if [ "$f" -ne 0 ]; then
			failures+=("$bin")
			sed 's/^/    /' "$log" | grep -v '^\s*\[ *\(RUN\|OK\) *\]' | tail -n 40
		fi
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		rm -f "$log"
	done
done
if [ ${#failures[@]} -gt 0 ]; then
	echo "failing: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
