/*
 * version.h - nlmd's version, shown by nlmd --version, nlmctl and the
 * metrics (nlmd_build_info).
 */
#ifndef NLMD_COMMON_VERSION_H
#define NLMD_COMMON_VERSION_H

#define NLMD_VERSION	"0.1.0"

#endif
