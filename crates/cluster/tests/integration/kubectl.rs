//! The real kubectl (installed on these machines) against the embedded
//! cluster: what a user types, and what they read back.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::kubectl::{AS_STRANGER, header, stranger_writes_grants, with_kubectl};

fn grant(name: &str, labels: &str, format: &str, cluster: &str) -> String {
    format!(
        "apiVersion: plugins.camunda.io/v1alpha1
kind: Grant
metadata:
  name: {name}
  namespace: my-cluster-ns
  labels:
{labels}
spec:
  cluster:
    name: {cluster}
  template: bucket-access
  format: {format}
  fragment:
    Effect: Allow
    Action: [\"s3:GetObject\"]
    Resource: [\"arn:aws:s3:::orders-backup-storage/*\"]
"
    )
}

const LABELS_S3: &str = "    plugins.camunda.io/registration: s3-backup-bucket
    plugins.camunda.io/request: orders-backup-storage
    plugins.camunda.io/cluster: orders";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_and_writes_like_against_a_real_cluster() {
    with_kubectl(|k| {
        // get / -o wide: the printer columns of the CRD
        let out = k.ok(&["get", "certificates", "-A"]);
        assert_eq!(header(&out), ["NAMESPACE", "NAME", "READY", "SECRET", "AGE"], "{out}");
        assert!(out.contains("web-tls-cert") && out.contains("internal-cert"), "{out}");
        let wide = k.ok(&["get", "certificates", "-A", "-o", "wide"]);
        assert_eq!(header(&wide), ["NAMESPACE", "NAME", "READY", "SECRET", "ISSUER", "STATUS", "AGE"], "{wide}");
        let dbs = k.ok(&["get", "databases.postgresql.cnpg.io", "-n", "analytics"]);
        assert_eq!(header(&dbs), ["NAME", "AGE", "CLUSTER", "PG", "NAME", "APPLIED", "MESSAGE"], "{dbs}");
        let ns = k.ok(&["get", "namespaces"]);
        assert_eq!(header(&ns), ["NAME", "STATUS", "AGE"], "{ns}");

        // label selectors, set-based too
        let orders = k.ok(&["get", "grants", "-n", "my-cluster-ns", "-l", "plugins.camunda.io/cluster=orders", "-o", "name"]);
        let payments = k.ok(&["get", "grants", "-n", "my-cluster-ns", "-l", "plugins.camunda.io/cluster in (payments)", "-o", "name"]);
        assert!(!orders.is_empty() && !payments.is_empty());
        assert!(orders.lines().all(|l| !payments.contains(l)), "{orders}\n{payments}");

        // discovery, explain, describe
        let resources = k.ok(&["api-resources"]);
        assert!(resources.lines().any(|l| l.starts_with("grants") && l.contains("plugins.camunda.io/v1alpha1")), "{resources}");
        let explain = k.ok(&["explain", "grants.spec"]);
        assert!(explain.contains("cluster") && explain.contains("fragment"), "{explain}");
        let describe = k.ok(&["describe", "certificate", "internal-cert", "-n", "internal"]);
        assert!(describe.contains("Name:") && describe.contains("internal-cert"), "{describe}");

        // apply, patch, label, delete
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-kubectl\n  namespace: default\ndata:\n  a: \"1\"\n";
        let (ok, out, err) = k.apply(cm, &[]);
        assert!(ok && out.contains("configmap/from-kubectl created"), "{out}{err}");
        let (ok, out, err) = k.apply(&cm.replace("\"1\"", "\"2\""), &[]);
        assert!(ok && out.contains("configmap/from-kubectl configured"), "{out}{err}");
        assert_eq!(k.ok(&["get", "cm", "from-kubectl", "-o", "jsonpath={.data.a}"]), "2");
        k.ok(&["patch", "demoitem", "hello-world", "-n", "default", "--type", "merge", "-p", r#"{"spec":{"message":"patched"}}"#]);
        assert_eq!(k.ok(&["get", "demoitem", "hello-world", "-n", "default", "-o", "jsonpath={.spec.message}"]), "patched");
        k.ok(&["patch", "cm", "from-kubectl", "-p", r#"{"data":{"b":"3"}}"#]);
        k.ok(&["label", "demoitem", "hello-world", "-n", "default", "team=blue"]);
        assert_eq!(k.ok(&["get", "demoitems", "-n", "default", "-l", "team=blue", "-o", "name"]).trim(), "demoitem.demo.fundament.io/hello-world");
        let deleted = k.ok(&["delete", "cm", "from-kubectl"]);
        assert!(deleted.contains("deleted"), "{deleted}");
        k.refused(&["get", "cm", "from-kubectl"], "configmaps \"from-kubectl\" not found");
        // kubectl create sends ConfigMaps and Secrets as protobuf.
        let created = k.ok(&["create", "configmap", "made", "-n", "default", "--from-literal=a=b"]);
        assert!(created.contains("configmap/made created"), "{created}");
        assert_eq!(k.ok(&["get", "cm", "made", "-n", "default", "-o", "jsonpath={.data.a}"]), "b");
        let created = k.ok(&["create", "secret", "generic", "kept", "-n", "default", "--from-literal=k=v"]);
        assert!(created.contains("secret/kept created"), "{created}");
        assert_eq!(k.ok(&["get", "secret", "kept", "-n", "default", "-o", "jsonpath={.data.k}"]), "dg==");

        // auth can-i as a plugin's ServiceAccount (impersonation)
        let can_i = |args: &[&str]| {
            let mut all = vec!["auth", "can-i"];
            all.extend_from_slice(args);
            let (_, out, err) = k.run(&all, None);
            assert!(matches!(out.trim(), "yes" | "no"), "kubectl {all:?}: {out}{err}");
            out.trim().to_string()
        };
        let sa = "--as=system:serviceaccount:plugin-acme-corp--camunda:plugin";
        assert_eq!(can_i(&["create", "grants", "-n", "my-cluster-ns", sa]), "yes");
        assert_eq!(can_i(&["delete", "secrets", "-n", "default", sa]), "no");
        let cm_sa = "--as=system:serviceaccount:plugin-acme-corp--cert-manager:plugin";
        assert_eq!(can_i(&["list", "certificates", "-A", cm_sa]), "yes");
        assert_eq!(can_i(&["get", "secrets", "-A", cm_sa]), "no");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_that_break_a_rule_get_the_seeds_message() {
    with_kubectl(|k| {
        let camunda = "--as=system:serviceaccount:plugin-acme-corp--camunda:plugin";
        // Strangers may write grants (RBAC) but have no serve.
        k.applied(&stranger_writes_grants());


        // No label.
        k.apply_refused(&grant("g-nolabel", "    team: blue", "aws-iam-statement", "orders"), &[camunda], "a Grant must carry the label plugins.camunda.io/registration with the name of the PluginRegistration that it belongs to");
        // Empty label.
        k.apply_refused(&grant("g-empty", "    plugins.camunda.io/registration: \"\"", "aws-iam-statement", "orders"), &[camunda], "a Grant must carry the label");
        // No serve on the registration.
        let (ok, _, err) = k.apply(&grant("g-stranger", LABELS_S3, "aws-iam-statement", "orders"), &[AS_STRANGER]);
        assert!(!ok && err.contains("ValidatingAdmissionPolicy 'camunda-operator-plugins.camunda.io-grant-author' with binding 'camunda-operator-plugins.camunda.io-grant-author-binding' denied request: the requester system:serviceaccount:camunda-plugins:stranger does not have the verb serve on the PluginRegistration s3-backup-bucket, so it cannot write a Grant for it"), "{err}");
        assert!(err.contains("Error from server (Forbidden)"), "{err}");
        // Wrong format.
        k.apply_refused(&grant("g-format", LABELS_S3, "gcp-iam-binding", "orders"), &[camunda], "spec.format: Unsupported value: \"gcp-iam-binding\": supported values: \"aws-iam-statement\"");
        // The plugin itself may write it.
        let (ok, out, err) = k.apply(&grant("g-ok", LABELS_S3, "aws-iam-statement", "orders"), &[camunda]);
        assert!(ok, "{out}{err}");
        // A label change to a registration without serve: "cannot write a Grant for it".
        let moved = LABELS_S3.replace("s3-backup-bucket", "secrets-manager");
        k.apply_refused(&grant("g-ok", &moved, "aws-iam-statement", "orders"), &[camunda], "does not have the verb serve on the PluginRegistration secrets-manager, so it cannot write a Grant for it");
        // Immutable cluster (CEL transition rule).
        k.apply_refused(&grant("g-ok", LABELS_S3, "aws-iam-statement", "payments"), &[camunda], "cluster is immutable: delete the grant and create a new one");
        // Name over 63 characters.
        let long = "g".repeat(64);
        k.apply_refused(&grant(&long, LABELS_S3, "aws-iam-statement", "orders"), &[camunda], "metadata.name must be at most 63 characters, because it is used as a label value");
        // Metadata other than labels needs no serve: the stranger may annotate.
        let (ok, out, err) = k.run(&["annotate", "grant", "g-ok", "-n", "my-cluster-ns", "note=hi", AS_STRANGER], None);
        assert!(ok, "{out}{err}");
        // The stranger cannot take the grant to another registration: the old one's serve is missing.
        k.refused(&["label", "--overwrite", "grant", "g-ok", "-n", "my-cluster-ns", "plugins.camunda.io/registration=secrets-manager", AS_STRANGER], "so it cannot change a Grant of it");
        // Deletes are not checked.
        let (ok, out, err) = k.run(&["delete", "grant", "g-ok", "-n", "my-cluster-ns", AS_STRANGER], None);
        assert!(ok, "{out}{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_changes() {
    with_kubectl(|k| {
        let mut child = k
            .cmd(&["get", "demoitems", "-n", "default", "-w"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap();
        assert!(first.starts_with("NAME"), "{first}");
        for _ in 0..2 {
            rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        }
        let (ok, out, err) = k.apply("apiVersion: demo.fundament.io/v1\nkind: DemoItem\nmetadata:\n  name: watched\n  namespace: default\nspec:\n  message: hi\n", &[]);
        assert!(ok, "{out}{err}");
        let line = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert!(line.starts_with("watched"), "{line}");
        let _ = child.kill();
        let _ = child.wait();
    })
    .await;
}

/// A CRD whose printer columns multiply their results (a union of 30 indexes, six times over,
/// on a six-deep array: 7×10⁸ values) and number more than the console shows: `kubectl get`
/// answers at once, the costly cell empty, the first 32 columns listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printer_columns_that_multiply_are_bounded() {
    with_kubectl(|k| {
        let union = format!("[{}]", vec!["0"; 30].join(","));
        let mut columns = format!(
            "      - name: Bomb\n        type: string\n        jsonPath: .spec.x{}\n",
            union.repeat(6)
        );
        for i in 0..40 {
            columns.push_str(&format!(
                "      - name: C{i}\n        type: string\n        jsonPath: .spec.label\n"
            ));
        }
        let crd = format!(
            "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bombs.hostile.example.io
spec:
  group: hostile.example.io
  names: {{kind: Bomb, listKind: BombList, plural: bombs, singular: bomb}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    additionalPrinterColumns:
{columns}"
        );
        // Names that would change a request path are refused, as kube-apiserver refuses them.
        let bad_version = crd.replace("  - name: v1\n", "  - name: v1/namespaces/prod/x\n");
        k.apply_refused(
            &bad_version,
            &[],
            "spec.versions[0].name: Invalid value: \"v1/namespaces/prod/x\": a DNS-1035 label",
        );
        let bad_group = crd.replace("hostile.example.io", "hostile");
        k.apply_refused(
            &bad_group,
            &[],
            "spec.group: Invalid value: \"hostile\": should be a domain with at least one dot",
        );
        k.applied(&crd);
        let mut ready = false;
        for _ in 0..50 {
            if k.run(&["get", "bombs", "-n", "default"], None).0 {
                ready = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(ready, "the CRD is served");
        k.applied(
            "apiVersion: hostile.example.io/v1
kind: Bomb
metadata: {name: boom, namespace: default}
spec:
  x: [[[[[[1]]]]]]
  label: shown
",
        );
        let started = std::time::Instant::now();
        let out = k.ok(&["get", "bombs", "-n", "default"]);
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
        let head = header(&out);
        assert_eq!(head.len(), 1 + 32, "NAME, then the first 32 columns: {out}");
        assert_eq!((head[1].as_str(), head[2].as_str(), head[32].as_str()), ("BOMB", "C0", "C30"));
        // The bomb's cell is empty (kubectl prints nothing for it); the other 31 are there.
        let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
        let expected: Vec<&str> = std::iter::once("boom").chain(std::iter::repeat_n("shown", 31)).collect();
        assert_eq!(row, expected, "{out}");
    })
    .await;
}

/// What `kubectl get -o yaml` of several objects prints (a `kind: List`) goes back in with
/// `kubectl create` and `kubectl apply`, as against a real cluster: kubectl validates a List on
/// the client, with `/openapi/v2`, which it reads only as protobuf (`openapi_v2_pb`). A field
/// the kind does not have is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_from_kubectl_get_goes_back_in() {
    with_kubectl(|k| {
        let list = "apiVersion: v1
kind: List
items:
- apiVersion: demo.fundament.io/v1
  kind: DemoItem
  metadata: {name: listed-a, namespace: default}
  spec: {message: a}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed-b, namespace: default}
  data: {b: \"1\"}
";
        let (ok, out, err) = k.run(&["create", "-f", "-"], Some(list));
        assert!(ok && out.contains("demoitem.demo.fundament.io/listed-a created"), "create: {out}{err}");
        let (ok, out, err) = k.apply(&list.replace("message: a", "message: again"), &[]);
        assert!(ok, "apply: {out}{err}");
        assert_eq!(
            k.ok(&["get", "demoitem", "listed-a", "-n", "default", "-o", "jsonpath={.spec.message}"]),
            "again"
        );
        let exported = k.ok(&["get", "demoitems", "-n", "default", "-o", "yaml"]);
        assert!(exported.contains("kind: List"), "{exported}");
        let (ok, out, err) = k.apply(&exported, &[]);
        assert!(ok, "apply of kubectl's own List: {out}{err}");
        let (ok, out, err) = k.run(
            &["create", "-f", "-"],
            Some(&list.replace("spec: {message: a}", "spec: {mesage: a}").replace("listed-a", "listed-c")),
        );
        assert!(!ok && format!("{out}{err}").contains("mesage"), "an unknown field: {out}{err}");
    })
    .await;
}
