#!/usr/bin/env python3
"""compile-model --emit ray on a multi-node Ray cluster on this machine (loopback only).

The model (ZOO/NAME.onnx, exported with a symbolic batch) is compiled with --emit ray --dynamic
batch=MAX. A cluster of a head (no CPUs for replicas, the HTTP proxy) and two worker nodes of
one CPU each (ray.cluster_utils.Cluster) serves NAME_serve.run(num_replicas=2,
max_replicas_per_node=1), so one replica per worker node. Then:
  1. 200 requests over HTTP from a bounded client (8 at a time), each one of the zoo input's
     items or a seeded random image: every answer must equal, bit for bit, the library's own run
     of that input through NAME.py (one thread, as the replicas run); a few DeploymentHandle
     calls and an .npz answer (Accept: application/x-npz) too; and requests to a second
     application, the model built for one item (--input-shape), whose replicas run a batch's
     requests one by one, against that build's own runs: it is autoscaled (1 to 2 replicas, one
     request in flight per replica) and must reach two replicas under load and come back to one
     when idle; then a small per-token model (made
     here with onnx.helper) built with a run-time token count, alone (--dynamic seq) and with a
     run-time batch (--dynamic batch --dynamic seq: requests of one length share a call), 24
     requests of 1 to 16 tokens each against the builds' own runs, and a request of 17 tokens
     refused with 400.
  2. Bad requests (wrong shape, wrong dtype, a truncated body, an .npz without the input) get
     HTTP 400 naming the problem, and the replicas keep serving.
  3. Fault: one worker node is removed while 120 requests are in flight. Each request must get
     the right answer, or an error the client retries once and then gets the right answer: none
     lost or wrong. The node comes back and the deployment must be back to two running replicas.
Prints the counts. Exit 1 on any failure; the cluster is shut down either way.

Usage: run_ray_serve.py --compiler COMPILE_MODEL --zoo ZOO --name NAME --work DIR [--max-batch 8]
"""
import argparse
import concurrent.futures
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np


def fail(msg):
    print(f"run_ray_serve: FAIL: {msg}", flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, accept=None, timeout=60):
    """(status, bytes) of one POST; status 0 for a connection failure."""
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/octet-stream"})
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, socket.timeout) as e:
        return 0, str(e).encode()


def npy(a):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def replicas(serve_status, name):
    app = serve_status.applications.get(name)
    if app is None:
        return {}
    counts = {}
    for dep in app.deployments.values():
        for state, n in dep.replica_states.items():
            counts[str(state)] = counts.get(str(state), 0) + n
    return counts


def running(counts):
    return sum(n for s, n in counts.items() if s.endswith("RUNNING"))


def token_builds(compiler, work, rng):
    """A per-token model, y[b, t] = relu(x[b, t] @ W + c) with x [batch, seq, 8], built with --emit ray
    and a run-time token count: {name: (folder, request arrays, the build's own answers)}."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "w")
    c = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "c")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "c"], ["a"]),
         helper.make_node("Relu", ["a"], ["y"])], "tokens",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])], [w, c])
    model = os.path.join(work, "tokens.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    builds = {}
    for tok_name, flags, batches in [("tokens_seq", ["--fix-dim", "batch=1", "--dynamic", "seq=16"], [1]),
                                     ("tokens_batch_seq", ["--dynamic", "batch=4", "--dynamic", "seq=16"], [1, 2])]:
        out = os.path.join(work, tok_name)
        subprocess.run([compiler, model, "-o", out, "--name", tok_name, "--emit", "ray", "--threads", "1", "-q"] + flags,
                       check=True)
        sys.path.insert(0, out)
        lengths = [1, 16, 5, 5, 9, 5, 16, 2, 7, 7, 7, 13] * 2
        xs = [rng.standard_normal((batches[k % len(batches)], n, 8)).astype(np.float32) for k, n in enumerate(lengths)]
        with __import__(tok_name).Model(num_threads=1) as m:
            builds[tok_name] = (out, xs, [m.run(x) for x in xs])
        for x, y in zip(xs, builds[tok_name][2]):  # the builds' answers against numpy's
            want = np.maximum(x @ numpy_helper.to_array(w) + numpy_helper.to_array(c), 0)
            if y.shape != want.shape or not np.allclose(y, want, rtol=1e-5, atol=1e-5):
                fail(f"{tok_name}: the library's run of {x.shape} differs from numpy's")
    return builds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--max-batch", type=int, default=8)
    a = ap.parse_args()
    try:
        import ray
        from ray import serve
        from ray.cluster_utils import Cluster
    except ImportError as e:
        fail(f"Ray Serve is not installed in this Python ({sys.executable}): {e}; tools/test.sh installs "
             "requirements-serve.txt (ONNXC_REQUIREMENTS=requirements-serve.txt bash tools/setup.sh)")

    t0 = time.time()
    out = os.path.join(a.work, "out")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    name = a.name
    subprocess.run([a.compiler, os.path.join(a.zoo, name + ".onnx"), "-o", out, "--name", name, "--emit", "ray",
                    "--dynamic", f"batch={a.max_batch}", "--threads", "1", "-q"], check=True)
    for f in (f"lib{name}.so", f"{name}.py", f"{name}_serve.py", f"{name}.weights"):
        if not os.path.exists(os.path.join(out, f)):
            fail(f"--emit ray wrote no {f}")
    sys.path.insert(0, out)
    wrapper = __import__(name)
    items = np.load(os.path.join(a.zoo, name + ".input.npy"))
    rng = np.random.default_rng(7)
    inputs = [items[i:i + 1] for i in range(items.shape[0])]
    inputs += [rng.standard_normal(items[:1].shape).astype(np.float32) for _ in range(8)]
    with wrapper.Model(num_threads=1) as m:  # the library's own answers, as a replica computes them
        refs = [m.run(x) for x in inputs]
    static = name + "_one"  # the same model built for one item: no run-time batch
    out_static = os.path.join(a.work, "out_one")
    shape_arg = "input=" + ",".join(str(d) for d in (1,) + items.shape[1:])
    subprocess.run([a.compiler, os.path.join(a.zoo, name + ".onnx"), "-o", out_static, "--name", static, "--emit", "ray",
                    "--input-shape", shape_arg, "--threads", "1", "-q"], check=True)
    sys.path.insert(0, out_static)
    with __import__(static).Model(num_threads=1) as m:
        refs_static = [m.run(x) for x in inputs]
    tokens = token_builds(a.compiler, a.work, rng)
    print(f"run_ray_serve: compiled {name} with --emit ray --dynamic batch={a.max_batch}; {len(inputs)} distinct inputs "
          f"({time.time() - t0:.1f} s)", flush=True)

    port = free_port()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
        ray.init(address=cluster.address, log_to_driver=False)
        serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port})
        serve_mod = __import__(name + "_serve")
        handle = serve_mod.run(num_replicas=2, max_replicas_per_node=1, num_threads=1, num_cpus=1)
        url = f"http://127.0.0.1:{port}/{name}"
        # The live replicas' nodes, from the GCS's actor table (the state API needs the dashboard).
        from ray._private.state import actors
        nodes = {x["Address"]["NodeID"] for x in actors().values()
                 if x.get("State") == "ALIVE" and "ServeReplica" in (x.get("ActorClassName") or "")}
        print(f"run_ray_serve: cluster of a head and 2 worker nodes, {name} deployed with 2 replicas on {len(nodes)} nodes "
              f"({time.time() - t0:.1f} s)", flush=True)
        if len(nodes) != 2:
            fail(f"the 2 replicas are on {len(nodes)} node(s), not one per worker node")

        def one(i, retry=False):
            k = i % len(inputs)
            status, body = post(url, npy(inputs[k]))
            if status != 200 and retry:
                first = status
                status, body = post(url, npy(inputs[k]))
                return k, status, body, first
            return k, status, body, None

        def same(k, body):
            try:
                y = np.load(io.BytesIO(body), allow_pickle=False)
            except Exception:
                return False
            return y.dtype == refs[k].dtype and y.shape == refs[k].shape and np.array_equal(y, refs[k])

        # 1. 200 requests, 8 at a time.
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            res = list(ex.map(one, range(200)))
        bad = [(k, s, b[:200]) for k, s, b, _ in res if s != 200 or not same(k, b)]
        if bad:
            fail(f"{len(bad)} of 200 requests got a wrong answer or an error, e.g. {bad[0]}")
        for k in (0, len(inputs) - 1):
            y = handle.infer.remote(inputs[k]).result()
            if not np.array_equal(y, refs[k]):
                fail(f"DeploymentHandle.infer on input {k} differs from the library's run")
        status, body = post(url, npy(inputs[1]), accept="application/x-npz")
        z = np.load(io.BytesIO(body)) if status == 200 else None
        if z is None or list(z.files) != [wrapper.OUTPUTS[0][0]] or not np.array_equal(z[wrapper.OUTPUTS[0][0]], refs[1]):
            fail(f"Accept: application/x-npz did not give the outputs by name (HTTP {status})")
        print(f"run_ray_serve: 200 HTTP requests and 2 handle calls equal to the library's runs ({time.time() - t0:.1f} s)",
              flush=True)
        # The one-item build, autoscaled between 1 and 2 replicas on one request in flight per replica
        # (Ray's delays shortened): rounds of 24 requests, 8 in flight, until two replicas run, then
        # idle until one is left.
        __import__(static + "_serve").run(min_replicas=1, max_replicas=2, target_ongoing_requests=1, upscale_delay_s=0.5,
                                          downscale_delay_s=2, metrics_interval_s=0.2, look_back_period_s=1,
                                          num_threads=1, num_cpus=0)
        url_static = f"http://127.0.0.1:{port}/{static}"
        t_up, sent = time.time(), 0
        while True:
            with concurrent.futures.ThreadPoolExecutor(8) as ex:
                res = list(ex.map(lambda i: (i % len(inputs), *post(url_static, npy(inputs[i % len(inputs)]))), range(24)))
            for k, status, body in res:
                y = np.load(io.BytesIO(body), allow_pickle=False) if status == 200 else None
                if y is None or not np.array_equal(y, refs_static[k]):
                    fail(f"the one-item build's application: input {k} got HTTP {status} or a wrong answer")
            sent += len(res)
            counts = replicas(serve.status(), static)
            if running(counts) >= 2:
                break
            if time.time() - t_up > 90:
                fail(f"the autoscaled {static} did not reach 2 running replicas under load within 90 s: {counts}")
        t_up = time.time() - t_up
        t_down = time.time()
        while running(counts) != 1 or len(counts) != 1:
            if time.time() - t_down > 90:
                fail(f"the autoscaled {static} did not get back to 1 replica within 90 s of idling: {counts}")
            time.sleep(0.5)
            counts = replicas(serve.status(), static)
        serve.delete(static)
        print(f"run_ray_serve: {sent} requests to {static} (built for one item) equal to its library's runs; autoscaled "
              f"from 1 to 2 replicas under load in {t_up:.1f} s, back to 1 after {time.time() - t_down:.1f} s idle",
              flush=True)
        for tok_name, (tok_out, tok_inputs, tok_refs) in tokens.items():
            __import__(tok_name + "_serve").run(num_replicas=1, num_threads=1, num_cpus=0)
            tok_url = f"http://127.0.0.1:{port}/{tok_name}"
            with concurrent.futures.ThreadPoolExecutor(8) as ex:
                res = list(ex.map(lambda k: (k, *post(tok_url, npy(tok_inputs[k]))), range(len(tok_inputs))))
            for k, status, body in res:
                y = np.load(io.BytesIO(body), allow_pickle=False) if status == 200 else None
                if y is None or y.shape != tok_refs[k].shape or not np.array_equal(y, tok_refs[k]):
                    fail(f"{tok_name}: request {k} of shape {tok_inputs[k].shape} got HTTP {status} or a wrong answer "
                         f"{body[:200] if status != 200 else ''}")
            status, answer = post(tok_url, npy(np.zeros(tok_inputs[0].shape[:1] + (17, 8), np.float32)))
            if status != 400 or "1 to 16" not in answer.decode("utf-8", "replace"):
                fail(f"{tok_name}: 17 tokens got HTTP {status} {answer[:300]!r}, expected 400 saying '1 to 16'")
            serve.delete(tok_name)
            print(f"run_ray_serve: {len(tok_inputs)} requests of {min(x.shape[1] for x in tok_inputs)} to "
                  f"{max(x.shape[1] for x in tok_inputs)} tokens to {tok_name} equal to its library's runs; 17 tokens refused",
                  flush=True)

        # 2. Bad requests: 400 with the reason; then the replicas still answer.
        shape = items.shape[1:]
        buf = io.BytesIO()
        np.savez(buf, not_the_input=inputs[0])
        cases = [("wrong shape", npy(np.zeros((1,) + tuple(d // 2 for d in shape), np.float32)), "expected shape"),
                 ("wrong dtype", npy(inputs[0].astype(np.float64)), "expected dtype float32"),
                 ("truncated body", npy(inputs[0])[:100], "not an .npy or .npz"),
                 ("empty body", b"", "the body is empty"),
                 ("npz without the input", buf.getvalue(), "missing"),
                 ("too many items", npy(np.zeros((a.max_batch + 1,) + tuple(shape), np.float32)), f"1 to {a.max_batch} items")]
        for what, body, want in cases:
            status, answer = post(url, body)
            text = answer.decode("utf-8", "replace")
            if status != 400 or want not in text:
                fail(f"{what}: HTTP {status} {text[:300]!r}, expected 400 saying {want!r}")
            print(f"run_ray_serve: {what}: 400 {text.strip()[:150]}", flush=True)
        k, status, body, _ = one(3)
        if status != 200 or not same(k, body):
            fail(f"after the bad requests a good one got HTTP {status}")

        # 3. A worker node removed with requests in flight; each failed request retried once.
        n_fault = 120
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            futs = [ex.submit(one, i, True) for i in range(n_fault)]
            while sum(f.done() for f in futs) < 20:
                time.sleep(0.05)
            cluster.remove_node(workers[1])
            res = [f.result() for f in futs]
        first_ok = sum(1 for k, s, b, first in res if first is None and s == 200 and same(k, b))
        retried_ok = sum(1 for k, s, b, first in res if first is not None and s == 200 and same(k, b))
        lost = [(k, s, first, b[:200]) for k, s, b, first in res if s != 200]
        wrong = [k for k, s, b, first in res if s == 200 and not same(k, b)]
        firsts = sorted({first for _, _, _, first in res if first is not None})
        print(f"run_ray_serve: node removed under load: {n_fault} requests, {first_ok} answered at once, {retried_ok} after one "
              f"retry (first errors: HTTP {firsts or '-'}), {len(lost)} lost, {len(wrong)} wrong ({time.time() - t0:.1f} s)",
              flush=True)
        if lost or wrong or first_ok + retried_ok != n_fault:
            fail(f"requests lost {lost[:3]} or wrong {wrong[:5]} after the node's removal")

        # The node returns; the deployment must be back to 2 running replicas.
        cluster.add_node(num_cpus=1)
        deadline = time.time() + 180
        counts = replicas(serve.status(), name)
        while running(counts) < 2 and time.time() < deadline:
            time.sleep(1)
            counts = replicas(serve.status(), name)
        if running(counts) < 2:
            fail(f"the deployment did not get back to 2 running replicas within 180 s: {counts}")
        k, status, body, _ = one(5)
        if status != 200 or not same(k, body):
            fail(f"after the node returned a request got HTTP {status}")
        print(f"run_ray_serve: the node returned, 2 replicas running again ({json.dumps(counts)}); passed in "
              f"{time.time() - t0:.1f} s", flush=True)
    finally:
        try:
            serve.shutdown()
        except Exception:
            pass
        try:
            ray.shutdown()
        except Exception:
            pass
        cluster.shutdown()


if __name__ == "__main__":
    main()
