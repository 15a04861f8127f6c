// The Slurm internal headers the glue needs, wrapped for C++. Only files in
// plugin/slurm/ include this.
#pragma once

#include "slurm/slurm_version.h"

extern "C" {
#include "config.h"  // Slurm's own, from the configured source tree

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/env.h"
#include "src/common/hostlist.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/common/job_state_reason.h"
#endif
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/parse_config.h"
#include "src/common/read_config.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/mpi.h"
#else
#include "src/common/slurm_mpi.h"
#endif
#include "src/common/slurm_protocol_api.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"
}

#include "slurm_compat.h"

// Slurm's log.h defines macros with common names; keep them out of C++ code
// that follows (the glue calls log_var through its own helpers).
#undef error
#undef info
#undef verbose
#undef debug
#undef debug2
#undef debug3
