# Reading rknn-bench's own --help text: its commands and global options (each
# command's options come from its tables: `rknn-bench --list-options`).
# Sourced by scripts/help2man.sh and scripts/completions.sh, so the man pages and the
# shell completions list what the built binary says, never a copy that drifts.
# RUNNER (may be empty) runs a binary of another architecture (make CROSS=...).

# cli_help BIN [COMMAND]: the help text of rknn-bench, or of one command.
cli_help() {
	if [ $# -gt 1 ]; then
		$RUNNER "$1" "$2" --help
	else
		$RUNNER "$1" --help
	fi
}

# cli_commands BIN: one "NAME SUMMARY" line per command of the "commands:" list.
cli_commands() {
	cli_help "$1" | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { sub(/^ +/, ""); print }'
}

# cli_global_options BIN: the options before the command, from the usage line.
cli_global_options() {
	cli_help "$1" | sed -n '1p' | grep -oE -- '--[a-z][a-z0-9-]*'
}
