#!/bin/sh
# Builds the ggml-rknn backend of a llama.cpp tree against rknn-bench's
# build/shim/librknnrt.so and runs matmuls through it on the emulator (or the device
# RKNN_BENCH_DEVICE names), each checked against a plain loop
# (tests/llama/rknn_backend_smoke.cpp). The llama.cpp tree is not touched: its ggml/ and
# scripts/mat_kernel_size.json are copied to the work directory.
#
#   scripts/test-llama-backend.sh [--patch] [--tuned TUNED.json] LLAMA_CPP_DIR [WORKDIR]
#
#   --patch   apply docs/ggml-rknn-tuned.patch first (the seed revision includes
#             <arm_neon.h> unconditionally, so off an Arm host it needs the patch to
#             compile; the patch also fixes the seed's known defects and reads the
#             rknn_matmul_api contexts of a tuned file)
#   --tuned   the shapes file the backend reads (default: the tree's
#             scripts/mat_kernel_size.json); with the patch, a tuned JSON's contexts apply
#
# Needs cmake, a C++ compiler and nlohmann/json 3.11 headers (Debian: nlohmann-json3-dev).
# Not part of make check: CI cannot fetch llama.cpp.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PATCH=0 SHAPES=
while [ $# -gt 0 ]; do
	case $1 in
	--patch) PATCH=1 ;;
	--tuned) SHAPES=$2; shift ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
LLAMA=$(cd "$1" && pwd)
WORK=${2:-$ROOT/build/llama-backend}
[ -f "$LLAMA/ggml/src/ggml-rknn/ggml-rknn.cpp" ] || {
	echo "$LLAMA has no ggml/src/ggml-rknn/ggml-rknn.cpp" >&2
	exit 2
}
SHAPES=${SHAPES:-$LLAMA/scripts/mat_kernel_size.json}

make -C "$ROOT" --no-print-directory shim
rm -rf "$WORK"
mkdir -p "$WORK/lib" "$WORK/json"
cp -R "$LLAMA/ggml" "$WORK/ggml"
mkdir -p "$WORK/ggml/scripts" "$WORK/ggml/lib"
# ggml built on its own wants the pkg-config template that only ggml's own repository has.
[ -f "$WORK/ggml/ggml.pc.in" ] || : >"$WORK/ggml/ggml.pc.in"
cp "$SHAPES" "$WORK/ggml/scripts/mat_kernel_size.json"
[ "$PATCH" = 1 ] && (cd "$WORK" && patch -p1 <"$ROOT/docs/ggml-rknn-tuned.patch")
# The backend links lib/librknnrt.so and lib/librkllmrt.so of the tree by path: ours, and
# an empty stand-in for the LLM runtime it links but never calls.
cp "$ROOT/build/shim/librknnrt.so" "$WORK/ggml/lib/librknnrt.so"
echo 'void rknn_bench_empty_rkllmrt(void) {}' >"$WORK/lib/empty.c"
cc -shared -fPIC -o "$WORK/ggml/lib/librkllmrt.so" "$WORK/lib/empty.c"
# FetchContent(json) from the installed headers instead of the network.
cat >"$WORK/json/CMakeLists.txt" <<'JSON'
cmake_minimum_required(VERSION 3.14)
project(nlohmann_json_local CXX)
add_library(nlohmann_json INTERFACE)
add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)
JSON
# -include sys/time.h: the seed revision's ggml.c calls gettimeofday without it.
cmake -S "$WORK/ggml" -B "$WORK/build" -DGGML_RKNN=ON -DCMAKE_C_FLAGS="-include sys/time.h" -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=ON \
	-DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release \
	-DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_JSON="$WORK/json" >"$WORK/cmake.log"
cmake --build "$WORK/build" -j"$(nproc)" >"$WORK/build.log" 2>&1 ||
	{ tail -30 "$WORK/build.log"; exit 1; }
LIBS=$(find "$WORK/build" -name 'libggml*.so' -exec dirname {} \; | sort -u | tr '\n' ':')
# ggml-rknn.h declares C++ functions (references): the program is C++.
c++ -O2 -I"$WORK/ggml/include" -o "$WORK/rknn-backend-smoke" "$ROOT/tests/llama/rknn_backend_smoke.cpp" \
	$(find "$WORK/build" -name 'libggml*.so' | sort -u | tr '\n' ' ') -lm
# Three of the seed's decode pairs, and one name that is not in the file.
LD_LIBRARY_PATH="${LIBS}$ROOT/build/shim" RKNN_BENCH_DEVICE=${RKNN_BENCH_DEVICE:-sim} \
	"$WORK/rknn-backend-smoke" ffn_up-0:1:2048:8192 ffn_out-3:1:8192:2048 \
	result_output:1:2048:128256 not-a-node:1:2048:8192
