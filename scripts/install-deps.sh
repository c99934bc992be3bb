#!/bin/sh
# Installs what rknn-bench needs to build and test, when it is missing and we can:
# a C compiler, make, pkg-config, cJSON, libdrm and cmocka, and strace and valgrind for
# the fake device node's tests (Debian/Ubuntu packages).
# Used by `make run`; safe to run again (does nothing when all is there).
PACKAGES="build-essential pkg-config libcjson-dev libdrm-dev libcmocka-dev strace valgrind"

have_all() {
	command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 &&
		command -v pkg-config >/dev/null 2>&1 && command -v strace >/dev/null 2>&1 &&
		command -v valgrind >/dev/null 2>&1 &&
		pkg-config --exists libcjson libdrm cmocka
}

[ "${1:-}" = "--force" ] || ! have_all || exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing build dependencies and no apt-get here;" \
		"install: a C11 compiler, make, pkg-config, cJSON, libdrm, cmocka" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "install-deps: run as root or install: $PACKAGES" >&2
	exit 1
fi
echo "install-deps: installing $PACKAGES" >&2
$SUDO apt-get update -q &&
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $PACKAGES
