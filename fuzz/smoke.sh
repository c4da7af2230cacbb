#!/usr/bin/env bash
# Builds the fuzz targets (make fuzz-bins) and replays each fuzz/corpus/NAME/
# folder through build/fuzz/NAME, then fuzzes each for a few seconds (new
# inputs go to a temporary folder, never into the corpus; fuzz/NAME.dict is
# used as a dictionary when present).  Skips with a
# message when clang cannot link libFuzzer.  --build-only: just build.
set -u
cd "$(dirname "$0")/.." || exit 1
CLANG=${FUZZ_CC:-clang}
SECONDS_EACH=${FUZZ_SMOKE_SECONDS:-3}

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"$probe/p.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
	echo "fuzz: skipped ($CLANG cannot link libFuzzer; install clang with compiler-rt)"
	exit 0
fi
if ! make --no-print-directory -j2 fuzz-bins >"$probe/build.log" 2>&1; then
	tail -n 30 "$probe/build.log"
	echo "fuzz: build failed"
	exit 1
fi
[ "${1:-}" = --build-only ] && { echo "fuzz: built $(ls build/fuzz/fuzz_* 2>/dev/null | grep -cv '\.')" targets in build/fuzz; exit 0; }

status=0
for dir in fuzz/corpus/*/; do
	name=$(basename "$dir")
	bin=build/fuzz/$name
	if [ ! -x "$bin" ]; then
		echo "fuzz: $name: no fuzz/$name.c for corpus $dir"
		status=1
		continue
	fi
	mkdir -p "$probe/$name"
	dict=()
	[ -f "fuzz/$name.dict" ] && dict=(-dict="fuzz/$name.dict")
	if "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
		"$probe/$name" "$dir" >"$probe/$name.log" 2>&1; then
		runs=$(grep -o 'Done [0-9]* runs' "$probe/$name.log" | grep -o '[0-9]*')
		echo "fuzz: $name: corpus of $(ls "$dir" | wc -l) replayed, ${runs:-?} runs, ok"
	else
		tail -n 30 "$probe/$name.log"
		echo "fuzz: $name: FAILED (log above)"
		status=1
	fi
done
exit $status
