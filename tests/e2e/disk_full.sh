#!/bin/sh
# Disk full while writing results: the message names the file, the exit code is 2, no
# partial output file remains (the atomic write's temporary is removed), and a device
# such as /dev/full is written in place, never replaced by a regular file. The tune
# cache keeps its complete records; the next run drops a partial last line and resumes.
# A tiny tmpfs needs root; without it those checks are skipped.
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh

expect_exit 2 "run -o /dev/full exits 2" -- \
	"$RKNN_BENCH" run --device cpu --shape 1x64x64 --iters 1 --warmup 0 -o /dev/full
expect_grep "cannot write '/dev/full': No space left on device" "$TMP/err" \
	"run -o /dev/full names the file and the reason"
if [ -c /dev/full ]; then ok "/dev/full is still a device"; else not_ok "/dev/full was replaced"; fi

FULL=$TMP/full
if [ "$(id -u)" -ne 0 ] || ! mkdir "$FULL" || ! mount -t tmpfs -o size=16k tmpfs "$FULL" 2>/dev/null; then
	ok "# SKIP a full filesystem needs root to mount a tmpfs"
	exit 0
fi
trap 'umount "$FULL" 2>/dev/null; rm -rf "$TMP"' EXIT
# 12 KiB of 16 KiB used: a report of three shapes with 50 samples each does not fit
dd if=/dev/zero of="$FULL/filler" bs=4096 count=3 2>/dev/null

expect_exit 2 "run -o on a full filesystem exits 2" -- "$RKNN_BENCH" run --device sim \
	--shape 1x64x64 --shape 2x64x64 --shape 3x64x64 --iters 50 --warmup 0 -o "$FULL/out.json"
expect_grep "cannot write '$FULL/out.json': No space left on device" "$TMP/err" \
	"run names the file and the reason"
left=$(find "$FULL" -name '*out.json*' | head -1)
if [ -z "$left" ]; then ok "run leaves no partial file"; else not_ok "run left '$left'"; fi

# tune: the cache next to the output fills up first
expect_exit 2 "tune on a full filesystem exits 2" -- "$RKNN_BENCH" tune --device sim \
	--shape 1x64x64 --top 1 --quiet -o "$FULL/t.json"
expect_grep "cannot write cache '$FULL/t.json.cache.jsonl': No space left on device" "$TMP/err" \
	"tune names the cache file and the reason"
if [ ! -e "$FULL/t.json" ]; then ok "tune writes no tuned JSON"; else not_ok "tune wrote t.json"; fi
cp "$FULL/t.json.cache.jsonl" "$TMP/resume.jsonl"
expect_exit 0 "tune resumes from the cache the full disk cut short" -- "$RKNN_BENCH" tune \
	--device sim --shape 1x64x64 --top 1 --quiet -o "$TMP/t.json" --cache "$TMP/resume.jsonl"

# tune: the cache elsewhere, the tuned JSON on the full filesystem
expect_exit 2 "tune -o on a full filesystem exits 2" -- "$RKNN_BENCH" tune --device sim \
	--shape 1x64x64 --top 1 --quiet -o "$FULL/t.json" --cache "$TMP/resume.jsonl"
expect_grep "cannot write '$FULL/t.json': No space left on device" "$TMP/err" \
	"tune names the output file and the reason"
left=$(find "$FULL" -name '*t.json' -o -name '.t.json.*' | head -1)
if [ -z "$left" ]; then ok "tune leaves no partial tuned JSON"; else not_ok "tune left '$left'"; fi
