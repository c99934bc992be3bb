#!/bin/sh
# make install into a temporary DESTDIR with PREFIX=/usr, then the tree used from outside
# the checkout as a backend and a user would: tests/consumer built with pkg-config alone,
# the man pages opened with man -l, the bash completion loaded, the installed binary
# running on the installed configs; the tree moved elsewhere still works; make uninstall
# leaves no file behind. The build is the one under test (make check passes SANITIZE,
# CROSS and RUNNER), so make install only generates what is not built yet.
. tests/e2e/lib.sh
TOP=$PWD
DEST=$TMP/dest
CROSS=${CROSS:-}
SANITIZE=${SANITIZE:-}
case $JSONCHECK in /*) ;; *) JSONCHECK=$TOP/$JSONCHECK ;; esac

# make_tree TARGET [VAR=VALUE...]: make TARGET of this build into $DEST (or DESTDIR=...
# given), output in $TMP/make.log. The outer make's MAKEFLAGS (jobserver, variables) are
# not this make's.
make_tree() {
	target=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$TOP" "$target" \
		SANITIZE="$SANITIZE" CROSS="$CROSS" RUNNER="$RUNNER" DESTDIR="$DEST" PREFIX=/usr \
		"$@" >"$TMP/make.log" 2>&1
}

if make_tree install; then ok "make install DESTDIR=... PREFIX=/usr"; else
	not_ok "make install DESTDIR=... PREFIX=/usr" "$(tail -n 15 "$TMP/make.log")"
fi
USR=$DEST/usr
BIN=$USR/bin/rknn-bench
missing=
for f in bin/rknn-bench lib/librknn-bench.a lib/librknn-bench_pic.a \
	lib/cmake/rknn-bench/rknn-bench-config.cmake include/rknn_bench/tuned.h \
	include/rknn_bench/matmul.h include/rknn_bench/shape.h lib/pkgconfig/rknn-bench.pc \
	lib/rknn-bench/librknnrt.so share/man/man1/rknn-bench.1 share/man/man1/rknn-bench-run.1 \
	share/bash-completion/completions/rknn-bench share/zsh/site-functions/_rknn-bench \
	share/rknn-bench/mat_kernel_size.json share/rknn-bench/soc/rk3588.json; do
	[ -f "$USR/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "every installed file is there"; else
	not_ok "every installed file is there" "missing:$missing"
fi

# --- a backend: the consumer built against the tree with pkg-config only -------------
if [ -n "$CROSS" ]; then
	CC=${CROSS}gcc
	export PKG_CONFIG_LIBDIR=/usr/lib/${CROSS%-}/pkgconfig:/usr/share/pkgconfig
else
	CC=${CC:-cc}
fi
SANFLAGS=
[ "$SANITIZE" = 1 ] && SANFLAGS="-fsanitize=address,undefined"
# pc_consumer PCDIR OUT LABEL: tests/consumer built with pkg-config alone, from PCDIR.
pc_consumer() {
	flags=$(PKG_CONFIG_PATH=$1 pkg-config --cflags --libs rknn-bench 2>"$TMP/err")
	if [ -n "$flags" ] && $CC -std=c11 $SANFLAGS -o "$2" "$TOP/tests/consumer/consumer.c" \
		$flags 2>"$TMP/err"; then
		ok "$3"
	else
		not_ok "$3" "flags: $flags" "$(head -c 600 "$TMP/err")"
	fi
}
pc_consumer "$USR/lib/pkgconfig" "$TMP/consumer" \
	"the consumer builds with pkg-config --cflags --libs rknn-bench alone"
case $flags in
*"$USR/lib/pkgconfig/../../include"*) ok "rknn-bench.pc points into the DESTDIR tree" ;;
*) not_ok "rknn-bench.pc points into the DESTDIR tree" "flags: $flags" ;;
esac

# A shared library (a llama.cpp backend) links the position-independent archive the .pc
# names, with nothing left undefined.
pic=$(PKG_CONFIG_PATH=$USR/lib/pkgconfig pkg-config --variable=pic_archive rknn-bench 2>/dev/null)
deps=$(pkg-config --libs libcjson libdrm 2>/dev/null)
if [ -f "$pic" ] && $CC -std=c11 $SANFLAGS -shared -fPIC -Wl,--no-undefined -o "$TMP/libbackend.so" \
	-I"$USR/include" "$TOP/tests/consumer/backend_demo.c" "$pic" $deps -lm -pthread 2>"$TMP/err"; then
	ok "a shared library links pkg-config's pic_archive ($pic)"
else
	not_ok "a shared library links pkg-config's pic_archive" "pic_archive: $pic" \
		"$(head -c 600 "$TMP/err")"
fi

# cmake_consumer PREFIX LABEL: a CMake project that finds rknn-bench under PREFIX with
# find_package(CONFIG) alone and links the target into a shared library (a native build
# without sanitizers: the archive's objects carry the build's flags).
cmake_consumer() {
	if ! command -v cmake >/dev/null 2>&1 || [ -n "$CROSS" ] || [ "$SANITIZE" = 1 ]; then
		ok "$2 # SKIP no cmake, or a cross or sanitizer build"
		return
	fi
	rm -rf "$TMP/cmake"
	mkdir -p "$TMP/cmake"
	cat >"$TMP/cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.14)
project(rknn_bench_cmake_user C)
find_package(rknn-bench CONFIG REQUIRED)
add_library(backend SHARED "$TOP/tests/consumer/backend_demo.c")
target_link_libraries(backend PRIVATE rknn-bench::rknn-bench)
target_link_options(backend PRIVATE -Wl,--no-undefined)
CMAKE
	if cmake -S "$TMP/cmake" -B "$TMP/cmake/build" -DCMAKE_PREFIX_PATH="$1" \
		>"$TMP/err" 2>&1 && cmake --build "$TMP/cmake/build" >>"$TMP/err" 2>&1; then
		ok "$2"
	else
		not_ok "$2" "$(tail -c 800 "$TMP/err")"
	fi
}
cmake_consumer "$USR" "a CMake project links rknn-bench::rknn-bench (find_package CONFIG) into a shared library"

# --- a user, outside the checkout ------------------------------------------------------
mkdir "$TMP/elsewhere"
cd "$TMP/elsewhere" || exit 1
expect_exit 0 "the installed binary runs on the installed SoC profile (sim, 1x64x64)" -- \
	built "$BIN" run --device sim --soc soc/rk3588.json --shape 1x64x64 --iters 2 --warmup 0 \
	-o run.json
expect_grep "using the installed $USR/share/rknn-bench/soc/rk3588.json" "$TMP/err" \
	"the note names the installed profile it used"
if [ "$("$JSONCHECK" run.json results.0.verify.status)" = verified ] &&
	[ "$("$JSONCHECK" run.json results.0.modeled)" = true ]; then
	ok "its report: the shape verified, times labelled modeled"
else
	not_ok "its report: the shape verified, times labelled modeled" "$(head -c 600 run.json)"
fi
expect_exit 0 "an installed shapes file by name (plan mat_kernel_size.json)" -- \
	built "$BIN" plan mat_kernel_size.json --format json
expect_grep '"ffn_up-0"' "$TMP/out" "its shapes are the shipped file's"
expect_exit 0 "the README's configs/ path works installed too" -- \
	built "$BIN" tune --device sim --quiet --top 1 --iters 1 --warmup 0 \
	configs/mat_kernel_size.json --list-space
printf '{"pairs": [{"src0": {"row": 1, "col": 64}, "src1": {"row": 64, "col": 32}, "name": "local"}]}\n' \
	>mat_kernel_size.json
expect_exit 0 "a file in the current directory wins over the installed one" -- \
	built "$BIN" plan mat_kernel_size.json --format json
if grep -q '"local"' "$TMP/out" && ! grep -q 'installed' "$TMP/err"; then
	ok "the local file was read, with no note"
else
	not_ok "the local file was read, with no note" "$(head -c 300 "$TMP/err")"
fi
expect_exit 2 "a missing shapes file: exit 2" -- built "$BIN" run --device sim nope.json
expect_grep "cannot open 'nope.json'.*nor in the installed data directory $USR/share/rknn-bench" \
	"$TMP/err" "its message names the data directory searched too"

# The consumer reads a tuned JSON the installed binary wrote.
expect_exit 0 "the installed binary tunes a small shape" -- built "$BIN" tune --device sim \
	--shape 1x64x64 --top 1 --iters 1 --warmup 0 --quiet -o tuned.json
expect_exit 0 "the pkg-config-built consumer looks up every tuned pair" -- \
	built "$TMP/consumer" --every tuned.json
expect_grep "1 pairs found, 0 missed" "$TMP/out" "it found the pair"
cd "$TOP" || exit 1

# --- man pages ---------------------------------------------------------------------------
MAN1=$USR/share/man/man1
commands=$("$RKNN_BENCH" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
	on && $1 != "help" { print $1 }')
nopage=
for c in $commands; do [ -f "$MAN1/rknn-bench-$c.1" ] || nopage="$nopage $c"; done
if [ -z "$nopage" ]; then ok "a man page per command of --help"; else
	not_ok "a man page per command of --help" "no page for:$nopage"
fi
if command -v man >/dev/null 2>&1; then
	MANWIDTH=100 man -P cat -l "$MAN1/rknn-bench-run.1" >"$TMP/run.man" 2>"$TMP/err"
	expect_grep '^SYNOPSIS' "$TMP/run.man" "man -l opens rknn-bench-run.1"
	absent=
	for o in $("$RKNN_BENCH" run --help | grep -E '^ +--' | sed -E 's/^ +(--[a-z-]+).*/\1/'); do
		grep -qe "$o" "$TMP/run.man" || absent="$absent $o"
	done
	if [ -z "$absent" ]; then ok "rknn-bench-run(1) lists every option of run --help"; else
		not_ok "rknn-bench-run(1) lists every option of run --help" "absent:$absent"
	fi
	MANWIDTH=100 man -P cat -l "$MAN1/rknn-bench.1" >"$TMP/top.man" 2>&1
	expect_grep 'rknn-bench-tune\(1\)' "$TMP/top.man" "man -l opens rknn-bench.1, which names the command pages"
else
	not_ok "man -l opens the man pages" "man is not installed (apt-get install man-db)"
fi
if command -v groff >/dev/null 2>&1; then
	for p in "$MAN1"/*.1; do groff -man -Tutf8 -ww -z "$p"; done >"$TMP/lint" 2>&1
	if [ ! -s "$TMP/lint" ]; then ok "groff -ww finds nothing to warn about in any page"; else
		not_ok "groff -ww finds nothing to warn about in any page" "$(head -c 600 "$TMP/lint")"
	fi
fi

# --- completions -------------------------------------------------------------------------
BASHC=$USR/share/bash-completion/completions/rknn-bench
if command -v bash >/dev/null 2>&1; then
	got=$(bash -c '. "$1"; complete -p rknn-bench >/dev/null || exit 1
		COMP_WORDS=(rknn-bench ""); COMP_CWORD=1; _rknn_bench; echo "${COMPREPLY[*]}"
		COMP_WORDS=(rknn-bench --quiet run --sh); COMP_CWORD=3; _rknn_bench; echo "${COMPREPLY[*]}"
		COMP_WORDS=(rknn-bench tune --li); COMP_CWORD=2; _rknn_bench; echo "${COMPREPLY[*]}"' \
		sh "$BASHC" 2>&1)
	want=$(echo $commands help)
	if [ "$got" = "$want
--shape
--list-space" ]; then
		ok "bash completes the commands and each command's options"
	else
		not_ok "bash completes the commands and each command's options" "got: $got"
	fi
fi
# zsh: the completion function run with the completion system's builtins stubbed to
# print what they are given (a terminal-free stand-in for pressing Tab).
if command -v zsh >/dev/null 2>&1; then
	got=$(zsh -f -c '_arguments() { state=$ZSTATE; }
		_describe() { echo "${(P)${@[-1]}}"; }
		compadd() { [[ $1 == -a ]] && echo "${(P)2}"; }
		_files() { echo files; }
		ZSTATE=command words=(rknn-bench) PREFIX=; source "$1"
		ZSTATE=args words=(tune --li) PREFIX=--li; source "$1"
		ZSTATE=args words=(run x) PREFIX=x; source "$1"' sh \
		"$USR/share/zsh/site-functions/_rknn-bench" 2>&1)
	if echo "$got" | sed -n 1p | grep -q '^run:benchmark and verify .* info:show ' &&
		echo "$got" | sed -n 2p | grep -q -- ' --list-space ' &&
		[ "$(echo "$got" | sed -n 3p)" = files ]; then
		ok "zsh completes the commands, each command's options and file names"
	else
		not_ok "zsh completes the commands, each command's options and file names" "got: $got"
	fi
else
	ok "zsh completes the commands # SKIP zsh is not installed (apt-get install zsh)"
fi

# --- Debian's multiarch LIBDIR: the .pc and the CMake config follow LIBDIR --------------
MULTI=$TMP/multi
MLIB=lib/$(${CC} -dumpmachine)
if make_tree install DESTDIR="$MULTI" LIBDIR=/usr/$MLIB; then
	ok "make install LIBDIR=/usr/$MLIB (multiarch)"
else
	not_ok "make install LIBDIR=/usr/$MLIB (multiarch)" "$(tail -n 15 "$TMP/make.log")"
fi
inc=$(PKG_CONFIG_PATH=$MULTI/usr/$MLIB/pkgconfig pkg-config --variable=includedir rknn-bench)
if [ -f "$inc/rknn_bench/tuned.h" ] && [ -f "$MULTI/usr/$MLIB/librknn-bench_pic.a" ]; then
	ok "multiarch: the .pc's includedir holds the headers, the archives are in LIBDIR"
else
	not_ok "multiarch: the .pc's includedir holds the headers" "includedir: $inc"
fi
pc_consumer "$MULTI/usr/$MLIB/pkgconfig" "$TMP/consumer-multi" \
	"multiarch: the consumer builds with pkg-config alone"
cmake_consumer "$MULTI/usr" "multiarch: a CMake project links rknn-bench::rknn-bench"
if [ -x "$MULTI/usr/share/rknn-bench/scripts/tune-parallel.sh" ] &&
	PATH="$MULTI/usr/bin:$PATH" sh "$MULTI/usr/share/rknn-bench/scripts/perf-stat.sh" --help \
		>"$TMP/out" 2>&1; then
	ok "the scale-out and perf stat scripts are installed under share/rknn-bench/scripts"
else
	not_ok "the scale-out and perf stat scripts are installed" "$(head -c 300 "$TMP/out")"
fi
if make_tree uninstall DESTDIR="$MULTI" LIBDIR=/usr/$MLIB && [ -z "$(find "$MULTI" -type f)" ]; then
	ok "multiarch: make uninstall removes every installed file"
else
	not_ok "multiarch: make uninstall removes every installed file" "$(find "$MULTI" -type f | head)"
fi

# --- moved, then uninstalled -------------------------------------------------------------
mkdir "$TMP/moved"
mv "$USR" "$TMP/moved/usr"
inc=$(PKG_CONFIG_PATH=$TMP/moved/usr/lib/pkgconfig pkg-config --variable=includedir rknn-bench)
if [ -f "$inc/rknn_bench/tuned.h" ] &&
	(cd "$TMP" && built "$TMP/moved/usr/bin/rknn-bench" plan mat_kernel_size.json >/dev/null 2>&1); then
	ok "a moved tree still works (pkg-config paths, the binary's configs)"
else
	not_ok "a moved tree still works (pkg-config paths, the binary's configs)" "includedir: $inc"
fi
mv "$TMP/moved/usr" "$USR"
if make_tree uninstall && [ -z "$(find "$DEST" -type f)" ]; then
	ok "make uninstall removes every installed file"
else
	not_ok "make uninstall removes every installed file" "$(find "$DEST" -type f | head)"
fi

# --- dependencies: running needs less than testing; without apt-get, the missing named --
mkdir "$TMP/path" "$TMP/pc"
for t in cc make pkg-config; do ln -s "$(command -v $t)" "$TMP/path/$t"; done
for p in libcjson libdrm; do
	cp "$(pkg-config --variable=pcfiledir $p)/$p.pc" "$TMP/pc/"
done
expect_exit 0 "install-deps.sh: nothing missing to build and run (no cmocka, strace, valgrind)" -- \
	env PATH="$TMP/path" PKG_CONFIG_LIBDIR="$TMP/pc" /bin/sh scripts/install-deps.sh
expect_exit 1 "install-deps.sh --test without apt-get: exit 1" -- \
	env PATH="$TMP/path" PKG_CONFIG_LIBDIR="$TMP/pc" /bin/sh scripts/install-deps.sh --test
expect_grep '^install-deps: missing: cmocka \(libcmocka-dev\), strace \(strace\), valgrind \(valgrind\), man \(man-db\); no apt-get here' \
	"$TMP/err" "its message names exactly what is missing"
