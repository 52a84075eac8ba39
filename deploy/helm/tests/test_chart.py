"""What the Helm chart must render, checked on `helm template` output: the restricted security
context on every container, probes on /livez and /readyz, a subcommand per Deployment, both
signing keys mounted during a rotation, API versions per server version, NetworkPolicies that
allow exactly the calls the README lists, secrets kept out of ConfigMaps, precise failures for
missing values, the rollouts a changed secret causes (and a generated one does not), and the
chart's Redis placed and pulled as the services are.

Run by scripts/chart-check with the venv's Python (PyYAML comes with kubernetes-validate):
    python deploy/helm/tests/test_chart.py
"""

import atexit
import base64
import hashlib
import itertools
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

CHART = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fundament")
CI = os.path.join(CHART, "ci")
# libyaml's safe loader (PyYAML's wheels carry it): the same documents as yaml.safe_load_all, in
# a tenth of the time; parsing the renderings took half of these tests' 26 s in pure Python.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MODES = ["mock", "sandbox", "real"]
SERVICES = {"console": 3000, "authn": 8083, "organization-api": 8084, "kube-api-proxy": 8081, "plugin-proxy": 8082}


def render(values_file=None, kube_version="1.30.0", sets=(), api_versions=(), values=None):
    """The chart's documents for these values (a ci/ file, then `values`, a dict, then `sets`),
    as dicts."""
    args = ["helm", "template", "t", CHART, "--namespace", "fundament", "--kube-version", kube_version]
    if values_file:
        args += ["-f", os.path.join(CI, values_file)]
    if values:
        args += ["-f", value_file(yaml.safe_dump(values))]
    for s in sets:
        args += ["--set", s]
    for a in api_versions:
        args += ["--api-versions", a]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.load_all(out, Loader=LOADER) if d]


def render_error(values_file, sets=(), set_strings=(), set_files=()):
    """helm's error output for values that must not render."""
    args = ["helm", "template", "t", CHART, "-f", os.path.join(CI, values_file)]
    for s in sets:
        args += ["--set", s]
    for s in set_strings:
        args += ["--set-string", s]
    for s in set_files:
        args += ["--set-file", s]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode != 0, f"rendered although it must not: {sets} {set_strings} {set_files}"
    return done.stderr


def value_file(text):
    """A temporary file holding text, for --set-file (multi-line values, commas)."""
    f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    f.write(text)
    f.close()
    atexit.register(os.remove, f.name)
    return f.name


def of_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def component(doc):
    return doc["metadata"]["labels"]["app.kubernetes.io/component"]


def by_component(docs, kind):
    return {component(d): d for d in of_kind(docs, kind)}


class SecurityContext(unittest.TestCase):
    def test_every_container_is_restricted_non_root_read_only_without_capabilities(self):
        for mode in MODES:
            for deployment in of_kind(render(f"{mode}-values.yaml"), "Deployment"):
                name = f"{mode}: {deployment['metadata']['name']}"
                pod = deployment["spec"]["template"]["spec"]
                self.assertTrue(pod["securityContext"]["runAsNonRoot"], name)
                self.assertNotEqual(pod["securityContext"]["runAsUser"], 0, name)
                self.assertEqual(pod["securityContext"]["seccompProfile"], {"type": "RuntimeDefault"}, name)
                self.assertFalse(pod["automountServiceAccountToken"], name)
                containers = pod["containers"] + pod.get("initContainers", [])
                self.assertTrue(containers)
                for c in containers:
                    sc = c["securityContext"]
                    self.assertIs(sc["allowPrivilegeEscalation"], False, name)
                    self.assertIs(sc["readOnlyRootFilesystem"], True, name)
                    self.assertIs(sc["runAsNonRoot"], True, name)
                    self.assertEqual(sc["capabilities"], {"drop": ["ALL"]}, name)
                    self.assertNotIn("privileged", sc, name)
                    self.assertTrue(c["resources"]["requests"]["cpu"], name)
                    self.assertTrue(c["resources"]["requests"]["memory"], name)
                    self.assertTrue(c["resources"]["limits"]["memory"], name)


class Probes(unittest.TestCase):
    def test_liveness_and_readiness_probe_livez_and_readyz_on_the_served_port(self):
        for mode in MODES:
            for deployment in of_kind(render(f"{mode}-values.yaml"), "Deployment"):
                if component(deployment) == "redis":
                    continue
                c = deployment["spec"]["template"]["spec"]["containers"][0]
                ports = {p["containerPort"] for p in c["ports"]}
                self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/livez")
                self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz")
                self.assertIn(c["livenessProbe"]["httpGet"]["port"], ports)
                self.assertIn(c["readinessProbe"]["httpGet"]["port"], ports)


class Deployments(unittest.TestCase):
    def test_a_deployment_per_service_with_its_subcommand_in_sandbox_and_real_mode(self):
        for mode in ["sandbox", "real"]:
            deployments = by_component(render(f"{mode}-values.yaml"), "Deployment")
            fundament = {k: v for k, v in deployments.items() if k != "redis"}
            self.assertEqual(set(fundament), set(SERVICES))
            for name, d in fundament.items():
                c = d["spec"]["template"]["spec"]["containers"][0]
                self.assertEqual(c["args"], [name])
                self.assertEqual([p["containerPort"] for p in c["ports"]], [SERVICES[name]])

    def test_mock_mode_is_one_dev_pod_behind_every_service(self):
        docs = render("mock-values.yaml")
        deployments = of_kind(docs, "Deployment")
        self.assertEqual([component(d) for d in deployments], ["stack"])
        self.assertEqual(deployments[0]["spec"]["replicas"], 1)
        self.assertEqual(deployments[0]["spec"]["template"]["spec"]["containers"][0]["args"], ["dev"])
        self.assertEqual(of_kind(docs, "HorizontalPodAutoscaler"), [])
        for service in of_kind(docs, "Service"):
            self.assertEqual(service["spec"]["selector"]["app.kubernetes.io/component"], "stack")

    def test_services_select_their_deployment_on_its_port(self):
        docs = render("sandbox-values.yaml")
        deployments = by_component(docs, "Deployment")
        for name, service in by_component(docs, "Service").items():
            labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
            self.assertLessEqual(service["spec"]["selector"].items(), labels.items(), name)
            port = service["spec"]["ports"][0]
            self.assertEqual(port["targetPort"], SERVICES.get(name, 6379))


class Secrets(unittest.TestCase):
    def test_two_signing_keys_during_a_rotation_are_both_mounted_where_authn_reads_them(self):
        docs = render("real-values.yaml")
        secret = next(d for d in of_kind(docs, "Secret") if d["metadata"]["name"] == "t-fundament-signing-keys")
        self.assertEqual(set(secret["data"]), {"current", "2026-11.pem", "2026-12.pem"})
        self.assertEqual(base64.b64decode(secret["data"]["current"]).decode(), "2026-12")
        pod = by_component(docs, "Deployment")["authn"]["spec"]["template"]["spec"]
        volume = next(v for v in pod["volumes"] if v["name"] == "signing-keys")
        self.assertEqual(volume["secret"]["secretName"], "t-fundament-signing-keys")
        self.assertEqual(
            {i["key"]: i["path"] for i in volume["secret"]["items"]},
            {"current": "current", "2026-11.pem": "2026-11.pem", "2026-12.pem": "2026-12.pem"},
        )
        container = pod["containers"][0]
        mount = next(m for m in container["volumeMounts"] if m["name"] == "signing-keys")
        env = {e["name"]: e.get("value") for e in container["env"]}
        self.assertEqual(env["FUNDAMENT_SIGNING_KEYS_DIR"], mount["mountPath"])
        # Only authn holds the private keys.
        for name, d in by_component(docs, "Deployment").items():
            if name != "authn":
                volumes = d["spec"]["template"]["spec"].get("volumes", [])
                self.assertNotIn("signing-keys", [v["name"] for v in volumes], name)

    def test_garden_namespaces_reach_every_service_that_finds_shoots(self):
        def garden_namespaces(sets):
            deployments = by_component(render("real-values.yaml", sets=sets), "Deployment")
            return {
                name: {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}.get(
                    "FUNDAMENT_GARDEN_NAMESPACES"
                )
                for name, d in deployments.items()
                if name in ("authn", "kube-api-proxy", "plugin-proxy")
            }

        self.assertEqual(set(garden_namespaces([]).values()), {None}, "unset: any namespace")
        restricted = garden_namespaces(["real.gardenNamespaces={garden-acme,garden-ops}"])
        self.assertEqual(restricted, dict.fromkeys(["authn", "kube-api-proxy", "plugin-proxy"], "garden-acme,garden-ops"))
        self.assertIn("gardenNamespaces", render_error("real-values.yaml", ["real.gardenNamespaces={Garden_B}"]))

    def test_secret_values_never_reach_a_configmap(self):
        docs = render("sandbox-values.yaml")
        configmaps = yaml.safe_dump(of_kind(docs, "ConfigMap"))
        for secret in ["not-a-real-secret", "not-a-real-frame-key", "not-a-real-token", "BEGIN PRIVATE KEY"]:
            self.assertNotIn(secret, configmaps)
        secrets = [base64.b64decode(v).decode() for s in of_kind(docs, "Secret") for v in s["data"].values()]
        self.assertTrue(any("not-a-real-token" in s for s in secrets), "the kubeconfig is in a Secret")
        self.assertIn("not-a-real-secret", secrets)

    def test_each_secret_file_variable_points_at_a_mounted_file(self):
        for mode in ["sandbox", "real"]:
            for name, d in by_component(render(f"{mode}-values.yaml"), "Deployment").items():
                c = d["spec"]["template"]["spec"]["containers"][0]
                mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
                for e in c.get("env", []):
                    if e["name"].endswith(("_FILE", "_DIR", "KUBECONFIG")):
                        self.assertTrue(any(e["value"].startswith(m) for m in mounts), f"{mode} {name} {e}")

    def test_the_ci_keys_are_keys_the_services_start_with(self):
        # authn reads Ed25519 PKCS#8 PEM; plugin-proxy wants at least 32 bytes of frame key.
        for mode in ["sandbox", "real"]:
            with open(os.path.join(CI, f"{mode}-values.yaml")) as f:
                values = yaml.safe_load(f)
            for name, pem in values["signingKeys"]["keys"].items():
                text = subprocess.run(["openssl", "pkey", "-noout", "-text"], input=pem, capture_output=True, text=True)
                self.assertEqual(text.returncode, 0, f"{mode} {name}: {text.stderr}")
                self.assertIn("ED25519 Private-Key", text.stdout, f"{mode} {name}")
            if "key" in values.get("frameKey", {}):
                self.assertGreaterEqual(len(values["frameKey"]["key"].encode()), 32, mode)

    def test_keys_the_services_would_refuse_at_start_are_refused(self):
        self.assertIn(
            "frameKey.key holds 31 bytes; plugin-proxy needs at least 32 random bytes",
            render_error("sandbox-values.yaml", ["frameKey.key=" + "k" * 31]),
        )
        render("sandbox-values.yaml", sets=["frameKey.key=" + "k" * 32])
        # Bytes, not characters: the file holds the UTF-8 bytes.
        self.assertIn("frameKey.key holds 30 bytes", render_error("sandbox-values.yaml", ["frameKey.key=" + "é" * 15]))
        pem = "signingKeys.keys.current\\.pem="
        self.assertIn(
            'signingKeys.keys "current.pem" is not an Ed25519 private key in PKCS#8 PEM',
            render_error("sandbox-values.yaml", set_strings=[pem + "hello"]),
        )
        fake = "-----BEGIN PRIVATE KEY-----\nnot a real key: the current signing key\n-----END PRIVATE KEY-----\n"
        self.assertIn("the PEM body is not base64", render_error("sandbox-values.yaml", set_files=[pem + value_file(fake)]))
        rsa = subprocess.run(
            ["openssl", "genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024"], capture_output=True, text=True, check=True
        ).stdout
        self.assertIn("not an Ed25519 one", render_error("sandbox-values.yaml", set_files=[pem + value_file(rsa)]))
        ed25519 = subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519"], capture_output=True, text=True, check=True).stdout
        args = ["helm", "template", "t", CHART, "-f", os.path.join(CI, "sandbox-values.yaml"), "--set-file", pem + value_file(ed25519)]
        subprocess.run(args, check=True, capture_output=True)

    def test_a_kubeconfig_the_services_would_refuse_at_start_is_refused(self):
        good = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": "https://c.example.test:6443", "certificate-authority-data": "eA=="}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }

        def with_(change):
            k = yaml.safe_load(yaml.safe_dump(good))
            change(k)
            return value_file(yaml.safe_dump(k))

        render("sandbox-values.yaml", sets=[])  # the ci kubeconfig
        args = ["helm", "template", "t", CHART, "-f", os.path.join(CI, "sandbox-values.yaml"), "--set-file", "sandbox.kubeconfig=" + with_(lambda k: None)]
        subprocess.run(args, check=True, capture_output=True)
        insecure = with_(lambda k: k["clusters"][0]["cluster"].update({"insecure-skip-tls-verify": True}))
        self.assertIn(
            'sandbox.kubeconfig: its cluster "c" turns off verification of the server\'s certificate (insecure-skip-tls-verify)',
            render_error("sandbox-values.yaml", set_files=["sandbox.kubeconfig=" + insecure]),
        )
        args[-1] = "sandbox.kubeconfig=" + insecure
        subprocess.run(args + ["--set", "allowInsecureKubeconfig=true"], check=True, capture_output=True)
        cases = {
            "sandbox.kubeconfig names the file /home/me/ca.crt (certificate-authority) the pods do not have": lambda k: k["clusters"][0]["cluster"].update({"certificate-authority": "/home/me/ca.crt"}),
            "names the file /home/me/client.key (client-key)": lambda k: k["users"][0]["user"].update({"client-key": "/home/me/client.key"}),
            "names the file /var/run/token (tokenFile)": lambda k: k["users"][0]["user"].update({"tokenFile": "/var/run/token"}),
            'its current-context "other" is not among its contexts': lambda k: k.update({"current-context": "other"}),
            "has no current-context": lambda k: k.pop("current-context"),
        }
        for message, change in cases.items():
            self.assertIn(message, render_error("sandbox-values.yaml", set_files=["sandbox.kubeconfig=" + with_(change)]))
        self.assertIn("sandbox.kubeconfig is not YAML", render_error("sandbox-values.yaml", set_files=["sandbox.kubeconfig=" + value_file("a: [b")]))
        # The garden's kubeconfig likewise.
        self.assertIn(
            "real.gardenerKubeconfig names the file /home/me/ca.crt",
            render_error("real-values.yaml", ["real.existingSecret="], set_files=["real.gardenerKubeconfig=" + with_(cases[next(iter(cases))])]),
        )
        self.assertIn("directory.content is not YAML", render_error("sandbox-values.yaml", set_files=["directory.content=" + value_file("a: [b")]))

    def test_extra_env_may_not_set_what_the_chart_sets(self):
        self.assertIn(
            "extraEnv.FUNDAMENT_MODE: the chart sets FUNDAMENT_MODE itself, from mode",
            render_error("sandbox-values.yaml", set_strings=["extraEnv.FUNDAMENT_MODE=mock"]),
        )
        self.assertIn("from oidc.issuer", render_error("sandbox-values.yaml", set_strings=["extraEnv.FUNDAMENT_OIDC_ISSUER=https://x"]))
        # Every variable the chart sets, in the settings or on a container, in any mode.
        names = set()
        for mode in MODES:
            docs = render(f"{mode}-values.yaml", sets=["fga.openfgaUrl=https://fga.example.test,fga.store=s,fga.model=m,real.gardenNamespaces={g}"])
            for cm in of_kind(docs, "ConfigMap"):
                if cm["metadata"]["name"].endswith("-settings"):
                    names |= set(cm["data"]) - {"RUST_LOG"}
            for d in of_kind(docs, "Deployment"):
                if component(d) != "redis":
                    names |= {e["name"] for e in d["spec"]["template"]["spec"]["containers"][0].get("env", [])}
        self.assertIn("FUNDAMENT_SHARED_STORE", names)
        for name in sorted(names):
            self.assertIn(f"extraEnv.{name}: the chart sets {name} itself", render_error("sandbox-values.yaml", set_strings=[f"extraEnv.{name}=x"]))
        # What the chart leaves alone passes, once.
        settings = next(d for d in of_kind(render("real-values.yaml"), "ConfigMap") if d["metadata"]["name"].endswith("-settings"))
        self.assertEqual(settings["data"]["RUST_LOG"], "info")

    def test_values_the_services_would_refuse_at_start_fail_the_schema(self):
        self.assertIn("at '/oidc/issuer'", render_error("sandbox-values.yaml", ["oidc.issuer=https://idp.example.test/?x=1"]))
        self.assertIn("at '/oidc/emailClaim'", render_error("sandbox-values.yaml", set_strings=["oidc.emailClaim=e mail"]))
        self.assertIn("at '/oidc/scopes'", render_error("sandbox-values.yaml", set_strings=['oidc.scopes=openid "x"']))
        self.assertIn("at '/urls/console'", render_error("sandbox-values.yaml", ["urls.console=https://u:p@console.example.test"]))
        # Served from the root of its host: a path would print a URL that answers 404.
        self.assertIn("at '/urls/console'", render_error("sandbox-values.yaml", ["urls.console=https://example.test/console"]))
        self.assertIn("at '/urls/kubeApiProxy'", render_error("sandbox-values.yaml", ["urls.kubeApiProxy=https://example.test/api"]))
        self.assertIn("at '/fga/openfgaUrl'", render_error("sandbox-values.yaml", ["fga.openfgaUrl=openfga:8080", "fga.store=s"]))

    def test_missing_values_fail_naming_the_value(self):
        self.assertIn("sandbox.kubeconfig", render_error("sandbox-values.yaml", ["sandbox.kubeconfig="]))
        self.assertIn("signingKeys.keys", render_error("real-values.yaml", ["signingKeys.keys=null"]))
        self.assertIn("oidc.issuer", render_error("sandbox-values.yaml", ["oidc.issuer="]))
        self.assertIn("directory.content", render_error("sandbox-values.yaml", ["directory.content="]))
        self.assertIn("frameKey.key", render_error("real-values.yaml", ["frameKey.existingSecret="]))
        self.assertIn(
            "urls.console and urls.kubeApiProxy both name the host console.example.test: each service needs a host of its own",
            render_error("sandbox-values.yaml", ["urls.console=https://console.example.test", "urls.kubeApiProxy=https://console.example.test/"]),
        )
        for ip in ["https://10.0.0.7", "https://10.0.0.7:8443", "https://2130706433", "https://127.1", "https://[::1]:8443"]:
            self.assertIn("urls.pluginProxy " + ip + ": a host name is required, not an IP address", render_error("sandbox-values.yaml", ["urls.pluginProxy=" + ip]))
        self.assertIn(
            'signingKeys.current "2026-10" must name one of signingKeys.keys without .pem (2026-11.pem, 2026-12.pem)',
            render_error("real-values.yaml", ["signingKeys.current=2026-10"]),
        )
        # values.schema.json: a bad value or a misspelt name is refused before rendering.
        self.assertIn("at '/mode': value must be one of 'mock', 'sandbox', 'real'", render_error("mock-values.yaml", ["mode=prod"]))
        self.assertIn("at '/oidc': additional properties 'isuer' not allowed", render_error("sandbox-values.yaml", ["oidc.isuer=x"]))
        self.assertIn("at '/sharedStore/url'", render_error("sandbox-values.yaml", ["sharedStore.url=http://x"]))


class ApiVersions(unittest.TestCase):
    def test_pdb_and_hpa_versions_follow_the_server(self):
        old = render("sandbox-values.yaml", kube_version="1.20.2", api_versions=["policy/v1beta1", "autoscaling/v2beta2"])
        new = render("sandbox-values.yaml", kube_version="1.30.0")
        self.assertEqual({d["apiVersion"] for d in of_kind(old, "PodDisruptionBudget")}, {"policy/v1beta1"})
        self.assertEqual({d["apiVersion"] for d in of_kind(old, "HorizontalPodAutoscaler")}, {"autoscaling/v2beta2"})
        self.assertEqual({d["apiVersion"] for d in of_kind(new, "PodDisruptionBudget")}, {"policy/v1"})
        self.assertEqual({d["apiVersion"] for d in of_kind(new, "HorizontalPodAutoscaler")}, {"autoscaling/v2"})

    def test_every_deployment_has_a_pdb_and_the_stateless_ones_an_hpa(self):
        docs = render("sandbox-values.yaml")
        self.assertEqual(set(by_component(docs, "PodDisruptionBudget")), set(SERVICES) | {"redis"})
        hpas = by_component(docs, "HorizontalPodAutoscaler")
        self.assertEqual(set(hpas), set(SERVICES))
        for name, hpa in hpas.items():
            self.assertEqual(hpa["spec"]["scaleTargetRef"]["name"], f"t-fundament-{name}")
            self.assertNotIn("replicas", by_component(docs, "Deployment")[name]["spec"], "the HPA owns replicas")

    def test_the_charts_redis_asks_for_a_password_the_services_have(self):
        import base64
        docs = render("sandbox-values.yaml")
        secret = next(d for d in of_kind(docs, "Secret") if d["metadata"]["name"] == "t-fundament-shared-store")
        data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
        self.assertGreaterEqual(len(data["password"]), 40)
        self.assertEqual(data["url"], f"redis://:{data['password']}@t-fundament-redis:6379")
        redis = by_component(docs, "Deployment")["redis"]["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(redis["args"][-2:], ["--requirepass", "$(REDISCLI_AUTH)"])
        self.assertEqual(redis["env"][0]["valueFrom"]["secretKeyRef"], {"name": "t-fundament-shared-store", "key": "password"})
        # A password given is used as given; an external store gets no password of the chart's.
        given = render("sandbox-values.yaml", sets=["redis.password=given-secret"])
        secret = next(d for d in of_kind(given, "Secret") if d["metadata"]["name"] == "t-fundament-shared-store")
        self.assertEqual(base64.b64decode(secret["data"]["password"]).decode(), "given-secret")
        # In the URL it is percent-encoded, so '/', '#', '@' or a space cannot cut it short.
        odd = "a/b#c d@e+f?g"
        given = render("sandbox-values.yaml", sets=[f"redis.password={odd}"])
        secret = next(d for d in of_kind(given, "Secret") if d["metadata"]["name"] == "t-fundament-shared-store")
        url = base64.b64decode(secret["data"]["url"]).decode()
        self.assertEqual(url, "redis://:a%2Fb%23c%20d%40e%2Bf%3Fg@t-fundament-redis:6379")
        from urllib.parse import urlsplit, unquote
        self.assertEqual(unquote(urlsplit(url).password), odd)
        external = render("sandbox-values.yaml", sets=["sharedStore.url=redis://store:6379"])
        secret = next(d for d in of_kind(external, "Secret") if d["metadata"]["name"] == "t-fundament-shared-store")
        self.assertNotIn("password", secret["data"])
        self.assertNotIn("redis", by_component(external, "Deployment"))

    def test_without_a_shared_store_no_service_that_shares_state_runs_more_than_one_replica(self):
        # README "Several replicas": authn, kube-api-proxy and plugin-proxy share sign-outs, frame
        # tickets and watch limits only through the store; they would start without it.
        err = render_error("sandbox-values.yaml", ["redis.enabled=false"])
        for part in [
            "mode sandbox has no shared store",
            "authn (authn.autoscaling.maxReplicas=4), kube-api-proxy (kubeApiProxy.autoscaling.maxReplicas=8), "
            "plugin-proxy (pluginProxy.autoscaling.maxReplicas=6)",
            "Set redis.enabled=true",
            "sharedStore.url or sharedStore.existingSecret",
            "<key>.autoscaling.enabled=false and <key>.replicas=1 for authn, kubeApiProxy, pluginProxy",
        ]:
            self.assertIn(part, err)
        one = [f"{k}.autoscaling.enabled=false,{k}.replicas=1" for k in ["authn", "kubeApiProxy", "pluginProxy"]]
        # Fixed replicas count as well as an autoscaler that may scale up (minReplicas 1, max 3).
        self.assertIn("authn (authn.replicas=2)", render_error("sandbox-values.yaml", ["redis.enabled=false", one[1], one[2], "authn.autoscaling.enabled=false"]))
        self.assertIn(
            "plugin-proxy (pluginProxy.autoscaling.maxReplicas=3)",
            render_error("sandbox-values.yaml", ["redis.enabled=false", one[0], one[1], "pluginProxy.autoscaling.minReplicas=1,pluginProxy.autoscaling.maxReplicas=3"]),
        )
        # One replica each: it renders, with no store; the console and organization-api share
        # nothing and still scale.
        docs = render("sandbox-values.yaml", sets=["redis.enabled=false", *one])
        deployments = by_component(docs, "Deployment")
        self.assertNotIn("redis", deployments)
        for name in ["authn", "kube-api-proxy", "plugin-proxy"]:
            self.assertEqual(deployments[name]["spec"]["replicas"], 1, name)
        self.assertEqual(set(by_component(docs, "HorizontalPodAutoscaler")), {"console", "organization-api"})
        for d in deployments.values():
            env = [e["name"] for e in d["spec"]["template"]["spec"]["containers"][0].get("env", [])]
            self.assertNotIn("FUNDAMENT_SHARED_STORE", env)
        # An HPA that cannot scale (maxReplicas 1) is one replica too.
        capped = [f"{k}.autoscaling.minReplicas=1,{k}.autoscaling.maxReplicas=1" for k in ["authn", "kubeApiProxy", "pluginProxy"]]
        hpas = by_component(render("sandbox-values.yaml", sets=["redis.enabled=false", *capped]), "HorizontalPodAutoscaler")
        self.assertEqual(hpas["authn"]["spec"]["maxReplicas"], 1)
        # An external store, in any of its two forms, is a store.
        for store in ["sharedStore.url=redis://store:6379", "sharedStore.existingSecret=store"]:
            self.assertIn("authn", by_component(render("sandbox-values.yaml", sets=["redis.enabled=false", store]), "HorizontalPodAutoscaler"))

    def test_an_autoscaler_whose_minimum_is_above_its_maximum_is_refused(self):
        self.assertIn(
            "authn.autoscaling.minReplicas (2) is above authn.autoscaling.maxReplicas (1)",
            render_error("sandbox-values.yaml", ["authn.autoscaling.maxReplicas=1"]),
        )


def pod_annotations(deployment):
    return deployment["spec"]["template"]["metadata"].get("annotations", {})


def shared_store_password(docs):
    secret = next(d for d in of_kind(docs, "Secret") if d["metadata"]["name"] == "t-fundament-shared-store")
    return base64.b64decode(secret["data"]["password"]).decode()


class Rollouts(unittest.TestCase):
    """A pod reads its settings and secrets at start: what it reads changing must change its pod
    template (a rollout), and nothing else may."""

    def test_a_changed_redis_password_rolls_the_redis_and_the_services(self):
        first = by_component(render("sandbox-values.yaml", sets=["redis.password=first"]), "Deployment")
        again = by_component(render("sandbox-values.yaml", sets=["redis.password=first"]), "Deployment")
        second = by_component(render("sandbox-values.yaml", sets=["redis.password=second"]), "Deployment")
        # Redis reads --requirepass from an env var once, at start: without a rollout it keeps
        # the old password and every restarted service gets NOAUTH.
        self.assertNotEqual(first["redis"]["spec"]["template"], second["redis"]["spec"]["template"])
        for name in SERVICES:
            self.assertNotEqual(
                pod_annotations(first[name])["checksum/secrets"], pod_annotations(second[name])["checksum/secrets"], name
            )
        # The same values roll nothing.
        self.assertEqual(first, again)
        # Redis's checksum is of exactly what it reads, the password: another secret changing
        # rolls the services that read it, not the Redis.
        other = by_component(
            render("sandbox-values.yaml", sets=["redis.password=first", "oidc.clientSecret=another"]), "Deployment"
        )
        self.assertEqual(first["redis"]["spec"]["template"], other["redis"]["spec"]["template"])
        self.assertNotEqual(first["authn"]["spec"]["template"], other["authn"]["spec"]["template"])

    def test_a_generated_password_is_drawn_once_and_the_first_upgrade_changes_nothing(self):
        # helm template has no cluster to look the release's Secret up in, as a first install:
        # the password is generated. Every consumer within the render sees the one password.
        installed = render("sandbox-values.yaml")
        password = shared_store_password(installed)
        deployments = by_component(installed, "Deployment")
        checksums = {pod_annotations(deployments[name])["checksum/secrets"] for name in SERVICES}
        self.assertEqual(len(checksums), 1, "each service's checksum of the Secrets saw another password")
        self.assertEqual(
            pod_annotations(deployments["redis"])["checksum/password"],
            hashlib.sha256(password.encode()).hexdigest(),
            "the Redis's checksum is not of the password in the Secret",
        )
        # The first upgrade finds that password in the release's Secret (lookup), which renders
        # as a password given does: the same objects, so no pod rolls.
        upgraded = render("sandbox-values.yaml", sets=[f"redis.password={password}"])
        self.assertEqual(installed, upgraded)

    def test_redis_is_scheduled_and_pulled_as_the_services_are(self):
        placement = {
            "nodeSelector": {"pool": "fundament"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "fundament", "effect": "NoSchedule"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["fundament"]}]}]
                    }
                }
            },
            "imagePullSecrets": [{"name": "registry"}],
        }
        for mode in MODES:
            deployments = by_component(render(f"{mode}-values.yaml", values=placement), "Deployment")
            if mode == "sandbox":
                self.assertIn("redis", deployments)
            for name, d in deployments.items():
                pod = d["spec"]["template"]["spec"]
                for key, value in placement.items():
                    self.assertEqual(pod.get(key), value, f"{mode}: {name}: {key}")
        # Without values: no pull secrets, no node constraints, and no default anti-affinity for
        # the one Redis.
        redis = by_component(render("sandbox-values.yaml"), "Deployment")["redis"]["spec"]["template"]["spec"]
        for key in placement:
            self.assertNotIn(key, redis)


class Routes(unittest.TestCase):
    def test_the_ingress_routes_console_gateway_and_every_plugin_origin(self):
        ingress = of_kind(render("real-values.yaml"), "Ingress")[0]
        routes = {
            r["host"]: (p["backend"]["service"]["name"], p["backend"]["service"]["port"]["number"])
            for r in ingress["spec"]["rules"]
            for p in r["http"]["paths"]
        }
        self.assertEqual(
            routes,
            {
                "console.example.test": ("t-fundament-console", 3000),
                "kube.example.test": ("t-fundament-kube-api-proxy", 8081),
                "plugins.example.test": ("t-fundament-plugin-proxy", 8082),
                "*.plugins.example.test": ("t-fundament-plugin-proxy", 8082),
            },
        )
        self.assertEqual(set(ingress["spec"]["tls"][0]["hosts"]), set(routes))


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def allows(rules, direction, peer_labels, port):
    """Whether a policy's rules let traffic to or from a pod of the release with these labels."""
    for rule in rules or []:
        peers = rule.get("to" if direction == "egress" else "from", [])
        ports = [p["port"] for p in rule.get("ports", [])]
        if port not in ports:
            continue
        for peer in peers:
            if "podSelector" in peer and "namespaceSelector" not in peer and selects(peer["podSelector"], peer_labels):
                return True
    return False


class NetworkPolicies(unittest.TestCase):
    # README "What each service reaches": the calls between the release's pods, and nothing else.
    EXPECTED = {
        ("console", "authn", 8083),
        ("console", "organization-api", 8084),
        ("console", "kube-api-proxy", 8081),
        ("kube-api-proxy", "authn", 8083),
        ("plugin-proxy", "authn", 8083),
        ("authn", "redis", 6379),
        ("kube-api-proxy", "redis", 6379),
        ("plugin-proxy", "redis", 6379),
    }

    def test_the_pods_reach_each_other_exactly_as_documented(self):
        docs = render("sandbox-values.yaml")
        pods = {
            component(d): d["spec"]["template"]["metadata"]["labels"] for d in of_kind(docs, "Deployment")
        }
        policies = of_kind(docs, "NetworkPolicy")
        for p in policies:
            self.assertEqual(set(p["spec"]["policyTypes"]) & {"Ingress", "Egress"}, set(p["spec"]["policyTypes"]))

        def applying(labels):
            return [p for p in policies if selects(p["spec"]["podSelector"], labels)]

        ports = sorted(set(SERVICES.values()) | {6379})
        allowed = set()
        for (src, src_labels), (dst, dst_labels) in itertools.permutations(pods.items(), 2):
            for port in ports:
                out = any(allows(p["spec"].get("egress"), "egress", dst_labels, port) for p in applying(src_labels))
                into = any(allows(p["spec"].get("ingress"), "ingress", src_labels, port) for p in applying(dst_labels))
                if out and into:
                    allowed.add((src, dst, port))
        self.assertEqual(allowed, self.EXPECTED)

    def test_the_services_that_ask_openfga_may_reach_it(self):
        # The console checks can_view itself (the cluster list), as authn, the gateway and
        # plugin-proxy do; organization-api never asks.
        docs = render("sandbox-values.yaml")
        external = {
            p["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
            for p in of_kind(docs, "NetworkPolicy")
            for rule in p["spec"].get("egress") or []
            if any("ipBlock" in peer for peer in rule.get("to", [])) and 443 in [x["port"] for x in rule.get("ports", [])]
        }
        self.assertTrue({"console", "authn", "kube-api-proxy", "plugin-proxy"} <= external, external)
        self.assertNotIn("organization-api", external)

    def test_every_pod_is_under_the_default_deny_and_only_public_services_face_the_ingress(self):
        docs = render("sandbox-values.yaml")
        deny = next(p for p in of_kind(docs, "NetworkPolicy") if p["metadata"]["name"] == "t-fundament-default-deny")
        self.assertEqual(set(deny["spec"]["policyTypes"]), {"Ingress", "Egress"})
        self.assertNotIn("ingress", deny["spec"])
        self.assertNotIn("egress", deny["spec"])
        for d in of_kind(docs, "Deployment"):
            self.assertTrue(selects(deny["spec"]["podSelector"], d["spec"]["template"]["metadata"]["labels"]))
        facing = set()
        for p in of_kind(docs, "NetworkPolicy"):
            for rule in p["spec"].get("ingress") or []:
                if any("namespaceSelector" in peer for peer in rule.get("from", [])):
                    facing.add(p["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/component"])
        self.assertEqual(facing, {"console", "kube-api-proxy", "plugin-proxy"})


REPO = os.path.join(CHART, "..", "..", "..")


class Image(unittest.TestCase):
    """The chart and the Containerfile agree on the image's layout and user."""

    def containerfile(self):
        with open(os.path.join(REPO, "Containerfile")) as f:
            return f.read().replace("\\\n", " ")

    def test_every_path_the_settings_name_is_in_the_image_and_comes_from_the_repository(self):
        text = self.containerfile()
        copied = {}
        for line in text.splitlines():
            words = line.split()
            if words[:2] == ["COPY", "--from=build"]:
                *sources, destination = words[2:]
                for source in sources:
                    copied[source] = destination
        for source, destination in copied.items():
            if source.startswith("/src/"):
                self.assertTrue(os.path.exists(os.path.join(REPO, source[len("/src/"):])), source)
        destinations = set(copied.values())
        settings = of_kind(render("sandbox-values.yaml"), "ConfigMap")[0]["data"]
        for key in ["FUNDAMENT_SITE_ROOT", "FUNDAMENT_PLUGINS_DIR", "FUNDAMENT_PLUGIN_SDK_DIR", "FUNDAMENT_FIXTURES_DIR", "FUNDAMENT_FGA_TUPLES"]:
            path = settings[key]
            self.assertTrue(
                any(path == d.rstrip("/") or path.startswith(d.rstrip("/") + "/") for d in destinations),
                f"{key}={path} is not copied into the image",
            )
            self.assertIn(f"{key}={path}", text, "the image's own default is the chart's")

    def test_the_image_user_is_the_pods_user(self):
        self.assertIn("USER 65532:65532", self.containerfile())
        pod = of_kind(render("sandbox-values.yaml"), "Deployment")[0]["spec"]["template"]["spec"]
        self.assertEqual(pod["securityContext"]["runAsUser"], 65532)


def leaves(value, prefix=""):
    """The documented paths of values.yaml: every leaf, where maps of resources and lists count
    as one value."""
    if isinstance(value, dict) and value and not prefix.endswith(("resources", "ingressFrom", "dns")):
        for key, child in value.items():
            yield from leaves(child, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix


class Documentation(unittest.TestCase):
    def test_every_value_is_in_the_charts_readme_and_nothing_else_is(self):
        with open(os.path.join(CHART, "values.yaml")) as f:
            values = set(leaves(yaml.safe_load(f)))
        with open(os.path.join(CHART, "README.md")) as f:
            rows = [line for line in f if line.startswith("| `")]
        documented = {line.split("`")[1] for line in rows}
        self.assertEqual(values - documented, set(), "values without a row in README.md")
        self.assertEqual(documented - values, set(), "rows in README.md for values that do not exist")


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=1).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
