/* The last rank exits without PMIx_Finalize while the others are in a fence: they must get an
 * error from the fence, not hang.
 * Run with: srun --mpi=pmixcpp -N1 -n8 pmix_dead */
#include <time.h>
#include <unistd.h>

#include "ptest.h"

int main(void) {
    pmix_proc_t me;
    if (ptest_init(&me)) return 1;
    uint32_t size = ptest_job_size(&me);
    if (me.rank == size - 1) {
        usleep(500000); /* let the others enter the fence */
        printf("DYING rank %u: exit without PMIx_Finalize\n", me.rank);
        fflush(stdout);
        _exit(0);
    }
    time_t start = time(NULL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc != PMIX_SUCCESS, "fence with a dead participant failed: %s (after %ld s)", PMIx_Error_string(rc),
          (long)(time(NULL) - start));
    CHECK(rc == PMIX_ERR_PROC_ABORTED || rc == PMIX_ERR_LOST_CONNECTION || rc == PMIX_ERR_UNREACH ||
              rc == PMIX_ERR_PROC_TERM_WO_SYNC,
          "fence status names a lost process: %s", PMIx_Error_string(rc));
    PMIx_Finalize(NULL, 0);
    return ptest_exit();
}
