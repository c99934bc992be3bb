# scripts/deps-check.sh: the real tree keeps its floors, at include and at link level.
# Then a temporary copy of the tree (sources, docs, public headers; the build's objects
# linked in) gets one leak planted at a time and must fail with the leak named: an
# up-call through a public header, a `../` include, a `<>` include, an include and a
# call the may-include column forbids. On small synthetic trees: a downward include
# passes, an upward include, a folder cycle and a folder without a row of the floors
# table fail, and the table of docs/architecture.md is what the script reads.
. tests/e2e/lib.sh
DEPS=scripts/deps-check.sh
OBJ=${BUILD:-build}/obj
CC=${CC:-cc}

expect_exit 0 "the tree keeps its floors, includes and calls (make deps-check)" -- sh $DEPS . "$OBJ"
expect_grep 'no include and no call goes up a floor' "$TMP/out" "says it checked the link level"

# copy NAME: the tree's sources, floors table and public headers under $TMP/NAME, with
# the build's objects of src/ linked in $TMP/NAME/obj/src.
copy() {
	mkdir -p "$TMP/$1/docs" "$TMP/$1/obj"
	cp -r src include "$TMP/$1/"
	cp docs/architecture.md "$TMP/$1/docs/"
	cp -rs "$PWD/$OBJ/src" "$TMP/$1/obj/src"
}

# plant_object NAME FOLDER FILE CODE: compiles CODE as src/FOLDER/FILE.c of copy NAME.
plant_object() {
	printf '%s\n' "$4" >"$TMP/$1/src/$2/$3.c"
	$CC -c -Iinclude -Isrc $(pkg-config --cflags libcjson 2>/dev/null) \
		-o "$TMP/$1/obj/src/$2/$3.o" "$TMP/$1/src/$2/$3.c"
}

copy upcall
plant_object upcall run planted '#include "rknn_bench/tuned.h"
const void *planted(const struct rb_tuned_db *db) { return rb_tuned_lookup(db, 1, 2, 3, RB_DTYPE_FP16, 0, 0); }'
expect_exit 1 "a planted up-call through a public header fails" -- sh $DEPS "$TMP/upcall" "$TMP/upcall/obj"
expect_grep 'src/run/planted.c calls rb_tuned_lookup \(declared in include/rknn_bench/tuned.h\), defined in src/tune/tuned_read.c: run \(floor [0-9]+\) calls tune \(floor [0-9]+\), a higher floor' \
	"$TMP/out" "names the caller, the function, its public header, its folder and both floors"
expect_exit 0 "without the objects the include level alone passes that copy" -- sh $DEPS "$TMP/upcall"

copy dotdot
printf '#include "../tune/tune.h"\n' >>"$TMP/dotdot/src/run/measure.c"
expect_exit 1 'a planted "../tune/tune.h" include fails' -- sh $DEPS "$TMP/dotdot"
expect_grep 'src/run/measure.c:[0-9]+: run \(floor [0-9]+\) includes tune \(floor [0-9]+\), a higher floor' \
	"$TMP/out" "the ../ include is resolved to its folder"

copy angle
printf '#include <tune/tune.h>\n' >>"$TMP/angle/src/npu/plan.c"
expect_exit 1 "a planted <tune/tune.h> include fails" -- sh $DEPS "$TMP/angle"
expect_grep 'src/npu/plan.c:[0-9]+: npu \(floor [0-9]+\) includes tune \(floor [0-9]+\), a higher floor' \
	"$TMP/out" "the <> include is read as a folder include"

copy mayinc
printf '#include "sim/sim.h"\n' >>"$TMP/mayinc/src/dev/info.h"
printf '#include "tune/tune.h"\n' >>"$TMP/mayinc/src/shim/shim.c"
expect_exit 1 "includes the may-include column forbids fail" -- sh $DEPS "$TMP/mayinc"
expect_grep 'src/dev/info.h:[0-9]+: includes sim/sim.h: only dev/transport_sim.c dev/info.c dev/npu_device.c may include sim' \
	"$TMP/out" "a folder named for some files only: another file of it"
expect_grep 'src/shim/shim.c:[0-9]+: includes tune/tune.h: shim may not include tune' \
	"$TMP/out" "a lower floor the column does not name (the shim including tune/)"

copy maycall
plant_object maycall shim planted '#include <stddef.h>
struct rb_tune_space;
void rb_tune_space_default(struct rb_tune_space *s);
void planted(struct rb_tune_space *s) { rb_tune_space_default(s); }'
expect_exit 1 "a call the may-include column forbids fails" -- sh $DEPS "$TMP/maycall" "$TMP/maycall/obj"
expect_grep 'src/shim/planted.c calls rb_tune_space_default, defined in src/tune/space.c: shim may not include tune' \
	"$TMP/out" "a call into tune/ from the shim that no public header declares"

# tree DIR: a small src/ whose floors are right (npu -> hw -> core) and its table.
tree() {
	mkdir -p "$1/src/core" "$1/src/hw" "$1/src/npu" "$1/docs"
	printf '#include "core/error.h"\n' >"$1/src/hw/regs.c"
	printf '#include "hw/regs.h"\n#include "core/error.h"\n#include "npu/plan.h"\n' >"$1/src/npu/plan.c"
	printf '#include <stdio.h>\n#include "rknn_bench/shape.h"\n' >"$1/src/core/error.c"
	printf '# x\n\n## The floors\n\n| floor | folder | owns | may include |\n|---|---|---|---|\n' >"$1/docs/architecture.md"
	printf '| 1 | `src/core/` | basics | libc |\n| 2 | `src/hw/` | facts | core |\n' >>"$1/docs/architecture.md"
	printf '| 3 | `src/npu/` | planner | core, hw |\n\n## Next\n' >>"$1/docs/architecture.md"
}

tree "$TMP/good"
expect_exit 0 "downward includes pass" -- sh $DEPS "$TMP/good"
expect_grep '\(core hw npu\)' "$TMP/out" "the floors come from the table of docs/architecture.md"

tree "$TMP/up"
printf '/* x */\n#include "npu/plan.h"\n' >"$TMP/up/src/core/shape.c"
expect_exit 1 "an upward include fails" -- sh $DEPS "$TMP/up"
expect_grep 'src/core/shape.c:2: core \(floor 1\) includes npu \(floor 3\), a higher floor' \
	"$TMP/out" "names the file, the line and both floors"

tree "$TMP/cycle"
printf '#include "npu/plan.h"\n' >"$TMP/cycle/src/hw/conv.h"
expect_exit 1 "a planted folder cycle fails" -- sh $DEPS "$TMP/cycle"
expect_grep 'folder cycle: (hw -> npu -> hw|npu -> hw -> npu)' "$TMP/out" "names the cycle"

tree "$TMP/new"
mkdir -p "$TMP/new/src/extra"
printf '#include "core/error.h"\n' >"$TMP/new/src/extra/x.c"
expect_exit 1 "a folder without a floor fails" -- sh $DEPS "$TMP/new"
expect_grep 'folder extra has no floor' "$TMP/out" "says to give it a row"

tree "$TMP/norow"
sed -i '/src\/hw\//d' "$TMP/norow/docs/architecture.md"
expect_exit 1 "a folder whose row leaves the table fails" -- sh $DEPS "$TMP/norow"
expect_grep 'folder hw has no floor' "$TMP/out" "the table is the only list of floors"

tree "$TMP/notallowed"
sed -i 's/| core, hw |/| core |/' "$TMP/notallowed/docs/architecture.md"
expect_exit 1 "an include of a lower floor the column does not name fails" -- sh $DEPS "$TMP/notallowed"
expect_grep 'src/npu/plan.c:1: includes hw/regs.h: npu may not include hw' "$TMP/out" \
	"names the include and the column"
