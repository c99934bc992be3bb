# scripts/deps-check.sh: the real tree keeps its floors; on synthetic trees a
# downward include passes, an upward include, a folder cycle and a folder without a
# floor fail, each named with file and line.
. tests/e2e/lib.sh
DEPS=scripts/deps-check.sh

expect_exit 0 "the tree keeps its floors (make deps-check)" -- sh $DEPS .

# tree DIR: a small src/ whose floors are right: npu -> hw -> core.
tree() {
	mkdir -p "$1/src/core" "$1/src/hw" "$1/src/npu"
	printf '#include "core/error.h"\n' >"$1/src/hw/regs.c"
	printf '#include "hw/regs.h"\n#include "core/error.h"\n#include "npu/plan.h"\n' >"$1/src/npu/plan.c"
	printf '#include <stdio.h>\n#include "rknn_bench/shape.h"\n' >"$1/src/core/error.c"
}

tree "$TMP/good"
expect_exit 0 "downward includes pass" -- sh $DEPS "$TMP/good"

tree "$TMP/up"
printf '/* x */\n#include "npu/plan.h"\n' >"$TMP/up/src/core/shape.c"
expect_exit 1 "an upward include fails" -- sh $DEPS "$TMP/up"
expect_grep 'src/core/shape.c:2: core \(floor 1\) includes npu \(floor [0-9]+\), a higher floor' \
	"$TMP/out" "names the file, the line and both floors"

tree "$TMP/cycle"
printf '#include "npu/plan.h"\n' >"$TMP/cycle/src/hw/conv.h"
expect_exit 1 "a planted folder cycle fails" -- sh $DEPS "$TMP/cycle"
expect_grep 'folder cycle: (hw -> npu -> hw|npu -> hw -> npu)' "$TMP/out" "names the cycle"

tree "$TMP/new"
mkdir -p "$TMP/new/src/extra"
printf '#include "core/error.h"\n' >"$TMP/new/src/extra/x.c"
expect_exit 1 "a folder without a floor fails" -- sh $DEPS "$TMP/new"
expect_grep 'folder extra has no floor' "$TMP/out" "says to give it a floor"
