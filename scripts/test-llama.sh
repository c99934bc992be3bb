#!/bin/sh
# The ggml-rknn backend inside a real llama.cpp, on rknn-bench, against llama.cpp's CPU
# backend: greedy generation of the same prompt must give the same tokens.
#
#   scripts/test-llama.sh LLAMA_CPP_DIR [WORKDIR]
#
# LLAMA_CPP_DIR is a llama.cpp tree of the seed revision (Mhrooz/llama.cpp d8744d571dc4);
# it is never modified: it is copied into WORKDIR (default build/llama) twice and built
#   exec  with contrib/llama.cpp/0001 + 0002 and GGML_RKNN_BENCH=ON, against this
#         rknn-bench installed into WORKDIR/prefix (its CMake package config);
#   shim  with 0001 alone, against build/shim/librknnrt.so.
# Then it writes a random-weight Llama GGUF at Llama-3.2-1B widths with the tree's own
# gguf-py (tests/llama/make_model.py), its shapes file (`rknn-bench shapes --gguf`) and
# a tuned file per device (`rknn-bench tune`; for the shim, of the per-core slices the
# seed backend creates: `shapes --for ggml-rknn`), and runs tests/llama/generate.cpp: the
# prompt (PROMPT_TOKENS ids) plus N_GEN tokens, on the CPU backend and through each
# build on each of DEVICES, with and without the tuned file. It fails when tokens
# differ, when a logit differs by more than LOGIT_TOL, or when a run offloaded nothing;
# it prints each run's RKNN_BENCH_STATS=1 line (NPU time) and peak RSS, and checks the
# targets of issue 30 (the tuned NPU time against tune's gain; the executor's peak RSS
# against the CPU backend's plus 1.15 times the model file).
#
# Build directories are kept in WORKDIR and reused while the patches are the same.
# Needs cmake, a C++ compiler, nlohmann/json 3.11 headers (Debian nlohmann-json3-dev),
# libcjson/libdrm development files, and python3 with numpy, yaml and sentencepiece
# (PYTHON, default /usr/bin/python3). Not part of make check: CI cannot fetch llama.cpp.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,30p' "$0" >&2; exit 2; }
LLAMA=$(cd "$1" && pwd)
WORK=${2:-$ROOT/build/llama}
PYTHON=${PYTHON:-/usr/bin/python3}
DEVICES=${DEVICES:-sim sim:rocket}
LAYERS=${LAYERS:-2}
N_GEN=${N_GEN:-8}
LOGIT_TOL=${LOGIT_TOL:-0.05}
# 13 ids of the model's vocabulary (3..511): bytes and pieces, no control token.
PROMPT_TOKENS=${PROMPT_TOKENS:-1,300,301,302,265,310,400,290,333,450,270,499,321}
JOBS=${JOBS:-2}
# llama.cpp's threads, which the seed backend also splits N by: 3, one per NPU core, as
# it splits at init (with 2 it creates contexts at run time, and on sim:rocket those
# fail: "the per-core address spaces differ").
THREADS=${THREADS:-3}
[ -f "$LLAMA/ggml/src/ggml-rknn/ggml-rknn.cpp" ] || {
	echo "test-llama.sh: $LLAMA has no ggml/src/ggml-rknn/ggml-rknn.cpp" >&2
	exit 2
}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
FAILED=0
fail() {
	echo "FAIL: $*"
	FAILED=1
}
say() { echo "== $*"; }

# --- rknn-bench: the CLI, the shim, and an installed tree for the executor build ---------
say "building rknn-bench and installing it into $WORK/prefix"
make -C "$ROOT" --no-print-directory -j"$JOBS" all shim build/tests/maxrss >"$WORK/make.log" 2>&1 &&
	make -C "$ROOT" --no-print-directory -j"$JOBS" install PREFIX="$WORK/prefix" >>"$WORK/make.log" 2>&1 ||
	{ tail -20 "$WORK/make.log"; exit 1; }
BENCH=$ROOT/build/rknn-bench
MAXRSS=$ROOT/build/tests/maxrss

# --- the two llama.cpp trees -------------------------------------------------------------
# tree NAME PATCH...: LLAMA copied to WORK/NAME-src with the patches applied, unless a
# copy with the same patches is there. The build directory stays: cp -a keeps the
# times of the files no patch touches, so a rebuild compiles only the patched ones.
tree() {
	name=$1
	shift
	src=$WORK/$name-src
	stamp=$(cat "$@" | cksum)
	if [ -f "$src/.rknn-bench-stamp" ] && [ "$(cat "$src/.rknn-bench-stamp")" = "$stamp" ]; then
		return 0
	fi
	rm -rf "$src"
	cp -a "$LLAMA" "$src"
	for p in "$@"; do
		(cd "$src" && patch -p1 -s <"$p") || { echo "test-llama.sh: $p does not apply" >&2; exit 1; }
	done
	echo "$stamp" >"$src/.rknn-bench-stamp"
}

# FetchContent(json) from the system's headers instead of the network.
mkdir -p "$WORK/json"
cat >"$WORK/json/CMakeLists.txt" <<'JSON'
cmake_minimum_required(VERSION 3.14)
project(nlohmann_json_local CXX)
add_library(nlohmann_json INTERFACE)
add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)
JSON

# build NAME CMAKE_ARGS...: libllama (with ggml and ggml-rknn) and the generate program.
build() {
	name=$1
	shift
	src=$WORK/$name-src
	out=$WORK/$name-build
	say "building llama.cpp ($name) in $out"
	cmake -S "$src" -B "$out" -DGGML_RKNN=ON -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF \
		-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
		-DCMAKE_BUILD_TYPE=Release -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
		-DFETCHCONTENT_SOURCE_DIR_JSON="$WORK/json" "$@" >"$WORK/$name-cmake.log" 2>&1 ||
		{ tail -20 "$WORK/$name-cmake.log"; exit 1; }
	cmake --build "$out" -j"$JOBS" --target llama >"$WORK/$name-build.log" 2>&1 ||
		{ grep -B2 -A8 'error' "$WORK/$name-build.log" | head -40; exit 1; }
	libs=$(find "$out" -name 'lib*.so' -exec dirname {} \; | sort -u | tr '\n' ':')
	c++ -std=c++17 -O2 -I"$src/include" -I"$src/ggml/include" -o "$out/generate" \
		"$ROOT/tests/llama/generate.cpp" -L"$out/bin" -lllama -lggml -lggml-base \
		-Wl,-rpath,"${libs%:}" || exit 1
}

P=$ROOT/contrib/llama.cpp
tree exec "$P"/0001-*.patch "$P"/0002-*.patch
tree shim "$P"/0001-*.patch
# The seed backend links lib/librknnrt.so and lib/librkllmrt.so of its tree by path: the
# shim, and an empty stand-in for the LLM runtime it links but never calls.
cp "$ROOT/build/shim/librknnrt.so" "$WORK/shim-src/lib/librknnrt.so"
[ -f "$WORK/shim-src/lib/librkllmrt.so" ] || {
	echo 'void rknn_bench_empty_rkllmrt(void) {}' >"$WORK/empty.c"
	cc -shared -fPIC -o "$WORK/shim-src/lib/librkllmrt.so" "$WORK/empty.c"
}
build exec -DGGML_RKNN_BENCH=ON -DCMAKE_PREFIX_PATH="$WORK/prefix"
build shim

# --- the model, its shapes, its tuned files -------------------------------------------------
MODEL=$WORK/model.gguf
N_PROMPT=$(echo "$PROMPT_TOKENS" | tr ',' '\n' | wc -l)
if [ ! -f "$MODEL" ] || [ "$ROOT/tests/llama/make_model.py" -nt "$MODEL" ]; then
	say "writing $MODEL ($LAYERS layers at Llama-3.2-1B widths, random weights)"
	"$PYTHON" "$ROOT/tests/llama/make_model.py" "$LLAMA" "$MODEL.tmp" --layers "$LAYERS" &&
		mv "$MODEL.tmp" "$MODEL"
fi
MODEL_KIB=$(($(wc -c <"$MODEL") / 1024))
"$BENCH" shapes --gguf "$MODEL" --tokens "1,$N_PROMPT" -o "$WORK/shapes.json"
# The shim sees the seed backend's per-core slices, not the pairs: its tuned file lists
# those (shapes --for ggml-rknn, with the threads the backend splits by).
"$BENCH" shapes --gguf "$MODEL" --tokens "1,$N_PROMPT" --for ggml-rknn --threads "$THREADS" \
	-o "$WORK/shapes-slices.json"
# The backend's own mat_kernel_size.json, read when RKNN_BENCH_TUNED is not set.
for t in exec shim; do cp "$WORK/shapes.json" "$WORK/$t-src/scripts/mat_kernel_size.json"; done
# tune_file SHAPES TUNED DEVICE: tune unless TUNED is newer than SHAPES and the binary.
tune_file() {
	if [ ! -f "$2" ] || [ "$1" -nt "$2" ] || [ "$BENCH" -nt "$2" ]; then
		say "tuning $(basename "$1") on $3"
		"$BENCH" tune "$1" --device "$3" -o "$2" >"$2.out" 2>"$2.err" ||
			{ tail -5 "$2.err"; exit 1; }
	fi
	echo "$(basename "$2"):"
	sed -n '/^per model/,/^$/p' "$2.out"
}
for dev in $DEVICES; do
	tag=$(echo "$dev" | tr ':' '-')
	tune_file "$WORK/shapes.json" "$WORK/tuned-$tag.json" "$dev"
	tune_file "$WORK/shapes-slices.json" "$WORK/tuned-slices-$tag.json" "$dev"
done

# --- the runs ----------------------------------------------------------------------------
# run NAME BUILD BACKEND [VAR=VALUE...]: one generation; its output in WORK/runs/NAME.*
mkdir -p "$WORK/runs"
run() {
	name=$1 bld=$2 backend=$3
	shift 3
	env RKNN_BENCH_STATS=1 "$@" "$MAXRSS" "$WORK/runs/$name.rss" "$WORK/$bld-build/generate" \
		"$MODEL" --prompt "$PROMPT_TOKENS" --n "$N_GEN" --threads "$THREADS" --backend "$backend" \
		>"$WORK/runs/$name.out" 2>"$WORK/runs/$name.err" ||
		{ fail "$name: generate exited with $? ($(tail -3 "$WORK/runs/$name.err" | tr '\n' ' '))"; return 0; }
	grep '^step ' "$WORK/runs/$name.out" >"$WORK/runs/$name.steps" || true
}
# compare NAME: tokens and logits of run NAME against the CPU run of the same build.
compare() {
	awk -v tol="$LOGIT_TOL" -v name="$1" '
		FNR == 1 { file++ }
		file == 1 { ref[FNR] = $0; n = FNR; next }
		{
			split(ref[FNR], r, " ")
			if (r[4] != $4) { printf "%s: step %d chose token %s, the CPU backend %s\n", name, $2, $4, r[4]; bad = 1 }
			for (i = 6; i <= NF; i++) { d = $i - r[i]; if (d < 0) d = -d; if (d > max) max = d }
			m = FNR
		}
		END {
			if (m != n || n == 0) { printf "%s: %d steps, the CPU backend %d\n", name, m, n; bad = 1 }
			printf "%s: %d steps, tokens %s, max logit difference %.4g\n", name, m, bad ? "DIFFER" : "equal", max
			if (max > tol) { printf "%s: max logit difference %.4g > %s\n", name, max, tol; bad = 1 }
			exit bad
		}' "$WORK/runs/cpu.steps" "$WORK/runs/$1.steps"
}
stats() { grep -h '^rknn-bench: [0-9]* matmuls' "$WORK/runs/$1.err" | tail -1; }
npu_us() { stats "$1" | sed -n 's/.*NPU time \([0-9.]*\) us.*/\1/p'; }
matmuls() { stats "$1" | sed -n 's/^rknn-bench: \([0-9]*\) matmuls.*/\1/p'; }
defaults() { stats "$1" | sed -n 's/.* \([0-9]*\) default).*/\1/p'; }
rss() { cat "$WORK/runs/$1.rss" 2>/dev/null || echo 0; }

say "generating $N_PROMPT prompt tokens + $N_GEN on the CPU backend"
run cpu exec cpu
echo "cpu: tokens $(awk '{printf "%s ", $4}' "$WORK/runs/cpu.steps"), peak RSS $(rss cpu) KiB"
[ -s "$WORK/runs/cpu.steps" ] || { fail "the CPU run wrote no steps"; exit 1; }

RUNS=
for dev in $DEVICES; do
	tag=$(echo "$dev" | tr ':' '-')
	for bld in exec shim; do
		tuned=$WORK/tuned-$tag.json
		[ $bld = shim ] && tuned=$WORK/tuned-slices-$tag.json
		for t in default tuned; do
			name=$bld-$tag-$t
			say "$name"
			if [ $t = tuned ]; then
				run "$name" $bld npu RKNN_BENCH_DEVICE="$dev" RKNN_BENCH_TUNED="$tuned"
			else
				run "$name" $bld npu RKNN_BENCH_DEVICE="$dev"
			fi
			RUNS="$RUNS $name"
			compare "$name" || fail "$name: not the CPU backend's generation"
			line=$(stats "$name")
			echo "$name: ${line:-no RKNN_BENCH_STATS line}; peak RSS $(rss "$name") KiB"
			[ "$(matmuls "$name")" ] && [ "$(matmuls "$name")" -gt 0 ] ||
				fail "$name: nothing was offloaded to the NPU"
			[ $t = default ] || [ "$(defaults "$name")" = 0 ] ||
				fail "$name: $(defaults "$name") matmuls found no tuned config in $(basename "$tuned")"
		done
	done
done

# --- the targets of issue 30 ---------------------------------------------------------------
say "targets"
# tune's gain for this generation: prefill gain + decode gain per token x decode steps
gain() {
	"$PYTHON" - "$1" "$N_GEN" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
def total(kind, k):
    return sum(e["total_us"] for e in t[kind] if e["kind"] == k)
print("%.1f" % ((total("default", "prefill") - total("tuned", "prefill"))
                + (total("default", "decode") - total("tuned", "decode")) * int(sys.argv[2])))
PY
}
for dev in $DEVICES; do
	tag=$(echo "$dev" | tr ':' '-')
	for bld in exec shim; do
		g=$(gain "$WORK/tuned-$tag.json")
		[ $bld = shim ] && g=$(gain "$WORK/tuned-slices-$tag.json")
		d=$(npu_us "$bld-$tag-default") t=$(npu_us "$bld-$tag-tuned")
		[ -n "$d" ] && [ -n "$t" ] || { fail "$bld-$tag: no NPU time to compare"; continue; }
		awk -v d="$d" -v t="$t" -v g="$g" -v n="$bld-$tag" 'BEGIN {
			drop = d - t; share = g > 0 ? drop / g * 100 : 0
			printf "%s: NPU time %.1f -> %.1f us (modeled): drop %.1f us = %.0f%% of the gain tune reports (%.1f us): %s\n",
				n, d, t, drop, share, g, (share >= 80 ? "met (>= 80%)" : "MISSED (< 80%)")
			exit share >= 80 ? 0 : 1 }' || fail "$bld-$tag: the tuned NPU time drops by less than 80% of tune's gain"
	done
	# rocket gives each core's fd its own NPU address space, so the device layer keeps
	# a copy of every buffer per core file (src/dev/rocket.h): said when it misses.
	why=
	case $dev in *rocket*) why=" (rocket: a copy of every NPU buffer per core fd)" ;; esac
	for t in default tuned; do
		name=exec-$tag-$t
		awk -v r="$(rss "$name")" -v c="$(rss cpu)" -v m="$MODEL_KIB" -v n="$name" -v why="$why" 'BEGIN {
			limit = c + 1.15 * m
			printf "%s: peak RSS %d KiB <= CPU %d + 1.15 x model %d = %d KiB: %s\n", n, r, c, m, limit, (r <= limit ? "met" : "MISSED" why)
			exit r <= limit ? 0 : 1 }' || fail "$name: peak RSS above the CPU backend's + 1.15 x the model"
	done
done
if [ $FAILED = 0 ]; then echo "test-llama.sh: passed"; else echo "test-llama.sh: FAILED"; fi
exit $FAILED
