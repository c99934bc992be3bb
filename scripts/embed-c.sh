#!/bin/sh
# embed-c.sh NAME FILE: prints a C file defining `const unsigned char NAME[]` (FILE's
# bytes plus a terminating NUL) and `const size_t NAME_len` (FILE's size). Uses od and
# sed only, so it runs on a fresh Debian without xxd.
set -e
name=$1
file=$2
[ -n "$name" ] && [ -r "$file" ] || { echo "usage: embed-c.sh NAME FILE" >&2; exit 2; }
echo "/* Generated from $file by scripts/embed-c.sh: do not edit. */"
echo "#include <stddef.h>"
echo
echo "const unsigned char ${name}[] = {"
od -An -v -tx1 "$file" | sed -e 's/[[:space:]]*$//' -e '/^$/d' \
	-e 's/[[:space:]]*\([0-9a-f][0-9a-f]\)/ 0x\1,/g' -e 's/^ /\t/'
echo "	0x00,"
echo "};"
echo "const size_t ${name}_len = sizeof(${name}) - 1;"
