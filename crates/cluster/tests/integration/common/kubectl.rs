//! The real kubectl (installed on these machines) against a test cluster.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

pub struct Kubectl {
    pub kubeconfig: PathBuf,
}

impl Kubectl {
    /// kubectl with `args` against the test cluster; HOME is the cluster's
    /// folder, so no cache or config of the machine's user is read.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.env("KUBECONFIG", &self.kubeconfig).env("HOME", self.kubeconfig.parent().unwrap()).args(args);
        c
    }

    /// Runs kubectl with `stdin` as its input; (success, stdout, stderr).
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        let mut c = self.cmd(args);
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("kubectl is installed (apt-get install kubectl, or see the README)");
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
        // Closed, so that kubectl sees the end of its input.
        drop(input);
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into(),
            String::from_utf8_lossy(&out.stderr).into(),
        )
    }

    /// Runs kubectl, which must succeed; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args, None);
        assert!(ok, "kubectl {args:?} failed:\n{err}\n{out}");
        out
    }

    /// `kubectl apply -f -` with `extra` arguments; (success, stdout, stderr).
    pub fn apply(&self, yaml: &str, extra: &[&str]) -> (bool, String, String) {
        let mut args = vec!["apply", "-f", "-"];
        args.extend_from_slice(extra);
        self.run(&args, Some(yaml))
    }

    /// `kubectl apply -f -`, which must succeed.
    pub fn applied(&self, yaml: &str) {
        let (ok, out, err) = self.apply(yaml, &[]);
        assert!(ok, "{out}{err}");
    }

    /// `kubectl apply -f -` with `extra` arguments, which must fail saying `message`.
    pub fn apply_refused(&self, yaml: &str, extra: &[&str], message: &str) {
        let (ok, out, err) = self.apply(yaml, extra);
        assert!(!ok && err.contains(message), "expected {message:?}:\n{err}\n{out}");
    }

    /// Runs kubectl, which must fail saying `message`.
    pub fn refused(&self, args: &[&str], message: &str) {
        let (ok, out, err) = self.run(args, None);
        assert!(!ok && err.contains(message), "kubectl {args:?}: expected {message:?}:\n{err}\n{out}");
    }
}

/// The column names of the table kubectl printed.
pub fn header(out: &str) -> Vec<String> {
    out.lines().next().unwrap_or_default().split_whitespace().map(String::from).collect()
}

/// Runs `f` with kubectl against a fresh cluster, on a thread that may block.
pub async fn with_kubectl(f: impl FnOnce(Kubectl) + Send + 'static) {
    let tc = super::start().await;
    let kubeconfig = tc.kubeconfig.clone();
    tokio::task::spawn_blocking(move || f(Kubectl { kubeconfig })).await.unwrap();
    drop(tc);
}

/// kubectl's argument to act as the stranger: a ServiceAccount no fixture gives
/// any right (it need not exist: kubectl impersonates it).
pub const AS_STRANGER: &str = "--as=system:serviceaccount:camunda-plugins:stranger";

/// The stranger may write grants and their status as far as RBAC goes, but
/// serves no PluginRegistration: what the grant author policy then refuses is
/// the policy's doing.
pub fn stranger_writes_grants() -> String {
    cluster_role_bound(
        "grant-writer",
        "{apiGroups: [plugins.camunda.io], resources: [grants, grants/status], verbs: [get, list, watch, create, update, patch, delete]}",
        &["{kind: ServiceAccount, name: stranger, namespace: camunda-plugins}"],
    )
}

/// A ClusterRole `role` of one `rule` and the ClusterRoleBinding `{role}-binding`
/// of it to `subjects` (the rule and the subjects as YAML flow mappings).
pub fn cluster_role_bound(role: &str, rule: &str, subjects: &[&str]) -> String {
    let subjects: String = subjects.iter().map(|s| format!("- {s}\n")).collect();
    format!(
        "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {role}
rules:
- {rule}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {role}-binding
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {role}}}
subjects:
{subjects}"
    )
}
