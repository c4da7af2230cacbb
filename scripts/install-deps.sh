#!/usr/bin/env bash
# Installs what gpuext needs to build and test on Debian 12, if missing:
#  - Debian packages (compilers, libraries, cmocka; libclang-rt for the
#    libFuzzer smoke run that make test includes);
#  - the CUDA toolkit's nvcc, ptxas and cuda.h, which the build needs (the
#    device runtime is compiled to PTX by nvcc at build time, src/cuda uses
#    cuda.h's types, tests run ptxas on every emitted PTX).  It is not in
#    Debian's main archive: it comes from NVIDIA's Debian 12 apt repository
#    (added with NVIDIA's cuda-keyring package), and only the compiler and
#    headers are installed, no driver: no GPU is needed to build and test.
#    Skipped when $CUDA_HOME (default /usr/local/cuda) already has nvcc and
#    cuda.h; CUDA_APT_VERSION picks the toolkit (default 13-0).
set -eu
pkgs=(build-essential clang clang-19 libclang-rt-14-dev llvm pkg-config libcmocka-dev liblz4-dev libzstd-dev
      libbpf-dev libelf-dev zlib1g-dev linux-libc-dev
      libjson-c-dev)
cuda_home=${CUDA_HOME:-/usr/local/cuda}
cuda_ver=${CUDA_APT_VERSION:-13-0}
cuda_pkgs=("cuda-nvcc-$cuda_ver" "cuda-cudart-dev-$cuda_ver" "cuda-driver-dev-$cuda_ver")
cuda_keyring=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb

sudo_cmd=""
as_root() {
	if [ "$(id -u)" -ne 0 ] && [ -z "$sudo_cmd" ]; then
		command -v sudo >/dev/null || {
			echo "$0: need root or sudo to install: $*" >&2
			exit 1
		}
		sudo_cmd="sudo"
	fi
	$sudo_cmd "$@"
}
apt_install() {
	echo "installing: $*"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
need_cuda=0
[ -x "$cuda_home/bin/nvcc" ] && [ -f "$cuda_home/include/cuda.h" ] || need_cuda=1
[ $need_cuda -eq 0 ] || command -v wget >/dev/null || missing+=(wget ca-certificates)
if [ ${#missing[@]} -gt 0 ]; then
	as_root apt-get update -qq
	apt_install "${missing[@]}"
fi

if [ $need_cuda -eq 1 ]; then
	if ! dpkg-query -W -f='${Status}' cuda-keyring 2>/dev/null | grep -q "ok installed"; then
		tmp=$(mktemp -d)
		wget -q -O "$tmp/cuda-keyring.deb" "$cuda_keyring"
		as_root dpkg -i "$tmp/cuda-keyring.deb" >/dev/null
		rm -rf "$tmp"
	fi
	as_root apt-get update -qq
	apt_install "${cuda_pkgs[@]}"
	# The packages install /usr/local/cuda-X.Y; the Makefile looks in $CUDA_HOME.
	if [ ! -e "$cuda_home" ] && [ -d "/usr/local/cuda-${cuda_ver/-/.}" ]; then
		as_root ln -s "/usr/local/cuda-${cuda_ver/-/.}" "$cuda_home"
	fi
	[ -x "$cuda_home/bin/nvcc" ] || { echo "$0: no nvcc in $cuda_home after installing" >&2; exit 1; }
fi
