"""Drive Debian's mpi4py.futures pool: the executor is mpi4py's code, this only gives it work.

usage: python3 mpi4py_pool.py WORKERS             (the pool spawns WORKERS processes)
       python3 -m mpi4py.futures mpi4py_pool.py N (the pool serves from COMM_WORLD's other ranks)
Prints one line the conformance runner judges: the sum must be right and every answer must have
come from a worker process, not from this one.
"""
import os
import socket
import sys

from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def work(i):
    return (2 ** i, os.getpid(), socket.gethostname())


if __name__ == '__main__':
    want = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    with MPIPoolExecutor(max_workers=want) as pool:
        answers = list(pool.map(work, range(20)))
    total = sum(a[0] for a in answers)
    pids = {a[1] for a in answers}
    here = os.getpid() in pids
    print("mpi4py pool: 20 tasks, sum %d (expected %d), %d worker processes%s, universe %s"
          % (total, 2 ** 20 - 1, len(pids), " INCLUDING THE CLIENT" if here else "",
             MPI.COMM_WORLD.Get_attr(MPI.UNIVERSE_SIZE)))
    sys.stdout.flush()
