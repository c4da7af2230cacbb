#!/usr/bin/env bash
# Installs the Debian 12 packages gpuext needs to build and test, if missing.
# The CUDA toolkit (nvcc, ptxas, cuda.h) is not a Debian package: tests that
# need ptxas report as skipped without it.
set -eu
pkgs=(build-essential clang clang-19 llvm pkg-config libcmocka-dev liblz4-dev libzstd-dev
      libbpf-dev libelf-dev zlib1g-dev linux-libc-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	sudo_cmd=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "$0: need root or sudo to install: ${missing[*]}" >&2
			exit 1
		}
		sudo_cmd="sudo"
	fi
	$sudo_cmd apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
