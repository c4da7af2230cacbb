# shellcheck shell=bash
# lib.sh - what the GPU check scripts share; sourced from the repository
# root (`. tests/gpu/lib.sh`) after the script's own `cd` there.

# result PASS|FAIL text: one line on stdout and in $SUMMARY, counted in
# $pass / $fail (the script sets both to 0 and SUMMARY before its checks).
result() {
	echo "$1 $2" | tee -a "$SUMMARY"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

# gpu_machine_info: the date, the GPU, its driver and compute capability,
# and the commit, for the logs a check leaves.
gpu_machine_info() {
	date -u
	nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
	git log -1 --oneline 2>/dev/null
}
