/* Rank 1 calls PMIx_Abort(7, ...): the step must end (non-zero) with the abort message on
 * stderr; the other ranks wait in a fence that never completes normally.
 * Run with: srun --mpi=pmixcpp -N1 -n8 pmix_abort */
#include <unistd.h>

#include "ptest.h"

int main(void) {
    pmix_proc_t me;
    if (ptest_init(&me)) return 1;
    if (me.rank == 1) {
        pmix_status_t rc = PMIx_Abort(7, "pmix_abort test: rank 1 aborts with status 7", NULL, 0);
        /* PMIx_Abort returns once the server has the request; OpenMPI _exits right after. */
        printf("ABORT-RETURNED rank 1: %s\n", PMIx_Error_string(rc));
        fflush(stdout);
        _exit(7);
    }
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("FENCE-RETURNED rank %u: %s\n", me.rank, PMIx_Error_string(rc));
    fflush(stdout);
    sleep(30); /* the step should be killed before this ends */
    return 0;
}
