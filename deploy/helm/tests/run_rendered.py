"""Runs the chart's Deployments as local processes, the way a kubelet would run their pods: each
container's args, its environment (the settings ConfigMap, its own env, secretKeyRefs from the
rendered Secrets) and its volumes (Secrets and ConfigMaps written out as files, emptyDirs as
fresh directories, mounted by rewriting their mount paths), then waits for every readiness probe
to answer 200. So the chart's settings, file paths, ports and probes are checked against the
real binary, not only against schemas.

    python run_rendered.py RENDERED.yaml FUNDAMENT_BIN ROOT

The image's /app is ROOT (the repository: site, plugins, SDK, fixtures); Service names resolve
to 127.0.0.1 (every service listens on its own port, as in the local topology). Exits 1 naming
the first Deployment whose pod does not become ready within 60 s, with its log.
"""

import base64
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml


def main(rendered, binary, root):
    with open(rendered) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
    secrets = {
        d["metadata"]["name"]: {k: base64.b64decode(v).decode() for k, v in d.get("data", {}).items()}
        for d in docs
        if d["kind"] == "Secret"
    }
    services = [d["metadata"]["name"] for d in docs if d["kind"] == "Service"]
    # http://<release>-<service>:<port> -> http://127.0.0.1:<port> (and redis:// for the store)
    service_url = re.compile(r"(http|redis)://([^/@]*@)?(%s):" % "|".join(map(re.escape, services)))
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    work = tempfile.mkdtemp(prefix="fundament-pods-")
    pods = []
    try:
        for d in (d for d in docs if d["kind"] == "Deployment"):
            name = d["metadata"]["name"]
            spec = d["spec"]["template"]["spec"]
            container = spec["containers"][0]
            if not container["image"].startswith(("registry.example.io/fundament/", "fundament")):
                if container["args"][:1] == ["redis-server"]:
                    # The chart's Redis, as Debian's redis-server (scripts/setup) with the pod's
                    # arguments, its data in a directory of its own.
                    data = os.path.join(work, name)
                    os.makedirs(data)
                    env = {
                        e["name"]: secrets[e["valueFrom"]["secretKeyRef"]["name"]][e["valueFrom"]["secretKeyRef"]["key"]]
                        for e in container.get("env", [])
                    }
                    # $(VAR) in args, as the kubelet expands them.
                    expand = lambda a: re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a)
                    args = ["redis-server", *map(expand, container["args"][1:]), "--port", "6379"]
                    args[args.index("--dir") + 1] = data
                    log = open(os.path.join(work, f"{name}.log"), "w")
                    pods.append((name, subprocess.Popen(args, stdout=log, stderr=log), container, log.name))
                continue
            command = container["args"][0]
            if not re.search(r"^\s+%s\s" % re.escape(command), help_text, re.M):
                # Until the binary has the subcommand the chart runs (the console alone comes with
                # the scale-out work), that pod cannot run here: said loudly, never silently.
                print(f"  {name}: NOT RUN: this fundament has no `{command}` subcommand")
                continue
            pod_dir = os.path.join(work, name)
            # The image's layout (Containerfile) in the repository: the site is scripts/site.mjs's.
            mounts = {"/app": root, "/app/site": os.path.join(root, "target", "site")}
            volumes = {v["name"]: v for v in spec.get("volumes", [])}
            for m in container.get("volumeMounts", []):
                local = os.path.join(pod_dir, m["name"])
                os.makedirs(local)
                v = volumes[m["name"]]
                source = None
                if "secret" in v:
                    source = secrets[v["secret"]["secretName"]]
                    items = v["secret"].get("items")
                elif "configMap" in v:
                    source = configmaps[v["configMap"]["name"]]
                    items = v["configMap"].get("items")
                if source is not None:
                    for item in items or [{"key": k, "path": k} for k in source]:
                        with open(os.path.join(local, item["path"]), "w") as f:
                            f.write(source[item["key"]])
                mounts[m["mountPath"]] = local

            def local_path(value):
                for mount_path in sorted(mounts, key=len, reverse=True):
                    if value == mount_path or value.startswith(mount_path + "/"):
                        return mounts[mount_path] + value[len(mount_path):]
                return service_url.sub(r"\g<1>://\g<2>127.0.0.1:", value)

            env = {"PATH": os.environ["PATH"], "HOME": pod_dir, "RUST_LOG": "info"}
            for source in container.get("envFrom", []):
                env.update(configmaps[source["configMapRef"]["name"]])
            for e in container.get("env", []):
                if "value" in e:
                    env[e["name"]] = e["value"]
                else:
                    ref = e["valueFrom"]["secretKeyRef"]
                    env[e["name"]] = secrets[ref["name"]][ref["key"]]
            env = {k: local_path(str(v)) for k, v in env.items()}
            log = open(os.path.join(work, f"{name}.log"), "w")
            process = subprocess.Popen([binary] + container["args"], env=env, cwd=pod_dir, stdout=log, stderr=log)
            pods.append((name, process, container, log.name))

        for name, process, container, log_path in pods:
            if "httpGet" not in container["readinessProbe"]:
                continue  # the Redis (an exec probe): the services' readiness waits for it
            probe = container["readinessProbe"]["httpGet"]
            url = f"http://127.0.0.1:{probe['port']}{probe['path']}"
            deadline = time.time() + 60
            last = "no answer"
            while True:
                if process.poll() is not None:
                    fail(name, f"exited with {process.returncode}", log_path)
                try:
                    with urllib.request.urlopen(url, timeout=3) as answer:
                        if answer.status == 200:
                            break
                except urllib.error.HTTPError as error:
                    last = f"{error.code} {error.read().decode(errors='replace').strip()}"
                except OSError as error:
                    last = str(error)
                if time.time() > deadline:
                    fail(name, f"not ready within 60 s: {url}: {last}", log_path)
                time.sleep(0.25)
            print(f"  {name}: {' '.join(container['args'])} ready ({url})")
        # The chart's Redis answers only with its password (the services, ready above, have it).
        for name, _, container, log_path in pods:
            if container["args"][:1] == ["redis-server"]:
                bare = {"PATH": os.environ["PATH"]}
                answer = subprocess.run(["redis-cli", "-p", "6379", "ping"], capture_output=True, text=True, env=bare)
                if "NOAUTH" not in answer.stdout + answer.stderr:
                    fail(name, f"answers a client without its password: {answer.stdout.strip()}", log_path)
                print(f"  {name}: refuses a client without its password (NOAUTH)")
    finally:
        for _, process, _, _ in pods:
            process.terminate()
        for _, process, _, _ in pods:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(["rm", "-rf", work], check=False)


def fail(name, reason, log_path):
    with open(log_path) as f:
        sys.stderr.write(f.read()[-4000:])
    sys.stderr.write(f"run_rendered: {name}: {reason}\n")
    raise SystemExit(1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
