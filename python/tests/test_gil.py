"""einexpr releases the GIL while it computes: another Python thread runs meanwhile."""
import threading
import time

import numpy as np

import einexpr


def test_other_threads_run_while_einexpr_computes():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((600, 600))
    b = rng.standard_normal((600, 600))
    ticks_inside = 0
    for _ in range(20):  # a few tries: the worker must actually overlap with the ticks
        window = {}

        def work():
            window["start"] = time.perf_counter()
            einexpr.einsum(a, b, "i j, j k -> i k")  # tens of milliseconds
            window["end"] = time.perf_counter()

        worker = threading.Thread(target=work)
        ticks = []
        worker.start()
        while worker.is_alive():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)
        worker.join()
        ticks_inside = sum(window["start"] < t < window["end"] for t in ticks)
        if ticks_inside >= 5:
            break
    # Were the GIL held for the whole call, this thread could tick inside the window only
    # in the Python moments just after "start" and before "end": twice at most.
    assert ticks_inside >= 5
