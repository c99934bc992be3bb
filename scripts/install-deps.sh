#!/bin/sh
# Installs what rknn-bench needs when it is missing and we can (Debian/Ubuntu packages):
#   (no flag)  building and running: a C compiler, make, pkg-config, cJSON, libdrm
#              (`make run`, `make deps`)
#   --test     also what `make check` needs: cmocka (unit tests), strace and valgrind
#              (the fake device node's tests), man (the installed man pages)
#   --aarch64  also the cross toolchain, qemu-user and the arm64 libraries
#              (`make check-aarch64`)
#   --force    install the packages even when all is there
# Does nothing when all is there. Without apt-get, or without root or sudo, it names
# exactly what is missing (and the Debian package of each) and exits 1.
set -u
force=0
test=0
aarch64=0
for arg in "$@"; do
	case $arg in
	--force) force=1 ;;
	--test) test=1 ;;
	--aarch64) aarch64=1 ;;
	*)
		echo "install-deps: unknown option '$arg' (--test, --aarch64, --force)" >&2
		exit 2
		;;
	esac
done

ARM64_PC="PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig"

# need PACKAGE WHAT CHECK...: notes PACKAGE (for WHAT) as missing when CHECK fails.
missing=
packages=
need() {
	pkg=$1
	what=$2
	shift 2
	if [ "$force" = 1 ] || ! eval "$*" >/dev/null 2>&1; then
		missing="$missing${missing:+, }$what ($pkg)"
		packages="$packages $pkg"
	fi
}

need build-essential "a C11 compiler as cc" command -v cc
need make "make" command -v make
need pkg-config "pkg-config" command -v pkg-config
need libcjson-dev "cJSON" pkg-config --exists libcjson
need libdrm-dev "libdrm" pkg-config --exists libdrm
if [ "$test" = 1 ]; then
	need libcmocka-dev "cmocka" pkg-config --exists cmocka
	need strace "strace" command -v strace
	need valgrind "valgrind" command -v valgrind
	need man-db "man" command -v man
fi
if [ "$aarch64" = 1 ]; then
	need gcc-aarch64-linux-gnu "the aarch64 cross compiler" command -v aarch64-linux-gnu-gcc
	need qemu-user "qemu-aarch64" command -v qemu-aarch64
	need libc6:arm64 "the arm64 C library" test -e /lib/ld-linux-aarch64.so.1
	need libcjson-dev:arm64 "cJSON for arm64" "$ARM64_PC" pkg-config --exists libcjson
	need libdrm-dev:arm64 "libdrm for arm64" "$ARM64_PC" pkg-config --exists libdrm
	[ "$test" = 1 ] &&
		need libcmocka-dev:arm64 "cmocka for arm64" "$ARM64_PC" pkg-config --exists cmocka
fi
[ -n "$packages" ] || exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing: $missing; no apt-get here: install them with the" \
		"system's package manager (Debian package names in parentheses)" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "install-deps: missing: $missing; run as root or install:$packages" >&2
	exit 1
fi
echo "install-deps: installing$packages" >&2
[ "$aarch64" = 0 ] || $SUDO dpkg --add-architecture arm64 || exit 1
# shellcheck disable=SC2086 # one word per package
$SUDO apt-get update -q &&
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $packages
