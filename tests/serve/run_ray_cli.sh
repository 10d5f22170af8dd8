#!/usr/bin/env bash
# README's commands for serving on several machines, run on this one (loopback): `ray start
# --head`, two more nodes with `ray start --address=...` (each its own raylet, as another machine
# would run it), `serve start` on 127.0.0.1 and `serve run ... NAME_serve:build_app KEY=VALUE` from
# the compile-model --emit ray folder, then an .npy POSTed with curl: the answer must equal the
# library's own run of the same items, and two replicas must be running. Ray 2.60 turns token
# authentication on at `ray start --head` (the token in ~/.ray/auth_token): the other commands
# run with RAY_AUTH_MODE=token, as README says. `ray stop` at the end stops every Ray process of
# this user, so the test is "long" and holds the "ray" resource lock (tests/CMakeLists.txt).
# Usage: run_ray_cli.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR PYTHON
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4 py=$5
here=$(cd "$(dirname "$0")" && pwd)
bin=$(dirname "$py")
export PATH="$bin:$PATH"
fail() { echo "run_ray_cli: FAIL: $*" >&2; exit 1; }
command -v ray > /dev/null || fail "no ray next to $py (tools/test.sh installs requirements-serve.txt)"
rm -rf "$work"
mkdir -p "$work"
free_port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
gcs=$(free_port) http=$(free_port)
"$cc_model" "$zoo/$name.onnx" -o "$work/out" --name model --emit ray --dynamic batch=8 --threads 1 -q
"$py" -c "import numpy as np; np.save('$work/in.npy', np.load('$zoo/$name.input.npy')[:3])"

cleanup() { ray stop --force > "$work/stop.log" 2>&1 || true; }
trap cleanup EXIT
t0=$SECONDS
ray start --head --port="$gcs" --num-cpus=0 --include-dashboard=false --disable-usage-stats > "$work/head.log" 2>&1 ||
  { cat "$work/head.log"; fail "ray start --head"; }
export RAY_AUTH_MODE=token
for i in 1 2; do
  ray start --address="127.0.0.1:$gcs" --num-cpus=1 --disable-usage-stats > "$work/node$i.log" 2>&1 ||
    { tail -5 "$work/node$i.log"; fail "ray start --address (node $i)"; }
done
serve start --address "127.0.0.1:$gcs" --http-host 127.0.0.1 --http-port "$http" --proxy-location HeadOnly > "$work/serve_start.log" 2>&1 ||
  { tail -5 "$work/serve_start.log"; fail "serve start"; }
(cd "$work/out" && serve run --address "127.0.0.1:$gcs" --non-blocking --route-prefix /model \
  model_serve:build_app num_replicas=2 max_replicas_per_node=1 num_threads=1 > "$work/serve_run.log" 2>&1) ||
  { tail -5 "$work/serve_run.log"; fail "serve run"; }
echo "run_ray_cli: head and 2 nodes started with ray start, model_serve:build_app deployed with serve run ($((SECONDS - t0)) s)"
code=000
for i in $(seq 1 60); do
  code=$(curl -s -X POST --data-binary @"$work/in.npy" "http://127.0.0.1:$http/model" -o "$work/out.npy" -w "%{http_code}" || true)
  [ "$code" = 200 ] && break
  sleep 2
done
[ "$code" = 200 ] || fail "POST /model answered HTTP $code within 120 s"
(cd "$work/out" && "$py" - "$work" "$gcs" "$here" << 'EOF'
import sys
import numpy as np
import ray
from ray import serve
import model
work, gcs = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from run_ray_serve import replicas, running  # the replica counts the cluster test reads
x, y = np.load(f"{work}/in.npy"), np.load(f"{work}/out.npy")
with model.Model(num_threads=1) as m:
    ref = m.run(x)
if y.shape != ref.shape or not np.array_equal(y, ref):
    sys.exit(f"run_ray_cli: FAIL: the answer to {x.shape} differs from the library's run")
ray.init(address=f"127.0.0.1:{gcs}", log_to_driver=False)
states = replicas(serve.status(), "default")
if running(states) != 2:
    sys.exit(f"run_ray_cli: FAIL: replicas {states}, expected 2 running")
print(f"run_ray_cli: curl's answer for {x.shape[0]} items equal to the library's run; replicas {states}")
EOF
) || fail "the answer or the replicas"
echo "run_ray_cli: passed in $((SECONDS - t0)) s"
