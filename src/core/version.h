#ifndef RB_CORE_VERSION_H
#define RB_CORE_VERSION_H

#define RB_VERSION "0.1.0"

/* The commit the tool was built from (git describe --always --dirty at build time), or
 * "unknown" when it was not built from a git checkout. */
extern const char rb_git_commit[];

#endif
