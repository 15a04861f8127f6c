/* pmixcpp: the PMIx release whose ABI libpmix.so.2 provides. */
#ifndef PMIXCPP_PMIX_VERSION_H
#define PMIXCPP_PMIX_VERSION_H

#define PMIX_VERSION_MAJOR   4L
#define PMIX_VERSION_MINOR   2L
#define PMIX_VERSION_RELEASE 2L

/* 0x00MMmmrr */
#define PMIX_NUMERIC_VERSION 0x00040202

#endif
