#ifndef RB_CORE_VERSION_H
#define RB_CORE_VERSION_H

#define RB_VERSION "0.1.0"

#endif
