#!/usr/bin/env bash
# The gateway side by side with `kubectl proxy`: one embedded cluster (`fundament cluster`),
# authn and kube-api-proxy as `fundament` runs them (logging on, JSON at the default filter,
# as in production), and the same GET three ways — straight to the cluster, through
# `kubectl proxy` (a kubeconfig with the same ServiceAccount token), through the gateway — on
# the user path (alice lists the Certificates of `default`) and the plugin path (a
# PluginToken of acme-corp--cert-manager gets one Certificate), at 1, 64 and 256 clients,
# with hey. Writes bench/results/gateway.json: requests/s, p50, p99, errors, the ratios to
# kubectl proxy and to the cluster, and the log bytes the services wrote per request; each
# figure the median of REPEAT runs. Load generator, cluster, kubectl proxy and gateway share
# this machine's cores.
#
#   bench/gateway.sh [OUT.json]     (FUNDAMENT_BIN: the binary; REPEAT, SECONDS_PER_RUN)
set -euo pipefail
. "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
out="${1:-bench/results/gateway.json}"
bin="${FUNDAMENT_BIN:?FUNDAMENT_BIN names the fundament binary}"
repeat="${REPEAT:-3}"
seconds="${SECONDS_PER_RUN:-4}"
command -v hey >/dev/null || { echo "bench/gateway.sh: hey is missing (scripts/setup --browser installs it)" >&2; exit 1; }

# Ports of their own, so that a stack on the default ports does not answer instead.
export FUNDAMENT_CLUSTER_LISTEN=127.0.0.1:18090 FUNDAMENT_CLUSTER_URL=https://localhost:18090
export FUNDAMENT_AUTHN_LISTEN=127.0.0.1:18083 FUNDAMENT_AUTHN_URL=http://localhost:18083
export FUNDAMENT_KUBE_API_PROXY_LISTEN=127.0.0.1:18081 FUNDAMENT_KUBE_API_PROXY_URL=http://localhost:18081
proxy_port=18001
cluster_id=019b4000-2000-7000-8000-000000000001
work="$(mktemp -d)"
export FUNDAMENT_STATE_DIR="$work/state"
unset RUST_LOG
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # BENCH_LOGS=DIR keeps the last lines each service logged (to see what a request costs).
  if [ -n "${BENCH_LOGS:-}" ]; then
    mkdir -p "$BENCH_LOGS"
    for f in "$work"/*.log; do tail -n 200 "$f" >"$BENCH_LOGS/$(basename "$f")"; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # URL [curl args…]: until it answers at all
  local url="$1"; shift
  for _ in $(seq 1 300); do
    curl -sk -o /dev/null "$@" "$url" && return 0
    sleep 0.1
  done
  echo "bench/gateway.sh: $url does not answer" >&2; exit 1
}

"$bin" cluster >"$work/cluster.log" 2>&1 & pids+=($!)
wait_for https://localhost:18090/version
"$bin" authn >"$work/authn.log" 2>&1 & pids+=($!)
wait_for http://localhost:18083/.well-known/jwks.json
"$bin" kube-api-proxy >"$work/gateway.log" 2>&1 & pids+=($!)
wait_for http://localhost:18081/livez
for _ in $(seq 1 100); do
  [ "$(curl -s http://localhost:18081/readyz)" = ok ] && break
  sleep 0.1
done

"$bin" cluster kubeconfig >"$work/admin.kubeconfig"
admin=(kubectl --kubeconfig "$work/admin.kubeconfig")
ca="$("${admin[@]}" config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
user_sa="$("${admin[@]}" -n fundament-system create token fundament-alice --duration 1h)"
plugin_sa="$("${admin[@]}" -n plugin-acme-corp--cert-manager create token plugin --duration 1h)"
user_token="$("$bin" token user --email alice@acme-corp.com)"
plugin_token="$("$bin" token plugin --email alice@acme-corp.com --cluster "$cluster_id" --installation acme-corp--cert-manager --ttl 15m)"

kubeconfig() { # FILE TOKEN: the cluster, trusted by its CA, as the ServiceAccount of TOKEN
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: bench
clusters:
- name: bench
  cluster:
    server: https://localhost:18090
    certificate-authority-data: $ca
contexts:
- name: bench
  context: {cluster: bench, user: bench}
users:
- name: bench
  user:
    token: $2
EOF
}
kubeconfig "$work/user.kubeconfig" "$user_sa"
kubeconfig "$work/plugin.kubeconfig" "$plugin_sa"

list=/apis/cert-manager.io/v1/namespaces/default/certificates
get=/apis/cert-manager.io/v1/namespaces/default/certificates/web-tls-cert

log_bytes() { cat "$work"/*.log | wc -c; }

# hey DURATION CLIENTS URL [TOKEN]: a load of CLIENTS for DURATION; without TOKEN no
# Authorization header (kubectl proxy adds its kubeconfig's, and passes a client's on instead).
load() {
  local duration="$1" clients="$2" url="$3" token="${4:-}"
  local auth=()
  [ -n "$token" ] && auth=(-H "Authorization: Bearer $token")
  # -host: hey takes its TLS server name from the Host header, port included ("127.0.0.1:18090"),
  # which is no valid SNI name and which rustls refuses; a Host without a port makes it send
  # "localhost", a name in the cluster's certificate. The plain-HTTP targets ignore Host.
  hey -z "$duration" -c "$clients" -host localhost -A application/json "${auth[@]}" "$url"
}

# run NAME URL TOKEN CLIENTS I: one measured run; hey's summary in $work/runs/NAME-CLIENTS-I.txt,
# the log bytes written during it on its last line.
mkdir -p "$work/runs"
run() {
  local name="$1" url="$2" token="$3" clients="$4" i="$5"
  local before after
  before="$(log_bytes)"
  load "${seconds}s" "$clients" "$url" "$token" >"$work/runs/$name-$clients-$i.txt" 2>&1 || true
  after="$(log_bytes)"
  echo "log_bytes: $((after - before))" >>"$work/runs/$name-$clients-$i.txt"
}

start_kubectl_proxy() { # KUBECONFIG: kubectl proxy on $proxy_port as that identity
  kubectl proxy --kubeconfig "$1" --port "$proxy_port" --address 127.0.0.1 >"$work/kubectl-proxy.out" 2>&1 &
  kubectl_pid=$!
  pids+=("$kubectl_pid")
  wait_for "http://127.0.0.1:$proxy_port/version"
}
stop_kubectl_proxy() { kill "$kubectl_pid" 2>/dev/null || true; wait "$kubectl_pid" 2>/dev/null || true; }

for path in user plugin; do
  if [ "$path" = user ]; then
    target="$list" sa="$user_sa" gateway_token="$user_token" kc="$work/user.kubeconfig"
  else
    target="$get" sa="$plugin_sa" gateway_token="$plugin_token" kc="$work/plugin.kubeconfig"
  fi
  start_kubectl_proxy "$kc"
  direct_url="https://127.0.0.1:18090$target"
  proxy_url="http://127.0.0.1:$proxy_port$target"
  gateway_url="http://localhost:18081/clusters/$cluster_id$target"
  # Warm: connections, caches, the first TokenRequest and review.
  load 1s 8 "$direct_url" "$sa" >/dev/null 2>&1 || true
  load 1s 8 "$proxy_url" >/dev/null 2>&1 || true
  load 1s 8 "$gateway_url" "$gateway_token" >/dev/null 2>&1 || true
  for clients in 1 64 256; do
    for i in $(seq 1 "$repeat"); do
      log "$path path, $clients clients, run $i/$repeat"
      run "$path-direct" "$direct_url" "$sa" "$clients" "$i"
      run "$path-kubectl_proxy" "$proxy_url" "" "$clients" "$i"
      run "$path-gateway" "$gateway_url" "$gateway_token" "$clients" "$i"
    done
  done
  stop_kubectl_proxy
done

mkdir -p "$(dirname "$out")"
python3 - "$work/runs" "$out" "$repeat" "$seconds" <<'EOF'
import json, re, statistics, sys, pathlib
runs, out, repeat, seconds = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def parse(text):
    statuses = [(code, int(n)) for code, n in re.findall(r"\[(\d+)\]\s+(\d+) responses", text)]
    ok = sum(n for code, n in statuses if code.startswith("2"))
    bad = sum(n for code, n in statuses if not code.startswith("2"))
    # hey's "Error distribution": requests that got no answer at all (refused, reset, timed out).
    failed = text.split("Error distribution:", 1)[1] if "Error distribution:" in text else ""
    unanswered = sum(int(n) for n in re.findall(r"^\s*\[(\d+)\]\t", failed, re.M))
    pct = lambda p: float(m.group(1)) * 1000 if (m := re.search(rf"\b{p}%+ in ([\d.]+) secs", text)) else None
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    logb = int(re.search(r"log_bytes: (-?\d+)", text).group(1))
    total = ok + bad
    return {"requests_per_s": float(rps.group(1)) if rps else 0.0, "p50_ms": pct(50), "p99_ms": pct(99),
            "errors": bad + unanswered, "requests": total,
            "log_bytes_per_request": logb / total if total else None}

def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None

results = {}
for path in ("user", "plugin"):
    for clients in (1, 64, 256):
        row = {}
        for way in ("direct", "kubectl_proxy", "gateway"):
            parsed = [parse(f.read_text()) for f in sorted(runs.glob(f"{path}-{way}-{clients}-*.txt"))]
            row[way] = {k: median([p[k] for p in parsed]) for k in parsed[0]}
            row[way]["errors"] = sum(p["errors"] for p in parsed)
            row[way]["runs"] = len(parsed)
        g, k, d = row["gateway"], row["kubectl_proxy"], row["direct"]
        ratio = lambda a, b: a / b if a and b else None
        row["gateway_to_kubectl_proxy_requests_per_s"] = ratio(g["requests_per_s"], k["requests_per_s"])
        row["gateway_to_direct_requests_per_s"] = ratio(g["requests_per_s"], d["requests_per_s"])
        row["kubectl_proxy_to_direct_requests_per_s"] = ratio(k["requests_per_s"], d["requests_per_s"])
        row["gateway_p99_added_to_direct_ms"] = g["p99_ms"] - d["p99_ms"] if g["p99_ms"] and d["p99_ms"] else None
        row["gateway_p99_added_to_kubectl_proxy_ms"] = g["p99_ms"] - k["p99_ms"] if g["p99_ms"] and k["p99_ms"] else None
        results.setdefault(f"{path}_path", {})[f"clients_{clients}"] = row

doc = {
    "what": "the same GET straight to the embedded cluster (the ServiceAccount's token, HTTPS), through kubectl proxy (a kubeconfig with that token) and through kube-api-proxy (a UserToken on the user path: alice lists the Certificates of default; a PluginToken of acme-corp--cert-manager on the plugin path: one Certificate), with hey; services as `fundament cluster`, `fundament authn`, `fundament kube-api-proxy` run them, logging on (JSON, default filter)",
    "machine": "2 cores shared by hey, the cluster, kubectl proxy and the gateway",
    "runs": f"median of {repeat} runs of {seconds} s each; errors summed over the runs",
    "targets": {
        "user_path_64_clients_gateway_to_kubectl_proxy_requests_per_s": ">= 1.0",
        "plugin_path_64_clients_gateway_to_kubectl_proxy_requests_per_s": ">= 0.8",
        "p99_added_at_64_clients_ms": "<= 5",
        "errors_at_256_clients": 0,
    },
    "results": results,
}
pathlib.Path(out).write_text(json.dumps(doc, indent=2) + "\n")
print(json.dumps(doc, indent=2))
EOF
