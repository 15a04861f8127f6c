// The Slurm internal headers the glue needs, wrapped for C++. Only files in
// plugin/slurm/ include this.
#pragma once

extern "C" {
#include "config.h"  // Slurm's own, from the configured source tree

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/env.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/parse_config.h"
#include "src/common/read_config.h"
#include "src/common/slurm_mpi.h"
#include "src/common/slurm_protocol_api.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"
}

// Slurm's log.h defines macros with common names; keep them out of C++ code
// that follows (the glue calls log_var through its own helpers).
#undef error
#undef info
#undef verbose
#undef debug
#undef debug2
#undef debug3
