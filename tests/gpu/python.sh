#!/usr/bin/env bash
# The Python GPU stacks under the agent (issue 6, Must show 2), on a GPU
# machine from the repository root with the build folder carried along:
#
#   tests/gpu/python.sh
#
# Each script in tests/gpu/python/ runs plainly, then under
# `gpuext run build/bpf/examples/gpu_count.bpf.o` (entry+exit probes on
# every kernel).  PASS when the instrumented run exits 0 with the plain
# run's checksum and:
#   - for scripts whose first line gives the launch shape
#     ("NAME: launches=L grid=G block=B") and whose kernels carry PTX: the
#     threads counted at entry and exit equal grid x block x launches;
#   - for kernels with no PTX (Triton loads cubins): they run unchanged and
#     the agent names them in a notice;
#   - cupy_elementwise (CuPy's own kernels compiled to PTX): the agent
#     instrumented at least one of them;
#   - torch_mlp (cuBLAS, no exact count): checksum and exit status only, the
#     agent's messages are kept in the log.
# A stack that fails without gpuext (numba-cuda with numpy 2.5 there fails
# at its first @cuda.jit) is reported as SKIP with its error.
# Logs go to $OUT (default build/python-gpu-out).  Exits 1 on any failure.
set -u
OUT=${OUT:-build/python-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
GPUEXT=build/gpuext
PROG=build/bpf/examples/gpu_count.bpf.o
PY=tests/gpu/python
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/python-summary.txt"
: > "$SUMMARY"
python3 -c 'import sys; print(sys.version)' > "$OUT/versions.txt" 2>&1
for m in torch triton cupy numba numpy; do
	python3 -c "import $m; print('$m', $m.__version__)" >> "$OUT/versions.txt" 2>&1 ||
		echo "$m: does not import" >> "$OUT/versions.txt"
done

pass=0 fail=0 skip=0
result() { # result PASS|FAIL|SKIP text
	echo "$1 $2" | tee -a "$SUMMARY"
	case $1 in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; *) skip=$((skip + 1)) ;; esac
}
launched() { # launched LOG -> "threads"
	head -1 "$1" | tr ' ' '\n' | awk -F= '
		$1 == "launches" { l = $2 } $1 == "grid" { g = $2 } $1 == "block" { b = $2 }
		END { printf "%d\n", g * b * l }'
}
count() { awk -v k="$2" '$1 == k":" { print $2; found = 1 } END { if (!found) print 0 }' "$1"; }
checksum() { grep '^checksum:' "$1" | tail -1; }

# check NAME MODE [ENV...]: MODE is count, nopx, instr or plain.
check() {
	local name=$1 mode=$2
	shift 2
	local script="$PY/${name%%.*}.py" log="$LOGS/$name"
	/usr/bin/time -f '%e s' -o "$log.plain.time" timeout 300 env "$@" python3 "$script" \
		> "$log.plain.log" 2> "$log.plain.err"
	local rc0=$?
	# A stack that fails on its own, without gpuext, cannot be tested
	# under it: not the agent's doing.
	if [ "$rc0" != 0 ]; then
		result SKIP "$name: fails without gpuext: $(grep -v '^ ' "$log.plain.err" | tail -1)"
		return
	fi
	/usr/bin/time -f '%e s' -o "$log.run.time" timeout 600 env "$@" GPUEXT_AGENT_VERBOSE=1 \
		"$GPUEXT" -v run "$PROG" -- python3 "$script" > "$log.run.log" 2> "$log.run.err"
	local rc1=$? why="" cs0 cs1
	cs0=$(checksum "$log.plain.log")
	cs1=$(checksum "$log.run.log")
	[ "$rc0" = 0 ] || why+=" plain rc=$rc0"
	[ "$rc1" = 0 ] || why+=" instrumented rc=$rc1"
	[ -n "$cs0" ] && [ "$cs0" = "$cs1" ] || why+=" checksum '$cs0' vs '$cs1'"
	local c1 c3 n_instr
	c1=$(count "$log.run.log" 1)
	c3=$(count "$log.run.log" 3)
	n_instr=$(grep -c 'instrumented (.* ms)$' "$log.run.err")
	case $mode in
	count)
		local threads
		threads=$(launched "$log.plain.log")
		[ "$c1" = "$threads" ] || why+=" entry threads $c1 != $threads"
		[ "$c3" = "$threads" ] || why+=" exit threads $c3 != $threads"
		;;
	nopx)
		grep -q '^gpuext: .*no PTX' "$log.run.err" || why+=" no 'no PTX' notice"
		;;
	instr) # the notices of kernels left unchanged, if any, are listed below
		[ "$n_instr" -ge 1 ] || why+=" no kernel instrumented"
		;;
	esac
	local detail="rc=$rc1, $cs1, $n_instr kernels instrumented, entry threads $c1, exit threads $c3, plain $(cat "$log.plain.time"), run $(cat "$log.run.time")"
	if [ -z "$why" ]; then
		result PASS "$name: $detail"
	else
		result FAIL "$name:$why ($detail; logs/$name.*)"
	fi
	grep '^gpuext: ' "$log.run.err" | grep -v 'instrumented (.* ms)$' | sort | uniq -c | head -5 | sed 's/^/    /' | tee -a "$SUMMARY"
}

check cupy_rawkernel nopx
check cupy_rawkernel.ptx count CUPY_COMPILE_WITH_PTX=1
check cupy_elementwise.ptx instr CUPY_COMPILE_WITH_PTX=1
check numba_add count
check triton_add nopx
check torch_mlp plain
echo "python stacks: $pass passed, $fail failed, $skip skipped" | tee -a "$SUMMARY"
[ "$fail" = 0 ]
