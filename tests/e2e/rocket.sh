# The mainline rocket path end to end on the emulated rocket kernel (--device sim:rocket):
# every config of the seed shapes file verifies, tune writes a tuned JSON (recording the
# launch mode rocket lacks as failed), the vendor program variant fails naming DPU_RDMA,
# and a job that hangs once is retried after the kernel's timeout and core reset; one fd
# per core runs a plan's cores at once.
. tests/e2e/lib.sh
RUN="$RKNN_BENCH run --iters 1 --warmup 0"

expect_exit 0 "run every config of mat_kernel_size.json on sim:rocket" -- \
	$RUN --device sim:rocket configs/mat_kernel_size.json -o "$TMP/report.json"
count=$("$JSONCHECK" "$TMP/report.json" 'results.#')
verified=0
i=0
while [ "$i" -lt "${count:-0}" ]; do
	[ "$("$JSONCHECK" "$TMP/report.json" "results.$i.verify.status")" = verified ] &&
		verified=$((verified + 1))
	i=$((i + 1))
done
if [ "${count:-0}" -gt 0 ] && [ "$verified" -eq "$count" ]; then
	ok "all $count results verified on sim:rocket"
else
	not_ok "all results verified on sim:rocket" "$verified of ${count:-?} verified"
fi
plan=$("$JSONCHECK" "$TMP/report.json" results.0.config.plan)
case "$plan" in *mainline=1*) ok "the report's plan says mainline=1" ;;
*) not_ok "the report's plan says mainline=1" "plan: $plan" ;; esac
# The vendor emulator runs the same shapes with the vendor variant.
expect_exit 0 "run on sim (vendor kernel) for comparison" -- \
	$RUN --device sim --shape 64x256x128 -o "$TMP/vendor.json"
plan=$("$JSONCHECK" "$TMP/vendor.json" results.0.config.plan)
case "$plan" in *mainline=0*) ok "the vendor plan says mainline=0" ;;
*) not_ok "the vendor plan says mainline=0" "plan: $plan" ;; esac

expect_exit 0 "threads launch on sim:rocket" -- \
	$RUN --device sim:rocket --shape 96x512x256 --launch threads
expect_grep 'verified' "$TMP/out" "threads launch verifies"
expect_exit 2 "multicore launch is refused on rocket" -- \
	$RUN --device sim:rocket --shape 64x256x128 --launch multicore
expect_grep "rocket has none: use fences or threads" "$TMP/err" "multicore refusal says why"

# The vendor program variant (no DPU_RDMA) on rocket: the validator refuses it before
# submit; past the validator it hangs, 500 ms timeout, core reset, one retry, then a
# clear device error and no report.
expect_exit 3 "vendor variant on sim:rocket is refused before submit" -- \
	env RKNN_BENCH_DEBUG=fault_no_rdma $RUN --device sim:rocket --shape 64x256x128
expect_grep 'cannot prepare: task 0 \(core [0-2]\): op-enable 0x[0-9a-f]+ does not run DPU_RDMA' \
	"$TMP/err" "the validator names the task and DPU_RDMA"
expect_exit 3 "vendor variant on sim:rocket past the validator is a device error" -- \
	env RKNN_BENCH_DEBUG=fault_no_rdma $RUN --device sim:rocket --shape 64x256x128 \
	--unsafe-skip-validation -o "$TMP/nordma.json"
expect_grep 'does not run DPU_RDMA' "$TMP/err" "the error names DPU_RDMA"
expect_grep 'job timed out after 500 ms, core reset' "$TMP/err" "the kernel reset the core"
expect_grep 'after a reset and one retry' "$TMP/err" "it was retried once"
if [ -e "$TMP/nordma.json" ]; then not_ok "no report after a device error"; else
	ok "no report after a device error"; fi

# A job that hangs once: timeout, reset, one retry, and the result verifies.
for dev in sim:rocket sim; do
	expect_exit 0 "fault_hang_once on $dev is retried and verifies" -- \
		env RKNN_BENCH_DEBUG=fault_hang_once $RUN --device "$dev" --shape 64x256x128
	expect_grep 'verified' "$TMP/out" "fault_hang_once on $dev: verified"
done

# One task per kick: rocket never follows a chain's tail, so a tail without its address
# (a stalled chain on the vendor kernel) does no harm; and there are no core masks.
# The validator refuses these programs first: skipping it shows the kernels' own behaviour.
UNSAFE=--unsafe-skip-validation
expect_exit 0 "fault_tail is harmless on rocket (one task per kick)" -- \
	env RKNN_BENCH_DEBUG=fault_tail $RUN --device sim:rocket --shape 1x2048x8192 $UNSAFE
expect_exit 3 "fault_tail stalls the vendor kernel's chain" -- \
	env RKNN_BENCH_DEBUG=fault_tail $RUN --device sim --shape 1x2048x8192 $UNSAFE
expect_exit 3 "fault_dma on rocket: timed out, reported with the kernel's reason" -- \
	env RKNN_BENCH_DEBUG=fault_dma $RUN --device sim:rocket --shape 1x2048x8192 $UNSAFE
expect_grep 'iommu fault: task 0: CNA.FEATURE_DATA_ADDR' "$TMP/err" "fault_dma names the fault"

expect_exit 0 "tune on sim:rocket" -- \
	$RKNN_BENCH tune --device sim:rocket --shape 64x256x128 --top 40 --iters 1 --warmup 0 \
	-o "$TMP/tuned.json"
tuned=$("$JSONCHECK" "$TMP/tuned.json" pairs.0.tuned.config)
case "$tuned" in *mainline=1*) ok "tuned config is the mainline variant" ;;
*) not_ok "tuned config is the mainline variant" "config: $tuned" ;; esac
expect_grep '"status":"failed".*rocket has none' "$TMP/tuned.json.cache.jsonl" \
	"tune records the configs rocket cannot run and moves on"

# One fd per core: the kernel runs one fd's jobs one after another (one scheduler entity
# per fd), so the three cores of a plan run at once only from three fds. ffn_up's decode
# matmul on three cores is more than twice as fast as on one (modeled).
for mask in 0x1 0x7; do
	expect_exit 0 "1x2048x8192 on sim:rocket, core mask $mask" -- \
		$RUN --device sim:rocket --shape 1x2048x8192 --core-mask $mask -o "$TMP/cores-$mask.json"
done
one=$("$JSONCHECK" "$TMP/cores-0x1.json" results.0.stats.median_us)
three=$("$JSONCHECK" "$TMP/cores-0x7.json" results.0.stats.median_us)
if awk -v a="${one:-0}" -v b="${three:-0}" 'BEGIN { exit !(b > 0 && a > 2 * b) }'; then
	ok "three cores more than twice as fast as one ($one us vs $three us, modeled)"
else
	not_ok "three cores more than twice as fast as one" "one core: $one us, three: $three us"
fi
expect_exit 0 "the threads launch runs the three cores at once too" -- \
	$RUN --device sim:rocket --shape 1x2048x8192 --core-mask 0x7 --launch threads \
	-o "$TMP/cores-threads.json"
threads=$("$JSONCHECK" "$TMP/cores-threads.json" results.0.stats.median_us)
if awk -v a="${one:-0}" -v b="${threads:-0}" 'BEGIN { exit !(b > 0 && a > 2 * b) }'; then
	ok "threads: three cores more than twice as fast as one ($threads us)"
else
	not_ok "threads: three cores more than twice as fast as one" "$threads us vs $one us"
fi

# Device names.
expect_exit 0 "sim:rknpu is the vendor emulator" -- $RUN --device sim:rknpu --shape 64x256x128
expect_grep 'sim \(modeled\)' "$TMP/out" "sim:rknpu reports as sim"
expect_exit 3 "rocket on a node that is not rocket" -- $RUN --device rocket:/dev/null --shape 64x256x128
expect_grep "rocket:/dev/null|/dev/null|DRM_IOCTL_VERSION" "$TMP/err" "the error names the node or ioctl"
expect_exit 3 "rocket on a missing node" -- $RUN --device rocket:/nonexistent/accel0 --shape 64x256x128
expect_grep "is the rocket kernel module loaded" "$TMP/err" "the missing-node error is about rocket"
expect_exit 0 "info on sim:rocket" -- $RKNN_BENCH info --device sim:rocket
expect_grep 'drm driver +rocket' "$TMP/out" "info shows the rocket driver"

# The mainline clock and rocket's 500 ms job timeout (issue 32): a mainline plan of
# 4096^3 fp16 on one core models 1.3 s at 200 MHz, so plan cuts it into jobs of at most
# 250 ms and says so; the vendor plan (6000 ms, 1 GHz) is not cut.
expect_exit 0 "plan 4096^3 mainline on one core" -- \
	$RKNN_BENCH plan --shape 4096x4096x4096 --mainline --core-mask 0x1 --tasks 1
expect_grep 'submits split into [0-9]* submits \(from 1\) for rocket.s 500 ms job timeout.*at 200 MHz' \
	"$TMP/out" "plan says it split the rocket job for the timeout at 200 MHz"
expect_exit 0 "plan 4096^3 vendor on one core" -- \
	$RKNN_BENCH plan --shape 4096x4096x4096 --core-mask 0x1 --tasks 1
expect_grep "within half of rknpu's 6000 ms job timeout" "$TMP/out" "the vendor plan is not cut"
# Mainline tiles in fours (issue 32): M padded to a multiple of 4 as rocket-userspace
# takes it; 5x64x64 and the 394-row shape run and verify.
for s in 5x64x64 394x394x394; do
	expect_exit 0 "sim:rocket $s (M padded to a multiple of 4)" -- \
		$RUN --device sim:rocket --shape $s
	expect_grep "verified" "$TMP/out" "sim:rocket $s verified"
done
# On a board the profile follows the NPU clock its kernel set: info reads it from
# devfreq (here a fake sysfs at 600 MHz).
mkdir -p "$TMP/sys/class/devfreq/fdab0000.npu"
echo 600000000 >"$TMP/sys/class/devfreq/fdab0000.npu/cur_freq"
expect_exit 0 "info with the NPU at 600 MHz" -- env RKNN_BENCH_SYSFS="$TMP/sys" \
	$RKNN_BENCH info --device cpu
expect_grep 'hardware profile .* at 600 MHz.*NPU clock 600 MHz read from' "$TMP/out" \
	"info's hardware profile follows the NPU clock the kernel set"
