/* The build stamp (version.h): the Makefile passes the commit to this file alone. */
#include "core/version.h"

#ifndef RB_GIT_COMMIT
#define RB_GIT_COMMIT "unknown"
#endif

const char rb_git_commit[] = RB_GIT_COMMIT;
