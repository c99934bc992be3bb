#!/bin/sh
# The unmodified binary on a fake device node (build/tests/libfakenode.so): the host
# transport, libdrm, the ioctl numbers and struct layouts as on a board; rocket's fd per
# core and PRIME; device discovery and its messages; no leak over 10,000 submits.
. tests/e2e/lib.sh
BUILD=${BUILD:-build}
FAKE=$(pwd)/$BUILD/tests/libfakenode.so
DEMO=$BUILD/tests/backend-demo
RKNPU=/dev/dri/card1
# ASan must come first in a sanitized binary's library list; the preload comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export RKNN_BENCH_DEVROOT="$TMP/nodev" # this machine's /dev never takes part

# fake NODES -- COMMAND...: runs COMMAND with the fake nodes NODES (RKNN_BENCH_FAKENODE)
fake() {
	nodes=$1
	shift 2
	(
		export RKNN_BENCH_FAKENODE="$nodes"
		preload "$FAKE" "$@"
	)
}
json() { "$JSONCHECK" "$1" "$2" 2>&1; }
expect_json() { # FILE PATH WANTED DESCRIPTION
	got=$(json "$1" "$2")
	[ "$got" = "$3" ] && ok "$4" || not_ok "$4" "$2 is '$got', wanted '$3'"
}

# --- run, tune and the ioctl numbers a board sees, per driver ----------------------
cat >"$TMP/space.json" <<'EOF'
{"mask": ["0x1", "0x7"], "split": ["n"], "weights": ["even"], "align": [16],
 "banks": ["auto"], "kslice": ["auto"], "launch": ["fences", "threads"]}
EOF

# driver_tests DRIVER NODE NAME:IOCTL...: run and tune with --device DRIVER:NODE on a fake
# node of kind DRIVER; strace shows each IOCTL number (npu-facts §d).
driver_tests() {
	drv=$1
	node=$2
	shift 2
	expect_exit 0 "run --device $drv:$node" -- fake "$node=$drv" -- \
		"$RKNN_BENCH" run --device $drv:$node --shape 4x64x16 --shape 32x256x64 \
		--iters 3 --warmup 1 --format json -o "$TMP/run.json"
	expect_json "$TMP/run.json" results.0.device $drv "$drv run: the $drv engine ran"
	expect_json "$TMP/run.json" results.0.modeled false "$drv run: times measured, not modeled"
	expect_json "$TMP/run.json" results.0.verify.status verified "$drv run: 4x64x16 verified"
	expect_json "$TMP/run.json" results.1.verify.status verified "$drv run: 32x256x64 verified"
	expect_exit 0 "tune --device $drv:$node" -- fake "$node=$drv" -- \
		"$RKNN_BENCH" tune --device $drv:$node --shape 16x256x64 --space "$TMP/space.json" \
		--top 4 --iters 2 --warmup 0 --quiet -o "$TMP/tuned-$drv.json"
	expect_json "$TMP/tuned-$drv.json" pairs.0.measured.device $drv "$drv tune: measured on $drv"
	expect_json "$TMP/tuned-$drv.json" pairs.0.measured.verify verified "$drv tune: verified"
	expect_exit 0 "$drv: backend-demo runs the tuned file through the executor" -- \
		fake "$node=$drv" -- built "$DEMO" "$TMP/tuned-$drv.json" --device $drv:$node
	expect_grep "^device $drv, 1 tuned pairs" "$TMP/out" "$drv: the executor opened $drv (measured)"
	expect_grep "^1 verified, 0 failed$" "$TMP/out" "$drv: backend-demo verified the pair"
	if [ -n "${RUNNER:-}" ]; then
		ok "$drv: strace shows the ioctl numbers # SKIP under $RUNNER strace sees the" \
			"emulator, which does not forward ioctls it does not know"
		return
	fi
	if ! command -v strace >/dev/null 2>&1; then
		not_ok "$drv: strace shows the ioctl numbers" \
			"strace is not installed (apt-get install strace)"
		return
	fi
	fake "$node=$drv" -- strace -f -e trace=ioctl -e raw=ioctl -o "$TMP/strace.txt" \
		"$RKNN_BENCH" run --device $drv:$node --shape 4x64x16 --iters 1 --warmup 0 \
		>/dev/null 2>&1
	for io in "$@"; do
		expect_grep "ioctl\(0x[0-9a-f]+, ${io#*:}," "$TMP/strace.txt" \
			"$drv: strace shows ${io%%:*} as ${io#*:}"
	done
}

driver_tests rknpu $RKNPU VERSION:0xc0406400 ACTION:0xc0086440 SUBMIT:0xc0686441 \
	MEM_CREATE:0xc0306442 MEM_MAP:0xc0106443 MEM_DESTROY:0xc0106444 MEM_SYNC:0xc0206445 \
	SYNC_IOC_FILE_INFO:0xc0383e04
expect_json "$TMP/run.json" results.0.config.driver_version 908 "rknpu: GET_DRV_VERSION 0.9.8"
expect_json "$TMP/tuned-rknpu.json" pairs.0.measured.configs_failed 0 "rknpu tune: no config failed"
expect_exit 0 "rknpu --launch threads (blocking submits from 3 threads)" -- \
	fake "$RKNPU=rknpu" -- "$RKNN_BENCH" run --device rknpu:$RKNPU --shape 64x256x64 \
	--launch threads --config mask=0x7 --iters 5 --warmup 1 --format json -o "$TMP/thr.json"
expect_json "$TMP/thr.json" results.0.verify.status verified "threads: verified"
expect_json "$TMP/thr.json" results.0.config.launch threads "threads: launch mode"

# A job that never finishes (a DMA outside every buffer, past the validator): its fence
# signals an error.
expect_exit 3 "rknpu: a faulting job exits 3" -- fake "$RKNPU=rknpu" -- env RKNN_BENCH_DEBUG=fault_dma \
	"$RKNN_BENCH" run --device rknpu:$RKNPU --shape 4x64x16 --iters 1 --warmup 0 \
	--unsafe-skip-validation
expect_grep "waiting for NPU fence [0-9]+ failed: Connection timed out" "$TMP/err" \
	"rknpu: the fence's error reaches the driver"

# The mainline driver (npu-facts §d.2).
driver_tests rocket /dev/accel/accel0 VERSION:0xc0406400 CREATE_BO:0xc0186440 \
	SUBMIT:0x40186441 PREP_BO:0x40106442 FINI_BO:0x40086443

# One fd per core (rocket runs one fd's jobs one after another): a plan on three cores
# submits on three fds, all closed at exit.
ROCKET=/dev/accel/accel0
expect_exit 0 "rocket: a plan on three cores" -- fake "$ROCKET=rocket" -- \
	env RKNN_BENCH_FAKENODE_STATS="$TMP/rstats.txt" "$RKNN_BENCH" run --device rocket:$ROCKET \
	--shape 32x256x64 --config mask=0x7 --iters 2 --warmup 0 --format json -o "$TMP/r3.json"
expect_json "$TMP/r3.json" results.0.verify.status verified "rocket: three cores verified"
for what in files dma-bufs mappings; do
	expect_grep "^open $what 0\$" "$TMP/rstats.txt" "rocket: no $what left open"
done
if [ -z "${RUNNER:-}" ] && command -v strace >/dev/null 2>&1; then
	fake "$ROCKET=rocket" -- strace -f -e trace=ioctl -e raw=ioctl -o "$TMP/rstrace.txt" \
		"$RKNN_BENCH" run --device rocket:$ROCKET --shape 32x256x64 --config mask=0x7 \
		--iters 1 --warmup 0 >/dev/null 2>&1
	fds=$(sed -n 's/.*ioctl(\(0x[0-9a-f]*\), 0x40186441,.*/\1/p' "$TMP/rstrace.txt" | sort -u |
		wc -l)
	[ "$fds" -eq 3 ] && ok "rocket: strace shows SUBMIT on three fds" ||
		not_ok "rocket: strace shows SUBMIT on three fds" "on $fds fds"
else
	ok "rocket: strace shows SUBMIT on three fds # SKIP no strace, or under a RUNNER"
fi

# PRIME between two fds of one node: the same memory, no NPU address in the importer.
PROBE=$BUILD/tests/prime-probe
probe() {
	RKNN_BENCH_FAKENODE_STATS="$TMP/pstats.txt"
	export RKNN_BENCH_FAKENODE_STATS
	fake "$ROCKET=rocket" -- built "$PROBE" $ROCKET
	rc=$?
	unset RKNN_BENCH_FAKENODE_STATS
	return $rc
}
expect_exit 0 "prime-probe on the fake rocket node" -- probe
expect_grep "^same memory through both fds: yes\$" "$TMP/out" "PRIME: one memory behind both fds"
expect_grep "^open dma-bufs 0\$" "$TMP/pstats.txt" "PRIME: the dma-buf is closed"
if [ -z "${RUNNER:-}" ] && command -v strace >/dev/null 2>&1; then
	fake "$ROCKET=rocket" -- strace -f -e trace=ioctl -e raw=ioctl -o "$TMP/pstrace.txt" \
		"$PROBE" $ROCKET >/dev/null 2>&1
	expect_grep "ioctl\(0x[0-9a-f]+, 0xc00c642d," "$TMP/pstrace.txt" \
		"PRIME: strace shows PRIME_HANDLE_TO_FD as 0xc00c642d"
	expect_grep "ioctl\(0x[0-9a-f]+, 0xc00c642e," "$TMP/pstrace.txt" \
		"PRIME: strace shows PRIME_FD_TO_HANDLE as 0xc00c642e"
else
	ok "PRIME: strace shows the PRIME ioctls # SKIP no strace, or under a RUNNER"
fi

# --- discovery ------------------------------------------------------------------------
mkdir -p "$TMP/dev/dri" "$TMP/dev/accel"
: >"$TMP/dev/dri/card0"
: >"$TMP/dev/dri/card1"
: >"$TMP/dev/dri/renderD128"
BOARD="$TMP/dev/dri/card0=rknpu:name=rockchip,$TMP/dev/dri/card1=rknpu"
BOARD="$BOARD,$TMP/dev/dri/renderD128=rknpu:name=panfrost"
export RKNN_BENCH_DEVROOT="$TMP/dev"
expect_exit 0 "auto finds the rknpu node among a display and a GPU node" -- fake "$BOARD" -- \
	"$RKNN_BENCH" run --shape 4x64x16 --iters 1 --warmup 0 --format json
cp "$TMP/out" "$TMP/auto.json"
expect_json "$TMP/auto.json" results.0.device rknpu "auto: the rknpu engine"
expect_json "$TMP/auto.json" results.0.verify.status verified "auto: verified"
expect_exit 0 "info (auto) on the fake node" -- fake "$BOARD" -- "$RKNN_BENCH" info
expect_grep "^  node +$TMP/dev/dri/card1\$" "$TMP/out" "info: the discovered node"
expect_grep '^  drm driver +rknpu 0\.9\.8 \(20240828, RKNPU driver\)$' "$TMP/out" \
	"info: the fake device's DRM version"
expect_grep '^  driver version +0\.9\.8$' "$TMP/out" "info: GET_DRV_VERSION"
if grep -q emulat "$TMP/out"; then not_ok "info: not labelled emulated" "$(cat "$TMP/out")"
else ok "info: not labelled emulated"; fi
expect_exit 0 "info --device rknpu (discovered)" -- fake "$BOARD" -- \
	"$RKNN_BENCH" info --device rknpu --format json
expect_json "$TMP/out" npu.version 0.9.8 "info json: version"
expect_json "$TMP/out" npu.emulated false "info json: not emulated"

# auto on a mainline board: the rocket accel node.
mkdir -p "$TMP/rocket/accel"
: >"$TMP/rocket/accel/accel0"
expect_exit 0 "auto finds the rocket accel node" -- \
	fake "$TMP/rocket/accel/accel0=rocket" -- env RKNN_BENCH_DEVROOT="$TMP/rocket" \
	"$RKNN_BENCH" run --shape 4x64x16 --iters 1 --warmup 0 --format json
cp "$TMP/out" "$TMP/auto-rocket.json"
expect_json "$TMP/auto-rocket.json" results.0.device rocket "auto: the rocket engine"
expect_json "$TMP/auto-rocket.json" results.0.verify.status verified "auto on rocket: verified"

# No NPU: auto says so once and uses the emulator; asking for the NPU is an error.
export RKNN_BENCH_DEVROOT="$TMP/nodev"
expect_exit 0 "info without an NPU" -- "$RKNN_BENCH" info
expect_grep "no NPU device node found under $TMP/nodev/dri or $TMP/nodev/accel: using the emulator" \
	"$TMP/err" "no NPU: said plainly"
expect_grep '^  node +\(emulator\)$' "$TMP/out" "no NPU: lists the emulator"
expect_exit 0 "run without an NPU uses the emulator" -- \
	"$RKNN_BENCH" run --shape 4x64x16 --shape 8x64x16 --iters 1 --warmup 0
[ "$(grep -c 'no NPU device node found' "$TMP/err")" = 1 ] && ok "no NPU: said once" ||
	not_ok "no NPU: said once" "$(cat "$TMP/err")"
expect_exit 3 "run --device rknpu without a node exits 3" -- \
	"$RKNN_BENCH" run --device rknpu --shape 4x64x16
expect_grep 'no NPU device node found \(no rknpu node .*is the rknpu kernel module loaded\? \(modprobe rknpu' \
	"$TMP/err" "no node: which module to load"

# --- what goes wrong on a board: exit 3 and what to do --------------------------------
# device_error NODE_SPEC COMMAND PATTERN DESCRIPTION
device_error() {
	expect_exit 3 "$4: $2 exits 3" -- fake "$RKNPU=$1" -- \
		"$RKNN_BENCH" $2 --device rknpu:$RKNPU --shape 4x64x16 --iters 1 --warmup 0
	expect_grep "$3" "$TMP/err" "$4: the message says what to do"
}
device_error rknpu:eacces run "cannot open '$RKNPU': permission denied: add the user to the 'render' or 'video' group .* or run with sudo" "permission denied"
device_error rknpu:ebusy run "cannot open '$RKNPU': device busy: another process holds the NPU \(see 'fuser -v $RKNPU'\)" "busy"
device_error rknpu:enoent tune "cannot open '$RKNPU': no such device node: is the rknpu kernel module loaded\? \(modprobe rknpu" "missing node"
device_error rknpu:name=rockchip run "'$RKNPU' is driven by 'rockchip', not 'rknpu'" "wrong driver"
device_error rknpu:version=1.0.0 tune "rknpu driver version 1\.0\.0 is not one rknn-bench knows" "unknown version"
expect_exit 3 "info on a node it may not open exits 3" -- fake "$RKNPU=rknpu:eacces" -- \
	"$RKNN_BENCH" info --device rknpu:$RKNPU
expect_grep "permission denied" "$TMP/err" "info: permission message"
if getent group video >/dev/null 2>&1; then
	: >"$TMP/video-node"
	chgrp video "$TMP/video-node"
	expect_exit 3 "a node owned by 'video'" -- fake "$TMP/video-node=rknpu:eacces" -- \
		"$RKNN_BENCH" info --device "rknpu:$TMP/video-node"
	expect_grep "add the user to the 'video' group \(sudo usermod -aG video" "$TMP/err" \
		"permission: names the node's group"
fi
# auto on a board whose NPU node cannot be opened: the emulator, and why.
mkdir -p "$TMP/busy/dri"
: >"$TMP/busy/dri/card1"
expect_exit 0 "auto with a busy NPU node falls back" -- \
	fake "$TMP/busy/dri/card1=rknpu:ebusy" -- env RKNN_BENCH_DEVROOT="$TMP/busy" \
	"$RKNN_BENCH" run --shape 4x64x16 --iters 1 --warmup 0
expect_grep "device busy.*\(using the emulator meanwhile\)" "$TMP/err" "auto: names the busy node"

# --- no leak over 10,000 submits ------------------------------------------------------
# One submit per sample (mask 0x1, fences); the preload counts the submits it served and
# what is left open at exit. Valgrind on a plain build, LeakSanitizer on SANITIZE=1.
leak_run() {
	fake "$RKNPU=rknpu" -- env RKNN_BENCH_FAKENODE_STATS="$TMP/stats.txt" "$@" \
		"$RKNN_BENCH" run --device rknpu:$RKNPU --shape 4x64x16 --config mask=0x1 \
		--iters 10000 --warmup 0 >"$TMP/out" 2>"$TMP/err"
}
leak_desc="10,000 submits: no leak"
case $BUILD in
*san*) leak_run
	rc=$? ;;
*) if [ -n "${RUNNER:-}" ]; then
	# valgrind would check the emulator, not the program: the counts below still hold.
	leak_desc="10,000 submits ran (valgrind would check $RUNNER, not the program)"
	leak_run
	rc=$?
elif command -v valgrind >/dev/null 2>&1; then
	leak_run valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--error-exitcode=9
	rc=$?
else
	rc=127
	echo "valgrind is not installed (apt-get install valgrind)" >"$TMP/err"
fi ;;
esac
[ "$rc" = 0 ] && ok "$leak_desc" || not_ok "$leak_desc" "exit $rc" \
	"$(head -c 1500 "$TMP/err")"
submits=$(awk '$2 == "0xc0686441" {print $3}' "$TMP/stats.txt" 2>/dev/null)
[ "${submits:-0}" -ge 10000 ] && ok "10,000 submits: $submits served" ||
	not_ok "10,000 submits served" "got '${submits}'"
for what in files fences mappings; do
	expect_grep "^open $what 0\$" "$TMP/stats.txt" "10,000 submits: no $what left open"
done
echo "1..$n"
